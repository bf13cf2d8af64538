//! `clinv replay --watch`, the delivery loop, without a cluster: what it does while the
//! far end does not answer (refused, or a black hole that takes the connection and
//! never speaks TLS), what it picks up from other processes, its signals and its log.
//! Deliveries to the real control plane are tests/cluster/watch.rs's.

use crate::support::*;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

struct Fx {
    root: tempfile::TempDir,
    store: tempfile::TempDir,
}

fn kubeconfig(port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

impl Fx {
    /// A project of `n` domains `w{i}.watch.example`, each with its own kubeconfig
    /// (`.kubeconfig/w{i}.yaml`) that is refused; nothing published yet.
    fn new(n: usize) -> Fx {
        let root = tempfile::tempdir().unwrap();
        copy_dir(&example().join(".lok8s"), &root.path().join(".lok8s"));
        let refused = refused_port();
        for i in 0..n {
            write(
                root.path(),
                &format!("clusters/w{i}.watch.example/cluster.lok8s.yaml"),
                format!(
                    "kind: Lo\nmetadata:\n  name: w{i}\nspec:\n  kubernetes:\n    version: v1.32.3\n"
                ),
            );
            write(
                root.path(),
                &format!(".kubeconfig/w{i}.yaml"),
                kubeconfig(refused),
            );
        }
        Fx {
            root,
            store: tempfile::tempdir().unwrap(),
        }
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        clinv(args).root(self.root.path()).store(self.store.path())
    }

    /// Publishes domain `i` (refused: recorded pending).
    fn publish(&self, i: usize) {
        let d = format!("w{i}.watch.example");
        let run = self.clinv(&["publish", "--domain", &d]).run().success();
        assert_has(&run.stderr, "recorded as pending snapshot");
    }

    /// Points domain `i`'s kubeconfig at `port`.
    fn aim(&self, i: usize, port: u16) {
        write(
            self.root.path(),
            &format!(".kubeconfig/w{i}.yaml"),
            kubeconfig(port),
        );
    }

    fn watch(&self, extra: &[&str]) -> Background {
        let mut args = vec!["replay", "--watch", "-A", "--log-format", "json"];
        args.extend_from_slice(extra);
        self.clinv(&args).spawn()
    }
}

const LIMIT: Duration = Duration::from_secs(20);

fn a_second_loop_on_one_store_exits_18_naming_the_first() {
    let fx = Fx::new(1);
    // Both with the same metrics address, as a unit started twice would be: the second
    // still says which loop serves the store (not that the address is taken).
    let port = reserve_port("127.0.0.1");
    let addr = format!("127.0.0.1:{}", port.port);
    drop(port);
    let first = fx.watch(&["--metrics-addr", &addr]);
    assert!(
        first.wait_for(LIMIT, |s| s.contains("\"started\"")),
        "{}",
        first.stderr()
    );
    let second = fx
        .clinv(&["replay", "--watch", "-A", "--metrics-addr", &addr])
        .run();
    assert_eq!(second.code, 18, "{}", second.stderr);
    assert_has(
        &second.stderr,
        "already served by another clinv replay --watch",
    );
    assert_has(&second.stderr, &format!("pid {}", first.pid()));
    // Every other command runs beside it.
    fx.publish(0);
    fx.clinv(&["snapshots", "list"]).run().success();
    fx.clinv(&["snapshots", "gc", "--keep", "5"])
        .run()
        .success();
}

/// Issue 51, findings 1 and 3: the loop's endpoint tells the truth about a domain whose
/// store it cannot read — `clinv_store_readable` 0 for it (1 for the others) and
/// `/readyz` 503 — and is ready again once it reads.
fn an_unreadable_domain_is_said_by_the_metrics_and_the_readiness() {
    let fx = Fx::new(2);
    fx.publish(0);
    fx.publish(1);
    // A store folder clinv refuses to follow (a symbolic link) cannot be read.
    let objects = fx.store.path().join("w1.watch.example").join("objects");
    let moved = fx.store.path().join("elsewhere");
    std::fs::rename(&objects, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &objects).unwrap();
    let port = reserve_port("127.0.0.1");
    let addr = format!("127.0.0.1:{}", port.port);
    drop(port);
    let run = fx.watch(&["--metrics-addr", &addr]);
    assert!(
        run.wait_for(LIMIT, |s| s.contains("\"started\"")),
        "{}",
        run.stderr()
    );
    let readable = |d: &str| format!("clinv_store_readable{{domain=\"{d}\"}} ");
    let said = wait_until(LIMIT, || {
        let metrics = http_get(&addr, "/metrics").1;
        metrics.contains(&(readable("w1.watch.example") + "0"))
            && metrics.contains(&(readable("w0.watch.example") + "1"))
    });
    assert!(said, "{}", http_get(&addr, "/metrics").1);
    assert_eq!(http_get(&addr, "/readyz").0, 503);
    assert_eq!(http_get(&addr, "/healthz").0, 200);
    std::fs::remove_file(&objects).unwrap();
    std::fs::rename(&moved, &objects).unwrap();
    // Read again at the next full read (SIGHUP: at once).
    run.signal("HUP");
    let ready = wait_until(LIMIT, || http_get(&addr, "/readyz").0 == 200);
    assert!(ready, "{}", run.stderr());
}

/// Polls `check` every 100 ms until it holds or `limit` passes.
fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// `GET path` of the server at `addr`: the status code and the body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return (0, String::new());
    };
    let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let code = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (code, body)
}

