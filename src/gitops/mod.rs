//! GitOps: the inventory as files in a Flux / Argo CD repository. The only module that
//! uses git2 (no `git` subprocess, except `git credential` for an HTTPS remote's
//! credential helpers: [`https`]).
//!
//! A commit is built from the branch tip's tree with the synced folder replaced — not
//! from the index — so nothing the user staged or changed elsewhere is swept into it.
//! The branch moves by compare-and-swap from the tip the commit was built on; a
//! concurrent writer makes the move fail instead of being overwritten. Pushes check the
//! per-ref result (libgit2 reports success for a server-rejected ref otherwise) and, when
//! a rejected push's remote tip is no longer one the local commit sits on (whatever the
//! server's words), rebuild the commit on the new remote tip and retry. SSH remotes go
//! through the system `ssh`, as git runs it (ssh).
#![allow(clippy::disallowed_types)] // the one module that uses git2

pub mod history;
pub mod https;
pub mod layout;
mod ssh;
mod worktree;

use crate::domain::Domain;
use crate::error::{ArgumentError, Cause, Error, GitError, PushError, Result, SignError};
use crate::inventory::ClusterInventory;
use crate::util::backoff::{Jitter, Policy};
use git2::{Oid, Repository, Signature, Tree};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How a push waits before rebuilding on a moved remote tip.
///
/// 100 ms doubling to 2 s, plus up to 100 ms of jitter (two clinvs that raced do not race
/// again in step), at most six attempts, none started after the push's deadline.
pub const PUSH_RETRY: Policy =
    Policy::exponential(Duration::from_millis(100), Duration::from_secs(2))
        .jitter(Jitter::Add(Duration::from_millis(100)))
        .retries(5);

/// The files of the synced folder, in this order.
pub const CRD_FILE: &str = "clusterinventory.crd.yaml";
pub const CR_FILE: &str = "clusterinventory.yaml";
pub const KUSTOMIZATION_FILE: &str = "kustomization.yaml";

/// The Git checkout a project sits in, for an artifact's annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// `None` on a detached HEAD.
    pub branch: Option<String>,
    /// HEAD's commit.
    pub sha: String,
    /// `origin`'s URL, without credentials.
    pub origin: Option<String>,
}

impl Checkout {
    /// Finds the checkout around `dir` (its parents too), if it has a commit.
    pub fn around(dir: &Path) -> Option<Checkout> {
        let repo = Repository::discover(dir).ok()?;
        let head = repo.head().ok()?;
        let sha = head.peel_to_commit().ok()?.id().to_string();
        let branch = head
            .is_branch()
            .then(|| head.shorthand().ok().map(str::to_string))
            .flatten();
        let origin = repo.find_remote("origin").ok().and_then(|r| {
            let url = r.url().ok()?;
            Some(crate::util::redact::url(url))
        });
        Some(Checkout {
            branch,
            sha,
            origin,
        })
    }

    /// `<branch>@sha1:<sha>`, as Flux users write a revision (`sha1:<sha>` when detached).
    pub fn revision(&self) -> String {
        match &self.branch {
            Some(b) => format!("{b}@sha1:{}", self.sha),
            None => format!("sha1:{}", self.sha),
        }
    }
}

/// The synced folder of a domain when `--path` does not name one.
pub fn default_path(domain: &Domain) -> String {
    folder_of(domain)
}

fn folder_of(name: &str) -> String {
    format!("clusters/{name}/inventory")
}

/// The default CR path with a `<domain>` placeholder, for messages.
pub fn default_cr_example() -> String {
    format!("{}/{CR_FILE}", folder_of("<domain>"))
}

/// The committed CR of a domain in its default folder.
pub fn default_cr_path(domain: &Domain) -> String {
    format!("{}/{CR_FILE}", default_path(domain))
}

/// The folder's contents.
#[derive(Debug, Clone)]
pub struct Folder {
    pub crd: String,
    pub cr: String,
    pub kustomization: String,
}

impl Folder {
    /// The files (name, content) the folder holds.
    pub fn entries(&self) -> [(&'static str, &str); 3] {
        [
            (CRD_FILE, &self.crd),
            (CR_FILE, &self.cr),
            (KUSTOMIZATION_FILE, &self.kustomization),
        ]
    }
}

/// The kustomization that lists the two objects (Flux applies CRDs first by itself).
pub fn kustomization() -> String {
    format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {CRD_FILE}\n  - {CR_FILE}\n"
    )
}

/// What a one-folder commit found ([`Commit::single`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// The branch already holds this inventory (apart from `renderedAt`).
    UpToDate,
    /// The branch holds an inventory rendered later; nothing was written.
    Older { branch_rendered_at: String },
    /// A new commit on the branch.
    New { oid: String, summary: String },
}

/// One folder a commit writes: where, its files, and the inventory they hold.
pub struct Part<'a> {
    /// Folder inside the repository, `/`-separated, relative.
    pub path: &'a str,
    pub folder: &'a Folder,
    /// The inventory being committed (for the older / up-to-date checks and the summary).
    pub inventory: &'a ClusterInventory,
}

/// What the branch holds at a part's folder, against the part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The commit changes the folder: the summary of the change and, when the folder was
    /// changed outside clinv since clinv last wrote it, a paragraph naming those changes.
    Changed {
        summary: String,
        /// The changes `summary` names, each whole (`record inventory` for a first
        /// record): what a commit of several domains groups by.
        changes: Vec<String>,
        outside: Option<String>,
    },
    /// The branch already holds this inventory (apart from `renderedAt`).
    UpToDate,
    /// The branch holds an inventory rendered later; the folder is left alone.
    Older { branch_rendered_at: String },
}

/// What a commit did: each part's finding, in the order of [`Request::parts`], and the new
/// commit when a part changed (all changed parts are in that one commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub found: Vec<Found>,
    pub oid: Option<String>,
}

impl Commit {
    /// The outcome of a one-part commit.
    #[must_use]
    pub fn single(self) -> Committed {
        match (self.found.into_iter().next(), self.oid) {
            (Some(Found::Older { branch_rendered_at }), _) => {
                Committed::Older { branch_rendered_at }
            }
            (Some(Found::Changed { summary, .. }), Some(oid)) => Committed::New { oid, summary },
            _ => Committed::UpToDate,
        }
    }

