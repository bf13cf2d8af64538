//! What `snapshots show|verify|gc|export|import` say: the answer on stdout, the
//! findings and the summary on stderr, and the exit code ([`crate::ops::snapshots`]'s
//! rules).

use crate::console::Console;
use crate::domain::Domain;
use crate::error::{Result, exit};
use crate::ops::snapshots::{self as ops, Gc, On};
use crate::store::Store;
use crate::store::gc::Finding;
use crate::view::format::{DocFormat, TextFormat};
use crate::view::snapshots as view;
use std::path::Path;

/// `snapshots show`: one snapshot (`reference`: an id, `latest`, `@DATE`; `domain`:
/// `None` for an id, unique across domains) with its inventory.
///
/// # Errors
/// No such snapshot; the store cannot be read; stdout cannot be written.
pub fn show(
    console: &dyn Console,
    store: &Store,
    domain: Option<&Domain>,
    reference: &str,
    format: DocFormat,
) -> Result<i32> {
    let (snap, inventory) = store.find(domain, reference)?;
    let text = match format {
        DocFormat::Json => view::shown_json(&snap, &inventory)?,
        DocFormat::Yaml => view::shown_yaml(&snap, &inventory)?,
    };
    console.data(&text)?;
    Ok(exit::OK)
}

/// `snapshots verify`: `-o json` is the document (exit 1 with problems); text says each
/// finding on stderr and the verdict on stdout (the answer: `-q` keeps it), problems an
/// error naming the store.
///
/// # Errors
/// The store cannot be read; problems found (text); stdout cannot be written.
pub fn verify(console: &dyn Console, on: On<'_>, format: TextFormat) -> Result<i32> {
    let verified = on.store.verify(on.domains)?;
    let root = on.store.root();
    if format == TextFormat::Json {
        console.data(&view::verified_json(root, &verified)?)?;
        return Ok(match verified.problems() {
            0 => exit::OK,
            _ => exit::FAILURE,
        });
    }
    for finding in &verified.findings {
        match finding {
            Finding::Problem(message) => console.error(message),
            torn => console.info(&view::finding(torn)),
        }
    }
    console.data(&view::verified_line(root, &verified))?;
    ops::verified(root, &verified)?;
    Ok(exit::OK)
}

/// `snapshots gc`: what was deleted (or would be).
///
/// Text says each domain as it is done; `-o json` is printed from the compact listings of what was (or would be) deleted, streamed, once every domain is
/// done — an error on the way prints no partial document.
///
/// # Errors
/// As [`crate::ops::snapshots::gc`]; stdout cannot be written.
pub fn gc(console: &dyn Console, on: On<'_>, how: Gc, format: TextFormat) -> Result<i32> {
    let verb = if how.dry_run {
        "would delete"
    } else {
        "deleted"
    };
    let mut json = Vec::new();
    let total = ops::gc(on, how, |d, doomed| {
        if format == TextFormat::Json {
            json.push((d, doomed));
            return Ok(());
        }
        for s in doomed.rows() {
            console.data(&format!(
                "{d} {verb} {} ({})\n",
                crate::util::redact::escape_line(&s.id()),
                s.state().as_str()
            ))?;
        }
        if !how.dry_run && !doomed.is_empty() {
            console.info(&format!("{d}: {} snapshot(s) deleted", doomed.len()));
        }
        Ok(())
    })?;
    if format == TextFormat::Json {
        crate::view::seq::write(console, crate::view::seq::SeqFormat::Json, |seq| {
            for (d, doomed) in &json {
                for s in doomed.rows() {
                    let row = view::GcRow {
                        domain: d.as_str(),
                        id: &s.id(),
                        state: s.state().as_str(),
                        deleted: !how.dry_run,
                    };
                    seq.item(&row)?;
                }
            }
            Ok(())
        })?;
    } else if total == 0 {
        console.info(&format!(
            "nothing to delete: every snapshot is kept (the first, the newest {}, the last applied and every pending one)",
            how.keep
        ));
    }
    Ok(exit::OK)
}

/// `snapshots export`: whole, or refused naming what is damaged, or (`allow_damage`)
/// written without it — said item by item, and a failure
/// ([`crate::ops::snapshots::exported`]).
///
/// # Errors
/// The export failed or left something out.
pub fn export(console: &dyn Console, on: On<'_>, file: &Path, allow_damage: bool) -> Result<i32> {
    let exported = on.store.export(on.domains, file, allow_damage)?;
    for line in view::left_out_lines(&exported.left_out) {
        console.warn(&line);
    }
    let what = match on.domains {
        Some([one]) => one.to_string(),
        _ => format!("{} domain(s)", exported.domains),
    };
    console.info(&view::exported_line(&exported, &what, file));
    ops::exported(&exported, file)?;
    Ok(exit::OK)
}

/// `snapshots import FILE`: what the archive's export left out is said first; a refused
/// domain is an error naming why, after the others were imported (exit 1).
///
/// # Errors
/// The archive cannot be read or imported; a domain was refused.
pub fn import(console: &dyn Console, store: &Store, file: &Path) -> Result<i32> {
    let imported = store.import(file)?;
    for line in &imported.exported_without {
        console.warn(&format!("{}: exported without {line}", file.display()));
    }
    for (domain, why) in &imported.refused {
        console.error(&format!("{domain}: not imported: {why}"));
    }
    console.info(&view::imported_line(&imported, file));
    ops::imported(&imported, file)?;
    Ok(exit::OK)
}

/// `snapshots import oci://…`: the artifact, recorded as a snapshot of its domain, said
/// with its digest (and whether its signature was verified, with `key`).
///
/// # Errors
/// As [`crate::ops::snapshots::import_oci`].
#[cfg(feature = "gitops")]
pub fn import_oci(
    console: &dyn Console,
    store: &Store,
    url: &str,
    access: &crate::oci::Access,
    key: Option<&crate::oci::PublicKey>,
) -> Result<i32> {
    let done = ops::import_oci(store, url, access, key)?;
    let what = match done.already {
        true => "already the newest snapshot of",
        false => "recorded as a snapshot of",
    };
    let verified = if key.is_some() {
        ", signature verified"
    } else {
        ""
    };
    console.info(&format!(
        "{url} ({}{verified}): {what} {} — {}",
        done.digest, done.snapshot.domain, done.snapshot.id
    ));
    Ok(exit::OK)
}
