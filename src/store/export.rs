//! `snapshots export` / `import`: the domains' verified records and objects as a tar
//! archive (sneaker-net), and reading one back with every line and object verified —
//! and every referenced object present — before anything is written.

use super::{LOCK_TIMEOUT, MAX_JOURNAL, MAX_OBJECT, Record, State, Store, journal, journal_lines};
use crate::domain::Domain;
use crate::error::{Error, Result, SnapshotError};
use crate::util::hash::hex_sha256;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
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
    /// objects they name to `file`. Each domain is read under its lock, so the archive
    /// holds a consistent state of each (a concurrent gc cannot remove an object
    /// between reading the records and the object). Deleted snapshots are left out.
    ///
    /// # Errors
    /// No records, an unreadable journal, or the archive cannot be written.
    pub fn export(&self, domain: Option<&Domain>, file: &Path) -> Result<Exported> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut add = |name: &str, bytes: &[u8]| -> Result<()> {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o600);
            header.set_mtime(0);
            header.set_cksum();
            tar.append_data(&mut header, name, bytes)
                .map_err(|e| Error::io(file, e))
        };
        add("FORMAT", format!("{EXPORT_FORMAT}\n").as_bytes())?;
        let mut out = Exported {
            domains: 0,
            records: 0,
            objects: 0,
            skipped: Vec::new(),
        };
        for d in self.select(domain) {
            let ds = self.domain(&d);
            let _lock = ds.read_lock(LOCK_TIMEOUT)?;
            let mut journal = ds.read()?;
            journal.snapshots.retain(|s| s.state != State::Deleted);
            if journal.snapshots.is_empty() {
                continue;
            }
            let mut objects = BTreeSet::new();
            let mut lines = String::new();
            let mut part = 1;
            let mut flush = |lines: &mut String, add: &mut dyn FnMut(&str, &[u8]) -> Result<()>| {
                let name = match part {
                    1 => format!("{d}/journal"),
                    n => format!("{d}/journal.{n}"),
                };
                part += 1;
                let r = add(&name, lines.as_bytes());
                lines.clear();
                r
            };
            for r in journal_lines(&journal) {
                if let Record::Snapshot(s) = &r {
                    objects.insert(s.cr.clone());
                    objects.insert(s.crd.clone());
                }
                lines.push_str(
                    &journal::encode(&r).map_err(|e| Error::encode("a journal record", e))?,
                );
                out.records += 1;
                if lines.len() >= EXPORT_PART {
                    flush(&mut lines, &mut add)?;
                }
            }
            if !lines.is_empty() {
                flush(&mut lines, &mut add)?;
            }
            for id in &objects {
                match ds.object(id) {
                    Ok(text) => add(&format!("{d}/objects/{id}.json"), text.as_bytes())?,
                    Err(e) => out.skipped.push(e),
                }
            }
            out.objects += objects.len();
            out.domains += 1;
        }
        if out.domains == 0 {
            return Err(SnapshotError::NoneIn {
                domain: domain.map(Domain::to_string),
                store: self.root().to_path_buf(),
            }
            .into());
        }
        let bytes = tar.into_inner().map_err(|e| Error::io(file, e))?;
        crate::util::files::write_atomic(file, &bytes, 0o600).map_err(|e| Error::io(file, e))?;
        Ok(out)
    }

    /// Imports an export archive: verifies all of it (lines, object checksums, every
    /// object a kept snapshot names present), then per domain, under its lock, writes
    /// the objects and a merged generation of the journal (merged by the order, so an
    /// imported older snapshot never becomes the newest).
    ///
    /// # Errors
    /// Not a regular file, an archive that does not verify, or a write failure.
    pub fn import(&self, file: &Path) -> Result<Imported> {
        // Streamed, not read whole (see read_export).
        let reader = std::fs::File::open(file).map_err(|e| Error::io(file, e))?;
        if !reader.metadata().map_err(|e| Error::io(file, e))?.is_file() {
            return Err(Error::InvalidFile {
                path: file.to_path_buf(),
                message: "not a regular file".into(),
            });
        }
        let Export { journals, objects } =
            read_export(std::io::BufReader::new(reader)).map_err(|e| Error::InvalidFile {
                path: file.to_path_buf(),
                message: e.to_string(),
            })?;
        let mut out = Imported { added: 0, kept: 0 };
        for (d, records) in journals {
            let ds = self.domain(&d);
            let _lock = ds.lock("import", LOCK_TIMEOUT)?;
            let _critical = crate::util::signals::critical();
            for (od, id, data) in &objects {
                if *od == d {
                    ds.import_object(id, data)?;
                }
            }
            let local = ds.read_for_rewrite()?;
            let before = local
                .snapshots
                .iter()
                .map(|s| 1 + s.history.len())
                .sum::<usize>();
            let (merged, added) = journal::merge(local, records);
            out.kept += before;
            out.added += added;
            if added > 0 {
                ds.rewrite(&merged)?;
            }
        }
        Ok(out)
    }
}

