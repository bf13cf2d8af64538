//! `clinv agent` against the real API server: status through the subresource only, its
//! own field manager, Helm release records in Helm's storage format, the documented
//! RBAC (with a real ServiceAccount token from the TokenRequest API), and fail-soft.

use crate::support::*;
use crate::{Plane, plane};
use base64::Engine;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

const HELM_NS: &str = "clinv-test-helm";
const OTHER_NS: &str = "clinv-test-helm-other";

fn index_fixture() -> PathBuf {
    fixture("updates/index.json")
}

fn agent(kubeconfig: &Path, extra: &[&str]) -> Run {
    let index = index_fixture();
    clinv(&["agent", "--index", index.to_str().unwrap()])
        .kubeconfig(kubeconfig)
        .args(extra)
        .run()
}

fn publish(p: &Plane, root: &Path) -> Run {
    clinv(&["publish"])
        .project(root, "prod.acme.example")
        .kubeconfig(&p.admin)
        .run()
        .success()
}

fn apply(p: &Plane, object: &Value) {
    let (code, _, err) = p.kubectl_as(&p.admin, &["apply", "-f", "-"], Some(&object.to_string()));
    assert_eq!(code, 0, "{err}");
}

/// A Helm 3 release Secret exactly as Helm's Secret driver stores it: the release JSON,
/// gzip'd, base64'd into `release` (which the API then holds base64'd as Secret data).
pub(crate) fn helm_release(
    ns: &str,
    name: &str,
    revision: u64,
    status: &str,
    chart_version: &str,
) -> Value {
    use std::io::Write;
    let release = json!({
        "name": name,
        "namespace": ns,
        "version": revision,
        "info": {
            "first_deployed": "2026-07-01T09:00:00Z",
            "last_deployed": "2026-07-06T09:00:00Z",
            "status": status,
            "description": "Upgrade complete"
        },
        "chart": {
            "metadata": {"apiVersion": "v2", "name": name, "version": chart_version, "appVersion": chart_version},
            "values": {"auth": {"password": "FAKESECRET-helm-chart-default"}},
            "templates": []
        },
        "config": {"token": "FAKESECRET-helm-user-value"},
        "manifest": "---\napiVersion: v1\nkind: Secret\nstringData:\n  key: FAKESECRET-helm-manifest\n",
        "hooks": []
    });
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(release.to_string().as_bytes()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let stored = b64.encode(gz.finish().unwrap());
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": format!("sh.helm.release.v1.{name}.v{revision}"),
            "namespace": ns,
            "labels": {"owner": "helm", "name": name, "status": status, "version": revision.to_string()}
        },
        "data": {"release": b64.encode(stored)}
    })
}

/// Release records: cilium 1 (superseded) and 2 (deployed) in one namespace and a
/// higher revision under the same name in a second namespace; cert-manager 3 deployed
/// and 4 failed; one undecodable record; one unrelated Opaque Secret.
pub(crate) fn ensure_helm_releases(p: &Plane) {
    for ns in [HELM_NS, OTHER_NS] {
        apply(
            p,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    apply(
        p,
        &helm_release(HELM_NS, "cilium", 1, "superseded", "1.19.1"),
    );
    apply(p, &helm_release(HELM_NS, "cilium", 2, "deployed", "1.19.2"));
    apply(p, &helm_release(OTHER_NS, "cilium", 7, "deployed", "9.9.9"));
    apply(
        p,
        &helm_release(HELM_NS, "cert-manager", 3, "deployed", "v1.20.1"),
    );
    apply(
        p,
        &helm_release(HELM_NS, "cert-manager", 4, "failed", "v1.21.0"),
    );
    let mut broken = helm_release(HELM_NS, "broken", 1, "deployed", "1.0.0");
    broken["data"]["release"] =
        json!(base64::engine::general_purpose::STANDARD.encode("FAKESECRET-not-a-release"));
    apply(p, &broken);
    apply(
        p,
        &json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "app-credentials", "namespace": HELM_NS, "labels": {"owner": "helm"}},
                "stringData": {"password": "FAKESECRET-opaque"}}),
    );
}

