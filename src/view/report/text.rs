//! `-o text`: compact lines in the manner of helm-diff and `git log`, coloured only when
//! the caller says so (a terminal, or `--color always`, and no `NO_COLOR`).

use super::phrase::{NO_CHANGES, Phrase, count_phrase, first_step, one_line};
use crate::history::audit::{Entry, Span, Trail};
use crate::history::diff::{Change, Field, Op, Report};

/// Ignored paths listed by name in the summary line before it is cut short.
const IGNORED_LISTED: usize = 5;

/// ANSI SGR wrapper that does nothing when colour is off.
#[derive(Debug, Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.0 && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// One change: `~ cilium 1.19.2 → 1.20.1 (upgrade)`.
fn line(c: &Change, paint: Paint) -> String {
    let p = Phrase::of(c);
    if !paint.0 {
        return p.line();
    }
    let code = match (p.sign, p.note) {
        ('+', _) => "32",
        ('-', _) => "31",
        (_, Some("downgrade")) => "31",
        (_, Some("upgrade")) => "32",
        _ => "33",
    };
    let head = paint.wrap(code, &format!("{} {}", p.sign, p.subject));
    format!("{head}{}", p.detail())
}

/// Ignored changes in the summary line: `1 ignored: spec.specHash`.
fn ignored_phrase(ignored: &[Change]) -> Option<String> {
    if ignored.is_empty() {
        return None;
    }
    let mut paths: Vec<String> = ignored
        .iter()
        .take(IGNORED_LISTED)
        .map(|c| one_line(&c.path))
        .collect();
    if ignored.len() > IGNORED_LISTED {
        paths.push("…".into());
    }
    Some(format!("{} ignored: {}", ignored.len(), paths.join(", ")))
}

/// The `clinv diff` text: one line per change, a blank line, then a summary line.
pub fn diff(report: &Report, color: bool) -> String {
    let paint = Paint(color);
    let mut out = String::new();
    for c in &report.changes {
        out.push_str(&line(c, paint));
        out.push('\n');
    }
    if !report.changes.is_empty() {
        out.push('\n');
    }
    let summary = count_phrase(report.changes.len(), &report.summary.parts());
    summary_line(out, report, summary, paint)
}

