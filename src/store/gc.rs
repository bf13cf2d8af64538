//! `snapshots gc` and `snapshots verify`.
//!
//! What may be deleted, deleting it with the objects only it referenced (a compacted
//! generation of the journal, switched to atomically), and checking every kept snapshot's
//! objects for meaning.
//!
//! gc works in memory bounded by the compact listing (about 60 bytes a snapshot), not
//! by the bytes of the journal: it decides from a [`Listing`], then streams the live
//! lines once more into the new generation, keeping their order and their bytes.

use super::journal::{self, Lines};
use super::record::FORMAT;
use super::scan::Listing;
use super::segments::{Layout, NewGeneration};
use super::{DomainStore, HeadRecord, Record, SnapshotRecord, State, Store};
use super::{now_millis, summary};
use crate::domain::Domain;
use crate::error::{Damaged, Error, Result};
use crate::util::hash::sha256_bytes;
use sha2::Digest;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

/// Per row of `listing` (in its order): whether `gc --keep keep` deletes it — everything
/// except the first, the newest `keep`, the last applied, every pending one, and those
/// already deleted.
pub fn doomed(listing: &Listing, keep: usize) -> Vec<bool> {
    let live = |i: &usize| listing.row(*i).is_some_and(|r| r.state() != State::Deleted);
    let last_applied = (0..listing.len())
        .rev()
        .filter(live)
        .find(|i| listing.row(*i).and_then(|r| r.cluster_state()) == Some(State::Applied));
    let newest: HashSet<usize> = (0..listing.len()).rev().filter(live).take(keep).collect();
    listing
        .rows()
        .enumerate()
        .map(|(i, r)| {
            let pending = r.cluster_state() == Some(State::Pending);
            live(&i) && i != 0 && Some(i) != last_applied && !newest.contains(&i) && !pending
        })
        .collect()
}

/// The snapshots that leave the journal (deleted now or by an older store), by id:
/// whichever side is smaller is held.
pub(super) enum Leaving {
    AllBut(HashSet<Box<str>>),
    Only(HashSet<Box<str>>),
}

impl Leaving {
    fn of(listing: &Listing, doomed: &[bool]) -> Leaving {
        let leaves =
            |(i, r): &(usize, super::scan::RowRef<'_>)| doomed[*i] || r.state() == State::Deleted;
        let rows = || listing.rows().enumerate();
        let leaving = rows().filter(leaves).count();
        let ids = |want: bool| {
            rows()
                .filter(|row| leaves(row) == want)
                .map(|(_, r)| Box::from(&*r.id()))
                .collect()
        };
        if leaving * 2 > listing.len() {
            Leaving::AllBut(ids(false))
        } else {
            Leaving::Only(ids(true))
        }
    }

    /// None: a copy of every live line (an import adds to it).
    pub(super) fn none() -> Leaving {
        Leaving::Only(HashSet::new())
    }

    fn contains(&self, id: &str) -> bool {
        match self {
            Leaving::AllBut(kept) => !kept.contains(id),
            Leaving::Only(gone) => gone.contains(id),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Leaving::Only(gone) if gone.is_empty())
    }
}

/// The second pass of a gc: the live lines in order, those of leaving snapshots left
/// out, the rest copied as they are (a version 1 snapshot record gains its `seq`, so its
/// place in the order stays), damaged lines verbatim; the objects both sides name.
pub(super) struct Compaction<'a> {
    leaving: Leaving,
    pub(super) out: NewGeneration<'a>,
    pub(super) head: Option<(String, u64)>,
    kept_objects: HashSet<[u8; 32]>,
    gone_objects: HashSet<[u8; 32]>,
    damaged_ids: HashSet<[u8; 32]>,
    failed: Option<io::Error>,
}