fn a_snapshot_recorded_while_it_runs_is_attempted() {
    let fx = Fx::new(2);
    fx.publish(0);
    let run = fx.watch(&["-v", "--backoff-base", "1m"]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "unanswered", "w0.watch.example")));
    let first = events(&run.stderr())[0].clone();
    assert_eq!(
        (first["event"].as_str(), first["owing"].as_u64()),
        (Some("started"), Some(1))
    );
    // Another process records a snapshot of a domain that owed nothing: it is seen
    // and attempted (within a second: scripts/bench.py watch-pickup measures it).
    fx.publish(1);
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "owed", "w1.watch.example")
            && has_event(s, "unanswered", "w1.watch.example")),
        "{}",
        run.stderr()
    );
    // Nothing was written by the loop's failed attempts: both still pending.
    let list = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(
        fields(&serde_json::Value::from(rows), "state"),
        ["pending", "pending"]
    );
}

fn a_domain_in_backoff_says_why_it_waits_and_sighup_retries_at_once() {
    let fx = Fx::new(1);
    fx.publish(0);
    let run = fx.watch(&["-v", "--backoff-base", "10m"]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "unanswered", "")));
    // A newer inventory while the domain waits: recorded, said, and not attempted.
    edit_spec_version(fx.root.path(), "w0.watch.example", "v1.33.0");
    fx.publish(0);
    assert!(
        run.wait_for(LIMIT, |s| has_event(s, "waiting", "w0.watch.example")),
        "{}",
        run.stderr()
    );
    let waiting = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "waiting")
        .unwrap();
    assert_has(waiting["msg"].as_str().unwrap(), "in backoff for");
    assert_eq!(count_events(&run.stderr(), "unanswered"), 1);
    // SIGHUP: the project is read again and every owing domain is attempted now.
    run.signal("HUP");
    assert!(run.wait_for(LIMIT, |s| has_event(s, "reloaded", "")
        && count_events(s, "unanswered") == 2));
}

