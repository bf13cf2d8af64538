//! `snapshots import`: an export archive verified, then merged, in bounded memory.
//!
//! `snapshots import`: an export archive verified, then merged into the store, in memory
//! bounded by a constant plus 16 bytes a record (32 a snapshot: its id and its content)
//! of the domain being merged — never by
//! the size of the archive or of the history.
//!
//! The archive is read three times, streaming, one entry at a time (each within its own
//! limit): to verify every line and object checksum, to check that every object a kept
//! snapshot names is present and no record comes from the future, then to merge.
//! Nothing is written before the first two passes end; a domain that failed them is
//! not written at all. A domain's entries must be together, as `export` writes them: the
//! merge of one domain ends before the next begins.

use super::export::{EXPORT_FORMAT, ExportError, Imported};
use super::gc::{Compaction, Leaving};
use super::journal::{self, Lines};
use super::{DomainStore, Lock, MAX_JOURNAL, MAX_OBJECT, Record, SnapshotRecord};
use super::{SnapshotId, State, Store};
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::util::files;
use crate::util::hash::sha256_bytes;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::Path;

/// An entry of an archive, by its name.
enum Entry {
    Format,
    /// What the export left out (`--allow-damage`).
    LeftOut,
    Journal(Domain),
    Object(Domain, String),
}

impl Entry {
    fn of(name: &str) -> std::result::Result<Entry, ExportError> {
        let parts: Vec<&str> = name.split('/').collect();
        let domain = |d: &str| Domain::new(d).ok_or_else(|| ExportError::Unexpected(name.into()));
        match parts[..] {
            ["FORMAT"] => Ok(Entry::Format),
            [super::export::LEFT_OUT] => Ok(Entry::LeftOut),
            [d, j] if is_journal_part(j) => Ok(Entry::Journal(domain(d)?)),
            [d, "objects", obj] if crate::domain::is_valid(d) => {
                let id = obj
                    .strip_suffix(".json")
                    .filter(|i| i.len() == 64 && i.chars().all(|c| c.is_ascii_hexdigit()))
                    .ok_or_else(|| ExportError::ObjectName(name.to_string()))?;
                Ok(Entry::Object(domain(d)?, id.to_string()))
            }
            _ => Err(ExportError::Unexpected(name.to_string())),
        }
    }

    fn limit(&self) -> u64 {
        match self {
            Entry::Format => 4096,
            Entry::LeftOut => 1 << 20,
            Entry::Journal(_) => MAX_JOURNAL,
            Entry::Object(..) => MAX_OBJECT,
        }
    }
}

