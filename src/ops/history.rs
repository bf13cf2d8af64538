//! The history of a domain, oldest first, from the snapshot store or from a GitOps
//! repository's commits — the input of `log` and `report` — and the two views of it.

use crate::domain::Domain;
#[cfg(feature = "gitops")]
use crate::error::GitError;
use crate::error::{ArgumentError, Error, Result};
use crate::history::audit::{self, Span, Step, Trail};
use crate::history::diff::Ignore;
use crate::inventory::ClusterInventory;
use crate::store::scan::Listing;
use crate::store::{DomainStore, State};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One point of the history.
pub struct Point {
    pub id: String,
    pub at: String,
    pub outcome: &'static str,
    pub inventory: Arc<ClusterInventory>,
    /// Its number in the domain's history, from 1 ([`Step::revision`]).
    pub revision: u64,
    /// The commit's author, `name <email>` (from a repository).
    pub author: Option<String>,
    /// The host that recorded the snapshot (from the store, when recorded).
    pub host: Option<String>,
}

impl Point {
    pub fn step(&self) -> Step<'_> {
        Step {
            id: &self.id,
            at: &self.at,
            outcome: self.outcome,
            inventory: &self.inventory,
            revision: Some(self.revision),
            author: self.author.as_deref(),
            host: self.host.as_deref(),
        }
    }
}

/// The points, and what was skipped on the way (damaged records and objects).
pub struct History {
    pub points: Vec<Point>,
    pub skipped: Vec<String>,
}

/// Where the history is read.
pub enum Source<'a> {
    /// The domain's snapshot store.
    Store(&'a DomainStore),
    /// The committed CR of `domain` (in the default GitOps folder) along `rev`'s
    /// first-parent history in `repo`.
    Repo {
        repo: &'a Path,
        rev: &'a str,
        domain: &'a Domain,
    },
    /// The artifacts `clinv push` left in an OCI repository, one point per manifest,
    /// each signature checked against `verify` when given.
    #[cfg(feature = "gitops")]
    Oci {
        reference: &'a crate::oci::Reference,
        access: &'a crate::oci::Access,
        verify: Option<&'a crate::oci::PublicKey>,
    },
}

fn outcome(state: State) -> &'static str {
    match state {
        State::Pending => "pending",
        State::Applied => "applied",
        State::Committed => "committed",
        State::Superseded | State::Deleted => "superseded",
        State::Recorded => "recorded",
        State::Pushed => "pushed",
    }
}

/// Reads the history.
///
/// # Errors
/// An unreadable store or repository; a committed CR that does not parse.
pub fn load(source: Source<'_>) -> Result<History> {
    match source {
        Source::Store(store) => from_store(store),
        Source::Repo { repo, rev, domain } => from_repo(repo, rev, domain).map(|points| History {
            points,
            skipped: Vec::new(),
        }),
        #[cfg(feature = "gitops")]
        Source::Oci {
            reference,
            access,
            verify,
        } => from_oci(reference, access, verify),
    }
}

/// One domain's history from the store, or from `--repo` (`branch`, else `HEAD`), what
/// was skipped said as warnings: the input of `log` and `report` for one domain.
///
/// # Errors
/// As [`load`].
pub fn load_said(
    console: &dyn crate::console::Console,
    store: &crate::store::Store,
    domain: &Domain,
    repo: Option<&Path>,
    branch: Option<&str>,
) -> Result<History> {
    let store = store.domain(domain);
    let source = match repo {
        Some(repo) => Source::Repo {
            repo,
            rev: branch.unwrap_or("HEAD"),
            domain,
        },
        None => Source::Store(&store),
    };
    let history = load(source)?;
    say_skipped(console, &history.skipped);
    Ok(history)
}

/// What a read skipped (damaged records and objects), each a `[warn] … — skipped`.
pub fn say_skipped(console: &dyn crate::console::Console, skipped: &[String]) {
    for s in skipped {
        console.warn(&format!("{s} — skipped"));
    }
}

/// One point per manifest of the repository, in the order of their render times:
/// `clinv push` tags each as `snapshot-<id>` (the point's id), other tags (`latest`)
/// name one of those or an artifact pushed otherwise (its id: the digest's first 12
/// hex digits). Entries of the tag list that are no tag names (control characters) are
/// skipped and said in [`History::skipped`]: one bad tag does not hide the others.
#[cfg(feature = "gitops")]
fn from_oci(
    reference: &crate::oci::Reference,
    access: &crate::oci::Access,
    verify: Option<&crate::oci::PublicKey>,
) -> Result<History> {
    let mut session = crate::oci::Session::open(reference, access)?;
    let listed = session.tags()?;
    let skipped = match &listed.first_invalid {
        Some(first) => vec![format!(
            "{}: {} tag(s) that are not valid tag names (the first: '{first}')",
            reference.url(),
            listed.invalid
        )],
        None => Vec::new(),
    };
    let mut tags = listed.names;
    tags.sort_by_key(|t| !t.starts_with("snapshot-"));
    let mut seen = std::collections::HashSet::new();
    let mut points = Vec::new();
    for tag in tags {
        // Several tags name one manifest (`latest` and its `snapshot-<id>`): each is
        // read once, by digest.
        let Some(digest) = session.digest(&tag)? else {
            continue;
        };
        if !seen.insert(digest.clone()) {
            continue;
        }
        let pulled = session.pull(&digest, verify)?;
        let named = format!("{}:{tag}", reference.url());
        let inventory = super::pull::inventory(&pulled, &named)?;
        let id = tag.strip_prefix("snapshot-").map_or_else(
            || pulled.digest.trim_start_matches("sha256:")[..12].to_string(),
            str::to_string,
        );
        let created = pulled.annotations.get("org.opencontainers.image.created");
        points.push(Point {
            id,
            at: created.cloned().unwrap_or_default(),
            outcome: "pushed",
            inventory: Arc::new(inventory),
            revision: 0,
            author: None,
            host: None,
        });
    }
    points.sort_by(|a, b| (&a.at, &a.id).cmp(&(&b.at, &b.id)));
    for (n, p) in points.iter_mut().enumerate() {
        p.revision = n as u64 + 1;
    }
    Ok(History { points, skipped })
}

