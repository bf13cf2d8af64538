//! Reading the inventory behind each `clinv diff` reference (the grammar is
//! [`crate::history::refs`]) and comparing the two.
//!
//! Snapshot references resolve through the snapshot store of the domain, git references
//! through [`crate::gitops::history`] in the repository given with `--repo`, `cluster`
//! through [`crate::cluster::access::read_live`], with the same kubeconfig rules as
//! `clinv status`.

use crate::cluster::Options;
use crate::cluster::access::{self, Access};
use crate::domain::Domain;
use crate::error::{Error, ReferenceError, Result};
use crate::history::diff::{self, Ignore, Report};
use crate::history::refs::{Ref, SnapshotRef, parse_ref};
use crate::inventory::{ClusterInventory, parse};
use crate::project::select::{self, Known};
use crate::project::{MAX_INPUT_BYTES, Project};
use crate::store::Store;
use crate::util::files;
use std::cell::{Cell, OnceCell, RefCell};
use std::io::Read;
use std::path::Path;

/// Where references are looked up. The project is looked up only when a reference
/// needs it, so two files can be compared outside any project.
pub struct RefContext<'a> {
    /// `--root`; without it the project is looked for above `cwd`.
    pub root: Option<&'a Path>,
    pub cwd: &'a Path,
    /// `--domain`, for the store's domain and the default `git:` path.
    pub domain: Option<&'a str>,
    /// `DOMAIN_NAME`.
    pub env_domain: Option<&'a str>,
    /// `--snapshots`; without it `<root>/snapshots`.
    pub snapshots: Option<&'a Path>,
    /// `--repo`, for `git:` references.
    pub repo: Option<&'a Path>,
    /// For the `cluster` reference: how to reach it, and the time budget.
    pub cluster: Option<(&'a Access, Options)>,
    /// For `oci://` references: how to reach the registry, and the key every artifact
    /// must be signed by (`--verify`).
    #[cfg(feature = "gitops")]
    pub registry: Option<(&'a crate::oci::Access, Option<&'a crate::oci::PublicKey>)>,
    project: OnceCell<Option<Project>>,
    stdin_used: Cell<bool>,
    notices: RefCell<Vec<String>>,
    notes: RefCell<Vec<String>>,
}

impl<'a> RefContext<'a> {
    pub fn new(cwd: &'a Path) -> Self {
        RefContext {
            root: None,
            cwd,
            domain: None,
            env_domain: None,
            snapshots: None,
            repo: None,
            cluster: None,
            #[cfg(feature = "gitops")]
            registry: None,
            project: OnceCell::new(),
            stdin_used: Cell::new(false),
            notices: RefCell::new(Vec::new()),
            notes: RefCell::new(Vec::new()),
        }
    }

    /// The project named by `--root` or found above the working directory, if any.
    pub fn project(&self) -> Option<&Project> {
        self.project
            .get_or_init(|| Project::discover(self.root, self.cwd).ok())
            .as_ref()
    }

    /// lok8s's notices from resolving the domain, to print as they are.
    pub fn take_notices(&self) -> Vec<String> {
        self.notices.take()
    }

    /// Which domain was chosen for snapshot references, when that was not obvious.
    pub fn take_notes(&self) -> Vec<String> {
        self.notes.take()
    }

    /// The domain by the one selection rule ([`crate::project::select`]); `store` for
    /// snapshot references (its domains and its root).
    fn select(&self, project: Option<&Project>, store: Option<&Store>) -> Result<Domain> {
        let domains = store.map(Store::domains);
        let known = Known {
            project,
            store: store.zip(domains.as_deref()).map(|(s, d)| (d, s.root())),
        };
        let mut notices = Vec::new();
        let selected = select::select(known, self.domain, self.env_domain, &mut notices);
        let note = selected.as_ref().ok().and_then(|s| s.note.clone());
        // Both references may select: say each thing once.
        for (list, new) in [
            (&self.notices, notices),
            (&self.notes, note.into_iter().collect()),
        ] {
            let mut list = list.borrow_mut();
            for line in new {
                if !list.contains(&line) {
                    list.push(line);
                }
            }
        }
        Ok(selected?.domain)
    }

    fn domain_of(&self, project: &Project) -> Result<Domain> {
        self.select(Some(project), None)
    }
}

