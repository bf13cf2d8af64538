//! `clinv replay`: deliver what was queued.
//!
//! Per domain, the newest pending snapshot is applied (the inventory is a singleton: one
//! apply delivers the latest state) and the older pending ones are marked superseded by it;
//! nothing is deleted. A live object rendered later than the snapshot is never overwritten
//! (the stale guard).
//!
//! "Newest" is by the store's order (recorded time, seq, id). The domain lock is held
//! only to read and to mark, never across the network: lock, read, choose, unlock →
//! apply → lock, re-read, mark what was recorded before the delivered snapshot (a
//! snapshot queued meanwhile by a publish stays pending), unlock. A crash at any point
//! converges on the next run without a second apply (an inventory already live is
//! recognised and only marked).

use super::publish::{Verb, failure_message, state_record};
use crate::cluster::access::{self, Access};
use crate::cluster::{Delivery, Failure, Options};
use crate::delivery::{self, Delivered, Reason};
use crate::domain::Domain;
use crate::error::{ArgumentError, Result};
use crate::inventory::ClusterInventory;
use crate::project::Project;
use crate::store::queue::Queue;
use crate::store::{DomainStore, SnapshotId, SnapshotRecord, Store, lock_timeout, now_millis};
use crate::util::notice::Notice;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The least kept back from the command's `--timeout` for recording the outcomes.
const RESERVE: Duration = Duration::from_millis(100);
/// The least budget worth starting a domain with.
const MIN_BUDGET: Duration = Duration::from_millis(50);

/// Where replays go, and how.
pub struct Request<'a> {
    pub project: &'a Project,
    pub access: &'a Access,
    /// `opts.dry_run`: say what would happen, change nothing.
    pub opts: Options,
    /// `--allow-older`: deliver over a live inventory rendered later (no stale guard).
    pub allow_older: bool,
    /// `--retarget`: deliver through the domain's kubeconfig as it is now (publish's
    /// rules), not the kubeconfig and context recorded with the snapshot.
    pub retarget: bool,
}

/// The way out of a recorded target that is gone or no longer names its context.
pub const RETARGET: &str =
    "replay --retarget delivers through the domain's kubeconfig as it is now";

/// How the replay of one domain ended.
#[derive(Debug)]
pub enum Replayed {
    /// Nothing pending (or a newer-or-equal snapshot was already applied).
    Nothing,
    /// Snapshots are pending but none is intact (an object missing or damaged:
    /// `snapshots verify` names it): nothing can be sent until the store is repaired.
    Damaged { pending: usize },
    /// The cluster was not reached or refused the inventory: everything stays queued.
    NotApplied {
        reason: Reason,
        /// Pending snapshots left queued.
        queued: usize,
        /// The whole message (the warning, or with `--strict` the error).
        message: String,
    },
    /// A dry run: what the delivery of `snapshot` would do, and how many older pending
    /// snapshots it would supersede.
    DryRun {
        snapshot: SnapshotId,
        delivery: Delivery,
        older: usize,
    },
    /// `snapshot` was delivered to `server` (applied, or superseded by a newer live
    /// object) and the older pending ones were superseded by it.
    Delivered {
        snapshot: SnapshotId,
        server: String,
        delivery: Delivery,
        /// How many.
        superseded: usize,
    },
}

/// The outcome, and the messages of the way there in the order they happened.
#[derive(Debug)]
pub struct Report {
    pub outcome: Replayed,
    pub notices: Vec<Notice>,
}

/// Replays the newest pending snapshot of one domain.
///
/// # Errors
/// The store cannot be locked, read or written; the runtime cannot start. A cluster
/// that cannot be reached is a [`Replayed::NotApplied`] outcome.
pub fn replay_domain(req: &Request<'_>, store: &DomainStore) -> Result<Report> {
    replay_until(req, store, None)
}

