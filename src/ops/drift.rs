//! `clinv drift`: does the cluster hold what the project renders?
//!
//! The inventory rendered from the project now is compared semantically (the diff engine:
//! addons, versions, specHash and the other fields; never renderedAt) with the live
//! inventory. When the cluster cannot be read the answer is unknown, and says why;
//! `--offline` compares with the newest snapshot that was applied instead (never a pending
//! one: it never reached the cluster). A chart pin bumped in the project but not yet
//! published is drift, although the cluster spec (specHash) is unchanged.

use super::Scope;
use crate::cluster::access;
use crate::delivery::Reason;
use crate::error::{Error, Result};
use crate::history::diff;
use crate::inventory::{self, ClusterInventory, Loaded};
use crate::snapshot_id::SnapshotId;
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
    /// `--offline`: the snapshot applied last, applied `at`.
    Snapshot {
        id: SnapshotId,
        state: State,
        at: String,
    },
    /// `--offline` and no snapshot was ever applied.
    NoApplied,
    /// The cluster could not be read: why (the reason and its detail).
    NotRead {
        reason: Reason,
        detail: String,
    },
}

impl Source {
    /// Whether the answer is the live cluster's (`--offline` answers are not, by request).
    pub fn read_the_cluster(&self) -> bool {
        !matches!(self, Source::NotRead { .. })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Live { server } => write!(f, "the live inventory at {server}"),
            Source::NoInventory { server } => {
                write!(f, "the cluster at {server} (no ClusterInventory)")
            }
            Source::Snapshot { id, state, at } => {
                write!(f, "snapshot {id} (applied {at}; now {})", state.as_str())
            }
            Source::NoApplied => f.write_str("no applied snapshot"),
            Source::NotRead { reason, detail } => {
                write!(
                    f,
                    "nothing: the live cluster was not read ({reason}: {detail})"
                )
            }
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

impl Report {
    /// The answer's outcome: another domain's inventory on the cluster is its own
    /// verdict, a cluster not read is not the live answer (16), else the verdict's.
    pub fn outcome(&self) -> crate::error::Outcome {
        use crate::error::Outcome;
        match (&self.verdict, &self.source) {
            (
                _,
                Source::NotRead {
                    reason: Reason::DomainMismatch,
                    ..
                },
            ) => Outcome::OtherDomain,
            (_, source) if !source.read_the_cluster() => Outcome::NotLive,
            (Verdict::InSync, _) => Outcome::Done,
            (Verdict::Drift(_), _) => Outcome::Different,
            (Verdict::Unknown, _) => Outcome::Unknown,
        }
    }
}

/// Compares the project's render with the live inventory, or with `--offline` the
/// snapshot applied last.
///
/// # Errors
/// The domain has no cluster spec or it cannot be rendered; the runtime cannot start;
/// the store cannot be read.
pub fn drift(req: &Scope<'_>, rendered_at: jiff::Timestamp, offline: bool) -> Result<Report> {
    let local = rendered(req, rendered_at)?;
    let mut notices = Vec::new();
    let (source, remote) = if offline {
        last_applied(req)?
    } else {
        live(req, &mut notices)?
    };
    Ok(Report {
        verdict: verdict(local, remote),
        source,
        notices,
    })
}

/// The project's render of the domain.
fn rendered(req: &Scope<'_>, rendered_at: jiff::Timestamp) -> Result<ClusterInventory> {
    match inventory::load(req.project, req.domain, rendered_at)? {
        Loaded::Cluster(built) => Ok(built.inventory),
        Loaded::Deploy { .. } => Err(Error::SpecNotFound(
            req.project
                .domain_dir(req.domain)
                .join("cluster.lok8s.yaml"),
        )),
    }
}

/// Compares the project's render with an inventory already read (`status -A` reads the
/// cluster once for both): [`Verdict::Unknown`] when it is not a ClusterInventory.
///
/// # Errors
/// The domain has no cluster spec or it cannot be rendered.
pub fn against(
    req: &Scope<'_>,
    rendered_at: jiff::Timestamp,
    read: &serde_json::Value,
) -> Result<Verdict> {
    let remote = inventory::parse::inventory_from_value(read.clone()).ok();
    Ok(verdict(rendered(req, rendered_at)?, remote))
}

/// The live inventory, or why there is none.
fn live(req: &Scope<'_>, notices: &mut Vec<Notice>) -> Result<(Source, Option<ClusterInventory>)> {
    let live = access::read_live(&req.access, Some((req.project, req.domain)), req.opts)?;
    let found = match live.result {
        Ok(found) => found,
        Err(f) => {
            let source = Source::NotRead {
                reason: f.reason,
                detail: f.detail,
            };
            return Ok((source, None));
        }
    };
    let Some(object) = found.object else {
        let source = Source::NoInventory {
            server: found.server,
        };
        return Ok((source, None));
    };
    let remote = inventory::parse::inventory_from_value(object)
        .map_err(|e| {
            notices.push(Notice::warn(format!(
                "the live object is not a ClusterInventory clinv can read: {}",
                crate::util::redact::escape_line(&crate::error::chain(&e))
            )));
        })
        .ok();
    let source = Source::Live {
        server: found.server,
    };
    Ok((source, remote))
}

/// `--offline`: the snapshot applied last, from the store.
fn last_applied(req: &Scope<'_>) -> Result<(Source, Option<ClusterInventory>)> {
    let (_, last_applied) = super::status::Delivery::of_store(&req.store)?;
    let Some((snap, at, state)) = last_applied else {
        return Ok((Source::NoApplied, None));
    };
    let inventory = req.store.inventory(&snap)?;
    let state = match state {
        Some(state) => state,
        None => req
            .store
            .whole_queue(false)?
            .state_of(&snap.id)
            .unwrap_or(State::Applied),
    };
    let source = Source::Snapshot {
        state,
        id: snap.id,
        at,
    };
    Ok((source, Some(inventory)))
}

fn verdict(local: ClusterInventory, remote: Option<ClusterInventory>) -> Verdict {
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

    fn inv(version: &str, pin: &str) -> ClusterInventory {
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

#[cfg(test)]
mod outcome_tests {
    use super::*;
    use crate::error::Outcome;

    fn report(verdict: Verdict, source: Source) -> Report {
        Report {
            verdict,
            source,
            notices: Vec::new(),
        }
    }

    /// The verdict decides unless the cluster could not be read (16) or holds another
    /// domain's inventory (its own outcome).
    #[test]
    fn the_outcome_is_the_verdicts_only_when_the_cluster_was_read() {
        let live = || Source::Live {
            server: "https://k".into(),
        };
        let not_read = |reason| Source::NotRead {
            reason,
            detail: "d".into(),
        };
        let outcome = |v, s| report(v, s).outcome();
        assert!(matches!(outcome(Verdict::InSync, live()), Outcome::Done));
        assert!(matches!(
            outcome(Verdict::Unknown, live()),
            Outcome::Unknown
        ));
        let other = outcome(Verdict::InSync, not_read(Reason::DomainMismatch));
        assert!(matches!(other, Outcome::OtherDomain));
        let unread = outcome(Verdict::InSync, not_read(Reason::Unreachable));
        assert!(matches!(unread, Outcome::NotLive));
        // --offline: the snapshot applied last is the answer asked for, not a cluster
        // that was not read.
        let offline = outcome(Verdict::Unknown, Source::NoApplied);
        assert!(matches!(offline, Outcome::Unknown));
    }
}
