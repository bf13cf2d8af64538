//! `clinv fleet`: the addon × domain matrix as a table (rows per addon, or per domain with
//! `--by domain`; `-o wide` with categories and full references), as JSON and as a
//! markdown table.

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

/// Where a domain's newest snapshot went besides the cluster, `-` nowhere: the channels'
/// names, or with `wide` the registry reference with its digest.
pub(super) fn delivered(m: &Matrix, domain: &str, wide: bool) -> String {
    let Some(channels) = m.delivered.get(domain) else {
        return "-".into();
    };
    let mut words = Vec::new();
    if channels.committed {
        words.push("committed".to_string());
    }
    match (&channels.pushed, wide) {
        (Some(reference), true) => words.push(format!("pushed {reference}")),
        (Some(_), false) => words.push("pushed".to_string()),
        (None, _) => {}
    }
    words.join(", ")
}

/// The rows of the matrix, transposed with `by_domain`: header, then one line each.
/// A store's matrix ends with where each domain's newest snapshot went (when one went
/// anywhere); `wide` adds each addon's category and the full references.
/// A cell as printed, with `--changed-since`'s mark: `(was V)` after a version that was
/// another then, `(new)` where the domain did not have the addon then.
fn marked(m: &Matrix, row: &crate::ops::fleet::Row, column: usize) -> String {
    let cell = row.cells.get(&column);
    let shown = text(cell);
    let Some(changed) = &m.changed else {
        return shown;
    };
    let key = (row.addon.clone(), m.domains[column].clone());
    match (cell, changed.was.get(&key)) {
        (Some(_), Some(Some(was))) => format!("{shown} (was {})", was.as_deref().unwrap_or("*")),
        (Some(_), Some(None)) => format!("{shown} (new)"),
        _ => shown,
    }
}

fn grid(m: &Matrix, by_domain: bool, wide: bool) -> Vec<Vec<String>> {
    let channels = !m.delivered.is_empty();
    let mut grid = Vec::new();
    if by_domain {
        let mut header = vec!["DOMAIN".to_string()];
        header.extend(m.rows.iter().map(|r| r.addon.clone()));
        header.extend(channels.then(|| "DELIVERED".to_string()));
        grid.push(header);
        for (c, domain) in m.domains.iter().enumerate() {
            let mut line = vec![domain.clone()];
            line.extend(m.rows.iter().map(|r| marked(m, r, c)));
            line.extend(channels.then(|| delivered(m, domain, wide)));
            grid.push(line);
        }
    } else {
        let mut header = vec!["ADDON".to_string()];
        header.extend(wide.then(|| "CATEGORY".to_string()));
        header.extend(m.domains.iter().cloned());
        grid.push(header);
        for r in &m.rows {
            let mut line = vec![r.addon.clone()];
            line.extend(wide.then(|| r.category.clone().unwrap_or_else(|| "-".into())));
            line.extend((0..m.domains.len()).map(|c| marked(m, r, c)));
            grid.push(line);
        }
        if channels {
            let mut line = vec!["(delivered)".to_string()];
            line.extend(wide.then(|| "-".to_string()));
            line.extend(m.domains.iter().map(|d| delivered(m, d, wide)));
            grid.push(line);
        }
    }
    grid
}

/// The table (`-o wide`: with categories and full references); empty when no cell is
/// left (a query that matched nothing).
///
/// Wider than `width` (the terminal's, `COLUMNS`; `None` in a pipe: no limit), the
/// domain columns wrap into blocks that each repeat the ADDON column (and CATEGORY with
/// `wide`; DOMAIN with `by_domain`, whose addon columns wrap): every version stays whole
/// and in the orientation asked for. Transposing instead would only move the width to
/// the other side (a fleet has as many addons as a terminal has room for, or more) and
/// change what a row means under the user's feet.
pub fn table(m: &Matrix, by_domain: bool, style: crate::view::TableStyle) -> String {
    if m.rows.is_empty() {
        return String::new();
    }
    let mut grid = grid(m, by_domain, style.wide);
    let keys = 1 + usize::from(style.wide && !by_domain);
    let mut table = of_grid(&grid, style.no_headers);
    // Wrapped, the domain columns are as narrow as their versions when their headers
    // leave out what every domain's name ends with, said once above the blocks.
    let mut above = String::new();
    if !table.fits(style.width) && !by_domain && !style.no_headers {
        let suffix = shared_suffix(&m.domains);
        if !suffix.is_empty() {
            for name in &mut grid[0][keys..] {
                name.truncate(name.len() - suffix.len());
            }
            above = format!("Domains: *{}\n\n", crate::view::table::cell_text(&suffix));
            table = of_grid(&grid, style.no_headers);
        }
    }
    above + &table.render_blocks(style.width, keys)
}

fn of_grid(grid: &[Vec<String>], no_headers: bool) -> Table {
    let header: Vec<&str> = grid[0].iter().map(String::as_str).collect();
    let mut table = Table::new(&header).no_header(no_headers);
    for line in &grid[1..] {
        table.row(line);
    }
    table
}

/// What the domains' names share at their end (`.acme.example`): whole labels, never a
/// whole name; empty when they share none or there is one domain. The wrapped table and
/// the page leave it out of the column headers and say it once.
pub(super) fn shared_suffix(domains: &[String]) -> String {
    let Some(first) = domains.first().filter(|_| domains.len() > 1) else {
        return String::new();
    };
    let labels = |d: &str| d.rsplit('.').map(str::to_string).collect::<Vec<_>>();
    let mut shared = labels(first);
    for d in &domains[1..] {
        let own = labels(d);
        let same = shared.iter().zip(&own).take_while(|(a, b)| a == b).count();
        // Leave every name at least one label of its own.
        shared.truncate(same.min(own.len() - 1));
    }
    shared.truncate(shared.len().min(first.split('.').count() - 1));
    shared.iter().rev().map(|l| format!(".{l}")).collect()
}