/// Every snapshot of the domain (gc'd ones aside). Snapshots that share a CR object share
/// one parsed inventory, so memory grows with distinct inventories, not with records.
/// Damaged records and objects are skipped and named in [`History::skipped`].
fn from_store(store: &DomainStore) -> Result<History> {
    let steps = load_store(store, Window::All)?;
    let mut points = Vec::with_capacity(steps.steps.len());
    for &i in &steps.steps {
        let (row, inventory) = steps.step_parts(i);
        points.push(Point {
            id: row.id().to_string(),
            at: row.at().to_string(),
            outcome: outcome(row.state()),
            inventory: inventory.clone(),
            revision: u64::from(i) + 1,
            author: None,
            host: row.host().map(str::to_string),
        });
    }
    Ok(History {
        points,
        skipped: steps.skipped,
    })
}

/// A domain's history from its store, compactly: the snapshots (gc'd ones and those whose
/// object cannot be read aside) as rows of a [`Listing`], one parsed inventory per distinct
/// CR object.
///
/// `log` streams its entries from it ([`StoreSteps::entries`]), so memory grows by ≈ 60
/// bytes per record, not by a point or an entry per record.
pub struct StoreSteps {
    listing: Listing,
    /// Rows of the history before the listing's first (it may hold only the newest).
    before: u64,
    /// The parsed inventory of each CR object (by [`crate::store::scan::RowRef::cr_key`]).
    inventories: HashMap<u32, Arc<ClusterInventory>>,
    /// The rows that are steps, oldest first.
    steps: Vec<u32>,
    /// Damaged records and objects, as [`History::skipped`].
    pub skipped: Vec<String>,
}

impl StoreSteps {
    /// Whether the history has no step at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// What of a domain's history a query needs.
#[derive(Debug, Clone, Copy)]
pub enum Window {
    /// Every step.
    All,
    /// The newest N steps (`log --max-count N` without a time window).
    Newest(usize),
    /// The steps recorded at or after this time (`--since`), each with the one before.
    Since(jiff::Timestamp),
}

/// The [`Window`] `query` needs: `log --max-count N` and `log --since` read only the
/// end of a long history.
pub fn window(query: &Query<'_>) -> Window {
    match (query.max_count, bounds(query)) {
        (_, Ok((Some(since), _))) => Window::Since(since),
        (Some(n), Ok((None, None))) => Window::Newest(n),
        _ => Window::All,
    }
}

/// Reads [`StoreSteps`] for `window`, from the end of the history when it can.
///
/// Reads [`StoreSteps`] for `window`: the newest steps it needs and the one before
/// them, from the end of the history when it can tell (see
/// [`DomainStore::listing_tail`], [`DomainStore::listing_tail_since`]); else every step.
///
/// # Errors
/// An unreadable store.
pub fn load_store(store: &DomainStore, window: Window) -> Result<StoreSteps> {
    match window {
        Window::Newest(n) => {
            if let Some((listing, before, _)) = store.listing_tail(n.saturating_add(1))? {
                let steps = steps_of(store, listing, before)?;
                if steps.steps.len() > n {
                    return Ok(steps);
                }
            }
        }
        Window::Since(since) => {
            if let Some((listing, before, _)) = store.listing_tail_since(since)? {
                let steps = steps_of(store, listing, before)?;
                // The first step is compared with nothing: it must be before the window
                // (its object may be unreadable, and a later row the first step).
                let first = steps
                    .steps
                    .first()
                    .and_then(|&i| steps.listing.row(i as usize));
                let outside = first.is_some_and(|row| {
                    audit::parse_bound(&row.at(), false).is_none_or(|t| t < since)
                });
                if outside {
                    return Ok(steps);
                }
            }
        }
        Window::All => {}
    }
    steps_of(store, store.listing()?, 0)
}

/// The skipped lines of damaged records, as `log` and `audit` say them.
fn damage_lines(damage: &[crate::store::Damage]) -> Vec<String> {
    damage
        .iter()
        .map(|d| format!("snapshot store: {d}"))
        .collect()
}

/// [`StoreSteps`] of `listing`, whose first row has `before` rows before it.
fn steps_of(store: &DomainStore, listing: Listing, before: u64) -> Result<StoreSteps> {
    let mut skipped = damage_lines(&listing.damage);
    let mut inventories: HashMap<u32, Arc<ClusterInventory>> = HashMap::new();
    let mut failed: HashMap<u32, String> = HashMap::new();
    let mut steps = Vec::with_capacity(listing.len());
    for (i, row) in listing.rows().enumerate() {
        if row.state() == State::Deleted {
            continue;
        }
        let key = row.cr_key();
        let std::collections::hash_map::Entry::Vacant(slot) = inventories.entry(key) else {
            steps.push(i as u32);
            continue;
        };
        // The first snapshot of an object gives the shared inventory its renderedAt.
        let error = match failed.get(&key) {
            Some(e) => e.clone(),
            None => match store.inventory_of(row.cr(), &row.rendered_at()) {
                Ok(inv) => {
                    slot.insert(Arc::new(inv));
                    steps.push(i as u32);
                    continue;
                }
                Err(e) => {
                    let e = crate::error::chain(&e);
                    failed.insert(key, e.clone());
                    e
                }
            },
        };
        skipped.push(format!("snapshot {}: {error}", &*row.id()));
    }
    Ok(StoreSteps {
        listing,
        before,
        inventories,
        steps,
        skipped,
    })
}

impl StoreSteps {
    fn step_parts(&self, i: u32) -> (crate::store::scan::RowRef<'_>, &Arc<ClusterInventory>) {
        let row = self.listing.row(i as usize).expect("a step is a row");
        (row, &self.inventories[&row.cr_key()])
    }

