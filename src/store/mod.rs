//! The local snapshot store: every published inventory, its state, and its history.
//!
//! Layout under the store root, one folder per domain:
//!
//! ```text
//! <store>/<domain>/segments/CURRENT   the live generation of the journal
//! <store>/<domain>/segments/<g>/<n>.log  its segments: one checksummed JSON record per line
//! <store>/<domain>/journal           version 1 journal (read as it is, migrated on the next write)
//! <store>/<domain>/objects/<sha>.json content-addressed CR (renderedAt removed) and CRD
//! <store>/<domain>/lock              flock()ed while the journal is written
//! <store>/<domain>/lock.holder       who holds it (pid, host, command, since)
//! ```
//!
//! Snapshots are ordered by (recorded time, seq, id) — never by line position — and
//! carry a delivery state per channel (cluster, Git); see [`segments`] for the files.
//!
//! A snapshot is a `snapshot` record naming its objects plus the `renderedAt` that turns
//! the shared CR object back into the exact object that was (or will be) applied; so
//! identical inventories share objects while every publish keeps its own record. State
//! changes (`pending` → `applied` / `committed` / `superseded`) are further records; the
//! journal is never rewritten. Each line is `<sha256 of the JSON> <JSON>\n`: a record
//! whose checksum fails is reported with its path and line and skipped; an incomplete
//! last line (a crash mid-append) is ignored on read and cut off by the next append,
//! which notes it in a `repair` record.
//!
//! This is the only module that writes local state. Whole files go through
//! [`files::write_atomic`]; the journal is appended and fsynced under the lock. The line
//! codec and the journal readers are [`journal`]; `snapshots gc` and `verify` are
//! [`gc`]; export archives are [`export`].
#![allow(clippy::disallowed_methods)] // the store: the one owner of its files

pub mod changes;
pub mod export;
mod fold;
pub mod gc;
pub mod import;
pub mod journal;
pub mod outbox;
pub mod queue;
mod record;
pub mod scan;
pub mod segments;
mod summary;

use record::FORMAT;
pub use record::{
    Damage, EventRecord, HeadRecord, Journal, Record, RepairRecord, Snapshot, SnapshotId,
    SnapshotRecord, State, StateRecord, SupersedeRecord, TargetRecord,
};
/// At most this many snapshots a delivery supersedes are written one `superseded` line
/// each (what every clinv reads); more are one `supersede` record (issue 48: a backlog
/// of any size costs one line).
pub const SUPERSEDE_LINES: usize = 64;

/// [`SUPERSEDE_LINES`], or fewer when `CLINV_SUPERSEDE_LINES` says so (a whole number up
/// to it: the model tests write the `supersede` record of every delivery with `0`);
/// anything else is the default.
pub fn supersede_lines() -> usize {
    crate::util::env::var("CLINV_SUPERSEDE_LINES")
        .and_then(|t| t.parse::<usize>().ok())
        .map_or(SUPERSEDE_LINES, |n| n.min(SUPERSEDE_LINES))
}
use segments::{Layout, create_private_dir, open_private};

use crate::delivery::Target;
use crate::domain::Domain;
use crate::error::{Damaged, Error, ReferenceError, Result, SnapshotError};
use crate::history::refs::SnapshotRef;
use crate::inventory::ClusterInventory;
use crate::util::hash::hex_sha256;
use crate::util::{files, lock};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a command waits for another clinv process to release a domain, unless
/// `CLINV_LOCK_TIMEOUT` says otherwise ([`lock_timeout`]).
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest wait `CLINV_LOCK_TIMEOUT` may ask for: an hour.
const MAX_LOCK_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long a command waits for the domain lock: `CLINV_LOCK_TIMEOUT` seconds (a decimal
/// such as `30` or `0.5`, at most 3600; `0` tries once) when it is set and not empty, else
/// [`DEFAULT_LOCK_TIMEOUT`].
///
/// An unattended loop may want longer; a test a short one, so that no test waits out the
/// default.
///
/// # Errors
/// [`Error::InvalidEnv`] naming the variable when its value is no such number (the
/// value, a number or garbage and never a secret, is shown).
pub fn lock_timeout() -> Result<Duration> {
    let Some(text) = crate::util::env::var("CLINV_LOCK_TIMEOUT").filter(|t| !t.is_empty()) else {
        return Ok(DEFAULT_LOCK_TIMEOUT);
    };
    parse_seconds(&text, MAX_LOCK_TIMEOUT).ok_or_else(|| Error::InvalidEnv {
        name: "CLINV_LOCK_TIMEOUT",
        message: format!(
            "'{}' is not a number of seconds from 0 to {} (such as 30 or 0.5)",
            text.escape_debug(),
            MAX_LOCK_TIMEOUT.as_secs()
        ),
    })
}

/// `text` as seconds: digits with an optional decimal part, at most `max`.
fn parse_seconds(text: &str, max: Duration) -> Option<Duration> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let seconds = Duration::try_from_secs_f64(text.parse::<f64>().ok()?).ok()?;
    (seconds <= max).then_some(seconds)
}
/// Largest stored object read back (and imported).
pub const MAX_OBJECT: u64 = 8 << 20;
/// Largest journal entry of an export archive (exports write 4 MiB entries; version 1
/// archives one entry of up to this).
///
/// The store's own journal has no size limit: it is read streaming, one line (at most
/// [`journal::MAX_LINE`]) at a time.
pub const MAX_JOURNAL: u64 = 64 << 20;

/// Which snapshots a listing shows: never deleted ones; those in `state` (either
/// channel's), recorded at or after `since` (Unix seconds); at most `limit` of a domain,
/// the newest.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    pub state: Option<State>,
    pub since: Option<i64>,
    pub limit: Option<usize>,
}

impl Shown {
    fn keeps(&self, r: scan::RowRef<'_>) -> bool {
        r.state() != State::Deleted
            && self
                .state
                .is_none_or(|st| r.state() == st || r.cluster_state() == Some(st))
            && self
                .since
                .is_none_or(|since| r.at_second().is_some_and(|at| at >= since))
    }
}

/// A snapshot's id in one listing of a [`Listed`].
type RowKey = Box<str>;

/// Compact listings (each one domain's, newest first) and the order their rows are shown in.
///
/// As they are, or sorted across domains (`snapshots list --sort-by`) by a list of
/// positions — 8 bytes a row beside the listings' 60.
#[derive(Default)]
pub struct Listed {
    pub listings: Vec<scan::Listing>,
    sorted: Option<Vec<(u32, u32)>>,
}

impl From<Vec<scan::Listing>> for Listed {
    fn from(listings: Vec<scan::Listing>) -> Listed {
        Listed {
            listings,
            sorted: None,
        }
    }
}

impl Listed {
    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.listings.iter().map(scan::Listing::len).sum()
    }

    /// Whether no listing has a row.
    pub fn is_empty(&self) -> bool {
        self.listings.iter().all(scan::Listing::is_empty)
    }

    /// Each row in order, with the index of its listing: (listing, row).
    pub fn positions(&self) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        match &self.sorted {
            Some(order) => Box::new(order.iter().map(|&(l, r)| (l as usize, r as usize))),
            None => Box::new(
                (self.listings.iter().enumerate())
                    .flat_map(|(l, x)| (0..x.len()).map(move |r| (l, r))),
            ),
        }
    }

    /// Each row in order, with the index of its listing.
    pub fn rows(&self) -> impl Iterator<Item = (usize, scan::RowRef<'_>)> + '_ {
        self.positions()
            .filter_map(|(l, r)| Some((l, self.listings[l].row(r)?)))
    }

    /// Sorts the rows across listings by `compare`, stably: rows it holds equal keep
    /// the listings' order (grouped by domain, each newest first).
    pub fn sort_by(
        &mut self,
        compare: impl Fn(scan::RowRef<'_>, scan::RowRef<'_>) -> std::cmp::Ordering,
    ) {
        let mut order: Vec<(u32, u32)> = self
            .positions()
            .map(|(l, r)| (l as u32, r as u32))
            .collect();
        let row = |&(l, r): &(u32, u32)| self.listings[l as usize].row(r as usize);
        order.sort_by(|a, b| match (row(a), row(b)) {
            (Some(a), Some(b)) => compare(a, b),
            _ => std::cmp::Ordering::Equal,
        });
        self.sorted = Some(order);
    }
}

/// Rows [`Store::each_row`] builds whole at a time.
///
/// About 2.7 KB each while built, so a window stays near 11 MB beside the compact listing
/// (≈ 60 bytes a row); each window is one more read of the journal (its lines only scanned
/// for their id).
pub const LISTED_WINDOW: usize = 4_096;

/// The store root.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// One domain's folder.
#[derive(Debug, Clone)]
pub struct DomainStore {
    pub domain: Domain,
    dir: PathBuf,
}

impl Store {
    pub fn at(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// `explicit` (`--snapshots`, `CLINV_SNAPSHOTS`), else `<project root>/snapshots`.
    pub fn of_project(explicit: Option<&Path>, project_root: &Path) -> Store {
        Store::at(explicit.map_or_else(|| project_root.join("snapshots"), Path::to_path_buf))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of `domain` (a validated domain name, so it is one path component).
    pub fn domain(&self, domain: &Domain) -> DomainStore {
        DomainStore {
            domain: domain.clone(),
            dir: self.root.join(domain),
        }
    }

    /// `domains` (checked when they were made), or without them every domain that has a
    /// journal.
    pub fn select(&self, domains: Option<&[Domain]>) -> Vec<Domain> {
        match domains {
            Some(d) => d.to_vec(),
            None => self.domains(),
        }
    }

    /// The snapshots of `domain` (or of all), newest first, deleted ones aside and
    /// filtered by `state`; with the damaged journal lines that were skipped. Whole
    /// journals in memory: the reference the streamed listings are tested against.
    ///
    /// # Errors
    /// An invalid domain or an unreadable journal.
    #[cfg(test)]
    pub fn list(
        &self,
        domains: Option<&[Domain]>,
        state: Option<State>,
    ) -> Result<(Vec<Snapshot>, Vec<Damage>)> {
        let (mut rows, mut damage) = (Vec::new(), Vec::new());
        for d in self.select(domains) {
            let journal = self.domain(&d).read()?;
            damage.extend(journal.damage);
            // In place: a journal's snapshots are most of the memory of a listing.
            let mut snapshots = journal.snapshots;
            snapshots.retain(|s| {
                s.state != State::Deleted
                    && state.is_none_or(|st| s.state == st || s.cluster_state == Some(st))
            });
            snapshots.reverse();
            if rows.is_empty() {
                rows = snapshots;
            } else {
                rows.append(&mut snapshots);
            }
        }
        Ok((rows, damage))
    }

    /// [`Store::list`] streamed, for `snapshots list -o json|yaml`: each domain's rows
    /// (filtered by `shown`, newest first, as the table lists them) handed to `each`
    /// one at a time, with every field but the history (see [`Store::each_row`]): memory
    /// is one domain's compact listing plus one window. Returns the damaged lines that
    /// were skipped.
    ///
    /// # Errors
    /// An invalid domain, an unreadable journal, or what `each` returns.
    pub fn each_listed(
        &self,
        domains: Option<&[Domain]>,
        shown: &Shown,
        mut each: impl FnMut(Snapshot) -> Result<()>,
    ) -> Result<Vec<Damage>> {
        let mut damage = Vec::new();
        for d in self.select(domains) {
            let mut listing = self.domain(&d).listing_shown(shown)?;
            damage.append(&mut listing.damage);
            let listed = Listed::from(vec![listing]);
            self.each_row(&listed, &mut each)?;
        }
        Ok(damage)
    }

    /// The whole rows of `listed`, in its order, handed to `each` one at a time with
    /// every field but the history. The compact listings say which rows and in what
    /// order; the records are built [`LISTED_WINDOW`] rows at a time, one read of each
    /// domain's journal per window that holds its rows — memory is the listings plus one
    /// window whatever the history's length; time grows with the windows.
    ///
    /// # Errors
    /// An unreadable journal, or what `each` returns.
    pub fn each_row(
        &self,
        listed: &Listed,
        mut each: impl FnMut(Snapshot) -> Result<()>,
    ) -> Result<()> {
        let mut order = listed.positions().peekable();
        let mut window: Vec<(usize, RowKey)> = Vec::with_capacity(LISTED_WINDOW);
        while order.peek().is_some() {
            window.clear();
            window.extend(order.by_ref().take(LISTED_WINDOW).filter_map(|(l, r)| {
                let id = listed.listings[l].row(r)?.id();
                Some((l, Box::from(&*id)))
            }));
            let mut found = self.window_rows(listed, &window)?;
            for key in &window {
                if let Some(mut snap) = found.remove(key) {
                    snap.history = Vec::new();
                    each(snap)?;
                }
            }
        }
        Ok(())
    }

    /// The snapshots `window` names, read whole: one read of each domain's journal.
    fn window_rows(
        &self,
        listed: &Listed,
        window: &[(usize, RowKey)],
    ) -> Result<std::collections::HashMap<(usize, RowKey), Snapshot>> {
        let mut domains: Vec<usize> = window.iter().map(|(l, _)| *l).collect();
        domains.sort_unstable();
        domains.dedup();
        let mut found = std::collections::HashMap::with_capacity(window.len());
        for l in domains {
            let wanted: std::collections::HashSet<&str> = window
                .iter()
                .filter(|(w, _)| *w == l)
                .map(|(_, id)| &**id)
                .collect();
            let ds = self.domain(&Domain::parse(&listed.listings[l].domain)?);
            let mut only = journal::Only::new(&wanted);
            ds.layout()
                .read(&mut only)
                .map_err(|(p, e)| Error::io(p, e))?;
            let journal = only.finish(&ds.layout().segments_dir());
            for s in journal.snapshots {
                found.insert((l, Box::from(s.record.id.as_str())), s);
            }
        }
        Ok(found)
    }

    /// [`Store::list`] compactly, for the table of `snapshots list`: one [`scan::Listing`]
    /// per domain (sorted by name), each newest first, deleted snapshots aside and
    /// filtered by `shown`; with the damaged journal lines that were skipped.
    ///
    /// # Errors
    /// An invalid domain or an unreadable journal.
    pub fn listings(
        &self,
        domains: Option<&[Domain]>,
        shown: &Shown,
    ) -> Result<(Vec<scan::Listing>, Vec<Damage>)> {
        let (mut out, mut damage) = (Vec::new(), Vec::new());
        for d in self.select(domains) {
            let mut listing = self.domain(&d).listing_shown(shown)?;
            damage.append(&mut listing.damage);
            out.push(listing);
        }
        Ok((out, damage))
    }

    /// Finds a snapshot by reference in one domain or, without `domain`, in any, and
    /// reads its inventory.
    ///
    /// # Errors
    /// A malformed reference ([`ReferenceError::BadSnapshot`]), no match, matches in
    /// several domains, or
    /// a missing or damaged object.
    pub fn find(
        &self,
        domain: Option<&Domain>,
        reference: &str,
    ) -> Result<(Snapshot, ClusterInventory)> {
        let selector = parse_ref(reference)?;
        let mut found = Vec::new();
        let mut last_err = None;
        for d in self.select(domain.map(std::slice::from_ref)) {
            let ds = self.domain(&d);
            match ds.resolve(&selector) {
                Ok(r) => found.push((ds.clone(), r.snapshot)),
                Err(e @ Error::Reference(_)) => return Err(e),
                Err(e) => last_err = Some(e),
            }
        }
        match found.len() {
            1 => {
                let (ds, snap) = found.remove(0);
                let inventory = ds.inventory(&snap.record)?;
                Ok((snap, inventory))
            }
            0 => {
                Err(last_err
                    .unwrap_or_else(|| SnapshotError::StoreEmpty(reference.to_string()).into()))
            }
            _ => Err(SnapshotError::SeveralDomains(reference.to_string()).into()),
        }
    }

    /// Takes the store's delivery-loop lock (`<store>/.watch.lock`) without waiting: one
    /// `replay --watch` per store. The holder's pid and start are noted beside it.
    ///
    /// # Errors
    /// [`Error::Watched`] naming the holder; I/O errors.
    pub fn watch_lock(&self) -> Result<Lock> {
        create_private_dir(&self.root).map_err(|e| Error::io(&self.root, e))?;
        let path = self.root.join(".watch.lock");
        let note = self.root.join(".watch.holder");
        let file = match crate::util::lock::open_exclusive(&path, Duration::ZERO) {
            Ok(f) => f,
            Err(crate::util::lock::Wait::TimedOut) => {
                let holder = fs::read_to_string(&note).unwrap_or_default();
                return Err(Error::Watched {
                    store: self.root.clone(),
                    holder: holder.trim().to_string(),
                });
            }
            Err(crate::util::lock::Wait::Io(e)) => return Err(Error::io(&path, e)),
        };
        let text = format!("pid {} since {}\n", std::process::id(), now_millis());
        crate::util::files::write_atomic(&note, text.as_bytes(), 0o600)
            .map_err(|e| Error::io(&note, e))?;
        Ok(Lock {
            file,
            path: Some(path),
        })
    }

    /// Domains that have a journal, sorted.
    pub fn domains(&self) -> Vec<Domain> {
        let mut out: Vec<Domain> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| Layout::new(&e.path()).exists())
            .filter_map(|e| e.file_name().to_str().and_then(Domain::new))
            .collect();
        out.sort();
        out
    }
}

/// A held domain lock; released on drop (and by the kernel if the process dies).
pub struct Lock {
    file: File,
    /// Where the lock file is, for [`Lock::still_held`] (the loop's lock).
    path: Option<PathBuf>,
}

impl Lock {
    /// Whether the lock still guards its path: the file there is the one held. A store
    /// removed (or restored from a copy) under its holder has a new lock file, which
    /// another process can take.
    pub fn still_held(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Some(path) = &self.path else {
            return true;
        };
        match (self.file.metadata(), fs::symlink_metadata(path)) {
            (Ok(held), Ok(there)) => held.dev() == there.dev() && held.ino() == there.ino(),
            _ => false,
        }
    }
}

impl DomainStore {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The domains of the store this domain belongs to (tests).
    #[cfg(test)]
    fn domains_of_root(&self) -> Vec<Domain> {
        Store::at(self.dir.parent().unwrap_or(&self.dir)).domains()
    }

