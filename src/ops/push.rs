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
    /// The path of that key, for an owed push (read again when it is delivered).
    pub sign_key: Option<&'a Path>,
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
    /// What the registry took; `None` when the push is owed.
    pub pushed: Option<oci::Pushed>,
    /// The registry did not answer: the push is owed (see [`super::owed`]).
    pub owed: Option<super::owed::Owing>,
    /// The push happened but the store could not record it (the registry has it).
    pub not_recorded: Option<crate::Error>,
}

/// The notices of a push and its result.
pub type Report = crate::ops::Reported<Done>;

/// The placeholder of OCI_URL that names each domain's artifact.
pub const DOMAIN: &str = "{domain}";

/// `-a key=value` annotations, each with a key.
///
/// # Errors
/// [`crate::error::ArgumentError::Annotation`] for one without `=` or a key.
pub fn parse_annotations(given: &[String]) -> Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|a| match a.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(crate::error::ArgumentError::Annotation(a.clone()).into()),
        })
        .collect()
}

/// Several domains pushed in turn; the worst exit code.
///
/// Each is an artifact of its own at `target` with [`DOMAIN`] replaced, pushed (and
/// said) by `one`; a domain that fails is an `[error] D: …` line and its exit code, and
/// the others are pushed.
pub fn several(
    console: &dyn crate::console::Console,
    domains: &[crate::domain::Domain],
    target: &str,
    one: impl Fn(&crate::domain::Domain, &Reference) -> Result<i32>,
) -> i32 {
    let mut worst = crate::error::exit::OK;
    for domain in domains {
        let target = target.replace(DOMAIN, domain.as_str());
        let code = oci::parse_tag(&target)
            .and_then(|target| one(domain, &target))
            .unwrap_or_else(|e| {
                console.error(&format!("{domain}: {e}"));
                e.exit_code()
            });
        worst = worst.max(code);
    }
    worst
}

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
    let annotations = annotations(&snapshot, opts);
    let artifact = pack_with(&folder, &snapshot, opts.layer, &annotations)?;
    let snapshot_tag = format!("snapshot-{}", snapshot.id);
    let extra_tags = [snapshot_tag.clone()];
    let sending = oci::Sending {
        extra_tags: &extra_tags,
        signer: opts.signer,
        last_push: last_push.as_deref(),
        // A push the user asked for moves the tag as they asked.
        guard: None,
    };
    let mut push = Push {
        snapshot,
        origin,
        reference: opts.target.clone(),
        digest: artifact.digest.clone(),
        snapshot_tag,
        pushed: None,
        owed: None,
        not_recorded: None,
    };
    match oci::push(opts.target, &artifact, &opts.access, &sending) {
        Ok(pushed) => push.pushed = Some(pushed),
        Err(crate::Error::Oci(e)) if e.unanswered().is_some() => {
            let reason = e
                .unanswered()
                .unwrap_or(crate::delivery::Reason::Unreachable);
            let item = owed_item(store, &push.snapshot, opts, annotations, reason, &e);
            push.owed = Some(super::owed::owe(store, &item, &e));
            return Ok(Done::Done(Box::new(push)));
        }
        Err(e) => return Err(e),
    }
    push.not_recorded = record(store, &push.snapshot.id, opts, &artifact.digest).err();
    Ok(Done::Done(Box::new(push)))
}

/// Records a push that landed: the registry channel's state with the reference and
/// digest; an older owed push to the same reference is no longer owed.
///
/// # Errors
/// The store could not record it (the registry has it all the same).
pub(crate) fn record(
    store: &DomainStore,
    id: &crate::store::SnapshotId,
    opts: &Options<'_>,
    digest: &str,
) -> Result<()> {
    let change = pushed_state(id, opts.target, digest);
    store.set_states(&[change])?;
    let target = crate::store::outbox::Push::Oci(oci_target(opts.target));
    store.settle_target(&target)?;
    Ok(())
}

