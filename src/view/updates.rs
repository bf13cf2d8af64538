//! `clinv updates`: the available updates, as a table and as JSON.

use super::TableStyle;
use crate::error::Result;
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
