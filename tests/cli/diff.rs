//! `clinv diff`: formats (golden files), exit codes, references, --ignore, hostile input,
//! and the documented JSON schema.

use crate::history;
use crate::support::*;
use std::collections::BTreeSet;

/// `clinv diff` run inside the history fixture, so references print as bare file names.
fn diff(args: &[&str]) -> Run {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    clinv(&all).cwd(&history::dir()).run()
}

/// The text after the header (`--- A  …`, `+++ B  …`, a blank line), which must be
/// there.
fn body(stdout: &str) -> &str {
    let mut parts = stdout.splitn(3, '\n');
    let (a, b) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    assert!(
        a.starts_with("--- ") && b.starts_with("+++ "),
        "no header:\n{stdout}"
    );
    parts
        .next()
        .and_then(|rest| rest.strip_prefix('\n'))
        .unwrap_or_else(|| panic!("no blank line after the header:\n{stdout}"))
}

/// The pair used for the golden files: step 012 against step 026 — a Kubernetes
/// upgrade, chart upgrades and a downgrade, additions, a removal, a category and a
/// source change, lok8sVersion and specHash.
const A: &str = "012.yaml";
const B: &str = "026.yaml";

fn every_format_matches_its_golden_file() {
    for (format, ext) in [
        ("text", "txt"),
        ("json", "json"),
        ("markdown", "md"),
        ("unified", "diff"),
    ] {
        let run = diff(&[A, B, "-o", format]);
        assert_eq!(run.code, 1, "{format}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{format}");
        golden(&format!("diff/012-026.{ext}"), &run.stdout);
    }
    // Text is the default.
    assert_eq!(diff(&[A, B]).stdout, diff(&[A, B, "-o", "text"]).stdout);
}

/// Issue #16 finding 9: the text starts by naming A and B as given and what each
/// resolved to (as `diff --git a/… b/…` and dyff's header do); unified and Markdown
/// name them too, and JSON says it in `from`/`to`.
fn every_format_names_both_sides_and_what_they_resolved_to() {
    let text = diff(&[A, B]).stdout;
    assert!(
        text.starts_with(
            "--- 012.yaml  file, rendered 2025-05-26T17:55:48Z\n+++ 026.yaml  file, rendered 2026-02-23T11:11:11Z\n\n~ "
        ),
        "{text}"
    );
    let unified = diff(&[A, B, "-o", "unified"]).stdout;
    assert!(
        unified.starts_with(
            "clinv diff 012.yaml 026.yaml\nfrom: file, rendered 2025-05-26T17:55:48Z\nto:   file, rendered 2026-02-23T11:11:11Z\n--- 012.yaml\t"
        ),
        "{unified}"
    );
    let md = diff(&[A, B, "-o", "markdown"]).stdout;
    assert!(
        md.contains("— `012.yaml` (file, rendered 2025-05-26T17:55:48Z) → `026.yaml` (file, rendered 2026-02-23T11:11:11Z)"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&diff(&[A, B, "-o", "json"]).stdout).unwrap();
    assert_eq!(
        json["from"],
        serde_json::json!({"ref": "012.yaml", "domain": "prod.acme.example",
            "renderedAt": "2025-05-26T17:55:48Z", "source": "file", "resolved": "012.yaml",
            "recordedAt": null, "revision": null})
    );
    // stdin names itself; inventories of different domains name them.
    let other = std::fs::read_to_string(history::file("026"))
        .unwrap()
        .replace(
            "lok8s.dev/domain: prod.acme.example",
            "lok8s.dev/domain: lab.acme.example",
        );
    let run = clinv(&["diff", A, "-"])
        .cwd(&history::dir())
        .stdin(other)
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(
            "--- 012.yaml  file, domain prod.acme.example, rendered 2025-05-26T17:55:48Z\n+++ -         stdin, domain lab.acme.example, rendered 2026-02-23T11:11:11Z\n\n"
        ),
        "{}",
        run.stdout
    );
}

