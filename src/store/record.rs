//! The journal's records and what reading them yields: the on-disk format's types.

use crate::delivery::{Reason, Target};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Journal format version, written into every record.
pub(super) const FORMAT: u32 = 1;
/// A snapshot's state.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum State {
    /// Recorded, not yet applied (queued).
    Pending,
    /// Applied to the cluster.
    Applied,
    /// Written to a GitOps repository.
    Committed,
    /// A newer snapshot of the domain was delivered first.
    Superseded,
    /// Removed by `snapshots gc` (its record stays in the journal).
    Deleted,
}

impl State {
    /// The name in the journal and in listings (the serde name; a test holds them equal).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a snapshot was meant to go (never credentials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRecord {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl From<&Target> for TargetRecord {
    fn from(t: &Target) -> TargetRecord {
        TargetRecord {
            server: t.server.clone(),
            context: t.context.clone(),
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
}

/// A recorded inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRecord {
    pub v: u32,
    pub id: String,
    /// When it was recorded (UTC, RFC 3339 with milliseconds).
    pub at: String,
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
}

/// A state change of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateRecord {
    pub v: u32,
    pub id: String,
    pub at: String,
    pub state: State,
    /// Why it is still pending (or why it was superseded without an apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The snapshot that superseded this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The Git commit that carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetRecord>,
}

impl StateRecord {
    /// A state change with no reason, detail, supersessor, commit or target.
    pub fn new(id: &str, at: &str, state: State) -> StateRecord {
        StateRecord {
            v: FORMAT,
            id: id.to_string(),
            at: at.to_string(),
            state,
            reason: None,
            detail: None,
            by: None,
            commit: None,
            target: None,
        }
    }
}

/// A torn journal tail cut off before an append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairRecord {
    pub v: u32,
    pub at: String,
    pub torn_bytes: u64,
}

/// A snapshot with its current state, as read from the journal.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    #[serde(flatten)]
    pub record: SnapshotRecord,
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the state last changed.
    pub state_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Every state change, oldest first.
    #[serde(skip)]
    pub history: Vec<StateRecord>,
}

/// A journal line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {what}", path.display())]
pub struct Damage {
    pub path: PathBuf,
    pub line: usize,
    pub what: String,
}

/// What reading a domain's journal found.
#[derive(Debug, Default)]
pub struct Journal {
    /// The domain it belongs to (empty when read from bare bytes).
    pub domain: String,
    /// Snapshots in journal order (oldest first).
    pub snapshots: Vec<Snapshot>,
    /// Lines whose checksum or format is wrong (skipped).
    pub damage: Vec<Damage>,
    /// Bytes of an incomplete last line (ignored).
    pub torn_tail: u64,
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
}
