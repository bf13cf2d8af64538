//! The only place that prints. Data goes to stdout; `[warn]`, `[error]`, `[info]` and
//! `[debug]` lines go to stderr, coloured only on a colour-capable terminal.
//!
//! Message text is sanitised: control characters from file contents (a key such as
//! `"\e[2J"`) are escaped, so a hostile project cannot drive the user's terminal.
#![allow(clippy::disallowed_methods, clippy::print_stderr)] // the printer

use crate::console::Console;
use crate::error::{Error, Result};
use crate::util::redact;
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
    /// `-v` or `DEBUG`: also how a read command got its answer, and debug lines.
    Debug,
}

/// Prints data and messages.
#[derive(Debug)]
pub struct Printer {
    /// Colour on stderr (the tags).
    color: bool,
    /// Colour on stdout (reports such as `clinv diff`); decided separately because
    /// `clinv diff | less` keeps a terminal on stderr only.
    color_stdout: bool,
    verbosity: Verbosity,
    /// stderr is a terminal: a wait may show a progress line there (never in a pipe or
    /// a log file).
    stderr_terminal: bool,
    /// `COLUMNS`, when set: the width tables fit (see [`Printer::width`]).
    columns: Option<usize>,
}

/// Whether a progress line is on the terminal now: every print erases it first (the
/// ticker draws it again on its next tick), so messages never run into it.
static PROGRESS_SHOWN: std::sync::Mutex<bool> = std::sync::Mutex::new(false);

fn clear_progress() {
    let mut shown = PROGRESS_SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    if *shown {
        let _ = write!(io::stderr().lock(), "\r\x1b[K");
        *shown = false;
    }
}