    fn layout(&self) -> Layout {
        Layout::new(&self.dir)
    }

    fn object_path(&self, id: &str) -> PathBuf {
        self.dir.join("objects").join(format!("{id}.json"))
    }

    /// Refuses a domain or objects folder that is a symbolic link: the store never
    /// reads or writes through a link, which could point anywhere.
    fn check_dirs(&self) -> Result<()> {
        let mut dirs = vec![
            self.dir.clone(),
            self.dir.join("objects"),
            self.dir.join("segments"),
        ];
        if let Ok(Some(g)) = self.layout().current() {
            dirs.push(self.dir.join("segments").join(g.to_string()));
        }
        for dir in dirs {
            if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Error::InvalidFile {
                    path: dir,
                    message: "is a symbolic link; clinv does not follow links inside its store"
                        .into(),
                });
            }
        }
        Ok(())
    }

    /// Refuses to write into a domain folder another user owns (like git's
    /// `safe.directory`): files root created there would lock its owner out, and another
    /// user's history is not ours to change. Reading it is allowed. The store root may
    /// belong to anyone who lets us write (a shared or group-owned volume).
    #[cfg(unix)]
    fn check_owner(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        if let Ok(meta) = fs::symlink_metadata(&self.dir)
            && meta.uid() != me
        {
            return Err(Error::InvalidFile {
                path: self.dir.clone(),
                message: format!(
                    "owned by uid {}, not by the current user (uid {me}); clinv does not write into another user's snapshot store (run it as the owner, or choose another --snapshots)",
                    meta.uid()
                ),
            });
        }
        Ok(())
    }

    #[cfg(not(unix))]
    fn check_owner(&self) -> Result<()> {
        Ok(())
    }

    fn ensure_dirs(&self) -> Result<()> {
        self.check_dirs()?;
        self.check_owner()?;
        let root = self.dir.parent().unwrap_or(&self.dir);
        let new = !root.is_dir();
        if new {
            create_private_dir(root).map_err(|e| Error::io(root, e))?;
        }
        // The store is local state: a project-local one (<root>/snapshots) must never
        // reach the project's Git history, so it ignores itself, as Python's venv does.
        // A writer killed before its `.gitignore` landed left a store without one (and
        // its temporary file): the next writer mends it. A folder the user gave that has
        // none of clinv's making is left as it is.
        let ignore = root.join(".gitignore");
        let missing = new || fs::symlink_metadata(&ignore).is_err();
        if missing && (remove_dead_temporaries(root, ".gitignore") || new) {
            crate::util::files::write_atomic(&ignore, GITIGNORE.as_bytes(), 0o600)
                .map_err(|e| Error::io(&ignore, e))?;
        }
        for dir in [
            self.dir.parent().unwrap_or(&self.dir),
            &self.dir,
            &self.dir.join("objects"),
        ] {
            if !dir.is_dir() {
                create_private_dir(dir).map_err(|e| Error::io(dir, e))?;
            }
        }
        Ok(())
    }

    /// The error of a lock at `path` still held after `timeout`: how long was waited
    /// (and the variable that sets it), and the holder its note names.
    fn locked(&self, path: &Path, timeout: Duration) -> Error {
        let holder = fs::read_to_string(self.dir.join("lock.holder")).unwrap_or_default();
        Error::Locked {
            what: path.display().to_string(),
            holder: format!(
                "still locked after {}s (CLINV_LOCK_TIMEOUT) by {}",
                timeout.as_secs_f64(),
                holder.trim()
            ),
        }
    }

    /// Takes the domain lock, waiting up to `timeout`. The holder is recorded in
    /// `lock.holder`; a lock whose holder died is free (the kernel released it).
    ///
    /// # Errors
    /// Timeout (naming the holder) or I/O errors.
    pub fn lock(&self, command: &str, timeout: Duration) -> Result<Lock> {
        self.ensure_dirs()?;
        let path = self.dir.join("lock");
        let file = open_private(&path, false)
            .and_then(|f| files::regular(&f).map(|()| f))
            .map_err(|e| Error::io(&path, e))?;
        match lock::exclusive(&file, timeout) {
            Ok(()) => {}
            Err(lock::Wait::TimedOut) => return Err(self.locked(&path, timeout)),
            Err(lock::Wait::Io(e)) => return Err(Error::io(&path, e)),
        }
        let holder = serde_json::json!({
            "pid": std::process::id(),
            "host": hostname(),
            "command": command,
            "since": now_millis(),
        });
        // Informational only: a full disk must not stop the journal append for it.
        let _ = files::write_replace(
            &self.dir.join("lock.holder"),
            format!("{holder}\n").as_bytes(),
            0o600,
        );
        // Whoever takes the lock removes what dead writers left, whether it then writes
        // or not (a replay with nothing pending takes it too).
        self.layout().clean_up();
        Ok(Lock { file, path: None })
    }

    /// Takes the domain lock for a consistent read (`verify`, `export`) without writing
    /// anything: no holder note, no folder created. `None` when there is nothing to
    /// lock or the store is not ours to lock (another user's store is read as it is).
    ///
    /// # Errors
    /// Timeout (naming the holder).
    pub fn read_lock(&self, timeout: Duration) -> Result<Option<Lock>> {
        self.check_dirs()?;
        let path = self.dir.join("lock");
        if !self.dir.is_dir() || self.check_owner().is_err() {
            return Ok(None);
        }
        let Ok(file) = open_private(&path, false).and_then(|f| files::regular(&f).map(|()| f))
        else {
            return Ok(None);
        };
        match lock::exclusive(&file, timeout) {
            Ok(()) => Ok(Some(Lock { file, path: None })),
            Err(lock::Wait::TimedOut) => Err(self.locked(&path, timeout)),
            Err(lock::Wait::Io(_)) => Ok(None),
        }
    }

    /// Reads the journal (streaming, any size); damaged lines are reported, never fatal.
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn read(&self) -> Result<Journal> {
        self.check_dirs()?;
        let journal = segments::read_journal(&self.layout()).map_err(|(p, e)| Error::io(p, e))?;
        Ok(Journal {
            domain: self.domain.to_string(),
            ..journal
        })
    }

    /// Reads the journal compactly for a listing (`snapshots list`, `log`): every
    /// snapshot in the order (at, seq, id) with its state, damage reported as by
    /// [`DomainStore::read`].
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    ///
    /// The summaries of sealed segments are a cache: valid ones are used, and the missing
    /// or stale ones written when the domain is ours and its lock free at once (a reader
    /// never waits for them, and they never change an answer). So reading commands
    /// (`snapshots list`, `log`, `report`...) may write them; only a caller that promises
    /// no write at all reads with [`DomainStore::listing_read_only`].
    pub fn listing(&self) -> Result<scan::Listing> {
        let summaries = if self.check_owner().is_ok() {
            summary::Summaries::UseAndWrite
        } else {
            summary::Summaries::Use
        };
        self.listing_with(summaries)
    }

    /// [`DomainStore::listing`] without writing anything into the store — no summary,
    /// no lock file — for shell completion, which runs on every TAB and promises the
    /// user's store stays as it was (valid summaries are still used).
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn listing_read_only(&self) -> Result<scan::Listing> {
        self.listing_with(summary::Summaries::Use)
    }

    fn listing_with(&self, summaries: summary::Summaries) -> Result<scan::Listing> {
        self.check_dirs()?;
        let mut listing = summary::read(&self.layout(), summaries, || {
            self.read_lock(Duration::ZERO).ok().flatten()
        })
        .map_err(|(p, e)| Error::io(p, e))?;
        listing.domain = self.domain.to_string();
        Ok(listing)
    }

    /// The newest rows of the domain, read from the end of its history until they hold
    /// `want` snapshots that are not deleted, with how many rows come before them and the first live file read; `None`
    /// when the end cannot tell (see [`summary::read_tail`]). It writes no summaries.
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn listing_tail(&self, want: usize) -> Result<Option<summary::Tail>> {
        self.check_dirs()?;
        let tail = summary::read_tail(&self.layout(), want).map_err(|(p, e)| Error::io(p, e))?;
        Ok(tail.map(|(mut listing, before, from)| {
            listing.domain = self.domain.to_string();
            (listing, before, from)
        }))
    }

    /// The newest rows of the domain for a time window from `since`, read from the
    /// end of its history (see [`summary::read_tail_since`]); `None` when the end cannot
    /// tell. It writes no summaries.
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn listing_tail_since(&self, since: jiff::Timestamp) -> Result<Option<summary::Tail>> {
        self.check_dirs()?;
        let tail =
            summary::read_tail_since(&self.layout(), since).map_err(|(p, e)| Error::io(p, e))?;
        Ok(tail.map(|(mut listing, before, from)| {
            listing.domain = self.domain.to_string();
            (listing, before, from)
        }))
    }

    /// The rows `shown` asks for, newest first. With a limit, read from the newest end:
    /// a window of segments growing (four times each turn) until it holds that many
    /// shown rows, or the whole history when the end cannot tell (see
    /// [`DomainStore::listing_tail`]).
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn listing_shown(&self, shown: &Shown) -> Result<scan::Listing> {
        let mut want = shown.limit.unwrap_or(0).max(1);
        let mut listing = loop {
            let tail = match shown.limit {
                Some(_) => self.listing_tail(want)?,
                None => None,
            };
            let Some((mut tail, _, _)) = tail else {
                let mut all = self.listing()?;
                all.retain(|r| shown.keeps(r));
                break all;
            };
            tail.retain(|r| shown.keeps(r));
            if shown.limit.is_some_and(|n| tail.len() >= n) {
                break tail;
            }
            want = want.saturating_mul(4);
        };
        listing.reverse();
        if let Some(n) = shown.limit {
            listing.truncate(n);
        }
        Ok(listing)
    }

    /// The smallest window of the newest end (see [`DomainStore::listing_tail`]) for
    /// which `holds` is true, growing eight times each turn; `None` when only the whole
    /// history can tell.
    fn tail_where(&self, holds: impl Fn(&scan::Listing) -> bool) -> Result<Option<summary::Tail>> {
        let mut want = 64usize;
        loop {
            match self.listing_tail(want)? {
                Some(tail) if holds(&tail.0) => return Ok(Some(tail)),
                Some(_) => want = want.saturating_mul(8),
                None => return Ok(None),
            }
        }
    }

    /// Writes objects and appends a `snapshot` record for `cr`, queued for the cluster
    /// (`pending`).
    ///
    /// # Errors
    /// I/O failures; nothing is recorded then.
    pub fn record(
        &self,
        cr: &ClusterInventory,
        crd_json: &str,
        target: Option<&Target>,
    ) -> Result<SnapshotRecord> {
        self.record_for(cr, crd_json, target, true)
    }

    /// [`DomainStore::record`], choosing the channel: with `cluster` false the snapshot
    /// is recorded for Git only (`commit`) and never queued for the cluster.
    ///
    /// # Errors
    /// I/O failures; nothing is recorded then.
    pub fn record_for(
        &self,
        cr: &ClusterInventory,
        crd_json: &str,
        target: Option<&Target>,
        cluster: bool,
    ) -> Result<SnapshotRecord> {
        // Objects are written under the lock: an object that already exists may belong
        // only to deleted snapshots, and `gc` (which holds the lock) would remove it
        // between this check and the append, leaving the new record without it.
        let _lock = self.lock("record", lock_timeout()?)?;
        self.record_locked(cr, crd_json, target.map(TargetRecord::from), cluster)
    }

    /// [`DomainStore::record_for`] under the lock the caller holds.
    fn record_locked(
        &self,
        cr: &ClusterInventory,
        crd_json: &str,
        target: Option<TargetRecord>,
        cluster: bool,
    ) -> Result<SnapshotRecord> {
        let _critical = crate::util::signals::critical();
        let mut appender = self.appender()?;
        let cr_id = self.put_object(&cr_object(cr))?;
        let crd_id = self.put_object(crd_json)?;
        let (at, seq) = appender.stamp();
        let id = new_id(&at, &cr_id);
        let record = SnapshotRecord {
            v: FORMAT,
            id,
            at,
            seq: Some(seq),
            cluster,
            domain: self.domain.to_string(),
            rendered_at: cr.spec.rendered_at.clone(),
            spec_hash: cr.spec.spec_hash.clone(),
            lok8s_version: cr.spec.lok8s_version.clone(),
            tool: format!("clinv {}", env!("CARGO_PKG_VERSION")),
            cr: cr_id,
            crd: crd_id,
            target,
            host: record_host(),
        };
        appender.push(Record::Snapshot(record.clone()));
        appender.write(self)?;
        Ok(record)
    }

    /// [`DomainStore::record`], unless the domain's newest snapshot holds the same
    /// inventory (apart from `renderedAt`: the same CR and CRD objects) for the same
    /// target: then the publish is recorded as an event on that snapshot (no new step in
    /// the history) and that snapshot is returned, with `true`.
    ///
    /// # Errors
    /// I/O failures; nothing is recorded then.
    pub fn record_or_fold(
        &self,
        cr: &ClusterInventory,
        crd_json: &str,
        target: Option<&Target>,
    ) -> Result<(SnapshotRecord, bool)> {
        let lock = self.lock("record", lock_timeout()?)?;
        let cr_id = hex_sha256(cr_object(cr).as_bytes());
        let crd_id = hex_sha256(crd_json.as_bytes());
        let target = target.map(TargetRecord::from);
        let same = self
            .newest()?
            .filter(|s| s.cluster && s.cr == cr_id && s.crd == crd_id && s.target == target);
        let Some(record) = same else {
            let record = self.record_locked(cr, crd_json, target, true)?;
            drop(lock);
            return Ok((record, false));
        };
        let _critical = crate::util::signals::critical();
        let mut appender = self.appender()?;
        let (at, seq) = appender.stamp();
        appender.push(Record::Event(EventRecord {
            v: FORMAT,
            id: record.id.clone(),
            at,
            seq: Some(seq),
            event: "published".into(),
            rendered_at: cr.spec.rendered_at.clone(),
            tool: format!("clinv {}", env!("CARGO_PKG_VERSION")),
        }));
        appender.write(self)?;
        Ok((record, true))
    }

    /// The newest snapshot (not deleted), as [`Journal::newest_first`] gives it: from
    /// the end of the live generation when that can tell, else from the whole journal.
    /// So deciding whether a publish folds does not grow with history.
    ///
    /// # Errors
    /// The journal cannot be read.
    fn newest(&self) -> Result<Option<SnapshotRecord>> {
        let layout = self.layout();
        if let Some(newest) = layout.newest_snapshot() {
            return Ok(newest);
        }
        // The tail cannot tell (a migrated version 1 history): the compact listing names
        // the newest snapshot, then its record is found by its id. Memory stays that of
        // the listing; it writes the summaries it lacks (the caller holds the lock), so
        // the next time reads them instead of the lines.
        let listing = summary::read(&layout, summary::Summaries::UseAndWrite, || Some(()))
            .map_err(|(p, e)| Error::io(p, e))?;
        let Some(id) = listing
            .rows()
            .rev()
            .find(|r| r.state() != State::Deleted)
            .map(|r| r.id().to_string())
        else {
            return Ok(None);
        };
        drop(listing);
        layout.find_snapshot(&id).map_err(|(p, e)| Error::io(p, e))
    }

    /// [`DomainStore::newest`] when the end of the live generation can tell (a version 2
    /// journal), without reading the history; `None` when it cannot.
    pub fn newest_from_tail(&self) -> Option<Option<SnapshotRecord>> {
        self.layout().newest_snapshot()
    }

    /// The newest snapshot recorded at or before `until` (what `@DATE` names), from the
    /// end of the live generation: the cost is the records after it, not the history;
    /// `None` when the end cannot tell ([`segments::Layout::newest_snapshot_where`]).
    pub fn newest_at_from_tail(&self, until: jiff::Timestamp) -> Option<Option<SnapshotRecord>> {
        self.layout().newest_snapshot_where(|s| {
            crate::history::audit::parse_bound(&s.at, false).is_some_and(|t| t <= until)
        })
    }

    /// The newest snapshot, whether it waits for the cluster, and then the snapshot
    /// applied last, from the end of the live generation ([`segments::Layout::newest_queue`]);
    /// `None` when the end cannot tell.
    pub fn newest_queue(&self) -> Option<segments::Queue> {
        self.layout().newest_queue()
    }

    /// For Git only (`commit` of the project as it is now): the domain's newest snapshot
    /// when it holds the same inventory (apart from `renderedAt`: the same CR and CRD
    /// objects, whichever channel and target it was recorded for), with `true`; else a
    /// new snapshot recorded with `cluster: false` (never queued for the cluster).
    ///
    /// # Errors
    /// I/O failures; nothing is recorded then.
    pub fn record_or_fold_for_git(
        &self,
        cr: &ClusterInventory,
        crd_json: &str,
    ) -> Result<(SnapshotRecord, bool)> {
        let _lock = self.lock("record", lock_timeout()?)?;
        let cr_id = hex_sha256(cr_object(cr).as_bytes());
        let crd_id = hex_sha256(crd_json.as_bytes());
        let same = self.newest()?.filter(|s| s.cr == cr_id && s.crd == crd_id);
        match same {
            Some(record) => Ok((record, true)),
            None => Ok((self.record_locked(cr, crd_json, None, false)?, false)),
        }
    }

    /// Appends state changes (one fsync for all of them).
    ///
    /// # Errors
    /// I/O failures.
    pub fn set_states(&self, changes: &[StateRecord]) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let _lock = self.lock("state", lock_timeout()?)?;
        self.append_states(changes)
    }

    /// Appends state changes; the caller holds the lock. Each is stamped with the
    /// domain's next `seq` and a time no earlier than its newest record.
    ///
    /// # Errors
    /// I/O failures.
    pub fn append_states(&self, changes: &[StateRecord]) -> Result<()> {
        self.append_states_then(changes, None)
    }

    /// [`DomainStore::append_states`], then `supersede` (stamped the same way), in one
    /// write: a delivery and what it supersedes land together or not at all.
    ///
    /// # Errors
    /// I/O failures.
    pub fn append_states_then(
        &self,
        changes: &[StateRecord],
        supersede: Option<SupersedeRecord>,
    ) -> Result<()> {
        if changes.is_empty() && supersede.is_none() {
            return Ok(());
        }
        let _critical = crate::util::signals::critical();
        let mut appender = self.appender()?;
        for change in changes {
            let (at, seq) = appender.stamp_after(&change.at);
            appender.push(Record::State(StateRecord {
                v: FORMAT,
                at,
                seq: Some(seq),
                ..change.clone()
            }));
        }
        if let Some(mark) = supersede {
            let (at, seq) = appender.stamp_after(&mark.at);
            appender.push(Record::Supersede(SupersedeRecord {
                v: FORMAT,
                at,
                seq: Some(seq),
                ..mark
            }));
        }
        appender.write(self)
    }

    /// Starts an append under the lock the caller holds (whose taking removed what dead
    /// writers left): migrates a version 1 journal (and then removes it), cuts a torn
    /// tail, and finds where the history stands (from the active segment's last record;
    /// the whole journal only when that does not verify).
    fn appender(&self) -> Result<Appender> {
        self.ensure_dirs()?;
        let layout = self.layout();
        let segdir = layout.segments_dir();
        if layout
            .current()
            .map_err(|e| Error::io(&segdir, e))?
            .is_none()
            && layout.v1_journal().exists()
        {
            let _critical = crate::util::signals::critical();
            self.migrate_ordered()?;
        }
        let now = now_millis();
        let generation = layout.ensure_v2(&now).map_err(|e| Error::io(&segdir, e))?;
        if layout.v1_journal().exists() {
            // Migrated just now: the version 1 journal goes.
            layout.clean_up();
        }
        let torn = layout
            .repair(generation)
            .map_err(|e| Error::io(&segdir, e))?;
        let head = match layout.tail_head(generation) {
            Some(h) => h,
            // Damage at the end: where the history stands, from every line (constant
            // memory: only the head is kept).
            None => {
                let mut builder = journal::Builder::head_only();
                layout
                    .read(&mut builder)
                    .map_err(|(p, e)| Error::io(p, e))?;
                builder.head().unwrap_or((now.clone(), 0))
            }
        };
        let mut appender = Appender {
            generation,
            head,
            now,
            records: Vec::new(),
        };
        if let Some(torn_bytes) = torn {
            let (at, seq) = appender.stamp();
            appender.push(Record::Repair(RepairRecord {
                v: FORMAT,
                at,
                seq: Some(seq),
                torn_bytes,
            }));
        }
        Ok(appender)
    }

    /// Writes an object file, staged in the domain folder: appends sweep that folder for
    /// what a dead writer left, and never list `objects/` (a file per distinct inventory).
    fn write_object(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        files::write_atomic_staged_in(&self.dir, path, bytes, 0o600).map_err(|e| Error::io(path, e))
    }

    /// Stores `text` under its sha256 unless it is already there.
    fn put_object(&self, text: &str) -> Result<String> {
        let id = hex_sha256(text.as_bytes());
        let path = self.object_path(&id);
        if !path.exists() {
            self.write_object(&path, text.as_bytes())?;
        }
        Ok(id)
    }

    /// Reads an object and checks its checksum.
    ///
    /// # Errors
    /// A missing object, or one whose content does not match its name (damage).
    pub fn object(&self, id: &str) -> Result<String> {
        let path = self.object_path(id);
        let bytes =
            files::read_bounded_nofollow(&path, MAX_OBJECT).map_err(|e| Error::io(&path, e))?;
        if hex_sha256(&bytes) != id {
            return Err(Error::InvalidFile {
                path,
                message: "damaged: content does not match its checksum".into(),
            });
        }
        String::from_utf8(bytes).map_err(|_| Error::InvalidFile {
            path,
            message: "damaged: not UTF-8".into(),
        })
    }

    /// The exact CR of a snapshot: its shared object plus its own `renderedAt`.
    ///
    /// # Errors
    /// A missing or damaged object.
    pub fn inventory(&self, snap: &SnapshotRecord) -> Result<ClusterInventory> {
        self.inventory_of(&snap.cr, &snap.rendered_at)
    }

    /// The inventory of CR object `cr` with `rendered_at` put back.
    ///
    /// # Errors
    /// A missing or damaged object.
    pub fn inventory_of(&self, cr: &str, rendered_at: &str) -> Result<ClusterInventory> {
        let text = self.object(cr)?;
        inventory_from_object(&text, rendered_at).map_err(|e| Error::InvalidFile {
            path: self.object_path(cr),
            message: format!("damaged: {}", crate::error::chain(&e)),
        })
    }

    /// The CRD JSON of a snapshot.
    ///
    /// # Errors
    /// A missing or damaged object.
    pub fn crd(&self, snap: &SnapshotRecord) -> Result<String> {
        self.object(&snap.crd)
    }

    /// Every object file name (sha) present.
    pub fn object_ids(&self) -> Vec<String> {
        fs::read_dir(self.dir.join("objects"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
            .collect()
    }

    /// Removes an object file (used by gc for objects no kept snapshot refers to).
    ///
    /// # Errors
    /// I/O failures other than "already gone".
    pub fn remove_object(&self, id: &str) -> Result<()> {
        let path = self.object_path(id);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
            _ => Ok(()),
        }
    }

    /// Writes an object read from an export after checking its checksum.
    ///
    /// # Errors
    /// A checksum mismatch or I/O failure.
    pub fn import_object(&self, id: &str, bytes: &[u8]) -> Result<bool> {
        if hex_sha256(bytes) != id {
            return Err(Damaged::Object(id.to_string()).into());
        }
        self.ensure_dirs()?;
        let path = self.object_path(id);
        if path.exists() {
            return Ok(false);
        }
        self.write_object(&path, bytes)?;
        Ok(true)
    }
}

