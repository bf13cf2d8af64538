//! Offline-first against the real control plane: queue while the API server is down,
//! replay when it is back, the stale guard, and replays killed at random points.

use crate::support::*;
use crate::{Plane, kubeconfig_with_server, plane, refused_server};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) struct Fx {
    dir: tempfile::TempDir,
}

impl Fx {
    pub(crate) fn new() -> Fx {
        Fx {
            dir: copy_tree(&example()),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn run(&self, kubeconfig: &Path, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let kc = kubeconfig.to_str().unwrap().to_string();
        let mut all = vec!["--root", &root];
        all.extend(aimed(args, &kc));
        all.extend_from_slice(args);
        clinv(&all).env(
            "CLINV_SNAPSHOTS",
            self.root().join("snapshots").to_str().unwrap(),
        )
    }

    pub(crate) fn snapshots(&self) -> Vec<serde_json::Value> {
        let run = self
            .run(
                Path::new("/nonexistent"),
                &["snapshots", "list", "-o", "json"],
            )
            .run()
            .success();
        serde_json::from_str(&run.stdout).unwrap()
    }

    /// Edits the prod spec so the next publish renders a different inventory.
    pub(crate) fn bump(&self, addon: &str) {
        let spec = self
            .root()
            .join("clusters/prod.acme.example/cluster.lok8s.yaml");
        let text = std::fs::read_to_string(&spec).unwrap().replace(
            "    - ./targets/site-glue\n",
            &format!("    - ./targets/site-glue\n    - {addon}\n"),
        );
        std::fs::write(spec, text).unwrap();
    }
}

fn dead_kubeconfig(p: &Plane) -> tempfile::NamedTempFile {
    kubeconfig_with_server(&p.admin, &refused_server())
}

pub(crate) fn states(fx: &Fx) -> Vec<(String, String)> {
    fx.snapshots()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `scripts/control-plane cmd` (stop or start a part of the plane: fault injection).
pub(crate) fn control_plane(cmd: &str) {
    succeeded(std::process::Command::new(repo().join("scripts/control-plane")).arg(cmd));
}

pub(crate) fn live_spec(p: &Plane) -> serde_json::Value {
    p.live().unwrap()["spec"].clone()
}

pub(crate) fn snapshot_spec(fx: &Fx, id: &str) -> serde_json::Value {
    let run = fx
        .run(
            Path::new("/nonexistent"),
            &["snapshots", "show", id, "-o", "json"],
        )
        .run()
        .success();
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    v["inventory"]["spec"].clone()
}

fn queued_while_down_then_one_replay_applies_only_the_newest() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    control_plane("stop-apiserver");
    let mut queued = Vec::new();
    for (i, addon) in ["", "metrics-server", "rook-ceph"].iter().enumerate() {
        if !addon.is_empty() {
            fx.bump(addon);
        }
        let run = fx
            .run(&p.admin, &["publish", "--domain", "prod.acme.example"])
            .env("SOURCE_DATE_EPOCH", &(1_800_000_000 + i).to_string())
            .run();
        queued.push(run);
    }
    control_plane("start-apiserver");
    for run in &queued {
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_has(&run.stderr, "cluster unreachable");
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    let before = states(&fx);
    assert_eq!(before.len(), 3);
    assert!(before.iter().all(|(_, s)| s == "pending"));
    let run = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example", "-v"])
        .run()
        .success();
    let requests = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("[debug] api: "))
        .count();
    assert!(requests <= 3, "{requests} requests: {}", run.stderr);
    let newest = &before[0].0;
    assert_has(&run.stderr, &format!("applied snapshot {newest}"));
    assert_has(&run.stderr, "2 older pending snapshot(s) superseded");
    let after = states(&fx);
    assert_eq!(after[0], (newest.clone(), "applied".into()));
    assert!(after[1..].iter().all(|(_, s)| s == "superseded"));
    assert_eq!(live_spec(&p), snapshot_spec(&fx, newest));
    // Nothing left to do.
    let again = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example"])
        .run()
        .success();
    assert_has(&again.stderr, "nothing to replay");
}

fn the_stale_guard_never_overwrites_a_newer_live_inventory() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    fx.run(dead.path(), &["publish", "--domain", "prod.acme.example"])
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .run()
        .success();
    // Another machine (another store) delivers a newer inventory first.
    fx.bump("metrics-server");
    let other = tempfile::tempdir().unwrap();
    fx.run(&p.admin, &["publish", "--domain", "prod.acme.example"])
        .env("SOURCE_DATE_EPOCH", "1800000100")
        .store(other.path())
        .run()
        .success();
    let live_before = p.live().unwrap();
    let run = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example"])
        .run()
        .success();
    assert!(run.stderr.contains("not applied: the live inventory was rendered later (2027-01-15T08:01:40Z); marked superseded"), "{}", run.stderr);
    assert_eq!(states(&fx)[0].1, "superseded");
    assert_eq!(
        p.live().unwrap()["metadata"]["resourceVersion"],
        live_before["metadata"]["resourceVersion"]
    );
}

/// A snapshot recorded after the applied one but rendered "earlier" (a fixed
/// SOURCE_DATE_EPOCH in CI, another machine's clock): not silently superseded. Replay
/// warns with both times and the override (-q does not hide it), keeps it queued with
/// the reason, exits 13 under --strict, and --allow-older delivers it.
fn clock_skew_is_said_and_allow_older_delivers() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    fx.run(&p.admin, &["publish", "--domain", "prod.acme.example"])
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .run()
        .success();
    fx.bump("metrics-server");
    fx.run(dead.path(), &["publish", "--domain", "prod.acme.example"])
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .run()
        .success();
    let skewed = states(&fx)[0].0.clone();
    let live_before = p.live().unwrap();
    let run = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example", "-q"])
        .run()
        .success();
    assert!(
        run.stderr.starts_with(&format!(
            "[warn] prod.acme.example: clock skew: the live inventory looks newer (renderedAt 2027-01-15T08:00:00Z) but the store recorded snapshot {skewed} later (recorded "
        )) && run.stderr.contains("renderedAt 2023-11-14T22:13:20Z")
            && run.stderr.contains("clinv replay --allow-older delivers it"),
        "{}",
        run.stderr
    );
    assert_eq!(states(&fx)[0], (skewed.clone(), "pending".into()));
    assert_eq!(fx.snapshots()[0]["reason"], "clock-skew");
    assert_eq!(
        p.live().unwrap()["metadata"]["resourceVersion"],
        live_before["metadata"]["resourceVersion"]
    );
    let strict = fx
        .run(
            &p.admin,
            &["replay", "--domain", "prod.acme.example", "--strict"],
        )
        .run();
    assert_eq!(strict.code, 13, "{}", strict.stderr);
    let run = fx
        .run(
            &p.admin,
            &["replay", "--domain", "prod.acme.example", "--allow-older"],
        )
        .run()
        .success();
    assert_has(&run.stderr, &format!("applied snapshot {skewed}"));
    assert_eq!(states(&fx)[0], (skewed.clone(), "applied".into()));
    assert_eq!(live_spec(&p), snapshot_spec(&fx, &skewed));
}

