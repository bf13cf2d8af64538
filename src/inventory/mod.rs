//! The `ClusterInventory` object (spec §5) and its build from a project.
//!
//! Field order in these types is the serialisation order lok8s uses; optional fields
//! are omitted when empty. Nothing but metadata is ever carried: values, value files and
//! env never reach this model.

pub mod crd;
pub mod parse;
pub mod render;

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::project::addons::{Facts, MetaIssue, Reader};
use crate::project::bootstrap::Source;
use crate::project::spec::{self, ClusterSpec};
use crate::project::typos::Typo;
use crate::project::{DomainKind, Project};
use jiff::Timestamp;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub const API_VERSION: &str = "lok8s.dev/v1alpha1";
pub const KIND: &str = "ClusterInventory";
pub const NAME: &str = "cluster";
pub const DOMAIN_LABEL: &str = "lok8s.dev/domain";

/// The custom resource, exactly as lok8s writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInventory {
    pub api_version: String,
    pub kind: String,
    pub metadata: Metadata,
    pub spec: InventorySpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    pub name: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// `spec`: `lok8sVersion`, `kind`, `specHash`, `renderedAt`, `addons`, then the two
/// optional keys after `addons`, as lok8s orders them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InventorySpec {
    pub lok8s_version: String,
    pub kind: String,
    pub spec_hash: String,
    pub rendered_at: String,
    #[serde(default)]
    pub addons: Vec<Addon>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
}

/// One resolved `spec.bootstrap` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Addon {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// In the schema, never written by lok8s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
}

/// A warning met during the build; printed as `[warn] <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub message: String,
    /// Extra detail for `-v`, never carrying entry values.
    pub detail: Option<String>,
}

/// A built inventory and the warnings met on the way.
#[derive(Debug)]
pub struct Built {
    pub inventory: ClusterInventory,
    pub warnings: Vec<Warning>,
    /// The spec's `metadata.name`, used to find lok8s's kubeconfig.
    pub cluster_name: Option<String>,
}

/// What a domain yields.
#[derive(Debug)]
pub enum Loaded {
    /// A cluster domain and its inventory.
    Cluster(Box<Built>),
    /// A deploy domain: no inventory of its own.
    Deploy { cluster_ref: Option<String> },
}

/// Builds the inventory of `domain`, or says that it is a deploy domain.
///
/// # Errors
/// As [`build`]; a domain with neither spec is [`Error::SpecNotFound`].
pub fn load(project: &Project, domain: &Domain, rendered_at: Timestamp) -> Result<Loaded> {
    match project.domain_kind(domain) {
        DomainKind::Cluster { spec } => {
            build(project, domain, &spec, rendered_at).map(|b| Loaded::Cluster(Box::new(b)))
        }
        DomainKind::Deploy { cluster_ref, .. } => Ok(Loaded::Deploy { cluster_ref }),
        DomainKind::Missing { spec } => Err(Error::SpecNotFound(spec)),
    }
}

/// Builds the inventory of a cluster domain whose spec is at `spec_path`.
///
/// # Errors
/// The spec is missing, unreadable, not YAML, or declares a malformed kind; the
/// project's VERSION file is unreadable.
pub fn build(
    project: &Project,
    domain: &str,
    spec_path: &Path,
    rendered_at: Timestamp,
) -> Result<Built> {
    let spec = spec::read(spec_path, project.root(), domain)?;
    let lok8s_version = project.lok8s_version()?;
    assemble(project, domain, spec, lok8s_version, rendered_at)
}

