//! Semantic diff of two `ClusterInventory` objects. Pure: no I/O, no printing.
//!
//! Addons are matched by name; when a name repeats, the k-th occurrence in one object
//! matches the k-th occurrence in the other. Versions are ordered by
//! [`crate::history::version::compare`]. `renderedAt` and server-owned metadata are not compared
//! at all, so they can never count as a change. Changes matched by an [`Ignore`] path
//! are reported apart, in [`Report::ignored`], and never make [`Report::has_changes`] true.
//!
//! The [`Report`] is the data every printer (text, JSON, Markdown, unified) renders; its
//! JSON form is the versioned schema documented in the README.

#[cfg(test)]
use crate::error::Error;
use crate::error::{ArgumentError, Result};
use crate::history::version::{self, Order};
use crate::inventory::{Addon, ClusterInventory, DOMAIN_LABEL};
use serde::Serialize;
use std::collections::HashMap;

/// Version of the JSON shape of [`Report`] (and of the audit trail). Bumped on any
/// change that could break a consumer: a renamed or removed key, a changed meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// The `kind` of a serialised [`Report`].
pub const REPORT_KIND: &str = "InventoryDiff";

/// What happened to a field or an addon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// An addon entry that only the newer object has.
    Added,
    /// An addon entry that only the older object has.
    Removed,
    /// A version field moved to a higher SemVer version.
    Upgraded,
    /// A version field moved to a lower SemVer version.
    Downgraded,
    /// Any other change: a non-version field, a version that cannot be ordered, a value
    /// that appeared or disappeared.
    Changed,
}

impl Op {
    /// The serde name (a test holds them equal).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Added => "added",
            Op::Removed => "removed",
            Op::Upgraded => "upgraded",
            Op::Downgraded => "downgraded",
            Op::Changed => "changed",
        }
    }

    /// Every variant, in declaration order.
    pub const ALL: [Op; 5] = [
        Op::Added,
        Op::Removed,
        Op::Upgraded,
        Op::Downgraded,
        Op::Changed,
    ];
}

/// The field a change concerns. Serialised with the CR's own key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Field {
    ApiVersion,
    /// The `lok8s.dev/domain` label.
    Domain,
    Lok8sVersion,
    Kind,
    Provider,
    KubernetesVersion,
    SpecHash,
    /// An addon entry as a whole (added or removed).
    Addon,
    ChartVersion,
    AppVersion,
    Category,
    Source,
}

impl Field {
    /// The key name in the CR (`domain` for the label); the serde name.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::ApiVersion => "apiVersion",
            Field::Domain => "domain",
            Field::Lok8sVersion => "lok8sVersion",
            Field::Kind => "kind",
            Field::Provider => "provider",
            Field::KubernetesVersion => "kubernetesVersion",
            Field::SpecHash => "specHash",
            Field::Addon => "addon",
            Field::ChartVersion => "chartVersion",
            Field::AppVersion => "appVersion",
            Field::Category => "category",
            Field::Source => "source",
        }
    }

    /// Every variant, in declaration order.
    pub const ALL: [Field; 12] = [
        Field::ApiVersion,
        Field::Domain,
        Field::Lok8sVersion,
        Field::Kind,
        Field::Provider,
        Field::KubernetesVersion,
        Field::SpecHash,
        Field::Addon,
        Field::ChartVersion,
        Field::AppVersion,
        Field::Category,
        Field::Source,
    ];

    /// Whether values of this field are versions, ordered by [`version::compare`].
    pub fn is_version(self) -> bool {
        matches!(
            self,
            Field::Lok8sVersion
                | Field::KubernetesVersion
                | Field::ChartVersion
                | Field::AppVersion
        )
    }
}

/// An addon entry as it was added or removed. Every key is always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub name: String,
    pub source: Option<String>,
    pub chart_version: Option<String>,
    pub category: Option<String>,
    pub app_version: Option<String>,
}

impl From<&Addon> for Entry {
    fn from(a: &Addon) -> Entry {
        Entry {
            name: a.name.clone(),
            source: a.source.map(|s| s.as_str().to_string()),
            chart_version: a.chart_version.clone(),
            category: a.category.clone(),
            app_version: a.app_version.clone(),
        }
    }
}

/// One semantic change. Every key is always present in JSON (`null` when it does not
/// apply), so consumers can rely on the shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// Where, in `--ignore` syntax: `spec.kubernetesVersion`, `spec.addons[cilium].chartVersion`,
    /// `spec.addons[cilium#2]`, `metadata.labels[lok8s.dev/domain]`.
    pub path: String,
    pub field: Field,
    pub change: Op,
    /// The addon's name, for addon changes.
    pub addon: Option<String>,
    /// Which occurrence of that name (1-based), for addon changes.
    pub occurrence: Option<usize>,
    /// The old value (`null`: absent). For an added or removed addon: its chartVersion.
    pub from: Option<String>,
    /// The new value (`null`: absent).
    pub to: Option<String>,
    /// The whole entry, for an added or removed addon.
    pub entry: Option<Entry>,
}

