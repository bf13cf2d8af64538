//! API faults against the real control plane: transport faults through the loopback
//! [`Proxy`] (delay, stall, reset, cut), the API server or etcd stopped mid-publish, and
//! the answers the real server gives (409, 403, 401, TLS failures).
//!
//! Each test checks the fail-soft run (exit 0, exactly one `[warn]` naming the reason,
//! queued as a snapshot), the `--strict` run (README's exit code), that both end within
//! the configured budget (`--timeout` / `--probe-timeout` plus [`MARGIN`]), that the
//! snapshot stays `pending` with the reason, and that a later `clinv replay` through the
//! healthy admin kubeconfig converges (live object = render, snapshot `applied`). The
//! observed outcome of every run is printed (`--nocapture` shows it; README's "Faults"
//! table records it).

use crate::proxy::{Fault, Proxy};
use crate::replay::{Fx, live_spec, snapshot_spec, states};
use crate::support::*;
use crate::{Plane, kubeconfig_with, kubeconfig_with_server, plane};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DOMAIN: &str = "prod.acme.example";
/// Slack over a budget for starting the process, rendering and the store's fsyncs on a
/// loaded two-core machine.
const MARGIN: Duration = Duration::from_millis(1500);

/// `--timeout` and `--probe-timeout`, in seconds.
#[derive(Clone, Copy)]
struct Budget {
    timeout: f64,
    probe: f64,
}

impl Budget {
    /// The longest a run may take: the budget that applies plus [`MARGIN`].
    fn bound(&self, probe_only: bool) -> Duration {
        let secs = if probe_only { self.probe } else { self.timeout };
        Duration::from_secs_f64(secs) + MARGIN
    }
}

/// The API server's address from the admin kubeconfig.
pub(crate) fn api_addr(p: &Plane) -> SocketAddr {
    let text = std::fs::read_to_string(&p.admin).unwrap();
    let re = regex::Regex::new(r"server: https://(\S+)").unwrap();
    re.captures(&text).unwrap()[1].parse().unwrap()
}

fn publish(fx: &Fx, kubeconfig: &Path, budget: Budget, strict: bool) -> Run {
    let (t, pr) = (budget.timeout.to_string(), budget.probe.to_string());
    let mut args = vec![
        "publish",
        "--domain",
        DOMAIN,
        "--timeout",
        &t,
        "--probe-timeout",
        &pr,
    ];
    if strict {
        args.push("--strict");
    }
    fx.run(kubeconfig, &args).run()
}

/// Prints one observed outcome (for the report and README's table).
fn observed(fault: &str, run: &Run) {
    let lines = || run.stderr.lines();
    let said = lines()
        .find(|l| l.contains("could not"))
        .or_else(|| lines().find(|l| l.starts_with("[warn]") || l.starts_with("[error]")))
        .unwrap_or_else(|| lines().next().unwrap_or(""));
    eprintln!(
        "FAULT {fault}: exit {} in {:.2}s: {said}",
        run.code,
        run.elapsed.as_secs_f64()
    );
}

/// The fail-soft run: exit 0, one `[warn]` saying `what` and that the inventory was
/// queued, within `bound`.
fn fail_soft(fault: &str, run: &Run, what: &str, bound: Duration) {
    observed(fault, run);
    assert_eq!(run.code, 0, "{fault}: {}", run.stderr);
    let warns: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("[warn]"))
        .collect();
    assert_eq!(warns.len(), 1, "{fault}: {}", run.stderr);
    // The warning may go on over several lines (the server's causes).
    let warning = &run.stderr[run.stderr.find("[warn]").unwrap()..];
    assert!(
        warning.contains(what) && warning.contains("recorded as pending snapshot"),
        "{fault}: {}",
        run.stderr
    );
    assert!(
        run.elapsed < bound,
        "{fault}: {:?} > {bound:?}",
        run.elapsed
    );
}

