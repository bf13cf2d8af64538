//! Secrets planted in the example (`FAKESECRET-…` in inline values, env overrides, value
//! files and non-inventory spec fields) must appear in no output of any command.

use crate::support::*;

const MARK: &str = "FAKESECRET";

fn planted_secrets_are_really_there() {
    let mut found = 0;
    for domain in ["prod.acme.example", "lab.acme.example"] {
        let dir = example().join("clusters").join(domain);
        for entry in walk(&dir) {
            found += std::fs::read_to_string(entry)
                .unwrap_or_default()
                .matches(MARK)
                .count();
        }
    }
    assert!(
        found >= 6,
        "the example must plant secrets to make this test meaningful ({found})"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

fn no_command_output_or_written_file_carries_a_secret() {
    let root = example();
    let root = root.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for domain in [
        "prod.acme.example",
        "edge.acme.example",
        "lab.acme.example",
        "apps.acme.example",
    ] {
        let out_dir = out.path().join(domain);
        for args in [
            vec!["render", "--root", root, "--domain", domain, "-v"],
            vec![
                "render", "--root", root, "--domain", domain, "-o", "json", "-v",
            ],
            vec![
                "render",
                "--root",
                root,
                "--domain",
                domain,
                "--out",
                out_dir.to_str().unwrap(),
            ],
            vec![
                "render", "--root", root, "--domain", domain, "--strict", "-v",
            ],
            vec!["addons", "--root", root, "--domain", domain, "-v"],
            vec!["addons", "--root", root, "--domain", domain, "-o", "json"],
        ] {
            runs.push(clinv(&args).env("DEBUG", "1").run());
        }
    }
    runs.push(clinv(&["crd"]).run());
    for run in &runs {
        assert!(!run.stdout.contains(MARK), "stdout leaks: {}", run.stdout);
        assert!(!run.stderr.contains(MARK), "stderr leaks: {}", run.stderr);
    }
    let files = walk(out.path());
    assert!(files.len() >= 6);
    for f in files {
        assert!(
            !std::fs::read_to_string(&f).unwrap().contains(MARK),
            "{} leaks",
            f.display()
        );
    }
}

fn a_skipped_entry_never_shows_its_values() {
    let spec = format!(
        "kind: Lo\nspec:\n  bootstrap:\n    - {{x: {{env: {{TOKEN: {MARK}-1}}}}, y: {{values: {{p: {MARK}-2}}}}}}\n    - cilium: {{wait: {MARK}-3}}\n    - cilium: {{name: '{MARK}-4 bad'}}\n"
    );
    let dir = project_with_spec(&spec);
    for extra in [&[][..], &["-v"], &["--strict"], &["-o", "json"]] {
        let args = [
            &[
                "render",
                "--root",
                dir.path().to_str().unwrap(),
                "--domain",
                "inv",
            ][..],
            extra,
        ]
        .concat();
        let run = clinv(&args).env("DEBUG", "1").run();
        assert!(
            !run.stdout.contains(MARK) && !run.stderr.contains(MARK),
            "{extra:?}: {}{}",
            run.stdout,
            run.stderr
        );
        assert!(
            run.stderr
                .contains("skipping unparseable bootstrap entry 'x'")
        );
    }
}

trials! {
    Nothing: [
        planted_secrets_are_really_there,
        no_command_output_or_written_file_carries_a_secret,
        a_skipped_entry_never_shows_its_values,
    ],
}
