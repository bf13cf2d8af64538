//! `clinv status`: the live inventory with the domain's delivery facts from the store (the
//! queue and when a snapshot was last applied).
//!
//! When the cluster cannot be read, the snapshot applied last is shown as such — never a
//! pending one, which never reached the cluster — and the result says the cluster was not
//! read; `--offline` asks for that snapshot without reading the cluster.

use super::Scope;
use crate::cluster::access;
use crate::delivery::Reason;
use crate::error::{Error, Result};
use crate::snapshot_id::SnapshotId;
use crate::store::queue::Queue;
use crate::store::{DomainStore, SnapshotRecord, State, StateRecord};
use crate::util::notice::Notice;
use crate::util::redact::escape_line;
use serde_json::Value;

/// One domain's outcome when its answer was shown: not the live cluster's answer is 16,
/// or with `--strict` why the cluster was not read; another domain's inventory on the
/// cluster is its own outcome.
pub fn outcome(not_read: Option<Reason>, strict: bool) -> crate::error::Outcome {
    use crate::error::Outcome;
    match not_read {
        Some(Reason::DomainMismatch) => Outcome::OtherDomain,
        Some(reason) if strict => Outcome::Unapplied(vec![reason]),
        Some(_) => Outcome::NotLive,
        None => Outcome::Done,
    }
}

/// What there is to show.
#[derive(Debug)]
pub enum Shown {
    /// The live object.
    Live(Value),
    /// The snapshot applied last (applied `at`): with `--offline`, or because the cluster
    /// could not be read (`not_read`: the reason and its detail).
    Snapshot {
        id: SnapshotId,
        at: String,
        not_read: Option<(Reason, String)>,
        inventory: Value,
    },
    /// The cluster could not be read and no snapshot was ever applied: nothing to show.
    NotRead { reason: Reason, detail: String },
    /// Nothing: the reason and the whole message (a warning, or with `--strict` the
    /// error).
    Nothing { reason: Reason, message: String },
    /// `--offline` and no snapshot was ever applied: `said` tells so and what is pending
    /// (shown on stdout with the delivery section, never a pending snapshot's inventory);
    /// `message` is [`Shown::Nothing`]'s (exit 0, `--strict` 10).
    NothingApplied { said: String, message: String },
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
    /// The Git channel: the newest `committed` change (`to`: the commit).
    pub last_committed: Option<Landed>,
    /// The registry channel: the newest `pushed` change (`to`: the reference and digest).
    pub last_pushed: Option<Landed>,
    /// The Git and registry channels' owed pushes (the outbox; no journal read).
    pub owed: Vec<crate::store::outbox::Owed>,
    /// Outbox files of the domain that cannot be used, each with its path and why.
    pub outbox_damage: Vec<String>,
}

/// The snapshot applied last, the time of that change, and its state now (`None`:
/// recorded before the newest segments read; [`DomainStore::whole_queue`] tells).
pub type LastApplied = (SnapshotRecord, String, Option<State>);

/// When a snapshot reached a channel, which one, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landed {
    pub at: String,
    pub snapshot: SnapshotId,
    pub to: Option<String>,
}

impl Delivery {
    /// The facts of a domain's store, from its queue — the compact listing, never every
    /// record's history — and the snapshot applied last with the time of that change;
    /// from the whole journal only when the queue cannot tell.
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn of_store(store: &DomainStore) -> Result<(Delivery, Option<LastApplied>)> {
        let (mut d, applied) = Self::of_records(store)?;
        let listing = store.owed();
        d.owed = listing.owed.into_iter().map(|e| e.owed).collect();
        d.outbox_damage = listing.damaged.iter().map(ToString::to_string).collect();
        Ok((d, applied))
    }

    /// [`Delivery::of_store`] without the outbox.
    fn of_records(store: &DomainStore) -> Result<(Delivery, Option<LastApplied>)> {
        // The newest segments; every segment's listing when they cannot tell; the
        // journal when neither can (the newest changes name no snapshot).
        if let Some(found) = Self::of_queue(store, &store.queue(false)?)? {
            return Ok(found);
        }
        if let Some(found) = Self::of_queue(store, &store.whole_queue(false)?)? {
            return Ok(found);
        }
        let journal = store.read()?;
        let applied = journal
            .last_applied()
            .map(|(snap, at)| (snap.record.clone(), at.to_string(), Some(snap.state)));
        Ok((Delivery::of(&journal), applied))
    }

    /// [`Delivery::of_store`] from `queue`; `None` when it cannot tell.
    fn of_queue(
        store: &DomainStore,
        queue: &Queue,
    ) -> Result<Option<(Delivery, Option<LastApplied>)>> {
        let mut d = Delivery::default();
        let (pending, oldest) = queue.pending_count();
        d.pending = pending;
        d.oldest_pending_at = oldest.map(|o| o.at);
        let (Some(applied), Some(committed), Some(pushed)) = (
            queue.last_in(store, State::Applied)?,
            queue.last_in(store, State::Committed)?,
            queue.last_in(store, State::Pushed)?,
        ) else {
            return Ok(None);
        };
        d.last_applied = applied
            .as_ref()
            .map(|(snap, st)| (st.at.clone(), snap.id.to_string()));
        let landed = |found: Option<(SnapshotRecord, StateRecord)>,
                      to: fn(StateRecord) -> Option<String>| {
            found.map(|(snap, st)| Landed {
                at: st.at.clone(),
                snapshot: snap.id,
                to: to(st),
            })
        };
        d.last_committed = landed(committed, |st| st.commit);
        d.last_pushed = landed(pushed, |st| st.pushed);
        let applied = applied.map(|(snap, st)| {
            let now = queue.state_of(&snap.id);
            (snap, st.at, now)
        });
        Ok(Some((d, applied)))
    }

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
        }
        d.last_applied = journal
            .last_applied()
            .map(|(snap, at)| (at.to_string(), snap.record.id.to_string()));
        let landed = |state, to: fn(&StateRecord) -> &Option<String>| {
            journal.last_in(state).map(|(snap, st)| Landed {
                at: st.at.clone(),
                snapshot: snap.record.id.clone(),
                to: to(st).clone(),
            })
        };
        d.last_committed = landed(State::Committed, |st| &st.commit);
        d.last_pushed = landed(State::Pushed, |st| &st.pushed);
        d
    }
}

