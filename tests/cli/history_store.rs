//! `log`, `diff`, `report`, `drift` and `status` over the snapshot store and a GitOps
//! repository.

use crate::support::*;
use std::process::Command;

fn log_from_the_store_and_from_the_repository_agree() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let store = root.join("snapshots");
    let repo = root.join("gitops");
    assert!(
        Command::new("git")
            .args(["init", "-q", "-b", "main"])
            .arg(&repo)
            .status()
            .unwrap()
            .success()
    );
    let run = |args: &[&str], epoch: &str| {
        let mut all = vec!["--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        clinv(&all)
            .store(&store)
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success()
    };
    let steps = [
        ("cilium", "1.19.2"),
        ("cilium", "1.20.1"),
        ("rook-ceph", "v1.15.0"),
        ("cilium", "1.20.3"),
    ];
    for (i, (addon, version)) in steps.iter().enumerate() {
        set_chart_version(root, addon, version);
        let epoch = (1_700_000_000 + i * 1000).to_string();
        run(&["publish", "--domain", "prod.acme.example"], &epoch);
        run(
            &[
                "commit",
                "--domain",
                "prod.acme.example",
                "--repo",
                repo.to_str().unwrap(),
                "--author",
                "Bot <bot@x.example>",
            ],
            &epoch,
        );
    }
    let changes = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = run(
            &[
                &["log", "--domain", "prod.acme.example", "-o", "json"][..],
                args,
            ]
            .concat(),
            "1",
        );
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["changes"].clone())
            .collect()
    };
    // Issue #39 item 12: `log -o json` is streamed from the store; `report -o json`
    // writes the same trail as one document. Byte for byte the same.
    let log = run(&["log", "--domain", "prod.acme.example", "-o", "json"], "1");
    let report = run(
        &["report", "--domain", "prod.acme.example", "-o", "json"],
        "1",
    );
    assert_eq!(log.stdout, report.stdout);
    assert!(log.stdout.contains("\"timeline\": {\n    \"start\": "));
    let from_store = changes(&[]);
    let from_repo = changes(&["--repo", repo.to_str().unwrap()]);
    assert_eq!(from_store.len(), 4);
    assert_eq!(from_store, from_repo);
    // Issue #16 finding 9: revision numbers (helm history's REVISION: #1 is the first
    // recorded inventory) that belong to the snapshot, whatever the filters; the host
    // that recorded each snapshot; with --repo the commit's author.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let json = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = run(
            &[
                &["log", "--domain", "prod.acme.example", "-o", "json"][..],
                args,
            ]
            .concat(),
            "1",
        );
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["entries"].as_array().unwrap().clone()
    };
    let field = |entries: &[serde_json::Value], key: &str| -> Vec<serde_json::Value> {
        entries.iter().map(|e| e[key].clone()).collect()
    };
    let all = json(&[]);
    assert_eq!(field(&all, "revision"), [4, 3, 2, 1]);
    assert!(
        all.iter()
            .all(|e| e["host"] == host.as_str() && e["author"].is_null())
    );
    assert_eq!(
        field(&json(&["--max-count", "2", "--reverse"]), "revision"),
        [3, 4]
    );
    let since = all[1]["at"].as_str().unwrap().to_string();
    assert_eq!(field(&json(&["--since", &since]), "revision"), [4, 3]);
    let from_git = json(&["--repo", repo.to_str().unwrap()]);
    assert_eq!(field(&from_git, "revision"), [4, 3, 2, 1]);
    assert!(
        from_git
            .iter()
            .all(|e| e["author"] == "Bot <bot@x.example>" && e["host"].is_null()),
        "{from_git:?}"
    );
    let text = run(&["log", "--domain", "prod.acme.example"], "1").stdout;
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(heads.len(), 4, "{text}");
    assert!(
        heads[0].starts_with("#4  ") && heads[0].ends_with(&format!("  pending  on {host}")),
        "{text}"
    );
    assert!(
        heads[3].starts_with("#1  ")
            && heads[3].ends_with(&format!("  pending  (initial)  on {host}")),
        "{text}"
    );
    let git_text = run(
        &[
            "log",
            "--domain",
            "prod.acme.example",
            "--repo",
            repo.to_str().unwrap(),
        ],
        "1",
    )
    .stdout;
    assert!(
        git_text.starts_with("#4  ")
            && git_text
                .lines()
                .next()
                .unwrap()
                .ends_with("  committed  by Bot <bot@x.example>"),
        "{git_text}"
    );
    let oneline = run(
        &[
            "log",
            "--domain",
            "prod.acme.example",
            "--oneline",
            "--reverse",
            "--max-count",
            "3",
        ],
        "1",
    )
    .stdout;
    let revisions: Vec<&str> = oneline
        .lines()
        .map(|l| l.rsplit("  ").next().unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(revisions, ["#2", "#3", "#4"], "{oneline}");
    // Aligned: every line's time starts in one column.
    let at: Vec<usize> = oneline
        .lines()
        .map(|l| l[..l.find("  20").unwrap()].chars().count())
        .collect();
    assert!(at.windows(2).all(|w| w[0] == w[1]), "{oneline}");
    let md = run(
        &["log", "--domain", "prod.acme.example", "-o", "markdown"],
        "1",
    )
    .stdout;
    assert!(
        md.contains(&format!("\n| 4 | {} | `", all[0]["at"].as_str().unwrap())),
        "{md}"
    );
    assert!(md.contains(&format!(" | {host} | pending | ")), "{md}");
    // The addon timeline and the text log name the upgrade.
    let text = run(&["log", "--domain", "prod.acme.example"], "1").stdout;
    assert!(
        text.contains("~ cilium 1.20.1 → 1.20.3 (upgrade)"),
        "{text}"
    );
    let addon = run(
        &[
            "log",
            "--domain",
            "prod.acme.example",
            "--addon",
            "rook-ceph",
        ],
        "1",
    )
    .stdout;
    assert!(
        addon.contains("rook-ceph v1.15.0") && addon.contains("rook-ceph v1.16.4"),
        "{addon}"
    );
    // Store references work in diff.
    let diff = clinv(&["diff", "latest~3", "latest"])
        .project(root, "prod.acme.example")
        .store(&store)
        .run();
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert_has(&diff.stdout, "~ cilium 1.19.2 → 1.20.3 (upgrade)");
    // The header names the snapshots each reference resolved to, with their revisions.
    let (first, last) = (
        all[3]["id"].as_str().unwrap(),
        all[0]["id"].as_str().unwrap(),
    );
    assert!(
        diff.stdout.starts_with(&format!(
            "--- latest~3  snapshot {} #1, recorded {}, rendered ",
            &first[..first.len().min(12)],
            all[3]["at"].as_str().unwrap()
        )),
        "{}",
        diff.stdout
    );
    assert_has(
        &diff.stdout,
        &format!(
            "\n+++ latest    snapshot {} #4, recorded {}, rendered ",
            &last[..last.len().min(12)],
            all[0]["at"].as_str().unwrap()
        ),
    );
    let diff_json: serde_json::Value = serde_json::from_str(
        &clinv(&["diff", "latest~3", "latest", "-o", "json"])
            .project(root, "prod.acme.example")
            .store(&store)
            .run()
            .stdout,
    )
    .unwrap();
    assert_eq!(diff_json["from"]["source"], "snapshot");
    assert_eq!(diff_json["from"]["resolved"], first);
    assert_eq!(diff_json["from"]["revision"], 1);
    assert_eq!(diff_json["from"]["recordedAt"], all[3]["at"]);
    assert_eq!(diff_json["to"]["revision"], 4);
    let same = clinv(&[
        "diff",
        "latest",
        "git:main",
        "--repo",
        repo.to_str().unwrap(),
    ])
    .project(root, "prod.acme.example")
    .store(&store)
    .run();
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    let head = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["rev-parse", "main"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_has(
        &same.stdout,
        &format!("\n+++ git:main  commit {}, rendered ", &head[..12]),
    );
    let before = clinv(&["diff", "@1999-01-01", "latest"])
        .project(root, "prod.acme.example")
        .store(&store)
        .run();
    assert_eq!(
        before.code, 2,
        "nothing recorded before 1999: {}",
        before.stderr
    );
    // The report is one self-contained page.
    let html = run(&["report", "--domain", "prod.acme.example"], "1").stdout;
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "{}",
        &html[..50.min(html.len())]
    );
    assert!(
        !html.contains("<script src")
            && !html.contains("src=\"http")
            && !html.contains("href=\"http")
            && html.contains("<svg")
    );
}

