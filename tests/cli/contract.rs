//! Issue 16, findings 7, 8, 11 and 1: help and discoverability (`version`, references in
//! `diff --help`, no cluster flags where no cluster is used, `log` flags), table layout and
//! wording, pre-releases in `updates`, and `-o` on every command that prints data.

use crate::selection::Fx;
use crate::support::*;

fn version_command_in_text_and_json() {
    let run = clinv(&["version"]).run().success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert_eq!(lines[0], format!("clinv {}", env!("CARGO_PKG_VERSION")));
    // Built from a checkout: the commit is embedded (build.rs), not "unknown".
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match &head {
        Some(head) => assert_eq!(lines[1], format!("commit:          {head}")),
        None => assert!(lines[1].starts_with("commit:          "), "{}", run.stdout),
    }
    assert_eq!(lines[2], "lok8s schema:    lok8s.dev/v1alpha1");
    assert_eq!(lines[3], "kubernetes api:  1.34");
    let run = clinv(&["version", "-o", "json"]).run().success();
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["schemaVersion"], 1);
    assert_eq!(v["clinv"], env!("CARGO_PKG_VERSION"));
    assert!(v["commit"].is_null() || v["commit"].is_string());
    assert_eq!(v["lok8sSchema"], "lok8s.dev/v1alpha1");
    assert_eq!(v["kubernetesApi"], "1.34");
    let run = clinv(&["version", "-o", "yaml"]).run();
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "[error] clinv version: unsupported output format 'yaml' (supported: text, json)\n"
    );
}

