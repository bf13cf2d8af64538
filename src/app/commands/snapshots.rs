//! `clinv snapshots [list|show|verify|gc|export|import]`: the local store.

use super::StoreOnly;
use crate::app::Result;
use crate::app::cli::{
    DocFormat, ImportArgs, ListArgs, SnapshotsArgs, SnapshotsCommand, SortKey, TableFormat,
    TableOutput, TextFormat,
};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::{Error, exit};
use crate::inventory::render;
use crate::store::gc::Finding;
use crate::store::scan::RowRef;
use crate::store::{Damage, Store};
use crate::view;
use std::path::Path;

pub fn run(settings: &Settings, args: &SnapshotsArgs) -> Result<i32> {
    // `snapshots` alone is `snapshots list`: its flags may come before `list` too, and
    // before any other subcommand they are a mistake.
    let given = &args.list;
    let list_flags = given.state.is_some()
        || given.since.is_some()
        || given.limit.is_some()
        || given.sort_by.is_some()
        || given.table.output.is_some()
        || given.table.no_headers;
    if list_flags && !matches!(args.command, None | Some(SnapshotsCommand::List(_))) {
        return Err(crate::app::Failure::Usage(
            "clinv snapshots: --state, --since, --limit, --sort-by, -o and --no-headers before a subcommand other than list \
             belong to `snapshots list`; give the subcommand's own flags after it"
                .to_string(),
        ));
    }
    let opened = StoreOnly::open(settings)?;
    let store = &opened.store;
    let domains = match &args.command {
        Some(SnapshotsCommand::Import { .. }) => None,
        _ => selected(settings, &opened, args)?,
    };
    let on = Selection {
        settings,
        store,
        domains: domains.as_deref(),
    };
    match &args.command {
        None => list(on, &args.list),
        Some(SnapshotsCommand::List(flags)) => list(on, &merged(given, flags)),
        Some(SnapshotsCommand::Show { id, output }) => {
            // An id is unique across domains; `latest` and `@DATE` need one domain, chosen
            // by the one selection rule.
            let domain = match (on.domains, crate::store::parse_ref(id)?) {
                (Some([d]), _) => Some(d.clone()),
                (Some(_), _) => {
                    return Err(crate::app::Failure::Usage(
                        "clinv snapshots show: one snapshot of one domain; --domain names several"
                            .to_string(),
                    ));
                }
                (None, crate::history::refs::SnapshotRef::Id(_)) => None,
                (None, _) => Some(opened.domain(settings, None)?),
            };
            show(settings, store, domain.as_ref(), id, *output)
        }
        Some(SnapshotsCommand::Verify { output }) => verify(on, output.unwrap_or_default()),
        Some(SnapshotsCommand::Gc {
            keep,
            dry_run,
            allow_damage,
            output,
        }) => gc(
            on,
            (*keep, *dry_run, *allow_damage),
            output.unwrap_or_default(),
        ),
        Some(SnapshotsCommand::Export { file, allow_damage }) => export(on, file, *allow_damage),
        Some(SnapshotsCommand::Import(args)) => import_any(settings, store, args),
    }
}

/// `snapshots list`'s flags: those after `list`, else those before it.
/// What a subcommand works on: the store, and the domains selected (`None`: every one).
#[derive(Clone, Copy)]
struct Selection<'a> {
    settings: &'a Settings,
    store: &'a Store,
    domains: Option<&'a [Domain]>,
}

fn merged(given: &ListArgs, flags: &ListArgs) -> ListArgs {
    ListArgs {
        state: flags.state.or(given.state),
        since: flags.since.clone().or_else(|| given.since.clone()),
        limit: flags.limit.or(given.limit),
        sort_by: flags.sort_by.or(given.sort_by),
        table: TableOutput {
            output: flags
                .table
                .output
                .clone()
                .or_else(|| given.table.output.clone()),
            no_headers: flags.table.no_headers || given.table.no_headers,
            allow_missing_template_keys: flags.table.allow_missing_template_keys
                && given.table.allow_missing_template_keys,
        },
    }
}

