use crate::support::*;

fn render(domain: &str, extra: &[&str]) -> Run {
    render_in(&example(), domain, extra).success()
}

/// `clinv render` of `domain` in the project at `root`, with `extra` arguments.
fn render_in(root: &std::path::Path, domain: &str, extra: &[&str]) -> Run {
    clinv(&["render"]).project(root, domain).args(extra).run()
}

fn example_domains_render_to_their_golden_files() {
    for domain in ["prod.acme.example", "edge.acme.example", "lab.acme.example"] {
        golden(&format!("{domain}.yaml"), &render(domain, &[]).stdout);
        golden(
            &format!("{domain}.json"),
            &render(domain, &["-o", "json"]).stdout,
        );
    }
}

fn rendering_is_deterministic_under_source_date_epoch() {
    let a = render("prod.acme.example", &["-o", "json"]).stdout;
    let b = render("prod.acme.example", &["-o", "json"]).stdout;
    assert_eq!(a, b);
    assert!(a.contains("\"renderedAt\": \"2023-11-14T22:13:20Z\""));
}

fn json_is_lok8s_pretty_json_with_one_trailing_newline() {
    let out = render("prod.acme.example", &["-o", "json"]).stdout;
    assert!(out.ends_with("}\n") && !out.ends_with("\n\n"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(serde_json::to_string_pretty(&v).unwrap() + "\n", out);
    // spec keys in lok8s's order: the optional keys come after addons.
    let keys: Vec<&str> = v["spec"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "lok8sVersion",
            "kind",
            "specHash",
            "renderedAt",
            "addons",
            "provider",
            "kubernetesVersion"
        ]
    );
}

fn spec_example_inventory() {
    // The spec §5.1 instance: kubeone on hetzner, a framework addon and a target.
    let root = fixture("inv");
    let out = clinv(&["render", "-o", "json"])
        .project(&root, "inv")
        .run()
        .success()
        .stdout;
    let spec_bytes = std::fs::read(root.join("clusters/inv/cluster.lok8s.yaml")).unwrap();
    let hash = clinv::util::hash::hex_sha256(&spec_bytes);
    let expected = format!(
        r#"{{
  "apiVersion": "lok8s.dev/v1alpha1",
  "kind": "ClusterInventory",
  "metadata": {{
    "name": "cluster",
    "labels": {{
      "lok8s.dev/domain": "inv"
    }}
  }},
  "spec": {{
    "lok8sVersion": "0.7.9",
    "kind": "kubeone",
    "specHash": "{hash}",
    "renderedAt": "2023-11-14T22:13:20Z",
    "addons": [
      {{
        "name": "cilium",
        "source": "addon",
        "chartVersion": "1.20.1",
        "category": "networking"
      }},
      {{
        "name": "cert-manager",
        "source": "addon",
        "chartVersion": "v1.21.1",
        "category": "infrastructure"
      }},
      {{
        "name": "networking",
        "source": "target"
      }}
    ],
    "provider": "hetzner",
    "kubernetesVersion": "v1.31.10"
  }}
}}
"#
    );
    assert_eq!(out, expected);
}

fn out_dir_gets_the_crd_and_the_cr_and_nothing_else() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("inventory");
    let run = render("prod.acme.example", &["--out", dir.to_str().unwrap()]);
    assert!(run.stdout.is_empty());
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["clusterinventory.crd.yaml", "clusterinventory.yaml"]
    );
    let cr = std::fs::read_to_string(dir.join("clusterinventory.yaml")).unwrap();
    assert_eq!(cr, render("prod.acme.example", &[]).stdout);
    let crd = std::fs::read_to_string(dir.join("clusterinventory.crd.yaml")).unwrap();
    assert_eq!(crd, clinv(&["crd"]).run().success().stdout);
}

fn crd_golden_in_yaml_and_json() {
    golden(
        "clusterinventory.crd.yaml",
        &clinv(&["crd"]).run().success().stdout,
    );
    golden(
        "clusterinventory.crd.json",
        &clinv(&["crd", "-o", "json"]).run().success().stdout,
    );
}

