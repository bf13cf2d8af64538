//! The only place that prints. Data goes to stdout; `[warn]`, `[error]`, `[info]` and
//! `[debug]` lines go to stderr, coloured only on a colour-capable terminal.
//!
//! Message text is sanitised: control characters from file contents (a key such as
//! `"\e[2J"`) are escaped, so a hostile project cannot drive the user's terminal.
#![allow(clippy::disallowed_methods, clippy::print_stderr)] // the printer

use crate::app::table::Table;
use crate::error::{Error, Result};
use crate::project::addons::Row;
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
        }
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

    pub fn debug(&self, message: &str) {
        if self.verbosity == Verbosity::Debug {
            self.line(Level::Debug, message);
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

/// `-o jsonpath=TEMPLATE`: the template applied to `json`, the command's `-o json`
/// document (the very text `-o json` prints, read back), as kubectl applies it to the
/// object.
///
/// # Errors
/// [`Error::JsonPath`] naming the template and the missing field.
pub fn jsonpath(template: &crate::app::jsonpath::Template, json: &str) -> Result<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::encode("JSON", e))?;
    template.render(&doc).map_err(|message| Error::JsonPath {
        template: template.source().to_string(),
        message: message.to_string(),
    })
}

/// How a table prints: `-o wide` adds columns, `--no-headers` leaves out the header
/// (and the addons view's title and closing hint).
#[derive(Debug, Clone, Copy, Default)]
pub struct TableStyle {
    pub wide: bool,
    pub no_headers: bool,
}

/// One name per line (`-o name`), escaped like a table cell.
pub fn names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("{}\n", redact::escape_line(n)))
        .collect()
}

/// The `lo addons --detail` table (spec §9): lok8s's columns, each as wide as its widest
/// cell (long names stay aligned), no underline row; `wide` adds SOURCE.
pub fn addons_table(domain: &str, driver: &str, rows: &[Row], style: TableStyle) -> String {
    let mut out = String::new();
    if !style.no_headers {
        out.push_str(&format!("Addons deployed by {domain} (kind={driver})\n\n"));
    }
    if rows.is_empty() {
        if !style.no_headers {
            out.push_str("  (spec.bootstrap is empty — this cluster deploys no addons)\n");
        }
    } else {
        let mut header = vec!["NAME", "CATEGORY", "TYPE", "VERSION"];
        if style.wide {
            header.push("SOURCE");
        }
        header.push("CONFIGURE");
        let mut table = Table::new(&header).no_header(style.no_headers);
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        for r in rows {
            let mut cells = vec![
                r.name.clone(),
                dash(&r.category),
                r.kind.clone(),
                dash(&r.version),
            ];
            if style.wide {
                cells.push(r.source.as_str().to_string());
            }
            cells.push(r.configure.clone());
            table.row(&cells);
        }
        out.push_str(&table.render());
    }
    if !style.no_headers {
        out.push_str("\nConfigure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.\n");
    }
    out
}

/// The `updates` table: NAME, CURRENT, LATEST and a NOTE (`unordered` when the two
/// versions are not both SemVer, `pre-release` when LATEST is one); `wide` adds COMPARED
/// (`live`, `snapshot`, `rendered` or `file`: where CURRENT was read).
pub fn updates_table(
    updates: &[crate::status::updates::Update],
    compared: &str,
    style: TableStyle,
) -> String {
    if updates.is_empty() {
        return "no updates: every compared addon is at or above its version in the index.\n"
            .to_string();
    }
    let mut header = vec!["NAME", "CURRENT", "LATEST", "NOTE"];
    if style.wide {
        header.push("COMPARED");
    }
    let mut table = Table::new(&header).no_header(style.no_headers);
    for u in updates {
        let note = match (u.unordered, u.prerelease) {
            (true, _) => "unordered",
            (false, true) => "pre-release",
            _ => "",
        };
        let mut cells = vec![u.name.as_str(), &u.current, &u.latest, note];
        if style.wide {
            cells.push(compared);
        }
        table.row(&cells);
    }
    table.render()
}

