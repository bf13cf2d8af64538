//! Pure rendering: the inventory and the CRD as JSON or YAML text, validated first.
//!
//! `render` writes, `publish` sends and the snapshot store records the same bytes, so all
//! of them call these functions.

use crate::error::{Error, Result};
use crate::inventory::crd;
use crate::inventory::{ClusterInventory, DOMAIN_LABEL};
use serde::Serialize;

/// An output encoding for objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// lok8s's pretty JSON (2-space indent, no HTML escaping) plus one trailing newline.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::encode("JSON", e))?;
    // Go's encoder escapes U+2028/U+2029 even without HTML escaping; they can only occur
    // inside strings, so replacing them keeps the bytes identical to lok8s's.
    if text.contains(['\u{2028}', '\u{2029}']) {
        text = text
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029");
    }
    text.push('\n');
    Ok(text)
}

/// YAML with the same key order as the JSON form.
///
/// # Errors
/// Serialisation failures (not expected for these types).
pub fn to_yaml<T: Serialize>(value: &T) -> Result<String> {
    let value = serde_json::to_value(value).map_err(|e| Error::encode("YAML", e))?;
    Ok(crate::yaml::emit::to_string(&value))
}

/// Encodes `value` in `format`.
///
/// # Errors
/// Serialisation failures.
pub fn encode<T: Serialize>(value: &T, format: Format) -> Result<String> {
    match format {
        Format::Json => to_json(value),
        Format::Yaml => to_yaml(value),
    }
}

/// Checks the inventory against the CRD's constraints and the label rules.
///
/// # Errors
/// [`Error::Invalid`] with one line per violation.
pub fn validate(inventory: &ClusterInventory) -> Result<()> {
    let value = serde_json::to_value(inventory).map_err(|e| Error::encode("JSON", e))?;
    let mut problems = crd::validate(&value, &crd::schema());
    for (key, val) in &inventory.metadata.labels {
        problems.extend(crd::validate_label_value(key, val));
    }
    if !inventory.metadata.labels.contains_key(DOMAIN_LABEL) {
        problems.push(format!("metadata.labels[{DOMAIN_LABEL}]: Required value"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        // Bounded: 100,000 bad entries must not print 100,000 lines.
        const SHOWN: usize = 20;
        if problems.len() > SHOWN {
            let more = problems.len() - SHOWN;
            problems.truncate(SHOWN);
            problems.push(format!("… and {more} more"));
        }
        Err(Error::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_pretty_with_one_newline_and_no_html_escaping() {
        let v = serde_json::json!({"a": ["<&>"], "b": [], "c": "x\u{2028}y"});
        assert_eq!(
            to_json(&v).unwrap(),
            "{\n  \"a\": [\n    \"<&>\"\n  ],\n  \"b\": [],\n  \"c\": \"x\\u2028y\"\n}\n"
        );
    }
}
