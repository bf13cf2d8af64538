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
            .ok()
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
    cmd(&["publish", "--domain", "prod.acme.example"]).ok();
    let sync = cmd(&["drift", "--domain", "prod.acme.example"]);
    assert_eq!(sync.code, 0, "{}", sync.stderr);
    assert!(
        sync.stdout.contains("in sync (compared with snapshot "),
        "{}",
        sync.stdout
    );
    let status = cmd(&["status", "--domain", "prod.acme.example"]).ok();
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