/// The domains `--domain` names: one plain name by the one selection rule (a domain the
/// store or the project knows, with "did you mean"), several names or globs among the
/// store's; `None` without `--domain`: every domain.
fn selected(
    settings: &Settings,
    opened: &StoreOnly,
    args: &crate::app::cli::SnapshotsArgs,
) -> Result<Option<Vec<Domain>>> {
    let many = crate::project::select::Many {
        patterns: &args.domain,
        all: args.all_domains,
    };
    Ok(match &args.domain[..] {
        [] if !many.all => None,
        [one] if !many.is_many() => Some(vec![opened.domain(settings, Some(one))?]),
        _ => opened.fleet(many)?,
    })
}

fn warn_damage(settings: &Settings, damage: &[Damage]) {
    for d in damage {
        settings
            .printer
            .warn(&format!("snapshot store: {d} — skipped"));
    }
}

fn list(on: Selection<'_>, flags: &ListArgs) -> Result<i32> {
    let format = flags.table.output.clone().unwrap_or_default();
    let now = jiff::Timestamp::now();
    let shown = crate::store::Shown {
        state: flags.state.map(Into::into),
        since: since(flags.since.as_deref(), now)?,
        limit: flags.limit,
    };
    // Every form is written from compact listings as it goes: JSON and YAML without a
    // sort straight from each domain's (one domain's listing held at once), the rest
    // from all of them, in their order or sorted.
    if flags.sort_by.is_none() {
        let seq = match format {
            TableFormat::Json => Some(crate::view::seq::SeqFormat::Json),
            TableFormat::Yaml => Some(crate::view::seq::SeqFormat::Yaml),
            _ => None,
        };
        if let Some(seq) = seq {
            return list_streamed(on, &shown, seq);
        }
    }
    let (listings, damage) = on.store.listings(on.domains, &shown)?;
    warn_damage(on.settings, &damage);
    let mut listed = crate::store::Listed::from(listings);
    if let Some(key) = flags.sort_by {
        listed.sort_by(|a, b| compare(a, b, key));
    }
    let printer = &on.settings.printer;
    let (no_headers, now) = (flags.table.no_headers, now.as_second());
    // The outbox: one directory read; its unusable files are said by replay and status.
    let owed = view::snapshots::owed_ids(&crate::store::outbox::list(on.store.root(), None));
    match format {
        TableFormat::Json | TableFormat::Yaml => {
            let seq = match format {
                TableFormat::Json => crate::view::seq::SeqFormat::Json,
                _ => crate::view::seq::SeqFormat::Yaml,
            };
            crate::view::seq::write(printer, seq, |seq| {
                on.store.each_row(&listed, |s| seq.item(&s))
            })?;
        }
        TableFormat::JsonPath(template) => {
            let allow_missing = flags.table.allow_missing_template_keys;
            list_jsonpath(on, &listed, &template, allow_missing)?;
        }
        TableFormat::Name => printer.data_with(|out| {
            view::snapshots::write_snapshot_names(&listed, out).map_err(crate::Error::stdout)
        })?,
        _ if listed.is_empty() => printer.info("no snapshots"),
        TableFormat::Wide => list_wide(on, &listed, now, no_headers, &owed)?,
        _ => printer.data_with(|out| {
            view::snapshots::write_snapshots_table(&listed, now, no_headers, &owed, out)
                .map_err(crate::Error::stdout)
        })?,
    }
    Ok(exit::OK)
}

/// `--since`: seconds since the epoch.
fn since(text: Option<&str>, now: jiff::Timestamp) -> Result<Option<i64>> {
    let Some(t) = text else { return Ok(None) };
    let at = crate::history::audit::parse_query_bound(t, false, now)
        .ok_or_else(|| Error::from(crate::error::ArgumentError::Time(t.to_string())))?;
    Ok(Some(at.as_second()))
}

/// `snapshots list -o json|yaml`: the rows, whole, printed as they are built (in
/// bounded memory). Damage is said after the document (it is known once every domain
/// was read).
fn list_streamed(
    on: Selection<'_>,
    shown: &crate::store::Shown,
    format: crate::view::seq::SeqFormat,
) -> Result<i32> {
    let mut damage = Vec::new();
    crate::view::seq::write(&on.settings.printer, format, |seq| {
        damage = on
            .store
            .each_listed(on.domains, shown, |snap| seq.item(&snap))?;
        Ok(())
    })?;
    warn_damage(on.settings, &damage);
    Ok(exit::OK)
}

