//! Issue 16, finding 1: kubectl's `-o jsonpath=TEMPLATE` on every command that prints a
//! table (applied to the command's `-o json` document) and `--no-headers` honoured by
//! every table and accepted nowhere else.

use crate::selection::Fx;
use crate::support::*;

/// `addons` on the example's lab domain.
fn addons(extra: &[&str]) -> Run {
    let root = example();
    clinv(&["addons"])
        .project(&root, "lab.acme.example")
        .args(extra)
        .run()
}

/// `updates` on the example's prod domain against the fixture index (rendered: no
/// cluster, an empty store).
fn updates(extra: &[&str]) -> Run {
    let store = tempfile::tempdir().unwrap();
    let root = example();
    let index = fixture("updates/index.json");
    clinv(&["updates", "--index", index.to_str().unwrap()])
        .project(&root, "prod.acme.example")
        .args(extra)
        .store(store.path())
        .run()
}

/// The checks every table's jsonpath shares: a field nobody has prints nothing (kubectl's
/// default, `--allow-missing-template-keys=true`) and is exit 1 naming the template and
/// the field with `--allow-missing-template-keys=false`; a template that does not parse is
/// a usage error (exit 2) with the column; nothing is printed on stdout for an error.
fn errors_of(command: &str, run: impl Fn(&[&str]) -> Run) {
    let missing = run(&["-o", "jsonpath={.nme}{\"\\n\"}"]).success();
    assert_eq!(missing.stdout, "\n", "{command}");
    let bad = run(&[
        "-o",
        "jsonpath={.nme}{\"\\n\"}",
        "--allow-missing-template-keys=false",
    ]);
    assert_eq!(bad.code, 1, "{command}: {}", bad.stderr);
    assert_eq!(
        bad.stderr.lines().last().unwrap(),
        "[error] error executing jsonpath \"{.nme}{\"\\n\"}\": nme is not found",
        "{command}"
    );
    assert!(bad.stdout.is_empty(), "{command}: {}", bad.stdout);
    for (template, why) in [
        ("{.a", "unclosed action at column 1"),
        ("x{range .b[*]}{.c}", "range without {end} at column 2"),
        ("{.a}{end}", "not in range, nothing to end at column 6"),
        (
            "{.a}{b}",
            "unrecognized character in action: 'b' at column 6",
        ),
    ] {
        let r = run(&["-o", &format!("jsonpath={template}")]);
        assert_eq!(r.code, 2, "{command} {template}: {}", r.stderr);
        assert_eq!(
            r.stderr,
            format!("[error] clinv {command}: invalid jsonpath template '{template}': {why}\n"),
        );
        assert!(r.stdout.is_empty());
    }
    for bare in ["jsonpath", "jsonpath="] {
        let r = run(&["-o", bare]);
        assert_eq!(r.code, 2);
        assert_eq!(
            r.stderr,
            format!("[error] clinv {command}: jsonpath needs a template: -o jsonpath='{{...}}'\n")
        );
    }
    let r = run(&["-o", "jsonpath-file=x"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "[error] clinv {command}: unsupported output format 'jsonpath-file=x' (supported: table, wide, name, json, yaml, jsonpath=TEMPLATE)\n"
        )
    );
}

/// The issue's own example: a key some addons lack prints empty, as in kubectl.
fn missing_keys_print_nothing_as_kubectl_does() {
    let run = addons(&[
        "-o",
        "jsonpath={range .addons[*]}{.name}={.chartVersion}{\"\\n\"}{end}",
    ])
    .success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines.len() > 1, "{}", run.stdout);
    assert!(lines.iter().any(|l| l.ends_with('=')), "{}", run.stdout);
}

