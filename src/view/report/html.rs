//! The HTML audit report: one self-contained page — inline CSS and inline SVG, no scripts,
//! fonts, images or network requests — that can be attached to a ticket or opened from
//! disk.
//!
//! It shows the current inventory, a swimlane chart of the Kubernetes and addon versions
//! over time, and the change list, newest first.
//!
//! Deterministic: the same trail, inventory and [`Generated`] footer give the same
//! bytes. Every value is HTML-escaped.

use super::phrase::{Phrase, one_line};
use crate::history::audit::{Entry, Lane, LaneKind, Span, Trail};
use crate::history::diff::Op;
use crate::inventory::ClusterInventory;
use crate::util::time;
use jiff::civil::Date;
use std::collections::HashMap;

/// Chart geometry, in SVG user units (the chart scales to the page width).
const WIDTH: f64 = 1120.0;
/// The lane-label column: at least this wide, wider for long names (up to `LABEL_MAX`).
const LABEL_MIN: f64 = 150.0;
const LABEL_MAX: f64 = 420.0;
const RIGHT: f64 = 16.0;
const AXIS: f64 = 34.0;
const ROW: f64 = 30.0;
const BAR: f64 = 20.0;
/// Lane labels longer than this are cut with an ellipsis (the full name is in a tooltip).
const LABEL_CHARS: usize = 56;
/// Width of one label character at 13px, in user units (a generous average).
const LABEL_CHAR: f64 = 7.4;

/// Version colours, dark enough for white text; a lane uses them in order of first
/// appearance, so a version that comes back keeps its colour. Violets, teals, pinks and
/// slates: none is close to the outcome colours of the step marks (green, amber, blue,
/// grey), so a bar never reads as an outcome.
const PALETTE: [&str; 8] = [
    "#6d28d9", "#0f766e", "#be185d", "#4338ca", "#155e75", "#a21caf", "#334155", "#7e22ce",
];

/// What the footer says about the page itself: when and by which clinv it was made.
pub struct Generated<'a> {
    /// RFC 3339 time (the command passes SOURCE_DATE_EPOCH or now).
    pub at: &'a str,
    pub version: &'a str,
}

