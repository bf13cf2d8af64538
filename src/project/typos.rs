//! Typos lok8s does not mind but that change the inventory: a `kind` that is no lok8s
//! driver (recorded lower-cased all the same), a misspelt key where the inventory reads
//! one.
//!
//! The inventory says them as warnings; `--strict` makes them errors.

use crate::util::suggest::closest;
use crate::yaml::{Doc, Node, NodeId};

/// The drivers lok8s ships, spelt as its docs spell them.
pub const DRIVERS: [&str; 4] = ["Lo", "KubeOne", "Capi", "Kkp"];

/// One typo in a cluster spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typo {
    /// `kind` names no lok8s driver; the inventory records it lower-cased, as lok8s does.
    Kind {
        raw: String,
        suggestion: Option<&'static str>,
    },
    /// A key close to one the inventory reads, in the same mapping, while that one is
    /// absent: `spec.kubernets` for `spec.kubernetes`.
    Key {
        path: String,
        meant: String,
        lost: &'static str,
    },
}

/// The keys the inventory reads, by the mapping holding them, and what the inventory
/// loses when one is missing. Parents come before their children.
const READ: [(&[&str], &str, &str); 9] = [
    (&[], "kind", "kind is left out, so lo is recorded"),
    (
        &[],
        "metadata",
        "metadata.name, lok8s's kubeconfig name, is left out",
    ),
    (&[], "spec", "everything under spec is left out"),
    (&["metadata"], "name", "lok8s's kubeconfig name is left out"),
    (&["spec"], "provider", "provider is left out"),
    (&["spec"], "kubernetes", "kubernetesVersion is left out"),
    (&["spec"], "bootstrap", "its addons are left out"),
    (&["spec", "provider"], "name", "provider is left out"),
    (
        &["spec", "kubernetes"],
        "version",
        "kubernetesVersion is left out",
    ),
];

/// Keys that are known though the inventory does not read them.
const KNOWN: [&str; 1] = ["apiVersion"];

/// The typos of a spec whose top-level mapping is `top`, in document order per mapping.
pub fn check(doc: &Doc, top: NodeId, kind: Option<&str>) -> Vec<Typo> {
    let mut typos = Vec::new();
    if let Some(raw) = kind {
        let lower = raw.to_lowercase();
        if !DRIVERS.iter().any(|d| d.to_lowercase() == lower) {
            let near = closest(&lower, DRIVERS.map(str::to_lowercase));
            typos.push(Typo::Kind {
                raw: raw.to_string(),
                suggestion: near.and_then(|n| DRIVERS.into_iter().find(|d| d.to_lowercase() == n)),
            });
        }
    }
    let mut seen: Vec<&[&str]> = Vec::new();
    for (at, _, _) in READ {
        if !seen.contains(&at) {
            seen.push(at);
            typos.extend(keys_at(doc, top, at));
        }
    }
    typos
}

/// The misspelt keys of the mapping at `at` (none when it is absent or not a mapping).
fn keys_at(doc: &Doc, top: NodeId, at: &[&str]) -> Vec<Typo> {
    let Some(map) = doc
        .path(top, at)
        .filter(|n| matches!(doc.node(*n), Node::Map(_)))
    else {
        return Vec::new();
    };
    let present: Vec<&str> = doc
        .entries(map)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, _)| doc.text(k))
        .collect();
    let read: Vec<(&str, &str)> = READ
        .iter()
        .filter(|(p, _, _)| *p == at)
        .map(|(_, key, lost)| (*key, *lost))
        .collect();
    let absent: Vec<&str> = read
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !present.contains(k))
        .collect();
    let path = |key: &str| {
        at.iter()
            .chain([&key])
            .copied()
            .collect::<Vec<_>>()
            .join(".")
    };
    present
        .iter()
        .filter(|k| !KNOWN.contains(k) && !read.iter().any(|(r, _)| r == *k))
        .filter_map(|k| {
            let meant = closest(k, absent.iter().copied())?;
            let lost = read.iter().find(|(r, _)| *r == meant)?.1;
            Some(Typo::Key {
                path: path(k),
                meant: path(meant),
                lost,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typos(yaml: &str) -> Vec<Typo> {
        let doc = Doc::parse(yaml).unwrap();
        let top = doc.root().unwrap();
        let kind = doc.get(top, "kind").and_then(|k| doc.text(k));
        check(&doc, top, kind)
    }

    fn key(path: &str, meant: &str, lost: &'static str) -> Typo {
        Typo::Key {
            path: path.into(),
            meant: meant.into(),
            lost,
        }
    }

    #[test]
    fn kinds_lok8s_does_not_ship() {
        assert_eq!(
            typos("kind: KubeOen\n"),
            [Typo::Kind {
                raw: "KubeOen".into(),
                suggestion: Some("KubeOne")
            }]
        );
        assert_eq!(
            typos("kind: K8s1\n"),
            [Typo::Kind {
                raw: "K8s1".into(),
                suggestion: None
            }]
        );
        for fine in [
            "kind: lo",
            "kind: KUBEONE",
            "kind: Capi",
            "kind: kkp",
            "spec: {}",
        ] {
            assert_eq!(typos(fine), [], "{fine}");
        }
    }

    #[test]
    fn keys_close_to_an_absent_read_key() {
        assert_eq!(
            typos("kind: Lo\nspce:\n  bootstrap: []\n"),
            [key("spce", "spec", "everything under spec is left out")]
        );
        assert_eq!(
            typos("spec:\n  kubernets: {version: v1}\n  bootstrp: [a]\n  provider: {nmae: x}\n"),
            [
                key(
                    "spec.kubernets",
                    "spec.kubernetes",
                    "kubernetesVersion is left out"
                ),
                key("spec.bootstrp", "spec.bootstrap", "its addons are left out"),
                key(
                    "spec.provider.nmae",
                    "spec.provider.name",
                    "provider is left out"
                ),
            ]
        );
        assert_eq!(
            typos("metadata: {nme: x}\nspec:\n  kubernetes: {verison: v1}\n"),
            [
                key(
                    "metadata.nme",
                    "metadata.name",
                    "lok8s's kubeconfig name is left out"
                ),
                key(
                    "spec.kubernetes.verison",
                    "spec.kubernetes.version",
                    "kubernetesVersion is left out"
                ),
            ]
        );
        // The key it might mean is there: the near one is something else.
        assert_eq!(typos("spec:\n  provider: {name: a, nam: b}\n"), []);
        // Keys lok8s's drivers read that the inventory does not.
        let other = "apiVersion: v1\nspec:\n  nodes: 3\n  network: {}\n  provider: {name: h, region: fsn1, cloud: x}\n";
        assert_eq!(typos(other), []);
    }
}
