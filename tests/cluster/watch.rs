//! `clinv replay --watch` against the real control plane: the plane stopped and started
//! under a running loop (`scripts/control-plane stop-apiserver` / `start-apiserver`),
//! flapping while snapshots are published, the loop killed at random moments, and
//! domains whose cluster hangs beside one that answers.

use crate::replay::{Fx, control_plane, live_spec, snapshot_spec, states};
use crate::support::*;
use crate::{kubeconfig_with_server, plane, refused_server};
use std::path::Path;
use std::time::{Duration, Instant};

const DOMAIN: &str = "prod.acme.example";
const LIMIT: Duration = Duration::from_secs(60);

/// The loop over the example's prod domain, JSON events, short backoffs.
fn watch(fx: &Fx, kubeconfig: &Path, extra: &[&str]) -> Background {
    let mut args = vec![
        "replay",
        "--watch",
        "--domain",
        DOMAIN,
        "--log-format",
        "json",
        "-v",
        "--backoff-base",
        "500ms",
        "--backoff-cap",
        "2s",
    ];
    args.extend_from_slice(extra);
    fx.run(kubeconfig, &args).spawn()
}

/// Publishes a new inventory (a new Kubernetes patch version) with `SOURCE_DATE_EPOCH`
/// advancing, so each is newer than the last.
fn publish_version(fx: &Fx, kubeconfig: &Path, n: u32) -> Run {
    let spec = fx
        .root()
        .join(format!("clusters/{DOMAIN}/cluster.lok8s.yaml"));
    let text = std::fs::read_to_string(&spec).unwrap();
    let text = regex::Regex::new(r"(?m)^(    version: v1\.31\.)\d+")
        .unwrap()
        .replace(&text, format!("${{1}}{}", 100 + n));
    std::fs::write(&spec, text.as_bytes()).unwrap();
    fx.run(kubeconfig, &["publish", "--domain", DOMAIN])
        .env(
            "SOURCE_DATE_EPOCH",
            &(1_800_000_000 + u64::from(n) * 60).to_string(),
        )
        .run()
}

/// The newest snapshot is applied and live; none pending (each older one was applied
/// while it was the newest, or superseded); the store verifies.
fn converged(fx: &Fx, p: &crate::Plane) {
    let all = states(fx);
    let newest = &all[0].0;
    assert_eq!(all[0].1, "applied", "{all:?}");
    assert!(
        all[1..]
            .iter()
            .all(|(_, s)| s == "superseded" || s == "applied"),
        "{all:?}"
    );
    assert_eq!(live_spec(p), snapshot_spec(fx, newest));
    fx.run(Path::new("/nonexistent"), &["snapshots", "verify"])
        .run()
        .success();
}

fn pending(fx: &Fx) -> usize {
    states(fx).iter().filter(|(_, s)| s == "pending").count()
}

fn the_loop_delivers_the_newest_once_the_plane_is_back() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    control_plane("stop-apiserver");
    for n in 0..3 {
        let run = publish_version(&fx, &p.admin, n);
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    let mut run = watch(&fx, &p.admin, &[]);
    let down = run.wait_for(LIMIT, |s| count_events(s, "unanswered") >= 2);
    control_plane("start-apiserver");
    let up = Instant::now();
    assert!(down, "{}", run.stderr());
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "delivered", DOMAIN)),
        "{}",
        run.stderr()
    );
    let took = up.elapsed();
    // The bound is the benchmark's (scripts/bench.py watch-latency); this only says
    // the loop did not wait for more than its cap.
    assert!(took < Duration::from_secs(30), "{took:?}");
    let delivered: Vec<_> = events(&run.stderr())
        .into_iter()
        .filter(|e| e["event"] == "delivered")
        .collect();
    assert_eq!(delivered.len(), 1, "{}", run.stderr());
    assert_eq!(delivered[0]["superseded"], 2);
    converged(&fx, &p);
    assert!(states(&fx)[1..].iter().all(|(_, s)| s == "superseded"));
    run.signal("TERM");
    assert_eq!(run.wait_exit(Duration::from_secs(5)), Some(Some(0)));
}

fn a_flapping_plane_ends_with_the_newest_live_and_nothing_lost() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    publish_version(&fx, &p.admin, 0).success();
    let run = watch(&fx, &p.admin, &[]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "started", "")));
    let mut published = 1;
    for flap in 0..10u32 {
        control_plane("stop-apiserver");
        for k in 0..2 {
            let r = publish_version(&fx, &p.admin, 1 + flap * 2 + k);
            assert_eq!(r.code, 0, "{}", r.stderr);
            published += 1;
        }
        control_plane("start-apiserver");
        // Sometimes the next publish reaches the plane itself, beside the loop.
        if flap % 3 == 0 {
            publish_version(&fx, &p.admin, 100 + flap).success();
            published += 1;
        }
    }
    assert!(
        poll(LIMIT, Duration::from_millis(200), || pending(&fx) == 0),
        "still pending: {:?}\n{}",
        states(&fx),
        run.stderr()
    );
    assert_eq!(states(&fx).len(), published, "no snapshot lost");
    converged(&fx, &p);
    // No snapshot was delivered twice.
    let mut delivered: Vec<String> = events(&run.stderr())
        .into_iter()
        .filter(|e| e["event"] == "delivered")
        .map(|e| e["snapshot"].as_str().unwrap().to_string())
        .collect();
    let n = delivered.len();
    delivered.sort();
    delivered.dedup();
    assert_eq!(delivered.len(), n, "{}", run.stderr());
}