/// [`replay_domain`] that sends nothing after `until` and bounds its requests by it.
pub fn replay_until(
    req: &Request<'_>,
    store: &DomainStore,
    until: Option<Instant>,
) -> Result<Report> {
    let mut notices = Vec::new();
    if until.is_some_and(|u| u.saturating_duration_since(Instant::now()) < MIN_BUDGET) {
        return queued_only(req, store, notices);
    }
    let plan = match plan(req, store, &mut notices)? {
        Planned::Send(plan) => plan,
        Planned::Nothing => {
            return Ok(Report {
                outcome: Replayed::Nothing,
                notices,
            });
        }
        Planned::Damaged(pending) => {
            return Ok(Report {
                outcome: Replayed::Damaged { pending },
                notices,
            });
        }
    };
    let Some(opts) = budgeted(req.opts, until) else {
        return not_tried(req, store, plan.pending, notices);
    };
    crate::cluster::ready()?;
    match send(req, &store.domain, &plan, opts, &mut notices) {
        Ok((delivery, server)) => delivered(req, store, &plan, delivery, server, notices),
        Err(f) => not_delivered(req, store, &plan, f, notices),
    }
}

/// Where the newest pending snapshot of the domain would be delivered.
///
/// Known before anything runs: the host and port a connection opens to (the proxy's,
/// else the API server's), the server's URL (two domains with one server never deliver
/// at once) and the kubeconfig files it was read from (a changed file is read again).
/// `None` when that cannot be told without trying (no kubeconfig, a bad one): a delivery
/// attempt then says why.
pub fn endpoint(req: &Request<'_>, store: &DomainStore) -> Option<Aimed> {
    let queue = store.queue(false).ok()?;
    let newest = queue.newest_pending()?;
    let record = queue.record(store, &newest.id).ok()??;
    let (access, choice) = aim(req, &store.domain, Some(&record)).ok()?;
    let resolved = access.resolve(&choice).ok()?;
    Some(Aimed {
        addr: resolved.endpoint()?,
        server: resolved.target.server,
        files: choice.paths,
    })
}

/// Where a domain's delivery goes: see [`endpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aimed {
    pub addr: (String, u16),
    pub server: String,
    pub files: Vec<PathBuf>,
}

/// Out of budget: only say what stays queued (a read, no lock, nothing sent).
fn queued_only(req: &Request<'_>, store: &DomainStore, notices: Vec<Notice>) -> Result<Report> {
    let (queued, _) = store.queue(false)?.pending_count();
    if queued == 0 {
        return Ok(Report {
            outcome: Replayed::Nothing,
            notices,
        });
    }
    not_tried(req, store, queued, notices)
}

/// What a replay of one domain sends, read under the domain's lock.
struct Plan {
    /// The newest pending snapshot whose objects are intact, and its inventory.
    newest: SnapshotRecord,
    /// Why it is still pending, as recorded.
    reason: Option<Reason>,
    cr: ClusterInventory,
    /// How many snapshots are pending (the newest included).
    pending: usize,
    /// The queue the plan was read from, when it is of the newest segments (small): the
    /// marks use it again if nothing was written since.
    queue: Option<Queue>,
}

/// What [`plan`] found.
enum Planned {
    Send(Box<Plan>),
    /// Nothing pending, or a newer-or-equal snapshot already applied.
    Nothing,
    /// This many pending, none intact.
    Damaged(usize),
}

/// The plan; nothing when nothing is pending or a newer-or-equal snapshot is already
/// applied (the older pending ones are then superseded by it). Read from the domain's
/// queue ([`crate::store::queue`]), never the whole journal.
fn plan(req: &Request<'_>, store: &DomainStore, notices: &mut Vec<Notice>) -> Result<Planned> {
    let _lock = store.lock("replay", lock_timeout()?)?;
    let queue = store.queue(true)?;
    for damage in queue.damage() {
        notices.push(Notice::warn(format!("snapshot store: {damage} — skipped")));
    }
    let (pending, _) = queue.pending_count();
    let Some((newest, index, cr)) = newest_intact(store, &queue, notices)? else {
        return Ok(match pending {
            0 => Planned::Nothing,
            n => Planned::Damaged(n),
        });
    };
    if let Some(applied) = queue.applied_from(index) {
        supersede_by(req, store, &queue, &applied.id, notices)?;
        return Ok(Planned::Nothing);
    }
    let reason = queue.row_reason(index);
    Ok(Planned::Send(Box::new(Plan {
        newest,
        reason,
        cr,
        pending,
        queue: queue.is_window().then_some(queue),
    })))
}

