//! The command reference in `docs/reference/` (Markdown) and the man pages in `docs/man/`
//! (clap_mangen) are generated from the clap definitions by this test and compared with
//! the committed files: a flag added, renamed or re-documented in the code fails here
//! until `CLINV_BLESS=1 cargo test --test cli -- reference` regenerates them, and a file
//! of a gone command fails too (bless removes it).

use crate::support::*;
use clap::{Arg, ArgAction, Command, CommandFactory};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn the_reference_and_man_pages_are_generated_from_the_code() {
    let mut root = clinv::app::cli::Cli::command();
    root.build();
    let mut pages = BTreeMap::new();
    let mut man = BTreeMap::new();
    let mut index = String::from(
        "# Command reference\n\nGenerated from the code by `tests/cli/reference.rs` \
         (`CLINV_BLESS=1 cargo test --test cli -- reference` after a change); \
         `clinv <command> --help` prints the same flags. Man pages: `docs/man/`.\n\n\
         | command | what it does |\n|---|---|\n",
    );
    walk(&root, &[], &mut |path, cmd| {
        let name = path.join(" ");
        let file = path.join("-");
        let _ = writeln!(
            index,
            "| [`{name}`]({file}.md) | {} |",
            first_line(cmd.get_about())
        );
        pages.insert(format!("{file}.md"), page(&name, cmd));
        let mut roff = Vec::new();
        clap_mangen::Man::new(cmd.clone())
            .title(file.clone())
            .render(&mut roff)
            .unwrap();
        man.insert(format!("{file}.1"), String::from_utf8(roff).unwrap());
    });
    pages.insert("README.md".into(), index);
    check_dir(&repo().join("docs/reference"), &pages);
    check_dir(&repo().join("docs/man"), &man);
}

/// Every command below `cmd` (depth first, `help` left out), with its path of names.
fn walk(cmd: &Command, parent: &[String], f: &mut dyn FnMut(&[String], &Command)) {
    let path: Vec<String> = parent
        .iter()
        .cloned()
        .chain([cmd.get_name().to_string()])
        .collect();
    f(&path, cmd);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        walk(sub, &path, f);
    }
}

fn first_line(text: Option<&clap::builder::StyledStr>) -> String {
    text.map(|t| t.to_string())
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .replace('|', "\\|")
}

