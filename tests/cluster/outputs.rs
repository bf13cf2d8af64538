//! Issue 16, finding 1 against the real API server: `status -o json` of the live object.

use crate::plane;
use crate::support::*;

fn status_json_names_the_live_source() {
    let p = plane();
    let dir = copy_tree(&example());
    let root = dir.path();
    let kc = p.admin.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&[
            "--root",
            root.to_str().unwrap(),
            "--kubeconfig",
            kc,
            "--domain",
            "lab.acme.example",
        ]);
        clinv(&all)
            .env("CLINV_SNAPSHOTS", root.join("snapshots").to_str().unwrap())
            .run()
    };
    run(&["publish"]).ok();
    let status = run(&["status", "-o", "json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(v["source"], "live", "{}", status.stdout);
    assert!(v["snapshot"].is_null());
    assert_eq!(v["domain"], "lab.acme.example");
    assert_eq!(
        v["inventory"]["metadata"]["labels"]["lok8s.dev/domain"],
        "lab.acme.example"
    );
    let text = run(&["status"]).ok();
    assert!(
        text.stdout
            .starts_with("--- Inventory (ClusterInventory/cluster) ---\n"),
        "{}",
        text.stdout
    );
}

trials! {
    Plane: [status_json_names_the_live_source],
}
