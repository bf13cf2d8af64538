use crate::support::*;

fn addons(root: &std::path::Path, domain: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "addons",
        "--root",
        root.to_str().unwrap(),
        "--domain",
        domain,
    ];
    args.extend_from_slice(extra);
    clinv(&args).run()
}

fn the_spec_example_table() {
    let run = addons(&fixture("inv"), "inv", &[]).success();
    assert_eq!(
        run.stdout,
        "Addons deployed by inv (kind=kubeone)

NAME          CATEGORY        TYPE    VERSION  CONFIGURE
cilium        networking      khelm   1.20.1   encryption + policy mode (policyAuditMode) in cilium inline values / values.<driver>.yaml
cert-manager  infrastructure  khelm   v1.21.1  issue TLS via ClusterIssuer/Certificate CRs in a networking target
networking    target          target  -        per-cluster glue in clusters/inv/targets/networking

Configure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.
"
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
    assert!(
        run.stderr.is_empty(),
        "entries are dropped silently: {}",
        run.stderr
    );
    let dir = project_with_spec("kind: Lo\n");
    let run = addons(dir.path(), "inv", &[]).success();
    assert!(
        run.stdout.contains("\ncilium "),
        "the lo default applies: {}",
        run.stdout
    );
}

fn the_view_keeps_false_versions_and_crosses_newlines_for_categories() {
    let dir = project_with_spec("kind: KubeOne\nspec:\n  bootstrap: [odd]\n");
    write(
        dir.path(),
        ".lok8s/addons/odd/chart.yaml",
        "kind: ChartRenderer\nversion: false\n",
    );
    write(
        dir.path(),
        ".lok8s/addons/odd/x.yaml",
        "lok8s.dev/category:\n  storage\n",
    );
    let run = addons(dir.path(), "inv", &[]).success();
    assert!(
        run.stdout
            .contains("odd   storage   khelm  false    see docs/guide/addons.md\n"),
        "{}",
        run.stdout
    );
    let render = clinv(&[
        "render",
        "--root",
        dir.path().to_str().unwrap(),
        "--domain",
        "inv",
    ])
    .run()
    .success();
    assert!(
        render.stdout.contains("- name: odd\n    source: addon\n"),
        "{}",
        render.stdout
    );
    assert!(!render.stdout.contains("chartVersion") && !render.stdout.contains("category"));
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
        the_view_keeps_false_versions_and_crosses_newlines_for_categories,
        nothing_to_inventory_cases_warn_and_exit_zero,
    ],
}