/// Turns an interpreted spec into the inventory: reads each entry's metadata below the
/// project root and collects the warnings. [`build`] after reading the files.
///
/// # Errors
/// [`Error::Invalid`] for more than [`crd::MAX_ADDONS`] addons, which the API server
/// refuses anyway: before reading their metadata and building them (and their JSON,
/// ~400 bytes an addon). Unparseable entries are left out, as lok8s does: they do not count.
pub fn assemble(
    project: &Project,
    domain: &str,
    spec: ClusterSpec,
    lok8s_version: String,
    rendered_at: Timestamp,
) -> Result<Built> {
    let count = spec.entries.iter().filter(|e| e.is_ok()).count();
    if count > crd::MAX_ADDONS {
        return Err(Error::Invalid(vec![crd::too_many_addons(count)]));
    }
    let mut warnings = Vec::new();
    if spec.not_a_mapping {
        warnings.push(Warning {
            message: format!(
                "inventory: cluster spec is not a mapping: {} (read as lok8s does: kind lo, no spec, so the default addon cilium)",
                spec.path.display()
            ),
            detail: None,
        });
    }
    warnings.extend(spec.typos.iter().map(|t| typo_warning(&spec.path, t)));
    let addons = addons_of(project, &spec, &mut warnings);
    let inventory = ClusterInventory {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        metadata: Metadata {
            name: NAME.into(),
            labels: BTreeMap::from([(DOMAIN_LABEL.to_string(), domain.to_string())]),
        },
        spec: InventorySpec {
            lok8s_version,
            kind: spec.kind,
            spec_hash: spec.spec_hash,
            rendered_at: format_time(rendered_at),
            addons,
            provider: spec.provider,
            kubernetes_version: spec.kubernetes_version,
        },
    };
    Ok(Built {
        inventory,
        warnings,
        cluster_name: spec.name,
    })
}

/// The addons of the spec's entries with their chart pins and categories, in order;
/// unparseable entries and metadata that could not be read are warnings.
fn addons_of(project: &Project, spec: &ClusterSpec, warnings: &mut Vec<Warning>) -> Vec<Addon> {
    let mut reader = Reader::new(project.root());
    let mut addons = Vec::with_capacity(spec.entries.len());
    for entry in &spec.entries {
        match entry {
            Ok(e) => {
                warnings.extend(missing_directory(&spec.path, e));
                let Facts {
                    chart_version,
                    category,
                } = reader.facts(&e.dir);
                addons.push(Addon {
                    name: e.name.clone(),
                    source: Some(e.source),
                    chart_version,
                    category,
                    app_version: None,
                });
            }
            Err(r) => warnings.push(skipped(r)),
        }
    }
    warnings.extend(reader.issues.into_iter().map(|issue| Warning {
        message: meta_issue(&issue),
        detail: None,
    }));
    addons
}

/// A bootstrap entry the parser rejects: left out of the inventory (and of every view of
/// the domain's addons), said with its key only (its values may hold secrets).
pub fn skipped(r: &crate::project::bootstrap::Rejection) -> Warning {
    Warning {
        message: format!(
            "inventory: skipping unparseable bootstrap entry '{}'",
            r.key
        ),
        detail: Some(r.error.summary()),
    }
}

/// A typo lok8s does not mind, said with what the inventory makes of it.
fn typo_warning(spec: &Path, typo: &Typo) -> Warning {
    let esc = crate::util::redact::escape_line;
    let message = match typo {
        Typo::Kind { raw, suggestion } => format!(
            "inventory: {}: kind '{}' is not a lok8s driver (lo, kubeone, capi, kkp); it is recorded as '{}'{}",
            spec.display(),
            esc(raw),
            esc(&raw.to_lowercase()),
            suggestion
                .map(|s| format!(" — did you mean '{s}'?"))
                .unwrap_or_default()
        ),
        Typo::Key { path, meant, lost } => format!(
            "inventory: {}: {} is not read by lok8s — did you mean '{meant}'? ({lost})",
            spec.display(),
            esc(path)
        ),
    };
    Warning {
        message,
        detail: None,
    }
}

/// What reading an entry's metadata ran into, as lok8s-style warning text.
fn meta_issue(issue: &MetaIssue) -> String {
    issue.warning(
        "inventory",
        "its chartVersion is read through the link as lok8s does (no category)",
        "its chartVersion is omitted (as lok8s does)",
    )
}

/// `YYYY-MM-DDTHH:MM:SSZ`, UTC, no fraction.
pub fn format_time(t: Timestamp) -> String {
    crate::util::time::format_seconds(t)
}

/// The render time: `SOURCE_DATE_EPOCH` when set and non-empty (trimmed, base-10 signed
/// 64-bit, anything unparsable is 0), otherwise `now`.
///
/// # Errors
/// A timestamp outside years 0000–9999, which no `date-time` can carry.
pub fn rendered_at(source_date_epoch: Option<&str>, now: Timestamp) -> Result<Timestamp> {
    let Some(raw) = source_date_epoch.filter(|s| !s.is_empty()) else {
        return Ok(now);
    };
    let secs: i64 = raw.trim().parse().unwrap_or(0);
    Timestamp::from_second(secs)
        .ok()
        .filter(|t| (0..=9999).contains(&crate::util::time::utc(*t).year()))
        .ok_or_else(|| Error::InvalidEnv {
            name: "SOURCE_DATE_EPOCH",
            message: format!("{secs} is outside the years 0000–9999"),
        })
}

