//! What the delivery path owes the cluster — the domain's pending snapshots and the one
//! applied last in the order — read from the compact listing ([`super::scan`], fed from
//! the segments' summaries), never from the whole journal: `publish`, `replay` and
//! `status` run over and over in a loop that never stops, and the full read
//! ([`super::Journal`]: every record with its history) costs about 2 KB a record,
//! 2 GB at 1,000,000. The listing costs about 60 bytes a row, and its answers are the
//! full read's (the store's model tests hold them equal; so do this module's).
//!
//! A snapshot's record is found by its id from the end of the live files
//! ([`super::segments::Layout::find_snapshot_from_end`]): what is owed is nearly always
//! recent.

use super::scan::{Listing, RowRef};
use super::{Damage, DomainStore, SnapshotId, SnapshotRecord, State, StateRecord};
use crate::error::{Error, Result};

/// A domain's queue for the cluster, as the store stands when it was read.
pub struct Queue {
    listing: Listing,
}

/// One snapshot of the queue: its id, when it was recorded and its `renderedAt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owed {
    /// Its place in the order (at, seq, id): the listing's row.
    pub index: usize,
    pub id: SnapshotId,
    pub at: String,
    pub rendered_at: String,
}

fn is_pending(r: &RowRef<'_>) -> bool {
    r.state() != State::Deleted && r.cluster_state() == Some(State::Pending)
}

fn owed(index: usize, r: &RowRef<'_>) -> Owed {
    Owed {
        index,
        id: SnapshotId::from(r.id().to_string()),
        at: r.at().to_string(),
        rendered_at: r.rendered_at().to_string(),
    }
}

impl Queue {
    /// The pending snapshots, oldest first (as [`super::Snapshot::is_pending`] says).
    pub fn pending(&self) -> Vec<Owed> {
        self.listing
            .rows()
            .enumerate()
            .filter(|(_, r)| is_pending(r))
            .map(|(i, r)| owed(i, &r))
            .collect()
    }

    /// How many snapshots are pending, and the oldest of them.
    pub fn pending_count(&self) -> (usize, Option<Owed>) {
        let mut rows = self
            .listing
            .rows()
            .enumerate()
            .filter(|(_, r)| is_pending(r));
        let oldest = rows.next().map(|(i, r)| owed(i, &r));
        (usize::from(oldest.is_some()) + rows.count(), oldest)
    }

    /// The newest pending snapshot.
    pub fn newest_pending(&self) -> Option<Owed> {
        let n = self.listing.len();
        self.listing
            .rows()
            .rev()
            .enumerate()
            .find(|(_, r)| is_pending(r))
            .map(|(i, r)| owed(n - 1 - i, &r))
    }

    /// Where `id` stands in the order (its first record, as every reader takes it).
    pub fn position(&self, id: &str) -> Option<usize> {
        self.listing.rows().position(|r| *r.id() == *id)
    }

    /// The pending snapshots ordered before `id`, which a delivery of `id` supersedes
    /// (as [`super::Journal::pending_before`]); none when `id` is not in the store.
    pub fn pending_before(&self, id: &str) -> Vec<SnapshotId> {
        let Some(at) = self.position(id) else {
            return Vec::new();
        };
        self.pending()
            .into_iter()
            .take_while(|o| o.index < at)
            .map(|o| o.id)
            .collect()
    }

    /// Whether `id` is pending.
    pub fn is_pending(&self, id: &str) -> bool {
        self.position(id)
            .and_then(|i| self.listing.row(i))
            .is_some_and(|r| is_pending(&r))
    }

    /// The newest snapshot (not deleted) whose cluster state is `applied` and that is
    /// ordered at or after `index`.
    pub fn applied_from(&self, index: usize) -> Option<Owed> {
        let n = self.listing.len();
        self.listing
            .rows()
            .rev()
            .enumerate()
            .map(|(i, r)| (n - 1 - i, r))
            .take_while(|(i, _)| *i >= index)
            .find(|(_, r)| r.state() != State::Deleted && r.cluster_state() == Some(State::Applied))
            .map(|(i, r)| owed(i, &r))
    }