fn sigterm_with_a_delivery_in_flight_exits_0_within_5_seconds() {
    let fx = Fx::new(1);
    fx.publish(0);
    // A cluster that takes the connection and never answers the TLS handshake.
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    fx.aim(0, hole.local_addr().unwrap().port());
    let mut run = fx.watch(&["--timeout", "60", "--probe-timeout", "60"]);
    // The probe's connection, then the delivery's: held open, never answered.
    hole.set_nonblocking(true).unwrap();
    let mut held = Vec::new();
    assert!(poll(LIMIT, Duration::from_millis(20), || {
        held.extend(hole.accept().ok());
        held.len() >= 2
    }));
    let sent = Instant::now();
    run.signal("TERM");
    let code = run.wait_exit(Duration::from_secs(10));
    let took = sent.elapsed();
    assert_eq!(code, Some(Some(0)), "{}", run.stderr());
    assert!(took <= Duration::from_secs(5), "exited after {took:?}");
    assert!(has_event(&run.stderr(), "stopping", ""), "{}", run.stderr());
    let stopping = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "stopping")
        .unwrap();
    assert_eq!(stopping["in_flight"], 1);
    // Abandoned safely: still pending, the store whole.
    fx.clinv(&["snapshots", "verify"]).run().success();
    let list = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success();
    assert_has(&list.stdout, "\"state\": \"pending\"");
}

/// Two domains whose kubeconfigs name one API server never deliver at once (the
/// right-cluster guard decides between them, one at a time): the second waits for the
/// first's attempt to end, says so with `-v`, then gets its turn.
fn two_domains_at_one_api_server_deliver_in_turn() {
    let fx = Fx::new(2);
    fx.publish(0);
    fx.publish(1);
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hole.local_addr().unwrap().port();
    fx.aim(0, port);
    fx.aim(1, port);
    let run = fx.watch(&["-v", "--timeout", "2", "--probe-timeout", "30"]);
    let ended = |s: &str| count_events(s, "not-delivered") >= 2;
    assert!(run.wait_for(LIMIT, ended), "{}", run.stderr());
    let said = events(&run.stderr());
    let waited = said.iter().find(|e| {
        e["event"] == "waiting"
            && e["msg"]
                .as_str()
                .is_some_and(|m| m.contains("another domain's delivery to https://127.0.0.1:"))
    });
    let waited = waited.unwrap_or_else(|| panic!("{}", run.stderr()));
    let second = waited["domain"].as_str().unwrap();
    let ended_at = |d: &str| {
        said.iter()
            .position(|e| e["event"] == "not-delivered" && e["domain"] == d)
            .unwrap()
    };
    let first = if second == "w0.watch.example" {
        "w1.watch.example"
    } else {
        "w0.watch.example"
    };
    assert!(ended_at(first) < ended_at(second), "{}", run.stderr());
    drop(hole);
}

/// A kubeconfig regenerated while its domain waits out a backoff (a new server address)
/// is read at the next attempt, without a SIGHUP.
fn a_regenerated_kubeconfig_is_read_at_the_next_attempt() {
    let fx = Fx::new(1);
    fx.publish(0);
    let run = fx.watch(&["-v", "--backoff-base", "300ms", "--backoff-cap", "600ms"]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "unanswered", "")));
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    fx.aim(0, hole.local_addr().unwrap().port());
    hole.set_nonblocking(true).unwrap();
    let mut held = Vec::new();
    let reached = poll(LIMIT, Duration::from_millis(20), || {
        held.extend(hole.accept().ok());
        !held.is_empty()
    });
    assert!(
        reached,
        "the new address was never tried:\n{}",
        run.stderr()
    );
}

