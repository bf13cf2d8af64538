//! Issue 16, findings 8 and 10: times a person reads. `snapshots list` has a kubectl AGE
//! column (the absolute RFC 3339 time in `-o wide` and in JSON); `status` shows the
//! domain's queue, when a snapshot was last applied and how old the inventory is, and says
//! on stdout when what it shows is a stored snapshot (the cluster could not be read).
//!
//! The journals are written by hand (`v1.rs`) with times relative to now, chosen so that
//! the age they print does not change while the test runs (hours, not seconds).

use crate::support::*;
use crate::v1::{self, Journal};
use std::path::Path;

const HOUR: i64 = 3600;

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// A copy of the `inv` fixture, a store of its own, and a cluster that refuses
/// connections.
struct Fx {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Fx {
    fn new() -> Fx {
        Fx {
            dir: copy_tree(&fixture("inv")),
            store: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> &Path {
        self.store.path()
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let kc = repo().join("examples/offline.kubeconfig");
        let mut all = vec!["--root", &root];
        all.extend(aimed(args, kc.to_str().unwrap()));
        all.extend_from_slice(args);
        clinv(&all).store(self.store())
    }

    /// `inv`'s journal: 0xa1 recorded 400 days ago and applied 50 hours ago, 0xa2
    /// recorded 5 hours ago and 0xa3 recorded 30 minutes ago (both pending, 0xa3 the
    /// newest). Returns `now` as the journal was written.
    fn journal(&self) -> i64 {
        let objects = v1::render(self.root(), "inv");
        let now = now();
        let mut journal = Journal::create(self.store(), "inv");
        journal.objects(&objects);
        journal.snapshot(&v1::id(0xa1), now - 400 * 24 * HOUR, &objects);
        journal.state(&v1::id(0xa1), now - 50 * HOUR, "applied");
        journal.snapshot(&v1::id(0xa2), now - 5 * HOUR, &objects);
        journal.snapshot(&v1::id(0xa3), now - HOUR / 2, &objects);
        journal.finish();
        now
    }
}

/// Columns split on runs of two or more spaces (a cell never holds two spaces here).
fn columns(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

fn snapshots_list_has_an_age_column_and_absolute_times_in_wide_and_json() {
    let fx = Fx::new();
    let now = fx.journal();
    // The streamed table: AGE (of the recorded time), no absolute times.
    let table = fx.clinv(&["snapshots", "list"]).run().success().stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        columns(lines[0]),
        ["DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE"],
        "{table}"
    );
    let row = |id: u64| {
        lines
            .iter()
            .map(|l| columns(l))
            .find(|c| c[1] == v1::id(id))
            .unwrap_or_else(|| panic!("no row {id:x}: {table}"))
    };
    assert_eq!(row(0xa1)[2..], ["applied", "-", v1::OFFLINE_SERVER, "400d"]);
    assert_eq!(row(0xa2)[5], "5h", "{table}");
    assert_eq!(row(0xa3)[5], "30m", "{table}");
    assert!(!table.contains(&v1::at(now - 5 * HOUR)), "{table}");
    // Newest first, as before.
    assert_eq!(columns(lines[1])[1], v1::id(0xa3), "{table}");
    // The header pads AGE as wide as its widest cell (aligned columns).
    let at = lines[0].find("AGE").unwrap();
    assert!(lines[1..].iter().all(|l| l.len() > at), "{table}");

    // `--no-headers` and `--state` keep the column.
    let pending = fx
        .clinv(&["snapshots", "list", "--state", "pending", "--no-headers"])
        .run()
        .success()
        .stdout;
    let ages: Vec<String> = pending
        .lines()
        .map(|l| columns(l).last().unwrap().to_string())
        .collect();
    assert_eq!(ages, ["30m", "5h"], "{pending}");

    // `-o wide`: the same columns, then the absolute recorded and rendered times.
    let wide = fx
        .clinv(&["snapshots", "list", "-o", "wide"])
        .run()
        .success()
        .stdout;
    let wlines: Vec<&str> = wide.lines().collect();
    assert_eq!(
        columns(wlines[0]),
        [
            "DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE", "RECORDED", "RENDERED", "SPECHASH",
            "LOK8S", "TOOL"
        ],
        "{wide}"
    );
    let w = columns(wlines[3]);
    assert_eq!(w[1], v1::id(0xa1), "{wide}");
    assert_eq!(w[5], "400d", "{wide}");
    assert_eq!(w[6], v1::at(now - 400 * 24 * HOUR), "{wide}");
    assert!(
        w[6].parse::<jiff::Timestamp>().is_ok() && w[7].ends_with('Z'),
        "{wide}"
    );

    // JSON: absolute RFC 3339 times, no ages.
    let json = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success()
        .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == v1::id(0xa2).as_str())
        .unwrap();
    assert_eq!(first["at"], v1::at(now - 5 * HOUR).as_str(), "{json}");
    assert!(first.get("age").is_none(), "{json}");
}

/// The cluster cannot be read: status shows the snapshot applied last — never the newer
/// pending ones, which never reached it — says so on stdout first, and exits 16;
/// `--offline` shows the same snapshot by request, exit 0.
fn status_offline_says_on_stdout_that_it_shows_a_snapshot_with_the_queue() {
    let fx = Fx::new();
    let now = fx.journal();
    let run = fx.clinv(&["status", "--domain", "inv"]).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.starts_with("--- Inventory (NOT the live cluster, which was not read (unreachable: ")
            && out.lines().next().unwrap().ends_with(&format!(
                "): snapshot {}, applied {}) ---",
                v1::id(0xa1),
                v1::at(now - 50 * HOUR)
            )),
        "{out}"
    );
    let section = out
        .split_once("\n--- Delivery (inv) ---\n")
        .unwrap_or_else(|| panic!("no delivery section: {out}"))
        .1;
    let lines: Vec<&str> = section.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "  source:       snapshot {} (applied last; the live cluster was not read: unreachable: ",
            v1::id(0xa1)
        )),
        "{out}"
    );
    assert!(
        lines.contains(&format!("  applied:      2d2h ago ({})", v1::at(now - 50 * HOUR)).as_str()),
        "applied age: {out}"
    );
    assert!(
        lines.contains(
            &format!(
                "  last applied: 2d2h ago ({}, snapshot {})",
                v1::at(now - 50 * HOUR),
                v1::id(0xa1)
            )
            .as_str()
        ),
        "last applied: {out}"
    );
    assert!(
        lines.contains(&"  queue:        2 pending, oldest 5h ago"),
        "queue: {out}"
    );
    // --offline: the same snapshot, asked for.
    let offline = fx
        .clinv(&["status", "--domain", "inv", "--offline"])
        .run()
        .success();
    assert!(
        offline.stdout.starts_with(&format!(
            "--- Inventory (snapshot {}, applied {}; --offline) ---\n",
            v1::id(0xa1),
            v1::at(now - 50 * HOUR)
        )),
        "{}",
        offline.stdout
    );

    // Nothing pending, nothing applied: nothing to show, and still not the cluster.
    let fx = Fx::new();
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    journal.snapshot(&v1::id(0xb1), now - 3 * HOUR, &objects);
    journal.state(&v1::id(0xb1), now - 3 * HOUR, "superseded");
    journal.finish();
    let run = fx.clinv(&["status", "--domain", "inv"]).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    let out = run.stdout;
    assert!(
        out.starts_with("--- Inventory: the live cluster was not read ("),
        "{out}"
    );
    assert!(out.contains("\n  last applied: never\n"), "{out}");
    assert!(out.contains("\n  queue:        empty\n"), "{out}");
}

