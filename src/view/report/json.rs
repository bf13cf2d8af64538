//! `-o json`: the report and the trail as lok8s-style pretty JSON. The shape is the
//! versioned schema in the README (`schemaVersion`); every key is always present.

use crate::error::Result;
use crate::history::audit::{Entry, Timeline, Trail};
use crate::history::diff::Report;
use crate::inventory::render;

/// The `clinv diff -o json` document.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn diff(report: &Report) -> Result<String> {
    render::to_json(report)
}

/// The audit trail document.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn trail(trail: &Trail) -> Result<String> {
    render::to_json(trail)
}

/// The trail document's opening, up to its first entry.
///
/// With [`trail_entry`] per entry (newest first) and [`trail_end`], the bytes of [`trail`]
/// — written as the entries are made, so `log -o json` of a long history never holds them.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn trail_head(domain: Option<&str>) -> Result<String> {
    let domain = render::to_json(&domain)?;
    Ok(format!(
        "{{\n  \"schemaVersion\": {},\n  \"kind\": {},\n  \"domain\": {},\n  \"entries\": [",
        crate::history::diff::SCHEMA_VERSION,
        render::to_json(&crate::history::audit::TRAIL_KIND)?.trim_end(),
        domain.trim_end(),
    ))
}

/// One entry of the trail document, after [`trail_head`] (`first`) or another entry.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn trail_entry(entry: &Entry, first: bool) -> Result<String> {
    let text = render::to_json(entry)?;
    let mut out = String::with_capacity(text.len() * 5 / 4);
    out.push_str(if first { "\n" } else { ",\n" });
    indented(&mut out, &text, "    ");
    Ok(out)
}

/// The end of the trail document: the entries' list closed (`empty`: it had none) and
/// the timeline.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn trail_end(timeline: &Timeline, empty: bool) -> Result<String> {
    let mut out = String::from(if empty { "],\n" } else { "\n  ],\n" });
    out.push_str("  \"timeline\": ");
    let text = render::to_json(timeline)?;
    let mut lines = text.trim_end().split('\n');
    out.push_str(lines.next().unwrap_or_default());
    for line in lines {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out.push_str("\n}\n");
    Ok(out)
}

/// `text`'s lines (pretty JSON: a string never holds a raw newline) each after
/// `indent`, without the final newline.
fn indented(out: &mut String, text: &str, indent: &str) {
    for (i, line) in text.trim_end().split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(indent);
        out.push_str(line);
    }
}
