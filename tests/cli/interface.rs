use crate::support::*;

/// `clinv [command…] --help` of every command and subcommand, found by walking the
/// "Commands:" lists from `clinv --help` down, against `tests/golden/help/<command>.txt`
/// (`clinv.txt` for the top level, `snapshots-gc.txt` for `clinv snapshots gc`). A new
/// command fails until its golden exists and a golden of a gone command fails too;
/// `CLINV_BLESS=1` writes them all and removes those of gone commands.
fn every_command_has_help() {
    let dir = repo().join("tests/golden/help");
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let help = help(&path);
        assert!(help.contains("Usage: clinv"), "{path:?}: {help}");
        let name = match path.join("-") {
            top if top.is_empty() => "clinv".to_string(),
            name => name,
        };
        blessed(&dir.join(format!("{name}.txt")), &help);
        seen.insert(format!("{name}.txt"));
        for sub in subcommands(&help) {
            todo.push([path.clone(), vec![sub]].concat());
        }
    }
    assert!(help(&[]).contains("Exit codes:"));
    assert!(seen.len() > 1, "no subcommand found in clinv --help");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if !seen.contains(&file) {
            let gone = dir.join(&file);
            if std::env::var_os("CLINV_BLESS").is_some() {
                std::fs::remove_file(&gone).unwrap();
            } else {
                panic!(
                    "{} is the help of no command (CLINV_BLESS=1 removes it)",
                    gone.display()
                );
            }
        }
    }
}