impl<'a> Compaction<'a> {
    /// Streams the live lines of `layout` into a new generation (`ordered`: see
    /// [`Layout::new_generation`]), leaving `leaving` out.
    ///
    /// # Errors
    /// A live file cannot be read, or the new generation cannot be written.
    pub(super) fn run(
        layout: &'a Layout,
        leaving: Leaving,
        ordered: bool,
    ) -> Result<Compaction<'a>> {
        let out = layout
            .new_generation(ordered)
            .map_err(|e| Error::io(layout.segments_dir(), e))?;
        let mut pass = Compaction {
            leaving,
            out,
            head: None,
            kept_objects: HashSet::new(),
            gone_objects: HashSet::new(),
            damaged_ids: HashSet::new(),
            failed: None,
        };
        layout.read(&mut pass).map_err(|(p, e)| Error::io(p, e))?;
        match pass.failed.take() {
            Some(e) => Err(Error::io(layout.segments_dir(), e)),
            None => Ok(pass),
        }
    }

    /// Ends the generation with a `head` record (the newest time, never before now, and
    /// the largest `seq`) and switches to it.
    ///
    /// # Errors
    /// The generation cannot be written or switched to.
    pub(super) fn switch(mut self, layout: &Layout) -> Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(Error::io(layout.segments_dir(), e));
        }
        let (at, seq) = self.head.unwrap_or_else(|| (now_millis(), 0));
        let head = journal::encode(&Record::Head(HeadRecord {
            v: FORMAT,
            at: at.max(now_millis()),
            seq,
        }))
        .map_err(|e| Error::encode("a journal record", e))?;
        self.out
            .switch(head.as_bytes())
            .map_err(|e| Error::io(layout.segments_dir(), e))?;
        Ok(())
    }

    /// Raises the head to (`at`, `seq`) of a record written after the copy.
    pub(super) fn bump(&mut self, at: &str, seq: u64) {
        let head = self.head.get_or_insert_with(|| (at.to_string(), seq));
        if at > head.0.as_str() {
            head.0 = at.to_string();
        }
        head.1 = head.1.max(seq);
    }

    fn write(&mut self, line: &[u8]) {
        if self.failed.is_none()
            && let Err(e) = self.out.push(line)
        {
            self.failed = Some(e);
        }
    }

    fn objects(set: &mut HashSet<[u8; 32]>, s: &SnapshotRecord) {
        set.extend(
            [&s.cr, &s.crd]
                .into_iter()
                .filter_map(|id| sha256_bytes(id)),
        );
    }
}

impl Lines for Compaction<'_> {
    fn record(&mut self, _path: &Path, line_no: usize, record: Record, raw: &[u8]) {
        let seq = record.seq().unwrap_or(line_no as u64);
        self.bump(record.at(), seq);
        if matches!(record, Record::Supersede(_)) {
            // Names no snapshot: kept, in its place among the lines.
            return self.write(&[raw, b"\n"].concat());
        }
        let Some(id) = record.id() else { return };
        let leaves = self.leaving.contains(id);
        match record {
            Record::Snapshot(s) if leaves => Self::objects(&mut self.gone_objects, &s),
            Record::Snapshot(s) if s.seq.is_none() => {
                Self::objects(&mut self.kept_objects, &s);
                let s = SnapshotRecord {
                    seq: Some(seq),
                    ..s
                };
                match journal::encode(&Record::Snapshot(s)) {
                    Ok(line) => self.write(line.as_bytes()),
                    Err(e) => self.failed = Some(io::Error::other(e)),
                }
            }
            Record::Snapshot(s) => {
                Self::objects(&mut self.kept_objects, &s);
                self.write(&[raw, b"\n"].concat());
            }
            _ if leaves => {}
            _ => self.write(&[raw, b"\n"].concat()),
        }
    }

    fn damage(&mut self, _path: &Path, _line_no: usize, raw: &[u8], _what: String) {
        let words = journal::hex_words(raw);
        self.damaged_ids
            .extend(words.iter().filter_map(|w| sha256_bytes(w)));
        if !raw.is_empty() {
            self.write(&[raw, b"\n"].concat());
        }
    }

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

