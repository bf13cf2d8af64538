//! `clinv fleet`: the addon × domain matrix as a table (rows per addon, or per domain with
//! `--by domain`), as JSON and as a markdown table.

use crate::inventory::render;
use crate::ops::fleet::{Cell, Matrix};
use crate::view::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

/// A cell as printed: the version, `*` for an addon with no chart version (a raw
/// folder, a target), `-` where the domain does not deploy it; `(drift)` after a live
/// cell that is not what the project renders, `(queued)` after a stored one that has
/// not reached the cluster.
fn text(cell: Option<&Cell>) -> String {
    let Some(cell) = cell else {
        return "-".into();
    };
    let version = cell.version.as_deref().unwrap_or("*");
    match (cell.drifting, cell.queued) {
        (true, _) => format!("{version} (drift)"),
        (_, true) => format!("{version} (queued)"),
        _ => version.to_string(),
    }
}

/// The rows of the matrix, transposed with `by_domain`: header, then one line each.
fn grid(m: &Matrix, by_domain: bool) -> Vec<Vec<String>> {
    let mut grid = Vec::new();
    if by_domain {
        let mut header = vec!["DOMAIN".to_string()];
        header.extend(m.rows.iter().map(|r| r.addon.clone()));
        grid.push(header);
        for (c, domain) in m.domains.iter().enumerate() {
            let mut line = vec![domain.clone()];
            line.extend(m.rows.iter().map(|r| text(r.cells.get(&c))));
            grid.push(line);
        }
    } else {
        let mut header = vec!["ADDON".to_string()];
        header.extend(m.domains.iter().cloned());
        grid.push(header);
        for r in &m.rows {
            let mut line = vec![r.addon.clone()];
            line.extend((0..m.domains.len()).map(|c| text(r.cells.get(&c))));
            grid.push(line);
        }
    }
    grid
}

/// The table; empty when no cell is left (a query that matched nothing).
pub fn table(m: &Matrix, by_domain: bool, no_headers: bool) -> String {
    if m.rows.is_empty() {
        return String::new();
    }
    let grid = grid(m, by_domain);
    let header: Vec<&str> = grid[0].iter().map(String::as_str).collect();
    let mut table = Table::new(&header).no_header(no_headers);
    for line in &grid[1..] {
        table.row(line);
    }
    table.render()
}

/// A markdown table (for a pull request or a wiki page).
pub fn markdown(m: &Matrix, by_domain: bool) -> String {
    if m.rows.is_empty() {
        return String::new();
    }
    let grid = grid(m, by_domain);
    let cell = |t: &str| crate::util::redact::escape_line(t).replace('|', "\\|");
    let mut out = String::new();
    for (i, line) in grid.iter().enumerate() {
        let cells: Vec<String> = line.iter().map(|t| cell(t)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("|{}\n", "---|".repeat(line.len())));
        }
    }
    out
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Doc<'a> {
    schema_version: u32,
    source: &'static str,
    domains: &'a [String],
    addons: Vec<AddonDoc<'a>>,
    /// Domains with no column, and why.
    left: &'a [crate::ops::fleet::Left],
    /// Cells a version bound could not order.
    unordered: &'a [String],
}

#[derive(Serialize)]
struct AddonDoc<'a> {
    name: &'a str,
    /// The version in each domain that deploys it (`null`: no chart version).
    versions: BTreeMap<&'a str, Option<&'a str>>,
    /// `--from live`: the domains whose live version is not what the project renders.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    drifting: Vec<&'a str>,
    /// `--from store`: the domains whose version waits in a pending snapshot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    queued: Vec<&'a str>,
}

/// The domains of `row` whose cell is `flagged`.
fn domains_where<'a>(
    m: &'a Matrix,
    row: &'a crate::ops::fleet::Row,
    flagged: fn(&Cell) -> bool,
) -> Vec<&'a str> {
    row.cells
        .iter()
        .filter(|(_, cell)| flagged(cell))
        .map(|(&c, _)| m.domains[c].as_str())
        .collect()
}

/// `-o json`.
///
/// # Errors
/// serde's, which this document does not produce.
pub fn json(m: &Matrix) -> crate::error::Result<String> {
    let addons = m
        .rows
        .iter()
        .map(|r| AddonDoc {
            name: &r.addon,
            versions: r
                .cells
                .iter()
                .map(|(&c, cell)| (m.domains[c].as_str(), cell.version.as_deref()))
                .collect(),
            drifting: domains_where(m, r, |c| c.drifting),
            queued: domains_where(m, r, |c| c.queued),
        })
        .collect();
    render::to_json(&Doc {
        schema_version: 1,
        source: m.source.word(),
        domains: &m.domains,
        addons,
        left: &m.left,
        unordered: &m.unordered,
    })
}
