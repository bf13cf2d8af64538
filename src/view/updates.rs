//! `clinv updates`: the available updates, as a table and as JSON.

use super::TableStyle;
use crate::catalog::index::AddonIndex;
use crate::catalog::updates::Update;
use crate::error::Result;
use crate::ops::context::{Context, Selection};
use crate::ops::live::Live;
use crate::ops::updates::{self as ops, Compared};
use crate::view::table::Table;

/// The `updates` table.
///
/// The `updates` table: NAME, CURRENT, LATEST and a NOTE (`unordered` when the two
/// versions are not both SemVer, `pre-release` when LATEST is one); `wide` adds COMPARED
/// (`live`, `snapshot`, `rendered` or `file`: where CURRENT was read).
pub fn updates_table(
    updates: &[crate::catalog::updates::Update],
    compared: &str,
    style: TableStyle,
) -> String {
    if updates.is_empty() {
        return "no updates: every compared addon is at or above its version in the index.\n"
            .to_string();
    }
    let mut header = vec!["NAME", "CURRENT", "LATEST", "NOTE"];
    if style.wide {
        header.push("COMPARED");
    }
    let mut table = Table::new(&header).no_header(style.no_headers);
    for u in updates {
        let note = match (u.unordered, u.prerelease) {
            (true, _) => "unordered",
            (false, true) => "pre-release",
            _ => "",
        };
        let mut cells = vec![u.name.as_str(), &u.current, &u.latest, note];
        if style.wide {
            cells.push(compared);
        }
        table.row(&cells);
    }
    table.render()
}

/// The `updates -o json` document.
///
/// The `updates -o json` document: `inventory` (`live`, `snapshot`, `rendered` or
/// `file`), `live` (false when the cluster could not be read), `notRead` (why, or null),
/// `indexGeneratedAt` (when the index has one), `updates` (`[]` when none).
///
/// # Errors
/// Serialisation failures (not expected).
pub fn updates_json(
    inventory: &str,
    not_read: Option<&str>,
    index_generated_at: &str,
    updates: &[crate::catalog::updates::Update],
) -> Result<String> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Report<'a> {
        inventory: &'a str,
        live: bool,
        not_read: Option<&'a str>,
        #[serde(skip_serializing_if = "str::is_empty")]
        index_generated_at: &'a str,
        updates: &'a [crate::catalog::updates::Update],
    }
    crate::inventory::render::to_json(&Report {
        inventory,
        live: not_read.is_none() && inventory == "live",
        not_read,
        index_generated_at,
        updates,
    })
}

/// The `updates` table of several domains (`updates -A`): led by DOMAIN, then as
/// [`updates_table`] (`wide` adds COMPARED, per domain).
pub fn fleet_updates_table(rows: &[FleetUpdate<'_>], style: TableStyle) -> String {
    if rows.is_empty() {
        return "no updates: every compared addon is at or above its version in the index.\n"
            .to_string();
    }
    let mut header = vec!["DOMAIN", "NAME", "CURRENT", "LATEST", "NOTE"];
    if style.wide {
        header.push("COMPARED");
    }
    let mut table = Table::new(&header).no_header(style.no_headers);
    for r in rows {
        let u = r.update;
        let note = match (u.unordered, u.prerelease) {
            (true, _) => "unordered",
            (false, true) => "pre-release",
            _ => "",
        };
        let mut cells = vec![r.domain, u.name.as_str(), &u.current, &u.latest, note];
        if style.wide {
            cells.push(r.compared);
        }
        table.row(&cells);
    }
    table.render()
}

/// One update of one domain, in `updates -A`: `-o json` gives the domain first, then
/// the update's fields.
#[derive(Debug, serde::Serialize)]
pub struct FleetUpdate<'a> {
    pub domain: &'a str,
    #[serde(skip)]
    pub compared: &'a str,
    #[serde(flatten)]
    pub update: &'a crate::catalog::updates::Update,
}

/// What one domain of `updates -A` compared: `inventory` (`live`, `snapshot`,
/// `rendered`), `live`, `notRead` — as `updates -o json` says for one domain.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetDomain<'a> {
    pub domain: &'a str,
    pub inventory: &'a str,
    pub live: bool,
    pub not_read: Option<&'a str>,
}

/// The `updates -A -o json` document: `domains` (what each compared), `indexGeneratedAt`
/// (when the index has one), `updates` (each with its `domain`), `left` (the domains
/// not compared, and why).
///
/// # Errors
/// Serialisation failures (not expected).
pub fn fleet_updates_json<L: serde::Serialize>(
    domains: &[FleetDomain<'_>],
    index_generated_at: &str,
    updates: &[FleetUpdate<'_>],
    left: &[L],
) -> Result<String> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Report<'a, L> {
        domains: &'a [FleetDomain<'a>],
        #[serde(skip_serializing_if = "str::is_empty")]
        index_generated_at: &'a str,
        updates: &'a [FleetUpdate<'a>],
        left: &'a [L],
    }
    crate::inventory::render::to_json(&Report {
        domains,
        index_generated_at,
        updates,
        left,
    })
}