/// Under systemd (`Type=notify`, `WatchdogSec=`): READY=1 once the store is read,
/// WATCHDOG=1 with a STATUS line while it runs, STOPPING=1 on SIGTERM. No systemd runs
/// here: the test listens on the notification socket itself, as systemd does (a unix
/// datagram socket named by NOTIFY_SOCKET).
fn under_systemd_it_says_ready_alive_and_stopping() {
    use std::os::unix::net::UnixDatagram;
    let fx = Fx::new(1);
    fx.publish(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify");
    let socket = UnixDatagram::bind(&path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut run = fx
        .clinv(&["replay", "--watch", "-A"])
        .env("NOTIFY_SOCKET", path.to_str().unwrap())
        .env("WATCHDOG_USEC", "400000")
        .spawn();
    let mut said = Vec::new();
    let next = || {
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    said.push(next());
    assert_eq!(said[0], "READY=1\n");
    said.push(next());
    assert!(
        said[1].starts_with("WATCHDOG=1\nSTATUS=1 domain(s) owe snapshots"),
        "{said:?}"
    );
    run.signal("TERM");
    let stopping = (0..20)
        .map(|_| next())
        .find(|m| m.starts_with("STOPPING=1"));
    assert!(stopping.is_some(), "{said:?}");
    assert_eq!(run.wait_exit(Duration::from_secs(5)), Some(Some(0)));
}

fn sigterm_when_idle_exits_0_at_once_and_the_next_loop_starts() {
    let fx = Fx::new(1);
    let mut run = fx.watch(&[]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "started", "")));
    run.signal("INT");
    assert_eq!(
        run.wait_exit(Duration::from_secs(5)),
        Some(Some(0)),
        "{}",
        run.stderr()
    );
    let again = fx.watch(&[]);
    assert!(
        again.wait_for(LIMIT, |s| has_event(s, "started", "")),
        "{}",
        again.stderr()
    );
}

fn watch_flags_are_refused_where_they_mean_nothing() {
    let fx = Fx::new(1);
    for args in [
        &["replay", "--watch", "--dry-run"][..],
        &["replay", "--watch", "-A", "-o", "json"],
        &["replay", "--backoff-base", "1s"],
        &["replay", "--watch", "--backoff-cap", "soon"],
        &["replay", "--watch", "--parallel", "0"],
    ] {
        let run = fx.clinv(args).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    }
    let run = fx
        .clinv(&["replay", "--watch", "-A", "--kubeconfig", "/x"])
        .run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_has(&run.stderr, "--watch serves several domains");
}

/// Sets the Kubernetes version of a domain's spec (a new inventory).
fn edit_spec_version(root: &Path, domain: &str, version: &str) {
    let spec = root.join(format!("clusters/{domain}/cluster.lok8s.yaml"));
    let text = std::fs::read_to_string(&spec).unwrap();
    let text = regex::Regex::new(r"version: v[0-9.]+")
        .unwrap()
        .replace(&text, format!("version: {version}"));
    std::fs::write(spec, text.as_bytes()).unwrap();
}

/// Accepts connections on a loopback port and counts them (each is closed at once): a
/// far end that answers the probe and nothing else.
struct Counter {
    port: u16,
    seen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Counter {
    fn start() -> Counter {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(conn);
            }
        });
        Counter { port, seen }
    }

    fn seen(&self) -> usize {
        self.seen.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Issue 48, finding 5: a pending snapshot whose object is missing cannot be delivered;
/// the loop must not attempt it again at once, forever (it probed the cluster hundreds
/// of times a second). It waits out a backoff, and says so at the default level — the
/// damage replay names included.
fn a_damaged_pending_snapshot_backs_off_and_says_so() {
    let fx = Fx::new(1);
    fx.publish(0);
    let objects = fx.store.path().join("w0.watch.example/objects");
    for f in std::fs::read_dir(&objects).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let far = Counter::start();
    fx.aim(0, far.port);
    let run = fx.watch(&["--backoff-base", "2s"]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "started", "")));
    std::thread::sleep(Duration::from_secs(3));
    let probes = far.seen();
    assert!(
        probes <= 4,
        "{probes} connections in 3 s:\n{}",
        run.stderr()
    );
    let said = events(&run.stderr());
    let skipped = said
        .iter()
        .any(|e| e["level"] == "warn" && e["msg"].as_str().unwrap_or("").contains("skipped"));
    assert!(skipped, "the damage is said:\n{}", run.stderr());
    let owed = said.iter().any(|e| {
        e["level"] == "warn"
            && e["domain"] == "w0.watch.example"
            && e["wait_seconds"].as_f64().is_some()
    });
    assert!(owed, "it stays owed, said with its wait:\n{}", run.stderr());
}

