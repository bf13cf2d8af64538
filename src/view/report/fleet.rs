//! The fleet's timeline ([`crate::ops::fleet::timeline`]) in words: `log -A --oneline`
//! (one line per grouped event) and the fleet report page (`report -A`): the matrix at
//! a date and the timeline.

use super::phrase::{NO_CHANGES, Phrase, one_line};
use crate::ops::fleet::timeline::{Event, What};
use crate::view::report::html::esc;

/// How many domains an event's line names before it counts the rest.
const NAMED: usize = 8;

/// What an event is about, in words: `~ cilium 1.18.4 → 1.19.2 (upgrade)`.
pub fn what(event: &Event) -> String {
    match &event.what {
        What::First => "first recorded step".to_string(),
        What::Unchanged => NO_CHANGES.to_string(),
        What::Change { change } => Phrase::of(change).line(),
    }
}

/// When, in UTC: `2026-06-01 07:00`, `2026-05-10 08:00 – 08:20` within a day,
/// `2026-04-02 23:00 – 2026-04-03 01:00` across one.
pub fn when(event: &Event) -> String {
    let utc = |t: jiff::Timestamp| t.to_zoned(jiff::tz::TimeZone::UTC);
    let (start, end) = (utc(event.start), utc(event.end));
    let day_time = |z: &jiff::Zoned| z.strftime("%Y-%m-%d %H:%M").to_string();
    if start.strftime("%Y-%m-%d %H:%M").to_string() == day_time(&end) {
        day_time(&start)
    } else if start.date() == end.date() {
        format!("{} – {}", day_time(&start), end.strftime("%H:%M"))
    } else {
        format!("{} – {}", day_time(&start), day_time(&end))
    }
}

/// Where: `3 domains: a, b, c`; past [`NAMED`], `…, +N more`.
pub fn domains(event: &Event) -> String {
    let n = event.domains.len();
    let mut named: Vec<String> = event
        .domains
        .iter()
        .take(NAMED)
        .map(|d| one_line(d))
        .collect();
    if n > NAMED {
        named.push(format!("+{} more", n - NAMED));
    }
    let noun = if n == 1 { "domain" } else { "domains" };
    format!("{n} {noun}: {}", named.join(", "))
}

/// `log -A --oneline`: one line per event, newest first unless `oldest_first`; the
/// change leads, the times and domains line up after it.
pub fn oneline(events: &[Event], oldest_first: bool, color: bool) -> String {
    let rows: Vec<[String; 3]> = events
        .iter()
        .map(|e| [what(e), when(e), domains(e)])
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
            .min(60)
    };
    let (w0, w1) = (width(0), width(1));
    let pad = |t: &str, w: usize| " ".repeat(w.saturating_sub(t.chars().count()));
    let bold = |t: &str| match color {
        true => format!("\x1b[1m{t}\x1b[0m"),
        false => t.to_string(),
    };
    let mut out = String::new();
    let mut push = |r: &[String; 3]| {
        out.push_str(&format!(
            "{}{}  {}{}  {}\n",
            bold(&r[0]),
            pad(&r[0], w0),
            r[1],
            pad(&r[1], w1),
            r[2]
        ));
    };
    match oldest_first {
        true => rows.iter().for_each(&mut push),
        false => rows.iter().rev().for_each(&mut push),
    }
    out
}

/// `log -A --oneline`: the fleet log's entries grouped into events, a line each, and
/// how many steps they were.
///
/// # Errors
/// A store that cannot be read while the entries are walked.
pub fn log_oneline(
    log: &crate::ops::history::FleetLog<'_>,
    oldest_first: bool,
    color: bool,
) -> crate::error::Result<(String, usize)> {
    let (events, steps) = crate::ops::fleet::timeline::of_log(log)?;
    Ok((oneline(&events, oldest_first, color), steps))
}

