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
    /// The outbox folder's modification time at the last listing.
    seen: Option<SystemTime>,
}

impl Pushes {
    pub fn new(base: Duration, cap: Duration) -> Pushes {
        Pushes {
            // Nothing probes a push's far end first: its attempts keep the one backoff.
            schedule: Schedule::new(base, cap, cap, crate::util::backoff::Rng::new()),
            items: HashMap::new(),
            seen: None,
        }
    }

    /// The next [`Pushes::refresh`] lists the outbox whether or not its folder's time
    /// changed (a full read: a change within the time's resolution is not missed).
    pub fn relist(&mut self) {
        self.seen = None;
    }

    /// Lists the outbox again when its folder changed since the last look (every write
    /// and removal is a rename in it); returns the pushes newly owed and the files that
    /// cannot be used (named once per listing).
    pub fn refresh(
        &mut self,
        store: &Store,
        selection: &Selection,
        now: Instant,
    ) -> (Vec<String>, Vec<String>) {
        let dir = crate::store::outbox::dir(store.root());
        // The folder itself, never what a link there points at (listed as damaged).
        let mtime = std::fs::symlink_metadata(&dir)
            .and_then(|m| m.modified())
            .ok();
        if mtime.is_some() && mtime == self.seen {
            return (Vec::new(), Vec::new());
        }
        self.seen = mtime;
        let listing = crate::ops::owed::owed(store, None);
        let mut fresh = Vec::new();
        let mut listed = Vec::new();
        for entry in listing.owed {
            if !selection.picks(entry.owed.domain.as_str()) {
                continue;
            }
            let Some(name) = entry.path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let name = name.to_string();
            let at = crate::util::time::parse_rfc3339(&entry.owed.at).map(|t| t.as_millisecond());
            if self.items.get(&name) != Some(&entry.owed) {
                fresh.push(name.clone());
            }
            self.schedule.owed(&name, 1, at, now);
            self.items.insert(name.clone(), entry.owed);
            listed.push(name);
        }
        let gone: Vec<String> = self
            .items
            .keys()
            .filter(|k| !listed.contains(k))
            .cloned()
            .collect();
        for name in gone {
            self.schedule.owed(&name, 0, None, now);
            self.schedule.forget(&name);
            self.items.remove(&name);
        }
        let damaged = listing
            .damaged
            .iter()
            .map(|d| format!("{}: {}", d.path.display(), d.why))
            .collect();
        (fresh, damaged)
    }
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
