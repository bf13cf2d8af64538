//! `snapshots export` / `import`: a domain's verified records and objects as a tar
//! archive (sneaker-net), and reading one back with every line and object verified
//! before anything is written.

use super::{DomainStore, LOCK_TIMEOUT, MAX_JOURNAL, MAX_OBJECT, Record, Store, journal};
use crate::error::{Error, Result};
use crate::project::spec::hex_sha256;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

/// What an export wrote.
#[derive(Debug)]
pub struct Exported {
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

impl DomainStore {
    /// Writes the domain's verified records and the objects they name to `file`.
    ///
    /// # Errors
    /// No records, an unreadable journal, or the archive cannot be written.
    pub fn export(&self, file: &Path) -> Result<Exported> {
        let domain = &self.domain;
        let records = self.valid_records()?;
        if records.is_empty() {
            return Err(Error::NoSnapshot(format!(
                "no snapshots of {domain} in {}",
                self.dir().parent().unwrap_or(self.dir()).display()
            )));
        }
        let mut objects = BTreeSet::new();
        for r in &records {
            if let Record::Snapshot(s) = r {
                objects.insert(s.cr.clone());
                objects.insert(s.crd.clone());
            }
        }
        let lines: String = records.iter().map(journal::encode).collect();
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
        add(&format!("{domain}/journal"), lines.as_bytes())?;
        let mut skipped = Vec::new();
        for id in &objects {
            match self.object(id) {
                Ok(text) => add(&format!("{domain}/objects/{id}.json"), text.as_bytes())?,
                Err(e) => skipped.push(e),
            }
        }
        let bytes = tar.into_inner().map_err(|e| Error::io(file, e))?;
        crate::util::files::write_atomic(file, &bytes, 0o600).map_err(|e| Error::io(file, e))?;
        Ok(Exported {
            records: records.len(),
            objects: objects.len(),
            skipped,
        })
    }
}

impl Store {
    /// Imports an export archive: verifies all of it, then adds its objects and the
    /// records the store does not hold yet.
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
            for (od, id, data) in &objects {
                if *od == d {
                    ds.import_object(id, data)?;
                }
            }
            let _lock = ds.lock("import", LOCK_TIMEOUT)?;
            let existing = ds.valid_records()?;
            let new: Vec<Record> = records
                .into_iter()
                .filter(|r| !existing.contains(r))
                .collect();
            out.kept += existing.len();
            out.added += new.len();
            ds.import_records(&new)?;
        }
        Ok(out)
    }
}

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
            Some(&"journal") => MAX_JOURNAL,
            Some(&"FORMAT") => 4096,
            _ => MAX_OBJECT,
        };
        let size = entry.header().size().map_err(|e| e.to_string())?;
        held = held.saturating_add(size);
        if size > limit || held > MAX_IMPORT {
            return Err(format!(
                "entry {name:?}: {size} bytes is over the limit ({limit} bytes per entry, {MAX_IMPORT} in all)"
            ));
        }
        let mut data = Vec::new();
        Read::read_to_end(&mut Read::take(&mut entry, limit), &mut data)
            .map_err(|e| e.to_string())?;
        match parts.as_slice() {
            ["FORMAT"] => format_ok = String::from_utf8_lossy(&data).trim() == EXPORT_FORMAT,
            [d, "journal"] if crate::project::is_valid_domain(d) => {
                journals.push((d.to_string(), data))
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
    for (d, id, data) in &objects {
        if hex_sha256(data) != *id {
            return Err(format!(
                "{d}/objects/{id}.json: content does not match its checksum"
            ));
        }
    }
    Ok(Export {
        journals: parsed,
        objects,
    })
}
