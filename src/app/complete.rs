//! Dynamic shell completion with clap_complete's engine (`COMPLETE=SHELL clinv`).
//!
//! The shell's registration script (`source <(COMPLETE=bash clinv)`, or
//! `clinv completions bash`) calls `COMPLETE=bash clinv -- WORDS…` on each TAB;
//! [`respond`] answers that before anything else runs. Besides the subcommands, flags
//! and each command's `-o` formats (its value enum; a table's `jsonpath=TEMPLATE` is
//! offered as `jsonpath=`), it completes from the disk:
//!
//! - `--domain`: the project's domains (`clusters/<d>/` with a cluster or deploy spec)
//!   and the snapshot store's domain folders, whichever exist;
//! - snapshot references (`snapshots show ID`, `diff A B`, `commit --snapshot`,
//!   `push --snapshot`):
//!   `latest`, `latest~N` and the ids of the selected domain's store (the one
//!   domain-selection rule, with the `--root`, `--snapshots` and `--domain` already on
//!   the command line), newest first; `diff` also offers `cluster`, `-` and paths;
//! - `--index` of `updates` and `agent`: files (a URL is typed in full).
//!
//! Completing reads only directory listings and the selected domain's journal (the
//! compact listing read): no render, no network, no lock, no write, no migration. Any
//! failure yields no candidates, never a message.
//!
//! "No write" includes the store's caches: a listing by a reading command writes the
//! segment summaries it misses ([`crate::store::DomainStore::listing`]), a completion
//! reads with [`crate::store::DomainStore::listing_read_only`] — it runs unasked on
//! every TAB, so the store it looks at stays byte-identical (a CLI test holds it).

use crate::app::cli;
use crate::console::Console as _;
use crate::project::Project;
use crate::project::select::{self, Known};
use crate::store::{State, Store};
use clap::CommandFactory;
use clap_complete::engine::{
    ArgValueCompleter, CompletionCandidate, PathCompleter, ValueCompleter,
};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// At most this many snapshot ids are offered (the newest that match what was typed).
const MAX_IDS: usize = 100;
/// At most this many `latest~N` are offered once `latest~` is typed.
const MAX_LATEST: usize = 50;

/// Answers a completion request (`COMPLETE` set): the registration script, or the
/// candidates for the words after `--`. `None` when this is no completion request.
pub fn respond() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Words after `--`: the shell asks for candidates; otherwise the script is printed.
    let completing = args.iter().any(|a| a == "--");
    let cwd = std::env::current_dir().ok();
    match clap_complete::CompleteEnv::with_factory(command).try_complete(args, cwd.as_deref()) {
        Ok(false) => None,
        Ok(true) => Some(crate::error::exit::OK),
        // A failed completion is silent: the shell just offers nothing.
        Err(_) if completing => Some(crate::error::exit::FAILURE),
        Err(e) => {
            let env = crate::app::settings::Env::from_process();
            let printer = crate::app::output::Printer::new(
                crate::app::output::ColorChoice::Auto,
                env.no_color,
                crate::app::output::Verbosity::Normal,
            );
            let text = e.to_string();
            let text = text.trim_end();
            printer.error(&format!(
                "COMPLETE: {}",
                text.strip_prefix("error: ").unwrap_or(text)
            ));
            Some(crate::error::exit::USAGE)
        }
    }
}

/// clinv's command line with the completers of the values that come from the disk,
/// attached by argument id (`cli` stays plain clap types).
fn command() -> clap::Command {
    attach(cli::Cli::command(), "clinv")
}

