//! A snapshot's id: minted by the store, checked nowhere else.
//!
//! A snapshot's id: minted by the store, carried by every flow that names a snapshot
//! (deliveries, history, views), and checked nowhere else — ids of earlier versions
//! and imported stores come in several shapes, so it is a type, not a format.

use serde::{Deserialize, Serialize};

/// A snapshot's id, as the store minted it (or an imported store did): a type of its own
/// so it is never taken for a domain, a digest or a revision.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SnapshotId(String);

impl SnapshotId {
    pub fn new(id: impl Into<String>) -> SnapshotId {
        SnapshotId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::ops::Deref for SnapshotId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::borrow::Borrow<str> for SnapshotId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SnapshotId {
    fn from(id: &str) -> SnapshotId {
        SnapshotId(id.to_string())
    }
}

impl From<String> for SnapshotId {
    fn from(id: String) -> SnapshotId {
        SnapshotId(id)
    }
}

impl PartialEq<SnapshotId> for &str {
    fn eq(&self, other: &SnapshotId) -> bool {
        *self == other.0
    }
}

impl PartialEq<&str> for SnapshotId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for SnapshotId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}
