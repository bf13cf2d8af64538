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

/// Values a store writer controls (ids, times, hashes in the journal) reach the terminal
/// with their control characters escaped, on one line each: `drift` printed them raw
/// (an ANSI sequence cleared the screen, a newline forged a line), `status` split its
/// warning at the newline.
fn store_values_are_printed_escaped_by_drift_and_status() {
    use sha2::Digest;
    let project = copy_tree(&example());
    let root = project.path().to_str().unwrap().to_string();
    let store = tempfile::tempdir().unwrap();
    let cmd = |args: &[&str]| {
        let mut all = vec!["--root", root.as_str(), "--domain", "prod.acme.example"];
        all.splice(0..0, args.iter().copied());
        clinv(&all)
            .env("KUBECONFIG", "/nonexistent/kc")
            .store(store.path())
            .run()
    };
    cmd(&["publish"]).success();
    let journal = crate::support::journal_file(&store.path().join("prod.acme.example"));
    let mut lines = String::new();
    for line in std::fs::read_to_string(&journal).unwrap().lines() {
        let (_, json) = line.split_once(' ').unwrap();
        let mut record: serde_json::Value = serde_json::from_str(json).unwrap();
        if let Some(id) = record["id"].as_str().map(str::to_string) {
            record["id"] = format!("{id}\u{1b}[2J\nFORGED-ID").into();
        }
        if let Some(at) = record["at"].as_str().map(str::to_string) {
            record["at"] = format!("{at}\u{1b}]0;title\u{7}\nFORGED-AT").into();
        }
        if record.get("specHash").is_some() {
            record["specHash"] = "ab\u{1b}[31m\nFORGED-HASH".into();
        }

        let json = serde_json::to_string(&record).unwrap();
        let sum = format!("{:x}", sha2::Sha256::digest(json.as_bytes()));
        lines.push_str(&format!("{sum} {json}\n"));
    }
    std::fs::write(&journal, lines).unwrap();
    // Applied, so status and drift --offline show it (a pending one never reached the
    // cluster and is never shown as its inventory).
    crate::support::mark_applied(&store.path().join("prod.acme.example"));
    for args in [&["drift", "--offline"][..], &["status"]] {
        let run = cmd(args);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(all.contains("FORGED-"), "{args:?}: {all}");
        for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            assert!(
                !text.contains(['\u{1b}', '\u{7}']),
                "{args:?} {stream}: a control character reached the terminal:\n{text}"
            );
            assert!(
                !text.lines().any(|l| l.trim_start().starts_with("FORGED-")),
                "{args:?} {stream}: a stored newline forged a line:\n{text}"
            );
        }
    }
}

/// An index URL's user info, `?token=` query and fragment appear in no message, for an
/// `https://` URL that cannot be reached and a `file://` URL that is refused.
fn index_url_tokens_appear_in_no_message() {
    let root = example();
    let from = tempfile::tempdir().unwrap();
    let rendered = from.path().join("inv.yaml");
    let run = clinv(&["render"])
        .project(&root, "prod.acme.example")
        .run()
        .success();
    std::fs::write(&rendered, run.stdout).unwrap();
    for url in [
        format!(
            "https://ops:{MARK}-userinfo@127.0.0.1:1/index.json?token={MARK}-query#{MARK}-fragment"
        ),
        format!("file:///nonexistent/index.json?token={MARK}-query#{MARK}-fragment"),
    ] {
        for extra in [&[][..], &["-v"], &["-o", "json"]] {
            let mut args = vec!["updates", "--index", url.as_str(), "--from"];
            args.push(rendered.to_str().unwrap());
            args.extend_from_slice(extra);
            let cache = tempfile::tempdir().unwrap();
            let run = clinv(&args)
                .env("XDG_CACHE_HOME", cache.path().to_str().unwrap())
                .env("DEBUG", "1")
                .run();
            assert_ne!(run.code, 0, "{url}: {}", run.stderr);
            assert!(
                run.stderr.contains("index"),
                "{url} {extra:?}: {}",
                run.stderr
            );
            assert!(
                !run.stdout.contains(MARK) && !run.stderr.contains(MARK),
                "{url} {extra:?}: {}{}",
                run.stdout,
                run.stderr
            );
        }
    }
}

trials! {
    Nothing: [
        planted_secrets_are_really_there,
        no_command_output_or_written_file_carries_a_secret,
        a_skipped_entry_never_shows_its_values,
        store_values_are_printed_escaped_by_drift_and_status,
        index_url_tokens_appear_in_no_message,
    ],
}
