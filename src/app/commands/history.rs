//! The history of a domain, oldest first, from the snapshot store or from a GitOps
//! repository's commits — the input of `log`, `report` and `drift`.

use crate::app::settings::Settings;
use crate::error::{Error, Result};
use crate::inventory::ClusterInventory;
use crate::store::{DomainStore, State};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// One point of the history.
pub struct Point {
    pub id: String,
    pub at: String,
    pub outcome: &'static str,
    pub inventory: Rc<ClusterInventory>,
}

impl Point {
    pub fn step(&self) -> crate::history::audit::Step<'_> {
        crate::history::audit::Step {
            id: &self.id,
            at: &self.at,
            outcome: self.outcome,
            inventory: &self.inventory,
        }
    }
}

fn outcome(state: State) -> &'static str {
    match state {
        State::Pending => "queued",
        State::Applied => "applied",
        State::Committed => "committed",
        State::Superseded | State::Deleted => "superseded",
    }
}

/// Every snapshot of the domain (gc'd ones aside). Snapshots that share a CR object share
/// one parsed inventory, so memory grows with distinct inventories, not with records.
/// Damaged records and objects are reported and skipped.
pub fn from_store(settings: &Settings, store: &DomainStore) -> Result<Vec<Point>> {
    let journal = store.read()?;
    for d in &journal.damage {
        settings
            .printer
            .warn(&format!("snapshot store: {d} — skipped"));
    }
    let mut cache: HashMap<String, Rc<ClusterInventory>> = HashMap::new();
    let mut out = Vec::with_capacity(journal.snapshots.len());
    for snap in journal
        .snapshots
        .iter()
        .filter(|s| s.state != State::Deleted)
    {
        let inventory = match cache.get(&snap.record.cr) {
            Some(i) => i.clone(),
            None => match store.inventory(&snap.record) {
                Ok(i) => {
                    let rc = Rc::new(i);
                    cache.insert(snap.record.cr.clone(), rc.clone());
                    rc
                }
                Err(e) => {
                    settings
                        .printer
                        .warn(&format!("snapshot {}: {e} — skipped", snap.record.id));
                    continue;
                }
            },
        };
        out.push(Point {
            id: snap.record.id.clone(),
            at: snap.record.at.clone(),
            outcome: outcome(snap.state),
            inventory,
        });
    }
    Ok(out)
}

/// Without git support there is no repository history to read.
#[cfg(not(feature = "gitops"))]
pub fn from_repo(_repo: &Path, _rev: &str, _path: &str) -> Result<Vec<Point>> {
    Err(Error::NoGitops("--repo"))
}

/// The versions of the committed CR along the branch's first-parent history.
#[cfg(feature = "gitops")]
pub fn from_repo(repo: &Path, rev: &str, path: &str) -> Result<Vec<Point>> {
    let versions = crate::gitops::history::file_history(repo, rev, path)
        .map_err(|e| Error::Git(format!("{}: {e}", repo.display())))?;
    let mut out = Vec::with_capacity(versions.len());
    for v in versions {
        let text = String::from_utf8(v.content)
            .map_err(|_| Error::Git(format!("{path} at {} is not UTF-8", v.commit)))?;
        let inventory = crate::inventory::parse::inventory_from_text(&text).map_err(|m| {
            Error::InvalidFile {
                path: format!("{}:{}:{path}", repo.display(), &v.commit[..12]).into(),
                message: m,
            }
        })?;
        out.push(Point {
            id: v.commit[..12].to_string(),
            at: v.at,
            outcome: "committed",
            inventory: Rc::new(inventory),
        });
    }
    Ok(out)
}
