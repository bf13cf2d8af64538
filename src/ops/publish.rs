//! `clinv publish`: render, record a snapshot, then server-side apply the CRD and the CR
//! when the cluster is reachable.
//!
//! Anything that keeps the inventory from the cluster is an outcome, not an error (lok8s's
//! fail-soft rule): the snapshot stays pending for `clinv replay`, and the caller decides
//! whether `--strict` makes it fatal.

pub mod several;

use crate::cluster::access::Access;
use crate::cluster::{Applied, Failure, Options, Resolved, Step};
use crate::delivery::{self, Delivered, Mark, Reason, Target};
use crate::domain::Domain;
use crate::error::{ArgumentError, Error, Result, chain};
use crate::inventory::{self, Built, Loaded, Warning, crd, render};
use crate::project::Project;
use crate::store::{
    DomainStore, SnapshotId, SnapshotRecord, State, StateRecord, TargetRecord, now_millis,
};
use crate::util::notice::Notice;

/// What to publish, and how.
pub struct Request<'a> {
    pub project: &'a Project,
    pub domain: &'a Domain,
    /// `SOURCE_DATE_EPOCH`: a fixed `renderedAt` for reproducible output.
    pub source_date_epoch: Option<&'a str>,
    pub store: &'a DomainStore,
    pub access: &'a Access,
    pub opts: Options,
    /// `--strict`: build warnings stop the publish.
    pub strict: bool,
    /// `Some(secs)`: the command's `--timeout` of `secs` ran out before this domain's turn
    /// (`publish -A`): the inventory is recorded, queued, and the cluster not tried.
    pub not_tried: Option<f64>,
}

/// How a publish ended.
#[derive(Debug)]
pub enum Published {
    /// A deploy domain: it has no inventory of its own.
    DeployDomain { cluster_ref: Option<String> },
    /// Applied (or, with `opts.dry_run`, what the server would store).
    Applied {
        server: String,
        applied: Applied,
        /// The snapshot marked applied (none in a dry run or when recording failed).
        snapshot: Option<SnapshotId>,
        /// How many older pending snapshots were marked superseded by it.
        superseded: usize,
    },
    /// The inventory did not reach the cluster.
    NotApplied(NotApplied),
}

/// Why the store could not record the inventory (kept for the final verdict).
#[derive(Debug)]
pub struct NotRecorded(pub Error);

/// Why an inventory did not reach the cluster, and what was kept for later.
#[derive(Debug, Clone)]
pub struct NotApplied {
    pub reason: Reason,
    /// The snapshot left pending for `clinv replay`, if one was recorded.
    pub pending: Option<SnapshotId>,
    /// The whole message (the warning, or with `--strict` the error).
    pub message: String,
}

/// The outcome, and the messages of the way there in the order they happened.
#[derive(Debug)]
pub struct Report {
    pub outcome: Published,
    pub notices: Vec<Notice>,
    /// The store could not record the inventory (not in a dry run): with
    /// [`Published::NotApplied`] the inventory is lost, an error with exit code 11.
    pub not_recorded: Option<NotRecorded>,
}

/// The delivery verbs, for messages that name what failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Publish,
    Replay,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Publish => "publish",
            Verb::Replay => "replay",
        }
    }
}