    /// Every step, oldest first, as the timelines see it (no revision, author or host).
    fn each_step(&self, mut f: impl FnMut(&Step)) {
        for &i in &self.steps {
            let (row, inventory) = self.step_parts(i);
            let (id, at) = (row.id(), row.at());
            f(&Step {
                id: &id,
                at: &at,
                outcome: outcome(row.state()),
                inventory,
                revision: None,
                author: None,
                host: None,
            });
        }
    }

    /// The domain label of the newest step and the version timeline of every step, as
    /// [`trail`] gives them: built a step at a time (one step's id and time held at
    /// once), so `log -o json` needs no point per record.
    pub fn timeline(&self) -> (Option<String>, audit::Timeline) {
        let mut builder = audit::TimelineBuilder::default();
        self.each_step(|step| builder.push(step));
        let domain = self.steps.last().and_then(|&i| {
            let labels = &self.step_parts(i).1.metadata.labels;
            labels.get(crate::inventory::DOMAIN_LABEL).cloned()
        });
        (domain, builder.finish())
    }

    /// The steps `clinv log` lists for `query` (without `addon`): their positions in
    /// [`StoreSteps::steps`], newest first — in the window, at most `max_count` of them;
    /// 4 bytes a step.
    ///
    /// # Errors
    /// [`ArgumentError::Time`] for a bad `since`/`until`.
    fn chosen(&self, query: &Query<'_>) -> Result<Vec<u32>> {
        let (since, until) = bounds(query)?;
        let mut chosen = Vec::new();
        for (n, &i) in self.steps.iter().enumerate().rev() {
            // Without the step before it (a listing of the newest rows only), a step
            // cannot be compared: never shown as a first one.
            if query.max_count.is_some_and(|max| chosen.len() >= max) || (n == 0 && self.before > 0)
            {
                break;
            }
            if since.is_some() || until.is_some() {
                let row = self.step_parts(i).0;
                let t = audit::parse_bound(&row.at(), false);
                if !(since.is_none_or(|s| t.is_some_and(|a| a >= s))
                    && until.is_none_or(|u| t.is_some_and(|a| a <= u)))
                {
                    continue;
                }
            }
            chosen.push(n as u32);
        }
        Ok(chosen)
    }

    /// How many entries [`StoreSteps::entries`] gives for `query` (no comparison made).
    ///
    /// # Errors
    /// As [`StoreSteps::entries`].
    pub fn count(&self, query: &Query<'_>) -> Result<usize> {
        Ok(self.chosen(query)?.len())
    }

    /// `clinv log`'s entries, newest first (oldest first with `reverse`), as [`log`]
    /// lists them for [`Query`] without `addon`: each passed to `emit` as soon as it is
    /// made. Returns how many there were.
    ///
    /// # Errors
    /// [`ArgumentError::Time`] for a bad `since`/`until` (before anything is emitted); what
    /// `emit` returns.
    pub fn entries(
        &self,
        query: &Query<'_>,
        mut emit: impl FnMut(&audit::Entry) -> Result<()>,
    ) -> Result<usize> {
        let mut n = 0;
        for entry in self.entry_iter(query)? {
            emit(&entry)?;
            n += 1;
        }
        Ok(n)
    }

    /// [`StoreSteps::entries`] as they are made, one at a time.
    ///
    /// # Errors
    /// [`ArgumentError::Time`] for a bad `since`/`until`.
    pub fn entry_iter(&self, query: &Query<'_>) -> Result<Entries<'_>> {
        let mut chosen = self.chosen(query)?;
        if query.reverse {
            chosen.reverse();
        }
        Ok(Entries {
            steps: self,
            chosen: chosen.into_iter(),
            same: HashMap::new(),
            ignore: Ignore::default(),
        })
    }

    /// The entry of the `n`th step, compared with the step before it (`same`: the
    /// comparisons of a step with one holding the same object, all alike).
    fn entry_at(
        &self,
        n: usize,
        same: &mut HashMap<u32, crate::history::diff::Report>,
        ignore: &Ignore,
    ) -> audit::Entry {
        let i = self.steps[n];
        let (row, inventory) = self.step_parts(i);
        let (id, at) = (row.id(), row.at());
        let report = match n.checked_sub(1).map(|p| self.step_parts(self.steps[p])) {
            None => crate::history::diff::initial(inventory, ignore),
            Some((prev, _)) if prev.cr_key() == row.cr_key() => same
                .entry(row.cr_key())
                .or_insert_with(|| crate::history::diff::diff_with(inventory, inventory, ignore))
                .clone(),
            Some((_, prev)) => crate::history::diff::diff_with(prev, inventory, ignore),
        };
        let step = Step {
            id: &id,
            at: &at,
            outcome: outcome(row.state()),
            inventory,
            // The snapshot's position in the store's order (deleted ones and unreadable
            // ones keep theirs), so filters never renumber.
            revision: Some(self.before + u64::from(i) + 1),
            author: None,
            host: row.host(),
        };
        audit::entry(&step, n == 0, report)
    }

    /// `clinv log --addon NAME` of every step, one step at a time: memory grows with
    /// the addon's spans, not with the history.
    pub fn addon(&self, name: &str) -> Log {
        let mut spans = audit::AddonSpans::new(name);
        self.each_step(|step| spans.push(step));
        let spans = spans.finish();
        if !spans.is_empty() {
            return Log::Addon(spans);
        }
        // Each distinct object once, in the order of the steps.
        let mut seen = std::collections::HashSet::new();
        let inventories = self.steps.iter().filter_map(|&i| {
            let (row, inventory) = self.step_parts(i);
            seen.insert(row.cr_key()).then_some(&**inventory)
        });
        never(name, inventories)
    }
}

/// The entries of [`StoreSteps::entry_iter`], each made when it is asked for.
pub struct Entries<'s> {
    steps: &'s StoreSteps,
    chosen: std::vec::IntoIter<u32>,
    same: HashMap<u32, crate::history::diff::Report>,
    ignore: Ignore,
}

impl Iterator for Entries<'_> {
    type Item = audit::Entry;

