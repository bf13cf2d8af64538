//! The command-line application: argument parsing ([`cli`]), settings resolved once
//! from the arguments and the environment ([`settings`]), the one printer ([`output`]),
//! and one thin function per command.

pub mod cli;
mod commands;
mod complete;
mod examples;
pub mod output;
pub mod settings;

use crate::console::Console as _;
use crate::error::{self, Error, exit};
use cli::Command;
use settings::{Env, Settings};

/// Why a command stopped: the library's error, or a usage error — flags that do not make
/// sense together — which only the command line makes.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Error(#[from] Error),
}

impl Failure {
    /// The exit code: 2 for a usage error, else the library's mapping.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => exit::USAGE,
            Failure::Error(e) => e.exit_code(),
        }
    }

    /// diff and drift answer 0 same, 1 different: every failure is 2 there, except a
    /// closed stdout (a quiet 0).
    fn in_diff(self) -> i32 {
        match self {
            Failure::Error(Error::BrokenPipe) => exit::OK,
            _ => exit::diff::ERROR,
        }
    }
}

/// The result of a command.
pub type Result<T> = std::result::Result<T, Failure>;

/// Parses the process arguments, runs the command and returns the exit code.
pub fn main() -> i32 {
    use clap::Parser;
    // `COMPLETE=SHELL clinv …`: the shell asks for completions (before anything prints).
    if let Some(code) = complete::respond() {
        return code;
    }
    let cli = match cli::Cli::try_parse().and_then(cluster_flags_first) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    // Without the handlers a signal still ends the process (the default action); the
    // store's atomic writes keep that safe, only the message is lost.
    let _ = crate::util::signals::install(interrupted);
    run(cli)
}

/// `--kubeconfig`/`--context` given before the command name go to the command's own
/// (which win); a command that never talks to a cluster refuses them, as it does after
/// its name.
fn cluster_flags_first(mut cli: cli::Cli) -> std::result::Result<cli::Cli, clap::Error> {
    use clap::CommandFactory;
    let (kubeconfig, context) = (cli.kubeconfig.take(), cli.context.take());
    if kubeconfig.is_none() && context.is_none() {
        return Ok(cli);
    }
    let Some(cluster) = cli.command.cluster_mut() else {
        let flag = if kubeconfig.is_some() {
            "--kubeconfig"
        } else {
            "--context"
        };
        return Err(cli::Cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "{flag}: clinv {} never talks to a cluster",
                name(&cli.command)
            ),
        ));
    };
    cluster.kubeconfig = cluster.kubeconfig.take().or(kubeconfig);
    cluster.context = cluster.context.take().or(context);
    Ok(cli)
}

/// clap's answer for a command line it could not parse: help and version on stdout
/// (exit 0); a usage error in clinv's own style — `[error] …` then clap's usage lines —
/// with exit 2.
fn usage_error(e: &clap::Error) -> i32 {
    if !e.use_stderr() {
        let _ = e.print();
        return error::exit::OK;
    }
    let env = settings::Env::from_process();
    let printer = output::Printer::new(
        output::ColorChoice::Auto,
        env.no_color,
        output::Verbosity::Normal,
    );
    if let Some(message) = cli::unsupported_format(e) {
        printer.error(message);
        return error::exit::USAGE;
    }
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    printer.error(first);
    let rest = rest.trim_end();
    if !rest.is_empty() {
        printer.raw(rest);
    }
    error::exit::USAGE
}

/// Said on stderr when SIGINT or SIGTERM ends a command (at a safe point).
fn interrupted(signal: i32) {
    output::interrupted(crate::util::signals::name(signal));
}