/// Builds, records and applies the inventory of `req.domain`.
///
/// # Errors
/// [`Error::Runtime`], and [`ArgumentError::Kubeconfig`] for a `--kubeconfig` or `--context` that
/// names nothing: every other failure is a [`Published::NotApplied`] outcome.
pub fn publish(req: &Request<'_>) -> Result<Report> {
    let mut notices = Vec::new();
    let built = match build(req, &mut notices) {
        Ok(Loaded::Cluster(built)) => *built,
        Ok(Loaded::Deploy { cluster_ref, .. }) => {
            let outcome = Published::DeployDomain { cluster_ref };
            return Ok(report(outcome, notices, None));
        }
        Err(err) => {
            notices.push(Notice::error(chain(&err)));
            let message = format!(
                "inventory: failed to build the ClusterInventory for {} — skipping publish",
                req.domain
            );
            let outcome = Published::NotApplied(NotApplied {
                reason: Reason::RenderFailed,
                pending: None,
                message,
            });
            return Ok(report(outcome, notices, None));
        }
    };
    crate::cluster::ready()?;
    let resolved = match req.not_tried {
        Some(secs) => Err(Failure::new(
            Reason::Unreachable,
            Step::Connect,
            format!("not tried: the command's --timeout ({secs}s) ran out"),
        )),
        None => resolve(req, &built, &mut notices)?,
    };
    let target = resolved.as_ref().ok().map(|r| r.target.clone());
    // Recorded before anything runs or is sent (an exec credential plugin included), so
    // a publish killed meanwhile leaves the snapshot pending. The lock is taken for the
    // record only (never across the apply below).
    let (snapshot, mut not_recorded) = if req.opts.dry_run {
        (None, None)
    } else {
        match record(req.store, &built, target.as_ref(), &mut notices) {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(NotRecorded(e))),
        }
    };
    let result = resolved
        .and_then(|r| r.connect(req.opts))
        .and_then(|cluster| apply(&cluster, &built, &mut notices));
    let target_record = target.as_ref().map(TargetRecord::from);
    let outcome = match result {
        Ok(applied) => {
            let superseded = match &snapshot {
                Some(snap) => match mark_applied(req.store, snap, target_record, &mut notices) {
                    Ok(superseded) => superseded,
                    // The store still says pending: like an unrecorded apply, a
                    // warning, and with --strict exit 11.
                    Err(e) => {
                        not_recorded = Some(NotRecorded(e));
                        0
                    }
                },
                None => 0,
            };
            Published::Applied {
                server: target.map(|t| t.server).unwrap_or_default(),
                applied,
                snapshot: snapshot.map(|s| s.id.clone()),
                superseded,
            }
        }
        Err(f) => {
            let snap = snapshot.as_ref();
            Published::NotApplied(not_applied(req, &f, snap, target_record, &mut notices))
        }
    };
    Ok(report(outcome, notices, not_recorded))
}

fn report(outcome: Published, notices: Vec<Notice>, not_recorded: Option<NotRecorded>) -> Report {
    Report {
        outcome,
        notices,
        not_recorded,
    }
}

/// Chooses the kubeconfig and its context: the target, resolved without running or
/// sending anything, so the snapshot records where it was going. A mistake in what was
/// asked for (a --kubeconfig or --context that names nothing) is refused like kubectl
/// refuses it: nothing recorded, nothing queued.
fn resolve(
    req: &Request<'_>,
    built: &Built,
    notices: &mut Vec<Notice>,
) -> Result<std::result::Result<Resolved, Failure>> {
    let resolved = req
        .access
        .choose(Some(req.project), built.cluster_name.as_deref())
        .and_then(|choice| {
            notices.push(Notice::debug(format!(
                "kubeconfig from {}: {:?}",
                choice.origin, choice.paths
            )));
            req.access.resolve(&choice)
        });
    if let Err(f) = &resolved
        && f.usage
    {
        return Err(ArgumentError::Kubeconfig {
            scope: "inventory".into(),
            detail: f.detail.clone(),
        }
        .into());
    }
    Ok(resolved)
}

/// Applies the inventory; a failure names the server.
fn apply(
    cluster: &crate::cluster::Cluster,
    built: &Built,
    notices: &mut Vec<Notice>,
) -> std::result::Result<Applied, Failure> {
    let result = cluster.publish(&built.inventory);
    notices.extend(cluster.trace().into_iter().map(Notice::debug));
    let server = &cluster.target.server;
    result.map_err(|f| Failure {
        detail: format!("{} ({server})", f.detail),
        ..f
    })
}

/// Builds and validates; with `strict`, build warnings are an error.
fn build(req: &Request<'_>, notices: &mut Vec<Notice>) -> Result<Loaded> {
    build_checked(
        req.project,
        req.domain,
        req.source_date_epoch,
        req.strict,
        notices,
    )
}

