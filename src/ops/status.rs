//! `clinv status`: the live inventory, or the newest snapshot when the cluster cannot be
//! read (said in a warning).

use super::Scope;
use crate::cluster::access;
use crate::delivery::Reason;
use crate::error::Result;
use crate::util::notice::Notice;
use crate::util::redact::escape_line;
use serde_json::Value;

/// What there is to show.
#[derive(Debug)]
pub enum Shown {
    /// The live object.
    Live(Value),
    /// The cluster could not be read: the inventory of the newest snapshot.
    Snapshot { id: String, inventory: Value },
    /// Nothing: the reason and the whole message (a warning, or with `--strict` the
    /// error).
    Nothing { reason: Reason, message: String },
}

/// The outcome, and the messages of the way there.
#[derive(Debug)]
pub struct Report {
    pub shown: Shown,
    pub notices: Vec<Notice>,
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
            return Ok(Report { shown, notices });
        }
        Err(f) => f,
    };
    // Unreachable: show what was last recorded for the domain, and say so.
    let journal = req.store.read()?;
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
            inventory: serde_json::to_value(&inventory).unwrap_or_default(),
        };
        return Ok(Report { shown, notices });
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
        notices,
    })
}