/// The live object, read with the same kubeconfig rules as `clinv status`.
fn live(cx: &RefContext) -> Result<ClusterInventory> {
    let Some((access, opts)) = cx.cluster else {
        return Err(ReferenceError::ClusterNotHere.into());
    };
    let project = cx.project();
    let domain = match project {
        Some(p) => Some((p, cx.domain_of(p)?)),
        None => None,
    };
    let read = access::read_live(access, domain.as_ref().map(|(p, d)| (*p, d)), opts)?;
    if read.choice.is_none() {
        let detail = read.result.err().map(|f| f.detail).unwrap_or_default();
        return Err(ReferenceError::ClusterUnreachable(detail).into());
    }
    match read.result.map(|found| found.object) {
        Ok(Some(value)) => parse::inventory_from_value(value)
            .map_err(|m| ReferenceError::ClusterUnreadable(m).into()),
        Ok(None) => Err(ReferenceError::ClusterMissing.into()),
        Err(f) => Err(ReferenceError::ClusterFailed(format!("{}: {}", f.reason, f.detail)).into()),
    }
}

/// A resolved reference: the inventory and how to name it in reports.
#[derive(Debug)]
pub struct Resolved {
    pub inventory: ClusterInventory,
    pub label: String,
    /// What it was and what it resolved to, as the report's endpoint carries them.
    pub origin: Origin,
}

/// What a reference resolved to ([`diff::Endpoint`]'s `source`, `resolved`,
/// `recordedAt`, `revision`).
#[derive(Debug, Default)]
pub struct Origin {
    pub source: &'static str,
    /// The file read, the snapshot id, the commit id.
    pub resolved: Option<String>,
    pub recorded_at: Option<String>,
    pub revision: Option<u64>,
}

impl Origin {
    fn of(source: &'static str, resolved: Option<String>) -> Origin {
        Origin {
            source,
            resolved,
            ..Origin::default()
        }
    }

    fn mark(&self, endpoint: &mut diff::Endpoint, label: &str) {
        endpoint.reference = Some(label.to_string());
        endpoint.source = Some(self.source.to_string());
        endpoint.resolved = self.resolved.clone();
        endpoint.recorded_at = self.recorded_at.clone();
        endpoint.revision = self.revision;
    }
}

/// Two references read and compared.
#[derive(Debug)]
pub struct Compared {
    pub from: Resolved,
    pub to: Resolved,
    pub report: Report,
    /// `--ignore` paths that select nothing in either inventory (likely typos).
    pub unmatched: Vec<crate::error::ArgumentError>,
}

/// Parses both references (so a malformed second one is reported before the first
/// reaches a cluster), reads them and diffs them.
///
/// # Errors
/// As [`check_refs`] and [`resolve_ref`].
pub fn compare(cx: &RefContext, from: &str, to: &str, ignore: &Ignore) -> Result<Compared> {
    check_refs(&[from, to])?;
    let from = resolve_ref(cx, from)?;
    let to = resolve_ref(cx, to)?;
    let mut report = diff::diff_with(&from.inventory, &to.inventory, ignore);
    from.origin.mark(&mut report.from, &from.label);
    to.origin.mark(&mut report.to, &to.label);
    let unmatched = ignore.unmatched(&[&from.inventory, &to.inventory]);
    Ok(Compared {
        from,
        to,
        report,
        unmatched,
    })
}

/// Parses every reference before any is read, so a malformed second reference is
/// reported before the first one reaches a cluster, and stdin is named at most once.
///
/// # Errors
/// As [`parse_ref`]; [`ReferenceError::StdinTwice`] when `-` appears twice.
pub fn check_refs(texts: &[&str]) -> Result<()> {
    let mut stdin = 0;
    for text in texts {
        if parse_ref(text, Path::is_dir, Path::exists)? == Ref::Stdin {
            stdin += 1;
        }
    }
    if stdin > 1 {
        return Err(ReferenceError::StdinTwice.into());
    }
    Ok(())
}

/// Parses and reads a reference.
///
/// # Errors
/// Malformed syntax ([`ReferenceError::Malformed`]); an unreadable or invalid file
/// ([`Error::Io`], [`Error::InvalidFile`]); an unreachable cluster or a reference this
/// build cannot resolve ([`Error::Reference`]).
pub fn resolve_ref(cx: &RefContext, text: &str) -> Result<Resolved> {
    let r = parse_ref(text, Path::is_dir, Path::exists)?;
    let (inventory, origin) = match &r {
        Ref::Stdin => (stdin(cx)?, Origin::of("stdin", None)),
        Ref::Cluster => (live(cx)?, Origin::of("cluster", None)),
        Ref::File(path) => (
            file(path)?,
            Origin::of("file", Some(path.display().to_string())),
        ),
        Ref::Snapshot(s) => snapshot(cx, text, s)?,
        #[cfg(feature = "gitops")]
        Ref::Git { rev, path } => git(cx, text, rev, path.as_deref())?,
        #[cfg(feature = "gitops")]
        Ref::Oci(url) => oci(cx, url)?,
        #[cfg(not(feature = "gitops"))]
        Ref::Git { .. } => return Err(Error::NoGitops("a git: reference")),
        #[cfg(not(feature = "gitops"))]
        Ref::Oci(_) => return Err(Error::NoGitops("an oci:// reference")),
    };
    Ok(Resolved {
        inventory,
        label: text.to_string(),
        origin,
    })
}