/// A loop killed (SIGKILL) at random moments while snapshots keep coming, restarted each
/// time: the end state is the one a loop never killed reaches.
fn killed_at_random_moments_the_loop_converges() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = kubeconfig_with_server(&p.admin, &refused_server());
    // The kubeconfig the snapshots are recorded with: refused while publishing, the
    // plane while the loop runs.
    let aimed = tempfile::NamedTempFile::new().unwrap();
    let mut rng = Rng(0x5eed_u64 ^ u64::from(std::process::id()));
    for n in 0..50u32 {
        std::fs::copy(dead.path(), aimed.path()).unwrap();
        publish_version(&fx, aimed.path(), n).success();
        std::fs::copy(&p.admin, aimed.path()).unwrap();
        let run = watch(&fx, aimed.path(), &[]);
        std::thread::sleep(Duration::from_millis(rng.below(400)));
        run.signal("KILL");
        drop(run);
    }
    let run = watch(&fx, aimed.path(), &[]);
    assert!(
        poll(LIMIT, Duration::from_millis(200), || pending(&fx) == 0),
        "{:?}\n{}",
        states(&fx),
        run.stderr()
    );
    assert_eq!(states(&fx).len(), 50, "no snapshot lost");
    converged(&fx, &p);
}

/// One cluster that takes the connection and never answers TLS, one whose exec
/// credential plugin never answers, and one that answers: the one is delivered at once,
/// the others end within their --timeout and wait out their backoff.
fn a_hanging_cluster_or_plugin_never_delays_another_domain() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hanging = kubeconfig_with_server(
        &p.admin,
        &format!("https://127.0.0.1:{}", hole.local_addr().unwrap().port()),
    );
    let dir = tempfile::tempdir().unwrap();
    let plugin = write(dir.path(), "plugin", "#!/bin/sh\nexec sleep 3600\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    config["users"][0]["user"] = serde_json::json!({"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "interactiveMode": "Never"}});
    // A server of its own: two domains that name one API server deliver in turn, and a
    // hanging plugin would hold up the plane's other domain by design.
    let plugin_server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!(
        "https://127.0.0.1:{}",
        plugin_server.local_addr().unwrap().port()
    );
    config["clusters"][0]["cluster"]["server"] = server.into();
    let stuck_plugin = write(dir.path(), "exec.kubeconfig", config.to_string());
    let dead = kubeconfig_with_server(&p.admin, &refused_server());
    // Queued for three domains, each with its own kubeconfig.
    for (domain, kubeconfig) in [
        ("edge.acme.example", hanging.path()),
        ("lab.acme.example", stuck_plugin.as_path()),
        (DOMAIN, p.admin.as_path()),
    ] {
        let recorded = dir.path().join(format!("{domain}.kubeconfig"));
        std::fs::copy(dead.path(), &recorded).unwrap();
        let r = fx.run(&recorded, &["publish", "--domain", domain]).run();
        assert_has(&r.stderr, "recorded as pending snapshot");
        std::fs::copy(kubeconfig, &recorded).unwrap();
    }
    let args = [
        "replay",
        "--watch",
        "-A",
        "--log-format",
        "json",
        "--timeout",
        "5",
        "--probe-timeout",
        "30",
    ];
    let run = clinv(&args)
        .root(fx.root())
        .store(fx.root().join("snapshots"))
        .spawn();
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "delivered", DOMAIN)),
        "{}",
        run.stderr()
    );
    let at = |s: &str, event: &str, domain: &str| {
        events(s)
            .iter()
            .position(|e| e["event"] == event && e["domain"] == domain)
    };
    // Delivered before either stuck domain's attempt ended.
    assert!(
        run.wait_for(LIMIT, |s| at(s, "not-delivered", "edge.acme.example")
            .is_some()
            && at(s, "not-delivered", "lab.acme.example").is_some()),
        "{}",
        run.stderr()
    );
    let s = run.stderr();
    let delivered = at(&s, "delivered", DOMAIN).unwrap();
    assert!(
        delivered < at(&s, "not-delivered", "edge.acme.example").unwrap(),
        "{s}"
    );
    assert!(
        delivered < at(&s, "not-delivered", "lab.acme.example").unwrap(),
        "{s}"
    );
    let reasons: Vec<_> = events(&s)
        .into_iter()
        .filter(|e| e["event"] == "not-delivered")
        .map(|e| {
            (
                e["domain"].as_str().unwrap().to_string(),
                e["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        reasons.iter().all(|(_, r)| r == "unreachable"),
        "{reasons:?}"
    );
    assert_eq!(live_spec(&p), snapshot_spec(&fx, &states_of(&fx, DOMAIN)));
    drop((hole, plugin_server));
}

/// A real Prometheus scraping the loop's `--metrics-addr`: the domain's owed count is 1
/// while the plane is down, 0 once the loop delivered; promtool accepts the exposition;
/// `/healthz` and `/readyz` answer.
fn a_real_prometheus_sees_the_owed_count_fall_to_zero() {
    use clinv_testkit::prometheus::{Prometheus, check_metrics};
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    control_plane("stop-apiserver");
    publish_version(&fx, &p.admin, 0);
    let port = reserve_port("127.0.0.1");
    let addr = format!("127.0.0.1:{}", port.port);
    let run = watch(&fx, &p.admin, &["--metrics-addr", &addr]);
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "unanswered", DOMAIN)),
        "{}",
        run.stderr()
    );
    drop(port);
    let owed = format!("clinv_owed{{domain=\"{DOMAIN}\",channel=\"cluster\"}}");
    let prometheus = Prometheus::scraping(&addr);
    assert_eq!(prometheus.values_within(&owed, LIMIT), [1.0]);
    let (_, exposition) = http_get(&addr, "/metrics");
    check_metrics(&exposition).unwrap_or_else(|e| panic!("{e}\n{exposition}"));
    assert_has(&exposition, "clinv_delivery_failures_total{");
    assert_has(&exposition, "clinv_next_attempt_timestamp_seconds{");
    for path in ["/healthz", "/readyz"] {
        let (status, body) = http_get(&addr, path);
        assert!(status.contains(" 200 "), "{path}: {status} {body}");
    }
    control_plane("start-apiserver");
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "delivered", DOMAIN)),
        "{}",
        run.stderr()
    );
    let zero = poll(LIMIT, Duration::from_millis(250), || {
        prometheus
            .query(&owed)
            .iter()
            .map(|s| s.value)
            .collect::<Vec<_>>()
            == [0.0]
    });
    assert!(zero, "{:?}", prometheus.query(&owed));
    let delivered = format!("clinv_deliveries_total{{domain=\"{DOMAIN}\",channel=\"cluster\"}}");
    assert_eq!(prometheus.values_within(&delivered, LIMIT), [1.0]);
}

