//! The other inputs: chart pins, value files, `.lok8s/VERSION`, the addon index, and
//! the files `clinv diff` and `clinv updates --from` read.

use super::spec::render;
use super::*;

/// A pin that cannot be used leaves the addon without chartVersion (lok8s: unknown).
fn pin_case(bytes: impl AsRef<[u8]>) -> Run {
    let dir = project();
    write(dir.path(), ".lok8s/addons/cilium/chart.yaml", bytes);
    let before = tree(dir.path());
    let run = render(dir.path()).success();
    assert_unchanged(&before, dir.path());
    run
}

fn cilium_version(run: &Run) -> Option<String> {
    let at = run.stdout.find("- name: cilium\n")?;
    let block = &run.stdout[at..];
    let end = block[1..].find("\n  - ").map_or(block.len(), |i| i + 1);
    block[..end]
        .lines()
        .find_map(|l| l.trim().strip_prefix("chartVersion: ").map(str::to_string))
}

fn a_chart_pin_alias_bomb_is_just_unknown() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    bomb.push_str("version: 6.6.6\n");
    let run = pin_case(bomb);
    assert_eq!(cilium_version(&run), None, "{}", run.stdout);
}

fn a_100_mb_chart_pin_is_not_read() {
    let dir = project();
    sparse(
        &dir.path().join(".lok8s/addons/cilium/chart.yaml"),
        b"version: 6.6.6\n#",
        100 << 20,
    );
    let run = render(dir.path()).success();
    assert_eq!(cilium_version(&run), None, "{}", run.stdout);
}

fn a_chart_pin_with_invalid_utf8_or_nul_is_unknown() {
    assert_eq!(cilium_version(&pin_case(b"version: 6.6.\xff\n")), None);
    assert_eq!(cilium_version(&pin_case(b"version: 6.6.6\0\n")), None);
}

fn a_deeply_nested_chart_pin_is_unknown() {
    let deep = format!(
        "x: {}{}\nversion: 6.6.6\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert_eq!(cilium_version(&pin_case(deep)), None);
}

fn a_chart_pin_with_bom_and_crlf_is_read() {
    let run = pin_case("\u{feff}kind: ChartRenderer\r\nversion: 6.6.6\r\n");
    assert_eq!(
        cilium_version(&run).as_deref(),
        Some("6.6.6"),
        "{}",
        run.stdout
    );
}

/// lok8s reads a chart pin through a link (issue #16, fidelity): clinv renders the same
/// chartVersion — a bounded read of one scalar — and warns that the link leaves the project.
fn a_chart_pin_linked_outside_the_project_is_read_as_lok8s_does_and_reported() {
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    let pin = write(
        outside.path(),
        "chart.yaml",
        "version: 6.6.6\nsecret: s3cr3t\n",
    );
    let path = dir.path().join(".lok8s/addons/cilium/chart.yaml");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&pin, &path).unwrap();
    let run = render(dir.path()).success();
    assert_eq!(
        cilium_version(&run).as_deref(),
        Some("6.6.6"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("s3cr3t") && !run.stderr.contains("s3cr3t"));
    assert_has(&run.stderr, "resolves outside the project root");
}

fn a_chart_pin_that_is_a_fifo_does_not_block() {
    let dir = project();
    let path = dir.path().join(".lok8s/addons/cilium/chart.yaml");
    std::fs::remove_file(&path).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    let run = render(dir.path()).success();
    assert_eq!(cilium_version(&run), None, "{}", run.stdout);
}

fn value_files_that_are_devices_fifos_or_huge_are_rejected_entries() {
    // valueFiles are read only to check they merge: /dev/zero never ends and 100 MB is
    // over the limit, so those entries are rejected (lok8s: a warning, the entry left
    // out); a FIFO without a writer reads as empty instead of blocking forever.
    let dir = project();
    let fifo = dir.path().join("clusters/inv/fifo.yaml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    sparse(
        &dir.path().join("clusters/inv/big.yaml"),
        b"a: 1\n#",
        100 << 20,
    );
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [/dev/zero]\n    - cert-manager:\n        valueFiles: [fifo.yaml]\n    - big:\n        valueFiles: [big.yaml]\n",
    );
    let before = tree(dir.path());
    let run = render(dir.path()).success();
    assert_unchanged(&before, dir.path());
    for key in ["cilium", "big"] {
        assert!(
            run.stderr
                .contains(&format!("skipping unparseable bootstrap entry '{key}'")),
            "{key}: {}",
            run.stderr
        );
    }
    assert_has(&run.stdout, "- name: cert-manager");
}