/// The header of `clinv diff`'s text, as `diff --git` names its sides: each reference
/// as given and what it resolved to, then a blank line.
///
/// ```text
/// --- latest~1  snapshot 3f2a9c1b7e4d #25, recorded 2026-12-01T10:00:00.000Z, rendered …
/// +++ latest    snapshot 9c81d0e2a7b4 #26, recorded 2026-12-02T09:00:00.000Z, rendered …
/// ```
pub fn header(report: &Report, color: bool) -> String {
    let paint = Paint(color);
    let (a, b) = (&report.from, &report.to);
    let name = |e: &crate::history::diff::Endpoint| one_line(e.reference.as_deref().unwrap_or("?"));
    let (na, nb) = (name(a), name(b));
    let width = na.chars().count().max(nb.chars().count());
    // The domains are named when they differ.
    let domains = a.domain != b.domain;
    let mut out = String::new();
    for (sign, n, e) in [("---", &na, a), ("+++", &nb, b)] {
        let what = super::phrase::resolution(e, domains);
        let pad = width - n.chars().count();
        let line = if what.is_empty() {
            format!("{sign} {n}")
        } else {
            format!("{sign} {n}{}  {what}", " ".repeat(pad))
        };
        out.push_str(&paint.wrap("1", &line));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// `clinv diff --stat`: one line per addon that changed (how, and which of its other
/// fields), then a summary line counting addons and the other fields — like
/// `git diff --stat`.
///
/// ```text
/// ~ cilium          upgraded 1.16.6 → 1.18.2
/// ~ ingress-nginx   upgraded 4.12.0 → 4.12.3; category
/// + velero          added 9.0.0
/// - metrics-server  removed 3.12.2
///
/// 4 addons changed: 1 added, 1 removed, 2 upgraded; 3 other fields changed (lok8sVersion, kubernetesVersion, specHash)
/// ```
pub fn stat(report: &Report, color: bool) -> String {
    let paint = Paint(color);
    let (addons, others) = stat_rows(report);
    let mut out = String::new();
    let width = addons
        .iter()
        .map(|a| a.name.chars().count())
        .max()
        .unwrap_or(0);
    for a in &addons {
        let code = match a.sign {
            '+' => "32",
            '-' => "31",
            _ => "33",
        };
        let pad = " ".repeat(width - a.name.chars().count());
        out.push_str(&format!(
            "{}{pad}  {}\n",
            paint.wrap(code, &format!("{} {}", a.sign, a.name)),
            a.what.join("; ")
        ));
    }
    if !addons.is_empty() {
        out.push('\n');
    }
    let summary = stat_summary(report, &addons, &others);
    summary_line(out, report, summary, paint)
}

/// `out` and its last line: `summary`, with the ignored paths, in bold.
fn summary_line(mut out: String, report: &Report, mut summary: String, paint: Paint) -> String {
    if let Some(ignored) = ignored_phrase(&report.ignored) {
        summary.push_str("; ");
        summary.push_str(&ignored);
    }
    out.push_str(&paint.wrap("1", &summary));
    out.push('\n');
    out
}

/// One addon's line of `--stat`.
struct StatRow {
    name: String,
    sign: char,
    class: &'static str,
    what: Vec<String>,
}

/// The addons' rows (one per addon occurrence, in report order) and the other fields
/// that changed.
fn stat_rows(report: &Report) -> (Vec<StatRow>, Vec<&'static str>) {
    let mut addons: Vec<StatRow> = Vec::new();
    let mut others: Vec<&'static str> = Vec::new();
    for c in &report.changes {
        let Some(addon) = &c.addon else {
            others.push(c.field.as_str());
            continue;
        };
        let name = one_line(&c.subject().unwrap_or_else(|| addon.clone()));
        let i = match addons.iter().position(|a| a.name == name) {
            Some(i) => i,
            None => {
                addons.push(StatRow {
                    name,
                    sign: '~',
                    class: "changed",
                    what: Vec::new(),
                });
                addons.len() - 1
            }
        };
        add_to_row(&mut addons[i], c);
    }
    (addons, others)
}

/// What one change adds to its addon's row.
fn add_to_row(a: &mut StatRow, c: &crate::history::diff::Change) {
    let version = |v: &Option<String>| v.as_deref().map(one_line).unwrap_or_default();
    match (c.field, c.change) {
        (Field::Addon, Op::Added) => {
            (a.sign, a.class) = ('+', "added");
            let what = format!("added {}", version(&c.to));
            a.what.insert(0, what.trim_end().to_string());
        }
        (Field::Addon, Op::Removed) => {
            (a.sign, a.class) = ('-', "removed");
            let what = format!("removed {}", version(&c.from));
            a.what.insert(0, what.trim_end().to_string());
        }
        (Field::ChartVersion, op) => {
            a.class = match op {
                Op::Upgraded => "upgraded",
                Op::Downgraded => "downgraded",
                _ => "changed",
            };
            let mut what = format!("{} {} → {}", a.class, version(&c.from), version(&c.to));
            if let Some(note) = Phrase::of(c).note.filter(|_| op == Op::Changed) {
                what.push_str(&format!(" ({note})"));
            }
            a.what.insert(0, what);
        }
        (field, _) => a.what.push(field.as_str().to_string()),
    }
}

/// The closing line of `--stat`: how many addons changed, by class, and the other fields.
fn stat_summary(report: &Report, addons: &[StatRow], others: &[&str]) -> String {
    if report.changes.is_empty() {
        return NO_CHANGES.to_string();
    }
    let mut parts = Vec::new();
    if addons.is_empty() {
        parts.push("no addons changed".to_string());
    } else {
        let counts: Vec<String> = ["added", "removed", "upgraded", "downgraded", "changed"]
            .iter()
            .filter_map(|class| {
                let n = addons.iter().filter(|a| a.class == *class).count();
                (n > 0).then(|| format!("{n} {class}"))
            })
            .collect();
        let noun = if addons.len() == 1 { "addon" } else { "addons" };
        parts.push(format!(
            "{} {noun} changed: {}",
            addons.len(),
            counts.join(", ")
        ));
    }
    if !others.is_empty() {
        let noun = if others.len() == 1 { "field" } else { "fields" };
        parts.push(format!(
            "{} other {noun} changed ({})",
            others.len(),
            others.join(", ")
        ));
    }
    parts.join("; ")
}

/// The audit trail, newest first like `git log`: a header per step, its changes indented.
pub fn trail(trail: &Trail, color: bool) -> String {
    trail_aged(trail, color, None)
}

/// [`trail`] with each time followed by its age at `now` (`(2d5h ago)`), for a terminal.
pub fn trail_aged(trail: &Trail, color: bool, now: Option<jiff::Timestamp>) -> String {
    let mut out = String::new();
    for (i, e) in trail.entries.iter().enumerate() {
        entry_aged(&mut out, e, i == 0, color, now);
    }
    if trail.entries.is_empty() {
        out.push_str(NO_HISTORY);
    }
    out
}

/// What [`trail`] prints for no entries.
pub const NO_HISTORY: &str = "(no history)\n";

/// One entry of [`trail`] appended to `out` (`first`: no blank line before it), so a
/// long trail can be printed as it is built.
pub fn entry(out: &mut String, e: &Entry, first: bool, color: bool) {
    entry_aged(out, e, first, color, None);
}

/// One entry of `log -A` appended to `out`: [`entry_aged`] with its domain leading the
/// entry's first line.
pub fn fleet_entry(
    out: &mut String,
    domain: &str,
    e: &Entry,
    first: bool,
    color: bool,
    now: Option<jiff::Timestamp>,
) {
    let mut block = String::new();
    entry_aged(&mut block, e, first, color, now);
    let rest = block.strip_prefix('\n').inspect(|_| out.push('\n'));
    out.push_str(&one_line(domain));
    out.push_str("  ");
    out.push_str(rest.unwrap_or(&block));
}

/// `at`, then its age at `now` when there is one: `2026-02-23T11:11:11Z (2d5h ago)`.
fn when(at: &str, now: Option<jiff::Timestamp>) -> String {
    let mut out = one_line(at);
    if let Some(now) = now
        && let Some(then) = crate::util::time::parse_rfc3339(at)
    {
        out.push_str(&format!(" ({} ago)", crate::util::time::age(then, now)));
    }
    out
}

/// [`entry`] with the time's age at `now` (a terminal's log).
pub fn entry_aged(
    out: &mut String,
    e: &Entry,
    first: bool,
    color: bool,
    now: Option<jiff::Timestamp>,
) {
    let paint = Paint(color);
    {
        if !first {
            out.push('\n');
        }
        // Written straight into `out`: a streamed log makes a million of these.
        use std::fmt::Write as _;
        if paint.0 {
            out.push_str(&paint.wrap("1", &revision(e)));
            out.push_str("  ");
            out.push_str(&paint.wrap("33", &one_line(&e.id)));
        } else {
            let _ = write!(out, "#{}  {}", e.revision, one_line(&e.id));
        }
        let _ = write!(out, "  {}  {}", when(&e.at, now), one_line(&e.outcome));
        if e.initial {
            out.push_str("  (initial)");
        }
        match (&e.author, &e.host) {
            (Some(a), _) => {
                let _ = write!(out, "  by {}", one_line(a));
            }
            (None, Some(h)) => {
                let _ = write!(out, "  on {}", one_line(h));
            }
            (None, None) => {}
        }
        out.push('\n');
        // The first step is a first install (helm history's word), not a list of fields
        // going from "(none)" to their values: one line for it, then what it deployed.
        let addons = e.changes.iter().filter(|c| c.addon.is_some()).count();
        if e.initial {
            let first = first_step(e.kubernetes_version.as_deref(), addons);
            out.push_str(&format!("    {first}\n"));
        }
        for c in e.changes.iter().filter(|c| !e.initial || c.addon.is_some()) {
            out.push_str(&format!("    {}\n", line(c, paint)));
        }
        if e.changes.is_empty() {
            out.push_str(&format!("    {NO_CHANGES}\n"));
        }
        if let Some(ignored) = ignored_phrase(&e.ignored) {
            out.push_str(&format!("    ({ignored})\n"));
        }
    }
}

/// `#26`: the entry's revision, as `helm history` numbers releases.
pub fn revision(e: &Entry) -> String {
    format!("#{}", e.revision)
}

/// `by NAME <EMAIL>` (a commit's author) or `on HOST` (the host that recorded the
/// snapshot), when known.
pub fn recorded_by(e: &Entry) -> Option<String> {
    match (&e.author, &e.host) {
        (Some(a), _) => Some(format!("by {}", one_line(a))),
        (None, Some(h)) => Some(format!("on {}", one_line(h))),
        (None, None) => None,
    }
}

/// Changes named on a `--oneline` line before the rest is counted.
const ONELINE_CHANGES: usize = 2;

/// `clinv log --oneline`: one line per step, like `git log --oneline` — id, time,
/// outcome, then what changed (the first step: what it holds).
pub fn trail_oneline(trail: &Trail, color: bool) -> String {
    trail_oneline_aged(trail, color, None)
}

/// [`trail_oneline`] with each time's age at `now` (a terminal's log).
pub fn trail_oneline_aged(trail: &Trail, color: bool, now: Option<jiff::Timestamp>) -> String {
    let mut out = oneline(trail.entries.iter().map(|e| (None, e)), color, now);
    if trail.entries.is_empty() {
        out.push_str(NO_HISTORY);
    }
    out
}

/// `log -A --oneline`: [`trail_oneline_aged`] with each line led by its domain.
pub fn fleet_oneline<'a>(
    entries: impl Iterator<Item = (&'a str, &'a Entry)>,
    color: bool,
    now: Option<jiff::Timestamp>,
) -> String {
    oneline(entries.map(|(d, e)| (Some(d), e)), color, now)
}

/// One line per entry: its domain when given, the change, time, outcome, revision and id
/// — the columns aligned.
fn oneline<'a>(
    entries: impl Iterator<Item = (Option<&'a str>, &'a Entry)>,
    color: bool,
    now: Option<jiff::Timestamp>,
) -> String {
    let entries: Vec<_> = entries.collect();
    let mut lines = Oneline::new(color, now);
    for &(domain, e) in &entries {
        lines.measure(domain, e);
    }
    entries
        .iter()
        .map(|&(domain, e)| lines.line(domain, e))
        .collect()
}