    /// Each snapshot other than the one at `index` whose `renderedAt` is `rendered_at`:
    /// whether it is ordered before it (the clock-skew check of a replay).
    pub fn rendered_at(&self, rendered_at: &str, index: usize) -> Vec<bool> {
        self.listing
            .rows()
            .enumerate()
            .filter(|(i, r)| *i != index && *r.rendered_at() == *rendered_at)
            .map(|(i, _)| i < index)
            .collect()
    }

    /// The state shown of snapshot `id` (as [`super::Snapshot::state`]).
    pub fn state_of(&self, id: &str) -> Option<State> {
        let i = self.position(id)?;
        self.listing.row(i).map(|r| r.state())
    }

    /// Why the snapshot at `index` is in its cluster state (the change in force).
    pub fn row_reason(&self, index: usize) -> Option<crate::delivery::Reason> {
        self.listing.row(index).and_then(|r| r.reason())
    }

    /// The damaged lines met on the way.
    pub fn damage(&self) -> &[Damage] {
        &self.listing.damage
    }
}

impl Queue {
    /// The record of snapshot `id`: searched from the newest end of the live files
    /// (what is owed is nearly always recent), from the start when an id was recorded
    /// twice (the first record is every reader's).
    ///
    /// # Errors
    /// A live file cannot be read.
    pub fn record(&self, store: &DomainStore, id: &str) -> Result<Option<SnapshotRecord>> {
        let layout = store.layout();
        let found = if self.listing.has_repeats() {
            layout.find_snapshot(id)
        } else {
            layout.find_snapshot_from_end(id)
        };
        found.map_err(|(p, e)| Error::io(p, e))
    }
}

/// The newest change of a domain to one state: the snapshot and the change.
pub type Landed = (SnapshotRecord, StateRecord);

impl Queue {
    /// The newest change to `state` (`applied`, `committed` or `pushed`) of any
    /// snapshot — what the cluster, the branch or the registry got last, whatever became
    /// of the snapshot since — as [`super::Journal::last_in`] finds it. `None` when the
    /// queue cannot tell (the caller reads the journal).
    ///
    /// # Errors
    /// A live file cannot be read.
    pub fn last_in(&self, store: &DomainStore, state: State) -> Result<Option<Option<Landed>>> {
        let Some(found) = self.listing.last_change(state) else {
            return Ok(None);
        };
        let Some((index, at)) = found else {
            return Ok(Some(None));
        };
        let Some(row) = self.listing.row(index) else {
            return Ok(None);
        };
        let id = row.id().to_string();
        let Some(record) = self.record(store, &id)? else {
            return Ok(None);
        };
        let change = store
            .layout()
            .find_state_from_end(&id, state, &at)
            .map_err(|(p, e)| Error::io(p, e))?;
        Ok(change.map(|st| Some((record, st))))
    }
}

