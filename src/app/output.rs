//! The only place that prints. Data goes to stdout; `[warn]`, `[error]`, `[info]` and
//! `[debug]` lines go to stderr, coloured only on a colour-capable terminal.
//!
//! Message text is sanitised: control characters from file contents (a key such as
//! `"\e[2J"`) are escaped, so a hostile project cannot drive the user's terminal.

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

/// The `lo addons --detail` table (spec §9): lok8s's column widths, wider when a cell is.
pub fn addons_table(domain: &str, driver: &str, rows: &[Row]) -> String {
    let mut out = format!("Addons deployed by {domain} (kind={driver})\n\n");
    if rows.is_empty() {
        out.push_str("  (spec.bootstrap is empty — this cluster deploys no addons)\n");
    } else {
        let mut table = Table::new(&["NAME", "CATEGORY", "TYPE", "VERSION", "CONFIGURE"])
            .min_widths(&[24, 14, 8, 10]);
        table.row(&["----", "--------", "----", "-------", "---------"]);
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        for r in rows {
            table.row(&[
                &r.name,
                &dash(&r.category),
                &r.kind,
                &dash(&r.version),
                &r.configure,
            ]);
        }
        out.push_str(&table.render());
    }
    out.push_str("\nConfigure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.\n");
    out
}

/// The `updates` table: NAME, CURRENT, LATEST and a NOTE (`unordered` when the two
/// versions are not both SemVer).
pub fn updates_table(updates: &[crate::status::updates::Update]) -> String {
    if updates.is_empty() {
        return "No updates: every compared addon is at or above its version in the index.\n"
            .to_string();
    }
    let mut table = Table::new(&["NAME", "CURRENT", "LATEST", "NOTE"]);
    for u in updates {
        let note = if u.unordered { "unordered" } else { "" };
        table.row(&[u.name.as_str(), &u.current, &u.latest, note]);
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

/// `snapshots list`: one row per snapshot, newest first. Takes the snapshots so they can
/// go before the table renders (it holds its own copy of every cell).
pub fn snapshots_table(rows: Vec<crate::store::Snapshot>) -> String {
    let mut table = Table::new(&[
        "DOMAIN", "ID", "RECORDED", "STATE", "REASON", "RENDERED", "TARGET",
    ]);
    for s in &rows {
        let reason = s.reason.map(|r| r.as_str()).unwrap_or("-");
        let target = s
            .record
            .target
            .as_ref()
            .map(|t| t.server.as_str())
            .unwrap_or("-");
        table.row(&[
            &s.record.domain,
            &s.record.id,
            &s.record.at,
            s.state.as_str(),
            reason,
            &s.record.rendered_at,
            target,
        ]);
    }
    drop(rows);
    table.render()
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
