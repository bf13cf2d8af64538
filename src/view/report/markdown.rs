//! `-o markdown`: for a pull-request or merge-request comment (GitHub, GitLab, Gitea):
//! a heading, a one-line summary and a table of changes; ignored changes folded away.
//!
//! Values are escaped so a hostile name cannot inject links, HTML or break the table.

use super::phrase::{Phrase, count_phrase, one_line};
use crate::history::audit::{Entry, Timeline, Trail};
use crate::history::diff::{Change, Endpoint, Op, Report};

/// Escapes Markdown and HTML syntax in text that is not in a code span.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if "\\`*_[]<>|&~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span, or escaped text when the value itself holds a backtick.
fn code(text: &str) -> String {
    let text = one_line(text);
    if text.contains('`') || text.is_empty() {
        escape(&text)
    } else {
        // In a GFM table `\|` is a literal pipe, even inside a code span.
        format!("`{}`", text.replace('|', "\\|"))
    }
}

fn icon(c: &Change) -> &'static str {
    match c.change {
        Op::Added => "➕",
        Op::Removed => "➖",
        Op::Upgraded => "⬆️",
        Op::Downgraded => "⬇️",
        Op::Changed => "✏️",
    }
}

/// `cilium`, `cilium` category, `kubernetesVersion`.
fn item(p: &Phrase) -> String {
    match p.attribute {
        Some(a) => format!("{} {a}", code(&p.subject)),
        None => code(&p.subject),
    }
}

fn table(changes: &[Change]) -> String {
    let mut out = String::from("| | Item | Change | From | To |\n|---|---|---|---|---|\n");
    for c in changes {
        let p = Phrase::of(c);
        let mut to = p.to.as_deref().map(escape).unwrap_or_default();
        if let Some(q) = &p.qualifier {
            to.push_str(&format!(" ({})", escape(q)));
        }
        let mut change = c.change.as_str().to_string();
        if let Some(n) = p.note.filter(|_| c.change == Op::Changed) {
            change.push_str(&format!(" ({n})"));
        }
        out.push_str(&format!(
            "| {} | {} | {change} | {} | {} |\n",
            icon(c),
            item(&p),
            p.from.as_deref().map(escape).unwrap_or_default(),
            to.trim_start()
        ));
    }
    out
}

/// The reference as given, then what it resolved to.
fn endpoint(e: &Endpoint) -> String {
    let name = code(e.reference.as_deref().unwrap_or("?"));
    match super::phrase::resolution(e, false) {
        what if what.is_empty() => name,
        what => format!("{name} ({})", escape(&what)),
    }
}

fn ignored_block(ignored: &[Change]) -> String {
    if ignored.is_empty() {
        return String::new();
    }
    let noun = if ignored.len() == 1 {
        "change"
    } else {
        "changes"
    };
    format!(
        "\n<details><summary>{} ignored {noun} (--ignore)</summary>\n\n{}\n</details>\n",
        ignored.len(),
        table(ignored)
    )
}

/// The `clinv diff -o markdown` comment.
pub fn diff(report: &Report) -> String {
    let domain = match (&report.from.domain, &report.to.domain) {
        (Some(a), Some(b)) if a != b => format!(": {} → {}", code(a), code(b)),
        (_, Some(b)) => format!(": {}", code(b)),
        _ => String::new(),
    };
    let mut out = format!("### ClusterInventory diff{domain}\n\n");
    let total = report.changes.len();
    let counts = count_phrase(total, &report.summary.parts());
    let counts = match counts.split_once(" (") {
        Some((head, rest)) => format!("**{head}** ({rest}"),
        None => format!("**{counts}**"),
    };
    out.push_str(&counts);
    if !report.ignored.is_empty() {
        out.push_str(&format!(", {} ignored", report.ignored.len()));
    }
    out.push_str(&format!(
        " — {} → {}\n",
        endpoint(&report.from),
        endpoint(&report.to)
    ));
    if total > 0 {
        out.push('\n');
        out.push_str(&table(&report.changes));
    }
    out.push_str(&ignored_block(&report.ignored));
    out
}

/// The changes of one step, one per line inside a table cell.
fn cell(e: &Entry) -> String {
    if e.changes.is_empty() {
        return format!("*{}*", super::phrase::NO_CHANGES);
    }
    e.changes
        .iter()
        .map(|c| {
            let p = Phrase::of(c);
            format!("{} {}{}", icon(c), code(&p.subject), escape(&p.detail()))
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The audit trail as a Markdown table, newest first.
pub fn trail(trail: &Trail) -> String {
    let mut out = trail_head(
        trail.domain.as_deref(),
        trail.entries.len(),
        &trail.timeline,
    );
    if trail.timeline.start.is_some() && trail.timeline.end.is_some() {
        for e in &trail.entries {
            out.push_str(&trail_row(e));
        }
    }
    out
}

/// What [`trail`] prints before its rows: the title, the count of `n` entries and the
/// span of the timeline, the table's header — or `No history.` (then no rows follow).
pub fn trail_head(domain: Option<&str>, n: usize, timeline: &Timeline) -> String {
    let domain = domain.map(|d| format!(": {}", code(d))).unwrap_or_default();
    let mut out = format!("## ClusterInventory history{domain}\n\n");
    match (&timeline.start, &timeline.end) {
        (Some(start), Some(end)) => out.push_str(&format!(
            "{n} step{}, {} → {}, newest first.\n\n",
            if n == 1 { "" } else { "s" },
            escape(start),
            escape(end)
        )),
        _ => {
            out.push_str("No history.\n");
            return out;
        }
    }
    out.push_str("| Rev | When | Step | By | Outcome | Changes |\n|---|---|---|---|---|---|\n");
    out
}

/// One row of [`trail`]'s table.
pub fn trail_row(e: &Entry) -> String {
    let mut outcome = escape(&e.outcome);
    if e.initial {
        outcome.push_str(" (initial)");
    }
    let mut changes = cell(e);
    if !e.ignored.is_empty() {
        changes.push_str(&format!("<br>*{} ignored*", e.ignored.len()));
    }
    // A commit's author, or the host that recorded the snapshot.
    let by = e.author.as_deref().or(e.host.as_deref()).map(escape);
    format!(
        "| {} | {} | {} | {} | {outcome} | {changes} |\n",
        e.revision,
        escape(&e.at),
        code(&e.id),
        by.unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_values_cannot_break_the_table_or_inject_markup() {
        assert_eq!(
            escape("a|b<img src=x>[l](u)"),
            "a\\|b\\<img src=x\\>\\[l\\](u)"
        );
        assert_eq!(code("x|y"), "`x\\|y`");
        assert_eq!(code("x`y"), "x\\`y");
        assert_eq!(escape("a\nb"), "a\\\\nb");
    }
}
