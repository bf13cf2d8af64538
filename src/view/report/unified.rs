//! `-o unified`: a line diff (`diff -u`) of the two objects' YAML, for readers who want the
//! raw view.
//!
//! Both sides are the inventory model — server-owned metadata and `status` are not part of
//! it — rendered with the same encoder, so only real differences show.
//!
//! `spec.renderedAt` is masked: it is taken out of the body and shown in the `---`/`+++`
//! header lines instead, where `diff -u` puts file times, so a re-render alone yields no
//! hunk. `--ignore` paths are not masked: this is the raw view; the exit code still
//! follows the semantic report.

use super::phrase::one_line;
use crate::error::{Error, Result};
use crate::history::diff::{Endpoint, Report};
use crate::inventory::ClusterInventory;
use crate::inventory::render;

/// Lines of context around each hunk (`diff -u`'s default).
const CONTEXT: usize = 3;

/// The YAML of `inv` without `spec.renderedAt`.
fn body(inv: &ClusterInventory) -> Result<String> {
    let mut value = serde_json::to_value(inv).map_err(|e| Error::encode("the inventory", e))?;
    if let Some(spec) = value.get_mut("spec").and_then(|s| s.as_object_mut()) {
        spec.shift_remove("renderedAt");
    }
    render::to_yaml(&value)
}

fn header(e: &Endpoint, fallback: &str) -> String {
    let name = one_line(e.reference.as_deref().unwrap_or(fallback));
    match &e.rendered_at {
        Some(at) => format!("{name}\t{}", one_line(at)),
        None => name,
    }
}

/// The unified diff of `a` and `b`; empty when their bodies are equal (as `diff -u`).
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn diff(
    report: &Report,
    a: &ClusterInventory,
    b: &ClusterInventory,
    color: bool,
) -> Result<String> {
    let (old, new) = (body(a)?, body(b)?);
    if old == new {
        return Ok(String::new());
    }
    // What each side resolved to, before the `---` line (where `git diff` puts its
    // extended header; `patch` and `git apply` skip it).
    let mut text = format!(
        "clinv diff {} {}\n",
        one_line(report.from.reference.as_deref().unwrap_or("a")),
        one_line(report.to.reference.as_deref().unwrap_or("b"))
    );
    let domains = report.from.domain != report.to.domain;
    for (label, e) in [("from:", &report.from), ("to:  ", &report.to)] {
        text.push_str(&format!(
            "{label} {}\n",
            super::phrase::resolution(e, domains)
        ));
    }
    text.push_str(
        &similar::TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(CONTEXT)
            .header(&header(&report.from, "a"), &header(&report.to, "b"))
            .to_string(),
    );
    if !color {
        return Ok(text);
    }
    Ok(text
        .lines()
        .map(|l| {
            let code = if l.starts_with("---") || l.starts_with("+++") {
                "1"
            } else if l.starts_with('+') {
                "32"
            } else if l.starts_with('-') {
                "31"
            } else if l.starts_with("@@") {
                "36"
            } else {
                return format!("{l}\n");
            };
            format!("\x1b[{code}m{l}\x1b[0m\n")
        })
        .collect())
}