fn a_replay_that_crashed_after_applying_only_marks_on_the_next_run() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    fx.bump("rook-ceph");
    fx.run(dead.path(), &["publish", "--domain", "prod.acme.example"])
        .env("SOURCE_DATE_EPOCH", "1900000000")
        .run()
        .success();
    let id = states(&fx)[0].0.clone();
    // The apply happened, the process died before recording it.
    let show = fx
        .run(dead.path(), &["snapshots", "show", &id, "-o", "json"])
        .run()
        .success();
    let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    p.apply("lok8s", &[], &v["inventory"].to_string());
    let run = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example", "-v"])
        .run()
        .success();
    assert_has(&run.stderr, "clusterinventory/cluster unchanged");
    assert!(
        !run.stderr.contains("PATCH /apis/lok8s.dev"),
        "no second apply: {}",
        run.stderr
    );
    assert_eq!(states(&fx)[0], (id, "applied".into()));
}

fn replays_killed_at_random_points_converge() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    let bin = env!("CARGO_BIN_EXE_clinv");
    let store: PathBuf = fx.root().join("snapshots");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = seed;
    let mut next = |bound: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound
    };
    let spawn = |kc: &Path, args: &[&str], epoch: u64| {
        std::process::Command::new(bin)
            .args([
                "--root",
                fx.root().to_str().unwrap(),
                "--kubeconfig",
                kc.to_str().unwrap(),
            ])
            .args(args)
            .env_clear()
            .env("SOURCE_DATE_EPOCH", epoch.to_string())
            .env("CLINV_SNAPSHOTS", &store)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // Measure one replay to spread the kill points over its whole life.
    spawn(
        dead.path(),
        &["publish", "--domain", "prod.acme.example"],
        2_000_000_000,
    )
    .wait()
    .unwrap();
    let start = std::time::Instant::now();
    spawn(&p.admin, &["replay", "--domain", "prod.acme.example"], 0)
        .wait()
        .unwrap();
    let span = (start.elapsed().as_micros() as u64 * 3 / 2).max(5_000);
    let (mut killed, mut finished) = (0, 0);
    for i in 0..60u64 {
        let epoch = 2_000_000_100 + i * 10;
        // Alternate contents so every replay has something real to apply.
        fx.bump(if i % 2 == 0 {
            "metrics-server"
        } else {
            "rook-ceph"
        });
        spawn(
            dead.path(),
            &["publish", "--domain", "prod.acme.example"],
            epoch,
        )
        .wait()
        .unwrap();
        let mut child = spawn(
            &p.admin,
            &["replay", "--domain", "prod.acme.example"],
            epoch,
        );
        std::thread::sleep(Duration::from_micros(next(span)));
        let _ = child.kill();
        if child.wait().unwrap().success() {
            finished += 1
        } else {
            killed += 1
        }
    }
    eprintln!(
        "replay crash test (seed {seed}): {killed} killed, {finished} finished, span {span} µs"
    );
    assert!(
        killed > 5,
        "kill points must hit running replays (seed {seed})"
    );
    fx.run(&p.admin, &["snapshots", "verify"]).run().success();
    fx.run(&p.admin, &["replay", "--domain", "prod.acme.example"])
        .run()
        .success();
    let again = fx
        .run(&p.admin, &["replay", "--domain", "prod.acme.example"])
        .run()
        .success();
    assert_has(&again.stderr, "nothing to replay");
    let snaps = fx.snapshots();
    assert!(
        snaps.iter().all(|s| s["state"] != "pending"),
        "everything delivered or superseded"
    );
    let newest = snaps[0]["id"].as_str().unwrap();
    assert_eq!(snaps[0]["state"], "applied");
    assert_eq!(live_spec(&p), snapshot_spec(&fx, newest));
    fx.run(&p.admin, &["snapshots", "verify"]).run().success();
}