impl Change {
    /// The addon label used by printers: `cilium`, or `cilium#2` for a repeated name.
    pub fn subject(&self) -> Option<String> {
        let name = self.addon.as_ref()?;
        Some(match self.occurrence {
            Some(k) if k > 1 => format!("{name}#{k}"),
            _ => name.clone(),
        })
    }

    /// How the two versions relate, for a version field whose two values are present.
    pub fn order(&self) -> Option<Order> {
        match (&self.from, &self.to) {
            (Some(a), Some(b)) if self.field.is_version() => Some(version::compare(a, b)),
            _ => None,
        }
    }

    fn segments(&self) -> Vec<Seg<'_>> {
        let key = Seg::Key;
        match (self.field, &self.addon) {
            (Field::ApiVersion, _) => vec![key("apiVersion")],
            (Field::Domain, _) => vec![key("metadata"), key("labels"), Seg::Item(DOMAIN_LABEL, 1)],
            (field, Some(name)) => {
                let mut s = vec![
                    key("spec"),
                    key("addons"),
                    Seg::Item(name, self.occurrence.unwrap_or(1)),
                ];
                if field != Field::Addon {
                    s.push(key(field.as_str()));
                }
                s
            }
            (field, None) => vec![key("spec"), key(field.as_str())],
        }
    }
}

/// Counts of [`Report::changes`] by kind, and of ignored changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub added: usize,
    pub removed: usize,
    pub upgraded: usize,
    pub downgraded: usize,
    pub changed: usize,
    pub ignored: usize,
}

impl Summary {
    /// The counts of `changes`, with `ignored` ignored ones.
    pub fn of(changes: &[Change], ignored: usize) -> Summary {
        let mut s = Summary {
            ignored,
            ..Summary::default()
        };
        for c in changes {
            *match c.change {
                Op::Added => &mut s.added,
                Op::Removed => &mut s.removed,
                Op::Upgraded => &mut s.upgraded,
                Op::Downgraded => &mut s.downgraded,
                Op::Changed => &mut s.changed,
            } += 1;
        }
        s
    }

