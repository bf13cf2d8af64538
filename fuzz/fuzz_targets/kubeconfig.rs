#![no_main]
//! See `fuzz/src/kubeconfig.rs`: the code is shared with the seed test (`tests/fuzz_seeds.rs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| clinv_fuzz::kubeconfig::run(data));