    /// The paths of the parts the commit changed.
    fn changed<'a>(&self, parts: &'a [Part<'a>]) -> Vec<&'a str> {
        parts
            .iter()
            .zip(&self.found)
            .filter(|(_, f)| matches!(f, Found::Changed { .. }))
            .map(|(p, _)| p.path)
            .collect()
    }

    /// The first part the branch holds something newer for.
    fn older(&self) -> Option<&str> {
        self.found.iter().find_map(|f| match f {
            Found::Older { branch_rendered_at } => Some(branch_rendered_at.as_str()),
            _ => None,
        })
    }
}

/// Everything a commit needs besides the files.
pub struct Request<'a> {
    /// The folders the commit writes (one commit for all of them).
    pub parts: &'a [Part<'a>],
    /// Branch to commit on; `None` = the checked-out branch.
    pub branch: Option<&'a str>,
    /// `Name <email>`; `None` = the repository's git config.
    pub author: Option<&'a str>,
    /// The message (subject, body, trailers) from what was found for each part, in the
    /// order of `parts`; called only when a part changed.
    pub message: &'a dyn Fn(&[Found]) -> String,
    /// Commit even when the checked-out folders have uncommitted changes (`--force`).
    pub force: bool,
    /// `--sign` / `--no-sign`; `None` = git's `commit.gpgSign`.
    pub sign: Option<bool>,
    /// `--allow-older`: commit it even over a branch whose inventory was rendered later.
    pub allow_older: bool,
}

/// An open GitOps repository, locked against other clinv processes.
pub struct Repo {
    repo: Repository,
    https: https::Options,
    _lock: File,
}

/// Checks a `--path`: relative, `/`-separated, no `.`/`..`/empty components, not `.git`.
///
/// # Errors
/// [`ArgumentError::Path`] naming the problem.
pub fn check_path(path: &str) -> Result<()> {
    let bad = |why: &'static str| {
        Err(ArgumentError::Path {
            path: path.to_string(),
            why,
        }
        .into())
    };
    if path.is_empty() || path.starts_with('/') || path.contains('\\') {
        return bad("must be a relative path with / separators");
    }
    for part in path.trim_end_matches('/').split('/') {
        match part {
            "" | "." | ".." => return bad("no empty, . or .. components"),
            p if p.eq_ignore_ascii_case(".git") => return bad("must not point into .git"),
            p if p.chars().any(char::is_control) => return bad("no control characters"),
            _ => {}
        }
    }
    Ok(())
}

impl Repo {
    /// Opens the worktree at `dir` and takes `<gitdir>/clinv.lock`.
    ///
    /// # Errors
    /// Not a repository, a bare repository, or the lock is held past `timeout`.
    pub fn open(dir: &Path, timeout: Duration) -> Result<Repo> {
        let repo = Repository::open(dir).map_err(|e| git(dir, e))?;
        if repo.is_bare() {
            return Err(GitError::Bare(dir.display().to_string()).into());
        }
        let file = lock(
            &repo.path().join("clinv.lock"),
            timeout,
            "another clinv process holds the repository lock",
            "CLINV_LOCK_TIMEOUT",
        )?;
        Ok(Repo {
            repo,
            https: https::Options::default(),
            _lock: file,
        })
    }

    /// How pushes and fetches reach an `https://` remote.
    #[must_use]
    pub fn with_https(mut self, opts: https::Options) -> Repo {
        self.https = opts;
        self
    }

    /// The worktree root.
    pub fn workdir(&self) -> PathBuf {
        self.repo
            .workdir()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The branch to use: `--branch`, else the one HEAD points at (born or not).
    ///
    /// # Errors
    /// A detached HEAD without `--branch`.
    pub fn branch(&self, explicit: Option<&str>) -> Result<String> {
        if let Some(b) = explicit {
            if git2::Branch::name_is_valid(b).unwrap_or(false) {
                return Ok(b.to_string());
            }
            return Err(ArgumentError::Branch(b.to_string()).into());
        }
        let head = self
            .repo
            .find_reference("HEAD")
            .map_err(|e| git(&self.workdir(), e))?;
        match head
            .symbolic_target()
            .ok()
            .flatten()
            .and_then(|t| t.strip_prefix("refs/heads/"))
        {
            Some(b) => Ok(b.to_string()),
            None => Err(GitError::Detached.into()),
        }
    }

    /// The URL of `remote` without credentials, as it goes into a printed manifest.
    pub fn remote_url(&self, remote: &str) -> Option<String> {
        self.remote_url_raw(remote)
            .map(|u| crate::util::redact::url(&u))
    }

    /// The URL of `remote` as configured (it may hold credentials: never shown).
    fn remote_url_raw(&self, remote: &str) -> Option<String> {
        let remote = self.repo.find_remote(remote).ok()?;
        remote.url().ok().map(str::to_string)
    }

    /// `url` as source-controller clones it, with what the operator should know: an SSH
    /// remote as an `ssh://` URL ([`ssh::cloned_url`]), anything else as it is.
    pub fn flux_url(&self, url: &str) -> (String, Vec<String>) {
        ssh::cloned_url(&self.repo, url, ssh::Cloner::Flux)
            .unwrap_or_else(|| (url.to_string(), Vec::new()))
    }

    /// `url` as Argo CD's repo-server (the git CLI) clones it: an scp-like remote as it
    /// is, a bracketed `[user@host:port]:path` or an alias of the SSH configuration as the
    /// `ssh://` URL git reads the same way (Argo CD's own URL parser takes the user of the
    /// bracketed form as `[git`).
    pub fn argo_url(&self, url: &str) -> (String, Vec<String>) {
        ssh::cloned_url(&self.repo, url, ssh::Cloner::Argo)
            .unwrap_or_else(|| (url.to_string(), Vec::new()))
    }

    /// What Flux needs to clone `url` (`--repo-url`), or the URL of `remote`, as this
    /// repository reaches it ([`https::clone_access`]).
    pub fn clone_access(&self, url: Option<&str>, remote: &str, token_env: bool) -> layout::Access {
        let Some(url) = url
            .map(str::to_string)
            .or_else(|| self.remote_url_raw(remote))
        else {
            return layout::Access::Open;
        };
        let config = self.repo.config().ok();
        https::clone_access(config.as_ref(), &url, token_env)
    }

    fn signature(&self, author: Option<&str>) -> Result<Signature<'static>> {
        if let Some(text) = author {
            let (name, email) = text
                .trim()
                .strip_suffix('>')
                .and_then(|t| t.rsplit_once('<'))
                .map(|(n, e)| (n.trim(), e.trim()))
                .filter(|(n, e)| !n.is_empty() && e.contains('@'))
                .ok_or_else(|| ArgumentError::AuthorForm(text.to_string()))?;
            return Signature::now(name, email)
                .map_err(|e| ArgumentError::Author(e.message().to_string()).into());
        }
        self.repo
            .signature()
            .map(|s| s.to_owned())
            .map_err(|_| Error::NoAuthor)
    }

