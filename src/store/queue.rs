//! What the delivery path owes the cluster, read without the whole journal.
//!
//! The domain's pending snapshots and the one applied last in the order are read from the
//! compact listing ([`super::scan`], fed from the segments' summaries): `publish`, `replay` and
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
    /// Read from the newest segments only ([`super::summary::read_owed`]): of
    /// `applied`, `committed` and `pushed`, the newest time of a change before them.
    /// The rows hold every snapshot owed and every one after it; a snapshot before them
    /// is in none of its answers (it is owed nothing, and older than every row).
    before: Option<[i64; 3]>,
    /// The live files when it was read.
    read_at: Option<super::segments::Fingerprint>,
}

/// What a delivery supersedes ([`Queue::superseding`]).
#[derive(Debug, Default)]
pub struct Superseding {
    /// The pending snapshots ordered before the one delivered.
    pub count: usize,
    /// Their ids, oldest first, when they are few; `None` when they are many.
    pub ids: Option<Vec<SnapshotId>>,
    /// The delivered snapshot's recorded time and `seq` (its place in the order).
    bound: Option<(String, u64)>,
}

impl Superseding {
    /// The one `supersede` record of many (none when they are few, or none at all):
    /// every pending snapshot ordered before `by` superseded by it at `at`.
    pub fn record(&self, by: &SnapshotId, at: &str) -> Option<super::record::SupersedeRecord> {
        if self.ids.is_some() || self.count == 0 {
            return None;
        }
        let (by_at, by_seq) = self.bound.clone()?;
        Some(super::record::SupersedeRecord {
            v: super::record::FORMAT,
            at: at.to_string(),
            seq: None,
            by: by.clone(),
            by_at,
            by_seq,
            count: self.count as u64,
        })
    }

    /// The ids of the few, one `superseded` line each (none when they are many).
    pub fn few(&self) -> Vec<&SnapshotId> {
        self.ids.iter().flatten().collect()
    }
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

    /// The pending snapshots, newest first, one at a time (no list of a backlog).
    pub fn pending_newest_first(&self) -> impl Iterator<Item = Owed> + '_ {
        let n = self.listing.len();
        self.listing
            .rows()
            .rev()
            .enumerate()
            .filter(|(_, r)| is_pending(r))
            .map(move |(i, r)| owed(n - 1 - i, &r))
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

