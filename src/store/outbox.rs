//! What the Git and registry channels owe: pushes whose far end did not answer.
//!
//! One file per (channel, target, domain) in `<store>/.outbox/` — a dot name, so no
//! domain (whose names start with a letter or digit) can collide with it — named
//! `<channel>-<16 hex digits of the target's hash>-<domain>.json`. A file holds the
//! newest owed push to its target: the inventory is a singleton, so a newer owed push
//! to the same target replaces the older one, which is no longer owed, and a push that
//! lands (delivered later or made directly) settles it.
//!
//! Listing is one directory read and one small file per item, never a journal read: a
//! delivery loop reads it every second. A file that cannot be used (damaged, another
//! version, a name that does not match its content) is reported with its path and left
//! where it is — never a panic, never silently dropped. Files are written with the
//! store's atomic durable write under the domain's lock, and hold no secret: the
//! names of variables and the paths of keys, never their values.
#![allow(clippy::disallowed_methods)] // the store: removes what it wrote

use super::{DomainStore, SnapshotId, StateRecord, lock_timeout};
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::util::files;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The folder under the store root.
pub const DIR: &str = ".outbox";
/// The format of an outbox file.
pub const VERSION: u32 = 1;
/// The largest outbox file read (an item is a few hundred bytes; annotations are the
/// user's, bounded by the command line).
const MAX_FILE: u64 = 256 << 10;

/// A push that is owed: which snapshot, why it did not land, and what delivers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owed {
    pub version: u32,
    pub domain: Domain,
    pub snapshot: SnapshotId,
    /// When it was recorded (RFC 3339, milliseconds).
    pub at: String,
    /// Why the last attempt did not land (`unreachable`, `server-error`).
    pub reason: Reason,
    /// A short, redacted account of the failure.
    pub detail: String,
    #[serde(flatten)]
    pub push: Push,
}

/// The channel and what a delivery needs, independent of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "channel", rename_all = "lowercase")]
pub enum Push {
    Git(GitPush),
    Oci(OciPush),
}

/// A Git branch to push: the commit that must land.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitPush {
    /// The repository's worktree, absolute.
    pub repo: PathBuf,
    pub remote: String,
    /// The remote's URL when the push was owed, without credentials: a delivery to a
    /// remote whose URL changed since is refused.
    pub url: String,
    pub branch: String,
    pub commit: String,
    /// `--token-env NAME`: the variable's name, read at delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// `--allow-insecure-tls`.
    #[serde(default)]
    pub allow_insecure_tls: bool,
}

/// An artifact to push: how it was packed and how the registry is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciPush {
    /// `oci://host/repository:tag`.
    pub reference: String,
    /// `flux` or `oci`.
    pub layer: String,
    /// The annotations as pushed (the snapshot's, the checkout's then, the user's).
    pub annotations: BTreeMap<String, String>,
    /// `--sign KEY`: the key's path (its password is read at delivery, as `push` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_key: Option<PathBuf>,
    #[serde(default)]
    pub plain_http: bool,
    #[serde(default)]
    pub insecure: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// The names of the variables that hold credentials, read at delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creds_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

impl Push {
    /// `git` or `oci`.
    pub fn channel(&self) -> &'static str {
        match self {
            Push::Git(_) => "git",
            Push::Oci(_) => "oci",
        }
    }

    /// What identifies the target: a newer owed push to it replaces the older.
    fn target(&self) -> String {
        match self {
            Push::Git(g) => format!("{}\0{}\0{}", g.repo.display(), g.remote, g.branch),
            Push::Oci(o) => o.reference.clone(),
        }
    }

    /// Where it goes, in words (`origin (main)`, `oci://host/repo:tag`).
    pub fn shown_target(&self) -> String {
        match self {
            Push::Git(g) => format!("{} ({})", g.remote, g.branch),
            Push::Oci(o) => o.reference.clone(),
        }
    }
}

impl Owed {
    /// The file name of this item: `<channel>-<hash>-<domain>.json`.
    pub fn file_name(&self) -> String {
        file_name(&self.push, &self.domain)
    }
}

fn file_name(push: &Push, domain: &Domain) -> String {
    let hash = crate::util::hash::hex_sha256(push.target().as_bytes());
    format!("{}-{}-{domain}.json", push.channel(), &hash[..16])
}

