//! `clinv commit`: an inventory written into a GitOps repository and committed.
//!
//! `clinv commit`: the project rendered now (recorded in the store first), or a snapshot
//! of the store, written into a GitOps repository (Flux / Argo CD), committed, optionally
//! pushed, and the outcome recorded in the store.

use crate::domain::Domain;
use crate::error::{self, ArgumentError, Error, GitError, PushError, Result, SnapshotError};
use crate::gitops::layout::{self, Destination, Element, FluxSource};
use crate::gitops::{self, Committed, Folder, Found, Part, Repo};
use crate::inventory::{Built, ClusterInventory, Loaded, crd, render};
use crate::project::Project;
use crate::store::{Damage, DomainStore, SnapshotRecord, State, StateRecord, now_millis};
use crate::util::notice::Notice;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

pub mod several;

/// The default message: a stable subject, a body, and the trailers.
pub const DEFAULT_TEMPLATE: &str = "inventory({domain}): {summary}\n\nRendered at {renderedAt} (Kubernetes {kubernetesVersion}) and committed by clinv.\n";

/// What `--print-flux` says about Flux's multi-tenancy lockdown.
const LOCKDOWN: &str = "under Flux's multi-tenancy lockdown (kustomize-controller --default-service-account=SA, or spec.serviceAccountName) the Kustomization applies as that service account of flux-system: bind it a ClusterRole that may get, list, watch, create, update, patch and delete customresourcedefinitions (apiextensions.k8s.io) and clusterinventories (lok8s.dev) — the GitOps guide has one — or it stays not Ready with \"forbidden\"";

/// Where and how to commit.
pub struct Options<'a> {
    pub repo: &'a Path,
    /// The synced folder (`--path`, else [`gitops::default_path`]).
    pub path: &'a str,
    pub branch: Option<&'a str>,
    pub author: Option<&'a str>,
    /// `--message`, else [`DEFAULT_TEMPLATE`].
    pub template: Option<&'a str>,
    /// `--sign` / `--no-sign`; `None` = git's `commit.gpgSign`, as git does.
    pub sign: Option<bool>,
    /// `--push REMOTE` and how long to retry it.
    pub push: Option<(&'a str, Duration)>,
    /// `--force`: overwrite uncommitted changes to the folder's files.
    pub force: bool,
    /// `--allow-older`: commit over a branch whose inventory was rendered later.
    pub allow_older: bool,
    /// How an `https://` remote is reached (token, insecure TLS).
    pub https: gitops::https::Options,
}

/// Which GitOps object `--print-flux` / `--print-argo` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manifest {
    Flux,
    Argo,
}

/// What to print and where it points.
pub struct Print<'a> {
    pub which: Manifest,
    /// `--repo-url`, else the push remote's (default `origin`) URL.
    pub repo_url: Option<&'a str>,
    /// `--argo-server` / `--argo-cluster-name`; with `all`, a template holding `{domain}`.
    pub destination: Option<Destination>,
    /// `--print-argo -A` (or `--all`, a glob, `--domain` repeated): an Argo CD
    /// ApplicationSet over the selected domain folders on the branch (none: every one).
    pub set: Option<crate::project::select::Many<'a>>,
    /// `--path` was given (else the folder the branch holds is looked for).
    pub path_given: bool,
}

/// The printed manifest, or nothing and why.
pub struct Printed {
    pub text: Option<String>,
    pub notices: Vec<Notice>,
}