/// Journal entries of an archive are cut at whole lines past this size
/// (`<domain>/journal`, `<domain>/journal.2`, …).
const EXPORT_PART: usize = 4 << 20;

/// The first entry of a snapshot export archive (`snapshots export`).
pub const EXPORT_FORMAT: &str = "clinv-snapshots/v1";

/// A snapshot export archive, read and verified.
#[derive(Debug, Default)]
pub struct Export {
    /// Per domain, its records in journal order.
    pub journals: Vec<(Domain, Vec<Record>)>,
    /// `(domain, object id, bytes)`; every id is the sha256 of its bytes.
    pub objects: Vec<(Domain, String, Vec<u8>)>,
}

/// Most bytes an import holds in memory (it verifies everything before writing).
pub const MAX_IMPORT: u64 = 256 << 20;

/// Why an archive is not a snapshot export clinv can import.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}")]
    Read(#[from] std::io::Error),
    #[error(
        "entry {name:?}: {size} bytes is over the limit ({limit} bytes per entry, {MAX_IMPORT} in all)"
    )]
    TooLarge { name: String, size: u64, limit: u64 },
    #[error("entry {name:?}: over the limit ({limit} bytes per entry, {MAX_IMPORT} in all)")]
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

/// The entries of an archive, as read: its journals (parts joined) and objects.
#[derive(Default)]
struct Entries {
    format_ok: bool,
    journals: Vec<(Domain, Vec<u8>)>,
    objects: Vec<(Domain, String, Vec<u8>)>,
    /// Bytes held so far.
    held: u64,
}

/// Reads a snapshot export archive (a tar: `FORMAT`, `<domain>/journal`,
/// `<domain>/objects/<sha256>.json`) and verifies every journal line and every object
/// checksum, so an import writes nothing from an archive that does not verify. Streamed:
/// each entry is checked against its own limit from its header before its data is read,
/// and the total held in memory is bounded by [`MAX_IMPORT`].
///
/// # Errors
/// What is wrong, naming the entry (and line).
pub fn read_export(reader: impl Read) -> std::result::Result<Export, ExportError> {
    let mut archive = tar::Archive::new(reader);
    let mut entries = Entries::default();
    for entry in archive.entries()? {
        entries.add(entry?)?;
    }
    if !entries.format_ok {
        return Err(ExportError::NotAnExport);
    }
    let mut parsed: Vec<(Domain, Vec<Record>)> = Vec::new();
    for (d, data) in &entries.journals {
        let records = journal::parse_export(data).map_err(|(line, what)| ExportError::Line {
            domain: d.to_string(),
            line,
            what,
        })?;
        parsed.push((d.clone(), records));
    }
    check_complete(&parsed, &entries.objects)?;
    Ok(Export {
        journals: parsed,
        objects: entries.objects,
    })
}

