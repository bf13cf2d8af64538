//! Available updates: a cluster's addons compared with the addon index (spec §11.4).
//!
//! Pure: the inventory's addons and an index in, `{name, current, latest}` out. The
//! rules (also in the README):
//!
//! * An addon is compared when both it and its index entry carry a version
//!   (`chartVersion`): a target that pins a chart (`- ./addons/cert-manager`, a
//!   per-cluster copy) is that addon at another version, and counts.
//! * Ordering is [`version::compare`]: SemVer with or without a leading `v`, pre-releases
//!   below their release. Only a newer index version is an update; two versions that
//!   are not both SemVer are reported only when they differ, marked `unordered`.
//! * Names are de-duplicated first-wins, in the inventory and in the index (a repeated
//!   index name is reported by [`duplicates`], for a warning).
//! * A pre-release in the index is offered only when the current version is a
//!   pre-release too, or with `--pre` ([`compute_with`]).
//! * At most 256 updates (the CRD's `maxItems`), in inventory order; names are cut to
//!   253 and versions to 64 characters (the CRD's `maxLength`), character-safe; entries
//!   with an empty name are dropped.

use crate::catalog::index::AddonIndex;
use crate::error::{Error, Result};
use crate::history::version::{self, Order};
use crate::inventory::{ClusterInventory, parse};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// CRD bounds of `status.availableUpdates`.
pub const MAX_UPDATES: usize = 256;
pub const MAX_NAME: usize = 253;
pub const MAX_VERSION: usize = 64;

/// One addon of the inventory being compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current {
    pub name: String,
    pub version: Option<String>,
}

/// One available update. `unordered` is not part of the status schema; the agent drops it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Update {
    pub name: String,
    pub current: String,
    pub latest: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unordered: bool,
    /// `latest` is a SemVer pre-release (offered with `--pre` or after a pre-release).
    /// Not part of the status schema either.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prerelease: bool,
}

/// The addons of a rendered inventory.
pub fn from_inventory(inv: &ClusterInventory) -> Vec<Current> {
    inv.spec
        .addons
        .iter()
        .map(|a| Current {
            name: a.name.clone(),
            version: a.chart_version.clone().filter(|v| !v.is_empty()),
        })
        .collect()
}

/// The addons of a live ClusterInventory object, read by the one inventory reader
/// ([`parse::inventory_from_value`]) as every other source is.
///
/// # Errors
/// [`Error::InvalidInventory`] naming `origin` and the field.
pub fn from_object(object: &Value, origin: &str) -> Result<Vec<Current>> {
    let inventory =
        parse::inventory_from_value(object.clone()).map_err(|e| Error::inventory(origin, e))?;
    Ok(from_inventory(&inventory))
}

/// The ClusterInventory in a file's text (a single object, a `List`, or one document of
/// a YAML stream), read by the one inventory reader ([`parse::inventory_from_text`]).
///
/// # Errors
/// [`Error::InvalidInventory`] when the text is not YAML/JSON or holds no inventory,
/// or several, or one the reader refuses.
pub fn find_inventory(text: &str, origin: &str) -> Result<ClusterInventory> {
    parse::inventory_from_text(text).map_err(|e| Error::inventory(origin, e))
}

/// Compares `current` with `index` (rules in the module documentation), pre-releases
/// excluded as [`compute_with`] does without `pre`.
pub fn compute(current: &[Current], index: &AddonIndex) -> Vec<Update> {
    compute_with(current, index, false)
}

/// True for a SemVer pre-release (`1.21.0-rc.1`, `v2.0.0-beta`).
fn is_prerelease(v: &str) -> bool {
    version::parse(v).is_some_and(|v| !v.pre.is_empty())
}

/// The names that appear more than once in the index, in index order (the first entry
/// of each is the one compared).
pub fn duplicates(index: &AddonIndex) -> Vec<&str> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for entry in &index.addons {
        if !seen.insert(entry.name.as_str()) && !out.contains(&entry.name.as_str()) {
            out.push(entry.name.as_str());
        }
    }
    out
}

