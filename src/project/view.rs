//! The `lo addons --detail` view of a domain (spec §9): what its spec deploys, read
//! the way lok8s reads it for that view (entries that fail to parse are left out, and
//! named for the caller to say).

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::project::addons::{Reader, Row, view_rows};
use crate::project::bootstrap::Rejection;
use crate::project::{DomainKind, Project, spec};

/// What the view shows for a domain.
#[derive(Debug)]
pub enum View {
    /// A cluster domain: its driver kind, one row per addon, and the entries left out
    /// (lok8s's view drops them silently; clinv says so, as `render` does).
    Rows {
        kind: String,
        rows: Vec<Row>,
        skipped: Vec<Rejection>,
    },
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
    let (mut entries, mut skipped) = (Vec::new(), Vec::new());
    for entry in spec.entries {
        match entry {
            Ok(e) => entries.push(e),
            Err(r) => skipped.push(r),
        }
    }
    let mut reader = Reader::new(project.root());
    let rows = view_rows(&entries, project.root(), &mut reader);
    Ok(View::Rows {
        kind: spec.kind,
        rows,
        skipped,
    })
}