/// Records stamped and waiting for one write.
struct Appender {
    generation: u64,
    head: (String, u64),
    now: String,
    records: Vec<Record>,
}

impl Appender {
    /// The next (at, seq): never before the newest record, `seq` one more.
    fn stamp(&mut self) -> (String, u64) {
        let now = self.now.clone();
        self.stamp_after(&now)
    }

    /// (`at`, or the newest recorded time when that is later — a clock stepped back a
    /// little — and the next `seq`). A newest time beyond the future tolerance is
    /// another clock's mistake, not a time: the record keeps `at` (one record's clock
    /// never moves another's), and the order still puts it after every record of its
    /// time by `seq`.
    fn stamp_after(&mut self, at: &str) -> (String, u64) {
        self.head.1 += 1;
        let far = beyond_tolerance(&self.head.0, jiff::Timestamp::now());
        if at > self.head.0.as_str() {
            self.head.0 = at.to_string();
        } else if far {
            return (at.to_string(), self.head.1);
        }
        self.head.clone()
    }

    fn push(&mut self, record: Record) {
        self.records.push(record);
    }

    fn write(self, store: &DomainStore) -> Result<()> {
        let text =
            journal::encode_all(&self.records).map_err(|e| Error::encode("a journal record", e))?;
        let layout = store.layout();
        layout
            .append(self.generation, text.as_bytes())
            .map_err(|e| Error::io(layout.segments_dir(), e))
    }
}

