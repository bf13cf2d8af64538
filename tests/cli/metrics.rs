//! `status -o prometheus`: what a fleet owes, from the store alone, for node_exporter's
//! textfile collector — checked value by value, by the real `promtool check metrics`, and
//! (the kit's Prometheus) scraped from the delivery loop's server by a real Prometheus.

use crate::prometheus::{Prometheus, check_metrics};
use crate::support::*;
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

trials! {
    Nothing: [
        the_exposition_says_what_each_domain_owes_from_the_store_alone,
        an_unreadable_store_is_said_and_the_others_still_exposed,
        one_domain_and_a_glob_expose_only_theirs,
    ],
    Promtool: [promtool_accepts_the_exposition, the_alert_rules_pass_their_promtool_tests],
    Prometheus: [a_real_prometheus_scrapes_the_loops_server],
}

const DOMAINS: [&str; 3] = [
    "a.metrics.example",
    "b.metrics.example",
    "c.metrics.example",
];

struct Fx {
    root: tempfile::TempDir,
    store: tempfile::TempDir,
    /// Each domain's cluster once the snapshots are queued: a black hole that must see no
    /// connection (the exposition never reads a cluster).
    holes: Vec<TcpListener>,
}

fn kubeconfig(port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

fn spec(i: usize, version: &str) -> String {
    format!("kind: Lo\nmetadata:\n  name: m{i}\nspec:\n  kubernetes:\n    version: {version}\n")
}

impl Fx {
    /// Three domains whose clusters refuse: a with two snapshots pending, b with one, c
    /// with none; then each cluster a black hole.
    fn new() -> Fx {
        let fx = Fx {
            root: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
            holes: DOMAINS
                .iter()
                .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
                .collect(),
        };
        let root = fx.root.path();
        copy_dir(&example().join(".lok8s"), &root.join(".lok8s"));
        for (i, domain) in DOMAINS.iter().enumerate() {
            let spec_file = format!("clusters/{domain}/cluster.lok8s.yaml");
            write(root, &spec_file, spec(i, "v1.32.3"));
            write(
                root,
                &format!(".kubeconfig/m{i}.yaml"),
                kubeconfig(refused_port()),
            );
        }
        let publish = |domain: &str| {
            let run = fx.clinv(&["publish", "--domain", domain]).success();
            assert_has(&run.stderr, "recorded as pending snapshot");
        };
        // A deploy domain: no inventory of its own, so no series; named, never skipped.
        let deploy = format!(
            "kind: Deploy\nmetadata:\n  name: apps\nspec:\n  clusterRef:\n    domain: {}\n",
            DOMAINS[0]
        );
        write(
            root,
            "clusters/apps.metrics.example/deploy.lok8s.yaml",
            deploy,
        );
        publish(DOMAINS[0]);
        write(
            root,
            &format!("clusters/{}/cluster.lok8s.yaml", DOMAINS[0]),
            spec(0, "v1.33.1"),
        );
        publish(DOMAINS[0]);
        publish(DOMAINS[1]);
        for (i, hole) in fx.holes.iter().enumerate() {
            let port = hole.local_addr().unwrap().port();
            write(root, &format!(".kubeconfig/m{i}.yaml"), kubeconfig(port));
        }
        fx
    }

    fn clinv(&self, args: &[&str]) -> Run {
        clinv(args)
            .root(self.root.path())
            .store(self.store.path())
            .run()
    }

    /// Whether any black hole was reached.
    fn reached(&self) -> bool {
        self.holes.iter().any(|h| {
            h.set_nonblocking(true).unwrap();
            h.accept().is_ok()
        })
    }

    /// When each pending snapshot of `domain` was recorded (seconds since the epoch),
    /// as `snapshots list` says.
    fn pending_at(&self, domain: &str) -> Vec<f64> {
        let run = self
            .clinv(&["snapshots", "list", "--domain", domain, "-o", "json"])
            .success();
        let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
        v.iter()
            .filter(|s| s["state"] == "pending")
            .map(|s| seconds(s["at"].as_str().unwrap()))
            .collect()
    }
}

/// An RFC 3339 time (as the store writes it: UTC, `Z`, milliseconds) in seconds.
fn seconds(at: &str) -> f64 {
    let out = std::process::Command::new("date")
        .args(["-u", "-d", at, "+%s.%3N"])
        .output()
        .unwrap();
    assert!(out.status.success(), "date -d {at}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Every sample of a text exposition: `name{labels}` → value; `#` lines checked for form.
fn samples(text: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(
            out.insert(series.to_string(), value).is_none(),
            "twice: {line}"
        );
    }
    out
}

fn series(name: &str, domain: &str, channel: &str) -> String {
    format!("{name}{{domain=\"{domain}\",channel=\"{channel}\"}}")
}

fn the_exposition_says_what_each_domain_owes_from_the_store_alone() {
    let fx = Fx::new();
    let run = fx.clinv(&["status", "-A", "-o", "prometheus"]).success();
    assert_eq!(
        run.stderr,
        format!(
            "[info] 'apps.metrics.example' is a deploy domain: it has no inventory of its own; its cluster '{0}' carries the inventory (clinv render --domain {0})\n",
            DOMAINS[0]
        )
    );
    assert!(!fx.reached(), "a cluster was read");
    let got = samples(&run.stdout);
    let mut expected = BTreeMap::new();
    for (domain, owed) in DOMAINS.iter().zip([2.0, 1.0, 0.0]) {
        expected.insert(series("clinv_owed", domain, "cluster"), owed);
        for channel in ["git", "oci"] {
            expected.insert(series("clinv_owed", domain, channel), 0.0);
        }
        expected.insert(format!("clinv_store_readable{{domain=\"{domain}\"}}"), 1.0);
        let pending = fx.pending_at(domain);
        assert_eq!(pending.len() as f64, owed, "{domain}");
        if let Some(oldest) = pending.iter().copied().reduce(f64::min) {
            let name = "clinv_owed_oldest_timestamp_seconds";
            expected.insert(series(name, domain, "cluster"), oldest);
        }
    }
    // Nothing was ever delivered, no loop runs: no last delivery, next attempt or counter.
    assert_eq!(got, expected, "{}", run.stdout);
}

fn an_unreadable_store_is_said_and_the_others_still_exposed() {
    let fx = Fx::new();
    // A store folder clinv refuses to follow (a symbolic link) cannot be read.
    let objects = fx.store.path().join(DOMAINS[1]).join("objects");
    let moved = fx.store.path().join("elsewhere");
    std::fs::rename(&objects, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &objects).unwrap();
    let run = fx.clinv(&["status", "-A", "-o", "prometheus"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, &format!("[warn] status: {}: ", DOMAINS[1]));
    assert_has(&run.stderr, "symbolic link");
    let got = samples(&run.stdout);
    let of = |d: &str| got.keys().filter(|k| k.contains(d)).count();
    assert_eq!(
        got[&format!("clinv_store_readable{{domain=\"{}\"}}", DOMAINS[1])],
        0.0
    );
    assert_eq!(of(DOMAINS[1]), 1, "{}", run.stdout);
    assert_eq!(got[&series("clinv_owed", DOMAINS[0], "cluster")], 2.0);
    assert_eq!(got[&series("clinv_owed", DOMAINS[2], "cluster")], 0.0);
    // --strict: the warning is an error (exit 1), the exposition still written.
    let strict = fx.clinv(&["--strict", "status", "-A", "-o", "prometheus"]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    assert_eq!(strict.stdout, run.stdout);
}

fn one_domain_and_a_glob_expose_only_theirs() {
    let fx = Fx::new();
    let one = fx
        .clinv(&["status", "--domain", DOMAINS[1], "-o", "prometheus"])
        .success();
    let got = samples(&one.stdout);
    assert!(got.keys().all(|k| k.contains(DOMAINS[1])), "{}", one.stdout);
    assert_eq!(got[&series("clinv_owed", DOMAINS[1], "cluster")], 1.0);
    assert_eq!(got.len(), 5, "{}", one.stdout);
    let all = fx.clinv(&["status", "-A", "-o", "prometheus"]).success();
    let glob = fx
        .clinv(&[
            "status",
            "--domain",
            "?.metrics.example",
            "-o",
            "prometheus",
        ])
        .success();
    assert_eq!(glob.stdout, all.stdout);
    let repeated = fx
        .clinv(&[
            "status",
            "--domain",
            DOMAINS[0],
            "--domain",
            DOMAINS[1],
            "-o",
            "prometheus",
        ])
        .success();
    let got = samples(&repeated.stdout);
    assert!(
        got.keys().all(|k| !k.contains(DOMAINS[2])),
        "{}",
        repeated.stdout
    );
    assert_eq!(got[&series("clinv_owed", DOMAINS[0], "cluster")], 2.0);
    assert_eq!(got[&series("clinv_owed", DOMAINS[1], "cluster")], 1.0);
    assert!(!fx.reached(), "a cluster was read");
}

fn promtool_accepts_the_exposition() {
    let fx = Fx::new();
    let run = fx.clinv(&["status", "-A", "-o", "prometheus"]).success();
    check_metrics(&run.stdout).unwrap();
    // The check can fail: a counter without its suffix is a finding.
    let bad = "# HELP x_events Events.\n# TYPE x_events counter\nx_events 1\n";
    assert!(check_metrics(bad).is_err());
}

/// Issue 51, finding 4: the shipped alert rules (`examples/alerts/clinv.rules.yml`) pass
/// their `promtool test rules` cases — a dark site, a stopped loop, a delivery, a refusal,
/// an error of clinv's own — and those cases catch the guide's old mistakes: a rule on the
/// raw series resolves when the loop stops.
fn the_alert_rules_pass_their_promtool_tests() {
    let dir = example().join("../alerts");
    let test = |dir: &Path| {
        std::process::Command::new("promtool")
            .args(["test", "rules", "clinv.rules.test.yml"])
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let out = test(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let broken = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(dir.join("clinv.rules.yml")).unwrap();
    let naive = rules.replace(
        "last_over_time(clinv_owed_oldest_timestamp_seconds{channel=\"cluster\"}[1h])",
        "clinv_owed_oldest_timestamp_seconds{channel=\"cluster\"}",
    );
    assert_ne!(naive, rules);
    std::fs::write(broken.path().join("clinv.rules.yml"), naive).unwrap();
    std::fs::copy(
        dir.join("clinv.rules.test.yml"),
        broken.path().join("clinv.rules.test.yml"),
    )
    .unwrap();
    assert!(!test(broken.path()).status.success(), "the cases catch it");
}

fn a_real_prometheus_scrapes_the_loops_server() {
    use clinv::view::metrics::{CONTENT_TYPE, Channel, Facts, Row, encode};
    let facts = Facts {
        rows: vec![Row {
            owed: 3,
            oldest_owed_ms: Some(1_764_936_000_000),
            ..Row::new("x", Channel::Cluster)
        }],
        ..Facts::default()
    };
    let server =
        clinv::ops::serve::start("127.0.0.1:0", CONTENT_TYPE, move || encode(&facts)).unwrap();
    let prometheus = Prometheus::scraping(&server.local_addr().to_string());
    let within = Duration::from_secs(20);
    assert_eq!(
        prometheus.values_within("clinv_owed{domain=\"x\"}", within),
        [3.0]
    );
    let age = "time() - clinv_owed_oldest_timestamp_seconds{channel=\"cluster\"} > 86400";
    assert_eq!(prometheus.query(age).len(), 1);
    assert_eq!(prometheus.values_within("up{job=\"clinv\"}", within), [1.0]);
}
