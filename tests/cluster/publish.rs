use crate::support::*;
use crate::{Plane, kubeconfig_with_server, plane};
use std::time::Duration;

fn publish(p: &Plane, root: &std::path::Path, domain: &str, extra: &[&str]) -> Run {
    let kc = p.admin.to_str().unwrap().to_string();
    clinv(&["publish"])
        .project(root, domain)
        .kubeconfig(&kc)
        .args(extra)
        .run()
}

/// A spec without `renderedAt`, which an unchanged publish keeps from the live object.
fn content(spec: &serde_json::Value) -> serde_json::Value {
    let mut spec = spec.clone();
    spec.as_object_mut().unwrap().remove("renderedAt");
    spec
}

fn publish_creates_the_objects_kubectl_shows_them_and_the_live_object_matches_the_render() {
    let p = plane();
    p.reset();
    let run = publish(&p, &example(), "prod.acme.example", &[]).success();
    assert_has(
        &run.stderr,
        "clusterinventory/cluster created (CRD created;",
    );
    let (code, out, err) = p.kubectl(&["get", "clinv", "cluster"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "K8S", "AGE"]);
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&row[..2], ["cluster", "v1.31.10"]);
    let live = p.live().unwrap();
    let want = rendered(&example(), "prod.acme.example");
    assert_eq!(live["spec"], want["spec"]);
    assert_eq!(live["metadata"]["labels"], want["metadata"]["labels"]);
    assert_eq!(live["apiVersion"], want["apiVersion"]);
    // Field manager lok8s owns spec; nothing else was written.
    let with_fields = p.live_managed();
    let managers: Vec<&str> = fields(&with_fields["metadata"]["managedFields"], "manager");
    assert_eq!(managers, ["lok8s"]);
    assert!(live.get("status").is_none());
    let text = live.to_string();
    assert!(!text.contains("FAKESECRET"));
}

fn publishing_twice_is_unchanged_and_removed_keys_disappear() {
    let p = plane();
    let dir = copy_tree(&example());
    let root = dir.path();
    publish(&p, root, "prod.acme.example", &[]).success();
    let second = publish(&p, root, "prod.acme.example", &["-v"]).success();
    assert_has(&second.stderr, "clusterinventory/cluster unchanged");
    assert!(second.stderr.contains(", 2 requests)"), "{}", second.stderr);
    // A different renderedAt alone is no change either.
    let third = clinv(&["publish"])
        .project(root, "prod.acme.example")
        .kubeconfig(&p.admin)
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .run()
        .success();
    assert!(third.stderr.contains("unchanged"), "{}", third.stderr);
    // Removing provider from the spec removes it from the live object.
    edit_prod_spec(
        root,
        "  provider:\n    name: hetzner\n    region: fsn1\n",
        "",
    );
    let run = publish(&p, root, "prod.acme.example", &[]).success();
    assert_has(&run.stderr, "clusterinventory/cluster configured");
    let live = p.live().unwrap();
    assert!(live["spec"].get("provider").is_none(), "{}", live["spec"]);
    assert_eq!(
        content(&live["spec"]),
        content(&rendered(root, "prod.acme.example")["spec"])
    );
}

fn the_api_server_prunes_fields_outside_the_schema() {
    let p = plane();
    publish(&p, &example(), "prod.acme.example", &[]).success();
    let mut cr = rendered(&example(), "prod.acme.example");
    cr["spec"]["values"] = serde_json::json!({"token": "FAKESECRET-pruned"});
    cr["spec"]["addons"][0]["secret"] = serde_json::json!("FAKESECRET-pruned-too");
    cr["spec"]["addons"][0]["env"] = serde_json::json!({"A": "FAKESECRET-env"});
    // Server-side apply refuses undeclared fields outright; an update prunes them.
    let (code, _, err) = p.kubectl_as(
        &p.admin,
        &["replace", "--validate=false", "-f", "-"],
        Some(&cr.to_string()),
    );
    assert_eq!(code, 0, "{err}");
    let live = p.live().unwrap();
    assert!(!live.to_string().contains("FAKESECRET"), "{live}");
    assert!(live["spec"].get("values").is_none());
}