/// The status line and body of `GET path` on `addr` (HTTP/1.0: the server closes).
fn http_get(addr: &str, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

/// examples/deliver/: the loop's manifests pass the API server's validation (a server-side
/// dry run; the PodMonitor needs the Prometheus Operator's CRD, which the plane lacks), and
/// the fleet-side RBAC is enough for a delivery: a publish through a ServiceAccount token
/// bound to it creates the CRD and applies the inventory.
fn the_deliver_examples_are_valid_and_their_rbac_is_enough() {
    use crate::agent::{service_account_token, token_kubeconfig};
    let p = plane();
    p.reset();
    let dir = repo().join("examples/deliver");
    let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (code, _, err) = p.kubectl(&["apply", "-f", &file("00-namespace.yaml")]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = p.kubectl(&["apply", "--dry-run=server", "-f", &file("deliver.yaml")]);
    assert_eq!(code, 0, "{err}");
    for object in [
        "serviceaccount/clinv-deliver",
        "persistentvolumeclaim/clinv-store",
        "deployment.apps/clinv-deliver",
    ] {
        assert!(out.contains(object), "{object}: {out}");
    }
    assert_eq!(out.matches("(server dry run)").count(), 3, "{out}");
    let policy = file("networkpolicy.yaml");
    let (code, out, err) = p.kubectl(&["apply", "--dry-run=server", "-f", &policy]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("networkpolicy.networking.k8s.io/clinv-deliver-metrics"),
        "{out}"
    );
    let (code, _, err) = p.kubectl(&["apply", "-f", &file("fleet-rbac.yaml")]);
    assert_eq!(code, 0, "{err}");
    let token = service_account_token(&p, "kube-system", "clinv-publisher");
    let kubeconfig = token_kubeconfig(&p, &token);
    let fx = Fx::new();
    let run = fx
        .run(
            kubeconfig.path(),
            &["publish", "--domain", DOMAIN, "--strict"],
        )
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_lacks(&run.stderr, "pending");
    assert_eq!(states(&fx)[0].1, "applied");
    assert!(p.live().is_some());
}

/// The id of `domain`'s newest snapshot.
fn states_of(fx: &Fx, domain: &str) -> String {
    fx.snapshots()
        .into_iter()
        .find(|s| s["domain"] == domain)
        .map(|s| s["id"].as_str().unwrap().to_string())
        .unwrap()
}

/// SplitMix64: random moments that differ from run to run, printed on failure.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

trials! {
    Plane: [
        the_loop_delivers_the_newest_once_the_plane_is_back,
        a_flapping_plane_ends_with_the_newest_live_and_nothing_lost,
        killed_at_random_moments_the_loop_converges,
        a_hanging_cluster_or_plugin_never_delays_another_domain,
        the_deliver_examples_are_valid_and_their_rbac_is_enough,
    ],
    PlaneAndPrometheus: [a_real_prometheus_sees_the_owed_count_fall_to_zero],
}
