//! `clinv status`: the live inventory, or the newest snapshot when the cluster cannot be
//! read (said in a warning), with the domain's delivery facts from the store: the queue
//! and when a snapshot was last applied.

use super::Scope;
use crate::cluster::access;
use crate::delivery::Reason;
use crate::error::{Error, Result};
use crate::util::notice::Notice;
use crate::util::redact::escape_line;
use serde_json::Value;

/// What there is to show.
#[derive(Debug)]
pub enum Shown {
    /// The live object.
    Live(Value),
    /// The cluster could not be read: the inventory of the newest snapshot, recorded
    /// `at`, and why the cluster could not be read (the reason's name).
    Snapshot {
        id: String,
        at: String,
        why: String,
        inventory: Value,
    },
    /// Nothing: the reason and the whole message (a warning, or with `--strict` the
    /// error).
    Nothing { reason: Reason, message: String },
}

/// The outcome, and the messages of the way there.
#[derive(Debug)]
pub struct Report {
    pub shown: Shown,
    /// What the store says of the domain's delivery (`None`: the store could not be
    /// read, said in a notice).
    pub delivery: Option<Delivery>,
    pub notices: Vec<Notice>,
}

/// The domain's delivery, from the store's state records. Times as recorded (RFC 3339).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Snapshots queued for the cluster and not yet applied or superseded.
    pub pending: usize,
    /// When the oldest of them was recorded.
    pub oldest_pending_at: Option<String>,
    /// The newest `applied` state change: when, and of which snapshot.
    pub last_applied: Option<(String, String)>,
}

impl Delivery {
    /// The facts of a journal.
    pub fn of(journal: &crate::store::Journal) -> Delivery {
        let mut d = Delivery::default();
        // Oldest first: the first pending one is the oldest.
        for snap in &journal.snapshots {
            if snap.is_pending() {
                d.pending += 1;
                if d.oldest_pending_at.is_none() {
                    d.oldest_pending_at = Some(snap.record.at.clone());
                }
            }
            // A snapshot deleted since was still applied then.
            for st in &snap.history {
                if st.state != crate::store::State::Applied {
                    continue;
                }
                let newer = d.last_applied.as_ref().is_none_or(|(at, _)| {
                    crate::util::time::parse_rfc3339(&st.at) > crate::util::time::parse_rfc3339(at)
                });
                if newer {
                    d.last_applied = Some((st.at.clone(), snap.record.id.clone()));
                }
            }
        }
        d
    }
}

/// Reads the live inventory, falling back to the newest snapshot.
///
/// # Errors
/// The runtime cannot start; the store cannot be read.
pub fn status(req: &Scope<'_>) -> Result<Report> {
    let mut notices = Vec::new();
    let live = access::read_live(&req.access, Some((req.project, req.domain)), req.opts)?;
    let f = match live.result {
        Ok(found) => {
            let shown = match found.object {
                Some(value) => Shown::Live(value),
                None => Shown::Nothing {
                    reason: Reason::Rejected,
                    message: "status: the cluster has no ClusterInventory 'cluster'".into(),
                },
            };
            // The cluster answered: a store that cannot be read costs only its facts.
            let delivery = match req.store.read() {
                Ok(journal) => Some(Delivery::of(&journal)),
                Err(e) => {
                    notices.push(Notice::warn(format!(
                        "status: no queue or last-applied time: {}",
                        crate::error::chain(&e)
                    )));
                    None
                }
            };
            return Ok(Report {
                shown,
                delivery,
                notices,
            });
        }
        Err(f) => f,
    };
    // Unreachable: show what was last recorded for the domain, and say so.
    let journal = req.store.read()?;
    let delivery = Some(Delivery::of(&journal));
    if let Some(snap) = journal.newest_first().next()
        && let Ok(inventory) = req.store.inventory(&snap.record)
    {
        notices.push(Notice::warn(format!(
            "status: cluster not readable ({}: {}); showing the newest snapshot {} ({}, recorded {})",
            f.reason,
            f.detail,
            escape_line(&snap.record.id),
            snap.state.as_str(),
            escape_line(&snap.record.at)
        )));
        let shown = Shown::Snapshot {
            id: snap.record.id.clone(),
            at: snap.record.at.clone(),
            why: f.reason.to_string(),
            inventory: serde_json::to_value(&inventory)
                .map_err(|e| Error::encode("the inventory", e))?,
        };
        return Ok(Report {
            shown,
            delivery,
            notices,
        });
    }
    let message = format!(
        "status: cannot read the ClusterInventory: {}: {}",
        f.reason, f.detail
    );
    Ok(Report {
        shown: Shown::Nothing {
            reason: f.reason,
            message,
        },
        delivery,
        notices,
    })
}