    fn next(&mut self) -> Option<audit::Entry> {
        let n = self.chosen.next()?;
        Some(
            self.steps
                .entry_at(n as usize, &mut self.same, &self.ignore),
        )
    }
}

/// `--addon NAME` that no step has: the closest name the history had, if any.
fn never<'a>(name: &str, inventories: impl Iterator<Item = &'a ClusterInventory>) -> Log {
    let mut names: Vec<&str> = Vec::new();
    for a in inventories.flat_map(|inv| &inv.spec.addons) {
        if !names.contains(&a.name.as_str()) {
            names.push(&a.name);
        }
    }
    let suggestion = crate::util::suggest::closest(name, names).map(str::to_string);
    Log::Never { suggestion }
}

/// `clinv report`'s history from the store, bounded.
///
/// The trail holds the newest entries only (the timeline covers every step), so a page of a
/// million records is built in the memory of the compact listing.
pub struct ReportHistory {
    pub trail: Trail,
    /// The newest step's inventory; `None`: no step.
    pub current: Option<Arc<ClusterInventory>>,
    /// Recorded steps in all.
    pub steps: usize,
    pub skipped: Vec<String>,
}

/// [`ReportHistory`] of `store` with at most `newest` entries.
///
/// # Errors
/// An unreadable store.
pub fn report_history(store: &DomainStore, newest: usize) -> Result<ReportHistory> {
    let steps = load_store(store, Window::All)?;
    let (domain, timeline) = steps.timeline();
    let query = Query {
        since: None,
        until: None,
        max_count: Some(newest),
        addon: None,
        reverse: false,
        now: jiff::Timestamp::now(),
    };
    let mut entries = Vec::new();
    steps.entries(&query, |e| {
        entries.push(e.clone());
        Ok(())
    })?;
    let current = steps.steps.last().map(|&i| steps.step_parts(i).1.clone());
    Ok(ReportHistory {
        trail: Trail {
            schema_version: crate::history::diff::SCHEMA_VERSION,
            kind: audit::TRAIL_KIND,
            domain,
            entries,
            timeline,
        },
        current,
        steps: steps.steps.len(),
        skipped: steps.skipped,
    })
}

/// `since` and `until` of a query.
fn bounds(query: &Query<'_>) -> Result<(Option<jiff::Timestamp>, Option<jiff::Timestamp>)> {
    let bound = |t: Option<&str>, end: bool| {
        t.map(|t| {
            audit::parse_query_bound(t, end, query.now)
                .ok_or_else(|| Error::from(ArgumentError::Time(t.to_string())))
        })
        .transpose()
    };
    Ok((bound(query.since, false)?, bound(query.until, true)?))
}

/// Without git support there is no repository history to read.
#[cfg(not(feature = "gitops"))]
fn from_repo(_repo: &Path, _rev: &str, _domain: &Domain) -> Result<Vec<Point>> {
    Err(Error::NoGitops("--repo"))
}

/// The versions of the committed CR along the branch's first-parent history.
#[cfg(feature = "gitops")]
fn from_repo(repo: &Path, rev: &str, domain: &Domain) -> Result<Vec<Point>> {
    let path = &crate::gitops::default_cr_path(domain);
    let versions =
        crate::gitops::history::file_history(repo, rev, path).map_err(|e| GitError::InRepo {
            repo: repo.display().to_string(),
            source: Box::new(e),
        })?;
    let mut out = Vec::with_capacity(versions.len());
    for (n, v) in versions.into_iter().enumerate() {
        let text = String::from_utf8(v.content).map_err(|_| GitError::FileNotUtf8 {
            path: path.to_string(),
            commit: v.commit.clone(),
        })?;
        let inventory = crate::inventory::parse::inventory_from_text(&text).map_err(|m| {
            Error::inventory(format!("{}:{}:{path}", repo.display(), &v.commit[..12]), m)
        })?;
        out.push(Point {
            id: v.commit[..12].to_string(),
            at: v.at,
            outcome: "committed",
            inventory: Arc::new(inventory),
            revision: n as u64 + 1,
            author: Some(v.author),
            host: None,
        });
    }
    Ok(out)
}

/// What `clinv log` shows.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// Only entries at or after this date or time.
    pub since: Option<&'a str>,
    /// Only entries at or before this date or time (a bare date: the end of that day).
    pub until: Option<&'a str>,
    /// At most this many entries, newest first.
    pub max_count: Option<usize>,
    /// One addon's version spans instead of the change list.
    pub addon: Option<&'a str>,
    /// Oldest first (`--reverse`), after `max_count` took the newest.
    pub reverse: bool,
    /// What relative bounds (`2d`, `yesterday`) count from.
    pub now: jiff::Timestamp,
}

impl Query<'_> {
    /// Whether `since`/`until` narrow the log to a window.
    pub fn windowed(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }
}

impl Query<'static> {
    /// The whole history: no window, no count, no addon, newest first.
    pub fn everything(now: jiff::Timestamp) -> Query<'static> {
        Query {
            since: None,
            until: None,
            max_count: None,
            addon: None,
            reverse: false,
            now,
        }
    }
}

/// One entry of `log -A` as `-o json` prints it, borrowed.
#[derive(Debug, serde::Serialize)]
pub struct FleetItem<'a> {
    pub domain: &'a str,
    #[serde(flatten)]
    pub entry: &'a audit::Entry,
}

/// One entry of `log -A`: a step of one domain's history.
#[derive(Debug, serde::Serialize)]
pub struct FleetEntry {
    pub domain: String,
    #[serde(flatten)]
    pub entry: audit::Entry,
}