/// clinv in `fx`'s project and store without `--kubeconfig` (the per-domain rules).
fn routed(fx: &Fx, kubeconfig_env: &Path, args: &[&str]) -> Clinv {
    let root = fx.root().to_str().unwrap().to_string();
    let mut all = vec!["--root", root.as_str()];
    all.extend_from_slice(args);
    clinv(&all)
        .env(
            "CLINV_SNAPSHOTS",
            fx.root().join("snapshots").to_str().unwrap(),
        )
        .env("KUBECONFIG", kubeconfig_env.to_str().unwrap())
}

/// (id, state, reason) of the snapshots of `domain`, newest first.
fn domain_states(fx: &Fx, domain: &str) -> Vec<(String, String, String)> {
    let run = fx
        .run(
            Path::new("/nonexistent"),
            &["snapshots", "list", "--domain", domain, "-o", "json"],
        )
        .run()
        .success();
    let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    v.iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or("-").to_string();
            (text("id"), text("state"), text("reason"))
        })
        .collect()
}

const LAB: &str = "lab.acme.example";
const PROD: &str = "prod.acme.example";

/// lab and prod queued while their clusters were unreachable; prod rendered earlier
/// (so a stale guard across domains would call it superseded).
fn queue_lab_and_prod(fx: &Fx, dead: &Path) {
    for (domain, epoch) in [(PROD, "1800000000"), (LAB, "1800000500")] {
        let run = fx
            .run(dead, &["publish", "--domain", domain])
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success();
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
}

fn replay_all_never_writes_one_domain_over_another() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    queue_lab_and_prod(&fx, dead.path());

    // One explicit kubeconfig (or context) for several domains: refused, nothing sent.
    let run = fx.run(&p.admin, &["replay", "--all"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "--kubeconfig/--context name one cluster, but --all replays 2 domains",
    );
    let run = routed(&fx, &p.admin, &["replay", "--all", "--context", "x"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(p.live().is_none(), "nothing applied");

    // Both were queued through one kubeconfig, which now reaches one cluster: lab is
    // delivered, prod is refused with its own reason and exit code, the live object is
    // left as lab's.
    std::fs::copy(&p.admin, dead.path()).unwrap();
    let run = routed(
        &fx,
        Path::new("/nonexistent"),
        &["replay", "--all", "--strict"],
    )
    .run();
    assert_eq!(run.code, 12, "{}", run.stderr);
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["labels"]["lok8s.dev/domain"], LAB);
    let lab = domain_states(&fx, LAB);
    assert_eq!((lab[0].1.as_str()), "applied");
    assert_eq!(live["spec"], snapshot_spec(&fx, &lab[0].0));
    let prod = domain_states(&fx, PROD);
    assert_eq!(
        (prod[0].1.as_str(), prod[0].2.as_str()),
        ("pending", "domain-mismatch"),
        "queued with the reason, never superseded by another domain's inventory"
    );
    assert_has(
        &run.stderr,
        &format!(
            "[error] inventory: could not replay the ClusterInventory for {PROD}: the kubeconfig reaches another domain's cluster"
        ),
    );
    assert_has(
        &run.stderr,
        &format!(
            "the live ClusterInventory belongs to domain {LAB} (lok8s.dev/domain label), not {PROD}"
        ),
    );
    let table = &run.stdout;
    assert!(table.starts_with("DOMAIN"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(PROD) && l.contains("pending (domain-mismatch)")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(LAB) && l.contains("applied")),
        "{table}"
    );

    // Again, without --strict: another domain's inventory is never fail-soft (issue 39:
    // a mistake in the fleet's kubeconfigs, not a cluster that answers later) — the
    // error and exit 12 all the same, the live object untouched.
    let run = routed(&fx, Path::new("/nonexistent"), &["replay", "--all"]).run();
    assert_eq!(run.code, 12, "{}", run.stderr);
    assert_has(&run.stderr, "[error] inventory: could not replay");
    assert_eq!(
        p.live().unwrap()["metadata"]["resourceVersion"],
        live["metadata"]["resourceVersion"]
    );
    assert_eq!(domain_states(&fx, PROD)[0].1, "pending");
}

fn replay_all_routes_each_domain_to_its_own_kubeconfig() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let dead = dead_kubeconfig(&p);
    // Queued through lok8s's kubeconfigs (both down then); KUBECONFIG (the plane) is
    // only the fallback and must not carry either there.
    let own = fx.root().join(".kubeconfig");
    std::fs::create_dir_all(&own).unwrap();
    for (domain, file) in [(PROD, "prod-fsn1.yaml"), (LAB, "lab.yaml")] {
        std::fs::copy(dead.path(), own.join(file)).unwrap();
        let run = routed(&fx, &p.admin, &["publish", "--domain", domain])
            .run()
            .success();
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    // Now lab's reaches the plane, prod's a server that is down.
    std::fs::copy(&p.admin, own.join("lab.yaml")).unwrap();
    let prod_server = refused_server();
    let prod_kc = kubeconfig_with_server(&p.admin, &prod_server);
    std::fs::copy(prod_kc.path(), own.join("prod-fsn1.yaml")).unwrap();

    let run = routed(&fx, &p.admin, &["replay", "--all", "--strict"]).run();
    assert_eq!(run.code, 5, "prod unreachable: {}", run.stderr);
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["labels"]["lok8s.dev/domain"], LAB);
    assert_eq!(domain_states(&fx, LAB)[0].1, "applied");
    let prod = domain_states(&fx, PROD);
    assert_eq!(
        (prod[0].1.as_str(), prod[0].2.as_str()),
        ("pending", "unreachable")
    );
    assert!(
        run.stderr.contains(&format!("({prod_server})")),
        "prod went to its own server: {}",
        run.stderr
    );

    // prod's cluster comes back (its kubeconfig now reaches a cluster holding prod's
    // own earlier inventory): delivered there.
    let (code, _, err) = p.kubectl(&["delete", "clusterinventory", "cluster"]);
    assert_eq!(code, 0, "{err}");
    std::fs::copy(&p.admin, own.join("prod-fsn1.yaml")).unwrap();
    std::fs::copy(dead.path(), own.join("lab.yaml")).unwrap();
    let run = routed(&fx, &p.admin, &["replay", "--all"]).run().success();
    assert_eq!(
        p.live().unwrap()["metadata"]["labels"]["lok8s.dev/domain"],
        PROD,
        "{}",
        run.stderr
    );
    assert_eq!(domain_states(&fx, PROD)[0].1, "applied");
}

/// The issue's case: a snapshot queued by `publish --kubeconfig K` while K's server was
/// down is delivered through K once it is back — not through `~/.kube/config` or
/// `KUBECONFIG`, which here name nothing.
fn replay_delivers_through_the_kubeconfig_the_publish_used() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let k = dead_kubeconfig(&p);
    queue_lab_and_prod(&fx, k.path());
    std::fs::copy(&p.admin, k.path()).unwrap();
    let run = routed(&fx, Path::new("/nonexistent"), &["replay", "--domain", LAB])
        .run()
        .success();
    // K now names the plane's address (a server that moved): said, and delivered there.
    assert_has(&run.stderr, "was published for https://127.0.0.1:");
    assert_has(&run.stderr, "; delivering it to https://");
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["labels"]["lok8s.dev/domain"], LAB);
    let lab = domain_states(&fx, LAB);
    assert_eq!(lab[0].1, "applied");
    assert_eq!(live["spec"], snapshot_spec(&fx, &lab[0].0));
}

