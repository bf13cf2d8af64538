//! `clinv publish`: render, record a snapshot, then server-side apply the CRD and the CR
//! when the cluster is reachable. Fail-soft like lok8s: anything that keeps the
//! inventory from the cluster is a warning and exit 0 (the snapshot stays queued for
//! `clinv replay`), unless `--strict`.

use super::access;
use super::{deploy_domain_note, domain, project, rendered_at, report_warnings, store};
use crate::app::cli::PublishArgs;
use crate::app::settings::Settings;
use crate::cluster::{Applied, Change, Failure, Step};
use crate::delivery::Reason;
use crate::error::{Error, Result, exit};
use crate::inventory::{self, Built, Loaded};
use crate::store::{DomainStore, SnapshotRecord, State, StateRecord, TargetRecord, now_millis};
use crate::{inventory::crd, inventory::render};

pub fn run(settings: &Settings, args: &PublishArgs) -> Result<i32> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let built = match build(settings, &project, &domain) {
        Ok(Some(built)) => built,
        Ok(None) => return Ok(exit::OK),
        Err(err) => {
            settings.printer.error(&err.to_string());
            let message = format!(
                "inventory: failed to build the ClusterInventory for {domain} — skipping publish"
            );
            return not_applied(settings, Reason::RenderFailed, message);
        }
    };
    let opts = access::options(
        args.limits.timeout,
        args.limits.probe_timeout,
        args.force_conflicts,
        args.dry_run,
    );
    let rt = access::runtime()?;
    // Resolve the target first (no network) so the snapshot records where it was going.
    let connected = access::choose(settings, Some(&project), built.cluster_name.as_deref())
        .and_then(|choice| {
            settings.printer.debug(&format!(
                "kubeconfig from {}: {:?}",
                choice.origin, choice.paths
            ));
            rt.block_on(access::connect(settings, &choice, opts))
        });
    let target = connected.as_ref().ok().map(|c| c.target.clone());
    let store = store(settings, &project).domain(&domain);
    let snapshot = if args.dry_run {
        None
    } else {
        record(settings, &store, &built, target.as_ref())
    };
    let result = connected.and_then(|cluster| {
        let result = rt.block_on(cluster.publish(&built.inventory));
        for line in cluster.trace() {
            settings.printer.debug(&line);
        }
        let server = &cluster.target.server;
        result.map_err(|f| Failure {
            detail: format!("{} ({server})", f.detail),
            ..f
        })
    });
    let target_record = target.as_ref().map(TargetRecord::from);
    match result {
        Ok(applied) => {
            if let Some(snap) = &snapshot {
                mark_applied(settings, &store, snap, target_record);
            }
            let server = target.map(|t| t.server).unwrap_or_default();
            report(settings, &domain, &server, &applied, args.dry_run)?;
            Ok(exit::OK)
        }
        Err(f) => {
            let (mut message, skipping) = match f.step {
                Step::Connect => (
                    format!("inventory: {}", f.detail),
                    " — skipping ClusterInventory publish",
                ),
                _ => (failure_message(&domain, &f), " — skipping publish"),
            };
            let mut queued = false;
            if let Some(snap) = &snapshot {
                let change = StateRecord {
                    reason: Some(f.reason),
                    detail: Some(truncate(&f.detail, 500)),
                    target: target_record,
                    ..StateRecord::new(&snap.id, &now_millis(), State::Pending)
                };
                if let Err(e) = store.set_states(&[change]) {
                    settings.printer.debug(&format!(
                        "snapshot {}: could not record why it is pending: {e}",
                        snap.id
                    ));
                }
                message.push_str(&format!(
                    " — queued as snapshot {} (clinv replay delivers it)",
                    snap.id
                ));
                queued = true;
            }
            if !queued {
                message.push_str(skipping);
            }
            not_applied(settings, f.reason, message)
        }
    }
}