impl DomainStore {
    /// Deletes what [`doomed`] names (unless `dry_run`) under the domain lock: streams a
    /// compacted generation of the journal without them (and without snapshots an older
    /// store marked deleted; damaged lines are carried over verbatim), switches to it,
    /// then removes the objects no kept snapshot (and no damaged line) refers to.
    /// Returns the deleted snapshots, as listing rows.
    ///
    /// # Errors
    /// Damaged lines without `allow_damage` (nothing is changed then); the lock, the
    /// journal or an object removal failed.
    pub fn gc(&self, keep: usize, dry_run: bool, allow_damage: bool) -> Result<Listing> {
        let _lock = self.lock("gc", super::lock_timeout()?)?;
        self.check_dirs()?;
        let layout = self.layout();
        let mut listing = summary::read(&layout, summary::Summaries::Use, || None::<()>)
            .map_err(|(p, e)| Error::io(p, e))?;
        listing.domain = self.domain.to_string();
        if !listing.damage.is_empty() && !allow_damage {
            return Err(Damaged::Journal {
                domain: self.domain.to_string(),
                count: listing.damage.len(),
                first: listing
                    .damage
                    .iter()
                    .take(5)
                    .map(ToString::to_string)
                    .collect(),
            }
            .into());
        }
        let bad_objects = self.check_objects(&listing, allow_damage)?;
        let doomed = doomed(&listing, keep);
        let leaving = Leaving::of(&listing, &doomed);
        let ordered = listing.line_ordered;
        let mut row = doomed.iter();
        listing.retain(|_| row.next().copied().unwrap_or(false));
        if dry_run {
            return Ok(listing);
        }
        if leaving.is_empty() && layout.current().ok().flatten().is_some() {
            let _critical = crate::util::signals::critical();
            layout.clean_up_objects();
            return Ok(listing);
        }
        self.ensure_dirs()?;
        let mut pass = Compaction::run(&layout, leaving, ordered)?;
        let (kept, gone, mut damaged) = (
            std::mem::take(&mut pass.kept_objects),
            std::mem::take(&mut pass.gone_objects),
            std::mem::take(&mut pass.damaged_ids),
        );
        damaged.extend(bad_objects);
        pass.switch(&layout)?;
        let _critical = crate::util::signals::critical();
        layout.clean_up_objects();
        for id in self.object_ids() {
            let Some(key) = sha256_bytes(&id) else {
                continue;
            };
            if gone.contains(&key) && !kept.contains(&key) && !damaged.contains(&key) {
                self.remove_object(&id)?;
            }
        }
        Ok(listing)
    }
}

impl DomainStore {
    /// The objects of the live snapshots of `listing` that are missing or whose content
    /// does not match their name (what a disk or a hand damages; `verify` reports them):
    /// gc refuses with them, as verify fails, unless `allow_damage` — then it leaves
    /// them as they are (returned, so nothing removes them: they are evidence, and may
    /// be restored from another copy). Whether an object means what its record says is
    /// `verify`'s to check, not gc's.
    ///
    /// # Errors
    /// Damaged objects without `allow_damage`; an unreadable journal.
    fn check_objects(&self, listing: &Listing, allow_damage: bool) -> Result<HashSet<[u8; 32]>> {
        let deleted = listing
            .rows()
            .filter(|r| r.state() == State::Deleted)
            .map(|r| Box::from(&*r.id()))
            .collect();
        let mut pass = ObjectCheck {
            ds: self,
            deleted,
            checked: HashSet::new(),
            bad: HashSet::new(),
            problems: Vec::new(),
        };
        self.layout()
            .read(&mut pass)
            .map_err(|(p, e)| Error::io(p, e))?;
        if pass.problems.is_empty() || allow_damage {
            return Ok(pass.bad);
        }
        Err(Damaged::Objects {
            domain: self.domain.to_string(),
            count: pass.problems.len(),
            first: pass.problems.into_iter().take(5).collect(),
        }
        .into())
    }

