//! The audit trail printers and the HTML report on the recorded example history.

use crate::browser;
use crate::history::{self, DOMAIN};
use crate::support::*;
use clinv::history::audit::{self, Trail};
use clinv::history::diff::Ignore;
use clinv::view::report;

fn trail() -> (Vec<history::Recorded>, Trail) {
    let recorded = history::load();
    let trail = audit::trail(&history::steps(&recorded), &Ignore::default());
    (recorded, trail)
}

fn trail_text_golden() {
    let (_, t) = trail();
    let text = report::text::trail(&t, false);
    golden(&format!("audit/{DOMAIN}.trail.txt"), &text);
    // Newest first, like git log.
    assert!(
        text.starts_with("#26  026  2026-02-23T11:11:11Z  applied\n"),
        "{text}"
    );
    // The first step reads like a first install (issue #16 finding 9), not as fields
    // going from "(none)" to their values.
    assert!(text.contains(
        "#1  001  2025-01-13T09:14:05Z  applied  (initial)\n    first recorded inventory: Kubernetes v1.30.6, 7 addons\n    + cilium 1.16.3 (networking)\n"
    ));
    assert!(!text.contains("(none) →"), "{text}");
    assert!(text.contains("    ~ cilium 1.17.0-rc.1 → 1.16.6 (downgrade)\n"));
    assert!(!text.contains('\x1b'));
}

fn trail_json_golden() {
    let (_, t) = trail();
    let json = report::json::trail(&t).unwrap();
    golden(&format!("audit/{DOMAIN}.trail.json"), &json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schemaVersion"], 1);
    assert_eq!(v["kind"], "InventoryAuditTrail");
    assert_eq!(v["entries"].as_array().unwrap().len(), 26);
    assert_eq!(v["entries"][0]["id"], "026");
    // Steps given without revisions are numbered by position, oldest = 1.
    assert_eq!(v["entries"][0]["revision"], 26);
    assert_eq!(v["entries"][25]["revision"], 1);
    assert_eq!(v["entries"][0]["host"], serde_json::Value::Null);
    assert_eq!(v["entries"][0]["author"], serde_json::Value::Null);
}

fn trail_markdown_golden() {
    let (_, t) = trail();
    let md = report::markdown::trail(&t);
    golden(&format!("audit/{DOMAIN}.trail.md"), &md);
    assert!(md.starts_with("## ClusterInventory history: `prod.acme.example`\n"));
    assert!(
        md.contains("\n| Rev | When | Step | By | Outcome | Changes |\n"),
        "{md}"
    );
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| ") && l.contains(" | 20"))
            .count(),
        26
    );
    assert!(
        md.contains("\n| 26 | 2026-02-23T11:11:11Z | `026` |  | applied | "),
        "{md}"
    );
}

fn timelines_of_the_recorded_history() {
    let (recorded, t) = trail();
    let steps = history::steps(&recorded);
    let cilium = audit::addon_timeline(&steps, "cilium");
    let cilium: Vec<(Option<&str>, &str, Option<&str>)> = cilium
        .iter()
        .map(|s| {
            (
                s.version.as_deref(),
                s.arrival.as_str(),
                s.until_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        cilium,
        [
            (Some("1.16.3"), "added", Some("002")),
            (Some("1.16.5"), "upgraded", Some("009")),
            (Some("1.17.0-rc.1"), "upgraded", Some("010")),
            (Some("1.16.6"), "downgraded", Some("017")),
            (Some("1.17.4"), "upgraded", Some("022")),
            (Some("1.18.0"), "upgraded", Some("026")),
            (Some("1.18.2"), "upgraded", None),
        ]
    );
    let k8s = audit::kubernetes_timeline(&steps);
    let k8s: Vec<&str> = k8s.iter().map(|s| s.version.as_deref().unwrap()).collect();
    assert_eq!(
        k8s,
        ["v1.30.6", "v1.31.4", "v1.31.10", "v1.32.3", "v1.33.1"]
    );
    let gone = t.lane("metrics-server").unwrap();
    assert!(!gone.current);
    assert_eq!(gone.spans.last().unwrap().until_id.as_deref(), Some("015"));
    assert_eq!(t.timeline.lanes[0].key, "kubernetes");
}

const GENERATED: report::html::Generated<'static> = report::html::Generated {
    at: "2026-12-03T10:30:00Z",
    version: "0.1.0",
};

fn html() -> String {
    let (recorded, t) = trail();
    report::html::html_report(DOMAIN, &t, &recorded.last().unwrap().inventory, &GENERATED)
}

/// A short history: three steps of the example within five minutes (issue #16: the
/// report must read well on any span, not only on the 26 steps over a year).
fn short_html() -> String {
    let mut recorded = history::load();
    let keep = [0, 9, 25];
    let times = [
        "2026-12-03T10:00:00Z",
        "2026-12-03T10:02:30Z",
        "2026-12-03T10:04:58Z",
    ];
    let mut short: Vec<history::Recorded> = Vec::new();
    for (i, at) in keep.iter().zip(times).rev() {
        let mut r = recorded.swap_remove(*i);
        r.at = at.into();
        short.push(r);
    }
    short.reverse();
    let t = audit::trail(&history::steps(&short), &Ignore::default());
    report::html::html_report(DOMAIN, &t, &short.last().unwrap().inventory, &GENERATED)
}

/// The x positions and widths of the version bars of a page's chart.
fn bars(page: &str) -> Vec<f64> {
    page.split("<rect x=\"")
        .skip(1)
        .filter(|r| r.contains("rx=\"4\""))
        .filter_map(|r| r.split("width=\"").nth(1)?.split('"').next()?.parse().ok())
        .collect()
}

/// The tick labels of a page's time axis.
fn ticks(page: &str) -> Vec<String> {
    page.split("<text class=\"tick\"")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once('<')?.0.to_string()))
        .collect()
}

