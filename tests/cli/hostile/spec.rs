//! The cluster spec (`clusters/<domain>/cluster.lok8s.yaml`): malformed, truncated,
//! huge, deep, binary, aliased, linked out of the project.

use super::*;

/// Renders the `inv` domain of `root` under the bounds.
pub fn render(root: &Path) -> Run {
    bounded(&["render"]).project(root, "inv").run()
}

fn spec_case(bytes: impl AsRef<[u8]>) -> (tempfile::TempDir, Run) {
    let dir = project();
    write(dir.path(), "clusters/inv/cluster.lok8s.yaml", bytes);
    let before = tree(dir.path());
    let run = render(dir.path());
    assert_unchanged(&before, dir.path());
    (dir, run)
}

fn malformed_yaml_names_file_line_and_column() {
    let (_d, run) = spec_case("kind: Lo\nspec:\n  bootstrap:\n    - cilium\n   - broken\n");
    assert_clean_failure(&run, "cluster.lok8s.yaml:5:");
    assert!(run.stderr.contains("invalid YAML"), "{}", run.stderr);
}

fn truncated_at_every_point_never_panics_and_names_the_line() {
    // The fixture's spec cut after every byte: a valid prefix renders (exit 0), anything
    // else is an error naming the file; never a panic, never stdout on failure.
    let full =
        std::fs::read_to_string(fixture("inv").join("clusters/inv/cluster.lok8s.yaml")).unwrap();
    let mut failures = 0;
    for cut in (1..full.len()).step_by(7) {
        let (_d, run) = spec_case(&full[..cut]);
        match run.code {
            0 => assert!(run.stdout.contains("kind: ClusterInventory")),
            1 => {
                failures += 1;
                assert_clean_failure(&run, "cluster.lok8s.yaml");
            }
            other => panic!("cut {cut}: exit {other}: {}", run.stderr),
        }
    }
    let (_d, run) = spec_case("kind: Lo\nspec:\n  bootstrap: [cilium, {a: \"unterminated");
    assert_clean_failure(&run, "cluster.lok8s.yaml:3:");
    assert!(failures > 0 || full.len() < 8);
}

fn truncated_inside_a_quoted_scalar() {
    let (_d, run) = spec_case("kind: Lo\nspec:\n  bootstrap:\n    - 'cert-man");
    assert_clean_failure(&run, "invalid YAML");
    assert_has(&run.stderr, "cluster.lok8s.yaml:4:");
}

fn truncated_inside_a_flow_mapping() {
    let (_d, run) = spec_case("kind: Lo\nspec: {bootstrap: [cilium, {cert-manager: {wait: tr");
    assert_clean_failure(&run, "invalid YAML");
}

fn duplicate_keys() {
    let (_d, run) = spec_case("kind: Lo\nkind: KubeOne\n");
    assert_clean_failure(
        &run,
        "cluster.lok8s.yaml:2:1: invalid YAML: mapping key \"kind\" already defined at line 1",
    );
}

fn a_100_mb_spec_is_refused_quickly_without_reading_it() {
    let dir = project();
    let path = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    sparse(&path, b"kind: Lo\nspec:\n  x: \"", 100 << 20);
    let run = render(dir.path());
    assert_clean_failure(&run, "file too large: 104857600 bytes (limit 8 MiB)");
    assert!(run.stderr.contains("cluster.lok8s.yaml"), "{}", run.stderr);
}

fn invalid_utf8_names_the_line() {
    let (_d, run) = spec_case(b"kind: Lo\nspec: {x: \"\xc3\x28\"}\n");
    assert_clean_failure(&run, "cluster.lok8s.yaml: not valid UTF-8 (line 2");
}

fn a_nul_byte_names_the_line() {
    let (_d, run) = spec_case(b"kind: Lo\nspec:\n  bootstrap: [a\0b]\n");
    assert_clean_failure(&run, "cluster.lok8s.yaml: contains a NUL byte (line 3)");
}

fn a_utf8_bom_is_accepted_and_hashed_raw() {
    // yaml.v3 skips a BOM; the specHash covers the raw bytes including it.
    let text = "kind: KubeOne\nspec:\n  bootstrap: [cilium]\n";
    let (_d, plain) = spec_case(text);
    let (_d2, bom) = spec_case(format!("\u{feff}{text}"));
    let plain = plain.success();
    let bom = bom.success();
    assert!(bom.stdout.contains("kind: kubeone"), "{}", bom.stdout);
    assert!(bom.stdout.contains("- name: cilium"));
    let hash = |s: &str| {
        s.lines()
            .find(|l| l.contains("specHash"))
            .unwrap()
            .to_string()
    };
    assert_ne!(hash(&plain.stdout), hash(&bom.stdout));
}