/// The CR with `renderedAt` removed: identical inventories share this object.
fn cr_object(cr: &ClusterInventory) -> String {
    let mut value = serde_json::to_value(cr).unwrap_or_default();
    if let Some(spec) = value.get_mut("spec").and_then(|s| s.as_object_mut()) {
        spec.remove("renderedAt");
    }
    value.to_string()
}

/// A stored CR object (the CR without `renderedAt`) with `rendered_at` put back, read
/// by the one reader every source uses ([`crate::inventory::parse::inventory_from_stored`]).
///
/// # Errors
/// The object is not the JSON of an inventory; the error names the field or line.
pub fn inventory_from_object(
    text: &str,
    rendered_at: &str,
) -> std::result::Result<ClusterInventory, crate::error::InventoryError> {
    crate::inventory::parse::inventory_from_stored(text, rendered_at)
}

/// A short unique id: time-ordered enough for humans, random enough for prefixes.
/// Digits of the ids clinv gives: a reference this long is a whole id.
const WHOLE_ID: usize = 12;

fn new_id(at: &str, cr: &str) -> SnapshotId {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!(
        "{at}{cr}{nanos}{}{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    SnapshotId::new(&hex_sha256(seed.as_bytes())[..WHOLE_ID])
}

/// UTC now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
/// Removes the temporary files of `name` in `dir` that a writer which is no longer
/// running left (`.NAME.tmp.PID.N`); a running writer's are its own. Whether there was
/// one.
fn remove_dead_temporaries(dir: &Path, name: &str) -> bool {
    let prefix = format!(".{name}.tmp.");
    let mut found = false;
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest.split('.').next().and_then(|p| p.parse::<i32>().ok());
        let dead = pid
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|pid| {
                rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
            });
        if dead {
            found = true;
            let _ = fs::remove_file(entry.path());
        }
    }
    found
}

/// The store root's `.gitignore`: everything in it.
const GITIGNORE: &str = "# clinv's snapshot store: local state, never committed\n*\n";

pub fn now_millis() -> String {
    crate::util::time::format_millis(jiff::Timestamp::now())
}

/// How far past this machine's clock a recorded time may be and still be taken as a time:
/// two machines' clocks and time zones mistaken for UTC differ by hours, never by a day.
///
/// A record beyond it is refused by `import`, and never sets the time of a record written
/// after it.
pub const FUTURE_TOLERANCE_HOURS: i64 = 24;

/// Whether the recorded time `at` lies more than [`FUTURE_TOLERANCE_HOURS`] after `now`
/// (a time that does not parse is compared as text, as the order compares it).
pub fn beyond_tolerance(at: &str, now: jiff::Timestamp) -> bool {
    let ceiling = now.as_second() + FUTURE_TOLERANCE_HOURS * 3600;
    match crate::util::time::parse_rfc3339(at) {
        Some(t) => t.as_second() > ceiling,
        None => jiff::Timestamp::from_second(ceiling)
            .is_ok_and(|c| at > crate::util::time::format_millis(c).as_str()),
    }
}

/// The host name a new snapshot record carries: the kernel's host name, when it is a
/// plausible one (a DNS name's characters, at most 253 of them); none otherwise.
pub(crate) fn record_host() -> Option<String> {
    let host = hostname();
    let plausible = host != "unknown"
        && !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    plausible.then_some(host)
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The row of `listing` that `reference` names.
///
/// The row of `listing` that `reference` names (deleted snapshots are never named):
/// `latest~N` counts from the newest, `@DATE` is the newest recorded at or before it, a
/// whole id names its snapshot, a shorter prefix of at least 4 hex digits must name
/// exactly one.
///
/// # Errors
/// Too few snapshots, none at the date, a malformed prefix, no or several matches.
pub fn resolve(listing: &scan::Listing, reference: &SnapshotRef) -> Result<usize> {
    let newest_first = || {
        (0..listing.len())
            .rev()
            .filter(|i| listing.row(*i).is_some_and(|r| r.state() != State::Deleted))
    };
    let prefix = match reference {
        SnapshotRef::Latest(n) => {
            return newest_first()
                .nth(*n as usize)
                .ok_or_else(|| SnapshotError::TooFew(reference.to_string()).into());
        }
        SnapshotRef::At(date) => {
            let now = jiff::Timestamp::now();
            let until =
                crate::history::audit::parse_query_bound(date, true, now).ok_or_else(|| {
                    ReferenceError::Malformed {
                        text: reference.to_string(),
                        why: "not a date or RFC 3339 time".into(),
                    }
                })?;
            let at = |i: usize| listing.row(i).map(|r| r.at().to_string());
            return newest_first()
                .find(|i| {
                    at(*i)
                        .and_then(|t| crate::history::audit::parse_bound(&t, false))
                        .is_some_and(|t| t <= until)
                })
                .ok_or_else(|| {
                    SnapshotError::NoneAt {
                        domain: listing.domain.clone(),
                        date: date.clone(),
                    }
                    .into()
                });
        }
        SnapshotRef::Id(prefix) => prefix,
    };
    if prefix.len() < 4 || !prefix.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ReferenceError::BadSnapshot {
            text: prefix.clone(),
            why: "an id or a unique prefix of at least 4 hex digits, latest, latest~N".into(),
        }
        .into());
    }
    let id = |i: usize| {
        listing
            .row(i)
            .map(|r| r.id().to_string())
            .unwrap_or_default()
    };
    let matches: Vec<usize> = newest_first()
        .filter(|i| id(*i).starts_with(prefix.as_str()))
        .collect();
    // A whole id names its snapshot, even when a longer one starts with it.
    if let Some(exact) = matches.iter().find(|i| id(**i) == *prefix) {
        return Ok(*exact);
    }
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(SnapshotError::NotFound(prefix.clone()).into()),
        many => Err(SnapshotError::Ambiguous {
            prefix: prefix.clone(),
            ids: many.iter().map(|i| id(*i)).collect(),
        }
        .into()),
    }
}

/// A snapshot a reference named, read whole (record, history, events).
#[derive(Debug)]
pub struct Resolved {
    pub snapshot: Snapshot,
    /// Its place in the domain's order, 1-based, as `clinv log` numbers it.
    pub revision: u64,
    /// Damaged lines of the domain's journal (skipped).
    pub damage: Vec<Damage>,
}

/// The lines of one snapshot (its record, state changes and events), for [`Builder`].
struct OneSnapshot<'a> {
    id: &'a str,
    builder: journal::Builder,
}

impl journal::Lines for OneSnapshot<'_> {
    fn record(&mut self, path: &Path, line_no: usize, record: Record, raw: &[u8]) {
        // A `supersede` record names no snapshot and may change this one.
        if matches!(record, Record::Supersede(_)) || record.id() == Some(self.id) {
            journal::Lines::record(&mut self.builder, path, line_no, record, raw);
        }
    }

    fn damage(&mut self, _path: &Path, _line_no: usize, _raw: &[u8], _what: String) {}

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

impl DomainStore {
    /// The snapshot `reference` names, in the memory of the compact listing: the
    /// listing says which, then one streaming pass folds its lines — the same fold as
    /// the full read, of one snapshot.
    ///
    /// # Errors
    /// An unreadable journal, or a reference that names nothing (see [`resolve`]).
    pub fn resolve(&self, reference: &SnapshotRef) -> Result<Resolved> {
        let tail = match reference {
            SnapshotRef::Latest(n) => self.listing_tail(*n as usize + 1)?,
            // The newest at or before a date, or a whole id: a window of the newest end
            // that holds it answers as the whole history would (rows before the window
            // are ordered before its own). Only a prefix needs every row (is it unique?).
            SnapshotRef::At(_) => self.tail_where(|l| resolve(l, reference).is_ok())?,
            SnapshotRef::Id(id) if id.len() >= WHOLE_ID => self.tail_where(|l| {
                l.rows()
                    .any(|r| r.state() != State::Deleted && &*r.id() == id.as_str())
            })?,
            SnapshotRef::Id(_) => None,
        };
        let (mut listing, before, from) = match tail {
            Some(tail) => tail,
            None => (self.listing()?, 0, 0),
        };
        let i = resolve(&listing, reference)?;
        let id = listing
            .row(i)
            .map(|r| r.id().to_string())
            .unwrap_or_default();
        let damage = std::mem::take(&mut listing.damage);
        drop(listing);
        let mut one = OneSnapshot {
            id: &id,
            builder: journal::Builder::default(),
        };
        let layout = self.layout();
        // Its lines are all in the files its row was listed from (a state change always
        // follows its snapshot's line).
        layout
            .read_from(from, &mut one)
            .map_err(|(p, e)| Error::io(p, e))?;
        let snapshot = one.builder.finish(&layout.segments_dir()).snapshots.pop();
        let snapshot = snapshot.ok_or_else(|| SnapshotError::NotFound(id.clone()))?;
        Ok(Resolved {
            snapshot,
            revision: before + i as u64 + 1,
            damage,
        })
    }
}

/// Parses a snapshot reference as `snapshots show` and `commit --snapshot` take it.
///
/// # Errors
/// [`ReferenceError::BadSnapshot`] for malformed `latest~N` or `@DATE`.
pub fn parse_ref(text: &str) -> Result<SnapshotRef> {
    SnapshotRef::parse(text).map_err(|e| {
        ReferenceError::BadSnapshot {
            text: text.to_string(),
            why: e.to_string(),
        }
        .into()
    })
}

/// The pending snapshots ordered before `id`, which a delivery of `id` supersedes. Later
/// ones (queued by another process while that apply ran) hold a newer inventory and are
/// still to be delivered.
pub fn pending_before<'a>(journal: &'a Journal, id: &SnapshotId) -> Vec<&'a Snapshot> {
    journal.pending_before(id)
}

/// A small inventory of domain `d` rendered at second `n % 60`: what the store's tests
/// (and its views') record.
#[cfg(test)]
pub(crate) fn sample_inventory(n: u32) -> ClusterInventory {
    let text = format!(
        r#"{{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{{"name":"cluster","labels":{{"lok8s.dev/domain":"d"}}}},"spec":{{"lok8sVersion":"1","kind":"lo","specHash":"{}","renderedAt":"2026-01-01T00:00:{:02}Z","addons":[]}}}}"#,
        "a".repeat(64),
        n % 60
    );
    crate::inventory::parse::inventory_from_text(&text).expect("a valid inventory")
}

#[cfg(test)]
mod tests {
    use super::gc::doomed;
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Write;

    /// The active segment of a store written from scratch.
    const SEGMENT: &str = "d/segments/1/000001.log";

    use super::sample_inventory as cr;