/// `snapshots list -o wide`: the wide columns come from whole records, read twice (the
/// columns measured, then written) rather than held.
fn list_wide(
    on: Selection<'_>,
    listed: &crate::store::Listed,
    now: i64,
    no_headers: bool,
    owed: &view::snapshots::OwedIds,
) -> Result<()> {
    let mut table = view::table::Streamed::new(&view::snapshots::WIDE_HEADER, no_headers);
    on.store.each_row(listed, |s| {
        table.measure(&view::snapshots::wide_cells(&s, now, owed));
        Ok(())
    })?;
    on.settings.printer.data_with(|out| {
        table.write_header(out).map_err(crate::Error::stdout)?;
        on.store.each_row(listed, |s| {
            let cells = view::snapshots::wide_cells(&s, now, owed);
            table.write(&cells, out).map_err(crate::Error::stdout)
        })
    })?;
    Ok(())
}

/// `snapshots list -o jsonpath=…`: a template that walks the rows one at a time
/// (`{range [*]}…{end}`, `{[*].id}`) is applied to each row as it is built; any other
/// needs the whole document.
fn list_jsonpath(
    on: Selection<'_>,
    listed: &crate::store::Listed,
    template: &crate::view::jsonpath::Template,
    allow_missing: bool,
) -> Result<()> {
    let printer = &on.settings.printer;
    if let Some(parts) = template.per_row().filter(|_| allow_missing) {
        printer.data_with(|out| {
            for part in &parts {
                if let Some(text) = part.text() {
                    out.write_all(text.as_bytes())
                        .map_err(crate::Error::stdout)?;
                    continue;
                }
                let mut pass = part.start(listed.len());
                on.store.each_row(listed, |s| {
                    let row = serde_json::to_value(&s).map_err(|e| Error::encode("JSON", e))?;
                    let text = pass.row(row);
                    out.write_all(text.as_bytes()).map_err(crate::Error::stdout)
                })?;
            }
            Ok(())
        })?;
        return Ok(());
    }
    let mut rows = Vec::new();
    on.store.each_row(listed, |s| {
        rows.push(s);
        Ok(())
    })?;
    let text = crate::view::format::jsonpath(template, &render::to_json(&rows)?, allow_missing)?;
    printer.data(&text)?;
    Ok(())
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

fn show(
    settings: &Settings,
    store: &Store,
    domain: Option<&Domain>,
    reference: &str,
    output: Option<DocFormat>,
) -> Result<i32> {
    let format = output.unwrap_or_default();
    let (snap, inventory) = store.find(domain, reference)?;
    let text = match format {
        DocFormat::Json => view::snapshots::shown_json(&snap, &inventory)?,
        DocFormat::Yaml => view::snapshots::shown_yaml(&snap, &inventory)?,
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

fn verify(on: Selection<'_>, format: TextFormat) -> Result<i32> {
    let verified = on.store.verify(on.domains)?;
    let root = on.store.root();
    if format == TextFormat::Json {
        on.settings
            .printer
            .data(&view::snapshots::verified_json(root, &verified)?)?;
        return Ok(match verified.problems() {
            0 => exit::OK,
            _ => exit::FAILURE,
        });
    }
    for finding in &verified.findings {
        match finding {
            Finding::Problem(message) => on.settings.printer.error(message),
            torn => on.settings.printer.info(&view::snapshots::finding(torn)),
        }
    }
    // The verdict is the answer: on stdout, so `-q` keeps it.
    let verdict = view::snapshots::verified_line(root, &verified);
    on.settings.printer.data(&verdict)?;
    match verified.problems() {
        0 => Ok(exit::OK),
        problems => Err(Error::from(crate::error::Damaged::Store {
            problems,
            store: root.to_path_buf(),
        })
        .into()),
    }
}

/// `snapshots gc`: text says each domain as it is done; `-o json` is printed from the
/// compact listings of what was (or would be) deleted, streamed, once every domain is
/// done — an error on the way prints no partial document.
fn gc(
    on: Selection<'_>,
    (keep, dry_run, allow_damage): (usize, bool, bool),
    format: TextFormat,
) -> Result<i32> {
    let verb = if dry_run { "would delete" } else { "deleted" };
    let (mut json, mut total) = (Vec::new(), 0);
    for d in on.store.select(on.domains) {
        let doomed = on.store.domain(&d).gc(keep, dry_run, allow_damage)?;
        total += doomed.len();
        if format == TextFormat::Json {
            json.push((d, doomed));
            continue;
        }
        for s in doomed.rows() {
            on.settings.printer.data(&format!(
                "{d} {verb} {} ({})\n",
                crate::util::redact::escape_line(&s.id()),
                s.state().as_str()
            ))?;
        }
        if !dry_run && !doomed.is_empty() {
            on.settings
                .printer
                .info(&format!("{d}: {} snapshot(s) deleted", doomed.len()));
        }
    }
    if format == TextFormat::Json {
        crate::view::seq::write(
            &on.settings.printer,
            crate::view::seq::SeqFormat::Json,
            |seq| {
                for (d, doomed) in &json {
                    for s in doomed.rows() {
                        let row = view::snapshots::GcRow {
                            domain: d.as_str(),
                            id: &s.id(),
                            state: s.state().as_str(),
                            deleted: !dry_run,
                        };
                        seq.item(&row)?;
                    }
                }
                Ok(())
            },
        )?;
    } else if total == 0 {
        on.settings.printer.info(&format!(
            "nothing to delete: every snapshot is kept (the first, the newest {keep}, the last applied and every pending one)"
        ));
    }
    Ok(exit::OK)
}

/// `snapshots export`: whole, or refused naming what is damaged, or (`--allow-damage`)
/// written without it — said item by item, and exit 1: an archive with a gap is
/// found on this side of the air gap, not the far one.
fn export(on: Selection<'_>, file: &Path, allow_damage: bool) -> Result<i32> {
    let exported = on.store.export(on.domains, file, allow_damage)?;
    let left = &exported.left_out;
    for line in view::snapshots::left_out_lines(left) {
        on.settings.printer.warn(&line);
    }
    let what = match on.domains {
        Some([one]) => one.to_string(),
        _ => format!("{} domain(s)", exported.domains),
    };
    on.settings
        .printer
        .info(&view::snapshots::exported_line(&exported, &what, file));
    if !left.is_empty() {
        return Err(Error::from(crate::error::Damaged::ExportGap {
            count: left.count(),
            file: file.to_path_buf(),
        })
        .into());
    }
    Ok(exit::OK)
}

/// `snapshots import FILE|oci://…`.
fn import_any(settings: &Settings, store: &Store, args: &ImportArgs) -> Result<i32> {
    match args.file.to_str().filter(|f| f.starts_with("oci://")) {
        Some(url) => import_oci(settings, store, url, args),
        None => import(settings, store, &args.file),
    }
}

/// `snapshots import oci://…`: the artifact, recorded as a snapshot of its domain.
#[cfg(feature = "gitops")]
fn import_oci(settings: &Settings, store: &Store, url: &str, args: &ImportArgs) -> Result<i32> {
    let reference = crate::oci::parse(url)?;
    let (access, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
    let done = crate::ops::pull::import(store, &reference, &access, key.as_ref())?;
    let what = match done.already {
        true => "already the newest snapshot of",
        false => "recorded as a snapshot of",
    };
    let verified = if key.is_some() {
        ", signature verified"
    } else {
        ""
    };
    settings.printer.info(&format!(
        "{url} ({}{verified}): {what} {} — {}",
        done.digest, done.snapshot.domain, done.snapshot.id
    ));
    Ok(exit::OK)
}

#[cfg(not(feature = "gitops"))]
fn import_oci(_: &Settings, _: &Store, _: &str, _: &ImportArgs) -> Result<i32> {
    Err(crate::Error::NoGitops("snapshots import oci://").into())
}

/// `snapshots import FILE`: what the archive's export left out is said first; a refused
/// domain is an error naming why, after the others were imported (exit 1).
fn import(settings: &Settings, store: &Store, file: &Path) -> Result<i32> {
    let imported = store.import(file)?;
    for line in &imported.exported_without {
        settings
            .printer
            .warn(&format!("{}: exported without {line}", file.display()));
    }
    for (domain, why) in &imported.refused {
        settings
            .printer
            .error(&format!("{domain}: not imported: {why}"));
    }
    settings
        .printer
        .info(&view::snapshots::imported_line(&imported, file));
    if !imported.refused.is_empty() {
        return Err(Error::from(crate::error::Damaged::ImportRefused {
            domains: imported
                .refused
                .iter()
                .map(|(d, _)| d.to_string())
                .collect(),
            file: file.to_path_buf(),
        })
        .into());
    }
    Ok(exit::OK)
}