/// The Flux manifests or the Argo CD Application (or ApplicationSet) that sync the folder.
///
/// Inside a `flux bootstrap` tree that already applies the folder, nothing is printed for
/// Flux: a second Kustomization would fight `flux-system` over the objects.
///
/// # Errors
/// The repository cannot be opened, its branch is unknown, no repository URL is known, a
/// destination does not fit `--all`.
pub fn manifest(opts: &Options<'_>, domain: &str, print: &Print<'_>) -> Result<Printed> {
    let repo = Repo::open(opts.repo, crate::store::lock_timeout()?)?;
    let branch = repo.branch(opts.branch)?;
    let mut notices = Vec::new();
    // Argo CD clones with the git CLI: an SSH remote as it reads it.
    let url = |notices: &mut Vec<Notice>| -> Result<String> {
        let (url, notes) = repo.argo_url(&repo_url(&repo, opts, print, notices)?);
        notices.extend(notes.into_iter().map(Notice::warn));
        Ok(url)
    };
    let path = if print.set.is_some() {
        opts.path.to_string()
    } else {
        synced_path(
            &repo,
            &branch,
            domain,
            opts.path,
            print.path_given,
            &mut notices,
        )
    };
    let path = path.as_str();
    let text = match print.which {
        Manifest::Flux => {
            match flux_manifests(&repo, &branch, domain, path, opts, print, &mut notices)? {
                Some(text) => text,
                None => {
                    return Ok(Printed {
                        text: None,
                        notices,
                    });
                }
            }
        }
        Manifest::Argo if print.set.is_some() => {
            let url = url(&mut notices)?;
            let text = argo_set(&repo, &branch, print, &url, &mut notices)?;
            argo_access(&repo, opts, print, layout::NAME_PREFIX, &url, &mut notices);
            text
        }
        Manifest::Argo => {
            let destination = print
                .destination
                .clone()
                .unwrap_or_else(|| Destination::Server(layout::IN_CLUSTER.into()));
            let url = url(&mut notices)?;
            let name = layout::object_name(domain);
            argo_access(&repo, opts, print, &name, &url, &mut notices);
            layout::argo(domain, path, &branch, &url, &destination)
        }
    };
    Ok(Printed {
        text: Some(text),
        notices,
    })
}

/// `--print-flux`: the GitRepository (without a bootstrap) and the Kustomization; `None`
/// inside a bootstrap tree that already applies `path`.
fn flux_manifests(
    repo: &Repo,
    branch: &str,
    domain: &str,
    path: &str,
    opts: &Options<'_>,
    print: &Print<'_>,
    notices: &mut Vec<Notice>,
) -> Result<Option<String>> {
    if let Some(refusal) = repo.bootstrap_shared(branch, path, domain) {
        notices.push(Notice::warn(refusal.to_string()));
    }
    if let Some(b) = repo.bootstrap_for(branch, path) {
        let own = layout::object_name(domain);
        notices.push(Notice::info(format!(
                "{path} is already applied by the Flux Kustomization {}/{} of `flux bootstrap` ({} on {branch}); printing no second Kustomization — two would fight over the objects. A Kustomization {own} printed before bootstrapping is removed safely in this order: `flux suspend kustomization {own}` (or set its `prune: false` and let it reconcile), then delete it — deleted while it prunes, it would garbage-collect what it applied until flux-system reconciles again",
                b.namespace, b.name, b.file
            )));
        return Ok(None);
    }
    let source = repo.any_bootstrap(branch, path);
    let text = if let Some(b) = &source {
        let source = FluxSource::Bootstrap {
            name: &b.source,
            namespace: &b.namespace,
        };
        layout::flux(domain, path, &source)
    } else {
        let (url, notes) = repo.flux_url(&repo_url(repo, opts, print, notices)?);
        notices.extend(notes.into_iter().map(Notice::warn));
        let remote = opts.push.map_or("origin", |(remote, _)| remote);
        let token = opts.https.token_env.is_some();
        let access = repo.clone_access(print.repo_url, remote, token);
        let name = layout::object_name(domain);
        notices.extend(access.advice(&name, &url).map(Notice::info));
        let own = FluxSource::Own {
            url: &url,
            branch,
            access: &access,
        };
        layout::flux(domain, path, &own)
    };
    // Under Flux's multi-tenancy lockdown the Kustomization applies as a service account:
    // what is printed reconciles only once that account may apply the two objects.
    notices.push(Notice::info(LOCKDOWN.to_string()));
    Ok(Some(text))
}

