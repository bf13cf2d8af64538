//! The fleet as it was (`fleet --at`, `--changed-since`), the fleet report (`report -A`)
//! and the grouped fleet timeline (`log -A --oneline`), over [`FleetHistory`]: a shared
//! fixture of a fleet of three sites with a recorded history of several dates.

use crate::support::*;
use crate::v1::{self, Journal, Objects};
use std::path::PathBuf;

/// The three sites' cluster domains: `fsn-N`, `hel-N`, `nbg-N` (`.fleet.example`), so
/// that `--domain 'fsn-*'` selects a site.
pub const SITES: [(&str, usize); 3] = [("fsn", 5), ("hel", 5), ("nbg", 4)];

/// A deploy domain of the fleet (its cluster: `fsn-1`).
pub const DEPLOY: &str = "apps-fsn.fleet.example";

/// A domain whose spec does not parse.
pub const BROKEN: &str = "nbg-9.fleet.example";

/// UTC seconds of `YYYY-MM-DDTHH:MM:SSZ`.
pub fn secs(rfc3339: &str) -> i64 {
    rfc3339.parse::<jiff::Timestamp>().unwrap().as_second()
}

/// A fleet of 14 cluster domains in three sites (five in `fsn`, five in `hel`, four in
/// `nbg`), a deploy domain and a domain whose spec does not parse, each cluster domain
/// with four addons (the `hel` site on a per-site cert-manager pin, `v1.18.0` where the
/// others run `v1.20.1`), and a store with this recorded history (UTC):
///
/// | when | what |
/// |---|---|
/// | 2026-03-01 10:00 | every domain but `nbg-4`: cilium 1.18.4 |
/// | 2026-03-15 09:00–10:20 | cilium 1.18.4 → 1.19.2 on the five `fsn` domains, 20 min apart |
/// | 2026-04-02 23:00 – 04-03 01:00 | the same on the five `hel` domains, 30 min apart (across midnight) |
/// | 2026-04-05 12:00 | `nbg-4` first recorded (cilium 1.19.2) |
/// | 2026-05-10 08:00–08:20 | cilium 1.18.4 → 1.19.2 on `nbg-1`..`nbg-3`; `nbg-1` also metrics-server 3.12.2 → 3.13.0 |
/// | 2026-05-20 12:00 | `nbg-2` recorded again, no change |
/// | 2026-06-01 07:00 | `fsn-1` (the canary): cilium 1.19.2 → 1.20.0 |
///
/// Each snapshot is recorded applied a minute later. The project renders what the newest
/// snapshots hold except `fsn-1`'s cilium (the project has 1.19.2).
pub struct FleetHistory {
    dir: tempfile::TempDir,
}

/// One recorded change of the fixture's history: when, which domains, and the
/// versions of (addon, version) it sets.
pub struct Step {
    pub at: &'static str,
    /// Seconds between two domains of the step.
    pub apart: i64,
    pub domains: Vec<String>,
    pub set: Vec<(&'static str, &'static str)>,
}

impl FleetHistory {
    /// Every cluster domain, in name order.
    pub fn domains() -> Vec<String> {
        let mut all: Vec<String> = SITES
            .iter()
            .flat_map(|(site, n)| (1..=*n).map(move |i| format!("{site}-{i}.fleet.example")))
            .collect();
        all.sort();
        all
    }

    /// The site's domains.
    pub fn site(site: &str) -> Vec<String> {
        Self::domains()
            .into_iter()
            .filter(|d| d.starts_with(&format!("{site}-")))
            .collect()
    }