fn decode(path: &Path, bytes: Vec<u8>) -> Result<ClusterInventory> {
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidFile {
        path: path.to_path_buf(),
        message: "not valid UTF-8".into(),
    })?;
    parse::inventory_from_text(&text).map_err(|e| Error::inventory(path.display().to_string(), e))
}

fn file(path: &Path) -> Result<ClusterInventory> {
    let bytes = files::read_bounded(path, MAX_INPUT_BYTES).map_err(|e| Error::io(path, e))?;
    decode(path, bytes)
}

fn stdin(cx: &RefContext) -> Result<ClusterInventory> {
    if cx.stdin_used.replace(true) {
        return Err(ReferenceError::StdinTwice.into());
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("<stdin>", e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::InvalidFile {
            path: "<stdin>".into(),
            message: format!("input too large (limit {} MiB)", MAX_INPUT_BYTES >> 20),
        });
    }
    decode(Path::new("<stdin>"), bytes)
}

/// A snapshot of the domain's store.
fn snapshot(cx: &RefContext, text: &str, r: &SnapshotRef) -> Result<(ClusterInventory, Origin)> {
    let project = cx.project();
    let store = match (cx.snapshots, project) {
        (Some(dir), _) => Store::at(dir),
        (None, Some(p)) => Store::of_project(None, p.root()),
        (None, None) => {
            return Err(ReferenceError::NoStore(text.to_string()).into());
        }
    };
    let domain = cx.select(project, Some(&store))?;
    let store = store.domain(&domain);
    let resolved = store.resolve(r)?;
    let snap = &resolved.snapshot;
    let origin = Origin {
        source: "snapshot",
        resolved: Some(snap.record.id.to_string()),
        recorded_at: Some(snap.record.at.clone()),
        // Its revision as `clinv log` numbers it: the place in the store's order.
        revision: Some(resolved.revision),
    };
    Ok((store.inventory(&snap.record)?, origin))
}

/// The inventory of the artifact an `oci://` reference names (its signature checked
/// first with `--verify`); the origin names its digest.
#[cfg(feature = "gitops")]
fn oci(cx: &RefContext, url: &str) -> Result<(ClusterInventory, Origin)> {
    let reference = crate::oci::parse(url)?;
    let default = crate::oci::Access::default();
    let (access, verify) = cx.registry.unwrap_or((&default, None));
    let mut session = crate::oci::Session::open(&reference, access)?;
    let pulled = session.pull(reference.manifest(), verify)?;
    let inventory = super::pull::inventory(&pulled, url)?;
    Ok((inventory, Origin::of("oci", Some(pulled.digest))))
}

/// The committed inventory at `REV[:PATH]` in the repository given with `--repo`
/// (default path: the domain's GitOps folder).
#[cfg(feature = "gitops")]
fn git(
    cx: &RefContext,
    text: &str,
    rev: &str,
    path: Option<&str>,
) -> Result<(ClusterInventory, Origin)> {
    let repo = cx
        .repo
        .ok_or_else(|| ReferenceError::NeedsRepo(text.to_string()))?;
    let default;
    let path = match path {
        Some(p) => p,
        None => {
            let project = cx
                .project()
                .ok_or_else(|| ReferenceError::NeedsPath(text.to_string()))?;
            default = crate::gitops::default_cr_path(&cx.domain_of(project)?);
            &default
        }
    };
    let (bytes, commit) =
        crate::gitops::history::file_at_commit(repo, rev, path).map_err(|source| {
            ReferenceError::Git {
                text: text.to_string(),
                source,
            }
        })?;
    let inventory = decode(
        &std::path::PathBuf::from(format!("{}:{rev}:{path}", repo.display())),
        bytes,
    )?;
    Ok((inventory, Origin::of("git", commit)))
}
