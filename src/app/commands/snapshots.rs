//! `clinv snapshots [list|show|verify|gc|export|import]`: the local store.

use super::{project, store};
use crate::app::cli::{DocFormat, SnapshotsArgs, SnapshotsCommand, TableFormat};
use crate::app::output;
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::inventory::render;
use crate::store::gc::Finding;
use crate::store::{Damage, Snapshot, State, StateRecord, Store};
use serde::Serialize;
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
        Some(SnapshotsCommand::Gc {
            keep,
            dry_run,
            allow_damage,
        }) => gc(
            settings,
            &store,
            args.domain.as_deref(),
            *keep,
            *dry_run,
            *allow_damage,
        ),
        Some(SnapshotsCommand::Export { file }) => {
            export(settings, &store, args.domain.as_deref(), file)
        }
        Some(SnapshotsCommand::Import { file }) => import(settings, &store, file),
    }
}

fn warn_damage(settings: &Settings, damage: &[Damage]) {
    for d in damage {
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
    if format == TableFormat::Json {
        let (rows, damage) = store.list(domain, state)?;
        warn_damage(settings, &damage);
        settings.printer.data(&render::to_json(&rows)?)?;
        return Ok(exit::OK);
    }
    let (listings, damage) = store.listings(domain, state)?;
    warn_damage(settings, &damage);
    if listings.iter().all(|l| l.is_empty()) {
        settings.printer.info("no snapshots");
        return Ok(exit::OK);
    }
    settings.printer.data_with(|out| {
        output::write_snapshots_table(&listings, out).map_err(output::stdout_error)
    })?;
    Ok(exit::OK)
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
    let (snap, inventory) = store.find(domain, reference)?;
    if format == DocFormat::Json {
        let shown = Shown {
            snapshot: &snap,
            history: &snap.history,
            inventory: &inventory,
        };
        settings.printer.data(&render::to_json(&shown)?)?;
        return Ok(exit::OK);
    }
    let mut out = output::snapshot_header(&snap);
    out.push_str(&render::to_yaml(&inventory)?);
    settings.printer.data(&out)?;
    Ok(exit::OK)
}

fn verify(settings: &Settings, store: &Store, domain: Option<&str>) -> Result<i32> {
    let verified = store.verify(domain)?;
    for finding in &verified.findings {
        match finding {
            Finding::Problem(message) => settings.printer.error(message),
            Finding::TornTail { journal, bytes } => settings.printer.info(&format!(
                "{}: incomplete last record ({bytes} bytes, a write interrupted by a crash) — ignored",
                journal.display()
            )),
        }
    }
    let problems = verified.problems();
    if problems > 0 {
        return Err(Error::Damaged(format!(
            "snapshot store damaged: {problems} problem(s) in {}",
            store.root().display()
        )));
    }
    settings.printer.info(&format!(
        "{}: {} snapshot(s), {} object(s) in {} domain(s) verified",
        store.root().display(),
        verified.snapshots,
        verified.objects,
        verified.domains
    ));
    Ok(exit::OK)
}

fn gc(
    settings: &Settings,
    store: &Store,
    domain: Option<&str>,
    keep: usize,
    dry_run: bool,
    allow_damage: bool,
) -> Result<i32> {
    let verb = if dry_run { "would delete" } else { "deleted" };
    for d in store.select(domain)? {
        let doomed = store.domain(&d).gc(keep, dry_run, allow_damage)?;
        for s in &doomed {
            settings.printer.data(&format!(
                "{d} {verb} {} ({})\n",
                crate::util::redact::escape_line(&s.record.id),
                s.state.as_str()
            ))?;
        }
        if !dry_run && !doomed.is_empty() {
            settings
                .printer
                .info(&format!("{d}: {} snapshot(s) deleted", doomed.len()));
        }
    }
    Ok(exit::OK)
}

fn export(settings: &Settings, store: &Store, domain: Option<&str>, file: &Path) -> Result<i32> {
    let exported = store.export(domain, file)?;
    for e in &exported.skipped {
        settings.printer.warn(&format!("not exported: {e}"));
    }
    settings.printer.info(&format!(
        "exported {} record(s) and {} object(s) of {} to {}",
        exported.records,
        exported.objects,
        domain.map_or_else(|| format!("{} domain(s)", exported.domains), str::to_string),
        file.display()
    ));
    Ok(exit::OK)
}

fn import(settings: &Settings, store: &Store, file: &Path) -> Result<i32> {
    let imported = store.import(file)?;
    settings.printer.info(&format!(
        "imported {} new record(s) from {} ({} existing record(s) untouched)",
        imported.added,
        file.display(),
        imported.kept
    ));
    Ok(exit::OK)
}