/// Issue 48, finding 11: what one-shot replay warns, the loop logs. A kubeconfig
/// regenerated with the same context name but another server: the delivery goes to the
/// new server, and the loop says so at the default level, as `replay` does.
fn the_loop_says_what_replay_says() {
    let fx = Fx::new(1);
    fx.publish(0);
    let far = Counter::start();
    fx.aim(0, far.port);
    let run = fx.watch(&["--backoff-base", "1m"]);
    let moved = format!("delivering it to https://127.0.0.1:{}", far.port);
    assert!(
        run.wait_for(LIMIT, |s| events(s).iter().any(
            |e| e["level"] == "warn" && e["msg"].as_str().unwrap_or("").contains(&moved)
        )),
        "{}",
        run.stderr()
    );
}

/// The CPU time (user + system) `pid` used so far, from `/proc/PID/stat`.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (which may hold spaces) start after its ')'.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// Issue 48, finding 7: during a reload's drain (SIGHUP while an attempt hangs), a
/// domain whose backoff ends is due but not started: the loop must sleep, not spin on
/// it (it took a third of a core).
fn a_reload_drain_with_a_hanging_attempt_does_not_spin() {
    let fx = Fx::new(2);
    fx.publish(0);
    fx.publish(1);
    // w0 is refused (a short backoff, due again during the drain); w1's cluster takes
    // the connection and never answers.
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    fx.aim(1, hole.local_addr().unwrap().port());
    let run = fx.watch(&[
        "-v",
        "--backoff-base",
        "200ms",
        "--backoff-cap",
        "200ms",
        "--timeout",
        "8",
        "--probe-timeout",
        "8",
    ]);
    hole.set_nonblocking(true).unwrap();
    let mut held = Vec::new();
    assert!(poll(LIMIT, Duration::from_millis(20), || {
        held.extend(hole.accept().ok());
        held.len() >= 2 && has_event(&run.stderr(), "unanswered", "w0.watch.example")
    }));
    run.signal("HUP");
    std::thread::sleep(Duration::from_millis(800));
    let before = cpu_time(run.pid());
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_time(run.pid()) - before;
    assert!(
        !has_event(&run.stderr(), "reloaded", ""),
        "the drain was over before it was measured:\n{}",
        run.stderr()
    );
    assert!(
        used <= Duration::from_millis(150),
        "{used:?} of CPU in 3 s of drain:\n{}",
        run.stderr()
    );
}

/// Issue 48, finding 4: the store removed under a running loop (its lock lived in the
/// removed folder): the loop says so and exits non-zero instead of serving a store it
/// no longer guards beside a second loop on the recreated one.
fn a_store_removed_under_the_loop_stops_it() {
    let fx = Fx::new(1);
    fx.publish(0);
    let mut run = fx.watch(&[]);
    assert!(run.wait_for(LIMIT, |s| has_event(s, "started", "")));
    std::fs::remove_dir_all(fx.store.path()).unwrap();
    fx.publish(0);
    let code = run.wait_exit(Duration::from_secs(10));
    assert!(
        matches!(code, Some(Some(c)) if c != 0),
        "{code:?}: {}",
        run.stderr()
    );
    assert_has(&run.stderr(), "removed or replaced");
    // The recreated store gets a loop of its own.
    let next = fx.watch(&[]);
    assert!(
        next.wait_for(LIMIT, |s| has_event(s, "started", "")),
        "{}",
        next.stderr()
    );
}

/// Issue 48, finding 10: a lost change hint (a `.changes` the writers cannot append to;
/// logrotate's copytruncate) is recovered by the full read after SIGHUP and by the
/// periodic one (`--resync-period`), never only by a restart.
fn a_lost_change_hint_is_recovered_by_sighup_and_by_the_period() {
    for sighup in [true, false] {
        let fx = Fx::new(1);
        let period = if sighup { "1h" } else { "2s" };
        let run = fx.watch(&["--resync-period", period]);
        assert!(run.wait_for(LIMIT, |s| has_event(s, "started", "")));
        // Writers cannot append: the hint is lost.
        let changes = fx.store.path().join(".changes");
        let _ = std::fs::remove_file(&changes);
        std::fs::create_dir(&changes).unwrap();
        fx.publish(0);
        if sighup {
            std::thread::sleep(Duration::from_millis(600));
            run.signal("HUP");
        }
        assert!(
            run.wait_for(LIMIT, |s| has_event(s, "owed", "w0.watch.example")),
            "sighup {sighup}: {}",
            run.stderr()
        );
    }
}