/// `journal` or `journal.<n>`.
fn is_journal_part(name: &str) -> bool {
    name == "journal"
        || name
            .strip_prefix("journal.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Calls `f` with every entry of the archive and its bytes, read within the entry's
/// limit: the size the reader will honour (a PAX `size` header over the ustar one) is
/// checked before anything is read, and again against the bytes actually read.
fn each_entry(
    reader: impl Read,
    mut f: impl FnMut(Entry, Vec<u8>) -> std::result::Result<(), ExportError>,
) -> std::result::Result<(), ExportError> {
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        let kind = Entry::of(&name)?;
        let (size, limit) = (entry.size(), kind.limit());
        if size > limit {
            return Err(ExportError::TooLarge { name, size, limit });
        }
        let mut data = Vec::with_capacity(usize::try_from(size + 1).unwrap_or(0));
        Read::read_to_end(&mut Read::take(&mut entry, limit + 1), &mut data)?;
        if data.len() as u64 > limit {
            return Err(ExportError::GrewTooLarge { name, limit });
        }
        f(kind, data)?;
    }
    Ok(())
}

/// The lines of a journal entry, numbered from `first`, each decoded; an entry must end
/// with a whole line.
fn each_line(
    domain: &Domain,
    first: usize,
    data: &[u8],
    mut f: impl FnMut(usize, Record, &[u8]),
) -> std::result::Result<usize, ExportError> {
    let bad = |line, what| ExportError::Line {
        domain: domain.to_string(),
        line,
        what,
    };
    let mut line_no = first;
    let complete = match data.iter().rposition(|b| *b == b'\n') {
        Some(i) => &data[..=i],
        None => &data[..0],
    };
    for line in complete.split(|b| *b == b'\n') {
        line_no += 1;
        if !line.is_empty() {
            f(
                line_no,
                journal::decode(line).map_err(|what| bad(line_no, what))?,
                line,
            );
        }
    }
    if complete.len() < data.len() {
        return Err(bad(line_no, journal::LineError::Incomplete));
    }
    Ok(line_no - 1)
}

/// What the first pass learned, per domain in archive order.
#[derive(Default)]
struct Checked {
    domains: Vec<Domain>,
    format_ok: bool,
    deleted: HashSet<(usize, Box<str>)>,
    present: HashSet<(usize, [u8; 32])>,
    /// Per domain index: how many problems, and the first few.
    refused: std::collections::BTreeMap<usize, (usize, Vec<String>)>,
    left_out: Vec<String>,
}

impl Checked {
    /// A problem that keeps domain `i` out of the import (the others go on).
    fn refuse(&mut self, i: usize, e: &ExportError) {
        let (count, first) = self.refused.entry(i).or_default();
        *count += 1;
        if first.len() < 10 {
            first.push(e.to_string());
        }
    }

    /// The index of `d`, which must be the current domain or a new one.
    fn enter(&mut self, d: Domain) -> std::result::Result<usize, ExportError> {
        if self.domains.last() == Some(&d) {
            return Ok(self.domains.len() - 1);
        }
        if self.domains.contains(&d) {
            return Err(ExportError::Scattered(d.to_string()));
        }
        self.domains.push(d);
        Ok(self.domains.len() - 1)
    }
}

/// A verified archive: its domains to import, each with its number of journal lines;
/// the domains it refuses, each with why; what its export left out.
pub struct CheckedArchive {
    pub domains: Vec<(Domain, usize)>,
    pub refused: Vec<(Domain, String)>,
    pub left_out: Vec<String>,
}

/// Verifies an archive without writing anything.
///
/// Every line checksum (first pass), then per domain every object checksum, every object a
/// kept snapshot names present (deleted snapshots are never exported), every snapshot its
/// domain's and no record recorded beyond the future tolerance (second pass). `open` gives
/// the archive from its start. A domain with such a problem is refused, the others are not
/// held hostage; a damaged line refuses the whole archive (a transfer that damaged it).
///
/// # Errors
/// What is wrong with the archive as a whole, naming the entry (and line).
pub fn check_archive<R: Read>(
    open: impl Fn() -> io::Result<R>,
) -> std::result::Result<CheckedArchive, ExportError> {
    let mut checked = Checked::default();
    let mut lines: Vec<usize> = Vec::new();
    each_entry(open()?, |entry, data| match entry {
        Entry::Format => {
            checked.format_ok = String::from_utf8_lossy(&data).trim() == EXPORT_FORMAT;
            Ok(())
        }
        Entry::LeftOut => {
            let text = String::from_utf8_lossy(&data);
            let items = text
                .lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'));
            checked.left_out = items.map(str::to_string).collect();
            Ok(())
        }
        Entry::Journal(d) => {
            let i = checked.enter(d.clone())?;
            lines.resize(checked.domains.len(), 0);
            lines[i] = each_line(&d, lines[i], &data, |_, record, _| {
                if let Record::State(st) = record
                    && st.state == State::Deleted
                {
                    checked
                        .deleted
                        .insert((i, st.id.into_string().into_boxed_str()));
                }
            })?;
            Ok(())
        }
        Entry::Object(d, id) => {
            let i = checked.enter(d.clone())?;
            match sha256_bytes(&id) {
                Some(key) if Sha256::digest(&data)[..] == key[..] => {
                    checked.present.insert((i, key));
                }
                _ => checked.refuse(
                    i,
                    &ExportError::Checksum {
                        domain: d.to_string(),
                        id,
                    },
                ),
            }
            Ok(())
        }
    })?;
    if !checked.format_ok {
        return Err(ExportError::NotAnExport);
    }
    check_complete(open()?, &mut checked, jiff::Timestamp::now())?;
    lines.resize(checked.domains.len(), 0);
    let refused = std::mem::take(&mut checked.refused);
    let mut out = CheckedArchive {
        domains: Vec::new(),
        refused: Vec::new(),
        left_out: checked.left_out,
    };
    for (i, (d, n)) in checked.domains.into_iter().zip(lines).enumerate() {
        match refused.get(&i) {
            Some((count, first)) => {
                let more = count - first.len();
                let tail = if more > 0 {
                    format!("; … and {more} more")
                } else {
                    String::new()
                };
                out.refused.push((d, format!("{}{tail}", first.join("; "))));
            }
            None => out.domains.push((d, n)),
        }
    }
    Ok(out)
}

/// The second pass: every kept snapshot belongs to its domain and its objects are
/// there; no record lies beyond the future tolerance of `now`.
fn check_complete(
    reader: impl Read,
    checked: &mut Checked,
    now: jiff::Timestamp,
) -> std::result::Result<(), ExportError> {
    let mut lines = vec![0; checked.domains.len()];
    each_entry(reader, |entry, data| {
        let Entry::Journal(d) = entry else {
            return Ok(());
        };
        let i = checked.domains.iter().position(|x| *x == d).unwrap_or(0);
        let mut wrong = Vec::new();
        lines[i] = each_line(&d, lines[i], &data, |_, record, _| {
            if super::beyond_tolerance(record.at(), now) {
                wrong.push(ExportError::Future {
                    domain: d.to_string(),
                    id: record.id().unwrap_or_default().to_string(),
                    at: record.at().to_string(),
                    now: crate::util::time::format_seconds(now),
                });
            }
            let Record::Snapshot(s) = record else { return };
            if checked.deleted.contains(&(i, s.id.as_str().into())) {
                return;
            }
            wrong.extend(problem(&d, i, &s, checked));
        })?;
        for e in &wrong {
            checked.refuse(i, e);
        }
        Ok(())
    })
}

/// What is wrong with a kept snapshot of domain `d` (index `i`), if anything.
fn problem(d: &Domain, i: usize, s: &SnapshotRecord, checked: &Checked) -> Option<ExportError> {
    if *d != s.domain.as_str() {
        return Some(ExportError::Foreign {
            domain: d.to_string(),
            id: s.id.to_string(),
            owner: s.domain.clone(),
        });
    }
    let missing = [&s.cr, &s.crd]
        .into_iter()
        .find(|id| sha256_bytes(id).is_none_or(|key| !checked.present.contains(&(i, key))))?;
    Some(ExportError::Missing {
        domain: d.to_string(),
        id: s.id.to_string(),
        object: missing.clone(),
    })
}

/// A record's identity for the merge, 16 bytes: a snapshot by its id (one the store
/// holds is never added again), a state change or event by its whole content.
fn key(record: &Record) -> Option<[u8; 16]> {
    match record {
        Record::Snapshot(s) => Some(owner_key(&s.id)),
        Record::State(_) | Record::Event(_) | Record::Supersede(_) => {
            Some(short(&serde_json::to_vec(record).ok()?))
        }
        Record::Repair(_) | Record::Head(_) => None,
    }
}

/// What a snapshot record says, whatever store numbered it: held beside its id, so the
/// same id with another inventory, time or target is a conflict, not "already held".
fn content_key(s: &SnapshotRecord) -> [u8; 16] {
    let same = SnapshotRecord {
        v: 0,
        seq: None,
        ..s.clone()
    };
    let json = serde_json::to_vec(&same).unwrap_or_default();
    short(&[b"content\0", json.as_slice()].concat())
}

/// The key of the snapshot `id` (what a state change or event belongs to).
fn owner_key(id: &str) -> [u8; 16] {
    short(&[b"snapshot\0", id.as_bytes()].concat())
}

/// The first 16 bytes of the sha256 of `bytes`.
fn short(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&Sha256::digest(bytes)[..16]);
    out
}