/// Compares `current` with `index`. A pre-release in the index (`1.21.0-rc.1`) is an
/// update only with `pre` or when the current version is itself a pre-release.
pub fn compute_with(current: &[Current], index: &AddonIndex, pre: bool) -> Vec<Update> {
    let mut latest: HashMap<&str, &str> = HashMap::new();
    for entry in &index.addons {
        if !latest.contains_key(entry.name.as_str())
            && let Some(v) = entry.chart_version.as_deref()
        {
            latest.insert(&entry.name, v);
        } else {
            // First wins, also when the first has no version.
            latest.entry(&entry.name).or_insert("");
        }
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for addon in current {
        if addon.name.is_empty() || !seen.insert(addon.name.as_str()) {
            continue;
        }
        let (Some(from), Some(&to)) = (addon.version.as_deref(), latest.get(addon.name.as_str()))
        else {
            continue;
        };
        if to.is_empty() || (!pre && is_prerelease(to) && !is_prerelease(from)) {
            continue;
        }
        let unordered = match version::compare(from, to) {
            Order::Upgrade => false,
            Order::Unordered => true,
            Order::Equal | Order::Downgrade => continue,
        };
        out.push(Update {
            name: cut(&addon.name, MAX_NAME),
            current: cut(from, MAX_VERSION),
            latest: cut(to, MAX_VERSION),
            unordered,
            prerelease: is_prerelease(to),
        });
        if out.len() == MAX_UPDATES {
            break;
        }
    }
    out
}

/// The first `max` characters of `text`.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => text[..at].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::index::IndexEntry;

    /// `name=version`, or a bare name without a version.
    fn split(entry: &str) -> (String, Option<String>) {
        match entry.split_once('=') {
            Some((name, version)) => (name.into(), Some(version.into())),
            None => (entry.into(), None),
        }
    }

    /// An addon index of `name=version` entries, in order, separated by white space.
    fn idx(entries: &str) -> AddonIndex {
        let entry = |e: &str| {
            let (name, chart_version) = split(e);
            let (category, app_version) = (None, None);
            IndexEntry {
                name,
                chart_version,
                category,
                app_version,
            }
        };
        let addons = entries.split_whitespace().map(entry).collect();
        AddonIndex {
            generated_at: String::new(),
            addons,
        }
    }

    /// The addons a cluster runs, `name=version` as in [`idx`].
    fn cur(entries: &str) -> Vec<Current> {
        let current = |e: &str| {
            let (name, version) = split(e);
            Current { name, version }
        };
        entries.split_whitespace().map(current).collect()
    }

    /// Each update as `name current → latest`, with ` (unordered)` when not SemVer.
    fn names(updates: &[Update]) -> Vec<String> {
        let line = |u: &Update| {
            let unordered = if u.unordered { " (unordered)" } else { "" };
            format!("{} {} → {}{unordered}", u.name, u.current, u.latest)
        };
        updates.iter().map(line).collect()
    }

    /// The updates [`compute`] offers the addons `current` against `index`, as [`names`].
    fn updates(current: &str, index: &str) -> Vec<String> {
        names(&compute(&cur(current), &idx(index)))
    }

    #[test]
    fn semver_prerelease_and_unordered_rules() {
        let index = idx(
            "cilium=1.20.1 cert-manager=v1.21.1 rook-ceph=v1.16.4 ingress-nginx=4.12.0 \
             rc=2.0.0 pre=3.0.0-rc.1 weird=stable same-weird=latest noversion",
        );
        let current = cur(
            "cilium=1.19.2 cert-manager=1.20.1 rook-ceph=1.16.4 ingress-nginx=4.12.1 \
             rc=2.0.0-rc.2 pre=2.9.9 weird=latest same-weird=latest noversion=1.0.0 \
             missing-from-index=1.0.0 unpinned",
        );
        assert_eq!(
            names(&compute_with(&current, &index, true)),
            [
                "cilium 1.19.2 → 1.20.1",
                "cert-manager 1.20.1 → v1.21.1",
                "rc 2.0.0-rc.2 → 2.0.0",
                "pre 2.9.9 → 3.0.0-rc.1",
                "weird latest → stable (unordered)",
            ]
        );
        // Without --pre, a release is never offered a pre-release.
        assert_eq!(
            names(&compute(&current, &index)),
            [
                "cilium 1.19.2 → 1.20.1",
                "cert-manager 1.20.1 → v1.21.1",
                "rc 2.0.0-rc.2 → 2.0.0",
                "weird latest → stable (unordered)",
            ]
        );
    }

    #[test]
    fn prereleases_follow_a_prerelease_and_duplicates_are_named() {
        let index = "a=2.0.0-rc.2 b=v1.21.0-rc.1 a=9.0.0 a c=1.0.0";
        let got = updates("a=2.0.0-rc.1 b=v1.20.0", index);
        assert_eq!(got, ["a 2.0.0-rc.1 → 2.0.0-rc.2"]);
        assert_eq!(duplicates(&idx(index)), ["a"]);
    }

    /// A per-cluster copy of a chart pin (`- ./addons/cert-manager`, `source: target`) is
    /// that addon at another version: "which versions run where" includes it.
    #[test]
    fn first_wins_pinned_targets_compared_and_bounds() {
        let got = updates("a=1.0.0 a=0.1.0 t=1.0.0 glue", "a=2.0.0 a=9.0.0 t=2.0.0");
        assert_eq!(got, ["a 1.0.0 → 2.0.0", "t 1.0.0 → 2.0.0"]);
        // First index entry without a version shadows a later one with a version.
        assert!(updates("a=1.0.0", "a a=9.0.0").is_empty());

        let many =
            |version: &str| -> String { (0..300).map(|i| format!("n{i}={version} ")).collect() };
        let got = compute(&cur(&many("1.0.0")), &idx(&many("2.0.0")));
        assert_eq!(got.len(), 256);
        assert_eq!(got[255].name, "n255");

        let long = "é".repeat(300);
        let v1 = format!("1.0.0-{}", "a".repeat(100));
        let got = compute(
            &cur(&format!("{long}={v1}")),
            &idx(&format!("{long}=1.0.0")),
        );
        assert_eq!(got[0].name.chars().count(), 253);
        assert_eq!(got[0].current.chars().count(), 64);
        assert_eq!(got[0].latest, "1.0.0");
    }

    #[test]
    fn objects_and_files() {
        let v = serde_json::json!({"apiVersion": "lok8s.dev/v1alpha1", "kind": "ClusterInventory",
        "metadata": {"name": "cluster"},
        "spec": {"lok8sVersion": "1", "kind": "lo", "specHash": "h", "renderedAt": "x",
            "addons": [
                {"name": "a", "source": "addon", "chartVersion": "1.0.0"},
                {"name": "t", "source": "target"},
                {"name": "b", "chartVersion": ""}
            ]}});
        let got = from_object(&v, "live").unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[2].version, None, "an empty version is none");
        let mut typed = v.clone();
        typed["spec"]["addons"][0]["name"] = 1.into();
        let err = crate::error::chain(&from_object(&typed, "f.yaml").unwrap_err());
        assert!(
            err.starts_with("f.yaml: spec.addons[0].name: expected a string, found a number"),
            "{err}"
        );

        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}\n",
            serde_json::to_string(&v).unwrap()
        );
        assert_eq!(find_inventory(&list, "l").unwrap().spec.addons[0].name, "a");
        let multi = format!("kind: CustomResourceDefinition\n---\n{v}\n");
        assert!(find_inventory(&multi, "m").is_ok());
        assert_eq!(
            crate::error::chain(&find_inventory("kind: Pod\n", "p.yaml").unwrap_err()),
            "p.yaml: no ClusterInventory object (found kind Pod)"
        );
        assert!(
            crate::error::chain(&find_inventory("a: [", "bad.yaml").unwrap_err())
                .starts_with("bad.yaml: invalid YAML: ")
        );
    }

    /// `updates --from`, `updates` and the agent read the inventory as `diff`, the store
    /// and every other source do (issue #41): what the one reader refuses, they refuse.
    #[test]
    fn the_updates_reader_refuses_what_the_inventory_reader_refuses() {
        let good = "apiVersion: lok8s.dev/v1alpha1\nkind: ClusterInventory\nmetadata: {name: cluster}\nspec: {lok8sVersion: '1', kind: lo, specHash: h, renderedAt: '2026-01-01T00:00:00Z', addons: [{name: a, chartVersion: 1.0.0}]}\n";
        let read = |text: &str| {
            find_inventory(text, "f")
                .map(|inventory| from_inventory(&inventory))
                .map_err(|e| crate::error::chain(&e))
        };
        assert_eq!(read(good).unwrap().len(), 1);
        for (text, field) in [
            (
                good.replace("apiVersion: lok8s.dev/v1alpha1\n", ""),
                "apiVersion",
            ),
            (
                good.replace("lok8s.dev/v1alpha1", "example.com/v1"),
                "apiVersion",
            ),
            (
                good.replace("metadata: {name: cluster}\n", ""),
                "metadata.name",
            ),
            (good.replace("specHash: h, ", ""), "spec.specHash"),
            (format!("{good}---\n{good}"), "2 ClusterInventory objects"),
            (
                good.replace(", addons", ", kind: x, addons"),
                "already defined",
            ),
        ] {
            let inventory = crate::inventory::parse::inventory_from_text(&text)
                .map_err(|e| crate::error::chain(&e));
            assert!(inventory.unwrap_err().contains(field), "{text}");
            let err = read(&text).expect_err(&text);
            assert!(err.starts_with("f: ") && err.contains(field), "{err}");
        }
    }
}
