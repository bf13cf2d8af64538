use crate::support::*;

fn addons(root: &std::path::Path, domain: &str, extra: &[&str]) -> Run {
    clinv(&["addons"]).project(root, domain).args(extra).run()
}

fn the_spec_example_table() {
    let run = addons(&fixture("inv"), "inv", &[]).success();
    assert_eq!(
        run.stdout,
        "Addons deployed by inv (kind=kubeone)

NAME          SOURCE  CATEGORY        TYPE   VERSION
cilium        addon   networking      khelm  1.20.1
cert-manager  addon   infrastructure  khelm  v1.21.1
networking    target  -               raw    -

-o wide shows where each addon lives and is configured (docs/guide/addons.md).
"
    );
    let wide = addons(&fixture("inv"), "inv", &["-o", "wide"]).success();
    assert_has(
        &wide.stdout,
        "\nnetworking    target  -               raw    -        clusters/inv/targets/networking  per-cluster glue\n",
    );
}

fn example_tables_and_json_match_golden_files() {
    for domain in ["prod.acme.example", "edge.acme.example", "lab.acme.example"] {
        golden(
            &format!("addons.{domain}.txt"),
            &addons(&example(), domain, &[]).success().stdout,
        );
    }
    golden(
        "addons.prod.acme.example.json",
        &addons(&example(), "prod.acme.example", &["-o", "json"])
            .success()
            .stdout,
    );
}

fn empty_bootstrap_and_dropped_entries() {
    let dir = project_with_spec("kind: KubeOne\nspec:\n  bootstrap:\n    - {a: 1, b: 2}\n");
    let run = addons(dir.path(), "inv", &[]).success();
    assert!(
        run.stdout
            .contains("\n  (spec.bootstrap is empty — this cluster deploys no addons)\n")
    );
    // lok8s's view drops the entry silently; clinv's says so on stderr, as `render`
    // does (issue 49, finding 5), the view itself unchanged.
    assert_eq!(
        run.stderr,
        "[warn] inventory: skipping unparseable bootstrap entry 'a'\n"
    );
    let dir = project_with_spec("kind: Lo\n");
    let run = addons(dir.path(), "inv", &[]).success();
    assert!(
        run.stdout.contains("\ncilium "),
        "the lo default applies: {}",
        run.stdout
    );
}

/// Each cluster domain of a project: `clusters/<d>/cluster.lok8s.yaml` exists.
fn cluster_domains(root: &std::path::Path) -> Vec<String> {
    let mut domains: Vec<String> = std::fs::read_dir(root.join("clusters"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("cluster.lok8s.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    domains.sort();
    domains
}

/// A project whose entries reach their metadata every way lok8s allows: a per-cluster
/// chart pin, a shared target with a category, `/`-rooted and missing directories, a
/// `false` version and a category written across a line break.
fn every_way_to_reach_an_addon() -> tempfile::TempDir {
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium\n    - ./addons/cert-manager\n    - ../.targets/shared\n    - /clusters/inv/addons/cert-manager\n    - ./targets/missing\n    - nowhere\n    - odd\n",
    );
    let d = dir.path();
    write(
        d,
        "clusters/inv/addons/cert-manager/chart.yaml",
        "kind: ChartRenderer\nversion: v1.18.0\n",
    );
    write(
        d,
        "clusters/inv/addons/cert-manager/kustomization.yaml",
        "# lok8s.dev/category: infrastructure\n",
    );
    write(
        d,
        "clusters/.targets/shared/kustomization.yaml",
        "# lok8s.dev/category: networking\n",
    );
    write(
        d,
        ".lok8s/addons/odd/chart.yaml",
        "kind: ChartRenderer\nversion: false\n",
    );
    write(
        d,
        ".lok8s/addons/odd/x.yaml",
        "lok8s.dev/category:\n  storage\n",
    );
    dir
}

/// (name, version, category) of each addon, in order, from a JSON array of objects.
fn facts(addons: &serde_json::Value, version: &str) -> Vec<(String, String, String)> {
    let text = |a: &serde_json::Value, k: &str| a[k].as_str().unwrap_or("").to_string();
    addons
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (text(a, "name"), text(a, version), text(a, "category")))
        .collect()
}

/// "Which versions run where" has one answer: for every domain of every fixture project,
/// `addons -o json` and `render` agree on every addon's name, version and category.
fn addons_and_render_agree_for_every_domain() {
    let scratch = every_way_to_reach_an_addon();
    for root in [example(), fixture("inv"), scratch.path().to_path_buf()] {
        for domain in cluster_domains(&root) {
            let view = addons(&root, &domain, &["-o", "json"]).success();
            let view: serde_json::Value = serde_json::from_str(&view.stdout).unwrap();
            let r = root.to_str().unwrap();
            let cr = clinv(&["render", "--root", r, "--domain", &domain, "-o", "json"])
                .run()
                .success();
            let cr: serde_json::Value = serde_json::from_str(&cr.stdout).unwrap();
            assert_eq!(
                facts(&view["addons"], "version"),
                facts(&cr["spec"]["addons"], "chartVersion"),
                "{domain} in {r}"
            );
        }
    }
}

fn nothing_to_inventory_cases_warn_and_exit_zero() {
    let run = addons(&example(), "../etc", &[]).success();
    assert_eq!(
        run.stderr,
        "[warn] Invalid domain name '../etc' — nothing to inventory\n"
    );
    let run = addons(&example(), "nope", &[]).success();
    assert_eq!(
        run.stderr,
        format!(
            "[warn] No cluster spec for 'nope' ({}/clusters/nope/cluster.lok8s.yaml) — nothing to inventory\n  known domains: apps.acme.example, edge.acme.example, lab.acme.example, prod.acme.example\n",
            example().display()
        )
    );
    assert_eq!(addons(&example(), "nope", &["--strict"]).code, 1);
    let dir = project_with_spec("kind: Kube-One\n");
    let run = addons(dir.path(), "inv", &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "[error] cluster spec for 'inv' declares a malformed kind ({}/clusters/inv/cluster.lok8s.yaml)\n",
            dir.path().display()
        )
    );
}

trials! {
    Nothing: [
        the_spec_example_table,
        example_tables_and_json_match_golden_files,
        empty_bootstrap_and_dropped_entries,
        nothing_to_inventory_cases_warn_and_exit_zero,
        addons_and_render_agree_for_every_domain,
    ],
}
