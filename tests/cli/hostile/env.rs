//! Hostile environment: CLINV_SNAPSHOTS, SOURCE_DATE_EPOCH and KUBECONFIG values.

use super::*;

fn publish_strict(root: &Path, store: &Path) -> Bounded {
    bounded(&["publish", "--strict"])
        .project(root, "inv")
        .store(store)
}

/// `publish --strict` in a fresh project with `KUBECONFIG` naming a file of `bytes`.
fn publish_with_kubeconfig(bytes: impl AsRef<[u8]>) -> Run {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let kc = write(dir.path(), "kubeconfig", bytes);
    publish_strict(dir.path(), store.path())
        .env("KUBECONFIG", &kc)
        .run()
}

fn an_empty_clinv_snapshots_is_a_usage_error() {
    let dir = project();
    let run = bounded(&["snapshots", "list", "--root", dir.path().to_str().unwrap()])
        .env("CLINV_SNAPSHOTS", "")
        .run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--snapshots"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

fn a_relative_clinv_snapshots_is_relative_to_the_working_directory() {
    let dir = project();
    let cwd = tempfile::tempdir().unwrap();
    let kc = offline_kubeconfig();
    let run = bounded(&["publish"])
        .project(dir.path(), "inv")
        .kubeconfig(&kc)
        .env("CLINV_SNAPSHOTS", "rel/store")
        .cwd(cwd.path())
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(journal_file(&cwd.path().join("rel/store/inv")).is_file());
    assert!(!dir.path().join("rel").exists());
}

fn a_clinv_snapshots_that_is_a_file_is_a_clear_error() {
    let dir = project();
    let file = write(dir.path(), "store-file", "not a store\n");
    let before = tree(dir.path());
    let run = bounded(&["replay"])
        .project(dir.path(), "inv")
        .store(&file)
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("[error] ") && run.stderr.contains("store-file"),
        "{}",
        run.stderr
    );
    assert_unchanged(&before, dir.path());
}

fn garbage_source_date_epoch_means_zero_like_lok8s() {
    let dir = project();
    for garbage in [
        "garbage",
        "1e9",
        "0x10",
        "99999999999999999999999",
        "\u{202e}1",
    ] {
        let run = bounded(&["render"])
            .project(dir.path(), "inv")
            .env("SOURCE_DATE_EPOCH", garbage)
            .run()
            .success();
        assert!(
            run.stdout.contains("renderedAt: 1970-01-01T00:00:00Z"),
            "{garbage:?}: {}",
            run.stdout
        );
    }
}

fn a_source_date_epoch_beyond_year_9999_is_an_error() {
    let dir = project();
    let run = bounded(&["render"])
        .project(dir.path(), "inv")
        .env("SOURCE_DATE_EPOCH", "9223372036854775807")
        .run();
    assert_clean_failure(&run, "SOURCE_DATE_EPOCH");
}

fn kubeconfig_pointing_at_a_directory() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let run = publish_strict(dir.path(), store.path())
        .env("KUBECONFIG", "/tmp")
        .run();
    assert_failure(&run, 3, "kubeconfig not found (/tmp)");
}

fn a_100_mb_kubeconfig_is_refused_quickly() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sparse(&kc, b"apiVersion: v1\n#", 100 << 20);
    let run = publish_strict(dir.path(), store.path())
        .env("KUBECONFIG", &kc)
        .run();
    assert_failure(&run, 4, "kubeconfig: file too large");
}

fn an_invalid_kubeconfig_is_named_without_echoing_its_content() {
    // Regression: the parser's error quoted the offending source line, which can hold a
    // token.
    let run = publish_with_kubeconfig(
        "apiVersion: v1\nusers:\n- name: u\n  user: {token: \"FAKESECRET-kc-token\n",
    );
    assert_failure(&run, 4, "kubeconfig: failed to parse kubeconfig YAML");
    assert!(run.stderr.contains("line 4"), "{}", run.stderr);
    assert!(!run.stderr.contains("FAKESECRET"), "{}", run.stderr);
}

fn a_kubeconfig_alias_bomb_is_bounded() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    bomb.push_str("apiVersion: v1\nclusters: [*a9]\n");
    let run = publish_with_kubeconfig(bomb);
    assert_failure(&run, 4, "kubeconfig");
}

fn a_kubeconfig_with_invalid_utf8() {
    let run = publish_with_kubeconfig(b"apiVersion: v1\nkind: Config\xff\n");
    assert_failure(&run, 4, "kubeconfig: not valid UTF-8");
}

fn a_kubeconfig_fifo_does_not_block() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    assert!(Command::new("mkfifo").arg(&kc).status().unwrap().success());
    let run = publish_strict(dir.path(), store.path())
        .env("KUBECONFIG", &kc)
        .run();
    // KUBECONFIG lists regular files only (kubectl's rule): a FIFO is "not found".
    assert_failure(&run, 3, "kubeconfig not found");
}

fn a_kubeconfig_path_list_of_thousands_of_entries_is_bounded() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let list = vec!["/nonexistent/k"; 5000].join(":");
    let run = publish_strict(dir.path(), store.path())
        .env("KUBECONFIG", list)
        .run();
    assert_failure(&run, 3, "kubeconfig not found");
    assert!(
        run.stderr.len() < 4096,
        "message grows with the list: {}",
        run.stderr.len()
    );
}

fn a_deeply_nested_kubeconfig_is_an_unusable_kubeconfig() {
    let run = publish_with_kubeconfig(format!(
        "apiVersion: v1\nclusters: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    ));
    assert_failure(&run, 4, "kubeconfig");
}

fn a_kubeconfig_with_bom_and_crlf_is_read() {
    // Parsed fine: the outcome is the offline server's "unreachable" (exit 5 with
    // --strict), not an unusable kubeconfig.
    let text = std::fs::read_to_string(offline_kubeconfig()).unwrap();
    let run = publish_with_kubeconfig(format!("\u{feff}{}", text.replace('\n', "\r\n")));
    assert_failure(&run, 5, "127.0.0.1:9");
}

fn nul_bytes_in_a_kubeconfig() {
    let run = publish_with_kubeconfig(b"apiVersion: v1\0\nkind: Config\n");
    assert_failure(&run, 4, "kubeconfig");
}

trials! {
    Nothing: [
        an_empty_clinv_snapshots_is_a_usage_error,
        a_relative_clinv_snapshots_is_relative_to_the_working_directory,
        a_clinv_snapshots_that_is_a_file_is_a_clear_error,
        garbage_source_date_epoch_means_zero_like_lok8s,
        a_source_date_epoch_beyond_year_9999_is_an_error,
        kubeconfig_pointing_at_a_directory,
        a_100_mb_kubeconfig_is_refused_quickly,
        an_invalid_kubeconfig_is_named_without_echoing_its_content,
        a_kubeconfig_alias_bomb_is_bounded,
        a_kubeconfig_with_invalid_utf8,
        a_kubeconfig_fifo_does_not_block,
        a_kubeconfig_path_list_of_thousands_of_entries_is_bounded,
        a_deeply_nested_kubeconfig_is_an_unusable_kubeconfig,
        a_kubeconfig_with_bom_and_crlf_is_read,
        nul_bytes_in_a_kubeconfig,
    ],
}