fn a_render_the_api_server_would_reject_fails_with_field_paths_and_writes_nothing() {
    let dir =
        project_with_spec("kind: KubeOne\nspec:\n  bootstrap:\n    - a/b\n    - ''\n    - [x]\n");
    let out = dir.path().join("out");
    let run = clinv(&["render", "--out", out.to_str().unwrap()])
        .project(dir.path(), "inv")
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "spec.addons[0].name: Invalid value: \"a/b\"");
    assert!(run.stderr.contains("spec.addons[1].name"), "{}", run.stderr);
    assert_has(
        &run.stderr,
        "spec.addons[2].name: Invalid value: \"[\\\"x\\\"]\"",
    );
    assert!(!out.exists());
}

/// Issue 49, finding 5: `addons` and `fleet` show a domain without the entry `render`
/// skips; they say so as `render` does (stdout unchanged: lok8s's view), and `--strict`
/// refuses, exit 1.
fn addons_and_fleet_say_a_skipped_entry_and_strict_refuses() {
    let spec = "kind: Lo\nspec:\n  bootstrap:\n    - cilium: {wait: maybe, values: {token: s3cr3t}}\n    - cert-manager\n";
    let dir = project_with_spec(spec);
    let root = dir.path().to_str().unwrap();
    let said = "[warn] inventory: skipping unparseable bootstrap entry 'cilium'";
    for cmd in [
        &["addons", "--domain", "inv"][..],
        &["fleet"][..],
        &["addons", "-A"][..],
    ] {
        let run = clinv(&[cmd, &["--root", root][..]].concat())
            .run()
            .success();
        assert_has(&run.stderr, said);
        assert!(!run.stderr.contains("s3cr3t") && !run.stdout.contains("s3cr3t"));
        assert!(
            run.stdout.contains("cert-manager"),
            "{cmd:?}: {}",
            run.stdout
        );
        let strict = clinv(&[cmd, &["--root", root, "--strict"][..]].concat()).run();
        assert_eq!(strict.code, 1, "{cmd:?}: {}", strict.stderr);
        assert_has(
            &strict.stderr,
            "[error] inventory: skipping unparseable bootstrap entry 'cilium'",
        );
    }
}

fn skipped_entries_warn_with_the_key_only_and_strict_refuses() {
    let spec = "kind: Lo\nspec:\n  bootstrap:\n    - cilium: {wait: maybe, values: {token: s3cr3t}}\n    - {zeta: 1, alpha: 2}\n    - cert-manager\n";
    let dir = project_with_spec(spec);
    let root = dir.path().to_str().unwrap();
    let run = clinv(&["render", "--root", root, "--domain", "inv"])
        .run()
        .success();
    assert_eq!(
        run.stderr,
        "[warn] inventory: skipping unparseable bootstrap entry 'cilium'\n[warn] inventory: skipping unparseable bootstrap entry 'alpha'\n"
    );
    assert!(run.stdout.contains("name: cert-manager") && !run.stdout.contains("cilium"));
    let strict = clinv(&["render", "--root", root, "--domain", "inv", "--strict"]).run();
    assert_eq!(strict.code, 1);
    assert!(strict.stdout.is_empty());
    assert!(
        strict
            .stderr
            .contains("[error] inventory: skipping unparseable bootstrap entry 'cilium'")
    );
    assert!(
        strict
            .stderr
            .contains("--strict: 2 warning(s) treated as errors")
    );
    let verbose = clinv(&["render", "--root", root, "--domain", "inv", "-v"])
        .run()
        .success();
    assert_has(
        &verbose.stderr,
        "[debug]   reason: wait: must be true or false",
    );
    assert!(!verbose.stderr.contains("s3cr3t") && !verbose.stderr.contains("maybe"));
}

/// Found while bounding memory: the addon limit was checked against every entry, so a
/// spec of 256 or fewer addons among more entries (some unparseable, left out as lok8s
/// does) rendered without any chartVersion or category.
fn unparseable_entries_do_not_count_toward_the_addon_limit() {
    let mut spec = String::from("kind: Lo\nspec:\n  bootstrap:\n    - cert-manager\n");
    for i in 0..300 {
        spec.push_str(&format!("    - {{a{i}: 1, b{i}: 2}}\n"));
    }
    let dir = project_with_spec(&spec);
    let run = render_in(dir.path(), "inv", &[]).success();
    assert_has(
        &run.stdout,
        "  - name: cert-manager\n    source: addon\n    chartVersion: v1.21.1\n",
    );
    assert_eq!(run.stderr.matches("skipping unparseable").count(), 300);
}