    /// An empty store in a temporary folder, and its domain `d`.
    fn fresh() -> (tempfile::TempDir, DomainStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
        (dir, store)
    }

    /// An empty store with `n` snapshots recorded, their ids oldest first.
    fn with_snapshots(n: u32) -> (tempfile::TempDir, DomainStore, Vec<SnapshotId>) {
        let (dir, store) = fresh();
        let record = |i| store.record(&cr(i), "{}", None).unwrap().id;
        let ids = (0..n).map(record).collect();
        (dir, store, ids)
    }

    /// One snapshot, read back after `changes`, one append each.
    fn after(changes: &[State]) -> Snapshot {
        let (_dir, store) = fresh();
        let a = store.record(&cr(1), "{}", None).unwrap();
        for &change in changes {
            store.set_states(&[state(&a.id, change)]).unwrap();
        }
        store.read().unwrap().snapshots.remove(0)
    }

    fn state(id: &str, s: State) -> StateRecord {
        StateRecord::new(&id.into(), &now_millis(), s)
    }

    #[test]
    fn state_names_are_the_serde_names() {
        for s in State::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }

    #[test]
    fn identical_inventories_share_objects_and_keep_their_own_records() {
        let (_dir, store) = fresh();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let b = store.record(&cr(2), "{}", None).unwrap();
        assert_eq!(a.cr, b.cr);
        assert_ne!(a.id, b.id);
        assert_eq!(store.object_ids().len(), 2, "one CR object, one CRD object");
        let j = store.read().unwrap();
        assert_eq!(j.snapshots.len(), 2);
        assert_eq!(store.inventory(&j.snapshots[1].record).unwrap(), cr(2));
        assert!(j.snapshots.iter().all(|s| s.state == State::Pending));
    }

    #[test]
    fn a_render_for_git_folds_into_an_identical_newest_snapshot_of_either_channel() {
        let (_dir, store) = fresh();
        // Nothing yet: recorded for Git only.
        let (a, folded) = store.record_or_fold_for_git(&cr(1), "{}").unwrap();
        assert!(!folded && !a.cluster);
        // The same inventory (renderedAt aside): that snapshot, nothing appended.
        let (again, folded) = store.record_or_fold_for_git(&cr(2), "{}").unwrap();
        assert!(folded);
        assert_eq!(again, a);
        // A published (cluster) snapshot is the newest: folded into it as it is.
        let published = store.record(&cr(3), "{}", None).unwrap();
        let (same, folded) = store.record_or_fold_for_git(&cr(4), "{}").unwrap();
        assert!(folded && same.cluster);
        assert_eq!(same.id, published.id);
        // Another CRD is another inventory; only the newest folds.
        let (b, folded) = store.record_or_fold_for_git(&cr(5), "{\"x\":1}").unwrap();
        assert!(!folded && !b.cluster);
        let (c, folded) = store.record_or_fold_for_git(&cr(6), "{}").unwrap();
        assert!(!folded && !c.cluster);
        let j = store.read().unwrap();
        assert_eq!(j.snapshots.len(), 4);
        assert!(j.snapshots.iter().all(|s| s.events.is_empty()));
    }

    /// What the end of the live generation says is the newest snapshot is what the full
    /// read says, after any sequence of publishes (folded or not, two targets), Git-only
    /// records, state changes, rewrites (gc, import), damaged and torn lines.
    #[test]
    fn the_newest_snapshot_from_the_tail_is_the_full_reads() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let targets = [
            None,
            Some(crate::delivery::Target {
                server: "https://a.example:6443".into(),
                context: None,
                kubeconfig: Vec::new(),
            }),
        ];
        let ops = proptest::collection::vec((0u8..8, 0u8..3, 0u8..2), 1..40);
        let mut runner = TestRunner::new(Config {
            cases: 48,
            ..Config::default()
        });
        runner
            .run(&ops, |ops| {
                let dir = tempfile::tempdir().unwrap();
                let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
                let seg = || store.layout().live_files().unwrap().pop();
                for (n, (op, crd, t)) in ops.into_iter().enumerate() {
                    let crd = format!("{{\"x\":{crd}}}");
                    let target = targets[usize::from(t)].as_ref();
                    match op {
                        0 | 1 => {
                            store.record_or_fold(&cr(n as u32), &crd, target).unwrap();
                        }
                        2 => {
                            store.record_or_fold_for_git(&cr(n as u32), &crd).unwrap();
                        }
                        3 => {
                            let j = store.read().unwrap();
                            if let Some(s) = j.snapshots.get(usize::from(t)) {
                                let st = [
                                    State::Applied,
                                    State::Superseded,
                                    State::Deleted,
                                    State::Pushed,
                                    State::Committed,
                                ];
                                let mut change = state(&s.record.id, st[n % 5]);
                                if change.state == State::Pushed {
                                    change.pushed = Some(format!("oci://r.example/x:{n}"));
                                }
                                store.set_states(&[change]).unwrap();
                            }
                        }
                        4 => {
                            store.gc(n % 3, false, true).unwrap();
                        }
                        5 | 6 => {
                            // A damaged line, or a torn tail: only when there is a file.
                            if let Some(path) = seg() {
                                let mut f = OpenOptions::new().append(true).open(path).unwrap();
                                let newest = store.read().unwrap().snapshots.last().cloned();
                                let text = match (op, newest) {
                                    // A newer snapshot whose checksum does not verify.
                                    (5, Some(s)) => {
                                        let mut r = s.record;
                                        r.id = format!("{n:012}").into();
                                        r.seq = r.seq.map(|q| q + 1000);
                                        let line = journal::encode(&Record::Snapshot(r)).unwrap();
                                        format!("{}{}", "0".repeat(64), &line[64..])
                                    }
                                    (5, None) => "damage\n".to_string(),
                                    _ => "0123 {\"kind\":\"snap".to_string(),
                                };
                                f.write_all(text.as_bytes()).unwrap();
                            }
                        }
                        _ => {
                            store.record(&cr(n as u32), &crd, target).unwrap();
                        }
                    }
                    let full = store.read().unwrap();
                    let full = full.newest_first().next().map(|s| s.record.clone());
                    if let Some(tail) = store.layout().newest_snapshot() {
                        prop_assert_eq!(tail, full.clone());
                    }
                    prop_assert_eq!(store.newest().unwrap(), full);
                    // And whether it waits, with the snapshot applied last then.
                    let journal = store.read().unwrap();
                    let newest = journal.newest_first().next();
                    if let Some(q) = store.layout().newest_queue() {
                        prop_assert_eq!(&q.newest, &newest.map(|s| s.record.clone()));
                        let pending = newest.is_some_and(|s| s.is_pending());
                        prop_assert_eq!(q.pending, pending);
                        let mut applied = journal.snapshots.iter().rev();
                        let applied = applied.find(|s| s.state == State::Applied);
                        let applied = applied.filter(|_| pending).map(|s| s.record.clone());
                        prop_assert_eq!(q.applied, applied);
                        // And where it went besides the cluster.
                        let history = newest.into_iter().flat_map(|s| &s.history);
                        prop_assert_eq!(q.channels, segments::Channels::of(history));
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    /// States are appended and the last one wins, but nothing brings a deleted snapshot
    /// back.
    #[test]
    fn the_last_state_wins_unless_the_snapshot_was_deleted() {
        let snap = after(&[State::Superseded, State::Applied]);
        assert_eq!((snap.state, snap.history.len()), (State::Applied, 2));
        // Found by scripts/soak: a commit that read a snapshot before gc deleted it (and
        // removed its objects) then marked it committed, so it was listed again without
        // its objects and `verify` failed.
        let snap = after(&[State::Deleted, State::Committed]);
        assert_eq!((snap.state, snap.history.len()), (State::Deleted, 2));
    }

    #[test]
    fn a_torn_tail_is_ignored_and_cut_by_the_next_append() {
        let (dir, store) = fresh();
        store.record(&cr(1), "{}", None).unwrap();
        let path = dir.path().join(SEGMENT);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"0123abcd {\"kind\":\"snap").unwrap();
        let j = store.read().unwrap();
        assert_eq!(j.snapshots.len(), 1);
        assert!(j.damage.is_empty());
        assert_eq!(j.torn_tail, 22);
        store.record(&cr(2), "{}", None).unwrap();
        let j = store.read().unwrap();
        assert_eq!((j.snapshots.len(), j.damage.len(), j.torn_tail), (2, 0, 0));
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"kind\":\"repair\"") && text.contains("\"tornBytes\":22"));
    }

    #[test]
    fn an_edited_record_is_reported_with_its_line_and_skipped() {
        let (dir, store) = fresh();
        store.record(&cr(1), "{}", None).unwrap();
        store.record(&cr(2), "{}", None).unwrap();
        let path = dir.path().join(SEGMENT);
        let text = fs::read_to_string(&path).unwrap().replacen(
            "\"lok8sVersion\":\"1\"",
            "\"lok8sVersion\":\"2\"",
            1,
        );
        fs::write(&path, text).unwrap();
        let j = store.read().unwrap();
        assert_eq!(j.snapshots.len(), 1);
        assert_eq!(j.damage.len(), 1);
        // Line 1 is the generation's head record.
        assert_eq!(j.damage[0].line, 2);
        assert!(
            j.damage[0]
                .to_string()
                .contains("000001.log:2: checksum mismatch")
        );
    }

    #[test]
    fn a_bit_flipped_object_is_detected() {
        let (dir, store) = fresh();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let path = dir.path().join(format!("d/objects/{}.json", a.cr));
        let mut bytes = fs::read(&path).unwrap();
        bytes[10] ^= 0x01;
        fs::write(&path, bytes).unwrap();
        let err = store.inventory(&a).unwrap_err().to_string();
        assert!(err.contains("damaged") && err.contains(&a.cr), "{err}");
    }

    #[test]
    fn references() {
        let (_dir, store, ids) = with_snapshots(3);
        let resolve = |text: &str| parse_ref(text).and_then(|r| store.resolve(&r));
        let id = |text: &str| resolve(text).unwrap().snapshot.record.id;
        assert_eq!(id("latest"), ids[2]);
        assert_eq!(resolve("latest").unwrap().revision, 3);
        assert_eq!(id("latest~2"), ids[0]);
        assert!(resolve("latest~3").is_err());
        assert!(matches!(resolve("latest~x"), Err(Error::Reference(_))));
        assert_eq!(id(&ids[1][..8]), ids[1]);
        // The one snapshot read whole is the full read's, history and all.
        store.set_states(&[state(&ids[1], State::Applied)]).unwrap();
        let full = store.read().unwrap();
        let one = resolve(&ids[1]).unwrap().snapshot;
        assert_eq!(format!("{one:?}"), format!("{:?}", full.snapshots[1]));
        assert!(matches!(resolve("../x"), Err(Error::Reference(_))));
        assert!(resolve("ffffffff").is_err());
    }

    #[test]
    fn gc_keeps_first_newest_last_applied_and_pending() {
        let (_dir, store, ids) = with_snapshots(8);
        let mut changes = vec![
            state(&ids[2], State::Applied),
            state(&ids[3], State::Applied),
        ];
        changes.extend([1, 4, 5, 6].map(|i| state(&ids[i], State::Superseded)));
        store.set_states(&changes).unwrap();
        let listing = store.listing().unwrap();
        let doomed = doomed(&listing, 2);
        let gone: Vec<String> = listing
            .rows()
            .zip(&doomed)
            .filter(|(_, d)| **d)
            .map(|(r, _)| r.id().to_string())
            .collect();
        // kept: 0 (first), 3 (last applied), 6 and 7 (newest 2); 7 is also pending.
        assert_eq!(
            gone,
            [&ids[1], &ids[2], &ids[4], &ids[5]].map(|id| id.to_string())
        );
    }

    #[test]
    fn an_apply_supersedes_only_snapshots_recorded_before_it() {
        // Found by scripts/soak: a publish whose apply finished after another process had
        // queued a newer snapshot marked that newer one superseded.
        let (_dir, store, ids) = with_snapshots(3);
        let j = store.read().unwrap();
        let older: Vec<&SnapshotId> = pending_before(&j, &ids[1])
            .iter()
            .map(|s| &s.record.id)
            .collect();
        assert_eq!(older, [&ids[0]]);
    }

    #[test]
    fn objects_are_written_under_the_lock() {
        // gc removes objects of deleted snapshots under the lock; a record that found its
        // object already present before taking the lock would append a record whose
        // object gc had just removed.
        let (dir, store) = fresh();
        let held = store.lock("gc", DEFAULT_LOCK_TIMEOUT).unwrap();
        let writer = {
            let store = store.clone();
            std::thread::spawn(move || store.record(&cr(1), "{}", None).unwrap())
        };
        // The writer waits for the lock once it has the lock file open (a second open of
        // it in this process, beside the holder's): probed, not assumed after a sleep.
        let lock = dir.path().join("d/lock");
        let opened = || {
            fs::read_dir("/proc/self/fd")
                .into_iter()
                .flatten()
                .flatten()
                .filter(|fd| fs::read_link(fd.path()).is_ok_and(|l| l == lock))
                .count()
        };
        let since = std::time::Instant::now();
        while opened() < 2 {
            assert!(
                since.elapsed() < Duration::from_secs(20),
                "the writer never took the lock file"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            store.object_ids().is_empty(),
            "an object was written while another process held the lock"
        );
        drop(held);
        let a = writer.join().unwrap();
        assert!(store.object(&a.cr).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn store_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("s")).domain(&crate::domain::d("d"));
        let a = store.record(&cr(1), "{}", None).unwrap();
        let mode = |p: PathBuf| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(dir.path().join("s")), 0o700);
        assert_eq!(mode(dir.path().join("s/d")), 0o700);
        assert_eq!(mode(dir.path().join("s/d/segments/1/000001.log")), 0o600);
        assert_eq!(mode(dir.path().join("s/d/segments/CURRENT")), 0o600);
        assert_eq!(
            mode(dir.path().join(format!("s/d/objects/{}.json", a.cr))),
            0o600
        );
    }

    #[test]
    fn lock_timeouts_are_plain_decimal_seconds_up_to_the_bound() {
        let max = MAX_LOCK_TIMEOUT;
        for (text, want) in [("30", 30_000), ("0", 0), ("0.5", 500), ("3600", 3_600_000)] {
            let got = parse_seconds(text, max).map(|d| d.as_millis());
            assert_eq!(got, Some(want), "{text}");
        }
        for text in [
            "",
            "abc",
            "-1",
            "+1",
            "1e3",
            "inf",
            "NaN",
            " 5",
            "5 ",
            "0x10",
            "1.",
            ".5",
            "3601",
            "3600.5",
            "1..2",
            "99999999999",
        ] {
            assert_eq!(parse_seconds(text, max), None, "{text:?}");
        }
    }

    #[test]
    fn a_held_lock_times_out_naming_its_holder_and_a_dead_holder_frees_it() {
        let (dir, store) = fresh();
        let held = store.lock("test-holder", DEFAULT_LOCK_TIMEOUT).unwrap();
        let err = store
            .lock("second", Duration::from_millis(100))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("test-holder") && err.contains("still locked"),
            "{err}"
        );
        drop(held);
        // A holder file left by a process that died: the kernel released its lock.
        fs::write(
            dir.path().join("d/lock.holder"),
            "{\"pid\":999999999,\"command\":\"publish\"}",
        )
        .unwrap();
        assert!(store.lock("third", Duration::from_millis(100)).is_ok());
    }