/// The order key (at, seq, id) of a snapshot record (`seq` already effective).
type Order = (String, u64, SnapshotId);

/// What a domain already holds, read once under its lock: every record's key, how many
/// records, the newest snapshot and whether its lines (then the added ones) are in the
/// order.
#[derive(Default)]
struct Held {
    keys: HashSet<[u8; 16]>,
    records: usize,
    newest: Option<Order>,
    ordered: bool,
}

impl Lines for Held {
    fn record(&mut self, _path: &Path, line_no: usize, record: Record, _raw: &[u8]) {
        if let Record::Snapshot(s) = &record {
            let order = (s.at.clone(), s.seq.unwrap_or(line_no as u64), s.id.clone());
            if self.newest.as_ref().is_some_and(|n| *n > order) {
                self.ordered = false;
            } else {
                self.newest = Some(order);
            }
        }
        if matches!(
            record,
            Record::Snapshot(_) | Record::State(_) | Record::Event(_) | Record::Supersede(_)
        ) {
            self.records += 1;
        }
        if let Some(k) = key(&record) {
            self.keys.insert(k);
        }
        if let Record::Snapshot(s) = &record {
            self.keys.insert(content_key(s));
        }
    }

    fn damage(&mut self, _path: &Path, _line_no: usize, _raw: &[u8], _what: String) {}

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

/// One domain being merged: its lock, what it holds, the records to add (spilled to a
/// staged file, not held), and where the history's head will stand.
struct Merge {
    ds: DomainStore,
    _lock: Lock,
    /// A signal waits for the domain's merge (its spill file is removed either way).
    _critical: crate::util::signals::Critical,
    held: Held,
    spill: BufWriter<std::fs::File>,
    staged: files::Staged,
    added: usize,
    /// What was added and found, by kind (`added` above is their sum).
    counts: Imported,
    head: Option<(String, u64)>,
    line: usize,
    /// A snapshot of the archive whose id the domain holds with another content: the
    /// domain is refused, nothing of it written.
    conflict: Option<SnapshotId>,
}

impl Merge {
    /// Starts merging `lines` archive lines into `ds`: its lock, what it holds (the key
    /// set sized for both at once: growing it would hold two tables).
    fn start(ds: DomainStore, lines: usize) -> Result<Merge> {
        let lock = ds.lock("import", super::lock_timeout()?)?;
        ds.check_dirs()?;
        ds.ensure_dirs()?;
        let mut held = Held {
            ordered: true,
            ..Held::default()
        };
        ds.layout()
            .read(&mut held)
            .map_err(|(p, e)| Error::io(p, e))?;
        held.keys.reserve(lines);
        let spill_path = ds.dir().join("import");
        let (staged, file) =
            files::stage_file(&spill_path, 0o600).map_err(|e| Error::io(&spill_path, e))?;
        Ok(Merge {
            ds,
            _lock: lock,
            _critical: crate::util::signals::critical(),
            held,
            spill: BufWriter::with_capacity(1 << 20, file),
            staged,
            added: 0,
            counts: Imported::default(),
            head: None,
            line: 0,
            conflict: None,
        })
    }

