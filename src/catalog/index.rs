//! The published addon index (spec §10): built, encoded and read back.
//!
//! The published addon index (spec §10): built from a project's `.lok8s/addons/*`
//! directories, encoded as lok8s's bash script does, and read back (from a file, a
//! download or the cache) by `updates` and `agent`.
//!
//! Building reuses the inventory's readers ([`Reader::chart_version`],
//! [`Reader::category`]), so an addon's pins in the index and in a rendered inventory
//! can never disagree.

use crate::error::{Error, Result};
use crate::inventory::{self, Warning};
use crate::project::Project;
use crate::project::addons::{MetaIssue, Reader};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// Largest index clinv reads (file, download or cache). The real one is a few KiB.
pub const MAX_INDEX_BYTES: u64 = 8 << 20;

/// The index document. Field order is the encoding order: `generatedAt`, `addons`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddonIndex {
    pub generated_at: String,
    pub addons: Vec<IndexEntry>,
}

/// One addon. Keys in order `name`, `chartVersion`, `category`, `appVersion`; the last
/// three are omitted when unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Part of the contract, appended after lok8s's keys (as in the CRD's addon schema);
    /// present only when the pin's `chart.yaml` has an `appVersion`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
}

/// An index built from a project, with the warnings met on the way.
#[derive(Debug)]
pub struct Built {
    pub index: AddonIndex,
    pub warnings: Vec<Warning>,
}

/// Lists the addon directories of `project` (non-hidden entries of `.lok8s/addons` that
/// are directories or symlinks to directories) and reads their pins.
///
/// # Errors
/// [`Error::NoAddonsDir`] when `.lok8s/addons` is not a directory; I/O errors listing it.
pub fn build(project: &Project, generated_at: &str) -> Result<Built> {
    let dir = project.addons_dir();
    if !dir.is_dir() {
        return Err(Error::NoAddonsDir(dir));
    }
    let mut warnings = Vec::new();
    let mut names = Vec::new();
    for item in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
        let item = item.map_err(|e| Error::io(&dir, e))?;
        let Ok(name) = item.file_name().into_string() else {
            warnings.push(Warning {
                message: format!(
                    "index: skipping {} (the name is not UTF-8)",
                    item.path().display()
                ),
                detail: None,
            });
            continue;
        };
        // `is_dir` follows symlinks: a link to a directory counts, a plain file or a
        // dangling link does not.
        if !name.starts_with('.') && item.path().is_dir() {
            names.push(name);
        }
    }
    names.sort();
    let root = project.root().canonicalize().ok();
    let mut reader = Reader::new(project.root());
    let mut addons = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(&name);
        // Read a symlinked directory at its target (as bash's `grep -r DIR` does), but
        // only when that target is inside the project.
        let real = path.canonicalize().ok();
        let inside = matches!((&real, &root), (Some(r), Some(root)) if r.starts_with(root));
        if !inside {
            reader.issues.push(MetaIssue::OutsideRoot(path));
            addons.push(IndexEntry {
                name,
                chart_version: None,
                category: None,
                app_version: None,
            });
            continue;
        }
        let at = real.as_deref().unwrap_or(&path);
        addons.push(IndexEntry {
            chart_version: reader.chart_version(at),
            category: reader.category(at),
            app_version: reader.app_version(at),
            name,
        });
    }
    for issue in reader.issues {
        warnings.push(Warning {
            message: meta_issue(&issue),
            detail: None,
        });
    }
    Ok(Built {
        index: AddonIndex {
            generated_at: generated_at.to_string(),
            addons,
        },
        warnings,
    })
}

/// Pretty JSON with 2-space indentation and one trailing newline (jq's layout).
///
/// # Errors
/// Serialisation failures (not expected for this type).
pub fn encode(index: &AddonIndex) -> Result<String> {
    let mut text =
        serde_json::to_string_pretty(index).map_err(|e| Error::encode("the index", e))?;
    text.push('\n');
    Ok(text)
}

/// Where `generatedAt` came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeSource {
    SourceDateEpoch,
    /// The last commit touching `.lok8s/addons` (hex id).
    Commit(String),
    Now,
}

/// `generatedAt`: `SOURCE_DATE_EPOCH` when set and non-empty (the inventory's parsing
/// rule), else the committer time of `last_commit` (seconds), else `now`.
///
/// # Errors
/// A time outside years 0000–9999.
pub fn generated_at(
    source_date_epoch: Option<&str>,
    last_commit: Option<(i64, String)>,
    now: jiff::Timestamp,
) -> Result<(String, TimeSource)> {
    if source_date_epoch.is_some_and(|s| !s.is_empty()) {
        let t = inventory::rendered_at(source_date_epoch, now)?;
        return Ok((inventory::format_time(t), TimeSource::SourceDateEpoch));
    }
    if let Some((secs, commit)) = last_commit {
        let t = inventory::rendered_at(Some(&secs.to_string()), now)?;
        return Ok((inventory::format_time(t), TimeSource::Commit(commit)));
    }
    Ok((inventory::format_time(now), TimeSource::Now))
}

