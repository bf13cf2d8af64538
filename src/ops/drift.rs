//! `clinv drift`: was the cluster last deployed from the local spec? Compares the sha256
//! of `cluster.lok8s.yaml` with the live inventory's `specHash`, or the newest
//! snapshot's when the cluster cannot be read.

use super::Scope;
use crate::cluster::access;
use crate::error::{Error, Result};
use crate::project::DomainKind;
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
    /// The hashes differ: the local spec's and the one `source` carries.
    Drift {
        local: String,
        remote: String,
    },
    /// Nothing carries a spec hash.
    Unknown,
}

/// The verdict, what it was compared with, and the messages of the way there.
#[derive(Debug)]
pub struct Report {
    pub verdict: Verdict,
    pub source: Source,
    pub notices: Vec<Notice>,
}

/// Compares the local spec's hash with the cluster's (or the newest snapshot's).
///
/// # Errors
/// The domain has no cluster spec or it cannot be read; the runtime cannot start; the
/// store cannot be read.
pub fn drift(req: &Scope<'_>) -> Result<Report> {
    let DomainKind::Cluster { spec } = req.project.domain_kind(req.domain) else {
        return Err(Error::SpecNotFound(
            req.project
                .domain_dir(req.domain)
                .join("cluster.lok8s.yaml"),
        ));
    };
    let bytes = crate::util::files::read_bounded(&spec, crate::project::MAX_INPUT_BYTES)
        .map_err(|e| Error::io(&spec, e))?;
    let local = crate::project::spec::hex_sha256(&bytes);
    let mut notices = Vec::new();
    let live = access::read_live(&req.access, Some((req.project, req.domain)), req.opts)?;
    let (source, remote) = match live.result {
        Ok(found) => match found.object {
            Some(v) => (
                Source::Live {
                    server: found.server,
                },
                v.pointer("/spec/specHash")
                    .and_then(|h| h.as_str())
                    .map(str::to_string),
            ),
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
                    Some(s.record.spec_hash.clone()),
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

fn verdict(local: String, remote: Option<String>) -> Verdict {
    match remote {
        Some(h) if h == local => Verdict::InSync,
        Some(remote) => Verdict::Drift { local, remote },
        None => Verdict::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(verdict("a".into(), Some("a".into())), Verdict::InSync);
        assert_eq!(
            verdict("a".into(), Some("b".into())),
            Verdict::Drift {
                local: "a".into(),
                remote: "b".into()
            }
        );
        assert_eq!(verdict("a".into(), None), Verdict::Unknown);
    }
}
