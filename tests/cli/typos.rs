//! Typos that change the answer are said, with a did-you-mean: a `[warn]` by default
//! (lok8s-exact rendering stays the default), an error with `--strict`.

use crate::support::*;

/// `clinv --root R [--strict] ARGS` with the store in R.
fn run(root: &std::path::Path, strict: bool, args: &[&str]) -> Run {
    let r = root.to_str().unwrap();
    let mut all = vec!["--root", r];
    if strict {
        all.push("--strict");
    }
    all.extend_from_slice(args);
    clinv(&all)
        .env("CLINV_SNAPSHOTS", root.join("snapshots").to_str().unwrap())
        .run()
}

fn render(root: &std::path::Path, strict: bool) -> Run {
    run(root, strict, &["render", "--domain", "inv"])
}

fn a_kind_lok8s_does_not_ship_is_rendered_and_warned_about() {
    let dir = project_with_spec("kind: KubeOen\n");
    let spec = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    let lax = render(dir.path(), false).success();
    assert!(lax.stdout.contains("\n  kind: kubeoen\n"), "{}", lax.stdout);
    assert_eq!(
        lax.stderr,
        format!(
            "[warn] inventory: {}: kind 'KubeOen' is not a lok8s driver (lo, kubeone, capi, kkp); it is recorded as 'kubeoen' — did you mean 'KubeOne'?\n",
            spec.display()
        )
    );
    let strict = render(dir.path(), true);
    assert_eq!(strict.code, 1, "{}", strict.stderr);
    assert!(strict.stdout.is_empty(), "{}", strict.stdout);
    assert_has(&strict.stderr, "[error] inventory: ");
    // Every driver lok8s ships, in any case, and a deploy spec, pass without a word.
    for kind in ["Lo", "KUBEONE", "capi", "Kkp"] {
        let dir = project_with_spec(&format!("kind: {kind}\n"));
        assert_eq!(render(dir.path(), true).success().stderr, "", "{kind}");
    }
}

fn a_misspelt_key_that_lok8s_reads_is_named() {
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  kubernets:\n    version: v1.31.10\n  provider:\n    nmae: hetzner\n  bootstrap: [cilium]\n",
    );
    let spec = dir.path().join("clusters/inv/cluster.lok8s.yaml");
    let lax = render(dir.path(), false).success();
    assert!(!lax.stdout.contains("kubernetesVersion"), "{}", lax.stdout);
    assert_eq!(
        lax.stderr,
        format!(
            "[warn] inventory: {0}: spec.kubernets is not read by lok8s — did you mean 'spec.kubernetes'? (kubernetesVersion is left out)\n[warn] inventory: {0}: spec.provider.nmae is not read by lok8s — did you mean 'spec.provider.name'? (provider is left out)\n",
            spec.display()
        )
    );
    assert_eq!(render(dir.path(), true).code, 1);
    // Keys lok8s's drivers read that the inventory does not (nodes, network, …) are no
    // typo of one it reads: nothing to say.
    let dir = project_with_spec(
        "kind: KubeOne\nspec:\n  kubernetes: {version: v1.31.10}\n  nodes: 3\n  network: {cidr: 10.0.0.0/8}\n  bootstrap: [cilium]\n",
    );
    assert_eq!(render(dir.path(), true).success().stderr, "");
}

fn an_ignore_path_that_selects_no_addon_is_said() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let out = root.join("out");
    run(
        root,
        false,
        &[
            "render",
            "--domain",
            "prod.acme.example",
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .success();
    let cr = out.join("clusterinventory.yaml");
    let cr = cr.to_str().unwrap();
    let diff = |strict, ignore: &str| run(root, strict, &["diff", cr, cr, "--ignore", ignore]);
    let lax = diff(false, "spec.addons[cilum]");
    assert_eq!(lax.code, 0, "{}", lax.stderr);
    assert_eq!(
        lax.stderr,
        "[warn] --ignore 'spec.addons[cilum]': no addon 'cilum' in either inventory, so it ignores nothing — did you mean 'cilium'?\n"
    );
    let strict = diff(true, "spec.addons[cilum].chartVersion");
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    assert_has(&strict.stderr, "did you mean 'cilium'?");
    assert_eq!(diff(true, "spec.addons[cilium]").code, 0);
    assert_eq!(diff(true, "spec.addons[*].category").code, 0);
}

fn log_of_an_addon_that_never_appears_suggests_one_that_does() {
    let dir = copy_tree(&example());
    let root = dir.path();
    run(root, false, &["publish", "--domain", "prod.acme.example"]).success();
    let log = |strict, addon: &str| {
        run(
            root,
            strict,
            &["log", "--domain", "prod.acme.example", "--addon", addon],
        )
    };
    let typo = log(false, "cert-manger").success();
    assert_eq!(
        typo.stdout,
        "cert-manger never appears in the history of prod.acme.example\n"
    );
    assert_eq!(
        typo.stderr,
        "[warn] no addon 'cert-manger' in the history of prod.acme.example — did you mean 'cert-manager'?\n"
    );
    assert_eq!(log(true, "cert-manger").code, 1);
    // An addon that never ran there is an answer, not a typo.
    let never = log(true, "longhorn").success();
    assert_eq!(
        never.stdout,
        "longhorn never appears in the history of prod.acme.example\n"
    );
    assert_eq!(never.stderr, "");
}

trials! {
    Nothing: [
        a_kind_lok8s_does_not_ship_is_rendered_and_warned_about,
        a_misspelt_key_that_lok8s_reads_is_named,
        an_ignore_path_that_selects_no_addon_is_said,
        log_of_an_addon_that_never_appears_suggests_one_that_does,
    ],
}