fn status_json_has_the_queue_last_applied_and_recorded_times() {
    let fx = Fx::new();
    let now = fx.journal();
    let run = fx.clinv(&["status", "--domain", "inv", "-o", "json"]).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["schemaVersion"], 3, "{}", run.stdout);
    assert_eq!(v["source"], "snapshot");
    assert_eq!(v["live"], false);
    assert!(
        v["notRead"]
            .as_str()
            .is_some_and(|r| r.starts_with("unreachable: ")),
        "{}",
        run.stdout
    );
    assert_eq!(v["snapshot"], v1::id(0xa1).as_str());
    assert_eq!(v["appliedAt"], v1::at(now - 50 * HOUR).as_str());
    assert!(v["createdAt"].is_null(), "{}", run.stdout);
    assert!(
        v["renderedAt"]
            .as_str()
            .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()),
        "{}",
        run.stdout
    );
    assert_eq!(
        v["lastApplied"],
        serde_json::json!({"at": v1::at(now - 50 * HOUR), "snapshot": v1::id(0xa1)})
    );
    assert_eq!(
        v["queue"],
        serde_json::json!({"pending": 2, "oldestPendingAt": v1::at(now - 5 * HOUR)})
    );
    assert_eq!(v["inventory"]["kind"], "ClusterInventory");
}

trials! {
    Nothing: [
        snapshots_list_has_an_age_column_and_absolute_times_in_wide_and_json,
        status_offline_says_on_stdout_that_it_shows_a_snapshot_with_the_queue,
        status_json_has_the_queue_last_applied_and_recorded_times,
    ],
}