/// `log --oneline`'s aligned lines from two passes over the entries — each
/// [`Oneline::measure`]d, then each written as a [`Oneline::line`] — so a long log is
/// never held.
#[derive(Debug)]
pub struct Oneline {
    paint: Paint,
    now: Option<jiff::Timestamp>,
    /// The widest domain, change and outcome so far, in characters.
    widths: [usize; 3],
}

impl Oneline {
    pub fn new(color: bool, now: Option<jiff::Timestamp>) -> Oneline {
        Oneline {
            paint: Paint(color),
            now,
            widths: [0; 3],
        }
    }

    /// The columns of an entry: its domain when given, the change, time, outcome,
    /// revision and id.
    fn cells(&self, domain: Option<&str>, e: &Entry) -> [String; 5] {
        [
            domain.map(one_line).unwrap_or_default(),
            oneline_change(e),
            when(&e.at, self.now),
            one_line(&e.outcome),
            format!("{} {}", revision(e), one_line(&e.id)),
        ]
    }

    pub fn measure(&mut self, domain: Option<&str>, e: &Entry) {
        let [domain, what, _, outcome, _] = self.cells(domain, e);
        for (w, text) in self.widths.iter_mut().zip([domain, what, outcome]) {
            *w = (*w).max(text.chars().count());
        }
    }