/// Reads an index document. Unknown keys are ignored (forward compatibility); a key of
/// the contract with the wrong type is an error naming `origin` and the field.
///
/// # Errors
/// [`Error::InvalidIndex`].
pub fn parse(bytes: &[u8], origin: &str) -> Result<AddonIndex> {
    let bad = |message: String| Error::InvalidIndex {
        origin: origin.to_string(),
        message,
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("not a JSON addon index: {e}")))?;
    let Value::Object(top) = &value else {
        return Err(bad(format!(
            "not a JSON addon index: the top level is {}, not an object",
            kind(&value)
        )));
    };
    let generated_at = match top.get("generatedAt") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(bad(format!(
                "generatedAt: expected a string, found {}",
                kind(other)
            )));
        }
    };
    let items = match top.get("addons") {
        Some(Value::Array(items)) => items,
        None => return Err(bad("addons: missing (not an addon index?)".into())),
        Some(other) => {
            return Err(bad(format!(
                "addons: expected an array, found {}",
                kind(other)
            )));
        }
    };
    let mut addons = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(entry) = item else {
            return Err(bad(format!(
                "addons[{i}]: expected an object, found {}",
                kind(item)
            )));
        };
        let field = |key: &str| -> Result<Option<String>> {
            match entry.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(bad(format!(
                    "addons[{i}].{key}: expected a string, found {}",
                    kind(other)
                ))),
            }
        };
        let Some(name) = field("name")? else {
            return Err(bad(format!("addons[{i}].name: missing or empty")));
        };
        addons.push(IndexEntry {
            name,
            chart_version: field("chartVersion")?,
            category: field("category")?,
            app_version: field("appVersion")?,
        });
    }
    Ok(AddonIndex {
        generated_at,
        addons,
    })
}

/// A JSON value's type, for messages (never its content).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads an index file from disk (bounded).
///
/// # Errors
/// I/O errors naming the file, or [`Error::InvalidIndex`].
pub fn read_file(path: &Path) -> Result<AddonIndex> {
    let bytes =
        crate::util::files::read_bounded(path, MAX_INDEX_BYTES).map_err(|e| Error::io(path, e))?;
    parse(&bytes, &path.display().to_string())
}

/// What reading an entry's metadata ran into, as the index says it (it reads nothing
/// through a link that leaves the root).
fn meta_issue(issue: &MetaIssue) -> String {
    issue.warning(
        "index",
        "its chartVersion/category are not read",
        "its chartVersion is omitted",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_issues_are_said_as_the_index_says_them() {
        assert_eq!(
            MetaIssue::each().map(|i| meta_issue(&i)),
            [
                "index: addons/x resolves outside the project root; its chartVersion/category are not read",
                "index: stopped searching addons/x for lok8s.dev/category (too many files)",
                "index: addons/x: not YAML; its chartVersion is omitted",
            ]
        );
    }

    #[test]
    fn encodes_like_the_bash_script() {
        let index = AddonIndex {
            generated_at: "2023-11-14T22:13:20Z".into(),
            addons: vec![
                IndexEntry {
                    name: "cert-manager".into(),
                    chart_version: Some("v1.21.1".into()),
                    category: Some("infrastructure".into()),
                    app_version: None,
                },
                IndexEntry {
                    name: "raw-one".into(),
                    chart_version: None,
                    category: None,
                    app_version: None,
                },
            ],
        };
        assert_eq!(
            encode(&index).unwrap(),
            "{\n  \"generatedAt\": \"2023-11-14T22:13:20Z\",\n  \"addons\": [\n    {\n      \"name\": \"cert-manager\",\n      \"chartVersion\": \"v1.21.1\",\n      \"category\": \"infrastructure\"\n    },\n    {\n      \"name\": \"raw-one\"\n    }\n  ]\n}\n"
        );
        let empty = AddonIndex {
            generated_at: "x".into(),
            addons: vec![],
        };
        assert_eq!(
            encode(&empty).unwrap(),
            "{\n  \"generatedAt\": \"x\",\n  \"addons\": []\n}\n"
        );
        assert_eq!(
            parse(encode(&index).unwrap().as_bytes(), "t").unwrap(),
            index
        );
    }

    #[test]
    fn malformed_indexes_name_the_field() {
        let err = |text: &str| parse(text.as_bytes(), "idx.json").unwrap_err().to_string();
        assert!(err("").starts_with("idx.json: not a JSON addon index: "));
        assert_eq!(
            err("[]"),
            "idx.json: not a JSON addon index: the top level is an array, not an object"
        );
        assert_eq!(err("{}"), "idx.json: addons: missing (not an addon index?)");
        assert_eq!(
            err(r#"{"addons": {}}"#),
            "idx.json: addons: expected an array, found an object"
        );
        assert_eq!(
            err(r#"{"addons": [{"name": "a"}, 3]}"#),
            "idx.json: addons[1]: expected an object, found a number"
        );
        assert_eq!(
            err(r#"{"addons": [{"name": "a", "chartVersion": 1.2}]}"#),
            "idx.json: addons[0].chartVersion: expected a string, found a number"
        );
        assert_eq!(
            err(r#"{"addons": [{"chartVersion": "1"}]}"#),
            "idx.json: addons[0].name: missing or empty"
        );
        assert_eq!(
            err(r#"{"generatedAt": 5, "addons": []}"#),
            "idx.json: generatedAt: expected a string, found a number"
        );
        let ok = parse(
            br#"{"addons": [{"name": "a", "chartVersion": null, "extra": {"x": 1}}], "more": 1}"#,
            "t",
        )
        .unwrap();
        assert_eq!(ok.addons[0].chart_version, None);
        assert_eq!(ok.generated_at, "");
    }

    #[test]
    fn generated_at_precedence() {
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let commit = Some((1_600_000_000, "abc".to_string()));
        assert_eq!(
            generated_at(Some("1700000000"), commit.clone(), now).unwrap(),
            ("2023-11-14T22:13:20Z".into(), TimeSource::SourceDateEpoch)
        );
        assert_eq!(
            generated_at(Some(""), commit.clone(), now).unwrap(),
            (
                "2020-09-13T12:26:40Z".into(),
                TimeSource::Commit("abc".into())
            )
        );
        assert_eq!(
            generated_at(None, None, now).unwrap(),
            ("2027-01-15T08:00:00Z".into(), TimeSource::Now)
        );
    }
}