/// Attaches the completers to `cmd` (named by its `path`) and its subcommands.
fn attach(mut cmd: clap::Command, path: &str) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let completer = match (path, id.as_str()) {
            (_, "domain") | ("clinv fleet", "against") => ArgValueCompleter::new(domains),
            ("clinv diff", "from" | "to") => ArgValueCompleter::new(diff_refs),
            ("clinv snapshots show", "id")
            | ("clinv commit", "snapshot")
            | ("clinv push", "snapshot") => ArgValueCompleter::new(snapshot_refs),
            // The tables' formats, with `jsonpath=` to type the template after.
            (
                "clinv addons" | "clinv updates" | "clinv snapshots" | "clinv snapshots list",
                "output",
            ) => ArgValueCompleter::new(table_formats),
            // A file or a URL (typed in full): files.
            ("clinv updates" | "clinv agent", "index") => {
                ArgValueCompleter::new(PathCompleter::file())
            }
            _ => continue,
        };
        cmd = cmd.mut_arg(id, |arg| arg.add(completer));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in names {
        let sub_path = format!("{path} {name}");
        cmd = cmd.mut_subcommand(name, |sub| attach(sub, &sub_path));
    }
    cmd
}

/// The registration script of `shell`, as `COMPLETE=<shell> clinv` prints it (what
/// `clinv completions SHELL` prints).
///
/// # Errors
/// An unknown shell name.
pub fn registration(shell: &str, cwd: &Path) -> std::io::Result<Vec<u8>> {
    let shells = clap_complete::env::Shells::builtins();
    let completer = shells
        .completer(shell)
        .ok_or_else(|| std::io::Error::other(format!("unknown shell '{shell}'")))?;
    let program = completer_path(std::env::args_os().next(), cwd);
    let mut buf = Vec::new();
    completer.write_registration("COMPLETE", "clinv", "clinv", &program, &mut buf)?;
    Ok(buf)
}

/// How the script calls clinv back: as it was called (`clinv` on PATH, or a path, made
/// absolute when relative) — the rule of `CompleteEnv`.
fn completer_path(argv0: Option<OsString>, cwd: &Path) -> String {
    let program = PathBuf::from(argv0.unwrap_or_else(|| "clinv".into()));
    let program = if program.components().count() > 1 && program.is_relative() {
        cwd.join(program)
    } else {
        program
    };
    program.to_string_lossy().into_owned()
}

/// What the rest of the command line says about where to look.
#[derive(Debug, Default, PartialEq, Eq)]
struct Context {
    root: Option<PathBuf>,
    snapshots: Option<PathBuf>,
    domain: Option<String>,
}

impl Context {
    /// The context of this completion request, read once.
    fn get() -> &'static Context {
        static CONTEXT: OnceLock<Context> = OnceLock::new();
        CONTEXT.get_or_init(Context::from_process)
    }

    /// From the words being completed (`clinv -- clinv WORDS…`), without the one under
    /// the cursor (`_CLAP_COMPLETE_INDEX`, else the last), parsed leniently by clap.
    fn from_process() -> Context {
        let words: Vec<OsString> = std::env::args_os()
            .skip_while(|a| a != "--")
            .skip(1)
            .collect();
        let index = crate::util::env::var("_CLAP_COMPLETE_INDEX").and_then(|i| i.parse().ok());
        Context::of_words(words, index)
    }

    fn of_words(mut words: Vec<OsString>, index: Option<usize>) -> Context {
        let index = index.unwrap_or(words.len().saturating_sub(1));
        if index > 0 && index < words.len() {
            words.remove(index);
        }
        let Ok(matches) = cli::Cli::command()
            .ignore_errors(true)
            .try_get_matches_from(words)
        else {
            return Context::default();
        };
        Context {
            root: deepest(&matches, "root"),
            snapshots: deepest(&matches, "snapshots"),
            domain: deepest(&matches, "domain"),
        }
    }

    fn project(&self, cwd: &Path) -> Option<Project> {
        Project::discover(self.root.as_deref(), cwd).ok()
    }

    /// `--snapshots` (or `CLINV_SNAPSHOTS`, which clap reads), else `<root>/snapshots`.
    fn store(&self, project: Option<&Project>) -> Option<Store> {
        match (&self.snapshots, project) {
            (Some(dir), _) => Some(Store::at(dir)),
            (None, Some(p)) => Some(Store::of_project(None, p.root())),
            (None, None) => None,
        }
    }
}