    /// The entry's line. The change leads (what a reader scans for); the columns after
    /// it line up, up to a change of ONELINE_WIDTH characters (a longer one only pushes
    /// its own line).
    pub fn line(&self, domain: Option<&str>, e: &Entry) -> String {
        let [domain, what, at, outcome, id] = self.cells(domain, e);
        let [domain_w, what_w, outcome_w] = [
            self.widths[0].min(64),
            self.widths[1].min(ONELINE_WIDTH),
            self.widths[2].min(40),
        ];
        let pad = |text: &str, w: usize| " ".repeat(w.saturating_sub(text.chars().count()));
        let mut out = String::new();
        if !domain.is_empty() {
            out.push_str(&format!(
                "{}{}  ",
                self.paint.wrap("1", &domain),
                pad(&domain, domain_w)
            ));
        }
        out.push_str(&format!(
            "{what}{}  {at}  {outcome}{}  {}\n",
            pad(&what, what_w),
            pad(&outcome, outcome_w),
            self.paint.wrap("33", &id)
        ));
        out
    }
}

/// The widest change column `log --oneline` aligns to.
const ONELINE_WIDTH: usize = 60;

/// A step's changes on one line: the first step's phrase, `no changes`, or the first
/// [`ONELINE_CHANGES`] changes and how many more.
fn oneline_change(e: &Entry) -> String {
    if e.initial {
        let addons = e.changes.iter().filter(|c| c.addon.is_some()).count();
        return first_step(e.kubernetes_version.as_deref(), addons);
    }
    if e.changes.is_empty() {
        return NO_CHANGES.to_string();
    }
    let mut named: Vec<String> = e
        .changes
        .iter()
        .take(ONELINE_CHANGES)
        .map(|c| Phrase::of(c).line())
        .collect();
    if e.changes.len() > ONELINE_CHANGES {
        named.push(format!("+{} more", e.changes.len() - ONELINE_CHANGES));
    }
    named.join("; ")
}