/// The `--strict` run: README's exit code, within `bound`.
fn strict(fault: &str, run: &Run, code: i32, bound: Duration) {
    observed(&format!("{fault} --strict"), run);
    assert_eq!(run.code, code, "{fault}: {}", run.stderr);
    assert!(
        run.elapsed < bound,
        "{fault}: {:?} > {bound:?}",
        run.elapsed
    );
}

/// Every snapshot of the run is pending with `reason`.
fn pending(fx: &Fx, reason: &str) {
    let snaps = fx.snapshots();
    assert!(!snaps.is_empty());
    for s in &snaps {
        assert_eq!(s["state"], "pending", "{s}");
        assert_eq!(s["reason"], reason, "{s}");
    }
}

/// The CR apply reached the server and only its answer was lost: the snapshot is pending,
/// and the replay finds the object already there (`unchanged`) and marks it.
fn answer_lost_then_replay_marks(p: &Plane, fx: &Fx) {
    pending(fx, "unreachable");
    let replay = converges(p, fx);
    assert_has(&replay.stderr, "clusterinventory/cluster unchanged");
}

/// A replay through the healthy admin kubeconfig delivers the newest snapshot: the live
/// object is the render and the snapshot is marked applied (older ones superseded).
fn converges(p: &Plane, fx: &Fx) -> Run {
    let newest = fx.snapshots()[0]["id"].as_str().unwrap().to_string();
    let run = fx
        .run(&p.admin, &["replay", "--domain", DOMAIN])
        .run()
        .success();
    assert_has(&run.stderr, &format!("applied snapshot {newest}"));
    let after = states(fx);
    assert_eq!(after[0], (newest.clone(), "applied".into()));
    assert!(
        after[1..].iter().all(|(_, s)| s == "superseded"),
        "{after:?}"
    );
    let render = fx
        .run(&p.admin, &["render", "--domain", DOMAIN, "-o", "json"])
        .run()
        .success();
    let render: serde_json::Value = serde_json::from_str(&render.stdout).unwrap();
    let live = p.live().unwrap();
    assert_eq!(live["spec"], render["spec"]);
    assert_eq!(live["metadata"]["labels"], render["metadata"]["labels"]);
    assert_eq!(live_spec(p), snapshot_spec(fx, &newest));
    run
}

/// Runs `scripts/control-plane <cmd>`; `Err` with its stderr when it fails.
fn control_plane(cmd: &str) -> Result<(), String> {
    let out = Command::new(repo().join("scripts/control-plane"))
        .arg(cmd)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Restarts what a test stopped when dropped, also when the test panics, so the next
/// test finds a healthy plane. `start-apiserver` also waits until it is ready.
struct Restart(&'static [&'static str]);

impl Drop for Restart {
    fn drop(&mut self) {
        for cmd in self.0 {
            // etcd's port can be briefly taken by the API server's own reconnect attempts
            // (a TCP self-connect when the port lies in the ephemeral range): retry.
            let mut result = control_plane(cmd);
            for _ in 0..4 {
                if result.is_ok() || *cmd != "start-etcd" {
                    break;
                }
                std::thread::sleep(Duration::from_secs(1));
                result = control_plane(cmd);
            }
            if let Err(e) = result {
                if std::thread::panicking() {
                    eprintln!("control-plane {cmd} failed: {e}");
                } else {
                    panic!("control-plane {cmd} failed: {e}");
                }
            }
        }
    }
}

/// Runs the fail-soft and the `--strict` publish, each through a fresh proxy with
/// `fault()` and from an installed but empty cluster, and checks both.
#[allow(clippy::too_many_arguments)]
fn through_proxy(
    p: &Plane,
    fx: &Fx,
    name: &str,
    fault: impl Fn() -> Fault,
    budget: Budget,
    probe_only: bool,
    what: &str,
    code: i32,
) {
    for strict_run in [false, true] {
        p.crd_only();
        let proxy = Proxy::start(api_addr(p), fault());
        let kc = kubeconfig_with_server(&p.admin, &proxy.url());
        let run = publish(fx, kc.path(), budget, strict_run);
        eprintln!(
            "FAULT {name}: proxy saw {} connection(s), {} request(s)",
            proxy.connections(),
            proxy.requests()
        );
        let bound = budget.bound(probe_only);
        if strict_run {
            strict(name, &run, code, bound);
        } else {
            fail_soft(name, &run, what, bound);
        }
        drop(proxy);
    }
}