/// The value of `id` in the innermost (sub)command that has one.
fn deepest<T: Clone + Send + Sync + 'static>(matches: &clap::ArgMatches, id: &str) -> Option<T> {
    let mut found = None;
    let mut at = Some(matches);
    while let Some(m) = at {
        if let Ok(Some(v)) = m.try_get_one::<T>(id) {
            found = Some(v.clone());
        }
        at = m.subcommand().map(|(_, sub)| sub);
    }
    found
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_default()
}

/// Candidates for `--domain`.
/// `-o` of a table: its formats as the parser lists them, `jsonpath=TEMPLATE` offered as
/// `jsonpath=` (the template is the user's to type).
fn table_formats(current: &OsStr) -> Vec<CompletionCandidate> {
    use cli::Formats;
    let typed = current.to_string_lossy();
    cli::TableFormat::possible_values()
        .iter()
        .map(|p| match p.get_name().split_once('=') {
            Some((name, _)) => CompletionCandidate::new(format!("{name}="))
                .help(Some(p.get_name().to_string().into())),
            None => CompletionCandidate::new(p.get_name()),
        })
        .filter(|c| c.get_value().to_string_lossy().starts_with(typed.as_ref()))
        .collect()
}

fn domains(current: &OsStr) -> Vec<CompletionCandidate> {
    domain_candidates(Context::get(), &cwd(), &current.to_string_lossy())
}

fn domain_candidates(cx: &Context, cwd: &Path, typed: &str) -> Vec<CompletionCandidate> {
    let project = cx.project(cwd);
    let store = cx.store(project.as_ref());
    let stored = store.as_ref().map(Store::domains).unwrap_or_default();
    let in_project = project.as_ref().map(Project::domains).unwrap_or_default();
    let known = Known {
        project: project.as_ref(),
        store: store.as_ref().map(|s| (stored.as_slice(), s.root())),
    };
    select::known_domains(known)
        .into_iter()
        .filter(|d| d.starts_with(typed))
        .map(|d| {
            let help = match (in_project.contains(&d), stored.contains(&d)) {
                (true, true) => "project, snapshots",
                (true, false) => "project",
                _ => "snapshots",
            };
            CompletionCandidate::new(d.as_str()).help(Some(help.into()))
        })
        .collect()
}

/// Candidates for a snapshot reference (`snapshots show`, `commit --snapshot`).
fn snapshot_refs(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let env = crate::app::settings::Env::from_process();
    ref_candidates(Context::get(), &cwd(), env.domain_name.as_deref(), &typed)
}

/// Candidates for `diff A B`: snapshot references, `cluster`, `-` and paths.
fn diff_refs(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut out = snapshot_refs(current);
    let typed = current.to_string_lossy();
    if "cluster".starts_with(&*typed) {
        out.push(CompletionCandidate::new("cluster").help(Some("the live object".into())));
    }
    out.extend(PathCompleter::any().stdio().complete(current));
    out
}