    /// One verified record of the archive: added unless held (a state change or event
    /// only for a snapshot the domain holds or gains); a version 1 snapshot record takes
    /// its line number in the archive as `seq`, as a version 1 journal does.
    fn add(&mut self, line_no: usize, record: Record, raw: &[u8]) -> io::Result<()> {
        if let Some(seq) = record.seq() {
            self.bump(record.at(), seq);
        }
        let (Some(k), owner) = (key(&record), owner_of(&record)) else {
            return Ok(());
        };
        if self.conflict.is_some() {
            return Ok(());
        }
        if let Record::Snapshot(s) = &record
            && self.held.keys.contains(&k)
            && !self.held.keys.contains(&content_key(s))
        {
            self.conflict = Some(s.id.clone());
            return Ok(());
        }
        if self.held.keys.contains(&k) {
            self.counts.already += 1;
            return Ok(());
        }
        if let Record::Snapshot(s) = &record {
            self.held.keys.insert(content_key(s));
        }
        if owner.is_some_and(|o| !self.held.keys.contains(&o)) {
            self.counts.orphaned += 1;
            return Ok(());
        }
        self.held.keys.insert(k);
        self.added += 1;
        match &record {
            Record::Snapshot(_) => self.counts.snapshots += 1,
            Record::State(_) | Record::Supersede(_) => self.counts.changes += 1,
            _ => self.counts.folded += 1,
        }
        match record {
            Record::Snapshot(s) => {
                let seq = s.seq.unwrap_or(line_no as u64);
                self.bump(&s.at, seq);
                let order = (s.at.clone(), seq, s.id.clone());
                if self.held.newest.as_ref().is_some_and(|n| *n > order) {
                    self.held.ordered = false;
                } else {
                    self.held.newest = Some(order);
                }
                let s = SnapshotRecord {
                    seq: Some(seq),
                    ..s
                };
                let line = journal::encode(&Record::Snapshot(s)).map_err(io::Error::other)?;
                self.spill.write_all(line.as_bytes())
            }
            _ => {
                self.spill.write_all(raw)?;
                self.spill.write_all(b"\n")
            }
        }
    }