/// The newest pending snapshot whose objects are intact, with its place in the order;
/// damaged ones are reported and left pending (never dropped).
fn newest_intact(
    store: &DomainStore,
    queue: &Queue,
    notices: &mut Vec<Notice>,
) -> Result<Option<(SnapshotRecord, usize, ClusterInventory)>> {
    for owed in queue.pending_newest_first() {
        let Some(record) = queue.record(store, &owed.id)? else {
            continue;
        };
        match store.inventory(&record) {
            Ok(cr) => return Ok(Some((record, owed.index, cr))),
            Err(e) => notices.push(Notice::warn(format!(
                "snapshot {}: {} — skipped",
                owed.id,
                crate::error::chain(&e)
            ))),
        }
    }
    Ok(None)
}

/// A newer-or-equal snapshot is already applied: the pending ones before it are
/// superseded by it (nothing is sent).
fn supersede_by(
    req: &Request<'_>,
    store: &DomainStore,
    queue: &Queue,
    applied: &SnapshotId,
    notices: &mut Vec<Notice>,
) -> Result<()> {
    let older = queue.superseding(applied, crate::store::supersede_lines());
    notices.push(Notice::info(format!(
        "{}: snapshot {} is already applied; {} older pending snapshot(s) superseded by it",
        store.domain, applied, older.count
    )));
    if req.opts.dry_run {
        return Ok(());
    }
    let at = now_millis();
    let changes: Vec<_> = older
        .few()
        .into_iter()
        .map(|id| {
            let mark = delivery::Mark::Superseded {
                id: id.clone(),
                by: Some(applied.clone()),
                why: None,
            };
            state_record(&mark, &at, None)
        })
        .collect();
    store.append_states_then(&changes, older.record(applied, &at))
}

/// What is left of the command's budget, measured now (reading the store took some);
/// `None` when too little is left to try.
fn budgeted(mut opts: Options, until: Option<Instant>) -> Option<Options> {
    if let Some(until) = until {
        let left = until.saturating_duration_since(Instant::now());
        if left < MIN_BUDGET {
            return None;
        }
        opts.deadline = opts.deadline.min(left);
        opts.probe = opts.probe.min(left);
        // Connecting takes time too (kubeconfig, TLS set-up): the end is absolute.
        opts.until = Some(until);
    }
    Some(opts)
}

/// Connects to the domain's cluster and delivers the plan's inventory; the delivery and
/// the server it reached.
fn send(
    req: &Request<'_>,
    domain: &Domain,
    plan: &Plan,
    opts: Options,
    notices: &mut Vec<Notice>,
) -> std::result::Result<(Delivery, String), Failure> {
    let (access, choice) = aim(req, domain, Some(&plan.newest))?;
    notices.push(Notice::debug(format!(
        "kubeconfig from {}: {:?}",
        choice.origin, choice.paths
    )));
    let cluster = access.connect(&choice, opts)?;
    let server = cluster.target.server.clone();
    if let Some(queued_for) = plan.newest.target.as_ref().filter(|t| t.server != server) {
        notices.push(Notice::warn(format!(
            "{domain}: snapshot {} was published for {}; delivering it to {server}",
            plan.newest.id, queued_for.server
        )));
    }
    let result = if req.allow_older {
        cluster.replay_allowing_older(&plan.cr)
    } else {
        cluster.replay(&plan.cr)
    };
    notices.extend(cluster.trace().into_iter().map(Notice::debug));
    result.map(|d| (d, server.clone())).map_err(|f| Failure {
        detail: format!("{} ({server})", f.detail),
        ..f
    })
}