/// `--print-argo`: what Argo CD needs to clone `url` (a repository Secret named `name`, a
/// private CA), as the repository reaches it.
fn argo_access(
    repo: &Repo,
    opts: &Options<'_>,
    print: &Print<'_>,
    name: &str,
    url: &str,
    notices: &mut Vec<Notice>,
) {
    let remote = opts.push.map_or("origin", |(remote, _)| remote);
    let token = opts.https.token_env.is_some();
    let access = repo.clone_access(print.repo_url, remote, token);
    notices.extend(access.argo_advice(name, url).into_iter().map(Notice::info));
}

/// One folder per domain (one Application each: their names come from the domain): the
/// default one when a domain is in several, else the first; the others are named.
fn one_folder_each(
    folders: Vec<(Domain, String)>,
    branch: &str,
    notices: &mut Vec<Notice>,
) -> Vec<(Domain, String)> {
    let mut chosen: Vec<(Domain, String)> = Vec::new();
    for (d, path) in folders {
        match chosen.iter_mut().find(|(c, _)| *c == d) {
            None => chosen.push((d, path)),
            Some(kept) => {
                let (keep, skip) = if path == gitops::default_path(&d) {
                    (path, std::mem::take(&mut kept.1))
                } else {
                    (std::mem::take(&mut kept.1), path)
                };
                notices.push(Notice::warn(format!(
                    "{branch} holds inventories of {d} in {keep} and {skip}: the ApplicationSet syncs {keep} (one Application a domain)"
                )));
                kept.1 = keep;
            }
        }
    }
    chosen.sort_by(|a, b| a.1.cmp(&b.1));
    chosen
}

/// The folder the printed manifests sync: `--path` as given, else where `branch` holds
/// the domain's inventory — its default folder, or the one it was committed to with
/// `--path` (said so) — with a warning when the branch holds none there yet.
fn synced_path(
    repo: &Repo,
    branch: &str,
    domain: &str,
    path: &str,
    given: bool,
    notices: &mut Vec<Notice>,
) -> String {
    let held: Vec<String> = repo
        .inventory_folders(branch)
        .into_iter()
        .filter(|(d, _)| d.as_str() == domain)
        .map(|(_, p)| p)
        .collect();
    let path = path.trim_end_matches('/');
    if given || held.iter().any(|p| p == path) {
        if !held.iter().any(|p| p == path) {
            notices.push(Notice::warn(format!(
                "{branch} holds no inventory of {domain} at {path} yet: commit it there before Flux or Argo CD can sync it"
            )));
        }
        return path.to_string();
    }
    match held.as_slice() {
        [] => {
            notices.push(Notice::warn(format!(
                "{branch} holds no inventory of {domain} yet (looked for every clusterinventory.yaml): printing for {path}, where `clinv commit` puts it"
            )));
            path.to_string()
        }
        [one] => {
            notices.push(Notice::info(format!(
                "{domain}'s inventory is at {one} on {branch} (committed with --path): printing for that folder"
            )));
            one.clone()
        }
        many => {
            notices.push(Notice::warn(format!(
                "{branch} holds inventories of {domain} in {}: printing for {path}; pass --path to choose",
                many.join(", ")
            )));
            path.to_string()
        }
    }
}

/// The URL Flux / Argo CD clone from: `--repo-url`, else the push remote's (without
/// credentials); a local path is printed as it is, with a warning, since no controller in
/// a cluster can clone it.
fn repo_url(
    repo: &Repo,
    opts: &Options<'_>,
    print: &Print<'_>,
    notices: &mut Vec<Notice>,
) -> Result<String> {
    let url = given_url(repo, opts, print)?;
    if crate::util::url::is_local_path(&url) {
        let what = match print.which {
            Manifest::Flux => "a Flux GitRepository",
            Manifest::Argo if print.set.is_some() => "an Argo CD ApplicationSet",
            Manifest::Argo => "an Argo CD Application",
        };
        let origin = match print.repo_url {
            Some(_) => "--repo-url".to_string(),
            None => format!("remote '{}'", opts.push.map_or("origin", |(r, _)| r)),
        };
        notices.push(Notice::warn(format!(
            "the repository URL {url} ({origin}) is a local path: {what} cannot clone it from inside a cluster; pass --repo-url with the https:// or ssh:// URL the cluster clones from"
        )));
    }
    Ok(url)
}

