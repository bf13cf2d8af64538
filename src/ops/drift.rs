//! `clinv drift`: does the cluster hold what the project renders? The inventory rendered
//! from the project now is compared semantically (the diff engine: addons, versions,
//! specHash and the other fields; never renderedAt) with the live inventory, or with the
//! newest snapshot's when the cluster cannot be read. A chart pin bumped in the project
//! but not yet published is drift, although the cluster spec (specHash) is unchanged.

use super::Scope;
use crate::cluster::access;
use crate::error::{Error, Result};
use crate::history::diff;
use crate::inventory::{self, Loaded};
use crate::store::State;
use crate::util::notice::Notice;
use std::fmt;

/// What the local spec was compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Live {
        server: String,
    },
    /// The cluster answered without a ClusterInventory.
    NoInventory {
        server: String,
    },
    Snapshot {
        id: String,
        state: State,
        at: String,
    },
    /// No live inventory and no snapshot.
    Nothing,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Live { server } => write!(f, "the live inventory at {server}"),
            Source::NoInventory { server } => {
                write!(f, "the cluster at {server} (no ClusterInventory)")
            }
            Source::Snapshot { id, state, at } => {
                write!(f, "snapshot {id} ({}, recorded {at})", state.as_str())
            }
            Source::Nothing => f.write_str("no live inventory and no snapshot"),
        }
    }
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    InSync,
    /// What changes from the compared inventory (`from`) to the project's render (`to`).
    Drift(Box<diff::Report>),
    /// Nothing to compare with (or it is not a ClusterInventory).
    Unknown,
}

/// The verdict, what it was compared with, and the messages of the way there.
#[derive(Debug)]
pub struct Report {
    pub verdict: Verdict,
    pub source: Source,
    pub notices: Vec<Notice>,
}

/// Compares the project's render with the live inventory (or the newest snapshot's).
///
/// # Errors
/// The domain has no cluster spec or it cannot be rendered; the runtime cannot start;
/// the store cannot be read.
pub fn drift(req: &Scope<'_>, rendered_at: jiff::Timestamp) -> Result<Report> {
    let local = match inventory::load(req.project, req.domain, rendered_at)? {
        Loaded::Cluster(built) => built.inventory,
        Loaded::Deploy { .. } => {
            return Err(Error::SpecNotFound(
                req.project
                    .domain_dir(req.domain)
                    .join("cluster.lok8s.yaml"),
            ));
        }
    };
    let mut notices = Vec::new();
    let live = access::read_live(&req.access, Some((req.project, req.domain)), req.opts)?;
    let (source, remote) = match live.result {
        Ok(found) => match found.object {
            Some(v) => {
                let remote = inventory::parse::inventory_from_value(v)
                    .map_err(|e| {
                        notices.push(Notice::warn(format!(
                            "the live object is not a ClusterInventory clinv can read: {}",
                            crate::util::redact::escape_line(&crate::error::chain(&e))
                        )));
                    })
                    .ok();
                (
                    Source::Live {
                        server: found.server,
                    },
                    remote,
                )
            }
            None => (
                Source::NoInventory {
                    server: found.server,
                },
                None,
            ),
        },
        Err(f) => {
            notices.push(Notice::info(format!(
                "cluster not readable ({}: {}); comparing with the newest snapshot",
                f.reason, f.detail
            )));
            let journal = req.store.read()?;
            match journal.newest_first().next() {
                Some(s) => (
                    Source::Snapshot {
                        id: s.record.id.clone(),
                        state: s.state,
                        at: s.record.at.clone(),
                    },
                    Some(req.store.inventory(&s.record)?),
                ),
                None => (Source::Nothing, None),
            }
        }
    };
    Ok(Report {
        verdict: verdict(local, remote),
        source,
        notices,
    })
}

fn verdict(
    local: inventory::ClusterInventory,
    remote: Option<inventory::ClusterInventory>,
) -> Verdict {
    let Some(remote) = remote else {
        return Verdict::Unknown;
    };
    let report = diff::diff(&remote, &local);
    if report.has_changes {
        Verdict::Drift(Box::new(report))
    } else {
        Verdict::InSync
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(version: &str, pin: &str) -> inventory::ClusterInventory {
        inventory::parse::inventory_from_text(&format!(
            "apiVersion: lok8s.dev/v1alpha1\nkind: ClusterInventory\nmetadata: {{name: cluster}}\nspec: {{lok8sVersion: '1', kind: lo, specHash: h, renderedAt: '{version}', addons: [{{name: cilium, chartVersion: '{pin}'}}]}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn verdicts() {
        // renderedAt never counts; a pin does, with the same specHash.
        let a = inv("2026-01-01T00:00:00Z", "1.0");
        assert_eq!(
            verdict(a.clone(), Some(inv("2020-01-01T00:00:00Z", "1.0"))),
            Verdict::InSync
        );
        let Verdict::Drift(report) = verdict(inv("2026-01-01T00:00:00Z", "1.1"), Some(a.clone()))
        else {
            panic!("a pin bump is drift");
        };
        assert_eq!(report.changes.len(), 1);
        assert_eq!(verdict(a, None), Verdict::Unknown);
    }
}