    /// The history above, oldest first.
    pub fn steps() -> Vec<Step> {
        let but_nbg4 = Self::domains()
            .into_iter()
            .filter(|d| !d.starts_with("nbg-4"))
            .collect();
        let nbg = |ns: &[usize]| -> Vec<String> {
            ns.iter()
                .map(|n| format!("nbg-{n}.fleet.example"))
                .collect()
        };
        vec![
            Step {
                at: "2026-03-01T10:00:00Z",
                apart: 0,
                domains: but_nbg4,
                set: vec![("cilium", "1.18.4")],
            },
            Step {
                at: "2026-03-15T09:00:00Z",
                apart: 20 * 60,
                domains: Self::site("fsn"),
                set: vec![("cilium", "1.19.2")],
            },
            Step {
                at: "2026-04-02T23:00:00Z",
                apart: 30 * 60,
                domains: Self::site("hel"),
                set: vec![("cilium", "1.19.2")],
            },
            Step {
                at: "2026-04-05T12:00:00Z",
                apart: 0,
                domains: nbg(&[4]),
                set: vec![("cilium", "1.19.2")],
            },
            Step {
                at: "2026-05-10T08:00:00Z",
                apart: 10 * 60,
                domains: nbg(&[1, 2, 3]),
                set: vec![("cilium", "1.19.2")],
            },
            Step {
                at: "2026-05-10T08:00:00Z",
                apart: 0,
                domains: nbg(&[1]),
                set: vec![("cilium", "1.19.2"), ("metrics-server", "3.13.0")],
            },
            Step {
                at: "2026-05-20T12:00:00Z",
                apart: 0,
                domains: nbg(&[2]),
                set: vec![],
            },
            Step {
                at: "2026-06-01T07:00:00Z",
                apart: 0,
                domains: vec!["fsn-1.fleet.example".into()],
                set: vec![("cilium", "1.20.0")],
            },
        ]
    }