/// `--repo-url` (checked), else the push remote's URL.
fn given_url(repo: &Repo, opts: &Options<'_>, print: &Print<'_>) -> Result<String> {
    let remote = opts.push.map_or("origin", |(remote, _)| remote);
    let flag = match print.which {
        Manifest::Flux => "--print-flux",
        Manifest::Argo => "--print-argo",
    };
    match print.repo_url {
        Some(u) if u.trim().is_empty() || u.chars().any(char::is_whitespace) => {
            Err(ArgumentError::RepoUrl(u.to_string()).into())
        }
        Some(u) => Ok(crate::util::redact::url(u)),
        None => repo.remote_url(remote).ok_or_else(|| {
            ArgumentError::NoRemote {
                flag,
                remote: remote.to_string(),
            }
            .into()
        }),
    }
}

/// `--print-argo --all`: one ApplicationSet over every domain folder on the branch, each
/// to its own destination (`{domain}` in the template).
fn argo_set(
    repo: &Repo,
    branch: &str,
    print: &Print<'_>,
    url: &str,
    notices: &mut Vec<Notice>,
) -> Result<String> {
    let template = print
        .destination
        .clone()
        .unwrap_or_else(|| Destination::Name("{domain}".into()));
    let (flag, value) = match &template {
        Destination::Server(s) => ("--argo-server", s),
        Destination::Name(n) => ("--argo-cluster-name", n),
    };
    if !value.contains("{domain}") {
        return Err(ArgumentError::NoDomainPlaceholder {
            flag,
            value: value.clone(),
        }
        .into());
    }
    let mut folders = one_folder_each(repo.inventory_folders(branch), branch, notices);
    if let Some(many) = print
        .set
        .filter(|m| !m.patterns.is_empty() && !folders.is_empty())
    {
        let known: Vec<Domain> = folders.iter().map(|(d, _)| d.clone()).collect();
        let keep = crate::fleet::select_in(crate::fleet::Among::Listed(&known), many)?;
        folders.retain(|(d, _)| keep.contains(d));
    }
    if folders.is_empty() {
        return Err(GitError::NoDomainFolder {
            branch: branch.to_string(),
            example: gitops::default_cr_example(),
        }
        .into());
    }
    let elements: Vec<Element> = folders
        .into_iter()
        .map(|(d, path)| Element {
            path,
            destination: match &template {
                Destination::Server(s) => Destination::Server(s.replace("{domain}", &d)),
                Destination::Name(n) => Destination::Name(n.replace("{domain}", &d)),
            },
            domain: d.to_string(),
        })
        .collect();
    Ok(layout::argo_set(url, branch, &elements))
}

/// Why a commit was refused as older, as one warning: the branch's inventory was rendered
/// later.
///
/// When the store recorded the snapshot after the branch's (by the store's order when it
/// has a snapshot with that render time, else after that time), a clock (or a fixed
/// `SOURCE_DATE_EPOCH`) disagrees, and the warning says so.
pub fn older_message(
    store: &DomainStore,
    branch: &str,
    snap: &SnapshotRecord,
    branch_rendered_at: &str,
) -> String {
    let domain = &store.domain;
    // The compact queue, not the whole journal (a refusal is rare; its cost stays
    // that of the listing).
    let known: Vec<bool> = store
        .whole_queue(false)
        .map(|q| match q.position(&snap.id) {
            Some(index) => q.rendered_at(branch_rendered_at, index),
            None => Vec::new(),
        })
        .unwrap_or_default();
    if crate::delivery::skewed(&snap.at, branch_rendered_at, &known) {
        format!(
            "clock skew: {branch} holds an inventory of {domain} rendered at {branch_rendered_at}, but the store recorded snapshot {} later ({}) with an older renderedAt ({}); not committed — clinv commit --allow-older commits it",
            snap.id, snap.at, snap.rendered_at
        )
    } else {
        format!(
            "{branch} already holds a newer inventory of {domain} (renderedAt {branch_rendered_at}); snapshot {} (renderedAt {}) is not committed — clinv commit --allow-older commits it",
            snap.id, snap.rendered_at
        )
    }
}