    fn bump(&mut self, at: &str, seq: u64) {
        let head = self.head.get_or_insert_with(|| (at.to_string(), seq));
        if at > head.0.as_str() {
            head.0 = at.to_string();
        }
        head.1 = head.1.max(seq);
    }

    /// Writes the merged generation — the held lines as they are, then the added ones —
    /// and switches to it. Ordered only when every added snapshot comes after the held
    /// ones, in order.
    fn finish(self, out: &mut Imported) -> Result<()> {
        out.kept += self.held.records;
        if let Some(id) = &self.conflict {
            out.refused.push((
                self.ds.domain.clone(),
                format!(
                    "snapshot {id} differs from the one this store holds under that id (a record changed after it was recorded, or recorded by another store): nothing of the domain imported"
                ),
            ));
            return Ok(());
        }
        out.added += self.added;
        out.snapshots += self.counts.snapshots;
        out.changes += self.counts.changes;
        out.folded += self.counts.folded;
        out.already += self.counts.already;
        out.orphaned += self.counts.orphaned;
        if self.added == 0 {
            return Ok(());
        }
        let Merge {
            ds,
            held,
            spill,
            staged,
            head,
            ..
        } = self;
        let spill_err = |e: io::Error| Error::io(ds.dir(), e);
        let file = spill.into_inner().map_err(|e| spill_err(e.into_error()))?;
        drop(file);
        let file = staged.read_back().map_err(spill_err)?;
        let layout = ds.layout();
        let ordered = held.ordered;
        drop(held);
        let mut pass = Compaction::run(&layout, Leaving::none(), ordered)?;
        let mut reader = io::BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).map_err(spill_err)? > 0 {
            pass.out.push(&line).map_err(spill_err)?;
            line.clear();
        }
        if let Some((at, seq)) = head {
            pass.bump(&at, seq);
        }
        pass.switch(&layout)?;
        drop(staged);
        Ok(())
    }
}

/// The snapshot key a state change or event needs held.
fn owner_of(record: &Record) -> Option<[u8; 16]> {
    match record {
        Record::State(st) => Some(owner_key(&st.id)),
        Record::Event(ev) => Some(owner_key(&ev.id)),
        _ => None,
    }
}

