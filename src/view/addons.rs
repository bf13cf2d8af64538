//! `clinv addons`: the `lo addons --detail` table of a domain.

use super::TableStyle;
use crate::domain::Domain;
use crate::error::{Error, exit};
use crate::fleet::Left;
use crate::inventory::Warning;
use crate::ops::context::{Context, Selection};
use crate::project::Project;
use crate::project::addons::Row;
use crate::project::view::{self as project_view, View};
use crate::view::format::TableAsk;
use crate::view::names;
use crate::view::table::Table;
use serde::Serialize;

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

/// `addons -o json` of one domain.
#[derive(Serialize)]
struct Json<'a> {
    domain: &'a str,
    kind: &'a str,
    addons: &'a [Row],
}

/// `clinv addons` of the domains `selection` names: one domain's view (lok8s's `lo
/// addons --detail`), or one table led by DOMAIN; the exit code.
///
/// # Errors
/// A selection error (an unknown domain is lok8s's "nothing to inventory" instead), a
/// read error of one domain, `--strict` with nothing to inventory, a write error.
pub fn say(
    cx: Context<'_>,
    project: &Project,
    selection: Selection<'_>,
    ask: &TableAsk,
) -> crate::Result<i32> {
    if let Some(domains) = cx.fleet(project, selection.many)? {
        return say_several(cx, project, &domains, ask);
    }
    let view = match cx.domain(project, selection.one) {
        Ok(domain) => project_view::addons(project, &domain).map(|v| (domain.to_string(), v))?,
        Err(Error::InvalidDomain(d)) => (
            d.clone(),
            View::Nothing(format!("Invalid domain name '{d}' — nothing to inventory")),
        ),
        // An unknown domain: lok8s's "nothing to inventory" warning, with the known
        // domains (and a "did you mean") under it.
        Err(Error::Domain(problem)) => match selection.one {
            Some(d) => match project_view::addons(project, &Domain::parse(d)?)? {
                View::Nothing(m) => (
                    d.to_string(),
                    View::Nothing(format!("{m}\n{}", problem.hint())),
                ),
                other => (d.to_string(), other),
            },
            None => return Err(Error::Domain(problem)),
        },
        Err(e) => return Err(e),
    };
    let text = match view {
        (domain, View::Deploy { cluster_ref }) => {
            cx.deploy(&domain, cluster_ref.as_deref());
            return Ok(exit::OK);
        }
        // lok8s's "nothing to inventory": a warning and exit 0 (an error with --strict).
        (_, View::Nothing(message)) => {
            let warning = Warning {
                message,
                detail: None,
            };
            cx.warnings(&[warning])?;
            return Ok(exit::OK);
        }
        (
            domain,
            View::Rows {
                kind,
                rows,
                skipped,
            },
        ) => {
            let said: Vec<Warning> = skipped.iter().map(crate::inventory::skipped).collect();
            cx.warnings(&said)?;
            let json = || {
                crate::inventory::render::to_json(&Json {
                    domain: &domain,
                    kind: &kind,
                    addons: &rows,
                })
            };
            ask.answer(
                cx.console.width(),
                json,
                || names(rows.iter().map(|r| r.name.as_str())),
                |style| addons_table(&domain, &kind, &rows, style),
            )?
        }
    };
    cx.console.data(&text)?;
    Ok(exit::OK)
}

/// An addon of `addons -A -o json`: its domain and the domain's driver, then the row.
#[derive(Serialize)]
struct Entry<'a> {
    domain: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    row: &'a Row,
}

/// `addons -A -o json`: the domains listed, their addons, and the domains left out.
#[derive(Serialize)]
struct FleetJson<'a> {
    domains: Vec<&'a str>,
    addons: Vec<Entry<'a>>,
    left: &'a [Left],
}

/// Several domains: one table led by DOMAIN; a deploy domain is named on stderr and in
/// `left`; a domain that fails is named with its error (exit 1, the others printed).
fn say_several(
    cx: Context<'_>,
    project: &Project,
    domains: &[Domain],
    ask: &TableAsk,
) -> crate::Result<i32> {
    let (mut views, mut left, mut code) = (Vec::new(), Vec::new(), exit::OK);
    let mut said = Vec::new();
    for domain in domains {
        match project_view::addons(project, domain) {
            Ok(View::Rows {
                kind,
                rows,
                skipped,
            }) => {
                said.extend(skipped.iter().map(crate::inventory::skipped));
                views.push((domain.as_str(), kind, rows));
            }
            Ok(View::Deploy { cluster_ref }) => {
                left.push(Left::deploy(cx.deploys, domain, cluster_ref.as_deref()));
            }
            Ok(View::Nothing(message)) => {
                cx.console.warn(&message);
                left.push(Left {
                    domain: domain.to_string(),
                    why: message,
                });
            }
            Err(e) => {
                left.push(Left::failed(cx.console, domain, &e));
                code = exit::FAILURE;
            }
        }
    }
    cx.warnings(&said)?;
    let rows: Vec<(&str, &str, &Row)> = views
        .iter()
        .flat_map(|(d, kind, rows)| rows.iter().map(move |r| (*d, kind.as_str(), r)))
        .collect();
    let json = || {
        crate::inventory::render::to_json(&FleetJson {
            domains: views.iter().map(|(d, _, _)| *d).collect(),
            addons: rows
                .iter()
                .map(|(domain, kind, row)| Entry { domain, kind, row })
                .collect(),
            left: &left,
        })
    };
    let names = || {
        let names: Vec<String> = rows
            .iter()
            .map(|(d, _, r)| format!("{d}/{}", r.name))
            .collect();
        crate::view::names(names.iter().map(String::as_str))
    };
    let table = |style| {
        let rows: Vec<_> = rows.iter().map(|(d, _, r)| (*d, *r)).collect();
        fleet_addons_table(&rows, style)
    };
    cx.console
        .data(&ask.answer(cx.console.width(), json, names, table)?)?;
    Ok(code)
}