fn a_slow_connection_within_the_budget_publishes_and_every_request_is_seen() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let proxy = Proxy::start(
        api_addr(&p),
        Fault::Delay {
            per_chunk: Duration::from_millis(200),
            from_request: 0,
        },
    );
    let kc = kubeconfig_with_server(&p.admin, &proxy.url());
    let budget = Budget {
        timeout: 10.0,
        probe: 3.0,
    };
    let run = publish(&fx, kc.path(), budget, false);
    observed("delay 200 ms per chunk", &run);
    let run = run.success();
    assert!(!run.stderr.contains("[warn]"), "{}", run.stderr);
    assert_has(&run.stderr, "clusterinventory/cluster created");
    // The proxy's request count agrees with clinv's own (GET, CRD apply, CR apply).
    let said: usize = regex::Regex::new(r", (\d+) requests\)")
        .unwrap()
        .captures(&run.stderr)
        .unwrap()[1]
        .parse()
        .unwrap();
    assert_eq!((said, proxy.requests()), (3, 3), "{}", proxy.log());
    assert_eq!(proxy.connections(), 1, "one kept-alive connection");
    // Six or more delayed chunks (handshake and three round trips) before the answer.
    assert!(
        run.elapsed > Duration::from_millis(1200),
        "{:?}",
        run.elapsed
    );
    assert!(run.elapsed < budget.bound(false));
    assert_eq!(states(&fx)[0].1, "applied");
    let replay = fx
        .run(&p.admin, &["replay", "--domain", DOMAIN])
        .run()
        .success();
    assert_has(&replay.stderr, "nothing to replay");
    assert_eq!(live_spec(&p), snapshot_spec(&fx, &states(&fx)[0].0));
}

fn a_connection_slower_than_the_budget_times_out() {
    let p = plane();
    let fx = Fx::new();
    // Slow from the first byte: the probe budget ends it.
    through_proxy(
        &p,
        &fx,
        "delay 1.5 s per chunk, probe budget 1 s",
        || Fault::Delay {
            per_chunk: Duration::from_millis(1500),
            from_request: 0,
        },
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        true,
        "cluster unreachable: no answer within 1.0s",
        5,
    );
    // Slow from the CRD apply on: the overall deadline ends it.
    through_proxy(
        &p,
        &fx,
        "delay 3 s per chunk from the CRD apply, deadline 2 s",
        || Fault::Delay {
            per_chunk: Duration::from_secs(3),
            from_request: 2,
        },
        Budget {
            timeout: 2.0,
            probe: 1.0,
        },
        false,
        "cluster unreachable: no answer within",
        5,
    );
    pending(&fx, "unreachable");
    converges(&p, &fx);
}

/// Supersedes the black-hole listener that `publish.rs` used.
fn a_server_that_accepts_and_never_answers_is_unreachable_within_the_probe_budget() {
    let p = plane();
    let fx = Fx::new();
    through_proxy(
        &p,
        &fx,
        "stall after accept",
        || Fault::StallOnAccept,
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        true,
        // Either the connect timeout or the probe budget (both 1 s) ends it first.
        "cluster unreachable: no answer within 1.0s",
        5,
    );
    pending(&fx, "unreachable");
    converges(&p, &fx);
}

fn a_response_that_stalls_midway_ends_at_the_deadline() {
    let p = plane();
    let fx = Fx::new();
    through_proxy(
        &p,
        &fx,
        "stall mid-response (CR apply, after 64 bytes)",
        || Fault::StallResponse {
            request: 3,
            bytes: 64,
        },
        Budget {
            timeout: 3.0,
            probe: 1.0,
        },
        false,
        "cluster unreachable: no answer within",
        5,
    );
    answer_lost_then_replay_marks(&p, &fx);
}

