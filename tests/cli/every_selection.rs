//! Issue 40: one selection on every command that reads more than one domain. Each
//! command × each selection form (`-A`, `--domain` repeated, a glob, none) over the
//! three-site fleet ([`crate::sites`]), with its documented outcome: which domains it
//! answers and its exit code. A command that quietly lacks a form fails here, and the
//! table in docs/guide/fleet.md is this table.

use crate::sites::Sites;
use crate::support::*;

/// A selection form and its arguments.
#[derive(Clone, Copy)]
enum Form {
    All,
    Repeated,
    Glob,
    None,
}

impl Form {
    fn args(self) -> &'static [&'static str] {
        match self {
            Form::All => &["-A"],
            Form::Repeated => &[
                "--domain",
                "air-1.sites.example",
                "--domain",
                "hel-2.sites.example",
            ],
            Form::Glob => &["--domain", "fsn-*"],
            Form::None => &[],
        }
    }

    /// The cluster domains the form selects (none: `clusters/.active`).
    fn selects(self) -> Vec<String> {
        let all = Sites::clusters();
        match self {
            Form::All => all,
            Form::Repeated => vec!["air-1.sites.example".into(), "hel-2.sites.example".into()],
            Form::Glob => all.into_iter().filter(|d| d.starts_with("fsn-")).collect(),
            Form::None => vec!["air-2.sites.example".into()],
        }
    }

    fn word(self) -> &'static str {
        match self {
            Form::All => "-A",
            Form::Repeated => "--domain D --domain E",
            Form::Glob => "--domain 'fsn-*'",
            Form::None => "none",
        }
    }
}

const FORMS: [Form; 4] = [Form::All, Form::Repeated, Form::Glob, Form::None];

/// A command and its exit code for each form (in [`FORMS`] order); every form answers
/// exactly the domains it selects (stdout names no other, stderr says nothing of
/// another).
struct Case {
    command: &'static [&'static str],
    codes: [i32; 4],
    /// No selection is the whole fleet (`fleet`, `snapshots`), not `clusters/.active`.
    none_is_all: bool,
    /// All or nothing (`render --out`, `commit`): with `-A` the domain whose spec does not
    /// parse stops the whole, and is named.
    whole: bool,
}

const AUTHOR: &str = "Fleet Tests <fleet@sites.example>";
const OCI: &str = "oci://127.0.0.1:9/inventory/{domain}:latest";

fn cases() -> Vec<Case> {
    let index = repo().join("examples/addons-index.json");
    let index: &'static str = Box::leak(index.to_str().unwrap().into());
    let updates: &'static [&'static str] =
        Box::leak(Box::new(["updates", "--offline", "--index", index]));
    let case = |command, codes| Case {
        command,
        codes,
        none_is_all: false,
        whole: false,
    };
    vec![
        Case {
            whole: true,
            ..case(&["render", "--out", "out"][..], [1, 0, 0, 0])
        },
        case(&["addons"], [1, 0, 0, 0]),
        case(updates, [1, 0, 0, 0]),
        // lok8s's rule: a spec that does not build is a warning of publish, not a failure.
        case(&["publish"], [0, 0, 0, 0]),
        case(&["replay"], [0, 0, 0, 0]),
        case(&["status"], [1, 16, 16, 16]),
        // drift's 1 is a drift: a domain it could not answer is its error, 2.
        case(&["drift"], [2, 16, 16, 16]),
        Case {
            none_is_all: true,
            ..case(&["fleet"], [1, 0, 0, 1])
        },
        Case {
            none_is_all: true,
            ..case(&["fleet", "--from", "store"], [0, 0, 0, 0])
        },
        // Only the selected clusters are read (none answers: 16).
        Case {
            none_is_all: true,
            ..case(
                &["fleet", "--from", "live", "--timeout", "5"],
                [1, 16, 16, 1],
            )
        },
        case(&["log"], [0, 0, 0, 0]),
        Case {
            none_is_all: true,
            ..case(&["snapshots"], [0, 0, 0, 0])
        },
        case(&["diff", "latest~1", "latest"], [2, 1, 1, 1]),
        Case {
            whole: true,
            ..case(
                &["commit", "--repo", "gitops", "--author", AUTHOR],
                [1, 0, 0, 0],
            )
        },
        // Unlike publish, a push of a render that fails is an error.
        case(&["push", OCI], [1, 0, 0, 0]),
    ]
}

/// Every command × every form, against a fresh copy of the fleet each (some write).
fn every_command_takes_every_selection_form() {
    let sites = Sites::new();
    let mut failures = Vec::new();
    let mut table = String::new();
    let index = repo().join("examples/addons-index.json");
    let index = index.to_str().unwrap();
    for case in cases() {
        let shown = case.command.join(" ").replace(index, "INDEX");
        let mut row = format!("| `clinv {shown}` |");
        for (form, code) in FORMS.iter().zip(case.codes) {
            let copy = copy_tree(sites.root());
            git(copy.path(), &["init", "-q", "-b", "main", "gitops"]);
            let args = [case.command, form.args()].concat();
            let run = in_copy(&sites, copy.path(), &args);
            let said = format!(
                "{}{}{}",
                run.stdout,
                run.stderr,
                written(&copy.path().join("out"))
            );
            if run.code != code {
                failures.push(format!(
                    "clinv {}: exit {} (documented {code})\n{}",
                    args.join(" "),
                    run.code,
                    run.stderr
                ));
            }
            let selected = match form {
                Form::None if case.none_is_all => Form::All.selects(),
                Form::All if case.whole => {
                    if !run.stderr.contains("broken.sites.example") {
                        failures.push(format!(
                            "clinv {}: the broken domain not named",
                            args.join(" ")
                        ));
                    }
                    Vec::new()
                }
                form => form.selects(),
            };
            for d in Sites::clusters() {
                // One domain's output need not name it (the one-domain rule is tested
                // elsewhere); it must name no other.
                let one_rule = matches!(form, Form::None) && !case.none_is_all;
                let wrong = if selected.contains(&d) {
                    (!one_rule && !said.contains(&d)).then_some("not answered")
                } else {
                    // Nor is it read: no row on stdout, no "D: …" message on stderr.
                    let message = run.stderr.contains(&format!("{d}: "));
                    (run.stdout.contains(&d) || message).then_some("answered, not selected")
                };
                if let Some(wrong) = wrong {
                    failures.push(format!(
                        "clinv {}: {d} {wrong} (exit {})\n{said}",
                        args.join(" "),
                        run.code
                    ));
                }
            }
            row.push_str(&format!(" {code} |"));
        }
        table.push_str(&row);
        table.push('\n');
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let guide = std::fs::read_to_string(repo().join("docs/guide/fleet.md")).unwrap();
    let header = FORMS.map(Form::word).join(" | ");
    assert_has(&guide, &format!("| command | {header} |"));
    assert_has(&guide, &table);
}

/// What `render --out` wrote: every file's path and text.
fn written(dir: &std::path::Path) -> String {
    all_files(dir)
        .iter()
        .map(|f| {
            format!(
                "{}\n{}",
                f.display(),
                std::fs::read_to_string(f).unwrap_or_default()
            )
        })
        .collect()
}

fn in_copy(sites: &Sites, root: &std::path::Path, args: &[&str]) -> Run {
    sites
        .run(args)
        .cwd(root)
        .store(root.join("snapshots"))
        .run()
}

trials! {
    Nothing: [every_command_takes_every_selection_form],
}
