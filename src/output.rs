//! The only place that prints. Data goes to stdout; `[warn]`, `[error]`, `[info]` and
//! `[debug]` lines go to stderr, coloured only on a colour-capable terminal.
//!
//! Message text is sanitised: control characters from file contents (a key such as
//! `"\e[2J"`) are escaped, so a hostile project cannot drive the user's terminal.

use crate::addons::Row;
use crate::error::{Error, Result};
use std::io::{self, IsTerminal, Write};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How chatty stderr is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    Quiet,
    Normal,
    Debug,
}

/// Prints data and messages.
#[derive(Debug)]
pub struct Printer {
    color: bool,
    verbosity: Verbosity,
}

#[derive(Clone, Copy)]
enum Level {
    Error,
    Warn,
    Info,
    Debug,
}

impl Printer {
    /// `no_color` is `NO_COLOR` being set and non-empty.
    pub fn new(choice: ColorChoice, no_color: bool, verbosity: Verbosity) -> Printer {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && io::stderr().is_terminal(),
        };
        Printer { color, verbosity }
    }

    /// Writes data to stdout. A closed pipe (`clinv render | head`) ends the command
    /// quietly.
    ///
    /// # Errors
    /// [`Error::BrokenPipe`] or any other write error.
    pub fn data(&self, text: &str) -> Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| {
                if e.kind() == io::ErrorKind::BrokenPipe {
                    Error::BrokenPipe
                } else {
                    Error::io("<stdout>", e)
                }
            })
    }

    pub fn error(&self, message: &str) {
        self.line(Level::Error, message);
    }

    pub fn warn(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            self.line(Level::Warn, message);
        }
    }

    pub fn info(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            self.line(Level::Info, message);
        }
    }

    pub fn debug(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Debug, message);
        }
    }

    /// A line printed as is, without a tag (lok8s's `notice:` / `warning:` lines).
    pub fn raw(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            let _ = writeln!(io::stderr().lock(), "{}", sanitize(message));
        }
    }

    fn line(&self, level: Level, message: &str) {
        let (tag, code) = match level {
            Level::Error => ("[error]", "0;31"),
            Level::Warn => ("[warn]", "0;33"),
            Level::Info => ("[info]", "0;36"),
            Level::Debug => ("[debug]", "0;32"),
        };
        let mut err = io::stderr().lock();
        for (i, text) in sanitize(message).lines().enumerate() {
            let _ = if i > 0 {
                writeln!(err, "  {text}")
            } else if self.color {
                writeln!(err, "\x1b[{code}m{tag}\x1b[0m {text}")
            } else {
                writeln!(err, "{tag} {text}")
            };
        }
    }
}

/// Escapes control characters other than newline and tab.
pub fn sanitize(message: &str) -> String {
    if !message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return message.to_string();
    }
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Left-aligns `text` in `width` characters (lok8s's `%-Ns`; longer text is not cut).
fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// The `lo addons --detail` table (spec §9).
pub fn addons_table(domain: &str, driver: &str, rows: &[Row]) -> String {
    let line = |cells: [&str; 5]| {
        format!(
            "{}  {}  {}  {}  {}\n",
            pad(cells[0], 24),
            pad(cells[1], 14),
            pad(cells[2], 8),
            pad(cells[3], 10),
            cells[4]
        )
    };
    let mut out = format!("Addons deployed by {domain} (kind={driver})\n\n");
    if rows.is_empty() {
        out.push_str("  (spec.bootstrap is empty — this cluster deploys no addons)\n");
    } else {
        out.push_str(&line(["NAME", "CATEGORY", "TYPE", "VERSION", "CONFIGURE"]));
        out.push_str(&line(["----", "--------", "----", "-------", "---------"]));
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        for r in rows {
            out.push_str(&line([
                &r.name,
                &dash(&r.category),
                &r.kind,
                &dash(&r.version),
                &r.configure,
            ]));
        }
    }
    out.push_str("\nConfigure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(sanitize("plain — text"), "plain — text");
    }

    #[test]
    fn padding_counts_characters() {
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad("äö", 3), "äö ");
        assert_eq!(pad("long", 2), "long");
    }
}