    /// Commits the parts' folders on the branch in one commit (creating the branch from
    /// HEAD's commit when it does not exist); a folder the branch already holds, or holds
    /// something newer in, is left as it is ([`Found`]).
    ///
    /// # Errors
    /// Git failures, an author problem, unmanaged files in a folder, a failed signing.
    pub fn commit(&self, req: &Request<'_>) -> Result<Commit> {
        let branch = self.branch(req.branch)?;
        let refname = format!("refs/heads/{branch}");
        for part in req.parts {
            let labels = &part.inventory.metadata.labels;
            let domain = labels.get(crate::inventory::DOMAIN_LABEL);
            let domain = domain.map_or("", String::as_str);
            if let Some(refusal) = self.bootstrap_shared(&branch, part.path, domain) {
                return Err(refusal.into());
            }
        }
        let tip = self.repo.refname_to_id(&refname).ok();
        // A new branch starts from the current tip, as `git switch -c` does: a pull
        // request needs history in common with its base.
        let base = tip.or_else(|| self.current_commit());
        let made = self.build(base, req)?;
        if let Some(oid) = &made.oid {
            let changed = made.changed(req.parts);
            // Only a commit that writes a folder can overwrite edits there.
            if !req.force {
                self.check_clean(&refname, &changed)?;
            }
            let oid = Oid::from_str(oid).map_err(|e| git(&self.workdir(), e))?;
            let log = match &made.found[..] {
                [Found::Changed { summary, .. }] => format!("clinv commit: {summary}"),
                _ => format!("clinv commit: {} folders", changed.len()),
            };
            self.advance(&refname, tip, oid, &log, &changed)?;
        }
        Ok(made)
    }

    /// The commit HEAD is at (none in an empty repository).
    fn current_commit(&self) -> Option<Oid> {
        let head = self.repo.head().ok()?;
        head.peel_to_commit().ok().map(|c| c.id())
    }

    /// Builds the commit on `tip` (no ref moves): what each part finds there, and one new
    /// commit writing the folders that change, when any does.
    fn build(&self, tip: Option<Oid>, req: &Request<'_>) -> Result<Commit> {
        let wd = self.workdir();
        let tip_commit = tip
            .map(|t| self.repo.find_commit(t))
            .transpose()
            .map_err(|e| git(&wd, e))?;
        let base = tip_commit
            .as_ref()
            .map(|c| c.tree())
            .transpose()
            .map_err(|e| git(&wd, e))?;
        let found = req
            .parts
            .iter()
            .map(|part| self.find(tip_commit.as_ref(), base.as_ref(), part, req.allow_older))
            .collect::<Result<Vec<Found>>>()?;
        if !found.iter().any(|f| matches!(f, Found::Changed { .. })) {
            return Ok(Commit { found, oid: None });
        }
        let mut root = base;
        for (part, _) in req
            .parts
            .iter()
            .zip(&found)
            .filter(|(_, f)| matches!(f, Found::Changed { .. }))
        {
            let id = self.put_folder(root.as_ref(), part.path, part.folder)?;
            root = Some(self.repo.find_tree(id).map_err(|e| git(&wd, e))?);
        }
        let tree = root.ok_or_else(|| git(&wd, git2::Error::from_str("no tree was written")))?;
        let parents: Vec<&git2::Commit<'_>> = tip_commit.iter().collect();
        let oid = self.write_commit(&tree, &parents, &(req.message)(&found), req)?;
        Ok(Commit {
            found,
            oid: Some(oid.to_string()),
        })
    }

    /// What the branch's tree (`base`, at the commit `tip`) holds at `part`'s folder.
    fn find(
        &self,
        tip: Option<&git2::Commit<'_>>,
        base: Option<&Tree<'_>>,
        part: &Part<'_>,
        allow_older: bool,
    ) -> Result<Found> {
        let previous = base.and_then(|t| self.read_inventory(t, part.path));
        if let Some(prev) = previous
            .as_ref()
            .filter(|_| !allow_older)
            .filter(|p| later(&p.spec.rendered_at, &part.inventory.spec.rendered_at))
        {
            return Ok(Found::Older {
                branch_rendered_at: prev.spec.rendered_at.clone(),
            });
        }
        if let Some(base) = base {
            self.check_folder(base, part.path)?;
            if self.same_folder(base, part.path, part.folder, part.inventory) {
                return Ok(Found::UpToDate);
            }
        }
        Ok(Found::Changed {
            summary: summarize(previous.as_ref(), part.inventory),
            changes: changes(previous.as_ref(), part.inventory),
            outside: tip.and_then(|c| self.outside_changes(c, part.path)),
        })
    }

