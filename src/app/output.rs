//! The only place that prints. Data goes to stdout; `[warn]`, `[error]`, `[info]` and
//! `[debug]` lines go to stderr, coloured only on a colour-capable terminal.
//!
//! Message text is sanitised: control characters from file contents (a key such as
//! `"\e[2J"`) are escaped, so a hostile project cannot drive the user's terminal.
#![allow(clippy::disallowed_methods, clippy::print_stderr)] // the printer

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

    /// The width tables fit: `COLUMNS` when set, else the terminal's when stdout is
    /// one, else `None` — no limit: a pipe or a file gets whole lines, as kubectl
    /// writes them, so `grep` and `awk` see one row a line.
    pub fn width(&self) -> Option<usize> {
        self.columns.or_else(|| {
            let out = io::stdout();
            if !out.is_terminal() {
                return None;
            }
            terminal_size::terminal_size_of(&out).map(|(w, _)| usize::from(w.0))
        })
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

    /// Whether data written with [`Printer::data`] may carry ANSI colours: `--color
    /// always`, or `auto` with stdout a terminal and no `NO_COLOR`.
    pub fn color_stdout(&self) -> bool {
        self.color_stdout
    }

    /// Whether stdout is a terminal (a person reading, not a pipe or a file).
    pub fn stdout_terminal(&self) -> bool {
        io::stdout().is_terminal()
    }

    /// Writes data to stdout. A closed pipe (`clinv render | head`) ends the command
    /// quietly.
    ///
    /// # Errors
    /// [`Error::BrokenPipe`] or any other write error.
    pub fn data(&self, text: &str) -> Result<()> {
        clear_progress();
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(stdout_error)
    }

    /// Writes data to stdout as `write` produces it (buffered), for output too long to
    /// hold whole. A closed pipe ends the command quietly, as for [`Printer::data`].
    ///
    /// # Errors
    /// [`Error::BrokenPipe`], any other write error, or what `write` returns.
    pub fn data_with(&self, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        let mut out = io::BufWriter::with_capacity(256 << 10, io::stdout().lock());
        write(&mut out)?;
        out.flush().map_err(stdout_error)
    }

    /// Writes a JSON or YAML list to stdout element by element, as `fill` hands them to
    /// the [`Seq`]: the bytes the whole document would have (`render::to_json` of the
    /// list, or its YAML), without ever holding it — so a listing of any length prints
    /// in the memory of one element.
    ///
    /// # Errors
    /// What `fill` returns, an element that does not serialise, or a write error.
    pub fn seq(
        &self,
        format: SeqFormat,
        fill: impl FnOnce(&mut Seq<'_>) -> Result<()>,
    ) -> Result<()> {
        clear_progress();
        self.data_with(|out| {
            let mut seq = Seq {
                out,
                format,
                count: 0,
            };
            fill(&mut seq)?;
            seq.end()
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

    /// A `[warn]` that `-q` does not hide: a delivery the user asked for did not happen
    /// for a reason they must see (clock skew, a GitOps-managed object).
    pub fn alert(&self, message: &str) {
        self.line(Level::Warn, message);
    }

    pub fn info(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            self.line(Level::Info, message);
        }
    }

    /// How a read command got its answer (which domain, which source), when that does
    /// not change the answer: shown with `-v` only, so a read command's stderr stays quiet.
    pub fn detail(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Info, message);
        }
    }

    pub fn debug(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Debug, message);
        }
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
                crate::util::redact::urls_in(json_line)
            );
        }
    }

    /// A line printed as is, without a tag (lok8s's `notice:` / `warning:` lines).
    pub fn raw(&self, message: &str) {
        if self.verbosity != Verbosity::Quiet {
            let _ = writeln!(
                io::stderr().lock(),
                "{}",
                redact::escape_controls(&crate::util::redact::urls_in(message))
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
        for (i, text) in redact::escape_controls(&crate::util::redact::urls_in(message))
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

/// The document format of [`Printer::seq`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqFormat {
    Json,
    Yaml,
}

/// A list being written by [`Printer::seq`]: one element at a time.
pub struct Seq<'a> {
    out: &'a mut dyn Write,
    format: SeqFormat,
    count: usize,
}

impl Seq<'_> {
    /// Writes the next element. JSON: its pretty form indented one level (every newline
    /// of pretty JSON is structural: a newline inside a string is `\n`), after `[` or
    /// `,`; YAML: the one-element block sequence of it (a top-level block sequence is its
    /// elements' sequences, one after another).
    ///
    /// # Errors
    /// The element does not serialise, or stdout cannot be written.
    pub fn item<T: serde::Serialize>(&mut self, item: &T) -> Result<()> {
        let text = match self.format {
            SeqFormat::Json => {
                let one = crate::inventory::render::to_json(item)?;
                let mut text = String::with_capacity(one.len() + 64);
                text.push_str(if self.count == 0 { "[\n" } else { ",\n" });
                for (i, line) in one.trim_end_matches('\n').lines().enumerate() {
                    if i > 0 {
                        text.push('\n');
                    }
                    text.push_str("  ");
                    text.push_str(line);
                }
                text
            }
            SeqFormat::Yaml => {
                let value = serde_json::to_value(item).map_err(|e| Error::encode("YAML", e))?;
                crate::yaml::emit::to_string(&serde_json::Value::Array(vec![value]))
            }
        };
        self.count += 1;
        self.out.write_all(text.as_bytes()).map_err(stdout_error)
    }

    fn end(self) -> Result<()> {
        let text = match (self.format, self.count) {
            (SeqFormat::Json, 0) => "[]\n".to_string(),
            (SeqFormat::Json, _) => "\n]\n".to_string(),
            (SeqFormat::Yaml, 0) => crate::yaml::emit::to_string(&serde_json::Value::Array(vec![])),
            (SeqFormat::Yaml, _) => String::new(),
        };
        self.out.write_all(text.as_bytes()).map_err(stdout_error)
    }
}