/// The `updates -o json` document: `inventory` (`live`, `rendered` or `file`),
/// `indexGeneratedAt` (when the index has one), `updates` (`[]` when none).
///
/// # Errors
/// Serialisation failures (not expected).
pub fn updates_json(
    inventory: &str,
    index_generated_at: &str,
    updates: &[crate::status::updates::Update],
) -> Result<String> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Report<'a> {
        inventory: &'a str,
        #[serde(skip_serializing_if = "str::is_empty")]
        index_generated_at: &'a str,
        updates: &'a [crate::status::updates::Update],
    }
    crate::inventory::render::to_json(&Report {
        inventory,
        index_generated_at,
        updates,
    })
}

/// The `lo status` inventory block (spec §8) for a live object, followed by a blank line.
pub fn inventory_block(object: &serde_json::Value) -> String {
    let body = block_body(object).unwrap_or_else(|| "  (unreadable inventory)\n".to_string());
    format!("--- Inventory (ClusterInventory/cluster) ---\n{body}\n")
}

/// Where the inventory `status` shows comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusSource {
    /// The live object.
    Live,
    /// The newest stored snapshot `id`, recorded `at`; the cluster could not be read
    /// (`why`: the reason's name).
    Snapshot { id: String, at: String, why: String },
}

/// A time as recorded and how long ago it was: `3h ago (2026-…Z)`; `<unknown>` for an
/// age when the text is not an RFC 3339 time.
fn ago(at: &str, now: i64) -> String {
    let mut out = String::new();
    match crate::util::time::parse_rfc3339(at) {
        Some(t) => {
            crate::util::time::write_age(t.as_second(), now, &mut out);
            out.push_str(" ago");
        }
        None => out.push_str(crate::util::time::UNKNOWN_AGE),
    }
    format!("{out} ({})", redact::escape_line(at))
}

/// A string field of the inventory, by JSON pointer.
fn text_at<'a>(object: &'a serde_json::Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(serde_json::Value::as_str)
}

/// `status` text after the inventory block: where it comes from (on stdout, so a
/// reader of the output alone knows a snapshot from the live object), its ages, the
/// last apply and the queue. Ages are kubectl's, against `now` (seconds since the
/// epoch); the absolute times follow in parentheses.
pub fn status_section(
    domain: &str,
    source: &StatusSource,
    delivery: Option<&crate::ops::status::Delivery>,
    inventory: &serde_json::Value,
    now: i64,
) -> String {
    let e = |v: &str| redact::escape_line(v);
    let mut out = format!("--- Delivery ({}) ---\n", e(domain));
    match source {
        StatusSource::Live => {
            out.push_str("  source:       live (ClusterInventory/cluster)\n");
            if let Some(created) = text_at(inventory, "/metadata/creationTimestamp") {
                out.push_str(&format!("  created:      {}\n", ago(created, now)));
            }
        }
        StatusSource::Snapshot { id, at, why } => {
            out.push_str(&format!(
                "  source:       from snapshot {} (newest stored; the cluster could not be read: {})\n",
                e(id),
                e(why)
            ));
            out.push_str(&format!("  recorded:     {}\n", ago(at, now)));
        }
    }
    match text_at(inventory, "/spec/renderedAt") {
        Some(rendered) => out.push_str(&format!("  rendered:     {}\n", ago(rendered, now))),
        None => out.push_str("  rendered:     ?\n"),
    }
    let Some(d) = delivery else {
        out.push_str("  last applied: ? (the store could not be read)\n  queue:        ?\n");
        return out;
    };
    match &d.last_applied {
        Some((at, id)) => {
            let when = ago(at, now);
            // `2d ago (AT)` → `2d ago (AT, snapshot ID)`.
            let when = when.strip_suffix(')').unwrap_or(&when);
            out.push_str(&format!("  last applied: {when}, snapshot {})\n", e(id)));
        }
        None => out.push_str("  last applied: never\n"),
    }
    match (&d.oldest_pending_at, d.pending) {
        (Some(oldest), n) if n > 0 => {
            let mut age = String::new();
            match crate::util::time::parse_rfc3339(oldest) {
                Some(t) => {
                    crate::util::time::write_age(t.as_second(), now, &mut age);
                    age.push_str(" ago");
                }
                None => age.push_str(crate::util::time::UNKNOWN_AGE),
            }
            out.push_str(&format!("  queue:        {n} pending, oldest {age}\n"));
        }
        _ => out.push_str("  queue:        empty\n"),
    }
    out
}

