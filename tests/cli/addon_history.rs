//! Issue 40, item 2: `clinv log -A --addon NAME` — the fleet's history of one addon: every
//! selected domain's steps that touch it, merged in time order, each line naming its
//! domain — over the three-site fleet of `compare.rs` with a history of three dates:
//!
//! - 2026-03-01: every cluster domain recorded (air v1.18.0, fsn v1.19.0, nbg v1.20.1,
//!   nbg-5 v1.21.0-rc.1);
//! - 2026-03-10: fsn's site pin moves to v1.20.1 (five upgrades);
//! - 2026-03-20: nbg-5 drops its release candidate (back to the project's v1.20.1), and
//!   air-1 changes something else (Kubernetes): a step that does not touch cert-manager.

use crate::compare::{SITES, domain, sites, spec};
use crate::support::*;
use crate::v1::{self, Journal};
use std::collections::BTreeMap;
use std::path::Path;

const MARCH_1: i64 = 1_772_359_200; // 2026-03-01T10:00:00Z
const DAY: i64 = 86_400;

/// The fleet and its store (v1 journals written by hand, at fixed dates).
struct Fleet {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        let dir = sites();
        let store = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut journals: BTreeMap<String, Journal> = BTreeMap::new();
        let mut n = 0;
        let mut record = |journals: &mut BTreeMap<String, Journal>, d: &str, at: i64| {
            let objects = v1::render(root, d);
            let journal = journals
                .entry(d.to_string())
                .or_insert_with(|| Journal::create(store.path(), d));
            journal.objects(&objects);
            n += 1;
            journal.snapshot(&v1::id(n), at, &objects);
            journal.state(&v1::id(n), at + 60, "applied");
        };
        for (site, _) in SITES {
            for i in 1..=5 {
                record(&mut journals, &domain(site, i), MARCH_1);
            }
        }
        // air-2 drops local-path-provisioner two days later: an addon gone before a window.
        let air2 = root.join(format!("clusters/{}/cluster.lok8s.yaml", domain("air", 2)));
        let text = std::fs::read_to_string(&air2).unwrap();
        std::fs::write(&air2, text.replace("    - local-path-provisioner\n", "")).unwrap();
        record(&mut journals, &domain("air", 2), MARCH_1 + 2 * DAY);
        let pin = root.join("clusters/.sites/fsn/cert-manager/chart.yaml");
        let text = std::fs::read_to_string(&pin).unwrap();
        std::fs::write(&pin, text.replace("v1.19.0", "v1.20.1")).unwrap();
        for i in 1..=5 {
            record(
                &mut journals,
                &domain("fsn", i),
                MARCH_1 + 9 * DAY + i as i64,
            );
        }
        spec(root, "nbg", 5, "cert-manager");
        record(&mut journals, &domain("nbg", 5), MARCH_1 + 19 * DAY);
        let air1 = root.join(format!("clusters/{}/cluster.lok8s.yaml", domain("air", 1)));
        let text = std::fs::read_to_string(&air1).unwrap();
        std::fs::write(&air1, text.replace("v1.32.3", "v1.32.4")).unwrap();
        record(&mut journals, &domain("air", 1), MARCH_1 + 19 * DAY + 3600);
        for (_, journal) in journals {
            journal.finish();
        }
        Fleet { dir, store }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn log(&self, args: &[&str]) -> Run {
        let root = self.root().to_str().unwrap();
        clinv(&[&["log", "--root", root][..], args].concat())
            .store(self.store.path())
            .run()
    }
}

/// The whole history of cert-manager across the fleet: the fifteen first steps, fsn's
/// five upgrades, nbg-5's change — newest first, a line each naming its domain; air-1's
/// Kubernetes step is not one of them.
fn the_fleet_history_of_one_addon() {
    let fx = Fleet::new();
    let run = fx.log(&["-A", "--addon", "cert-manager"]).success();
    golden("fleet/addon-log.cert-manager.txt", &run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 21, "{}", run.stdout);
    assert!(
        lines[0].starts_with("nbg-5.acme.example  ~ cert-manager v1.21.0-rc.1 → v1.20.1"),
        "{}",
        lines[0]
    );
    assert_lacks(&run.stdout, "kubernetesVersion");
    assert_lacks(&run.stdout, "v1.32.4");
    // `--oneline` is the same: an addon's history is a line per step already.
    let oneline = fx
        .log(&["-A", "--addon", "cert-manager", "--oneline"])
        .success();
    assert_eq!(oneline.stdout, run.stdout);
}