/// Builds the inventory of `domain` at `SOURCE_DATE_EPOCH` (else now) and validates it;
/// warnings become notices, and with `strict` an error (`publish`, `commit`).
///
/// # Errors
/// The project does not build, the inventory is invalid, `strict` with warnings.
pub fn build_checked(
    project: &Project,
    domain: &Domain,
    source_date_epoch: Option<&str>,
    strict: bool,
    notices: &mut Vec<Notice>,
) -> Result<Loaded> {
    if let Some(w) = inventory::source_date_epoch_warning(source_date_epoch) {
        if strict {
            return Err(Error::InvalidEnv {
                name: "SOURCE_DATE_EPOCH",
                message: w,
            });
        }
        notices.push(Notice::warn(w));
    }
    let at = inventory::rendered_at(source_date_epoch, jiff::Timestamp::now())?;
    let loaded = inventory::load(project, domain, at)?;
    if let Loaded::Cluster(built) = &loaded {
        notices.extend(warning_notices(&built.warnings, strict));
        if strict && !built.warnings.is_empty() {
            return Err(Error::Strict(built.warnings.len()));
        }
        render::validate(&built.inventory)?;
    }
    Ok(loaded)
}

/// Build warnings as notices: errors under `--strict`, each with its reason for `-v`.
fn warning_notices(warnings: &[Warning], strict: bool) -> Vec<Notice> {
    let mut notices = Vec::new();
    for w in warnings {
        notices.push(if strict {
            Notice::error(&w.message)
        } else {
            Notice::warn(&w.message)
        });
        if let Some(detail) = &w.detail {
            notices.push(Notice::debug(format!("  reason: {detail}")));
        }
    }
    notices
}

/// Records the snapshot; a store failure is a warning, never a reason not to publish
/// (the caller turns "neither applied nor recorded" into exit code 11).
fn record(
    store: &DomainStore,
    built: &Built,
    target: Option<&Target>,
    notices: &mut Vec<Notice>,
) -> Result<SnapshotRecord> {
    let crd_json = crd::definition_json()?;
    match store.record_or_fold(&built.inventory, &crd_json, target) {
        Ok((snap, folded)) => {
            notices.push(if folded {
                Notice::debug(format!(
                    "snapshot {} holds this inventory already (renderedAt aside): publish recorded on it",
                    snap.id
                ))
            } else {
                Notice::debug(format!(
                    "recorded snapshot {} in {}",
                    snap.id,
                    store.dir().display()
                ))
            });
            Ok(snap)
        }
        Err(e) => {
            notices.push(Notice::warn(format!(
                "inventory: could not record a snapshot: {}",
                chain(&e)
            )));
            Err(e)
        }
    }
}

/// Marks the snapshot applied and older pending ones superseded by it (one line each
/// when they are few, one `supersede` record when many); returns how many.
fn mark_applied(
    store: &DomainStore,
    snap: &SnapshotRecord,
    target: Option<TargetRecord>,
    notices: &mut Vec<Notice>,
) -> Result<usize> {
    // Lock, re-read, mark: only what was recorded before this snapshot (in the order)
    // is superseded; a snapshot queued meanwhile by another process stays pending.
    let lock = match crate::store::lock_timeout().and_then(|t| store.lock("publish", t)) {
        Ok(l) => l,
        Err(e) => {
            notices.push(Notice::warn(format!(
                "snapshot {}: applied, but the store could not record it: {}",
                snap.id,
                chain(&e)
            )));
            return Err(e);
        }
    };
    // The compact queue, not the whole journal: what this marks grows with what is
    // owed, not with the history.
    let older = store
        .queue(true)
        .map(|q| q.superseding(&snap.id, crate::store::supersede_lines()))
        .unwrap_or_default();
    let at = now_millis();
    let changes: Vec<StateRecord> =
        delivery::after_delivery(&snap.id, Delivered::Applied, &older.few())
            .iter()
            .map(|m| {
                // The supersession records name their successor, not a target.
                let target = match m {
                    Mark::Superseded { .. } => None,
                    _ => target.clone(),
                };
                state_record(m, &at, target)
            })
            .collect();
    let appended = store.append_states_then(&changes, older.record(&snap.id, &at));
    drop(lock);
    if let Err(e) = appended {
        notices.push(Notice::warn(format!(
            "snapshot {}: applied, but the store could not record it: {}",
            snap.id,
            chain(&e)
        )));
        return Err(e);
    }
    Ok(older.count)
}