fn addons_take_a_jsonpath_template() {
    let json: serde_json::Value =
        serde_json::from_str(&addons(&["-o", "json"]).success().stdout).unwrap();
    let out = |template: &str| {
        addons(&["-o", &format!("jsonpath={template}")])
            .success()
            .stdout
    };
    // Several results of one expression: joined by a space, no newline added.
    assert_eq!(
        out("{.addons[*].name}"),
        "cilium openstack-ccm cert-manager metrics-server local-path-provisioner"
    );
    // Literal text between blocks, $ and a string literal.
    assert_eq!(
        out("{$.domain} ({.kind}){\"\\n\"}"),
        "lab.acme.example (capi)\n"
    );
    // range/end over the items, tab and newline literals.
    assert_eq!(
        out(r#"{range .addons[*]}{.name}{"\t"}{.category}{"\n"}{end}"#),
        "cilium\tnetworking\nopenstack-ccm\t\ncert-manager\tinfrastructure\nmetrics-server\tobservability\nlocal-path-provisioner\tstorage\n"
    );
    // A filter, an index, a negative slice and recursive descent.
    assert_eq!(
        out(r#"{.addons[?(@.type=="khelm")].name}"#),
        "cilium cert-manager metrics-server"
    );
    assert_eq!(out("{.addons[0].name}"), json["addons"][0]["name"]);
    assert_eq!(out("{.addons[-1:].name}"), "local-path-provisioner");
    // Fields only some addons have: those print (kubectl's rule).
    assert_eq!(out("{..version}"), "1.19.2 v1.18.0 3.12.2");
    // Objects print as compact JSON in the document's order; {$} is the whole document.
    assert_eq!(out("{$}"), serde_json::to_string(&json).unwrap());
    assert_eq!(
        out("{.addons[1]}"),
        serde_json::to_string(&json["addons"][1]).unwrap()
    );
    errors_of("addons", addons);
}

fn snapshots_list_takes_a_jsonpath_template() {
    let fx = Fx::new();
    let run = |extra: &[&str]| {
        fx.in_project(&[&["snapshots", "list"][..], extra].concat())
            .run()
    };
    let json: serde_json::Value =
        serde_json::from_str(&run(&["-o", "json"]).success().stdout).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let out = |template: &str| {
        run(&["-o", &format!("jsonpath={template}")])
            .success()
            .stdout
    };
    // The document is a list: {range [*]} walks it; the result is -o name's.
    assert_eq!(
        out(r#"{range [*]}{.domain}/{.id}{"\n"}{end}"#),
        run(&["-o", "name"]).success().stdout
    );
    let lab: Vec<&str> = rows
        .iter()
        .filter(|r| r["domain"] == "lab.acme.example")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(lab.len(), 1);
    assert_eq!(out(r#"{[?(@.domain=="lab.acme.example")].id}"#), lab[0]);
    assert_eq!(out("{[*].state}"), "pending pending pending", "{}", json);
    assert_eq!(out("{[0].target.context}"), "offline");
    // --state still selects before the template.
    assert_eq!(out("{[*].id}").split(' ').count(), 3);
    assert_eq!(
        run(&["--state", "applied", "-o", "jsonpath={[*].id}"])
            .success()
            .stdout,
        ""
    );
    errors_of("snapshots list", |a| run(a));
    // `clinv snapshots` alone takes the same template.
    let template = r#"jsonpath={range [*]}{.id}{"\n"}{end}"#;
    assert_eq!(
        fx.in_project(&["snapshots", "-o", template])
            .run()
            .success()
            .stdout,
        run(&["-o", template]).success().stdout
    );
}

fn updates_take_a_jsonpath_template() {
    let out = |template: &str| {
        updates(&["-o", &format!("jsonpath={template}")])
            .success()
            .stdout
    };
    assert_eq!(
        out(r#"{range .updates[*]}{.name} {.current} -> {.latest}{"\n"}{end}"#),
        "cilium 1.19.2 -> v1.20.1\nmetrics-server 3.12.2 -> 3.12\n"
    );
    assert_eq!(
        out("{.updates[?(@.unordered==true)].name}"),
        "metrics-server"
    );
    assert_eq!(
        out("{.inventory} {.indexGeneratedAt}"),
        "rendered 2026-07-06T10:00:00Z"
    );
    // --pre changes the document, and so the result.
    assert_eq!(
        updates(&["--pre", "-o", "jsonpath={.updates[?(@.prerelease)].name}"])
            .success()
            .stdout,
        "cert-manager"
    );
    errors_of("updates", updates);
}

/// The cells of each row, without the padding (widths differ without the header); an age
/// (`0s`, `3h`) is `<age>`, as two runs may be a second apart.
fn cells(text: &str) -> Vec<Vec<String>> {
    let age = regex::Regex::new(r"^[0-9]+[smhdy]$").unwrap();
    text.lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| if age.is_match(c) { "<age>" } else { c }.to_string())
                .collect()
        })
        .collect()
}

/// `--no-headers` in table and wide leaves exactly the rows; name, json and jsonpath
/// print the same with or without it (they have no header, as in kubectl).
fn no_headers(command: &str, run: &dyn Fn(&[&str]) -> Run, header: &str, skip: usize, rows: usize) {
    for format in ["table", "wide"] {
        let full = run(&["-o", format]).success().stdout;
        let bare = run(&["-o", format, "--no-headers"]).success().stdout;
        let headed: Vec<Vec<String>> = cells(&full).into_iter().skip(skip).take(rows).collect();
        assert_eq!(
            cells(&bare),
            headed,
            "{command} -o {format}:\n{full}\n{bare}"
        );
        assert_eq!(bare.lines().count(), rows, "{command} -o {format}: {bare}");
        assert!(full.contains(header), "{command} -o {format}: {full}");
        assert!(!bare.contains(header), "{command} -o {format}: {bare}");
    }
    for format in ["name", "json", "jsonpath={$}"] {
        assert_eq!(
            run(&["-o", format, "--no-headers"]).success().stdout,
            run(&["-o", format]).success().stdout,
            "{command} -o {format}"
        );
    }
}

fn no_headers_is_honoured_by_every_table() {
    // addons: a title, a blank line and the header before the rows, a hint after.
    no_headers("addons", &addons, "NAME ", 3, 5);
    no_headers("updates", &updates, "NAME ", 1, 2);
    let fx = Fx::new();
    let list = |extra: &[&str]| {
        fx.in_project(&[&["snapshots", "list"][..], extra].concat())
            .run()
    };
    no_headers("snapshots list", &list, "DOMAIN ", 1, 3);
    // `clinv snapshots` alone is `snapshots list`, with its flags (also before `list`).
    let bare = |extra: &[&str]| fx.in_project(&[&["snapshots"][..], extra].concat()).run();
    no_headers("snapshots", &bare, "DOMAIN ", 1, 3);
    assert_eq!(
        bare(&["--no-headers", "-o", "wide", "list"])
            .success()
            .stdout,
        list(&["--no-headers", "-o", "wide"]).success().stdout
    );
    assert_eq!(
        bare(&["--state", "pending", "-o", "name"]).success().stdout,
        list(&["--state", "pending", "-o", "name"]).success().stdout
    );
    // Before another subcommand they are a usage error, not silently dropped.
    let r = bare(&["--no-headers", "verify"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "[error] clinv snapshots: --state, --since, --limit, --sort-by, -o and --no-headers before a subcommand other than list belong to `snapshots list`; give the subcommand's own flags after it\n"
    );
    assert!(r.stdout.is_empty());
}

fn no_headers_is_accepted_only_where_a_table_prints() {
    let fx = Fx::new();
    for command in [
        &["status"][..],
        &["drift"],
        &["render"],
        &["crd"],
        &["log"],
        &["report"],
        &["diff", "latest~1", "latest"],
        &["snapshots", "show", "latest"],
        &["snapshots", "verify"],
        &["snapshots", "gc"],
        &["index"],
        &["version"],
    ] {
        let r = fx.in_project(&[command, &["--no-headers"]].concat()).run();
        assert_eq!(r.code, 2, "{command:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("unexpected argument '--no-headers'"),
            "{command:?}: {}",
            r.stderr
        );
    }
}

trials! {
    Nothing: [
        addons_take_a_jsonpath_template,
        missing_keys_print_nothing_as_kubectl_does,
        snapshots_list_takes_a_jsonpath_template,
        updates_take_a_jsonpath_template,
        no_headers_is_honoured_by_every_table,
        no_headers_is_accepted_only_where_a_table_prints,
    ],
}
