//! Reading git history (part of the gitops module, the only user of git2).
//!
//! The addon index is stamped with the committer time of the last commit that touched
//! `.lok8s/addons`, so it is the same for every build of one commit (spec §10). This is
//! `git log -1 --format=%ct -- <path>`: a walk from `HEAD` newest-first by committer
//! time with git's default history simplification — a merge that carries the path
//! unchanged from one parent is followed through that parent only and is not itself a
//! change.
#![allow(clippy::disallowed_types)] // gitops: the one module that uses git2

use crate::error::GitError;
use git2::{Commit, Oid, Repository};
use std::collections::{BinaryHeap, HashSet};
use std::path::{Path, PathBuf};

/// Upper bound on commits visited, so a huge history cannot stall a command.
const MAX_COMMITS: usize = 1_000_000;

/// Where a path's last change was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastChange {
    /// Committer time, seconds since the epoch (UTC).
    pub committer_time: i64,
    /// The commit, as hex.
    pub commit: String,
}

/// The last commit reachable from `HEAD` that changed `path` (a file or directory inside a
/// work tree).
///
/// `Ok(None)` when `path` is not in a git work tree, `HEAD` is unborn, or no commit ever
/// held the path.
///
/// # Errors
/// A repository that exists but cannot be read; the message names the step.
pub fn last_change(path: &Path) -> Result<Option<LastChange>, GitError> {
    let Ok(repo) = Repository::discover(path) else {
        return Ok(None);
    };
    let Some(rel) = relative_to_workdir(&repo, path) else {
        return Ok(None);
    };
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => return Ok(None),
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(GitError::call("reading HEAD", e.message())),
    };
    let head = head
        .peel_to_commit()
        .map_err(|e| GitError::call("resolving HEAD to a commit", e.message()))?;
    walk(&repo, head, &rel)
}

/// `path` relative to the repository's work tree (both canonicalised, so a symlinked
/// project root or a linked work tree resolve the same way).
fn relative_to_workdir(repo: &Repository, path: &Path) -> Option<PathBuf> {
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let real = path.canonicalize().ok()?;
    let rel = real.strip_prefix(&workdir).ok()?.to_path_buf();
    (!rel.as_os_str().is_empty()).then_some(rel)
}

/// The id of the tree entry at `rel` in `commit`, if any.
fn entry_at(commit: &Commit<'_>, rel: &Path) -> Result<Option<Oid>, GitError> {
    let tree = commit
        .tree()
        .map_err(|e| GitError::call(format!("reading tree of {}", commit.id()), e.message()))?;
    Ok(tree.get_path(rel).ok().map(|e| e.id()))
}

