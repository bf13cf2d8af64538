//! Names and counts at and one past every schema limit of the CRD (src/crd.rs): at the
//! limit renders, beyond it is refused before output with one line naming the field
//! (the API server would reject it), exit 1, nothing written.

use super::spec::render;
use super::*;

fn spec(text: &str) -> (tempfile::TempDir, Run) {
    let dir = project();
    write(dir.path(), "clusters/inv/cluster.lok8s.yaml", text);
    let run = render(dir.path());
    (dir, run)
}

fn with_addons(names: impl IntoIterator<Item = String>) -> String {
    let mut text = String::from("kind: KubeOne\nspec:\n  bootstrap:\n");
    for n in names {
        text.push_str(&format!("    - {n}\n"));
    }
    text
}

fn a_253_character_addon_name_renders() {
    let name = "a".repeat(253);
    let (_d, run) = spec(&with_addons([name.clone()]));
    assert!(run.success().stdout.contains(&format!("- name: {name}\n")));
}

fn a_254_character_addon_name_is_refused() {
    let (_d, run) = spec(&with_addons(["a".repeat(254)]));
    assert_clean_failure(
        &run,
        "spec.addons[0].name: Too long: may not be more than 253 characters (got 254)",
    );
}

fn a_4096_character_addon_name_is_refused_with_a_short_message() {
    let (_d, run) = spec(&with_addons([format!("x/{}", "a".repeat(4096))]));
    assert_clean_failure(&run, "spec.addons[0].name: Too long");
    assert!(
        run.stderr.len() < 1000,
        "message not shortened: {}",
        run.stderr.len()
    );
}

fn two_hundred_fifty_six_addons_render() {
    let (_d, run) = spec(&with_addons((0..256).map(|i| format!("a{i}"))));
    let run = run.success();
    assert_eq!(run.stdout.matches("\n  - name: a").count(), 256);
}

fn two_hundred_fifty_seven_addons_are_refused() {
    let (_d, run) = spec(&with_addons((0..257).map(|i| format!("a{i}"))));
    assert_clean_failure(
        &run,
        "spec.addons: Too many: 257 items, must have at most 256",
    );
}

/// As many addons as the YAML node limit lets through: refused before their metadata is
/// read or their JSON built.
fn ninety_nine_thousand_addons_are_refused_quickly() {
    let (_d, run) = spec(&with_addons((0..99_000).map(|i| format!("a{i}"))));
    assert_clean_failure(
        &run,
        "spec.addons: Too many: 99000 items, must have at most 256",
    );
}

/// Found when the 100,000-addon case aborted in CI under the memory bound: render used
/// ~440 MB for a spec just under the 8 MiB input limit, ~80 MB for 100,000 addons. Such a
/// spec, filled in each way that makes the most YAML nodes, is refused within the bound.
fn specs_at_the_input_limit_stay_within_the_memory_bound() {
    const LIMIT: usize = 8 << 20;
    let fill = |head: &str, item: &dyn Fn(usize) -> String, tail: &str| {
        let mut text = String::from(head);
        for n in 0.. {
            let next = item(n);
            if text.len() + next.len() + tail.len() > LIMIT {
                break;
            }
            text.push_str(&next);
        }
        text + tail
    };
    let head = "kind: KubeOne\nspec:\n  bootstrap:";
    let cases = [
        (
            "a block list",
            fill(head, &|n| format!("\n    - {n:x}"), "\n"),
        ),
        (
            "a flow list",
            fill(&format!("{head} ["), &|n| format!("{n:x},"), "x]\n"),
        ),
        (
            "entries with options",
            fill(head, &|n| format!("\n    {n:x}: {{}}"), "\n"),
        ),
        (
            "unknown keys",
            fill("kind: KubeOne\nspec:", &|n| format!("\n  k{n:x}: 1"), "\n"),
        ),
    ];
    for (what, text) in cases {
        assert!(text.len() <= LIMIT && text.len() > LIMIT - 64, "{what}");
        let (_d, run) = spec(&text);
        assert_clean_failure(&run, "too large: more than 100000 YAML nodes");
        assert!(
            run.stderr.contains("cluster.lok8s.yaml:"),
            "{what}: {}",
            run.stderr
        );
    }
}

fn a_64_character_kubernetes_version_renders() {
    let v = format!("v{}", "1".repeat(63));
    let (_d, run) = spec(&format!(
        "kind: KubeOne\nspec:\n  kubernetes:\n    version: {v}\n"
    ));
    assert!(
        run.success()
            .stdout
            .contains(&format!("kubernetesVersion: {v}\n"))
    );
}

fn a_65_character_kubernetes_version_is_refused() {
    let v = format!("v{}", "1".repeat(64));
    let (_d, run) = spec(&format!(
        "kind: KubeOne\nspec:\n  kubernetes:\n    version: {v}\n"
    ));
    assert_clean_failure(
        &run,
        "spec.kubernetesVersion: Too long: may not be more than 64 characters (got 65)",
    );
}