/// A markdown table (for a pull request or a wiki page).
pub fn markdown(m: &Matrix, by_domain: bool) -> String {
    if m.rows.is_empty() {
        return String::new();
    }
    let grid = grid(m, by_domain, false);
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
    /// `--from store`: where each domain's newest snapshot went besides the cluster.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    delivered: BTreeMap<&'a str, DeliveredDoc<'a>>,
    /// `--at`: the date shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<&'a crate::ops::fleet::at::AsOf>,
    /// `--changed-since`: the date compared with, and what changed besides the cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_since: Option<ChangedDoc<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChangedDoc<'a> {
    #[serde(flatten)]
    since: Option<&'a crate::ops::fleet::at::AsOf>,
    /// Domains with no column then.
    added_domains: &'a [String],
    /// Cells there then and gone now.
    removed: Vec<RemovedDoc<'a>>,
}

#[derive(Serialize)]
struct RemovedDoc<'a> {
    addon: &'a str,
    domain: &'a str,
    was: Option<&'a str>,
}

#[derive(Serialize)]
struct DeliveredDoc<'a> {
    /// The registry reference it was pushed to last, with the digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pushed: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    committed: bool,
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
    /// `--changed-since`: each domain whose cell changed, with its version then (`null`:
    /// the domain did not have the addon then, or it had no chart version).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    was: BTreeMap<&'a str, Option<&'a str>>,
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
            was: was(m, r),
        })
        .collect();
    render::to_json(&Doc {
        schema_version: 1,
        source: m.source.word(),
        domains: &m.domains,
        addons,
        left: &m.left,
        unordered: &m.unordered,
        delivered: m
            .delivered
            .iter()
            .map(|(d, c)| {
                let doc = DeliveredDoc {
                    pushed: c.pushed.as_deref(),
                    committed: c.committed,
                };
                (d.as_str(), doc)
            })
            .collect(),
        at: m.as_of.as_ref(),
        changed_since: m.changed.as_ref().map(|c| ChangedDoc {
            since: c.since.as_ref(),
            added_domains: &c.added_domains,
            removed: c
                .removed
                .iter()
                .map(|(addon, domain, was)| RemovedDoc {
                    addon,
                    domain,
                    was: was.as_deref(),
                })
                .collect(),
        }),
    })
}

/// The changed cells of `row`, by domain, with what each was.
fn was<'a>(m: &'a Matrix, row: &'a crate::ops::fleet::Row) -> BTreeMap<&'a str, Option<&'a str>> {
    let Some(changed) = &m.changed else {
        return BTreeMap::new();
    };
    row.cells
        .keys()
        .filter_map(|&c| {
            let domain = m.domains[c].as_str();
            let was = changed.was.get(&(row.addon.clone(), domain.to_string()))?;
            Some((domain, was.as_ref().and_then(|v| v.as_deref())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::fleet::Source;
    use crate::store::segments::Channels;

    fn matrix() -> Matrix {
        let cells = vec![(0, Some("v1.20.1")), (1, Some("v1.20.1"))];
        let mut m =
            crate::ops::fleet::fixture(Source::Store, &["lab", "prod"], &[("cert-manager", cells)]);
        m.rows[0].category = Some("security".into());
        let pushed = Channels {
            pushed: Some("oci://r.example/prod:latest@sha256:ab".into()),
            committed: true,
        };
        m.delivered = [("prod".to_string(), pushed)].into();
        m
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_shared_suffix_is_whole_labels_and_never_a_whole_name() {
        assert_eq!(
            shared_suffix(&names(&["a.acme.example", "bb.acme.example"])),
            ".acme.example"
        );
        assert_eq!(
            shared_suffix(&names(&["a.x.example", "b.y.example"])),
            ".example"
        );
        assert_eq!(shared_suffix(&names(&["lab", "prod"])), "");
        assert_eq!(shared_suffix(&names(&["one.example"])), "");
        // "lab.example" keeps "lab": the shared ".lab.example" would leave it empty.
        assert_eq!(
            shared_suffix(&names(&["lab.example", "x.lab.example"])),
            ".example"
        );
        assert_eq!(
            shared_suffix(&names(&["ab.example", "b.example"])),
            ".example"
        );
        assert_eq!(shared_suffix(&names(&["a.b-c", "d.c"])), "");
    }

    #[test]
    fn a_store_matrix_says_where_each_newest_snapshot_went() {
        let m = matrix();
        let short = grid(&m, false, false);
        assert_eq!(short[2], ["(delivered)", "-", "committed, pushed"]);
        let wide = grid(&m, false, true);
        assert_eq!(wide[0], ["ADDON", "CATEGORY", "lab", "prod"]);
        assert_eq!(wide[1][1], "security");
        let reference = "committed, pushed oci://r.example/prod:latest@sha256:ab";
        assert_eq!(wide[2], ["(delivered)", "-", "-", reference]);
        let by_domain = grid(&m, true, false);
        assert_eq!(by_domain[0], ["DOMAIN", "cert-manager", "DELIVERED"]);
        assert_eq!(by_domain[1], ["lab", "v1.20.1", "-"]);
        // Without a delivery in view, no row.
        let mut none = matrix();
        none.delivered.clear();
        assert_eq!(grid(&none, false, true).len(), 2);
    }
}
