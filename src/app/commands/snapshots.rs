//! `clinv snapshots [list|show|verify|gc|export|import]`: the local store.

use super::{project, store};
use crate::app::cli::{DocFormat, SnapshotsArgs, SnapshotsCommand, TableFormat};
use crate::app::settings::Settings;
use crate::app::table::Table;
use crate::error::{Error, Result, exit};
use crate::inventory::render;
use crate::store::{
    self, DomainStore, LOCK_TIMEOUT, Record, Snapshot, State, StateRecord, Store, now_millis,
};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

pub fn run(settings: &Settings, args: &SnapshotsArgs) -> Result<i32> {
    let project = project(settings)?;
    let store = store(settings, &project);
    match &args.command {
        None => list(settings, &store, args.domain.as_deref(), None, None),
        Some(SnapshotsCommand::List { state, output }) => {
            list(settings, &store, args.domain.as_deref(), *state, *output)
        }
        Some(SnapshotsCommand::Show { id, output }) => {
            show(settings, &store, args.domain.as_deref(), id, *output)
        }
        Some(SnapshotsCommand::Verify) => verify(settings, &store, args.domain.as_deref()),
        Some(SnapshotsCommand::Gc { keep, dry_run }) => {
            gc(settings, &store, args.domain.as_deref(), *keep, *dry_run)
        }
        Some(SnapshotsCommand::Export { file }) => {
            let domain = args
                .domain
                .as_deref()
                .ok_or_else(|| Error::Usage("clinv snapshots export needs --domain".into()))?;
            export(settings, &store, domain, file)
        }
        Some(SnapshotsCommand::Import { file }) => import(settings, &store, file),
    }
}

fn domains(store: &Store, domain: Option<&str>) -> Result<Vec<String>> {
    match domain {
        Some(d) if !crate::project::is_valid_domain(d) => Err(Error::InvalidDomain(d.to_string())),
        Some(d) => Ok(vec![d.to_string()]),
        None => Ok(store.domains()),
    }
}

fn warn_damage(settings: &Settings, journal: &store::Journal) {
    for d in &journal.damage {
        settings
            .printer
            .warn(&format!("snapshot store: {d} — skipped"));
    }
}

fn list(
    settings: &Settings,
    store: &Store,
    domain: Option<&str>,
    state: Option<State>,
    output: Option<TableFormat>,
) -> Result<i32> {
    let format = output.unwrap_or_default();
    let mut rows: Vec<Snapshot> = Vec::new();
    for d in domains(store, domain)? {
        let journal = store.domain(&d).read()?;
        warn_damage(settings, &journal);
        rows.extend(
            journal
                .snapshots
                .into_iter()
                .rev()
                .filter(|s| s.state != State::Deleted && state.is_none_or(|st| s.state == st)),
        );
    }
    if format == TableFormat::Json {
        settings.printer.data(&render::to_json(&rows)?)?;
        return Ok(exit::OK);
    }
    let mut table = Table::new(&[
        "DOMAIN", "ID", "RECORDED", "STATE", "REASON", "RENDERED", "TARGET",
    ]);
    for s in &rows {
        let reason = s.reason.map(|r| r.as_str()).unwrap_or("-");
        let target = s
            .record
            .target
            .as_ref()
            .map(|t| t.server.as_str())
            .unwrap_or("-");
        table.row(&[
            &s.record.domain,
            &s.record.id,
            &s.record.at,
            s.state.as_str(),
            reason,
            &s.record.rendered_at,
            target,
        ]);
    }
    if rows.is_empty() {
        settings.printer.info("no snapshots");
        return Ok(exit::OK);
    }
    settings.printer.data(&table.render())?;
    Ok(exit::OK)
}

/// Finds a snapshot by reference in one domain or, without `--domain`, in any.
fn find(store: &Store, domain: Option<&str>, reference: &str) -> Result<(DomainStore, Snapshot)> {
    let mut found = Vec::new();
    let mut last_err = None;
    for d in domains(store, domain)? {
        let ds = store.domain(&d);
        let journal = ds.read()?;
        match store::resolve(&journal, reference) {
            Ok(s) => found.push((ds.clone(), s.clone())),
            Err(e @ Error::Usage(_)) => return Err(e),
            Err(e) => last_err = Some(e),
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(last_err.unwrap_or_else(|| {
            Error::NoSnapshot(format!("no snapshot '{reference}' (the store is empty)"))
        })),
        _ => Err(Error::NoSnapshot(format!(
            "'{reference}' matches snapshots in several domains; pass --domain"
        ))),
    }
}

#[derive(Serialize)]
struct Shown<'a> {
    snapshot: &'a Snapshot,
    history: &'a [StateRecord],
    inventory: &'a crate::inventory::ClusterInventory,
}

