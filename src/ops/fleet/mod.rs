//! `clinv fleet`: the addon × domain matrix of a project.
//!
//! `clinv fleet`: the addon × domain matrix of a project — which version of each addon
//! every domain runs — from the project as it renders now (desired) or from the newest
//! snapshot of each domain in the store (recorded), with the queries a fleet asks:
//! one addon, versions below or above a bound.

pub mod addon_log;
pub mod compare;
pub mod read;
mod select;

use crate::domain::Domain;
use crate::error::{ArgumentError, Result};
use crate::history::version::{self, Order};
use crate::inventory::{self, ClusterInventory, Loaded};
use crate::project::Project;
use crate::store::segments::Channels;
use crate::store::{State, Store};
use std::collections::BTreeMap;

pub mod at;
pub mod report;
pub mod timeline;

/// Where the matrix comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Each cluster domain's inventory as the project renders it now.
    Project,
    /// Each domain's newest snapshot in the store.
    Store,
    /// Each domain folder's committed inventory on a branch of a GitOps repository.
    Repo,
    /// Each cluster domain's live inventory, read through its own kubeconfig.
    Live,
}

impl Source {
    pub fn word(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::Store => "store",
            Source::Repo => "repository",
            Source::Live => "live clusters",
        }
    }
}

/// One addon of one domain: present, with its chart version when it has one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cell {
    pub version: Option<String>,
    /// Read live, and not what the project renders for the domain (another version, or
    /// an addon the project no longer has).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drifting: bool,
    /// From the store: in the domain's newest snapshot, still pending, and not what the
    /// snapshot applied last has (it has not reached the cluster).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub queued: bool,
}

/// An addon's row: its cell in each domain that has it (by the domain's column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The addon's name (`x#2` for its second occurrence in one inventory).
    pub addon: String,
    /// Its category, where the first domain that has it records one.
    pub category: Option<String>,
    pub cells: BTreeMap<usize, Cell>,
}

/// The cells (addon, column) a page colours: behind the index, off the majority.
#[derive(Debug, Default)]
pub struct Marks {
    pub behind: std::collections::BTreeSet<(String, usize)>,
    pub differs: std::collections::BTreeSet<(String, usize)>,
    /// Read live and not what the project renders (`--from live`).
    pub drifting: std::collections::BTreeSet<(String, usize)>,
    /// In a pending snapshot, not yet on the cluster (`--from store`).
    pub queued: std::collections::BTreeSet<(String, usize)>,
    /// Changed since `--changed-since`'s date, with what it was (`was V`, `new since D`).
    pub changed: BTreeMap<(String, usize), String>,
}

/// A domain with no column, and why (a deploy domain, a render or record that failed).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Left {
    pub domain: String,
    pub why: String,
    /// It should have had a column and could not be read (a spec that does not parse, a
    /// damaged snapshot, a file that is no inventory): an error of the command, as in
    /// every command over several domains — not a note that `-q` hides.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// `--from live`: its cluster holds another domain's ClusterInventory (or one with
    /// no domain label), which is not this domain's column.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub other_domain: bool,
    /// A deploy domain, with the cluster domain it names: said once with the others of
    /// the run, not a line each (`why` says it in `-o json`).
    #[serde(skip)]
    pub deploy: Option<Option<String>>,
}

impl Left {
    fn new(domain: &Domain, why: String) -> Left {
        Left {
            domain: domain.to_string(),
            why,
            failed: false,
            other_domain: false,
            deploy: None,
        }
    }
}

/// The matrix: rows in the order addons first appear (domains in name order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    pub source: Source,
    pub domains: Vec<String>,
    pub rows: Vec<Row>,
    pub left: Vec<Left>,
    /// Cells a version bound could not order (not SemVer), as `domain/addon=version`.
    pub unordered: Vec<String>,
    /// `--from store`: where each domain's newest snapshot went besides the cluster (the
    /// registry and Git channels), for the domains of the matrix it went somewhere.
    pub delivered: BTreeMap<String, Channels>,
    /// `--addon` named an addon that no domain has (with the closest name it has): a
    /// warning, or with `--strict` the refusal, as an `--ignore` that matches nothing.
    pub unknown_addon: Option<ArgumentError>,
    /// `--at`: the date the matrix shows (none: the newest).
    pub as_of: Option<at::AsOf>,
    /// `--changed-since`: its cells that changed since that date.
    pub changed: Option<at::Changed>,
    /// What building the domains' inventories warned (the project as it renders now):
    /// said as `render` says it, refused with `--strict`.
    pub warnings: Vec<crate::inventory::Warning>,
}