/// A window, a glob, JSON: the entries of `log -A -o json`, each with its domain, its
/// changes only the addon's (and its summary counting them).
fn a_window_of_one_site_as_json() {
    let fx = Fleet::new();
    let run = fx
        .log(&[
            "--domain",
            "fsn-*",
            "--addon",
            "cert-manager",
            "--since",
            "2026-03-05",
            "-o",
            "json",
        ])
        .success();
    let items: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(items.len(), 5, "{}", run.stdout);
    // Newest first: fsn-5 was recorded last.
    assert_eq!(items[0]["domain"], "fsn-5.acme.example");
    assert_eq!(items[4]["domain"], "fsn-1.acme.example");
    for item in &items {
        assert_eq!(item["initial"], false);
        assert_eq!(item["summary"]["upgraded"], 1, "{item}");
        let changes = item["changes"].as_array().unwrap();
        assert!(
            changes
                .iter()
                .all(|c| c["addon"] == "cert-manager" && c["from"] == "v1.19.0"),
            "{item}"
        );
    }
    // The whole fleet since then: fsn's five and nbg-5, oldest first with --reverse.
    let all = fx
        .log(&[
            "-A",
            "--addon",
            "cert-manager",
            "--since",
            "2026-03-05",
            "--reverse",
            "--max-count",
            "2",
        ])
        .success();
    let lines: Vec<&str> = all.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", all.stdout);
    assert!(lines[0].starts_with("fsn-5.acme.example"), "{}", all.stdout);
    assert!(lines[1].starts_with("nbg-5.acme.example"), "{}", all.stdout);
    // A window with no step of the addon: said, no data, exit 0.
    let none = fx
        .log(&["-A", "--addon", "cert-manager", "--since", "2026-04-01"])
        .success();
    assert_eq!(none.stdout, "");
    assert_has(
        &none.stderr,
        "[info] no step of any selected domain changes cert-manager since 2026-04-01",
    );
}

/// A misspelled addon is said with the closest name (with --strict: an error), never
/// answered as "never changed"; other flags that read one domain are still refused.
/// An addon a domain dropped before the window is no misspelling: the window has no step
/// of it, said as such — never "does not appear", which only a whole history can tell.
fn an_addon_gone_before_the_window_is_not_called_unknown() {
    let fx = Fleet::new();
    let air2 = domain("air", 2);
    let args = ["--domain", air2.as_str(), "--domain", "air-3*", "--addon"];
    let run = fx
        .log(
            &[
                &args[..],
                &["local-path-provisioner", "--since", "2026-03-05"],
            ]
            .concat(),
        )
        .success();
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_has(
        &run.stderr,
        "[info] no step of any selected domain changes local-path-provisioner since 2026-03-05",
    );
    assert_lacks(&run.stderr, "did you mean");
    // The whole history has the step that dropped it.
    let whole = fx
        .log(&[&args[..], &["local-path-provisioner"]].concat())
        .success();
    assert_has(&whole.stdout, &air2);
}

fn a_misspelled_addon_and_refused_forms() {
    let fx = Fleet::new();
    let typo = fx.log(&["-A", "--addon", "cert-manger"]).success();
    assert_eq!(
        typo.stdout,
        "cert-manger never appears in the history of the selected domains\n"
    );
    assert_has(
        &typo.stderr,
        "[warn] no addon 'cert-manger' in the history of the selected domains — did you mean 'cert-manager'?",
    );
    let strict = fx.log(&["-A", "--addon", "cert-manger", "--strict"]);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    let json = fx
        .log(&["-A", "--addon", "cert-manger", "-o", "json"])
        .success();
    assert_eq!(json.stdout, "[]\n");
    let md = fx.log(&["-A", "--addon", "cert-manager", "-o", "markdown"]);
    assert_eq!(md.code, 2, "{}", md.stderr);
    let bad = fx.log(&["-A", "--addon", "cert-manager", "--since", "someday"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_has(&bad.stderr, "'someday' is not a date");
}

trials! {
    Nothing: [
        the_fleet_history_of_one_addon,
        a_window_of_one_site_as_json,
        a_misspelled_addon_and_refused_forms,
        an_addon_gone_before_the_window_is_not_called_unknown,
    ],
}
