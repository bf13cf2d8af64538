//! The snapshot store: a reference that names no snapshot, and damage.

use std::path::PathBuf;

/// A snapshot reference that names no snapshot, or more than one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("no snapshot '{0}' (the store is empty)")]
    StoreEmpty(String),
    #[error("'{0}' matches snapshots in several domains; pass --domain")]
    SeveralDomains(String),
    #[error("no snapshot '{0}': the store holds fewer snapshots")]
    TooFew(String),
    #[error("no snapshot '{0}'")]
    NotFound(String),
    #[error("snapshot prefix '{prefix}' is ambiguous: {}", .ids.join(", "))]
    Ambiguous { prefix: String, ids: Vec<String> },
    #[error("no snapshot of {domain} recorded at or before {date}")]
    NoneAt { domain: String, date: String },
    #[error("no snapshots{} in {}", .domain.as_ref().map(|d| format!(" of {d}")).unwrap_or_default(), .store.display())]
    NoneIn {
        domain: Option<String>,
        store: PathBuf,
    },
    /// `commit --snapshot`: the reference names no snapshot of the domain committed.
    #[error("--snapshot {reference}: the store has no snapshot of {domain}")]
    NotOfDomain { reference: String, domain: String },
}

/// The snapshot store is damaged: a checksum mismatch or an unreadable record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Damaged {
    #[error("object {0}: content does not match its checksum")]
    Object(String),
    #[error(
        "{domain}: {count} damaged journal line(s), gc refuses to run (a damaged record may name objects gc would delete; `clinv snapshots gc --allow-damage` keeps every object a damaged line names): {}",
        .first.join("; ")
    )]
    Journal {
        domain: String,
        count: usize,
        /// The first few, as `verify` lists them.
        first: Vec<String>,
    },
    /// A stored CRD that is not the ClusterInventory CRD.
    #[error("snapshot {snapshot}: CRD object: {why}")]
    Crd { snapshot: String, why: String },
    #[error("damaged: {0}")]
    CrdObject(&'static str),
    #[error("snapshot store damaged: {problems} problem(s) in {}", .store.display())]
    Store { problems: usize, store: PathBuf },
}