/// The timeline as an HTML section, newest first: each event's time, change and
/// domains (past [`NAMED`], folded into a `<details>`).
pub fn timeline_html(events: &[Event], since: Option<&str>, fleet: &[String]) -> String {
    let mut out = String::from("<section class=\"timeline\">\n<h2>Timeline</h2>\n");
    let bound = since
        .map(|s| format!(" since <code>{}</code>", esc(s)))
        .unwrap_or_default();
    out.push_str(&format!(
        "<p class=\"legend\">{} event(s){bound}, newest first. One event is one change (the same addon, the same versions) recorded by every domain that made it within 24 hours of the first (times UTC).</p>\n",
        events.len()
    ));
    if events.is_empty() {
        out.push_str("<p>No recorded step.</p>\n</section>\n");
        return out;
    }
    out.push_str("<table class=\"events\">\n<thead><tr><th>When (UTC)</th><th>Change</th><th>Domains</th></tr></thead>\n<tbody>\n");
    for e in events.iter().rev() {
        let kind = match &e.what {
            What::First => "first",
            What::Unchanged => "unchanged",
            What::Change { .. } => "change",
        };
        // Most of the fleet: the few it did not reach say more, in a page that stays
        // small at ten thousand domains (-o json lists every domain).
        let missing: Vec<&String> =
            match e.domains.len() > NAMED && e.domains.len() * 2 > fleet.len() {
                true => {
                    let had: std::collections::HashSet<&String> = e.domains.iter().collect();
                    fleet.iter().filter(|d| !had.contains(d)).collect()
                }
                false => Vec::new(),
            };
        let (names, prefix): (Vec<String>, String) =
            match e.domains.len() > NAMED && e.domains.len() * 2 > fleet.len() {
                true => (
                    missing
                        .iter()
                        .map(|d| format!("<code>{}</code>", esc(d)))
                        .collect(),
                    match missing.len() {
                        0 => format!("of {}: every domain", fleet.len()),
                        n => format!("of {}: all but {n}: ", fleet.len()),
                    },
                ),
                false => (
                    e.domains
                        .iter()
                        .map(|d| format!("<code>{}</code>", esc(d)))
                        .collect(),
                    String::new(),
                ),
            };
        let listed = match names.len() > NAMED {
            false => names.join(", "),
            true => format!(
                "{}, <details><summary>+{} more</summary>{}</details>",
                names[..NAMED].join(", "),
                names.len() - NAMED,
                names[NAMED..].join(", ")
            ),
        };
        out.push_str(&format!(
            "<tr class=\"{kind}\"><td>{}</td><td><code>{}</code></td><td><b>{}</b> {prefix}{listed}</td></tr>\n",
            esc(&when(e)),
            esc(&what(e)),
            e.domains.len()
        ));
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

const PAGE_STYLE: &str = "\
h2 { font-size: 18px; margin: 28px 0 8px; }
table.events { border-collapse: collapse; width: 100%; }
table.events th, table.events td { padding: 6px 12px; border-bottom: 1px solid var(--line); text-align: left; }
table.events thead th { background: var(--soft); font-size: 12px; }
table.events td { vertical-align: top; white-space: normal; }
table.events td:first-child { white-space: nowrap; color: var(--muted); }
table.events td:nth-child(2), table.events td code { white-space: nowrap; }
table.events tr.first td, table.events tr.unchanged td { color: var(--muted); }
table.events details { display: inline; }
table.events summary { display: inline; cursor: pointer; color: var(--muted); }
";

/// The fleet report page (`report -A`): the matrix and the timeline.
///
/// One self-contained page — no external resource; the one inline script is the
/// matrix's filter box — with the matrix as `fleet -o html` draws it (its filters and
/// legend) and the timeline.
pub fn page(
    report: &crate::ops::fleet::report::FleetReport,
    generated: &super::html::Generated<'_>,
) -> String {
    use crate::view::fleet_html;
    let m = &report.matrix;
    let matrix = fleet_html::section(m, &m.marks(None), None, false);
    let mut out = fleet_html::head(
        "clinv fleet report",
        &(PAGE_STYLE.to_string() + &matrix.css),
    );
    out.push_str("<body>\n<header>\n<h1>Fleet report</h1>\n");
    out.push_str(&format!(
        "<p>{} domain(s), {} addon(s), {} event(s) from {} recorded step(s){} — generated {} by clinv {}</p>\n</header>\n",
        m.domains.len(),
        m.rows.len(),
        report.events.len(),
        report.steps,
        match report.unchanged {
            0 => String::new(),
            n => format!(" ({n} of them recorded no change)"),
        },
        esc(generated.at),
        esc(generated.version)
    ));
    out.push_str("<section class=\"matrix\">\n<h2>Matrix</h2>\n");
    out.push_str(&matrix.html);
    out.push_str("</section>\n");
    out.push_str(&timeline_html(
        &report.events,
        report.since.as_deref(),
        &report.domains,
    ));
    out.push_str("<script>\n");
    out.push_str(matrix.script);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// `report -A -o json`: the matrix (`fleet -o json`'s document) and the timeline.
///
/// # Errors
/// serde's, which these documents do not produce.
pub fn json(report: &crate::ops::fleet::report::FleetReport) -> crate::error::Result<String> {
    let matrix: serde_json::Value =
        serde_json::from_str(&crate::view::fleet::json(&report.matrix)?)
            .map_err(|e| crate::error::Error::encode("JSON", e))?;
    crate::inventory::render::to_json(&serde_json::json!({
        "schemaVersion": 1,
        "matrix": matrix,
        "since": report.since,
        "steps": report.steps,
        "unchanged": report.unchanged,
        "timeline": report.events,
    }))
}
