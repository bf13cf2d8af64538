//! Issue 16, findings 1 and 10 against the real API server: `status -o json` of the live
//! object, and its delivery facts (ages, last apply, queue) in text and JSON.

use crate::plane;
use crate::support::*;

/// `clinv ARGS` on lab.acme.example of the project at `root` (its store inside), through
/// `kc` when the command talks to a cluster.
fn lab(root: &std::path::Path, kc: &str, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(aimed(args, kc));
    all.extend_from_slice(&[
        "--root",
        root.to_str().unwrap(),
        "--domain",
        "lab.acme.example",
    ]);
    clinv(&all)
        .env("CLINV_SNAPSHOTS", root.join("snapshots").to_str().unwrap())
        .run()
}

fn status_json_names_the_live_source() {
    let p = plane();
    // The tests share one plane: lab's publish must not meet another domain's inventory.
    p.crd_only();
    let dir = copy_tree(&example());
    let root = dir.path();
    let kc = p.admin.to_str().unwrap();
    let run = |args: &[&str]| lab(root, kc, args);
    run(&["publish"]).success();
    let status = run(&["status", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(v["source"], "live", "{}", status.stdout);
    assert!(v["snapshot"].is_null());
    assert_eq!(v["domain"], "lab.acme.example");
    assert_eq!(
        v["inventory"]["metadata"]["labels"]["lok8s.dev/domain"],
        "lab.acme.example"
    );
    let text = run(&["status"]).success();
    assert!(
        text.stdout
            .starts_with("--- Inventory (ClusterInventory/cluster) ---\n"),
        "{}",
        text.stdout
    );

    // Finding 10: the live object's age, the last apply (the publish above) and the queue.
    assert_eq!(v["schemaVersion"], 3, "{}", status.stdout);
    assert_eq!(v["live"], true, "{}", status.stdout);
    assert!(v["notRead"].is_null(), "{}", status.stdout);
    let created = v["inventory"]["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap();
    assert_eq!(v["createdAt"], created);
    assert!(v["appliedAt"].is_null());
    assert_eq!(v["renderedAt"], v["inventory"]["spec"]["renderedAt"]);
    let list = run(&["snapshots", "list", "-o", "json"]).success();
    let snaps: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    let applied = &snaps[0];
    assert_eq!(applied["state"], "applied", "{}", list.stdout);
    assert_eq!(
        v["lastApplied"],
        serde_json::json!({"at": applied["stateAt"], "snapshot": applied["id"]})
    );
    assert_eq!(
        v["queue"],
        serde_json::json!({"pending": 0, "oldestPendingAt": null})
    );
    let section = text
        .stdout
        .split_once("\n--- Delivery (lab.acme.example) ---\n")
        .unwrap_or_else(|| panic!("no delivery section: {}", text.stdout))
        .1;
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(
        lines[0], "  source:       live (ClusterInventory/cluster)",
        "{section}"
    );
    let age = |line: &str, prefix: &str| -> bool {
        // `Ns ago (TIME…`: seconds old, the test ran just now.
        line.strip_prefix(prefix)
            .and_then(|rest| rest.split_once("s ago ("))
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok_and(|n| n < 120))
    };
    assert!(age(lines[1], "  created:      "), "{section}");
    assert!(lines[1].ends_with(&format!("({created})")), "{section}");
    // The harness renders with a fixed SOURCE_DATE_EPOCH: an age of years.
    let rendered = v["renderedAt"].as_str().unwrap();
    assert!(
        lines[2].starts_with("  rendered:     ")
            && lines[2].ends_with(&format!(" ago ({rendered})")),
        "{section}"
    );
    assert!(age(lines[3], "  last applied: "), "{section}");
    assert!(
        lines[3].ends_with(&format!(", snapshot {})", applied["id"].as_str().unwrap())),
        "{section}"
    );
    assert_eq!(lines[4], "  queue:        empty", "{section}");
}

/// Issue #24, point 1, with a real applied snapshot: once the cluster cannot be read
/// (its kubeconfig points at a closed port), drift, status and updates say so and exit
/// 16; `--offline` answers from the snapshot applied last, and still sees a pin bumped
/// in the project since.
fn an_unreadable_cluster_is_said_and_offline_compares_the_applied_snapshot() {
    let p = plane();
    // The tests share one plane: lab's publish must not meet another domain's inventory.
    p.crd_only();
    let dir = copy_tree(&example());
    let root = dir.path();
    let offline = repo().join("examples/offline.kubeconfig");
    let run = |args: &[&str], kc: &str| lab(root, kc, args);
    let down = offline.to_str().unwrap();
    run(&["publish"], p.admin.to_str().unwrap()).success();
    let drift = run(&["drift"], down);
    assert_eq!(drift.code, 16, "{}{}", drift.stdout, drift.stderr);
    assert!(
        drift.stdout.starts_with(
            "lab.acme.example: unknown — the live cluster was not read (unreachable: "
        ),
        "{}",
        drift.stdout
    );
    let synced = run(&["drift", "--offline"], down);
    assert_eq!(synced.code, 0, "{}{}", synced.stdout, synced.stderr);
    assert!(
        synced
            .stdout
            .starts_with("lab.acme.example: in sync (compared with snapshot "),
        "{}",
        synced.stdout
    );
    let status = run(&["status", "-o", "json"], down);
    assert_eq!(status.code, 16, "{}", status.stderr);
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        (&v["source"], &v["live"]),
        (&"snapshot".into(), &false.into()),
        "{v}"
    );
    assert_eq!(v["inventory"]["kind"], "ClusterInventory");
    let strict = run(&["status", "--strict"], down);
    assert_eq!(strict.code, 5, "unreachable: {}", strict.stderr);
    let index = fixture("updates/index.json");
    let updates = run(
        &["updates", "--index", index.to_str().unwrap(), "-o", "json"],
        down,
    );
    assert_eq!(updates.code, 16, "{}", updates.stderr);
    let v: serde_json::Value = serde_json::from_str(&updates.stdout).unwrap();
    assert_eq!(
        (&v["inventory"], &v["live"]),
        (&"snapshot".into(), &false.into()),
        "{v}"
    );
    assert!(
        v["notRead"]
            .as_str()
            .is_some_and(|r| r.starts_with("unreachable: ")),
        "{v}"
    );
    set_chart_version(root, "cilium", "9.9.9");
    let pin = run(&["drift", "--offline", "-o", "json"], down);
    assert_eq!(pin.code, 1, "{}{}", pin.stdout, pin.stderr);
    let v: serde_json::Value = serde_json::from_str(&pin.stdout).unwrap();
    assert_eq!(v["verdict"], "drift", "{v}");
    assert_eq!(v["source"], "snapshot", "{v}");
    assert!(pin.stdout.contains("9.9.9"), "{}", pin.stdout);
}

trials! {
    Plane: [
        status_json_names_the_live_source,
        an_unreadable_cluster_is_said_and_offline_compares_the_applied_snapshot,
    ],
}
