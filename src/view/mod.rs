//! Presentation: what each command shows, one file per view, and the report formats of
//! diffs and audit trails ([`report`]).
//!
//! A renderer turns data into text; a command's `say` asks the flow below for its answer
//! and says it through the [`crate::console::Console`] it is given (the terminal's is
//! `app::output::Printer`), so the command line keeps only its arguments, the one call
//! and the exit code. Values come from files and live objects, so every view neutralises
//! them for its format (control characters escaped; Markdown and HTML escaped).

pub mod addons;
#[cfg(feature = "gitops")]
pub mod commit;
pub mod diff;
pub mod drift;
pub mod fleet;
pub mod fleet_addon_log;
pub mod fleet_answer;
pub mod fleet_compare;
pub mod fleet_html;
pub mod format;
pub mod index;
pub mod jsonpath;
pub mod log;
pub mod metrics;
pub mod publish;
#[cfg(feature = "gitops")]
pub mod push;
pub mod replay;
pub mod report;
pub mod report_page;
pub mod results;
pub mod seq;
pub mod snapshots;
pub mod status;
pub mod table;
pub mod updates;
pub mod version;
pub mod watch;

use crate::util::redact;

/// How a table prints: `-o wide` adds columns, `--no-headers` leaves out the header.
///
/// `--no-headers` also leaves out the addons view's title and closing hint; `width` is
/// the room it has ([`crate::app::output::Printer::width`]: `COLUMNS`, the terminal's,
/// `None` in a pipe).
#[derive(Debug, Clone, Copy, Default)]
pub struct TableStyle {
    pub wide: bool,
    pub no_headers: bool,
    pub width: Option<usize>,
}

/// One name per line (`-o name`), escaped like a table cell.
pub fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("{}\n", redact::escape_line(n)))
        .collect()
}
