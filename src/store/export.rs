//! `snapshots export` / `import`: the domains' verified records and objects as a tar
//! archive (sneaker-net), and reading one back with every line and object verified —
//! and every referenced object present — before anything is written.

use super::journal::Lines;
use super::{DomainStore, LOCK_TIMEOUT, Record, SnapshotRecord, State};
use super::{Store, journal};
use crate::domain::Domain;
use crate::error::{Error, Result, SnapshotError};
use crate::util::files;
use crate::util::hash::sha256_bytes;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// What an export wrote.
#[derive(Debug)]
pub struct Exported {
    pub domains: usize,
    pub records: usize,
    pub objects: usize,
    /// Objects left out because they are missing or damaged (the importer sees the gap).
    pub skipped: Vec<Error>,
}

/// What an import added.
#[derive(Debug, Clone, Copy)]
pub struct Imported {
    pub added: usize,
    /// Records the store already held (left untouched).
    pub kept: usize,
}

impl Store {
    /// Writes the verified records of `domains` (every domain without one) and the
    /// objects they name to `file`, streaming: memory stays that of one domain's compact
    /// listing and its set of object ids, whatever the size of the history. Each domain
    /// is read under its lock, so the archive holds a consistent state of each (a
    /// concurrent gc cannot remove an object between reading the records and the
    /// object). Deleted snapshots are left out. The archive appears whole or not at all.
    ///
    /// # Errors
    /// No records, an unreadable journal, or the archive cannot be written.
    pub fn export(&self, domains: Option<&[Domain]>, file: &Path) -> Result<Exported> {
        let io = |e| Error::io(file, e);
        let (staged, out) = files::stage_file(file, 0o600).map_err(io)?;
        let mut tar = tar::Builder::new(std::io::BufWriter::with_capacity(1 << 20, out));
        add_entry(&mut tar, "FORMAT", format!("{EXPORT_FORMAT}\n").as_bytes()).map_err(io)?;
        let mut out = Exported {
            domains: 0,
            records: 0,
            objects: 0,
            skipped: Vec::new(),
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

/// One domain into the archive: its live records (streamed, in line order), then the
/// objects they name; a domain without a live snapshot adds nothing.
fn export_domain<W: Write>(
    ds: &DomainStore,
    tar: &mut tar::Builder<W>,
    out: &mut Exported,
) -> std::result::Result<(), Failure> {
    let _lock = ds.read_lock(LOCK_TIMEOUT)?;
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
        domain: &ds.domain,
        deleted,
        part: 1,
        lines: Vec::with_capacity(EXPORT_PART + journal::MAX_LINE),
        objects: HashSet::new(),
        records: 0,
        failed: None,
    };
    ds.layout()
        .read(&mut pass)
        .map_err(|(p, e)| Error::io(p, e))?;
    if !pass.lines.is_empty() {
        pass.flush();
    }
    let ExportPass {
        objects,
        records,
        failed,
        ..
    } = pass;
    if let Some(e) = failed {
        return Err(Failure::Io(e));
    }
    let mut objects: Vec<[u8; 32]> = objects.into_iter().collect();
    objects.sort_unstable();
    let d = &ds.domain;
    for id in objects.iter().map(hex_bytes) {
        match ds.object(&id) {
            Ok(text) => add_entry(tar, &format!("{d}/objects/{id}.json"), text.as_bytes())
                .map_err(Failure::Io)?,
            Err(e) => out.skipped.push(e),
        }
    }
    out.records += records;
    out.objects += objects.len();
    out.domains += 1;
    Ok(())
}

/// The records of one domain as an export holds them: verified lines only, no `repair`
/// or `head` records (where a store stood is its own), none of a deleted snapshot; a
/// version 1 snapshot record gains its `seq`.
struct ExportPass<'a, W: Write> {
    tar: &'a mut tar::Builder<W>,
    domain: &'a Domain,
    deleted: HashSet<Box<str>>,
    part: usize,
    lines: Vec<u8>,
    objects: HashSet<[u8; 32]>,
    records: usize,
    failed: Option<std::io::Error>,
}

impl<W: Write> ExportPass<'_, W> {
    fn flush(&mut self) {
        let d = self.domain;
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
}

impl<W: Write> Lines for ExportPass<'_, W> {
    fn record(&mut self, _path: &Path, line_no: usize, record: Record, raw: &[u8]) {
        let Some(id) = record.id() else { return };
        if self.deleted.contains(id) {
            return;
        }
        match record {
            Record::Snapshot(s) => {
                let named = [&s.cr, &s.crd].map(|id| sha256_bytes(id));
                self.objects.extend(named.into_iter().flatten());
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
                    self.lines.extend_from_slice(raw);
                    self.lines.push(b'\n');
                }
            }
            _ => {
                self.lines.extend_from_slice(raw);
                self.lines.push(b'\n');
            }
        }
        self.records += 1;
        if self.lines.len() >= EXPORT_PART {
            self.flush();
        }
    }

    fn damage(&mut self, _path: &Path, _line_no: usize, _raw: &[u8], _what: String) {}

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

/// Lowercase hex of an object id's bytes.
fn hex_bytes(bytes: &[u8; 32]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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
        "{domain}/journal: snapshot {id} names object {object}, which the archive does not hold"
    )]
    Missing {
        domain: String,
        id: String,
        object: String,
    },
}