/// What to keep of the matrix.
#[derive(Debug, Default)]
pub struct Query<'a> {
    pub addon: Option<&'a str>,
    /// Only versions below this one (SemVer; `v1.20` means `1.20.0`).
    pub below: Option<&'a str>,
    /// Only versions above this one.
    pub above: Option<&'a str>,
    /// Only versions older than this index's (its first entry of the addon; a
    /// pre-release there counts only for a cell that is a pre-release itself).
    pub behind: Option<&'a crate::catalog::index::AddonIndex>,
    /// Only cells that differ from their row's majority (no majority: every cell).
    pub differs: bool,
}

/// The matrix of every domain of `project` as it renders now.
pub fn from_project(project: &Project, rendered_at: jiff::Timestamp) -> Matrix {
    let mut builder = Builder::new(Source::Project);
    for domain in project.domains() {
        match inventory::load(project, &domain, rendered_at) {
            Ok(Loaded::Cluster(built)) => {
                builder.add(&domain, &built.inventory);
                builder.matrix.warnings.extend(built.warnings);
            }
            Ok(Loaded::Deploy { cluster_ref }) => builder.deploy(&domain, cluster_ref),
            Err(e) => builder.fail(&domain, crate::error::chain(&e)),
        }
    }
    builder.matrix
}

/// The matrix of the newest snapshot (gc'd ones aside) of every domain of `store`; a
/// deploy domain of `project` is named as such.
///
/// # Errors
/// A store that cannot be read.
pub fn from_store(store: &Store, project: Option<&Project>) -> Result<Matrix> {
    let mut builder = newest(store, &store.domains())?;
    if let Some(project) = project {
        for domain in project.domains() {
            if let crate::project::DomainKind::Deploy { cluster_ref, .. } =
                project.domain_kind(&domain)
            {
                builder.deploy(&domain, cluster_ref);
            }
        }
    }
    Ok(builder.matrix)
}

/// The matrix of the newest snapshot (gc'd ones aside) of each of `domains` of `store`,
/// its cells marked queued where the newest is pending and differs from what was
/// delivered.
///
/// # Errors
/// A store that cannot be read.
pub fn from_store_newest(store: &Store, domains: &[Domain]) -> Result<Matrix> {
    Ok(newest(store, domains)?.matrix)
}

fn newest(store: &Store, domains: &[Domain]) -> Result<Builder> {
    let mut builder = Builder::new(Source::Store);
    for domain in domains {
        let ds = store.domain(domain);
        let newest = newest_of(&ds)?;
        let Some((cr, rendered_at)) = newest.objects else {
            builder.leave(domain, "no snapshot".to_string());
            continue;
        };
        match ds.inventory_of(&cr, &rendered_at) {
            Ok(inv) => {
                builder.add(domain, &inv);
                if let Some(applied) = newest.queued {
                    let applied = match applied {
                        Some((cr, at)) => Some(ds.inventory_of(&cr, &at)?),
                        None => None,
                    };
                    builder.mark(applied.as_ref(), |c| c.queued = true);
                }
                if newest.channels != Channels::default() {
                    let delivered = &mut builder.matrix.delivered;
                    delivered.insert(domain.to_string(), newest.channels);
                }
            }
            Err(e) => builder.fail(domain, crate::error::chain(&e)),
        }
    }
    Ok(builder)
}