fn crlf_line_ends_render_like_lf() {
    let text = "kind: KubeOne\nspec:\n  provider:\n    name: hetzner\n  bootstrap:\n    - cilium\n";
    let (_d, lf) = spec_case(text);
    let (_d2, crlf) = spec_case(text.replace('\n', "\r\n"));
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("specHash"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&lf.success().stdout), strip(&crlf.success().stdout));
}

fn deep_flow_nesting() {
    let deep = format!(
        "kind: Lo\nspec:\n  bootstrap: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (_d, run) = spec_case(deep);
    assert_clean_failure(&run, "invalid YAML");
}

fn deep_flow_mapping_nesting() {
    let deep_map = format!(
        "kind: Lo\nspec:\n  x: {}1{}\n",
        "{a: ".repeat(5_000),
        "}".repeat(5_000)
    );
    let (_d, run) = spec_case(deep_map);
    assert_clean_failure(&run, "invalid YAML");
}

fn deep_block_nesting() {
    let mut text = String::from("kind: Lo\nspec:\n");
    for depth in 0..300 {
        text.push_str(&" ".repeat(depth + 1));
        text.push_str("a:\n");
    }
    let (_d, run) = spec_case(text);
    assert_clean_failure(&run, "invalid YAML");
    assert!(run.stderr.contains("cluster.lok8s.yaml:"), "{}", run.stderr);
}

fn billion_laughs() {
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

fn a_spec_that_is_a_fifo_does_not_block() {
    // Opening a named pipe without a writer would block forever; a FIFO is no spec.
    let dir = project();
    let path = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    std::fs::remove_file(&path).unwrap();
    let status = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success());
    let run = render(dir.path());
    assert_clean_failure(&run, "cluster spec not found");
}

fn a_spec_that_is_a_directory_is_missing() {
    let dir = project();
    let path = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let run = render(dir.path());
    assert_clean_failure(&run, "cluster spec not found");
}

fn a_spec_linked_outside_the_project_is_not_read() {
    // Regression: the spec was read through a link leaving the root.
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    let secret = write(outside.path(), "cluster.lok8s.yaml", "kind: Leaked\n");
    let path = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&secret, &path).unwrap();
    let run = render(dir.path());
    assert_clean_failure(&run, "resolves outside the project root");
    assert!(run.stderr.contains("cluster.lok8s.yaml"), "{}", run.stderr);
    assert!(!run.stderr.contains("Leaked") && !run.stderr.contains("leaked"));
}

fn a_cluster_folder_linked_outside_the_project_is_not_read() {
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    let moved = outside.path().join("inv");
    std::fs::rename(dir.path().join("clusters/inv"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, dir.path().join("clusters/inv")).unwrap();
    let run = render(dir.path());
    assert_clean_failure(&run, "resolves outside the project root");
}

fn a_spec_linked_inside_the_project_is_read() {
    // Links are fine while they stay inside the root (a shared spec, say).
    let dir = project();
    let path = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    std::fs::rename(&path, dir.path().join("shared.yaml")).unwrap();
    std::os::unix::fs::symlink("../../shared.yaml", &path).unwrap();
    let run = render(dir.path()).success();
    assert!(run.stdout.contains("- name: cilium"), "{}", run.stdout);
}

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
        "\u{feff}\u{feff}kind: Lo",
        "kind: Lo\rspec: {}",
        "&a [*a]",
    ];
    for case in cases {
        let (_d, run) = spec_case(case);
        assert!(
            run.code == 0 || run.code == 1,
            "{case:?}: code {} {}",
            run.code,
            run.stderr
        );
        if run.code == 1 {
            assert!(run.stdout.is_empty() && run.stderr.starts_with("[error] "));
        }
        assert!(
            !run.stderr.contains('\x1b'),
            "{case:?}: control characters reach the terminal"
        );
    }
}

trials! {
    Nothing: [
        malformed_yaml_names_file_line_and_column,
        truncated_at_every_point_never_panics_and_names_the_line,
        truncated_inside_a_quoted_scalar,
        truncated_inside_a_flow_mapping,
        duplicate_keys,
        a_100_mb_spec_is_refused_quickly_without_reading_it,
        invalid_utf8_names_the_line,
        a_nul_byte_names_the_line,
        a_utf8_bom_is_accepted_and_hashed_raw,
        crlf_line_ends_render_like_lf,
        deep_flow_nesting,
        deep_flow_mapping_nesting,
        deep_block_nesting,
        billion_laughs,
        a_spec_that_is_a_fifo_does_not_block,
        a_spec_that_is_a_directory_is_missing,
        a_spec_linked_outside_the_project_is_not_read,
        a_cluster_folder_linked_outside_the_project_is_not_read,
        a_spec_linked_inside_the_project_is_read,
        unparsable_inputs_never_panic,
    ],
}
