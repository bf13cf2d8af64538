//! `clinv replay --all` under one budget, without a cluster: many domains, each routed
//! to its own server that never answers (a listening socket nobody accepts from) —
//! every domain is reported, each with the reason `unreachable`, and everything stays
//! queued. How long it takes is the benchmark's business (`scripts/bench.py
//! replay-all`), not a test's.

use crate::support::*;
use std::net::TcpListener;

/// More domains than `replay --all` probes at once (64), so the queue is exercised.
const DOMAINS: usize = 70;

struct Fx {
    root: tempfile::TempDir,
    store: tempfile::TempDir,
    /// The black holes, held open for the test's life.
    holes: Vec<TcpListener>,
    domains: Vec<String>,
}

fn kubeconfig(port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

impl Fx {
    /// A project of [`DOMAINS`] domains, each with its own `.kubeconfig/<name>.yaml`
    /// reaching its own black hole, and one snapshot queued per domain.
    fn new() -> Fx {
        let root = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        copy_dir(&example().join(".lok8s"), &root.path().join(".lok8s"));
        let refused = refused_port();
        let mut holes = Vec::new();
        let mut domains = Vec::new();
        for i in 0..DOMAINS {
            let domain = format!("d{i:03}.many.example");
            write(
                root.path(),
                &format!("clusters/{domain}/cluster.lok8s.yaml"),
                format!(
                    "kind: Lo\nmetadata:\n  name: m{i:03}\nspec:\n  kubernetes:\n    version: v1.32.3\n"
                ),
            );
            // Refused while publishing (so it queues at once), a black hole afterwards.
            write(
                root.path(),
                &format!(".kubeconfig/m{i:03}.yaml"),
                kubeconfig(refused),
            );
            holes.push(TcpListener::bind("127.0.0.1:0").unwrap());
            domains.push(domain);
        }
        let fx = Fx {
            root,
            store,
            holes,
            domains,
        };
        for d in &fx.domains {
            let run = fx.clinv(&["publish", "--domain", d]).run().success();
            assert_has(&run.stderr, "recorded as pending snapshot");
        }
        for (i, hole) in fx.holes.iter().enumerate() {
            let port = hole.local_addr().unwrap().port();
            let file = format!(".kubeconfig/m{i:03}.yaml");
            write(fx.root.path(), &file, kubeconfig(port));
        }
        fx
    }

    fn clinv(&self, args: &[&str]) -> Args {
        let mut all = vec![
            "--root".to_string(),
            self.root.path().to_str().unwrap().to_string(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        Args {
            args: all,
            store: self.store.path().to_path_buf(),
        }
    }

    /// How many holes were reached since the last call (each takes one connection).
    fn reached(&self) -> usize {
        self.holes
            .iter()
            .filter(|h| {
                h.set_nonblocking(true).unwrap();
                h.accept().is_ok()
            })
            .count()
    }

    /// (state, reason) of each domain's newest snapshot.
    fn states(&self) -> Vec<(String, String, String)> {
        let run = self
            .clinv(&["snapshots", "list", "-o", "json"])
            .run()
            .success();
        let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
        v.iter()
            .map(|s| {
                let text = |k: &str| s[k].as_str().unwrap_or("-").to_string();
                (text("domain"), text("state"), text("reason"))
            })
            .collect()
    }
}

struct Args {
    args: Vec<String>,
    store: std::path::PathBuf,
}

impl Args {
    fn run(self) -> Run {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        clinv(&args).store(&self.store).run()
    }
}

/// Every domain in the table once, in order, `pending (unreachable)`.
fn assert_table(fx: &Fx, stdout: &str) {
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next().map(str::split_whitespace).map(Vec::from_iter),
        Some(vec!["DOMAIN", "RESULT", "DETAIL"]),
        "{stdout}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), fx.domains.len(), "{stdout}");
    for (row, d) in rows.iter().zip(&fx.domains) {
        let cells: Vec<&str> = row.split("  ").filter(|c| !c.is_empty()).collect();
        assert_eq!(
            cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
            [d.as_str(), "pending (unreachable)", "1 snapshot(s)"],
            "{row}"
        );
    }
}

fn assert_all_queued(fx: &Fx) {
    let states = fx.states();
    assert_eq!(states.len(), fx.domains.len());
    for (d, state, reason) in states {
        assert_eq!(
            (state.as_str(), reason.as_str()),
            ("pending", "unreachable"),
            "{d}"
        );
    }
}

fn replay_all_reports_every_black_holed_domain_and_keeps_them_queued() {
    let fx = Fx::new();
    let run = fx
        .clinv(&[
            "replay",
            "--all",
            "--timeout",
            "20",
            "--probe-timeout",
            "0.5",
        ])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_table(&fx, &run.stdout);
    for d in &fx.domains {
        let line = run
            .stderr
            .lines()
            .find(|l| l.contains(&format!("ClusterInventory for {d}: cluster unreachable")))
            .unwrap_or_else(|| panic!("{d}: {}", run.stderr));
        // Probed over its own kubeconfig (or, on a starved machine, not tried in time).
        assert!(
            line.contains("no answer within") || line.contains("not tried"),
            "{line}"
        );
        assert!(line.ends_with("— 1 snapshot(s) stay pending"), "{line}");
    }
    assert_all_queued(&fx);
    // Each hole was reached by its own domain (its own .kubeconfig/<name>.yaml).
    let reached = fx.reached();
    let probed = run.stderr.matches("no answer within").count();
    assert!(
        reached >= probed && probed > 0,
        "{reached} reached, {probed} probed"
    );

    // --strict: the worst reason's code.
    let run = fx
        .clinv(&["replay", "--all", "--strict", "--timeout", "0.05"])
        .run();
    assert_eq!(run.code, 5, "{}", run.stderr);
}

fn replay_all_out_of_budget_tries_nothing_and_says_so_for_each_domain() {
    let fx = Fx::new();
    // A budget smaller than what is kept back for recording: nothing is started.
    let run = fx.clinv(&["replay", "--all", "--timeout", "0.05"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_table(&fx, &run.stdout);
    assert_eq!(
        run.stderr
            .matches("cluster unreachable: not tried: the command's --timeout (0.05s) ran out — 1 snapshot(s) stay pending")
            .count(),
        fx.domains.len(),
        "{}",
        run.stderr
    );
    for h in &fx.holes {
        h.set_nonblocking(true).unwrap();
        assert!(h.accept().is_err(), "nothing was sent");
    }
    assert_all_queued(&fx);
}

/// kubectl's `-A` (and `--all-domains`) is `--all`.
fn replay_dash_a_is_all_domains() {
    let fx = Fx::new();
    for flag in ["-A", "--all-domains"] {
        let run = fx.clinv(&["replay", flag, "--timeout", "0.05"]).run();
        assert_eq!(run.code, 0, "{flag}: {}", run.stderr);
        assert_table(&fx, &run.stdout);
    }
    let run = fx.clinv(&["replay", "-A", "--domain", "x.example"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    // The closing table as data: -o json and -o yaml, one entry per domain.
    let json = fx
        .clinv(&["replay", "-A", "--timeout", "0.05", "-o", "json"])
        .run();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows.len(), fx.domains.len(), "{}", json.stdout);
    assert!(
        rows.iter().all(|r| r["result"] == "pending (unreachable)"),
        "{}",
        json.stdout
    );
    let yaml = fx
        .clinv(&["replay", "-A", "--timeout", "0.05", "-o", "yaml"])
        .run();
    let same: Vec<serde_json::Value> = serde_saphyr::from_str(&yaml.stdout).unwrap();
    assert_eq!(same.len(), rows.len(), "{}", yaml.stdout);
    // -o belongs to --all's table.
    let run = fx.clinv(&["replay", "-o", "json"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_all_queued(&fx);
}

/// `drift -A` and `status -A` read the domains' clusters in parallel: against 70 black
/// holes, with a budget of three probe timeouts, every domain is probed and reported
/// "not read" — in turn, all but three would be "not tried".
fn drift_and_status_all_probe_every_black_holed_domain_within_the_timeout() {
    let fx = Fx::new();
    for command in ["drift", "status"] {
        let run = fx
            .clinv(&[command, "-A", "--timeout", "3", "--probe-timeout", "1"])
            .run();
        assert_eq!(run.code, 16, "{command}: {}", run.stderr);
        for d in &fx.domains {
            let row = run
                .stdout
                .lines()
                .find(|l| l.starts_with(d.as_str()))
                .unwrap_or_else(|| panic!("{command} {d}: {}", run.stdout));
            assert!(!row.contains("not tried"), "{command}: {row}");
        }
        let reached = fx.reached();
        assert_eq!(reached, fx.domains.len(), "{command}: {}", run.stdout);
    }
}

/// `publish -A` out of budget: every domain is still recorded and queued (offline
/// first) and reported — in the table and in `-o json` — those the budget did not reach
/// "not tried" on stderr, without a connection; the exit code is lok8s's fail-soft 0.
fn publish_all_out_of_budget_records_every_domain() {
    let fx = Fx::new();
    let pending = |fx: &Fx| {
        let states = fx.states();
        states.iter().filter(|(_, s, _)| s == "pending").count()
    };
    let before = pending(&fx);
    let run = fx
        .clinv(&["publish", "-A", "--timeout", "0.05", "-o", "json"])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let domains: Vec<&str> = rows.iter().map(|r| r["domain"].as_str().unwrap()).collect();
    assert_eq!(domains, fx.domains, "{}", run.stdout);
    assert!(
        rows.iter().all(|r| r["result"] == "pending (unreachable)"),
        "{}",
        run.stdout
    );
    let untried = run
        .stderr
        .matches("not tried: the command's --timeout (0.05s) ran out")
        .count();
    assert!(
        untried > 0 && untried + fx.reached() <= fx.domains.len(),
        "{}",
        run.stderr
    );
    assert_eq!(
        pending(&fx),
        before + fx.domains.len(),
        "every domain recorded"
    );
    let table = fx.clinv(&["publish", "-A", "--timeout", "0.05"]).run();
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert_eq!(
        table.stdout.matches(" pending (unreachable) ").count(),
        fx.domains.len(),
        "{}",
        table.stdout
    );
}

trials! {
    Nothing: [
        publish_all_out_of_budget_records_every_domain,
        drift_and_status_all_probe_every_black_holed_domain_within_the_timeout,
        replay_all_reports_every_black_holed_domain_and_keeps_them_queued,
        replay_all_out_of_budget_tries_nothing_and_says_so_for_each_domain,
        replay_dash_a_is_all_domains,
    ],
}