fn a_connection_reset_on_connect_is_unreachable() {
    let p = plane();
    let fx = Fx::new();
    through_proxy(
        &p,
        &fx,
        "reset on connect",
        || Fault::ResetOnConnect,
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        true,
        "cluster unreachable",
        5,
    );
    pending(&fx, "unreachable");
    converges(&p, &fx);
}

fn a_connection_reset_after_the_probe_is_unreachable() {
    let p = plane();
    let fx = Fx::new();
    through_proxy(
        &p,
        &fx,
        "reset at the CRD apply (after the probe)",
        || Fault::ResetAtRequest(2),
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        false,
        "cluster unreachable",
        5,
    );
    pending(&fx, "unreachable");
    converges(&p, &fx);
}

/// The CR apply reached the server; only its answer was lost. The replay recognises the
/// live object as the snapshot and only marks it.
fn a_response_cut_mid_way_through_the_cr_apply_is_unreachable() {
    let p = plane();
    let fx = Fx::new();
    through_proxy(
        &p,
        &fx,
        "cut mid-response (CR apply, after 64 bytes)",
        || Fault::CutResponse {
            request: 3,
            bytes: 64,
        },
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        false,
        "cluster unreachable",
        5,
    );
    answer_lost_then_replay_marks(&p, &fx);
}

fn the_api_server_killed_between_the_crd_and_the_cr_apply() {
    let p = plane();
    let fx = Fx::new();
    let budget = Budget {
        timeout: 10.0,
        probe: 3.0,
    };
    for strict_run in [false, true] {
        p.crd_only();
        let restart = Restart(&["start-apiserver"]);
        let (done, stopped) = std::sync::mpsc::channel();
        let hook = move || {
            let _ = done.send(control_plane("stop-apiserver"));
        };
        let proxy = Proxy::start(
            api_addr(&p),
            Fault::Hold {
                request: 3,
                hook: std::sync::Mutex::new(Some(Box::new(hook))),
            },
        );
        let kc = kubeconfig_with_server(&p.admin, &proxy.url());
        let run = publish(&fx, kc.path(), budget, strict_run);
        // clinv may end before the script does: the server closes its idle connections
        // as soon as it starts shutting down. Wait for the stop before restarting.
        match stopped.recv_timeout(Duration::from_secs(30)) {
            Ok(result) => result.unwrap(),
            Err(e) => panic!("the hook did not run ({e}): {}", proxy.log()),
        }
        let name = "apiserver stopped while the CR apply is held";
        if strict_run {
            strict(name, &run, 5, budget.bound(false));
        } else {
            fail_soft(name, &run, "cluster unreachable", budget.bound(false));
        }
        drop(proxy);
        drop(restart);
    }
    pending(&fx, "unreachable");
    converges(&p, &fx);
}

/// With etcd gone the API server accepts the request and holds it. clinv sends
/// `?timeout=` (¾ of its budget), so the server gives up first: it answers 504, or — when
/// its handler had begun to answer as the timeout fired — closes the connection (the
/// apiserver's timeout filter; both seen). Either is a server error (9) within the
/// budget, told apart from an unreachable server. (Without the parameter the server held
/// requests for its own 60 s `--request-timeout`.)
fn etcd_stopped_under_a_running_api_server() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    {
        // A fresh API server is ready at once; the running one reconnects to etcd only
        // after its backoff (over a minute once etcd was gone for a while).
        let _restart = Restart(&["start-etcd", "stop-apiserver", "start-apiserver"]);
        control_plane("stop-etcd").unwrap();
        let probe = Budget {
            timeout: 6.0,
            probe: 3.0,
        };
        let run = publish(&fx, &p.admin, probe, false);
        fail_soft(
            "etcd stopped, probe budget 3 s",
            &run,
            "the API server failed",
            probe.bound(true),
        );
        let run = publish(&fx, &p.admin, probe, true);
        strict("etcd stopped, probe budget 3 s", &run, 9, probe.bound(true));
    }
    pending(&fx, "server-error");
    converges(&p, &fx);
}

