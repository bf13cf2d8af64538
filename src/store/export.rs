//! `snapshots export` / `import`: the store's domains as a verified tar archive.
//!
//! `snapshots export` / `import`: the domains' verified records and objects as a tar
//! archive (sneaker-net), and reading one back with every line and object verified —
//! and every referenced object present — before anything is written.

use super::journal::Lines;
use super::{DomainStore, Record, SnapshotRecord, State};
use super::{Store, journal};
use crate::domain::Domain;
use crate::error::{Damaged, Error, Result, SnapshotError};
use crate::util::files;
use crate::util::hash::sha256_bytes;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

/// What an export wrote.
#[derive(Debug)]
pub struct Exported {
    pub domains: usize,
    pub records: usize,
    /// Objects written (never one it left out).
    pub objects: usize,
    /// What it left out. Empty: the archive is whole.
    pub left_out: LeftOut,
}

/// What an export left out, one line each, named relative to the store
/// (`<domain>/journal:3: …`, `<domain>/objects/<id>.json: missing — …`): the archive's
/// `LEFT-OUT` entry holds the same lines.
///
/// At most [`LeftOut::LISTED`] are held (a store damaged throughout must not grow the
/// export's memory); the rest are counted.
#[derive(Debug, Default)]
pub struct LeftOut {
    pub lines: Vec<String>,
    pub more: usize,
}

impl LeftOut {
    const LISTED: usize = 1000;

    fn push(&mut self, line: String) {
        if self.lines.len() < Self::LISTED {
            self.lines.push(line);
        } else {
            self.more += 1;
        }
    }

    pub fn count(&self) -> usize {
        self.lines.len() + self.more
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The `LEFT-OUT` entry: a comment line, then one line per item.
    fn manifest(&self) -> String {
        let mut text = String::from(
            "# clinv snapshots export --allow-damage: left out of this archive (damaged or missing in the exporting store)\n",
        );
        for line in &self.lines {
            // Each line at most 512 bytes, so the entry stays within import's 1 MiB.
            let line = crate::util::redact::escape_line(line);
            let mut end = line.len().min(512);
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            text.push_str(&line[..end]);
            text.push('\n');
        }
        if self.more > 0 {
            text.push_str(&format!("… and {} more\n", self.more));
        }
        text
    }
}

/// The name of the archive entry that lists what an export left out.
pub const LEFT_OUT: &str = "LEFT-OUT";

/// What an import added, by kind, and what it found held: `added` and `already` make
/// the archive's records of the imported domains (with `orphaned`), `kept` and `added`
/// the store's records after it.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// Records added: `snapshots`, `changes` and `folded` together.
    pub added: usize,
    pub snapshots: usize,
    /// State changes (delivered, superseded, …).
    pub changes: usize,
    /// Repeated publishes of an identical inventory, folded into their snapshot (events).
    pub folded: usize,
    /// Records of the archive the store already held.
    pub already: usize,
    /// State changes and events of a snapshot in neither the archive nor the store.
    pub orphaned: usize,
    /// Records the store already held (left untouched).
    pub kept: usize,
    /// The archive's `LEFT-OUT` lines: what its export left out.
    pub exported_without: Vec<String>,
    /// Domains not imported (nothing of them written), each with why.
    pub refused: Vec<(Domain, String)>,
}

impl Store {
    /// Writes the verified records of `domains` (every domain without one) and the
    /// objects they name to `file`, streaming: memory stays that of one domain's compact
    /// listing and its set of object ids, whatever the size of the history. Each domain
    /// is read under its lock, so the archive holds a consistent state of each (a
    /// concurrent gc cannot remove an object between reading the records and the
    /// object). Deleted snapshots are left out. The archive appears whole or not at all.
    ///
    /// An export is whole or says what it left out: a damaged journal line, a missing or
    /// damaged object refuse it (nothing written) unless `allow_damage`; then the
    /// damaged lines and every snapshot naming a missing object (with its state
    /// changes) are left out, so the archive imports whole, and its `LEFT-OUT` entry
    /// lists them — the caller exits non-zero either way.
    ///
    /// # Errors
    /// No records, an unreadable journal, damage without `allow_damage`, or the archive
    /// cannot be written.
    pub fn export(
        &self,
        domains: Option<&[Domain]>,
        file: &Path,
        allow_damage: bool,
    ) -> Result<Exported> {
        let io = |e| Error::io(file, e);
        let (staged, out) = files::stage_file(file, 0o600).map_err(io)?;
        let mut tar = tar::Builder::new(std::io::BufWriter::with_capacity(1 << 20, out));
        add_entry(&mut tar, "FORMAT", format!("{EXPORT_FORMAT}\n").as_bytes()).map_err(io)?;
        let mut out = Exported {
            domains: 0,
            records: 0,
            objects: 0,
            left_out: LeftOut::default(),
        };
        for d in self.select(domains) {
            export_domain(&self.domain(&d), &mut tar, &mut out).map_err(|e| match e {
                Failure::Io(e) => io(e),
                Failure::Store(e) => e,
            })?;
        }
        if out.domains == 0 {
            return Err(SnapshotError::NoneIn {
                domain: domains.map(|d| {
                    let names: Vec<&str> = d.iter().map(Domain::as_str).collect();
                    names.join(", ")
                }),
                store: self.root().to_path_buf(),
            }
            .into());
        }
        if !out.left_out.is_empty() {
            if !allow_damage {
                return Err(Damaged::ExportRefused {
                    count: out.left_out.count(),
                    first: out.left_out.lines.iter().take(20).cloned().collect(),
                }
                .into());
            }
            let manifest = out.left_out.manifest();
            add_entry(&mut tar, LEFT_OUT, manifest.as_bytes()).map_err(io)?;
        }
        let writer = tar.into_inner().map_err(io)?;
        let file_out = writer.into_inner().map_err(|e| io(e.into_error()))?;
        staged.commit_file(file_out).map_err(io)?;
        Ok(out)
    }
}

