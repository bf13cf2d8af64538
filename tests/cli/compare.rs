//! Issue 40, item 3: "what differs between selection X and selection Y" in one command —
//! `clinv fleet --domain X --against Y` — over a fleet of three sites (globs `air-*`,
//! `fsn-*`, `nbg-*`), five cluster domains each, with per-site pins: cert-manager at
//! 5/5/4/1 (air's site pin, fsn's site pin, nbg on the project's default but one cluster
//! on a release candidate of its own), a deploy domain on air, ingress-nginx on fsn only,
//! a folder without a chart version on two air clusters.

use crate::support::*;
use std::path::Path;

/// The sites, and the cert-manager pin of each (`None`: the project's, v1.20.1).
pub const SITES: [(&str, Option<&str>); 3] = [
    ("air", Some("v1.18.0")),
    ("fsn", Some("v1.19.0")),
    ("nbg", None),
];

/// A chart pin of cert-manager at `version` in `dir` (a site's or a cluster's copy).
fn cert_manager_pin(root: &Path, dir: &str, version: &str) {
    let chart = std::fs::read_to_string(example().join(".lok8s/addons/cert-manager/chart.yaml"))
        .unwrap()
        .replace("version: v1.20.1", &format!("version: {version}"));
    write(root, &format!("{dir}/chart.yaml"), chart);
    let kustomization = example().join(".lok8s/addons/cert-manager/kustomization.yaml");
    write(
        root,
        &format!("{dir}/kustomization.yaml"),
        std::fs::read(kustomization).unwrap(),
    );
}

/// The domain `n` (1–5) of `site`.
pub fn domain(site: &str, n: u32) -> String {
    format!("{site}-{n}.acme.example")
}

/// Writes the cluster spec of `site`'s domain `n`: cilium, cert-manager (the site's pin,
/// or `certs`), metrics-server, and what the site adds.
pub fn spec(root: &Path, site: &str, n: u32, certs: &str) {
    let mut bootstrap = format!("    - cilium\n    - {certs}\n    - metrics-server\n");
    match (site, n) {
        ("fsn", _) => bootstrap.push_str("    - ingress-nginx\n"),
        ("air", 1 | 2) => bootstrap.push_str("    - local-path-provisioner\n"),
        _ => {}
    }
    write(
        root,
        &format!("clusters/{}/cluster.lok8s.yaml", domain(site, n)),
        format!(
            "kind: Lo\nmetadata:\n  name: {site}{n}\nspec:\n  kubernetes:\n    version: v1.32.3\n  bootstrap:\n{bootstrap}"
        ),
    );
}

/// The three-site project (its `.lok8s` is the example's).
pub fn sites() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&example().join(".lok8s"), &root.join(".lok8s"));
    for (site, pin) in SITES {
        let certs = match pin {
            Some(version) => {
                cert_manager_pin(
                    root,
                    &format!("clusters/.sites/{site}/cert-manager"),
                    version,
                );
                format!("../.sites/{site}/cert-manager")
            }
            None => "cert-manager".to_string(),
        };
        for n in 1..=5 {
            spec(root, site, n, &certs);
        }
    }
    // nbg-5 tries the next release on a pin of its own.
    let nbg5 = format!("clusters/{}/addons/cert-manager", domain("nbg", 5));
    cert_manager_pin(root, &nbg5, "v1.21.0-rc.1");
    spec(root, "nbg", 5, "./addons/cert-manager");
    write(
        root,
        "clusters/air-apps.acme.example/deploy.lok8s.yaml",
        "kind: Deploy\nmetadata:\n  name: air-apps\nspec:\n  clusterRef:\n    domain: air-1.acme.example\n  targets: []\n",
    );
    dir
}

fn fleet(root: &Path, args: &[&str]) -> Run {
    clinv(&[&["fleet", "--root", root.to_str().unwrap()][..], args].concat()).run()
}

