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
    /// gc found objects `verify` reports as damaged or missing: it changes nothing.
    #[error(
        "{domain}: {count} damaged or missing object(s), gc refuses to run (`clinv snapshots verify` lists them; `clinv snapshots gc --allow-damage` runs and leaves every damaged object as it is): {}",
        .first.join("; ")
    )]
    Objects {
        domain: String,
        count: usize,
        first: Vec<String>,
    },
    /// `snapshots export` met damage: it wrote no archive.
    #[error(
        "{count} damaged journal line(s) or missing or damaged object(s): no archive written (an export is whole; `--allow-damage` writes one without them and lists them in its LEFT-OUT entry): {}",
        .first.join("; ")
    )]
    ExportRefused { count: usize, first: Vec<String> },
    /// `snapshots export --allow-damage` wrote an archive with a gap.
    #[error("{}: written without {count} item(s) (listed above and in the archive's LEFT-OUT entry)", .file.display())]
    ExportGap { count: usize, file: PathBuf },
    /// `snapshots import` left domains out (the others were imported).
    #[error("{}: {} domain(s) not imported, nothing of them written: {}", .file.display(), .domains.len(), .domains.join(", "))]
    ImportRefused { domains: Vec<String>, file: PathBuf },
}