/// What `clinv commit` commits.
pub enum Source<'a> {
    /// `--snapshot REF`: a snapshot of the store (`latest`, `latest~1`, an id).
    Stored(&'a str),
    /// The project as it is now, rendered (at `SOURCE_DATE_EPOCH`, else now) and recorded
    /// before Git is touched.
    Project {
        project: &'a Project,
        source_date_epoch: Option<&'a str>,
        /// `--strict`: build warnings stop the commit.
        strict: bool,
    },
}

/// Where the committed snapshot came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `--snapshot`: from the store.
    Stored,
    /// Rendered from the project; `folded` when the store's newest snapshot held the same
    /// inventory (apart from `renderedAt`) and is the one committed, else recorded now for
    /// Git only.
    Rendered { folded: bool },
}

impl Origin {
    /// `snapshot <id> (…)`: which snapshot, and where it came from.
    pub fn describe(self, id: &str) -> String {
        match self {
            Origin::Stored => format!("snapshot {id} (from the store)"),
            Origin::Rendered { folded: false } => {
                format!("snapshot {id} (rendered from the project; recorded for Git only)")
            }
            Origin::Rendered { folded: true } => {
                format!("snapshot {id} (rendered from the project; already the store's newest)")
            }
        }
    }
}

/// How `clinv commit` ended.
pub type Done = crate::ops::Delivered<Box<Commit>>;

/// What was committed, from where, and how it went.
pub struct Commit {
    pub snapshot: SnapshotRecord,
    pub origin: Origin,
    pub outcome: Outcome,
    /// With [`Committed::Older`]: the warning (or the `--strict` error) saying why.
    pub older: Option<String>,
}

/// The messages of the way (always), and how it ended.
pub type Report = crate::ops::Reported<Done>;

/// `clinv commit`: picks or renders the snapshot, then [`commit`]s it.
///
/// A rendered inventory is recorded in the store before the repository is opened (folded
/// into the newest snapshot when that holds it already); nothing is committed when it
/// cannot be.
pub fn run(store: &DomainStore, source: &Source<'_>, opts: &Options<'_>) -> Report {
    Report::gather(|notices| {
        let (snapshot, inventory, origin) = match chosen(store, source, notices)? {
            Chosen::Snapshot(chosen) => *chosen,
            Chosen::DeployDomain { cluster_ref } => return Ok(Done::DeployDomain { cluster_ref }),
        };
        let outcome = commit(store, &snapshot, &inventory, origin, opts, notices)?;
        let older = match &outcome.committed {
            Committed::Older { branch_rendered_at } => Some(older_message(
                store,
                &outcome.branch,
                &snapshot,
                branch_rendered_at,
            )),
            _ => None,
        };
        Ok(Done::Done(Box::new(Commit {
            snapshot,
            origin,
            outcome,
            older,
        })))
    })
}

/// What a channel (Git, a registry) delivers.
pub enum Chosen {
    /// A deploy domain: it has no inventory of its own.
    DeployDomain { cluster_ref: Option<String> },
    /// The snapshot and its inventory.
    Snapshot(Box<(SnapshotRecord, ClusterInventory, Origin)>),
}

/// The snapshot `source` names — `--snapshot`'s, or the project's render, recorded in the
/// store first (for Git and registries only, never queued for the cluster).
///
/// # Errors
/// The render, the store or the reference failed; nothing was recorded then.
pub fn chosen(
    store: &DomainStore,
    source: &Source<'_>,
    notices: &mut Vec<Notice>,
) -> Result<Chosen> {
    let (snapshot, inventory, origin) = match source {
        Source::Stored(reference) => stored(store, reference, notices)?,
        Source::Project {
            project,
            source_date_epoch,
            strict,
        } => {
            let built = match super::publish::build_checked(
                project,
                &store.domain,
                *source_date_epoch,
                *strict,
                notices,
            )? {
                Loaded::Cluster(built) => *built,
                Loaded::Deploy { cluster_ref, .. } => {
                    return Ok(Chosen::DeployDomain { cluster_ref });
                }
            };
            rendered(store, built, notices)?
        }
    };
    Ok(Chosen::Snapshot(Box::new((snapshot, inventory, origin))))
}