    /// Writes the commit of `tree` on `parents`, signed when asked or configured.
    fn write_commit(
        &self,
        tree: &Tree<'_>,
        parents: &[&git2::Commit<'_>],
        message: &str,
        req: &Request<'_>,
    ) -> Result<Oid> {
        let wd = self.workdir();
        let sig = self.signature(req.author)?;
        let sign = req.sign.unwrap_or_else(|| {
            let config = self.repo.config().ok();
            config.is_some_and(|c| c.get_bool("commit.gpgsign").unwrap_or(false))
        });
        if !sign {
            return self
                .repo
                .commit(None, &sig, &sig, message, tree, parents)
                .map_err(|e| git(&wd, e));
        }
        let buffer = self
            .repo
            .commit_create_buffer(&sig, &sig, message, tree, parents)
            .map_err(|e| git(&wd, e))?;
        let text = std::str::from_utf8(&buffer).map_err(|_| GitError::CommitNotUtf8)?;
        let signature = crate::gitops::sign(&self.repo, text)?;
        self.repo
            .commit_signed(text, &signature, Some("gpgsig"))
            .map_err(|e| git(&wd, e))
    }

    /// The committed CR at `path` in `tree`, when there is one that parses.
    fn read_inventory(&self, tree: &Tree<'_>, path: &str) -> Option<ClusterInventory> {
        let text = self.file_at(tree, &format!("{}/{CR_FILE}", path.trim_end_matches('/')))?;
        crate::inventory::parse::inventory_from_text(&text).ok()
    }

    fn file_at(&self, tree: &Tree<'_>, path: &str) -> Option<String> {
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = self.repo.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    }

    /// Refuses a folder kustomize could not build with clinv's kustomization in it: one
    /// holding another kustomization file, or a managed name that is not a file. Other files
    /// (a README, notes) are kept: the kustomization lists only the two objects, so
    /// neither Flux nor Argo CD applies them.
    fn check_folder(&self, tree: &Tree<'_>, path: &str) -> Result<()> {
        let path = path.trim_end_matches('/');
        // A file or symbolic link on the way to the folder: libgit2 would fail half-way
        // through the index ("type does not match"), after the work tree had changed.
        let ancestors = path.match_indices('/').map(|(i, _)| &path[..i]);
        for ancestor in ancestors {
            let kind = tree.get_path(Path::new(ancestor)).ok().map(|e| e.kind());
            if let Some(kind) = kind.filter(|k| *k != Some(git2::ObjectType::Tree)) {
                let what = match kind {
                    Some(git2::ObjectType::Blob) => "a file or symbolic link",
                    _ => "not a folder",
                };
                return Err(GitError::InTheWay {
                    ancestor: ancestor.to_string(),
                    what,
                    path: path.to_string(),
                }
                .into());
            }
        }
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(());
        };
        let Ok(sub) = self.repo.find_tree(entry.id()) else {
            return Err(GitError::NotAFolder(path.to_string()).into());
        };
        let names: Vec<(String, Option<git2::ObjectType>)> = sub
            .iter()
            .filter_map(|e| e.name().ok().map(|n| (n.to_string(), e.kind())))
            .collect();
        let names_where = |keep: fn(&str, Option<git2::ObjectType>) -> bool| -> Vec<String> {
            let kept = names.iter().filter(|(n, kind)| keep(n, *kind));
            kept.map(|(n, _)| n.clone()).collect()
        };
        let others =
            names_where(|n, _| layout::KUSTOMIZATION_NAMES.contains(&n) && n != KUSTOMIZATION_FILE);
        let not_files = names_where(|n, kind| {
            [CRD_FILE, CR_FILE, KUSTOMIZATION_FILE].contains(&n)
                && kind != Some(git2::ObjectType::Blob)
        });
        let path = path.to_string();
        if !others.is_empty() {
            Err(GitError::TwoKustomizations { path, others }.into())
        } else if !not_files.is_empty() {
            Err(GitError::NotFiles {
                path,
                names: not_files,
            }
            .into())
        } else {
            Ok(())
        }
    }

    /// True when the committed folder equals `folder` apart from the CR's `renderedAt`.
    fn same_folder(
        &self,
        tree: &Tree<'_>,
        path: &str,
        folder: &Folder,
        inventory: &ClusterInventory,
    ) -> bool {
        let dir = path.trim_end_matches('/');
        let same = |name: &str, want: &str| {
            self.file_at(tree, &format!("{dir}/{name}")).as_deref() == Some(want)
        };
        if !same(CRD_FILE, &folder.crd) || !same(KUSTOMIZATION_FILE, &folder.kustomization) {
            return false;
        }
        self.read_inventory(tree, path)
            .is_some_and(|mut committed| {
                committed
                    .spec
                    .rendered_at
                    .clone_from(&inventory.spec.rendered_at);
                &committed == inventory
            })
    }

    /// Writes the folder's blobs and the trees above them; returns the new root tree.
    fn put_folder(&self, base: Option<&Tree<'_>>, path: &str, folder: &Folder) -> Result<Oid> {
        let wd = self.workdir();
        // Files of others in the folder (a README) are kept.
        let existing = base
            .and_then(|root| root.get_path(Path::new(path.trim_end_matches('/'))).ok())
            .and_then(|e| self.repo.find_tree(e.id()).ok());
        let mut leaf = self
            .repo
            .treebuilder(existing.as_ref())
            .map_err(|e| git(&wd, e))?;
        for (name, text) in folder.entries() {
            let blob = self.repo.blob(text.as_bytes()).map_err(|e| git(&wd, e))?;
            leaf.insert(name, blob, 0o100644).map_err(|e| git(&wd, e))?;
        }
        let mut id = leaf.write().map_err(|e| git(&wd, e))?;
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        // Walk up from the folder, replacing one entry per level.
        for depth in (0..parts.len()).rev() {
            let parent_path = parts[..depth].join("/");
            let existing = match base {
                Some(root) if depth == 0 => Some(root.clone()),
                Some(root) => root
                    .get_path(Path::new(&parent_path))
                    .ok()
                    .and_then(|e| self.repo.find_tree(e.id()).ok()),
                None => None,
            };
            let mut builder = self
                .repo
                .treebuilder(existing.as_ref())
                .map_err(|e| git(&wd, e))?;
            builder
                .insert(parts[depth], id, 0o040000)
                .map_err(|e| git(&wd, e))?;
            id = builder.write().map_err(|e| git(&wd, e))?;
        }
        Ok(id)
    }

