//! The journal's records and what reading them yields: the on-disk format's types.

use crate::delivery::{Reason, Target};
pub use crate::snapshot_id::SnapshotId;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Journal format version, written into every record: 2 adds `seq`, the per-channel
/// delivery state and `head` records; version 1 records are read as they are.
pub(super) const FORMAT: u32 = 2;
/// A snapshot's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Recorded, not yet applied (queued for the cluster).
    Pending,
    /// Applied to the cluster.
    Applied,
    /// Written to a GitOps repository.
    Committed,
    /// A newer snapshot of the domain was delivered first.
    Superseded,
    /// Removed by `snapshots gc` (its record stays in the journal).
    Deleted,
    /// Recorded by `commit` for Git only (never queued for the cluster), not committed.
    Recorded,
    /// Pushed to an OCI registry by `clinv push` (the registry channel); the reference
    /// with its digest is the state record's `pushed`.
    Pushed,
}

impl State {
    /// The name in the journal and in listings (the serde name; a test holds them equal).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Applied => "applied",
            State::Committed => "committed",
            State::Superseded => "superseded",
            State::Deleted => "deleted",
            State::Recorded => "recorded",
            State::Pushed => "pushed",
        }
    }

    /// Every variant, in declaration order.
    pub const ALL: [State; 7] = [
        State::Pending,
        State::Applied,
        State::Committed,
        State::Superseded,
        State::Deleted,
        State::Recorded,
        State::Pushed,
    ];
}

/// Where a snapshot was meant to go (never credentials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRecord {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The kubeconfig files the publish used (paths; their content is never stored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kubeconfig: Vec<String>,
}

impl From<&Target> for TargetRecord {
    fn from(t: &Target) -> TargetRecord {
        TargetRecord {
            server: t.server.clone(),
            context: t.context.clone(),
            kubeconfig: t.kubeconfig.clone(),
        }
    }
}

/// One journal record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    Snapshot(SnapshotRecord),
    State(StateRecord),
    Repair(RepairRecord),
    Head(HeadRecord),
    Event(EventRecord),
    Supersede(SupersedeRecord),
}

impl Record {
    /// The tie-breaker written with the record (none in version 1 records).
    pub fn seq(&self) -> Option<u64> {
        match self {
            Record::Snapshot(r) => r.seq,
            Record::State(r) => r.seq,
            Record::Repair(r) => r.seq,
            Record::Head(r) => Some(r.seq),
            Record::Event(r) => r.seq,
            Record::Supersede(r) => r.seq,
        }
    }

    /// The snapshot it is about (`repair`, `head` and `supersede` records are about none).
    pub fn id(&self) -> Option<&str> {
        match self {
            Record::Snapshot(r) => Some(&r.id),
            Record::State(r) => Some(&r.id),
            Record::Event(r) => Some(&r.id),
            Record::Repair(_) | Record::Head(_) | Record::Supersede(_) => None,
        }
    }

    /// When it was recorded.
    pub fn at(&self) -> &str {
        match self {
            Record::Snapshot(r) => &r.at,
            Record::State(r) => &r.at,
            Record::Repair(r) => &r.at,
            Record::Head(r) => &r.at,
            Record::Event(r) => &r.at,
            Record::Supersede(r) => &r.at,
        }
    }
}

/// Every snapshot of the domain that is pending at this line and ordered before `by`
/// superseded by `by` at once (issue 48: a backlog of any size marked with one record).
///
/// It reads as one `superseded` state change (time `at`, `by`) of each snapshot whose
/// record line comes before it, that is for the cluster, not deleted, ordered before
/// (`byAt`, `bySeq`, `by`) — `by`'s place in the order — and whose cluster state in
/// force by the lines before it is `pending`: exactly the lines a delivery wrote one per
/// snapshot before (a unit property test holds every reader's answers equal to that
/// expansion's). A snapshot recorded or re-queued after it is not touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SupersedeRecord {
    pub v: u32,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The snapshot delivered.
    pub by: SnapshotId,
    /// Its recorded time and `seq`: with `by`, the bound in the order (at, seq, id).
    pub by_at: String,
    pub by_seq: u64,
    /// How many snapshots it superseded when written (what the delivery said).
    pub count: u64,
}

impl SupersedeRecord {
    /// Whether a snapshot at (`at`, `seq`, `id`) in the order is before the bound.
    pub fn covers(&self, at: &str, seq: u64, id: &str) -> bool {
        (at, seq, id) < (self.by_at.as_str(), self.by_seq, self.by.as_str())
    }
}

/// Where a generation's history stood when it was written (by a migration, `gc` or
/// `import`): the newest recorded time and the largest `seq`, so the next append
/// continues from it without reading history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadRecord {
    pub v: u32,
    pub at: String,
    pub seq: u64,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// A recorded inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRecord {
    pub v: u32,
    pub id: SnapshotId,
    /// When it was recorded (UTC, RFC 3339 with milliseconds); never before the newest
    /// record of the domain.
    pub at: String,
    /// Tie-breaker of the order (at, seq, id); absent in version 1 records, whose `seq` is
    /// their line number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Queued for the cluster (recorded by `publish`); `false` for a snapshot `commit`
    /// recorded for Git only.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub cluster: bool,
    pub domain: String,
    pub rendered_at: String,
    pub spec_hash: String,
    pub lok8s_version: String,
    /// The clinv version that recorded it.
    pub tool: String,
    /// Object ids (sha256) of the CR (without renderedAt) and of the CRD.
    pub cr: String,
    pub crd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetRecord>,
    /// The host name of the machine that recorded it (never a user name or path); absent
    /// in records written before clinv recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// A state change of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateRecord {
    pub v: u32,
    pub id: SnapshotId,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// `pending`, `applied`, `superseded`: the cluster channel; `committed`: the Git
    /// channel; `deleted`: both (final).
    pub state: State,
    /// Why it is still pending (or why it was superseded without an apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The snapshot that superseded this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<SnapshotId>,
    /// The Git commit that carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The remote the commit was pushed to; for `pushed`, the registry reference with
    /// its digest (`oci://host/repo:tag@sha256:…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetRecord>,
}