/// The registry channel's state of a push of `digest` to `target`.
pub(crate) fn pushed_state(
    id: &crate::store::SnapshotId,
    target: &Reference,
    digest: &str,
) -> StateRecord {
    let reference = format!("{}:{}@{digest}", target.url(), target.tag);
    StateRecord {
        pushed: Some(reference),
        ..StateRecord::new(id, &now_millis(), State::Pushed)
    }
}

/// An owed registry push naming only `target` (for settling by target).
fn oci_target(target: &Reference) -> crate::store::outbox::OciPush {
    crate::store::outbox::OciPush {
        reference: format!("{}:{}", target.url(), target.tag),
        layer: String::new(),
        annotations: BTreeMap::new(),
        sign_key: None,
        plain_http: false,
        insecure: false,
        ca_file: None,
        creds_env: None,
        token_env: None,
    }
}

/// The owed push of `snap` to `opts.target`: what re-packs and re-sends it, never a
/// secret (the key's path, the variables' names).
fn owed_item(
    store: &DomainStore,
    snap: &SnapshotRecord,
    opts: &Options<'_>,
    annotations: BTreeMap<String, String>,
    reason: crate::delivery::Reason,
    e: &crate::error::OciError,
) -> crate::store::outbox::Owed {
    let push = crate::store::outbox::OciPush {
        layer: match opts.layer {
            LayerType::Flux => "flux".into(),
            LayerType::Oci => "oci".into(),
        },
        annotations,
        sign_key: opts.sign_key.map(absolute),
        plain_http: opts.access.plain_http,
        insecure: opts.access.insecure,
        ca_file: opts.access.ca_file.as_deref().map(absolute),
        creds_env: opts.access.creds_env.clone(),
        token_env: opts.access.token_env.clone(),
        ..oci_target(opts.target)
    };
    crate::store::outbox::Owed {
        version: crate::store::outbox::VERSION,
        domain: store.domain.clone(),
        snapshot: snap.id.clone(),
        at: now_millis(),
        reason,
        detail: super::owed::detail(e),
        push: crate::store::outbox::Push::Oci(push),
    }
}

/// `path` made absolute (a delivery may run from another directory).
fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The manifest digest of a recorded push (`oci://registry/repository:tag@sha256:…`) when
/// it went to `target`'s repository.
fn pushed_digest(reference: &str, target: &Reference) -> Option<String> {
    let rest = reference.strip_prefix(&target.url())?.strip_prefix(':')?;
    let (tag, digest) = rest.split_once('@')?;
    (!tag.contains('/')).then(|| digest.to_string())
}

/// The artifact's annotations: where it comes from and when it was recorded.
fn annotations(snap: &SnapshotRecord, opts: &Options<'_>) -> BTreeMap<String, String> {
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
    annotations
}

/// The artifact of `folder` with `annotations`: the same bytes, so the same manifest
/// digest, whenever it is packed.
///
/// # Errors
/// The folder cannot be packed.
pub(crate) fn pack_with(
    folder: &crate::gitops::Folder,
    snap: &SnapshotRecord,
    layer: LayerType,
    annotations: &BTreeMap<String, String>,
) -> Result<Artifact> {
    let title = format!(
        "{}.tar.gz",
        crate::gitops::layout::object_name(&snap.domain)
    );
    let entries = folder.entries();
    oci::artifact::pack(&entries, layer, &title, annotations)
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

    /// `k=v` keeps everything after the first `=` (and trims the key); no `=` or an
    /// empty key is refused, named.
    #[test]
    fn annotations_need_a_key_and_an_equals_sign() {
        let given = ["a=b=c".to_string(), " k =".to_string()];
        assert_eq!(
            parse_annotations(&given).unwrap(),
            [("a".into(), "b=c".into()), ("k".into(), String::new())]
        );
        for bad in ["novalue", "=v", " =v"] {
            let e = parse_annotations(&[bad.to_string()]).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

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