/// Reads the live inventory; when the cluster cannot be read (or with `offline`), the
/// snapshot applied last.
///
/// # Errors
/// The runtime cannot start; the store cannot be read.
pub fn status(req: &Scope<'_>, offline: bool) -> Result<Report> {
    let mut notices = Vec::new();
    let f = if offline {
        None
    } else {
        let live = access::read_live(&req.access, Some((req.project, req.domain)), req.opts)?;
        match live.result {
            Ok(found) => return Ok(answered(req, found.object, notices)),
            Err(f) => Some(f),
        }
    };
    let (facts, last_applied) = Delivery::of_store(&req.store)?;
    notices.extend(damage_notices(&facts));
    let delivery = Some(facts);
    let not_read = f.map(|f| (f.reason, f.detail));
    let Some((snap, at, _)) = last_applied else {
        let shown = match not_read {
            Some((reason, detail)) => Shown::NotRead { reason, detail },
            None => Shown::NothingApplied {
                said: delivery.as_ref().map(nothing_applied).unwrap_or_default(),
                message: format!(
                    "status: no snapshot of {} was ever applied; nothing to show --offline",
                    req.domain
                ),
            },
        };
        if let (Shown::Nothing { .. }, Some(d)) = (&shown, &delivery) {
            // No delivery section is printed then: the owed pushes are said here.
            notices.extend(owed_notices(d));
        }
        return Ok(Report {
            shown,
            delivery,
            notices,
        });
    };
    let inventory = req.store.inventory(&snap)?;
    if let Some((reason, detail)) = &not_read {
        notices.push(Notice::debug(format!(
            "status: cluster not readable ({reason}: {detail}); showing snapshot {}, applied {}",
            escape_line(&snap.id),
            escape_line(&at)
        )));
    }
    let shown = Shown::Snapshot {
        id: snap.id.clone(),
        at,
        not_read,
        inventory: serde_json::to_value(&inventory)
            .map_err(|e| Error::encode("the inventory", e))?,
    };
    Ok(Report {
        shown,
        delivery,
        notices,
    })
}

/// What `status --offline` says when no snapshot was ever applied: that, and how many
/// are pending since when (they never reached the cluster, so none is shown).
fn nothing_applied(d: &Delivery) -> String {
    match (d.pending, &d.oldest_pending_at) {
        (0, _) => "nothing applied yet; nothing pending".to_string(),
        (n, Some(at)) => format!(
            "nothing applied yet; {n} snapshot(s) pending since {} (clinv replay delivers them)",
            escape_line(at)
        ),
        (n, None) => {
            format!("nothing applied yet; {n} snapshot(s) pending (clinv replay delivers them)")
        }
    }
}

/// The unusable outbox files of `d`, as warnings.
fn damage_notices(d: &Delivery) -> Vec<Notice> {
    let warn = |x: &String| Notice::warn(format!("outbox: {x}"));
    d.outbox_damage.iter().map(warn).collect()
}

/// The owed pushes of `d`, as notices.
fn owed_notices(d: &Delivery) -> Vec<Notice> {
    d.owed
        .iter()
        .map(|o| {
            Notice::info(format!(
                "{}: 1 push owed to {} since {} ({}: {})",
                o.push.channel(),
                o.push.shown_target(),
                o.at,
                o.reason,
                o.detail
            ))
        })
        .collect()
}

/// The cluster answered: its inventory (or that it has none). A store that cannot be
/// read costs only its facts.
fn answered(req: &Scope<'_>, object: Option<Value>, mut notices: Vec<Notice>) -> Report {
    let shown = match object {
        Some(value) => Shown::Live(value),
        None => Shown::Nothing {
            reason: Reason::Rejected,
            message: "status: the cluster has no ClusterInventory 'cluster'".into(),
        },
    };
    let delivery = match Delivery::of_store(&req.store) {
        Ok((facts, _)) => {
            notices.extend(damage_notices(&facts));
            Some(facts)
        }
        Err(e) => {
            notices.push(Notice::warn(format!(
                "status: no queue or last-applied time: {}",
                crate::error::chain(&e)
            )));
            None
        }
    };
    Report {
        shown,
        delivery,
        notices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Outcome;

    /// Shown, but not the live cluster's answer: 16, with `--strict` why; another
    /// domain's inventory on the cluster is its own outcome, strict or not.
    #[test]
    fn an_answer_not_from_the_cluster_is_not_done() {
        assert!(matches!(outcome(None, true), Outcome::Done));
        assert!(matches!(
            outcome(Some(Reason::Unreachable), false),
            Outcome::NotLive
        ));
        let strict = outcome(Some(Reason::Unreachable), true);
        assert!(matches!(&strict, Outcome::Unapplied(r) if r == &[Reason::Unreachable]));
        for strict in [false, true] {
            let other = outcome(Some(Reason::DomainMismatch), strict);
            assert!(matches!(other, Outcome::OtherDomain));
        }
    }
}