    /// Non-zero counts in a fixed order, e.g. `[("upgraded", 2), ("added", 1)]`.
    pub fn parts(&self) -> Vec<(&'static str, usize)> {
        [
            ("upgraded", self.upgraded),
            ("downgraded", self.downgraded),
            ("added", self.added),
            ("removed", self.removed),
            ("changed", self.changed),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// What the user named (`a.yaml`, `cluster`); set by the caller, `null` otherwise.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// The `lok8s.dev/domain` label.
    pub domain: Option<String>,
    /// `spec.renderedAt` (never compared).
    pub rendered_at: Option<String>,
    /// What kind of reference it was (`file`, `stdin`, `cluster`, `snapshot`, `git`);
    /// set by the caller.
    pub source: Option<String>,
    /// What it resolved to: the file read, the snapshot id, the commit id; set by the
    /// caller.
    pub resolved: Option<String>,
    /// A snapshot's recorded time.
    pub recorded_at: Option<String>,
    /// A snapshot's revision, as `clinv log` numbers it.
    pub revision: Option<u64>,
}

impl Endpoint {
    fn of(inv: &ClusterInventory) -> Endpoint {
        Endpoint {
            reference: None,
            domain: inv.metadata.labels.get(DOMAIN_LABEL).cloned(),
            rendered_at: Some(inv.spec.rendered_at.clone()),
            ..Endpoint::default()
        }
    }
}

/// The result of a comparison: what every printer renders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Always [`REPORT_KIND`].
    pub kind: &'static str,
    pub from: Endpoint,
    pub to: Endpoint,
    /// `changes` is not empty; decides the exit code. Ignored changes never count.
    pub has_changes: bool,
    pub summary: Summary,
    /// Changes in a fixed order: object fields (apiVersion, domain, lok8sVersion, kind,
    /// provider, kubernetesVersion, specHash), then addons in the newer object's order,
    /// then removed addons in the older object's order.
    pub changes: Vec<Change>,
    /// Changes matched by an ignore path, in the same order.
    pub ignored: Vec<Change>,
}

/// Compares `a` (older) with `b` (newer), ignoring nothing.
pub fn diff(a: &ClusterInventory, b: &ClusterInventory) -> Report {
    diff_with(a, b, &Ignore::default())
}

/// [`diff`] with already parsed ignore paths.
pub fn diff_with(a: &ClusterInventory, b: &ClusterInventory, ignore: &Ignore) -> Report {
    compare(Some(a), b, ignore)
}

/// What `b` holds, as changes from nothing: every addon added, every field set. Used for
/// the first step of a history.
pub fn initial(b: &ClusterInventory, ignore: &Ignore) -> Report {
    compare(None, b, ignore)
}

fn domain(i: &ClusterInventory) -> Option<&str> {
    i.metadata.labels.get(DOMAIN_LABEL).map(String::as_str)
}

fn compare(a: Option<&ClusterInventory>, b: &ClusterInventory, ignore: &Ignore) -> Report {
    let mut all = Vec::new();
    let sa = a.map(|a| &a.spec);
    let sb = &b.spec;
    if let Some(a) = a {
        field(
            &mut all,
            Field::ApiVersion,
            Some(&a.api_version),
            Some(&b.api_version),
        );
    }
    field(&mut all, Field::Domain, a.and_then(domain), domain(b));
    field(
        &mut all,
        Field::Lok8sVersion,
        sa.map(|s| s.lok8s_version.as_str()),
        Some(&sb.lok8s_version),
    );
    field(
        &mut all,
        Field::Kind,
        sa.map(|s| s.kind.as_str()),
        Some(&sb.kind),
    );
    field(
        &mut all,
        Field::Provider,
        sa.and_then(|s| s.provider.as_deref()),
        sb.provider.as_deref(),
    );
    field(
        &mut all,
        Field::KubernetesVersion,
        sa.and_then(|s| s.kubernetes_version.as_deref()),
        sb.kubernetes_version.as_deref(),
    );
    field(
        &mut all,
        Field::SpecHash,
        sa.map(|s| s.spec_hash.as_str()),
        Some(&sb.spec_hash),
    );
    addons(&mut all, sa.map_or(&[], |s| &s.addons), &sb.addons);
    let (ignored, changes): (Vec<Change>, Vec<Change>) =
        all.into_iter().partition(|c| ignore.matches(c));
    Report {
        schema_version: SCHEMA_VERSION,
        kind: REPORT_KIND,
        from: a.map(Endpoint::of).unwrap_or_default(),
        to: Endpoint::of(b),
        has_changes: !changes.is_empty(),
        summary: Summary::of(&changes, ignored.len()),
        changes,
        ignored,
    }
}

/// The kind of change between two values of `field`.
fn op(field: Field, from: Option<&str>, to: Option<&str>) -> Op {
    match (from, to) {
        (Some(a), Some(b)) if field.is_version() => match version::compare(a, b) {
            Order::Upgrade => Op::Upgraded,
            Order::Downgrade => Op::Downgraded,
            Order::Equal | Order::Unordered => Op::Changed,
        },
        _ => Op::Changed,
    }
}

/// Records a change of an object field when its two values differ.
fn field(out: &mut Vec<Change>, field: Field, from: Option<&str>, to: Option<&str>) {
    if from == to {
        return;
    }
    let path = match field {
        Field::ApiVersion => "apiVersion".to_string(),
        Field::Domain => format!("metadata.labels[{DOMAIN_LABEL}]"),
        f => format!("spec.{}", f.as_str()),
    };
    out.push(Change {
        path,
        field,
        change: op(field, from, to),
        addon: None,
        occurrence: None,
        from: from.map(str::to_string),
        to: to.map(str::to_string),
        entry: None,
    });
}

/// 1-based occurrence of each entry's name within its list.
fn occurrences(list: &[Addon]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    list.iter()
        .map(|a| {
            let n = seen.entry(a.name.as_str()).or_insert(0);
            *n += 1;
            *n
        })
        .collect()
}

fn addon_path(name: &str, k: usize) -> String {
    if k > 1 {
        format!("spec.addons[{name}#{k}]")
    } else {
        format!("spec.addons[{name}]")
    }
}

fn addons(out: &mut Vec<Change>, a: &[Addon], b: &[Addon]) {
    let occ_a = occurrences(a);
    let occ_b = occurrences(b);
    let mut unmatched: HashMap<(&str, usize), usize> = a
        .iter()
        .zip(&occ_a)
        .enumerate()
        .map(|(i, (x, &k))| ((x.name.as_str(), k), i))
        .collect();
    let whole = |addon: &Addon, k: usize, change: Op| {
        let version = addon.chart_version.clone();
        let (from, to) = if change == Op::Added {
            (None, version)
        } else {
            (version, None)
        };
        Change {
            path: addon_path(&addon.name, k),
            field: Field::Addon,
            change,
            addon: Some(addon.name.clone()),
            occurrence: Some(k),
            from,
            to,
            entry: Some(Entry::from(addon)),
        }
    };
    for (new, &k) in b.iter().zip(&occ_b) {
        let Some(i) = unmatched.remove(&(new.name.as_str(), k)) else {
            out.push(whole(new, k, Op::Added));
            continue;
        };
        let old = &a[i];
        let source = |x: &Addon| x.source.map(|s| s.as_str());
        for (f, from, to) in [
            (
                Field::ChartVersion,
                old.chart_version.as_deref(),
                new.chart_version.as_deref(),
            ),
            (
                Field::AppVersion,
                old.app_version.as_deref(),
                new.app_version.as_deref(),
            ),
            (
                Field::Category,
                old.category.as_deref(),
                new.category.as_deref(),
            ),
            (Field::Source, source(old), source(new)),
        ] {
            if from != to {
                out.push(Change {
                    path: format!("{}.{}", addon_path(&new.name, k), f.as_str()),
                    field: f,
                    change: op(f, from, to),
                    addon: Some(new.name.clone()),
                    occurrence: Some(k),
                    from: from.map(str::to_string),
                    to: to.map(str::to_string),
                    entry: None,
                });
            }
        }
    }
    for (old, &k) in a.iter().zip(&occ_a) {
        if unmatched.contains_key(&(old.name.as_str(), k)) {
            out.push(whole(old, k, Op::Removed));
        }
    }
}

/// A segment of a change's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg<'a> {
    Key(&'a str),
    /// `[name]` with the occurrence of that name (1-based).
    Item(&'a str, usize),
}

/// A segment of an ignore path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PatSeg {
    Key(String),
    /// `[NAME]`, `[*]`, `[NAME#N]`, `[*#N]`: `None` matches any.
    Item {
        name: Option<String>,
        occurrence: Option<usize>,
    },
}

/// Object fields an ignore path may name under `spec.`.
const SPEC_FIELDS: [&str; 7] = [
    "lok8sVersion",
    "kind",
    "specHash",
    "renderedAt",
    "provider",
    "kubernetesVersion",
    "addons",
];
/// Fields an ignore path may name under `spec.addons[SEL].`.
const ADDON_FIELDS: [&str; 4] = ["chartVersion", "appVersion", "category", "source"];

const SYNTAX: &str = "expected apiVersion, metadata.labels[KEY], spec.FIELD (lok8sVersion, kind, specHash, renderedAt, provider, kubernetesVersion), or spec.addons[SEL][.chartVersion|.appVersion|.category|.source] where SEL is NAME, *, NAME#N or *#N";

/// Parsed `--ignore` paths.
///
/// A path ignores every change at or below it: `spec.addons[cilium]` covers cilium's
/// addition, removal and each field change; `spec.addons[*].category` every category
/// change; `spec` everything under `spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ignore {
    patterns: Vec<Vec<PatSeg>>,
    /// Each pattern's text, as given.
    texts: Vec<String>,
}

