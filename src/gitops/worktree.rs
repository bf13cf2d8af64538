//! The checked-out worktree around a commit, and what the branch already holds around the
//! folder: uncommitted edits that a commit would overwrite, the index and files brought up
//! to every branch move, changes made to the folder outside clinv, and a `flux bootstrap`
//! tree that applies it.
#![allow(clippy::disallowed_types)] // gitops: the one module that uses git2

use super::layout::{self, Bootstrap};
use super::{CR_FILE, CRD_FILE, KUSTOMIZATION_FILE, Repo, git, ref_error};
use crate::domain::Domain;
use crate::error::{GitError, Result, SharedBootstrap};
use git2::{Commit, Oid, Tree};
use std::path::Path;

/// How far back a commit looks for clinv's last commit of the folder.
const HISTORY_LIMIT: usize = 2000;

/// Names the commit whose files clinv is bringing into the worktree, from before the files
/// are touched until the branch has moved: files a killed clinv left as that commit has
/// them are clinv's, not uncommitted edits, and do not stop the next commit.
const PENDING_REF: &str = "refs/clinv/checkout";

impl Repo {
    /// The branch `refname` is the one checked out.
    fn checked_out(&self, refname: &str) -> bool {
        self.repo
            .find_reference("HEAD")
            .ok()
            .and_then(|h| h.symbolic_target().ok().flatten().map(str::to_string))
            .as_deref()
            == Some(refname)
    }

    /// The files clinv writes in the folders `paths`.
    fn managed(paths: &[&str]) -> Vec<String> {
        paths
            .iter()
            .flat_map(|path| {
                let dir = path.trim_end_matches('/');
                [CRD_FILE, CR_FILE, KUSTOMIZATION_FILE].map(|n| format!("{dir}/{n}"))
            })
            .collect()
    }

    /// Refuses a commit that would overwrite uncommitted changes (staged, unstaged or
    /// untracked) to the files clinv writes in the checked-out folders `paths`.
    ///
    /// # Errors
    /// [`Error::Git`] naming the files and `--force`.
    pub(super) fn check_clean(&self, refname: &str, paths: &[&str]) -> Result<()> {
        if !self.checked_out(refname) {
            return Ok(());
        }
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(false)
            .disable_pathspec_match(true);
        for p in Self::managed(paths) {
            opts.pathspec(p);
        }
        let statuses = self
            .repo
            .statuses(Some(&mut opts))
            .map_err(|e| git(&self.workdir(), e))?;
        let dirty: Vec<String> = statuses
            .iter()
            .filter(|s| !s.status().is_empty() && !s.status().contains(git2::Status::IGNORED))
            .filter_map(|s| s.path().ok().map(str::to_string))
            .filter(|p| !self.left_by_clinv(p))
            .collect();
        if dirty.is_empty() {
            return Ok(());
        }
        Err(GitError::Dirty(dirty).into())
    }

    /// Moves `refname` from `from` to `to` (compare-and-swap) and, when it is checked out,
    /// brings the index and the files along for every path that differs between the two:
    /// the folder's files by force (checked clean before, unless `--force`), everything
    /// else only where the file is still as `from` had it (a file the user edited keeps the
    /// edit and shows as modified against the new tip). Paths the move does not touch, and
    /// whatever the user staged there, are left alone. The files are updated before the
    /// branch moves, under its ref lock (libgit2 compares them with HEAD's tree).
    pub(super) fn advance(
        &self,
        refname: &str,
        from: Option<Oid>,
        to: Oid,
        log: &str,
        paths: &[&str],
    ) -> Result<()> {
        let wd = self.workdir();
        // The branch's ref is locked (as git locks it) while the files are brought along,
        // so nothing else moves it in between; a lock that is held stops here, before any
        // file is touched.
        let mut tx = self.repo.transaction().map_err(|e| git(&wd, e))?;
        tx.lock_ref(refname).map_err(|e| ref_error(refname, &e))?;
        if self.repo.refname_to_id(refname).ok() != from {
            return Err(GitError::Moved {
                refname: refname.to_string(),
                detail: None,
            }
            .into());
        }
        let checked_out = self.checked_out(refname);
        if checked_out {
            self.repo
                .reference(PENDING_REF, to, true, "clinv: bringing the worktree along")
                .map_err(|e| git(&wd, e))?;
            self.bring_along(from, to, paths)?;
        }
        tx.set_target(refname, to, None, log)
            .and_then(|()| tx.commit())
            .map_err(|e| ref_error(refname, &e))?;
        if checked_out && let Ok(mut pending) = self.repo.find_reference(PENDING_REF) {
            let _ = pending.delete();
        }
        Ok(())
    }