/// What `updates` asked for: the index and how to fetch it, `--from`, `--offline`,
/// `--pre` and the table's `-o`.
pub struct Ask<'a> {
    pub index: &'a str,
    pub fetch: crate::catalog::fetch::Options,
    pub from: Option<&'a std::path::Path>,
    pub offline: bool,
    pub pre: bool,
    pub table: crate::view::format::TableAsk,
}

/// `clinv updates`: the answer said, the exit code returned.
///
/// The index loaded, then the one inventory of `--from`, one domain's, or several
/// domains' ([`ops::several`]: `refuse` is the caller's word on flags that name one
/// cluster) compared with it.
///
/// # Errors
/// What `refuse` returns, an index, selection or read error, a write error.
pub fn say<E: From<crate::Error>>(
    cx: Context<'_>,
    live: &Live,
    selection: Selection<'_>,
    ask: &Ask<'_>,
    refuse: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<i32, E> {
    let (index_ref, index) = ops::load_index(cx, ask.index, &ask.fetch)?;
    let compared = match ask.from {
        Some(path) => Some((ops::from_file(path)?, None)),
        None => {
            let project = cx.project()?;
            if let Some(domains) = cx.fleet(&project, selection.many)? {
                ops::duplicates(cx, &index_ref, &index);
                let how = (&index, ask.offline, ask.pre);
                let fleet = ops::several(cx, live, &project, &domains, how, refuse)?;
                cx.console
                    .data(&fleet_format(&ask.table, &fleet, &index.generated_at)?)?;
                return Ok(fleet.exit_code(cx.strict));
            }
            ops::compared(cx, live, &project, selection.one, ask.offline)?
        }
    };
    let Some((compared, not_read)) = compared else {
        return Ok(crate::error::exit::OK);
    };
    Ok(say_one(cx, ask, (&index_ref, &index), &compared, not_read)?)
}

/// One inventory compared with the index: the answer said, its exit code (not the live
/// cluster's answer: 16, or with `--strict` why the cluster was not read).
fn say_one(
    cx: Context<'_>,
    ask: &Ask<'_>,
    (index_ref, index): (&crate::catalog::fetch::IndexRef, &AddonIndex),
    compared: &Compared,
    not_read: ops::NotRead,
) -> Result<i32> {
    ops::duplicates(cx, index_ref, index);
    let list = crate::catalog::updates::compute_with(&compared.addons, index, ask.pre);
    cx.console.detail(&format!(
        "compared the {} with {}{}",
        compared.source.describe(),
        index_ref.display(),
        match index.generated_at.as_str() {
            "" => String::new(),
            at => format!(" (generated {at})"),
        }
    ));
    let not_read_text = not_read.as_ref().map(|(r, d)| format!("{r}: {d}"));
    let answer = Answer {
        compared,
        not_read: not_read_text.as_deref(),
        generated_at: &index.generated_at,
        list: &list,
    };
    cx.console.data(&format(&ask.table, &answer)?)?;
    Ok(ops::exit_of(&not_read, cx.strict))
}

/// What `updates` prints, in any format.
struct Answer<'a> {
    compared: &'a Compared,
    not_read: Option<&'a str>,
    generated_at: &'a str,
    list: &'a [Update],
}

/// The answer in the asked format; a table says first when the cluster was not read.
fn format(ask: &crate::view::format::TableAsk, a: &Answer<'_>) -> Result<String> {
    let word = a.compared.source.word();
    let json = || updates_json(word, a.not_read, a.generated_at, a.list);
    let names = || crate::view::names(a.list.iter().map(|u| u.name.as_str()));
    // Versions and a one-word NOTE: no free text to fit.
    ask.answer(None, json, names, |style| {
        let table = updates_table(a.list, word, style);
        match (a.not_read, ask.no_headers) {
            (Some(why), false) => format!(
                "the live cluster was not read ({}): the versions are the {}\n{table}",
                crate::util::redact::escape_line(why),
                a.compared.source.describe()
            ),
            _ => table,
        }
    })
}

/// `updates -A` in the asked format.
fn fleet_format(
    ask: &crate::view::format::TableAsk,
    fleet: &ops::Fleet<'_>,
    generated_at: &str,
) -> Result<String> {
    let rows: Vec<FleetUpdate<'_>> = fleet
        .compared
        .iter()
        .flat_map(|(domain, compared, list, _)| {
            list.iter().map(|update| FleetUpdate {
                domain: domain.as_str(),
                compared: compared.source.word(),
                update,
            })
        })
        .collect();
    let domains: Vec<FleetDomain<'_>> = fleet
        .compared
        .iter()
        .map(|(domain, compared, _, not_read)| FleetDomain {
            domain: domain.as_str(),
            inventory: compared.source.word(),
            live: not_read.is_none() && compared.source.word() == "live",
            not_read: not_read.as_ref().map(|(_, why)| why.as_str()),
        })
        .collect();
    let json = || fleet_updates_json(&domains, generated_at, &rows, &fleet.left);
    let names = || {
        let name = |r: &FleetUpdate<'_>| {
            let name = crate::util::redact::escape_line(&r.update.name);
            format!("{}/{name}\n", r.domain)
        };
        rows.iter().map(name).collect()
    };
    let table = |style| fleet_updates_table(&rows, style);
    // Versions and a one-word NOTE: no free text to fit.
    ask.answer(None, json, names, table)
}
