#![no_main]
//! See `fuzz/src/chart_pin.rs`: the code is shared with the seed test (`tests/fuzz_seeds.rs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| clinv_fuzz::chart_pin::run(data));
