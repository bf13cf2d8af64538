//! `clinv addons`: the `lo addons --detail` view of a domain (spec §9).

use super::{Left, deploy_domain_note, project, report_warnings};
use crate::app::Result;
use crate::app::cli::AddonsArgs;
use crate::app::settings::Settings;
use crate::error::{Error, exit};
use crate::inventory::Warning;
use crate::project::view::{self, View};
use crate::view::{
    addons::{addons_table, fleet_addons_table},
    names,
};
use serde::Serialize;

#[derive(Serialize)]
struct Json<'a> {
    domain: &'a str,
    kind: &'a str,
    addons: &'a [crate::project::addons::Row],
}

pub fn run(settings: &Settings, args: &AddonsArgs) -> Result<i32> {
    let project = project(settings)?;
    if let Some(domains) = super::fleet(&project, &args.domain)? {
        return several(settings, &project, &domains, args);
    }
    let view = match super::domain(settings, &project, args.domain.one()) {
        Ok(domain) => view::addons(&project, &domain).map(|v| (domain.to_string(), v))?,
        Err(Error::InvalidDomain(d)) => (
            d.clone(),
            View::Nothing(format!("Invalid domain name '{d}' — nothing to inventory")),
        ),
        // An unknown domain: lok8s's "nothing to inventory" warning, with the known
        // domains (and a "did you mean") under it.
        Err(Error::Domain(problem)) => match args.domain.one() {
            Some(d) => match view::addons(&project, &crate::domain::Domain::parse(d)?)? {
                View::Nothing(m) => (
                    d.to_string(),
                    View::Nothing(format!("{m}\n{}", problem.hint())),
                ),
                other => (d.to_string(), other),
            },
            None => return Err(Error::Domain(problem).into()),
        },
        Err(e) => return Err(e.into()),
    };
    let text = match view {
        (domain, View::Deploy { cluster_ref }) => {
            deploy_domain_note(settings, &domain, cluster_ref.as_deref());
            return Ok(exit::OK);
        }
        // lok8s's "nothing to inventory": a warning and exit 0 (an error with --strict).
        (_, View::Nothing(message)) => {
            let warning = Warning {
                message,
                detail: None,
            };
            report_warnings(settings, &[warning])?;
            return Ok(exit::OK);
        }
        (domain, View::Rows { kind, rows }) => {
            let json = || {
                crate::inventory::render::to_json(&Json {
                    domain: &domain,
                    kind: &kind,
                    addons: &rows,
                })
            };
            args.table.answer(
                settings.printer.width(),
                json,
                || names(rows.iter().map(|r| r.name.as_str())),
                |style| addons_table(&domain, &kind, &rows, style),
            )?
        }
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// An addon of `addons -A -o json`: its domain and the domain's driver, then the row.
#[derive(Serialize)]
struct Entry<'a> {
    domain: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    row: &'a crate::project::addons::Row,
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
fn several(
    settings: &Settings,
    project: &crate::project::Project,
    domains: &[crate::domain::Domain],
    args: &AddonsArgs,
) -> Result<i32> {
    let (mut views, mut left, mut code) = (Vec::new(), Vec::new(), exit::OK);
    for domain in domains {
        match view::addons(project, domain) {
            Ok(View::Rows { kind, rows }) => views.push((domain.as_str(), kind, rows)),
            Ok(View::Deploy { cluster_ref }) => {
                left.push(Left::deploy(settings, domain, cluster_ref.as_deref()));
            }
            Ok(View::Nothing(message)) => {
                settings.printer.warn(&message);
                left.push(Left {
                    domain: domain.to_string(),
                    why: message,
                });
            }
            Err(e) => {
                left.push(Left::failed(settings, domain, &e));
                code = exit::FAILURE;
            }
        }
    }
    let rows: Vec<(&str, &str, &crate::project::addons::Row)> = views
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
    let text = args
        .table
        .answer(settings.printer.width(), json, names, table)?;
    settings.printer.data(&text)?;
    Ok(code)
}
