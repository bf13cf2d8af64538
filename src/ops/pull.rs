//! The registry channel read back: `snapshots import oci://…`.
//!
//! The registry channel read back: `snapshots import oci://…` records an artifact that
//! `clinv push` left in a registry as a snapshot of a local store — the other side of an
//! air gap — its signature checked first with `--verify`. The folder's CRD and CR become
//! the store's objects again (without the Argo CD annotations `commit` and `push` add),
//! so a push from the importing store packs the same bytes.

use crate::domain::Domain;
use crate::error::{Error, OciError, PullProblem, Result};
use crate::gitops::{CR_FILE, CRD_FILE};
use crate::inventory::{ClusterInventory, DOMAIN_LABEL};
use crate::oci::{Access, PublicKey, Pulled, Reference, Session};
use crate::store::{SnapshotRecord, Store};

/// What an import did.
pub struct Imported {
    pub snapshot: SnapshotRecord,
    /// The manifest's digest.
    pub digest: String,
    /// The domain's newest snapshot already held this inventory: nothing was recorded.
    pub already: bool,
}

/// Pulls `reference` (checked against `verify` first) and records it in its domain's
/// store, unless that domain's newest snapshot holds the same inventory.
///
/// # Errors
/// The registry cannot be reached or refuses; [`OciError::Unverified`]; an artifact
/// that is not an inventory folder; the store cannot be written.
pub fn import(
    store: &Store,
    reference: &Reference,
    access: &Access,
    verify: Option<&PublicKey>,
) -> Result<Imported> {
    let mut session = Session::open(reference, access)?;
    let pulled = session.pull(reference.manifest(), verify)?;
    let named = reference.shown();
    let inventory = inventory(&pulled, &named)?;
    let crd = crd_json(&pulled, &named)?;
    let label = inventory.metadata.labels.get(DOMAIN_LABEL);
    let domain = Domain::parse(label.map_or("", String::as_str))?;
    let (snapshot, already) = store
        .domain(&domain)
        .record_or_fold_for_git(&inventory, &crd)?;
    Ok(Imported {
        snapshot,
        digest: pulled.digest,
        already,
    })
}

/// The ClusterInventory of a pulled artifact (its `clusterinventory.yaml`).
///
/// # Errors
/// No such file, or one that is not a ClusterInventory.
pub fn inventory(pulled: &Pulled, named: &str) -> Result<ClusterInventory> {
    let text = file(pulled, named, CR_FILE)?;
    crate::inventory::parse::inventory_from_text(text)
        .map_err(|m| Error::inventory(format!("{named}:{CR_FILE}"), m))
}

/// The artifact's CRD as the store keeps it: JSON, without the sync-wave annotation
/// the folder adds for Argo CD.
fn crd_json(pulled: &Pulled, named: &str) -> Result<String> {
    let text = file(pulled, named, CRD_FILE)?;
    let invalid = || OciError::Pull {
        reference: named.to_string(),
        problem: PullProblem::Invalid(CRD_FILE),
    };
    let doc = crate::yaml::Doc::documents(text)
        .next()
        .and_then(|d| d.ok())
        .ok_or_else(invalid)?;
    let mut crd = doc.root().map(|r| doc.to_value(r)).ok_or_else(invalid)?;
    if crd["kind"] != "CustomResourceDefinition" {
        return Err(invalid().into());
    }
    if let Some(meta) = crd.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        let emptied = meta
            .get_mut("annotations")
            .and_then(|a| a.as_object_mut())
            .is_some_and(|a| {
                a.remove("argocd.argoproj.io/sync-wave");
                a.is_empty()
            });
        if emptied {
            meta.remove("annotations");
        }
    }
    serde_json::to_string(&crd).map_err(|e| Error::encode("the CRD", e))
}

fn file<'a>(pulled: &'a Pulled, named: &str, name: &'static str) -> Result<&'a str> {
    let found = pulled.files.iter().find(|(p, _)| p == name);
    found.map(|(_, text)| text.as_str()).ok_or_else(|| {
        OciError::Pull {
            reference: named.to_string(),
            problem: PullProblem::Missing(name),
        }
        .into()
    })
}