    /// Pushes `branch` to `remote`, rebuilding the commit on a moved remote tip until it
    /// lands, the attempts or the deadline run out, or the remote holds something newer.
    ///
    /// # Errors
    /// A rejected ref, an unreachable remote, or retries exhausted.
    pub fn push(&self, remote_name: &str, req: &Request<'_>, deadline: Duration) -> Result<Pushed> {
        let branch = self.branch(req.branch)?;
        let refname = format!("refs/heads/{branch}");
        let Prepared {
            mut remote,
            _ssh,
            _warm,
        } = self.prepare_push(remote_name, deadline)?;
        let start = Instant::now();
        let mut delays = PUSH_RETRY.until(Some(start + deadline));
        loop {
            let attempt = delays.retries() + 1;
            let rejected = {
                let _held = lock_local_remote(&remote, deadline.saturating_sub(start.elapsed()))?;
                push_once(&self.repo, &mut remote, &refname)?
            };
            let Some(status) = rejected else {
                return Ok(Pushed { attempts: attempt });
            };
            let refused = || PushError::Rejected {
                remote: remote_name.to_string(),
                refname: refname.clone(),
                status: status.clone(),
            };
            // Whatever the server's words ("fetch first", "failed to update ref", a
            // hook's): the tip moved when ours no longer sits on it — someone pushed
            // first. When it still does, the push was a fast-forward and was refused.
            let remote_tip = match fetch(&self.repo, &mut remote, &branch) {
                Ok(tip) => tip,
                Err(e) if is_non_fast_forward(&status) => return Err(e),
                Err(_) => return Err(refused().into()),
            };
            if !self.moved(&refname, remote_tip) {
                return Err(refused().into());
            }
            let Some(delay) = delays.next() else { break };
            // Someone pushed first: put our folders on top of their tip.
            let made = self.build(Some(remote_tip), req)?;
            if let Some(rendered_at) = made.older() {
                return Err(PushError::Newer {
                    remote: remote_name.to_string(),
                    branch,
                    rendered_at: rendered_at.to_string(),
                }
                .into());
            }
            let paths: Vec<&str> = req.parts.iter().map(|p| p.path).collect();
            match &made.oid {
                Some(oid) => self.rebuilt(&refname, oid, &paths)?,
                None => {
                    self.fast_forward(&refname, remote_tip, &paths)?;
                    return Ok(Pushed { attempts: attempt });
                }
            }
            std::thread::sleep(delay);
        }
        Err(PushError::NotLanded {
            remote: remote_name.to_string(),
            secs: start.elapsed().as_secs_f64(),
        }
        .into())
    }

    /// Delivers an owed push: `commit` to `branch` on `remote`, exactly that commit,
    /// never forced and never rebuilt. `url` is the remote's URL (without credentials)
    /// when the push was owed. Returns whether the remote already had it.
    ///
    /// # Errors
    /// [`PushError::RemoteChanged`], [`PushError::NotOnBranch`] (the local branch does
    /// not hold the commit), [`PushError::NotFastForward`] (the remote moved on),
    /// [`PushError::Unanswered`] (still owed), or any other push failure.
    pub fn push_owed(
        &self,
        remote_name: &str,
        url: &str,
        branch: &str,
        commit: &str,
        deadline: Duration,
    ) -> Result<bool> {
        let wd = self.workdir();
        let now = self.remote_url(remote_name).unwrap_or_default();
        if now != url {
            return Err(PushError::RemoteChanged {
                remote: remote_name.to_string(),
                was: url.to_string(),
                now,
            }
            .into());
        }
        let refname = format!("refs/heads/{branch}");
        let oid = Oid::from_str(commit).map_err(|e| git(&wd, e))?;
        let tip = self.repo.refname_to_id(&refname).ok();
        let holds =
            tip.is_some_and(|t| t == oid || self.repo.graph_descendant_of(t, oid).unwrap_or(false));
        if !holds {
            return Err(PushError::NotOnBranch {
                branch: branch.to_string(),
                commit: commit.to_string(),
                tip: tip.map_or_else(|| "nothing".into(), |t| t.to_string()),
            }
            .into());
        }
        let Prepared {
            mut remote,
            _ssh,
            _warm,
        } = self.prepare_push(remote_name, deadline)?;
        let rejected = {
            let _held = lock_local_remote(&remote, deadline)?;
            push_refspec(&self.repo, &mut remote, &format!("{commit}:{refname}"))?
        };
        let Some(status) = rejected else {
            return Ok(false);
        };
        let remote_tip =
            fetch(&self.repo, &mut remote, branch).map_err(|_| PushError::Rejected {
                remote: remote_name.to_string(),
                refname: refname.clone(),
                status: status.clone(),
            })?;
        if remote_tip == oid
            || self
                .repo
                .graph_descendant_of(remote_tip, oid)
                .unwrap_or(false)
        {
            return Ok(true);
        }
        Err(PushError::NotFastForward {
            remote: remote_name.to_string(),
            branch: branch.to_string(),
            commit: commit.to_string(),
            remote_tip: remote_tip.to_string(),
        }
        .into())
    }

    /// The remote `remote_name` ready for a push: the transports registered, the
    /// repository's ssh program and HTTPS settings in force while it is held.
    fn prepare_push(&self, remote_name: &str, deadline: Duration) -> Result<Prepared<'_>> {
        let remote = self
            .repo
            .find_remote(remote_name)
            .map_err(|e| git(&self.workdir(), e))?;
        transports();
        let _ssh = ssh::configure(&self.repo);
        // A prewarmed SSH channel no push took ends with this push.
        let _warm = WarmGuard;
        https::prepare(&self.repo, &remote, &self.https, deadline)?;
        Ok(Prepared {
            remote,
            _ssh,
            _warm,
        })
    }

    /// Moves `refname` to the commit `oid` rebuilt on the remote tip.
    fn rebuilt(&self, refname: &str, oid: &str, paths: &[&str]) -> Result<()> {
        let oid = Oid::from_str(oid).map_err(|e| git(&self.workdir(), e))?;
        let local = self.repo.refname_to_id(refname).ok();
        self.advance(
            refname,
            local,
            oid,
            "clinv: rebuilt on the remote tip",
            paths,
        )
    }

    /// Whether the remote's `tip` is not one the local `refname` sits on (equal to it or
    /// an ancestor): a push of it was not a fast-forward.
    fn moved(&self, refname: &str, tip: Oid) -> bool {
        let Ok(local) = self.repo.refname_to_id(refname) else {
            return true;
        };
        local != tip && !self.repo.graph_descendant_of(local, tip).unwrap_or(false)
    }

    fn fast_forward(&self, refname: &str, to: Oid, paths: &[&str]) -> Result<()> {
        let wd = self.workdir();
        let local = self.repo.refname_to_id(refname).map_err(|e| git(&wd, e))?;
        self.advance(refname, Some(local), to, "clinv: fast-forward", paths)
    }

    /// The commit id `branch` points at.
    pub fn head_commit(&self, branch: &str) -> Option<String> {
        self.repo
            .refname_to_id(&format!("refs/heads/{branch}"))
            .ok()
            .map(|o| o.to_string())
    }
}