/// `status -o json` (`schemaVersion` 2; version 1 had only `domain`, `source`,
/// `snapshot` and `inventory`). Times are absolute RFC 3339, as recorded: `recordedAt`
/// (of the snapshot shown, else null), `createdAt` (the live object's
/// creationTimestamp, else null), `renderedAt` (`spec.renderedAt`), `lastApplied`
/// (`{at, snapshot}` or null), `queue` (`{pending, oldestPendingAt}`; null when the store
/// could not be read).
///
/// # Errors
/// Serialisation failures (not expected).
pub fn status_json(
    domain: &str,
    source: &StatusSource,
    delivery: Option<&crate::ops::status::Delivery>,
    inventory: serde_json::Value,
) -> Result<String> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Applied<'a> {
        at: &'a str,
        snapshot: &'a str,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Queue<'a> {
        pending: usize,
        oldest_pending_at: Option<&'a str>,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Status<'a> {
        schema_version: u32,
        domain: &'a str,
        /// `live`, or `snapshot` (the cluster could not be read; `snapshot` is its id).
        source: &'a str,
        snapshot: Option<&'a str>,
        recorded_at: Option<&'a str>,
        created_at: Option<&'a str>,
        rendered_at: Option<&'a str>,
        last_applied: Option<Applied<'a>>,
        queue: Option<Queue<'a>>,
        inventory: &'a serde_json::Value,
    }
    let (name, snapshot, recorded_at) = match source {
        StatusSource::Live => ("live", None, None),
        StatusSource::Snapshot { id, at, .. } => ("snapshot", Some(id.as_str()), Some(at.as_str())),
    };
    crate::inventory::render::to_json(&Status {
        schema_version: 2,
        domain,
        source: name,
        snapshot,
        recorded_at,
        created_at: match source {
            StatusSource::Live => text_at(&inventory, "/metadata/creationTimestamp"),
            StatusSource::Snapshot { .. } => None,
        },
        rendered_at: text_at(&inventory, "/spec/renderedAt"),
        last_applied: delivery.and_then(|d| {
            d.last_applied
                .as_ref()
                .map(|(at, id)| Applied { at, snapshot: id })
        }),
        queue: delivery.map(|d| Queue {
            pending: d.pending,
            oldest_pending_at: d.oldest_pending_at.as_deref(),
        }),
        inventory: &inventory,
    })
}

/// `None` when a field has a type lo's template cannot print.
fn block_body(object: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let truthy = |v: Option<&Value>| {
        v.filter(|v| !v.is_null() && **v != Value::Bool(false))
            .cloned()
    };
    // Every value comes from the live object or the store: one line each, control
    // characters escaped.
    let show = |v: &Value| match v {
        Value::String(s) => redact::escape_line(s),
        other => redact::escape_line(&other.to_string()),
    };
    let text = |v: Option<Value>| -> Option<Option<String>> {
        match v {
            None => Some(None),
            Some(Value::String(s)) => Some(Some(redact::escape_line(&s))),
            Some(_) => None,
        }
    };
    if !object.is_object() {
        return None;
    }
    let spec = match truthy(object.get("spec")) {
        None => Value::Object(Default::default()),
        Some(s) if s.is_object() => s,
        Some(_) => return None,
    };
    let field = |k: &str| truthy(spec.get(k));
    let or_q = |v: Option<Value>| v.map(|v| show(&v)).unwrap_or_else(|| "?".into());
    let mut out = format!("  lok8s:      {}\n", or_q(field("lok8sVersion")));
    let provider = text(field("provider"))?
        .map(|p| format!(" · {p}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  driver:     {}{provider}\n",
        or_q(field("kind"))
    ));
    if let Some(k) = field("kubernetesVersion") {
        out.push_str(&format!("  kubernetes: {}\n", show(&k)));
    }
    let hash: String = text(field("specHash"))?
        .map(|h| h.chars().take(12).collect())
        .unwrap_or_else(|| "?".into());
    out.push_str(&format!("  specHash:   {hash}…\n"));
    out.push_str(&format!("  renderedAt: {}\n", or_q(field("renderedAt"))));
    let addons = match field("addons") {
        None => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => return None,
    };
    out.push_str(&format!("  addons:     {}\n", addons.len()));
    for addon in &addons {
        let Value::Object(a) = addon else { return None };
        let name = a.get("name").map(show).unwrap_or_else(|| "null".into());
        let version = text(truthy(a.get("chartVersion")))?
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let category = text(truthy(a.get("category")))?
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        out.push_str(&format!("    {name}{version}{category}\n"));
    }
    if let Some(at) = truthy(object.pointer("/status/lastReported")) {
        out.push_str(&format!("  agent:      last reported {}\n", show(&at)));
    }
    Some(out)
}

