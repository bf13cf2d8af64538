//! `snapshots gc` and `snapshots verify`: what may be deleted, deleting it with the
//! objects only it referenced (a compacted generation of the journal, switched to
//! atomically), and checking every kept snapshot's objects for meaning.

use super::{DomainStore, Journal, LOCK_TIMEOUT, Snapshot, State, Store, now_millis};
use crate::domain::Domain;
use crate::error::{Damaged, Error, Result};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

/// The snapshots `gc` would delete: everything except the first, the newest `keep` (by
/// the order), the last applied, every pending one, and those already deleted.
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
        .find(|s| s.cluster_state == Some(State::Applied))
        .map(|s| s.record.id.as_str());
    let newest: BTreeSet<&str> = live
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
                && !s.is_pending()
        })
        .collect()
}

/// The objects a gc that deletes `doomed` may remove: those referenced by a snapshot of
/// the journal but by no kept one, and named nowhere in a damaged line. Files no record
/// names are left for a human.
fn unreachable<'a>(journal: &'a Journal, doomed: &HashSet<String>) -> BTreeSet<&'a str> {
    let objects = |s: &'a Snapshot| [s.record.cr.as_str(), s.record.crd.as_str()];
    let kept: BTreeSet<&str> = journal
        .snapshots
        .iter()
        .filter(|s| s.state != State::Deleted && !doomed.contains(&s.record.id))
        .flat_map(objects)
        .collect();
    journal
        .snapshots
        .iter()
        .flat_map(objects)
        .filter(|id| !kept.contains(id) && !journal.damaged_ids.contains(*id))
        .collect()
}

impl DomainStore {
    /// Deletes the [`gc_candidates`] (unless `dry_run`) under the domain lock: writes a
    /// compacted generation of the journal without them (and without snapshots an older
    /// store marked deleted; damaged lines are carried over verbatim), switches to it,
    /// then removes the objects no kept snapshot (and no damaged line) refers to.
    /// Returns the deleted snapshots.
    ///
    /// # Errors
    /// Damaged lines without `allow_damage` (nothing is changed then); the lock, the
    /// journal or an object removal failed.
    pub fn gc(&self, keep: usize, dry_run: bool, allow_damage: bool) -> Result<Vec<Snapshot>> {
        let _lock = self.lock("gc", LOCK_TIMEOUT)?;
        let mut journal = self.read_for_rewrite()?;
        if !journal.damage.is_empty() && !allow_damage {
            let list: Vec<String> = journal
                .damage
                .iter()
                .take(5)
                .map(|d| d.to_string())
                .collect();
            return Err(Damaged::Journal {
                domain: self.domain.to_string(),
                count: journal.damage.len(),
                first: list,
            }
            .into());
        }
        let doomed_ids: HashSet<String> = gc_candidates(&journal, keep)
            .iter()
            .map(|s| s.record.id.clone())
            .collect();
        let remove: BTreeSet<String> = unreachable(&journal, &doomed_ids)
            .into_iter()
            .map(str::to_string)
            .collect();
        // Compaction: the deleted snapshots leave the journal with their history (a late
        // state change naming one, e.g. a commit that read it before this gc, is ignored:
        // it has nothing left to change). Moved, not copied: a large store is held once.
        let (doomed, kept): (Vec<Snapshot>, Vec<Snapshot>) = std::mem::take(&mut journal.snapshots)
            .into_iter()
            .filter(|s| s.state != State::Deleted)
            .partition(|s| doomed_ids.contains(&s.record.id));
        journal.snapshots = kept;
        if dry_run {
            return Ok(doomed);
        }
        journal.head = journal
            .head
            .take()
            .map(|(at, seq)| (at.max(now_millis()), seq));
        if !doomed.is_empty() || self.layout().current().ok().flatten().is_none() {
            self.rewrite(&journal)?;
        }
        let _critical = crate::util::signals::critical();
        self.layout().clean_up_objects();
        for id in self.object_ids() {
            if remove.contains(&id) {
                self.remove_object(&id)?;
            }
        }
        Ok(doomed)
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
    pub fn verify(&self, domain: Option<&Domain>) -> Result<Verified> {
        let list = self.select(domain);
        let mut out = Verified {
            domains: list.len(),
            ..Verified::default()
        };
        for d in &list {
            let ds = self.domain(d);
            let _lock = ds.read_lock(LOCK_TIMEOUT)?;
            let journal = ds.read()?;
            for damage in &journal.damage {
                out.findings.push(Finding::Problem(damage.to_string()));
            }
            if journal.torn_tail > 0 {
                out.findings.push(Finding::TornTail {
                    journal: ds.dir().join("segments"),
                    bytes: journal.torn_tail,
                });
            }
            let mut checked = BTreeSet::new();
            let mut parsed = BTreeSet::new();
            for snap in journal
                .snapshots
                .iter()
                .filter(|s| s.state != State::Deleted)
            {
                out.snapshots += 1;
                // The CR must read back as an inventory (with this snapshot's renderedAt),
                // the CRD as the ClusterInventory CRD: a checksum alone does not say the
                // object is what the record says it is.
                // Once per distinct CR object (identical inventories share it).
                if parsed.insert(snap.record.cr.clone())
                    && let Err(e) = ds.inventory(&snap.record)
                {
                    out.findings.push(Finding::Problem(format!(
                        "snapshot {}: {}",
                        snap.record.id,
                        crate::error::chain(&e)
                    )));
                }
                for (id, crd) in [(&snap.record.cr, false), (&snap.record.crd, true)] {
                    if checked.insert(id.clone()) {
                        out.objects += 1;
                        let checked = ds.object(id).and_then(|text| {
                            if crd {
                                check_crd(&text).map_err(Error::from)
                            } else {
                                Ok(())
                            }
                        });
                        if let Err(e) = checked {
                            out.findings.push(Finding::Problem(format!(
                                "snapshot {}: object {id}: {}",
                                snap.record.id,
                                crate::error::chain(&e)
                            )));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A CRD object must be the ClusterInventory CustomResourceDefinition.
fn check_crd(text: &str) -> std::result::Result<(), Damaged> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|_| Damaged::CrdObject("not JSON"))?;
    let kind = value.get("kind").and_then(|k| k.as_str());
    let names = value.pointer("/spec/names/kind").and_then(|k| k.as_str());
    if kind == Some("CustomResourceDefinition") && names == Some("ClusterInventory") {
        Ok(())
    } else {
        Err(Damaged::CrdObject(
            "not the ClusterInventory CustomResourceDefinition",
        ))
    }
}
