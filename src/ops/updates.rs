//! `clinv updates`: which inventory to hold against the addon index.
//!
//! In order of preference: `--from FILE`; the live object when the cluster is reachable and
//! has one; the snapshot applied last (never a pending one: it never reached the cluster);
//! the inventory rendered from the project now. When the cluster could not be read the
//! result says so (`--offline` does not read it).

use super::Scope;
use super::context::Context;
use super::live::Live;
use crate::catalog::fetch::IndexRef;
use crate::catalog::index::AddonIndex;
use crate::catalog::updates::{self, Current};
use crate::cluster::Failure;
use crate::cluster::access;
use crate::error::exit;
use crate::error::{Error, Result};
use crate::fleet::{Left, Skip};
use crate::inventory::{self, Loaded, Warning};
use crate::project::Project;
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

/// Why the cluster was not read, when it was not (the answer is not the live cluster's).
pub type NotRead = Option<(crate::delivery::Reason, String)>;

/// The addon index `text` names, loaded (its warnings and where it came from said).
///
/// # Errors
/// A malformed reference, an index that cannot be fetched or read.
pub fn load_index(
    cx: Context<'_>,
    text: &str,
    fetch: &crate::catalog::fetch::Options,
) -> Result<(IndexRef, AddonIndex)> {
    let index_ref = IndexRef::parse(text)?;
    let loaded = crate::catalog::fetch::load(&index_ref, fetch)?;
    for w in &loaded.warnings {
        cx.console.warn(w);
    }
    cx.console.debug(&format!(
        "index {} ({:?}, {} addons)",
        index_ref.display(),
        loaded.origin,
        loaded.index.addons.len()
    ));
    Ok((index_ref, loaded.index))
}

/// Says the addons the index lists more than once (the first entry is compared).
pub fn duplicates(cx: Context<'_>, index_ref: &IndexRef, index: &AddonIndex) {
    for name in updates::duplicates(index) {
        cx.console.warn(&format!(
            "addon index {}: '{name}' appears more than once; the first entry is compared",
            index_ref.display()
        ));
    }
}

/// One domain's addons compared and why the cluster was not read (when it was not);
/// `None` for a deploy domain (noted for the end of the run).
///
/// # Errors
/// A selection or read error, `--strict` with render warnings.
pub fn compared(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    flag: Option<&str>,
    offline: bool,
) -> Result<Option<(Compared, NotRead)>> {
    let domain = cx.domain(project, flag)?;
    let d = Domain {
        scope: live.scope(project, &domain),
        source_date_epoch: cx.source_date_epoch,
    };
    let chosen = choose(&d, offline)?;
    cx.console.notices(&chosen.notices);
    cx.warnings(&chosen.warnings)?;
    Ok(match (chosen.compared, chosen.deploy) {
        (Some(c), _) => Some((c, chosen.not_read)),
        (None, cluster_ref) => {
            cx.deploy(&domain, cluster_ref.flatten().as_deref());
            None
        }
    })
}

/// The exit code of one domain's answer: 16 when it is not the live cluster's (with
/// `--strict`, why the cluster was not read), else 0.
pub fn exit_of(not_read: &NotRead, strict: bool) -> i32 {
    match not_read {
        Some((reason, _)) if strict => exit::for_reason(*reason),
        Some(_) => exit::NOT_LIVE,
        None => exit::OK,
    }
}

/// One domain of `updates -A`: what was read, or why it was not.
enum Got {
    Read(Result<Chosen>),
    Skipped(Skip),
}

/// What several domains compared, and the domains left out.
#[derive(Default)]
pub struct Fleet<'a> {
    /// Each domain compared: the addons, their updates, why the cluster was not read.
    pub compared: Vec<(
        &'a crate::domain::Domain,
        Compared,
        Vec<updates::Update>,
        NotRead,
    )>,
    pub left: Vec<Left>,
    failed: bool,
    not_tried: bool,
}

