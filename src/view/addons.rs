//! `clinv addons`: the `lo addons --detail` table of a domain.

use super::TableStyle;
use crate::project::addons::Row;
use crate::view::table::Table;

/// The addons table, in lok8s's `lo addons --detail` layout.
///
/// The addons table: lok8s's `lo addons --detail` layout (header line, one row per entry)
/// with the inventory's facts — SOURCE, CATEGORY, TYPE, VERSION — in 100 columns; `wide`
/// adds each entry's directory and where it is configured.
pub fn addons_table(domain: &str, driver: &str, rows: &[Row], style: TableStyle) -> String {
    let mut out = String::new();
    if !style.no_headers {
        out.push_str(&format!("Addons deployed by {domain} (kind={driver})\n\n"));
    }
    if rows.is_empty() {
        if !style.no_headers {
            out.push_str("  (spec.bootstrap is empty — this cluster deploys no addons)\n");
        }
    } else {
        out.push_str(&rows_table(rows, style));
    }
    if !style.no_headers {
        out.push_str(if style.wide {
            "\nConfigure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.\n"
        } else {
            "\n-o wide shows where each addon lives and is configured (docs/guide/addons.md).\n"
        });
    }
    out
}

fn rows_table(rows: &[Row], style: TableStyle) -> String {
    let mut table = Table::new(&header(false, style.wide)).no_header(style.no_headers);
    for r in rows {
        table.row(&cells(r, style.wide));
    }
    table.render()
}

/// The addons of several domains (`addons -A`): one table led by DOMAIN (as kubectl's
/// NAMESPACE under `-A`), no title or closing hint.
pub fn fleet_addons_table(rows: &[(&str, &Row)], style: TableStyle) -> String {
    let mut table = Table::new(&header(true, style.wide)).no_header(style.no_headers);
    for (domain, r) in rows {
        let mut row = vec![domain.to_string()];
        row.extend(cells(r, style.wide));
        table.row(&row);
    }
    table.render()
}

fn header(domain: bool, wide: bool) -> Vec<&'static str> {
    let mut header = if domain { vec!["DOMAIN"] } else { vec![] };
    header.extend(["NAME", "SOURCE", "CATEGORY", "TYPE", "VERSION"]);
    if wide {
        header.extend(["PATH", "CONFIGURE"]);
    }
    header
}

fn cells(r: &Row, wide: bool) -> Vec<String> {
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut cells = vec![
        r.name.clone(),
        r.source.as_str().to_string(),
        dash(&r.category),
        r.kind.clone(),
        dash(&r.version),
    ];
    if wide {
        cells.extend([r.path.clone(), r.configure.clone()]);
    }
    cells
}