impl Ignore {
    /// Parses and checks every path against the inventory's shape, so a typo cannot
    /// silently ignore nothing.
    ///
    /// # Errors
    /// [`ArgumentError::Ignore`] naming the first path that is malformed or names no field.
    pub fn parse(paths: &[String]) -> Result<Ignore> {
        let mut patterns = Vec::with_capacity(paths.len());
        for text in paths {
            let p = parse_path(text)
                .and_then(|p| check_shape(&p).map(|()| p))
                .map_err(|why| ArgumentError::Ignore {
                    text: text.clone(),
                    why: why.to_string(),
                })?;
            patterns.push(p);
        }
        Ok(Ignore {
            patterns,
            texts: paths.to_vec(),
        })
    }

    /// The paths whose addon or label selector names nothing in any of `inventories`:
    /// they ignore nothing, most likely a typo (with the closest name that is there).
    pub fn unmatched(&self, inventories: &[&ClusterInventory]) -> Vec<ArgumentError> {
        let addons: Vec<&str> = unique(
            inventories
                .iter()
                .flat_map(|i| &i.spec.addons)
                .map(|a| a.name.as_str()),
        );
        let labels: Vec<&str> = unique(
            inventories
                .iter()
                .flat_map(|i| i.metadata.labels.keys())
                .map(String::as_str),
        );
        self.patterns
            .iter()
            .zip(&self.texts)
            .filter_map(|(p, text)| {
                let (what, known) = match p.first() {
                    Some(PatSeg::Key(k)) if k == "metadata" => ("label", &labels),
                    _ => ("addon", &addons),
                };
                let Some(PatSeg::Item {
                    name: Some(name), ..
                }) = p.get(2)
                else {
                    return None;
                };
                if known.contains(&name.as_str()) {
                    return None;
                }
                let mean = crate::util::suggest::closest(name, known.iter().copied())
                    .map(|n| format!(" — did you mean '{n}'?"))
                    .unwrap_or_default();
                Some(ArgumentError::Ignore {
                    text: text.clone(),
                    why: format!(
                        "no {what} '{name}' in either inventory, so it ignores nothing{mean}"
                    ),
                })
            })
            .collect()
    }