/// Records the snapshot; a store failure is a warning, never a reason not to publish.
fn record(
    settings: &Settings,
    store: &DomainStore,
    built: &Built,
    target: Option<&crate::delivery::Target>,
) -> Option<SnapshotRecord> {
    let crd_json = serde_json::to_string(&crd::definition()).unwrap_or_default();
    match store.record(&built.inventory, &crd_json, target) {
        Ok(snap) => {
            settings.printer.debug(&format!(
                "recorded snapshot {} in {}",
                snap.id,
                store.dir().display()
            ));
            Some(snap)
        }
        Err(e) => {
            settings
                .printer
                .warn(&format!("inventory: could not record a snapshot: {e}"));
            None
        }
    }
}

/// Marks the snapshot applied and older pending ones superseded by it.
fn mark_applied(
    settings: &Settings,
    store: &DomainStore,
    snap: &SnapshotRecord,
    target: Option<TargetRecord>,
) {
    let at = now_millis();
    let mut changes = vec![StateRecord {
        target,
        ..StateRecord::new(&snap.id, &at, State::Applied)
    }];
    if let Ok(journal) = store.read() {
        changes.extend(
            crate::store::pending_before(&journal, &snap.id)
                .into_iter()
                .map(|s| StateRecord {
                    by: Some(snap.id.clone()),
                    ..StateRecord::new(&s.record.id, &at, State::Superseded)
                }),
        );
    }
    if let Err(e) = store.set_states(&changes) {
        settings.printer.warn(&format!(
            "snapshot {}: applied, but the store could not record it: {e}",
            snap.id
        ));
    }
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Builds and validates; `None` for a deploy domain (said on stderr).
fn build(
    settings: &Settings,
    project: &crate::project::Project,
    domain: &str,
) -> Result<Option<Built>> {
    let built = match inventory::load(project, domain, rendered_at(settings)?)? {
        Loaded::Cluster(built) => *built,
        Loaded::Deploy { cluster_ref, .. } => {
            deploy_domain_note(settings, domain, cluster_ref.as_deref());
            return Ok(None);
        }
    };
    report_warnings(settings, &built.warnings)?;
    render::validate(&built.inventory)?;
    Ok(Some(built))
}

pub(super) fn failure_message(domain: &str, f: &Failure) -> String {
    let what = match (f.reason, f.step) {
        (Reason::Conflict, Step::Crd) => {
            "the ClusterInventory CRD conflicts with one owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Conflict, _) => {
            "a field is owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Unreachable, _) => "cluster unreachable",
        (Reason::Unauthorized, _) => "the cluster rejected the credentials",
        (Reason::Forbidden, _) => "forbidden: the identity lacks RBAC for the ClusterInventory",
        (Reason::BadKubeconfig, _) => "the kubeconfig is not usable",
        (Reason::ServerError, _) => "the API server failed",
        _ => "the API server rejected it",
    };
    format!(
        "inventory: could not publish the ClusterInventory for {domain}: {what}: {}",
        f.detail
    )
}

/// Fail-soft: a warning and exit 0; with `--strict`, an error with the reason's code.
pub(super) fn not_applied(settings: &Settings, reason: Reason, message: String) -> Result<i32> {
    if settings.strict {
        return Err(Error::Unapplied { reason, message });
    }
    settings.printer.warn(&message);
    Ok(exit::OK)
}

fn report(
    settings: &Settings,
    domain: &str,
    server: &str,
    a: &Applied,
    dry_run: bool,
) -> Result<()> {
    let crd = match a.crd {
        Change::Created => "CRD created",
        _ => "CRD applied",
    };
    let suffix = if dry_run { ", server dry run" } else { "" };
    settings.printer.info(&format!(
        "clusterinventory/cluster {} ({crd}; {domain} → {server}, {} requests{suffix})",
        a.cr, a.requests
    ));
    if dry_run {
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
        settings.printer.data(&text)?;
    }
    Ok(())
}