    pub fn new() -> FleetHistory {
        let dir = tempfile::tempdir().unwrap();
        let fx = FleetHistory { dir };
        fx.write_project();
        fx.write_store();
        fx
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn store(&self) -> PathBuf {
        self.dir.path().join("snapshots")
    }

    /// Somewhere that is no project.
    pub fn away(&self) -> PathBuf {
        let away = self.dir.path().join("away");
        std::fs::create_dir_all(&away).unwrap();
        away
    }

    /// `clinv ARGS` outside any project, with `--snapshots` the fixture's store.
    pub fn on_store(&self, args: &[&str]) -> Run {
        self.away_from(args).run()
    }

    /// [`FleetHistory::on_store`], to run.
    pub fn away_from(&self, args: &[&str]) -> Clinv {
        let store = self.store();
        let mut all = vec!["--snapshots", store.to_str().unwrap()];
        all.extend_from_slice(args);
        clinv(&all).env_remove("CLINV_SNAPSHOTS").cwd(&self.away())
    }

    /// `clinv ARGS` in the project, its store `<root>/snapshots`... the fixture's.
    pub fn in_project(&self, args: &[&str]) -> Run {
        clinv(args)
            .cwd(&self.root())
            .env("CLINV_SNAPSHOTS", self.store().to_str().unwrap())
            .run()
    }

    fn write_project(&self) {
        let root = self.root();
        copy_dir(&example().join(".lok8s"), &root.join(".lok8s"));
        let pin = example().join("clusters/lab.acme.example/addons");
        for domain in Self::domains() {
            let short = domain.split('.').next().unwrap();
            let dir = root.join("clusters").join(&domain);
            let certs = if short.starts_with("hel-") {
                copy_dir(&pin, &dir.join("addons"));
                "./addons/cert-manager"
            } else {
                "cert-manager"
            };
            write(
                &dir,
                "cluster.lok8s.yaml",
                format!(
                    "kind: Lo\nmetadata:\n  name: {short}\nspec:\n  kubernetes:\n    version: v1.32.3\n  bootstrap:\n    - cilium\n    - {certs}\n    - metrics-server\n    - ingress-nginx\n"
                ),
            );
        }
        write(
            &root.join("clusters").join(DEPLOY),
            "deploy.lok8s.yaml",
            "kind: Deploy\nmetadata:\n  name: apps-fsn\nspec:\n  clusterRef:\n    domain: fsn-1.fleet.example\n",
        );
        write(
            &root.join("clusters").join(BROKEN),
            "cluster.lok8s.yaml",
            "kind: Lo\nmetadata: [not, a, mapping\n",
        );
    }

    /// The domain's inventory as rendered, with `set`'s versions.
    fn objects(base: &Objects, set: &BTreeMap<&str, &str>) -> Objects {
        let mut cr: serde_json::Value = serde_json::from_str(&base.cr).unwrap();
        for addon in cr["spec"]["addons"].as_array_mut().unwrap() {
            let name = addon["name"].as_str().unwrap().to_string();
            if let Some(v) = set.get(name.as_str()) {
                addon["chartVersion"] = (*v).into();
            }
        }
        Objects {
            cr: serde_json::to_string(&cr).unwrap(),
            ..base.clone()
        }
    }

    fn write_store(&self) {
        let root = self.root();
        type Versions<'a> = BTreeMap<&'a str, &'a str>;
        let mut journals: BTreeMap<String, Vec<(i64, Versions)>> = BTreeMap::new();
        let mut current: BTreeMap<String, BTreeMap<&str, &str>> = BTreeMap::new();
        for step in Self::steps() {
            for (i, domain) in step.domains.iter().enumerate() {
                let versions = current.entry(domain.clone()).or_default();
                versions.extend(step.set.iter().copied());
                let at = secs(step.at) + step.apart * i as i64;
                journals
                    .entry(domain.clone())
                    .or_default()
                    .push((at, versions.clone()));
            }
        }
        let mut n = 0;
        for (domain, snapshots) in journals {
            let base = v1::render(&root, &domain);
            let mut journal = Journal::create(&self.store(), &domain);
            for (at, set) in snapshots {
                n += 1;
                let objects = Self::objects(&base, &set);
                journal.objects(&objects);
                let id = v1::id(n);
                journal.snapshot(&id, at, &objects);
                journal.state(&id, at + 60, "applied");
            }
            journal.finish();
        }
    }
}

use std::collections::BTreeMap;

/// `--at` from the store: each domain's newest snapshot at or before the date (the
/// `@DATE` of `diff`: a date is its whole day, UTC); a domain recorded later is named,
/// with the date, and has no column.
fn the_fleet_at_a_date_from_the_store() {
    let fx = FleetHistory::new();
    let run = fx
        .on_store(&["fleet", "--at", "2026-03-20", "--addon", "cilium"])
        .success();
    golden("fleet/history-at-2026-03-20.txt", &run.stdout);
    assert_has(
        &run.stderr,
        "nbg-4.fleet.example: not in the matrix: no snapshot at or before 2026-03-20",
    );
    let json = fx
        .on_store(&["fleet", "--at", "2026-03-20", "-o", "json"])
        .success()
        .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["at"]["date"], "2026-03-20", "{json}");
    assert_eq!(v["at"]["until"], "2026-03-20T23:59:59Z", "{json}");
    let cilium = v["addons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "cilium")
        .unwrap();
    for d in FleetHistory::domains() {
        let want = match d.as_str() {
            "nbg-4.fleet.example" => serde_json::Value::Null,
            d if d.starts_with("fsn-") => "1.19.2".into(),
            _ => "1.18.4".into(),
        };
        assert_eq!(cilium["versions"][&d], want, "{d}: {json}");
    }
    let left = &v["left"].as_array().unwrap();
    assert!(
        left.iter().any(|l| l["domain"] == "nbg-4.fleet.example"
            && l["why"] == "no snapshot at or before 2026-03-20"),
        "{json}"
    );
    // A time of day counts: at 09:30 only fsn-1 and fsn-2 (09:00, 09:20) were upgraded.
    let morning = fx
        .on_store(&[
            "fleet",
            "--at",
            "2026-03-15T09:30:00Z",
            "--addon",
            "cilium",
            "--by",
            "domain",
            "--no-headers",
        ])
        .success()
        .stdout;
    let upgraded: Vec<&str> = morning
        .lines()
        .filter(|l| l.ends_with("1.19.2"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        upgraded,
        ["fsn-1.fleet.example", "fsn-2.fleet.example"],
        "{morning}"
    );
    // The newest date gives what `fleet --from store` gives.
    let now = fx.on_store(&["fleet", "-o", "json"]).success().stdout;
    let at_now = fx
        .on_store(&["fleet", "--at", "today", "-o", "json"])
        .success()
        .stdout;
    let strip = |t: &str| {
        let mut v: serde_json::Value = serde_json::from_str(t).unwrap();
        v.as_object_mut().unwrap().remove("at");
        v
    };
    assert_eq!(strip(&now), strip(&at_now));
    // Before anything was recorded: no column, every domain named, exit 0.
    let before = fx.on_store(&["fleet", "--at", "2025-01-01"]).success();
    assert!(before.stdout.is_empty(), "{}", before.stdout);
    assert_eq!(
        before
            .stderr
            .matches("no snapshot at or before 2025-01-01")
            .count(),
        14,
        "{}",
        before.stderr
    );
}

/// `--at` in a project reads the store (the project has no past); with `--from project`
/// or `--from live` it is a usage error that says why; a date that is no date is too.
fn the_fleet_at_a_date_needs_a_source_with_a_history() {
    let fx = FleetHistory::new();
    let run = fx
        .in_project(&["fleet", "--at", "2026-03-20", "--addon", "cilium"])
        .success();
    golden("fleet/history-at-2026-03-20.txt", &run.stdout);
    for from in ["project", "live"] {
        let bad = fx.in_project(&["fleet", "--at", "2026-03-20", "--from", from]);
        assert_eq!(bad.code, 2, "{}", bad.stderr);
        assert_has(&bad.stderr, "--at");
        assert_has(&bad.stderr, "has no history");
    }
    let bad = fx.on_store(&["fleet", "--at", "last tuesday"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_has(&bad.stderr, "'last tuesday'");
}

/// `git` in `dir` with a fixed committer and its date.
#[cfg(feature = "gitops")]
fn commit_at(dir: &std::path::Path, when: &str, message: &str) {
    succeeded(
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@x",
                "commit",
                "-qm",
                message,
            ])
            .env("HOME", "/nonexistent")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", when)
            .env("GIT_COMMITTER_DATE", when),
    );
}

/// `--at` with `--repo`: the newest commit of the branch at or before the date (by
/// committer date, first parent); a domain folder added later has no column then.
#[cfg(feature = "gitops")]
fn the_fleet_at_a_date_from_a_repository() {
    let fx = FleetHistory::new();
    let repo = fx.dir.path().join("gitops");
    git(fx.dir.path(), &["init", "-q", "-b", "main", "gitops"]);
    let put = |domain: &str, version: &str| {
        let text = clinv(&[
            "render",
            "--root",
            fx.root().to_str().unwrap(),
            "--domain",
            domain,
        ])
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .run()
        .success()
        .stdout
        .replace("chartVersion: 1.19.2", &format!("chartVersion: {version}"));
        write(
            &repo,
            &format!("clusters/{domain}/inventory/clusterinventory.yaml"),
            text,
        );
        git(&repo, &["add", "-A"]);
    };
    put("fsn-1.fleet.example", "1.18.4");
    put("hel-1.fleet.example", "1.18.4");
    commit_at(&repo, "2026-03-01T10:00:00Z", "first");
    put("fsn-1.fleet.example", "1.19.2");
    commit_at(&repo, "2026-03-15T09:00:00Z", "fsn-1 cilium");
    put("nbg-1.fleet.example", "1.19.2");
    commit_at(&repo, "2026-04-05T12:00:00Z", "nbg-1");
    let r = repo.to_str().unwrap();
    let at = |date: &str| {
        let run = clinv(&[
            "fleet", "--repo", r, "--at", date, "--addon", "cilium", "-o", "json",
        ])
        .run()
        .success();
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        (v, run.stderr)
    };
    let (v, _) = at("2026-03-20");
    assert_eq!(
        v["addons"][0]["versions"],
        serde_json::json!({"fsn-1.fleet.example": "1.19.2", "hel-1.fleet.example": "1.18.4"})
    );
    assert_eq!(v["at"]["date"], "2026-03-20");
    assert_eq!(v["at"]["commit"].as_str().unwrap().len(), 40, "{v}");
    let (v, _) = at("2026-03-14");
    assert_eq!(
        v["addons"][0]["versions"]["fsn-1.fleet.example"], "1.18.4",
        "{v}"
    );
    let none = clinv(&["fleet", "--repo", r, "--at", "2026-02-01"]).run();
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(none.stdout.is_empty(), "{}", none.stdout);
    assert_has(&none.stderr, "no commit of HEAD at or before 2026-02-01");
}

/// `--changed-since`: the cells whose version is not what it was at the date are
/// marked — `(was V)` or `(new)` in the table and markdown, `was` in JSON and YAML, a
/// class and a legend on the page — with or without `--at`; `--changed-only` keeps them
/// alone.
fn the_cells_that_changed_since_a_date_are_marked() {
    let fx = FleetHistory::new();
    let table = fx
        .on_store(&["fleet", "--changed-since", "2026-04-01", "--by", "domain"])
        .success();
    golden("fleet/history-changed-since-2026-04-01.txt", &table.stdout);
    let md = fx
        .on_store(&[
            "fleet",
            "--changed-since",
            "2026-04-01",
            "--changed-only",
            "-o",
            "markdown",
        ])
        .success();
    golden("fleet/history-changed-only-since-2026-04-01.md", &md.stdout);
    let json = fx
        .on_store(&["fleet", "--changed-since", "2026-04-01", "-o", "json"])
        .success()
        .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let row = |name: &str| {
        v["addons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()
            .clone()
    };
    let cilium = row("cilium");
    assert_eq!(cilium["was"]["fsn-1.fleet.example"], "1.19.2", "{json}");
    assert_eq!(cilium["was"]["hel-3.fleet.example"], "1.18.4", "{json}");
    assert_eq!(cilium["was"]["nbg-2.fleet.example"], "1.18.4", "{json}");
    assert!(cilium["was"]["nbg-4.fleet.example"].is_null());
    assert!(
        cilium["was"]
            .as_object()
            .unwrap()
            .contains_key("nbg-4.fleet.example"),
        "{json}"
    );
    assert!(
        !cilium["was"]
            .as_object()
            .unwrap()
            .contains_key("fsn-2.fleet.example"),
        "{json}"
    );
    assert_eq!(
        row("metrics-server")["was"]["nbg-1.fleet.example"],
        "3.12.2"
    );
    assert_eq!(v["changedSince"]["date"], "2026-04-01");
    assert_eq!(
        v["changedSince"]["addedDomains"],
        serde_json::json!(["nbg-4.fleet.example"])
    );
    let yaml: serde_json::Value = serde_saphyr::from_str(
        &fx.on_store(&["fleet", "--changed-since", "2026-04-01", "-o", "yaml"])
            .success()
            .stdout,
    )
    .unwrap();
    assert_eq!(yaml, v);
    // With --at: what changed between two times (the hel upgrade crossed midnight; a
    // date is its last second, so since 2026-04-02 the three after midnight changed).
    let since = |date: &str| {
        fx.on_store(&[
            "fleet",
            "--at",
            "2026-04-03",
            "--changed-since",
            date,
            "--changed-only",
            "--by",
            "domain",
            "--no-headers",
        ])
        .success()
        .stdout
    };
    assert_eq!(since("2026-04-02").lines().count(), 3);
    let between = fx
        .on_store(&[
            "fleet",
            "--at",
            "2026-04-03",
            "--changed-since",
            "2026-04-02T12:00:00Z",
            "--changed-only",
            "--by",
            "domain",
            "--no-headers",
        ])
        .success()
        .stdout;
    assert_eq!(
        between.lines().count(),
        5,
        "the five hel domains: {between}"
    );
    assert!(
        between
            .lines()
            .all(|l| l.starts_with("hel-") && l.ends_with("1.19.2 (was 1.18.4)")),
        "{between}"
    );
    // The page: a class on each changed cell, what it was in its title, a legend.
    let page = fx
        .on_store(&["fleet", "--changed-since", "2026-04-01", "-o", "html"])
        .success()
        .stdout;
    // hel 5, nbg-1..3 3, nbg-1's metrics-server, fsn-1; nbg-4's four addons are new.
    assert_eq!(page.matches("changed\" title=\"was ").count(), 10, "{page}");
    assert_eq!(page.matches("changed\" title=\"new ").count(), 4, "{page}");
    assert_has(&page, "title=\"was 1.18.4\"");
    assert_has(&page, "changed since <code>2026-04-01</code>");
    // Nothing changed: no mark.
    let same = fx
        .on_store(&["fleet", "--changed-since", "today", "--changed-only"])
        .success();
    assert!(same.stdout.is_empty(), "{}", same.stdout);
}

/// `log -A --oneline`: one line per event — the fsn, hel and nbg rollouts of the same
/// cilium upgrade are three lines (three dates), each naming its domains; the hel one
/// crossed midnight and is one line; `--since` and `--reverse` as for every log.
fn the_fleet_log_groups_one_change_of_several_domains_into_one_line() {
    let fx = FleetHistory::new();
    let log = fx.on_store(&["log", "-A", "--oneline"]).success();
    golden("fleet/history-log-oneline.txt", &log.stdout);
    let lines: Vec<&str> = log.stdout.lines().collect();
    // fsn-1's canary, nbg-2's step with no change, the nbg rollout, nbg-1's
    // metrics-server, nbg-4's first step, the hel and fsn rollouts, the first step of
    // the 13 others.
    assert_eq!(lines.len(), 8, "{}", log.stdout);
    assert!(lines[1].starts_with("no changes "), "{}", log.stdout);
    let hel = lines
        .iter()
        .find(|l| l.contains("2026-04-02 23:00 – 2026-04-03 01:00"))
        .unwrap();
    assert_has(hel, "cilium 1.18.4 → 1.19.2");
    assert_has(
        hel,
        "5 domains: hel-1.fleet.example, hel-2.fleet.example, hel-3.fleet.example, hel-4.fleet.example, hel-5.fleet.example",
    );
    let first = lines.last().unwrap();
    assert_has(first, "13 domains: fsn-1.fleet.example");
    assert_has(first, "+5 more");
    let reversed = fx
        .on_store(&["log", "-A", "--oneline", "--reverse"])
        .success()
        .stdout;
    let mut back: Vec<&str> = reversed.lines().collect();
    back.reverse();
    assert_eq!(back, lines);
    let since = fx
        .on_store(&["log", "-A", "--oneline", "--since", "2026-05-01"])
        .success()
        .stdout;
    // The same events (the columns align to the lines shown).
    let words = |l: &&str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        since
            .lines()
            .collect::<Vec<_>>()
            .iter()
            .map(words)
            .collect::<Vec<_>>(),
        lines[..4].iter().map(words).collect::<Vec<_>>()
    );
    // A glob selects a site.
    let hel_only = fx
        .on_store(&["log", "--domain", "hel-*", "--oneline"])
        .success()
        .stdout;
    assert_eq!(hel_only.lines().count(), 2, "{hel_only}");
}

/// `report -A`: one page for the fleet — the matrix (at `--at`, else the newest) and the
/// timeline of grouped events (bounded by `--since`); `--domain` takes globs; `-o json`
/// is the same data.
fn the_fleet_report_has_the_matrix_and_the_grouped_timeline() {
    let fx = FleetHistory::new();
    let out = fx.dir.path().join("fleet.html");
    let run = fx
        .on_store(&["report", "-A", "--out", out.to_str().unwrap()])
        .success();
    assert_has(&run.stderr, "wrote ");
    let page = std::fs::read_to_string(&out).unwrap();
    // Self-contained: nothing loaded from anywhere; the one inline script is the
    // matrix's filter box, as on the fleet page.
    assert_has(
        &page,
        "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\"",
    );
    assert!(
        page.matches("<script").count() == 1
            && !page.contains("src=\"")
            && !page.contains("href=\"http"),
        "self-contained"
    );
    for d in FleetHistory::domains() {
        assert_has(&page, &format!("data-k=\"{d}\""));
    }
    // Seven events, one row each; the hel rollout is one row naming its five domains.
    // nbg-2's step with no change is counted, not a row.
    assert_eq!(page.matches("<tr class=\"change\">").count(), 5, "{page}");
    assert_eq!(page.matches("<tr class=\"first\">").count(), 2, "{page}");
    assert_eq!(
        page.matches("<tr class=\"unchanged\">").count(),
        0,
        "{page}"
    );
    assert_has(
        &page,
        "from 30 recorded step(s) (1 of them recorded no change)",
    );
    assert_has(&page, "2026-04-02 23:00 – 2026-04-03 01:00");
    // An event of most of the fleet names the domains it did not reach.
    assert_has(
        &page,
        "<b>13</b> of 14: all but 1: <code>nbg-4.fleet.example</code></td>",
    );
    // The newest matrix: fsn-1's canary.
    assert_has(&page, ">1.20.0</td>");
    // --at: the matrix then, and the timeline up to then.
    let then = fx
        .on_store(&["report", "-A", "--at", "2026-03-20"])
        .success()
        .stdout;
    assert_lacks(&then, ">1.20.0</td>");
    assert_has(&then, "as it was at <code>2026-03-20</code>");
    assert_eq!(then.matches("<tr class=\"change\">").count(), 1, "{then}");
    assert_has(
        &then,
        "nbg-4.fleet.example: not in the matrix: no snapshot at or before 2026-03-20",
    );
    // --since bounds the timeline, not the matrix.
    let since = fx
        .on_store(&["report", "-A", "--since", "2026-05-01"])
        .success()
        .stdout;
    assert_eq!(since.matches("<tr class=\"change\">").count(), 3, "{since}");
    assert_eq!(since.matches("<tr class=\"first\">").count(), 0, "{since}");
    assert_has(&since, ">1.20.0</td>");
    // A site by glob, and two by repeated --domain.
    let hel = fx
        .on_store(&["report", "--domain", "hel-*"])
        .success()
        .stdout;
    assert_lacks(&hel, "data-k=\"fsn-1.fleet.example\"");
    assert_has(&hel, "data-k=\"hel-5.fleet.example\"");
    assert_eq!(hel.matches("<tr class=\"change\">").count(), 1, "{hel}");
    let json = fx
        .on_store(&[
            "report", "--domain", "hel-*", "--domain", "nbg-*", "-o", "json",
        ])
        .success()
        .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["matrix"]["domains"].as_array().unwrap().len(),
        9,
        "{json}"
    );
    let events = v["timeline"].as_array().unwrap();
    assert_eq!(events.len(), 5, "{json}");
    let hel_up = events
        .iter()
        .find(|e| e["start"] == "2026-04-02T23:00:00Z")
        .unwrap();
    assert_eq!(hel_up["kind"], "change");
    assert_eq!(hel_up["end"], "2026-04-03T01:00:00Z");
    assert_eq!(hel_up["change"]["to"], "1.19.2");
    assert_eq!(hel_up["domains"].as_array().unwrap().len(), 5);
    // One domain's page is as it was.
    let one = fx
        .on_store(&["report", "--domain", "hel-1.fleet.example"])
        .success()
        .stdout;
    assert_lacks(&one, "class=\"events\"");
    let bad = fx.on_store(&["report", "-A", "--repo", "/nonexistent"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// The fleet report in Chromium at 1280 px: the matrix and the timeline are there as
/// text; the screenshot (`CLINV_KEEP_SCREENSHOTS=docs/images`) is
/// docs/images/fleet-report.png.
fn the_fleet_report_renders_in_chromium() {
    let fx = FleetHistory::new();
    let browser = crate::browser::chromium();
    let page = fx.dir.path().join("report").join("fleet-report.html");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    fx.away_from(&["report", "-A", "--out", page.to_str().unwrap()])
        .env("SOURCE_DATE_EPOCH", "1780000000")
        .run()
        .success();
    let dom = browser.dump_dom(&page);
    for text in [
        "Fleet report",
        "14 domain(s)",
        "hel-3.fleet.example",
        "Timeline",
        "~ cilium 1.18.4 → 1.19.2 (upgrade)",
        "2026-04-02 23:00 – 2026-04-03 01:00",
        "first recorded step",
    ] {
        assert!(dom.contains(text), "{text} missing from the rendered DOM");
    }
    let png = browser.screenshot_not_blank(&page, 20_000, "fleet-report.png");
    assert_eq!(crate::browser::png_size(&png).0, crate::browser::WIDTH);
}

/// A store a write migrated to version 2 (rolled, ordered segments) answers `--at` from
/// the end of each domain's journal; the answers are the full read's, at every date of
/// the history (before, on and between its steps).
fn the_fleet_at_a_date_is_the_same_from_the_end_of_a_migrated_store() {
    let fx = FleetHistory::new();
    let dates = [
        "2025-01-01",
        "2026-03-01T09:59:59Z",
        "2026-03-01T10:00:00Z",
        "2026-03-15T09:30:00Z",
        "2026-04-02",
        "2026-04-03T00:15:00Z",
        "2026-05-10",
        "2026-06-01",
    ];
    let at = |date: &str| {
        let run = fx
            .on_store(&["fleet", "--at", date, "-o", "json"])
            .success();
        (run.stdout, run.stderr)
    };
    let before: Vec<_> = dates.iter().map(|d| at(d)).collect();
    let offline = repo().join("examples/offline.kubeconfig");
    for domain in FleetHistory::domains() {
        fx.in_project(&[
            "publish",
            "--domain",
            &domain,
            "--kubeconfig",
            offline.to_str().unwrap(),
        ]);
        assert!(
            fx.store().join(&domain).join("segments").is_dir(),
            "{domain}"
        );
    }
    for (date, was) in dates.iter().zip(&before) {
        assert_eq!(&at(date), was, "{date}");
    }
}

trials! {
    Chromium: [the_fleet_report_renders_in_chromium],
    Nothing: [
        the_fleet_at_a_date_from_the_store,
        the_fleet_at_a_date_needs_a_source_with_a_history,
        the_fleet_at_a_date_is_the_same_from_the_end_of_a_migrated_store,
        the_cells_that_changed_since_a_date_are_marked,
        the_fleet_log_groups_one_change_of_several_domains_into_one_line,
        the_fleet_report_has_the_matrix_and_the_grouped_timeline,
    ],
}

#[cfg(feature = "gitops")]
pub fn gitops_tests() -> Vec<crate::harness::Case> {
    vec![crate::harness::Case::new(
        module_path!(),
        "the_fleet_at_a_date_from_a_repository",
        crate::harness::Need::Nothing,
        the_fleet_at_a_date_from_a_repository,
    )]
}