fn show(
    settings: &Settings,
    store: &Store,
    domain: Option<&str>,
    reference: &str,
    output: Option<DocFormat>,
) -> Result<i32> {
    let format = output.unwrap_or_default();
    let (ds, snap) = find(store, domain, reference)?;
    let inventory = ds.inventory(&snap.record)?;
    if format == DocFormat::Json {
        let shown = Shown {
            snapshot: &snap,
            history: &snap.history,
            inventory: &inventory,
        };
        settings.printer.data(&render::to_json(&shown)?)?;
        return Ok(exit::OK);
    }
    let r = &snap.record;
    let mut out = format!(
        "# snapshot {}\n# domain:     {}\n# recorded:   {} by {}\n# state:      {}{}\n# specHash:   {}\n",
        r.id,
        r.domain,
        r.at,
        r.tool,
        snap.state.as_str(),
        snap.reason.map(|x| format!(" ({x})")).unwrap_or_default(),
        r.spec_hash
    );
    if let Some(t) = &r.target {
        out.push_str(&format!(
            "# target:     {}{}\n",
            t.server,
            t.context
                .as_ref()
                .map(|c| format!(" (context {c})"))
                .unwrap_or_default()
        ));
    }
    for h in &snap.history {
        let extra = [
            h.reason.map(|x| x.to_string()),
            h.by.as_ref().map(|b| format!("by {b}")),
            h.commit.clone(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        out.push_str(&format!(
            "# {}  {}{}\n",
            h.at,
            h.state.as_str(),
            if extra.is_empty() {
                String::new()
            } else {
                format!(" ({extra})")
            }
        ));
    }
    out.push_str(&render::to_yaml(&inventory)?);
    settings.printer.data(&out)?;
    Ok(exit::OK)
}

fn verify(settings: &Settings, store: &Store, domain: Option<&str>) -> Result<i32> {
    let mut problems = 0usize;
    let (mut snapshots, mut objects) = (0usize, 0usize);
    let list = domains(store, domain)?;
    for d in &list {
        let ds = store.domain(d);
        let journal = ds.read()?;
        for damage in &journal.damage {
            settings.printer.error(&format!("{damage}"));
            problems += 1;
        }
        if journal.torn_tail > 0 {
            settings.printer.info(&format!(
                "{}: incomplete last record ({} bytes, a write interrupted by a crash) — ignored",
                ds.dir().join("journal").display(),
                journal.torn_tail
            ));
        }
        let mut checked = BTreeSet::new();
        for snap in journal
            .snapshots
            .iter()
            .filter(|s| s.state != State::Deleted)
        {
            snapshots += 1;
            for id in [&snap.record.cr, &snap.record.crd] {
                if checked.insert(id.clone()) {
                    objects += 1;
                    if let Err(e) = ds.object(id) {
                        settings
                            .printer
                            .error(&format!("snapshot {}: {e}", snap.record.id));
                        problems += 1;
                    }
                }
            }
        }
    }
    if problems > 0 {
        return Err(Error::Damaged(format!(
            "snapshot store damaged: {problems} problem(s) in {}",
            store.root().display()
        )));
    }
    settings.printer.info(&format!(
        "{}: {snapshots} snapshot(s), {objects} object(s) in {} domain(s) verified",
        store.root().display(),
        list.len()
    ));
    Ok(exit::OK)
}

fn gc(
    settings: &Settings,
    store: &Store,
    domain: Option<&str>,
    keep: usize,
    dry_run: bool,
) -> Result<i32> {
    for d in domains(store, domain)? {
        let ds = store.domain(&d);
        let _lock = ds.lock("gc", LOCK_TIMEOUT)?;
        let journal = ds.read()?;
        let doomed: Vec<&Snapshot> = store::gc_candidates(&journal, keep);
        let verb = if dry_run { "would delete" } else { "deleted" };
        for s in &doomed {
            settings.printer.data(&format!(
                "{d} {} {} ({})\n",
                verb,
                s.record.id,
                s.state.as_str()
            ))?;
        }
        if dry_run || doomed.is_empty() {
            continue;
        }
        let at = now_millis();
        let changes: Vec<StateRecord> = doomed
            .iter()
            .map(|s| StateRecord::new(&s.record.id, &at, State::Deleted))
            .collect();
        ds.append_states(&changes)?;
        // Objects still referenced by a kept snapshot stay.
        let doomed_ids: BTreeSet<&str> = doomed.iter().map(|s| s.record.id.as_str()).collect();
        let keep_objects: BTreeSet<&str> = journal
            .snapshots
            .iter()
            .filter(|s| s.state != State::Deleted && !doomed_ids.contains(s.record.id.as_str()))
            .flat_map(|s| [s.record.cr.as_str(), s.record.crd.as_str()])
            .collect();
        let referenced: BTreeSet<&str> = journal
            .snapshots
            .iter()
            .flat_map(|s| [s.record.cr.as_str(), s.record.crd.as_str()])
            .collect();
        for id in ds.object_ids() {
            // Only objects of deleted snapshots; unknown files are left for a human.
            if referenced.contains(id.as_str()) && !keep_objects.contains(id.as_str()) {
                ds.remove_object(&id)?;
            }
        }
        settings
            .printer
            .info(&format!("{d}: {} snapshot(s) deleted", doomed.len()));
    }
    Ok(exit::OK)
}

fn export(settings: &Settings, store: &Store, domain: &str, file: &Path) -> Result<i32> {
    if !crate::project::is_valid_domain(domain) {
        return Err(Error::InvalidDomain(domain.to_string()));
    }
    let ds = store.domain(domain);
    let records = ds.valid_records()?;
    if records.is_empty() {
        return Err(Error::NoSnapshot(format!(
            "no snapshots of {domain} in {}",
            store.root().display()
        )));
    }
    let mut objects = BTreeSet::new();
    for r in &records {
        if let Record::Snapshot(s) = r {
            objects.insert(s.cr.clone());
            objects.insert(s.crd.clone());
        }
    }
    let mut journal = String::new();
    for r in &records {
        let json = serde_json::to_string(r).unwrap_or_default();
        journal.push_str(&format!(
            "{} {json}\n",
            crate::project::spec::hex_sha256(json.as_bytes())
        ));
    }
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
    add(
        "FORMAT",
        format!("{}\n", crate::store::EXPORT_FORMAT).as_bytes(),
    )?;
    add(&format!("{domain}/journal"), journal.as_bytes())?;
    for id in &objects {
        // A damaged or missing object is not exported; the importer sees the gap.
        match ds.object(id) {
            Ok(text) => add(&format!("{domain}/objects/{id}.json"), text.as_bytes())?,
            Err(e) => settings.printer.warn(&format!("not exported: {e}")),
        }
    }
    let bytes = tar.into_inner().map_err(|e| Error::io(file, e))?;
    crate::util::files::write_atomic(file, &bytes, 0o600).map_err(|e| Error::io(file, e))?;
    settings.printer.info(&format!(
        "exported {} record(s) and {} object(s) of {domain} to {}",
        records.len(),
        objects.len(),
        file.display()
    ));
    Ok(exit::OK)
}

fn import(settings: &Settings, store: &Store, file: &Path) -> Result<i32> {
    // Streamed, not read whole (see store::read_export).
    let reader = std::fs::File::open(file).map_err(|e| Error::io(file, e))?;
    if !reader.metadata().map_err(|e| Error::io(file, e))?.is_file() {
        return Err(Error::InvalidFile {
            path: file.to_path_buf(),
            message: "not a regular file".into(),
        });
    }
    // Verify everything before writing anything.
    let crate::store::Export { journals, objects } =
        crate::store::read_export(std::io::BufReader::new(reader)).map_err(|message| {
            Error::InvalidFile {
                path: file.to_path_buf(),
                message,
            }
        })?;
    let (mut added, mut kept) = (0usize, 0usize);
    for (d, records) in journals {
        let ds = store.domain(&d);
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
        kept += existing.len();
        added += new.len();
        ds.import_records(&new)?;
    }
    settings.printer.info(&format!(
        "imported {added} new record(s) from {} ({kept} existing record(s) untouched)",
        file.display()
    ));
    Ok(exit::OK)
}
