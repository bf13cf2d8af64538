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
            .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
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
        heads[0].starts_with("#4  ") && heads[0].ends_with(&format!("  queued  on {host}")),
        "{text}"
    );
    assert!(
        heads[3].starts_with("#1  ")
            && heads[3].ends_with(&format!("  queued  (initial)  on {host}")),
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
    let starts: Vec<&str> = oneline.lines().map(|l| &l[..4]).collect();
    assert_eq!(starts, ["#2  ", "#3  ", "#4  "], "{oneline}");
    let md = run(
        &["log", "--domain", "prod.acme.example", "-o", "markdown"],
        "1",
    )
    .stdout;
    assert!(
        md.contains(&format!("\n| 4 | {} | `", all[0]["at"].as_str().unwrap())),
        "{md}"
    );
    assert!(md.contains(&format!(" | {host} | queued | ")), "{md}");
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
    let diff = clinv(&[
        "--root",
        root.to_str().unwrap(),
        "diff",
        "--domain",
        "prod.acme.example",
        "latest~3",
        "latest",
    ])
    .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
    .run();
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(
        diff.stdout.contains("~ cilium 1.19.2 → 1.20.3 (upgrade)"),
        "{}",
        diff.stdout
    );
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
    assert!(
        diff.stdout.contains(&format!(
            "\n+++ latest    snapshot {} #4, recorded {}, rendered ",
            &last[..last.len().min(12)],
            all[0]["at"].as_str().unwrap()
        )),
        "{}",
        diff.stdout
    );
    let diff_json: serde_json::Value = serde_json::from_str(
        &clinv(&[
            "--root",
            root.to_str().unwrap(),
            "diff",
            "--domain",
            "prod.acme.example",
            "latest~3",
            "latest",
            "-o",
            "json",
        ])
        .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
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
        "--root",
        root.to_str().unwrap(),
        "diff",
        "--domain",
        "prod.acme.example",
        "latest",
        "git:main",
        "--repo",
        repo.to_str().unwrap(),
    ])
    .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
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
    assert!(
        same.stdout.contains(&format!(
            "\n+++ git:main  commit {}, rendered ",
            &head[..12]
        )),
        "{}",
        same.stdout
    );
    let before = clinv(&[
        "--root",
        root.to_str().unwrap(),
        "diff",
        "--domain",
        "prod.acme.example",
        "@1999-01-01",
        "latest",
    ])
    .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
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

fn status_and_drift_fall_back_to_the_newest_snapshot() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let store = root.join("snapshots");
    let cmd = |args: &[&str]| {
        let mut all = vec!["--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        clinv(&all)
            .env("KUBECONFIG", "/nonexistent/kc")
            .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
            .run()
    };
    let unknown = cmd(&["drift", "--domain", "prod.acme.example"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stdout
            .contains("unknown (compared with no live inventory and no snapshot)"),
        "{}",
        unknown.stdout
    );
    cmd(&["publish", "--domain", "prod.acme.example"]).success();
    let sync = cmd(&["drift", "--domain", "prod.acme.example"]);
    assert_eq!(sync.code, 0, "{}", sync.stderr);
    assert!(
        sync.stdout.contains("in sync (compared with snapshot "),
        "{}",
        sync.stdout
    );
    let status = cmd(&["status", "--domain", "prod.acme.example"]).success();
    assert!(
        status.stderr.contains("showing the newest snapshot"),
        "{}",
        status.stderr
    );
    assert!(
        status
            .stdout
            .starts_with("--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      0.7.9\n")
    );
    // Issue #16 finding 3: a chart pin bumped in the project (same cluster spec, so the
    // same specHash) is drift too — the live inventory differs from the render.
    set_chart_version(root, "cilium", "9.9.9");
    let pin = cmd(&["drift", "--domain", "prod.acme.example"]);
    assert_eq!(pin.code, 1, "{}{}", pin.stdout, pin.stderr);
    assert!(
        pin.stdout.contains(": drift (compared with snapshot ")
            && pin.stdout.contains("cilium")
            && pin.stdout.contains("9.9.9"),
        "{}",
        pin.stdout
    );
    assert!(!pin.stdout.contains("specHash"), "{}", pin.stdout);
    let spec = root.join("clusters/prod.acme.example/cluster.lok8s.yaml");
    let mut text = std::fs::read_to_string(&spec).unwrap();
    text.push_str("# edited\n");
    std::fs::write(&spec, text).unwrap();
    let drift = cmd(&["drift", "--domain", "prod.acme.example"]);
    assert_eq!(drift.code, 1, "{}", drift.stderr);
    assert!(
        drift.stdout.contains(": drift (compared with snapshot ")
            && drift.stdout.contains("specHash"),
        "{}",
        drift.stdout
    );
}

trials! {
    Nothing: [
        log_from_the_store_and_from_the_repository_agree,
        status_and_drift_fall_back_to_the_newest_snapshot,
    ],
}