impl StateRecord {
    /// A state change with no reason, detail, supersessor, commit or target.
    pub fn new(id: &SnapshotId, at: &str, state: State) -> StateRecord {
        StateRecord {
            v: FORMAT,
            id: id.clone(),
            at: at.to_string(),
            seq: None,
            state,
            reason: None,
            detail: None,
            by: None,
            commit: None,
            pushed: None,
            target: None,
        }
    }
}

/// A publish identical to the domain's newest snapshot, recorded on that snapshot.
///
/// A publish of an inventory identical (apart from `renderedAt`) to the domain's newest
/// snapshot: recorded on that snapshot (`id`) instead of as a new one, so the history
/// has one step per distinct inventory and the event stays visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    pub v: u32,
    /// The snapshot it happened to.
    pub id: SnapshotId,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// `published`: the same inventory was published again.
    pub event: String,
    /// The renderedAt of that publish.
    pub rendered_at: String,
    /// The clinv version that recorded it.
    pub tool: String,
}

/// A torn journal tail cut off before an append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairRecord {
    pub v: u32,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub torn_bytes: u64,
}

/// A snapshot with its current state, as read from the journal.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    #[serde(flatten)]
    pub record: SnapshotRecord,
    /// The state to show: `deleted`, else the cluster state, else `committed` when Git
    /// has it, else `pushed` when a registry has it, else `recorded`.
    pub state: State,
    /// The effective tie-breaker (the line number for a version 1 record).
    #[serde(skip)]
    pub order_seq: u64,
    /// The cluster channel: `pending`, `applied` or `superseded`; none for a snapshot
    /// recorded for Git only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_state: Option<State>,
    /// The remote the commit was pushed to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the state last changed.
    pub state_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The registry channel: the reference and digest it was last pushed as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// Every state change, oldest first.
    #[serde(skip)]
    pub history: Vec<StateRecord>,
    /// Publishes of the same inventory folded onto it, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventRecord>,
}

/// A journal line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {what}", path.display())]
pub struct Damage {
    pub path: PathBuf,
    pub line: usize,
    pub what: String,
}

impl Snapshot {
    /// The total order of snapshots: recorded time, then `seq`, then id.
    pub fn order_key(&self) -> (&str, u64, &str) {
        (&self.record.at, self.order_seq, &self.record.id)
    }

    /// Still to be delivered to the cluster.
    pub fn is_pending(&self) -> bool {
        self.state != State::Deleted && self.cluster_state == Some(State::Pending)
    }
}

/// What reading a domain's journal found.
#[derive(Debug, Default)]
pub struct Journal {
    /// The domain it belongs to (empty when read from bare bytes).
    pub domain: String,
    /// Snapshots in the order (at, seq, id), oldest first — not the order of lines.
    pub snapshots: Vec<Snapshot>,
    /// Lines whose checksum or format is wrong (skipped).
    pub damage: Vec<Damage>,
    /// Bytes of an incomplete last line (ignored).
    pub torn_tail: u64,
    /// Every 64-hex-digit word of a damaged line: object ids a damaged record may name.
    pub damaged_ids: std::collections::BTreeSet<String>,
    /// The newest recorded time and the largest `seq` of any record.
    pub head: Option<(String, u64)>,
}

impl Journal {
    /// The newest snapshot first, as `latest~N` counts.
    pub fn newest_first(&self) -> impl Iterator<Item = &Snapshot> {
        self.snapshots
            .iter()
            .rev()
            .filter(|s| s.state != State::Deleted)
    }

    pub fn get(&self, id: &str) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.record.id == id)
    }

    /// The snapshot applied to the cluster last, with the time of that `applied`
    /// record: what the cluster held then (a snapshot superseded or deleted since was
    /// still applied). A pending snapshot never is.
    pub fn last_applied(&self) -> Option<(&Snapshot, &str)> {
        self.last_in(State::Applied)
            .map(|(snap, st)| (snap, st.at.as_str()))
    }

    /// The newest change to `state` of any snapshot (by its recorded time), with that
    /// change: the last apply, commit or push, whatever became of the snapshot since.
    pub fn last_in(&self, state: State) -> Option<(&Snapshot, &StateRecord)> {
        let mut last: Option<(&Snapshot, &StateRecord, Option<jiff::Timestamp>)> = None;
        for snap in &self.snapshots {
            for st in snap.history.iter().filter(|st| st.state == state) {
                let at = crate::util::time::parse_rfc3339(&st.at);
                if last.as_ref().is_none_or(|(_, _, newest)| at > *newest) {
                    last = Some((snap, st, at));
                }
            }
        }
        last.map(|(snap, st, _)| (snap, st))
    }

    /// The pending snapshots ordered before `id`, which a delivery of `id` supersedes.
    /// Later ones (queued by another process meanwhile) are still to be delivered.
    pub fn pending_before(&self, id: &SnapshotId) -> Vec<&Snapshot> {
        let Some(at) = self.get(id) else {
            return Vec::new();
        };
        let key = at.order_key();
        self.snapshots
            .iter()
            .filter(|s| s.is_pending() && s.order_key() < key)
            .collect()
    }
}