    /// Migrates a version 1 journal whose lines are in the order into rolled, ordered
    /// segments (the caller holds the lock): the newest end then answers `log
    /// --max-count` and `latest~K` without the rest, and a publish finds the newest
    /// snapshot at the tail. Each snapshot record gains its `seq` (its line number);
    /// a torn tail is cut first and noted in a `repair` record. Returns `false`, having
    /// changed nothing but the torn tail, when the lines are not in the order: the
    /// journal is then linked as it is (`000000.log`, [`Layout::ensure_v2`]).
    ///
    /// # Errors
    /// I/O failures; the version 1 journal stays live then.
    pub(super) fn migrate_ordered(&self) -> Result<bool> {
        let layout = self.layout();
        let io = |e| Error::io(layout.v1_journal(), e);
        let torn = layout.cut_v1_tail().map_err(io)?;
        let listing = summary::read(&layout, summary::Summaries::Use, || None::<()>)
            .map_err(|(p, e)| Error::io(p, e))?;
        if !listing.line_ordered {
            return Ok(false);
        }
        drop(listing);
        let mut pass = Compaction::run(&layout, Leaving::none(), true)?;
        if let Some(torn_bytes) = torn {
            let (at, seq) = pass.head.clone().unwrap_or_else(|| (now_millis(), 0));
            let at = at.max(now_millis());
            let line = journal::encode(&Record::Repair(super::RepairRecord {
                v: FORMAT,
                at: at.clone(),
                seq: Some(seq + 1),
                torn_bytes,
            }))
            .map_err(|e| Error::encode("a journal record", e))?;
            pass.write(line.as_bytes());
            pass.bump(&at, seq + 1);
        }
        pass.switch(&layout)?;
        Ok(true)
    }
}

/// What `snapshots verify` found, in the order it found it.
#[derive(Debug, Default)]
pub struct Verified {
    pub domains: usize,
    pub snapshots: usize,
    pub objects: usize,
    pub findings: Vec<Finding>,
}

/// One thing `snapshots verify` reports.
#[derive(Debug)]
pub enum Finding {
    /// A damaged journal line or a missing or damaged object: a problem.
    Problem(String),
    /// An incomplete last journal line (a write interrupted by a crash): ignored.
    TornTail { journal: PathBuf, bytes: u64 },
}

impl Verified {
    pub fn problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| matches!(f, Finding::Problem(_)))
            .count()
    }
}

impl Store {
    /// Reads every journal of `domain` (or of all domains) and checks that each kept
    /// snapshot's objects are present and match their checksums — streaming, in the
    /// memory of the ids it has seen, never the whole journal.
    ///
    /// # Errors
    /// An invalid domain or an unreadable journal.
    pub fn verify(&self, domains: Option<&[Domain]>) -> Result<Verified> {
        let list = self.select(domains);
        let mut out = Verified {
            domains: list.len(),
            ..Verified::default()
        };
        for d in &list {
            let ds = self.domain(d);
            let _lock = ds.read_lock(super::lock_timeout()?)?;
            // Snapshots an older store marked deleted (usually none) are not checked.
            let listing = ds.listing()?;
            let deleted = listing
                .rows()
                .filter(|r| r.state() == State::Deleted)
                .map(|r| Box::from(&*r.id()))
                .collect();
            drop(listing);
            let mut pass = VerifyPass::new(&ds, deleted);
            ds.layout()
                .read(&mut pass)
                .map_err(|(p, e)| Error::io(p, e))?;
            out.findings.append(&mut pass.damage);
            if pass.torn > 0 {
                out.findings.push(Finding::TornTail {
                    journal: ds.dir().join("segments"),
                    bytes: pass.torn,
                });
            }
            out.findings.append(&mut pass.snapshots);
            out.snapshots += pass.counts.0;
            out.objects += pass.counts.1;
        }
        Ok(out)
    }
}

/// `verify`'s pass over one domain's lines: each kept snapshot (the first record of an id,
/// as every reader takes it) checked once, its objects once each.
struct VerifyPass<'a> {
    ds: &'a DomainStore,
    deleted: HashSet<Box<str>>,
    /// First 16 bytes of the sha256 of each snapshot id seen.
    seen: HashSet<[u8; 16]>,
    checked: HashSet<[u8; 32]>,
    parsed: HashSet<[u8; 32]>,
    /// Damaged lines, reported first; then the snapshots' problems.
    damage: Vec<Finding>,
    torn: u64,
    snapshots: Vec<Finding>,
    /// Snapshots and objects checked.
    counts: (usize, usize),
}

