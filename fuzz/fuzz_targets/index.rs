#![no_main]
//! See `fuzz/src/index.rs`: the code is shared with the seed test (`tests/fuzz_seeds.rs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| clinv_fuzz::index::run(data));