    /// Whether some path is a prefix of the change's path.
    pub fn matches(&self, change: &Change) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let segs = change.segments();
        self.patterns.iter().any(|p| {
            p.len() <= segs.len()
                && p.iter().zip(&segs).all(|(p, s)| match (p, s) {
                    (PatSeg::Key(a), Seg::Key(b)) => a == b,
                    (PatSeg::Item { name, occurrence }, Seg::Item(n, k)) => {
                        name.as_deref().is_none_or(|x| x == *n)
                            && occurrence.is_none_or(|o| o == *k)
                    }
                    _ => false,
                })
        })
    }
}

/// `items` without repeats, in first-seen order.
fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Why an `--ignore` path is refused (its text is [`ArgumentError::Ignore`]'s `why`).
#[derive(Debug, thiserror::Error)]
enum PathError {
    #[error("malformed path; {SYNTAX}")]
    Malformed,
    #[error("unclosed '[' in path")]
    Unclosed,
    #[error("'#{0}': the occurrence is a number from 1")]
    Occurrence(String),
    #[error("empty selector '[]'; use [*] for any")]
    EmptySelector,
    #[error("names no field of the inventory; {SYNTAX}")]
    NoField,
}

/// `key(.key)*` where a key may be followed by `[selector]`.
fn parse_path(text: &str) -> std::result::Result<Vec<PatSeg>, PathError> {
    let mut segs = Vec::new();
    let mut rest = text;
    loop {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let key = &rest[..end];
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(PathError::Malformed);
        }
        segs.push(PatSeg::Key(key.to_string()));
        rest = &rest[end..];
        if let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']').ok_or(PathError::Unclosed)?;
            segs.push(selector(&inner[..close])?);
            rest = &inner[close + 1..];
        }
        if rest.is_empty() {
            return Ok(segs);
        }
        rest = rest.strip_prefix('.').ok_or(PathError::Malformed)?;
    }
}

fn selector(text: &str) -> std::result::Result<PatSeg, PathError> {
    let (name, occurrence) = match text.rsplit_once('#') {
        Some((name, n)) => {
            let k: usize = n
                .parse()
                .ok()
                .filter(|k| *k >= 1)
                .ok_or_else(|| PathError::Occurrence(n.to_string()))?;
            (name, Some(k))
        }
        None => (text, None),
    };
    if name.is_empty() {
        return Err(PathError::EmptySelector);
    }
    Ok(PatSeg::Item {
        name: (name != "*").then(|| name.to_string()),
        occurrence,
    })
}

