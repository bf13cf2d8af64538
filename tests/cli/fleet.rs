//! `clinv fleet`: the addon × domain matrix of the example project (four domains: a
//! deploy domain, two clusters with per-cluster pins, one with a target of its own) and
//! of a store.

use crate::support::*;
use std::collections::BTreeMap;

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
    // Issue 49, finding 4: the fleet report's matrix marks the same cells queued as
    // `fleet -o html`, in its JSON and on its page.
    let page = run(&["fleet", "--from", "store", "-o", "html"]).stdout;
    let report = run(&["report", "-A"]).stdout;
    let queued = |html: &str| html.matches("<td class=\"queued").count();
    assert!(queued(&page) >= 2, "{page}");
    assert_eq!(queued(&report), queued(&page), "{report}");
    let report = run(&["report", "-A", "-o", "json"]).stdout;
    let doc: serde_json::Value = serde_json::from_str(&report).unwrap();
    let cilium = doc["matrix"]["addons"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "cilium"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        cilium["queued"],
        serde_json::json!(["lab.acme.example", "prod.acme.example"]),
        "{report}"
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

/// What names one cluster or one inventory, with several domains, is a usage error said
/// before any domain is read (exit 2, nothing on stdout): `status -A --kubeconfig`,
/// `updates -A --context` (after the index is read), `updates --from FILE -A`, and `fleet
/// --against` asked for the matrix's page.
fn several_domains_refuse_what_names_one() {
    let root = example();
    let root = root.to_str().unwrap();
    let index = fixture("updates/index.json");
    let index = index.to_str().unwrap();
    let against = ["fleet", "--against", "prod.acme.example", "-o", "html"];
    let cases: [(&[&str], &str); 4] = [
        (
            &["status", "-A", "--kubeconfig", "/x"],
            "clinv status with several domains",
        ),
        (
            &["updates", "--index", index, "-A", "--context", "c"],
            "clinv updates with several domains",
        ),
        (
            &["updates", "--index", index, "--from", index, "-A"],
            "--from FILE is one inventory",
        ),
        (&against, "-o html is the matrix's page"),
    ];
    for (args, said) in cases {
        let run = clinv(args).root(root).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert_has(&run.stderr, said);
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

/// `-o html`: one self-contained page (one inline script, nothing fetched), every cell of the
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
    // One inline script (the filter box); nothing fetched, and the page's CSP says so.
    assert_eq!(page.matches("<script").count(), 1);
    assert!(!page.contains(" src=") && !page.contains("href=\"http"));
    assert_has(&page, "default-src 'none'");
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

/// Issue 40, item 6: a fleet of 16 cluster domains in three sites — `fsn-prod-N` (copies
/// of prod), `hel-stage-N` (copies of lab, each pinning its own cert-manager v1.19.N) and
/// `nbg-edge-N` (copies of edge) — with the example's edge, lab, prod and deploy domain.
pub fn sixteen() -> tempfile::TempDir {
    let dir = copy_tree(&example());
    let clusters = dir.path().join("clusters");
    for n in 1..=5 {
        copy_dir(
            &clusters.join("prod.acme.example"),
            &clusters.join(format!("fsn-prod-{n}.acme.example")),
        );
    }
    for n in 1..=4 {
        let to = clusters.join(format!("hel-stage-{n}.acme.example"));
        copy_dir(&clusters.join("lab.acme.example"), &to);
        let chart = to.join("addons/cert-manager/chart.yaml");
        let text = std::fs::read_to_string(&chart).unwrap();
        std::fs::write(&chart, text.replace("v1.18.0", &format!("v1.19.{n}"))).unwrap();
    }
    for n in 1..=4 {
        copy_dir(
            &clusters.join("edge.acme.example"),
            &clusters.join(format!("nbg-edge-{n}.acme.example")),
        );
    }
    dir
}

/// The cells of a (possibly wrapped) matrix table: (row key, column name) → cell, and
/// how many times each column name heads a block. A wrapped table's `Domains: *SUFFIX`
/// line gives back the end its domain headers leave out.
fn cells_of(table: &str) -> (BTreeMap<(String, String), String>, BTreeMap<String, usize>) {
    let (mut cells, mut heads) = (BTreeMap::new(), BTreeMap::new());
    let (suffix, table) = match table.strip_prefix("Domains: *") {
        Some(rest) => rest.split_once("\n\n").unwrap(),
        None => ("", table),
    };
    for block in table.split("\n\n") {
        let mut lines = block.lines();
        let header: Vec<String> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .enumerate()
            .map(|(i, h)| match i {
                0 => h.to_string(),
                _ => format!("{h}{suffix}"),
            })
            .collect();
        for name in &header[1..] {
            *heads.entry(name.to_string()).or_insert(0) += 1;
        }
        for line in lines {
            let row: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(row.len(), header.len(), "{line:?} in\n{block}");
            for (name, cell) in header[1..].iter().zip(&row[1..]) {
                let key = (row[0].to_string(), name.to_string());
                assert!(cells.insert(key, cell.to_string()).is_none(), "{line}");
            }
        }
    }
    (cells, heads)
}

/// At 16 domains the matrix is 400+ columns wide: with a width (`COLUMNS`, or the
/// terminal's) it wraps into blocks that each fit and repeat the ADDON column (DOMAIN
/// with `--by domain`), every cell whole in exactly one block; a pipe without `COLUMNS`
/// (or with a `COLUMNS` that is no width) gets whole lines.
fn the_sixteen_domain_matrix_fits_the_terminal() {
    let dir = sixteen();
    let run = |columns: Option<&str>, args: &[&str]| {
        let mut c = clinv(&[&["fleet"][..], args].concat()).root(dir.path());
        if let Some(columns) = columns {
            c = c.env("COLUMNS", columns);
        }
        c.run().success().stdout
    };
    let whole = run(None, &[]);
    assert_eq!(whole.lines().next().unwrap().split_whitespace().count(), 17);
    assert!(whole.lines().next().unwrap().len() > 400, "{whole}");
    for junk in ["abc", "0", "-3", ""] {
        assert_eq!(run(Some(junk), &[]), whole, "COLUMNS={junk:?}");
    }
    let (all, _) = cells_of(&whole);
    for (columns, by, golden_name) in [
        (80, "addon", "fleet/sixteen.80.txt"),
        (120, "addon", "fleet/sixteen.120.txt"),
        (80, "domain", "fleet/sixteen.by-domain.80.txt"),
    ] {
        let text = run(Some(&columns.to_string()), &["--by", by]);
        golden(golden_name, &text);
        for line in text.lines() {
            assert!(line.chars().count() <= columns, "{line:?} over {columns}");
        }
        let (cells, heads) = cells_of(&text);
        assert!(heads.values().all(|&n| n == 1), "{heads:?}");
        let (unwrapped, _) = cells_of(&run(None, &["--by", by]));
        assert_eq!(cells, unwrapped, "COLUMNS={columns} --by {by}");
        if by == "addon" {
            assert_eq!(cells, all);
            assert!(
                text.starts_with("Domains: *.acme.example\n\nADDON "),
                "{text}"
            );
            assert!(text.matches("\n\nADDON ").count() >= 2, "{text}");
        } else {
            assert!(text.matches("\n\nDOMAIN ").count() >= 1, "{text}");
        }
    }
    // -o wide: the category stays with the addon in every block.
    let wide = run(Some("120"), &["-o", "wide"]);
    for block in wide.split("\n\n").skip(1) {
        assert!(block.starts_with("ADDON  "), "{block}");
        assert_has(block.lines().next().unwrap(), "CATEGORY");
    }
    // --no-headers: no block has a header, and the rows are still whole.
    let bare = run(Some("80"), &["--no-headers"]);
    assert_lacks(&bare, "ADDON");
    assert_has(&bare, "\n\ncilium ");
}

/// `status -A` over 16 domains was 185 columns: by default the essential columns, the
/// SOURCE text cut with `…` to fit `COLUMNS`; `-o wide` every column and every word.
fn status_of_sixteen_domains_fits_the_terminal() {
    let dir = sixteen();
    let store = dir.path().join("snapshots");
    let run = |columns: Option<&str>, args: &[&str]| {
        let mut c = clinv(&[&["status", "-A"][..], args].concat())
            .root(dir.path())
            .store(&store);
        if let Some(columns) = columns {
            c = c.env("COLUMNS", columns);
        }
        let run = c.run();
        assert_eq!(run.code, 16, "{}", run.stderr);
        run.stdout
    };
    let fitted = run(Some("80"), &[]);
    golden("fleet/status-A.sixteen.80.txt", &fitted);
    for line in fitted.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    assert_eq!(fitted.lines().count(), 18, "{fitted}");
    assert_has(&fitted, "fsn-prod-5.acme.example ");
    assert_has(&fitted, "…");
    assert_lacks(&fitted, "LAST PUSHED");
    let wide = run(Some("80"), &["-o", "wide"]);
    assert_has(&wide, "LAST PUSHED");
    assert_has(
        &wide,
        "(no-kubeconfig: kubeconfig not found (/nonexistent/kubeconfig))",
    );
    assert_lacks(&wide, "…");
    assert_eq!(run(None, &["-o", "wide"]), wide);
    let piped = run(None, &[]);
    assert_lacks(&piped, "…");
    assert_lacks(&piped, "LAST PUSHED");
}

/// Every command that prints a table takes `-o wide` (kubectl's habit): it is never
/// refused as a format.
fn every_table_takes_o_wide() {
    let dir = sixteen();
    let root = dir.path().to_str().unwrap();
    let store = dir.path().join("snapshots");
    let index = repo().join("examples/addons-index.json");
    let index = index.to_str().unwrap();
    for args in [
        &["fleet", "-o", "wide"][..],
        &["status", "-A", "-o", "wide"],
        &["drift", "-A", "-o", "wide"],
        &["addons", "-A", "-o", "wide"],
        &["updates", "-A", "--index", index, "-o", "wide"],
        &["snapshots", "list", "-o", "wide"],
        &["publish", "-A", "-o", "wide"],
        &["replay", "-A", "-o", "wide"],
        &["commit", "-A", "--repo", "/nonexistent", "-o", "wide"],
    ] {
        let run = clinv(args).root(root).store(&store).run();
        assert_lacks(&run.stderr, "unsupported output format");
        assert_lacks(&run.stderr, "invalid value");
        assert_ne!(run.code, 2, "{args:?}: {}", run.stderr);
    }
}

/// Issue 40, item 6: `--by domain` was ignored by the page (byte-identical): a row per
/// domain, a column per addon, and the same cells.
fn the_fleet_page_honours_by_domain() {
    let by_addon = fleet(&["-o", "html"]).success().stdout;
    let by_domain = fleet(&["-o", "html", "--by", "domain"]).success().stdout;
    assert_ne!(by_addon, by_domain);
    assert_has(
        &by_domain,
        "<tr data-k=\"lab.acme.example\"><th>lab.acme.example</th>",
    );
    assert_has(&by_domain, "data-rows=\"domain\"");
    assert_has(
        &by_domain,
        "<th class=\"rot\" data-k=\"cert-manager\" title=\"cert-manager\">",
    );
    assert_has(&by_addon, "data-rows=\"addon\"");
    assert_has(
        &by_addon,
        "<th class=\"rot\" data-k=\"lab.acme.example\" title=\"lab.acme.example\"><span>lab</span></th>",
    );
    // The same cells either way: cert-manager's versions in lab and prod.
    for page in [&by_addon, &by_domain] {
        assert_eq!(page.matches(">v1.18.0</td>").count(), 1, "{page}");
        assert_eq!(page.matches(">v1.20.1</td>").count(), 1, "{page}");
        assert_eq!(page.matches(">1.19.2</td>").count(), 3, "{page}");
    }
}

/// A project of `n` cluster domains in three sites (`fsn-prod-N`, `hel-stage-N`,
/// `nbg-edge-N`, copies of the example's prod, lab and edge), for the 1,000-domain page.
fn many(n: usize) -> tempfile::TempDir {
    let dir = copy_tree(&example());
    let clusters = dir.path().join("clusters");
    for i in 0..n.saturating_sub(3) {
        let (from, site) = match i % 3 {
            0 => ("prod", "fsn-prod"),
            1 => ("lab", "hel-stage"),
            _ => ("edge", "nbg-edge"),
        };
        copy_dir(
            &clusters.join(format!("{from}.acme.example")),
            &clusters.join(format!("{site}-{i:04}.acme.example")),
        );
    }
    dir
}

/// What the test's probe script (appended to a copy of a page) measures in Chromium:
/// the computed position of the header row and first column, where the last domain
/// column ends, whether the page scrolls sideways, and what the filter box leaves.
const PROBE: &str = r#"<script>
(function () {
  var t = document.getElementById('matrix');
  var head = t.tHead.rows[0].cells, first = t.tBodies[0].rows[0].cells[0];
  var last = head[head.length - 1].getBoundingClientRect();
  var out = {
    headPosition: getComputedStyle(head[1]).position,
    cornerPosition: getComputedStyle(head[0]).position,
    firstColumnPosition: getComputedStyle(first).position,
    lastColumnRight: Math.round(last.right),
    pageWidth: document.documentElement.scrollWidth,
    windowWidth: window.innerWidth
  };
  var q = document.getElementById('q-domain');
  q.value = 'fsn-*';
  q.dispatchEvent(new Event('input'));
  var shown = 0;
  for (var i = 1; i < head.length; i++) if (!head[i].hidden) shown++;
  out.fsnShown = shown;
  out.count = document.getElementById('q-count').value;
  var a = document.getElementById('q-addon');
  a.value = 'cert';
  a.dispatchEvent(new Event('input'));
  out.addonRows = Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; }).length;
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
</body>"#;

/// The probe's findings on `page` (a copy with [`PROBE`] appended), as JSON.
fn probe(browser: &crate::browser::Browser, page: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let probed = dir.path().join("probed.html");
    std::fs::write(&probed, page.replace("</body>", PROBE)).unwrap();
    let dom = browser.dump_dom(&probed);
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    serde_json::from_str(&dom[start..end].replace("&quot;", "\"")).unwrap()
}

/// Issue 40, item 6: at 1280 px the page showed 5 of 16 domains. All 16 columns now end
/// inside the window; the header row and the first column are sticky; the filter box
/// narrows the columns (a glob) and the rows (text). The screenshot is
/// docs/images/fleet-16.png (`CLINV_KEEP_SCREENSHOTS=docs/images`).
fn the_sixteen_domain_page_fits_1280_px() {
    let browser = crate::browser::chromium();
    let dir = sixteen();
    let page = clinv(&["fleet", "-o", "html", "--differs"])
        .root(dir.path())
        .run()
        .success()
        .stdout;
    let found = probe(&browser, &page);
    assert_eq!(found["headPosition"], "sticky", "{found}");
    assert_eq!(found["cornerPosition"], "sticky", "{found}");
    assert_eq!(found["firstColumnPosition"], "sticky", "{found}");
    let right = found["lastColumnRight"].as_i64().unwrap();
    assert!(right <= i64::from(crate::browser::WIDTH), "{found}");
    assert_eq!(found["pageWidth"], found["windowWidth"], "{found}");
    assert_eq!(found["fsnShown"], 5, "{found}");
    assert_eq!(found["count"], "5 of 16 domains", "{found}");
    assert_eq!(found["addonRows"], 2, "{found}");
    let html = tempfile::tempdir().unwrap();
    let file = html.path().join("fleet-16.html");
    std::fs::write(&file, &page).unwrap();
    let dom = browser.dump_dom(&file);
    for text in [
        "id=\"q-domain\"",
        "16 of 16 domains",
        "hel-stage-4",
        "v1.19.4",
    ] {
        assert_has(&dom, text);
    }
    browser.screenshot_not_blank(&file, 20_000, "fleet-16.png");
    // --by domain: a row per domain in the browser too, the filter on rows.
    let by_domain = clinv(&["fleet", "-o", "html", "--by", "domain"])
        .root(dir.path())
        .run()
        .success()
        .stdout;
    let found = probe(&browser, &by_domain);
    assert_eq!(found["firstColumnPosition"], "sticky", "{found}");
    assert_eq!(found["count"], "5 of 16 domains", "{found}");
    assert_eq!(found["pageWidth"], found["windowWidth"], "{found}");
}

/// 1,000 domains: the page never grows wider than the window (the matrix scrolls in its
/// box under sticky headers), and the filter finds a site's domains. The screenshot is
/// docs/images/fleet-1000.png.
fn the_thousand_domain_page_stays_usable() {
    let browser = crate::browser::chromium();
    let dir = many(1000);
    let page = clinv(&["fleet", "-o", "html"])
        .root(dir.path())
        .run()
        .success()
        .stdout;
    assert!(page.len() < 5_000_000, "{} bytes", page.len());
    let found = probe(&browser, &page);
    assert_eq!(found["pageWidth"], found["windowWidth"], "{found}");
    assert_eq!(found["headPosition"], "sticky", "{found}");
    assert_eq!(found["fsnShown"], 333, "{found}");
    assert_eq!(found["count"], "333 of 1000 domains", "{found}");
    let html = tempfile::tempdir().unwrap();
    let file = html.path().join("fleet-1000.html");
    std::fs::write(&file, &page).unwrap();
    browser.screenshot_not_blank(&file, 20_000, "fleet-1000.png");
}

/// On a terminal (a pseudo-terminal from util-linux's `script`, its size set by
/// `stty`), the matrix fits the terminal's width with no `COLUMNS`; `COLUMNS` wins over
/// it.
fn on_a_terminal_the_matrix_fits_its_width() {
    let dir = sixteen();
    let on_a_tty = |cols: usize, columns: Option<&str>| {
        let line = format!(
            "stty cols {cols} rows 50; exec '{}' -q fleet --root '{}'",
            crate::harness::clinv_bin(),
            dir.path().display()
        );
        let mut cmd = std::process::Command::new("script");
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", "/nonexistent")
            .env("CLINV_SNAPSHOTS", dir.path().join("snapshots"))
            .args(["-qec", &line, "/dev/null"]);
        if let Some(columns) = columns {
            cmd.env("COLUMNS", columns);
        }
        let out = cmd.output().expect("util-linux script runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n")
    };
    let text = on_a_tty(90, None);
    assert!(text.contains("\n\nADDON "), "{text}");
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!((60..=90).contains(&widest), "{widest}: {text}");
    let text = on_a_tty(200, Some("70"));
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 70, "{widest}: {text}");
}

trials! {
    Chromium: [
        the_fleet_page_renders_in_chromium,
        the_sixteen_domain_page_fits_1280_px,
        the_thousand_domain_page_stays_usable,
    ],
    Nothing: [
        the_fleet_page_is_self_contained_and_colours_its_cells,
        status_of_every_domain_without_a_cluster,
        fleet_from_live_without_a_cluster_names_every_domain_and_exits_16,
        drift_of_every_domain_says_what_it_could_not_read,
        several_domains_refuse_what_names_one,
        the_matrix_of_the_project_matches_its_golden_files,
        queries_answer_fleet_questions,
        a_misspelled_addon_is_said_not_answered,
        a_domain_that_does_not_parse_is_an_error_of_the_fleet,
        status_of_every_domain_names_a_spec_that_does_not_parse,
        the_store_gives_what_was_recorded,
        fleet_without_a_project_reads_the_store_it_is_given,
        deploy_domains_are_said_once_per_run,
        the_sixteen_domain_matrix_fits_the_terminal,
        status_of_sixteen_domains_fits_the_terminal,
        every_table_takes_o_wide,
        the_fleet_page_honours_by_domain,
        on_a_terminal_the_matrix_fits_its_width,
    ],
}
