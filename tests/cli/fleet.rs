//! `clinv fleet`: the addon × domain matrix of the example project (four domains: a
//! deploy domain, two clusters with per-cluster pins, one with a target of its own) and
//! of a store.

use crate::support::*;

fn fleet(args: &[&str]) -> Run {
    let root = example();
    clinv(&[&["fleet", "--root", root.to_str().unwrap()][..], args].concat()).run()
}

/// The whole matrix, a row per addon and per domain, as golden files; the deploy domain
/// is named, never silently skipped.
fn the_matrix_of_the_project_matches_its_golden_files() {
    let table = fleet(&[]).success();
    golden("fleet/acme.txt", &table.stdout);
    assert_has(
        &table.stderr,
        "[info] 'apps.acme.example' is a deploy domain: it has no inventory of its own; its cluster 'prod.acme.example' carries the inventory",
    );
    golden(
        "fleet/acme.by-domain.md",
        &fleet(&["--by", "domain", "-o", "markdown"])
            .success()
            .stdout,
    );
    let json = fleet(&["-o", "json"]).success().stdout;
    golden("fleet/acme.json", &json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["left"][0]["domain"], "apps.acme.example");
    // The matrix agrees with each domain's own render.
    for domain in ["edge.acme.example", "lab.acme.example", "prod.acme.example"] {
        let inv = rendered(&example(), domain);
        for addon in inv["spec"]["addons"].as_array().unwrap() {
            let name = addon["name"].as_str().unwrap();
            let row = v["addons"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["name"] == name)
                .unwrap();
            assert_eq!(
                row["versions"][domain], addon["chartVersion"],
                "{domain} {name}"
            );
        }
    }
    let yaml: serde_json::Value =
        serde_saphyr::from_str(&fleet(&["-o", "yaml"]).success().stdout).unwrap();
    assert_eq!(yaml, v);
}