    fn v1_snapshot(id: &str, at: &str, cr: &str) -> Record {
        Record::Snapshot(SnapshotRecord {
            v: 1,
            id: id.into(),
            at: at.into(),
            seq: None,
            cluster: true,
            domain: "d".into(),
            rendered_at: at.into(),
            spec_hash: "h".into(),
            lok8s_version: "1".into(),
            tool: "clinv 0".into(),
            cr: cr.into(),
            crd: cr.into(),
            target: None,
            host: None,
        })
    }

    #[test]
    fn a_v1_journal_is_read_as_it_is_and_migrated_by_the_next_write() {
        let (dir, store) = fresh();
        fs::create_dir_all(dir.path().join("d")).unwrap();
        // Line order is not time order: the order is (at, seq = line number, id).
        let text: String = [
            v1_snapshot("bbbb01", "2026-01-01T00:00:02.000Z", &"a".repeat(64)),
            v1_snapshot("aaaa01", "2026-01-01T00:00:01.000Z", &"a".repeat(64)),
            v1_snapshot("cccc01", "2026-01-01T00:00:02.000Z", &"a".repeat(64)),
        ]
        .iter()
        .map(|r| journal::encode(r).unwrap())
        .collect();
        fs::write(dir.path().join("d/journal"), &text).unwrap();
        let j = store.read().unwrap();
        let ids: Vec<&str> = j.snapshots.iter().map(|s| s.record.id.as_str()).collect();
        assert_eq!(ids, ["aaaa01", "bbbb01", "cccc01"]);
        assert_eq!(j.snapshots[2].order_seq, 3);
        assert_eq!(store.domains_of_root(), ["d"]);
        let new = store.record(&cr(1), "{}", None).unwrap();
        assert!(new.seq.unwrap() > 3, "{new:?}");
        assert!(new.at.as_str() >= "2026-01-01T00:00:02.000Z");
        assert!(
            !dir.path().join("d/journal").exists(),
            "left over after migration"
        );
        assert!(dir.path().join("d/segments/1/000000.log").is_file());
        let j = store.read().unwrap();
        let ids: Vec<&str> = j.snapshots.iter().map(|s| s.record.id.as_str()).collect();
        assert_eq!(ids, ["aaaa01", "bbbb01", "cccc01", new.id.as_str()]);
        assert_eq!(j.newest_first().next().unwrap().record.id, new.id);
    }

    /// A history whose lines are not in the order (a version 1 journal whose clock went
    /// back): the newest snapshot comes from the compact listing, not the tail, and gc
    /// keeps such a body in one `000000.log`, which the tail never answers from.
    #[test]
    fn an_unordered_history_answers_newest_and_gc_like_the_full_read() {
        let (dir, store) = fresh();
        fs::create_dir_all(dir.path().join("d/objects")).unwrap();
        let object = |text: &str| {
            let id = hex_sha256(text.as_bytes());
            fs::write(dir.path().join(format!("d/objects/{id}.json")), text).unwrap();
            id
        };
        let (a, b) = (object("{\"a\":1}"), object("{\"b\":1}"));
        let text: String = [
            v1_snapshot("bbbb01", "2026-01-01T00:00:03.000Z", &b),
            v1_snapshot("aaaa01", "2026-01-01T00:00:01.000Z", &a),
            v1_snapshot("cccc01", "2026-01-01T00:00:02.000Z", &a),
            v1_snapshot("dddd01", "2026-01-01T00:00:00.000Z", &a),
        ]
        .iter()
        .map(|r| journal::encode(r).unwrap())
        .collect();
        fs::write(dir.path().join("d/journal"), &text).unwrap();
        let full = |store: &DomainStore| {
            let j = store.read().unwrap();
            let ids: Vec<String> = j
                .snapshots
                .iter()
                .map(|s| s.record.id.to_string())
                .collect();
            (ids, j.newest_first().next().map(|s| s.record.clone()))
        };
        let _lock = store.lock("test", DEFAULT_LOCK_TIMEOUT).unwrap();
        store.layout().ensure_v2(&now_millis()).unwrap();
        assert_eq!(store.layout().newest_snapshot(), None, "the tail told");
        assert_eq!(store.newest().unwrap(), full(&store).1);
        assert_eq!(store.newest().unwrap().unwrap().id, "bbbb01");
        drop(_lock);
        // gc --keep 1: deletes aaaa01 and cccc01 (dddd01 is the first, bbbb01 newest).
        let (before, _) = full(&store);
        assert_eq!(before, ["dddd01", "aaaa01", "cccc01", "bbbb01"]);
        let done: Vec<StateRecord> = before
            .iter()
            .map(|id| state(id, State::Superseded))
            .collect();
        store.set_states(&done).unwrap();
        let gone = store.gc(1, false, false).unwrap();
        let gone: Vec<String> = gone.rows().map(|r| r.id().to_string()).collect();
        assert_eq!(gone, ["aaaa01", "cccc01"]);
        let (after, newest) = full(&store);
        assert_eq!(after, ["dddd01", "bbbb01"]);
        assert!(dir.path().join("d/segments/2/000000.log").is_file());
        assert_eq!(store.layout().newest_snapshot(), None);
        let _lock = store.lock("test", DEFAULT_LOCK_TIMEOUT).unwrap();
        assert_eq!(store.newest().unwrap(), newest);
        drop(_lock);
        assert!(
            store.object(&a).is_ok() && store.object(&b).is_ok(),
            "kept objects"
        );
        // The order survives the rewrite: seq of version 1 records is kept explicitly.
        let j = store.read().unwrap();
        assert!(j.snapshots.iter().all(|s| s.record.seq.is_some()));
        assert!(j.damage.is_empty(), "{:?}", j.damage);
    }

    /// The newest rows read from the end of a long history (several sealed segments
    /// with summaries) are the full listing's, numbered as it numbers them; a reference
    /// `latest~N` resolves to the full read's snapshot, history and all.
    /// A domain `d` of `count` snapshots in rolled, ordered segments (a gc of a version 1
    /// journal), every third applied.
    fn rolled_store(root: &Path, count: u64) -> DomainStore {
        let store = Store::at(root).domain(&crate::domain::d("d"));
        fs::create_dir_all(root.join("d/objects")).unwrap();
        let mut text = String::new();
        for n in 0..count {
            let at = format!(
                "2026-01-01T{:02}:{:02}:{:02}.000Z",
                n / 3600 % 24,
                n / 60 % 60,
                n % 60
            );
            let at = format!("{}{}", &at[..8], &at[8..]);
            let mut r = v1_snapshot(&format!("{n:012x}"), &at, &"a".repeat(64));
            if let Record::Snapshot(s) = &mut r {
                s.at = format!("2026-01-{:02}T{}", 1 + n / 86_400, &at[11..]);
            }
            text.push_str(&journal::encode(&r).unwrap());
            if n % 3 == 0 {
                let st = state(&format!("{n:012x}"), State::Applied);
                text.push_str(&journal::encode(&Record::State(st)).unwrap());
            }
        }
        fs::write(root.join("d/journal"), &text).unwrap();
        // v1 → rolled, ordered segments (the records name no object files: allowed).
        store.gc(usize::MAX, false, true).unwrap();
        assert!(store.layout().live_files().unwrap().len() >= 3);
        store
    }

