//! The fast part of fuzzing, on stable: every seed (`fuzz/seeds/<target>/`) and every past
//! finding (`fuzz/regressions/<target>/`, a crash, timeout or slow input `scripts/fuzz`
//! found, minimised) goes through the very code the cargo-fuzz target runs
//! (`fuzz/src/`). A panic there fails this test; each input must also end in bounded time.

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;
use std::time::{Duration, Instant};

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 6] = [
    ("spec", targets::spec::run),
    ("chart_pin", targets::chart_pin::run),
    ("store", targets::store::run),
    ("index", targets::index::run),
    ("kubeconfig", targets::kubeconfig::run),
    ("inventory_text", targets::inventory_text::run),
];

fn inputs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
}

#[test]
fn every_seed_and_finding_runs_through_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for (name, run) in TARGETS {
        let seeds = inputs(&fuzz.join("seeds").join(name));
        assert!(!seeds.is_empty(), "fuzz/seeds/{name} holds no seed");
        for path in seeds
            .iter()
            .chain(&inputs(&fuzz.join("regressions").join(name)))
        {
            let data = std::fs::read(path).unwrap();
            let start = Instant::now();
            run(&data);
            // Debug build, shared machine: generous; libFuzzer's own limit is 10 s.
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{}: {:?}",
                path.display(),
                start.elapsed()
            );
        }
    }
}
