#![no_main]
//! See `fuzz/src/inventory_text.rs`: the code is shared with the seed test (`tests/fuzz_seeds.rs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| clinv_fuzz::inventory_text::run(data));