impl Drop for Repo {
    /// Waits for the SSH connections this repository's pushes and fetches closed: ssh's
    /// goodbye to the server runs while the caller records the push (the server's report
    /// settled it), and the process never ends before its ssh.
    fn drop(&mut self) {
        ssh::reap();
    }
}

/// The result of a push.
#[derive(Debug, Clone, Copy)]
pub struct Pushed {
    pub attempts: u32,
}

/// Starts the SSH connection of a coming push from the repository at `dir` to
/// `remote_name`, so it runs while the snapshot is read and the commit built.
///
/// Nothing for other remotes or when the remote cannot be read (the push then meets and
/// explains the problem); see [`ssh::prewarm`]. Reads only, no lock.
pub fn prewarm_push(dir: &Path, remote_name: &str) {
    let Ok(repo) = Repository::open(dir) else {
        return;
    };
    let Ok(remote) = repo.find_remote(remote_name) else {
        return;
    };
    let url = remote.pushurl().ok().flatten().or(remote.url().ok());
    if let Some(url) = url {
        ssh::prewarm(&repo, url);
    }
}

/// Ends an unused prewarmed SSH channel when the push is over, however it ended.
struct WarmGuard;

/// A remote ready for a push, and what must stay in force while it runs.
struct Prepared<'r> {
    remote: git2::Remote<'r>,
    _ssh: ssh::Configured,
    _warm: WarmGuard,
}

impl Drop for WarmGuard {
    fn drop(&mut self) {
        ssh::discard_warm();
    }
}

/// Registers clinv's own transports with libgit2, once per process, before the first
/// remote is opened.
///
/// SSH (`ssh://`, `ssh+git://`, `git+ssh://` and scp-like `host:path`) goes through the
/// system ssh ([`ssh`]).
fn transports() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for scheme in ssh::SCHEMES {
            // SAFETY: libgit2's transport registry is not synchronised; `call_once`
            // runs this before any remote of this process is created (every remote
            // operation goes through `Repo::push`, which calls this first), and no one
            // else registers the scheme.
            #[allow(unsafe_code)]
            let registered = unsafe { git2::transport::register(scheme, ssh::transport) };
            debug_assert!(registered.is_ok(), "{scheme}: {registered:?}");
        }
    });
}

/// Takes an exclusive `flock` on `path` (created if missing), waiting up to `timeout`
/// (which `setting` sets, named in the error).
fn lock(path: &Path, timeout: Duration, held: &str, setting: &str) -> Result<File> {
    match crate::util::lock::open_exclusive(path, timeout) {
        Ok(file) => Ok(file),
        Err(crate::util::lock::Wait::TimedOut) => Err(Error::Locked {
            what: path.display().to_string(),
            holder: format!(
                "{held} (still after {}s, {setting})",
                // A deadline's remainder (0.999997897 s): tenths say it.
                (timeout.as_secs_f64() * 10.0).round() / 10.0
            ),
        }),
        Err(crate::util::lock::Wait::Io(e)) => Err(Error::io(path, e)),
    }
}

/// For a remote on this machine (`file://` or a path), `clinv.lock` in its git dir, held
/// for one push. libgit2's local transport checks fast-forward against the tip it read
/// when connecting, then writes the ref without compare-and-swap: two processes pushing
/// at once both succeeded and the later write dropped the other's commit (found by
/// scripts/soak). Remote git servers (`git://`, SSH) compare-and-swap themselves.
fn lock_local_remote(remote: &git2::Remote<'_>, timeout: Duration) -> Result<Option<File>> {
    let url = remote.url().unwrap_or_default();
    let path = match url.strip_prefix("file://") {
        Some(p) => p,
        None if url.starts_with('/') => url,
        None => return Ok(None),
    };
    // A path that is no repository fails in the push itself, with libgit2's message.
    let Ok(repo) = Repository::open(path) else {
        return Ok(None);
    };
    lock(
        &repo.path().join("clinv.lock"),
        timeout,
        "another clinv process is pushing to this repository",
        "--push-timeout",
    )
    .map(Some)
}

/// Words of a rejection that say the tip moved: then a fetch that fails is the error to
/// report (whether the tip moved is decided from the fetched tip, not from words).
fn is_non_fast_forward(status: &str) -> bool {
    let s = status.to_ascii_lowercase();
    // The last two are a concurrent writer on the remote's ref (libgit2's local transport
    // reports a lost create or update race this way): fetch and retry as well.
    s.contains("non-fast-forward")
        || s.contains("fetch first")
        || s.contains("not present locally")
        || s.contains("cannot lock ref")
        || s.contains("failed to write reference")
        || s.contains("failed to lock")
        || s.contains("failed to create locked file")
}

thread_local! {
    /// Set by a transport when the far end did not answer during the push in progress
    /// on this thread (libgit2 runs the transports on the caller's thread): what the
    /// error's words alone cannot say reliably.
    static SILENT: std::cell::Cell<Option<crate::delivery::Reason>> =
        const { std::cell::Cell::new(None) };
}

/// A transport says the far end did not answer (refused, unresolved, timed out, 5xx).
pub(crate) fn far_end_silent(reason: crate::delivery::Reason) {
    SILENT.with(|s| s.set(Some(reason)));
}

/// Why the push that just failed on this thread did not reach the far end, if it did
/// not: what a transport said, else libgit2's own transports' network errors (`git://`,
/// `http://`).
fn silent(url: &str, e: &git2::Error) -> Option<crate::delivery::Reason> {
    let said = SILENT.with(std::cell::Cell::take);
    let native = ["git://", "http://"].iter().any(|s| url.starts_with(s))
        && matches!(e.class(), git2::ErrorClass::Net | git2::ErrorClass::Os);
    said.or(native.then_some(crate::delivery::Reason::Unreachable))
}

/// Pushes once; `Some(status)` when the server rejected the ref.
fn push_once(
    repo: &Repository,
    remote: &mut git2::Remote<'_>,
    refname: &str,
) -> Result<Option<String>> {
    push_refspec(repo, remote, &format!("{refname}:{refname}"))
}