fn status_written_by_another_manager_survives_and_spec_changes_apply_in_place() {
    let p = plane();
    let dir = copy_tree(&example());
    let root = dir.path();
    publish(&p, root, "prod.acme.example", &[]).success();
    let uid = p.live().unwrap()["metadata"]["uid"].clone();
    let status = r#"{"status":{"availableUpdates":[{"name":"cilium","current":"1.19.2","latest":"1.20.1"}],"lastReported":"2026-07-06T12:00:00Z"}}"#;
    p.patch_status_as("kubehz-agent", status);
    edit_prod_spec(root, "    - metrics-server\n", "");
    let run = publish(&p, root, "prod.acme.example", &[]).success();
    assert!(run.stderr.contains("configured"), "{}", run.stderr);
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["uid"], uid, "updated in place");
    assert_eq!(live["status"]["availableUpdates"][0]["latest"], "1.20.1");
    assert_eq!(live["status"]["lastReported"], "2026-07-06T12:00:00Z");
    assert!(!live["spec"].to_string().contains("metrics-server"));
    let status_run = clinv(&["status"])
        .project(root, "prod.acme.example")
        .kubeconfig(&p.admin)
        .run()
        .success();
    assert!(status_run.stdout.starts_with("--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      0.7.9\n  driver:     kubeone · hetzner\n"), "{}", status_run.stdout);
    assert!(
        status_run
            .stdout
            .contains("  agent:      last reported 2026-07-06T12:00:00Z\n\n")
    );
}

