//! The committed GitOps folder is what Flux / Argo CD apply: it must build with the real
//! kustomize and yield the same live object as `clinv publish`.

use crate::plane;
use crate::support::*;
use std::process::Command;

fn the_committed_folder_builds_with_kustomize_and_applies_to_the_same_live_object() {
    let p = plane();
    p.reset();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let store = dir.path().join("store");
    let out = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(out.status.success());
    let root = example();
    let run = clinv(&[
        "commit",
        "--repo",
        repo.to_str().unwrap(),
        "--author",
        "Bot <bot@acme.example>",
    ])
    .project(&root, "prod.acme.example")
    .store(&store)
    .run()
    .success();
    assert!(run.stderr.contains("committed"), "{}", run.stderr);
    let folder = repo.join("clusters/prod.acme.example/inventory");
    let (code, built, err) = p.kubectl(&["kustomize", folder.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        built.matches("\nkind: ").count() + usize::from(built.starts_with("kind: ")),
        2,
        "{built}"
    );
    // As Argo's sync waves do: the CRD lands first, then the object.
    let apply = || {
        p.kubectl(&[
            "apply",
            "--server-side",
            "--field-manager=lok8s",
            "-k",
            folder.to_str().unwrap(),
        ])
    };
    if apply().0 != 0 {
        p.wait_established("clusterinventories.lok8s.dev");
        let (code, _, err) = apply();
        assert_eq!(code, 0, "{err}");
    }
    let live = p.live().unwrap();
    let shown = clinv(&["snapshots", "show", "latest", "-o", "json"])
        .project(&root, "prod.acme.example")
        .store(&store)
        .run()
        .success();
    let snapshot: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(live["spec"], snapshot["inventory"]["spec"]);
    assert_eq!(
        live["metadata"]["labels"],
        snapshot["inventory"]["metadata"]["labels"]
    );
    // And clinv publish of the same inventory finds nothing to change.
    let run = clinv(&["publish"])
        .project(&root, "prod.acme.example")
        .kubeconfig(&p.admin)
        .store(&store)
        .run()
        .success();
    assert_has(&run.stderr, "clusterinventory/cluster unchanged");
}

trials! {
    Plane: [
        the_committed_folder_builds_with_kustomize_and_applies_to_the_same_live_object,
    ],
}