/// Pushes `refspec` (never forced) once; `Some(status)` when the server rejected it.
fn push_refspec(
    repo: &Repository,
    remote: &mut git2::Remote<'_>,
    refspec: &str,
) -> Result<Option<String>> {
    let rejected = std::cell::RefCell::new(None);
    let mut callbacks = credentials(repo);
    callbacks.push_update_reference(|_, status| {
        if let Some(s) = status {
            // The server's own words (a hook's too): without credentials it echoed.
            *rejected.borrow_mut() = Some(crate::util::redact::credentials(s));
        }
        Ok(())
    });
    let mut opts = git2::PushOptions::new();
    opts.remote_callbacks(callbacks);
    SILENT.with(std::cell::Cell::take);
    let result = remote.push(&[refspec], Some(&mut opts));
    drop(opts);
    match result {
        Ok(()) => Ok(rejected.into_inner()),
        Err(e) if e.code() == git2::ErrorCode::NotFastForward => {
            Ok(Some("non-fast-forward".into()))
        }
        Err(e)
            if e.class() == git2::ErrorClass::Reference
                || e.message().contains("non-fast-forward") =>
        {
            Ok(Some(crate::util::redact::credentials(e.message())))
        }
        Err(e) => {
            let name = remote.name().ok().flatten().unwrap_or("remote").to_string();
            let cause = Cause(locked(&e));
            Err(match silent(remote.url().unwrap_or_default(), &e) {
                Some(reason) => PushError::Unanswered {
                    remote: name,
                    reason,
                    cause,
                },
                None => PushError::Failed {
                    remote: name,
                    cause,
                },
            }
            .into())
        }
    }
}

/// Fetches `branch` from `remote`; returns its tip.
fn fetch(repo: &Repository, remote: &mut git2::Remote<'_>, branch: &str) -> Result<Oid> {
    let mut opts = git2::FetchOptions::new();
    opts.remote_callbacks(credentials(repo));
    let name = remote.name().ok().flatten().unwrap_or("remote").to_string();
    let tracking = format!("refs/remotes/{name}/{branch}");
    remote
        .fetch(
            &[format!("+refs/heads/{branch}:{tracking}")],
            Some(&mut opts),
            None,
        )
        .map_err(|e| GitError::call(format!("fetch from {name} failed"), locked(&e)))?;
    repo.refname_to_id(&tracking)
        .map_err(|e| GitError::call(tracking, e.message()).into())
}

/// Credentials for libgit2's own transports (`git://`, plain `http://`): the default
/// ones only. SSH authenticates inside the ssh program (ssh.rs); git2's credential-helper
/// support needs its `cred` feature, which would pull the `url` crate and its IDNA tables
/// for this one call. Nothing is stored or logged.
fn credentials(_repo: &Repository) -> git2::RemoteCallbacks<'_> {
    let mut callbacks = git2::RemoteCallbacks::new();
    callbacks.credentials(move |_url, _username, allowed| {
        if allowed.contains(git2::CredentialType::DEFAULT) {
            return git2::Cred::default();
        }
        Err(git2::Error::from_str(
            "no usable credentials: clinv reads none for this kind of remote (use ssh:// or https://)",
        ))
    });
    callbacks
}

/// Signs a commit buffer with the user's configured program: `gpg.format` openpgp
/// (`gpg.program`, default gpg) or ssh (`gpg.ssh.program`, default ssh-keygen), with
/// `user.signingkey`; run as every helper is ([`crate::util::helper`]): a program that
/// never answers is stopped at the helper deadline, and its output is never shown.
fn sign(repo: &Repository, buffer: &str) -> Result<String> {
    use crate::util::helper::{Helper, Output};
    let config = repo
        .config()
        .map_err(|e| GitError::call("git config", e.message()))?;
    let get = |k: &str| config.get_string(k).ok();
    let format = get("gpg.format").unwrap_or_else(|| "openpgp".into());
    let key = get("user.signingkey");
    let (program, args): (String, Vec<String>) = match format.as_str() {
        "ssh" => {
            let key = key.ok_or(SignError::NoKey)?;
            let program = get("gpg.ssh.program").unwrap_or_else(|| "ssh-keygen".into());
            (
                program,
                vec![
                    "-Y".into(),
                    "sign".into(),
                    "-n".into(),
                    "git".into(),
                    "-f".into(),
                    key,
                    "-".into(),
                ],
            )
        }
        "openpgp" => {
            let program = get("gpg.program").unwrap_or_else(|| "gpg".into());
            let mut args = vec!["--status-fd=2".into(), "-bsa".into()];
            if let Some(k) = key {
                args.extend(["-u".into(), k]);
            }
            (program, args)
        }
        other => {
            return Err(SignError::Unsupported(other.to_string()).into());
        }
    };
    let mut command = std::process::Command::new(&program);
    command.args(&args);
    let out = Helper::new(command)
        .input(buffer)
        .run()
        .and_then(Output::succeeded)
        .map_err(SignError::Helper)?;
    let signature = String::from_utf8_lossy(&out.stdout).into_owned();
    if signature.trim().is_empty() {
        let program = out.program;
        return Err(SignError::NoSignature { program }.into());
    }
    Ok(signature)
}

/// A one-line summary of what changed, for the commit subject.
///
/// Built from the semantic diff ([`crate::history::diff`]), so a subject names the same
/// changes as `clinv diff` (repeated addon names included): Kubernetes first, then the
/// addons in order, then kind, provider and lok8s.
pub fn summarize(before: Option<&ClusterInventory>, after: &ClusterInventory) -> String {
    if before.is_none() {
        return format!(
            "record inventory ({} addons, Kubernetes {})",
            after.spec.addons.len(),
            after
                .spec
                .kubernetes_version
                .as_deref()
                .unwrap_or("unknown")
        );
    }
    let parts = changes(before, after);
    let text = parts.join(", ");
    if text.chars().count() > 72 {
        format!("{}, … ({} changes)", parts[0], parts.len())
    } else {
        text
    }
}