/// air against nbg: a row per addon that differs — cert-manager (one version against
/// two), the unversioned folder air has and nbg lacks — identical ones hidden and counted
/// on stderr; exit 1, as `diff` when its inputs differ. Every format of the same answer.
fn two_sites_are_compared_in_one_command() {
    let dir = sites();
    let run = fleet(dir.path(), &["--domain", "air-*", "--against", "nbg-*"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    golden("fleet/compare.air-nbg.txt", &run.stdout);
    assert_has(
        &run.stderr,
        "[info] 2 addons run the same versions on both sides (cilium, metrics-server): not shown",
    );
    // The deploy domain the glob matches is named, never silently skipped.
    assert_has(&run.stderr, "'air-apps.acme.example' is a deploy domain");
    let md = fleet(
        dir.path(),
        &["--domain", "air-*", "--against", "nbg-*", "-o", "markdown"],
    );
    assert_eq!(md.code, 1, "{}", md.stderr);
    golden("fleet/compare.air-nbg.md", &md.stdout);
    // -o wide names the domains running each version instead of counting them.
    let wide = fleet(
        dir.path(),
        &["--domain", "air-*", "--against", "nbg-*", "-o", "wide"],
    );
    assert_has(
        &wide.stdout,
        "v1.20.1 (nbg-1.acme.example, nbg-2.acme.example, nbg-3.acme.example, nbg-4.acme.example), v1.21.0-rc.1 (nbg-5.acme.example)",
    );
    let json = fleet(
        dir.path(),
        &["--domain", "air-*", "--against", "nbg-*", "-o", "json"],
    );
    assert_eq!(json.code, 1, "{}", json.stderr);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["kind"], "FleetComparison");
    assert_eq!(v["sides"][0]["selection"], serde_json::json!(["air-*"]));
    assert_eq!(v["sides"][1]["domains"].as_array().unwrap().len(), 5);
    assert_eq!(v["sides"][0]["left"][0]["domain"], "air-apps.acme.example");
    assert_eq!(v["same"], serde_json::json!(["cilium", "metrics-server"]));
    let certs = &v["addons"][0];
    assert_eq!(certs["name"], "cert-manager");
    assert_eq!(
        certs["sides"][1],
        serde_json::json!([
            {"version": "v1.20.1", "domains": ["nbg-1.acme.example", "nbg-2.acme.example", "nbg-3.acme.example", "nbg-4.acme.example"]},
            {"version": "v1.21.0-rc.1", "domains": ["nbg-5.acme.example"]},
        ])
    );
    // Absent on a side: `absent: true`; present without a version: `version: null`.
    let glue = &v["addons"][1];
    assert_eq!(glue["name"], "local-path-provisioner");
    assert_eq!(glue["sides"][0][0]["version"], serde_json::Value::Null);
    assert_eq!(glue["sides"][0][1]["absent"], true);
    assert_eq!(glue["sides"][1][0]["absent"], true);
    let yaml = fleet(
        dir.path(),
        &["--domain", "air-*", "--against", "nbg-*", "-o", "yaml"],
    );
    let y: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).unwrap();
    assert_eq!(y, v);
}

/// cert-manager at 5/5/4/1 has no majority, so `--differs` prints every cell; against the
/// cluster on the release candidate, the rest of the fleet (no `--domain`) is three lines
/// of counts.
fn the_rest_of_the_fleet_against_one_cluster_at_5_5_4_1() {
    let dir = sites();
    let differs = fleet(
        dir.path(),
        &["--differs", "--addon", "cert-manager", "-o", "json"],
    )
    .success();
    let v: serde_json::Value = serde_json::from_str(&differs.stdout).unwrap();
    assert_eq!(v["addons"][0]["versions"].as_object().unwrap().len(), 15);
    let nbg5 = domain("nbg", 5);
    let run = fleet(dir.path(), &["--against", &nbg5, "--addon", "cert-manager"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "ADDON         the rest (14 domains)                  {nbg5} (1 domain)\ncert-manager  v1.18.0 (5), v1.19.0 (5), v1.20.1 (4)  v1.21.0-rc.1\n"
        )
    );
    assert_has(
        &run.stderr,
        &format!("[info] comparing {nbg5} with the rest of the fleet (14 domains)"),
    );
    // -A is the fleet too: the same answer.
    let all = fleet(
        dir.path(),
        &["-A", "--against", &nbg5, "--addon", "cert-manager"],
    );
    assert_eq!((all.code, all.stdout), (1, run.stdout));
}

