//! `clinv addons`: the `lo addons --detail` table of a domain.

use super::TableStyle;
use crate::project::addons::Row;
use crate::view::table::Table;

/// The `lo addons --detail` table (spec §9): lok8s's columns, each as wide as its widest
/// cell (long names stay aligned), no underline row; `wide` adds SOURCE.
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
        let mut header = vec!["NAME", "CATEGORY", "TYPE", "VERSION"];
        if style.wide {
            header.push("SOURCE");
        }
        header.push("CONFIGURE");
        let mut table = Table::new(&header).no_header(style.no_headers);
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        for r in rows {
            let mut cells = vec![
                r.name.clone(),
                dash(&r.category),
                r.kind.clone(),
                dash(&r.version),
            ];
            if style.wide {
                cells.push(r.source.as_str().to_string());
            }
            cells.push(r.configure.clone());
            table.row(&cells);
        }
        out.push_str(&table.render());
    }
    if !style.no_headers {
        out.push_str("\nConfigure an addon: edit its spec.bootstrap inline values, or its addons/<name>/values.<driver>.yaml — see docs/guide/addons.md.\n");
    }
    out
}