/// An owed push read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub owed: Owed,
}

/// An outbox file that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {why}; left in place (remove it once the push is settled by hand)", path.display())]
pub struct Damage {
    pub path: PathBuf,
    pub why: String,
}

/// What the outbox holds: the owed pushes (by file name) and the files that cannot be
/// used.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub owed: Vec<Entry>,
    pub damaged: Vec<Damage>,
}

/// The outbox folder of the store at `root`.
pub fn dir(root: &Path) -> PathBuf {
    root.join(DIR)
}

/// Whether the outbox folder at `dir` is there (`Ok(false)`: absent); why it cannot be
/// used when it is a link (one could point anywhere: never followed, for reading or
/// writing) or not a folder.
fn check_dir(dir: &Path) -> std::result::Result<bool, String> {
    match fs::symlink_metadata(dir) {
        // No store there (or the store root is not a folder, which its own read says).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(false),
        Err(e) => Err(e.to_string()),
        Ok(meta) if meta.file_type().is_symlink() => {
            Err("is a symbolic link; clinv does not follow links inside its store".into())
        }
        Ok(meta) if !meta.is_dir() => Err("not a directory".into()),
        Ok(_) => Ok(true),
    }
}

/// [`check_dir`] as the error of a write to the outbox.
fn usable_dir(dir: &Path) -> Result<bool> {
    check_dir(dir).map_err(|why| {
        let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
        Error::io(dir, source)
    })
}

/// The owed pushes of the store at `root` (of `domain` only, when given).
///
/// One directory read, then one small file per item of the domain. An outbox that is a
/// link or not a folder is listed as damaged, and not read.
pub fn list(root: &Path, domain: Option<&Domain>) -> Listing {
    let dir = dir(root);
    let mut listing = Listing::default();
    if let Err(why) = check_dir(&dir) {
        listing.damaged.push(Damage { path: dir, why });
        return listing;
    }
    let mut names: Vec<String> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let named = parse_name(&name);
        if let (Some(want), Some((_, of))) = (domain, &named)
            && of.as_str() != want.as_str()
        {
            continue;
        }
        match read(&path, named.as_ref()) {
            Ok(owed) => listing.owed.push(Entry { path, owed }),
            Err(why) => listing.damaged.push(Damage { path, why }),
        }
    }
    listing
}

/// The channel and domain a file name says.
fn parse_name(name: &str) -> Option<(String, Domain)> {
    let stem = name.strip_suffix(".json")?;
    let mut parts = stem.splitn(3, '-');
    let channel = parts.next()?;
    let hash = parts.next()?;
    let domain = Domain::new(parts.next()?)?;
    let valid = matches!(channel, "git" | "oci")
        && hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| (channel.to_string(), domain))
}

/// Reads one outbox file; why it cannot be used otherwise.
fn read(path: &Path, named: Option<&(String, Domain)>) -> std::result::Result<Owed, String> {
    let Some((channel, domain)) = named else {
        return Err("not an outbox file name (<git|oci>-<16 hex>-<domain>.json)".into());
    };
    check_owner(path)?;
    let bytes = files::read_bounded_nofollow(path, MAX_FILE).map_err(|e| e.to_string())?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("damaged: {e}"))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "outbox format version {v}, this clinv reads version {VERSION}"
            ));
        }
        None => return Err("damaged: no format version".into()),
    }
    let owed: Owed = serde_json::from_value(value).map_err(|e| format!("damaged: {e}"))?;
    if owed.push.channel() != channel
        || owed.domain != *domain
        || owed.file_name() != file_name_of(path)
    {
        return Err("damaged: its content does not match its file name".into());
    }
    Ok(owed)
}