/// What reading one domain's cluster gave, for [`from_live`].
#[derive(Debug)]
pub enum LiveRead {
    /// The cluster answered: its inventory, or `None` when it has none.
    Read(Option<serde_json::Value>),
    /// The cluster was not read (or not tried: the `--timeout` spent), and why.
    NotRead(String),
    /// No cluster of its own: a deploy domain, and the cluster domain it names.
    Deploy(Option<String>),
    /// The cluster holds another domain's ClusterInventory, and why it is not this one's.
    OtherDomain(String),
    /// The domain could not be read at all (its spec does not parse): an error.
    Failed(String),
}

/// Reads the live inventory of `scope`'s domain.
///
/// # Errors
/// The runtime cannot start.
pub fn read_live(scope: &super::Scope<'_>) -> Result<LiveRead> {
    let project = Some((scope.project, scope.domain));
    let live = crate::cluster::access::read_live(&scope.access, project, scope.opts)?;
    Ok(match live.result {
        Ok(found) => LiveRead::Read(found.object),
        Err(f) if f.reason == crate::delivery::Reason::DomainMismatch => {
            LiveRead::OtherDomain(format!("another domain's inventory: {}", f.detail))
        }
        Err(f) => LiveRead::NotRead(format!("not read ({}: {})", f.reason, f.detail)),
    })
}

/// The matrix of the live clusters (`reads` in domain name order), each cell that is
/// not what the project renders for its domain marked drifting.
pub fn from_live(
    project: &Project,
    rendered_at: jiff::Timestamp,
    reads: Vec<(Domain, LiveRead)>,
) -> Matrix {
    let mut builder = Builder::new(Source::Live);
    for (domain, read) in reads {
        let value = match read {
            LiveRead::Read(Some(value)) => value,
            LiveRead::Read(None) => {
                builder.leave(&domain, "the cluster has no ClusterInventory".into());
                continue;
            }
            LiveRead::NotRead(why) => {
                builder.leave(&domain, why);
                continue;
            }
            LiveRead::Deploy(cluster_ref) => {
                builder.deploy(&domain, cluster_ref);
                continue;
            }
            LiveRead::Failed(why) => {
                builder.fail(&domain, why);
                continue;
            }
            LiveRead::OtherDomain(why) => {
                builder.matrix.left.push(Left {
                    other_domain: true,
                    ..Left::new(&domain, why)
                });
                continue;
            }
        };
        match inventory::parse::inventory_from_value(value) {
            Ok(live) => {
                builder.add(&domain, &live);
                let desired = inventory::load(project, &domain, rendered_at);
                if let Ok(Loaded::Cluster(built)) = desired {
                    builder.mark(Some(&built.inventory), |c| c.drifting = true);
                }
            }
            Err(e) => builder.fail(&domain, format!("not a ClusterInventory: {}", e)),
        }
    }
    builder.matrix
}

/// A snapshot's objects: its CR id and render time.
type Objects = (String, String);

/// A domain's newest snapshot in the store, as the fleet shows it.
struct Newest {
    objects: Option<Objects>,
    /// When it is still pending: the snapshot applied last (`None`: never applied),
    /// which its queued cells differ from.
    queued: Option<Option<Objects>>,
    channels: Channels,
}

/// The domain's newest snapshot, from the end of the journal when it can tell (the
/// cost of a domain is then its newest records, not its history), else from a full
/// read (which the store's model test holds the end's answer to).
///
/// # Errors
/// A store that cannot be read.
fn newest_of(ds: &crate::store::DomainStore) -> Result<Newest> {
    let objects = |r: &crate::store::SnapshotRecord| (r.cr.clone(), r.rendered_at.clone());
    if let Some(q) = ds.newest_queue() {
        let applied = q.applied.as_ref().map(objects);
        return Ok(Newest {
            objects: q.newest.as_ref().map(objects),
            queued: q.pending.then_some(applied),
            channels: q.channels,
        });
    }
    let journal = ds.read()?;
    let Some(newest) = journal.newest_first().next() else {
        return Ok(Newest {
            objects: None,
            queued: None,
            channels: Channels::default(),
        });
    };
    let queued = newest.is_pending().then(|| {
        let mut older = journal.snapshots.iter().rev();
        older
            .find(|s| s.state == State::Applied)
            .map(|s| objects(&s.record))
    });
    Ok(Newest {
        objects: Some(objects(&newest.record)),
        queued,
        channels: Channels::of(&newest.history),
    })
}