fn a_field_owned_by_another_manager_is_a_conflict_until_forced() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let budget = Budget {
        timeout: 5.0,
        probe: 1.0,
    };
    publish(&fx, &p.admin, budget, false).success();
    let theirs = serde_json::json!({
        "apiVersion": "lok8s.dev/v1alpha1",
        "kind": "ClusterInventory",
        "metadata": {"name": "cluster"},
        "spec": {"lok8sVersion": "9.9.9"}
    });
    p.apply("other", &["--force-conflicts"], &theirs.to_string());
    let fresh = Fx::new();
    let run = publish(&fresh, &p.admin, budget, false);
    fail_soft(
        "409 field conflict",
        &run,
        "a field is owned by another field manager (--force-conflicts takes it over): 409",
        budget.bound(false),
    );
    assert!(run.stderr.contains("\"other\""), "{}", run.stderr);
    strict(
        "409 field conflict",
        &publish(&fresh, &p.admin, budget, true),
        8,
        budget.bound(false),
    );
    pending(&fresh, "conflict");
    // A replay meets the same conflict and keeps the snapshots queued.
    let again = fresh
        .run(&p.admin, &["replay", "--domain", DOMAIN])
        .run()
        .success();
    assert!(again.stderr.contains("stay pending"), "{}", again.stderr);
    pending(&fresh, "conflict");
    let run = fresh
        .run(
            &p.admin,
            &["replay", "--domain", DOMAIN, "--force-conflicts"],
        )
        .run()
        .success();
    assert!(run.stderr.contains("applied snapshot"), "{}", run.stderr);
    assert_eq!(p.live().unwrap()["spec"]["lok8sVersion"], "0.7.9");
    // Now lok8s owns the field again: the plain replay path converges too.
    converges_after_forced(&p, &fresh);
}

/// After a forced replay, nothing is pending and the live object is the render.
fn converges_after_forced(p: &Plane, fx: &Fx) {
    assert!(states(fx).iter().all(|(_, s)| s != "pending"));
    let newest = states(fx)[0].clone();
    assert_eq!(newest.1, "applied");
    assert_eq!(live_spec(p), snapshot_spec(fx, &newest.0));
}

/// Supersedes `no_rbac_identity_warns_and_exits_zero_within_the_budget` in `publish.rs`.
fn an_identity_without_rbac_is_forbidden() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let budget = Budget {
        timeout: 5.0,
        probe: 2.0,
    };
    let run = publish(&fx, &p.nobody, budget, false);
    fail_soft(
        "403 no RBAC",
        &run,
        "forbidden: the identity lacks RBAC for the ClusterInventory: 403",
        budget.bound(true),
    );
    assert!(run.stderr.contains("User \"nobody\""), "{}", run.stderr);
    strict(
        "403 no RBAC",
        &publish(&fx, &p.nobody, budget, true),
        7,
        budget.bound(true),
    );
    pending(&fx, "forbidden");
    converges(&p, &fx);
}

