//! Issue 25, fleet-wide changes as one change: `commit -A` (or `--domain` repeated, a
//! glob) writes every selected domain's folder in one commit — one pull request for a
//! fleet-wide pin bump — against a real bare remote over file://.

use crate::gitops::Fx;
use crate::support::*;
use std::path::Path;

const CLUSTER_DOMAINS: [&str; 3] = ["edge.acme.example", "lab.acme.example", "prod.acme.example"];

/// `commit --repo WORK` with `args`.
fn commit(fx: &Fx, args: &[&str]) -> Run {
    fx.clinv(&["commit", "--repo", fx.work().to_str().unwrap()])
        .args(args)
        .run()
}

fn commits(fx: &Fx) -> usize {
    git(&fx.work(), &["rev-list", "--count", "main"])
        .trim()
        .parse()
        .unwrap()
}

/// `snapshots list -o json` of `domain`.
fn snapshots(fx: &Fx, domain: &str) -> serde_json::Value {
    let run = fx
        .clinv(&["snapshots", "list", "--domain", domain, "-o", "json"])
        .run()
        .success();
    serde_json::from_str(&run.stdout).unwrap()
}

fn head(repo: &Path) -> String {
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// `commit -A`: the three cluster domains' folders in one commit, each folder exactly
/// what `commit --domain D` writes; every domain's snapshot recorded as committed with
/// that commit; the deploy domain named, not skipped silently. A second run commits
/// nothing; a pin bump shared by all three is one more commit, pushed, whose subject
/// names the change once.
fn commit_of_several_domains_is_one_commit() {
    let fx = Fx::new();
    let run = commit(&fx, &["-A"]).success();
    assert_eq!(commits(&fx), 1, "{}", run.stderr);
    assert!(run.stdout.starts_with("DOMAIN "), "{}", run.stdout);
    assert_has(&run.stdout, "apps.acme.example  deploy domain");
    let files = git(&fx.work(), &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(files.lines().count(), 9, "{files}");
    let message = git(&fx.work(), &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(&format!("inventory({}): ", CLUSTER_DOMAINS.join(", "))),
        "{message}"
    );
    let trailers = git(&fx.work(), &["log", "-1", "--format=%(trailers:only)"]);
    let tip = head(&fx.work());
    for domain in CLUSTER_DOMAINS {
        let snaps = snapshots(&fx, domain);
        let id = snaps[0]["snapshot"]
            .as_str()
            .unwrap_or_else(|| snaps[0]["id"].as_str().unwrap());
        assert_eq!(snaps[0]["state"], "committed", "{domain}: {snaps}");
        assert_eq!(snaps[0]["commit"].as_str().unwrap(), tip, "{domain}");
        assert!(
            trailers.contains(&format!("Snapshot: {id} ({domain})")),
            "{trailers}"
        );
        assert!(message.contains(&format!("- {domain}: ")), "{message}");
    }
    // Each folder is byte for byte what a one-domain commit writes.
    let alone = fx.clone_remote("alone");
    for domain in CLUSTER_DOMAINS {
        git(&alone, &["reset", "-q", "--hard"]);
        let one = fx.clinv(&[
            "commit",
            "--domain",
            domain,
            "--repo",
            alone.to_str().unwrap(),
        ]);
        one.run().success();
        let folder = format!("clusters/{domain}/inventory");
        assert_eq!(
            git(&alone, &["rev-parse", &format!("HEAD:{folder}")]),
            git(&fx.work(), &["rev-parse", &format!("HEAD:{folder}")]),
            "{domain}"
        );
    }
    // Nothing changed: no commit, every folder up to date.
    let again = json(&commit(&fx, &["-A", "-o", "json"]).success());
    assert_eq!(commits(&fx), 1);
    let results: Vec<&str> = again
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        ["deploy domain", "up to date", "up to date", "up to date"]
    );
    // A fleet-wide pin bump: one commit, pushed, the change named once.
    set_chart_version(&fx.root(), "cilium", "1.19.3");
    let bump = commit(&fx, &["-A", "--push", "-o", "json"]).success();
    assert_eq!(commits(&fx), 2, "{}", bump.stderr);
    let results: Vec<String> = json(&bump)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        results,
        ["deploy domain", "committed", "committed", "committed"]
    );
    let subject = git(&fx.work(), &["log", "-1", "--format=%s"]);
    assert!(
        subject.starts_with(&format!("inventory({}): ", CLUSTER_DOMAINS.join(", ")))
            && subject.contains("cilium")
            && !subject.contains("changes in"),
        "{subject}"
    );
    let remote = fx.remote();
    assert_eq!(
        git(&remote, &["rev-parse", "main"]).trim(),
        head(&fx.work())
    );
    assert!(git(&fx.work(), &["status", "--porcelain"]).is_empty());
}