fn bootstrap_entry_keys_that_traverse_are_targets_never_read() {
    // `../../etc/passwd` is a target path (lok8s); one that leaves the root is listed by
    // name, never read, and warned about.
    let dir = project();
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap:\n    - ../../../../../../../../../etc/passwd\n    - /etc/shadow\n    - ../../../../../../../../../etc\n",
    );
    let run = render(dir.path()).success();
    assert_has(&run.stdout, "- name: passwd\n    source: target\n");
    assert_has(&run.stdout, "- name: shadow\n    source: target\n");
    assert!(!run.stdout.contains("root:"), "{}", run.stdout);
    assert_has(&run.stderr, "resolves outside the project root");
}

fn a_huge_lok8s_version_file_is_refused() {
    // Regression: the message said "(limit 0 MiB)" for the 4 KiB limit.
    let dir = project();
    sparse(&dir.path().join(".lok8s/VERSION"), b"9.9.9", 100 << 20);
    let run = render(dir.path());
    assert_clean_failure(
        &run,
        ".lok8s/VERSION: file too large: 104857600 bytes (limit 4096 bytes)",
    );
}

fn updates(root: &Path, index: &Path) -> Run {
    bounded(&["updates", "--index", index.to_str().unwrap()])
        .project(root, "inv")
        .run()
}

fn index_case(bytes: impl AsRef<[u8]>) -> Run {
    let dir = project();
    let index = write(dir.path(), "index.json", bytes);
    updates(dir.path(), &index)
}

fn a_100_mb_index_is_refused_quickly() {
    let dir = project();
    let index = dir.path().join("index.json");
    sparse(&index, b"{\"addons\": [", 100 << 20);
    let run = updates(dir.path(), &index);
    assert_clean_failure(&run, "index.json: file too large");
}

fn a_deeply_nested_index_names_the_line() {
    let deep = format!(
        "{{\"addons\": [{}{}]}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let run = index_case(deep);
    assert_clean_failure(&run, "index.json: not a JSON addon index");
    assert!(run.stderr.contains("line 1"), "{}", run.stderr);
}

fn an_index_with_invalid_utf8_or_nul() {
    let run = index_case(b"{\"addons\": [{\"name\": \"a\xff\"}]}");
    assert_clean_failure(&run, "index.json: not a JSON addon index");
    let run = index_case(b"{\"addons\": [{\"name\": \"a\0\"}]}");
    assert_clean_failure(&run, "index.json: not a JSON addon index");
}

fn a_yaml_alias_bomb_as_index_is_not_json() {
    let run = index_case("a: &a [x, x]\nb: &b [*a, *a]\naddons: [*b]\n");
    assert_clean_failure(&run, "index.json: not a JSON addon index");
}

fn a_truncated_index_names_line_and_column() {
    let run = index_case("{\"generatedAt\": \"x\", \"addons\": [{\"name\": \"cil");
    assert_clean_failure(&run, "not a JSON addon index: EOF while parsing");
    assert!(run.stderr.contains("line 1 column"), "{}", run.stderr);
}

fn a_100_mb_diff_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    sparse(&big, b"apiVersion: lok8s.dev/v1alpha1\n#", 100 << 20);
    let run = bounded(&["diff", big.to_str().unwrap(), big.to_str().unwrap()]).run();
    assert_failure(&run, 2, "big.yaml: file too large");
}

fn a_deeply_nested_diff_input_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(
        dir.path(),
        "deep.json",
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let run = bounded(&["diff", deep.to_str().unwrap(), deep.to_str().unwrap()]).run();
    assert_failure(&run, 2, "deep.json");
}

