#![no_main]
//! See `fuzz/src/store.rs`: the code is shared with the seed test (`tests/fuzz_seeds.rs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| clinv_fuzz::store::run(data));