/// The changes [`summarize`] names, each whole and in its order: `record inventory` for
/// a first record (without the counts, which differ per domain).
pub fn changes(before: Option<&ClusterInventory>, after: &ClusterInventory) -> Vec<String> {
    use crate::history::diff::{self, Field, Op};
    let Some(before) = before else {
        return vec!["record inventory".to_string()];
    };
    let report = diff::diff(before, after);
    let (mut kubernetes, mut addons, mut fields) = (Vec::new(), Vec::new(), Vec::new());
    for c in &report.changes {
        let (from, to) = (c.from.as_deref(), c.to.as_deref());
        let name = c.addon.as_deref().unwrap_or_default();
        match (c.field, c.change) {
            (Field::KubernetesVersion, _) => kubernetes.push(format!(
                "kubernetes {} → {}",
                from.unwrap_or("none"),
                to.unwrap_or("none")
            )),
            (Field::Addon, Op::Added) => addons.push(match to {
                Some(v) if v != "-" => format!("add {name} {v}"),
                _ => format!("add {name}"),
            }),
            (Field::Addon, _) => addons.push(format!("remove {name}")),
            (Field::ChartVersion, _) => addons.push(format!(
                "{name} {} → {}",
                from.unwrap_or("-"),
                to.unwrap_or("-")
            )),
            (field @ (Field::Kind | Field::Provider | Field::Lok8sVersion), _) => {
                let label = match field {
                    Field::Lok8sVersion => "lok8s",
                    f => f.as_str(),
                };
                let rank = [Field::Kind, Field::Provider, Field::Lok8sVersion]
                    .iter()
                    .position(|f| *f == field);
                fields.push((
                    rank,
                    format!(
                        "{label} {} → {}",
                        from.unwrap_or("none"),
                        to.unwrap_or("none")
                    ),
                ));
            }
            _ => {}
        }
    }
    fields.sort_by_key(|(rank, _)| *rank);
    let mut parts: Vec<String> = kubernetes;
    parts.extend(addons);
    parts.extend(fields.into_iter().map(|(_, text)| text));
    if parts.is_empty() {
        parts.push("update spec (spec hash changed)".into());
    }
    parts
}

/// `a` is a later RFC 3339 time than `b`.
fn later(a: &str, b: &str) -> bool {
    let parse = crate::util::time::parse_rfc3339;
    matches!((parse(a), parse(b)), (Some(x), Some(y)) if x > y)
}

/// A failed move of `refname`: its lock held (named, with what to do), or it moved.
fn ref_error(refname: &str, e: &git2::Error) -> Error {
    if e.code() == git2::ErrorCode::Locked {
        Error::Locked {
            what: format!("{refname} is locked"),
            holder: locked(e),
        }
    } else {
        GitError::Moved {
            refname: refname.to_string(),
            detail: Some(e.message().to_string()),
        }
        .into()
    }
}

/// libgit2's message, plus what to do when it is a lock file that clinv's own lock cannot
/// explain: a git command running now, or one (or a clinv) killed mid-write, which leaves
/// it behind as a killed `git` does. Running again would not help.
fn locked(e: &git2::Error) -> String {
    let message = e.message().trim_end_matches([':', ' ']);
    if e.code() == git2::ErrorCode::Locked {
        format!(
            "{message}; another git process is writing it, or one was killed while writing: remove the lock file if no git process is running"
        )
    } else {
        message.to_string()
    }
}

fn git(dir: &Path, e: git2::Error) -> Error {
    GitError::call(format!("{}: git", dir.display()), e.message()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The push retry's schedule is the one it had by hand: 100, 200, 400, 800, 1600 ms
    /// plus [0, 100) ms, six attempts; and no attempt starts after the deadline.
    #[test]
    fn the_push_retry_waits_as_before_and_stops_at_the_deadline() {
        use crate::util::backoff::Rng;
        let ms = Duration::from_millis;
        for seed in 0..50 {
            let delays: Vec<_> = PUSH_RETRY.seeded(None, Rng::seeded(seed)).collect();
            assert_eq!(delays.len(), 5, "six attempts");
            for (d, nominal) in delays.iter().zip([100, 200, 400, 800, 1600]) {
                assert!(*d >= ms(nominal) && *d < ms(nominal + 100), "{d:?}");
            }
        }
        let t0 = Instant::now();
        let mut delays = PUSH_RETRY.seeded(Some(t0 + ms(350)), Rng::seeded(1));
        let first = delays.next_at(t0).unwrap();
        let second = delays.next_at(t0 + first);
        assert!(second.is_none() || first + second.unwrap() < ms(350));
        assert!(delays.next_at(t0 + ms(350)).is_none());
    }

    fn inventory(addons: &[(&str, &str)]) -> ClusterInventory {
        let addons: Vec<String> = addons
            .iter()
            .map(|(name, version)| format!(r#"{{"name":"{name}","chartVersion":"{version}"}}"#))
            .collect();
        let text = format!(
            r#"{{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{{"name":"cluster"}},"spec":{{"lok8sVersion":"1","kind":"lo","specHash":"h","renderedAt":"2026-01-01T00:00:00Z","addons":[{}]}}}}"#,
            addons.join(",")
        );
        crate::inventory::parse::inventory_from_text(&text).unwrap()
    }

    #[test]
    fn the_subject_matches_repeated_addon_names_as_the_diff_does() {
        // The second `x` changed; the first did not. Matching by name alone compared
        // the new second `x` with the old first one.
        let before = inventory(&[("x", "1.0.0"), ("x", "2.0.0"), ("y", "1.0.0")]);
        let after = inventory(&[("x", "1.0.0"), ("x", "3.0.0")]);
        let report = crate::history::diff::diff(&before, &after);
        let changed: Vec<(Option<&str>, Option<usize>)> = report
            .changes
            .iter()
            .map(|c| (c.addon.as_deref(), c.occurrence))
            .collect();
        assert_eq!(changed, [(Some("x"), Some(2)), (Some("y"), Some(1))]);
        assert_eq!(
            summarize(Some(&before), &after),
            "x 2.0.0 → 3.0.0, remove y"
        );
        // A repeated name added once more is an addition, as in the diff.
        let more = inventory(&[
            ("x", "1.0.0"),
            ("x", "2.0.0"),
            ("y", "1.0.0"),
            ("x", "4.0.0"),
        ]);
        assert_eq!(summarize(Some(&before), &more), "add x 4.0.0");
    }

    #[test]
    fn paths_are_checked() {
        for ok in ["clusters/prod/inventory", "inv", "a/b/"] {
            assert!(check_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/abs", "../x", "a/../b", "a//b", ".git/x", "a/.GIT", "a\\b", "./a",
        ] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }
}