/// `log -A`: the entries of every domain of a store for a query, merged.
///
/// Newest first (a tie keeps the domains' order; oldest first with `reverse`), with what
/// was skipped in each. With `max_count`, each domain gives at most that many entries to the merge,
/// which keeps the newest as it goes: at most `2 × max_count` entries are held, whatever
/// the number of domains. Without it, every domain's steps are held (their compact
/// listings, ≈ 60 bytes a record) and their entries merged as they are made: none is
/// held. [`FleetLog::each`] can walk them more than once.
pub struct FleetLog<'q> {
    query: Query<'q>,
    domains: Vec<String>,
    source: FleetSource,
    pub skipped: Vec<String>,
}

enum FleetSource {
    Newest(Vec<FleetEntry>),
    Every(Vec<StoreSteps>),
}

impl<'q> FleetLog<'q> {
    /// Reads the domains two at a time (each is a few small files: a fleet of ten
    /// thousand is bound by the CPU).
    ///
    /// # Errors
    /// A bad `since`/`until`; an unreadable store.
    pub fn load(
        store: &crate::store::Store,
        domains: &[crate::domain::Domain],
        query: &Query<'q>,
    ) -> Result<FleetLog<'q>> {
        bounds(query)?;
        let names = domains.iter().map(ToString::to_string).collect();
        if query.max_count.is_some() {
            let (all, skipped) = newest(store, domains, query)?;
            return Ok(FleetLog {
                query: *query,
                domains: names,
                source: FleetSource::Newest(all),
                skipped,
            });
        }
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let read = crate::util::pool::ordered(domains, workers, |domain| {
            load_store(&store.domain(domain), Window::All)
        });
        let (mut every, mut skipped) = (Vec::with_capacity(domains.len()), Vec::new());
        for (domain, steps) in domains.iter().zip(read) {
            let steps = steps?;
            skipped.extend(steps.skipped.iter().map(|s| format!("{domain}: {s}")));
            every.push(steps);
        }
        Ok(FleetLog {
            query: *query,
            domains: names,
            source: FleetSource::Every(every),
            skipped,
        })
    }

    /// Whether [`FleetLog::each`] walks oldest first (`--reverse`).
    pub fn oldest_first(&self) -> bool {
        self.query.reverse
    }

    /// Each entry with its domain, in order. Returns how many there were.
    ///
    /// # Errors
    /// What `emit` returns.
    pub fn each(&self, mut emit: impl FnMut(&str, &audit::Entry) -> Result<()>) -> Result<usize> {
        let every = match &self.source {
            FleetSource::Newest(all) => {
                for e in all {
                    emit(&e.domain, &e.entry)?;
                }
                return Ok(all.len());
            }
            FleetSource::Every(every) => every,
        };
        let mut heads: Vec<_> = Vec::with_capacity(every.len());
        for steps in every {
            heads.push(steps.entry_iter(&self.query)?.peekable());
        }
        // Newest first, a tie to the first domain; reversed, oldest first, a tie to the
        // last (the merge of what one stable sort, then a reversal, gives).
        let reverse = self.query.reverse;
        let key = |e: &audit::Entry, d: usize| {
            let at = audit::parse_bound(&e.at, false);
            match reverse {
                false => MergeKey::Newest(at, std::cmp::Reverse(d)),
                true => MergeKey::Oldest(std::cmp::Reverse(at), d),
            }
        };
        let mut heap = std::collections::BinaryHeap::with_capacity(heads.len());
        for (d, it) in heads.iter_mut().enumerate() {
            if let Some(e) = it.peek() {
                heap.push((key(e, d), d));
            }
        }
        let mut n = 0;
        while let Some((_, d)) = heap.pop() {
            let entry = heads[d].next().expect("a peeked entry");
            emit(&self.domains[d], &entry)?;
            n += 1;
            if let Some(e) = heads[d].peek() {
                heap.push((key(e, d), d));
            }
        }
        Ok(n)
    }
}

/// The order of [`FleetLog::each`]'s merge: the greatest comes first (one direction
/// per log, never both in one heap).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum MergeKey {
    Newest(Option<jiff::Timestamp>, std::cmp::Reverse<usize>),
    Oldest(std::cmp::Reverse<Option<jiff::Timestamp>>, usize),
}

/// The newest `max_count` entries of the fleet, merged (see [`FleetLog`]).
fn newest(
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
    query: &Query<'_>,
) -> Result<(Vec<FleetEntry>, Vec<String>)> {
    let (mut all, mut skipped) = (Vec::new(), Vec::new());
    // Stable: equal times keep the domains' (sorted) order and each domain's own, so
    // keeping the newest as we go gives what one sort of everything would.
    let newest_first = |all: &mut Vec<FleetEntry>| {
        all.sort_by_cached_key(|e| std::cmp::Reverse(audit::parse_bound(&e.entry.at, false)));
        if let Some(max) = query.max_count {
            all.truncate(max);
        }
    };
    // A chunk of domains at a time, so at most a chunk of domains' entries are held
    // beside the merge's.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    // Each domain's newest first: the merge reverses the whole at the end.
    let newest_query = Query {
        reverse: false,
        ..*query
    };
    for chunk in domains.chunks(FLEET_CHUNK) {
        let read = crate::util::pool::ordered(chunk, workers, |domain| {
            fleet_entries(store, domain, &newest_query)
        });
        for (domain, result) in chunk.iter().zip(read) {
            let (entries, mut left) = result?;
            skipped.append(&mut left);
            all.extend(entries.into_iter().map(|entry| FleetEntry {
                domain: domain.to_string(),
                entry,
            }));
            if query
                .max_count
                .is_some_and(|max| all.len() > max.saturating_mul(2))
            {
                newest_first(&mut all);
            }
        }
    }
    newest_first(&mut all);
    if query.reverse {
        all.reverse();
    }
    Ok((all, skipped))
}

/// Domains of `log -A --max-count` read at once (see [`FleetLog`]).
const FLEET_CHUNK: usize = 64;