/// Issue 40, item 8: a fleet commit's subject says what changed — every domain's first
/// record is "record inventory", not "changes in 3 domains"; a change shared by several
/// domains is named once, one of fewer domains with where.
fn the_subject_of_a_fleet_commit_says_what_changed() {
    let fx = Fx::new();
    let head = format!("inventory({}): ", CLUSTER_DOMAINS.join(", "));
    let subject = |fx: &Fx| {
        git(&fx.work(), &["log", "-1", "--format=%s"])
            .trim()
            .to_string()
    };
    commit(&fx, &["-A"]).success();
    assert_eq!(subject(&fx), format!("{head}record inventory"));
    let body = git(&fx.work(), &["log", "-1", "--format=%b"]);
    assert_has(
        &body,
        "- prod.acme.example: record inventory (9 addons, Kubernetes v1.31.10)",
    );
    // cilium in every domain; cert-manager only where the shared pin applies (prod: the lab
    // keeps its own copy, the edge has none).
    set_chart_version(&fx.root(), "cilium", "1.19.3");
    set_chart_version(&fx.root(), "cert-manager", "v1.21.0");
    commit(&fx, &["-A"]).success();
    assert_eq!(
        subject(&fx),
        format!(
            "{head}cilium 1.19.2 → 1.19.3, cert-manager v1.20.1 → v1.21.0 in prod.acme.example"
        )
    );
    // A change of every domain and one of one domain.
    set_chart_version(&fx.root(), "cilium", "1.19.4");
    let lab = fx
        .root()
        .join("clusters/lab.acme.example/cluster.lok8s.yaml");
    let text = std::fs::read_to_string(&lab).unwrap();
    assert!(text.contains("version: v1.30.14"), "{text}");
    std::fs::write(&lab, text.replace("version: v1.30.14", "version: v1.30.15")).unwrap();
    commit(&fx, &["-A"]).success();
    assert_eq!(
        subject(&fx),
        format!("{head}cilium 1.19.3 → 1.19.4, kubernetes v1.30.14 → v1.30.15 in lab.acme.example")
    );
}

/// Nothing half-written: an uncommitted edit in one selected folder, or a domain that
/// does not render, stops the whole commit. A glob and a name select the union; flags
/// that name one folder, a template with one domain's placeholders, and `-o` for one
/// domain are usage errors.
fn a_commit_of_several_domains_is_all_or_nothing() {
    let fx = Fx::new();
    commit(&fx, &["--domain", "prod.acme.example"]).success();
    let edited = fx
        .work()
        .join("clusters/prod.acme.example/inventory/kustomization.yaml");
    std::fs::write(&edited, "# mine\n").unwrap();
    set_chart_version(&fx.root(), "cilium", "1.19.3");
    let dirty = commit(&fx, &["-A"]);
    assert_eq!(dirty.code, 1, "{}", dirty.stderr);
    assert_has(&dirty.stderr, "kustomization.yaml");
    assert_eq!(commits(&fx), 1);
    git(&fx.work(), &["checkout", "--", "."]);
    // One domain that does not render: named, nothing committed.
    let spec = fx
        .root()
        .join("clusters/edge.acme.example/cluster.lok8s.yaml");
    let good = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, "kind: [\n").unwrap();
    let broken = commit(&fx, &["-A"]);
    assert_ne!(broken.code, 0);
    assert_has(&broken.stderr, "edge.acme.example");
    assert_eq!(commits(&fx), 1);
    std::fs::write(&spec, good).unwrap();
    // A glob and a name: two folders in one commit.
    let two = commit(&fx, &["--domain", "prod.*", "--domain", "lab.acme.example"]).success();
    assert_eq!(commits(&fx), 2, "{}", two.stderr);
    let changed = git(&fx.work(), &["show", "--name-only", "--format=", "HEAD"]);
    assert!(
        changed.contains("clusters/lab.acme.example/")
            && changed.contains("clusters/prod.acme.example/")
            && !changed.contains("edge"),
        "{changed}"
    );
    for args in [
        &["-A", "--path", "x"][..],
        // (`--domain '*' --print-argo` is the ApplicationSet over the domains' folders.)
        &["-A", "--print-flux"],
        &["-A", "--message", "bump {snapshot}"],
        &["--domain", "prod.acme.example", "-o", "json"],
    ] {
        let run = commit(&fx, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    }
    assert_eq!(commits(&fx), 2);
}

/// A folder the branch holds rendered later is left alone, as one domain's commit leaves
/// it, while the others are committed; `--strict` makes it exit 13.
fn a_folder_holding_a_newer_inventory_is_left_alone() {
    let fx = Fx::new();
    // lab committed with another pin at a later time, then the pin set back.
    set_chart_version(&fx.root(), "cilium", "1.19.3");
    fx.clinv(&[
        "commit",
        "--domain",
        "lab.acme.example",
        "--repo",
        fx.work().to_str().unwrap(),
    ])
    .env("SOURCE_DATE_EPOCH", "1900000000")
    .run()
    .success();
    set_chart_version(&fx.root(), "cilium", "1.19.2");
    let run = fx
        .clinv(&["commit", "-A", "--repo", fx.work().to_str().unwrap()])
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .run()
        .success();
    assert_has(&run.stdout, "lab.acme.example   left alone (older)");
    assert!(
        run.stderr.contains("lab.acme.example: ")
            && run.stderr.contains("clinv commit --allow-older commits it"),
        "{}",
        run.stderr
    );
    assert_eq!(commits(&fx), 2);
    let changed = git(&fx.work(), &["show", "--name-only", "--format=", "HEAD"]);
    assert!(!changed.contains("lab.acme.example"), "{changed}");
    set_chart_version(&fx.root(), "cilium", "1.19.4");
    let strict = fx
        .clinv(&[
            "commit",
            "-A",
            "--strict",
            "--repo",
            fx.work().to_str().unwrap(),
        ])
        .env("SOURCE_DATE_EPOCH", "1800000100")
        .run();
    assert_eq!(strict.code, 13, "{}", strict.stderr);
}

trials! {
    Nothing: [
        commit_of_several_domains_is_one_commit,
        a_commit_of_several_domains_is_all_or_nothing,
        a_folder_holding_a_newer_inventory_is_left_alone,
        the_subject_of_a_fleet_commit_says_what_changed,
    ],
}