    /// True when `path`'s file (and its index entry) are as the commit a killed or failed
    /// clinv was bringing into the worktree has them.
    fn left_by_clinv(&self, path: &str) -> bool {
        let Some(blob) = self
            .repo
            .find_reference(PENDING_REF)
            .ok()
            .and_then(|r| r.peel_to_tree().ok())
            .and_then(|t| t.get_path(Path::new(path)).ok())
            .map(|e| e.id())
        else {
            return false;
        };
        let on_disk = git2::Oid::hash_file(git2::ObjectType::Blob, self.workdir().join(path));
        let head = self
            .repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_tree().ok())
            .and_then(|t| t.get_path(Path::new(path)).ok())
            .map(|e| e.id());
        let staged = self
            .repo
            .index()
            .ok()
            .and_then(|i| i.get_path(Path::new(path), 0).map(|e| e.id));
        on_disk.ok() == Some(blob) && (staged == Some(blob) || staged == head)
    }

    /// Updates the index and the files of the paths that differ between `from` and `to`
    /// (see [`Repo::advance`]); HEAD still names `from`.
    fn bring_along(&self, from: Option<Oid>, to: Oid, paths: &[&str]) -> Result<()> {
        let wd = self.workdir();
        let tree_of = |oid: Oid| {
            self.repo
                .find_commit(oid)
                .and_then(|c| c.tree())
                .map_err(|e| git(&wd, e))
        };
        let new = tree_of(to)?;
        let old = from.map(tree_of).transpose()?;
        let diff = self
            .repo
            .diff_tree_to_tree(old.as_ref(), Some(&new), None)
            .map_err(|e| git(&wd, e))?;
        let managed = Self::managed(paths);
        let mut others: Vec<String> = Vec::new();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(p) = file.path().and_then(Path::to_str)
                    && !managed.iter().any(|m| m == p)
                    && !others.iter().any(|o| o == p)
                {
                    others.push(p.to_string());
                }
            }
        }
        if !others.is_empty() {
            let mut opts = git2::build::CheckoutBuilder::new();
            opts.safe()
                .allow_conflicts(true)
                .recreate_missing(true)
                .disable_pathspec_match(true);
            for p in &others {
                opts.path(p);
            }
            self.repo
                .checkout_tree(new.as_object(), Some(&mut opts))
                .map_err(|e| git(&wd, e))?;
        }
        self.force_paths(&new, &managed)?;
        self.index_to(&new, &others)
    }

    /// Checks out `paths` of `tree` by force.
    fn force_paths(&self, tree: &Tree<'_>, paths: &[String]) -> Result<()> {
        let mut opts = git2::build::CheckoutBuilder::new();
        opts.force().disable_pathspec_match(true);
        for p in paths {
            opts.path(p);
        }
        self.repo
            .checkout_tree(tree.as_object(), Some(&mut opts))
            .map_err(|e| git(&self.workdir(), e))
    }

    /// Sets the index entries of `paths` to `tree`'s (removed where it has none), so the
    /// index never stages a difference the branch move made.
    fn index_to(&self, tree: &Tree<'_>, paths: &[String]) -> Result<()> {
        let wd = self.workdir();
        let mut index = self.repo.index().map_err(|e| git(&wd, e))?;
        let mut changed = false;
        for p in paths {
            match tree.get_path(Path::new(p)) {
                Ok(entry) => {
                    if index
                        .get_path(Path::new(p), 0)
                        .is_some_and(|e| e.id == entry.id())
                    {
                        continue;
                    }
                    let blob = self.repo.find_blob(entry.id()).map_err(|e| git(&wd, e))?;
                    let e = git2::IndexEntry {
                        ctime: git2::IndexTime::new(0, 0),
                        mtime: git2::IndexTime::new(0, 0),
                        dev: 0,
                        ino: 0,
                        mode: u32::try_from(entry.filemode()).unwrap_or(0o100644),
                        uid: 0,
                        gid: 0,
                        file_size: 0,
                        id: entry.id(),
                        flags: 0,
                        flags_extended: 0,
                        path: p.as_bytes().to_vec(),
                    };
                    index
                        .add_frombuffer(&e, blob.content())
                        .map_err(|e| git(&wd, e))?;
                    changed = true;
                }
                Err(_) => {
                    if index.get_path(Path::new(p), 0).is_some() {
                        index.remove_path(Path::new(p)).map_err(|e| git(&wd, e))?;
                        changed = true;
                    }
                }
            }
        }
        // The checkout before wrote the index already; write it again only if changed.
        if changed {
            index.write().map_err(|e| git(&wd, e))?;
        }
        Ok(())
    }

    /// A paragraph for the commit message naming the changes made to the folder outside
    /// clinv (commits without clinv's `Snapshot:` trailer) since clinv last wrote it.
    pub(super) fn outside_changes(&self, tip: &Commit<'_>, path: &str) -> Option<String> {
        let dir = Path::new(path.trim_end_matches('/'));
        let folder = |c: &Commit<'_>| c.tree().ok()?.get_path(dir).ok().map(|e| e.id());
        let mut lines: Vec<String> = Vec::new();
        let mut current = tip.clone();
        for _ in 0..HISTORY_LIMIT {
            let Some(here) = folder(&current) else {
                break;
            };
            let parent = current.parent(0).ok();
            let there = parent.as_ref().and_then(folder);
            if Some(here) != there {
                if is_clinv(&current) {
                    break;
                }
                let files = self.changed_files(there, here);
                let id = current.id().to_string();
                lines.push(format!(
                    "- {} ({} \"{}\")",
                    files.join(", "),
                    &id[..12],
                    current.summary().ok().flatten().unwrap_or_default()
                ));
            }
            match parent {
                Some(p) => current = p,
                None => break,
            }
        }
        if lines.is_empty() {
            return None;
        }
        lines.reverse();
        Some(format!(
            "Changed in {} outside clinv since its last commit there (clinv's files replace those changes; other files are kept):\n{}",
            path.trim_end_matches('/'),
            lines.join("\n")
        ))
    }

    /// The names of the files that differ between two versions of a folder.
    fn changed_files(&self, before: Option<Oid>, after: Oid) -> Vec<String> {
        let tree = |id: Option<Oid>| id.and_then(|i| self.repo.find_tree(i).ok());
        let (old, new) = (tree(before), tree(Some(after)));
        let Ok(diff) = self
            .repo
            .diff_tree_to_tree(old.as_ref(), new.as_ref(), None)
        else {
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for delta in diff.deltas() {
            let file = delta.new_file().path().or(delta.old_file().path());
            if let Some(name) = file.and_then(Path::to_str)
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
        names
    }

    /// The `flux bootstrap` Kustomization on `branch` that applies `path`, if any: read
    /// from `<dir>/flux-system/gotk-sync.yaml` in every folder above `path` (bootstrap puts
    /// it in the folder it syncs).
    pub fn bootstrap_for(&self, branch: &str, path: &str) -> Option<Bootstrap> {
        let tree = self.branch_tree(branch)?;
        self.bootstraps(&tree, path)
            .into_iter()
            .find_map(|(b, spec_path)| {
                let read = |dir: &str| self.kustomization_in(&tree, dir);
                layout::covers(&spec_path, path, &read).then_some(b)
            })
    }

    /// A refusal when the `flux bootstrap` Kustomization that applies `path` on `branch`
    /// also applies another domain's inventory folder: its one build would hold two
    /// `ClusterInventory/cluster`.
    pub fn bootstrap_shared(&self, branch: &str, path: &str, domain: &str) -> Option<GitError> {
        let tree = self.branch_tree(branch)?;
        let read = |dir: &str| self.kustomization_in(&tree, dir);
        let (b, spec) = self
            .bootstraps(&tree, path)
            .into_iter()
            .find(|(_, spec)| layout::covers(spec, path, &read))?;
        let (other, other_path) = self
            .inventory_folders(branch)
            .into_iter()
            .find(|(d, p)| d.as_str() != domain && layout::covers(&spec, p, &read))?;
        Some(GitError::BootstrapShared(Box::new(SharedBootstrap {
            kustomization: format!("{}/{}", b.namespace, b.name),
            file: b.file,
            domain: domain.to_string(),
            path: path.to_string(),
            other: other.to_string(),
            other_path,
        })))
    }

    /// Any `flux bootstrap` on `branch`: around `path`, or in a `clusters/<name>/` folder.
    pub fn any_bootstrap(&self, branch: &str, path: &str) -> Option<Bootstrap> {
        let tree = self.branch_tree(branch)?;
        self.bootstraps(&tree, path)
            .into_iter()
            .next()
            .map(|(b, _)| b)
    }

    /// Every folder on `branch` holding a committed inventory (a `clusterinventory.yaml`
    /// that parses), with the domain its `lok8s.dev/domain` label names: the default
    /// folders and those committed with `--path`, sorted by path.
    pub fn inventory_folders(&self, branch: &str) -> Vec<(Domain, String)> {
        let Some(tree) = self.branch_tree(branch) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.name().ok() == Some(CR_FILE) && entry.kind() == Some(git2::ObjectType::Blob) {
                found.push((dir.trim_end_matches('/').to_string(), entry.id()));
            }
            git2::TreeWalkResult::Ok
        });
        let mut folders: Vec<(Domain, String)> = found
            .into_iter()
            .filter_map(|(dir, id)| {
                let blob = self
                    .repo
                    .find_blob(id)
                    .ok()
                    .filter(|b| b.size() <= 8 << 20)?;
                let text = std::str::from_utf8(blob.content()).ok()?;
                let cr = crate::inventory::parse::inventory_from_text(text).ok()?;
                let label = cr.metadata.labels.get(crate::inventory::DOMAIN_LABEL)?;
                Some((Domain::new(label)?, dir))
            })
            .collect();
        folders.sort_by(|a, b| a.1.cmp(&b.1));
        folders
    }

    /// The domains with a committed CR in their default folder on `branch`, sorted.
    pub fn default_domains(&self, branch: &str) -> Vec<Domain> {
        let Some(tree) = self.branch_tree(branch) else {
            return Vec::new();
        };
        let Some(clusters) = tree
            .get_path(Path::new("clusters"))
            .ok()
            .and_then(|e| self.repo.find_tree(e.id()).ok())
        else {
            return Vec::new();
        };
        let mut domains: Vec<Domain> = clusters
            .iter()
            .filter_map(|e| e.name().ok().and_then(Domain::new))
            .filter(|d| tree.get_path(Path::new(&super::default_cr_path(d))).is_ok())
            .collect();
        domains.sort();
        domains
    }

    fn branch_tree(&self, branch: &str) -> Option<Tree<'_>> {
        let id = self
            .repo
            .refname_to_id(&format!("refs/heads/{branch}"))
            .ok()?;
        self.repo.find_commit(id).ok()?.tree().ok()
    }

    fn bootstraps(&self, tree: &Tree<'_>, path: &str) -> Vec<(Bootstrap, String)> {
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        let mut dirs: Vec<String> = (0..parts.len())
            .rev()
            .map(|n| parts[..n].join("/"))
            .collect();
        if let Some(clusters) = tree
            .get_path(Path::new("clusters"))
            .ok()
            .and_then(|e| self.repo.find_tree(e.id()).ok())
        {
            for e in clusters.iter() {
                if let Ok(name) = e.name() {
                    let dir = format!("clusters/{name}");
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
            }
        }
        let mut found = Vec::new();
        for dir in dirs {
            let file = if dir.is_empty() {
                "flux-system/gotk-sync.yaml".to_string()
            } else {
                format!("{dir}/flux-system/gotk-sync.yaml")
            };
            if let Some(text) = self.file_at(tree, &file) {
                found.extend(layout::read_sync(&file, &text));
            }
        }
        found
    }

    fn kustomization_in(&self, tree: &Tree<'_>, dir: &str) -> Option<String> {
        layout::KUSTOMIZATION_NAMES.iter().find_map(|name| {
            let p = if dir.is_empty() {
                (*name).to_string()
            } else {
                format!("{dir}/{name}")
            };
            self.file_at(tree, &p)
        })
    }
}

/// A commit clinv made: its message carries the `Snapshot:` trailer.
fn is_clinv(c: &Commit<'_>) -> bool {
    c.message()
        .is_ok_and(|m| m.lines().any(|l| l.starts_with("Snapshot: ")))
}