/// A client certificate and key signed by `ca` with the given validity, as a kubeconfig
/// copy of the admin's (the same subject: `O=system:masters`).
fn kubeconfig_with_client_cert(
    p: &Plane,
    dir: &Path,
    ca: (&Path, &Path),
    start: &str,
    end: &str,
) -> tempfile::NamedTempFile {
    let openssl = |args: &[&str]| clinv_testkit::https::openssl(dir, args);
    clinv_testkit::https::ec_key(dir, "client.key");
    openssl(&[
        "req",
        "-new",
        "-key",
        "client.key",
        "-subj",
        "/O=system:masters/CN=clinv-fault",
        "-out",
        "client.csr",
    ]);
    std::fs::write(dir.join("index.txt"), "").unwrap();
    std::fs::write(dir.join("serial"), "01\n").unwrap();
    std::fs::write(
        dir.join("ca.cnf"),
        "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\n\
         default_md = sha256\npolicy = p\nx509_extensions = ext\n\
         [p]\ncommonName = supplied\norganizationName = optional\n\
         [ext]\nbasicConstraints = critical,CA:FALSE\n\
         keyUsage = critical,digitalSignature,keyEncipherment\nextendedKeyUsage = clientAuth\n",
    )
    .unwrap();
    openssl(&[
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-cert",
        ca.0.to_str().unwrap(),
        "-keyfile",
        ca.1.to_str().unwrap(),
        "-in",
        "client.csr",
        "-out",
        "client.crt",
        "-startdate",
        start,
        "-enddate",
        end,
        "-notext",
    ]);
    let b64 = |name: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(dir.join(name)).unwrap())
    };
    let with_cert = kubeconfig_with(&p.admin, "client-certificate-data", &b64("client.crt"));
    kubeconfig_with(with_cert.path(), "client-key-data", &b64("client.key"))
}

/// A self-signed CA in `dir`: (certificate, key).
fn other_ca(dir: &Path) -> (PathBuf, PathBuf) {
    succeeded(
        Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=some-other-ca",
                "-keyout",
                "other-ca.key",
                "-out",
                "other-ca.crt",
            ])
            .current_dir(dir),
    );
    (dir.join("other-ca.crt"), dir.join("other-ca.key"))
}

/// The plane's CA (certificate, key).
fn plane_ca(p: &Plane) -> (PathBuf, PathBuf) {
    let pki = p.admin.with_file_name("pki");
    (pki.join("ca.crt"), pki.join("ca.key"))
}

fn rejected_credentials(p: &Plane, name: &str, kubeconfig: &Path) {
    p.crd_only();
    let fx = Fx::new();
    let budget = Budget {
        timeout: 5.0,
        probe: 2.0,
    };
    let run = publish(&fx, kubeconfig, budget, false);
    fail_soft(
        name,
        &run,
        "the cluster rejected the credentials: 401 Unauthorized",
        budget.bound(true),
    );
    strict(
        name,
        &publish(&fx, kubeconfig, budget, true),
        6,
        budget.bound(true),
    );
    pending(&fx, "unauthorized");
    converges(p, &fx);
}

fn an_expired_client_certificate_is_unauthorized() {
    let p = plane();
    let dir = tempfile::tempdir().unwrap();
    let (crt, key) = plane_ca(&p);
    let kc = kubeconfig_with_client_cert(
        &p,
        dir.path(),
        (&crt, &key),
        "20200101000000Z",
        "20200201000000Z",
    );
    rejected_credentials(&p, "expired client certificate", kc.path());
}

fn a_client_certificate_from_another_ca_is_unauthorized() {
    let p = plane();
    let dir = tempfile::tempdir().unwrap();
    let (crt, key) = other_ca(dir.path());
    let kc = kubeconfig_with_client_cert(
        &p,
        dir.path(),
        (&crt, &key),
        "20200101000000Z",
        "20991231000000Z",
    );
    rejected_credentials(&p, "client certificate from another CA", kc.path());
}

