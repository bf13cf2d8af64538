//! The delivery loop's reads — the store's change file and queues, the outbox, the
//! kubeconfigs a far end is found in — on a thread of their own, one at a time: a full
//! read of a large store never holds up the loop's answers, its metrics or its
//! watchdog.

use super::Selection;
use super::aim::{self, Aim};
use super::machine::{Input, Reading};
use super::pushes;
use super::replay::Request;
use crate::domain::Domain;
use crate::store::{DomainStore, Lock, Store, changes};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::SystemTime;

/// A read the loop asks for (see [`super::machine::Action`]).
#[derive(Debug)]
pub enum Ask {
    Look,
    All {
        start: bool,
    },
    One {
        domain: Domain,
        say: bool,
    },
    Outbox,
    Aim {
        domain: Domain,
        known: Option<Option<Aim>>,
    },
}

/// What the reads remember across the loop's generations.
pub struct Reader<'r> {
    pub store: &'r Store,
    pub selection: &'r Selection,
    /// The loop's lock: looked at with the change file.
    pub one_loop: &'r Lock,
    tail: changes::Tail,
    /// The outbox folder's modification time at the last listing.
    outbox_seen: Option<SystemTime>,
}

impl<'r> Reader<'r> {
    /// Reads from now on: what is written from here is seen by the next look.
    pub fn new(store: &'r Store, selection: &'r Selection, one_loop: &'r Lock) -> Reader<'r> {
        Reader {
            store,
            selection,
            one_loop,
            tail: changes::Tail::at_end(store.root()),
            outbox_seen: None,
        }
    }

    /// Answers `asks` until they close, or `closing` is set (a full read stops
    /// between two domains).
    pub fn serve(
        &mut self,
        req: &Request<'_>,
        asks: Receiver<Ask>,
        tell: &Sender<Input>,
        closing: &AtomicBool,
    ) {
        while let Ok(ask) = asks.recv() {
            if closing.load(Ordering::Relaxed) {
                return;
            }
            match ask {
                Ask::Look => self.look(tell, closing),
                Ask::All { start } => self.all(start, tell, closing),
                Ask::One { domain, say } => self.one(domain, say, tell),
                Ask::Outbox => self.outbox(true, tell),
                Ask::Aim { domain, known } => {
                    let aim = match known {
                        Some(Some(aim)) if !aim.stale() => Some(aim),
                        Some(None) => None,
                        _ => aim::find(req, &self.store.domain(&domain)),
                    };
                    let _ = tell.send(Input::Aimed(domain, aim));
                }
            }
        }
    }

    /// The domains written since the last look, the outbox if it changed, and whether
    /// the lock still guards the store.
    fn look(&mut self, tell: &Sender<Input>, closing: &AtomicBool) {
        if !self.one_loop.still_held() {
            let _ = tell.send(Input::StoreLost(self.store.root().to_path_buf()));
            let _ = tell.send(Input::Looked);
            return;
        }
        let changed = self.tail.read();
        if changed.resync {
            return self.all(false, tell, closing);
        }
        for name in changed.domains {
            if let Some(d) = Domain::new(&name).filter(|d| self.selection.picks(d.as_str())) {
                self.one(d, true, tell);
            }
        }
        self.outbox(true, tell);
        let _ = tell.send(Input::Looked);
    }

    /// Every selected domain's queue (at the start, on the resync period, and when
    /// the change file cannot tell what changed), then the whole outbox.
    fn all(&mut self, start: bool, tell: &Sender<Input>, closing: &AtomicBool) {
        let domains: HashSet<Domain> = self
            .store
            .domains()
            .into_iter()
            .filter(|d| self.selection.picks(d.as_str()))
            .collect();
        for d in &domains {
            if closing.load(Ordering::Relaxed) {
                return;
            }
            self.one(d.clone(), !start, tell);
        }
        self.outbox_seen = None;
        self.outbox(!start, tell);
        let _ = tell.send(Input::Listed { domains, start });
        let _ = tell.send(Input::Looked);
    }

    fn one(&self, domain: Domain, say: bool, tell: &Sender<Input>) {
        let reading = reading(&self.store.domain(&domain));
        let _ = tell.send(Input::Read {
            domain,
            reading,
            say,
        });
    }

    fn outbox(&mut self, say: bool, tell: &Sender<Input>) {
        if let Some(listing) = pushes::list(self.store, self.selection, &mut self.outbox_seen) {
            let _ = tell.send(Input::Outbox { listing, say });
        }
    }
}

/// What `store` owes now.
fn reading(store: &DomainStore) -> Reading {
    match store.queue(false) {
        Ok(q) => {
            let applied_ms = q
                .last_change_at(crate::store::State::Applied)
                .and_then(|at| crate::util::time::parse_rfc3339(&at))
                .map(|t| t.as_millisecond());
            // Counted, never listed: a backlog of a million costs no memory here.
            let (owed, oldest) = q.pending_count();
            let oldest_ms = oldest
                .and_then(|o| crate::util::time::parse_rfc3339(&o.at).map(|t| t.as_millisecond()));
            Reading::Owes {
                owed,
                oldest_ms,
                applied_ms,
            }
        }
        Err(_) if !crate::store::segments::Layout::new(store.dir()).exists() => Reading::Gone,
        Err(_) => Reading::Unreadable,
    }
}