/// The guard of [`Printer::progress`]: dropping it stops and erases the line.
pub struct Progress(Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>);

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some((stop, ticker)) = self.0.take() {
            let _ = stop.send(());
            let _ = ticker.join();
        }
    }
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
        let decide = |terminal: bool| match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && terminal,
        };
        let stderr_terminal = io::stderr().is_terminal();
        Printer {
            color: decide(stderr_terminal),
            color_stdout: decide(io::stdout().is_terminal()),
            verbosity,
            stderr_terminal,
            columns: None,
        }
    }

    /// `COLUMNS` (from [`crate::app::settings::Env`]), which [`Printer::width`] prefers.
    pub fn columns(mut self, columns: Option<usize>) -> Printer {
        self.columns = columns;
        self
    }

    /// A one-line progress indicator on a terminal's stderr for a wait that lasts over a
    /// second (`⠙ publish: waiting for the cluster… 3s`), erased when the guard drops —
    /// before anything else is printed. Nothing at all when stderr is not a terminal or
    /// with `-q`.
    pub fn progress(&self, what: &str) -> Progress {
        if !self.stderr_terminal || self.verbosity == Verbosity::Quiet {
            return Progress(None);
        }
        let what = redact::escape_line(what);
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let ticker = std::thread::spawn(move || {
            const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
            let start = std::time::Instant::now();
            let tick = std::time::Duration::from_millis(100);
            if stopped.recv_timeout(std::time::Duration::from_secs(1))
                != Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                return;
            }
            let mut frame = 0;
            loop {
                {
                    let mut shown = PROGRESS_SHOWN.lock().unwrap_or_else(|e| e.into_inner());
                    let _ = write!(
                        io::stderr().lock(),
                        "\r\x1b[K{} {what}… {}s",
                        FRAMES[frame % FRAMES.len()],
                        start.elapsed().as_secs()
                    );
                    *shown = true;
                }
                frame += 1;
                if stopped.recv_timeout(tick) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    clear_progress();
                    return;
                }
            }
        });
        Progress(Some((stop, ticker)))
    }

    /// Writes data to stdout as `write` produces it (buffered), for output too long to
    /// hold whole. A closed pipe ends the command quietly, as for [`Printer::data`].
    ///
    /// # Errors
    /// [`Error::BrokenPipe`], any other write error, or what `write` returns.
    pub fn data_with(&self, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        clear_progress();
        let mut out = io::BufWriter::with_capacity(256 << 10, io::stdout().lock());
        write(&mut out)?;
        out.flush().map_err(stdout_error)
    }

    /// A structured log line (one JSON object) of an event at `level`: on stderr,
    /// filtered by `-q`/`-v` as the tagged lines are.
    pub fn event(&self, level: crate::view::watch::Level, json_line: &str) {
        use crate::view::watch::Level;
        let shown = match level {
            Level::Error | Level::Warn => true,
            Level::Info => self.verbosity != Verbosity::Quiet,
            Level::Debug => self.verbosity == Verbosity::Debug,
        };
        if shown {
            let _ = writeln!(
                io::stderr().lock(),
                "{}",
                redact::credentials(&redact::urls_in(json_line))
            );
        }
    }

    fn line(&self, level: Level, message: &str) {
        let (tag, code) = match level {
            Level::Error => ("[error]", "0;31"),
            Level::Warn => ("[warn]", "0;33"),
            Level::Info => ("[info]", "0;36"),
            Level::Debug => ("[debug]", "0;32"),
        };
        clear_progress();
        let mut err = io::stderr().lock();
        for (i, text) in redact::escape_controls(&redact::credentials(&redact::urls_in(message)))
            .lines()
            .enumerate()
        {
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

/// The terminal as the library's [`Console`].
impl Console for Printer {
    fn error(&self, message: &str) {
        self.line(Level::Error, message);
    }

    fn warn(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            self.line(Level::Warn, message);
        }
    }

    /// A `[warn]` that `-q` does not hide: a delivery the user asked for did not happen
    /// for a reason they must see (clock skew, a GitOps-managed object).
    fn alert(&self, message: &str) {
        self.line(Level::Warn, message);
    }

    fn info(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            self.line(Level::Info, message);
        }
    }

    /// How a read command got its answer (which domain, which source), when that does
    /// not change the answer: shown with `-v` only, so a read command's stderr stays quiet.
    fn detail(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Info, message);
        }
    }

    fn debug(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Debug, message);
        }
    }

    /// A line printed as is, without a tag (lok8s's `notice:` / `warning:` lines).
    fn raw(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            let _ = writeln!(
                io::stderr().lock(),
                "{}",
                redact::escape_controls(&redact::credentials(&redact::urls_in(message)))
            );
        }
    }

    /// Writes data to stdout. A closed pipe (`clinv render | head`) ends the command
    /// quietly.
    ///
    /// # Errors
    /// [`Error::BrokenPipe`] or any other write error.
    fn data(&self, text: &str) -> Result<()> {
        clear_progress();
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(stdout_error)
    }

    fn write_data(&self, write: &mut dyn FnMut(&mut dyn Write) -> Result<()>) -> Result<()> {
        self.data_with(write)
    }

    /// The width tables fit: `COLUMNS` when set, else the terminal's when stdout is
    /// one, else `None` — no limit: a pipe or a file gets whole lines, as kubectl
    /// writes them, so `grep` and `awk` see one row a line.
    fn width(&self) -> Option<usize> {
        self.columns.or_else(|| {
            let out = io::stdout();
            if !out.is_terminal() {
                return None;
            }
            terminal_size::terminal_size_of(&out).map(|(w, _)| usize::from(w.0))
        })
    }

    /// Whether data written with [`Printer::data`] may carry ANSI colours: `--color
    /// always`, or `auto` with stdout a terminal and no `NO_COLOR`.
    fn color_stdout(&self) -> bool {
        self.color_stdout
    }

    /// Whether stdout is a terminal (a person reading, not a pipe or a file).
    fn stdout_terminal(&self) -> bool {
        io::stdout().is_terminal()
    }
}

/// Said on stderr when SIGINT or SIGTERM ends a command (at a safe point), from the
/// signal thread: no printer there.
pub fn interrupted(signal: &str) {
    eprintln!("[error] interrupted by {signal}: stopped at a safe point, nothing is half-written");
}

/// An error writing stdout: a closed pipe ends the command quietly.
pub fn stdout_error(e: io::Error) -> Error {
    Error::stdout(e)
}
