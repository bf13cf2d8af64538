//! `snapshots export` / `import`: the domains' verified records and objects as a tar
//! archive (sneaker-net), and reading one back with every line and object verified —
//! and every referenced object present — before anything is written.

use super::{LOCK_TIMEOUT, MAX_JOURNAL, MAX_OBJECT, Record, State, Store, journal, journal_lines};
use crate::error::{Error, Result};
use crate::project::spec::hex_sha256;
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
    pub fn export(&self, domain: Option<&str>, file: &Path) -> Result<Exported> {
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
        for d in self.select(domain)? {
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
                lines.push_str(&journal::encode(&r));
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
            return Err(Error::NoSnapshot(format!(
                "no snapshots{} in {}",
                domain.map(|d| format!(" of {d}")).unwrap_or_default(),
                self.root().display()
            )));
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
            read_export(std::io::BufReader::new(reader)).map_err(|message| Error::InvalidFile {
                path: file.to_path_buf(),
                message,
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
    pub journals: Vec<(String, Vec<Record>)>,
    /// `(domain, object id, bytes)`; every id is the sha256 of its bytes.
    pub objects: Vec<(String, String, Vec<u8>)>,
}

/// Most bytes an import holds in memory (it verifies everything before writing).
pub const MAX_IMPORT: u64 = 256 << 20;

/// Reads a snapshot export archive (a tar: `FORMAT`, `<domain>/journal`,
/// `<domain>/objects/<sha256>.json`) and verifies every journal line and every object
/// checksum, so an import writes nothing from an archive that does not verify. Streamed:
/// each entry is checked against its own limit from its header before its data is read,
/// and the total held in memory is bounded by [`MAX_IMPORT`].
///
/// # Errors
/// A message naming the entry (and line) that is wrong.
pub fn read_export(reader: impl Read) -> std::result::Result<Export, String> {
    let mut archive = tar::Archive::new(reader);
    let mut held: u64 = 0;
    let mut format_ok = false;
    let mut journals: Vec<(String, Vec<u8>)> = Vec::new();
    let mut objects: Vec<(String, String, Vec<u8>)> = Vec::new();
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let name = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .into_owned();
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
        if size > limit || held.saturating_add(size) > MAX_IMPORT {
            return Err(format!(
                "entry {name:?}: {size} bytes is over the limit ({limit} bytes per entry, {MAX_IMPORT} in all)"
            ));
        }
        let room = limit.min(MAX_IMPORT - held);
        // Sized up front (the declared size is within the bounds), so reading never
        // doubles the buffer past what the entry holds.
        let mut data = Vec::with_capacity(usize::try_from(size.min(room) + 1).unwrap_or(0));
        Read::read_to_end(&mut Read::take(&mut entry, room + 1), &mut data)
            .map_err(|e| e.to_string())?;
        let size = data.len() as u64;
        held += size.min(room);
        if size > room {
            return Err(format!(
                "entry {name:?}: over the limit ({limit} bytes per entry, {MAX_IMPORT} in all)"
            ));
        }
        match parts.as_slice() {
            ["FORMAT"] => format_ok = String::from_utf8_lossy(&data).trim() == EXPORT_FORMAT,
            [d, j] if is_journal_part(j) && crate::project::is_valid_domain(d) => {
                match journals.iter_mut().find(|(jd, _)| jd == d) {
                    Some((_, all)) => all.extend_from_slice(&data),
                    None => journals.push((d.to_string(), data)),
                }
            }
            [d, "objects", obj] if crate::project::is_valid_domain(d) => {
                let id = obj
                    .strip_suffix(".json")
                    .filter(|i| i.len() == 64 && i.chars().all(|c| c.is_ascii_hexdigit()));
                let id = id.ok_or_else(|| format!("unexpected entry {name}"))?;
                objects.push((d.to_string(), id.to_string(), data));
            }
            _ => {
                return Err(format!(
                    "unexpected entry {name:?} (not a clinv snapshot export)"
                ));
            }
        }
    }
    if !format_ok {
        return Err(format!("not a {EXPORT_FORMAT} archive"));
    }
    let mut parsed: Vec<(String, Vec<Record>)> = Vec::new();
    for (d, data) in &journals {
        let records = journal::parse_export(data)
            .map_err(|(line, what)| format!("{d}/journal:{line}: {what}"))?;
        parsed.push((d.clone(), records));
    }
    let mut present: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (d, id, data) in &objects {
        if hex_sha256(data) != *id {
            return Err(format!(
                "{d}/objects/{id}.json: content does not match its checksum"
            ));
        }
        present.entry(d).or_default().insert(id);
    }
    // Completeness: every object a snapshot of the archive names is in it (deleted
    // ones are never exported).
    for (d, records) in &parsed {
        let have = present.get(d.as_str());
        let mut deleted = BTreeSet::new();
        for r in records {
            if let Record::State(st) = r
                && st.state == State::Deleted
            {
                deleted.insert(st.id.as_str());
            }
        }
        for r in records {
            if let Record::Snapshot(s) = r
                && !deleted.contains(s.id.as_str())
            {
                if s.domain != *d {
                    return Err(format!(
                        "{d}/journal: snapshot {} belongs to {}",
                        s.id, s.domain
                    ));
                }
                for id in [&s.cr, &s.crd] {
                    if !have.is_some_and(|h| h.contains(id.as_str())) {
                        return Err(format!(
                            "{d}/journal: snapshot {} names object {id}, which the archive does not hold",
                            s.id
                        ));
                    }
                }
            }
        }
    }
    Ok(Export {
        journals: parsed,
        objects,
    })
}

/// `journal` or `journal.<n>`.
fn is_journal_part(name: &str) -> bool {
    name == "journal"
        || name
            .strip_prefix("journal.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
