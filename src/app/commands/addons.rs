//! `clinv addons`: the `lo addons --detail` view of a domain (spec §9).

use super::{deploy_domain_note, project, report_warnings};
use crate::app::cli::{AddonsArgs, TableFormat};
use crate::app::output;
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::inventory::Warning;
use crate::project::DomainKind;
use crate::project::addons::{Reader, view_rows};
use crate::project::spec;
use serde::Serialize;

#[derive(Serialize)]
struct View<'a> {
    domain: &'a str,
    kind: &'a str,
    addons: &'a [crate::project::addons::Row],
}

pub fn run(settings: &Settings, args: &AddonsArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let project = project(settings)?;
    let domain = match super::domain(settings, &project, args.domain.domain.as_deref()) {
        Ok(d) => d,
        Err(Error::InvalidDomain(d)) => {
            return nothing(
                settings,
                format!("Invalid domain name '{d}' — nothing to inventory"),
            );
        }
        Err(e) => return Err(e),
    };
    let spec_path = match project.domain_kind(&domain) {
        DomainKind::Cluster { spec } => spec,
        DomainKind::Deploy { cluster_ref, .. } => {
            deploy_domain_note(settings, &domain, cluster_ref.as_deref());
            return Ok(exit::OK);
        }
        DomainKind::Missing { spec } => {
            let message = format!(
                "No cluster spec for '{domain}' ({}) — nothing to inventory",
                spec.display()
            );
            return nothing(settings, message);
        }
    };
    let spec = match spec::read(&spec_path, project.root(), &domain) {
        Err(Error::MalformedKind(_)) => return Err(malformed(&domain, &spec_path)),
        other => other?,
    };
    // Entries that fail to parse are dropped silently here, as lok8s does.
    let entries: Vec<_> = spec.entries.into_iter().filter_map(|e| e.ok()).collect();
    let mut reader = Reader::new(project.root());
    let rows = view_rows(&entries, project.root(), &mut reader);
    let text = if format == TableFormat::Json {
        crate::inventory::render::to_json(&View {
            domain: &domain,
            kind: &spec.kind,
            addons: &rows,
        })?
    } else {
        output::addons_table(&domain, &spec.kind, &rows)
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// lok8s's "nothing to inventory" outcome: a warning and exit 0 (an error with --strict).
fn nothing(settings: &Settings, message: String) -> Result<i32> {
    report_warnings(
        settings,
        &[Warning {
            message,
            detail: None,
        }],
    )?;
    Ok(exit::OK)
}

fn malformed(domain: &str, spec_path: &std::path::Path) -> Error {
    Error::MalformedKindOf {
        domain: domain.to_string(),
        path: spec_path.to_path_buf(),
    }
}