/// Queues the snapshot (if one was recorded) with the reason, and says so.
fn not_applied(
    req: &Request<'_>,
    f: &Failure,
    snapshot: Option<&SnapshotRecord>,
    target: Option<TargetRecord>,
    notices: &mut Vec<Notice>,
) -> NotApplied {
    let (mut message, skipping) = match f.step {
        Step::Connect => (
            format!("inventory: {}", f.detail),
            " — skipping ClusterInventory publish",
        ),
        _ => (
            failure_message(Verb::Publish, req.domain, f),
            " — skipping publish",
        ),
    };
    let Some(snap) = snapshot else {
        message.push_str(skipping);
        return NotApplied {
            reason: f.reason,
            pending: None,
            message,
        };
    };
    let mark = delivery::after_failure(&snap.id, f.reason, &f.detail);
    if let Err(e) = req
        .store
        .set_states(&[state_record(&mark, &now_millis(), target)])
    {
        notices.push(Notice::debug(format!(
            "snapshot {}: could not record why it is pending: {}",
            snap.id,
            chain(&e)
        )));
    }
    if delivery::stays_pending(f.reason) {
        message.push_str(&format!(
            " — recorded as pending snapshot {} (clinv replay delivers it)",
            snap.id
        ));
    } else {
        message.push_str(&format!(
            " — snapshot {} recorded, not pending (no replay can deliver it)",
            snap.id
        ));
    }
    NotApplied {
        reason: f.reason,
        pending: delivery::stays_pending(f.reason).then(|| snap.id.clone()),
        message,
    }
}

/// The journal record of a mark. A refused snapshot is recorded as superseded, with
/// the reason it was refused.
pub(super) fn state_record(mark: &Mark, at: &str, target: Option<TargetRecord>) -> StateRecord {
    let (id, state) = match mark {
        Mark::Applied { id } => (id, State::Applied),
        Mark::Pending { id, .. } => (id, State::Pending),
        Mark::Superseded { id, .. } | Mark::Refused { id, .. } => (id, State::Superseded),
    };
    let record = StateRecord {
        target,
        ..StateRecord::new(id, at, state)
    };
    match mark {
        Mark::Applied { .. } => record,
        Mark::Pending { reason, detail, .. } | Mark::Refused { reason, detail, .. } => {
            StateRecord {
                reason: Some(*reason),
                detail: Some(detail.clone()),
                ..record
            }
        }
        Mark::Superseded { by, why, .. } => StateRecord {
            detail: why.clone(),
            by: by.clone(),
            ..record
        },
    }
}