fn walk(repo: &Repository, head: Commit<'_>, rel: &Path) -> Result<Option<LastChange>, GitError> {
    // Max-heap on (committer time, insertion order) pops the newest commit first, as
    // git's default revision walk does.
    let mut queue: BinaryHeap<(i64, usize, Oid)> = BinaryHeap::new();
    let mut seen: HashSet<Oid> = HashSet::new();
    let mut order = usize::MAX;
    let mut push = |queue: &mut BinaryHeap<(i64, usize, Oid)>, c: &Commit<'_>| {
        if seen.insert(c.id()) {
            order -= 1;
            queue.push((c.committer().when().seconds(), order, c.id()));
        }
    };
    push(&mut queue, &head);
    let mut visited = 0usize;
    while let Some((time, _, oid)) = queue.pop() {
        visited += 1;
        if visited > MAX_COMMITS {
            return Err(GitError::TooLong(MAX_COMMITS));
        }
        let commit = repo
            .find_commit(oid)
            .map_err(|e| GitError::call(format!("reading commit {oid}"), e.message()))?;
        let mine = entry_at(&commit, rel)?;
        let parents: Vec<Commit<'_>> = commit.parents().collect();
        if parents.is_empty() {
            if mine.is_some() {
                return Ok(Some(LastChange {
                    committer_time: time,
                    commit: oid.to_string(),
                }));
            }
            continue;
        }
        let mut same = None;
        for p in &parents {
            if entry_at(p, rel)? == mine {
                same = Some(p);
                break;
            }
        }
        match same {
            // TREESAME to a parent: follow that parent only (history simplification).
            Some(p) => push(&mut queue, p),
            None => {
                return Ok(Some(LastChange {
                    committer_time: time,
                    commit: oid.to_string(),
                }));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Signature, Time};

    fn commit(repo: &Repository, files: &[(&str, &str)], when: i64, parents: &[Oid]) -> Oid {
        let mut index = repo.index().unwrap();
        let workdir = repo.workdir().unwrap().to_path_buf();
        for (name, text) in files {
            let p = workdir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            index.add_path(Path::new(name)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::new("t", "t@example.invalid", &Time::new(when, 0)).unwrap();
        let parents: Vec<Commit<'_>> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&Commit<'_>> = parents.iter().collect();
        let oid = repo.commit(None, &sig, &sig, "m", &tree, &refs).unwrap();
        repo.set_head_detached(oid).unwrap();
        oid
    }

    #[test]
    fn finds_the_last_commit_touching_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let addons = dir.path().join("p/.lok8s/addons");
        assert_eq!(last_change(dir.path()).unwrap(), None, "unborn HEAD");
        let a = commit(&repo, &[("README", "x")], 1_000, &[]);
        std::fs::create_dir_all(&addons).unwrap();
        assert_eq!(last_change(&addons).unwrap(), None, "never committed");
        let b = commit(
            &repo,
            &[("p/.lok8s/addons/a/chart.yaml", "version: 1")],
            2_000,
            &[a],
        );
        let c = commit(&repo, &[("README", "y")], 3_000, &[b]);
        let got = last_change(&addons).unwrap().unwrap();
        assert_eq!(got.committer_time, 2_000);
        assert_eq!(got.commit, b.to_string());
        let _ = c;
    }

    #[test]
    fn a_merge_that_keeps_one_side_is_not_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let addons = dir.path().join(".lok8s/addons");
        let base = commit(&repo, &[(".lok8s/addons/a/x", "1")], 1_000, &[]);
        let side = commit(&repo, &[(".lok8s/addons/a/x", "2")], 2_000, &[base]);
        // Main line keeps the change (the merge result equals `side` at the path).
        let main = commit(&repo, &[("README", "m")], 3_000, &[side]);
        let merge = commit(&repo, &[("README", "merged")], 4_000, &[main, side]);
        assert_eq!(last_change(&addons).unwrap().unwrap().committer_time, 2_000);
        // A merge that produces a new tree at the path is the change.
        let other = commit(&repo, &[(".lok8s/addons/a/x", "3")], 5_000, &[base]);
        let _ = commit(&repo, &[(".lok8s/addons/a/x", "4")], 6_000, &[merge, other]);
        assert_eq!(last_change(&addons).unwrap().unwrap().committer_time, 6_000);
    }

    #[test]
    fn outside_a_repository_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(last_change(dir.path()).unwrap(), None);
        assert_eq!(last_change(&dir.path().join("missing")).unwrap(), None);
    }
}

/// The bytes of `path` at revision `rev` (anything `git rev-parse` takes) in the
/// repository at `dir`.
///
/// # Errors
/// No repository, an unknown revision, or no such file at that revision.
pub fn file_at(dir: &Path, rev: &str, path: &str) -> Result<Vec<u8>, GitError> {
    file_at_commit(dir, rev, path).map(|(bytes, _)| bytes)
}

/// [`file_at`], with the id of the commit `rev` names (none for a tree-ish that is not
/// a commit).
///
/// # Errors
/// As [`file_at`].
pub fn file_at_commit(
    dir: &Path,
    rev: &str,
    path: &str,
) -> Result<(Vec<u8>, Option<String>), GitError> {
    let repo = open(dir)?;
    let object = revision(&repo, rev)?;
    let tree = object
        .peel_to_tree()
        .map_err(|e| GitError::call(format!("revision {rev}"), e.message()))?;
    let entry = tree
        .get_path(Path::new(path))
        .map_err(|_| GitError::NoFile {
            path: path.to_string(),
            rev: rev.to_string(),
        })?;
    let blob = repo.find_blob(entry.id()).map_err(|_| GitError::NotAFile {
        path: path.to_string(),
        rev: rev.to_string(),
    })?;
    let commit = object.peel_to_commit().ok().map(|c| c.id().to_string());
    Ok((blob.content().to_vec(), commit))
}

/// The repository at `dir` (not searched for above it).
fn open(dir: &Path) -> Result<Repository, GitError> {
    Repository::open(dir).map_err(|e| GitError::call(dir.display().to_string(), e.message()))
}

/// What `rev` names in `repo`, as `git rev-parse` reads it.
fn revision<'r>(repo: &'r Repository, rev: &str) -> Result<git2::Object<'r>, GitError> {
    repo.revparse_single(rev)
        .map_err(|e| GitError::call(format!("revision {rev}"), e.message()))
}