/// An item names what to push where, with which credential variables: only the store's
/// user's own files are taken (as the store writes only into its user's folders).
#[cfg(unix)]
fn check_owner(path: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.uid() != me => Err(format!(
            "owned by uid {}, not by the current user (uid {me}): not taken",
            meta.uid()
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(not(unix))]
fn check_owner(_: &Path) -> std::result::Result<(), String> {
    Ok(())
}

fn file_name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What [`DomainStore::settle`] did with the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The item was removed: nothing is owed to that target.
    Removed,
    /// A newer owed push to the target replaced the item meanwhile: that one stays.
    Replaced,
    /// No item for the target (settled by another process).
    Gone,
}

impl DomainStore {
    /// This domain's owed pushes (one directory read, its own files only).
    pub fn owed(&self) -> Listing {
        list(self.dir.parent().unwrap_or(&self.dir), Some(&self.domain))
    }

    fn outbox_path(&self, push: &Push) -> PathBuf {
        let root = self.dir.parent().unwrap_or(&self.dir);
        dir(root).join(file_name(push, &self.domain))
    }

    /// Records `owed` (replacing an older owed push to the same target), under the
    /// domain's lock, atomically and durably.
    ///
    /// # Errors
    /// The lock or the write failed; the outbox is a link or not a folder.
    pub fn owe(&self, owed: &Owed) -> Result<PathBuf> {
        let _lock = self.lock("outbox", lock_timeout()?)?;
        let path = self.outbox_path(&owed.push);
        if let Some(parent) = path.parent()
            && !usable_dir(parent)?
        {
            super::segments::create_private_dir(parent).map_err(|e| Error::io(parent, e))?;
        }
        let mut text =
            serde_json::to_string_pretty(owed).map_err(|e| Error::encode("an outbox item", e))?;
        text.push('\n');
        files::write_atomic(&path, text.as_bytes(), 0o600).map_err(|e| Error::io(&path, e))?;
        Ok(path)
    }

    /// After `owed` was delivered: appends `change` (what the push records) and removes
    /// the item, under one hold of the domain's lock — unless a newer owed push to the
    /// target replaced it, which stays owed. A crash between the two leaves the item:
    /// delivered again, it finds the far end up to date.
    ///
    /// # Errors
    /// The lock, the journal append or the removal failed; the outbox is a link or not a
    /// folder.
    pub fn settle(&self, owed: &Owed, change: &StateRecord) -> Result<Settled> {
        let _lock = self.lock("outbox", lock_timeout()?)?;
        self.append_states(std::slice::from_ref(change))?;
        let path = self.outbox_path(&owed.push);
        if let Some(parent) = path.parent() {
            usable_dir(parent)?;
        }
        let named = parse_name(&file_name_of(&path));
        match read(&path, named.as_ref()) {
            Ok(current) if current == *owed => {}
            Ok(_) => return Ok(Settled::Replaced),
            Err(_) if !path.exists() => return Ok(Settled::Gone),
            Err(_) => return Ok(Settled::Replaced),
        }
        remove(&path)?;
        Ok(Settled::Removed)
    }

    /// After a direct push to `push`'s target landed: an older owed push there is no
    /// longer owed. Whether one was removed.
    ///
    /// # Errors
    /// The lock or the removal failed; the outbox is a link or not a folder.
    pub fn settle_target(&self, push: &Push) -> Result<bool> {
        let path = self.outbox_path(push);
        if let Some(parent) = path.parent()
            && !usable_dir(parent)?
        {
            return Ok(false);
        }
        if !path.exists() {
            return Ok(false);
        }
        let _lock = self.lock("outbox", lock_timeout()?)?;
        if !path.exists() {
            return Ok(false);
        }
        remove(&path)?;
        Ok(true)
    }
}

fn remove(path: &Path) -> Result<()> {
    let _critical = crate::util::signals::critical();
    fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    if let Some(parent) = path.parent() {
        files::sync_dir(parent).map_err(|e| Error::io(parent, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn git_owed(domain: &Domain, commit: &str) -> Owed {
        Owed {
            version: VERSION,
            domain: domain.clone(),
            snapshot: SnapshotId::from("s1".to_string()),
            at: "2026-12-05T10:00:00.000Z".into(),
            reason: Reason::Unreachable,
            detail: "refused".into(),
            push: Push::Git(GitPush {
                repo: "/r".into(),
                remote: "origin".into(),
                url: "https://h/r.git".into(),
                branch: "main".into(),
                commit: commit.into(),
                token_env: None,
                allow_insecure_tls: false,
            }),
        }
    }

    #[test]
    fn a_newer_owed_push_replaces_the_older_and_settling_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let d = Domain::new("prod.acme.example").unwrap();
        let ds = store.domain(&d);
        let older = git_owed(&d, "aaa");
        ds.owe(&older).unwrap();
        let newer = git_owed(&d, "bbb");
        ds.owe(&newer).unwrap();
        let listed = list(dir.path(), None);
        assert_eq!(listed.owed.len(), 1);
        assert_eq!(listed.owed[0].owed, newer);
        assert!(
            list(dir.path(), Some(&Domain::new("other").unwrap()))
                .owed
                .is_empty()
        );
        let change = StateRecord::new(
            &newer.snapshot,
            "2026-12-05T10:00:01.000Z",
            super::super::State::Committed,
        );
        // Delivering the older one does not remove the newer.
        assert_eq!(ds.settle(&older, &change).unwrap(), Settled::Replaced);
        assert_eq!(ds.settle(&newer, &change).unwrap(), Settled::Removed);
        assert!(list(dir.path(), None).owed.is_empty());
    }

    #[test]
    fn an_outbox_that_is_a_link_is_neither_written_through_nor_read() {
        // Issue #48, finding 9: `.outbox` as a link to a folder elsewhere was followed.
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let d = Domain::new("prod.acme.example").unwrap();
        let ds = store.domain(&d);
        let planted = git_owed(&d, "aaa");
        // An item that would be taken if the folder were followed.
        let text = serde_json::to_string(&planted).unwrap();
        fs::write(elsewhere.path().join(planted.file_name()), &text).unwrap();
        let link = dir.path().join(DIR);
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        let listed = list(dir.path(), None);
        assert!(listed.owed.is_empty(), "{:?}", listed.owed);
        assert_eq!(listed.damaged.len(), 1, "{:?}", listed.damaged);
        assert_eq!(listed.damaged[0].path, link);
        assert!(
            listed.damaged[0].why.contains("symbolic link"),
            "{:?}",
            listed.damaged
        );
        let e = ds.owe(&git_owed(&d, "bbb")).unwrap_err();
        let said = crate::error::chain(&e);
        assert!(said.contains(&link.display().to_string()), "{said}");
        assert!(said.contains("symbolic link"), "{said}");
        assert!(ds.settle_target(&planted.push).is_err());
        let change = StateRecord::new(
            &planted.snapshot,
            "2026-12-05T10:00:01.000Z",
            super::super::State::Committed,
        );
        assert!(ds.settle(&planted, &change).is_err());
        // Nothing was written or removed there.
        let there: Vec<_> = fs::read_dir(elsewhere.path()).unwrap().flatten().collect();
        assert_eq!(there.len(), 1);
        assert_eq!(fs::read_to_string(there[0].path()).unwrap(), text);
        // A file in its place is named as damaged too, and not written into.
        fs::remove_file(&link).unwrap();
        fs::write(&link, "").unwrap();
        let listed = list(dir.path(), None);
        assert_eq!(listed.damaged.len(), 1, "{:?}", listed.damaged);
        assert!(
            listed.damaged[0].why.contains("not a directory"),
            "{:?}",
            listed.damaged
        );
        assert!(ds.owe(&git_owed(&d, "ccc")).is_err());
        // A store root that is a file has no outbox: the store's own error says why.
        let listed = list(&link, None);
        assert!(
            listed.owed.is_empty() && listed.damaged.is_empty(),
            "{listed:?}"
        );
    }

    #[test]
    fn unusable_files_are_named_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(DIR);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("git-0123456789abcdef-d.json"), "{").unwrap();
        std::fs::write(out.join("oci-0123456789abcdef-d.json"), r#"{"version":7}"#).unwrap();
        std::fs::write(out.join("README"), "x").unwrap();
        let listed = list(dir.path(), None);
        assert!(listed.owed.is_empty());
        let text: Vec<String> = listed.damaged.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].contains("README") && text[0].contains("not an outbox file name"));
        assert!(text[1].contains("git-0123456789abcdef-d.json: damaged"));
        assert!(text[2].contains("version 7"), "{text:?}");
        // A copy under another target's name is not taken for that target.
        let d = Domain::new("d").unwrap();
        let owed = git_owed(&d, "aaa");
        let wrong = out.join("git-fedcba9876543210-d.json");
        std::fs::write(&wrong, serde_json::to_string(&owed).unwrap()).unwrap();
        let listed = list(dir.path(), Some(&d));
        assert!(
            listed
                .damaged
                .iter()
                .any(|x| x.path == wrong && x.why.contains("file name"))
        );
    }
}
