//! Hostile input: every case ends quickly, within 256 MiB of address space, with a clear
//! error (exit 1) or lok8s's behaviour (exit 0), and never with a panic.

use crate::support::*;
use std::path::Path;
use std::time::Duration;

/// Runs `clinv render` on the `inv` domain of `root` under a 256 MiB address-space limit.
fn render_bounded(root: &Path) -> Run {
    let bin = env!("CARGO_BIN_EXE_clinv");
    let script = format!(
        "ulimit -v 262144; exec '{bin}' render --root '{}' --domain inv",
        root.display()
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-c", &script])
        .env_clear()
        .env("SOURCE_DATE_EPOCH", EPOCH);
    let start = std::time::Instant::now();
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    }
}

fn assert_clean_failure(run: &Run, needle: &str) {
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.starts_with("[error] "), "{}", run.stderr);
    assert!(
        run.stderr.contains(needle),
        "want {needle:?} in {}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(
        run.elapsed < Duration::from_secs(5),
        "took {:?}",
        run.elapsed
    );
}

fn spec_case(bytes: impl AsRef<[u8]>) -> (tempfile::TempDir, Run) {
    let dir = copy_tree(&fixture("inv"));
    write(dir.path(), "clusters/inv/cluster.lok8s.yaml", bytes);
    let run = render_bounded(dir.path());
    (dir, run)
}

#[test]
fn malformed_yaml_names_file_line_and_column() {
    let (_d, run) = spec_case("kind: Lo\nspec:\n  bootstrap:\n    - cilium\n   - broken\n");
    assert_clean_failure(&run, "cluster.lok8s.yaml:5:");
    assert!(run.stderr.contains("invalid YAML"), "{}", run.stderr);
}

#[test]
fn truncated_yaml() {
    let (_d, run) = spec_case("kind: Lo\nspec:\n  bootstrap: [cilium, {a: \"unterminated");
    assert_clean_failure(&run, "invalid YAML");
}

#[test]
fn duplicate_keys() {
    let (_d, run) = spec_case("kind: Lo\nkind: KubeOne\n");
    assert_clean_failure(
        &run,
        "cluster.lok8s.yaml:2:1: invalid YAML: mapping key \"kind\" already defined at line 1",
    );
}

#[test]
fn a_50_mb_spec_is_refused_without_reading_it() {
    let mut big = b"kind: Lo\nspec:\n  x: \"".to_vec();
    big.resize(50 << 20, b'a');
    let (_d, run) = spec_case(big);
    assert_clean_failure(&run, "file too large");
}

#[test]
fn invalid_utf8_and_nul_bytes() {
    let (_d, run) = spec_case(b"kind: Lo\nspec: {x: \"\xc3\x28\"}\n");
    assert_clean_failure(&run, "not valid UTF-8 (line 2");
    let (_d, run) = spec_case(b"kind: Lo\0\n");
    assert_clean_failure(&run, "NUL byte");
}

#[test]
fn deep_nesting() {
    let deep = format!(
        "kind: Lo\nspec:\n  bootstrap: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (_d, run) = spec_case(deep);
    assert_clean_failure(&run, "invalid YAML");
    let deep_map = format!(
        "kind: Lo\nspec:\n  x: {}1{}\n",
        "{a: ".repeat(5_000),
        "}".repeat(5_000)
    );
    let (_d, run) = spec_case(deep_map);
    assert_clean_failure(&run, "invalid YAML");
}

#[test]
fn alias_bomb() {
    let mut text =
        String::from("kind: Lo\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..12 {
        let p = format!("*a{}", i - 1);
        text.push_str(&format!("x{i}: &a{i} [{}]\n", [p.as_str(); 9].join(", ")));
    }
    text.push_str("spec:\n  bootstrap: [*a11]\n");
    let (_d, run) = spec_case(text);
    assert_clean_failure(&run, "excessive aliasing");
}

#[test]
fn symlinks_in_addon_directories_are_not_followed() {
    let dir = copy_tree(&fixture("inv"));
    let addon = dir.path().join(".lok8s/addons/cilium");
    // A loop, a dangling link, a link to a system directory and a link to a file outside.
    std::os::unix::fs::symlink(&addon, addon.join("loop")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", addon.join("dangling")).unwrap();
    std::os::unix::fs::symlink("/etc", addon.join("etc")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "cat.yaml",
        "lok8s.dev/category: aaa-leaked\n",
    );
    std::os::unix::fs::symlink(outside.path().join("cat.yaml"), addon.join("cat.yaml")).unwrap();
    // An addon directory that is itself a symlink yields no category (lok8s's Go port).
    std::os::unix::fs::symlink(&addon, dir.path().join(".lok8s/addons/alias")).unwrap();
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap: [cilium, alias]\n",
    );
    let run = render_bounded(dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.elapsed < Duration::from_secs(5));
    assert!(run.stdout.contains("- name: cilium\n    source: addon\n    chartVersion: 1.20.1\n    category: networking\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("- name: alias\n    source: addon\n    chartVersion: 1.20.1\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("leaked"));
}

#[test]
fn a_chart_pin_that_is_a_bomb_or_huge_is_just_unknown() {
    let dir = copy_tree(&fixture("inv"));
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    bomb.push_str("version: 1.0.0\n");
    write(dir.path(), ".lok8s/addons/cilium/chart.yaml", bomb);
    write(
        dir.path(),
        ".lok8s/addons/cert-manager/chart.yaml",
        vec![b'#'; 20 << 20],
    );
    let run = render_bounded(dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("chartVersion"), "{}", run.stdout);
}

#[test]
fn unparsable_inputs_never_panic() {
    // A sweep of small malformed specs; each must end in exit 0 or 1, never a crash.
    let cases = [
        "",
        "~",
        "[]",
        "- - -",
        "kind: [",
        "{",
        "}",
        "kind: !!binary aGk=",
        "kind: !custom x",
        "spec: {bootstrap: {a: &x {b: *x}}}",
        "spec: {bootstrap: [*undefined]}",
        "? [a]\n: b",
        "spec:\n  bootstrap:\n    - ? [a]\n      : b\n",
        "spec: {bootstrap: [{<<: {wait: true}}]}",
        "%YAML 1.2\n---\nkind: Lo",
        "--- !!map\nkind: Lo",
        "kind: Lo\n...\n---\nkind: [",
        "spec: {bootstrap: [\"\\u0000\"]}",
        "spec: {bootstrap: [{\"\\e[2J\": 1, b: 2}]}",
        "kind: \"\\uFFFF\"",
        "\t- x",
        "kind: Lo\r\nspec: {}\r\n",
    ];
    for case in cases {
        let (_d, run) = spec_case(case);
        assert!(
            run.code == 0 || run.code == 1,
            "{case:?}: code {} {}",
            run.code,
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{case:?}: {}", run.stderr);
        assert!(
            !run.stderr.contains('\x1b'),
            "{case:?}: control characters reach the terminal"
        );
    }
}
