//! `snapshots gc` and `snapshots verify`: what may be deleted, deleting it with the
//! objects only it referenced, and checking every kept snapshot's objects.

use super::{DomainStore, Journal, LOCK_TIMEOUT, Snapshot, State, StateRecord, Store, now_millis};
use crate::error::Result;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The snapshots `gc` would delete: everything except the first, the newest `keep`, the
/// last applied, every pending one, and those already deleted.
pub fn gc_candidates(journal: &Journal, keep: usize) -> Vec<&Snapshot> {
    let live: Vec<&Snapshot> = journal
        .snapshots
        .iter()
        .filter(|s| s.state != State::Deleted)
        .collect();
    let first = journal.snapshots.first().map(|s| s.record.id.as_str());
    let last_applied = live
        .iter()
        .rev()
        .find(|s| s.state == State::Applied)
        .map(|s| s.record.id.as_str());
    let newest: Vec<&str> = live
        .iter()
        .rev()
        .take(keep)
        .map(|s| s.record.id.as_str())
        .collect();
    live.into_iter()
        .filter(|s| {
            let id = s.record.id.as_str();
            Some(id) != first
                && Some(id) != last_applied
                && !newest.contains(&id)
                && s.state != State::Pending
        })
        .collect()
}

/// The objects a gc that deletes `doomed` may remove: those referenced by a snapshot of
/// the journal but by no kept one. Files no record names are left for a human.
fn unreachable<'a>(journal: &'a Journal, doomed: &[&Snapshot]) -> BTreeSet<&'a str> {
    let doomed: BTreeSet<&str> = doomed.iter().map(|s| s.record.id.as_str()).collect();
    let objects = |s: &'a Snapshot| [s.record.cr.as_str(), s.record.crd.as_str()];
    let kept: BTreeSet<&str> = journal
        .snapshots
        .iter()
        .filter(|s| s.state != State::Deleted && !doomed.contains(s.record.id.as_str()))
        .flat_map(objects)
        .collect();
    journal
        .snapshots
        .iter()
        .flat_map(objects)
        .filter(|id| !kept.contains(id))
        .collect()
}

impl DomainStore {
    /// Deletes the [`gc_candidates`] (unless `dry_run`) under the domain lock: marks them
    /// deleted, then removes the objects no kept snapshot refers to. Returns them.
    ///
    /// # Errors
    /// The lock, the journal or an object removal failed.
    pub fn gc(&self, keep: usize, dry_run: bool) -> Result<Vec<Snapshot>> {
        let _lock = self.lock("gc", LOCK_TIMEOUT)?;
        let journal = self.read()?;
        let doomed = gc_candidates(&journal, keep);
        if dry_run || doomed.is_empty() {
            return Ok(doomed.into_iter().cloned().collect());
        }
        let at = now_millis();
        let changes: Vec<StateRecord> = doomed
            .iter()
            .map(|s| StateRecord::new(&s.record.id, &at, State::Deleted))
            .collect();
        self.append_states(&changes)?;
        let unreachable = unreachable(&journal, &doomed);
        for id in self.object_ids() {
            if unreachable.contains(id.as_str()) {
                self.remove_object(&id)?;
            }
        }
        Ok(doomed.into_iter().cloned().collect())
    }
}

/// What `snapshots verify` found, in the order it found it.
#[derive(Debug, Default)]
pub struct Verified {
    pub domains: usize,
    pub snapshots: usize,
    pub objects: usize,
    pub findings: Vec<Finding>,
}

/// One thing `snapshots verify` reports.
#[derive(Debug)]
pub enum Finding {
    /// A damaged journal line or a missing or damaged object: a problem.
    Problem(String),
    /// An incomplete last journal line (a write interrupted by a crash): ignored.
    TornTail { journal: PathBuf, bytes: u64 },
}

impl Verified {
    pub fn problems(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| matches!(f, Finding::Problem(_)))
            .count()
    }
}

impl Store {
    /// Reads every journal of `domain` (or of all domains) and checks that each kept
    /// snapshot's objects are present and match their checksums.
    ///
    /// # Errors
    /// An invalid domain or an unreadable journal.
    pub fn verify(&self, domain: Option<&str>) -> Result<Verified> {
        let list = self.select(domain)?;
        let mut out = Verified {
            domains: list.len(),
            ..Verified::default()
        };
        for d in &list {
            let ds = self.domain(d);
            let journal = ds.read()?;
            for damage in &journal.damage {
                out.findings.push(Finding::Problem(damage.to_string()));
            }
            if journal.torn_tail > 0 {
                out.findings.push(Finding::TornTail {
                    journal: ds.dir().join("journal"),
                    bytes: journal.torn_tail,
                });
            }
            let mut checked = BTreeSet::new();
            for snap in journal
                .snapshots
                .iter()
                .filter(|s| s.state != State::Deleted)
            {
                out.snapshots += 1;
                for id in [&snap.record.cr, &snap.record.crd] {
                    if checked.insert(id.clone()) {
                        out.objects += 1;
                        if let Err(e) = ds.object(id) {
                            out.findings.push(Finding::Problem(format!(
                                "snapshot {}: {e}",
                                snap.record.id
                            )));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}