fn a_conflicting_crd_warns_and_force_conflicts_takes_it_over() {
    let p = plane();
    p.reset();
    let crd = clinv(&["crd", "-o", "json"]).run().success().stdout;
    let mut other: serde_json::Value = serde_json::from_str(&crd).unwrap();
    other["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] =
        "owned by someone else".into();
    other["spec"]["names"]["shortNames"] = serde_json::json!(["clinv", "inv"]);
    p.apply("other-tool", &[], &other.to_string());
    let run = publish(&p, &example(), "prod.acme.example", &[]).success();
    assert!(run.stderr.starts_with("[warn] inventory: could not publish the ClusterInventory for prod.acme.example: the ClusterInventory CRD conflicts"), "{}", run.stderr);
    assert!(
        run.stderr.contains("other-tool"),
        "names the other manager: {}",
        run.stderr
    );
    assert!(run.stderr.contains("--force-conflicts"));
    assert_eq!(
        publish(&p, &example(), "prod.acme.example", &["--strict"]).code,
        8
    );
    let run = publish(&p, &example(), "prod.acme.example", &["--force-conflicts"]).success();
    assert_has(&run.stderr, "clusterinventory/cluster created");
    let (_, out, _) = p.kubectl(&["get", "crd", "clusterinventories.lok8s.dev", "-o", "json"]);
    let live: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_ne!(
        live["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"],
        "owned by someone else"
    );
}

/// A kubeconfig for `server` with the admin's credentials.
fn kubeconfig_for(p: &Plane, server: &str) -> tempfile::NamedTempFile {
    kubeconfig_with_server(&p.admin, server)
}

fn a_refused_connection_warns_and_exits_zero_at_once() {
    let p = plane();
    // A port nobody listens on: connection refused, immediately.
    let kc = kubeconfig_for(&p, &format!("https://127.0.0.1:{}", refused_port()));
    let root = example();
    let publish = |extra: &[&str]| {
        clinv(&["publish"])
            .project(&root, "prod.acme.example")
            .kubeconfig(kc.path())
            .args(extra)
            .run()
    };
    let run = publish(&[]).success();
    assert!(run.stderr.contains("cluster unreachable"), "{}", run.stderr);
    // At once: far within the 30 s --timeout it would otherwise wait out (a wall-clock
    // margin a loaded machine cannot break; the speed itself is scripts/bench.py's).
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
    assert_eq!(publish(&["--strict"]).code, 5);
    // Black holes, resets, stalls: tests/cluster/faults.rs.
}

fn a_stopped_api_server_is_unreachable_and_a_later_publish_converges() {
    let p = plane();
    // The tests share one plane: what an earlier one left is another domain's inventory,
    // which a publish of edge's would refuse (issue 39).
    let (code, _, err) = p.kubectl(&[
        "delete",
        "clusterinventory",
        "cluster",
        "--ignore-not-found",
    ]);
    assert_eq!(code, 0, "{err}");
    crate::replay::control_plane("stop-apiserver");
    let run = publish(&p, &example(), "edge.acme.example", &[]);
    crate::replay::control_plane("start-apiserver");
    let run = run.success();
    assert!(run.stderr.contains("cluster unreachable"), "{}", run.stderr);
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
    publish(&p, &example(), "edge.acme.example", &[]).success();
    assert_eq!(
        content(&p.live().unwrap()["spec"]),
        content(&rendered(&example(), "edge.acme.example")["spec"])
    );
}

fn dry_run_prints_the_change_and_persists_nothing() {
    let p = plane();
    publish(&p, &example(), "prod.acme.example", &[]).success();
    let before = p.live().unwrap();
    // lab over prod's inventory: what taking it over would change (issue 39: without
    // --take-over the publish is refused).
    let refused = publish(&p, &example(), "lab.acme.example", &["--dry-run"]);
    assert_eq!(refused.code, 12, "{}", refused.stderr);
    let run = publish(
        &p,
        &example(),
        "lab.acme.example",
        &["--dry-run", "--take-over"],
    )
    .success();
    assert!(
        run.stdout.starts_with(
            "clusterinventory/cluster configured (dry run)\n--- live spec\n+++ rendered spec\n"
        ),
        "{}",
        run.stdout
    );
    assert_has(&run.stdout, "\n-kind: kubeone\n");
    assert_has(&run.stdout, "\n+kind: capi\n");
    let after = p.live().unwrap();
    assert_eq!(
        before["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );
}

fn missing_kubeconfig_and_render_failures_are_fail_soft() {
    let _p = plane();
    let run = clinv(&["publish"])
        .project(example(), "prod.acme.example")
        .env("KUBECONFIG", "/nonexistent/kc")
        .run()
        .success();
    assert!(
        run.stderr.starts_with(
            "[warn] inventory: kubeconfig not found (/nonexistent/kc) — recorded as pending snapshot "
        ),
        "{}",
        run.stderr
    );
    let dir = project_with_spec("kind: ../evil\n");
    let run = clinv(&["publish"])
        .project(dir.path(), "inv")
        .run()
        .success();
    assert_has(
        &run.stderr,
        "[error] inventory: cluster spec declares a malformed kind",
    );
    assert!(run.stderr.contains(
        "[warn] inventory: failed to build the ClusterInventory for inv — skipping publish"
    ));
    let strict = clinv(&["publish", "--strict"])
        .project(dir.path(), "inv")
        .run();
    assert_eq!(strict.code, 1);
    let strict = clinv(&["publish", "--strict", "--root", example().to_str().unwrap()])
        .env("KUBECONFIG", "/nonexistent/kc")
        .run();
    assert_eq!(strict.code, 3);
    // Named by the user, the missing file is a usage error instead (kubectl's rule).
    let named = clinv(&["publish"])
        .root(example())
        .kubeconfig("/nonexistent/kc")
        .run();
    assert_eq!(named.code, 2, "{}", named.stderr);
}

fn lok8s_project_kubeconfig_is_preferred_over_kubeconfig_env() {
    let p = plane();
    let dir = copy_tree(&example());
    // metadata.name of prod is prod-fsn1.
    std::fs::create_dir_all(dir.path().join(".kubeconfig")).unwrap();
    std::fs::copy(&p.admin, dir.path().join(".kubeconfig/prod-fsn1.yaml")).unwrap();
    let run = clinv(&["publish", "-v"])
        .project(dir.path(), "prod.acme.example")
        .env("KUBECONFIG", p.nobody.to_str().unwrap())
        .run()
        .success();
    assert_has(&run.stderr, "kubeconfig from project .kubeconfig/");
    assert!(!run.stderr.contains("[warn]"), "{}", run.stderr);
}

fn drift_against_the_live_inventory() {
    let p = plane();
    let dir = copy_tree(&example());
    let root = dir.path();
    let drift = || {
        clinv(&["drift"])
            .project(root, "prod.acme.example")
            .kubeconfig(&p.admin)
            .env("CLINV_SNAPSHOTS", root.join("snapshots").to_str().unwrap())
            .run()
    };
    publish(&p, root, "prod.acme.example", &[]).success();
    let sync = drift();
    assert_eq!(sync.code, 0, "{}{}", sync.stdout, sync.stderr);
    assert_has(
        &sync.stdout,
        "in sync (compared with the live inventory at https://127.0.0.1:",
    );
    edit_prod_spec(root, "v1.31.10@", "v1.32.3@");
    let drifted = drift();
    assert_eq!(drifted.code, 1, "{}{}", drifted.stdout, drifted.stderr);
    assert_has(&drifted.stdout, ": drift (compared with the live inventory");
    assert_has(&drifted.stdout, "v1.31.10 → v1.32.3");
}

/// Flux applied the inventory (field manager kustomize-controller, forced, with its
/// labels): a publish names the Kustomization, says `clinv commit` is the channel, and
/// records the snapshot without queueing it (no replay could deliver it).
/// Deletes the ClusterInventory when dropped: the GitOps marks this test applies (Flux
/// labels, an Argo CD annotation, kustomize-controller's fields) must not reach the tests
/// that run after it on the shared plane, even when it fails.
struct DeleteInventory<'a>(&'a Plane);

impl Drop for DeleteInventory<'_> {
    fn drop(&mut self) {
        let _ = self.0.kubectl(&[
            "delete",
            "clusterinventory",
            "cluster",
            "--ignore-not-found",
        ]);
    }
}

fn a_gitops_managed_inventory_names_its_owner_and_is_not_queued() {
    let p = plane();
    p.crd_only();
    let _clean = DeleteInventory(&p);
    let dir = copy_tree(&example());
    let store = dir.path().join("snapshots");
    let mut cr = rendered(dir.path(), "prod.acme.example");
    cr["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] = "inventory".into();
    cr["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/namespace"] = "flux-system".into();
    p.apply(
        "kustomize-controller",
        &["--force-conflicts"],
        &cr.to_string(),
    );
    let before = p.live().unwrap();
    set_chart_version(dir.path(), "cilium", "1.20.1");
    let publish = |extra: &[&str]| {
        let kc = p.admin.to_str().unwrap().to_string();
        clinv(&["publish"])
            .project(dir.path(), "prod.acme.example")
            .kubeconfig(&kc)
            .args(extra)
            .store(&store)
            .run()
    };
    let run = publish(&["-q"]).success();
    assert!(
        run.stderr.starts_with("[warn] inventory: could not publish the ClusterInventory for prod.acme.example: it is managed by GitOps, and clinv commit")
            && run.stderr.contains("Flux Kustomization flux-system/inventory")
            && run.stderr.contains("recorded, not pending")
            && !run.stderr.contains("clinv replay delivers it"),
        "{}",
        run.stderr
    );
    // Nothing was applied over Flux's object.
    assert_eq!(
        p.live().unwrap()["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
    // The reason is persisted; the snapshot is not pending, so replay has nothing to do.
    let list = clinv(&["snapshots", "list", "-o", "json"])
        .root(dir.path())
        .store(&store)
        .run()
        .success();
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list[0]["reason"], "gitops-managed", "{list}");
    assert_eq!(list[0]["state"], "superseded", "{list}");
    let replay = clinv(&["replay"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(&p.admin)
        .store(&store)
        .run()
        .success();
    assert_has(&replay.stderr, "nothing to replay");
    assert_eq!(publish(&["--strict"]).code, 14);
    // A snapshot queued while offline is taken off the queue by the replay that finds
    // the object managed by Flux (no replay could ever deliver it).
    set_chart_version(dir.path(), "cilium", "1.20.2");
    let dead = kubeconfig_for(&p, &crate::refused_server());
    clinv(&["publish"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(dead.path())
        .store(&store)
        .run()
        .success();
    let replay = clinv(&["replay", "-q"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(&p.admin)
        .store(&store)
        .run()
        .success();
    assert_has(&replay.stderr, "Flux Kustomization flux-system/inventory");
    assert_has(&replay.stderr, "taken off the queue");
    let list = clinv(&["snapshots", "list", "-o", "json"])
        .root(dir.path())
        .store(&store)
        .run()
        .success();
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(
        (&list[0]["state"], &list[0]["reason"]),
        (&"superseded".into(), &"gitops-managed".into()),
        "{list}"
    );
    // Argo CD's tracking annotation is recognised the same way.
    let mut argo = cr.clone();
    argo["metadata"]["labels"] =
        serde_json::json!({"lok8s.dev/domain": cr["metadata"]["labels"]["lok8s.dev/domain"]});
    argo["metadata"]["annotations"] = serde_json::json!({
        "argocd.argoproj.io/tracking-id": "inv-prod:lok8s.dev/ClusterInventory:/cluster"
    });
    p.crd_only();
    p.apply("argocd-controller", &[], &argo.to_string());
    let run = publish(&[]).success();
    assert_has(&run.stderr, "Argo CD Application inv-prod");
    // --force-conflicts takes it over, as for any other field manager.
    let run = publish(&["--force-conflicts"]).success();
    assert_has(&run.stderr, "clusterinventory/cluster configured");
}

/// A reachable cluster and a store clinv must not write (owned by another user): the
/// apply happens and the warning says the store did not record it; --strict makes that
/// exit 11.
fn an_applied_but_unrecorded_publish_fails_under_strict() {
    let p = plane();
    p.crd_only();
    let dir = copy_tree(&example());
    let store = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        clinv(&["publish"])
            .project(dir.path(), "prod.acme.example")
            .kubeconfig(&p.admin)
            .args(extra)
            .store(store.path())
            .run()
    };
    run(&[]).success();
    for entry in walk(store.path()) {
        std::os::unix::fs::lchown(&entry, Some(65534), Some(65534)).unwrap();
    }
    set_chart_version(dir.path(), "cilium", "1.20.1");
    let soft = run(&[]).success();
    assert_has(&soft.stderr, "could not record a snapshot");
    assert!(
        p.live().unwrap().to_string().contains("1.20.1"),
        "the publish applied"
    );
    set_chart_version(dir.path(), "cilium", "1.20.2");
    let strict = run(&["--strict"]);
    assert_eq!(strict.code, 11, "{}", strict.stderr);
    assert_has(&strict.stderr, "applied but not recorded");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

trials! {
    Plane: [
        a_gitops_managed_inventory_names_its_owner_and_is_not_queued,
        an_applied_but_unrecorded_publish_fails_under_strict,
        publish_creates_the_objects_kubectl_shows_them_and_the_live_object_matches_the_render,
        publishing_twice_is_unchanged_and_removed_keys_disappear,
        the_api_server_prunes_fields_outside_the_schema,
        status_written_by_another_manager_survives_and_spec_changes_apply_in_place,
        a_conflicting_crd_warns_and_force_conflicts_takes_it_over,
        a_refused_connection_warns_and_exits_zero_at_once,
        a_stopped_api_server_is_unreachable_and_a_later_publish_converges,
        dry_run_prints_the_change_and_persists_nothing,
        missing_kubeconfig_and_render_failures_are_fail_soft,
        lok8s_project_kubeconfig_is_preferred_over_kubeconfig_env,
        drift_against_the_live_inventory,
    ],
}