/// A server whose certificate does not verify answered, but is not the server the
/// kubeconfig trusts: its own reason (tls-identity, --strict 15), never "unreachable".
fn a_server_certificate_that_does_not_verify_is_its_own_reason() {
    let p = plane();
    let dir = tempfile::tempdir().unwrap();
    let (crt, _) = other_ca(dir.path());
    let ca_data = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(crt).unwrap())
    };
    // The serving certificate has SANs 127.0.0.1 and localhost, so a name mismatch
    // needs an explicit tls-server-name that is not among them.
    let text = std::fs::read_to_string(&p.admin).unwrap().replace(
        "    server: ",
        "    tls-server-name: not-the-apiserver.example\n    server: ",
    );
    let wrong_name = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(wrong_name.path(), text).unwrap();
    let cases = [
        (
            "server certificate from an unknown CA",
            kubeconfig_with(&p.admin, "certificate-authority-data", &ca_data),
            "invalid peer certificate: UnknownIssuer",
        ),
        (
            "server certificate for another name",
            wrong_name,
            "invalid peer certificate: certificate not valid for name \"not-the-apiserver.example\"",
        ),
    ];
    for (name, kc, what) in cases {
        p.crd_only();
        let fx = Fx::new();
        let budget = Budget {
            timeout: 5.0,
            probe: 2.0,
        };
        let run = publish(&fx, kc.path(), budget, false);
        fail_soft(
            name,
            &run,
            "the server's certificate does not verify",
            budget.bound(true),
        );
        assert!(run.stderr.contains(what), "{name}: {}", run.stderr);
        assert!(
            !run.stderr.contains("unreachable"),
            "{name}: {}",
            run.stderr
        );
        strict(
            name,
            &publish(&fx, kc.path(), budget, true),
            15,
            budget.bound(true),
        );
        pending(&fx, "tls-identity");
        converges(&p, &fx);
    }
}

/// A replay is bounded and fail-soft the same way: its CR apply's answer is lost, the
/// snapshot stays queued, and the next replay finds the object live and only marks it.
fn a_replay_whose_answer_is_cut_stays_queued_and_the_next_converges() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = kubeconfig_with_server(&p.admin, &crate::refused_server());
    publish(
        &fx,
        dead.path(),
        Budget {
            timeout: 5.0,
            probe: 1.0,
        },
        false,
    )
    .success();
    let id = states(&fx)[0].0.clone();
    for strict_run in [false, true] {
        p.crd_only();
        let proxy = Proxy::start(
            api_addr(&p),
            Fault::CutResponse {
                request: 3,
                bytes: 64,
            },
        );
        let kc = kubeconfig_with_server(&p.admin, &proxy.url());
        let mut args = vec!["replay", "--domain", DOMAIN, "--timeout", "5"];
        if strict_run {
            args.push("--strict");
        }
        let run = fx.run(kc.path(), &args).run();
        let name = "replay: CR apply's response cut after 64 bytes";
        observed(name, &run);
        assert_eq!(run.code, if strict_run { 5 } else { 0 }, "{}", run.stderr);
        assert_has(
            &run.stderr,
            "could not replay the ClusterInventory for prod.acme.example: cluster unreachable",
        );
        assert_has(&run.stderr, "1 snapshot(s) stay pending");
        assert!(run.elapsed < Duration::from_secs(5) + MARGIN);
        assert_eq!(states(&fx), [(id.clone(), "pending".to_string())]);
    }
    let replay = converges(&p, &fx);
    assert_has(&replay.stderr, "clusterinventory/cluster unchanged");
}

trials! {
    Plane: [
        a_slow_connection_within_the_budget_publishes_and_every_request_is_seen,
        a_connection_slower_than_the_budget_times_out,
        a_server_that_accepts_and_never_answers_is_unreachable_within_the_probe_budget,
        a_response_that_stalls_midway_ends_at_the_deadline,
        a_connection_reset_on_connect_is_unreachable,
        a_connection_reset_after_the_probe_is_unreachable,
        a_response_cut_mid_way_through_the_cr_apply_is_unreachable,
        the_api_server_killed_between_the_crd_and_the_cr_apply,
        etcd_stopped_under_a_running_api_server,
        a_field_owned_by_another_manager_is_a_conflict_until_forced,
        an_identity_without_rbac_is_forbidden,
        an_expired_client_certificate_is_unauthorized,
        a_client_certificate_from_another_ca_is_unauthorized,
        a_server_certificate_that_does_not_verify_is_its_own_reason,
        a_replay_whose_answer_is_cut_stays_queued_and_the_next_converges,
    ],
}