/// Sides running the same versions: nothing printed, said on stderr, exit 0; with a
/// repeated --domain and plain names.
fn sides_that_run_the_same_exit_0() {
    let dir = sites();
    let run = fleet(
        dir.path(),
        &[
            "--domain",
            &domain("nbg", 1),
            "--domain",
            &domain("nbg", 2),
            "--against",
            &domain("nbg", 3),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_has(
        &run.stderr,
        "[info] nbg-1.acme.example, nbg-2.acme.example and nbg-3.acme.example run the same versions of all 3 addons",
    );
    // An addon neither side runs is not "the same"; a misspelled one is said as such.
    let neither = fleet(
        dir.path(),
        &[
            "--domain",
            "air-*",
            "--against",
            "nbg-*",
            "--addon",
            "ingress-nginx",
        ],
    );
    assert_eq!((neither.code, neither.stdout.as_str()), (0, ""));
    assert_has(
        &neither.stderr,
        "[info] neither air-* nor nbg-* runs ingress-nginx",
    );
    assert_lacks(&neither.stderr, "the same");
    // One side without the addon asked for is a side that does not run it (`-`), not a
    // side without domains (its domains have no cell of that row).
    let one_side = fleet(
        dir.path(),
        &[
            "--domain",
            "air-*",
            "--against",
            "fsn-*",
            "--addon",
            "ingress-nginx",
        ],
    );
    assert_eq!(one_side.code, 1, "{}", one_side.stderr);
    assert_eq!(
        one_side.stdout,
        "ADDON          air-* (5 domains)  fsn-* (5 domains)\ningress-nginx  -                  4.12.1\n"
    );
    let typo = fleet(
        dir.path(),
        &[
            "--domain",
            "air-*",
            "--against",
            "nbg-*",
            "--addon",
            "cert-manger",
        ],
    );
    assert_eq!(typo.code, 0, "{}", typo.stderr);
    assert_has(&typo.stderr, "did you mean 'cert-manager'?");
    assert_lacks(&typo.stderr, "neither");
    let strict = fleet(
        dir.path(),
        &[
            "--domain",
            "air-*",
            "--against",
            "nbg-*",
            "--addon",
            "cert-manger",
            "--strict",
        ],
    );
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    let json = fleet(
        dir.path(),
        &["--domain", "nbg-1*", "--against", "nbg-2*", "-o", "json"],
    );
    assert_eq!(json.code, 0, "{}", json.stderr);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["addons"], serde_json::json!([]));
}

/// Without --against, `--domain` (a glob, repeated) narrows the matrix to its domains.
fn a_selection_without_against_narrows_the_matrix() {
    let dir = sites();
    let run = fleet(
        dir.path(),
        &[
            "--domain",
            "nbg-4*",
            "--domain",
            "nbg-5*",
            "--addon",
            "cert-manager",
        ],
    )
    .success();
    assert_eq!(
        run.stdout,
        "ADDON         nbg-4.acme.example  nbg-5.acme.example\ncert-manager  v1.20.1             v1.21.0-rc.1\n"
    );
    let unknown = fleet(dir.path(), &["--domain", "zrh-*"]);
    assert_eq!(unknown.code, 1, "{}", unknown.stderr);
    assert_has(&unknown.stderr, "'zrh-*' matches no domain");
}

/// Sides that cannot be compared are refused before anything is printed, each with the
/// reason; like `diff`, every error is exit 2 (1 means "they differ").
fn sides_that_cannot_be_compared_are_refused() {
    let dir = sites();
    let refused = |args: &[&str], says: &str| {
        let run = fleet(dir.path(), args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert_has(&run.stderr, says);
    };
    refused(
        &["--domain", "air-*", "--against", "air-1*"],
        "--against: 1 domain is on both sides of the comparison (air-1.acme.example)",
    );
    refused(
        &["--domain", "air-*", "--against", "zrh-*"],
        "'zrh-*' matches no domain",
    );
    refused(
        &["--domain", "air-*", "--against", "nbg-1.acme.exampel"],
        "did you mean 'nbg-1.acme.example'?",
    );
    refused(
        &["--domain", "fsn-*", "--against", "air-apps.acme.example"],
        "air-apps.acme.example: no domain of this side has an inventory to compare (no inventory read: air-apps.acme.example)",
    );
    for flag in [
        &["--differs"][..],
        &["--by", "domain"],
        &["--below", "1.0"],
        &["-o", "html"],
    ] {
        let args = [&["--domain", "air-*", "--against", "nbg-*"][..], flag].concat();
        let run = fleet(dir.path(), &args);
        assert_eq!(run.code, 2, "{flag:?}: {}", run.stderr);
    }
}

/// A spec that does not parse on a side: named, the other domains compared, exit 2 (the
/// answer is incomplete); outside both sides it is no concern of the comparison.
fn a_broken_spec_on_a_side_is_an_error_outside_it_none() {
    let dir = sites();
    write(
        dir.path(),
        &format!("clusters/{}/cluster.lok8s.yaml", domain("fsn", 3)),
        "kind: Lo\nspec: [\n",
    );
    let run = fleet(dir.path(), &["--domain", "fsn-*", "--against", "nbg-*"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_has(&run.stderr, "[error] fsn-3.acme.example: not in the matrix");
    assert_has(&run.stdout, "cert-manager");
    let run = fleet(dir.path(), &["--domain", "air-*", "--against", "nbg-*"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_lacks(&run.stderr, "fsn-3");
}

/// The same comparison from the store (each domain's newest snapshot): what was recorded
/// — the project's later edits are not in it.
fn the_store_is_compared_as_recorded() {
    let dir = sites();
    let root = dir.path().to_str().unwrap().to_string();
    let store = dir.path().join("snapshots");
    let published = clinv(&["publish", "-A", "--root", &root])
        .store(&store)
        .run();
    assert_eq!(published.code, 0, "{}", published.stderr);
    // After the recording, fsn moves to air's version: the project no longer differs.
    cert_manager_pin(dir.path(), "clusters/.sites/fsn/cert-manager", "v1.18.0");
    let project = fleet(
        dir.path(),
        &[
            "--domain",
            "air-*",
            "--against",
            "fsn-*",
            "--addon",
            "cert-manager",
        ],
    );
    assert_eq!(project.code, 0, "{}", project.stderr);
    let stored = clinv(&[
        "fleet",
        "--from",
        "store",
        "--root",
        &root,
        "--domain",
        "air-*",
        "--against",
        "fsn-*",
        "--addon",
        "cert-manager",
    ])
    .store(&store)
    .run();
    assert_eq!(stored.code, 1, "{}", stored.stderr);
    assert_eq!(
        stored.stdout,
        "ADDON         air-* (5 domains)  fsn-* (5 domains)\ncert-manager  v1.18.0            v1.19.0\n"
    );
}

/// From a GitOps repository (`commit -A`'s folders on a branch): the same comparison of
/// what the team committed.
#[cfg(feature = "gitops")]
fn a_gitops_repository_is_compared_as_committed() {
    let dir = sites();
    let root = dir.path().to_str().unwrap().to_string();
    let work = dir.path().join("gitops");
    git(dir.path(), &["init", "-q", "-b", "main", "gitops"]);
    git(&work, &["config", "user.name", "Inventory Bot"]);
    git(&work, &["config", "user.email", "bot@acme.example"]);
    let store = dir.path().join("snapshots");
    let committed = clinv(&[
        "commit",
        "-A",
        "--root",
        &root,
        "--repo",
        work.to_str().unwrap(),
    ])
    .store(&store)
    .run();
    assert_eq!(committed.code, 0, "{}", committed.stderr);
    let run = clinv(&[
        "fleet",
        "--repo",
        work.to_str().unwrap(),
        "--domain",
        "fsn-*",
        "--against",
        "air-*",
        "-o",
        "json",
    ])
    .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["source"], "repository");
    let names: Vec<&str> = fields(&v["addons"], "name");
    // In the matrix's order: as addons first appear, domains in name order (air first).
    assert_eq!(
        names,
        ["cert-manager", "local-path-provisioner", "ingress-nginx"]
    );
}

trials! {
    Nothing: [
        two_sites_are_compared_in_one_command,
        the_rest_of_the_fleet_against_one_cluster_at_5_5_4_1,
        sides_that_run_the_same_exit_0,
        a_selection_without_against_narrows_the_matrix,
        sides_that_cannot_be_compared_are_refused,
        a_broken_spec_on_a_side_is_an_error_outside_it_none,
        the_store_is_compared_as_recorded,
    ],
}

#[cfg(feature = "gitops")]
pub mod gitops {
    use super::*;
    trials! {
        Nothing: [a_gitops_repository_is_compared_as_committed],
    }
}