fn managed(p: &Plane) -> Vec<Value> {
    let v = p.live_managed();
    v["metadata"]["managedFields"].as_array().unwrap().clone()
}

fn manager<'a>(fields: &'a [Value], name: &str) -> Option<&'a Value> {
    fields.iter().find(|m| m["manager"] == name)
}

fn expected_updates() -> Value {
    json!([
        // cert-manager v1.20.1 → v1.21.0-rc.1 is not offered: a release is never offered
        // a pre-release (issue 16, finding 11).
        {"name": "cilium", "current": "1.19.2", "latest": "v1.20.1"},
        {"name": "metrics-server", "current": "3.12.2", "latest": "3.12"}
    ])
}

fn expected_observed() -> Value {
    json!([
        {"name": "cert-manager", "version": "v1.21.0", "healthy": false},
        {"name": "cilium", "version": "1.19.2", "healthy": true}
    ])
}

fn agent_once_writes_status_through_the_subresource_and_publish_keeps_it() {
    let p = plane();
    p.reset();
    let dir = copy_tree(&example());
    let root = dir.path();
    publish(&p, root);
    ensure_helm_releases(&p);
    let before = p.live().unwrap();
    let lok8s_before = manager(&managed(&p), "lok8s").unwrap().clone();

    // -v: also the request log, which must not carry payloads either.
    let run = agent(&p.admin, &["--once", "-v"]).success();
    assert_has(&run.stderr, "[debug] api: GET /api/v1/secrets?");
    assert_has(
        &run.stderr,
        "[info] agent: wrote ClusterInventory status: 2 available update(s), 2 observed addon(s)",
    );
    assert_has(
        &run.stderr,
        "[warn] agent: 1 Helm release record(s) could not be decoded",
    );
    assert!(run.stdout.is_empty());

    // kubectl shows it.
    let (code, yaml, err) = p.kubectl(&["get", "clinv", "cluster", "-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    assert!(yaml.contains("status:\n  availableUpdates:\n"), "{yaml}");
    assert!(yaml.contains("  lastReported: \""), "{yaml}");
    assert!(yaml.contains("  observedAddons:\n"), "{yaml}");
    let live = p.live().unwrap();
    assert_eq!(live["status"]["availableUpdates"], expected_updates());
    assert_eq!(live["status"]["observedAddons"], expected_observed());
    let reported = live["status"]["lastReported"].as_str().unwrap();
    let at = clinv::util::time::parse_rfc3339(reported).unwrap();
    assert!(jiff::Timestamp::now().duration_since(at).as_secs().abs() < 60);

    // spec, its owner and the generation are untouched; the agent owns only status.
    assert_eq!(live["spec"], before["spec"]);
    assert_eq!(
        live["metadata"]["generation"],
        before["metadata"]["generation"]
    );
    let fields = managed(&p);
    assert_eq!(manager(&fields, "lok8s").unwrap(), &lok8s_before);
    let mine = manager(&fields, "clinv-agent").expect("clinv-agent in managedFields");
    assert_eq!(mine["subresource"], "status");
    assert_eq!(mine["operation"], "Update");
    let owned: Vec<&String> = mine["fieldsV1"].as_object().unwrap().keys().collect();
    assert_eq!(owned, ["f:status"]);
    assert_eq!(fields.len(), 2, "{fields:?}");

    // No Helm payload byte went anywhere.
    for text in [&run.stderr, &yaml, &live.to_string()] {
        assert!(!text.contains("FAKESECRET"), "{text}");
    }

    // A following publish (a real spec change) leaves the status as it is.
    edit_prod_spec(root, "    - metrics-server\n", "");
    let run = publish(&p, root);
    assert_has(&run.stderr, "clusterinventory/cluster configured");
    let after = p.live().unwrap();
    assert_ne!(after["spec"], live["spec"]);
    assert_eq!(after["status"], live["status"]);
    let fields = managed(&p);
    assert_eq!(
        manager(&fields, "clinv-agent").unwrap()["fieldsV1"],
        mine["fieldsV1"]
    );
    let status = clinv(&["status"])
        .project(root, "prod.acme.example")
        .kubeconfig(&p.admin)
        .run()
        .success();
    assert_has(
        &status.stdout,
        &format!("  agent:      last reported {reported}\n"),
    );

    // Nothing newer: the list is cleared to [] (not deleted); metrics-server is gone from
    // the spec now, so only two addons compare.
    let dir = tempfile::tempdir().unwrap();
    let idx = write(
        dir.path(),
        "index.json",
        r#"{"addons": [{"name": "cilium", "chartVersion": "1.19.2"}, {"name": "cert-manager", "chartVersion": "v1.20.1"}]}"#,
    );
    let run = clinv(&["agent", "--once", "--index", idx.to_str().unwrap()])
        .kubeconfig(&p.admin)
        .run()
        .success();
    assert_has(&run.stderr, "0 available update(s)");
    let cleared = p.live().unwrap();
    assert_eq!(cleared["status"]["availableUpdates"], json!([]));
    assert_eq!(cleared["status"]["observedAddons"], expected_observed());

    // Without --index, availableUpdates is left as it is.
    let run = clinv(&["agent", "--once", "--kubeconfig", p.admin.to_str().unwrap()])
        .run()
        .success();
    assert_has(&run.stderr, "availableUpdates left as it was (no index)");
    assert_eq!(p.live().unwrap()["status"]["availableUpdates"], json!([]));
}

/// A kubeconfig that authenticates with `token` against the plane.
pub(crate) fn token_kubeconfig(p: &Plane, token: &str) -> tempfile::NamedTempFile {
    let admin: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    let cluster = &admin["clusters"][0]["cluster"];
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: plane\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: sa\n  user:\n    token: {token}\ncontexts:\n- name: sa\n  context: {{cluster: plane, user: sa}}\ncurrent-context: sa\n",
        cluster["server"].as_str().unwrap(),
        cluster["certificate-authority-data"].as_str().unwrap(),
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

/// A real ServiceAccount token from the TokenRequest API.
pub(crate) fn service_account_token(p: &Plane, ns: &str, sa: &str) -> String {
    let (code, out, err) = p.kubectl(&["create", "token", sa, "-n", ns, "--duration", "10m"]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_string()
}

fn manifests() -> PathBuf {
    repo().join("examples/agent")
}

fn the_documented_rbac_is_enough_and_the_secrets_permission_is_optional() {
    let p = plane();
    publish(&p, &example());
    ensure_helm_releases(&p);
    let dir = manifests();
    let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // The namespace first: a server-side dry run of namespaced objects needs it.
    let (code, _, err) = p.kubectl(&["apply", "-f", &file("00-namespace.yaml")]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = p.kubectl(&["apply", "--dry-run=server", "-f", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for object in [
        "serviceaccount/clinv-agent",
        "clusterrole.rbac.authorization.k8s.io/clinv-agent ",
        "clusterrolebinding.rbac.authorization.k8s.io/clinv-agent ",
        "clusterrole.rbac.authorization.k8s.io/clinv-agent-helm-releases",
        "clusterrolebinding.rbac.authorization.k8s.io/clinv-agent-helm-releases",
        "deployment.apps/clinv-agent",
    ] {
        assert!(out.contains(object), "{object}: {out}");
    }
    assert_eq!(out.matches("(server dry run)").count(), 7, "{out}");

    // The base RBAC only (the optional secrets binding from an earlier run removed).
    p.kubectl(&[
        "delete",
        "clusterrolebinding",
        "clinv-agent-helm-releases",
        "--ignore-not-found",
    ]);
    for name in ["10-serviceaccount.yaml", "20-rbac.yaml"] {
        let (code, _, err) = p.kubectl(&["apply", "-f", &file(name)]);
        assert_eq!(code, 0, "{err}");
    }
    let sentinel = json!({"status": {"observedAddons": [{"name": "sentinel", "version": "0", "healthy": true}], "availableUpdates": []}});
    let (code, _, err) = p.kubectl(&[
        "patch",
        "clinv",
        "cluster",
        "--subresource=status",
        "--type=merge",
        "-p",
        &sentinel.to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let kc = token_kubeconfig(
        &p,
        &service_account_token(&p, "clinv-system", "clinv-agent"),
    );
    let run = agent(kc.path(), &["--once", "--strict"]).success();
    assert_has(
        &run.stderr,
        "wrote ClusterInventory status: 2 available update(s), observedAddons left as it was",
    );
    assert!(
        !run.stderr.contains("[warn]"),
        "skipped quietly: {}",
        run.stderr
    );
    let live = p.live().unwrap();
    assert_eq!(live["status"]["availableUpdates"], expected_updates());
    assert_eq!(live["status"]["observedAddons"][0]["name"], "sentinel");

    // The identity can do nothing else: not write the object (spec), not list.
    let (code, _, err) = p.kubectl_as(
        kc.path(),
        &[
            "patch",
            "clinv",
            "cluster",
            "--type=merge",
            "-p",
            r#"{"spec":{"kind":"evil"}}"#,
        ],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("forbidden"), "{err}");
    let (code, _, _) = p.kubectl_as(kc.path(), &["get", "clinv"], None);
    assert_ne!(code, 0, "list is not granted");
    let (code, _, _) = p.kubectl_as(kc.path(), &["get", "secrets", "-A"], None);
    assert_ne!(code, 0);

    // With the optional binding the same identity reads the Helm release records.
    let (code, _, err) = p.kubectl(&["apply", "-f", &file("30-rbac-helm-releases.yaml")]);
    assert_eq!(code, 0, "{err}");
    let run = agent(kc.path(), &["--once"]).success();
    assert!(run.stderr.contains("2 observed addon(s)"), "{}", run.stderr);
    assert_eq!(
        p.live().unwrap()["status"]["observedAddons"],
        expected_observed()
    );
    assert!(!run.stderr.contains("FAKESECRET"));

    // Read access without the status permission: nothing written, one line; strict 7.
    apply(
        &p,
        &json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "clinv-readonly", "namespace": "clinv-system"}}),
    );
    apply(
        &p,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "clinv-test-readonly"},
                "rules": [{"apiGroups": ["lok8s.dev"], "resources": ["clusterinventories"], "verbs": ["get"]}]}),
    );
    apply(
        &p,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "clinv-test-readonly"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "clinv-test-readonly"},
                "subjects": [{"kind": "ServiceAccount", "name": "clinv-readonly", "namespace": "clinv-system"}]}),
    );
    let before = p.live().unwrap()["status"].clone();
    let ro = token_kubeconfig(
        &p,
        &service_account_token(&p, "clinv-system", "clinv-readonly"),
    );
    let run = agent(ro.path(), &["--once"]).success();
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "[warn] agent: cannot write ClusterInventory status (RBAC: patch on clusterinventories/status is missing)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(p.live().unwrap()["status"], before);
    assert_eq!(agent(ro.path(), &["--once", "--strict"]).code, 7);
}