/// `--stat`: one line per changed addon and a summary counting addons and the other
/// fields; a text view only (`-o` with it is a usage error, exit 2).
fn stat_is_one_line_per_addon_and_a_summary() {
    let run = diff(&["--stat", A, B]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    golden("diff/012-026.stat.txt", &run.stdout);
    let out = body(&run.stdout);
    assert!(
        out.contains("~ ingress-nginx                 upgraded 4.12.0 → 4.12.3; category\n"),
        "{out}"
    );
    assert!(
        out.ends_with("\n10 addons changed: 3 added, 1 removed, 4 upgraded, 1 downgraded, 1 changed; 3 other fields changed (lok8sVersion, kubernetesVersion, specHash)\n"),
        "{out}"
    );
    // One line per addon: as many as the addons the full text names.
    let lines = out.lines().take_while(|l| !l.is_empty()).count();
    assert_eq!(lines, 10, "{out}");
    let same = diff(&["--stat", A, A]);
    assert_eq!((same.code, body(&same.stdout)), (0, "no changes\n"));
    let ignored = diff(&["--stat", A, B, "--ignore", "spec.addons"]);
    assert_eq!(ignored.code, 1);
    assert!(
        body(&ignored.stdout).starts_with("no addons changed; 3 other fields changed (lok8sVersion, kubernetesVersion, specHash); 11 ignored: "),
        "{}",
        ignored.stdout
    );
    for format in ["json", "text", "markdown"] {
        let run = diff(&["--stat", A, B, "-o", format]);
        assert_eq!(run.code, 2, "{format}");
        assert_has(&run.stderr, "'--stat' cannot be used with");
        assert_eq!(run.stdout, "");
    }
}

fn text_lines_read_like_helm_diff() {
    let out = diff(&[A, B]).stdout;
    for line in [
        "~ kubernetesVersion v1.31.4 → v1.33.1 (upgrade)\n",
        "~ cilium 1.16.6 → 1.18.2 (upgrade)\n",
        "~ kube-prometheus-stack 69.3.0 → 69.2.0 (downgrade)\n",
        "~ ingress-nginx category networking → ingress\n",
        "~ cert-manager-webhook-hetzner source addon → target\n",
        "+ velero 9.0.0 (backup)\n",
        "- metrics-server 3.12.2\n",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    assert!(
        out.ends_with("\n14 changes (6 upgraded, 1 downgraded, 3 added, 1 removed, 3 changed)\n"),
        "{out}"
    );
}

fn the_same_inventory_exits_0() {
    let run = diff(&[A, A]);
    assert_eq!((run.code, body(&run.stdout)), (0, "no changes\n"));
    let json: serde_json::Value =
        serde_json::from_str(&diff(&[A, A, "-o", "json"]).stdout).unwrap();
    assert_eq!(json["hasChanges"], false);
    assert_eq!(diff(&[A, A, "-o", "unified"]).stdout, "");
}

fn a_re_render_differs_only_in_rendered_at_and_is_no_change() {
    // Step 023 replays step 022: same spec, later renderedAt.
    let a = std::fs::read_to_string(history::dir().join("022.yaml")).unwrap();
    let b = std::fs::read_to_string(history::dir().join("023.yaml")).unwrap();
    assert_ne!(a, b);
    for format in ["text", "json", "markdown", "unified"] {
        assert_eq!(
            diff(&["022.yaml", "023.yaml", "-o", format]).code,
            0,
            "{format}"
        );
    }
    assert_eq!(diff(&["022.yaml", "023.yaml", "-o", "unified"]).stdout, "");
}

fn a_live_dump_on_stdin_compares_equal_to_its_rendered_file() {
    let rendered = std::fs::read_to_string(history::file("026")).unwrap();
    let live = rendered.replace(
        "  name: cluster\n",
        "  name: cluster\n  uid: 6f1c1b8e-2f4b-4b8e-9d59-0a4b1f3c2d11\n  resourceVersion: \"48213\"\n  generation: 7\n  creationTimestamp: \"2025-01-13T09:14:07Z\"\n  managedFields:\n  - manager: lok8s\n    operation: Apply\n    apiVersion: lok8s.dev/v1alpha1\n    fieldsType: FieldsV1\n    fieldsV1: {f:spec: {}}\n",
    ) + "status:\n  lastReported: \"2026-02-23T12:00:00Z\"\n  observedAddons:\n  - name: cilium\n    version: 1.18.2\n    healthy: true\n";
    let run = clinv(&["diff", "-", "026.yaml"])
        .cwd(&history::dir())
        .stdin(live)
        .run();
    assert_eq!(
        (run.code, body(&run.stdout)),
        (0, "no changes\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.starts_with("--- -         stdin, rendered "),
        "{}",
        run.stdout
    );
    // kubectl -o json of a List works the same way.
    let obj: serde_json::Value =
        serde_json::to_value(clinv::inventory::parse::inventory_from_text(&rendered).unwrap())
            .unwrap();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [obj], "metadata": {"resourceVersion": ""}});
    let run = clinv(&["diff", "012.yaml", "-"])
        .cwd(&history::dir())
        .stdin(list.to_string())
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(body(&run.stdout), body(&diff(&[A, B]).stdout));
}

fn a_render_out_directory_is_a_reference() {
    let root = example();
    let dir = tempfile::tempdir().unwrap();
    clinv(&["render", "--out", dir.path().to_str().unwrap()])
        .project(&root, "prod.acme.example")
        .run()
        .success();
    let file = dir.path().join("clusterinventory.yaml");
    let run = clinv(&["diff", dir.path().to_str().unwrap(), file.to_str().unwrap()]).run();
    assert_eq!(
        (run.code, body(&run.stdout)),
        (0, "no changes\n"),
        "{}",
        run.stderr
    );
    // The header says which file the directory stood for.
    let a = run.stdout.lines().next().unwrap();
    assert!(
        a.starts_with(&format!("--- {}", dir.path().display()))
            && a.contains(&format!("  file {}, rendered ", file.display())),
        "{}",
        run.stdout
    );
}

fn ignored_changes_are_listed_but_never_change_the_exit_code() {
    let run = diff(&[A, B, "--ignore", "spec", "--ignore", "metadata"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        body(&run.stdout),
        "no changes; 14 ignored: spec.lok8sVersion, spec.kubernetesVersion, spec.specHash, spec.addons[cilium].chartVersion, spec.addons[cert-manager].chartVersion, …\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&diff(&[A, B, "--ignore", "spec", "-o", "json"]).stdout).unwrap();
    assert_eq!(json["hasChanges"], false);
    assert_eq!(json["ignored"].as_array().unwrap().len(), 14);
    // Ignoring some paths leaves the rest counting.
    let run = diff(&[
        A,
        B,
        "--ignore",
        "spec.specHash",
        "--ignore",
        "spec.addons[*].chartVersion",
        "--ignore",
        "spec.addons[*]",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        body(&run.stdout).lines().next(),
        Some("~ lok8sVersion 0.7.4 → 0.8.3 (upgrade)")
    );
    assert!(run.stdout.contains("; 12 ignored: "), "{}", run.stdout);
    // The Markdown comment folds ignored changes away.
    let md = diff(&[A, B, "--ignore", "spec.addons", "-o", "markdown"]).stdout;
    assert!(
        md.contains("<details><summary>11 ignored changes (--ignore)</summary>"),
        "{md}"
    );
}

fn errors_exit_2_with_a_message_and_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let not_yaml = write(dir.path(), "bad.yaml", "a: [\n");
    let configmap = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    let binary = write(dir.path(), "bin.json", [0xff, 0xfe, 0x00]);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![A, "missing.yaml"],
            "missing.yaml: No such file or directory",
        ),
        (vec![A, not_yaml.to_str().unwrap()], "invalid YAML"),
        (
            vec![A, configmap.to_str().unwrap()],
            "no ClusterInventory object (found kind ConfigMap)",
        ),
        (vec![A, binary.to_str().unwrap()], "not valid UTF-8"),
        (
            vec![A, B, "--ignore", "spec.addons[x].name"],
            "--ignore 'spec.addons[x].name': names no field",
        ),
        (vec![A, B, "--ignore", "spec.addons[x"], "unclosed '['"),
        (
            vec![A, B, "-o", "yaml"],
            "clinv diff: unsupported output format 'yaml' (supported: text, json, markdown, unified)",
        ),
        // Outside a project, with an empty store: nothing selects a domain.
        (
            vec![A, "latest"],
            "no domain selected: no --domain, no DOMAIN_NAME, no lok8s project for clusters/.active, and the store does not hold exactly one domain\n  no domain is known here",
        ),
        (vec![A, "latest~2"], "no domain selected"),
        (vec![A, "@2026-01-01"], "no domain selected"),
        (vec![A, "3167e5e4a0b1"], "no domain selected"),
        (
            vec![A, "git:HEAD~1:gitops/clusterinventory.yaml"],
            "is a git reference",
        ),
        (
            vec![A, "latest~x"],
            "invalid reference 'latest~x': expected latest~N",
        ),
        (vec![A, "@tomorrow"], "invalid reference '@tomorrow'"),
        (vec![A, "git:"], "invalid reference 'git:'"),
        (vec!["-", "-"], "'-' (stdin) can be used only once"),
        (
            vec![A, "cluster"],
            "cluster: kubeconfig not found (/nonexistent/kubeconfig)",
        ),
    ];
    let empty_store = dir.path().join("store");
    for (args, message) in cases {
        let run = clinv(&[&["diff"][..], &args].concat())
            .cwd(&history::dir())
            .store(&empty_store)
            .run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(
            run.stderr.starts_with("[error] ") && run.stderr.contains(message),
            "{args:?}: {}",
            run.stderr
        );
    }
    // clap usage errors are 2 as well.
    assert_eq!(diff(&[A]).code, 2);
    assert_eq!(diff(&[A, B, "--nope"]).code, 2);
}

fn colour_only_on_request() {
    assert!(
        !diff(&[A, B]).stdout.contains('\x1b'),
        "a pipe gets no colour"
    );
    let coloured = diff(&[A, B, "--color", "always"]).stdout;
    assert!(coloured.contains("\x1b[32m+ velero\x1b[0m"), "{coloured}");
    assert!(
        diff(&[A, B, "-o", "unified", "--color", "always"])
            .stdout
            .contains("\x1b[31m-")
    );
    let run = clinv(&["diff", A, B])
        .cwd(&history::dir())
        .env("NO_COLOR", "1")
        .run();
    assert!(!run.stdout.contains('\x1b'));
    // JSON and Markdown are never coloured.
    assert!(
        !diff(&[A, B, "-o", "json", "--color", "always"])
            .stdout
            .contains('\x1b')
    );
}

fn hostile_values_cannot_reach_the_terminal_or_the_markup() {
    let dir = tempfile::tempdir().unwrap();
    let a = std::fs::read_to_string(history::file("026")).unwrap();
    let b = a
        .replace("name: loki", "name: \"lo\\e[2Jki|<b>`x`</b>\"")
        .replace("chartVersion: 6.24.0", "chartVersion: \"6.24.0\\n- evil\"");
    let a = write(dir.path(), "a.yaml", a);
    let b = write(dir.path(), "b.yaml", b);
    for format in ["text", "markdown", "unified", "json"] {
        let run = clinv(&[
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            format,
        ])
        .run();
        assert_eq!(run.code, 1, "{format}: {}", run.stderr);
        assert!(!run.stdout.contains('\x1b'), "{format}: {}", run.stdout);
        assert!(!run.stdout.contains("\n- evil"), "{format}: {}", run.stdout);
    }
    let md = clinv(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        "markdown",
    ])
    .run()
    .stdout;
    assert!(!md.contains("<b>"), "{md}");
}