fn help_shows_what_each_command_takes() {
    let help = |args: &[&str]| clinv(&[args, &["--help"]].concat()).run().success().stdout;
    // Commands that never talk to a cluster neither offer nor accept its flags, before
    // or after their name.
    let offline: [&[&str]; 11] = [
        &["render"],
        &["crd"],
        &["addons"],
        &["index"],
        &["completions", "bash"],
        &["version"],
        &["log"],
        &["report"],
        &["commit"],
        &["snapshots"],
        &["snapshots", "list"],
    ];
    for command in offline {
        let text = help(&command[..1]);
        assert!(
            !text.contains("--kubeconfig") && !text.contains("--context"),
            "{command:?}: {text}"
        );
        for args in [
            [&["--kubeconfig", "x"][..], command].concat(),
            [command, &["--context", "c"][..]].concat(),
        ] {
            let run = clinv(&args).run();
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.starts_with("[error] "),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    let publish = help(&["publish"]);
    assert!(publish.contains("--kubeconfig") && publish.contains("--context"));
    // Its own flags first, then the cluster's, then the global ones apart; examples last.
    let at = |needle: &str| {
        publish
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {publish}"))
    };
    assert!(at("--dry-run") < at("Cluster options:"));
    assert!(at("Cluster options:") < at("Global options:"));
    assert!(at("Global options:") < at("Examples:"));
    // Before the command name too (kubectl's habit), for a command that talks to a cluster.
    clinv(&["status", "-h"])
        .root("/nonexistent")
        .kubeconfig("/nonexistent/k")
        .run()
        .success();
    let diff = help(&["diff"]);
    for reference in [
        "latest, latest~N",
        "@DATE",
        "git:REV[:PATH]",
        "a snapshot id",
    ] {
        assert!(diff.contains(reference), "{reference}: {diff}");
    }
}

fn log_flags_for_git_and_kubectl_reflexes() {
    let fx = Fx::new();
    let log = |args: &[&str]| {
        fx.in_project(&[&["log", "--domain", "prod.acme.example"][..], args].concat())
            .run()
    };
    // -n is neither git's --max-count nor kubectl's namespace: a usage error saying so.
    let run = log(&["-n", "1"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "[error] clinv log: -n is not an option here (git's -n is --max-count 1; kubectl's -n namespace is --domain 1)\n"
    );
    assert!(run.stdout.is_empty());
    let newest = log(&["--max-count", "1", "--oneline"]).success().stdout;
    assert_eq!(newest.lines().count(), 1, "{newest}");
    // The change leads, the hash closes the line.
    assert!(
        newest.starts_with("~ cilium 1.19.2 → 1.20.3 (upgrade)  ")
            && newest.contains("  pending  #2 "),
        "{newest}"
    );
    let all = log(&["--oneline"]).success().stdout;
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 2, "{all}");
    assert!(
        lines[1].starts_with("first recorded inventory: Kubernetes v1.31.10, 9 addons  ")
            && lines[1].contains("  pending  #1 "),
        "{all}"
    );
    let reversed = log(&["--oneline", "--reverse"]).success().stdout;
    assert_eq!(
        reversed.lines().collect::<Vec<_>>(),
        [lines[1], lines[0]],
        "{reversed}"
    );
    // Relative times: the snapshots were recorded just now.
    for since in ["2d", "90m", "today", "yesterday", "1w"] {
        let run = log(&["--oneline", "--since", since]).success();
        assert_eq!(run.stdout, all, "--since {since}");
    }
    for until in ["yesterday", "2d"] {
        // An empty window: no data, and a line that says so (a quiet no-op is not silent).
        for format in [&["--oneline"][..], &[], &["-o", "json"]] {
            let run = log(&[format, &["--until", until]].concat()).success();
            let empty = if format.contains(&"json") { "[]\n" } else { "" };
            assert_eq!(run.stdout, empty, "--until {until} {format:?}");
            assert!(
                run.stderr.starts_with("[info] no recorded step of ")
                    && run.stderr.contains(&format!(" until {until}")),
                "{}",
                run.stderr
            );
        }
    }
    let run = log(&["--since", "tomorrow"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "[error] 'tomorrow' is not a date (YYYY-MM-DD), an RFC 3339 time, today, yesterday or a time ago (30m, 12h, 2d, 1w)\n"
    );
    // --oneline is a text form.
    assert_eq!(log(&["--oneline", "-o", "json"]).code, 2);
    // The largest count there is means "all", in every form, one domain or the fleet.
    let max = u64::MAX.to_string();
    for fleet in [&[][..], &["-A"]] {
        for form in [&[][..], &["--oneline"], &["-o", "json"]] {
            let args = [fleet, form, &["--max-count", &max]].concat();
            let run = fx.in_project(&[&["log"][..], &args].concat()).run();
            assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
            let whole = fx.in_project(&[&["log"][..], fleet, form].concat()).run();
            assert_eq!(run.stdout, whole.stdout, "{args:?}");
        }
    }
}

/// `updates` on the example's prod domain (rendered: no cluster, an empty store).
fn updates(extra: &[&str]) -> Run {
    let store = tempfile::tempdir().unwrap();
    let root = example();
    let index = fixture("updates/index.json");
    clinv(&["updates", "--index", index.to_str().unwrap()])
        .project(&root, "prod.acme.example")
        .args(extra)
        .store(store.path())
        .run()
        .success()
}

fn updates_offer_prereleases_only_when_asked_and_warn_on_duplicates() {
    let index = fixture("updates/index.json");
    // cert-manager v1.20.1 → v1.21.0-rc.1 is not offered to a release by default.
    let run = updates(&[]);
    assert_eq!(
        run.stdout,
        "NAME            CURRENT  LATEST   NOTE\ncilium          1.19.2   v1.20.1\nmetrics-server  3.12.2   3.12     unordered\n"
    );
    // The index lists cilium twice: a warning naming it (the first entry counts).
    assert_has(
        &run.stderr,
        &format!(
            "[warn] addon index {}: 'cilium' appears more than once; the first entry is compared\n",
            index.display()
        ),
    );
    // --pre offers it, marked.
    let run = updates(&["--pre"]);
    assert_eq!(
        run.stdout,
        "NAME            CURRENT  LATEST        NOTE\ncilium          1.19.2   v1.20.1\ncert-manager    v1.20.1  v1.21.0-rc.1  pre-release\nmetrics-server  3.12.2   3.12          unordered\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&updates(&["--pre", "-o", "json"]).stdout).unwrap();
    assert_eq!(json["updates"][1]["prerelease"], true);
    assert_eq!(updates(&["-o", "name"]).stdout, "cilium\nmetrics-server\n");
    assert_eq!(
        updates(&["-o", "wide", "--no-headers"]).stdout,
        "cilium          1.19.2  v1.20.1             rendered\nmetrics-server  3.12.2  3.12     unordered  rendered\n"
    );
    assert!(json["updates"][0].get("prerelease").is_none());
}

fn tables_fit_their_cells_and_wording_is_consistent() {
    let root = example();
    let run = clinv(&["addons"])
        .project(&root, "prod.acme.example")
        .run()
        .success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Widths from the cells (NAME as wide as "cert-manager-webhook-hetzner", VERSION as
    // "v1.16.4"), no underline row, and the default table fits 100 columns.
    assert_eq!(
        lines[2],
        "NAME                          SOURCE  CATEGORY        TYPE   VERSION"
    );
    let widest = run.stdout.lines().map(|l| l.chars().count()).max();
    assert!(widest <= Some(100), "{}", run.stdout);
    assert!(lines[3].starts_with("cilium  "), "{}", run.stdout);
    assert!(!run.stdout.contains("----"), "{}", run.stdout);

    let fx = Fx::new();
    let page = fx.root().join("lab.html");
    let run = fx
        .in_project(&[
            "report",
            "--domain",
            "lab.acme.example",
            "--out",
            page.to_str().unwrap(),
        ])
        .run()
        .success();
    assert_eq!(
        run.stderr,
        format!("[info] wrote {} (1 step)\n", page.display())
    );
    let run = fx
        .in_project(&[
            "report",
            "--domain",
            "prod.acme.example",
            "--out",
            page.to_str().unwrap(),
        ])
        .run()
        .success();
    assert!(run.stderr.ends_with(" (2 steps)\n"), "{}", run.stderr);
    // log --addon: lower-case verbs like every other message.
    let run = fx
        .in_project(&["log", "--domain", "prod.acme.example", "--addon", "cilium"])
        .run()
        .success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("cilium 1.20.3  arrived ")
            && lines[0].ends_with(", upgraded)  current"),
        "{}",
        run.stdout
    );
    assert!(lines[1].contains(", added)  until "), "{}", run.stdout);
}

fn every_data_command_takes_its_formats() {
    let root = example();
    let addons = |extra: &[&str]| {
        clinv(&["addons"])
            .project(&root, "lab.acme.example")
            .args(extra)
            .run()
            .success()
            .stdout
    };
    assert_eq!(
        addons(&["-o", "name"]),
        "cilium\nopenstack-ccm\ncert-manager\nmetrics-server\nlocal-path-provisioner\n"
    );
    let wide = addons(&["-o", "wide"]);
    assert!(
        wide.contains(
            "\nNAME                    SOURCE  CATEGORY        TYPE   VERSION  PATH                                             CONFIGURE\n"
        ),
        "{wide}"
    );
    assert!(
        wide.contains(
            "\nopenstack-ccm           target  -               raw    -        clusters/lab.acme.example/targets/openstack-ccm  per-cluster glue\n"
        ),
        "{wide}"
    );
    let bare = addons(&["--no-headers"]);
    assert_eq!(bare.lines().count(), 5, "{bare}");
    assert!(bare.starts_with("cilium  "), "{bare}");

    let fx = Fx::new();
    let run = |args: &[&str]| fx.in_project(args).run();
    let names = run(&["snapshots", "list", "-o", "name"]).success().stdout;
    assert_eq!(names.lines().count(), 3, "{names}");
    assert!(
        names
            .lines()
            .all(|l| l.starts_with("prod.acme.example/") || l.starts_with("lab.acme.example/")),
        "{names}"
    );
    let wide = run(&["snapshots", "list", "-o", "wide"]).success().stdout;
    let header = wide.lines().next().unwrap();
    assert!(
        header.contains("  TARGET ") && header.ends_with("  SPECHASH      LOK8S  TOOL"),
        "{wide}"
    );
    let bare = run(&["snapshots", "list", "--no-headers"]).success().stdout;
    assert_eq!(bare.lines().count(), 3, "{bare}");
    assert!(!bare.contains("DOMAIN"), "{bare}");

    let verify = run(&["snapshots", "verify", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&verify.stdout).unwrap();
    assert_eq!(
        (
            v["schemaVersion"].as_u64(),
            v["domains"].as_u64(),
            v["snapshots"].as_u64()
        ),
        (Some(1), Some(2), Some(3))
    );
    assert_eq!(v["problems"], serde_json::json!([]));
    let gc = run(&["snapshots", "gc", "--keep", "1", "--dry-run", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&gc.stdout).unwrap();
    assert!(v.is_array(), "{}", gc.stdout);

    let report = run(&["report", "--domain", "prod.acme.example", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 2);

    // No cluster: status says so in JSON and exits 16; the store holds only pending
    // snapshots, which never reached the cluster, so none is shown.
    let offline = repo().join("examples/offline.kubeconfig");
    let status = run(&[
        "status",
        "--domain",
        "prod.acme.example",
        "--kubeconfig",
        offline.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(status.code, 16, "{}", status.stderr);
    let v: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(v["source"], "none", "{}", status.stdout);
    assert_eq!(v["live"], false, "{}", status.stdout);
    assert!(v["notRead"].is_string(), "{}", status.stdout);
    assert!(v["inventory"].is_null());

    // Formats a command does not have are usage errors naming the supported ones.
    for (args, message) in [
        (
            &["status", "-o", "yaml"][..],
            "clinv status: unsupported output format 'yaml' (supported: text, wide, json, prometheus)",
        ),
        (
            &["report", "-o", "text"],
            "clinv report: unsupported output format 'text' (supported: html, json)",
        ),
        (
            &["snapshots", "verify", "-o", "wide"],
            "clinv snapshots verify: unsupported output format 'wide' (supported: text, json)",
        ),
        (
            &["addons", "-o", "toml"],
            "clinv addons: unsupported output format 'toml' (supported: table, wide, name, json, yaml, jsonpath=TEMPLATE)",
        ),
    ] {
        let r = clinv(args).run();
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr, format!("[error] {message}\n"), "{args:?}");
    }
}

/// Every table command prints its `-o json` document as YAML with `-o yaml`.
fn table_commands_take_yaml() {
    let root = example();
    let root = root.to_str().unwrap();
    let index = repo().join("tests/fixtures/updates/index.json");
    let store = tempfile::tempdir().unwrap();
    clinv(&["publish", "--root", root, "--domain", "prod.acme.example"])
        .store(store.path())
        .run()
        .success();
    for command in [
        &["addons", "--root", root, "--domain", "prod.acme.example"][..],
        &[
            "updates",
            "--root",
            root,
            "--domain",
            "prod.acme.example",
            "--index",
            index.to_str().unwrap(),
        ],
        &["snapshots", "list", "--root", root],
    ] {
        let run = |format: &str| {
            clinv(&[command, &["-o", format][..]].concat())
                .store(store.path())
                .run()
                .success()
                .stdout
        };
        let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
        let yaml: serde_json::Value = serde_saphyr::from_str(&run("yaml")).unwrap();
        assert_eq!(yaml, json, "{command:?}");
        assert!(!run("yaml").starts_with('{'), "{command:?}");
    }
}

trials! {
    Nothing: [
        version_command_in_text_and_json,
        help_shows_what_each_command_takes,
        log_flags_for_git_and_kubectl_reflexes,
        updates_offer_prereleases_only_when_asked_and_warn_on_duplicates,
        tables_fit_their_cells_and_wording_is_consistent,
        every_data_command_takes_its_formats,
        table_commands_take_yaml,
    ],
}