/// One domain's part of [`FleetLog`] with `max_count`: its entries for `query`, and what was skipped
/// (named with the domain).
fn fleet_entries(
    store: &crate::store::Store,
    domain: &crate::domain::Domain,
    query: &Query<'_>,
) -> Result<(Vec<audit::Entry>, Vec<String>)> {
    let steps = load_store(&store.domain(domain), window(query))?;
    let skipped = steps
        .skipped
        .iter()
        .map(|s| format!("{domain}: {s}"))
        .collect();
    let mut entries = Vec::new();
    steps.entries(query, |entry| {
        entries.push(entry.clone());
        Ok(())
    })?;
    Ok((entries, skipped))
}

/// `clinv log`'s answer.
pub enum Log {
    /// The spans of `--addon`.
    Addon(Vec<Span>),
    /// `--addon` names an addon the history never had; the closest name it had, if any
    /// (a typo is said, never answered as "never").
    Never { suggestion: Option<String> },
    /// The change list, filtered and truncated.
    Trail(Trail),
}

/// The audit trail of `points`, or one addon's timeline.
///
/// # Errors
/// [`ArgumentError::Time`] for a `since`/`until` that is not a date or RFC 3339 time.
pub fn log(points: &[Point], query: &Query<'_>) -> Result<Log> {
    let (since, until) = bounds(query)?;
    let steps: Vec<Step> = points.iter().map(Point::step).collect();
    if let Some(name) = query.addon {
        let spans = audit::addon_timeline(&steps, name);
        if spans.is_empty() {
            return Ok(never(name, steps.iter().map(|s| s.inventory)));
        }
        return Ok(Log::Addon(spans));
    }
    let mut trail = audit::trail(&steps, &Ignore::default());
    trail.entries.retain(|e| {
        let at = audit::parse_bound(&e.at, false);
        since.is_none_or(|s| at.is_some_and(|a| a >= s))
            && until.is_none_or(|u| at.is_some_and(|a| a <= u))
    });
    if let Some(n) = query.max_count {
        trail.entries.truncate(n);
    }
    if query.reverse {
        trail.entries.reverse();
    }
    Ok(Log::Trail(trail))
}

