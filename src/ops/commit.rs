//! `clinv commit`: a snapshot of the store written into a GitOps repository (Flux /
//! Argo CD), committed, optionally pushed, and the outcome recorded in the store.

use crate::error::{Error, Result};
use crate::gitops::{self, Committed, Folder, Repo};
use crate::inventory::{ClusterInventory, render};
use crate::store::{Damage, DomainStore, SnapshotRecord, State, StateRecord, now_millis};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The default message: a stable subject, a body, and the trailers.
pub const DEFAULT_TEMPLATE: &str = "inventory({domain}): {summary}\n\nRendered at {renderedAt} (Kubernetes {kubernetesVersion}) and committed by clinv.\n";

/// How long a command waits for another clinv process to release the repository.
const REPO_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to commit.
pub struct Options<'a> {
    pub repo: &'a Path,
    /// The synced folder (`--path`, else [`gitops::default_path`]).
    pub path: &'a str,
    pub branch: Option<&'a str>,
    pub author: Option<&'a str>,
    /// `--message`, else [`DEFAULT_TEMPLATE`].
    pub template: Option<&'a str>,
    pub sign: bool,
    /// `--push REMOTE` and how long to retry it.
    pub push: Option<(&'a str, Duration)>,
    /// How an `https://` remote is reached (token, insecure TLS).
    pub https: gitops::https::Options,
}

/// Which GitOps object `--print-flux` / `--print-argo` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manifest {
    Flux,
    Argo,
}

/// The Flux Kustomization or Argo CD Application that syncs the folder.
///
/// # Errors
/// The repository cannot be opened, or its branch is unknown.
pub fn manifest(opts: &Options<'_>, domain: &str, which: Manifest) -> Result<String> {
    let repo = Repo::open(opts.repo, REPO_LOCK_TIMEOUT)?;
    let branch = repo.branch(opts.branch)?;
    Ok(match which {
        Manifest::Flux => gitops::flux(domain, opts.path),
        Manifest::Argo => gitops::argo(
            domain,
            opts.path,
            &branch,
            repo.remote_url(opts.push.map_or("origin", |(remote, _)| remote)),
        ),
    })
}

/// The snapshot `reference` names, else the newest; `None` when the store has none.
pub struct Picked {
    pub found: Option<(SnapshotRecord, ClusterInventory)>,
    /// Damaged journal lines that were skipped.
    pub damage: Vec<Damage>,
}

/// Picks the snapshot to commit.
///
/// # Errors
/// An unreadable journal, a reference that names nothing, a damaged object.
pub fn pick(store: &DomainStore, reference: Option<&str>) -> Result<Picked> {
    let journal = store.read()?;
    let reference = match reference {
        Some(text) => Some(crate::store::parse_ref(text)?),
        None => journal
            .newest_first()
            .next()
            .map(|_| crate::history::refs::SnapshotRef::Latest(0)),
    };
    let found = match reference {
        Some(r) => {
            let snap = crate::store::resolve(&journal, &r)?.record.clone();
            let inventory = store.inventory(&snap)?;
            Some((snap, inventory))
        }
        None => None,
    };
    Ok(Picked {
        found,
        damage: journal.damage,
    })
}

/// What a commit did.
pub struct Outcome {
    pub branch: String,
    pub committed: Committed,
    /// The pushed tip and the attempts it took, or why the push failed (nothing is
    /// recorded then).
    pub pushed: Option<Result<(String, u32)>>,
    /// The store could not record the commit (it happened all the same).
    pub not_recorded: Option<Error>,
}