/// The synced folder's files for `snap` (whose inventory is `inventory`).
///
/// # Errors
/// The stored CRD is damaged, or an object cannot be encoded.
pub fn folder(
    store: &DomainStore,
    snap: &SnapshotRecord,
    inventory: &ClusterInventory,
) -> Result<Folder> {
    Ok(Folder {
        crd: crd_yaml(store, snap)?,
        cr: cr_yaml(inventory)?,
        kustomization: gitops::kustomization(),
    })
}

/// The stored snapshot `reference` names, with its inventory.
fn stored(
    store: &DomainStore,
    reference: &str,
    notices: &mut Vec<Notice>,
) -> Result<(SnapshotRecord, ClusterInventory, Origin)> {
    let picked = pick(store, Some(reference))?;
    notices.extend(
        picked
            .damage
            .iter()
            .map(|d| Notice::warn(format!("snapshot store: {d} — skipped"))),
    );
    let Some((snap, inventory)) = picked.found else {
        return Err(SnapshotError::NotOfDomain {
            reference: reference.to_string(),
            domain: store.domain.to_string(),
        }
        .into());
    };
    Ok((snap, inventory, Origin::Stored))
}

/// Records the project's render in the store before Git is touched (folded into the
/// newest snapshot when that holds it already); nothing is committed when it cannot be.
fn rendered(
    store: &DomainStore,
    built: Built,
    notices: &mut Vec<Notice>,
) -> Result<(SnapshotRecord, ClusterInventory, Origin)> {
    let crd_json = crd::definition_json()?;
    let (snap, folded) = store
        .record_or_fold_for_git(&built.inventory, &crd_json)
        .map_err(|e| Error::NotRecorded {
            what: format!(
                "the inventory of {} rendered for commit; nothing committed",
                store.domain
            ),
            source: Box::new(e),
        })?;
    let mut inventory = built.inventory;
    if folded {
        // The newest snapshot's inventory: the same object (its hash matched) with that
        // snapshot's renderedAt, so Git holds what the store holds under that id.
        inventory.spec.rendered_at.clone_from(&snap.rendered_at);
    } else {
        notices.push(Notice::debug(format!(
            "recorded snapshot {} in {} (for Git only)",
            snap.id,
            store.dir().display()
        )));
    }
    Ok((snap, inventory, Origin::Rendered { folded }))
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
    let given = reference.is_some();
    let reference = match reference {
        Some(text) => crate::store::parse_ref(text)?,
        None => crate::history::refs::SnapshotRef::Latest(0),
    };
    let resolved = match store.resolve(&reference) {
        Ok(r) => r,
        // Without a reference, an empty store picks nothing (the project is rendered).
        Err(Error::Snapshot(SnapshotError::TooFew(_))) if !given => {
            return Ok(Picked {
                found: None,
                damage: store.listing()?.damage,
            });
        }
        Err(e) => return Err(e),
    };
    let inventory = store.inventory(&resolved.snapshot.record)?;
    Ok(Picked {
        found: Some((resolved.snapshot.record, inventory)),
        damage: resolved.damage,
    })
}

/// What a commit did.
pub struct Outcome {
    pub branch: String,
    pub committed: Committed,
    /// The pushed tip and the attempts it took (a failed push is the flow's error).
    pub pushed: Option<(String, u32)>,
    /// The store could not record the commit (it happened all the same).
    pub not_recorded: Option<Error>,
    /// The remote did not answer: the push is owed.
    pub owed: Option<super::owed::Owing>,
}