fn fail_soft_without_crd_object_or_rbac_one_line_and_strict_codes() {
    let p = plane();
    let server = {
        let admin: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
        admin["clusters"][0]["cluster"]["server"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let check = |kc: &Path, line: &str, strict_code: i32| {
        let run = agent(kc, &["--once"]).success();
        assert_eq!(run.stderr, format!("{line}\n"));
        assert_eq!(
            agent(kc, &["--once", "--strict"]).code,
            strict_code,
            "{line}"
        );
        // Loop mode: exit 0 after the bounded passes, the condition logged once.
        let looped = agent(kc, &["--interval=50ms", "--max-iterations=3"]).success();
        assert_eq!(looped.stderr, format!("{line}\n"));
    };

    // No CRD.
    p.reset();
    check(
        &p.admin,
        &format!(
            "[warn] agent: no ClusterInventory CRD (clusterinventories.lok8s.dev) in {server} — nothing written"
        ),
        10,
    );
    // The CRD but no object.
    publish(&p, &example());
    let (code, _, err) = p.kubectl(&["delete", "clinv", "cluster", "--wait=true"]);
    assert_eq!(code, 0, "{err}");
    check(
        &p.admin,
        &format!("[warn] agent: no ClusterInventory 'cluster' in {server} — nothing written"),
        10,
    );
    // An identity without any RBAC.
    publish(&p, &example());
    let run = agent(&p.nobody, &["--once"]).success();
    assert!(
        run.stderr.starts_with("[warn] agent: cannot read the ClusterInventory (RBAC: get on clusterinventories is missing): forbidden: 403 "),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1);
    assert_eq!(agent(&p.nobody, &["--once", "--strict"]).code, 7);

    // Loop mode really keeps running: still alive after several failed passes.
    let index = index_fixture();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_clinv"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .args([
            "agent",
            "--kubeconfig",
            p.nobody.to_str().unwrap(),
            "--index",
            index.to_str().unwrap(),
            "--interval=100ms",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "loop mode exited");
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty());
}

