//! The snapshot store v2 contract against the real control plane (issue #13, finding 2):
//! replay delivers the newest recorded inventory, whatever order the journal lines
//! were appended in.

use crate::plane;
use crate::support::*;
use std::path::Path;

fn run(root: &Path, store: &Path, kubeconfig: &Path, epoch: u64, args: &[&str]) -> Run {
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend(aimed(args, kubeconfig.to_str().unwrap()));
    all.extend_from_slice(args);
    clinv(&all)
        .store(store)
        .env("SOURCE_DATE_EPOCH", &epoch.to_string())
        .run()
}

fn queued_id(stderr: &str) -> String {
    stderr
        .split("recorded as pending snapshot ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_hexdigit()).next())
        .unwrap_or_else(|| panic!("not queued: {stderr}"))
        .to_string()
}

fn replay_after_importing_an_older_pending_snapshot_applies_the_newer() {
    let p = plane();
    p.crd_only();
    let dir = copy_tree(&fixture("inv"));
    let root = dir.path();
    let offline = repo().join("examples/offline.kubeconfig");
    let (a, b) = (root.join("store-a"), root.join("store-b"));
    // Store A records v1.31.1 first; store B records v1.31.2 later.
    set_version(root, "v1.31.1");
    let older = queued_id(
        &run(
            root,
            &a,
            &offline,
            1_800_000_000,
            &["publish", "--domain", "inv"],
        )
        .success()
        .stderr,
    );
    std::thread::sleep(std::time::Duration::from_millis(50));
    set_version(root, "v1.31.2");
    let newer = queued_id(
        &run(
            root,
            &b,
            &offline,
            1_800_000_100,
            &["publish", "--domain", "inv"],
        )
        .success()
        .stderr,
    );
    let tar = root.join("a.tar");
    run(
        root,
        &a,
        &offline,
        1_800_000_200,
        &[
            "snapshots",
            "--domain",
            "inv",
            "export",
            tar.to_str().unwrap(),
        ],
    )
    .success();
    run(
        root,
        &b,
        &offline,
        1_800_000_200,
        &["snapshots", "import", tar.to_str().unwrap()],
    )
    .success();
    // B's journal now ends with A's older line; replay must still deliver B's newer one.
    run(
        root,
        &b,
        &p.admin,
        1_800_000_300,
        &["replay", "--domain", "inv"],
    )
    .success();
    let live = p.live().expect("replay applied something");
    assert_eq!(
        live["spec"]["kubernetesVersion"], "v1.31.2",
        "replay applied the imported older inventory ({older}) instead of the newer ({newer})"
    );
    let list = run(
        root,
        &b,
        &offline,
        1_800_000_300,
        &["snapshots", "list", "--domain", "inv", "-o", "json"],
    )
    .success();
    let list: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    let state = |id: &str| {
        list.iter()
            .find(|s| s["id"] == id)
            .map(|s| s["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state(&newer).as_deref(), Some("applied"), "{list:?}");
    assert_eq!(state(&older).as_deref(), Some("superseded"), "{list:?}");
}

trials! {
    Plane: [replay_after_importing_an_older_pending_snapshot_applies_the_newer],
}