/// "inventory: could not publish the ClusterInventory for DOMAIN: what went wrong: detail".
pub fn failure_message(verb: Verb, domain: &str, f: &Failure) -> String {
    let what = match (f.reason, f.step) {
        (Reason::Conflict, Step::Crd) => {
            "the ClusterInventory CRD conflicts with one owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Conflict, _) if f.modified_meanwhile() => {
            "the live ClusterInventory changed while it was being written (another writer, not a field manager: the next attempt reads it again)"
        }
        (Reason::Conflict, _) => {
            "a field is owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Unreachable, _) => "cluster unreachable",
        (Reason::Unauthorized, _) => "the cluster rejected the credentials",
        (Reason::Forbidden, _) => "forbidden: the identity lacks RBAC for the ClusterInventory",
        (Reason::BadKubeconfig, _) => "the kubeconfig is not usable",
        (Reason::ServerError, _) => "the API server failed",
        (Reason::GitopsManaged, _) => {
            "it is managed by GitOps, and clinv commit (to the repository it syncs) is the channel: an apply would fight the controller (--force-conflicts takes it over)"
        }
        (Reason::TlsIdentity, _) => {
            "the server's certificate does not verify (not the server the kubeconfig trusts)"
        }
        (Reason::DomainMismatch, _) => {
            "the kubeconfig reaches another domain's cluster (pass the domain's own kubeconfig; --take-over if the cluster is now this domain's)"
        }
        (Reason::NoKubeconfig, _) => "no server was contacted",
        (Reason::RenderFailed, _) => "the inventory could not be rendered",
        (Reason::ClockSkew, _) => {
            "the live inventory looks newer, but a clock disagrees (--allow-older delivers it)"
        }
        (Reason::Rejected, _) => "the API server rejected it",
    };
    format!(
        "inventory: could not {} the ClusterInventory for {domain}: {what}: {}",
        verb.as_str(),
        f.detail
    )
}

/// What a server dry run would change: a unified diff of the live and the rendered spec.
///
/// # Errors
/// A spec that cannot be written as YAML.
pub fn dry_run_diff(a: &Applied) -> Result<String> {
    let old = a
        .before
        .as_ref()
        .and_then(|b| b.get("spec"))
        .map(render::to_yaml)
        .transpose()?;
    let new = a.after.get("spec").map(render::to_yaml).transpose()?;
    let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
    let diff = similar::TextDiff::from_lines(&old, &new);
    let mut text = format!("clusterinventory/cluster {} (dry run)\n", a.cr);
    text.push_str(
        &diff
            .unified_diff()
            .context_radius(2)
            .header("live spec", "rendered spec")
            .to_string(),
    );
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_messages_name_the_verb() {
        let f = Failure::new(Reason::Unreachable, Step::Probe, "no answer within 3.0s");
        assert_eq!(
            failure_message(Verb::Replay, "lab", &f),
            "inventory: could not replay the ClusterInventory for lab: cluster unreachable: no answer within 3.0s"
        );
        let f = Failure::new(Reason::Conflict, Step::Crd, "409");
        assert!(failure_message(Verb::Publish, "lab", &f).starts_with(
            "inventory: could not publish the ClusterInventory for lab: the ClusterInventory CRD conflicts"
        ));
    }

    /// Issue 48: a 409 on the `resourceVersion` precondition is another writer, said as
    /// such, never as a field conflict that `--force-conflicts` would settle.
    #[test]
    fn a_precondition_409_is_said_as_another_writer() {
        let f = Failure {
            code: Some(409),
            ..Failure::new(
                Reason::Conflict,
                Step::Cr,
                "409 Operation cannot be fulfilled on clusterinventories.lok8s.dev \"cluster\": the object has been modified; please apply your changes to the latest version and try again",
            )
        };
        let said = failure_message(Verb::Replay, "lab", &f);
        assert!(
            said.contains("changed while it was being written"),
            "{said}"
        );
        assert!(!said.contains("--force-conflicts"), "{said}");
        let field = Failure {
            code: Some(409),
            ..Failure::new(
                Reason::Conflict,
                Step::Cr,
                "409 Apply failed with 1 conflict",
            )
        };
        let said = failure_message(Verb::Replay, "lab", &field);
        assert!(said.contains("--force-conflicts"), "{said}");
    }

    /// Found by a new user: a missing kubeconfig read "the API server rejected it" though
    /// no server was contacted. Only the reasons a server gives may name one.
    #[test]
    fn only_a_server_answer_is_blamed_on_the_server() {
        for reason in Reason::ALL {
            let f = Failure::new(reason, Step::Connect, "d");
            let message = failure_message(Verb::Replay, "lab", &f);
            let blames = message.contains("API server") || message.contains("cluster rejected");
            let answered = matches!(
                reason,
                Reason::Rejected | Reason::ServerError | Reason::Unauthorized
            );
            assert_eq!(blames, answered, "{message}");
        }
        let f = Failure::new(
            Reason::NoKubeconfig,
            Step::Connect,
            "kubeconfig not found (k)",
        );
        assert_eq!(
            failure_message(Verb::Replay, "lab", &f),
            "inventory: could not replay the ClusterInventory for lab: no server was contacted: kubeconfig not found (k)"
        );
    }

    #[test]
    fn marks_become_journal_records() {
        let target = Some(TargetRecord {
            server: "https://k".into(),
            context: None,
            kubeconfig: vec!["/k".into()],
        });
        let pending = delivery::after_failure(&"a".into(), Reason::Forbidden, "403");
        let r = state_record(&pending, "t", target.clone());
        assert_eq!(
            (r.state, r.reason, r.detail.as_deref()),
            (State::Pending, Some(Reason::Forbidden), Some("403"))
        );
        assert_eq!(r.target, target);
        let marks = delivery::after_delivery(&"b".into(), Delivered::Applied, &[&"a".into()]);
        let r = state_record(&marks[1], "t", None);
        assert_eq!(
            (
                r.id.as_str(),
                r.state,
                r.by.as_ref().map(SnapshotId::as_str)
            ),
            ("a", State::Superseded, Some("b"))
        );
    }

    #[test]
    fn strict_turns_warnings_into_errors() {
        let w = Warning {
            message: "m".into(),
            detail: Some("d".into()),
        };
        assert_eq!(
            warning_notices(std::slice::from_ref(&w), true),
            [Notice::error("m"), Notice::debug("  reason: d")]
        );
        assert_eq!(warning_notices(&[w], false)[0], Notice::warn("m"));
    }
}