/// A values file past the YAML node limit is refused like one past the size limit, and
/// the reason says so: it is valid YAML, too large to check.
fn a_values_file_past_the_node_limit_is_named_too_large_not_invalid() {
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [wide.yaml]\n",
    );
    let wide: String = (0..60_000).map(|i| format!("k{i}: {i}\n")).collect();
    write(dir.path(), "clusters/inv/wide.yaml", &wide);
    let run = render_in(dir.path(), "inv", &["-v"]).success();
    assert_has(
        &run.stderr,
        "wide.yaml is too large to check (more than 100000 YAML nodes)",
    );
    assert!(!run.stderr.contains("not valid YAML"), "{}", run.stderr);
}

fn empty_and_opted_out_bootstrap_render_an_empty_list() {
    for spec in ["kind: KubeOne\n", "kind: Lo\nspec:\n  bootstrap: []\n"] {
        let dir = project_with_spec(spec);
        let run = render_in(dir.path(), "inv", &["-o", "json"]).success();
        assert!(
            run.stdout.contains("\"addons\": []"),
            "{spec}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("provider") && !run.stdout.contains("kubernetesVersion"));
    }
}

fn lok8s_version_comes_from_the_project_or_is_dev() {
    let dir = project_with_spec("kind: Lo\n");
    let root = dir.path().to_str().unwrap();
    write(dir.path(), ".lok8s/VERSION", "  1.2.3 \n\n");
    let run = clinv(&["render", "--root", root, "--domain", "inv"])
        .run()
        .success();
    assert_has(&run.stdout, "lok8sVersion: 1.2.3\n");
    std::fs::remove_file(dir.path().join(".lok8s/VERSION")).unwrap();
    let run = clinv(&["render", "--root", root, "--domain", "inv"])
        .run()
        .success();
    assert!(run.stdout.contains("lok8sVersion: dev\n"), "{}", run.stdout);
}

/// A deploy domain's render is an error (exit 1), so `clinv render | kubectl apply -f -`
/// under `set -o pipefail` fails instead of applying nothing with success.
fn deploy_domains_have_no_inventory_and_name_their_cluster() {
    let root = example();
    let run = clinv(&["render"]).project(&root, "apps.acme.example").run();
    assert!(run.stdout.is_empty());
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "[error] 'apps.acme.example' is a deploy domain: it has no inventory of its own; its cluster 'prod.acme.example' carries the inventory (clinv render --domain prod.acme.example)\n"
    );
}

fn missing_spec_and_malformed_kind_use_lok8s_messages() {
    let root = example();
    let run = clinv(&["render"]).project(&root, "nope").run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "[error] inventory: cluster spec not found: {}/clusters/nope/cluster.lok8s.yaml\n  known domains: apps.acme.example, edge.acme.example, lab.acme.example, prod.acme.example\n",
            root.display()
        )
    );
    let dir = project_with_spec("kind: ../../evil\n");
    let run = render_in(dir.path(), "inv", &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "[error] inventory: cluster spec declares a malformed kind: {}/clusters/inv/cluster.lok8s.yaml\n",
            dir.path().display()
        )
    );
}

fn targets_linked_outside_the_project_render_their_pin_as_lok8s_does() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "t/chart.yaml", "version: 9.9.9\n");
    write(outside.path(), "t/k.yaml", "lok8s.dev/category: leaked\n");
    let dir = project_with_spec("kind: KubeOne\nspec:\n  bootstrap:\n    - ./escape\n");
    std::os::unix::fs::symlink(
        outside.path().join("t"),
        dir.path().join("clusters/inv/escape"),
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let run = clinv(&["render", "--root", root, "--domain", "inv"])
        .run()
        .success();
    // lok8s reads the pin through the link (issue #16 fidelity) but finds no category
    // in a directory that is itself a link.
    assert_has(&run.stdout, "- name: escape\n");
    assert_has(&run.stdout, "chartVersion: 9.9.9\n");
    assert!(!run.stdout.contains("leaked"), "{}", run.stdout);
    assert_has(&run.stderr, "resolves outside the project root");
}

/// lok8s reads a spec whose top level is valid YAML but not a mapping as "kind missing,
/// no spec": driver `lo`, whose default bootstrap entry is `cilium` (issue #16, fidelity).
fn a_spec_that_is_not_a_mapping_gets_the_lo_default_like_lok8s() {
    for spec in ["- a\n- b\n", "just a scalar\n"] {
        let dir = project_with_spec(spec);
        let root = dir.path().to_str().unwrap();
        let run = clinv(&["render", "--root", root, "--domain", "inv"])
            .run()
            .success();
        assert!(run.stdout.contains("  kind: lo\n"), "{}", run.stdout);
        assert!(
            run.stdout.contains("- name: cilium\n"),
            "{spec:?}: {}",
            run.stdout
        );
        assert!(run.stderr.contains("not a mapping"), "{}", run.stderr);
    }
}