fn chart_versions_at_and_beyond_64_characters() {
    let dir = project();
    set_chart_version(dir.path(), "cilium", &"1".repeat(64));
    let run = render(dir.path()).success();
    assert!(
        run.stdout
            .contains(&format!("chartVersion: '{}'", "1".repeat(64)))
            || run
                .stdout
                .contains(&format!("chartVersion: \"{}\"", "1".repeat(64)))
            || run
                .stdout
                .contains(&format!("chartVersion: {}", "1".repeat(64))),
        "{}",
        run.stdout
    );
    set_chart_version(dir.path(), "cilium", &"1".repeat(65));
    let run = render(dir.path());
    assert_clean_failure(&run, "spec.addons[0].chartVersion: Too long");
}

fn lok8s_versions_at_and_beyond_64_characters() {
    let dir = project();
    write(dir.path(), ".lok8s/VERSION", "9".repeat(64));
    render(dir.path()).success();
    write(dir.path(), ".lok8s/VERSION", "9".repeat(65));
    let run = render(dir.path());
    assert_clean_failure(&run, "spec.lok8sVersion: Too long");
}

fn provider_names_at_and_beyond_63_characters() {
    let at = "p".repeat(63);
    let (_d, run) = spec(&format!(
        "kind: KubeOne\nspec:\n  provider:\n    name: {at}\n"
    ));
    assert!(run.success().stdout.contains(&format!("provider: {at}\n")));
    let (_d, run) = spec(&format!(
        "kind: KubeOne\nspec:\n  provider:\n    name: {at}p\n"
    ));
    assert_clean_failure(&run, "spec.provider: Too long");
}

fn kinds_at_and_beyond_63_characters() {
    let at = "k".repeat(63);
    let (_d, run) = spec(&format!("kind: {at}\n"));
    assert!(run.success().stdout.contains(&format!("kind: {at}\n")));
    let (_d, run) = spec(&format!("kind: {at}k\n"));
    assert_clean_failure(&run, "spec.kind: Too long");
}

/// A project whose one cluster domain is `domain`.
fn domain_project(domain: &str) -> tempfile::TempDir {
    let dir = project();
    std::fs::rename(
        dir.path().join("clusters/inv"),
        dir.path().join("clusters").join(domain),
    )
    .unwrap();
    dir
}

fn a_63_character_domain_fits_the_label() {
    let domain = format!("{}.example", "d".repeat(55));
    assert_eq!(domain.len(), 63);
    let dir = domain_project(&domain);
    let run = bounded(&["render"])
        .project(dir.path(), &domain)
        .run()
        .success();
    assert!(
        run.stdout
            .contains(&format!("lok8s.dev/domain: {domain}\n"))
    );
}

fn a_64_character_domain_breaks_the_label_limit() {
    let domain = format!("{}.example", "d".repeat(56));
    let dir = domain_project(&domain);
    let run = bounded(&["render"]).project(dir.path(), &domain).run();
    assert_clean_failure(&run, "metadata.labels[lok8s.dev/domain]: Invalid value");
    assert_has(&run.stderr, "must be no more than 63 characters");
}

fn a_domain_longer_than_a_file_name_is_a_clear_error() {
    // 300 characters: valid by the name rule, too long for any file system.
    let domain = "d".repeat(300);
    let dir = project();
    let run = bounded(&["render"]).project(dir.path(), &domain).run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.starts_with("[error] "), "{}", run.stderr);
    assert!(run.stderr.contains(&domain[..50]), "{}", run.stderr);
}

fn a_traversing_metadata_name_never_picks_a_kubeconfig_outside_the_project() {
    // Regression: metadata.name `../../x` made `<root>/.kubeconfig/../../x.yaml` the
    // kubeconfig, so a project file could send the inventory to another cluster.
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(offline_kubeconfig(), outside.path().join("evil.yaml")).unwrap();
    std::fs::create_dir(dir.path().join(".kubeconfig")).unwrap();
    let up = "../".repeat(dir.path().components().count() + 2);
    let name = format!("{up}{}", outside.path().join("evil").display());
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        format!("kind: KubeOne\nmetadata:\n  name: \"{name}\"\n"),
    );
    let store = tempfile::tempdir().unwrap();
    let run = bounded(&["publish", "--strict"])
        .project(dir.path(), "inv")
        .store(store.path())
        .run();
    // No kubeconfig at all (KUBECONFIG points nowhere): exit 3, not 5 (the evil one's
    // unreachable server).
    assert_failure(&run, 3, "kubeconfig not found");
    assert!(!run.stderr.contains("127.0.0.1:9"), "{}", run.stderr);
}

trials! {
    Nothing: [
        a_253_character_addon_name_renders,
        a_254_character_addon_name_is_refused,
        a_4096_character_addon_name_is_refused_with_a_short_message,
        two_hundred_fifty_six_addons_render,
        two_hundred_fifty_seven_addons_are_refused,
        ninety_nine_thousand_addons_are_refused_quickly,
        specs_at_the_input_limit_stay_within_the_memory_bound,
        a_64_character_kubernetes_version_renders,
        a_65_character_kubernetes_version_is_refused,
        chart_versions_at_and_beyond_64_characters,
        lok8s_versions_at_and_beyond_64_characters,
        provider_names_at_and_beyond_63_characters,
        kinds_at_and_beyond_63_characters,
        a_63_character_domain_fits_the_label,
        a_64_character_domain_breaks_the_label_limit,
        a_domain_longer_than_a_file_name_is_a_clear_error,
        a_traversing_metadata_name_never_picks_a_kubeconfig_outside_the_project,
    ],
}
