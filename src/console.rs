//! What a command says, and where: the one seam between the library and the terminal.
//!
//! The library's flows and views say their messages and write their data through a
//! [`Console`] they are given, as cargo's ops speak through its `Shell`; only the command
//! line's printer (`app::output::Printer`) implements it for the terminal, so no module
//! below `app` names stdout or stderr, and a unit test can read what was said
//! ([`Recorded`]).

use crate::error::Result;
use crate::util::notice::{Level, Notice};
use std::io::Write;

/// Where a command's data (stdout) and messages (stderr) go.
pub trait Console: Sync {
    /// An `[error]` line: always shown.
    fn error(&self, message: &str);
    /// A `[warn]` line (`-q` hides it).
    fn warn(&self, message: &str);
    /// A `[warn]` that `-q` does not hide: a delivery the user asked for did not happen
    /// for a reason they must see (clock skew, a GitOps-managed object).
    fn alert(&self, message: &str);
    /// An `[info]` line (`-q` hides it).
    fn info(&self, message: &str);
    /// How a read command got its answer, when that does not change it (`-v` only).
    fn detail(&self, message: &str);
    /// A `[debug]` line (`-v` only).
    fn debug(&self, message: &str);
    /// A line as is, without a tag (lok8s's `notice:` / `warning:` lines).
    fn raw(&self, message: &str);
    /// Writes data (stdout).
    ///
    /// # Errors
    /// [`crate::Error::BrokenPipe`] or any other write error.
    fn data(&self, text: &str) -> Result<()>;
    /// Writes data as `write` produces it, for output too long to hold whole; see
    /// [`Console::data_with`] for the `FnOnce` form.
    ///
    /// # Errors
    /// A write error, or what `write` returns.
    fn write_data(&self, write: &mut dyn FnMut(&mut dyn Write) -> Result<()>) -> Result<()>;
    /// The width tables fit; `None`: no limit (a pipe gets whole lines).
    fn width(&self) -> Option<usize>;
    /// Whether reports on stdout are coloured.
    fn color_stdout(&self) -> bool;
    /// Whether stdout is a terminal (a person reading, not a pipe or a file).
    fn stdout_terminal(&self) -> bool;
}

impl dyn Console + '_ {
    /// [`Console::write_data`] for a `write` that runs once.
    ///
    /// # Errors
    /// A write error, or what `write` returns.
    pub fn data_with(&self, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        let mut write = Some(write);
        self.write_data(&mut |out| match write.take() {
            Some(write) => write(out),
            None => Ok(()),
        })
    }

    /// The messages a library flow handed back, in order.
    pub fn notices(&self, notices: &[Notice]) {
        for n in notices {
            match n.level {
                Level::Error => self.error(&n.text),
                Level::Warn => self.warn(&n.text),
                Level::Info => self.info(&n.text),
                Level::Detail => self.detail(&n.text),
                Level::Debug => self.debug(&n.text),
            }
        }
    }
}

/// A console that keeps what was said: the data, and each message tagged as the
/// terminal would tag it (`[warn] …`; `alert` as `[warn]`, `detail` as `[info]`).
/// For unit tests of the code that speaks.
#[derive(Debug, Default)]
pub struct Recorded {
    said: std::sync::Mutex<(String, Vec<String>)>,
    /// What [`Console::width`] answers.
    pub width: Option<usize>,
}

impl Recorded {
    /// The data written so far.
    pub fn data(&self) -> String {
        self.lock().0.clone()
    }

    /// The messages said so far, one per line, tagged.
    pub fn messages(&self) -> Vec<String> {
        self.lock().1.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (String, Vec<String>)> {
        self.said
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn say(&self, tag: &str, message: &str) {
        self.lock().1.push(format!("{tag}{message}"));
    }
}

impl Console for Recorded {
    fn error(&self, message: &str) {
        self.say("[error] ", message);
    }
    fn warn(&self, message: &str) {
        self.say("[warn] ", message);
    }
    fn alert(&self, message: &str) {
        self.say("[warn] ", message);
    }
    fn info(&self, message: &str) {
        self.say("[info] ", message);
    }
    fn detail(&self, message: &str) {
        self.say("[info] ", message);
    }
    fn debug(&self, message: &str) {
        self.say("[debug] ", message);
    }
    fn raw(&self, message: &str) {
        self.say("", message);
    }
    fn data(&self, text: &str) -> Result<()> {
        self.lock().0.push_str(text);
        Ok(())
    }
    fn write_data(&self, write: &mut dyn FnMut(&mut dyn Write) -> Result<()>) -> Result<()> {
        let mut out = Vec::new();
        write(&mut out)?;
        self.lock().0.push_str(&String::from_utf8_lossy(&out));
        Ok(())
    }
    fn width(&self) -> Option<usize> {
        self.width
    }
    fn color_stdout(&self) -> bool {
        false
    }
    fn stdout_terminal(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data written at once and in pieces lands in order; notices keep their levels.
    #[test]
    fn a_recorded_console_keeps_what_was_said_in_order() {
        let recorded = Recorded::default();
        let console: &dyn Console = &recorded;
        console.data("a\n").unwrap();
        console
            .data_with(|out| out.write_all(b"b\n").map_err(|e| crate::Error::io("-", e)))
            .unwrap();
        console.notices(&[Notice::warn("w"), Notice::detail("d"), Notice::error("e")]);
        assert_eq!(recorded.data(), "a\nb\n");
        assert_eq!(recorded.messages(), ["[warn] w", "[info] d", "[error] e"]);
    }
}
