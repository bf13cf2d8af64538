//! `clinv addons`: the `lo addons --detail` view of a domain (spec §9).

use super::{deploy_domain_note, project, report_warnings};
use crate::app::Result;
use crate::app::cli::{AddonsArgs, TableFormat};
use crate::app::output;
use crate::app::settings::Settings;
use crate::error::{Error, exit};
use crate::inventory::Warning;
use crate::project::view::{self, View};
use crate::view::{TableStyle, addons::addons_table, names};
use serde::Serialize;

#[derive(Serialize)]
struct Json<'a> {
    domain: &'a str,
    kind: &'a str,
    addons: &'a [crate::project::addons::Row],
}

pub fn run(settings: &Settings, args: &AddonsArgs) -> Result<i32> {
    let project = project(settings)?;
    let view = match super::domain(settings, &project, args.domain.domain.as_deref()) {
        Ok(domain) => view::addons(&project, &domain).map(|v| (domain.to_string(), v))?,
        Err(Error::InvalidDomain(d)) => (
            d.clone(),
            View::Nothing(format!("Invalid domain name '{d}' — nothing to inventory")),
        ),
        // An unknown domain: lok8s's "nothing to inventory" warning, with the known
        // domains (and a "did you mean") under it.
        Err(Error::Domain(problem)) => match args.domain.domain.as_deref() {
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
            match args.table.output.clone().unwrap_or_default() {
                TableFormat::Json => json()?,
                TableFormat::Yaml => output::yaml(&json()?)?,
                TableFormat::JsonPath(template) => {
                    output::jsonpath(&template, &json()?, args.table.allow_missing_template_keys)?
                }
                TableFormat::Name => names(rows.iter().map(|r| r.name.as_str())),
                format => addons_table(
                    &domain,
                    &kind,
                    &rows,
                    TableStyle {
                        wide: format == TableFormat::Wide,
                        no_headers: args.table.no_headers,
                    },
                ),
            }
        }
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}