/// The answers of drift, status and updates when the cluster does not answer (connection
/// refused), as golden files: the exit code and stdout, text and JSON.
fn unreachable_answers_match_their_golden_files() {
    let dir = copy_tree(&example());
    let root = dir.path().to_str().unwrap().to_string();
    let kc = repo().join("examples/offline.kubeconfig");
    let index = fixture("updates/index.json");
    let index = index.to_str().unwrap();
    for (name, args) in [
        ("drift", &["drift"][..]),
        ("drift.json", &["drift", "-o", "json"]),
        ("status", &["status"]),
        ("status.json", &["status", "-o", "json"]),
        ("updates", &["updates", "--index", index]),
        ("updates.json", &["updates", "--index", index, "-o", "json"]),
    ] {
        let common = ["--root", &root, "--domain", "prod.acme.example"];
        let run = clinv(&[args, &common[..], &["--kubeconfig", kc.to_str().unwrap()]].concat())
            .env(
                "CLINV_SNAPSHOTS",
                dir.path().join("snapshots").to_str().unwrap(),
            )
            .run();
        let shown = args
            .join(" ")
            .replace(index, "tests/fixtures/updates/index.json");
        golden(
            &format!("unreachable/{name}.txt"),
            &format!("$ clinv {shown}\nexit {}\n{}", run.code, run.stdout),
        );
    }
}