/// Commits `snap` into the repository, pushes it when asked, and records the commit.
///
/// Commits `snap` (whose inventory is `inventory`) into the repository, pushes it when
/// asked, and records the commit in the store — unless the branch holds a newer
/// inventory ([`Committed::Older`]), which is left alone. What was committed is said in
/// `notices` as soon as it is done, so it is said even when the push then fails.
///
/// # Errors
/// The CRD object, the repository, the commit or the push failed (a commit made before
/// a failed push stays; it is not recorded in the store then).
pub fn commit(
    store: &DomainStore,
    snap: &SnapshotRecord,
    inventory: &ClusterInventory,
    origin: Origin,
    opts: &Options<'_>,
    notices: &mut Vec<Notice>,
) -> Result<Outcome> {
    let repo = Repo::open(opts.repo, crate::store::lock_timeout()?)?.with_https(opts.https.clone());
    let folder = folder(store, snap, inventory)?;
    let template = opts.template.unwrap_or(DEFAULT_TEMPLATE);
    let domain = &store.domain;
    let message = |found: &[Found]| match found {
        [
            Found::Changed {
                summary, outside, ..
            },
        ] => message(
            template,
            summary,
            outside.as_deref(),
            domain,
            snap,
            inventory,
        ),
        _ => String::new(),
    };
    let parts = [Part {
        path: opts.path,
        folder: &folder,
        inventory,
    }];
    let request = request(opts, &parts, &message);
    let branch = repo.branch(opts.branch)?;
    let committed = repo.commit(&request)?.single();
    let mut outcome = Outcome {
        branch,
        committed,
        pushed: None,
        not_recorded: None,
        owed: None,
    };
    let commit_id = match &outcome.committed {
        Committed::Older { .. } => return Ok(outcome),
        Committed::UpToDate => None,
        Committed::New { oid, .. } => Some(oid.clone()),
    };
    notices.push(Notice::info(committed_line(
        &outcome, origin, &snap.id, opts.path, domain,
    )));
    let mut detail = commit_id
        .is_none()
        .then(|| "checked: the branch already holds it".to_string());
    let mut pushed_to = None;
    let carried_by = match opts.push {
        Some((remote, timeout)) => {
            let push = (remote, timeout);
            let landed = push_or_owe(store, &repo, snap, opts, &request, push, &mut outcome)?;
            let tip = repo.head_commit(&outcome.branch).unwrap_or_default();
            if landed {
                if commit_id.is_some() {
                    detail = Some(format!("pushed to {remote}"));
                }
                pushed_to = Some(remote.to_string());
            }
            Some(tip)
        }
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

/// Pushes the branch; when the remote does not answer, records the push as owed
/// ([`Outcome::owed`]) instead of failing. Whether it landed.
///
/// # Errors
/// The push was refused (rejected, not landed in time, credentials): as before.
fn push_or_owe(
    store: &DomainStore,
    repo: &Repo,
    snap: &SnapshotRecord,
    opts: &Options<'_>,
    request: &gitops::Request<'_>,
    (remote, timeout): (&str, Duration),
    outcome: &mut Outcome,
) -> Result<bool> {
    match repo.push(remote, request, timeout) {
        Ok(pushed) => {
            let tip = repo.head_commit(&outcome.branch).unwrap_or_default();
            outcome.pushed = Some((tip, pushed.attempts));
            let target = crate::store::outbox::Push::Git(git_target(
                repo,
                remote,
                &outcome.branch,
                opts,
                "",
            ));
            // A newer push to the target landed: an older owed one is no longer owed.
            if let Err(e) = store.settle_target(&target) {
                outcome.not_recorded.get_or_insert(e);
            }
            Ok(true)
        }
        Err(Error::Push(e @ PushError::Unanswered { reason, .. })) => {
            let tip = repo.head_commit(&outcome.branch).unwrap_or_default();
            let push = git_target(repo, remote, &outcome.branch, opts, &tip);
            let item = crate::store::outbox::Owed {
                version: crate::store::outbox::VERSION,
                domain: store.domain.clone(),
                snapshot: snap.id.clone(),
                at: now_millis(),
                reason,
                detail: super::owed::detail(&e),
                push: crate::store::outbox::Push::Git(push),
            };
            outcome.owed = Some(super::owed::owe(store, &item, &e));
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The owed push of `branch` at `commit` to `remote`: the repository (absolute), the
/// remote's URL without credentials, the token variable's name.
pub(super) fn git_target(
    repo: &Repo,
    remote: &str,
    branch: &str,
    opts: &Options<'_>,
    commit: &str,
) -> crate::store::outbox::GitPush {
    let dir = repo.workdir();
    crate::store::outbox::GitPush {
        repo: std::path::absolute(&dir).unwrap_or(dir),
        remote: remote.to_string(),
        url: repo.remote_url(remote).unwrap_or_default(),
        branch: branch.to_string(),
        commit: commit.to_string(),
        token_env: opts.https.token_env.clone(),
        allow_insecure_tls: opts.https.allow_insecure_tls,
    }
}

/// The commit request of `opts` for `parts`.
fn request<'a>(
    opts: &'a Options<'_>,
    parts: &'a [Part<'a>],
    message: &'a dyn Fn(&[Found]) -> String,
) -> gitops::Request<'a> {
    gitops::Request {
        parts,
        branch: opts.branch,
        author: opts.author,
        message,
        force: opts.force,
        sign: opts.sign,
        allow_older: opts.allow_older,
    }
}

/// What a commit did, in one line: committed as which commit, or already up to date.
fn committed_line(
    outcome: &Outcome,
    origin: Origin,
    id: &str,
    path: &str,
    domain: &Domain,
) -> String {
    let which = origin.describe(id);
    let branch = &outcome.branch;
    match &outcome.committed {
        Committed::New { oid, summary } => format!(
            "committed {which} as {} on {branch}: inventory({domain}): {summary}",
            &oid[..oid.len().min(12)]
        ),
        _ => format!("{path}: up to date on {branch}: {which} matches apart from renderedAt"),
    }
}

/// The CRD as committed: the snapshot's CRD plus Argo CD's sync wave, so a first sync
/// creates the kind before the object.
fn crd_yaml(store: &DomainStore, snap: &SnapshotRecord) -> Result<String> {
    let mut crd: Value =
        serde_json::from_str(&store.crd(snap)?).map_err(|e| error::Damaged::Crd {
            snapshot: snap.id.to_string(),
            why: e.to_string(),
        })?;
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

/// `text` with `paragraph` added before its trailers (a last paragraph of `Key: value`
/// lines), else at its end.
fn with_paragraph(text: &str, paragraph: &str) -> String {
    let body = text.trim_end();
    let (head, last) = body.rsplit_once("\n\n").unwrap_or(("", body));
    let trailers = !head.is_empty()
        && last.lines().all(|l| {
            l.split_once(": ").is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        });
    if trailers {
        format!("{head}\n\n{paragraph}\n\n{last}\n")
    } else {
        format!("{body}\n\n{paragraph}\n")
    }
}

/// Fills the template and makes sure the three trailers end the message.
fn message(
    template: &str,
    summary: &str,
    outside: Option<&str>,
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
    if let Some(note) = outside {
        text = with_paragraph(&text, note);
    }
    let trailers = [
        ("Spec-Hash", snap.spec_hash.as_str()),
        ("Lok8s-Version", snap.lok8s_version.as_str()),
        ("Snapshot", snap.id.as_str()),
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

#[cfg(test)]
mod tests {
    use super::with_paragraph;

    #[test]
    fn the_outside_paragraph_goes_before_the_trailers() {
        let note = "Changed outside clinv:\n- kustomization.yaml (abc \"edit\")";
        assert_eq!(
            with_paragraph("inventory(x): y\n\nBody.\n", note),
            format!("inventory(x): y\n\nBody.\n\n{note}\n")
        );
        assert_eq!(
            with_paragraph("subject\n\nBody.\n\nSnapshot: s1\nSpec-Hash: h\n", note),
            format!("subject\n\nBody.\n\n{note}\n\nSnapshot: s1\nSpec-Hash: h\n")
        );
        // A one-line message has no trailers to keep last.
        assert_eq!(
            with_paragraph("Key: value", note),
            format!("Key: value\n\n{note}\n")
        );
    }
}