/// The issue's fleet of six domains, each through its own kubeconfig: the deploy domain
/// named; prod and lab with per-cluster pins, prod in sync with the cluster, lab's and
/// dev's kubeconfigs reaching prod's cluster (another domain's inventory: its own verdict,
/// never a drift — issue 39); stage with a snapshot queued (its cluster refuses); edge
/// black-holed (not read, within the one --timeout). `drift -A`, `status -A`, `fleet
/// --from store|live` and `log -A` over it. Another domain's inventory outranks a cluster
/// not read (exit 12), which outranks a drift (16).
fn every_view_of_a_fleet_of_six_domains() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let own = fx.root().join(".kubeconfig");
    std::fs::create_dir_all(&own).unwrap();
    for file in ["prod-fsn1.yaml", "lab.yaml"] {
        std::fs::copy(&p.admin, own.join(file)).unwrap();
    }
    // A server that accepts and never answers.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hole.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = hole.incoming().flatten().collect();
        drop(held);
    });
    let edge = kubeconfig_with_server(&p.admin, &format!("https://127.0.0.1:{port}"));
    std::fs::copy(edge.path(), own.join("edge.yaml")).unwrap();
    // Two more cluster domains make six: dev reads the plane, stage's cluster refuses.
    for name in [DEV_NAME, STAGE_NAME] {
        let dir = fx
            .root()
            .join("clusters")
            .join(format!("{name}.acme.example"));
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = format!(
            "kind: Lo\nmetadata:\n  name: {name}\nspec:\n  kubernetes:\n    version: v1.32.3\n"
        );
        std::fs::write(dir.join("cluster.lok8s.yaml"), cluster).unwrap();
    }
    std::fs::copy(&p.admin, own.join("dev.yaml")).unwrap();
    let refusing = kubeconfig_with_server(&p.admin, &refused_server());
    std::fs::copy(refusing.path(), own.join("stage.yaml")).unwrap();
    routed(&fx, &p.admin, &["publish", "--domain", PROD])
        .run()
        .success();
    let nothing = Path::new("/nonexistent/kubeconfig");
    let queued = routed(&fx, nothing, &["publish", "--domain", STAGE])
        .run()
        .success();
    assert_has(&queued.stderr, "recorded as pending snapshot");
    let args = ["drift", "-A", "--timeout", "10", "--probe-timeout", "2"];
    let run = routed(&fx, nothing, &args).run();
    assert_eq!(run.code, 12, "{}{}", run.stdout, run.stderr);
    assert!(run.elapsed < Duration::from_secs(12), "{:?}", run.elapsed);
    let verdicts: Vec<(String, String)> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split("  ").filter(|c| !c.is_empty()).collect();
            (cols[0].trim().to_string(), cols[1].trim().to_string())
        })
        .collect();
    let want = [
        ("apps.acme.example", "deploy domain"),
        (DEV, "other domain"),
        ("edge.acme.example", "not read"),
        ("lab.acme.example", "other domain"),
        ("prod.acme.example", "in sync"),
        (STAGE, "not read"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(verdicts, want, "{}", run.stdout);
    // status -A: prod live (applied just now), edge not read, within the one --timeout.
    let status = routed(
        &fx,
        nothing,
        &["status", "-A", "--timeout", "10", "--probe-timeout", "2"],
    )
    .run();
    assert_eq!(status.code, 12, "{}{}", status.stdout, status.stderr);
    let line = |d: &str| {
        status
            .stdout
            .lines()
            .find(|l| l.starts_with(d))
            .unwrap()
            .to_string()
    };
    // SOURCE is the last column (issue 40, item 6).
    assert!(line(PROD).ends_with("  live"), "{}", status.stdout);
    assert!(
        line("edge.acme.example").contains("not read (unreachable"),
        "{}",
        status.stdout
    );
    assert!(
        line("apps.acme.example").contains("deploy domain"),
        "{}",
        status.stdout
    );
    // Its DRIFT, from the same read: the full inventory, never "in sync" unread.
    assert!(line(PROD).contains("  in sync  "), "{}", status.stdout);
    assert!(
        line("lab.acme.example").contains("  another domain's inventory  "),
        "{}",
        status.stdout
    );
    assert!(
        line("edge.acme.example").contains("  unknown (not read)  "),
        "{}",
        status.stdout
    );
    // stage: not read, one snapshot pending since just now.
    let stage: Vec<String> = line(STAGE)
        .split("  ")
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    // DOMAIN DRIFT PENDING LAST-APPLIED SOURCE.
    assert!(stage[4].starts_with("not read"), "{}", status.stdout);
    assert!(stage[2].starts_with("1 (oldest "), "{}", status.stdout);
    assert!(stage[2].ends_with("s ago)"), "{}", status.stdout);
    assert_eq!(stage[3], "never", "{}", status.stdout);
    // fleet --from store: prod applied, then a pin bump queued while its cluster is
    // away — only that cell waits.
    set_chart_version(fx.root(), "cilium", "1.20.1");
    let away = kubeconfig_with_server(&p.admin, &refused_server());
    let away = away.path().to_str().unwrap();
    let publish = ["publish", "--domain", PROD, "--kubeconfig", away];
    routed(&fx, nothing, &publish).run().success();
    let stored = routed(
        &fx,
        nothing,
        &["fleet", "--from", "store", "--by", "domain"],
    )
    .run();
    let prod_row = stored.stdout.lines().find(|l| l.starts_with(PROD)).unwrap();
    assert_eq!(prod_row.matches("(queued)").count(), 1, "{}", stored.stdout);
    assert!(prod_row.contains("1.20.1 (queued)"), "{}", stored.stdout);
    // stage was never applied: every cell of it waits.
    let stage_row = stored
        .stdout
        .lines()
        .find(|l| l.starts_with(STAGE))
        .unwrap();
    let cells = stage_row.split("  ").map(str::trim);
    let cells = cells.filter(|c| !c.is_empty() && *c != "-").count() - 1;
    assert_eq!(
        stage_row.matches("(queued)").count(),
        cells,
        "{}",
        stored.stdout
    );
    // log -A: each domain's publishes, newest first, each line naming its domain.
    let log = routed(&fx, nothing, &["log", "-A", "--oneline"])
        .run()
        .success();
    for domain in [PROD, STAGE] {
        assert_has(&log.stdout, domain);
    }
    assert!(
        log.stdout.lines().next().unwrap().contains(PROD),
        "{}",
        log.stdout
    );
    // (the project still pins cilium 1.20.1, which prod's cluster does not run yet)
    // fleet --from live: the matrix of what runs, edge named as not read; lab and dev
    // read prod's cluster: no column of theirs shows prod's versions (exit 12).
    let fleet = routed(
        &fx,
        nothing,
        &[
            "fleet",
            "--from",
            "live",
            "--timeout",
            "10",
            "--probe-timeout",
            "2",
        ],
    )
    .run();
    assert_eq!(fleet.code, 12, "{}{}", fleet.stdout, fleet.stderr);
    let header = fleet.stdout.lines().next().unwrap();
    assert!(
        header.contains(PROD)
            && !header.contains("lab.acme.example")
            && !header.contains(DEV)
            && !header.contains("edge")
            && !header.contains(STAGE),
        "{}",
        fleet.stdout
    );
    assert_has(
        &fleet.stderr,
        "[error] lab.acme.example: not in the matrix: another domain's inventory: the live ClusterInventory belongs to domain prod.acme.example",
    );
    assert_has(
        &fleet.stderr,
        "edge.acme.example: not in the matrix: not read (unreachable",
    );
    assert_has(
        &fleet.stderr,
        "[info] 'apps.acme.example' is a deploy domain",
    );
    let json = routed(&fx, nothing, &["fleet", "--from", "live", "-o", "json"]).run();
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let drifting: Vec<&serde_json::Value> = doc["addons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["drifting"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(drifting, [PROD], "prod's cilium only: {}", json.stdout);
    let left = doc["left"].as_array().unwrap();
    for d in ["lab.acme.example", DEV] {
        let l = left.iter().find(|l| l["domain"] == d).unwrap();
        assert_eq!(l["other_domain"], true, "{}", json.stdout);
    }
    let page = routed(&fx, nothing, &["fleet", "--from", "live", "-o", "html"]).run();
    assert_eq!(
        page.stdout.matches("class=\"drifting\"").count()
            + page.stdout.matches(" drifting\"").count(),
        drifting.len(),
        "{}",
        page.stdout
    );
    // Every cluster read: prod drifts (the pin bump), and lab, dev, edge and stage
    // reach prod's cluster — another domain's inventory outranks the drift: exit 12.
    std::fs::copy(&p.admin, own.join("edge.yaml")).unwrap();
    std::fs::copy(&p.admin, own.join("stage.yaml")).unwrap();
    let run = routed(&fx, nothing, &args).run();
    assert_eq!(run.code, 12, "{}{}", run.stdout, run.stderr);
    let json = routed(&fx, nothing, &[&args[..], &["-o", "json"]].concat()).run();
    let v: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v.len(), 6);
    assert_eq!(v[4]["verdict"], "drift", "{}", json.stdout);
    assert_eq!(v[3]["verdict"], "other-domain", "{}", json.stdout);
    // The pin back: prod in sync, the others still another domain's.
    set_chart_version(fx.root(), "cilium", "1.19.2");
    let json = routed(&fx, nothing, &[&args[..], &["-o", "json"]].concat()).run();
    assert_eq!(json.code, 12, "{}", json.stdout);
    let v: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v[4]["verdict"], "in-sync", "{}", json.stdout);
}

