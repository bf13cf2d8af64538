//! `clinv updates`: the available updates, as a table and as JSON.

use super::TableStyle;
use crate::error::Result;
use crate::view::table::Table;

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