    #[test]
    fn a_limited_listing_is_the_newest_of_the_full_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = rolled_store(dir.path(), 20_000);
        // Deleted ones, near the end and far from it, are not counted.
        let deleted: Vec<_> = (0..20_000u64)
            .filter(|n| n % 7 == 0 && (n % 1000 < 50 || *n > 19_000))
            .map(|n| state(&format!("{n:012x}"), State::Deleted))
            .collect();
        store.set_states(&deleted).unwrap();
        let ids = |l: &scan::Listing| {
            l.rows()
                .map(|r| (r.id().to_string(), r.state(), r.cluster_state()))
                .collect::<Vec<_>>()
        };
        for written in [false, true] {
            for state in [None, Some(State::Applied), Some(State::Pending)] {
                // 2026-01-01T03:00:00Z: the newest 9,200 or so.
                for since in [None, Some(1_767_236_400)] {
                    let all = Shown {
                        state,
                        since,
                        limit: None,
                    };
                    let full = ids(&store.listing_shown(&all).unwrap());
                    assert!(full.len() > 1000, "{state:?} {since:?}");
                    for n in [1, 5, 3000, 19_000, 30_000] {
                        let shown = Shown {
                            limit: Some(n),
                            ..all
                        };
                        let newest = ids(&store.listing_shown(&shown).unwrap());
                        assert_eq!(newest, full[..n.min(full.len())], "{n} {state:?} {since:?}");
                    }
                }
            }
            assert!(!written || store.listing_tail(1).unwrap().is_some());
            store.listing().unwrap(); // writes the summaries: the newest end answers
        }
    }

    #[test]
    fn the_newest_rows_from_the_end_are_the_full_listings() {
        let dir = tempfile::tempdir().unwrap();
        let store = rolled_store(dir.path(), 20_000);
        assert!(store.listing_tail(0).unwrap().is_none(), "no summaries yet");
        let full = store.listing().unwrap(); // writes the summaries
        let journal = store.read().unwrap();
        for n in [0usize, 1, 9, 5000, 12_000] {
            let r = store.resolve(&SnapshotRef::Latest(n as u32)).unwrap();
            let want = journal.newest_first().nth(n).unwrap();
            assert_eq!(format!("{:?}", r.snapshot), format!("{want:?}"));
            let position = journal
                .snapshots
                .iter()
                .position(|s| s.record.id == want.record.id);
            assert_eq!(Some(r.revision as usize), position.map(|p| p + 1));
            // The window grows to what it needs; past the newer segments, it is all.
            let Some((tail, before, _)) = store.listing_tail(n + 1).unwrap() else {
                assert!(n > 10_000, "the end could not tell the newest {n}");
                continue;
            };
            assert!(tail.len() < full.len(), "read everything for {n}");
            assert_eq!(before as usize + tail.len(), full.len());
            let ids = |l: &scan::Listing, skip: usize| {
                l.rows()
                    .skip(skip)
                    .map(|r| (r.id().to_string(), r.state(), r.cluster_state()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ids(&tail, 0), ids(&full, before as usize));
        }
        // A whole id and a date resolve from the newest end as from the full listing.
        for n in [0usize, 7, 4000, 19_999] {
            let row = full.row(full.len() - 1 - n).unwrap();
            let date = row.at().to_string();
            for reference in [SnapshotRef::Id(row.id().to_string()), SnapshotRef::At(date)] {
                let r = store.resolve(&reference).unwrap();
                let i = resolve(&full, &reference).unwrap();
                assert_eq!(r.snapshot.record.id, full.row(i).unwrap().id().to_string());
                assert_eq!(r.revision, i as u64 + 1, "{reference:?}");
            }
        }
    }

    /// `log --since` from the newest end: the rows left out are all recorded before
    /// `since` (each older segment's summary bounds its times), the window holds a row
    /// before it, and its rows are the full listing's last ones, numbered alike.
    #[test]
    fn a_since_window_from_the_end_is_the_full_listings() {
        let dir = tempfile::tempdir().unwrap();
        let store = rolled_store(dir.path(), 20_000);
        let since = |s: &str| crate::history::audit::parse_bound(s, false).unwrap();
        assert!(
            store
                .listing_tail_since(since("2026-01-01T05:00:00Z"))
                .unwrap()
                .is_none()
        );
        let full = store.listing().unwrap(); // writes the summaries
        let times = [
            "2025-12-31T00:00:00Z",
            "2026-01-01T00:00:00Z",
            "2026-01-01T01:00:00.500Z",
            "2026-01-01T03:00:00Z",
            "2026-01-01T05:30:00Z",
            "2026-01-01T05:33:19.999Z",
            "2026-01-01T05:33:20Z",
            "2027-01-01T00:00:00Z",
        ];
        let mut from_the_end = 0;
        for t in times {
            let at = since(t);
            let Some((tail, before, _)) = store.listing_tail_since(at).unwrap() else {
                continue;
            };
            from_the_end += 1;
            let before = before as usize;
            assert_eq!(before + tail.len(), full.len(), "{t}");
            let shown = |r: scan::RowRef<'_>| {
                crate::history::audit::parse_bound(&r.at(), false).is_some_and(|x| x >= at)
            };
            assert!(full.rows().take(before).all(|r| !shown(r)), "{t}");
            assert!(
                tail.rows().any(|r| !shown(r)),
                "{t}: nothing before the window"
            );
            let ids = |l: &scan::Listing, skip: usize| {
                l.rows()
                    .skip(skip)
                    .map(|r| (r.id().to_string(), r.state(), r.cluster_state(), r.seq()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ids(&tail, 0), ids(&full, before), "{t}");
        }
        assert!(from_the_end >= 4, "the end answered {from_the_end} windows");
    }

    #[test]
    fn a_whole_id_names_its_snapshot_before_longer_ones() {
        let text: String = ["abcd12345678", "abcd123456789", "abcd1234567a"]
            .iter()
            .map(|id| journal::encode(&v1_snapshot(id, "2026-01-01T00:00:00.000Z", "a")).unwrap())
            .collect();
        let listing = scan::read_bytes(Path::new("j"), text.as_bytes());
        let id = |r: &str| {
            let i = resolve(&listing, &SnapshotRef::Id(r.into())).unwrap();
            listing.row(i).unwrap().id().to_string()
        };
        assert_eq!(id("abcd12345678"), "abcd12345678");
        assert_eq!(id("abcd123456789"), "abcd123456789");
        let many = resolve(&listing, &SnapshotRef::Id("abcd1234567".into()));
        assert!(
            matches!(many, Err(Error::Snapshot(SnapshotError::Ambiguous { .. }))),
            "{many:?}"
        );
    }

    /// A version 1 journal in the order is migrated into rolled segments (not linked as
    /// one body), every snapshot keeping its place, state and history; its torn tail is
    /// cut and noted.
    #[test]
    fn an_ordered_v1_journal_migrates_into_ordered_segments() {
        let (dir, store) = fresh();
        fs::create_dir_all(dir.path().join("d")).unwrap();
        let mut text: String = (0..50)
            .map(|n| {
                let at = format!("2026-01-01T00:00:{n:02}.000Z");
                let snap = v1_snapshot(&format!("{n:012x}"), &at, &"a".repeat(64));
                let mut line = journal::encode(&snap).unwrap();
                if n % 2 == 0 {
                    let st = state(&format!("{n:012x}"), State::Applied);
                    line.push_str(&journal::encode(&Record::State(st)).unwrap());
                }
                line
            })
            .collect();
        text.push_str("0123 {\"kind\":\"snap"); // a torn tail
        fs::write(dir.path().join("d/journal"), &text).unwrap();
        // What a reader sees of each: the record gains only its `seq`.
        let seen = |s: &Snapshot| {
            let record = SnapshotRecord {
                seq: None,
                ..s.record.clone()
            };
            format!(
                "{record:?} {} {:?} {:?} {:?}",
                s.order_seq, s.state, s.cluster_state, s.history
            )
        };
        let before: Vec<String> = store.read().unwrap().snapshots.iter().map(seen).collect();
        let new = store.record(&cr(1), "{}", None).unwrap();
        assert!(!dir.path().join("d/segments/1/000000.log").exists());
        assert!(!dir.path().join("d/journal").exists());
        let after = store.read().unwrap();
        let after_seen: Vec<String> = after.snapshots[..50].iter().map(seen).collect();
        assert_eq!(after_seen, before);
        assert_eq!(after.snapshots[50].record.id, new.id);
        assert!(after.damage.is_empty(), "{:?}", after.damage);
        assert_eq!(store.layout().newest_snapshot(), Some(Some(new)));
        let lines = fs::read_to_string(dir.path().join("d/segments/1/000001.log")).unwrap();
        assert!(
            lines.contains("\"kind\":\"repair\""),
            "the torn tail is not noted"
        );
    }

    /// Found by the model test: a first publish killed while writing `CURRENT` leaves a
    /// domain with a half-written generation and a temporary file, and no journal; the
    /// next gc of every domain must still see the domain and clean it up.
    #[test]
    fn a_first_write_killed_before_current_is_cleaned_up_by_the_next_gc() {
        let dir = tempfile::tempdir().unwrap();
        let root = Store::at(dir.path());
        fs::create_dir_all(dir.path().join("d/segments/1")).unwrap();
        fs::write(dir.path().join("d/segments/1/000001.log"), "").unwrap();
        let tmp = dir.path().join("d/segments/.CURRENT.tmp.99999.1");
        fs::write(&tmp, "1\n").unwrap();
        assert_eq!(root.domains(), [crate::domain::d("d")]);
        for d in root.select(None) {
            root.domain(&d).gc(3, false, false).unwrap();
        }
        assert!(!tmp.exists(), "the temporary file outlived gc");
        assert!(
            root.domain(&crate::domain::d("d"))
                .read()
                .unwrap()
                .snapshots
                .is_empty()
        );
    }

    #[test]
    fn recorded_time_never_goes_backwards_and_seq_grows() {
        let (dir, store) = fresh();
        fs::create_dir_all(dir.path().join("d")).unwrap();
        // A record from a little in the future (a clock stepped back): new records are
        // stamped at its time, never before it, and ordered after it by seq.
        let soon = crate::util::time::format_millis(
            jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2),
        );
        let ahead = v1_snapshot("eeee01", &soon, &"a".repeat(64));
        fs::write(
            dir.path().join("d/journal"),
            journal::encode(&ahead).unwrap(),
        )
        .unwrap();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let b = store.record(&cr(2), "{}", None).unwrap();
        assert_eq!(a.at, soon);
        assert!(b.seq > a.seq);
        let j = store.read().unwrap();
        assert_eq!(j.newest_first().next().unwrap().record.id, b.id);
        // Issue 39 (14): one from beyond the future tolerance (another clock's mistake)
        // never moves a new record's time; seq still grows.
        let (dir, store) = fresh();
        fs::create_dir_all(dir.path().join("d")).unwrap();
        let future = v1_snapshot("ffff01", "2999-01-01T00:00:00.000Z", &"a".repeat(64));
        fs::write(
            dir.path().join("d/journal"),
            journal::encode(&future).unwrap(),
        )
        .unwrap();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let b = store.record(&cr(2), "{}", None).unwrap();
        assert!(
            a.at.as_str() < "2999",
            "{} took the future record's time",
            a.at
        );
        assert!(!beyond_tolerance(&a.at, jiff::Timestamp::now()));
        assert!(b.seq > a.seq);
    }

    #[test]
    fn an_imported_older_snapshot_never_becomes_the_newest() {
        let (dir, store) = fresh();
        let newer = store.record(&cr(1), "{}", None).unwrap();
        let older = v1_snapshot("0ld0", "2020-01-01T00:00:00.000Z", &newer.cr);
        let mut tar = tar::Builder::new(Vec::new());
        let object = store.object(&newer.cr).unwrap();
        for (name, bytes) in [
            ("FORMAT".to_string(), "clinv-snapshots/v1\n".to_string()),
            ("d/journal".into(), journal::encode(&older).unwrap()),
            (format!("d/objects/{}.json", newer.cr), object),
        ] {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o600);
            header.set_cksum();
            tar.append_data(&mut header, name, bytes.as_bytes())
                .unwrap();
        }
        let archive = dir.path().join("a.tar");
        fs::write(&archive, tar.into_inner().unwrap()).unwrap();
        let imported = Store::at(dir.path()).import(&archive).unwrap();
        assert_eq!(imported.added, 1);
        // The older snapshot's line comes after the newer one's: the tail cannot tell.
        assert_eq!(store.layout().newest_snapshot(), None);
        assert_eq!(store.newest().unwrap().unwrap().id, newer.id);
        let j = store.read().unwrap();
        assert_eq!(j.newest_first().next().unwrap().record.id, newer.id);
        assert_eq!(j.snapshots[0].record.id, "0ld0");
        assert_eq!(
            pending_before(&j, &newer.id)
                .iter()
                .map(|s| s.record.id.as_str())
                .collect::<Vec<_>>(),
            ["0ld0"]
        );
    }

    #[test]
    fn a_commit_never_changes_the_cluster_state_and_git_only_snapshots_are_not_queued() {
        let (_dir, store) = fresh();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let b = store.record_for(&cr(2), "{}", None, false).unwrap();
        store
            .set_states(&[
                StateRecord {
                    commit: Some("c0ffee".into()),
                    pushed: Some("origin".into()),
                    ..state(&a.id, State::Committed)
                },
                state(&b.id, State::Committed),
            ])
            .unwrap();
        let j = store.read().unwrap();
        let (sa, sb) = (j.get(&a.id).unwrap(), j.get(&b.id).unwrap());
        assert_eq!(
            (sa.state, sa.cluster_state),
            (State::Pending, Some(State::Pending))
        );
        assert_eq!(sa.commit.as_deref(), Some("c0ffee"));
        assert_eq!(sa.pushed.as_deref(), Some("origin"));
        assert!(sa.is_pending());
        assert_eq!((sb.state, sb.cluster_state), (State::Committed, None));
        assert!(!sb.is_pending());
    }

    #[test]
    fn gc_refuses_damage_unless_allowed_and_keeps_what_a_damaged_line_names() {
        let (dir, store) = fresh();
        let a = store.record(&cr(1), "{}", None).unwrap();
        let b = store.record(&cr(2), "{\"x\":1}", None).unwrap();
        let c = store.record(&cr(3), "{\"x\":2}", None).unwrap();
        store.record(&cr(4), "{\"x\":3}", None).unwrap();
        let applied: Vec<StateRecord> = [&a, &b, &c]
            .iter()
            .map(|s| state(&s.id, State::Superseded))
            .collect();
        store.set_states(&applied).unwrap();
        // Damage the line of b's record: its objects are named only there now.
        let path = dir.path().join(SEGMENT);
        let text = fs::read_to_string(&path).unwrap();
        let damaged = text.replacen(&format!("\"id\":\"{}\"", b.id), "\"id\":\"zzzz\"", 1);
        fs::write(&path, &damaged).unwrap();
        let err = store.gc(0, false, false).err().unwrap().to_string();
        assert!(
            err.contains("damaged journal line") && err.contains("--allow-damage"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            damaged,
            "gc changed something"
        );
        let gone = store.gc(0, false, true).unwrap();
        assert_eq!(gone.len(), 1);
        assert_eq!(&*gone.row(0).unwrap().id(), c.id);
        assert!(
            store.object(&b.crd).is_ok(),
            "an object a damaged line names was removed"
        );
        assert!(
            store.object(&c.crd).is_err(),
            "an object only c named was kept"
        );
        let j = store.read().unwrap();
        assert_eq!(j.damage.len(), 1, "the damaged line was not carried over");
        assert_eq!(
            fs::read_to_string(dir.path().join("d/segments/CURRENT")).unwrap(),
            "2\n"
        );
        assert!(!dir.path().join("d/segments/1").exists());
    }

    #[test]
    fn a_crash_before_the_generation_switch_leaves_the_old_state_and_is_cleaned_up() {
        let (dir, store) = fresh();
        store.record(&cr(1), "{}", None).unwrap();
        let before = store.read().unwrap().snapshots.len();
        // A gc killed after writing generation 2 but before replacing CURRENT, and a
        // writer killed mid-object and mid-CURRENT.
        fs::create_dir_all(dir.path().join("d/segments/2")).unwrap();
        fs::write(dir.path().join("d/segments/2/000001.log"), "garbage\n").unwrap();
        fs::write(dir.path().join("d/segments/.CURRENT.tmp.1.0"), "2\n").unwrap();
        fs::write(dir.path().join("d/objects/.abc.json.tmp.99999.1"), "{").unwrap();
        fs::write(dir.path().join("d/.abc.json.tmp.99999.2"), "{").unwrap();
        assert_eq!(store.read().unwrap().snapshots.len(), before);
        assert!(store.read().unwrap().damage.is_empty());
        store.record(&cr(2), "{}", None).unwrap();
        assert!(!dir.path().join("d/segments/2").exists());
        assert!(!dir.path().join("d/segments/.CURRENT.tmp.1.0").exists());
        assert_eq!(store.read().unwrap().snapshots.len(), before + 1);
        // An append never lists `objects/` (a file per distinct inventory: listing it made
        // every publish O(history)); objects are staged in the domain folder, which it
        // sweeps, and gc, which lists `objects/` anyway, removes an older clinv's leftover.
        assert!(!dir.path().join("d/.abc.json.tmp.99999.2").exists());
        assert!(dir.path().join("d/objects/.abc.json.tmp.99999.1").exists());
        store.gc(10, false, false).unwrap();
        assert!(!dir.path().join("d/objects/.abc.json.tmp.99999.1").exists());
        assert!(store.read().unwrap().damage.is_empty());
    }

    /// Found by the model test: a publish killed between the store root's creation and
    /// its `.gitignore`'s rename left a temporary file no later command removed, and a
    /// store that did not ignore itself. The next writer removes a dead writer's
    /// temporary file (never a running one's) and writes the `.gitignore`.
    #[test]
    fn a_writer_killed_before_the_store_ignored_itself_is_mended_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        fs::create_dir(&root).unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = root.join(format!("..gitignore.tmp.{}.1", gone.id()));
        let running = root.join(format!("..gitignore.tmp.{}.2", std::process::id()));
        fs::write(&dead, "*").unwrap();
        fs::write(&running, "*").unwrap();
        let store = Store::at(&root).domain(&crate::domain::d("d"));
        store.record(&cr(1), "{}", None).unwrap();
        assert!(!dead.exists(), "a dead writer's temporary file is removed");
        assert!(running.exists(), "a running writer's is its own");
        assert_eq!(
            fs::read_to_string(root.join(".gitignore")).unwrap(),
            GITIGNORE
        );
    }

    /// Taking the lock removes what a killed writer left, even when nothing is written
    /// then (the model test's "temporary files outlived the next command", after a killed
    /// publish and a replay with nothing pending).
    #[test]
    fn whoever_takes_the_lock_removes_what_dead_writers_left() {
        let (dir, store) = fresh();
        store.record(&cr(1), "{}", None).unwrap();
        let left = [
            "d/.abc.json.tmp.99999.1",
            "d/.lock.holder.tmp.99999.2",
            "d/segments/.CURRENT.tmp.99999.3",
            "d/segments/1/.000001.sum.tmp.99999.4",
        ];
        for path in left {
            fs::write(dir.path().join(path), "x").unwrap();
        }
        fs::create_dir_all(dir.path().join("d/segments/2")).unwrap();
        drop(store.lock("replay", DEFAULT_LOCK_TIMEOUT).unwrap());
        for path in left {
            assert!(!dir.path().join(path).exists(), "{path}");
        }
        assert!(!dir.path().join("d/segments/2").exists());
        assert_eq!(store.read().unwrap().snapshots.len(), 1);
    }

    #[test]
    fn new_generations_roll_segments_and_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let big = |i: u64| {
            journal::encode(&Record::Repair(RepairRecord {
                v: FORMAT,
                at: format!("2026-01-01T00:00:0{i}.000Z"),
                seq: Some(i),
                torn_bytes: 0,
            }))
            .unwrap()
            .into_bytes()
        };
        let pad = vec![b'#'; (segments::SEGMENT_ROLL / 2) as usize];
        let lines = (1..=4).flat_map(|i| [Ok(big(i)), Ok([pad.as_slice(), b"\n"].concat())]);
        assert_eq!(layout.write_generation(lines).unwrap(), 1);
        assert!(layout.live_files().unwrap().len() >= 2);
        let j = segments::read_journal(&layout).unwrap();
        assert_eq!(j.head, Some(("2026-01-01T00:00:04.000Z".into(), 4)));
        assert_eq!(j.damage.len(), 4, "the padding lines are damage");
    }

    /// A stored object as the store keeps it (no `renderedAt`), built from `spec`'s
    /// other keys and the object's `head` (apiVersion, kind, metadata) as raw JSON text,
    /// so that duplicate keys can be written.
    fn stored(head: &str, spec: &str) -> String {
        format!(
            r#"{{{head},"spec":{{"lok8sVersion":"1","kind":"lo","specHash":"{}"{spec}}}}}"#,
            "a".repeat(64)
        )
    }

    const HEAD: &str = r#""apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{"name":"cluster","labels":{"lok8s.dev/domain":"d"}}"#;
    const AT: &str = "2026-01-01T00:00:00Z";

    /// The same object read by the store (`inventory_from_object`) and as a file or live
    /// object (`inventory_from_text`, `renderedAt` in place): issue #41's one reader.
    fn both_readers(object: &str) -> [std::result::Result<ClusterInventory, String>; 2] {
        let file = object.replacen(
            r#""spec":{"#,
            &format!(r#""spec":{{"renderedAt":"{AT}","#),
            1,
        );
        [
            inventory_from_object(object, AT).map_err(|e| crate::error::chain(&e)),
            crate::inventory::parse::inventory_from_text(&file)
                .map_err(|e| crate::error::chain(&e)),
        ]
    }

    #[test]
    fn the_store_refuses_what_a_file_or_live_object_may_not_be() {
        for (object, field) in [
            (
                stored(&HEAD.replace("ClusterInventory", "ConfigMap"), ""),
                "kind",
            ),
            (
                stored(&HEAD.replace("lok8s.dev/v1alpha1", "example.com/v1"), ""),
                "apiVersion",
            ),
            (
                stored(
                    r#""apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory""#,
                    "",
                ),
                "metadata.name",
            ),
            (
                stored(&HEAD.replace(r#""name":"cluster","#, ""), ""),
                "metadata.name",
            ),
            (
                stored(HEAD, r#","specHash":"b""#),
                "duplicate key `specHash` at line 1",
            ),
            (
                stored(
                    &HEAD.replace(r#""d"}"#, r#""d","lok8s.dev/domain":"e"}"#),
                    "",
                ),
                "duplicate key `lok8s.dev/domain`",
            ),
            (
                stored(HEAD, r#","addons":[{"name":"a","name":"b"}]"#),
                "duplicate key `name`",
            ),
            (
                stored(HEAD, r#","addons":[{"name":7}]"#),
                "spec.addons[0].name: expected a string",
            ),
        ] {
            for (reader, read) in ["store", "file"].into_iter().zip(both_readers(&object)) {
                let err = read.expect_err(&format!("{reader} accepted {object}"));
                assert!(err.contains(field), "{reader}: {err} (want {field})");
            }
        }
    }

    #[test]
    fn the_store_accepts_what_a_file_or_live_object_may_be() {
        for object in [
            stored(&HEAD.replace(r#"{"lok8s.dev/domain":"d"}"#, "null"), ""),
            stored(&HEAD.replace(r#""d"}"#, r#""d","x":null}"#), ""),
            stored(HEAD, r#","addons":null"#),
            stored(
                HEAD,
                r#","addons":[{"name":"a","source":null,"later":1}],"later":{}"#,
            ),
            stored(
                &HEAD.replace(r#""name":"cluster""#, r#""name":"cluster","uid":"u""#),
                "",
            ),
        ] {
            let [store, file] = both_readers(&object);
            let store = store.unwrap_or_else(|e| panic!("store refused {object}: {e}"));
            assert_eq!(Ok(store), file, "{object}");
        }
    }

    /// A store of `count` snapshots one a minute from 2026-01-01T00:00:00Z (their ids
    /// `{n:012x}`, cycling through five real objects, a third applied), migrated into
    /// ordered segments.
    fn timed_store(root: &Path, count: u64) -> DomainStore {
        let scratch = Store::at(root).domain(&crate::domain::d("scratch"));
        let crs: Vec<String> = (0..5)
            .map(|i| scratch.record(&cr(i), "{}", None).unwrap().cr)
            .collect();
        fs::create_dir_all(root.join("d/objects")).unwrap();
        for entry in fs::read_dir(root.join("scratch/objects")).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), root.join("d/objects").join(entry.file_name())).unwrap();
        }
        let mut text = String::new();
        for n in 0..count {
            let (id, at) = (format!("{n:012x}"), minute(n));
            let cr = &crs[(n / 7 % 5) as usize];
            text.push_str(&journal::encode(&v1_snapshot(&id, &at, cr)).unwrap());
            if n % 3 == 0 {
                let st = StateRecord::new(&id.as_str().into(), &at, State::Applied);
                text.push_str(&journal::encode(&Record::State(st)).unwrap());
            }
        }
        fs::write(root.join("d/journal"), &text).unwrap();
        let store = Store::at(root).domain(&crate::domain::d("d"));
        store.gc(usize::MAX, false, true).unwrap();
        store
    }

    /// The time of [`timed_store`]'s snapshot `n`.
    fn minute(n: u64) -> String {
        let t = jiff::Timestamp::from_second(1_767_225_600 + n as i64 * 60).unwrap();
        crate::util::time::format_millis(t)
    }

    /// A log as JSON entries, and its skipped lines.
    type Read = (Vec<String>, Vec<String>);

    /// `log --since T` of `store`: the entries and skipped lines read for the window, and
    /// those of the whole history filtered to it.
    fn windowed_and_whole(store: &DomainStore, since: &str) -> (Read, Read) {
        use crate::ops::history::{Query, Window, load_store};
        let query = Query {
            since: Some(since),
            ..Query::everything(jiff::Timestamp::now())
        };
        let at = crate::history::audit::parse_bound(since, false).unwrap();
        let read = |window| {
            let steps = load_store(store, window).unwrap();
            let mut entries = Vec::new();
            steps
                .entries(&query, |e| {
                    entries.push(serde_json::to_string(e).unwrap());
                    Ok(())
                })
                .unwrap();
            (entries, steps.skipped)
        };
        (read(Window::Since(at)), read(Window::All))
    }

    /// Appends `bytes` to the active segment, as a crash or a damaged disk leaves them.
    fn append_raw(store: &DomainStore, bytes: &[u8]) {
        let files = store.layout().live_files().unwrap();
        let mut file = OpenOptions::new()
            .append(true)
            .open(files.last().unwrap())
            .unwrap();
        file.write_all(bytes).unwrap();
    }

    /// `log --since` whose window lies in the active segment (one segment, or the last
    /// of several): read from the segment's end — the window and the snapshot before it
    /// — and the same entries, revisions and skipped lines as the whole history filtered
    /// to the window, with deleted snapshots at the cut, damage in the window and a torn
    /// tail.
    #[test]
    fn a_since_window_in_the_active_segment_is_read_from_its_end() {
        for count in [300u64, 14_000] {
            let dir = tempfile::tempdir().unwrap();
            let store = timed_store(dir.path(), count);
            store.listing().unwrap(); // the sealed segments' summaries
            assert!(count < 1000 || store.layout().live_files().unwrap().len() >= 2);
            let id = |n: u64| format!("{:012x}", count - n);
            store
                .set_states(&[
                    state(&id(10), State::Deleted),
                    state(&id(31), State::Deleted),
                    state(&id(40), State::Superseded),
                ])
                .unwrap();
            // A damaged line (its checksum) in the window, a change after it, a torn tail.
            let line = journal::encode(&Record::State(state(&id(3), State::Applied))).unwrap();
            let flipped = if line.starts_with('0') { '1' } else { '0' };
            append_raw(&store, format!("{flipped}{}", &line[1..]).as_bytes());
            store.set_states(&[state(&id(2), State::Applied)]).unwrap();
            append_raw(&store, b"{\"kind\":\"sta");
            let full = store.listing().unwrap();
            assert_eq!(full.damage.len(), 1, "{:?}", full.damage);
            for back in [1, 5, 10, 11, 30, 31, 45, 200, count + 5] {
                let since = minute(count.saturating_sub(back));
                let (windowed, whole) = windowed_and_whole(&store, &since);
                assert!(!whole.0.is_empty(), "{count} {since}");
                assert_eq!(windowed, whole, "{count} {since}");
                let from_end = store
                    .listing_tail_since(crate::history::audit::parse_bound(&since, false).unwrap())
                    .unwrap();
                if back >= count {
                    continue; // nothing before the window: the whole history
                }
                let (tail, before, _) = from_end.expect("read from the end");
                assert_eq!(before as usize + tail.len(), full.len(), "{count} {since}");
                // The window (and the deleted snapshots in it) and one snapshot before it.
                let deleted = [10, 31].iter().filter(|d| **d <= back + 1).count() as u64;
                assert!(
                    tail.len() as u64 <= back + 1 + deleted,
                    "{count} {since}: {}",
                    tail.len()
                );
                assert_eq!(tail.torn_tail, full.torn_tail);
                assert_eq!(tail.damage.len(), 1);
            }
        }
    }

    /// The model: random histories in one segment — deletions, damage before and inside
    /// the window, a torn tail or none — read for random windows from the end give the
    /// whole history's entries and skipped lines.
    #[test]
    fn since_windows_from_the_end_agree_with_the_whole_history() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        let mut from_end = 0;
        for seed in 0..24u64 {
            let dir = tempfile::tempdir().unwrap();
            let count = 20 + next(120);
            let store = timed_store(dir.path(), count);
            let gone: Vec<StateRecord> = (0..count)
                .filter(|_| next(6) == 0)
                .map(|n| state(&format!("{n:012x}"), State::Deleted))
                .collect();
            store.set_states(&gone).unwrap();
            if seed % 3 == 1 {
                // A flipped checksum digit on some line (before or in the window).
                let path = store.layout().live_files().unwrap().pop().unwrap();
                let mut text = fs::read(&path).unwrap();
                let starts: Vec<usize> = std::iter::once(0)
                    .chain((0..text.len()).filter(|i| text[*i] == b'\n').map(|i| i + 1))
                    .filter(|i| *i < text.len())
                    .collect();
                let at = starts[next(starts.len() as u64) as usize];
                text[at] = if text[at] == b'0' { b'1' } else { b'0' };
                fs::write(&path, text).unwrap();
            }
            if seed % 2 == 0 {
                append_raw(&store, b"abc {\"kind\":\"snapshot\"");
            }
            for _ in 0..6 {
                let since = minute(next(count + 10));
                let (windowed, whole) = windowed_and_whole(&store, &since);
                assert_eq!(
                    windowed, whole,
                    "seed {seed}, {count} snapshots, since {since}"
                );
                let at = crate::history::audit::parse_bound(&since, false).unwrap();
                from_end += usize::from(store.listing_tail_since(at).unwrap().is_some());
            }
        }
        assert!(from_end > 60, "{from_end} of 144 windows read from the end");
    }
}