/// The whole trail of `points` (`clinv report`).
pub fn trail(points: &[Point]) -> Trail {
    let steps: Vec<Step> = points.iter().map(Point::step).collect();
    audit::trail(&steps, &Ignore::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{StateRecord, Store};

    fn cr(n: u32) -> ClusterInventory {
        let text = format!(
            r#"{{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{{"name":"cluster","labels":{{"lok8s.dev/domain":"d"}}}},"spec":{{"lok8sVersion":"1","kind":"lo","kubernetesVersion":"v1.3{}.0","specHash":"{}","renderedAt":"2026-01-01T00:00:{:02}Z","addons":[]}}}}"#,
            n,
            "a".repeat(64),
            n % 60
        );
        crate::inventory::parse::inventory_from_text(&text).unwrap()
    }

    /// The windows the log tests ask for of a history recorded at `times` (at least six
    /// steps): everything, the newest few, none, since, until with a count, the future.
    fn windows(times: &[String]) -> [(Option<&str>, Option<&str>, Option<usize>); 6] {
        [
            (None, None, None),
            (None, None, Some(3)),
            (None, None, Some(0)),
            (Some(times[2].as_str()), None, None),
            (None, Some(times[5].as_str()), Some(2)),
            (Some("2999-01-01"), None, None),
        ]
    }

    /// The entries `steps` streams for `query`, and their count.
    fn collected(steps: &StoreSteps, query: &Query<'_>) -> (Vec<audit::Entry>, usize) {
        let mut entries = Vec::new();
        let n = steps
            .entries(query, |e| {
                entries.push(e.clone());
                Ok(())
            })
            .unwrap();
        (entries, n)
    }

    /// The points as `log` read them from the whole journal before listings were
    /// compact: the reference the streamed entries are held to.
    fn reference_points(store: &DomainStore) -> (Vec<Point>, Vec<String>) {
        let journal = store.read().unwrap();
        let mut skipped = damage_lines(&journal.damage);
        let mut cache: HashMap<String, Arc<ClusterInventory>> = HashMap::new();
        let mut points = Vec::new();
        for (n, snap) in journal
            .snapshots
            .into_iter()
            .enumerate()
            .filter(|(_, s)| s.state != State::Deleted)
        {
            let inventory = match cache.get(&snap.record.cr) {
                Some(i) => i.clone(),
                None => match store.inventory(&snap.record) {
                    Ok(i) => {
                        let rc = Arc::new(i);
                        cache.insert(snap.record.cr.clone(), rc.clone());
                        rc
                    }
                    Err(e) => {
                        let e = crate::error::chain(&e);
                        skipped.push(format!("snapshot {}: {e}", snap.record.id));
                        continue;
                    }
                },
            };
            points.push(Point {
                id: snap.record.id.into_string(),
                at: snap.record.at,
                outcome: outcome(snap.state),
                inventory,
                revision: n as u64 + 1,
                author: None,
                host: snap.record.host.clone(),
            });
        }
        (points, skipped)
    }

    #[test]
    fn streamed_log_entries_are_the_trail() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
        let mut ids = Vec::new();
        for n in [0, 1, 1, 1, 2, 0, 0, 4, 3, 5, 5] {
            ids.push(store.record(&cr(n), "{}", None).unwrap().id);
        }
        let at = crate::store::now_millis();
        store
            .set_states(&[
                StateRecord::new(&ids[0], &at, State::Applied),
                StateRecord::new(&ids[2], &at, State::Superseded),
                StateRecord::new(&ids[4], &at, State::Deleted),
                StateRecord::new(&ids[6], &at, State::Committed),
            ])
            .unwrap();
        // The object of cr(4) (snapshot 7) goes missing: skipped by both.
        let lost = store.read().unwrap().snapshots[7].record.cr.clone();
        std::fs::remove_file(dir.path().join(format!("d/objects/{lost}.json"))).unwrap();
        let (points, skipped) = reference_points(&store);
        let steps = load_store(&store, Window::All).unwrap();
        assert_eq!(steps.skipped, skipped);
        assert_eq!(from_store(&store).unwrap().points.len(), points.len());
        let times: Vec<String> = points.iter().map(|p| p.at.clone()).collect();
        let queries = windows(&times);
        for (since, until, max_count) in queries {
            let query = Query {
                since,
                until,
                max_count,
                ..Query::everything(jiff::Timestamp::now())
            };
            let Log::Trail(trail) = log(&points, &query).unwrap() else {
                panic!("a trail")
            };
            let (streamed, n) = collected(&steps, &query);
            assert_eq!(streamed, trail.entries, "{since:?} {until:?} {max_count:?}");
            assert_eq!(n, trail.entries.len());
            // Read for the query's window (from the end when it can tell): the same.
            let mut windowed = Vec::new();
            load_store(&store, window(&query))
                .unwrap()
                .entries(&query, |e| {
                    windowed.push(e.clone());
                    Ok(())
                })
                .unwrap();
            assert_eq!(windowed, trail.entries, "{since:?} {until:?} {max_count:?}");
            // Revisions belong to the snapshots: the same under every filter.
            let mut numbered = Vec::new();
            steps
                .entries(&query, |e| {
                    numbered.push((e.id.clone(), e.revision, e.host.clone()));
                    Ok(())
                })
                .unwrap();
            for (id, revision, host) in numbered {
                let position = ids.iter().position(|i| *i == id).unwrap();
                assert_eq!(revision, position as u64 + 1, "{id}");
                assert_eq!(host, crate::store::record_host(), "{id}");
            }
        }
        // The gc'd snapshot (the 5th) keeps its number: the 6th is still revision 6.
        let Log::Trail(all) = log(
            &points,
            &Query {
                since: None,
                until: None,
                max_count: None,
                addon: None,
                reverse: true,
                now: jiff::Timestamp::now(),
            },
        )
        .unwrap() else {
            panic!("a trail")
        };
        let revisions: Vec<u64> = all.entries.iter().map(|e| e.revision).collect();
        assert_eq!(revisions, [1, 2, 3, 4, 6, 7, 9, 10, 11]);
        let bad = Query {
            since: Some("the day before"),
            until: None,
            max_count: None,
            addon: None,
            reverse: false,
            now: jiff::Timestamp::now(),
        };
        assert!(matches!(
            steps.entries(&bad, |_| Ok(())),
            Err(Error::Argument(ArgumentError::Time(_)))
        ));
    }

    /// A CR of step `n` with addons: lanes that come, change, go and come back.
    fn cr_addons(n: u32) -> ClusterInventory {
        let mut inv = cr(n % 3);
        let addons = match n {
            0 => r#"[{"name":"a","chartVersion":"1.0.0","category":"net"}]"#,
            1 => r#"[{"name":"a","chartVersion":"1.1.0","category":"net"},{"name":"b"}]"#,
            2 => {
                r#"[{"name":"b","category":"x"},{"name":"a","chartVersion":"main"},{"name":"a","chartVersion":"2.0.0"}]"#
            }
            _ => r#"[{"name":"c","chartVersion":"0.1.0"},{"name":"a","chartVersion":"1.0.0"}]"#,
        };
        let text = format!(
            r#"{{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{{"name":"cluster"}},"spec":{{"lok8sVersion":"1","kind":"lo","specHash":"h","renderedAt":"2026-01-01T00:00:00Z","addons":{addons}}}}}"#
        );
        inv.spec.addons = crate::inventory::parse::inventory_from_text(&text)
            .unwrap()
            .spec
            .addons;
        inv
    }

    /// `log -o json` from the store as it is streamed (head, each entry, end, with the
    /// timeline built a step at a time) is byte for byte the whole trail document, with
    /// and without a window; an empty history too.
    #[test]
    fn the_streamed_trail_document_is_the_whole_one() {
        use crate::view::report::json;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
        let streamed = |query: &Query<'_>| -> Option<String> {
            let steps = load_store(&store, Window::All).unwrap();
            let (label, timeline) = steps.timeline();
            let head = json::trail_head(label.as_deref()).unwrap();
            let (mut out, mut first) = (String::new(), true);
            let n = steps
                .entries(query, |e| {
                    if first {
                        out.push_str(&head);
                    }
                    out.push_str(&json::trail_entry(e, first).unwrap());
                    first = false;
                    Ok(())
                })
                .unwrap();
            if n == 0 {
                out.push_str(&head);
            }
            out.push_str(&json::trail_end(&timeline, n == 0).unwrap());
            (n > 0 || (query.since.is_none() && query.until.is_none())).then_some(out)
        };
        let whole = |query: &Query<'_>| -> Option<String> {
            let (points, _) = reference_points(&store);
            let Log::Trail(trail) = log(&points, query).unwrap() else {
                panic!("a trail")
            };
            (!trail.entries.is_empty() || (query.since.is_none() && query.until.is_none()))
                .then(|| json::trail(&trail).unwrap())
        };
        let query = |since, until, max_count| Query {
            since,
            until,
            max_count,
            ..Query::everything(jiff::Timestamp::now())
        };
        assert_eq!(
            streamed(&query(None, None, None)),
            whole(&query(None, None, None))
        );
        for n in [0, 1, 1, 2, 3, 0, 4, 2, 2] {
            store.record(&cr_addons(n), "{}", None).unwrap();
        }
        let (points, _) = reference_points(&store);
        let times: Vec<String> = points.iter().map(|p| p.at.clone()).collect();
        for (since, until, max) in windows(&times) {
            let (s, w) = (
                streamed(&query(since, until, max)),
                whole(&query(since, until, max)),
            );
            assert_eq!(s, w, "{since:?} {until:?} {max:?}");
        }
        let all = whole(&query(None, None, None)).unwrap();
        assert!(all.contains("\"key\": \"a#2\"") && all.contains("\"current\": false"));
    }

    /// Every other form of `log` from the store — oldest first, `-o markdown`,
    /// `--oneline`, `--addon` — is what the whole trail gives, with and without a window.
    #[test]
    fn every_streamed_form_of_the_log_is_the_whole_one() {
        use crate::view::report::{markdown, text};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
        for n in [0, 1, 1, 2, 3, 0, 4, 2, 2] {
            store.record(&cr_addons(n), "{}", None).unwrap();
        }
        let (points, _) = reference_points(&store);
        let times: Vec<String> = points.iter().map(|p| p.at.clone()).collect();
        let query = |since, until, max_count, reverse| Query {
            since,
            until,
            max_count,
            reverse,
            ..Query::everything(jiff::Timestamp::now())
        };
        let windows = windows(&times);
        for ((since, until, max), reverse) in
            windows.into_iter().flat_map(|w| [(w, false), (w, true)])
        {
            let q = query(since, until, max, reverse);
            let Log::Trail(whole) = log(&points, &q).unwrap() else {
                panic!("a trail")
            };
            let steps = load_store(&store, window(&q)).unwrap();
            let (entries, n) = collected(&steps, &q);
            assert_eq!(
                entries, whole.entries,
                "{since:?} {until:?} {max:?} {reverse}"
            );
            assert_eq!(n, steps.count(&q).unwrap());
            let (label, timeline) = load_store(&store, Window::All).unwrap().timeline();
            let mut md = markdown::trail_head(label.as_deref(), n, &timeline);
            entries
                .iter()
                .for_each(|e| md.push_str(&markdown::trail_row(e)));
            assert_eq!(md, markdown::trail(&whole), "{since:?} {until:?} {max:?}");
            let mut lines = text::Oneline::new(false, None);
            entries.iter().for_each(|e| lines.measure(None, e));
            let oneline: String = entries.iter().map(|e| lines.line(None, e)).collect();
            let reference = text::trail_oneline_aged(&whole, false, None);
            assert_eq!(
                oneline,
                reference
                    .strip_suffix(text::NO_HISTORY)
                    .unwrap_or(&reference)
            );
        }
        let steps = load_store(&store, Window::All).unwrap();
        for name in ["a", "b", "c", "bb", "zzz"] {
            let q = Query {
                addon: Some(name),
                ..query(None, None, None, false)
            };
            let (streamed, whole) = (steps.addon(name), log(&points, &q).unwrap());
            match (streamed, whole) {
                (Log::Addon(a), Log::Addon(b)) => assert_eq!(a, b, "{name}"),
                (Log::Never { suggestion: a }, Log::Never { suggestion: b }) => {
                    assert_eq!(a, b, "{name}")
                }
                _ => panic!("{name}: streamed and whole disagree"),
            }
        }
    }

    /// `log -A` without `--max-count` merges the domains' entries as they are made: the
    /// order one stable sort of every entry gives (ties to the first domain; reversed,
    /// to the last), with and without a window.
    #[test]
    fn the_merged_fleet_log_is_the_sorted_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let domains: Vec<_> = ["a", "b", "c"].map(crate::domain::d).to_vec();
        for n in 0..6 {
            for (k, d) in domains.iter().enumerate() {
                if (n + k) % 4 != 3 {
                    store
                        .domain(d)
                        .record(&cr_addons((n + k) as u32 % 5), "{}", None)
                        .unwrap();
                }
            }
        }
        let (points, _) = reference_points(&store.domain(&domains[1]));
        let since = points[2].at.clone();
        for (since, reverse) in [
            (None, false),
            (None, true),
            (Some(since.as_str()), false),
            (Some(since.as_str()), true),
        ] {
            let q = Query {
                since,
                reverse,
                ..Query::everything(jiff::Timestamp::now())
            };
            let mut merged = Vec::new();
            let log = FleetLog::load(&store, &domains, &q).unwrap();
            let n = log
                .each(|d, e| {
                    merged.push((d.to_string(), e.id.clone()));
                    Ok(())
                })
                .unwrap();
            let all = Query {
                max_count: Some(usize::MAX),
                ..q
            };
            let (sorted, _) = newest(&store, &domains, &all).unwrap();
            let sorted: Vec<_> = sorted.into_iter().map(|f| (f.domain, f.entry.id)).collect();
            assert_eq!(merged, sorted, "{since:?} {reverse}");
            assert_eq!(n, sorted.len());
            assert!(n > 4, "{n}");
        }
    }

    /// `report`'s bounded history is the whole trail's newest entries with the whole
    /// timeline, the newest inventory and the count of every step; unbounded, the whole
    /// trail itself (so the page is the one `html_report` made of every point).
    #[test]
    fn the_report_history_is_the_newest_of_the_whole_trail() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).domain(&crate::domain::d("d"));
        let empty = report_history(&store, 3).unwrap();
        assert!(empty.current.is_none() && empty.steps == 0 && empty.trail.entries.is_empty());
        for n in [0, 1, 1, 2, 3, 0, 4, 2, 2] {
            store.record(&cr_addons(n), "{}", None).unwrap();
        }
        let (points, _) = reference_points(&store);
        let whole = trail(&points);
        let all = report_history(&store, 1000).unwrap();
        assert_eq!(all.trail, whole);
        assert_eq!(all.steps, points.len());
        assert_eq!(
            all.current.as_deref(),
            Some(&*points.last().unwrap().inventory)
        );
        let newest = report_history(&store, 3).unwrap();
        assert_eq!(newest.trail.entries, whole.entries[..3]);
        assert_eq!(newest.trail.timeline, whole.timeline);
        assert_eq!(newest.trail.domain, whole.domain);
        assert_eq!(newest.steps, points.len());
    }
}
