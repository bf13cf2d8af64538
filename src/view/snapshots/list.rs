//! `snapshots list` in every `-o` form.
//!
//! Written from compact listings as it goes: JSON and YAML without a sort straight from each domain's (one domain's listing held at
//! once), the rest from all of them, in their order or sorted.

use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::ops::snapshots::On;
use crate::store::Damage;
use crate::store::scan::RowRef;
use crate::view::format::{SortKey, TableFormat};
use crate::view::seq::SeqFormat;
use crate::view::{jsonpath, snapshots, table};

/// What `snapshots list` shows and how (its flags, as plain values).
pub struct Flags {
    pub format: TableFormat,
    pub state: Option<crate::store::State>,
    pub since: Option<String>,
    pub limit: Option<usize>,
    pub sort_by: Option<SortKey>,
    pub no_headers: bool,
    pub allow_missing_template_keys: bool,
}

/// `snapshots list`: the snapshots of `on` in the form `flags` asks for, damage said as
/// warnings; exit 0.
///
/// # Errors
/// A bad `--since`; the store cannot be read; stdout cannot be written.
pub fn list(console: &dyn Console, on: On<'_>, flags: &Flags) -> Result<i32> {
    let now = jiff::Timestamp::now();
    let shown = crate::store::Shown {
        state: flags.state,
        since: crate::ops::snapshots::since(flags.since.as_deref(), now)?,
        limit: flags.limit,
    };
    if flags.sort_by.is_none() {
        let seq = match flags.format {
            TableFormat::Json => Some(SeqFormat::Json),
            TableFormat::Yaml => Some(SeqFormat::Yaml),
            _ => None,
        };
        if let Some(seq) = seq {
            return streamed(console, on, &shown, seq);
        }
    }
    let (listings, damage) = on.store.listings(on.domains, &shown)?;
    warn_damage(console, &damage);
    let mut listed = crate::store::Listed::from(listings);
    if let Some(key) = flags.sort_by {
        listed.sort_by(|a, b| compare(a, b, key));
    }
    write(console, on, &listed, flags, now.as_second())?;
    Ok(exit::OK)
}

/// The listed rows in any form but the unsorted streamed JSON and YAML.
fn write(
    console: &dyn Console,
    on: On<'_>,
    listed: &crate::store::Listed,
    flags: &Flags,
    now: i64,
) -> Result<()> {
    let no_headers = flags.no_headers;
    // The outbox: one directory read; its unusable files are said by replay and status.
    let owed = snapshots::owed_ids(&crate::store::outbox::list(on.store.root(), None));
    match &flags.format {
        format @ (TableFormat::Json | TableFormat::Yaml) => {
            let seq = match format {
                TableFormat::Json => SeqFormat::Json,
                _ => SeqFormat::Yaml,
            };
            crate::view::seq::write(console, seq, |seq| {
                on.store.each_row(listed, |s| seq.item(&s))
            })
        }
        TableFormat::JsonPath(template) => {
            let allow_missing = flags.allow_missing_template_keys;
            list_jsonpath(console, on, listed, template, allow_missing)
        }
        TableFormat::Name => console
            .data_with(|out| snapshots::write_snapshot_names(listed, out).map_err(Error::stdout)),
        _ if listed.is_empty() => {
            console.info("no snapshots");
            Ok(())
        }
        TableFormat::Wide => list_wide(console, on, listed, (now, no_headers), &owed),
        TableFormat::Table => console.data_with(|out| {
            snapshots::write_snapshots_table(listed, now, no_headers, &owed, out)
                .map_err(Error::stdout)
        }),
    }
}

fn warn_damage(console: &dyn Console, damage: &[Damage]) {
    for d in damage {
        console.warn(&format!("snapshot store: {d} — skipped"));
    }
}

/// `snapshots list -o json|yaml`: the rows, whole, printed as they are built (in
/// bounded memory). Damage is said after the document (it is known once every domain
/// was read).
fn streamed(
    console: &dyn Console,
    on: On<'_>,
    shown: &crate::store::Shown,
    format: SeqFormat,
) -> Result<i32> {
    let mut damage = Vec::new();
    crate::view::seq::write(console, format, |seq| {
        damage = on
            .store
            .each_listed(on.domains, shown, |snap| seq.item(&snap))?;
        Ok(())
    })?;
    warn_damage(console, &damage);
    Ok(exit::OK)
}

/// `snapshots list -o wide`: the wide columns come from whole records, read twice (the
/// columns measured, then written) rather than held.
fn list_wide(
    console: &dyn Console,
    on: On<'_>,
    listed: &crate::store::Listed,
    (now, no_headers): (i64, bool),
    owed: &snapshots::OwedIds,
) -> Result<()> {
    let mut table = table::Streamed::new(&snapshots::WIDE_HEADER, no_headers);
    on.store.each_row(listed, |s| {
        table.measure(&snapshots::wide_cells(&s, now, owed));
        Ok(())
    })?;
    console.data_with(|out| {
        table.write_header(out).map_err(Error::stdout)?;
        on.store.each_row(listed, |s| {
            let cells = snapshots::wide_cells(&s, now, owed);
            table.write(&cells, out).map_err(Error::stdout)
        })
    })
}

/// `snapshots list -o jsonpath=…`: a template that walks the rows one at a time
/// (`{range [*]}…{end}`, `{[*].id}`) is applied to each row as it is built; any other
/// needs the whole document.
fn list_jsonpath(
    console: &dyn Console,
    on: On<'_>,
    listed: &crate::store::Listed,
    template: &jsonpath::Template,
    allow_missing: bool,
) -> Result<()> {
    if let Some(parts) = template.per_row().filter(|_| allow_missing) {
        return console.data_with(|out| {
            for part in &parts {
                if let Some(text) = part.text() {
                    out.write_all(text.as_bytes()).map_err(Error::stdout)?;
                    continue;
                }
                let mut pass = part.start(listed.len());
                on.store.each_row(listed, |s| {
                    let row = serde_json::to_value(&s).map_err(|e| Error::encode("JSON", e))?;
                    let text = pass.row(row);
                    out.write_all(text.as_bytes()).map_err(Error::stdout)
                })?;
            }
            Ok(())
        });
    }
    let mut rows = Vec::new();
    on.store.each_row(listed, |s| {
        rows.push(s);
        Ok(())
    })?;
    let json = crate::inventory::render::to_json(&rows)?;
    console.data(&crate::view::format::jsonpath(
        template,
        &json,
        allow_missing,
    )?)
}

/// `--sort-by`: the order of two rows by the column (ascending; the sort is stable).
fn compare(a: RowRef<'_>, b: RowRef<'_>, key: SortKey) -> std::cmp::Ordering {
    match key {
        SortKey::Time => {
            let at = |r: &RowRef<'_>| crate::history::audit::parse_bound(&r.at(), false);
            at(&a).cmp(&at(&b)).then(a.seq().cmp(&b.seq()))
        }
        SortKey::Domain => a.domain().cmp(b.domain()),
        SortKey::State => a.state().as_str().cmp(b.state().as_str()),
        SortKey::Reason => (a.reason().map(|r| r.as_str())).cmp(&b.reason().map(|r| r.as_str())),
        SortKey::Target => a.target_server().cmp(&b.target_server()),
        SortKey::Id => (*a.id()).cmp(&*b.id()),
    }
}