/// Why a domain could not be exported: the store's own error, or writing the archive.
enum Failure {
    Store(Error),
    Io(std::io::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Store(e)
    }
}

/// One domain into the archive: its live records (streamed, in line order) and the
/// objects they name, each written when a record first names it; a domain without a
/// live snapshot adds nothing.
fn export_domain<W: Write>(
    ds: &DomainStore,
    tar: &mut tar::Builder<W>,
    out: &mut Exported,
) -> std::result::Result<(), Failure> {
    let _lock = ds.read_lock(super::lock_timeout()?)?;
    let listing = ds.listing()?;
    let deleted: HashSet<Box<str>> = listing
        .rows()
        .filter(|r| r.state() == State::Deleted)
        .map(|r| Box::from(&*r.id()))
        .collect();
    if deleted.len() == listing.len() {
        return Ok(());
    }
    drop(listing);
    let mut pass = ExportPass {
        tar,
        ds,
        deleted,
        part: 1,
        lines: Vec::with_capacity(EXPORT_PART + journal::MAX_LINE),
        objects: HashSet::new(),
        bad: HashMap::new(),
        left: HashSet::new(),
        left_out: &mut out.left_out,
        records: 0,
        failed: None,
    };
    ds.layout()
        .read(&mut pass)
        .map_err(|(p, e)| Error::io(p, e))?;
    if !pass.lines.is_empty() {
        pass.flush();
    }
    let (objects, records, failed) = (pass.objects.len(), pass.records, pass.failed);
    if let Some(e) = failed {
        return Err(Failure::Io(e));
    }
    out.records += records;
    out.objects += objects;
    out.domains += 1;
    Ok(())
}

/// The records of one domain as an export holds them: verified lines only, no `repair`
/// or `head` records (where a store stood is its own), none of a deleted snapshot; a
/// version 1 snapshot record gains its `seq`. A snapshot whose object is missing or
/// damaged is left out with its state changes, and said so.
struct ExportPass<'a, W: Write> {
    tar: &'a mut tar::Builder<W>,
    ds: &'a DomainStore,
    deleted: HashSet<Box<str>>,
    part: usize,
    lines: Vec<u8>,
    /// Objects written.
    objects: HashSet<[u8; 32]>,
    /// Objects that could not be read whole, with why.
    bad: HashMap<[u8; 32], String>,
    /// Snapshots left out.
    left: HashSet<Box<str>>,
    left_out: &'a mut LeftOut,
    records: usize,
    failed: Option<std::io::Error>,
}

impl<W: Write> ExportPass<'_, W> {
    fn flush(&mut self) {
        let d = &self.ds.domain;
        let name = match self.part {
            1 => format!("{d}/journal"),
            n => format!("{d}/journal.{n}"),
        };
        self.part += 1;
        if self.failed.is_none() {
            self.failed = add_entry(self.tar, &name, &self.lines).err();
        }
        self.lines.clear();
    }

    /// Writes the objects of `s` not yet written; why one cannot be, if so.
    fn objects_of(&mut self, s: &SnapshotRecord) -> Option<String> {
        let d = &self.ds.domain;
        for id in [&s.cr, &s.crd] {
            let Some(key) = sha256_bytes(id) else {
                return Some(format!("object id {id:?} is not a sha256"));
            };
            if self.objects.contains(&key) {
                continue;
            }
            if let Some(why) = self.bad.get(&key) {
                return Some(format!("{d}/objects/{id}.json: {why}"));
            }
            match self.ds.object(id) {
                Ok(text) => {
                    let name = format!("{d}/objects/{id}.json");
                    if self.failed.is_none() {
                        self.failed = add_entry(self.tar, &name, text.as_bytes()).err();
                    }
                    self.objects.insert(key);
                }
                Err(e) => {
                    let why = unreadable(&e);
                    let line = format!("{d}/objects/{id}.json: {why}");
                    self.bad.insert(key, why);
                    return Some(line);
                }
            }
        }
        None
    }

    fn push_line(&mut self, line: &[u8]) {
        self.lines.extend_from_slice(line);
        self.lines.push(b'\n');
    }
}