/// "Which clusters still run cert-manager below v1.20?" — one command; a minor line
/// means its .0; nothing matched is exit 0 with no rows and a line that says so.
fn queries_answer_fleet_questions() {
    let below = fleet(&[
        "--addon",
        "cert-manager",
        "--below",
        "v1.20",
        "--by",
        "domain",
    ])
    .success();
    assert_eq!(
        below.stdout,
        "DOMAIN            cert-manager\nlab.acme.example  v1.18.0\n"
    );
    let above = fleet(&["--addon", "cert-manager", "--above", "1.19", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&above.stdout).unwrap();
    assert_eq!(v["domains"], serde_json::json!(["prod.acme.example"]));
    let none = fleet(&["--addon", "cilium", "--below", "1.0"]).success();
    assert!(none.stdout.is_empty(), "{}", none.stdout);
    assert_has(&none.stderr, "[info] no domain runs cilium below 1.0");
    // Behind the published index (examples/addons-index.json): every versioned addon of
    // the example is older there.
    let index = repo().join("examples/addons-index.json");
    let behind = fleet(&[
        "--behind-index",
        index.to_str().unwrap(),
        "--addon",
        "cert-manager",
    ])
    .success();
    assert_eq!(
        behind.stdout,
        "ADDON         lab.acme.example  prod.acme.example\ncert-manager  v1.18.0           v1.20.1\n"
    );
    // Differs from the majority: cilium is 1.19.2 everywhere, cert-manager has none.
    let differs = fleet(&["--differs", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&differs.stdout).unwrap();
    let names: Vec<&str> = fields(&v["addons"], "name");
    assert!(
        !names.contains(&"cilium") && names.contains(&"cert-manager"),
        "{names:?}"
    );
    let bad = fleet(&["--below", "latest"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_has(&bad.stderr, "'latest' is not a version");
}

/// `--from store`: each domain's newest snapshot, not the project as it is now.
fn the_store_gives_what_was_recorded() {
    let dir = copy_tree(&example());
    let root = dir.path().to_str().unwrap().to_string();
    let store = dir.path().join("snapshots");
    let run = |args: &[&str]| {
        clinv(&[args, &["--root", &root][..]].concat())
            .store(&store)
            .run()
            .success()
    };
    run(&["publish", "--domain", "prod.acme.example"]);
    run(&["publish", "--domain", "lab.acme.example"]);
    set_chart_version(dir.path(), "cilium", "1.20.1");
    run(&["publish", "--domain", "prod.acme.example"]);
    set_chart_version(dir.path(), "cilium", "1.21.0");
    let recorded = run(&["fleet", "--from", "store", "--addon", "cilium"]);
    // Published without a cluster: queued, never applied, so every cell is waiting.
    assert_eq!(
        recorded.stdout,
        "ADDON   lab.acme.example  prod.acme.example\ncilium  1.19.2 (queued)   1.20.1 (queued)\n"
    );
    let json = run(&[
        "fleet", "--from", "store", "-o", "json", "--addon", "cilium",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        doc["addons"][0]["queued"],
        serde_json::json!(["lab.acme.example", "prod.acme.example"]),
        "{}",
        json.stdout
    );
    let desired = run(&[
        "fleet",
        "--addon",
        "cilium",
        "--by",
        "domain",
        "--no-headers",
    ]);
    assert_eq!(
        desired.stdout,
        "edge.acme.example  1.21.0\nlab.acme.example   1.21.0\nprod.acme.example  1.21.0\n"
    );
}

/// A store and no project (`CLINV_SNAPSHOTS` or `--snapshots`, run outside any project):
/// plain `fleet` reads the store and says so; `--from project` there, and `fleet` with
/// neither a project nor a store, name both ways out (`--root`, `--from store` with
/// `--snapshots`), not `--root` alone.
fn fleet_without_a_project_reads_the_store_it_is_given() {
    let dir = copy_tree(&example());
    let store = dir.path().join("snapshots");
    clinv(&["publish", "--domain", "prod.acme.example"])
        .root(dir.path())
        .store(&store)
        .run()
        .success();
    let elsewhere = tempfile::tempdir().unwrap();
    let plain = clinv(&["fleet", "--addon", "cilium"])
        .cwd(elsewhere.path())
        .store(&store)
        .run()
        .success();
    assert_eq!(
        plain.stdout,
        "ADDON   prod.acme.example\ncilium  1.19.2 (queued)\n"
    );
    assert_has(&plain.stderr, "[info] no lok8s project found in ");
    assert_has(&plain.stderr, "--from store");
    assert_has(&plain.stderr, &store.display().to_string());
    let quiet = clinv(&["fleet", "-q", "--addon", "cilium"])
        .cwd(elsewhere.path())
        .store(&store)
        .run()
        .success();
    assert_eq!(quiet.stdout, plain.stdout);
    assert_lacks(&quiet.stderr, "[info]");
    let asked = clinv(&["fleet", "--from", "project"])
        .cwd(elsewhere.path())
        .store(&store)
        .run();
    assert_eq!(asked.code, 1, "{}", asked.stderr);
    assert_has(&asked.stderr, "--from store");
    assert_has(&asked.stderr, "--root");
    let neither = clinv(&["fleet"])
        .cwd(elsewhere.path())
        .env_remove("CLINV_SNAPSHOTS")
        .run();
    assert_eq!(neither.code, 1, "{}", neither.stderr);
    assert_has(&neither.stderr, "--from store");
    assert_has(&neither.stderr, "--snapshots DIR");
    assert_has(&neither.stderr, "--root");
    assert!(neither.stdout.is_empty(), "{}", neither.stdout);
}

/// Issue 40, item 8: a fleet with three deploy domains (the example's apps, plus api and
/// web into prod) — every command over several domains says them once, in one `[info]`
/// line naming all three and their cluster, not a line each; `-q` hides it.
fn deploy_domains_are_said_once_per_run() {
    let dir = copy_tree(&example());
    let clusters = dir.path().join("clusters");
    let deploy =
        std::fs::read_to_string(clusters.join("apps.acme.example/deploy.lok8s.yaml")).unwrap();
    for name in ["api", "web"] {
        write(
            &clusters,
            &format!("{name}.acme.example/deploy.lok8s.yaml"),
            deploy.replace("name: apps", &format!("name: {name}")),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let store = dir.path().join("snapshots");
    let summary = "[info] 3 deploy domains have no inventory of their own: api.acme.example, apps.acme.example, web.acme.example (their cluster prod.acme.example carries it: clinv render --domain prod.acme.example)\n";
    for args in [
        &["fleet"][..],
        &["fleet", "--from", "store"][..],
        &["render", "-A", "--out", out][..],
        &["addons", "-A"][..],
        &["publish", "-A"][..],
        &["diff", "-A", "latest", "latest"][..],
    ] {
        let run = clinv(args).root(dir.path()).store(&store).run();
        let said: String = run
            .stderr
            .lines()
            .filter(|l| l.contains("deploy domain"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(said, summary, "{args:?}: {}", run.stderr);
        let quiet = clinv(&[args, &["-q"][..]].concat())
            .root(dir.path())
            .store(&store)
            .run();
        assert_lacks(&quiet.stderr, "deploy domain");
    }
}

/// `drift -A` without any cluster: every domain a row (the deploy domain named), exit 16;
/// one kubeconfig for every domain is refused (each has its own).
fn drift_of_every_domain_says_what_it_could_not_read() {
    let root = example();
    let root = root.to_str().unwrap();
    let run = clinv(&["drift", "-A", "--root", root]).run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    golden("fleet/drift-A.no-kubeconfig.txt", &run.stdout);
    for args in [
        &["drift", "-A", "--root", root, "--kubeconfig", "/x"][..],
        &["--kubeconfig", "/x", "drift", "-A", "--root", root],
        &[
            "drift",
            "-A",
            "--domain",
            "lab.acme.example",
            "--root",
            root,
        ],
    ] {
        let run = clinv(args).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    }
}

/// `fleet --from live` without any cluster: no column is made up — every cluster domain
/// named as not read, the deploy domain as such — and exit 16; one kubeconfig for every
/// domain is refused.
fn fleet_from_live_without_a_cluster_names_every_domain_and_exits_16() {
    let root = example();
    let root = root.to_str().unwrap();
    let run = clinv(&["fleet", "--from", "live", "--root", root])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    assert_eq!(run.stdout, "", "no matrix without a cluster read");
    for d in ["edge", "lab", "prod"] {
        let want = format!("{d}.acme.example: not in the matrix: not read (no-kubeconfig");
        assert!(run.stderr.contains(&want), "{d}: {}", run.stderr);
    }
    assert_has(&run.stderr, "[info] 'apps.acme.example' is a deploy domain");
    let run = clinv(&["fleet", "--from", "live"])
        .root(root)
        .kubeconfig("/x")
        .run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Whatever the source: a flag that names one cluster is refused, never ignored
    // (issue 40 item 8).
    for from in ["project", "store", "live"] {
        for flag in [["--kubeconfig", "/x"], ["--context", "c"]] {
            let run = clinv(&["fleet", "--from", from, flag[0], flag[1]])
                .root(root)
                .run();
            assert_eq!(run.code, 2, "--from {from} {flag:?}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains("each is read through its own kubeconfig"),
                "{}",
                run.stderr
            );
            assert_eq!(run.stdout, "");
        }
    }
}

/// `status -A` without any cluster: a row per domain (the deploy domain named), exit 16.
fn status_of_every_domain_without_a_cluster() {
    let root = example();
    let store = tempfile::tempdir().unwrap();
    let run = clinv(&["status", "-A", "--root", root.to_str().unwrap()])
        .store(store.path())
        .run();
    assert_eq!(run.code, 16, "{}", run.stderr);
    golden("fleet/status-A.no-kubeconfig.txt", &run.stdout);
    let bad = clinv(&["status", "-A"]).root(&root).kubeconfig("/x").run();
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// `-o html`: one self-contained page (no script, nothing fetched), every cell of the
/// matrix, behind-the-index and off-the-majority cells coloured rather than left out; a
/// golden file, and the page as Chromium renders it (DOM text and a screenshot that is
/// not blank; `CLINV_KEEP_SCREENSHOTS=DIR` keeps it, as docs/images/fleet.png was made).
fn the_fleet_page() -> String {
    let index = repo().join("examples/addons-index.json");
    let page = fleet(&[
        "-o",
        "html",
        "--behind-index",
        index.to_str().unwrap(),
        "--differs",
    ])
    .success()
    .stdout;
    page.replace(index.to_str().unwrap(), "examples/addons-index.json")
}

fn the_fleet_page_is_self_contained_and_colours_its_cells() {
    let page = the_fleet_page();
    golden("fleet/acme.html", &page);
    assert!(
        !page.contains("<script") && !page.contains("src=\"http") && !page.contains("href=\"http")
    );
    // cilium 1.19.2 is behind 1.21.0 everywhere, and everywhere the same.
    assert!(page.contains("<td class=\"behind\">1.19.2</td>"), "{page}");
    // cert-manager: behind, and no majority between v1.18.0 and v1.20.1.
    assert!(
        page.contains("<td class=\"behind differs\">v1.18.0</td>"),
        "{page}"
    );
    assert!(page.contains("position: sticky"));
    assert!(page.contains("apps.acme.example: not in the matrix: a deploy domain"));
}

fn the_fleet_page_renders_in_chromium() {
    let browser = crate::browser::chromium();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("fleet.html");
    std::fs::write(&page, the_fleet_page()).unwrap();
    let dom = browser.dump_dom(&page);
    for text in [
        "Fleet inventory",
        "edge.acme.example",
        "prod.acme.example",
        "cert-manager",
        "v1.20.1",
        "behind the index",
        "infrastructure",
    ] {
        assert!(dom.contains(text), "{text} missing from the rendered DOM");
    }
    browser.screenshot_not_blank(&page, 20_000, "fleet.png");
}

/// Issue 39, finding 3: a misspelled `--addon` is not "no domain runs it" — a CI gate
/// must not pass on a typo. It is a warning with the closest addon's name, as an
/// `--ignore` that matches nothing; `--strict` refuses (exit 2), from every source.
fn a_misspelled_addon_is_said_not_answered() {
    let typo = fleet(&["--addon", "cert-manger", "--below", "v1.19"]).success();
    assert!(typo.stdout.is_empty(), "{}", typo.stdout);
    assert_has(
        &typo.stderr,
        "[warn] --addon 'cert-manger': no domain of the project has an addon of that name — did you mean 'cert-manager'?",
    );
    assert_lacks(&typo.stderr, "no domain runs cert-manger");
    let root = example();
    let strict = clinv(&["--strict", "fleet", "--addon", "cert-manger"])
        .root(&root)
        .run();
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    assert_has(&strict.stderr, "[error] --addon 'cert-manger'");
    assert!(strict.stdout.is_empty(), "{}", strict.stdout);
    // A known addon that matches no bound is still the plain answer.
    let none = fleet(&["--addon", "cilium", "--below", "1.0"]).success();
    assert_lacks(&none.stderr, "[warn]");
    // The store's matrix follows the same rule.
    let store = scratch_store();
    clinv(&["publish", "--domain", "lab.acme.example"])
        .root(&root)
        .store(&store)
        .run()
        .success();
    let stored = clinv(&["fleet", "--from", "store", "--addon", "cilum"])
        .root(&root)
        .store(&store)
        .run()
        .success();
    assert_has(
        &stored.stderr,
        "no domain of the store has an addon of that name — did you mean 'cilium'?",
    );
}

/// Issue 39, finding 4: a domain whose spec does not parse is an error of `fleet` (exit 1,
/// `[error]` naming the domain, file, line and column, shown under `-q`), the other
/// domains printed — the rule of `addons -A` and every command over several domains.
fn a_domain_that_does_not_parse_is_an_error_of_the_fleet() {
    let project = copy_tree(&example());
    std::fs::write(
        project
            .path()
            .join("clusters/lab.acme.example/cluster.lok8s.yaml"),
        "kind: [unclosed\n",
    )
    .unwrap();
    let run = clinv(&["-q", "fleet", "--by", "domain"])
        .root(project.path())
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "[error] lab.acme.example: not in the matrix:");
    assert_has(&run.stderr, "cluster.lok8s.yaml");
    assert_has(&run.stdout, "prod.acme.example");
    assert_lacks(&run.stdout, "lab.acme.example");
    let json = clinv(&["fleet", "-o", "json"]).root(project.path()).run();
    assert_eq!(json.code, 1, "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let failed: Vec<&serde_json::Value> = doc["left"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["failed"] == true)
        .collect();
    assert_eq!(failed.len(), 1, "{}", json.stdout);
    assert_eq!(failed[0]["domain"], "lab.acme.example");
    // From the live clusters (none answers here): the spec's error, not "not read".
    let live = clinv(&["fleet", "--from", "live", "--timeout", "3"])
        .root(project.path())
        .run();
    assert_eq!(live.code, 1, "{}", live.stderr);
    assert_has(
        &live.stderr,
        "[error] lab.acme.example: not in the matrix: ",
    );
    assert_has(&live.stderr, "cluster.lok8s.yaml:2:1: invalid YAML");
    // The same project through addons -A: the same rule.
    let addons = clinv(&["-q", "addons", "-A"]).root(project.path()).run();
    assert_eq!(addons.code, 1, "{}", addons.stderr);
    assert_has(&addons.stderr, "[error] lab.acme.example");
}

/// Issue 39, finding 5: `status -A` names a spec that does not parse (file, line and
/// column) instead of blaming the kubeconfig it could not choose (guessing one could
/// reach another cluster): the row says `error`, exit 1 — as `drift -A` and `fleet`.
fn status_of_every_domain_names_a_spec_that_does_not_parse() {
    let project = copy_tree(&example());
    let spec = project
        .path()
        .join("clusters/lab.acme.example/cluster.lok8s.yaml");
    std::fs::write(&spec, "kind: [unclosed\n").unwrap();
    let store = scratch_store();
    let run = clinv(&["status", "-A"])
        .root(project.path())
        .store(&store)
        .run();
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lab = run
        .stdout
        .lines()
        .find(|l| l.starts_with("lab.acme.example"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert_has(lab, &format!("error: {}:2:1: invalid YAML", spec.display()));
    assert_lacks(lab, "kubeconfig");
    let one = clinv(&["status", "--domain", "lab.acme.example"])
        .root(project.path())
        .store(&store)
        .run();
    assert_eq!(one.code, 1, "{}", one.stderr);
    assert_has(&one.stderr, &format!("[error] {}:2:1", spec.display()));
}

trials! {
    Chromium: [
        the_fleet_page_renders_in_chromium,
    ],
    Nothing: [
        the_fleet_page_is_self_contained_and_colours_its_cells,
        status_of_every_domain_without_a_cluster,
        fleet_from_live_without_a_cluster_names_every_domain_and_exits_16,
        drift_of_every_domain_says_what_it_could_not_read,
        the_matrix_of_the_project_matches_its_golden_files,
        queries_answer_fleet_questions,
        a_misspelled_addon_is_said_not_answered,
        a_domain_that_does_not_parse_is_an_error_of_the_fleet,
        status_of_every_domain_names_a_spec_that_does_not_parse,
        the_store_gives_what_was_recorded,
        fleet_without_a_project_reads_the_store_it_is_given,
        deploy_domains_are_said_once_per_run,
    ],
}
