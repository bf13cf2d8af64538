//! Issue 25, the fleet view: one domain selection for the commands that cover several —
//! `-A`, `--domain` repeated, a glob — resolved by one rule (`project::select::resolve`).
//! One plain `--domain` stays exactly as it was (the other tests' goldens hold it).

use crate::support::*;
use std::path::Path;

const INDEX: &str = "examples/addons-index.json";

fn in_example(args: &[&str]) -> Run {
    let root = example();
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    clinv(&all).run()
}

/// A copy of the example project with a store of its own.
struct Example {
    project: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Example {
    fn new() -> Example {
        Example {
            project: copy_tree(&example()),
            store: tempfile::tempdir().unwrap(),
        }
    }

    /// `clinv --root PROJECT ARGS…` with this store.
    fn run(&self, args: &[&str]) -> Run {
        self.run_in(self.store.path(), args)
    }

    /// `clinv --root PROJECT ARGS…` with the store at `store`.
    fn run_in(&self, store: &Path, args: &[&str]) -> Run {
        clinv(&[])
            .root(self.project.path())
            .args(args)
            .store(store)
            .run()
    }
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// `addons -A`: one table led by DOMAIN, the deploy domain named on stderr (and in
/// `-o json`'s `left`), each entry of `-o json` with its domain; the rows of a domain are
/// the ones `addons --domain D` gives.
fn addons_of_several_domains_lead_with_the_domain() {
    let run = in_example(&["addons", "-A"]).success();
    golden("several/addons-A.txt", &run.stdout);
    assert!(run.stdout.starts_with("DOMAIN "), "{}", run.stdout);
    assert_has(&run.stderr, "'apps.acme.example' is a deploy domain");
    let all = json(&in_example(&["addons", "-A", "-o", "json"]).success());
    assert_eq!(all["left"][0]["domain"], "apps.acme.example");
    assert!(
        all["left"][0]["why"]
            .as_str()
            .unwrap()
            .contains("deploy domain"),
        "{all}"
    );
    let one =
        json(&in_example(&["addons", "--domain", "prod.acme.example", "-o", "json"]).success());
    let prod: Vec<serde_json::Value> = all["addons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["domain"] == "prod.acme.example")
        .map(|a| {
            let mut a = a.clone();
            let a_map = a.as_object_mut().unwrap();
            assert_eq!(a_map.remove("kind").unwrap(), one["kind"]);
            a_map.remove("domain");
            a
        })
        .collect();
    assert_eq!(serde_json::Value::from(prod), one["addons"]);
    // A glob and a name: the union, in name order, once each.
    let run = in_example(&[
        "addons",
        "--domain",
        "prod.*",
        "--domain",
        "lab.acme.example",
        "--domain",
        "prod.acme.example",
        "-o",
        "json",
    ])
    .success();
    let doc = json(&run);
    assert_eq!(
        doc["domains"],
        serde_json::json!(["lab.acme.example", "prod.acme.example"])
    );
    assert_eq!(doc["left"], serde_json::json!([]));
    // A glob is a fleet even when it matches one domain.
    let run = in_example(&["addons", "--domain", "edge.*", "--no-headers"]).success();
    assert!(
        run.stdout
            .lines()
            .all(|l| l.starts_with("edge.acme.example ")),
        "{}",
        run.stdout
    );
}

/// An unknown name among several, or a glob that matches nothing: exit 1 naming it with
/// a "did you mean"; `-A` with `--domain` is a usage error.
fn a_selection_naming_nothing_is_an_error_naming_it() {
    let run = in_example(&[
        "addons",
        "--domain",
        "prod.acme.example",
        "--domain",
        "lab.acme.exmple",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("lab.acme.exmple")
            && run.stderr.contains("did you mean 'lab.acme.example'?"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    let run = in_example(&["render", "--out", "/nonexistent/x", "--domain", "stage-*"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "--domain 'stage-*' matches no domain of the project",
    );
    assert!(run.stderr.contains("known domains: apps.acme.example"));
    let run = in_example(&["addons", "-A", "--domain", "prod.acme.example"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// `updates -A --offline`: the rendered inventories against the index, one table led by
/// DOMAIN, `-o json` entries with their domain; `--from FILE` names one inventory and
/// `--kubeconfig` one cluster, so both are refused with several domains.
fn updates_of_several_domains_lead_with_the_domain() {
    let index = repo().join(INDEX);
    let index = index.to_str().unwrap();
    let store = tempfile::tempdir().unwrap();
    let root = example();
    let args = |extra: &[&str]| {
        let mut all = vec![
            "updates",
            "--root",
            root.to_str().unwrap(),
            "--index",
            index,
        ];
        all.extend_from_slice(extra);
        clinv(&all)
            .env("CLINV_SNAPSHOTS", store.path().to_str().unwrap())
            .run()
    };
    let run = args(&["-A", "--offline"]).success();
    golden("several/updates-A.txt", &run.stdout);
    assert_has(&run.stderr, "'apps.acme.example' is a deploy domain");
    let doc = json(&args(&["--domain", "*.acme.example", "--offline", "-o", "json"]).success());
    let updates = doc["updates"].as_array().unwrap();
    assert!(!updates.is_empty());
    assert!(updates.iter().all(|u| u["domain"].is_string()), "{doc}");
    let one = args(&["--domain", "prod.acme.example", "--offline", "-o", "json"]).success();
    let one = json(&one);
    let prod: Vec<&str> = updates
        .iter()
        .filter(|u| u["domain"] == "prod.acme.example")
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    let single: Vec<&str> = one["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(prod, single);
    assert_eq!(doc["left"][0]["domain"], "apps.acme.example");
    for extra in [
        &["-A", "--from", "/x"][..],
        &["-A", "--kubeconfig", "/x"],
        &["--domain", "lab.*", "--context", "c"],
    ] {
        let run = args(extra);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    }
}

/// `render -A --out DIR`: DIR/<domain>/ for each cluster domain, the same bytes as
/// `render --domain D --out`; the deploy domain named, no folder; no `--out`: refused.
fn render_of_several_domains_writes_a_folder_each() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("inv");
    let run = in_example(&["render", "-A", "--out", dir.to_str().unwrap()]).success();
    assert_has(&run.stderr, "'apps.acme.example' is a deploy domain");
    let mut written: Vec<String> = all_files(&dir)
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    written.sort();
    let mut expected = Vec::new();
    for d in ["edge.acme.example", "lab.acme.example", "prod.acme.example"] {
        expected.push(format!("{d}/clusterinventory.crd.yaml"));
        expected.push(format!("{d}/clusterinventory.yaml"));
        let single = out.path().join(d);
        in_example(&["render", "--domain", d, "--out", single.to_str().unwrap()]).success();
        for f in ["clusterinventory.crd.yaml", "clusterinventory.yaml"] {
            assert_eq!(
                std::fs::read(dir.join(d).join(f)).unwrap(),
                std::fs::read(single.join(f)).unwrap(),
                "{d}/{f}"
            );
        }
    }
    assert_eq!(written, expected);
    let run = in_example(&[
        "render",
        "--domain",
        "lab.*",
        "--domain",
        "prod.acme.example",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--out"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
}

/// One domain that does not render: nothing is written for any, each failure named.
fn render_of_several_domains_writes_nothing_when_one_fails() {
    let project = copy_tree(&example());
    write(
        project.path(),
        "clusters/lab.acme.example/cluster.lok8s.yaml",
        "kind: [unclosed\n",
    );
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("inv");
    let run = clinv(&[
        "render",
        "--root",
        project.path().to_str().unwrap(),
        "-A",
        "--out",
        dir.to_str().unwrap(),
    ])
    .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("lab.acme.example"), "{}", run.stderr);
    assert_eq!(all_files(Path::new(&dir)), Vec::<std::path::PathBuf>::new());
}

/// `publish -A`: each cluster domain published through its own kubeconfig (none here, so
/// each is recorded pending: no-kubeconfig), the deploy domain named, a closing table of
/// the outcomes; exit 0, with `--strict` the worst code (3, no kubeconfig);
/// `--kubeconfig` names one cluster: refused (2), nothing recorded.
fn publish_of_several_domains_ends_with_a_table() {
    let fx = Example::new();
    let (project, store) = (&fx.project, &fx.store);
    let run = |args: &[&str]| fx.run(args);
    let offline = repo().join("examples/offline.kubeconfig");
    let refused = run(&["publish", "-A", "--kubeconfig", offline.to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let refused = run(&["publish", "--domain", "lab.*", "--context", "x"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(!store.path().join("v2").exists() && all_files(store.path()).is_empty());
    let published = run(&["publish", "-A"]).success();
    let rows: Vec<Vec<&str>> = published
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        ["DOMAIN", "RESULT", "DETAIL"],
        "{}",
        published.stdout
    );
    let results: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(
        results,
        [
            ("apps.acme.example", "deploy"),
            ("edge.acme.example", "pending"),
            ("lab.acme.example", "pending"),
            ("prod.acme.example", "pending"),
        ],
        "{}",
        published.stdout
    );
    assert_has(&published.stdout, "pending (no-kubeconfig)");
    let list = run(&["snapshots", "list", "-o", "json"]).success();
    let list: Vec<serde_json::Value> = serde_json::from_str(&list.stdout).unwrap();
    let mut domains: Vec<&str> = list.iter().map(|s| s["domain"].as_str().unwrap()).collect();
    domains.sort();
    assert_eq!(
        domains,
        ["edge.acme.example", "lab.acme.example", "prod.acme.example"]
    );
    let strict = run(&["--strict", "publish", "--domain", "*.acme.example"]);
    assert_eq!(strict.code, 3, "{}", strict.stderr);
    assert!(strict.stdout.starts_with("DOMAIN "), "{}", strict.stdout);
    // A domain that does not render is fail-soft as for one domain, and its row says so.
    write(
        project.path(),
        "clusters/lab.acme.example/cluster.lok8s.yaml",
        "kind: [unclosed\n",
    );
    let broken = run(&["publish", "-A"]).success();
    assert!(
        broken
            .stdout
            .lines()
            .any(|l| l.starts_with("lab.acme.example")
                && l.contains("not published (render-failed)")),
        "{}",
        broken.stdout
    );
}

/// `drift` and `status` take the same selection as `-A`: repeated `--domain` and globs,
/// the rows of the domains chosen (in name order), exit 16 (no cluster read here);
/// `--kubeconfig` names one cluster (2); a glob that matches nothing names itself.
fn drift_and_status_take_repeated_domains_and_globs() {
    let root = example();
    let root = root.to_str().unwrap();
    let drift = clinv(&[
        "drift",
        "--root",
        root,
        "--domain",
        "prod.acme.example",
        "--domain",
        "lab.*",
    ])
    .run();
    assert_eq!(drift.code, 16, "{}", drift.stderr);
    let all = clinv(&["drift", "-A", "--root", root]).run();
    let words = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    };
    let expected: Vec<Vec<String>> = words(&all.stdout)
        .into_iter()
        .filter(|l| !l[0].starts_with("apps.") && !l[0].starts_with("edge."))
        .collect();
    assert_eq!(words(&drift.stdout), expected, "{}", drift.stdout);
    let store = tempfile::tempdir().unwrap();
    let status = clinv(&["status", "--root", root, "--domain", "*.acme.example"])
        .env("CLINV_SNAPSHOTS", store.path().to_str().unwrap())
        .run();
    assert_eq!(status.code, 16, "{}", status.stderr);
    golden("fleet/status-A.no-kubeconfig.txt", &status.stdout);
    for args in [
        &[
            "drift",
            "--root",
            root,
            "--domain",
            "lab.*",
            "--kubeconfig",
            "/x",
        ][..],
        &[
            "status",
            "--root",
            root,
            "--domain",
            "lab.acme.example",
            "--domain",
            "prod.acme.example",
            "--context",
            "x",
        ],
    ] {
        let run = clinv(args).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    }
    let none = clinv(&["status", "--root", root, "--domain", "stage-*"]).run();
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "'stage-*' matches no domain");
}

/// `log` takes the same selection: the store's domains, `--domain` repeated or a glob
/// merged as `-A` merges them; a glob that matches none of the store's domains names
/// itself; `--repo`/`--addon` read one domain's history (2).
fn log_takes_repeated_domains_and_globs() {
    let fx = crate::selection::Fx::new();
    let log = |args: &[&str]| fx.in_project(&[&["log"][..], args].concat()).run();
    let all = log(&["-A", "--oneline"]).success();
    let both = log(&[
        "--domain",
        "prod.*",
        "--domain",
        "lab.acme.example",
        "--oneline",
    ])
    .success();
    assert_eq!(both.stdout, all.stdout);
    let lab = log(&["--domain", "lab.*", "-o", "json"]).success();
    let lab: Vec<serde_json::Value> = serde_json::from_str(&lab.stdout).unwrap();
    assert!(!lab.is_empty());
    assert!(
        lab.iter().all(|e| e["domain"] == "lab.acme.example"),
        "{lab:?}"
    );
    let none = log(&["--domain", "edge.*"]);
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "'edge.*' matches no domain in the store ");
    for extra in [
        &["--domain", "lab.*", "--repo", "/x"][..],
        &["-A", "--repo", "/x"],
        &["-A", "--addon", "cilium", "-o", "markdown"],
    ] {
        let run = log(extra);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    }
    // --addon over several domains is the fleet's history of the addon (issue 40; see
    // addon_history.rs): each line names its domain.
    let cilium = log(&["--domain", "lab.*", "--addon", "cilium"]).success();
    assert!(!cilium.stdout.is_empty(), "{}", cilium.stderr);
    assert!(
        cilium
            .stdout
            .lines()
            .all(|l| l.starts_with("lab.acme.example  ")),
        "{}",
        cilium.stdout
    );
}

/// `diff` of several domains: A and B resolved for each domain, one section each equal
/// to the domain's own `diff --domain D`, `-o json` a list of reports naming their
/// domains; the deploy domain said, not compared; a domain that cannot be compared is
/// an error on stderr after the others are shown (exit 2); stdin and one kubeconfig
/// are refused.
fn diff_of_several_domains_compares_each_domain() {
    let fx = Example::new();
    let project = &fx.project;
    let run = |args: &[&str]| fx.run(args);
    run(&["publish", "-A"]).success();
    set_chart_version(project.path(), "cilium", "1.19.3");
    run(&["publish", "--domain", "*.acme.example"]).success();
    let all = run(&["diff", "-A", "latest~1", "latest"]);
    assert_eq!(all.code, 1, "{}", all.stderr);
    assert_has(&all.stderr, "'apps.acme.example' is a deploy domain");
    for domain in ["edge.acme.example", "lab.acme.example", "prod.acme.example"] {
        let one = run(&["diff", "--domain", domain, "latest~1", "latest"]);
        assert_eq!(one.code, 1, "{}", one.stderr);
        assert_has(&one.stdout, "cilium 1.19.2 → 1.19.3");
        assert!(
            all.stdout
                .contains(&format!("== {domain} ==\n{}", one.stdout)),
            "{domain}: {}",
            all.stdout
        );
    }
    let json = run(&[
        "diff",
        "--domain",
        "l*",
        "--domain",
        "prod.acme.example",
        "latest~1",
        "latest",
        "-o",
        "json",
    ]);
    assert_eq!(json.code, 1, "{}", json.stderr);
    let reports: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    let domains: Vec<&str> = reports
        .iter()
        .map(|r| r["to"]["domain"].as_str().unwrap())
        .collect();
    assert_eq!(domains, ["lab.acme.example", "prod.acme.example"]);
    // Same on both sides: exit 0 for the fleet too.
    let same = run(&["diff", "-A", "latest", "latest"]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    // edge has no third snapshot: an error for it, the others still shown.
    set_chart_version(project.path(), "cilium", "1.19.4");
    run(&[
        "publish",
        "--domain",
        "lab.acme.example",
        "--domain",
        "prod.acme.example",
    ])
    .success();
    let partial = run(&["diff", "-A", "latest~2", "latest"]);
    assert_eq!(partial.code, 2, "{}", partial.stderr);
    assert_has(&partial.stderr, "[error] edge.acme.example: ");
    assert!(
        partial.stdout.contains("== lab.acme.example ==")
            && partial.stdout.contains("== prod.acme.example =="),
        "{}",
        partial.stdout
    );
    let offline = repo().join("examples/offline.kubeconfig");
    for args in [
        &["diff", "-A", "-", "latest"][..],
        &[
            "diff",
            "-A",
            "cluster",
            "latest",
            "--kubeconfig",
            offline.to_str().unwrap(),
        ],
    ] {
        let refused = run(args);
        assert_eq!(refused.code, 2, "{args:?}: {}", refused.stderr);
    }
}

/// `replay` of several domains: a glob and a name select among the store's domains, the
/// closing table (here `-o json`) has a row for each and nothing else; a glob matching
/// nothing is an error naming it.
fn replay_takes_repeated_domains_and_globs() {
    let fx = Example::new();
    let run = |args: &[&str]| fx.run(args);
    run(&["publish", "-A"]).success();
    let replay = run(&[
        "replay",
        "--domain",
        "l*",
        "--domain",
        "prod.acme.example",
        "--timeout",
        "1",
        "-o",
        "json",
    ]);
    assert_eq!(replay.code, 0, "{}", replay.stderr);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&replay.stdout).unwrap();
    let seen: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["domain"].as_str().unwrap(), r["result"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("lab.acme.example", "pending (no-kubeconfig)"),
            ("prod.acme.example", "pending (no-kubeconfig)"),
        ],
        "{}",
        replay.stdout
    );
    let none = run(&["replay", "--domain", "x*"]);
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "'x*' matches no domain");
}

/// `snapshots` of several domains: `list`, `verify`, `gc` and `export` take `--domain`
/// repeated and globs among the store's domains; `show` names one snapshot of one domain.
fn snapshots_take_repeated_domains_and_globs() {
    let fx = Example::new();
    let (project, store) = (&fx.project, &fx.store);
    let run = |store: &Path, args: &[&str]| fx.run_in(store, args);
    for version in ["1.19.3", "1.19.4", "1.19.5"] {
        run(store.path(), &["publish", "-A"]).success();
        set_chart_version(project.path(), "cilium", version);
    }
    // Applied, so gc may delete the middle one (it never deletes a pending snapshot).
    for domain in ["edge.acme.example", "lab.acme.example"] {
        mark_applied(&store.path().join(domain));
    }
    let two = ["--domain", "l*", "--domain", "prod.acme.example"];
    let domains_of = |stdout: &str| {
        let rows: Vec<serde_json::Value> = serde_json::from_str(stdout).unwrap();
        let mut seen: Vec<String> = rows
            .iter()
            .map(|r| r["domain"].as_str().unwrap().to_string())
            .collect();
        seen.dedup();
        seen
    };
    let list = run(
        store.path(),
        &[&["snapshots", "list", "-o", "json"][..], &two].concat(),
    );
    assert_eq!(
        domains_of(&list.success().stdout),
        ["lab.acme.example", "prod.acme.example"]
    );
    let verify = run(
        store.path(),
        &[&["snapshots", "verify", "-o", "json"][..], &two].concat(),
    );
    let verified: serde_json::Value = serde_json::from_str(&verify.success().stdout).unwrap();
    assert_eq!(verified["domains"], 2, "{verified}");
    let gc = run(
        store.path(),
        &[
            "snapshots",
            "gc",
            "--keep",
            "1",
            "--dry-run",
            "-o",
            "json",
            "--domain",
            "e*",
        ],
    );
    let doomed: Vec<serde_json::Value> = serde_json::from_str(&gc.success().stdout).unwrap();
    assert!(
        doomed.iter().all(|d| d["domain"] == "edge.acme.example"),
        "{doomed:?}"
    );
    let archive = store.path().join("two.tar");
    let export = [
        &["snapshots", "export", archive.to_str().unwrap()][..],
        &two,
    ]
    .concat();
    run(store.path(), &export).success();
    let other = tempfile::tempdir().unwrap();
    run(
        other.path(),
        &["snapshots", "import", archive.to_str().unwrap()],
    )
    .success();
    let imported = run(other.path(), &["snapshots", "list", "-o", "json"]).success();
    assert_eq!(
        domains_of(&imported.stdout),
        ["lab.acme.example", "prod.acme.example"]
    );
    let show = run(
        store.path(),
        &["snapshots", "show", "latest", "--domain", "*"],
    );
    assert_eq!(show.code, 2, "{}", show.stderr);
    let none = run(store.path(), &["snapshots", "list", "--domain", "x*"]);
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "'x*' matches no domain");
}

trials! {
    Nothing: [
        snapshots_take_repeated_domains_and_globs,
        replay_takes_repeated_domains_and_globs,
        diff_of_several_domains_compares_each_domain,
        addons_of_several_domains_lead_with_the_domain,
        a_selection_naming_nothing_is_an_error_naming_it,
        updates_of_several_domains_lead_with_the_domain,
        render_of_several_domains_writes_a_folder_each,
        render_of_several_domains_writes_nothing_when_one_fails,
        publish_of_several_domains_ends_with_a_table,
        drift_and_status_take_repeated_domains_and_globs,
        log_takes_repeated_domains_and_globs,
    ],
}