impl Fleet<'_> {
    /// Exit 1 when a domain failed, else 16 when a cluster was not read (with `--strict`
    /// why, 3–10), else 0.
    pub fn exit_code(&self, strict: bool) -> i32 {
        let not_read = self.compared.iter().find_map(|(_, _, _, n)| n.as_ref());
        match (self.failed, not_read, self.not_tried) {
            (true, _, _) => exit::FAILURE,
            (false, Some((reason, _)), _) if strict => exit::for_reason(*reason),
            (false, Some(_), _) | (false, None, true) => exit::NOT_LIVE,
            (false, None, false) => exit::OK,
        }
    }
}

/// Several domains (`-A`, repeated `--domain`, a glob), each compared as for one.
///
/// Each is read through its own kubeconfig within the one `--timeout` ([`Live::each`];
/// `refuse`: the caller's word on flags that name one cluster); its messages are said.
///
/// # Errors
/// What `refuse` returns; `--strict` with render warnings.
pub fn several<'a, E: From<Error>>(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    domains: &'a [crate::domain::Domain],
    (index, offline, pre): (&AddonIndex, bool, bool),
    refuse: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<Fleet<'a>, E> {
    let results = live.each(
        project,
        domains,
        refuse,
        |domain, live| {
            let d = Domain {
                scope: live.scope(project, domain),
                source_date_epoch: cx.source_date_epoch,
            };
            Got::Read(choose(&d, offline))
        },
        |_, skip| Got::Skipped(skip),
    )?;
    let mut fleet = Fleet::default();
    for (domain, got) in domains.iter().zip(results) {
        gather(cx, (index, pre), &mut fleet, domain, got)?;
    }
    Ok(fleet)
}

/// One domain's result into `fleet`, its notices and warnings said.
fn gather<'a>(
    cx: Context<'_>,
    (index, pre): (&AddonIndex, bool),
    fleet: &mut Fleet<'a>,
    domain: &'a crate::domain::Domain,
    got: Got,
) -> Result<()> {
    match got {
        Got::Read(Ok(chosen)) => {
            cx.console.notices(&chosen.notices);
            cx.warnings(&chosen.warnings)?;
            let Some(compared) = chosen.compared else {
                let cluster = chosen.deploy.flatten();
                fleet
                    .left
                    .push(Left::deploy(cx.deploys, domain, cluster.as_deref()));
                return Ok(());
            };
            if let Some((_, why)) = &chosen.not_read {
                cx.console.warn(&format!(
                    "{domain}: the live cluster was not read ({}): the versions are the {}",
                    crate::util::redact::escape_line(why),
                    compared.source.describe()
                ));
            }
            let list = updates::compute_with(&compared.addons, index, pre);
            fleet
                .compared
                .push((domain, compared, list, chosen.not_read));
        }
        Got::Read(Err(e)) => {
            fleet.left.push(Left::failed(cx.console, domain, &e));
            fleet.failed = true;
        }
        Got::Skipped(Skip::Deploy(cluster)) => {
            fleet
                .left
                .push(Left::deploy(cx.deploys, domain, cluster.as_deref()));
        }
        Got::Skipped(skip) => {
            let (word, detail) = skip.words();
            cx.console.warn(&format!("{domain}: {word}: {detail}"));
            fleet.left.push(Left {
                domain: domain.to_string(),
                why: format!("{word}: {detail}"),
            });
            fleet.not_tried = true;
        }
    }
    Ok(())
}

#[cfg(test)]
mod fleet_tests {
    use super::*;
    use crate::delivery::Reason;

    /// One answer not the live cluster's: 16, with `--strict` why; several: a failed
    /// domain first, then a cluster not read or a domain not tried.
    #[test]
    fn exit_codes_of_one_and_several_domains() {
        let not_read: NotRead = Some((Reason::NoKubeconfig, "none".into()));
        assert_eq!(exit_of(&None, true), exit::OK);
        assert_eq!(exit_of(&not_read, false), exit::NOT_LIVE);
        assert_eq!(
            exit_of(&not_read, true),
            exit::for_reason(Reason::NoKubeconfig)
        );
        let mut fleet = Fleet::default();
        assert_eq!(fleet.exit_code(true), exit::OK);
        fleet.not_tried = true;
        assert_eq!(fleet.exit_code(true), exit::NOT_LIVE);
        fleet.failed = true;
        assert_eq!(fleet.exit_code(false), exit::FAILURE);
    }
}
