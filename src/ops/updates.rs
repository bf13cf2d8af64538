//! `clinv updates`: which inventory to hold against the addon index.
//!
//! In order of preference: `--from FILE`; the live object when the cluster is reachable and
//! has one; the snapshot applied last (never a pending one: it never reached the cluster);
//! the inventory rendered from the project now. When the cluster could not be read the
//! result says so (`--offline` does not read it).

use super::Scope;
use crate::catalog::updates::{self, Current};
use crate::cluster::Failure;
use crate::cluster::access;
use crate::error::{Error, Result};
use crate::inventory::{self, Loaded, Warning};
use crate::snapshot_id::SnapshotId;
use crate::store::DomainStore;
use crate::util::notice::Notice;
use std::path::{Path, PathBuf};

/// Largest `--from` file read.
const MAX_FROM_BYTES: u64 = 8 << 20;

/// Which inventory was compared.
#[derive(Debug)]
pub enum Source {
    File(PathBuf),
    Live {
        server: String,
    },
    Snapshot {
        id: SnapshotId,
        state: &'static str,
        at: String,
    },
    Rendered {
        domain: String,
    },
}

impl Source {
    /// The `source` field of `-o json`.
    pub fn word(&self) -> &'static str {
        match self {
            Source::File(_) => "file",
            Source::Live { .. } => "live",
            Source::Snapshot { .. } => "snapshot",
            Source::Rendered { .. } => "rendered",
        }
    }

    /// The inventory in words, for the "compared the … with …" line.
    pub fn describe(&self) -> String {
        match self {
            Source::File(p) => format!("inventory in {}", p.display()),
            Source::Live { server } => format!("live inventory of {server}"),
            Source::Snapshot { id, state, at } => {
                format!("inventory of snapshot {id} ({state}, recorded {at})")
            }
            Source::Rendered { domain } => format!("inventory rendered for {domain}"),
        }
    }
}

/// The addons of the inventory chosen, and where it came from.
#[derive(Debug)]
pub struct Compared {
    pub source: Source,
    pub addons: Vec<Current>,
}

/// Where to look when there is no `--from` file.
pub struct Domain<'a> {
    pub scope: Scope<'a>,
    /// `SOURCE_DATE_EPOCH`, for a render (read only when it comes to that).
    pub source_date_epoch: Option<&'a str>,
}

/// What was chosen, with what happened on the way.
#[derive(Debug, Default)]
pub struct Chosen {
    /// `None` for a deploy domain without a live object or a snapshot.
    pub compared: Option<Compared>,
    /// `Some(cluster_ref)` when `compared` is `None` because the domain deploys only.
    pub deploy: Option<Option<String>>,
    pub notices: Vec<Notice>,
    /// The render's warnings (the caller applies `--strict`).
    pub warnings: Vec<Warning>,
    /// The cluster could not be read: why (the answer is not the live cluster's).
    pub not_read: Option<(crate::delivery::Reason, String)>,
}

/// The inventory in `path` (a ClusterInventory, a list holding one, or kubectl's dump).
///
/// # Errors
/// An unreadable file or one that holds no readable ClusterInventory.
pub fn from_file(path: &Path) -> Result<Compared> {
    let bytes =
        crate::util::files::read_bounded(path, MAX_FROM_BYTES).map_err(|e| Error::io(path, e))?;
    let origin = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidFile {
        path: path.to_path_buf(),
        message: "not valid UTF-8".into(),
    })?;
    let inventory = updates::find_inventory(&text, &origin)?;
    Ok(Compared {
        addons: updates::from_inventory(&inventory),
        source: Source::File(path.to_path_buf()),
    })
}