/// The matrix of the committed inventories at `rev` of the GitOps repository `repo`.
///
/// The matrix of the committed inventories of every domain folder at `rev` of the GitOps
/// repository `repo` (the shared record of a team); a folder whose name is not a domain
/// or whose file does not parse is named, with no column.
///
/// # Errors
/// No repository, an unknown revision, no `clusters/` folder.
#[cfg(feature = "gitops")]
pub fn from_repo(repo: &std::path::Path, rev: &str) -> Result<Matrix> {
    let found = crate::gitops::history::committed_inventories(repo, rev).map_err(|e| {
        crate::error::GitError::InRepo {
            repo: repo.display().to_string(),
            source: Box::new(e),
        }
    })?;
    let mut builder = Builder::new(Source::Repo);
    for (name, bytes) in found {
        let Some(domain) = Domain::new(&name) else {
            builder.matrix.left.push(Left {
                domain: crate::util::redact::escape_line(&name),
                why: "not a domain name".into(),
                failed: true,
                other_domain: false,
                deploy: None,
            });
            continue;
        };
        let parsed = String::from_utf8(bytes)
            .map_err(|_| "not UTF-8".to_string())
            .and_then(|t| {
                crate::inventory::parse::inventory_from_text(&t).map_err(|m| m.to_string())
            });
        match parsed {
            Ok(inv) => builder.add(&domain, &inv),
            Err(why) => builder.fail(
                &domain,
                format!("{}: {why}", crate::gitops::default_cr_path(&domain)),
            ),
        }
    }
    Ok(builder.matrix)
}

/// Without the `gitops` feature there is no repository to read.
///
/// # Errors
/// Always.
#[cfg(not(feature = "gitops"))]
pub fn from_repo(_repo: &std::path::Path, _rev: &str) -> Result<Matrix> {
    Err(crate::error::Error::NoGitops("--repo"))
}

fn deploy(cluster_ref: Option<String>) -> String {
    match cluster_ref {
        Some(c) => format!("a deploy domain (its cluster: {c}); no inventory of its own"),
        None => "a deploy domain; no inventory of its own".to_string(),
    }
}

/// An inventory's addons with their row keys: the name, `x#2` for the second `x`.
fn keyed(inv: &ClusterInventory) -> impl Iterator<Item = (String, &inventory::Addon)> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    inv.spec.addons.iter().map(move |addon| {
        let n = seen.entry(addon.name.as_str()).or_insert(0);
        *n += 1;
        let key = match *n {
            1 => addon.name.clone(),
            n => format!("{}#{n}", addon.name),
        };
        (key, addon)
    })
}

/// Adds domains as columns, one at a time.
struct Builder {
    matrix: Matrix,
    index: BTreeMap<String, usize>,
}

impl Builder {
    fn new(source: Source) -> Builder {
        Builder {
            matrix: Matrix {
                source,
                domains: Vec::new(),
                rows: Vec::new(),
                left: Vec::new(),
                unordered: Vec::new(),
                delivered: BTreeMap::new(),
                unknown_addon: None,
                as_of: None,
                changed: None,
                warnings: Vec::new(),
            },
            index: BTreeMap::new(),
        }
    }

    fn add(&mut self, domain: &Domain, inv: &ClusterInventory) {
        let column = self.matrix.domains.len();
        self.matrix.domains.push(domain.to_string());
        for (key, addon) in keyed(inv) {
            let row = *self.index.entry(key.clone()).or_insert_with(|| {
                self.matrix.rows.push(Row {
                    addon: key,
                    category: addon.category.clone(),
                    cells: BTreeMap::new(),
                });
                self.matrix.rows.len() - 1
            });
            let cell = Cell {
                version: addon.chart_version.clone(),
                drifting: false,
                queued: false,
            };
            self.matrix.rows[row].cells.insert(column, cell);
        }
    }