impl Store {
    /// Imports an export archive: verifies all of it (lines, object checksums, every
    /// object a kept snapshot names present, no record from beyond the future
    /// tolerance) without writing, then per domain, under its lock, writes the objects
    /// and a merged generation of the journal (the order is (at, seq, id) whatever the
    /// lines' places, so an imported older snapshot never becomes the newest). A domain
    /// that does not verify is left out whole — nothing of it written — and named in
    /// [`Imported::refused`]; the others are imported.
    ///
    /// # Errors
    /// Not a regular file, an archive whose lines do not verify (nothing is written),
    /// or a write failure.
    pub fn import(&self, file: &Path) -> Result<Imported> {
        let invalid = |e: ExportError| Error::InvalidFile {
            path: file.to_path_buf(),
            message: e.to_string(),
        };
        let open = || -> io::Result<io::BufReader<std::fs::File>> {
            let reader = std::fs::File::open(file)?;
            if !reader.metadata()?.is_file() {
                return Err(io::Error::other("not a regular file"));
            }
            Ok(io::BufReader::with_capacity(1 << 20, reader))
        };
        open().map_err(|e| Error::io(file, e))?;
        let verified = check_archive(open).map_err(invalid)?;
        let domains = verified.domains;
        let mut out = Imported {
            exported_without: verified.left_out,
            refused: verified.refused,
            ..Imported::default()
        };
        let mut merge: Option<Merge> = None;
        let mut failed: Option<Error> = None;
        let reader = open().map_err(|e| Error::io(file, e))?;
        each_entry(reader, |entry, data| {
            let result = self.merge_entry((file, &domains), &mut merge, &mut out, entry, &data);
            result.map_err(|e| {
                failed = Some(e);
                ExportError::Unexpected(String::new())
            })
        })
        .map_err(|e| failed.take().unwrap_or_else(|| invalid(e)))?;
        if let Some(m) = merge {
            m.finish(&mut out)?;
        }
        Ok(out)
    }

    /// One entry of the merge pass: a domain's journal lines go to its [`Merge`], its
    /// objects into its folder; a new domain ends the previous one's merge.
    fn merge_entry(
        &self,
        (file, domains): (&Path, &[(Domain, usize)]),
        merge: &mut Option<Merge>,
        out: &mut Imported,
        entry: Entry,
        data: &[u8],
    ) -> Result<()> {
        let d = match &entry {
            Entry::Format | Entry::LeftOut => return Ok(()),
            Entry::Journal(d) | Entry::Object(d, _) => d,
        };
        if !domains.iter().any(|(x, _)| x == d) {
            // A refused domain: nothing of it is written.
            return Ok(());
        }
        if merge.as_ref().is_none_or(|m| m.ds.domain != *d) {
            if let Some(m) = merge.take() {
                m.finish(out)?;
            }
            let lines = domains.iter().find(|(x, _)| x == d).map_or(0, |(_, n)| *n);
            *merge = Some(Merge::start(self.domain(d), lines)?);
        }
        let Some(m) = merge.as_mut() else {
            return Ok(());
        };
        match entry {
            Entry::Journal(d) => {
                let mut failed = None;
                m.line = each_line(&d, m.line, data, |no, record, raw| {
                    if failed.is_none() {
                        failed = m.add(no, record, raw).err();
                    }
                })
                .map_err(|e| Error::InvalidFile {
                    path: file.to_path_buf(),
                    message: e.to_string(),
                })?;
                failed.map_or(Ok(()), |e| Err(Error::io(m.ds.dir(), e)))
            }
            // Nothing of a refused domain is written.
            Entry::Object(..) if m.conflict.is_some() => Ok(()),
            Entry::Object(_, id) => m.ds.import_object(&id, data).map(|_| ()),
            Entry::Format | Entry::LeftOut => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_records_apart_by_what_the_merge_compares() {
        let snap = |id: &str, at: &str| {
            let json = serde_json::json!({"kind": "snapshot", "v": 2, "id": id, "at": at,
                "domain": "d", "renderedAt": at, "specHash": "h", "lok8sVersion": "1",
                "tool": "clinv", "cr": "c", "crd": "c"});
            serde_json::from_value::<Record>(json).unwrap()
        };
        // A snapshot by its id only; anything else by its whole content.
        assert_eq!(key(&snap("a", "1")), key(&snap("a", "2")));
        assert_ne!(key(&snap("a", "1")), key(&snap("b", "1")));
        assert_eq!(key(&snap("a", "1")), Some(owner_key("a")));
        let st = |at: &str| {
            Record::State(super::super::StateRecord::new(
                &"a".into(),
                at,
                State::Applied,
            ))
        };
        assert_eq!(key(&st("1")), key(&st("1")));
        assert_ne!(key(&st("1")), key(&st("2")));
    }
}
