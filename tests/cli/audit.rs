//! The audit trail printers and the HTML report on the recorded example history.

use crate::browser;
use crate::history::{self, DOMAIN};
use crate::support::*;
use clinv::history::audit::{self, Trail};
use clinv::history::diff::Ignore;
use clinv::history::report;

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
        text.starts_with("026  2026-02-23T11:11:11Z  applied\n"),
        "{text}"
    );
    assert!(text.contains("001  2025-01-13T09:14:05Z  applied  (initial)\n"));
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
}

fn trail_markdown_golden() {
    let (_, t) = trail();
    let md = report::markdown::trail(&t);
    golden(&format!("audit/{DOMAIN}.trail.md"), &md);
    assert!(md.starts_with("## ClusterInventory history: `prod.acme.example`\n"));
    assert_eq!(md.lines().filter(|l| l.starts_with("| 20")).count(), 26);
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

fn html() -> String {
    let (recorded, t) = trail();
    report::html::html_report(DOMAIN, &t, &recorded.last().unwrap().inventory)
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
    let browser = browser::chromium();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, html()).unwrap();
    let dom = browser.dump_dom(&page);
    for text in [
        "prod.acme.example",
        "Current inventory",
        "Version timeline",
        "Kubernetes",
        "v1.33.1",
        "kube-prometheus-stack",
        "1.17.0-rc.1",
        "superseded",
        "Changes",
    ] {
        assert!(dom.contains(text), "{text} missing from the rendered DOM");
    }
    let png = dir.path().join("report.png");
    browser.screenshot(&page, &png);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(browser::png_size(&bytes), (browser::WIDTH, browser::HEIGHT));
    // A blank page at the same size compresses to a few KB; the report must not.
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let blank_png = dir.path().join("blank.png");
    browser.screenshot(&blank, &blank_png);
    let blank_len = std::fs::metadata(&blank_png).unwrap().len();
    assert!(
        bytes.len() as u64 > 40_000 && bytes.len() as u64 > 8 * blank_len,
        "the screenshot looks blank: {} bytes (blank page: {blank_len})",
        bytes.len()
    );
    if let Some(keep) = std::env::var_os("CLINV_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}

trials! {
    Nothing: [
        trail_text_golden,
        trail_json_golden,
        trail_markdown_golden,
        timelines_of_the_recorded_history,
        html_report_golden_and_self_contained,
    ],
    Chromium: [
        html_report_renders_in_chromium,
    ],
}