/// One addon's version spans (`clinv log --addon`), newest first.
pub fn spans(name: &str, spans: &[Span]) -> String {
    spans
        .iter()
        .rev()
        .map(|s| {
            let until = match (&s.until, &s.until_id) {
                (Some(t), Some(id)) => format!("until {t} ({id})"),
                _ => "current".into(),
            };
            let arrival: &'static str = s.arrival.as_str();
            format!(
                "{name} {}  arrived {} ({}, {arrival})  {until}\n",
                s.version.as_deref().unwrap_or("-"),
                s.since,
                s.since_id,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_log_shows_each_time_with_its_age() {
        let e = Entry {
            id: "abc".into(),
            at: "2026-02-23T11:11:11Z".into(),
            outcome: "applied".into(),
            revision: 7,
            author: None,
            host: Some("build-1".into()),
            initial: false,
            kubernetes_version: None,
            has_changes: false,
            summary: Default::default(),
            changes: Vec::new(),
            ignored: Vec::new(),
        };
        let now = crate::util::time::parse_rfc3339("2026-02-25T16:11:11Z");
        let mut out = String::new();
        entry_aged(&mut out, &e, true, false, now);
        assert_eq!(
            out,
            "#7  abc  2026-02-23T11:11:11Z (2d5h ago)  applied  on build-1\n    no changes\n"
        );
        let mut plain = String::new();
        entry(&mut plain, &e, true, false);
        assert_eq!(
            plain,
            "#7  abc  2026-02-23T11:11:11Z  applied  on build-1\n    no changes\n"
        );
        let trail = Trail {
            schema_version: 1,
            kind: "InventoryAuditTrail",
            domain: None,
            entries: vec![e],
            timeline: Default::default(),
        };
        assert_eq!(
            trail_oneline_aged(&trail, false, now),
            "no changes  2026-02-23T11:11:11Z (2d5h ago)  applied  #7 abc\n"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let c = Change {
            path: "spec.kubernetesVersion".into(),
            field: Field::KubernetesVersion,
            change: Op::Downgraded,
            addon: None,
            occurrence: None,
            from: Some("v1.32.3".into()),
            to: Some("v1.31.10".into()),
            entry: None,
        };
        assert_eq!(
            line(&c, Paint(false)),
            "~ kubernetesVersion v1.32.3 → v1.31.10 (downgrade)"
        );
        assert_eq!(
            line(&c, Paint(true)),
            "\x1b[31m~ kubernetesVersion\x1b[0m v1.32.3 → v1.31.10 (downgrade)"
        );
    }
}