/// `snapshots list`: one row per snapshot, newest first, with kubectl's AGE of the
/// recorded time (`now` in seconds since the epoch, read once for the whole table);
/// `wide` adds the absolute RECORDED and RENDERED times, the first 12 characters of
/// SPECHASH, LOK8S and TOOL. Takes the snapshots so they can go before the table renders
/// (it holds its own copy of every cell).
pub fn snapshots_table(rows: Vec<crate::store::Snapshot>, now: i64, style: TableStyle) -> String {
    let mut header = vec!["DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE"];
    if style.wide {
        header.extend(["RECORDED", "RENDERED", "SPECHASH", "LOK8S", "TOOL"]);
    }
    let mut table = Table::new(&header).no_header(style.no_headers);
    let mut age = String::new();
    for s in &rows {
        let reason = s.reason.map(|r| r.as_str()).unwrap_or("-");
        let target = s
            .record
            .target
            .as_ref()
            .map(|t| t.server.as_str())
            .unwrap_or("-");
        age.clear();
        match crate::util::time::parse_rfc3339(&s.record.at) {
            Some(t) => crate::util::time::write_age(t.as_second(), now, &mut age),
            None => age.push_str(crate::util::time::UNKNOWN_AGE),
        }
        let mut cells = vec![
            s.record.domain.as_str(),
            &s.record.id,
            s.state.as_str(),
            reason,
            target,
            &age,
        ];
        let hash: String = s.record.spec_hash.chars().take(12).collect();
        if style.wide {
            cells.extend([
                s.record.at.as_str(),
                &s.record.rendered_at,
                hash.as_str(),
                &s.record.lok8s_version,
                &s.record.tool,
            ]);
        }
        table.row(&cells);
    }
    drop(rows);
    table.render()
}

/// An error writing stdout: a closed pipe ends the command quietly.
/// Said on stderr when SIGINT or SIGTERM ends a command (at a safe point), from the
/// signal thread: no printer there.
pub fn interrupted(signal: &str) {
    eprintln!("[error] interrupted by {signal}: stopped at a safe point, nothing is half-written");
}

pub fn stdout_error(e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Error::BrokenPipe
    } else {
        Error::io("<stdout>", e)
    }
}

/// `snapshots list -o name`: `DOMAIN/ID` per snapshot, streamed from the listings.
pub fn write_snapshot_names(
    listings: &[crate::store::scan::Listing],
    out: &mut dyn Write,
) -> io::Result<()> {
    for listing in listings {
        for row in listing.rows() {
            writeln!(out, "{}/{}", row.domain(), &*row.id())?;
        }
    }
    Ok(())
}

/// [`snapshots_table`] of compact listings, written as it goes (a listing of a million
/// snapshots is not held as cells): the same bytes. The AGE of a row is computed from
/// its packed time (no parse) once per pass, into one reused buffer.
///
/// # Errors
/// Write errors.
pub fn write_snapshots_table(
    listings: &[crate::store::scan::Listing],
    now: i64,
    no_headers: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    use std::borrow::Cow;
    use unicode_width::UnicodeWidthStr;
    const HEADER: [&str; 6] = ["DOMAIN", "ID", "STATE", "REASON", "TARGET", "AGE"];
    let mut age = String::new();
    let mut cells = |row: &crate::store::scan::RowRef<'_>, each: &mut dyn FnMut(usize, &str)| {
        each(0, row.domain());
        each(1, &row.id());
        each(2, row.state().as_str());
        each(3, row.reason().map(|r| r.as_str()).unwrap_or("-"));
        each(4, row.target_server().unwrap_or("-"));
        age.clear();
        match row.at_second() {
            Some(then) => crate::util::time::write_age(then, now, &mut age),
            None => age.push_str(crate::util::time::UNKNOWN_AGE),
        }
        each(5, &age);
    };
    let width = |text: &str| -> usize {
        match crate::app::table::cell_text(text) {
            Cow::Borrowed(t) if t.is_ascii() => t.len(),
            c => c.width(),
        }
    };
    let mut widths = HEADER.map(width);
    for listing in listings {
        for row in listing.rows() {
            cells(&row, &mut |i, text| widths[i] = widths[i].max(width(text)));
        }
    }
    let mut line = String::new();
    let emit = |line: &mut String, out: &mut dyn Write| -> io::Result<()> {
        let trimmed = line.trim_end().len();
        line.truncate(trimmed);
        line.push('\n');
        out.write_all(line.as_bytes())?;
        line.clear();
        Ok(())
    };
    let push = |line: &mut String, i: usize, text: &str| {
        let text = crate::app::table::cell_text(text);
        line.push_str(&text);
        if i + 1 < HEADER.len() {
            let pad = widths[i].saturating_sub(width(&text)) + 2;
            line.extend(std::iter::repeat_n(' ', pad));
        }
    };
    if !no_headers {
        for (i, h) in HEADER.iter().enumerate() {
            push(&mut line, i, h);
        }
        emit(&mut line, out)?;
    }
    for listing in listings {
        for row in listing.rows() {
            cells(&row, &mut |i, text| push(&mut line, i, text));
            emit(&mut line, out)?;
        }
    }
    Ok(())
}