/// The committed CR of every domain folder at `rev` (`clusters/<name>/inventory/
/// clusterinventory.yaml`, the default layout), as (folder name, bytes), in name order;
/// folders without one are left out.
///
/// A blob over 8 MiB is refused (an inventory is a few KiB).
///
/// # Errors
/// No repository, an unknown revision, no `clusters/` folder at it.
pub fn committed_inventories(dir: &Path, rev: &str) -> Result<Vec<(String, Vec<u8>)>, GitError> {
    let repo = open(dir)?;
    let tree = revision(&repo, rev)?
        .peel_to_tree()
        .map_err(|e| GitError::call(format!("revision {rev}"), e.message()))?;
    let clusters = tree
        .get_path(Path::new("clusters"))
        .and_then(|e| e.to_object(&repo))
        .and_then(|o| o.peel_to_tree())
        .map_err(|_| GitError::NoFile {
            path: "clusters/".to_string(),
            rev: rev.to_string(),
        })?;
    let mut out = Vec::new();
    for entry in clusters.iter() {
        let Ok(name) = entry.name() else { continue };
        let path = format!("{name}/inventory/{}", super::CR_FILE);
        let Ok(cr) = clusters.get_path(Path::new(&path)) else {
            continue;
        };
        if let Ok(blob) = repo.find_blob(cr.id())
            && blob.size() <= 8 << 20
        {
            out.push((name.to_string(), blob.content().to_vec()));
        }
    }
    Ok(out)
}

/// The newest first-parent commit of `rev` committed at or before `until`.
///
/// `until` is seconds since the epoch, compared with committer time: what the branch
/// held then, as `git rev-list --first-parent --before` finds it; `None` before its
/// first commit.
///
/// # Errors
/// No repository or an unknown revision.
pub fn commit_at(dir: &Path, rev: &str, until: i64) -> Result<Option<String>, GitError> {
    let repo = open(dir)?;
    let mut commit = revision(&repo, rev)?
        .peel_to_commit()
        .map_err(|e| GitError::call(format!("revision {rev}"), e.message()))?;
    for _ in 0..MAX_COMMITS {
        if commit.committer().when().seconds() <= until {
            return Ok(Some(commit.id().to_string()));
        }
        match commit.parent(0) {
            Ok(parent) => commit = parent,
            Err(_) => return Ok(None),
        }
    }
    Err(GitError::TooLong(MAX_COMMITS))
}

/// One commit of a file's history.
#[derive(Debug, Clone)]
pub struct Version {
    pub commit: String,
    /// Committer time, RFC 3339 UTC.
    pub at: String,
    /// The commit's author, `name <email>` (of the commit that brought this content).
    pub author: String,
    pub content: Vec<u8>,
}

/// `name <email>` of a commit's author (lossy UTF-8).
fn author(commit: &Commit<'_>) -> String {
    let a = commit.author();
    format!(
        "{} <{}>",
        String::from_utf8_lossy(a.name_bytes()),
        String::from_utf8_lossy(a.email_bytes())
    )
}

/// Every version of `path` along the first-parent history of `rev`, oldest first: the
/// commits where its content changed (or it appeared).
///
/// # Errors
/// No repository or an unknown revision.
pub fn file_history(dir: &Path, rev: &str, path: &str) -> Result<Vec<Version>, GitError> {
    let repo = open(dir)?;
    let mut commit = revision(&repo, rev)?
        .peel_to_commit()
        .map_err(|e| GitError::call(format!("revision {rev}"), e.message()))?;
    let mut out: Vec<(Oid, Version)> = Vec::new();
    for _ in 0..MAX_COMMITS {
        if let Ok(entry) = commit.tree().and_then(|t| t.get_path(Path::new(path))) {
            let blob_id = entry.id();
            let at = jiff::Timestamp::from_second(commit.committer().when().seconds())
                .ok()
                .map(crate::util::time::format_seconds)
                .unwrap_or_default();
            match out.last_mut() {
                // Same content as the newer commit: the change happened here or earlier.
                Some((id, v)) if *id == blob_id => {
                    v.commit = commit.id().to_string();
                    v.at = at;
                    v.author = author(&commit);
                }
                _ => {
                    let content = repo
                        .find_blob(blob_id)
                        .map(|b| b.content().to_vec())
                        .unwrap_or_default();
                    out.push((
                        blob_id,
                        Version {
                            commit: commit.id().to_string(),
                            at,
                            author: author(&commit),
                            content,
                        },
                    ));
                }
            }
        }
        match commit.parent(0) {
            Ok(p) => commit = p,
            Err(_) => break,
        }
    }
    out.reverse();
    Ok(out.into_iter().map(|(_, v)| v).collect())
}