/// Issue 39, findings 1 and 2: two domains whose kubeconfigs reach one API server (a
/// copy-paste mistake of every fleet). `publish` never writes over the other domain's
/// live inventory — refused, the snapshot kept pending with its reason, exit 12, also
/// in `publish -A` — until `--take-over` says the cluster is now this domain's; and
/// `status`, `drift` (one and `-A`) and `fleet --from live` never show the other domain's
/// object as this one's: "another domain's inventory" is a verdict of its own, exit 12.
fn two_domains_on_one_server_never_take_each_others_inventory() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let admin = p.admin.as_path();
    let run = fx.run(admin, &["publish", "--domain", LAB]).run().success();
    assert_has(&run.stderr, "clusterinventory/cluster created");
    let lab_live = p.live().unwrap();

    let run = fx.run(admin, &["publish", "--domain", PROD]).run();
    assert_eq!(run.code, 12, "{}", run.stderr);
    assert_has(
        &run.stderr,
        &format!(
            "[error] inventory: could not publish the ClusterInventory for {PROD}: the kubeconfig reaches another domain's cluster"
        ),
    );
    assert_has(&run.stderr, &format!("belongs to domain {LAB}"));
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["labels"]["lok8s.dev/domain"], LAB);
    assert_eq!(
        live["metadata"]["resourceVersion"], lab_live["metadata"]["resourceVersion"],
        "the other domain's object is untouched"
    );
    let prod = domain_states(&fx, PROD);
    assert_eq!(
        (prod[0].1.as_str(), prod[0].2.as_str()),
        ("pending", "domain-mismatch")
    );

    // publish -A through the one KUBECONFIG: the same refusal, never "created" twice.
    let all = routed(&fx, admin, &["publish", "--domain", "*.acme.example"]).run();
    assert_eq!(all.code, 12, "{}{}", all.stdout, all.stderr);
    let row = |out: &str, d: &str| {
        out.lines()
            .find(|l| l.starts_with(d))
            .unwrap_or_else(|| panic!("{d} in {out}"))
            .to_string()
    };
    assert_has(&row(&all.stdout, PROD), "pending (domain-mismatch)");
    assert_has(&row(&all.stdout, LAB), "applied");
    assert_eq!(
        p.live().unwrap()["metadata"]["labels"]["lok8s.dev/domain"],
        LAB
    );

    // The reads: prod's cluster holds lab's inventory.
    let status = fx
        .run(admin, &["status", "--domain", PROD, "-o", "json"])
        .run();
    assert_eq!(status.code, 12, "{}{}", status.stdout, status.stderr);
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(doc["live"], false, "{}", status.stdout);
    assert_has(
        doc["notRead"].as_str().unwrap_or_default(),
        "domain-mismatch",
    );
    let drift = fx.run(admin, &["drift", "--domain", PROD]).run();
    assert_eq!(drift.code, 12, "{}{}", drift.stdout, drift.stderr);
    assert_has(
        &drift.stdout,
        &format!("{PROD}: another domain's inventory"),
    );
    let drift_all = routed(&fx, admin, &["drift", "-A", "-o", "json"]).run();
    assert_eq!(drift_all.code, 12, "{}", drift_all.stdout);
    let v: Vec<serde_json::Value> = serde_json::from_str(&drift_all.stdout).unwrap();
    let verdict = |d: &str| v.iter().find(|e| e["domain"] == d).unwrap()["verdict"].clone();
    assert_eq!(verdict(PROD), "other-domain");
    assert_eq!(verdict(LAB), "in-sync");
    let status_all = routed(&fx, admin, &["status", "-A"]).run();
    assert_eq!(status_all.code, 12, "{}", status_all.stdout);
    assert_has(&row(&status_all.stdout, PROD), "another domain's inventory");
    let fleet = routed(&fx, admin, &["fleet", "--from", "live", "-o", "json"]).run();
    assert_eq!(fleet.code, 12, "{}{}", fleet.stdout, fleet.stderr);
    let doc: serde_json::Value = serde_json::from_str(&fleet.stdout).unwrap();
    assert!(
        !doc["domains"].as_array().unwrap().iter().any(|d| d == PROD),
        "{}",
        fleet.stdout
    );
    let left = doc["left"].as_array().unwrap();
    let prod_left = left.iter().find(|l| l["domain"] == PROD).unwrap();
    assert_eq!(prod_left["other_domain"], true, "{}", fleet.stdout);

    // The cluster is now prod's: --take-over writes it, and says so as an apply.
    let taken = fx
        .run(admin, &["publish", "--domain", PROD, "--take-over"])
        .run()
        .success();
    assert_has(&taken.stderr, "clusterinventory/cluster configured");
    assert_eq!(
        p.live().unwrap()["metadata"]["labels"]["lok8s.dev/domain"],
        PROD
    );
    assert_eq!(domain_states(&fx, PROD)[0].1, "applied");
}