/// `snapshots show`: the `#` header above the inventory — metadata, both delivery
/// channels, and every state change.
pub fn snapshot_header(snap: &crate::store::Snapshot) -> String {
    // Every value comes from the journal, which a store writer controls: one line each.
    let e = |v: &str| redact::escape_line(v);
    let r = &snap.record;
    let mut out = format!(
        "# snapshot {}\n# domain:     {}\n# recorded:   {} by {}\n# state:      {}{}\n# specHash:   {}\n",
        e(&r.id),
        e(&r.domain),
        e(&r.at),
        e(&r.tool),
        snap.state.as_str(),
        snap.reason.map(|x| format!(" ({x})")).unwrap_or_default(),
        e(&r.spec_hash)
    );
    // Both delivery channels.
    out.push_str(&format!(
        "# cluster:    {}\n# git:        {}\n",
        snap.cluster_state
            .map_or("not queued (recorded for Git only)", |c| c.as_str()),
        match (&snap.commit, &snap.pushed) {
            (Some(c), Some(p)) => format!("committed {}, pushed to {}", e(c), e(p)),
            (Some(c), None) => format!("committed {}", e(c)),
            (None, _) => "not committed".to_string(),
        }
    ));
    if let Some(t) = &r.target {
        out.push_str(&format!(
            "# target:     {}{}\n",
            e(&t.server),
            t.context
                .as_ref()
                .map(|c| format!(" (context {})", e(c)))
                .unwrap_or_default()
        ));
    }
    for ev in &snap.events {
        out.push_str(&format!(
            "# {}  {} again (renderedAt {}, {}; same inventory, no new snapshot)\n",
            e(&ev.at),
            e(&ev.event),
            e(&ev.rendered_at),
            e(&ev.tool)
        ));
    }
    for h in &snap.history {
        let extra = [
            h.reason.map(|x| x.to_string()),
            h.by.as_ref().map(|b| format!("by {}", e(b))),
            h.commit.as_deref().map(e),
            h.pushed.as_ref().map(|p| format!("pushed to {}", e(p))),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        out.push_str(&format!(
            "# {}  {}{}\n",
            e(&h.at),
            h.state.as_str(),
            if extra.is_empty() {
                String::new()
            } else {
                format!(" ({extra})")
            }
        ));
    }
    out
}

/// `replay --dry-run`: what a replay of domain `d` would do.
pub fn replay_dry_run(
    d: &str,
    snapshot: &str,
    delivery: &crate::cluster::Delivery,
    older: usize,
) -> String {
    use crate::cluster::Delivery;
    let what = match delivery {
        Delivery::Applied(a) => format!("would apply snapshot {snapshot} ({})", a.cr),
        Delivery::Stale { live_rendered_at } => format!(
            "would skip snapshot {snapshot}: the live inventory is newer ({live_rendered_at})"
        ),
    };
    format!("{d}: {what}; {older} older pending snapshot(s) would be superseded\n")
}

/// What a replay of domain `d` delivered, and how many older snapshots it superseded.
pub fn replay_delivered(
    d: &str,
    snapshot: &str,
    server: &str,
    delivery: &crate::cluster::Delivery,
    superseded: usize,
) -> String {
    use crate::cluster::Delivery;
    let summary = match delivery {
        Delivery::Applied(a) => format!(
            "{d}: applied snapshot {snapshot} (clusterinventory/cluster {} → {server}, {} requests)",
            a.cr, a.requests
        ),
        Delivery::Stale { live_rendered_at } => format!(
            "{d}: snapshot {snapshot} not applied: {}; marked superseded",
            crate::delivery::stale_detail(live_rendered_at)
        ),
    };
    match superseded {
        0 => summary,
        n => format!("{summary}; {n} older pending snapshot(s) superseded"),
    }
}

/// `replay --all`: one row per domain — what happened, and to which snapshot or server.
pub fn replay_table(reports: &[crate::ops::replay::DomainReport]) -> String {
    use crate::cluster::Delivery;
    use crate::ops::replay::Replayed;
    let mut table = super::table::Table::new(&["DOMAIN", "RESULT", "DETAIL"]);
    for r in reports {
        let (result, detail) = match &r.report {
            Err(e) => (
                "error".to_string(),
                crate::error::chain(e)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            ),
            Ok(report) => match &report.outcome {
                Replayed::Nothing => ("nothing to replay".into(), "-".into()),
                Replayed::NotApplied { reason, queued, .. } => (
                    format!("queued ({reason})"),
                    format!("{queued} snapshot(s)"),
                ),
                Replayed::DryRun {
                    snapshot, delivery, ..
                } => match delivery {
                    Delivery::Applied(a) => (
                        "dry run".into(),
                        format!("would apply {snapshot} ({})", a.cr),
                    ),
                    Delivery::Stale { .. } => {
                        ("dry run".into(), format!("would supersede {snapshot}"))
                    }
                },
                Replayed::Delivered {
                    snapshot,
                    server,
                    delivery,
                    ..
                } => match delivery {
                    Delivery::Applied(a) => (
                        "applied".into(),
                        format!("{snapshot} ({}) → {server}", a.cr),
                    ),
                    Delivery::Stale { live_rendered_at } => (
                        "superseded".into(),
                        format!(
                            "{snapshot}: {}",
                            crate::delivery::stale_detail(live_rendered_at)
                        ),
                    ),
                },
            },
        };
        table.row(&[r.domain.as_str(), &result, &detail]);
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_block_matches_lo_status() {
        let v = serde_json::json!({
            "spec": {"lok8sVersion": "0.7.4", "kind": "kubeone", "provider": "hetzner", "kubernetesVersion": "v1.31.10",
                     "specHash": "3fb0c5e02a41aaaaaaaaaaaa", "renderedAt": "2026-07-06T10:12:03Z",
                     "addons": [{"name": "cilium", "chartVersion": "1.20.1", "category": "networking"}, {"name": "site-glue", "source": "target"}]},
            "status": {"lastReported": "2026-07-06T11:00:00Z"}
        });
        assert_eq!(
            inventory_block(&v),
            "--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      0.7.4\n  driver:     kubeone · hetzner\n  kubernetes: v1.31.10\n  specHash:   3fb0c5e02a41…\n  renderedAt: 2026-07-06T10:12:03Z\n  addons:     2\n    cilium 1.20.1 (networking)\n    site-glue\n  agent:      last reported 2026-07-06T11:00:00Z\n\n"
        );
        let hostile = serde_json::json!({"spec": {"lok8sVersion": "0.7\u{1b}[2J", "kind": "k\nforged: line",
            "addons": [{"name": "a\u{7}", "chartVersion": "1\n2"}]}});
        let block = inventory_block(&hostile);
        assert!(!block.contains(['\u{1b}', '\u{7}']), "{block}");
        assert!(!block.lines().any(|l| l.starts_with("forged")), "{block}");
        assert!(block.contains("    a\\u{7} 1\\n2\n"), "{block}");
        assert_eq!(
            inventory_block(&serde_json::json!({"spec": {}})),
            "--- Inventory (ClusterInventory/cluster) ---\n  lok8s:      ?\n  driver:     ?\n  specHash:   ?…\n  renderedAt: ?\n  addons:     0\n\n"
        );
    }

    #[test]
    fn status_block_edge_cases() {
        let body = |v: serde_json::Value| {
            let block = inventory_block(&v);
            block
                .lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join("\n")
                .trim_end()
                .to_string()
        };
        assert_eq!(body(serde_json::json!("text")), "  (unreadable inventory)");
        assert_eq!(
            body(serde_json::json!({"spec": {"provider": 5}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": {}}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": ["x"]}})),
            "  (unreadable inventory)"
        );
        assert_eq!(
            body(serde_json::json!({"spec": {"addons": [{"chartVersion": 1}]}})),
            "  (unreadable inventory)"
        );
        let b = body(
            serde_json::json!({"spec": {"lok8sVersion": 1.2, "kubernetesVersion": "", "specHash": "abc", "provider": false, "addons": [{}]}}),
        );
        assert!(
            b.contains("  lok8s:      1.2\n")
                && b.contains("  kubernetes: \n")
                && b.contains("  specHash:   abc…"),
            "{b}"
        );
        assert!(
            b.contains("  driver:     ?\n") && b.contains("    null"),
            "{b}"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(redact::escape_controls("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(redact::escape_controls("plain — text"), "plain — text");
    }
}

#[cfg(test)]
mod listing_tests {
    use super::*;
    use crate::delivery::{Reason, Target};
    use crate::inventory::ClusterInventory;
    use crate::store::{State, StateRecord, Store};

    fn cr(n: u32) -> ClusterInventory {
        let text = format!(
            r#"{{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{{"name":"cluster","labels":{{"lok8s.dev/domain":"d"}}}},"spec":{{"lok8sVersion":"1","kind":"lo","specHash":"{}","renderedAt":"2026-01-01T00:00:{:02}Z","addons":[]}}}}"#,
            "a".repeat(64),
            n % 60
        );
        serde_json::from_str(&text).unwrap()
    }

    /// The streamed table of compact listings is byte for byte the table of snapshots:
    /// every state, reasons, targets (wide and control characters), two domains,
    /// deleted snapshots and damage left out, `--state` filters.
    #[test]
    fn the_streamed_table_is_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        for (d, n) in [("a.example", 7), ("b.example", 4)] {
            let ds = store.domain(&crate::domain::d(d));
            let mut ids = Vec::new();
            for i in 0..n {
                let target = Target {
                    server: format!("https://ツール{i}\u{1b}[31m.example:6443\n"),
                    context: Some("ctx".into()),
                };
                let rec = ds
                    .record_for(&cr(i), "{}", (i % 2 == 0).then_some(&target), i != 3)
                    .unwrap();
                ids.push(rec.id);
            }
            let at = crate::store::now_millis();
            let mut pending = StateRecord::new(&ids[1], &at, State::Pending);
            pending.reason = Some(Reason::Conflict);
            ds.set_states(&[
                StateRecord::new(&ids[0], &at, State::Applied),
                pending,
                StateRecord::new(&ids[2], &at, State::Superseded),
                StateRecord::new(&ids[3], &at, State::Committed),
                StateRecord::new(&ids[ids.len() - 1], &at, State::Deleted),
            ])
            .unwrap();
        }
        // A damaged line is skipped by both.
        let seg = dir.path().join("b.example/segments/1/000001.log");
        let mut text = std::fs::read_to_string(&seg).unwrap();
        text.push_str("0000 {\"kind\":\"snapshot\"}\n");
        std::fs::write(&seg, text).unwrap();
        for state in [
            None,
            Some(State::Pending),
            Some(State::Applied),
            Some(State::Committed),
            Some(State::Recorded),
            Some(State::Deleted),
        ] {
            let b = crate::domain::d("b.example");
            for domain in [None, Some(&b)] {
                let (rows, damage) = store.list(domain, state).unwrap();
                let (listings, compact_damage) = store.listings(domain, state).unwrap();
                assert_eq!(damage, compact_damage);
                assert_eq!(rows.len(), listings.iter().map(|l| l.len()).sum::<usize>());
                let mut out = Vec::new();
                let now = jiff::Timestamp::now().as_second();
                write_snapshots_table(&listings, now, false, &mut out).unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    snapshots_table(
                        rows,
                        now,
                        TableStyle {
                            wide: false,
                            no_headers: false,
                        },
                    ),
                    "{state:?} {domain:?}"
                );
            }
        }
    }
}