/// Issue 48, finding 7: attempts in flight are bounded by `--parallel`, not by the
/// probes' bound: a granted attempt waits for a free worker in the loop (its `--timeout`
/// starts when it does) and is not counted as in flight before.
fn attempts_in_flight_are_bounded_by_parallel() {
    let fx = Fx::new(2);
    fx.publish(0);
    fx.publish(1);
    let holes: Vec<TcpListener> = (0..2)
        .map(|i| {
            let hole = TcpListener::bind("127.0.0.1:0").unwrap();
            fx.aim(i, hole.local_addr().unwrap().port());
            hole.set_nonblocking(true).unwrap();
            hole
        })
        .collect();
    let mut run = fx.watch(&[
        "--parallel",
        "1",
        "--timeout",
        "30",
        "--probe-timeout",
        "30",
    ]);
    let mut held = Vec::new();
    // Both probes, then one attempt's connection.
    assert!(poll(LIMIT, Duration::from_millis(20), || {
        for hole in &holes {
            held.extend(hole.accept().ok());
        }
        held.len() >= 3
    }));
    std::thread::sleep(Duration::from_millis(300));
    for hole in &holes {
        held.extend(hole.accept().ok());
    }
    assert_eq!(held.len(), 3, "one attempt at a time:\n{}", run.stderr());
    run.signal("TERM");
    assert_eq!(run.wait_exit(Duration::from_secs(10)), Some(Some(0)));
    let stopping = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "stopping")
        .unwrap();
    assert_eq!(stopping["in_flight"], 1, "{}", run.stderr());
}

/// The threads of process `pid` now.
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line[8..].trim().parse().unwrap()
}

/// Issue 48, finding 6: owed pushes to a registry that takes connections and never
/// answers are given up at `--timeout` for real: the loop's threads stay within
/// `--parallel` + 16 however many attempts it gave up on (each went on in a thread of
/// its own for the HTTP client's 300 s before).
fn owed_pushes_to_a_black_hole_keep_the_threads_bounded() {
    let fx = Fx::new(1);
    fx.publish(0);
    let port = refused_port();
    for i in 0..12 {
        let url = format!("oci://127.0.0.1:{port}/inventories/r{i}");
        let run = fx
            .clinv(&["push", &url, "--plain-http", "--domain", "w0.watch.example"])
            .run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_has(&run.stderr, "push owed");
    }
    let hole = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let run = fx.watch(&[
        "--parallel",
        "4",
        "--timeout",
        "1",
        "--backoff-base",
        "200ms",
        "--backoff-cap",
        "400ms",
    ]);
    assert!(run.wait_for(LIMIT, |s| count_events(s, "push-not-delivered") >= 12));
    std::thread::sleep(Duration::from_secs(4));
    let most = threads(run.pid());
    assert!(
        most <= 4 + 16,
        "{most} threads after {} attempts given up:\n{}",
        count_events(&run.stderr(), "push-not-delivered"),
        run.stderr()
    );
    drop(hole);
}