    /// What a delivery of `id` supersedes (the pending snapshots ordered before it, as
    /// [`Queue::pending_before`]): how many, their ids only when there are at most
    /// `few` (more are marked with one `supersede` record, never listed), and `id`'s
    /// place in the order — without a row of memory per snapshot.
    pub fn superseding(&self, id: &str, few: usize) -> Superseding {
        let Some(at) = self.position(id) else {
            return Superseding::default();
        };
        let mut ids = Vec::new();
        let mut count = 0;
        for r in self.listing.rows().take(at).filter(is_pending) {
            count += 1;
            if count <= few {
                ids.push(SnapshotId::from(r.id().to_string()));
            }
        }
        let row = self.listing.row(at);
        Superseding {
            count,
            ids: (count <= few).then_some(ids),
            bound: row.map(|r| (r.at().to_string(), r.seq())),
        }
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
    /// whether it is ordered before it (the clock-skew check of a replay; of a
    /// [`DomainStore::whole_queue`], as every snapshot counts).
    pub fn rendered_at(&self, rendered_at: &str, index: usize) -> Vec<bool> {
        self.listing
            .rows()
            .enumerate()
            .filter(|(i, r)| *i != index && *r.rendered_at() == *rendered_at)
            .map(|(i, _)| i < index)
            .collect()
    }

    /// The state shown of snapshot `id` (as [`super::Snapshot::state`]); `None` when it
    /// is not in the queue (of the newest segments: recorded before them).
    pub fn state_of(&self, id: &str) -> Option<State> {
        let i = self.position(id)?;
        self.listing.row(i).map(|r| r.state())
    }

    /// Why the snapshot at `index` is in its cluster state (the change in force).
    pub fn row_reason(&self, index: usize) -> Option<crate::delivery::Reason> {
        self.listing.row(index).and_then(|r| r.reason())
    }

    /// Whether it is read from the newest segments only (small: a delivery may keep
    /// it, see [`Queue::stands`]).
    pub fn is_window(&self) -> bool {
        self.before.is_some()
    }

    /// Whether the store's live files are as they were when this was read — nothing
    /// appended, cut or rewritten since — so its answers still stand (the caller holds
    /// the domain lock, as when it was read).
    pub fn stands(&self, store: &DomainStore) -> bool {
        self.read_at.is_some() && self.read_at == store.layout().fingerprint()
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

impl Queue {
    /// The snapshot and time of [`Queue::last_in`]: `Some((None, None))` for none,
    /// `None` when this queue cannot tell.
    /// When the newest change to `state` happened, as far as the listing tells without
    /// reading a record (`None`: none, or it cannot tell).
    pub fn last_change_at(&self, state: State) -> Option<String> {
        self.last_change(state).and_then(|(_, at)| at)
    }

    fn last_change(&self, state: State) -> Option<(Option<String>, Option<String>)> {
        let Some(before) = self.before else {
            let found = self.listing.last_change(state)?;
            return Some(match found {
                Some((i, at)) => (Some(self.listing.row(i)?.id().to_string()), Some(at)),
                None => (None, None),
            });
        };
        // Only the newest segments were read: their newest change answers only when it
        // is newer than every change before them.
        let k = [State::Applied, State::Committed, State::Pushed]
            .iter()
            .position(|s| *s == state)?;
        let changes = self.listing.last_candidates(state)?;
        let Some((_, at)) = changes.first() else {
            return (before[k] == super::scan::NO_CHANGE).then_some((None, None));
        };
        let time = super::scan::change_time(at);
        if time <= before[k] || time <= super::scan::NO_CHANGE + 1 {
            return None;
        }
        // Of equal times, the first snapshot in the order: the window's order tells when
        // every one is a row of it.
        if changes.iter().all(|(id, _)| self.position(id).is_some()) {
            let (i, at) = self.listing.last_change(state)??;
            return Some((Some(self.listing.row(i)?.id().to_string()), Some(at)));
        }
        // Changes of a snapshot recorded before the window (a publish folded onto it):
        // when they are all of one snapshot, no order has to choose.
        let id = &changes[0].0;
        if changes.iter().any(|(c, _)| c != id) {
            return None;
        }
        let at = changes.iter().map(|(_, at)| at).min()?;
        Some((Some(id.clone()), Some(at.clone())))
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
        let Some((id, at)) = self.last_change(state) else {
            return Ok(None);
        };
        let Some((id, at)) = id.zip(at) else {
            return Ok(Some(None));
        };
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
        self.check_dirs()?;
        let read_at = self.layout().fingerprint();
        let owed = super::summary::read_owed(&self.layout()).map_err(|(p, e)| Error::io(p, e))?;
        // Under the lock, sealed segments without a summary are read whole once, which
        // writes their summaries (the window would otherwise grow with each of them).
        if let Some(owed) = owed.filter(|o| !(locked && o.unsummarised > 0)) {
            return Ok(Queue {
                listing: owed.listing,
                before: Some(owed.before),
                read_at,
            });
        }
        self.whole_queue(locked)
    }

    /// [`DomainStore::queue`] from every segment (what the end cannot tell: the order of
    /// a snapshot before the newest segments, its renderedAt).
    ///
    /// # Errors
    /// The journal exists but cannot be read.
    pub fn whole_queue(&self, locked: bool) -> Result<Queue> {
        let read_at = self.layout().fingerprint();
        let listing = if locked && self.check_owner().is_ok() {
            self.check_dirs()?;
            super::summary::read_listing(
                &self.layout(),
                super::summary::Summaries::UseAndWrite,
                true,
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
            super::summary::read_listing(&self.layout(), summaries, true, || {
                self.read_lock(std::time::Duration::ZERO).ok().flatten()
            })
            .map_err(|(p, e)| Error::io(p, e))?
        };
        Ok(Queue {
            listing,
            before: None,
            read_at,
        })
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
        segmented(&[text.to_string(), String::new()])
    }

    /// A domain store whose live generation holds `segments` in turn (the last active).
    fn segmented(segments: &[String]) -> (tempfile::TempDir, DomainStore) {
        let dir = tempfile::tempdir().unwrap();
        let domain_dir = dir.path().join("d");
        let generation = domain_dir.join("segments/1");
        std::fs::create_dir_all(&generation).unwrap();
        std::fs::create_dir_all(domain_dir.join("objects")).unwrap();
        std::fs::write(domain_dir.join("segments/CURRENT"), "1\n").unwrap();
        for (i, text) in segments.iter().enumerate() {
            std::fs::write(generation.join(format!("{:06}.log", i + 1)), text).unwrap();
        }
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
                let pending = pending_ids(&full);
                assert_eq!(queue_ids(&queue), pending, "{text}");
                assert_eq!(queue.pending_count().0, pending.len(), "{text}");
                assert_eq!(
                    queue.newest_pending().map(|o| o.id.to_string()),
                    pending.last().map(|s| s.to_string()),
                    "{text}"
                );
                assert_eq!(queue.damage().len(), full.damage.len(), "{text}");
                for (i, s) in full.snapshots.iter().enumerate() {
                    let id = &s.record.id;
                    same_pending_before(&full, &queue, s, &text);
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

    /// Histories as the delivery path writes them — snapshots recorded for the cluster
    /// or for Git, the newest pending applied and the older ones superseded by it,
    /// re-queued, deleted, committed, pushed — with now and then what only damage or
    /// another writer leaves: a change before its snapshot's line, a change of a
    /// snapshot that is not there, a repeated snapshot, a damaged line. Each is cut into
    /// sealed segments and an active one at random lines.
    fn delivery_histories() -> Vec<Vec<String>> {
        use super::super::record::{Record, StateRecord};
        let mut next = super::super::scan::testing::xorshift(0x2545_f491_4f6c_dd1d);
        let mut out = Vec::new();
        for _ in 0..400 {
            let mut lines: Vec<String> = Vec::new();
            let (mut ids, mut pending): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
            let mut records: Vec<String> = Vec::new();
            let mut seq = 0u64;
            // Now and then two records share a time (a tie the order's seq breaks).
            let mut secs = 1_700_000_000i64;
            let mut stamp = |seq: &mut u64, tie: bool| {
                *seq += 1;
                secs += i64::from(!tie);
                let t = jiff::Timestamp::from_second(secs).unwrap();
                (t.strftime("%Y-%m-%dT%H:%M:%S.000Z").to_string(), *seq)
            };
            let mut early: Option<String> = None;
            for _ in 0..(3 + next(60)) {
                let (at, n) = stamp(&mut seq, next(6) == 0);
                let state = |id: &str, state: State| {
                    let mut st = StateRecord::new(&SnapshotId::from(id.to_string()), &at, state);
                    st.seq = Some(n);
                    if state == State::Pushed {
                        st.pushed = Some(format!("oci://r/x@sha256:{n}"));
                    }
                    if state == State::Committed {
                        st.commit = Some(format!("{n:040x}"));
                    }
                    super::super::journal::encode(&Record::State(st)).unwrap()
                };
                let any = |k: u64| ids.get(k as usize).cloned();
                match next(100) {
                    0..=29 => {
                        let id = early.take().unwrap_or_else(|| format!("{n:012x}"));
                        let cluster = next(5) != 0;
                        let line = super::super::journal::encode(
                            &super::super::scan::testing::snap(&id, &at, Some(n), cluster),
                        )
                        .unwrap();
                        records.push(line.clone());
                        lines.push(line);
                        if cluster {
                            pending.push(id.clone());
                        }
                        ids.push(id);
                    }
                    30..=54 => {
                        if let Some(newest) = pending.pop() {
                            lines.push(state(&newest, State::Applied));
                            for old in pending.drain(..) {
                                lines.push(state(&old, State::Superseded));
                            }
                        }
                    }
                    55..=62 => {
                        if let Some(id) = any(next(ids.len() as u64 + 1)) {
                            lines.push(state(&id, State::Pending));
                            pending.retain(|p| *p != id);
                            pending.push(id);
                        }
                    }
                    63..=66 => {
                        if let Some(id) = any(next(ids.len() as u64 + 1)) {
                            lines.push(state(&id, State::Deleted));
                            pending.retain(|p| *p != id);
                        }
                    }
                    67..=74 => {
                        if let Some(id) = any(next(ids.len() as u64 + 1)) {
                            lines.push(state(&id, State::Committed));
                        }
                    }
                    75..=82 => {
                        if let Some(id) = any(next(ids.len() as u64 + 1)) {
                            lines.push(state(&id, State::Pushed));
                        }
                    }
                    83..=86 => {
                        if let Some(id) = any(next(ids.len() as u64 + 1)) {
                            lines.push(state(&id, State::Applied));
                            pending.retain(|p| *p != id);
                        }
                    }
                    87 => lines.push(state("ffffffffffffffffffff", State::Applied)),
                    88 => {
                        if let Some(r) = records.get(next(records.len() as u64 + 1) as usize) {
                            lines.push(r.clone());
                        }
                    }
                    89 => lines.push("garbage line\n".to_string()),
                    90..=91 if early.is_none() => {
                        let id = format!("e{n:011x}");
                        lines.push(state(&id, [State::Applied, State::Pending][n as usize % 2]));
                        early = Some(id);
                    }
                    _ => {}
                }
            }
            // Cut into segments at random lines; the last is the active one.
            let mut segments = vec![String::new()];
            for line in lines {
                if next(6) == 0 {
                    segments.push(String::new());
                }
                segments.last_mut().unwrap().push_str(&line);
            }
            out.push(segments);
        }
        out
    }

    /// The queue read from the newest segments answers what the full read answers, on
    /// segmented histories of the delivery path; and it is read so (not only from every
    /// segment) for many of them.
    #[test]
    fn the_queue_of_the_newest_segments_is_the_full_reads() {
        let mut windowed = 0;
        for (k, segments) in delivery_histories().into_iter().enumerate() {
            let (dir, store) = segmented(&segments);
            let generation = dir.path().join("d/segments/1");
            let mut text = segments.concat();
            // The first read under the lock writes the summaries.
            store.queue(true).unwrap();
            // A snapshot repeated after they were written (an id recorded twice).
            if k % 3 == 0
                && let Some(first) = text.lines().find(|l| l.contains("\"kind\":\"snapshot\""))
            {
                let again = format!("{first}\n");
                let active = generation.join(format!("{:06}.log", segments.len()));
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(active)
                    .unwrap();
                std::io::Write::write_all(&mut file, again.as_bytes()).unwrap();
                text.push_str(&again);
            }
            let full = read_journal(&Layout::new(store.dir())).unwrap();
            let queue = store.queue(false).unwrap();
            windowed += usize::from(queue.before.is_some());
            agrees(&store, &full, &queue, &text);
        }
        assert!(
            windowed >= 50,
            "read from the newest segments {windowed} times of 400"
        );
    }

    /// `queue` and `full` agree on what a delivery of `s` supersedes, and on whether it
    /// is pending.
    fn same_pending_before(
        full: &super::super::Journal,
        queue: &Queue,
        s: &super::super::Snapshot,
        text: &str,
    ) {
        let id = &s.record.id;
        let want = full.pending_before(id);
        let want: Vec<&str> = want.iter().map(|s| s.record.id.as_str()).collect();
        let got = queue.pending_before(id);
        let got: Vec<&str> = got.iter().map(SnapshotId::as_str).collect();
        assert_eq!(got, want, "{id} in {text}");
        assert_eq!(queue.is_pending(id), s.is_pending(), "{id} in {text}");
    }

    /// The ids of `full`'s pending snapshots, in the order.
    fn pending_ids(full: &super::super::Journal) -> Vec<String> {
        let pending = full.snapshots.iter().filter(|s| s.is_pending());
        pending.map(|s| s.record.id.to_string()).collect()
    }

    /// The ids of `queue`'s pending snapshots, in the order.
    fn queue_ids(queue: &Queue) -> Vec<String> {
        queue
            .pending()
            .into_iter()
            .map(|o| o.id.to_string())
            .collect()
    }

    /// `queue` answers as `full` (by ids: a queue of the newest segments numbers its
    /// rows from them).
    fn agrees(store: &DomainStore, full: &super::super::Journal, queue: &Queue, text: &str) {
        let pending = pending_ids(full);
        assert_eq!(queue_ids(queue), pending, "{text}");
        assert_eq!(queue.damage().len(), full.damage.len(), "{text}");
        if let Some(newest) = queue.newest_pending() {
            let key = full.get(&newest.id).unwrap().order_key();
            let applied = full.snapshots.iter().rev().find(|a| {
                a.state != State::Deleted
                    && a.cluster_state == Some(State::Applied)
                    && a.order_key() >= key
            });
            assert_eq!(
                queue.applied_from(newest.index).map(|o| o.id.to_string()),
                applied.map(|a| a.record.id.to_string()),
                "{text}"
            );
            assert_eq!(
                queue.row_reason(newest.index),
                full.get(&newest.id).unwrap().reason
            );
            let record = queue.record(store, &newest.id).unwrap();
            assert_eq!(record.as_ref(), Some(&full.get(&newest.id).unwrap().record));
        }
        for s in &full.snapshots {
            let id = &s.record.id;
            same_pending_before(full, queue, s, text);
            match queue.state_of(id) {
                Some(state) => assert_eq!(state, s.state, "{id} in {text}"),
                None => assert!(queue.before.is_some(), "{id} in {text}"),
            }
        }
        for state in [State::Applied, State::Committed, State::Pushed] {
            let want = full.last_in(state).map(|(s, st)| (&s.record, st));
            match queue.last_in(store, state).unwrap() {
                Some(got) => {
                    assert_eq!(
                        got.as_ref().map(|(s, st)| (s, st)),
                        want,
                        "{state:?} {text}"
                    );
                }
                // Only of the newest segments, or when the newest changes name no
                // snapshot (the journal tells then).
                None => assert!(
                    queue.before.is_some() || queue.listing.last_change(state).is_none(),
                    "{state:?} {text}"
                ),
            }
        }
    }

    /// A tie at the newest time between a change of a snapshot before the window (a
    /// publish folded onto it) and one of the window's: the order puts the older
    /// snapshot first, which only the whole listing knows.
    #[test]
    fn a_tie_with_a_snapshot_before_the_window_is_not_told_by_the_window() {
        use super::super::record::{Record, StateRecord};
        let line = |r: Record| super::super::journal::encode(&r).unwrap();
        let state = |id: &str, at: &str, seq: u64| {
            let mut st = StateRecord::new(&SnapshotId::from(id.to_string()), at, State::Applied);
            st.seq = Some(seq);
            line(Record::State(st))
        };
        let snap = |id: &str, at: &str, seq: u64| {
            line(super::super::scan::testing::snap(id, at, Some(seq), true))
        };
        let (t0, t1, t2) = (
            "2026-01-01T00:00:00.000Z",
            "2026-01-01T00:00:01.000Z",
            "2026-01-01T00:00:02.000Z",
        );
        let sealed = [snap("00000000000a", t0, 1), state("00000000000a", t0, 2)].concat();
        let active = [
            snap("00000000000b", t1, 3),
            state("00000000000b", t2, 4),
            state("00000000000a", t2, 5),
        ]
        .concat();
        let dir = tempfile::tempdir().unwrap();
        let generation = dir.path().join("d/segments/1");
        std::fs::create_dir_all(&generation).unwrap();
        std::fs::create_dir_all(dir.path().join("d/objects")).unwrap();
        std::fs::write(dir.path().join("d/segments/CURRENT"), "1\n").unwrap();
        std::fs::write(generation.join("000001.log"), &sealed).unwrap();
        std::fs::write(generation.join("000002.log"), &active).unwrap();
        let store = super::super::Store::at(dir.path()).domain(&crate::domain::d("d"));
        store.queue(true).unwrap();
        let queue = store.queue(false).unwrap();
        assert!(queue.before.is_some(), "read from the newest segment");
        let full = read_journal(&Layout::new(store.dir())).unwrap();
        let want = full.last_in(State::Applied).map(|(s, st)| (&s.record, st));
        assert_eq!(want.map(|(s, _)| s.id.as_str()), Some("00000000000a"));
        if let Some(got) = queue.last_in(&store, State::Applied).unwrap() {
            assert_eq!(got.as_ref().map(|(s, st)| (s, st)), want);
        }
        let (facts, _) = crate::ops::status::Delivery::of_store(&store).unwrap();
        assert_eq!(
            facts.last_applied.map(|(_, id)| id),
            Some("00000000000a".to_string())
        );
    }

    /// A queue stands while nothing is written; an append, a new segment or generation
    /// ends it.
    #[test]
    fn a_queue_stands_until_the_journal_is_written() {
        let (_dir, store) = store_of(
            &super::super::journal::encode(&super::super::scan::testing::snap(
                "00000000000a",
                "2026-01-01T00:00:00.000Z",
                Some(1),
                true,
            ))
            .unwrap(),
        );
        let queue = store.queue(true).unwrap();
        assert!(queue.stands(&store));
        assert!(store.queue(false).unwrap().stands(&store));
        let change = super::super::StateRecord::new(
            &SnapshotId::from("00000000000a".to_string()),
            "2026-01-01T00:00:01.000Z",
            State::Applied,
        );
        store.set_states(&[change]).unwrap();
        assert!(!queue.stands(&store));
        let again = store.queue(true).unwrap();
        assert!(again.stands(&store));
        assert!(!again.is_pending("00000000000a"));
    }

    /// What the full read says of each snapshot: its state, why, since when, and every
    /// change of its history.
    fn states(full: &super::super::Journal) -> Vec<String> {
        full.snapshots
            .iter()
            .map(|s| {
                format!(
                    "{} {:?} {:?} {:?} {:?} {} {:?}",
                    s.record.id,
                    s.state,
                    s.cluster_state,
                    s.reason,
                    s.detail,
                    s.state_at,
                    s.history
                )
            })
            .collect()
    }

    /// `text` (whole lines) cut into segments at random lines, the last the active one.
    fn cut(text: &str, next: &mut impl FnMut(u64) -> u64) -> Vec<String> {
        let mut segments = vec![String::new()];
        for line in text.split_inclusive('\n') {
            if next(5) == 0 {
                segments.push(String::new());
            }
            segments.last_mut().unwrap().push_str(line);
        }
        segments
    }

    /// Issue 48: a `supersede` record reads, in every reader — the full read, the
    /// listing (from the lines and from the summaries), the queue (of every segment and
    /// of the newest ones) and the end scan — as the `superseded` lines it stands for
    /// (one per snapshot pending at its line and ordered before its bound), put in its
    /// place: on the delivery histories, with the record at a random line and a random
    /// snapshot before it as the bound.
    #[test]
    fn a_supersede_record_reads_as_the_lines_it_stands_for() {
        use super::super::journal::{encode, parse_journal};
        use super::super::record::{Record, StateRecord, SupersedeRecord};
        use super::super::scan::testing::{assert_lists_the_same, xorshift};
        use std::path::Path;
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut covered, mut windows) = (0, 0);
        for segments in delivery_histories() {
            // Damage is numbered by line, and the two texts differ in lines.
            let lines: Vec<&str> = segments
                .iter()
                .flat_map(|s| s.split_inclusive('\n'))
                .filter(|l| !l.starts_with("garbage"))
                .collect();
            let at = next(lines.len() as u64 + 1) as usize;
            let prefix = lines[..at].concat();
            let before = parse_journal(Path::new("j"), prefix.as_bytes());
            // Most often one of the newest (what a delivery supersedes by), else any.
            let n = before.snapshots.len() as u64;
            let pick = match next(3) {
                0 => next(n + 1),
                _ => n.saturating_sub(1 + next(3)),
            } as usize;
            let Some(by) = before.snapshots.get(pick) else {
                continue;
            };
            let (time, seq) = before.head.clone().unwrap();
            let mark = SupersedeRecord {
                v: 2,
                at: time.clone(),
                seq: Some(seq + 1),
                by: by.record.id.clone(),
                by_at: by.record.at.clone(),
                by_seq: by.order_seq,
                count: 0,
            };
            let expansion: String = before
                .snapshots
                .iter()
                .filter(|s| s.is_pending() && s.order_key() < by.order_key())
                .map(|s| {
                    encode(&Record::State(StateRecord {
                        seq: Some(seq + 1),
                        by: Some(by.record.id.clone()),
                        ..StateRecord::new(&s.record.id, &time, State::Superseded)
                    }))
                    .unwrap()
                })
                .collect();
            covered += usize::from(!expansion.is_empty());
            let rest = lines[at..].concat();
            let mark = encode(&Record::Supersede(mark)).unwrap();
            let marked = format!("{prefix}{mark}{rest}");
            let expanded = format!("{prefix}{expansion}{rest}");
            let want = parse_journal(Path::new("j"), expanded.as_bytes());
            let got = parse_journal(Path::new("j"), marked.as_bytes());
            assert_eq!(states(&got), states(&want), "{marked}");
            let listing = super::super::scan::read_bytes(Path::new("j"), marked.as_bytes());
            assert_lists_the_same(&want, &listing, &marked);
            let (_dir, store) = segmented(&cut(&marked, &mut next));
            for locked in [false, true, true, false] {
                let queue = store.queue(locked).unwrap();
                windows += usize::from(queue.is_window());
                agrees(&store, &want, &queue, &marked);
            }
            // The end scan, wherever it answers as the full read on the lines the record
            // stands for (not where a change comes before its snapshot's line, which it
            // does not see): the same.
            let (_other, lines_store) = segmented(&cut(&expanded, &mut next));
            let newest = want.newest_first().next();
            let ends = (
                store.layout().newest_queue(),
                lines_store.layout().newest_queue(),
            );
            if let (Some(got), Some(lines)) = ends
                && lines.newest.as_ref() == newest.map(|s| &s.record)
                && lines.pending == newest.is_some_and(|s| s.is_pending())
            {
                assert_eq!(got.newest, lines.newest, "{marked}");
                assert_eq!(got.pending, lines.pending, "{marked}");
                assert_eq!(got.applied, lines.applied, "{marked}");
            }
        }
        assert!(covered > 60 && windows > 100, "{covered} {windows}");
    }

    /// Issue 48: the first delivery after a backlog supersedes it with one `supersede`
    /// record in the active segment while every sealed segment still owes what it
    /// superseded; the next read of the queue is the active segment alone, not the
    /// backlog.
    #[test]
    fn after_a_backlog_is_superseded_the_queue_is_the_active_segment() {
        use super::super::journal::encode;
        use super::super::record::StateRecord;
        use super::super::scan::testing::snap;
        let stamp = |n: u64| {
            let t = jiff::Timestamp::from_second(1_700_000_000 + n as i64).unwrap();
            t.strftime("%Y-%m-%dT%H:%M:%S.000Z").to_string()
        };
        let mut segments: Vec<String> = (0..5u64)
            .map(|k| {
                (0..40u64)
                    .map(|i| {
                        let n = k * 40 + i;
                        encode(&snap(&format!("{n:012x}"), &stamp(n), Some(n + 1), true)).unwrap()
                    })
                    .collect()
            })
            .collect();
        let (y, at) = ("0000000000ff".to_string(), stamp(300));
        let mut active = encode(&snap(&y, &at, Some(201), true)).unwrap();
        let (dir, store) = segmented(&[segments.clone(), vec![active.clone()]].concat());
        // The first read under the lock writes the summaries; the whole backlog is owed.
        assert_eq!(store.queue(true).unwrap().pending_count().0, 201);
        let queue = store.queue(true).unwrap();
        let superseding = queue.superseding(&y, super::super::SUPERSEDE_LINES);
        assert_eq!((superseding.count, superseding.ids.is_some()), (200, false));
        let applied = StateRecord {
            seq: Some(202),
            ..StateRecord::new(&SnapshotId::from(y.clone()), &stamp(301), State::Applied)
        };
        store
            .append_states_then(
                &[applied],
                superseding.record(&SnapshotId::from(y.clone()), &stamp(301)),
            )
            .unwrap();
        let active_path = dir.path().join("d/segments/1/000006.log");
        active = std::fs::read_to_string(&active_path).unwrap();
        assert_eq!(active.lines().count(), 3, "{active}");
        let queue = store.queue(false).unwrap();
        assert!(queue.is_window(), "read from the active segment alone");
        assert_eq!(queue.pending_count().0, 0);
        segments.push(active);
        let full = read_journal(&Layout::new(store.dir())).unwrap();
        assert!(full.snapshots.iter().all(|s| !s.is_pending()));
        agrees(&store, &full, &queue, &segments.concat());
    }
}
