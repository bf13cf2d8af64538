//! `clinv push oci://…`: a domain's inventory folder — the files `clinv commit` writes — as
//! an OCI artifact in a registry, the channel of sites that run Flux (or Argo CD) from a
//! registry instead of Git.
//!
//! The snapshot is chosen as `commit` chooses it (a render is recorded first, for the
//! registry only); the artifact's annotations come from the snapshot and the project's Git
//! checkout, never from "now", so a re-push is identical.

use super::commit::{self, Chosen, Origin, Source};
use crate::error::Result;
use crate::gitops::Checkout;
use crate::oci::{self, Access, Artifact, LayerType, Reference};
use crate::store::{DomainStore, SnapshotRecord, State, StateRecord, now_millis};
use crate::util::notice::Notice;
use std::collections::BTreeMap;
use std::path::Path;

/// Where and how to push.
pub struct Options<'a> {
    pub target: &'a Reference,
    pub layer: LayerType,
    /// `--source`, else the project checkout's `origin`.
    pub source: Option<&'a str>,
    /// `-a key=value`, over the three clinv sets.
    pub annotations: &'a [(String, String)],
    pub access: Access,
    /// `--sign KEY`: the artifact's cosign signature is pushed beside it.
    pub signer: Option<&'a oci::SigningKey>,
    /// The project root, whose Git checkout (if any) gives source and revision.
    pub project_root: Option<&'a Path>,
}

/// What a push did.
pub type Done = crate::ops::Delivered<Box<Push>>;

/// A pushed snapshot.
pub struct Push {
    pub snapshot: SnapshotRecord,
    pub origin: Origin,
    pub reference: Reference,
    /// The manifest's digest.
    pub digest: String,
    /// The immutable tag derived from the snapshot (`snapshot-<id>`).
    pub snapshot_tag: String,
    pub pushed: oci::Pushed,
    /// The push happened but the store could not record it (the registry has it).
    pub not_recorded: Option<crate::Error>,
}

/// The notices of a push and its result.
pub type Report = crate::ops::Reported<Done>;

/// Chooses the snapshot (`--snapshot`, else the project's render, recorded), packs its
/// folder and pushes it.
pub fn run(store: &DomainStore, source: &Source<'_>, opts: &Options<'_>) -> Report {
    Report::gather(|notices| push(store, source, opts, notices))
}

fn push(
    store: &DomainStore,
    source: &Source<'_>,
    opts: &Options<'_>,
    notices: &mut Vec<Notice>,
) -> Result<Done> {
    // What the repository holds, as far as the store knows: the manifest the domain's
    // newest snapshot was pushed as, when it went to this repository.
    let last_push = store
        .newest_queue()
        .and_then(|q| q.channels.pushed)
        .and_then(|r| pushed_digest(&r, opts.target));
    let (snapshot, inventory, origin) = match commit::chosen(store, source, notices)? {
        Chosen::Snapshot(chosen) => *chosen,
        Chosen::DeployDomain { cluster_ref } => return Ok(Done::DeployDomain { cluster_ref }),
    };
    let folder = commit::folder(store, &snapshot, &inventory)?;
    let artifact = pack(&folder, &snapshot, opts)?;
    let snapshot_tag = format!("snapshot-{}", snapshot.id);
    let sending = oci::Sending {
        extra_tags: std::slice::from_ref(&snapshot_tag),
        signer: opts.signer,
        last_push: last_push.as_deref(),
    };
    let pushed = oci::push(opts.target, &artifact, &opts.access, &sending)?;
    // The registry channel: the snapshot's state records where it went, with the digest.
    let reference = format!(
        "{}:{}@{}",
        opts.target.url(),
        opts.target.tag,
        artifact.digest
    );
    let change = StateRecord {
        pushed: Some(reference),
        ..StateRecord::new(&snapshot.id, &now_millis(), State::Pushed)
    };
    let not_recorded = store.set_states(&[change]).err();
    Ok(Done::Done(Box::new(Push {
        snapshot,
        origin,
        reference: opts.target.clone(),
        digest: artifact.digest,
        snapshot_tag,
        pushed,
        not_recorded,
    })))
}

/// The manifest digest of a recorded push (`oci://registry/repository:tag@sha256:…`) when
/// it went to `target`'s repository.
fn pushed_digest(reference: &str, target: &Reference) -> Option<String> {
    let rest = reference.strip_prefix(&target.url())?.strip_prefix(':')?;
    let (tag, digest) = rest.split_once('@')?;
    (!tag.contains('/')).then(|| digest.to_string())
}

/// The artifact of `folder`, annotated with where it comes from and when it was recorded.
fn pack(
    folder: &crate::gitops::Folder,
    snap: &SnapshotRecord,
    opts: &Options<'_>,
) -> Result<Artifact> {
    let checkout = opts.project_root.and_then(Checkout::around);
    let mut annotations = BTreeMap::new();
    let source = opts
        .source
        .map(str::to_string)
        .or_else(|| checkout.as_ref().and_then(|c| c.origin.clone()));
    if let Some(source) = source {
        annotations.insert("org.opencontainers.image.source".to_string(), source);
    }
    let revision = checkout
        .as_ref()
        .map_or_else(|| snap.id.to_string(), Checkout::revision);
    annotations.insert("org.opencontainers.image.revision".to_string(), revision);
    // The inventory's render time (SOURCE_DATE_EPOCH when set), not the time it was
    // pushed or recorded: the same inventory gives the same manifest on any machine.
    annotations.insert(
        "org.opencontainers.image.created".to_string(),
        created(&snap.rendered_at),
    );
    for (k, v) in opts.annotations {
        annotations.insert(k.clone(), v.clone());
    }
    let title = format!(
        "{}.tar.gz",
        crate::gitops::layout::object_name(&snap.domain)
    );
    let entries = folder.entries();
    oci::artifact::pack(&entries, opts.layer, &title, &annotations)
        .map_err(|e| crate::Error::io("the artifact", e))
}

/// A time as RFC 3339 to the second (what Flux writes); as it is when it does not parse.
fn created(at: &str) -> String {
    crate::util::time::parse_rfc3339(at)
        .map_or_else(|| at.to_string(), crate::util::time::format_seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_push_counts_for_its_own_repository_only() {
        let target = oci::parse_tag("oci://r.example:5000/inv/prod:latest").unwrap();
        let at = |r: &str| pushed_digest(r, &target);
        let digest = Some("sha256:ab".to_string());
        assert_eq!(at("oci://r.example:5000/inv/prod:v1@sha256:ab"), digest);
        assert_eq!(at("oci://r.example:5000/inv/prod2:latest@sha256:ab"), None);
        assert_eq!(at("oci://r.example:5000/inv/prod/x:latest@sha256:ab"), None);
        assert_eq!(at("oci://r.example/inv/prod:latest@sha256:ab"), None);
    }
}
