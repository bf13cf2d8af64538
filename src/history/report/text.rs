//! `-o text`: compact lines in the manner of helm-diff and `git log`, coloured only when
//! the caller says so (a terminal, or `--color always`, and no `NO_COLOR`).

use super::phrase::{Phrase, count_phrase, one_line};
use crate::history::audit::{Entry, Span, Trail};
use crate::history::diff::{Change, Op, Report};

/// Ignored paths listed by name in the summary line before it is cut short.
const IGNORED_LISTED: usize = 5;

/// ANSI SGR wrapper that does nothing when colour is off.
#[derive(Clone, Copy)]
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
    let mut summary = count_phrase(report.changes.len(), &report.summary.parts());
    if let Some(ignored) = ignored_phrase(&report.ignored) {
        summary.push_str("; ");
        summary.push_str(&ignored);
    }
    out.push_str(&paint.wrap("1", &summary));
    out.push('\n');
    out
}

/// The audit trail, newest first like `git log`: a header per step, its changes indented.
pub fn trail(trail: &Trail, color: bool) -> String {
    let mut out = String::new();
    for (i, e) in trail.entries.iter().enumerate() {
        entry(&mut out, e, i == 0, color);
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
    let paint = Paint(color);
    {
        if !first {
            out.push('\n');
        }
        let mut head = format!(
            "{}  {}  {}  {}",
            paint.wrap("1", &revision(e)),
            paint.wrap("33", &one_line(&e.id)),
            one_line(&e.at),
            one_line(&e.outcome)
        );
        if e.initial {
            head.push_str("  (initial)");
        }
        if let Some(by) = recorded_by(e) {
            head.push_str("  ");
            head.push_str(&by);
        }
        out.push_str(&head);
        out.push('\n');
        // The first step is a first install (helm history's word), not a list of fields
        // going from "(none)" to their values: one line for it, then what it deployed.
        let addons = e.changes.iter().filter(|c| c.addon.is_some()).count();
        if e.initial {
            let k8s = e
                .kubernetes_version
                .as_deref()
                .map_or(String::new(), |v| format!("Kubernetes {}, ", one_line(v)));
            out.push_str(&format!(
                "    first recorded inventory: {k8s}{addons} addon{}\n",
                if addons == 1 { "" } else { "s" }
            ));
        }
        for c in e.changes.iter().filter(|c| !e.initial || c.addon.is_some()) {
            out.push_str(&format!("    {}\n", line(c, paint)));
        }
        if e.changes.is_empty() {
            out.push_str("    (no changes)\n");
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
    let paint = Paint(color);
    let mut out = String::new();
    for e in &trail.entries {
        let what = if e.initial {
            let addons = e.changes.iter().filter(|c| c.change == Op::Added).count();
            format!(
                "first step: {}{addons} addon{}",
                e.kubernetes_version
                    .as_deref()
                    .map(|k| format!("kubernetes {}, ", one_line(k)))
                    .unwrap_or_default(),
                if addons == 1 { "" } else { "s" }
            )
        } else if e.changes.is_empty() {
            "no changes".to_string()
        } else {
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
        };
        out.push_str(&format!(
            "{}  {}  {}  {}  {what}\n",
            paint.wrap("1", &revision(e)),
            paint.wrap("33", &one_line(&e.id)),
            one_line(&e.at),
            one_line(&e.outcome)
        ));
    }
    if trail.entries.is_empty() {
        out.push_str("(no history)\n");
    }
    out
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
            let arrival: &'static str = s.arrival.into();
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
    use crate::history::diff::Field;

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