impl Entries {
    /// Reads one entry within its limit and files it.
    fn add<R: Read>(
        &mut self,
        mut entry: tar::Entry<'_, R>,
    ) -> std::result::Result<(), ExportError> {
        let name = entry.path()?.to_string_lossy().into_owned();
        let parts: Vec<&str> = name.split('/').collect();
        let limit = match parts.last() {
            Some(j) if is_journal_part(j) => MAX_JOURNAL,
            Some(&"FORMAT") => 4096,
            _ => MAX_OBJECT,
        };
        // The size the reader will honour — a PAX `size` header over the ustar one — is
        // checked before anything is read, and the bounds apply again to the bytes
        // actually read: no entry bigger than its limit, nor the whole more than
        // MAX_IMPORT.
        let size = entry.size();
        if size > limit || self.held.saturating_add(size) > MAX_IMPORT {
            return Err(ExportError::TooLarge { name, size, limit });
        }
        let room = limit.min(MAX_IMPORT - self.held);
        // Sized up front (the declared size is within the bounds), so reading never
        // doubles the buffer past what the entry holds.
        let mut data = Vec::with_capacity(usize::try_from(size.min(room) + 1).unwrap_or(0));
        Read::read_to_end(&mut Read::take(&mut entry, room + 1), &mut data)?;
        let size = data.len() as u64;
        self.held += size.min(room);
        if size > room {
            return Err(ExportError::GrewTooLarge { name, limit });
        }
        self.file(&name, &parts, data)
    }

    fn file(
        &mut self,
        name: &str,
        parts: &[&str],
        data: Vec<u8>,
    ) -> std::result::Result<(), ExportError> {
        match parts {
            ["FORMAT"] => self.format_ok = String::from_utf8_lossy(&data).trim() == EXPORT_FORMAT,
            [d, j] if is_journal_part(j) && crate::domain::is_valid(d) => {
                match self.journals.iter_mut().find(|(jd, _)| jd == d) {
                    Some((_, all)) => all.extend_from_slice(&data),
                    None => self.journals.push((
                        Domain::new(d).ok_or_else(|| ExportError::Unexpected(name.to_string()))?,
                        data,
                    )),
                }
            }
            [d, "objects", obj] if crate::domain::is_valid(d) => {
                let id = obj
                    .strip_suffix(".json")
                    .filter(|i| i.len() == 64 && i.chars().all(|c| c.is_ascii_hexdigit()));
                let id = id.ok_or_else(|| ExportError::ObjectName(name.to_string()))?;
                self.objects.push((
                    Domain::new(d).ok_or_else(|| ExportError::Unexpected(name.to_string()))?,
                    id.to_string(),
                    data,
                ));
            }
            _ => return Err(ExportError::Unexpected(name.to_string())),
        }
        Ok(())
    }
}

/// Every object checksum verifies, and every object a kept snapshot of a domain names is
/// in the archive (deleted ones are never exported).
fn check_complete(
    parsed: &[(Domain, Vec<Record>)],
    objects: &[(Domain, String, Vec<u8>)],
) -> std::result::Result<(), ExportError> {
    let mut present: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (d, id, data) in objects {
        if hex_sha256(data) != *id {
            return Err(ExportError::Checksum {
                domain: d.to_string(),
                id: id.clone(),
            });
        }
        present.entry(d).or_default().insert(id);
    }
    for (d, records) in parsed {
        let have = present.get(d.as_str());
        let deleted: BTreeSet<&str> = records
            .iter()
            .filter_map(|r| match r {
                Record::State(st) if st.state == State::Deleted => Some(st.id.as_str()),
                _ => None,
            })
            .collect();
        for r in records {
            let Record::Snapshot(s) = r else { continue };
            if deleted.contains(s.id.as_str()) {
                continue;
            }
            if *d != s.domain.as_str() {
                return Err(ExportError::Foreign {
                    domain: d.to_string(),
                    id: s.id.clone(),
                    owner: s.domain.clone(),
                });
            }
            if let Some(object) = [&s.cr, &s.crd]
                .into_iter()
                .find(|id| !have.is_some_and(|h| h.contains(id.as_str())))
            {
                return Err(ExportError::Missing {
                    domain: d.to_string(),
                    id: s.id.clone(),
                    object: object.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `journal` or `journal.<n>`.
fn is_journal_part(name: &str) -> bool {
    name == "journal"
        || name
            .strip_prefix("journal.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
