//! `-o json`: the report and the trail as lok8s-style pretty JSON. The shape is the
//! versioned schema in the README (`schemaVersion`); every key is always present.

use crate::error::Result;
use crate::history::audit::Trail;
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
