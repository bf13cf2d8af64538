//! Exec credential plugins against the real API server (issue 39, item 9): clinv runs
//! the plugin itself, under the command's `--timeout`, after the snapshot is recorded.
//! The plugins are shell scripts: one that never answers is a test double (no real
//! plugin hangs on purpose); the others hand out the plane's real credentials — the
//! admin's client certificate, a service account's token — as a real plugin does.

use crate::support::*;
use crate::{Plane, plane};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The admin kubeconfig with its user replaced by `exec` (a JSON object).
fn exec_kubeconfig(p: &Plane, dir: &Path, exec: serde_json::Value) -> PathBuf {
    let mut config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    config["users"][0]["user"] = serde_json::json!({ "exec": exec });
    let path = dir.join("exec.kubeconfig");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// An executable script at `dir/name`.
fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = write(dir, name, text);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The admin user's `key` (`client-certificate-data`, `client-key-data`) as PEM text.
fn admin_pem(p: &Plane, key: &str) -> String {
    use base64::Engine as _;
    let config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    let data = config["users"][0]["user"][key].as_str().unwrap();
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    String::from_utf8(pem).unwrap()
}

/// A plugin that prints `credential` (an ExecCredential's `status`) and saves the
/// `KUBERNETES_EXEC_INFO` it was given next to itself.
fn answering_plugin(dir: &Path, status: serde_json::Value) -> PathBuf {
    let answer = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": status,
    });
    write(dir, "answer.json", answer.to_string());
    let text = format!(
        "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > '{dir}/exec-info'\ncat '{dir}/answer.json'\n",
        dir = dir.display()
    );
    script(dir, "plugin", &text)
}

fn exec(plugin: &Path) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": plugin,
        "interactiveMode": "Never",
        "provideClusterInfo": true,
    })
}

/// A plugin that never answers: `publish --timeout 3` ends within 4 s, the snapshot
/// recorded pending first (before the plugin ran), nothing applied; `--strict` gives the
/// unreachable code, as for a server that does not answer in time.
fn an_exec_plugin_that_never_answers_ends_publish_at_its_timeout_and_the_snapshot_is_pending() {
    let p = plane();
    p.reset();
    let dir = copy_tree(&example());
    let store = dir.path().join("store");
    let plugin = script(dir.path(), "plugin", "#!/bin/sh\nsleep 60 &\nsleep 60\n");
    let kc = exec_kubeconfig(&p, dir.path(), exec(&plugin));
    let run = clinv(&["publish", "--strict", "--timeout", "3"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(&kc)
        .store(&store)
        .run();
    assert!(
        run.elapsed < Duration::from_secs(4),
        "took {:?}",
        run.elapsed
    );
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "credential plugin 'plugin' did not finish within 3s",
    );
    assert!(p.live().is_none(), "nothing is applied");
    let list = clinv(&["snapshots", "list", "-o", "json"])
        .root(dir.path())
        .store(&store)
        .run()
        .success();
    let list: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(list[0]["state"], "pending", "{list}");
}

/// A plugin that hands out the admin's client certificate and key: publish applies, and
/// the plugin was told what kube tells it (apiVersion, not interactive, the cluster).
fn an_exec_plugin_giving_a_client_certificate_publishes() {
    let p = plane();
    p.reset();
    let dir = copy_tree(&example());
    let status = serde_json::json!({
        "clientCertificateData": admin_pem(&p, "client-certificate-data"),
        "clientKeyData": admin_pem(&p, "client-key-data"),
    });
    let plugin = answering_plugin(dir.path(), status);
    let kc = exec_kubeconfig(&p, dir.path(), exec(&plugin));
    let run = clinv(&["publish", "--strict", "--timeout", "10"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(&kc)
        .store(dir.path().join("store"))
        .run()
        .success();
    assert_has(&run.stderr, "clusterinventory/cluster created");
    assert!(p.live().is_some());
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("exec-info")).unwrap())
            .unwrap();
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["spec"]["interactive"], false);
    let config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    assert_eq!(
        info["spec"]["cluster"]["server"],
        config["clusters"][0]["cluster"]["server"]
    );
}

/// A plugin that hands out a service account's token (bound to cluster-admin): publish
/// applies with it.
fn an_exec_plugin_giving_a_token_publishes() {
    let p = plane();
    p.reset();
    for args in [
        &["create", "serviceaccount", "clinv-plugin", "-n", "default"][..],
        &[
            "create",
            "clusterrolebinding",
            "clinv-plugin",
            "--clusterrole=cluster-admin",
            "--serviceaccount=default:clinv-plugin",
        ],
    ] {
        let (code, _, err) = p.kubectl(args);
        assert!(code == 0 || err.contains("already exists"), "{err}");
    }
    let (code, token, err) = p.kubectl(&["create", "token", "clinv-plugin", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    let dir = copy_tree(&example());
    let plugin = answering_plugin(dir.path(), serde_json::json!({ "token": token.trim() }));
    let kc = exec_kubeconfig(&p, dir.path(), exec(&plugin));
    let run = clinv(&["publish", "--strict", "--timeout", "10"])
        .project(dir.path(), "prod.acme.example")
        .kubeconfig(&kc)
        .store(dir.path().join("store"))
        .run()
        .success();
    assert_has(&run.stderr, "clusterinventory/cluster created");
    assert!(
        !run.stderr.contains(token.trim()),
        "the token is never shown"
    );
}

trials! {
    Plane: [
        an_exec_plugin_that_never_answers_ends_publish_at_its_timeout_and_the_snapshot_is_pending,
        an_exec_plugin_giving_a_client_certificate_publishes,
        an_exec_plugin_giving_a_token_publishes,
    ],
}
