//! The owed Git and registry pushes in the delivery loop ([`crate::ops::owed`]).
//!
//! Listed again when the store's outbox folder changes, each owed push with its own backoff,
//! delivered on the loop's workers within `--timeout`.

use super::Selection;
use super::schedule::Schedule;
use crate::delivery::Reason;
use crate::store::Store;
use crate::store::outbox::Owed;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

/// How one delivery of an owed push ended, as the loop tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// It landed (`already_there`: the far end had it), recorded and settled.
    Delivered { already_there: bool },
    /// The far end did not answer (or clinv could not try: `reason` `None`); still owed.
    Owed {
        reason: Option<Reason>,
        message: String,
    },
    /// The far end refused it (a remote that moved on, a changed remote URL): it stays
    /// owed until a person acts, and is tried again at the longest wait.
    Refused { message: String },
}

/// The owed pushes the loop knows, by outbox file name.
pub struct Pushes {
    pub schedule: Schedule<String>,
    pub items: HashMap<String, Owed>,
}

/// The outbox as listed: each owed push of the selection by file name, and the files
/// that cannot be used.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub owed: Vec<(String, Owed)>,
    pub damaged: Vec<String>,
}

impl Pushes {
    pub fn new(base: Duration, cap: Duration) -> Pushes {
        Pushes {
            // Nothing probes a push's far end first: its attempts keep the one backoff.
            schedule: Schedule::new(base, cap, cap, crate::util::backoff::Rng::new()),
            items: HashMap::new(),
        }
    }

    /// Takes a listing of the outbox; returns the pushes newly owed (or owed anew).
    pub fn apply(&mut self, listing: Listing, now: Instant) -> Vec<String> {
        let mut fresh = Vec::new();
        let mut listed = std::collections::HashSet::new();
        for (name, owed) in listing.owed {
            let at = crate::util::time::parse_rfc3339(&owed.at).map(|t| t.as_millisecond());
            if self.items.get(&name) != Some(&owed) {
                fresh.push(name.clone());
            }
            self.schedule.owed(&name, 1, at, now);
            self.items.insert(name.clone(), owed);
            listed.insert(name);
        }
        let gone: Vec<String> = self
            .items
            .keys()
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect();
        for name in gone {
            self.schedule.owed(&name, 0, None, now);
            self.schedule.forget(&name);
            self.items.remove(&name);
        }
        fresh
    }
}

/// Lists the outbox again when its folder changed since `seen` (every write and
/// removal is a rename in it; `None`: list it whatever its time).
pub fn list(
    store: &Store,
    selection: &Selection,
    seen: &mut Option<SystemTime>,
) -> Option<Listing> {
    let dir = crate::store::outbox::dir(store.root());
    // The folder itself, never what a link there points at (listed as damaged).
    let mtime = std::fs::symlink_metadata(&dir)
        .and_then(|m| m.modified())
        .ok();
    if mtime.is_some() && mtime == *seen {
        return None;
    }
    *seen = mtime;
    let listing = crate::ops::owed::owed(store, None);
    let owed = listing
        .owed
        .into_iter()
        .filter(|e| selection.picks(e.owed.domain.as_str()))
        .filter_map(|e| {
            let name = e.path.file_name()?.to_str()?.to_string();
            Some((name, e.owed))
        })
        .collect();
    let damaged = listing
        .damaged
        .iter()
        .map(|d| format!("{}: {}", d.path.display(), d.why))
        .collect();
    Some(Listing { owed, damaged })
}

/// Delivers one owed push within `timeout` ([`crate::ops::owed::deliver`]).
#[cfg(feature = "gitops")]
pub fn deliver(store: &Store, item: &Owed, timeout: Duration) -> Pushed {
    use crate::ops::owed::Delivery;
    match crate::ops::owed::deliver(store, item, timeout) {
        Delivery::Delivered { already_there, .. } => Pushed::Delivered { already_there },
        Delivery::StillOwed { reason, message } => Pushed::Owed { reason, message },
        Delivery::Refused { message } => Pushed::Refused { message },
    }
}

/// Without the gitops feature nothing is pushed (and nothing was queued by this build).
#[cfg(not(feature = "gitops"))]
pub fn deliver(_store: &Store, _item: &Owed, _timeout: Duration) -> Pushed {
    Pushed::Owed {
        reason: None,
        message: "this clinv was built without the gitops feature: it cannot push".into(),
    }
}