/// Where a replay goes: an explicit `--kubeconfig` or `--retarget` takes publish's rules;
/// else the kubeconfig (and context) the snapshot was queued with, while its files exist.
/// A recorded kubeconfig that is gone, or no longer names the recorded context (it was
/// regenerated), is said so — never silently swapped for the environment's, which may
/// reach another cluster — and the message names `--retarget`.
fn aim(
    req: &Request<'_>,
    domain: &Domain,
    newest: Option<&SnapshotRecord>,
) -> std::result::Result<(Access, access::Choice), Failure> {
    let recorded = newest
        .and_then(|s| Some((s.target.as_ref()?, &s.id)))
        .filter(|(t, _)| !t.kubeconfig.is_empty());
    let Some((target, id)) = recorded.filter(|_| req.access.kubeconfig.is_none() && !req.retarget)
    else {
        let cluster_name = access::cluster_name(req.project, domain).map_err(|e| {
            let detail = format!(
                "which kubeconfig is unknown: {}",
                crate::error::headline(&e)
            );
            Failure::new(Reason::NoKubeconfig, crate::cluster::Step::Connect, detail)
        })?;
        let choice = req
            .access
            .choose(Some(req.project), cluster_name.as_deref())?;
        return Ok((req.access.clone(), choice));
    };
    let paths: Vec<PathBuf> = target.kubeconfig.iter().map(PathBuf::from).collect();
    let present: Vec<PathBuf> = paths.iter().filter(|p| p.is_file()).cloned().collect();
    if present.is_empty() {
        return Err(Failure::new(
            Reason::NoKubeconfig,
            crate::cluster::Step::Connect,
            format!(
                "the kubeconfig this snapshot was published with is gone ({}); {RETARGET}, --kubeconfig through another",
                target.kubeconfig.join(", ")
            ),
        ));
    }
    let access = match (&req.access.context, &target.context) {
        (None, Some(recorded)) => Access {
            context: Some(recorded.clone()),
            context_from: access::ContextFrom::Snapshot {
                id: id.to_string(),
                hint: RETARGET,
            },
            ..req.access.clone()
        },
        _ => req.access.clone(),
    };
    let choice = access::Choice {
        paths: present,
        origin: "the snapshot's recorded target",
    };
    Ok((access, choice))
}

/// The cluster did not take the inventory: a usage mistake is an error; otherwise the
/// snapshot stays queued with the reason (or, when no replay can deliver it, leaves the
/// queue: a GitOps controller owns the live object, `clinv commit` is the channel).
fn not_delivered(
    req: &Request<'_>,
    store: &DomainStore,
    plan: &Plan,
    f: Failure,
    notices: Vec<Notice>,
) -> Result<Report> {
    let domain = &store.domain;
    let newest = &plan.newest;
    if f.usage {
        return Err(ArgumentError::Kubeconfig {
            scope: domain.to_string(),
            detail: f.detail,
        }
        .into());
    }
    let (queued, message) = if delivery::stays_pending(f.reason) {
        if !req.opts.dry_run && plan.reason != Some(f.reason) {
            record_failure(store, newest, &f)?;
        }
        let message = format!(
            "{} — {} snapshot(s) stay pending",
            failure_message(Verb::Replay, domain, &f),
            plan.pending
        );
        (plan.pending, message)
    } else {
        if !req.opts.dry_run {
            let mark = delivery::after_failure(&newest.id, f.reason, &f.detail);
            store.set_states(&[state_record(&mark, &now_millis(), None)])?;
        }
        let message = format!(
            "{} — snapshot {} taken off the queue",
            failure_message(Verb::Replay, domain, &f),
            newest.id
        );
        (plan.pending - 1, message)
    };
    let outcome = Replayed::NotApplied {
        reason: f.reason,
        queued,
        message,
    };
    Ok(Report { outcome, notices })
}