/// Issue #16 finding 4: likely mistakes render as lok8s renders them, but are warned about
/// (file and entry named), and `--strict` refuses them.
fn likely_mistakes_warn_and_strict_refuses() {
    type Setup<'a> = &'a dyn Fn(&std::path::Path);
    let cases: [(&str, Setup, &str); 3] = [
        (
            "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium\n    - cert-managr\n",
            &|_| {},
            "bootstrap entry 'cert-managr' names no directory",
        ),
        (
            "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium\n",
            &|root| {
                write(root, ".lok8s/addons/cilium/chart.yaml", "version: [1.2\n");
            },
            "chart.yaml: not valid YAML (line",
        ),
        (
            "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [big.yaml]\n",
            &|root| {
                let big = root.join("clusters/inv/big.yaml");
                let line = format!("k: {}\n", "x".repeat(1023));
                std::fs::write(&big, line.repeat(9 * 1024)).unwrap();
            },
            "skipping unparseable bootstrap entry 'cilium'",
        ),
    ];
    for (spec, setup, warning) in cases {
        let dir = project_with_spec(spec);
        setup(dir.path());
        let root = dir.path().to_str().unwrap();
        let run = clinv(&["render", "--root", root, "--domain", "inv", "-v"])
            .run()
            .success();
        assert!(run.stderr.contains(warning), "{spec}: {}", run.stderr);
        assert_has(&run.stdout, "kind: ClusterInventory");
        let strict = clinv(&["render", "--root", root, "--domain", "inv", "--strict"]).run();
        assert_eq!(strict.code, 1, "{spec}: {}", strict.stderr);
        assert!(strict.stdout.is_empty(), "{}", strict.stdout);
    }
    // The reasons are precise: a suggestion for the typo, the size for the big values file.
    let dir = project_with_spec("kind: KubeOne\nspec:\n  bootstrap:\n    - cert-managr\n");
    let run = render_in(dir.path(), "inv", &[]).success();
    assert_has(&run.stderr, "did you mean 'cert-manager'?");
    assert!(
        run.stdout.contains("- name: cert-managr\n"),
        "listed as lok8s lists it: {}",
        run.stdout
    );
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [big.yaml, dir]\n",
    );
    std::fs::write(
        dir.path().join("clusters/inv/big.yaml"),
        "k: v\n".repeat(3 << 20),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("clusters/inv/dir")).unwrap();
    let run = render_in(dir.path(), "inv", &["-v"]).success();
    assert_has(&run.stderr, "big.yaml is larger than 8 MiB");
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  bootstrap:\n    - cilium:\n        valueFiles: [dir]\n",
    );
    std::fs::create_dir(dir.path().join("clusters/inv/dir")).unwrap();
    let run = render_in(dir.path(), "inv", &["-v"]).success();
    assert!(run.stderr.contains("dir cannot be read"), "{}", run.stderr);
}

trials! {
    Nothing: [
        likely_mistakes_warn_and_strict_refuses,
        a_spec_that_is_not_a_mapping_gets_the_lo_default_like_lok8s,
        example_domains_render_to_their_golden_files,
        rendering_is_deterministic_under_source_date_epoch,
        json_is_lok8s_pretty_json_with_one_trailing_newline,
        spec_example_inventory,
        out_dir_gets_the_crd_and_the_cr_and_nothing_else,
        crd_golden_in_yaml_and_json,
        a_render_the_api_server_would_reject_fails_with_field_paths_and_writes_nothing,
        skipped_entries_warn_with_the_key_only_and_strict_refuses,
        addons_and_fleet_say_a_skipped_entry_and_strict_refuses,
        unparseable_entries_do_not_count_toward_the_addon_limit,
        a_values_file_past_the_node_limit_is_named_too_large_not_invalid,
        empty_and_opted_out_bootstrap_render_an_empty_list,
        lok8s_version_comes_from_the_project_or_is_dev,
        deploy_domains_have_no_inventory_and_name_their_cluster,
        missing_spec_and_malformed_kind_use_lok8s_messages,
        targets_linked_outside_the_project_render_their_pin_as_lok8s_does,
    ],
}