/// One command's page: what it does, its usage, its subcommands, and one row per flag.
fn page(name: &str, cmd: &Command) -> String {
    let mut out = format!("# `{name}`\n\n");
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|t| t.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        let _ = writeln!(out, "{}\n", about.trim_end());
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ");
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let subs: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    if !subs.is_empty() {
        out.push_str("## Commands\n\n| command | what it does |\n|---|---|\n");
        for sub in subs {
            let file = format!("{}-{}", name.replace(' ', "-"), sub.get_name());
            let _ = writeln!(
                out,
                "| [`{}`]({file}.md) | {} |",
                sub.get_name(),
                first_line(sub.get_about())
            );
        }
        out.push('\n');
    }
    let (positional, flags): (Vec<&Arg>, Vec<&Arg>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .partition(|a| a.is_positional());
    if !positional.is_empty() {
        out.push_str("## Arguments\n\n| argument | meaning |\n|---|---|\n");
        for arg in positional {
            let _ = writeln!(out, "| `{}` | {} |", value_names(arg), help(arg));
        }
        out.push('\n');
    }
    let (own, global): (Vec<&Arg>, Vec<&Arg>) = flags.into_iter().partition(|a| !a.is_global_set());
    for (title, args) in [("Options", own), ("Global options", global)] {
        if args.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {title}\n\n| flag | meaning |\n|---|---|");
        for arg in args {
            let _ = writeln!(out, "| {} | {} |", flag(arg), help(arg));
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn flag(arg: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    let mut text = format!("`{}", names.join(", "));
    if takes_value(arg) {
        let _ = write!(text, " {}", value_names(arg));
    }
    text.push('`');
    text
}

fn takes_value(arg: &Arg) -> bool {
    !matches!(
        arg.get_action(),
        ArgAction::SetTrue
            | ArgAction::SetFalse
            | ArgAction::Count
            | ArgAction::Help
            | ArgAction::HelpShort
            | ArgAction::HelpLong
            | ArgAction::Version
    )
}

fn value_names(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().as_str().to_uppercase(),
    }
}

/// The flag's help, then what clap adds to `--help`: formats, default, environment.
fn help(arg: &Arg) -> String {
    let mut text = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|t| t.to_string())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if !text.is_empty() && !text.ends_with(['.', '!', '?', ')']) {
        text.push('.');
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !possible.is_empty() && takes_value(arg) {
        let _ = write!(text, " Values: {}.", possible.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    if !defaults.is_empty() && takes_value(arg) {
        let _ = write!(text, " Default: {}.", defaults.join(", "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(text, " Environment: `{}`.", env.to_string_lossy());
    }
    text.trim().replace('|', "\\|")
}

/// `dir` holds exactly `files`, byte for byte (CLINV_BLESS=1 makes it so).
fn check_dir(dir: &Path, files: &BTreeMap<String, String>) {
    for (name, text) in files {
        blessed(&dir.join(name), text);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !files.contains_key(&name) {
            let gone = dir.join(&name);
            if std::env::var_os("CLINV_BLESS").is_some() {
                std::fs::remove_file(&gone).unwrap();
            } else {
                panic!(
                    "{} belongs to no command (CLINV_BLESS=1 removes it)",
                    gone.display()
                );
            }
        }
    }
}

/// What each command's one-line summary must speak of: a hand-written table, so that a
/// summary spliced onto another command (as `fleet`'s and `log`'s once were, in help, man
/// pages and reference alike) fails here however the goldens are blessed.
const SUMMARY_SUBJECT: &[(&str, &str)] = &[
    ("clinv", "ClusterInventory"),
    ("clinv render", "Render the ClusterInventory"),
    ("clinv crd", "CRD"),
    ("clinv addons", "addons a domain deploys"),
    ("clinv publish", "server-side apply"),
    ("clinv status", "`lo status` inventory block"),
    ("clinv replay", "Deliver pending snapshots"),
    ("clinv commit", "GitOps repository"),
    ("clinv push", "OCI registry"),
    ("clinv snapshots", "snapshot store"),
    ("clinv snapshots list", "List snapshots"),
    ("clinv snapshots show", "Show one snapshot"),
    ("clinv snapshots verify", "every checksum"),
    ("clinv snapshots gc", "Delete old snapshots"),
    ("clinv snapshots export", "to a tar file"),
    ("clinv snapshots import", "exported tar file"),
    ("clinv index", "addon index"),
    ("clinv updates", "newer version"),
    ("clinv agent", "in-cluster status writer"),
    ("clinv diff", "Compare two inventories"),
    ("clinv fleet", "addon × domain matrix"),
    ("clinv log", "history of a domain"),
    ("clinv report", "HTML page"),
    ("clinv drift", "project's render with the live inventory"),
    ("clinv completions", "completion script"),
    ("clinv version", "clinv's version"),
];

fn every_command_has_a_summary_of_its_own() {
    let mut root = clinv::app::cli::Cli::command();
    root.build();
    let mut summaries: Vec<(String, String, String)> = Vec::new();
    walk(&root, &[], &mut |path, cmd| {
        let name = path.join(" ");
        let about = cmd.get_about().map(|t| t.to_string()).unwrap_or_default();
        let long = cmd
            .get_long_about()
            .map(|t| t.to_string())
            .unwrap_or_default();
        summaries.push((name, about, long));
    });
    let named: Vec<&str> = summaries.iter().map(|(n, ..)| n.as_str()).collect();
    let listed: Vec<&str> = SUMMARY_SUBJECT.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        sorted(named),
        sorted(listed),
        "every command (and only those) is in SUMMARY_SUBJECT"
    );
    for (name, about, long) in &summaries {
        let subject = SUMMARY_SUBJECT.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(
            about.contains(subject),
            "{name}'s summary is not its own: {about:?} does not speak of {subject:?}"
        );
        for (other, other_about, _) in &summaries {
            if other != name && !other_about.is_empty() {
                assert_ne!(about, other_about, "{name} and {other} share a summary");
                let spliced = long.contains(other_about.as_str()) && other != "clinv";
                assert!(!spliced, "{name}'s description holds {other}'s summary");
            }
        }
    }
}

fn sorted(mut names: Vec<&str>) -> Vec<&str> {
    names.sort_unstable();
    names
}

trials! {
    Nothing: [
        the_reference_and_man_pages_are_generated_from_the_code,
        every_command_has_a_summary_of_its_own,
    ],
}