impl DomainStore {
    /// The domain's queue. `locked`: the caller holds the domain lock, so the summaries
    /// the listing lacks are written (the next read uses them instead of the lines).
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn queue(&self, locked: bool) -> Result<Queue> {
        let listing = if locked && self.check_owner().is_ok() {
            self.check_dirs()?;
            super::summary::read_tracking(
                &self.layout(),
                super::summary::Summaries::UseAndWrite,
                || Some(()),
            )
            .map_err(|(p, e)| Error::io(p, e))?
        } else {
            self.check_dirs()?;
            let summaries = if self.check_owner().is_ok() {
                super::summary::Summaries::UseAndWrite
            } else {
                super::summary::Summaries::Use
            };
            super::summary::read_tracking(&self.layout(), summaries, || {
                self.read_lock(std::time::Duration::ZERO).ok().flatten()
            })
            .map_err(|(p, e)| Error::io(p, e))?
        };
        Ok(Queue { listing })
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan::testing::random_journals;
    use super::super::segments::Layout;
    use super::super::segments::read_journal;
    use super::*;

    /// A domain store whose live generation holds `text` as one sealed segment and an
    /// empty active one.
    fn store_of(text: &str) -> (tempfile::TempDir, DomainStore) {
        let dir = tempfile::tempdir().unwrap();
        let domain_dir = dir.path().join("d");
        let generation = domain_dir.join("segments/1");
        std::fs::create_dir_all(&generation).unwrap();
        std::fs::create_dir_all(domain_dir.join("objects")).unwrap();
        std::fs::write(domain_dir.join("segments/CURRENT"), "1\n").unwrap();
        std::fs::write(generation.join("000001.log"), text).unwrap();
        std::fs::write(generation.join("000002.log"), "").unwrap();
        let store = super::super::Store::at(dir.path()).domain(&crate::domain::d("d"));
        (dir, store)
    }

    /// On the listing test's random journals (shuffled, damaged, torn, states before
    /// their snapshot, deleted, re-queued), the queue answers what the full read answers:
    /// the pending snapshots, what a delivery of each snapshot supersedes, the applied
    /// one a replay finds, and each record found from the end.
    #[test]
    fn the_queue_is_the_full_reads() {
        for text in random_journals() {
            let (_dir, store) = store_of(&text);
            let full = read_journal(&Layout::new(store.dir())).unwrap();
            for locked in [false, true, true] {
                let queue = store.queue(locked).unwrap();
                let pending: Vec<&str> = full
                    .snapshots
                    .iter()
                    .filter(|s| s.is_pending())
                    .map(|s| s.record.id.as_str())
                    .collect();
                let got: Vec<SnapshotId> = queue.pending().into_iter().map(|o| o.id).collect();
                let got: Vec<&str> = got.iter().map(SnapshotId::as_str).collect();
                assert_eq!(got, pending, "{text}");
                assert_eq!(queue.pending_count().0, pending.len(), "{text}");
                assert_eq!(
                    queue.newest_pending().map(|o| o.id.to_string()),
                    pending.last().map(|s| s.to_string()),
                    "{text}"
                );
                assert_eq!(queue.damage().len(), full.damage.len(), "{text}");
                for (i, s) in full.snapshots.iter().enumerate() {
                    let id = &s.record.id;
                    let want: Vec<&str> = full
                        .pending_before(id)
                        .iter()
                        .map(|s| s.record.id.as_str())
                        .collect();
                    let got = queue.pending_before(id);
                    let got: Vec<&str> = got.iter().map(SnapshotId::as_str).collect();
                    assert_eq!(got, want, "{id} in {text}");
                    assert_eq!(
                        queue.is_pending(id),
                        full.get(id).unwrap().is_pending(),
                        "{text}"
                    );
                    let applied = full.snapshots.iter().rev().find(|a| {
                        a.state != State::Deleted
                            && a.cluster_state == Some(State::Applied)
                            && a.order_key() >= s.order_key()
                    });
                    assert_eq!(
                        queue.applied_from(i).map(|o| o.id.to_string()),
                        applied.map(|a| a.record.id.to_string()),
                        "{text}"
                    );
                    assert_eq!(queue.state_of(id), Some(s.state), "{text}");
                    if s.state != State::Deleted {
                        assert_eq!(queue.row_reason(i), s.reason, "{text}");
                    }
                    let record = queue.record(&store, id).unwrap();
                    if i == 0 {
                        for state in [State::Applied, State::Committed, State::Pushed] {
                            let want = full.last_in(state).map(|(s, st)| (&s.record, st));
                            let got = queue.last_in(&store, state).unwrap();
                            let Some(got) = got else {
                                // Only when the newest changes name no snapshot.
                                assert!(
                                    queue.listing.last_change(state).is_none(),
                                    "{state:?} {text}"
                                );
                                continue;
                            };
                            assert_eq!(got.as_ref().map(|(s, st)| (s, st)), want, "{text}");
                        }
                    }
                    assert_eq!(record.as_ref(), full.get(id).map(|s| &s.record), "{text}");
                }
            }
        }
    }
}