/// Every key path of a JSON value: `changes[].entry.name`.
fn key_paths(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(path.clone());
                key_paths(v, &path, out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The field paths the history guide documents in the table under `heading`: the first
/// backticked word of each table row.
fn documented(heading: &str) -> BTreeSet<String> {
    let guide = std::fs::read_to_string(repo().join("docs/guide/history.md")).unwrap();
    let section = guide
        .split_once(heading)
        .unwrap_or_else(|| panic!("docs/guide/history.md lacks {heading}"))
        .1;
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            l.strip_prefix("| `")?
                .split_once('`')
                .map(|(p, _)| p.to_string())
        })
        .collect()
}

fn the_json_schema_is_stable_and_documented() {
    let mut seen = BTreeSet::new();
    for args in [
        vec![A, B, "-o", "json"],
        vec!["001.yaml", "026.yaml", "-o", "json"],
        vec![
            A,
            B,
            "-o",
            "json",
            "--ignore",
            "spec.kind",
            "--ignore",
            "spec.addons[loki]",
        ],
    ] {
        let v: serde_json::Value = serde_json::from_str(&diff(&args).stdout).unwrap();
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["kind"], "InventoryDiff");
        key_paths(&v, "", &mut seen);
    }
    // Ignored changes have the shape of changes and are documented with them.
    assert!(
        seen.contains("ignored[].entry.name"),
        "the sample covers ignored changes"
    );
    seen.retain(|p| !p.starts_with("ignored[]."));
    assert_eq!(
        seen,
        documented("### `clinv diff -o json`"),
        "diff JSON keys vs docs/guide/history.md"
    );
    let recorded = history::load();
    let trail = clinv::history::audit::trail(&history::steps(&recorded), &Default::default());
    let v = serde_json::to_value(&trail).unwrap();
    let mut seen = BTreeSet::new();
    key_paths(&v, "", &mut seen);
    // Change objects are documented once, with the diff.
    seen.retain(|p| {
        !p.contains(".changes[].") && !p.contains(".ignored[].") && !p.contains(".summary.")
    });
    assert_eq!(
        seen,
        documented("### Audit trail JSON"),
        "trail JSON keys vs docs/guide/history.md"
    );
}