/// Runs a parsed command line and returns the process exit code.
fn run(cli: cli::Cli) -> i32 {
    let settings = Settings::new(cli.global, Env::from_process());
    // A wait over a second shows a progress line on a terminal (issue #16); the agent's
    // loop and the instant commands show none.
    let _progress = match &cli.command {
        Command::Agent(args) if !args.once => None,
        Command::Render(_)
        | Command::Crd(_)
        | Command::Completions { .. }
        | Command::Version(_) => None,
        other => Some(settings.printer.progress(&format!("clinv {}", name(other)))),
    };
    // A bad CLINV_LOCK_TIMEOUT stops a command that may take a lock before it does
    // anything: an online publish would otherwise apply, then fail to record.
    let instant = matches!(
        cli.command,
        Command::Render(_) | Command::Crd(_) | Command::Completions { .. } | Command::Version(_)
    );
    let result = match crate::store::lock_timeout() {
        Err(err) if !instant => Err(err.into()),
        _ => dispatch(&settings, &cli.command),
    };
    commands::say_deploy_domains(&settings);
    // `fleet --against` compares two selections: 1 means "they differ", as for diff.
    let diff_like = match &cli.command {
        Command::Diff(_) | Command::Drift(_) => true,
        Command::Fleet(args) => !args.against.is_empty(),
        _ => false,
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if !matches!(err, Failure::Error(Error::BrokenPipe)) {
                settings.printer.error(&error::chain(&err));
            }
            if diff_like {
                err.in_diff()
            } else {
                err.exit_code()
            }
        }
    }
}

/// Runs the command; its exit code, or why it stopped.
fn dispatch(settings: &Settings, command: &Command) -> Result<i32> {
    match command {
        Command::Render(args) => commands::render::run(settings, args),
        Command::Crd(args) => commands::crd::run(settings, args),
        Command::Addons(args) => commands::addons::run(settings, args),
        Command::Publish(args) => commands::publish::run(settings, args).map(|o| o.exit_code()),
        Command::Status(args) => commands::status::run(settings, args).map(|o| o.exit_code()),
        Command::Replay(args) => commands::replay::run(settings, args).map(|o| o.exit_code()),
        Command::Snapshots(args) => commands::snapshots::run(settings, args),
        #[cfg(feature = "gitops")]
        Command::Commit(args) => commands::commit::run(settings, args),
        #[cfg(feature = "gitops")]
        Command::Push(args) => commands::push::run(settings, args),
        Command::Index(args) => commands::index::run(settings, args),
        Command::Updates(args) => commands::updates::run(settings, args),
        Command::Agent(args) => commands::agent::run(settings, args).map(|o| o.exit_code()),
        Command::Diff(args) => commands::diff::run(settings, args),
        Command::Log(args) => commands::log::run(settings, args),
        Command::Fleet(args) => commands::fleet::run(settings, args),
        Command::Report(args) => commands::report_cmd::run(settings, args),
        // Like diff: 1 means "different", so every error is 2 ("unknown").
        Command::Drift(args) => commands::drift::run(settings, args).map(|o| o.exit_code()),
        Command::Completions {
            shell,
            static_script,
            ..
        } => completions(settings, *shell, *static_script),
        Command::Version(args) => commands::version::run(settings, args),
    }
}

/// The command's name, as typed.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Render(_) => "render",
        Command::Crd(_) => "crd",
        Command::Addons(_) => "addons",
        Command::Publish(_) => "publish",
        Command::Status(_) => "status",
        Command::Replay(_) => "replay",
        Command::Snapshots(_) => "snapshots",
        #[cfg(feature = "gitops")]
        Command::Commit(_) => "commit",
        #[cfg(feature = "gitops")]
        Command::Push(_) => "push",
        Command::Index(_) => "index",
        Command::Updates(_) => "updates",
        Command::Agent(_) => "agent",
        Command::Diff(_) => "diff",
        Command::Log(_) => "log",
        Command::Fleet(_) => "fleet",
        Command::Report(_) => "report",
        Command::Drift(_) => "drift",
        Command::Completions { .. } => "completions",
        Command::Version(_) => "version",
    }
}

/// The dynamic registration script (as `COMPLETE=SHELL clinv` prints it), or with
/// `--static` clap's self-contained one.
fn completions(
    settings: &Settings,
    shell: clap_complete::Shell,
    static_script: bool,
) -> Result<i32> {
    use clap::{CommandFactory, ValueEnum};
    let buf = if static_script {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cli::Cli::command(), "clinv", &mut buf);
        buf
    } else {
        let name = shell
            .to_possible_value()
            .map_or_else(|| shell.to_string(), |v| v.get_name().to_string());
        complete::registration(&name, &settings.cwd)
            .map_err(|e| Failure::Usage(format!("clinv completions: {e}")))?
    };
    settings.printer.data(&String::from_utf8_lossy(&buf))?;
    Ok(exit::OK)
}
