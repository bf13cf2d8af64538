//! The command-line application: argument parsing ([`cli`]), settings resolved once
//! from the arguments and the environment ([`settings`]), the one printer ([`output`]),
//! and one thin function per command.

pub mod cli;
mod commands;
pub mod output;
pub mod settings;
pub mod table;

use crate::error;

/// Parses the process arguments, runs the command and returns the exit code.
pub fn main() -> i32 {
    use clap::Parser;
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (2);
            // an unsupported -o value is worded like clinv's own errors.
            if let Some(message) = cli::unsupported_format(&e) {
                let env = settings::Env::from_process();
                let printer = output::Printer::new(
                    output::ColorChoice::Auto,
                    env.no_color,
                    output::Verbosity::Normal,
                );
                printer.error(message);
                return error::exit::USAGE;
            }
            let _ = e.print();
            return if e.use_stderr() {
                error::exit::USAGE
            } else {
                error::exit::OK
            };
        }
    };
    // Without the handlers a signal still ends the process (the default action); the
    // store's atomic writes keep that safe, only the message is lost.
    let _ = crate::util::signals::install(interrupted);
    commands::run(cli)
}

/// Said on stderr when SIGINT or SIGTERM ends a command (at a safe point).
fn interrupted(signal: i32) {
    eprintln!(
        "[error] interrupted by {}: stopped at a safe point, nothing is half-written",
        crate::util::signals::name(signal)
    );
}