/// The plane's admin kubeconfig with its context named `context` and its server
/// `server`: what lok8s writes for a cluster, under another name.
fn renamed(p: &Plane, context: &str, server: &str) -> String {
    let text = std::fs::read_to_string(&p.admin).unwrap();
    let text = regex::Regex::new(r"(?m)^(\s*)server: \S+$")
        .unwrap()
        .replace_all(&text, format!("${{1}}server: {server}").as_str())
        .replace(
            "- name: clinv-control-plane\n  context:",
            &format!("- name: {context}\n  context:"),
        )
        .replace(
            "current-context: clinv-control-plane",
            &format!("current-context: {context}"),
        );
    assert!(text.contains(&format!("- name: {context}\n")), "{text}");
    text
}

/// What a replay says of `domain`'s newest snapshot, published through context
/// `offline` of `file`, which now names only the plane's context.
fn recorded_offline(fx: &Fx, domain: &str, file: &Path) -> String {
    format!(
        "snapshot {} was published through context 'offline' of {}, which no longer names it (it names: clinv-control-plane); replay --retarget delivers through the domain's kubeconfig as it is now",
        domain_states(fx, domain)[0].0,
        file.display()
    )
}

/// Snapshots of prod (three, each a different inventory) and lab (one) published through
/// context `offline` of their `.kubeconfig/` files while it pointed nowhere; then prod's
/// file regenerated as the plane's admin kubeconfig (context `clinv-control-plane`).
/// lab's file is left as `lab`, which the caller regenerates. The project's kubeconfig
/// directory.
fn published_through_offline(fx: &Fx, p: &Plane, lab: &str) -> PathBuf {
    let own = fx.root().join(".kubeconfig");
    std::fs::create_dir_all(&own).unwrap();
    let offline = renamed(p, "offline", &refused_server());
    std::fs::write(own.join("prod-fsn1.yaml"), &offline).unwrap();
    std::fs::write(own.join("lab.yaml"), &offline).unwrap();
    let nowhere = Path::new("/nonexistent");
    for (i, addon) in ["", "metrics-server", "rook-ceph"].iter().enumerate() {
        if !addon.is_empty() {
            fx.bump(addon);
        }
        let run = routed(fx, nowhere, &["publish", "--domain", PROD])
            .env("SOURCE_DATE_EPOCH", &(1_800_000_000 + i).to_string())
            .run()
            .success();
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    let run = routed(fx, nowhere, &["publish", "--domain", LAB])
        .run()
        .success();
    assert_has(&run.stderr, "recorded as pending snapshot");
    assert_eq!(domain_states(fx, PROD).len(), 3);
    std::fs::copy(&p.admin, own.join("prod-fsn1.yaml")).unwrap();
    std::fs::write(own.join("lab.yaml"), lab).unwrap();
    own
}

/// Issue 40, item 7: after the kubeconfigs were regenerated, `replay -A` says what was
/// recorded (never a `--context` nobody passed), sends nothing and keeps every snapshot
/// pending; `replay -A --retarget` applies prod's newest to the plane and supersedes the
/// older ones, without a new snapshot; another domain's live object is still never
/// overwritten without `--take-over`.
fn replay_retarget_delivers_after_the_kubeconfigs_were_regenerated() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    // lab's cluster is down: regenerated under another context name.
    let own = published_through_offline(&fx, &p, &renamed(&p, "lok8s-lab", &refused_server()));
    let nowhere = Path::new("/nonexistent");

    let run = routed(&fx, nowhere, &["replay", "-A"]).run();
    assert_eq!(run.code, 0, "fail-soft: {}", run.stderr);
    assert_has(
        &run.stderr,
        &recorded_offline(&fx, PROD, &own.join("prod-fsn1.yaml")),
    );
    assert_has(
        &run.stderr,
        "which no longer names it (it names: lok8s-lab)",
    );
    assert!(!run.stderr.contains("--context"), "{}", run.stderr);
    assert!(p.live().is_none(), "nothing sent");
    for domain in [PROD, LAB] {
        for (id, state, _) in domain_states(&fx, domain) {
            assert_eq!(state, "pending", "{id}");
        }
        assert_eq!(domain_states(&fx, domain)[0].2, "bad-kubeconfig");
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(domain) && l.contains("pending (bad-kubeconfig)")),
            "{}",
            run.stdout
        );
    }
    let strict = routed(&fx, nowhere, &["--strict", "replay", "-A"]).run();
    assert_eq!(strict.code, 4, "{}", strict.stderr);

    let run = routed(&fx, nowhere, &["--strict", "replay", "-A", "--retarget"]).run();
    assert_eq!(run.code, 5, "lab's cluster is down: {}", run.stderr);
    let prod = domain_states(&fx, PROD);
    assert_eq!(prod.len(), 3, "nothing published");
    assert_eq!(prod[0].1, "applied", "{prod:?}");
    assert!(prod[1..].iter().all(|s| s.1 == "superseded"), "{prod:?}");
    let live = p.live().unwrap();
    assert_eq!(live["metadata"]["labels"]["lok8s.dev/domain"], PROD);
    assert_eq!(live["spec"], snapshot_spec(&fx, &prod[0].0));
    let lab = domain_states(&fx, LAB);
    assert_eq!(
        (lab[0].1.as_str(), lab[0].2.as_str()),
        ("pending", "unreachable")
    );

    // lab's kubeconfig regenerated to reach the same cluster: prod's inventory there is
    // left alone (exit 12), lab's snapshot stays pending.
    std::fs::copy(&p.admin, own.join("lab.yaml")).unwrap();
    let run = routed(&fx, nowhere, &["replay", "--domain", LAB, "--retarget"]).run();
    assert_eq!(run.code, 12, "{}", run.stderr);
    assert_eq!(
        p.live().unwrap()["metadata"]["resourceVersion"],
        live["metadata"]["resourceVersion"]
    );
    let lab = domain_states(&fx, LAB);
    assert_eq!(
        (lab[0].1.as_str(), lab[0].2.as_str()),
        ("pending", "domain-mismatch")
    );
}