/// The cluster took the inventory (or holds a newer one): records the delivery and
/// supersedes the older pending snapshots — unless a clock disagrees.
fn delivered(
    req: &Request<'_>,
    store: &DomainStore,
    plan: &Plan,
    delivery: Delivery,
    server: String,
    notices: Vec<Notice>,
) -> Result<Report> {
    let snapshot = plan.newest.id.clone();
    // The live object looks newer, but the store recorded this snapshot after it was
    // rendered (or after the snapshot that rendered it): a clock disagrees. Never
    // superseded silently: it stays queued with the reason, and the user is told.
    if let Delivery::Stale { live_rendered_at } = &delivery
        && let Some(message) = skew(store, &plan.newest, live_rendered_at)?
    {
        if !req.opts.dry_run {
            let mark = delivery::after_failure(&snapshot, Reason::ClockSkew, &message);
            store.set_states(&[state_record(&mark, &now_millis(), None)])?;
        }
        let outcome = Replayed::NotApplied {
            reason: Reason::ClockSkew,
            queued: plan.pending,
            message,
        };
        return Ok(Report { outcome, notices });
    }
    if req.opts.dry_run {
        let outcome = Replayed::DryRun {
            snapshot,
            delivery,
            older: plan.pending - 1,
        };
        return Ok(Report { outcome, notices });
    }
    let superseded = mark_delivered(store, plan, &delivery)?;
    let outcome = Replayed::Delivered {
        snapshot,
        server,
        delivery,
        superseded,
    };
    Ok(Report { outcome, notices })
}

/// Re-locks and re-reads: marks only the pending snapshots ordered before the delivered
/// one as they stand now (a publish may have queued a newer one meanwhile).
fn mark_delivered(store: &DomainStore, plan: &Plan, delivery: &Delivery) -> Result<usize> {
    let newest = &plan.newest;
    let snapshot = &newest.id;
    let delivered = match delivery {
        Delivery::Applied(_) => Delivered::Applied,
        Delivery::Stale { live_rendered_at } => Delivered::Stale { live_rendered_at },
    };
    let _lock = store.lock("replay", lock_timeout()?)?;
    // The plan's queue while nothing was written since (else read again).
    let few = crate::store::supersede_lines();
    let older = match plan.queue.as_ref().filter(|q| q.stands(store)) {
        Some(queue) => queue.superseding(snapshot, few),
        None => store.queue(true)?.superseding(snapshot, few),
    };
    let at = now_millis();
    let changes: Vec<_> = delivery::after_delivery(snapshot, delivered, &older.few())
        .iter()
        .map(|m| state_record(m, &at, newest.target.clone()))
        .collect();
    store.append_states_then(&changes, older.record(snapshot, &at))?;
    Ok(older.count)
}

/// Records why the newest pending snapshot is still queued (only when the reason
/// changed, so a cluster down for a week does not grow the journal with every replay).
fn record_failure(store: &DomainStore, newest: &SnapshotRecord, f: &Failure) -> Result<()> {
    let _lock = store.lock("replay", lock_timeout()?)?;
    if store.queue(true)?.is_pending(&newest.id) {
        let mark = delivery::after_failure(&newest.id, f.reason, &f.detail);
        let record = state_record(&mark, &now_millis(), newest.target.clone());
        store.append_states(&[record])?;
    }
    Ok(())
}

/// The replay of one domain of [`replay_all`].
#[derive(Debug)]
pub struct DomainReport {
    pub domain: Domain,
    pub report: Result<Report>,
}