/// Issue #24, point 1: with the cluster unreadable, `drift`, `status` and `updates` say
/// so in their result (stdout, `-o json`) and exit 16; a pending snapshot — never
/// applied — is never taken for the cluster. `--offline` asks for the newest applied
/// snapshot instead (tests/cluster/outputs.rs has one to compare with).
fn status_drift_and_updates_say_when_the_cluster_was_not_read() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let store = root.join("snapshots");
    let cmd = |args: &[&str]| {
        let mut all = vec!["--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        all.extend(["--domain", "prod.acme.example"]);
        clinv(&all)
            .env("KUBECONFIG", "/nonexistent/kc")
            .store(&store)
            .run()
    };
    let not_read = "prod.acme.example: unknown — the live cluster was not read (no-kubeconfig: ";
    let before = cmd(&["drift"]);
    assert_eq!(before.code, 16, "{}", before.stderr);
    assert!(before.stdout.starts_with(not_read), "{}", before.stdout);
    // A pending snapshot (queued, never applied) changes nothing.
    cmd(&["publish"]).success();
    let drift = cmd(&["drift"]);
    assert_eq!(drift.code, 16, "{}", drift.stderr);
    assert!(drift.stdout.starts_with(not_read), "{}", drift.stdout);
    assert!(!drift.stdout.contains("in sync"), "{}", drift.stdout);
    let json = cmd(&["drift", "-o", "json"]);
    assert_eq!(json.code, 16, "{}", json.stderr);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["verdict"], "unknown", "{v}");
    assert_eq!(v["live"], false, "{v}");
    assert_eq!(v["notRead"]["reason"], "no-kubeconfig", "{v}");
    assert!(v["changes"].is_null(), "{v}");
    // --offline: the newest applied snapshot, and there is none (only a pending one).
    let offline = cmd(&["drift", "--offline"]);
    assert_eq!(offline.code, 2, "{}", offline.stderr);
    assert_has(
        &offline.stdout,
        "unknown (compared with no applied snapshot)",
    );
    let status = cmd(&["status"]);
    assert_eq!(status.code, 16, "{}{}", status.stdout, status.stderr);
    assert_lacks(
        &status.stdout,
        "--- Inventory (ClusterInventory/cluster) ---",
    );
    assert_has(&status.stdout, "the live cluster was not read");
    let status = cmd(&["status", "-o", "json"]);
    assert_eq!(status.code, 16, "{}", status.stderr);
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(v["live"], false, "{v}");
    assert!(v["inventory"].is_null(), "no applied snapshot to show: {v}");
    assert_eq!(v["queue"]["pending"], 1, "{v}");
    let index = fixture("updates/index.json");
    // No kubeconfig at all: updates compares the render and claims nothing of a cluster
    // (a cluster that is there but cannot be read is exit 16: tests/cluster/outputs.rs).
    let updates = cmd(&["updates", "--index", index.to_str().unwrap(), "-o", "json"]);
    assert_eq!(updates.code, 0, "{}", updates.stderr);
    let v: serde_json::Value = serde_json::from_str(&updates.stdout).unwrap();
    assert_eq!(v["live"], false, "{v}");
    assert_eq!(
        v["inventory"], "rendered",
        "a pending snapshot is not used: {v}"
    );
}

trials! {
    Nothing: [
        log_from_the_store_and_from_the_repository_agree,
        status_drift_and_updates_say_when_the_cluster_was_not_read,
        unreachable_answers_match_their_golden_files,
    ],
}
