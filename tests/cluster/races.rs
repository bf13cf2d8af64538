//! Deliveries that race each other on the real API server: the newest inventory always
//! wins, whichever process writes last (issue 48, findings 1 and 3).
//!
//! The race is made deterministic with the loopback [`Proxy`]: it holds the replay's CR
//! apply (request 3: the probe `GET`, the CRD apply, the CR apply) while another process
//! publishes, then lets it through.

use crate::proxy::{Fault, Proxy};
use crate::replay::{Fx, live_spec, snapshot_spec, states};
use crate::support::*;
use crate::{kubeconfig_with_server, plane, refused_server};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

const PROD: &str = "prod.acme.example";
const LAB: &str = "lab.acme.example";

/// `clinv publish --domain PROD` of the project at `root` through `kubeconfig`, rendered
/// at `epoch`: another process, started from the proxy's hook.
fn publish_from_hook(root: PathBuf, kubeconfig: PathBuf, epoch: &str) -> Run {
    let root_s = root.to_str().unwrap().to_string();
    let kc = kubeconfig.to_str().unwrap().to_string();
    clinv(&[
        "--root",
        &root_s,
        "publish",
        "--domain",
        PROD,
        "--kubeconfig",
        &kc,
    ])
    .env("CLINV_SNAPSHOTS", root.join("snapshots").to_str().unwrap())
    .env("SOURCE_DATE_EPOCH", epoch)
    .run()
}

/// A cluster with the CRD and no inventory, and PROD's inventory rendered at
/// 1800000000 queued while its cluster was unreachable.
fn queued_offline(p: &crate::Plane) -> Fx {
    p.crd_only();
    let fx = Fx::new();
    let dead = kubeconfig_with_server(&p.admin, &refused_server());
    fx.run(dead.path(), &["publish", "--domain", PROD])
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .run()
        .success();
    fx
}

/// Finding 1: on a cluster with no live inventory, the replay of an older pending
/// snapshot reads "absent"; a publish of a newer one lands before the replay's apply.
/// The replay's apply must not create over it: the newer inventory stays live, the older
/// snapshot is superseded by it, and the store names the newer one as applied.
fn an_older_replay_never_lands_on_a_newer_publish_to_a_new_cluster() {
    let p = plane();
    let fx = queued_offline(&p);
    let older = states(&fx)[0].0.clone();
    fx.bump("metrics-server");
    let (done, published) = mpsc::channel();
    let (root, admin) = (fx.root().to_path_buf(), p.admin.clone());
    let hook = move || {
        let _ = done.send(publish_from_hook(root, admin, "1800000100"));
    };
    let proxy = Proxy::start(
        crate::faults::api_addr(&p),
        Fault::Hold {
            request: 3,
            hook: Mutex::new(Some(Box::new(hook))),
        },
    );
    let kc = kubeconfig_with_server(&p.admin, &proxy.url());
    let replay = fx.run(kc.path(), &["replay", "--domain", PROD, "-v"]).run();
    let newer = published
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("the hook did not run ({e}): {}", proxy.log()));
    assert_eq!(newer.code, 0, "{}", newer.stderr);
    assert_eq!(replay.code, 0, "{}", replay.stderr);
    let after = states(&fx);
    let newest = after[0].0.clone();
    assert_ne!(newest, older);
    assert_eq!(
        live_spec(&p),
        snapshot_spec(&fx, &newest),
        "the newer inventory stays live:\n{}",
        replay.stderr
    );
    assert_eq!(after[0].1, "applied", "{after:?}");
    assert_eq!(after[1], (older, "superseded".into()), "{}", replay.stderr);
    assert_has(&replay.stderr, "the live inventory was rendered later");
}

/// Finding 3: with `--take-over` the live object is another domain's (the cluster was
/// rebuilt under a new domain): its render time says nothing about this domain's
/// snapshots, so this domain's queued snapshot is delivered, never "superseded".
fn take_over_never_compares_render_times_across_domains() {
    let p = plane();
    let fx = queued_offline(&p);
    fx.run(&p.admin, &["publish", "--domain", LAB])
        .env("SOURCE_DATE_EPOCH", "1800000100")
        .run()
        .success();
    let run = fx
        .run(&p.admin, &["replay", "--domain", PROD, "--take-over"])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let live = p.live().unwrap();
    assert_eq!(
        live["metadata"]["labels"]["lok8s.dev/domain"], PROD,
        "{}",
        run.stderr
    );
    let json = fx
        .run(
            std::path::Path::new("/nonexistent"),
            &["snapshots", "list", "--domain", PROD, "-o", "json"],
        )
        .run()
        .success();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[0]["state"], "applied", "{}", run.stderr);
    assert_eq!(
        live["spec"],
        snapshot_spec(&fx, rows[0]["id"].as_str().unwrap())
    );
}

trials! {
    Plane: [
        an_older_replay_never_lands_on_a_newer_publish_to_a_new_cluster,
        take_over_never_compares_render_times_across_domains,
    ],
}