fn updates_compares_the_live_inventory_when_the_cluster_is_reachable() {
    let p = plane();
    // The live object differs from the render (cilium 1.18.0), so the source shows.
    let (code, _, err) = p.kubectl(&["delete", "clinv", "cluster", "--ignore-not-found"]);
    assert_eq!(code, 0, "{err}");
    let root = example();
    let store = tempfile::tempdir().unwrap();
    let in_store = |c: Clinv| c.store(store.path());
    in_store(
        clinv(&["publish"])
            .project(&root, "prod.acme.example")
            .kubeconfig(&p.admin),
    )
    .run()
    .success();
    let live_spec = p.live().unwrap();
    let mut edited = live_spec.clone();
    edited["spec"]["addons"][0]["chartVersion"] = json!("1.18.0");
    for key in [
        "managedFields",
        "resourceVersion",
        "uid",
        "creationTimestamp",
        "generation",
    ] {
        edited["metadata"].as_object_mut().unwrap().remove(key);
    }
    p.apply("lok8s", &["--force-conflicts"], &edited.to_string());
    let index = index_fixture();
    // `updates -o json -v` against the cluster `kubeconfig` names.
    let updates = |kubeconfig: &std::path::Path| {
        clinv(&[
            "updates",
            "--index",
            index.to_str().unwrap(),
            "-o",
            "json",
            "-v",
        ])
        .project(&root, "prod.acme.example")
        .kubeconfig(kubeconfig)
    };
    let run = in_store(updates(&p.admin)).run().success();
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["inventory"], "live");
    assert_eq!(
        v["updates"][0],
        json!({"name": "cilium", "current": "1.18.0", "latest": "v1.20.1"})
    );
    assert_has(
        &run.stderr,
        "compared the live inventory of https://127.0.0.1:",
    );
    // Not readable (no RBAC counts too): the snapshot applied last — the publish above
    // recorded one (cilium 1.19.2, applied) — and without a store, the render; either
    // way the result says the live cluster was not read, and exit 16 (issue #24).
    let run = in_store(updates(&p.nobody)).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["inventory"], "snapshot");
    assert_eq!(v["live"], false);
    assert!(
        v["notRead"]
            .as_str()
            .is_some_and(|r| r.starts_with("forbidden: ")),
        "{v}"
    );
    assert_eq!(v["updates"][0]["current"], "1.19.2");
    assert!(run.stderr.contains("(applied, recorded "), "{}", run.stderr);
    let empty = tempfile::tempdir().unwrap();
    let run = updates(&p.nobody).store(empty.path()).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["inventory"], "rendered");
    assert_eq!(v["updates"][0]["current"], "1.19.2");
    assert_has(&run.stderr, "the live cluster was not read (forbidden: ");
}

trials! {
    Plane: [
        agent_once_writes_status_through_the_subresource_and_publish_keeps_it,
        the_documented_rbac_is_enough_and_the_secrets_permission_is_optional,
        fail_soft_without_crd_object_or_rbac_one_line_and_strict_codes,
        updates_compares_the_live_inventory_when_the_cluster_is_reachable,
    ],
}