/// Issue 48, "back within seconds": a cluster dark long enough for its backoff to grow
/// is still probed every `--probe-interval`, so it is attempted within seconds of its
/// link returning, not after the long backoff (median 132 s, max 347 s before).
fn a_link_that_returns_is_found_within_the_probe_interval() {
    let fx = Fx::new(1);
    fx.publish(0);
    let port = refused_port();
    fx.aim(0, port);
    let run = fx.watch(&[
        "-v",
        "--backoff-base",
        "500ms",
        "--backoff-cap",
        "5m",
        "--probe-interval",
        "1s",
    ]);
    // Dark for six probes: an attempts' backoff would be at 16 s and more by now.
    assert!(
        run.wait_for(LIMIT, |s| count_events(s, "unanswered") >= 6),
        "{}",
        run.stderr()
    );
    let back = TcpListener::bind(("127.0.0.1", port)).unwrap();
    back.set_nonblocking(true).unwrap();
    let mut held = Vec::new();
    let found = poll(Duration::from_secs(3), Duration::from_millis(20), || {
        held.extend(back.accept().ok());
        !held.is_empty()
    });
    assert!(
        found,
        "not probed within 3 s of returning:\n{}",
        run.stderr()
    );
    let waits: Vec<f64> = events(&run.stderr())
        .iter()
        .filter(|e| e["event"] == "unanswered")
        .map(|e| e["wait_seconds"].as_f64().unwrap())
        .collect();
    assert!(waits.iter().all(|w| *w <= 1.25), "{waits:?}");
    // Issue 51, finding 5: the state changes are said once, at the default level.
    let said = run.wait_for(LIMIT, |s| count_events(s, "reachable") == 1);
    assert!(said, "{}", run.stderr());
    let stderr = run.stderr();
    assert_eq!(count_events(&stderr, "unreachable"), 1, "{stderr}");
    let dark = events(&stderr)
        .into_iter()
        .find(|e| e["event"] == "unreachable")
        .unwrap();
    assert_eq!(
        (dark["level"].as_str(), dark["reason"].as_str()),
        (Some("warn"), Some("unreachable"))
    );
}

/// Whether a process whose command line holds `needle` runs (from `/proc`).
fn running(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(needle))
            .unwrap_or(false)
    })
}

/// Issue 48, finding 12: SIGTERM ends the loop within its grace, and with it an exec
/// credential plugin that hangs (it ran on past the loop before, until its `--timeout`
/// killer — which died with the loop — would have ended it).
fn sigterm_ends_a_hanging_credential_plugin_too() {
    let fx = Fx::new(1);
    fx.publish(0);
    let hole = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hole.local_addr().unwrap().port();
    let marker = format!("clinv-hanging-plugin-{}", std::process::id());
    let plugin = fx.root.path().join(&marker);
    write(fx.root.path(), &marker, "#!/bin/sh\nsleep 300\n");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    write(
        fx.root.path(),
        ".kubeconfig/w0.yaml",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n",
            plugin.display()
        ),
    );
    let mut run = fx.watch(&["--timeout", "120", "--probe-timeout", "5", "--retarget"]);
    assert!(
        poll(LIMIT, Duration::from_millis(50), || running(&marker)),
        "the plugin never ran:\n{}",
        run.stderr()
    );
    run.signal("TERM");
    assert_eq!(run.wait_exit(Duration::from_secs(10)), Some(Some(0)));
    let gone = poll(Duration::from_secs(2), Duration::from_millis(50), || {
        !running(&marker)
    });
    assert!(gone, "the plugin outlived the loop:\n{}", run.stderr());
    drop(hole);
}

trials! {
    Nothing: [
        a_second_loop_on_one_store_exits_18_naming_the_first,
        an_unreadable_domain_is_said_by_the_metrics_and_the_readiness,
        a_snapshot_recorded_while_it_runs_is_attempted,
        a_domain_in_backoff_says_why_it_waits_and_sighup_retries_at_once,
        sigterm_with_a_delivery_in_flight_exits_0_within_5_seconds,
        sigterm_when_idle_exits_0_at_once_and_the_next_loop_starts,
        a_regenerated_kubeconfig_is_read_at_the_next_attempt,
        two_domains_at_one_api_server_deliver_in_turn,
        under_systemd_it_says_ready_alive_and_stopping,
        watch_flags_are_refused_where_they_mean_nothing,
        a_damaged_pending_snapshot_backs_off_and_says_so,
        the_loop_says_what_replay_says,
        a_reload_drain_with_a_hanging_attempt_does_not_spin,
        a_store_removed_under_the_loop_stops_it,
        a_lost_change_hint_is_recovered_by_sighup_and_by_the_period,
        attempts_in_flight_are_bounded_by_parallel,
        owed_pushes_to_a_black_hole_keep_the_threads_bounded,
        a_link_that_returns_is_found_within_the_probe_interval,
        sigterm_ends_a_hanging_credential_plugin_too,
    ],
}