    /// Marks (`set`) the cells of the column added last that `reference` does not have
    /// at the same version (every cell, without one).
    fn mark(&mut self, reference: Option<&ClusterInventory>, set: fn(&mut Cell)) {
        let column = self.matrix.domains.len() - 1;
        let want: BTreeMap<String, Option<String>> = reference
            .map(|r| {
                keyed(r)
                    .map(|(key, a)| (key, a.chart_version.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for row in &mut self.matrix.rows {
            if let Some(cell) = row.cells.get_mut(&column)
                && want.get(&row.addon) != Some(&cell.version)
            {
                set(cell);
            }
        }
    }

    fn leave(&mut self, domain: &Domain, why: String) {
        self.matrix.left.push(Left::new(domain, why));
    }

    fn deploy(&mut self, domain: &Domain, cluster_ref: Option<String>) {
        self.matrix.left.push(Left {
            deploy: Some(cluster_ref.clone()),
            ..Left::new(domain, deploy(cluster_ref))
        });
    }

    fn fail(&mut self, domain: &Domain, why: String) {
        self.matrix.left.push(Left {
            failed: true,
            ..Left::new(domain, why)
        });
    }
}

/// A version bound as typed: SemVer with or without `v`, and `1.20` or `1` meaning
/// `1.20.0`, `1.0.0` (how people name a minor line).
///
/// # Errors
/// Not a version even so.
pub fn bound(text: &str) -> Result<String> {
    let bare = text.strip_prefix(['v', 'V']).unwrap_or(text);
    [bare.to_string(), format!("{bare}.0"), format!("{bare}.0.0")]
        .into_iter()
        .find(|v| version::parse(v).is_some())
        .ok_or_else(|| {
            ArgumentError::Version {
                text: text.to_string(),
            }
            .into()
        })
}

impl Matrix {
    /// Keeps the cells `query` asks for; rows and domains left without a cell go.
    ///
    /// # Errors
    /// A bound that is not a version.
    pub fn filter(mut self, query: &Query<'_>) -> Result<Matrix> {
        let below = query.below.map(bound).transpose()?;
        let above = query.above.map(bound).transpose()?;
        if let Some(name) = query.addon {
            self.unknown_addon = self.unknown(name);
            self.rows.retain(|r| r.addon == name);
            if let Some(changed) = &mut self.changed {
                changed.removed.retain(|(addon, _, _)| addon == name);
            }
        }
        if let Some(index) = query.behind {
            self.behind(index);
        }
        if query.differs {
            for row in &mut self.rows {
                differs(row);
            }
            self.rows.retain(|r| !r.cells.is_empty());
        }
        if below.is_none() && above.is_none() {
            return Ok(self.keep_used_domains());
        }
        let mut unordered = Vec::new();
        for row in &mut self.rows {
            row.cells.retain(|&column, cell| {
                let keep = |v: &str| {
                    let order = |b: &Option<String>, want: Order| {
                        b.as_ref().is_none_or(|b| version::compare(v, b) == want)
                    };
                    order(&below, Order::Upgrade) && order(&above, Order::Downgrade)
                };
                match cell.version.as_deref() {
                    Some(v) if version::parse(v).is_none() => {
                        unordered.push(format!("{}/{}={v}", self.domains[column], row.addon));
                        false
                    }
                    Some(v) => keep(v),
                    None => false,
                }
            });
        }
        self.rows.retain(|r| !r.cells.is_empty());
        self.unordered = unordered;
        Ok(self.keep_used_domains())
    }

    /// The fleet's exit code: a domain that could not be read is an error of the command
    /// (as in every command over several domains), then another domain's inventory where
    /// a domain's should be, then a cluster `not_read` (the matrix is not the fleet's).
    pub fn exit_code(&self, not_read: bool) -> i32 {
        use crate::error::exit;
        if self.left.iter().any(|l| l.failed) {
            exit::FAILURE
        } else if self.left.iter().any(|l| l.other_domain) {
            exit::DOMAIN_MISMATCH
        } else if not_read {
            exit::NOT_LIVE
        } else {
            exit::OK
        }
    }

    /// `--addon name` when no row is that addon: said with the closest addon's name. A
    /// matrix with no domain in it has no addons to compare with, and nothing is said.
    fn unknown(&self, name: &str) -> Option<ArgumentError> {
        if self.domains.is_empty() || self.rows.iter().any(|r| r.addon == name) {
            return None;
        }
        let names = self.rows.iter().map(|r| r.addon.as_str());
        let mean = crate::util::suggest::closest(name, names)
            .map(|n| format!(" — did you mean '{n}'?"))
            .unwrap_or_default();
        Some(ArgumentError::Addon {
            name: name.to_string(),
            from: self.source.word(),
            mean,
        })
    }

    /// The cells `--behind-index` and `--differs` would keep, for a page that colours
    /// them instead of leaving the others out.
    pub fn marks(&self, index: Option<&crate::catalog::index::AddonIndex>) -> Marks {
        let cells = |m: &Matrix| {
            m.rows
                .iter()
                .flat_map(|r| r.cells.keys().map(move |&c| (r.addon.clone(), c)))
                .collect()
        };
        let behind = index.map_or_else(Default::default, |index| {
            let mut m = self.clone();
            m.behind(index);
            cells(&m)
        });
        let mut m = self.clone();
        m.rows.iter_mut().for_each(differs);
        let flagged = |flag: fn(&Cell) -> bool| {
            self.rows
                .iter()
                .flat_map(|r| {
                    r.cells
                        .iter()
                        .filter(move |(_, cell)| flag(cell))
                        .map(move |(&c, _)| (r.addon.clone(), c))
                })
                .collect()
        };
        Marks {
            behind,
            differs: cells(&m),
            drifting: flagged(|c| c.drifting),
            queued: flagged(|c| c.queued),
            changed: self.changed_marks(),
        }
    }

    /// Keeps the cells the index has a newer version for.
    fn behind(&mut self, index: &crate::catalog::index::AddonIndex) {
        let mut latest: BTreeMap<&str, Option<&str>> = BTreeMap::new();
        for entry in &index.addons {
            latest
                .entry(&entry.name)
                .or_insert(entry.chart_version.as_deref());
        }
        let pre = |v: &str| version::parse(v).is_some_and(|v| !v.pre.is_empty());
        for row in &mut self.rows {
            let name = row.addon.split('#').next().unwrap_or_default();
            let newest = latest.get(name).copied().flatten();
            row.cells.retain(|&column, cell| {
                let (Some(v), Some(to)) = (cell.version.as_deref(), newest) else {
                    return false;
                };
                match version::compare(v, to) {
                    Order::Upgrade => !pre(to) || pre(v),
                    Order::Unordered => {
                        let at = &self.domains[column];
                        self.unordered.push(format!("{at}/{}={v}", row.addon));
                        false
                    }
                    Order::Equal | Order::Downgrade => false,
                }
            });
        }
        self.rows.retain(|r| !r.cells.is_empty());
    }

    /// Drops the domains no row has a cell in, renumbering the cells.
    fn keep_used_domains(mut self) -> Matrix {
        let used: Vec<usize> = (0..self.domains.len())
            .filter(|c| self.rows.iter().any(|r| r.cells.contains_key(c)))
            .collect();
        let renumber: BTreeMap<usize, usize> = used
            .iter()
            .enumerate()
            .map(|(new, &old)| (old, new))
            .collect();
        self.domains = used.iter().map(|&c| self.domains[c].clone()).collect();
        let kept: std::collections::BTreeSet<&String> = self.domains.iter().collect();
        self.delivered.retain(|d, _| kept.contains(d));
        for row in &mut self.rows {
            row.cells = std::mem::take(&mut row.cells)
                .into_iter()
                .map(|(c, cell)| (renumber[&c], cell))
                .collect();
        }
        self
    }
}

/// Keeps the cells of `row` that differ from its majority version (a strict majority
/// of the domains that deploy it; without one, every cell is kept).
fn differs(row: &mut Row) {
    let mut counts: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    for cell in row.cells.values() {
        *counts.entry(cell.version.as_deref()).or_insert(0) += 1;
    }
    let total = row.cells.len();
    let majority = counts
        .iter()
        .find(|(_, n)| **n * 2 > total)
        .map(|(v, _)| v.map(str::to_string));
    if let Some(majority) = majority {
        row.cells.retain(|_, c| c.version != majority);
    }
}

/// A row of [`fixture`]: the addon, and its cells as (domain index, version).
#[cfg(test)]
pub(crate) type FixtureRow<'a> = (&'a str, Vec<(usize, Option<&'a str>)>);

/// A matrix of `domains` whose rows are (addon, its cells: a domain's index and its
/// version, `None` for a folder without one): the fixture of the fleet's unit tests.
#[cfg(test)]
pub(crate) fn fixture(source: Source, domains: &[&str], rows: &[FixtureRow<'_>]) -> Matrix {
    let mut m = Builder::new(source).matrix;
    m.domains = domains.iter().map(|d| d.to_string()).collect();
    m.rows = rows
        .iter()
        .map(|(addon, cells)| Row {
            addon: addon.to_string(),
            category: None,
            cells: cells
                .iter()
                .map(|&(c, version)| {
                    let cell = Cell {
                        version: version.map(str::to_string),
                        drifting: false,
                        queued: false,
                    };
                    (c, cell)
                })
                .collect(),
        })
        .collect();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Matrix {
        let certs = vec![
            (0, Some("v1.18.0")),
            (1, Some("v1.20.1")),
            (2, Some("main")),
        ];
        let rows = [("cert-manager", certs), ("glue", vec![(0, None)])];
        fixture(Source::Project, &["a", "b", "c"], &rows)
    }

    #[test]
    fn below_a_minor_line_keeps_only_older_versions_and_names_the_unordered() {
        let m = matrix()
            .filter(&Query {
                addon: Some("cert-manager"),
                below: Some("v1.20"),
                ..Query::default()
            })
            .unwrap();
        assert_eq!(m.domains, ["a"]);
        assert_eq!(m.rows.len(), 1);
        assert_eq!(m.rows[0].cells[&0].version.as_deref(), Some("v1.18.0"));
        assert_eq!(m.unordered, ["c/cert-manager=main"]);
    }

    #[test]
    fn above_and_no_query() {
        let m = matrix().filter(&Query::default()).unwrap();
        assert_eq!(m.domains.len(), 3);
        assert_eq!(m.rows.len(), 2);
        let m = matrix()
            .filter(&Query {
                above: Some("1.19.0"),
                ..Query::default()
            })
            .unwrap();
        assert_eq!(m.domains, ["b"]);
        assert_eq!(m.rows[0].cells[&0].version.as_deref(), Some("v1.20.1"));
    }

    #[test]
    fn behind_an_index_and_differing_from_the_majority() {
        let index = crate::catalog::index::AddonIndex {
            generated_at: String::new(),
            addons: vec![crate::catalog::index::IndexEntry {
                name: "cert-manager".into(),
                chart_version: Some("v1.20.1".into()),
                category: None,
                app_version: None,
            }],
        };
        let m = matrix()
            .filter(&Query {
                behind: Some(&index),
                ..Query::default()
            })
            .unwrap();
        assert_eq!(m.domains, ["a"]);
        assert_eq!(m.unordered, ["c/cert-manager=main"]);
        // Three versions of cert-manager, no majority: all differ; glue has one domain.
        let m = matrix()
            .filter(&Query {
                differs: true,
                ..Query::default()
            })
            .unwrap();
        assert_eq!(m.rows.len(), 1);
        assert_eq!(m.rows[0].cells.len(), 3);
        let mut row = Row {
            addon: "x".into(),
            category: None,
            cells: [1, 2, 3]
                .into_iter()
                .map(|c| {
                    (
                        c,
                        Cell {
                            version: Some(if c == 2 { "2" } else { "1" }.into()),
                            drifting: false,
                            queued: false,
                        },
                    )
                })
                .collect(),
        };
        differs(&mut row);
        assert_eq!(row.cells.keys().copied().collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn bounds_accept_minor_lines_and_refuse_words() {
        assert_eq!(bound("v1.20").unwrap(), "1.20.0");
        assert_eq!(bound("2").unwrap(), "2.0.0");
        assert_eq!(bound("1.21.0-rc.1").unwrap(), "1.21.0-rc.1");
        assert!(bound("latest").is_err());
    }
}
