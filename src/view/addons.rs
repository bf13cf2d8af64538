//! `clinv addons`: the `lo addons --detail` table of a domain.

use super::TableStyle;
use crate::project::addons::Row;
use crate::view::table::Table;

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
    let mut header = vec!["NAME", "SOURCE", "CATEGORY", "TYPE", "VERSION"];
    if style.wide {
        header.extend(["PATH", "CONFIGURE"]);
    }
    let mut table = Table::new(&header).no_header(style.no_headers);
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    for r in rows {
        let mut cells = vec![
            r.name.clone(),
            r.source.as_str().to_string(),
            dash(&r.category),
            r.kind.clone(),
            dash(&r.version),
        ];
        if style.wide {
            cells.extend([r.path.clone(), r.configure.clone()]);
        }
        table.row(&cells);
    }
    table.render()
}