/// Replays `domains` within one budget, in parallel where their clusters differ.
///
/// Replays `domains` within one budget (`req.opts.deadline` for the whole command):
/// each domain's cluster is chosen by the rules of `publish --domain D` (so an explicit
/// `--kubeconfig`/`--context` is refused for more than one domain); domains that reach
/// different kubeconfigs run in parallel ([`crate::fleet::PARALLEL`] at most), those sharing one run
/// in order, so two domains never race for one singleton. A domain not started before
/// the budget ran out stays queued with the reason `unreachable`. The reports come back
/// in the order of `domains`.
///
/// # Errors
/// None of its own (the caller refuses an explicit kubeconfig or context for several
/// domains); a domain's own failure (its store) is in its report.
pub fn replay_all(
    req: &Request<'_>,
    store: &Store,
    domains: &[Domain],
) -> Result<Vec<DomainReport>> {
    // Kept back for recording the outcomes and ending: a tenth of the budget, 100 ms
    // to 2 s.
    let reserve = (req.opts.deadline / 10).clamp(RESERVE, Duration::from_secs(2));
    let until = Instant::now() + req.opts.deadline.saturating_sub(reserve);
    let groups = by_kubeconfig(req, store, domains);
    let done = crate::util::pool::ordered(&groups, crate::fleet::PARALLEL, |group| {
        group
            .iter()
            .map(|&i| {
                let domain = domains[i].clone();
                let report = replay_until(req, &store.domain(&domain), Some(until));
                (i, DomainReport { domain, report })
            })
            .collect::<Vec<_>>()
    });
    let mut done: Vec<_> = done.into_iter().flatten().collect();
    done.sort_by_key(|(i, _)| *i);
    Ok(done.into_iter().map(|(_, r)| r).collect())
}

/// The Git and registry channels' owed pushes of `domains`, each delivered once, and the
/// outbox files that cannot be used.
#[cfg(feature = "gitops")]
#[derive(Debug, Default)]
pub struct OwedReport {
    pub deliveries: Vec<(super::owed::Owed, super::owed::Delivery)>,
    pub damaged: Vec<super::owed::Damage>,
}

/// After the cluster channel: delivers each owed push of `domains` once, in order, each
/// within `timeout` ([`super::owed::deliver`]).
#[cfg(feature = "gitops")]
pub fn deliver_owed(store: &Store, domains: &[Domain], timeout: Duration) -> OwedReport {
    let listing = super::owed::owed(store, Some(domains));
    let deliveries = listing
        .owed
        .into_iter()
        .map(|e| {
            let delivery = super::owed::deliver(store, &e.owed, timeout);
            (e.owed, delivery)
        })
        .collect();
    OwedReport {
        deliveries,
        damaged: listing.damaged,
    }
}

/// The store's domains a fleet selection names (`-A`: every one; `--domain` repeated or
/// a glob: those that match, in name order).
///
/// # Errors
/// A pattern that names no domain of the store.
pub fn domains(store: &Store, many: crate::project::select::Many<'_>) -> Result<Vec<Domain>> {
    if many.all {
        return Ok(store.domains());
    }
    crate::project::select::resolve(&store.domains(), many, |_| crate::error::UnknownIn::Store {
        store: store.root().to_path_buf(),
        project: true,
    })
}

/// The owed pushes after the cluster channel: listed for a dry run, else each
/// delivered once ([`deliver_owed`]).
#[cfg(feature = "gitops")]
pub enum Owed {
    Would(super::owed::Listing),
    Delivered(OwedReport),
}

/// The owed pushes of `domains`: what a dry run would deliver (nothing is pushed), else
/// each delivered once within `timeout`.
#[cfg(feature = "gitops")]
pub fn owed(store: &Store, domains: &[Domain], dry_run: bool, timeout: Duration) -> Owed {
    if dry_run {
        Owed::Would(super::owed::owed(store, Some(domains)))
    } else {
        Owed::Delivered(deliver_owed(store, domains, timeout))
    }
}

/// How a replay ends, every domain reported.
///
/// A domain whose store failed ends it with its error; a refused owed push or a domain
/// whose pending snapshots are all damaged needs someone to act (exit 1, or a worse
/// `--strict` code); else the reasons `--strict` collected (the worst reason's code).
///
/// # Errors
/// The first domain's store error.
pub fn outcome(
    reports: Vec<DomainReport>,
    unapplied: Vec<Reason>,
    refused: bool,
) -> Result<crate::error::Outcome> {
    use crate::error::{Outcome, exit};
    // A damaged store is not a delivery that can wait: someone must repair it.
    let damaged = reports.iter().any(|r| {
        r.report
            .as_ref()
            .is_ok_and(|r| matches!(r.outcome, Replayed::Damaged { .. }))
    });
    match reports.into_iter().find_map(|r| r.report.err()) {
        Some(e) => Err(e),
        None if refused || damaged => Ok(Outcome::Worst(
            unapplied
                .iter()
                .map(|r| exit::for_reason(*r))
                .chain([exit::FAILURE])
                .collect(),
        )),
        None => Ok(Outcome::Unapplied(unapplied)),
    }
}

