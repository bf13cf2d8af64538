//! The `lo addons --detail` view of a domain (spec §9): what its spec deploys, read
//! the way lok8s reads it for that view (entries that fail to parse are left out).

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::project::addons::{Reader, Row, view_rows};
use crate::project::{DomainKind, Project, spec};

/// What the view shows for a domain.
#[derive(Debug)]
pub enum View {
    /// A cluster domain: its driver kind and one row per addon.
    Rows { kind: String, rows: Vec<Row> },
    /// A deploy domain has no inventory of its own; its cluster, when it names one.
    Deploy { cluster_ref: Option<String> },
    /// lok8s's "nothing to inventory": a warning, not an error.
    Nothing(String),
}

/// The view of `domain` (a valid domain name).
///
/// # Errors
/// A spec that cannot be read, or whose kind is malformed.
pub fn addons(project: &Project, domain: &Domain) -> Result<View> {
    let spec_path = match project.domain_kind(domain) {
        DomainKind::Cluster { spec } => spec,
        DomainKind::Deploy { cluster_ref, .. } => return Ok(View::Deploy { cluster_ref }),
        DomainKind::Missing { spec } => {
            return Ok(View::Nothing(format!(
                "No cluster spec for '{domain}' ({}) — nothing to inventory",
                spec.display()
            )));
        }
    };
    let spec = match spec::read(&spec_path, project.root(), domain) {
        Err(Error::MalformedKind(_)) => {
            return Err(Error::MalformedKindOf {
                domain: domain.to_string(),
                path: spec_path,
            });
        }
        other => other?,
    };
    let entries: Vec<_> = spec.entries.into_iter().filter_map(|e| e.ok()).collect();
    let mut reader = Reader::new(project.root());
    let rows = view_rows(&entries, project.root(), &mut reader);
    Ok(View::Rows {
        kind: spec.kind,
        rows,
    })
}
