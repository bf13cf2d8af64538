//! Issue 16, findings 2 and 6: store-only commands work with `--snapshots` alone (the
//! air-gap flow "export on one machine, audit on another"), and one domain-selection
//! rule for every command, with "did you mean" and the known domains.

use crate::support::*;
use std::path::{Path, PathBuf};

/// The example project with two queued snapshots of prod (a chart bump between them)
/// and one of lab, in `<root>/snapshots`.
pub struct Fx {
    dir: tempfile::TempDir,
    /// Somewhere that is no lok8s project.
    pub away: tempfile::TempDir,
}

impl Fx {
    pub fn new() -> Fx {
        let dir = copy_tree(&example());
        let fx = Fx {
            dir,
            away: tempfile::tempdir().unwrap(),
        };
        let publish = |domain: &str| {
            let offline = repo().join("examples/offline.kubeconfig");
            let offline = offline.to_str().unwrap();
            fx.in_project(&["publish", "--domain", domain, "--kubeconfig", offline])
                .run()
                .success()
        };
        publish("prod.acme.example");
        set_chart_version(fx.root(), "cilium", "1.20.3");
        publish("prod.acme.example");
        publish("lab.acme.example");
        fx
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn store(&self) -> PathBuf {
        self.root().join("snapshots")
    }

    pub fn in_project(&self, args: &[&str]) -> Clinv {
        clinv(args)
            .cwd(self.root())
            .env("CLINV_SNAPSHOTS", self.store().to_str().unwrap())
    }

    /// Outside any project, with `--snapshots DIR` (no CLINV_SNAPSHOTS).
    pub fn away(&self, store: &Path, args: &[&str]) -> Run {
        let mut all = vec!["--snapshots", store.to_str().unwrap()];
        all.extend_from_slice(args);
        clinv(&all)
            .env_remove("CLINV_SNAPSHOTS")
            .cwd(self.away.path())
            .run()
    }
}

fn store_only_commands_need_no_project() {
    let fx = Fx::new();
    let store = fx.store();
    let list = fx
        .away(&store, &["snapshots", "list", "-o", "json"])
        .success();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(rows.len(), 3);
    let id = rows[0]["id"].as_str().unwrap().to_string();
    let run = fx.away(&store, &["snapshots", "show", &id]).success();
    assert!(run.stdout.starts_with(&format!("# snapshot {id}\n")));
    fx.away(&store, &["snapshots", "verify"]).success();
    fx.away(&store, &["snapshots", "gc", "--dry-run"]).success();
    let run = fx
        .away(&store, &["log", "--domain", "prod.acme.example"])
        .success();
    assert!(
        run.stdout.contains("cilium 1.19.2 → 1.20.3"),
        "{}",
        run.stdout
    );
    let page = fx.away.path().join("r.html");
    fx.away(
        &store,
        &[
            "report",
            "--domain",
            "prod.acme.example",
            "--out",
            page.to_str().unwrap(),
        ],
    )
    .success();
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    let run = fx.away(
        &store,
        &[
            "diff",
            "latest~1",
            "latest",
            "--domain",
            "prod.acme.example",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("cilium 1.19.2 → 1.20.3"),
        "{}",
        run.stdout
    );

    // Export every domain by default, import on "another machine", audit there.
    let tar = fx.away.path().join("all.tar");
    let run = fx
        .away(&store, &["snapshots", "export", tar.to_str().unwrap()])
        .success();
    assert!(run.stderr.contains("of 2 domain(s) to "), "{}", run.stderr);
    let other = fx.away.path().join("other");
    fx.away(&other, &["snapshots", "import", tar.to_str().unwrap()])
        .success();
    let run = fx.away(&other, &["snapshots", "list"]).success();
    assert_eq!(run.stdout.lines().count(), 4, "{}", run.stdout);

    // One domain in the store: it is the domain, without --domain.
    let tar = fx.away.path().join("prod.tar");
    fx.away(
        &store,
        &[
            "snapshots",
            "export",
            tar.to_str().unwrap(),
            "--domain",
            "prod.acme.example",
        ],
    )
    .success();
    let single = fx.away.path().join("single");
    fx.away(&single, &["snapshots", "import", tar.to_str().unwrap()])
        .success();
    let run = fx.away(&single, &["log"]).success();
    assert!(
        run.stdout.contains("cilium 1.19.2 → 1.20.3"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
    let run = fx.away(&single, &["diff", "latest~1", "latest"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    fx.away(&single, &["snapshots", "show", "latest"]).success();
    fx.away(&single, &["report"]).success();
}

fn store_only_commands_say_what_is_missing() {
    let fx = Fx::new();
    let store = fx.store();
    // Two domains, no project: nothing selects one.
    let run = fx.away(&store, &["snapshots", "show", "latest"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "[error] no domain selected: no --domain, no DOMAIN_NAME, no lok8s project for clusters/.active, and the store does not hold exactly one domain\n  known domains: lab.acme.example, prod.acme.example — pass --domain D\n"
    );
    // A misspelled domain: "did you mean" and the known ones.
    let run = fx.away(&store, &["log", "--domain", "prod.acme.exmple"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "[error] unknown domain 'prod.acme.exmple': no snapshots of it in {}\n  did you mean 'prod.acme.example'? known domains: lab.acme.example, prod.acme.example\n",
            store.display()
        )
    );
    let run = fx.away(&store, &["snapshots", "list", "--domain", "lab"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("did you mean 'lab.acme.example'? known domains: "),
        "{}",
        run.stderr
    );
    // No store and no project.
    let run = clinv(&["log"])
        .env_remove("CLINV_SNAPSHOTS")
        .cwd(fx.away.path())
        .run();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no lok8s project found"),
        "{}",
        run.stderr
    );
}

fn one_rule_for_the_domain_and_a_note_when_ambiguous() {
    let fx = Fx::new();
    // clusters/.active is prod; the store also holds lab: both commands say so.
    let note = "[info] domain prod.acme.example (from clusters/.active); the store also holds lab.acme.example — pass --domain to choose\n";
    let run = fx
        .in_project(&["snapshots", "show", "latest"])
        .run()
        .success();
    assert_eq!(run.stderr, note);
    assert!(run.stdout.contains("# domain:     prod.acme.example\n"));
    let run = fx.in_project(&["log"]).run().success();
    assert_eq!(run.stderr, note);
    let run = fx.in_project(&["diff", "latest~1", "latest"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, note);
    // --domain: no note.
    let run = fx
        .in_project(&["log", "--domain", "lab.acme.example"])
        .run()
        .success();
    assert_eq!(run.stderr, "");

    // Without clusters/.active (and no clusters/lok8s.dev): a clear error, not a path.
    std::fs::remove_file(fx.root().join("clusters/.active")).unwrap();
    let run = fx.in_project(&["render"]).run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "[error] no domain selected: no --domain, no DOMAIN_NAME, no clusters/.active, and no clusters/lok8s.dev (lok8s's default)\n  known domains: apps.acme.example, edge.acme.example, lab.acme.example, prod.acme.example — pass --domain D\n"
    );
    let run = fx.in_project(&["log"]).run();
    assert_eq!(run.code, 1);
    assert!(run.stderr.starts_with("[error] no domain selected"));
    // A misspelled domain in a project command.
    let run = fx
        .in_project(&["render", "--domain", "prod.acme.exmple"])
        .run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "[error] inventory: cluster spec not found: {}/clusters/prod.acme.exmple/cluster.lok8s.yaml\n  did you mean 'prod.acme.example'? known domains: apps.acme.example, edge.acme.example, lab.acme.example, prod.acme.example\n",
            fx.root().display()
        )
    );
}

trials! {
    Nothing: [
        store_only_commands_need_no_project,
        store_only_commands_say_what_is_missing,
        one_rule_for_the_domain_and_a_note_when_ambiguous,
    ],
}