fn ref_candidates(
    cx: &Context,
    cwd: &Path,
    env_domain: Option<&str>,
    typed: &str,
) -> Vec<CompletionCandidate> {
    let project = cx.project(cwd);
    let Some(store) = cx.store(project.as_ref()) else {
        return Vec::new();
    };
    let stored = store.domains();
    let known = Known {
        project: project.as_ref(),
        store: Some((&stored, store.root())),
    };
    let domains = match select::select(known, cx.domain.as_deref(), env_domain, &mut Vec::new()) {
        Ok(selected) => vec![selected.domain],
        // An id is unique across domains: without a selected domain, every domain's.
        Err(_) if cx.domain.is_none() => stored.clone(),
        Err(_) => Vec::new(),
    };
    let mut snapshots: Vec<(String, String, State)> = Vec::new();
    for domain in &domains {
        if !stored.contains(domain) {
            continue;
        }
        let Ok(listing) = store.domain(domain).listing_read_only() else {
            continue;
        };
        snapshots.extend(
            listing
                .rows()
                .rev()
                .filter(|r| r.state() != State::Deleted)
                .map(|r| (r.id().to_string(), r.at().to_string(), r.state())),
        );
    }
    if snapshots.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // latest~N counts within one domain only.
    if domains.len() == 1 {
        let latest = snapshots.len().min(if typed.starts_with("latest~") {
            MAX_LATEST
        } else {
            2
        });
        for (n, (id, at, _)) in snapshots.iter().take(latest).enumerate() {
            let name = match n {
                0 => "latest".to_string(),
                n => format!("latest~{n}"),
            };
            if name.starts_with(typed) {
                let help = format!("{id} {at}");
                out.push(CompletionCandidate::new(name).help(Some(help.into())));
            }
        }
    }
    out.extend(
        snapshots
            .iter()
            .filter(|(id, _, _)| id.starts_with(typed))
            .take(MAX_IDS)
            .map(|(id, at, state)| {
                let help = format!("{at} {}", state.as_str());
                CompletionCandidate::new(id).help(Some(help.into()))
            }),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<OsString> {
        text.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_context_is_read_around_the_word_under_the_cursor() {
        let cx = Context::of_words(
            words("clinv --root /p snapshots show --domain a.dev lat --snapshots /s"),
            Some(7),
        );
        assert_eq!(
            cx,
            Context {
                root: Some("/p".into()),
                snapshots: Some("/s".into()),
                domain: Some("a.dev".into()),
            }
        );
        // The word being completed is not a value of anything, even when it looks like one.
        let cx = Context::of_words(words("clinv render --domain"), None);
        assert_eq!(cx.domain, None);
        let cx = Context::of_words(words("clinv diff --domain=b.dev latest~1 "), None);
        assert_eq!(cx.domain.as_deref(), Some("b.dev"));
        // Nonsense parses to nothing rather than failing.
        let cx = Context::of_words(words("clinv --nope render -o bogus x y z"), Some(2));
        assert_eq!(cx, Context::default());
    }

    #[test]
    fn the_completers_are_attached_where_the_values_are_taken() {
        let mut cmd = command();
        cmd.build();
        let mut attached = Vec::new();
        fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                if arg.get::<ArgValueCompleter>().is_some() {
                    out.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
        walk(&cmd, "clinv", &mut attached);
        attached.sort();
        let mut want = vec![
            "clinv addons domain",
            "clinv agent index",
            "clinv diff domain",
            "clinv diff from",
            "clinv diff to",
            "clinv drift domain",
            "clinv log domain",
            "clinv publish domain",
            "clinv render domain",
            "clinv replay domain",
            "clinv report domain",
            "clinv snapshots domain",
            "clinv snapshots export domain",
            "clinv snapshots gc domain",
            "clinv snapshots import domain",
            "clinv snapshots list domain",
            "clinv snapshots show domain",
            "clinv snapshots show id",
            "clinv snapshots verify domain",
            "clinv status domain",
            "clinv updates domain",
            "clinv updates index",
            "clinv fleet against",
            "clinv fleet domain",
            // The tables' -o: `jsonpath=` instead of `jsonpath=TEMPLATE`.
            "clinv addons output",
            "clinv snapshots output",
            "clinv snapshots list output",
            "clinv updates output",
        ];
        if cfg!(feature = "gitops") {
            want.extend([
                "clinv commit domain",
                "clinv commit snapshot",
                "clinv push domain",
                "clinv push snapshot",
            ]);
        }
        want.sort();
        assert_eq!(attached, want);
    }

    #[test]
    fn the_script_calls_clinv_back_as_it_was_called() {
        let cwd = Path::new("/w");
        assert_eq!(completer_path(Some("clinv".into()), cwd), "clinv");
        assert_eq!(
            completer_path(Some("./bin/clinv".into()), cwd),
            "/w/./bin/clinv"
        );
        assert_eq!(
            completer_path(Some("/usr/bin/clinv".into()), cwd),
            "/usr/bin/clinv"
        );
    }
}