/// `clinv <path…> --help` at a fixed width, with no variable of the caller's (clap shows
/// the values of `[env: …]` variables that are set).
fn help(path: &[String]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clinv"))
        .args(path)
        .arg("--help")
        .env_clear()
        .env("COLUMNS", "100")
        .env("LINES", "50")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{path:?} --help: {stderr}");
    assert!(stderr.is_empty(), "{path:?} --help: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// The names in the "Commands:" section of a help text, without `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A name starts at two spaces; deeper indents continue a wrapped description.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

fn usage_errors_exit_2() {
    for args in [
        &["render", "--bogus"][..],
        &["nosuchcommand"],
        &["render", "-o", "xml"],
        &["crd", "-o", "table"],
        &["--color", "sometimes", "crd"],
    ] {
        let run = clinv(args).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        // One style with clinv's own errors: the first line is `[error] …`, never clap's
        // `error:`.
        assert!(
            run.stderr.starts_with("[error] "),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("error:"), "{args:?}: {}", run.stderr);
    }
    golden(
        "usage/unknown-flag.txt",
        &clinv(&["render", "--bogus"]).run().stderr,
    );
}

fn domain_resolution_and_root_discovery() {
    let root = example();
    // No --root: found from a subdirectory; no --domain: clusters/.active.
    let run = clinv(&["render", "-o", "json"])
        .cwd(&root.join("clusters/edge.acme.example"))
        .run()
        .success();
    assert!(
        run.stdout
            .contains("\"lok8s.dev/domain\": \"prod.acme.example\"")
    );
    // DOMAIN_NAME wins over .active, with lok8s's notice.
    let run = clinv(&["render", "--root", root.to_str().unwrap()])
        .env("DOMAIN_NAME", "edge.acme.example")
        .run()
        .success();
    assert!(run.stdout.contains("lok8s.dev/domain: edge.acme.example"));
    assert_eq!(
        run.stderr,
        "notice: using DOMAIN_NAME=edge.acme.example (env); the active domain is 'prod.acme.example' — pass --domain or unset DOMAIN_NAME to switch\n"
    );
    // Invalid explicit domains are refused.
    let run = clinv(&["render"]).project(&root, "../../etc").run();
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("invalid domain name '../../etc'"));
    // Outside any project.
    let empty = tempfile::tempdir().unwrap();
    let run = clinv(&["render"]).cwd(empty.path()).run();
    assert_eq!(run.code, 1);
    assert_has(&run.stderr, "no lok8s project found");
}

fn default_domain_is_lok8s_dev() {
    let dir = copy_tree(&fixture("inv"));
    std::fs::rename(
        dir.path().join("clusters/inv"),
        dir.path().join("clusters/lok8s.dev"),
    )
    .unwrap();
    let run = clinv(&["render", "--root", dir.path().to_str().unwrap()])
        .run()
        .success();
    assert!(run.stdout.contains("lok8s.dev/domain: lok8s.dev"));
}

fn colour_only_when_asked_or_on_a_terminal() {
    let root = example();
    let addons = |extra: &[&str]| clinv(&["addons"]).project(&root, "nope").args(extra).run();
    assert!(!addons(&[]).stderr.contains('\x1b'));
    let always = addons(&["--color", "always"]);
    assert!(
        always.stderr.starts_with("\x1b[0;33m[warn]\x1b[0m "),
        "{:?}",
        always.stderr
    );
    let never = addons(&["--color", "never"]);
    assert!(never.stderr.starts_with("[warn] "));
}

fn quiet_silences_warnings_but_not_errors() {
    let root = example();
    let run = clinv(&["addons", "-q"])
        .project(&root, "nope")
        .run()
        .success();
    assert!(run.stderr.is_empty());
    let run = clinv(&["render", "-q"]).project(&root, "nope").run();
    assert!(run.stderr.starts_with("[error]"));
}

fn completions_for_common_shells() {
    for shell in ["bash", "zsh", "fish"] {
        // The dynamic script calls clinv back (tests/cli/completion.rs runs it).
        let run = clinv(&["completions", shell]).run().success();
        assert!(
            run.stdout.contains("clinv") && run.stdout.contains("COMPLETE"),
            "{shell}"
        );
        let run = clinv(&["completions", shell, "--static"]).run().success();
        assert!(
            run.stdout.contains("clinv") && run.stdout.contains("render"),
            "{shell}"
        );
    }
}

fn a_closed_stdout_is_not_an_error() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_clinv"))
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue #16 finding 12: a wait over a second shows a one-line progress indicator on a
/// terminal (a real pseudo-terminal from util-linux's `script`), erased before the
/// command's own messages; piped, nothing of it appears.
fn a_long_wait_shows_progress_on_a_terminal_only() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn); // accepted, never answered
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "hole.kubeconfig",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: h\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: h\n  context: {{cluster: h, user: u}}\ncurrent-context: h\n"
        ),
    );
    let store = dir.path().join("store");
    let args = [
        "status".to_string(),
        "--root".into(),
        example().display().to_string(),
        "--domain".into(),
        "prod.acme.example".into(),
        "--kubeconfig".into(),
        kc.display().to_string(),
        "--probe-timeout".into(),
        "3".into(),
    ];
    let line = format!("{} {}", env!("CARGO_BIN_EXE_clinv"), args.join(" "));
    let tty = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("CLINV_SNAPSHOTS", &store)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux script runs");
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(
        shown.contains("clinv status… 1s") && shown.contains("\r\x1b[K"),
        "no progress line on a terminal: {shown:?}"
    );
    // Erased before the next message: no message starts on the progress line.
    assert!(
        !shown.contains("s[warn]") && !shown.contains("s[error]"),
        "{shown:?}"
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let piped = clinv(&args).store(&store).run();
    assert!(
        !piped.stderr.contains('…') && !piped.stderr.contains('\r'),
        "{}",
        piped.stderr
    );
}

trials! {
    Nothing: [
        a_long_wait_shows_progress_on_a_terminal_only,
        every_command_has_help,
        usage_errors_exit_2,
        domain_resolution_and_root_discovery,
        default_domain_is_lok8s_dev,
        colour_only_when_asked_or_on_a_terminal,
        quiet_silences_warnings_but_not_errors,
        completions_for_common_shells,
        a_closed_stdout_is_not_an_error,
    ],
}