/// Accepts only paths that name a part of the inventory.
fn check_shape(p: &[PatSeg]) -> std::result::Result<(), PathError> {
    let key = |i: usize| match p.get(i) {
        Some(PatSeg::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let item = |i: usize| matches!(p.get(i), Some(PatSeg::Item { .. }));
    let ok = match (key(0), p.len()) {
        (Some("apiVersion"), 1) => true,
        (Some("metadata"), 1) => true,
        (Some("metadata"), 2) => key(1) == Some("labels"),
        (Some("metadata"), 3) => key(1) == Some("labels") && item(2),
        (Some("spec"), 1) => true,
        (Some("spec"), 2) => key(1).is_some_and(|k| SPEC_FIELDS.contains(&k)),
        (Some("spec"), 3) => key(1) == Some("addons") && item(2),
        (Some("spec"), 4) => {
            key(1) == Some("addons") && item(2) && key(3).is_some_and(|k| ADDON_FIELDS.contains(&k))
        }
        _ => false,
    };
    if ok { Ok(()) } else { Err(PathError::NoField) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{InventorySpec, Metadata};
    use crate::project::bootstrap::Source;
    use std::collections::BTreeMap;

    #[test]
    fn op_and_field_names_are_the_serde_names() {
        for op in Op::ALL {
            assert_eq!(serde_json::to_value(op).unwrap(), op.as_str());
        }
        for field in Field::ALL {
            assert_eq!(serde_json::to_value(field).unwrap(), field.as_str());
        }
    }

    fn addon(name: &str, version: Option<&str>, category: Option<&str>) -> Addon {
        Addon {
            name: name.into(),
            source: Some(Source::Addon),
            chart_version: version.map(Into::into),
            category: category.map(Into::into),
            app_version: None,
        }
    }

    fn inv(addons: Vec<Addon>) -> ClusterInventory {
        ClusterInventory {
            api_version: "lok8s.dev/v1alpha1".into(),
            kind: "ClusterInventory".into(),
            metadata: Metadata {
                name: "cluster".into(),
                labels: BTreeMap::from([(DOMAIN_LABEL.into(), "prod.example".into())]),
            },
            spec: InventorySpec {
                lok8s_version: "0.7.9".into(),
                kind: "kubeone".into(),
                spec_hash: "aaa".into(),
                rendered_at: "2026-01-01T00:00:00Z".into(),
                addons,
                provider: Some("hetzner".into()),
                kubernetes_version: Some("v1.31.10".into()),
            },
        }
    }

    fn base() -> ClusterInventory {
        inv(vec![
            addon("cilium", Some("1.19.2"), Some("networking")),
            addon("metrics-server", Some("3.12.2"), Some("observability")),
        ])
    }

    /// `(path, change, from, to)` of each change.
    fn summary(r: &Report) -> Vec<(String, &'static str, String, String)> {
        r.changes
            .iter()
            .map(|c| {
                (
                    c.path.clone(),
                    c.change.as_str(),
                    c.from.clone().unwrap_or_default(),
                    c.to.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn row(p: &str, c: &'static str, f: &str, t: &str) -> (String, &'static str, String, String) {
        (p.into(), c, f.into(), t.into())
    }

    #[test]
    fn identical_objects_have_no_changes() {
        let r = diff(&base(), &base());
        assert!(!r.has_changes && r.changes.is_empty() && r.ignored.is_empty());
        assert_eq!(r.summary, Summary::default());
    }

    #[test]
    fn rendered_at_and_metadata_never_count() {
        let a = base();
        let mut b = base();
        b.spec.rendered_at = "2030-12-31T23:59:59Z".into();
        b.metadata.name = "other".into();
        b.metadata
            .labels
            .insert("app.kubernetes.io/managed-by".into(), "x".into());
        let r = diff(&a, &b);
        assert!(!r.has_changes, "{:?}", r.changes);
        assert_eq!(r.to.rendered_at.as_deref(), Some("2030-12-31T23:59:59Z"));
        // A live dump with server metadata and status parses to the same comparison.
        let text = crate::inventory::render::to_yaml(&a).unwrap().replace(
            "  name: cluster\n",
            "  name: cluster\n  uid: u\n  resourceVersion: '9'\n  generation: 4\n  creationTimestamp: '2026-01-01T00:00:00Z'\n  managedFields: [{manager: lok8s}]\n",
        ) + "status:\n  lastReported: '2026-01-02T00:00:00Z'\n";
        let live = crate::inventory::parse::inventory_from_text(&text).unwrap();
        assert!(!diff(&a, &live).has_changes);
    }

    #[test]
    fn chart_versions_are_ordered_by_semver() {
        let mut b = base();
        b.spec.addons[0].chart_version = Some("1.20.1".into());
        b.spec.addons[1].chart_version = Some("3.9.0".into());
        assert_eq!(
            summary(&diff(&base(), &b)),
            [
                row(
                    "spec.addons[cilium].chartVersion",
                    "upgraded",
                    "1.19.2",
                    "1.20.1"
                ),
                row(
                    "spec.addons[metrics-server].chartVersion",
                    "downgraded",
                    "3.12.2",
                    "3.9.0"
                ),
            ]
        );
    }

    #[test]
    fn unordered_and_equal_precedence_versions_are_plain_changes() {
        let mut b = base();
        b.spec.addons[0].chart_version = Some("main".into());
        b.spec.addons[1].chart_version = Some("v3.12.2".into());
        let r = diff(&base(), &b);
        assert_eq!(
            summary(&r),
            [
                row(
                    "spec.addons[cilium].chartVersion",
                    "changed",
                    "1.19.2",
                    "main"
                ),
                row(
                    "spec.addons[metrics-server].chartVersion",
                    "changed",
                    "3.12.2",
                    "v3.12.2"
                ),
            ]
        );
        assert_eq!(r.changes[0].order(), Some(Order::Unordered));
        assert_eq!(r.changes[1].order(), Some(Order::Equal));
        // A version that appears is a change, not an upgrade.
        let mut c = b.clone();
        c.spec.addons[0].chart_version = None;
        assert_eq!(
            summary(&diff(&c, &b)),
            [row(
                "spec.addons[cilium].chartVersion",
                "changed",
                "",
                "main"
            )]
        );
    }

    #[test]
    fn added_and_removed_addons_carry_the_entry() {
        let mut b = base();
        b.spec.addons.remove(1);
        b.spec
            .addons
            .push(addon("rook-ceph", Some("v1.16.4"), Some("storage")));
        let r = diff(&base(), &b);
        assert_eq!(
            summary(&r),
            [
                row("spec.addons[rook-ceph]", "added", "", "v1.16.4"),
                row("spec.addons[metrics-server]", "removed", "3.12.2", ""),
            ]
        );
        let entry = r.changes[0].entry.as_ref().unwrap();
        assert_eq!(
            (entry.category.as_deref(), entry.source.as_deref()),
            (Some("storage"), Some("addon"))
        );
        assert_eq!((r.summary.added, r.summary.removed), (1, 1));
    }

    #[test]
    fn category_source_and_app_version_changes() {
        let mut b = base();
        b.spec.addons[0].category = Some("network".into());
        b.spec.addons[0].source = Some(Source::Target);
        b.spec.addons[1].app_version = Some("0.7.2".into());
        let mut a = base();
        a.spec.addons[1].app_version = Some("0.7.1".into());
        assert_eq!(
            summary(&diff(&a, &b)),
            [
                row(
                    "spec.addons[cilium].category",
                    "changed",
                    "networking",
                    "network"
                ),
                row("spec.addons[cilium].source", "changed", "addon", "target"),
                row(
                    "spec.addons[metrics-server].appVersion",
                    "upgraded",
                    "0.7.1",
                    "0.7.2"
                ),
            ]
        );
    }

    #[test]
    fn repeated_names_are_matched_by_occurrence() {
        let a = inv(vec![
            addon("x", Some("1.0.0"), None),
            addon("y", Some("1.0.0"), None),
            addon("x", Some("2.0.0"), None),
        ]);
        let mut b = a.clone();
        b.spec.addons[2].chart_version = Some("3.0.0".into());
        let r = diff(&a, &b);
        assert_eq!(
            summary(&r),
            [row(
                "spec.addons[x#2].chartVersion",
                "upgraded",
                "2.0.0",
                "3.0.0"
            )]
        );
        assert_eq!(
            (r.changes[0].occurrence, r.changes[0].subject()),
            (Some(2), Some("x#2".into()))
        );
        // Reordering entries with distinct names is not a change.
        let mut c = a.clone();
        c.spec.addons.swap(0, 1);
        assert!(!diff(&a, &c).has_changes);
        // Dropping the first x: the first x now is the old second one, the second is gone.
        let d = inv(vec![
            addon("y", Some("1.0.0"), None),
            addon("x", Some("2.0.0"), None),
        ]);
        assert_eq!(
            summary(&diff(&a, &d)),
            [
                row("spec.addons[x].chartVersion", "upgraded", "1.0.0", "2.0.0"),
                row("spec.addons[x#2]", "removed", "2.0.0", ""),
            ]
        );
    }

    #[test]
    fn object_fields_in_a_fixed_order() {
        let a = base();
        let mut b = base();
        b.api_version = "lok8s.dev/v1beta1".into();
        b.metadata
            .labels
            .insert(DOMAIN_LABEL.into(), "lab.example".into());
        b.spec.lok8s_version = "0.8.0".into();
        b.spec.kind = "capi".into();
        b.spec.provider = None;
        b.spec.kubernetes_version = Some("v1.30.14".into());
        b.spec.spec_hash = "bbb".into();
        assert_eq!(
            summary(&diff(&a, &b)),
            [
                row(
                    "apiVersion",
                    "changed",
                    "lok8s.dev/v1alpha1",
                    "lok8s.dev/v1beta1"
                ),
                row(
                    "metadata.labels[lok8s.dev/domain]",
                    "changed",
                    "prod.example",
                    "lab.example"
                ),
                row("spec.lok8sVersion", "upgraded", "0.7.9", "0.8.0"),
                row("spec.kind", "changed", "kubeone", "capi"),
                row("spec.provider", "changed", "hetzner", ""),
                row(
                    "spec.kubernetesVersion",
                    "downgraded",
                    "v1.31.10",
                    "v1.30.14"
                ),
                row("spec.specHash", "changed", "aaa", "bbb"),
            ]
        );
        let r = diff(&b, &a);
        assert_eq!(r.changes[5].change, Op::Upgraded);
        assert_eq!(
            r.summary.parts(),
            [("upgraded", 1), ("downgraded", 1), ("changed", 5)]
        );
    }

    /// Found by a new user: `--ignore spec.addons[cilum]` ignored nothing without a word.
    #[test]
    fn selectors_that_select_nothing_are_named() {
        let paths: Vec<String> = [
            "spec.addons[cilum]",
            "spec.addons[cilium].category",
            "spec.addons[*]",
            "metadata.labels[lok8s.dev/domian]",
            "metadata.labels[lok8s.dev/domain]",
            "spec.addons[longhorn#2]",
        ]
        .map(String::from)
        .to_vec();
        let ignore = Ignore::parse(&paths).unwrap();
        let got: Vec<String> = ignore
            .unmatched(&[&base(), &base()])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "--ignore 'spec.addons[cilum]': no addon 'cilum' in either inventory, so it ignores nothing — did you mean 'cilium'?",
                "--ignore 'metadata.labels[lok8s.dev/domian]': no label 'lok8s.dev/domian' in either inventory, so it ignores nothing — did you mean 'lok8s.dev/domain'?",
                "--ignore 'spec.addons[longhorn#2]': no addon 'longhorn' in either inventory, so it ignores nothing",
            ]
        );
    }

    #[test]
    fn ignored_changes_never_count() {
        let mut b = base();
        b.spec.spec_hash = "bbb".into();
        b.spec.addons[0].category = Some("network".into());
        let ignore = |paths: &[&str]| {
            let paths: Vec<String> = paths.iter().map(|s| s.to_string()).collect();
            diff_with(&base(), &b, &Ignore::parse(&paths).unwrap())
        };
        let r = ignore(&["spec.specHash", "spec.addons[*].category"]);
        assert!(!r.has_changes && r.changes.is_empty());
        assert_eq!(r.ignored.len(), 2);
        assert_eq!(r.summary.ignored, 2);
        let r = ignore(&["spec.specHash"]);
        assert!(r.has_changes);
        assert_eq!(r.changes.len(), 1);
        // A whole addon, by name or occurrence; a prefix covers everything below it.
        assert!(!ignore(&["spec.specHash", "spec.addons[cilium]"]).has_changes);
        assert!(!ignore(&["spec.specHash", "spec.addons[cilium#1].category"]).has_changes);
        assert!(ignore(&["spec.specHash", "spec.addons[cilium#2]"]).has_changes);
        assert!(ignore(&["spec.specHash", "spec.addons[cilium].chartVersion"]).has_changes);
        assert!(!ignore(&["spec"]).has_changes);
        // Ignoring renderedAt is allowed and changes nothing.
        assert!(ignore(&["spec.renderedAt"]).has_changes);
    }

    #[test]
    fn ignore_paths_cover_removals_and_labels() {
        let mut b = base();
        b.spec.addons.remove(1);
        b.metadata.labels.insert(DOMAIN_LABEL.into(), "x".into());
        let paths = vec![
            "spec.addons[metrics-server]".to_string(),
            "metadata.labels[lok8s.dev/domain]".to_string(),
        ];
        let r = diff_with(&base(), &b, &Ignore::parse(&paths).unwrap());
        assert!(!r.has_changes);
        assert_eq!(r.ignored.len(), 2);
    }

    #[test]
    fn malformed_ignore_paths_are_usage_errors() {
        for bad in [
            "",
            "spec.",
            "spec.foo",
            "spec.addons[",
            "spec.addons[]",
            "spec.addons[x#0]",
            "spec.addons[x#y]",
            "spec.addons[x].name",
            "spec.addons.chartVersion",
            "spec.kind[x]",
            "status",
            "spec..kind",
            "spec.addons[x]y",
            "metadata.annotations",
        ] {
            let err = Ignore::parse(&[bad.to_string()]).unwrap_err();
            assert!(
                matches!(err, Error::Argument(ArgumentError::Ignore { .. })),
                "{bad}: {err}"
            );
            assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        }
        for good in [
            "apiVersion",
            "metadata",
            "metadata.labels",
            "spec",
            "spec.addons",
            "spec.addons[*]",
            "spec.addons[*#2].source",
            "spec.addons[cert-manager.io].appVersion",
            "spec.kubernetesVersion",
        ] {
            assert!(Ignore::parse(&[good.to_string()]).is_ok(), "{good}");
        }
    }

    #[test]
    fn initial_lists_everything_as_new() {
        let r = initial(&base(), &Ignore::default());
        let paths: Vec<&str> = r.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "metadata.labels[lok8s.dev/domain]",
                "spec.lok8sVersion",
                "spec.kind",
                "spec.provider",
                "spec.kubernetesVersion",
                "spec.specHash",
                "spec.addons[cilium]",
                "spec.addons[metrics-server]",
            ]
        );
        assert_eq!(r.from, Endpoint::default());
    }
}