fn hostile_documents_are_errors_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let mut prev = 'a';
    for name in 'b'..='i' {
        laughs.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(", ")
        ));
        prev = name;
    }
    let cases = [
        // The same reader, and words, as for a lok8s spec.
        ("laughs.yaml", laughs, "excessive aliasing"),
        ("deep.yaml", "[".repeat(10_000), "recursion limit exceeded"),
        (
            "deep.json",
            "{\"a\":".repeat(10_000),
            "recursion limit exceeded",
        ),
        (
            "dup.yaml",
            "kind: ClusterInventory\nkind: ClusterInventory\n".into(),
            "mapping key \"kind\" already defined at line 1",
        ),
        (
            "addons.yaml",
            std::fs::read_to_string(history::file("001"))
                .unwrap()
                .replace("  addons:\n", "  addons: 5\n  x:\n"),
            "spec.addons: expected a list",
        ),
    ];
    for (name, text, message) in cases {
        let path = write(dir.path(), name, &text);
        let run = clinv(&["diff", path.to_str().unwrap(), "-"])
            .stdin(text)
            .run();
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
        assert_eq!(run.stdout, "");
    }
    // Over 8 MiB on stdin is refused without reading it all.
    let huge = vec![b' '; (8 << 20) + 10];
    let run = clinv(&["diff", "-", "x.yaml"]).stdin(huge).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("input too large"), "{}", run.stderr);
}

trials! {
    Nothing: [
        every_format_matches_its_golden_file,
        every_format_names_both_sides_and_what_they_resolved_to,
        stat_is_one_line_per_addon_and_a_summary,
        text_lines_read_like_helm_diff,
        the_same_inventory_exits_0,
        a_re_render_differs_only_in_rendered_at_and_is_no_change,
        a_live_dump_on_stdin_compares_equal_to_its_rendered_file,
        a_render_out_directory_is_a_reference,
        ignored_changes_are_listed_but_never_change_the_exit_code,
        errors_exit_2_with_a_message_and_no_data,
        colour_only_on_request,
        hostile_values_cannot_reach_the_terminal_or_the_markup,
        the_json_schema_is_stable_and_documented,
        hostile_documents_are_errors_not_crashes,
    ],
}