/// The same through the delivery loop: without `--retarget` it says what was recorded
/// and delivers nothing; with it, prod's newest is applied and the older superseded.
fn the_loop_retargets_after_the_kubeconfigs_were_regenerated() {
    let p = plane();
    p.crd_only();
    let fx = Fx::new();
    let own = published_through_offline(&fx, &p, &renamed(&p, "lok8s-lab", &refused_server()));
    let watch = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            "--watch",
            "--domain",
            PROD,
            "--log-format",
            "json",
            "--backoff-base",
            "500ms",
            "--backoff-cap",
            "2s",
        ];
        args.extend_from_slice(extra);
        routed(&fx, Path::new("/nonexistent"), &args).spawn()
    };
    let limit = Duration::from_secs(60);
    let mut run = watch(&[]);
    assert!(
        run.wait_for(limit, |s| has_event(s, "not-delivered", PROD)),
        "{}",
        run.stderr()
    );
    let said = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "not-delivered")
        .unwrap();
    assert_eq!(said["reason"], "bad-kubeconfig", "{said}");
    let msg = said["msg"].as_str().unwrap();
    assert_has(
        msg,
        &recorded_offline(&fx, PROD, &own.join("prod-fsn1.yaml")),
    );
    assert!(!msg.contains("--context"), "{msg}");
    run.signal("TERM");
    assert_eq!(run.wait_exit(Duration::from_secs(5)), Some(Some(0)));
    assert!(p.live().is_none(), "nothing sent");

    let mut run = watch(&["--retarget"]);
    assert!(
        run.wait_for(limit, |s| has_event(s, "delivered", PROD)),
        "{}",
        run.stderr()
    );
    let delivered = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "delivered")
        .unwrap();
    assert_eq!(delivered["superseded"], 2, "{delivered}");
    let prod = domain_states(&fx, PROD);
    assert_eq!(prod.len(), 3, "nothing published");
    assert_eq!(prod[0].1, "applied", "{prod:?}");
    assert!(prod[1..].iter().all(|s| s.1 == "superseded"), "{prod:?}");
    assert_eq!(live_spec(&p), snapshot_spec(&fx, &prod[0].0));
    run.signal("TERM");
    assert_eq!(run.wait_exit(Duration::from_secs(5)), Some(Some(0)));
}

const DEV_NAME: &str = "dev";
const DEV: &str = "dev.acme.example";
const STAGE_NAME: &str = "stage";
const STAGE: &str = "stage.acme.example";

trials! {
    Plane: [
        replay_retarget_delivers_after_the_kubeconfigs_were_regenerated,
        the_loop_retargets_after_the_kubeconfigs_were_regenerated,
        every_view_of_a_fleet_of_six_domains,
        two_domains_on_one_server_never_take_each_others_inventory,
        replay_delivers_through_the_kubeconfig_the_publish_used,
        replay_all_never_writes_one_domain_over_another,
        replay_all_routes_each_domain_to_its_own_kubeconfig,
        queued_while_down_then_one_replay_applies_only_the_newest,
        the_stale_guard_never_overwrites_a_newer_live_inventory,
        clock_skew_is_said_and_allow_older_delivers,
        a_replay_that_crashed_after_applying_only_marks_on_the_next_run,
        replays_killed_at_random_points_converge,
    ],
}