const CSS: &str = r#"
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --up: #1a7f37; --down: #cf222e; --chg: #9a6700; --add: #0969da; --del: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 32px 28px 48px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace; font-size: 0.9em; }
header h1 { margin: 0; font-size: 28px; letter-spacing: -0.01em; }
header p { margin: 4px 0 0; color: var(--muted); }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; margin-top: 24px; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; background: #fff; }
.card .k { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.card .v { font-size: 19px; font-weight: 600; margin-top: 2px; overflow-wrap: anywhere; }
.card .v.small { font-size: 15px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; }
th, td { padding: 7px 12px; border-bottom: 1px solid var(--line); }
tbody tr:nth-child(even) { background: var(--soft); }
.scroll { overflow: auto; max-height: 80vh; border-bottom: 1px solid var(--line); }
.scroll thead th { position: sticky; top: 0; z-index: 2; background: #fff; }
.scroll tbody td:first-child, .scroll thead th:first-child { position: sticky; left: 0; z-index: 1; background: inherit; }
.scroll thead th:first-child { z-index: 3; background: #fff; }
.scroll tbody tr { background: #fff; }
.scroll tbody tr:nth-child(even) { background: var(--soft); }
td.none { color: var(--muted); }
.pill { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px; line-height: 20px; background: #eef1f4; color: var(--muted); }
.pill.target { background: #fff1e5; color: #953800; }
.pill.addon { background: #ddf4ff; color: #0550ae; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 10px; padding: 12px 8px 8px; overflow-x: auto; }
figure svg { display: block; width: 100%; height: auto; min-width: 760px; }
figcaption { color: var(--muted); font-size: 13px; padding: 8px 8px 0; }
figcaption p { margin: 0 0 4px; }
svg text { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, "DejaVu Sans", sans-serif; }
svg .tick { fill: var(--muted); font-size: 12px; }
svg .tick.now { fill: var(--fg); font-weight: 600; font-size: 11px; }
svg .lane { fill: var(--fg); font-size: 13px; }
svg .lane.k8s { font-weight: 700; }
svg .lane.gone { fill: #8c959f; font-style: italic; }
svg .ver { fill: #fff; font-size: 11px; font-weight: 600; }
svg .ver.dark { fill: var(--fg); }
.legend { display: inline-flex; align-items: center; gap: 6px; margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 50%; }
.steps { list-style: none; margin: 0; padding: 0; }
.step { display: grid; grid-template-columns: 230px 1fr; gap: 16px; padding: 12px 4px; border-bottom: 1px solid var(--line); }
.step .when { color: var(--muted); font-size: 14px; }
.step .when time { color: var(--fg); font-weight: 600; display: block; }
.badge { display: inline-block; padding: 0 8px; margin-left: 6px; border-radius: 999px; font-size: 12px; line-height: 20px; font-weight: 600; }
.badge.applied { background: #dafbe1; color: #116329; }
.badge.pending { background: #fff8c5; color: #7d4e00; }
.badge.committed { background: #ddf4ff; color: #0550ae; }
.badge.superseded { background: #eef1f4; color: #59636e; text-decoration: line-through; }
.badge.other { background: #eef1f4; color: #59636e; }
.changes { list-style: none; margin: 0; padding: 0; font-size: 14px; }
.changes li { padding: 2px 0; }
.changes .sign { display: inline-block; width: 18px; font-weight: 700; text-align: center; }
.changes .up .sign { color: var(--up); }
.changes .down .sign { color: var(--down); }
.changes .add .sign { color: var(--add); }
.changes .del .sign { color: var(--del); }
.changes .chg .sign { color: var(--chg); }
.changes .note { font-size: 12px; color: var(--muted); margin-left: 4px; }
.changes .none, .muted { color: var(--muted); }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
"#;

/// Escapes text for HTML element content and attribute values (one line: controls
/// escaped), for every page: the report, the fleet page, the fleet report.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `2026-02-23 11:11:05 UTC` for an RFC 3339 time (seconds: steps of a short history
/// can be seconds apart); the text as it is otherwise.
fn when(at: &str) -> String {
    match time::parse_rfc3339(at) {
        Some(t) => time::utc(t).strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => one_line(at),
    }
}

/// `2026-02-23` for an RFC 3339 time.
fn day(at: &str) -> String {
    match time::parse_rfc3339(at) {
        Some(t) => time::utc(t).strftime("%Y-%m-%d").to_string(),
        None => one_line(at),
    }
}

/// One self-contained HTML page for `domain`: `current` is the inventory shown on top
/// (the newest snapshot or the live object), `trail` the history behind it.
pub fn html_report(
    domain: &str,
    trail: &Trail,
    current: &ClusterInventory,
    generated: &Generated<'_>,
) -> String {
    html_report_of(domain, trail, current, generated, trail.entries.len())
}

/// [`html_report`] of a history whose `trail` holds only the newest entries.
///
/// [`html_report`] of a history of `steps` recorded steps whose `trail` holds only the
/// newest entries (the timeline covers them all): the page summarises, and says how many
/// older steps it does not list — so a history of a million records is a bounded page.
pub fn html_report_of(
    domain: &str,
    trail: &Trail,
    current: &ClusterInventory,
    generated: &Generated<'_>,
    steps: usize,
) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("ClusterInventory · {}", esc(domain));
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
    ));
    let span = match (&trail.timeline.start, &trail.timeline.end) {
        (Some(a), Some(b)) => format!(" · {} → {}", esc(&day(a)), esc(&day(b))),
        _ => String::new(),
    };
    let n = steps.max(trail.entries.len());
    out.push_str(&format!(
        "<header>\n<h1>{}</h1>\n<p>ClusterInventory audit report · {n} recorded step{}{span}</p>\n</header>\n",
        esc(domain),
        if n == 1 { "" } else { "s" }
    ));
    cards(&mut out, current);
    inventory(&mut out, trail, current);
    out.push_str("<section>\n<h2>Version timeline</h2>\n");
    if trail.timeline.lanes.is_empty() {
        out.push_str("<p class=\"muted\">No history recorded.</p>\n");
    } else {
        out.push_str("<figure>\n");
        out.push_str(&chart(trail));
        out.push_str("<figcaption><p>Each bar is one version, from the step that brought it to the step that replaced or removed it; the part right of the dashed <b>newest step</b> line is the version in place now. Hover a bar for its dates. Bar colours only tell the versions of one lane apart (a version that comes back keeps its colour); they carry no other meaning.</p><p>Marks on the axis are the recorded steps, coloured by outcome: ");
        for (outcome, colour) in OUTCOMES {
            out.push_str(&format!(
                "<span class=\"legend\"><i style=\"background:{colour}\"></i>{outcome}</span>"
            ));
        }
        out.push_str("</p></figcaption>\n</figure>\n");
    }
    out.push_str("</section>\n");
    changes(&mut out, trail, n);
    out.push_str(&format!(
        "<footer>Generated by clinv {} on {} from {n} recorded step{}. This page is self-contained: no scripts, fonts or network requests.</footer>\n</main>\n</body>\n</html>\n",
        esc(generated.version),
        esc(&when(generated.at)),
        if n == 1 { "" } else { "s" }
    ));
    out
}

fn cards(out: &mut String, inv: &ClusterInventory) {
    let s = &inv.spec;
    let driver = match &s.provider {
        Some(p) => format!("{} · {}", esc(&s.kind), esc(p)),
        None => esc(&s.kind),
    };
    let hash: String = s.spec_hash.chars().take(12).collect();
    let cards = [
        (
            "Kubernetes",
            s.kubernetes_version.as_deref().map_or("—".into(), esc),
            "",
        ),
        ("Driver", driver, ""),
        ("lok8s", esc(&s.lok8s_version), ""),
        ("Addons", s.addons.len().to_string(), ""),
        (
            "specHash",
            format!("<span class=\"mono\">{}…</span>", esc(&hash)),
            " small",
        ),
        ("Rendered", esc(&when(&s.rendered_at)), " small"),
    ];
    out.push_str("<section class=\"cards\">\n");
    for (k, v, class) in cards {
        out.push_str(&format!(
            "<div class=\"card\"><div class=\"k\">{k}</div><div class=\"v{class}\">{v}</div></div>\n"
        ));
    }
    out.push_str("</section>\n");
}

/// The current addons, with the date their current version arrived.
fn inventory(out: &mut String, trail: &Trail, inv: &ClusterInventory) {
    out.push_str("<section>\n<h2>Current inventory</h2>\n");
    if inv.spec.addons.is_empty() {
        out.push_str("<p class=\"muted\">No addons.</p>\n</section>\n");
        return;
    }
    // In a box that scrolls under its sticky header row and addon column.
    out.push_str("<div class=\"scroll\">\n<table>\n<thead><tr><th>Addon</th><th>Version</th><th>Category</th><th>Source</th><th>Current version since</th></tr></thead>\n<tbody>\n");
    // A date alone cannot tell apart two steps of one day: then the time too.
    let mut days: Vec<String> = trail.entries.iter().map(|e| day(&e.at)).collect();
    days.sort_unstable();
    let shared_day = days.windows(2).any(|w| w[0] == w[1]);
    let stamp = |at: &str| if shared_day { when(at) } else { day(at) };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for a in &inv.spec.addons {
        let k = seen.entry(a.name.as_str()).or_insert(0);
        *k += 1;
        let key = if *k > 1 {
            format!("{}#{k}", a.name)
        } else {
            a.name.clone()
        };
        let since = trail
            .lane(&key)
            .and_then(|l| l.spans.last())
            .filter(|s| s.until.is_none() && s.version == a.chart_version)
            .map(|s| {
                format!(
                    "{} <span class=\"muted\">({})</span>",
                    esc(&stamp(&s.since)),
                    esc(&s.since_id)
                )
            });
        let cell = |v: &Option<String>| match v {
            Some(v) => format!("<td>{}</td>", esc(v)),
            None => "<td class=\"none\">—</td>".into(),
        };
        let source = match a.source {
            Some(s) => format!("<span class=\"pill {0}\">{0}</span>", s.as_str()),
            None => "—".into(),
        };
        out.push_str(&format!(
            "<tr><td><code>{}</code></td>{}{}<td>{source}</td><td>{}</td></tr>\n",
            esc(&key),
            cell(&a.chart_version),
            cell(&a.category),
            since.unwrap_or_else(|| "—".into())
        ));
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// Step outcomes and their marker colours.
const OUTCOMES: [(&str, &str); 4] = [
    ("applied", "#1a7f37"),
    ("pending", "#bf8700"),
    ("committed", "#0969da"),
    ("superseded", "#8c959f"),
];

fn outcome_colour(outcome: &str) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(o, _)| *o == outcome)
        .map_or("#8c959f", |(_, c)| c)
}

/// Maps steps to x positions: by time when every step has an RFC 3339 time in order,
/// else evenly by position.
struct Scale {
    /// Position of each step (by id and time text), in seconds or in step numbers.
    at: HashMap<(String, String), f64>,
    t0: f64,
    /// The newest step.
    last: f64,
    /// The right edge: after the newest step, wide enough to show current versions.
    t1: f64,
    by_time: bool,
    /// Width of the lane-label column.
    label: f64,
}

impl Scale {
    fn new(trail: &Trail) -> Scale {
        let chrono_order: Vec<&Entry> = trail.entries.iter().rev().collect();
        let times: Option<Vec<f64>> = chrono_order
            .iter()
            .map(|e| time::parse_rfc3339(&e.at).map(|t| t.as_second() as f64))
            .collect();
        let by_time = times
            .as_ref()
            .is_some_and(|t| t.windows(2).all(|w| w[0] <= w[1]));
        let pos: Vec<f64> = match times.filter(|_| by_time) {
            Some(t) => t,
            None => (0..chrono_order.len()).map(|i| i as f64).collect(),
        };
        let t0 = pos.first().copied().unwrap_or(0.0);
        let last = pos.last().copied().unwrap_or(1.0);
        // The axis is scaled to the span of the history (minutes or years alike); the
        // current versions get about an eighth of the width after the newest step.
        let pad = if by_time {
            ((last - t0) / 7.0).max(60.0)
        } else {
            ((last - t0) / 7.0).max(0.8)
        };
        let longest = trail
            .timeline
            .lanes
            .iter()
            .map(|l| l.key.chars().count().min(LABEL_CHARS))
            .max()
            .unwrap_or(0)
            .max("Kubernetes".len());
        let label = (longest as f64 * LABEL_CHAR + 24.0).clamp(LABEL_MIN, LABEL_MAX);
        let at = chrono_order
            .iter()
            .zip(&pos)
            .map(|(e, p)| ((e.id.clone(), e.at.clone()), *p))
            .collect();
        Scale {
            at,
            t0,
            last,
            t1: last + pad,
            by_time,
            label,
        }
    }

    fn x(&self, t: f64) -> f64 {
        let span = (self.t1 - self.t0).max(f64::EPSILON);
        self.label + (t - self.t0) / span * (WIDTH - self.label - RIGHT)
    }

    fn step(&self, id: &str, at: &str) -> f64 {
        self.at
            .get(&(id.to_string(), at.to_string()))
            .copied()
            .unwrap_or(self.t0)
    }

    /// Axis ticks: `(position, label)`, at most about eight.
    fn ticks(&self) -> Vec<(f64, String)> {
        if !self.by_time {
            let n = (self.t1 - self.t0).ceil() as usize;
            let every = n.div_ceil(8).max(1);
            return (0..n)
                .step_by(every)
                .map(|i| (self.t0 + i as f64, format!("#{}", i + 1)))
                .collect();
        }
        let Ok(start) = jiff::Timestamp::from_second(self.t0 as i64).map(time::utc) else {
            return Vec::new();
        };
        let span = self.t1 - self.t0;
        // Under two days: ticks at round seconds, minutes or hours of the UTC clock.
        const CLOCK: [f64; 17] = [
            1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0,
            7200.0, 10_800.0, 21_600.0, 43_200.0,
        ];
        if let Some(k) = CLOCK.iter().find(|k| span / **k <= 8.0) {
            let mut t = (self.t0 / k).floor() * k + k;
            let mut ticks = Vec::new();
            let mut day = None;
            while t <= self.t1 && ticks.len() < 12 {
                let Ok(at) = jiff::Timestamp::from_second(t as i64).map(time::utc) else {
                    break;
                };
                let clock = if *k < 60.0 { "%H:%M:%S" } else { "%H:%M" };
                // The date on the first tick and where the day changes.
                let label = if day == Some(at.date()) {
                    at.strftime(clock).to_string()
                } else {
                    at.strftime(&format!("%b %-d {clock}")).to_string()
                };
                day = Some(at.date());
                ticks.push((t, label));
                t += k;
            }
            return ticks;
        }
        let days = span / 86_400.0;
        let day_steps = [1u32, 2, 7, 14];
        if let Some(k) = day_steps.iter().find(|k| days / f64::from(**k) <= 8.0) {
            let first = start.date().tomorrow().unwrap_or(start.date());
            return (0..)
                .map_while(|i| {
                    first
                        .checked_add(jiff::Span::new().days(i64::from(*k) * i))
                        .ok()
                })
                .map(|d| (secs(d), d.strftime("%b %-d").to_string()))
                .take_while(|(t, _)| *t <= self.t1)
                .collect();
        }
        let months = days / 30.4;
        let k = [1i8, 2, 3, 6, 12, 24, 60]
            .into_iter()
            .find(|k| months / f64::from(*k) <= 8.0)
            .unwrap_or(120);
        let mut ticks = Vec::new();
        let (mut y, mut m) = (start.year(), start.month());
        for _ in 0..200 {
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
            if (m - 1) % k != 0 {
                continue;
            }
            let Ok(d) = Date::new(y, m, 1) else {
                break;
            };
            let t = secs(d);
            if t > self.t1 {
                break;
            }
            ticks.push((t, d.strftime("%b %Y").to_string()));
        }
        ticks
    }
}

fn secs(d: Date) -> f64 {
    jiff::tz::Offset::UTC
        .to_timestamp(d.to_datetime(jiff::civil::Time::midnight()))
        .map_or(0.0, |t| t.as_second() as f64)
}

/// The swimlane chart.
fn chart(trail: &Trail) -> String {
    let scale = Scale::new(trail);
    let lanes = &trail.timeline.lanes;
    let height = AXIS + ROW * lanes.len() as f64 + 6.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"Versions of Kubernetes and each addon over time\">\n"
    );
    let bottom = height - 4.0;
    // Lane backgrounds.
    for (i, _) in lanes.iter().enumerate() {
        if i % 2 == 0 {
            svg.push_str(&format!(
                "<rect x=\"0\" y=\"{:.1}\" width=\"{WIDTH}\" height=\"{ROW}\" fill=\"#f6f8fa\"/>\n",
                AXIS + ROW * i as f64
            ));
        }
    }
    // Grid and tick labels.
    for (t, label) in scale.ticks() {
        let x = scale.x(t);
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{AXIS}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" stroke=\"#d8dee4\" stroke-dasharray=\"3 3\"/>\n<text class=\"tick\" x=\"{x:.1}\" y=\"16\" text-anchor=\"middle\">{}</text>\n",
            esc(&label)
        ));
    }
    svg.push_str(&format!(
        "<line x1=\"{:.1}\" y1=\"{AXIS}\" x2=\"{:.1}\" y2=\"{AXIS}\" stroke=\"#afb8c1\"/>\n",
        scale.label,
        WIDTH - RIGHT
    ));
    // The newest step: right of it is what is in place now.
    let now = scale.x(scale.last);
    svg.push_str(&format!(
        "<line x1=\"{now:.1}\" y1=\"{AXIS}\" x2=\"{now:.1}\" y2=\"{bottom:.1}\" stroke=\"#57606a\" stroke-dasharray=\"5 3\"/>\n<text class=\"tick now\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">current</text>\n",
        (now + scale.x(scale.t1)) / 2.0,
        AXIS - 4.0
    ));
    // Step marks on the axis, oldest first.
    for e in trail.entries.iter().rev() {
        let x = scale.x(scale.step(&e.id, &e.at));
        svg.push_str(&format!(
            "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\"><title>{} · {} · {}</title></circle>\n",
            AXIS - 7.0,
            outcome_colour(&e.outcome),
            esc(&e.id),
            esc(&when(&e.at)),
            esc(&e.outcome)
        ));
    }
    for (i, lane) in lanes.iter().enumerate() {
        lane_row(&mut svg, &scale, lane, AXIS + ROW * i as f64);
    }
    svg.push_str("</svg>\n");
    svg
}

fn lane_row(svg: &mut String, scale: &Scale, lane: &Lane, top: f64) {
    let (name, class) = match lane.kind {
        LaneKind::Kubernetes => ("Kubernetes".to_string(), "lane k8s"),
        LaneKind::Addon if lane.current => (lane.key.clone(), "lane"),
        LaneKind::Addon => (lane.key.clone(), "lane gone"),
    };
    let shown: String = if name.chars().count() > LABEL_CHARS {
        name.chars().take(LABEL_CHARS - 1).collect::<String>() + "…"
    } else {
        name.clone()
    };
    let tip = match (&lane.category, lane.current) {
        (Some(c), true) => format!("{name} ({c})"),
        (Some(c), false) => format!("{name} ({c}), removed"),
        (None, true) => name.clone(),
        (None, false) => format!("{name}, removed"),
    };
    svg.push_str(&format!(
        "<text class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
        scale.label - 12.0,
        top + ROW / 2.0 + 4.5,
        esc(&tip),
        esc(&shown)
    ));
    let mut colours: Vec<Option<&str>> = Vec::new();
    for span in &lane.spans {
        let v = span.version.as_deref();
        if !colours.contains(&v) {
            colours.push(v);
        }
        let index = colours.iter().position(|c| *c == v).unwrap_or(0);
        segment(svg, scale, &name, span, index, top);
    }
}

fn segment(svg: &mut String, scale: &Scale, name: &str, span: &Span, index: usize, top: f64) {
    let x1 = scale.x(scale.step(&span.since_id, &span.since));
    let x2 = match (&span.until_id, &span.until) {
        (Some(id), Some(at)) => scale.x(scale.step(id, at)),
        _ => scale.x(scale.t1),
    };
    let width = (x2 - x1 - 2.0).max(6.0);
    let y = top + (ROW - BAR) / 2.0;
    let (fill, text_class) = match &span.version {
        Some(_) => (PALETTE[index % PALETTE.len()], "ver"),
        None => ("#d0d7de", "ver dark"),
    };
    let version = span.version.as_deref().unwrap_or("no version");
    let until = match &span.until {
        Some(at) => when(at),
        None => "now (current)".into(),
    };
    let arrival = match span.arrival {
        Op::Added => "added",
        Op::Upgraded => "upgrade",
        Op::Downgraded => "downgrade",
        _ => "changed",
    };
    svg.push_str(&format!(
        "<g><title>{} {} · {} → {} ({arrival})</title><rect x=\"{x1:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{BAR}\" rx=\"4\" fill=\"{fill}\"/>",
        esc(name),
        esc(version),
        esc(&when(&span.since)),
        esc(&until)
    ));
    // The label only where it fits (about 6.6 units per character at 11px).
    let label = one_line(version);
    if width >= label.chars().count() as f64 * 6.6 + 10.0 {
        svg.push_str(&format!(
            "<text class=\"{text_class}\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x1 + 6.0,
            y + BAR / 2.0 + 4.0,
            esc(&label)
        ));
    }
    svg.push_str("</g>\n");
}

/// The change list of the trail's entries, of `steps` recorded steps in all.
fn changes(out: &mut String, trail: &Trail, steps: usize) {
    let total: usize = trail
        .entries
        .iter()
        .filter(|e| !e.initial)
        .map(|e| e.changes.len())
        .sum();
    let shown = trail.entries.len();
    let scope = match steps > shown {
        true => format!(
            "in the newest {shown} steps, newest first; the {} older steps are not listed",
            steps - shown
        ),
        false => "after the first step, newest first".to_string(),
    };
    out.push_str(&format!(
        "<section>\n<h2>Changes</h2>\n<p class=\"muted\">{total} change{} {scope}.</p>\n<ol class=\"steps\">\n",
        if total == 1 { "" } else { "s" }
    ));
    for e in &trail.entries {
        let badge = if OUTCOMES.iter().any(|(o, _)| *o == e.outcome) {
            e.outcome.as_str()
        } else {
            "other"
        };
        out.push_str(&format!(
            "<li class=\"step\"><div class=\"when\"><time datetime=\"{}\">{}</time>step <span class=\"mono\">{}</span><span class=\"badge {badge}\">{}</span>{}</div>\n<ul class=\"changes\">\n",
            esc(&e.at),
            esc(&when(&e.at)),
            esc(&e.id),
            esc(&e.outcome),
            if e.initial { " <span class=\"muted\">first</span>" } else { "" }
        ));
        if e.changes.is_empty() {
            out.push_str(&format!(
                "<li class=\"none\">{}</li>\n",
                super::phrase::NO_CHANGES
            ));
        }
        for c in &e.changes {
            change_line(out, c);
        }
        if !e.ignored.is_empty() {
            out.push_str(&format!(
                "<li class=\"none\">{} ignored</li>\n",
                e.ignored.len()
            ));
        }
        out.push_str("</ul></li>\n");
    }
    out.push_str("</ol>\n</section>\n");
}

/// One change of a step, as a line of the change list.
fn change_line(out: &mut String, c: &crate::history::diff::Change) {
    let p = Phrase::of(c);
    let (class, sign) = match c.change {
        Op::Added => ("add", "+"),
        Op::Removed => ("del", "−"),
        Op::Upgraded => ("up", "↑"),
        Op::Downgraded => ("down", "↓"),
        Op::Changed => ("chg", "~"),
    };
    let detail = match p.sign {
        '+' => {
            let mut d = p.to.as_deref().map(esc).unwrap_or_default();
            if let Some(q) = &p.qualifier {
                d.push_str(&format!(" <span class=\"note\">{}</span>", esc(q)));
            }
            d
        }
        '-' => p.from.as_deref().map(esc).unwrap_or_default(),
        _ => {
            let mut d = String::new();
            if let Some(a) = p.attribute {
                d.push_str(&format!("{a} "));
            }
            d.push_str(&format!(
                "{} → {}",
                esc(super::phrase::or_none(&p.from)),
                esc(super::phrase::or_none(&p.to))
            ));
            if let Some(n) = p.note {
                d.push_str(&format!(" <span class=\"note\">{n}</span>"));
            }
            d
        }
    };
    out.push_str(&format!(
        "<li class=\"{class}\"><span class=\"sign\">{sign}</span> <code>{}</code> {detail}</li>\n",
        esc(&p.subject)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped() {
        assert_eq!(esc("<b a=\"x\">&'"), "&lt;b a=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(esc("a\u{1b}b"), "a\\u{1b}b");
    }

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(when("2026-02-23T12:11:11+01:00"), "2026-02-23 11:11:11 UTC");
        assert_eq!(when("not a time"), "not a time");
        assert_eq!(day("2026-02-23T11:11:11Z"), "2026-02-23");
    }

    #[test]
    fn an_empty_trail_still_renders_a_page() {
        let trail = crate::history::audit::trail(&[], &Default::default());
        let inv = crate::inventory::parse::inventory_from_text(
            "apiVersion: lok8s.dev/v1alpha1\nkind: ClusterInventory\nmetadata: {name: cluster}\nspec: {lok8sVersion: '1', kind: lo, specHash: h, renderedAt: x}\n",
        )
        .unwrap();
        let generated = Generated {
            at: "2026-12-03T10:00:00Z",
            version: "<v>",
        };
        let page = html_report("<d>", &trail, &inv, &generated);
        assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
        assert!(page.contains("No history recorded.") && page.contains("&lt;d&gt;"));
        assert!(!page.contains("<d>") && !page.contains("<v>"));
        assert!(
            page.contains("2026-12-03 10:00:00 UTC"),
            "the footer dates the page"
        );
    }
}