/// The warning for a `SOURCE_DATE_EPOCH` that is not a whole number of seconds, if any.
///
/// The warning for a `SOURCE_DATE_EPOCH` that is set but not a whole number of seconds:
/// lok8s renders it as 1970, which makes the new inventory look older than every other
/// (replay's stale guard and commit then refuse it). `None` when it is unset, empty or
/// valid.
pub fn source_date_epoch_warning(source_date_epoch: Option<&str>) -> Option<String> {
    let raw = source_date_epoch.filter(|s| !s.is_empty())?;
    let secs: Result<i64, _> = raw.trim().parse();
    if secs.is_ok() {
        return None;
    }
    Some(format!(
        "SOURCE_DATE_EPOCH {:?} is not a whole number of seconds: renderedAt is 1970-01-01T00:00:00Z (lok8s's rule), older than any other inventory",
        raw.chars().take(40).collect::<String>()
    ))
}

/// A bootstrap entry whose directory does not exist is listed without chartVersion and
/// category, as lok8s lists it; it is usually a typo (`- metrics-servr`), so say so, with
/// the nearest existing name when one is close.
fn missing_directory(
    spec: &std::path::Path,
    e: &crate::project::bootstrap::Entry,
) -> Option<Warning> {
    // A name the CRD refuses anyway (over 253 characters) fails validation instead.
    if e.name.len() > 253 || std::fs::symlink_metadata(&e.dir).is_ok() {
        return None;
    }
    let near = e.dir.parent().and_then(|parent| {
        let wanted = e.dir.file_name()?.to_str()?;
        let names = std::fs::read_dir(parent)
            .ok()?
            .filter_map(|d| d.ok()?.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.'));
        crate::util::suggest::closest(wanted, names)
    });
    let hint = match near {
        Some(n) => format!(" — did you mean '{n}'?"),
        None => String::new(),
    };
    Some(Warning {
        message: format!(
            "inventory: {}: bootstrap entry '{}' names no directory ({} does not exist); it is listed without chartVersion/category{hint}",
            spec.display(),
            crate::util::redact::escape_line(&e.key),
            crate::util::redact::escape_line(&e.dir.display().to_string())
        ),
        detail: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_issues_are_said_as_lok8s_says_them() {
        assert_eq!(
            MetaIssue::each().map(|i| meta_issue(&i)),
            [
                "inventory: addons/x resolves outside the project root; its chartVersion is read through the link as lok8s does (no category)",
                "inventory: stopped searching addons/x for lok8s.dev/category (too many files)",
                "inventory: addons/x: not YAML; its chartVersion is omitted (as lok8s does)",
            ]
        );
    }

    #[test]
    fn an_unparsable_source_date_epoch_is_warned_about() {
        for bad in ["abc", "1700000000.5", "99999999999999999999", "1e9"] {
            let w = source_date_epoch_warning(Some(bad)).unwrap();
            assert!(w.contains("1970-01-01T00:00:00Z"), "{w}");
        }
        for fine in [
            None,
            Some(""),
            Some(" 1700000000\n"),
            Some("-1"),
            Some("+5"),
        ] {
            assert_eq!(source_date_epoch_warning(fine), None);
        }
    }

    fn at(epoch: &str) -> String {
        format_time(rendered_at(Some(epoch), Timestamp::now()).unwrap())
    }

    #[test]
    fn source_date_epoch_rules() {
        for (epoch, want) in [
            ("1700000000", "2023-11-14T22:13:20Z"),
            (" 1700000000\n", "2023-11-14T22:13:20Z"),
            ("+1700000000", "2023-11-14T22:13:20Z"),
            ("-1", "1969-12-31T23:59:59Z"),
            // Not a whole number of seconds, or out of range: the epoch.
            ("abc", "1970-01-01T00:00:00Z"),
            ("1700000000.5", "1970-01-01T00:00:00Z"),
            ("99999999999999999999", "1970-01-01T00:00:00Z"),
        ] {
            assert_eq!(at(epoch), want, "{epoch:?}");
        }
        assert!(rendered_at(Some("9223372036854775807"), Timestamp::now()).is_err());
        let now = Timestamp::now();
        assert_eq!(rendered_at(Some(""), now).unwrap(), now);
        assert_eq!(rendered_at(None, now).unwrap(), now);
    }
}