/// Commits `snap` (whose inventory is `inventory`) into the repository, pushes it when
/// asked, and records the commit in the store — unless the branch holds a newer
/// inventory ([`Committed::Older`]), which is left alone.
///
/// # Errors
/// The CRD object, the repository or the commit failed.
pub fn commit(
    store: &DomainStore,
    snap: &SnapshotRecord,
    inventory: &ClusterInventory,
    opts: &Options<'_>,
) -> Result<Outcome> {
    let folder = Folder {
        crd: crd_yaml(store, snap)?,
        cr: cr_yaml(inventory)?,
        kustomization: gitops::kustomization(),
    };
    let repo = Repo::open(opts.repo, REPO_LOCK_TIMEOUT)?.with_https(opts.https.clone());
    let template = opts.template.unwrap_or(DEFAULT_TEMPLATE);
    let domain = &store.domain;
    let message = |summary: &str| message(template, summary, domain, snap, inventory);
    let request = gitops::Request {
        path: opts.path,
        branch: opts.branch,
        author: opts.author,
        message: &message,
        sign: opts.sign,
        inventory,
    };
    let branch = repo.branch(opts.branch)?;
    let committed = repo.commit(&folder, &request)?;
    let mut outcome = Outcome {
        branch,
        committed,
        pushed: None,
        not_recorded: None,
    };
    let commit_id = match &outcome.committed {
        Committed::Older { .. } => return Ok(outcome),
        Committed::UpToDate => None,
        Committed::New { oid, .. } => Some(oid.clone()),
    };
    let mut detail = commit_id
        .is_none()
        .then(|| "checked: the branch already holds it".to_string());
    let mut pushed_to = None;
    let carried_by = match opts.push {
        Some((remote, timeout)) => match repo.push(remote, &folder, &request, timeout) {
            Ok(pushed) => {
                let tip = repo.head_commit(&outcome.branch).unwrap_or_default();
                outcome.pushed = Some(Ok((tip.clone(), pushed.attempts)));
                if commit_id.is_some() {
                    detail = Some(format!("pushed to {remote}"));
                }
                pushed_to = Some(remote.to_string());
                Some(tip)
            }
            Err(e) => {
                outcome.pushed = Some(Err(e));
                return Ok(outcome);
            }
        },
        None => commit_id.or_else(|| repo.head_commit(&outcome.branch)),
    };
    // The Git channel only: recording a commit never changes the cluster state.
    let change = StateRecord {
        detail,
        commit: carried_by,
        pushed: pushed_to,
        ..StateRecord::new(&snap.id, &now_millis(), State::Committed)
    };
    outcome.not_recorded = store.set_states(&[change]).err();
    Ok(outcome)
}

/// The CRD as committed: the snapshot's CRD plus Argo CD's sync wave, so a first sync
/// creates the kind before the object.
fn crd_yaml(store: &DomainStore, snap: &SnapshotRecord) -> Result<String> {
    let mut crd: Value = serde_json::from_str(&store.crd(snap)?)
        .map_err(|e| Error::Damaged(format!("snapshot {}: CRD object: {e}", snap.id)))?;
    annotate(&mut crd, "argocd.argoproj.io/sync-wave", "-1");
    render::to_yaml(&crd)
}

/// The CR as committed: lok8s's object plus Argo CD's option to skip the dry run of a
/// kind that does not exist yet.
fn cr_yaml(inventory: &ClusterInventory) -> Result<String> {
    let mut cr = serde_json::to_value(inventory).map_err(|e| Error::encode("the inventory", e))?;
    annotate(
        &mut cr,
        "argocd.argoproj.io/sync-options",
        "SkipDryRunOnMissingResource=true",
    );
    render::to_yaml(&cr)
}

fn annotate(object: &mut Value, key: &str, value: &str) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(map) = annotations.as_object_mut() {
            map.insert(key.into(), value.into());
        }
    }
}

/// Fills the template and makes sure the three trailers end the message.
fn message(
    template: &str,
    summary: &str,
    domain: &str,
    snap: &SnapshotRecord,
    inventory: &ClusterInventory,
) -> String {
    let k8s = inventory
        .spec
        .kubernetes_version
        .as_deref()
        .unwrap_or("unknown");
    let mut text = template
        .replace("{domain}", domain)
        .replace("{summary}", summary)
        .replace("{specHash}", &snap.spec_hash)
        .replace("{lok8sVersion}", &snap.lok8s_version)
        .replace("{snapshot}", &snap.id)
        .replace("{renderedAt}", &snap.rendered_at)
        .replace("{kubernetesVersion}", k8s);
    let trailers = [
        ("Spec-Hash", &snap.spec_hash),
        ("Lok8s-Version", &snap.lok8s_version),
        ("Snapshot", &snap.id),
    ];
    let missing: Vec<String> = trailers
        .iter()
        .filter(|(k, _)| !text.lines().any(|l| l.starts_with(&format!("{k}: "))))
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    if !missing.is_empty() {
        text = format!("{}\n\n{}\n", text.trim_end(), missing.join("\n"));
    }
    text
}