/// The live inventory (not with `offline`), else the snapshot applied last, else the
/// render.
///
/// # Errors
/// The runtime cannot start; the render fails.
pub fn choose(d: &Domain, offline: bool) -> Result<Chosen> {
    let mut chosen = Chosen::default();
    let read = if offline {
        Ok(None)
    } else {
        live(&d.scope, &mut chosen.notices)?
    };
    match read {
        Ok(Some(found)) => {
            chosen.compared = Some(found);
            return Ok(chosen);
        }
        Ok(None) if !offline => chosen.notices.push(Notice::detail(
            "the cluster has no ClusterInventory; not comparing a live one",
        )),
        Ok(None) => {}
        // No kubeconfig anywhere: no cluster to ask, so nothing was claimed of one.
        Err(f) if f.reason == crate::delivery::Reason::NoKubeconfig => chosen.notices.push(
            Notice::detail(format!("cluster not used ({}: {})", f.reason, f.detail)),
        ),
        Err(f) => {
            chosen.notices.push(Notice::warn(format!(
                "the live cluster was not read ({}: {})",
                f.reason, f.detail
            )));
            chosen.not_read = Some((f.reason, f.detail));
        }
    }
    if let Some(found) = last_applied(&d.scope.store, &mut chosen.notices) {
        chosen.compared = Some(found);
        return Ok(chosen);
    }
    let at = inventory::rendered_at(d.source_date_epoch, jiff::Timestamp::now())?;
    match inventory::load(d.scope.project, d.scope.domain, at)? {
        Loaded::Cluster(built) => {
            chosen.warnings = built.warnings;
            chosen.compared = Some(Compared {
                addons: updates::from_inventory(&built.inventory),
                source: Source::Rendered {
                    domain: d.scope.domain.to_string(),
                },
            });
        }
        Loaded::Deploy { cluster_ref, .. } => chosen.deploy = Some(cluster_ref),
    }
    Ok(chosen)
}

/// The snapshot of the domain applied last, if one can be read.
fn last_applied(store: &DomainStore, notices: &mut Vec<Notice>) -> Option<Compared> {
    let journal = match store.read() {
        Ok(j) => j,
        Err(e) => {
            notices.push(Notice::warn(format!(
                "snapshots: {}",
                crate::error::chain(&e)
            )));
            return None;
        }
    };
    let (snap, _) = journal.last_applied()?;
    match store.inventory(&snap.record) {
        Ok(inv) => Some(Compared {
            addons: updates::from_inventory(&inv),
            source: Source::Snapshot {
                id: snap.record.id.clone(),
                state: snap.state.as_str(),
                at: snap.record.at.clone(),
            },
        }),
        Err(e) => {
            notices.push(Notice::warn(format!(
                "snapshot {}: {} — not used",
                snap.record.id,
                crate::error::chain(&e)
            )));
            None
        }
    }
}

/// The live inventory: `Ok(Ok(None))` when the cluster answers without one (or with one
/// that cannot be read), `Ok(Err(_))` when it cannot be read; `Err` only when the
/// runtime cannot start.
fn live(
    d: &Scope,
    notices: &mut Vec<Notice>,
) -> Result<std::result::Result<Option<Compared>, Failure>> {
    let read = access::read_live(&d.access, Some((d.project, d.domain)), d.opts)?;
    notices.extend(read.trace.iter().map(Notice::debug));
    let (server, value) = match read.result {
        Ok(found) => (found.server, found.object),
        Err(f) => return Ok(Err(f)),
    };
    let Some(value) = value else {
        return Ok(Ok(None));
    };
    let label = value
        .pointer("/metadata/labels/lok8s.dev~1domain")
        .and_then(serde_json::Value::as_str);
    if let Some(other) = label.filter(|l| d.domain.as_str() != *l) {
        notices.push(Notice::warn(format!(
            "the live inventory of {server} is for domain '{other}', not '{}'",
            d.domain
        )));
    }
    let origin = format!("the live ClusterInventory ({server})");
    match updates::from_object(&value, &origin) {
        Ok(addons) => Ok(Ok(Some(Compared {
            addons,
            source: Source::Live { server },
        }))),
        Err(e) => {
            notices.push(Notice::warn(crate::error::chain(&e)));
            Ok(Ok(None))
        }
    }
}