fn html_report_on_a_short_history_reads_well() {
    let page = short_html();
    golden(&format!("audit/{DOMAIN}.short.report.html"), &page);
    // The axis is scaled to the five minutes: several clock ticks, no lone date.
    let ticks = ticks(&page);
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|t| t.contains(':')), "{ticks:?}");
    assert!(
        ticks[0].starts_with("Dec 3 "),
        "the first tick carries the date: {ticks:?}"
    );
    // No sliver bars: the narrowest is still a readable bar.
    let widths = bars(&page);
    assert!(!widths.is_empty());
    assert!(
        widths.iter().all(|w| *w >= 40.0),
        "bars too thin on a short history: {widths:?}"
    );
    // Times to the second, the current version labelled, the palette explained, the
    // page dated and versioned.
    assert!(page.contains("2026-12-03 10:02:30 UTC"));
    // Every step of this history is of one day: "current version since" has the time.
    assert!(
        page.contains("<td>2026-12-03 10:04:58 UTC <span class=\"muted\">(026)</span></td>"),
        "current version since: a date alone"
    );
    assert!(page.contains(">current</text>"));
    assert!(page.contains("Bar colours only tell the versions of one lane apart"));
    assert!(page.contains("Generated by clinv 0.1.0 on 2026-12-03 10:30:00 UTC"));
}

fn long_addon_names_are_not_cut() {
    let page = html();
    assert!(
        page.contains(">kube-prometheus-stack</text>"),
        "a 21-character name is shown whole"
    );
    assert!(
        !page.contains("…</text>"),
        "no lane label is cut on the example"
    );
}

fn html_report_golden_and_self_contained() {
    let page = html();
    golden(&format!("audit/{DOMAIN}.report.html"), &page);
    // Nothing is fetched: no scripts, external stylesheets, fonts, images or URLs (the
    // SVG namespace is a name, not a request).
    let body = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for needle in [
        "<script", "<link", "@import", "url(", "<img", "src=", "http:", "https:",
    ] {
        assert!(!body.contains(needle), "the report contains {needle}");
    }
    assert!(page.contains("<svg"));
}

fn html_report_renders_in_chromium() {
    screenshot_of(&html(), "report.png");
}

fn short_html_report_renders_in_chromium() {
    screenshot_of(&short_html(), "report-short.png");
}

/// Renders `html` in headless Chromium: the DOM holds the expected text and the
/// screenshot is not blank; `CLINV_KEEP_SCREENSHOTS=DIR` keeps it as `DIR/name`.
fn screenshot_of(html: &str, name: &str) {
    let browser = browser::chromium();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).unwrap();
    let dom = browser.dump_dom(&page);
    for text in [
        "prod.acme.example",
        "Current inventory",
        "Version timeline",
        "Kubernetes",
        "v1.33.1",
        "kube-prometheus-stack",
        "current",
        "Changes",
    ] {
        assert!(dom.contains(text), "{text} missing from the rendered DOM");
    }
    let bytes = browser.screenshot_not_blank(&page, 40_000, name);
    assert_eq!(browser::png_size(&bytes), (browser::WIDTH, browser::HEIGHT));
}

/// Issue 40, item 6: the report's inventory table keeps its header row and its addon
/// column in view (sticky, inside a box that scrolls), as the fleet page does. A probe
/// script, appended to a copy of the page, reads the computed styles in Chromium.
fn report_tables_have_a_sticky_header_and_first_column() {
    let browser = browser::chromium();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("probed.html");
    let probe = r#"<script>
var t = document.querySelector('table');
var out = [getComputedStyle(t.tHead.rows[0].cells[0]).position,
  getComputedStyle(t.tBodies[0].rows[0].cells[0]).position,
  getComputedStyle(t.parentElement).overflowY];
var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = out.join(' ');
document.body.appendChild(pre);
</script>
</body>"#;
    std::fs::write(&page, html().replace("</body>", probe)).unwrap();
    let dom = browser.dump_dom(&page);
    assert!(
        dom.contains("<pre id=\"probe\">sticky sticky auto</pre>"),
        "{}",
        &dom[dom.find("<pre id=\"probe\"").unwrap_or(0)..]
    );
}

trials! {
    Nothing: [
        trail_text_golden,
        trail_json_golden,
        trail_markdown_golden,
        timelines_of_the_recorded_history,
        html_report_golden_and_self_contained,
        html_report_on_a_short_history_reads_well,
        long_addon_names_are_not_cut,
    ],
    Chromium: [
        html_report_renders_in_chromium,
        short_html_report_renders_in_chromium,
        report_tables_have_a_sticky_header_and_first_column,
    ],
}