/// Indexes of `domains` grouped by the kubeconfig each will use (see [`aim`]: the one its
/// newest pending snapshot was queued with, else publish's rules), in first-seen order.
/// A domain without a usable kubeconfig is a group of its own (it fails on its own).
fn by_kubeconfig(req: &Request<'_>, store: &Store, domains: &[Domain]) -> Vec<Vec<usize>> {
    let mut keys: Vec<Option<Vec<PathBuf>>> = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, d) in domains.iter().enumerate() {
        let ds = store.domain(d);
        let newest = ds.queue(false).ok().and_then(|q| {
            let newest = q.newest_pending()?;
            q.record(&ds, &newest.id).ok().flatten()
        });
        let key = aim(req, d, newest.as_ref()).ok().map(|(_, c)| {
            c.paths
                .iter()
                .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
                .collect::<Vec<_>>()
        });
        match key
            .as_ref()
            .and_then(|k| keys.iter().position(|o| o.as_ref() == Some(k)))
        {
            Some(g) => groups[g].push(i),
            None => {
                keys.push(key);
                groups.push(vec![i]);
            }
        }
    }
    groups
}

/// The outcome of a domain the budget did not reach: its pending snapshots stay queued.
fn not_tried(
    req: &Request<'_>,
    store: &DomainStore,
    queued: usize,
    notices: Vec<Notice>,
) -> Result<Report> {
    let f = Failure::new(
        Reason::Unreachable,
        crate::cluster::Step::Connect,
        format!(
            "not tried: the command's --timeout ({}s) ran out",
            req.opts.deadline.as_secs_f64()
        ),
    );
    let outcome = Replayed::NotApplied {
        reason: f.reason,
        queued,
        message: format!(
            "{} — {queued} snapshot(s) stay pending",
            failure_message(Verb::Replay, &store.domain, &f)
        ),
    };
    Ok(Report { outcome, notices })
}

/// The clock-skew warning, when the live inventory (rendered at `live`)
/// looks newer than `snap` but the store recorded `snap` later: after the snapshot that
/// carries that render time when the store has it, else after that time itself. Read
/// from the queue only here (a live object rendered later is rare).
fn skew(store: &DomainStore, snap: &SnapshotRecord, live: &str) -> Result<Option<String>> {
    let queue = store.whole_queue(false)?;
    let known = match queue.position(&snap.id) {
        Some(index) => queue.rendered_at(live, index),
        None => Vec::new(),
    };
    Ok(crate::delivery::skewed(&snap.at, live, &known).then(|| {
        format!(
            "{}: clock skew: the live inventory looks newer (renderedAt {live}) but the store recorded snapshot {} later (recorded {}, renderedAt {}); not applied, it stays pending — clinv replay --allow-older delivers it",
            store.domain, snap.id, snap.at, snap.rendered_at
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused owed push is exit 1, or a worse `--strict` reason's code; without one,
    /// the reasons collected decide; a domain's store error ends it.
    #[test]
    fn a_replay_ends_by_store_errors_refusals_and_reasons() {
        use crate::error::{Outcome, exit};
        let code = |o: Result<Outcome>| o.unwrap().exit_code();
        assert_eq!(code(outcome(Vec::new(), Vec::new(), true)), exit::FAILURE);
        let skew = vec![Reason::ClockSkew];
        assert_eq!(code(outcome(Vec::new(), skew.clone(), true)), exit::OLDER);
        assert_eq!(code(outcome(Vec::new(), skew, false)), exit::OLDER);
        assert_eq!(code(outcome(Vec::new(), Vec::new(), false)), exit::OK);
        let failed = DomainReport {
            domain: Domain::new("a").unwrap(),
            report: Err(crate::Error::Strict(1)),
        };
        assert!(outcome(vec![failed], Vec::new(), true).is_err());
    }
}