/// Why an object could not be read whole, without the store's own path.
fn unreadable(e: &Error) -> String {
    match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            "missing".to_string()
        }
        Error::Io { source, .. } => source.to_string(),
        Error::InvalidFile { message, .. } => message.clone(),
        other => crate::error::chain(other),
    }
}

impl<W: Write> Lines for ExportPass<'_, W> {
    fn record(&mut self, _path: &Path, line_no: usize, record: Record, raw: &[u8]) {
        if matches!(record, Record::Supersede(_)) {
            return self.push_line(raw); // names no snapshot: kept in its place
        }
        let Some(id) = record.id() else { return };
        if self.deleted.contains(id) || self.left.contains(id) {
            return;
        }
        match record {
            Record::Snapshot(s) => {
                if let Some(why) = self.objects_of(&s) {
                    let id = s.id.as_str();
                    self.left_out
                        .push(format!("{why} — snapshot {id} ({}) left out", s.at));
                    self.left.insert(Box::from(id));
                    return;
                }
                if s.seq.is_none() {
                    let s = SnapshotRecord {
                        seq: Some(line_no as u64),
                        ..s
                    };
                    match journal::encode(&Record::Snapshot(s)) {
                        Ok(line) => self.lines.extend_from_slice(line.as_bytes()),
                        Err(e) => self.failed = Some(std::io::Error::other(e)),
                    }
                } else {
                    self.push_line(raw);
                }
            }
            _ => self.push_line(raw),
        }
        self.records += 1;
        if self.lines.len() >= EXPORT_PART {
            self.flush();
        }
    }

    fn damage(&mut self, path: &Path, line_no: usize, _raw: &[u8], what: String) {
        let root = self.ds.dir().parent().unwrap_or(Path::new(""));
        let rel = path.strip_prefix(root).unwrap_or(path);
        self.left_out
            .push(format!("{}:{line_no}: {what}", rel.display()));
    }

    fn torn_tail(&mut self, _bytes: u64) {}

    fn take_torn_tail(&mut self) -> u64 {
        0
    }
}

/// One archive entry as every export writes it: mode 0600, time 0.
fn add_entry<W: Write>(tar: &mut tar::Builder<W>, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(0);
    header.set_cksum();
    tar.append_data(&mut header, name, bytes)
}

/// Journal entries of an archive are cut at whole lines past this size
/// (`<domain>/journal`, `<domain>/journal.2`, …).
const EXPORT_PART: usize = 4 << 20;

/// The first entry of a snapshot export archive (`snapshots export`).
pub const EXPORT_FORMAT: &str = "clinv-snapshots/v1";

/// Why an archive is not a snapshot export clinv can import.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}")]
    Read(#[from] std::io::Error),
    #[error("entry {name:?}: {size} bytes is over the limit ({limit} bytes per entry)")]
    TooLarge { name: String, size: u64, limit: u64 },
    #[error("entry {name:?}: over the limit ({limit} bytes per entry)")]
    GrewTooLarge { name: String, limit: u64 },
    #[error("unexpected entry {0}")]
    ObjectName(String),
    #[error("unexpected entry {0:?} (not a clinv snapshot export)")]
    Unexpected(String),
    #[error("not a {EXPORT_FORMAT} archive")]
    NotAnExport,
    #[error("{domain}/journal:{line}: {what}")]
    Line {
        domain: String,
        line: usize,
        what: journal::LineError,
    },
    #[error("entries of domain {0} are not together (as export writes them)")]
    Scattered(String),
    #[error("{domain}/objects/{id}.json: content does not match its checksum")]
    Checksum { domain: String, id: String },
    #[error("{domain}/journal: snapshot {id} belongs to {owner}")]
    Foreign {
        domain: String,
        id: String,
        owner: String,
    },
    #[error(
        "{domain}/journal: a record of snapshot {id} was recorded at {at}, in the future: more than {} h after this machine's clock ({now}); the exporting machine's clock was wrong",
        super::FUTURE_TOLERANCE_HOURS
    )]
    Future {
        domain: String,
        id: String,
        at: String,
        now: String,
    },
    #[error(
        "{domain}/journal: snapshot {id} names object {object}, which the archive does not hold"
    )]
    Missing {
        domain: String,
        id: String,
        object: String,
    },
}
