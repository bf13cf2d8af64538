//! The fuzz targets' code, one module per parser of user files. `fuzz_targets/*.rs` hand
//! each libFuzzer input to a module's `run`; the main crate's `tests/fuzz_seeds.rs`
//! includes this file and runs every seed and every past finding through the same code on
//! stable Rust, so CI keeps them passing.

pub mod chart_pin;
pub mod index;
pub mod inventory_text;
pub mod kubeconfig;
pub mod spec;
pub mod store;

/// The repository root (this file is built from `fuzz/` by cargo fuzz and from the root
/// by the seed test).
pub fn repo() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if dir.join("examples").is_dir() {
        dir.to_path_buf()
    } else {
        dir.parent().unwrap_or(dir).to_path_buf()
    }
}