fn a_diff_input_alias_bomb_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    let file = write(dir.path(), "bomb.yaml", bomb);
    let run = bounded(&["diff", file.to_str().unwrap(), file.to_str().unwrap()]).run();
    assert_failure(&run, 2, "bomb.yaml");
}

fn symlinks_in_addon_directories_are_not_followed() {
    let dir = project();
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
    let run = render(dir.path());
    // (A link followed into a cycle would hang: `bounded` kills it, and the code says so.)
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("- name: cilium\n    source: addon\n    chartVersion: 1.20.1\n    category: networking\n"), "{}", run.stdout);
    assert_has(
        &run.stdout,
        "- name: alias\n    source: addon\n    chartVersion: 1.20.1\n",
    );
    assert!(!run.stdout.contains("leaked"));
}

fn invalid_utf8_and_nul_in_the_version_file_value_files_and_diff_inputs() {
    // .lok8s/VERSION: invalid UTF-8 is an error naming the file; a NUL is kept (lok8s
    // uses the trimmed text) but only ever printed escaped.
    let dir = project();
    write(dir.path(), ".lok8s/VERSION", b"1.0\xff");
    assert_clean_failure(&render(dir.path()), ".lok8s/VERSION: not valid UTF-8");
    write(dir.path(), ".lok8s/VERSION", b"1.0\0");
    let run = render(dir.path()).success();
    assert_has(&run.stdout, "lok8sVersion: \"1.0\\0\"\n");
    assert!(!run.stdout.contains('\0'));
    // A value file: the entry is rejected, its content never echoed.
    let dir = project();
    write(
        dir.path(),
        "clusters/inv/v.yaml",
        b"a: \"\xff\0FAKESECRET\"\n",
    );
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [v.yaml]\n",
    );
    let run = render(dir.path()).success();
    assert_has(&run.stderr, "skipping unparseable bootstrap entry 'cilium'");
    assert!(!run.stderr.contains("FAKESECRET") && !run.stdout.contains("FAKESECRET"));
    // diff inputs: exit 2 naming the file.
    let files = tempfile::tempdir().unwrap();
    let bad = write(files.path(), "bad.yaml", b"apiVersion: \xff\0\n");
    let run = bounded(&["diff", bad.to_str().unwrap(), bad.to_str().unwrap()]).run();
    assert_failure(&run, 2, "bad.yaml");
}

fn an_index_with_a_bom_or_crlf() {
    let text = std::fs::read_to_string(fixture("updates/index.json")).unwrap();
    // CRLF is JSON whitespace: accepted.
    let run = index_case(text.replace('\n', "\r\n"));
    assert!(run.code == 0, "{}", run.stderr);
    // A BOM is not JSON (RFC 8259 forbids emitting one): a clear error.
    let run = index_case(format!("\u{feff}{text}"));
    assert_clean_failure(&run, "index.json: not a JSON addon index");
}

trials! {
    Nothing: [
        a_chart_pin_alias_bomb_is_just_unknown,
        a_100_mb_chart_pin_is_not_read,
        a_chart_pin_with_invalid_utf8_or_nul_is_unknown,
        a_deeply_nested_chart_pin_is_unknown,
        a_chart_pin_with_bom_and_crlf_is_read,
        a_chart_pin_linked_outside_the_project_is_read_as_lok8s_does_and_reported,
        a_chart_pin_that_is_a_fifo_does_not_block,
        value_files_that_are_devices_fifos_or_huge_are_rejected_entries,
        bootstrap_entry_keys_that_traverse_are_targets_never_read,
        a_huge_lok8s_version_file_is_refused,
        a_100_mb_index_is_refused_quickly,
        a_deeply_nested_index_names_the_line,
        an_index_with_invalid_utf8_or_nul,
        a_yaml_alias_bomb_as_index_is_not_json,
        a_truncated_index_names_line_and_column,
        a_100_mb_diff_input_is_refused,
        a_deeply_nested_diff_input_is_an_error,
        a_diff_input_alias_bomb_is_an_error,
        symlinks_in_addon_directories_are_not_followed,
        invalid_utf8_and_nul_in_the_version_file_value_files_and_diff_inputs,
        an_index_with_a_bom_or_crlf,
    ],
}