impl<'a> VerifyPass<'a> {
    fn new(ds: &'a DomainStore, deleted: HashSet<Box<str>>) -> VerifyPass<'a> {
        VerifyPass {
            ds,
            deleted,
            seen: HashSet::new(),
            checked: HashSet::new(),
            parsed: HashSet::new(),
            damage: Vec::new(),
            torn: 0,
            snapshots: Vec::new(),
            counts: (0, 0),
        }
    }

    fn snapshot(&mut self, snap: &SnapshotRecord) {
        let problem = |what: String| Finding::Problem(format!("snapshot {}: {what}", snap.id));
        // The CR must read back as an inventory (with this snapshot's renderedAt), the CRD
        // as the ClusterInventory CRD: a checksum alone does not say the object is what
        // the record says it is. Once per distinct CR object.
        let key = |id: &str| sha256_bytes(id).unwrap_or_default();
        if self.parsed.insert(key(&snap.cr))
            && let Err(e) = self.ds.inventory(snap)
        {
            self.snapshots.push(problem(crate::error::chain(&e)));
        }
        for (id, crd) in [(&snap.cr, false), (&snap.crd, true)] {
            if !self.checked.insert(key(id)) {
                continue;
            }
            self.counts.1 += 1;
            let checked = self.ds.object(id).and_then(|text| {
                if crd {
                    check_crd(&text).map_err(Error::from)
                } else {
                    Ok(())
                }
            });
            if let Err(e) = checked {
                let what = format!("object {id}: {}", crate::error::chain(&e));
                self.snapshots.push(problem(what));
            }
        }
    }
}

impl Lines for VerifyPass<'_> {
    fn record(&mut self, _path: &Path, _line_no: usize, record: Record, _raw: &[u8]) {
        let Record::Snapshot(snap) = record else {
            return;
        };
        let mut id = [0u8; 16];
        id.copy_from_slice(&sha2::Sha256::digest(snap.id.as_bytes())[..16]);
        if self.deleted.contains(snap.id.as_str()) || !self.seen.insert(id) {
            return;
        }
        self.counts.0 += 1;
        self.snapshot(&snap);
    }

    fn damage(&mut self, path: &Path, line: usize, _raw: &[u8], what: String) {
        let damage = super::Damage {
            path: path.to_path_buf(),
            line,
            what,
        };
        self.damage.push(Finding::Problem(damage.to_string()));
    }

    fn torn_tail(&mut self, bytes: u64) {
        self.torn = bytes;
    }

    fn take_torn_tail(&mut self) -> u64 {
        std::mem::take(&mut self.torn)
    }
}

/// gc's check of the objects of every live snapshot record, each object once: present,
/// its content its name; damaged lines are the listing's to report.
struct ObjectCheck<'a> {
    ds: &'a DomainStore,
    deleted: HashSet<Box<str>>,
    checked: HashSet<[u8; 32]>,
    bad: HashSet<[u8; 32]>,
    problems: Vec<String>,
}

impl Lines for ObjectCheck<'_> {
    fn record(&mut self, _path: &Path, _line_no: usize, record: Record, _raw: &[u8]) {
        let Record::Snapshot(snap) = record else {
            return;
        };
        if self.deleted.contains(snap.id.as_str()) {
            return;
        }
        for id in [&snap.cr, &snap.crd] {
            let key = sha256_bytes(id).unwrap_or_default();
            if !self.checked.insert(key) {
                continue;
            }
            if let Err(e) = self.ds.object(id) {
                self.bad.insert(key);
                let what = crate::error::chain(&e);
                self.problems
                    .push(format!("snapshot {}: object {id}: {what}", snap.id));
            }
        }
    }

    fn damage(&mut self, _path: &Path, _line: usize, _raw: &[u8], _what: String) {}

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

/// A CRD object must be the ClusterInventory CustomResourceDefinition.
fn check_crd(text: &str) -> std::result::Result<(), Damaged> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|_| Damaged::CrdObject("not JSON"))?;
    let kind = value.get("kind").and_then(|k| k.as_str());
    let names = value.pointer("/spec/names/kind").and_then(|k| k.as_str());
    if kind == Some("CustomResourceDefinition") && names == Some("ClusterInventory") {
        Ok(())
    } else {
        Err(Damaged::CrdObject(
            "not the ClusterInventory CustomResourceDefinition",
        ))
    }
}