/// `-o jsonpath=TEMPLATE`: the template applied to `json`, the command's `-o json`
/// document (the very text `-o json` prints, read back), as kubectl applies it to the
/// object.
///
/// # Errors
/// [`Error::JsonPath`] naming the template and the missing field.
/// `-o yaml` of a table command: its `-o json` document, as YAML.
///
/// # Errors
/// The document is not JSON (a bug: every caller serialised it).
pub fn yaml(json: &str) -> Result<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::encode("JSON", e))?;
    Ok(crate::yaml::emit::to_string(&doc))
}

pub fn jsonpath(
    template: &crate::app::jsonpath::Template,
    json: &str,
    allow_missing: bool,
) -> Result<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::encode("JSON", e))?;
    template
        .render(&doc, allow_missing)
        .map_err(|message| Error::JsonPath {
            template: template.source().to_string(),
            message: message.to_string(),
        })
}

/// Said on stderr when SIGINT or SIGTERM ends a command (at a safe point), from the
/// signal thread: no printer there.
pub fn interrupted(signal: &str) {
    eprintln!("[error] interrupted by {signal}: stopped at a safe point, nothing is half-written");
}

/// An error writing stdout: a closed pipe ends the command quietly.
/// An error writing stdout: a closed pipe ends the command quietly.
pub fn stdout_error(e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Error::BrokenPipe
    } else {
        Error::io("<stdout>", e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`Seq`] writes for `items`.
    fn streamed(format: SeqFormat, items: &[serde_json::Value]) -> String {
        let mut out = Vec::new();
        let mut seq = Seq {
            out: &mut out,
            format,
            count: 0,
        };
        for item in items {
            seq.item(item).unwrap();
        }
        seq.end().unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A streamed list is byte for byte the whole document: empty, one element, several,
    /// nested values, strings with newlines, U+2028 and YAML's special characters.
    #[test]
    fn a_streamed_list_is_the_whole_document() {
        let lists = [
            serde_json::json!([]),
            serde_json::json!([{"a": 1}]),
            serde_json::json!([
                {"id": "a", "nested": {"list": [1, 2, {"x": null}], "empty": {}, "none": []}},
                {"text": "line\nnext \u{2028} - item: #no", "n": -1.5, "t": true},
                "plain",
                [1, [2, 3]],
                {"key: colon": "'quoted'", "multi": "a\nb\n"}
            ]),
        ];
        for list in lists {
            let items = list.as_array().unwrap();
            assert_eq!(
                streamed(SeqFormat::Json, items),
                crate::inventory::render::to_json(&list).unwrap()
            );
            assert_eq!(
                streamed(SeqFormat::Yaml, items),
                crate::yaml::emit::to_string(&list)
            );
        }
    }
}
