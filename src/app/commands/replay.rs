//! `clinv replay`: deliver what was queued. Per domain, the newest pending snapshot is
//! applied (the inventory is a singleton: one apply delivers the latest state) and the
//! older pending ones are marked superseded by it; nothing is deleted. A live object
//! rendered later than the snapshot is never overwritten (the stale guard).
//!
//! The domain lock is held for the whole delivery, so two replays never race; a crash
//! at any point converges on the next run without a second apply (an inventory already
//! live is recognised and only marked).

use super::access;
use super::publish::{failure_message, not_applied};
use super::{domain, project, store};
use crate::app::cli::ReplayArgs;
use crate::app::settings::Settings;
use crate::cluster::{Delivery, Failure};
use crate::error::{Error, Result, exit};
use crate::project::Project;
use crate::store::{DomainStore, LOCK_TIMEOUT, Snapshot, State, StateRecord, now_millis};

pub fn run(settings: &Settings, args: &ReplayArgs) -> Result<i32> {
    let project = project(settings)?;
    let store = store(settings, &project);
    let domains = if args.all {
        store.domains()
    } else {
        vec![domain(settings, &project, args.domain.domain.as_deref())?]
    };
    let mut worst = exit::OK;
    for d in domains {
        let code = replay_domain(settings, &project, &store.domain(&d), args)?;
        worst = worst.max(code);
    }
    Ok(worst)
}

fn replay_domain(
    settings: &Settings,
    project: &Project,
    store: &DomainStore,
    args: &ReplayArgs,
) -> Result<i32> {
    let domain = store.domain.as_str();
    let _lock = store.lock("replay", LOCK_TIMEOUT)?;
    let journal = store.read()?;
    for damage in &journal.damage {
        settings
            .printer
            .warn(&format!("snapshot store: {damage} — skipped"));
    }
    let pending: Vec<&Snapshot> = journal
        .snapshots
        .iter()
        .filter(|s| s.state == State::Pending)
        .collect();
    // The newest pending snapshot whose objects are intact; damaged ones are reported
    // and left pending (never dropped).
    let mut chosen = None;
    for snap in pending.iter().rev() {
        match store.inventory(&snap.record) {
            Ok(cr) => {
                chosen = Some((*snap, cr));
                break;
            }
            Err(e) => settings
                .printer
                .warn(&format!("snapshot {}: {e} — skipped", snap.record.id)),
        }
    }
    let Some((newest, cr)) = chosen else {
        settings
            .printer
            .info(&format!("{domain}: nothing to replay"));
        return Ok(exit::OK);
    };
    let older: Vec<&Snapshot> = pending
        .iter()
        .copied()
        .filter(|s| s.record.id != newest.record.id)
        .collect();
    let cluster_name = super::access::cluster_name(project, domain);
    let opts = access::options(
        args.limits.timeout,
        args.limits.probe_timeout,
        args.force_conflicts,
        args.dry_run,
    );
    let rt = access::runtime()?;
    let result =
        access::choose(settings, Some(project), cluster_name.as_deref()).and_then(|choice| {
            rt.block_on(async {
                let cluster = access::connect(settings, &choice, opts).await?;
                if let Some(queued_for) = newest
                    .record
                    .target
                    .as_ref()
                    .filter(|t| t.server != cluster.target.server)
                {
                    settings.printer.warn(&format!(
                        "{domain}: snapshot {} was queued for {}; delivering it to {}",
                        newest.record.id, queued_for.server, cluster.target.server
                    ));
                }
                let result = cluster.replay(&cr).await;
                for line in cluster.trace() {
                    settings.printer.debug(&line);
                }
                let server = cluster.target.server.clone();
                result.map(|d| (d, server.clone())).map_err(|f| Failure {
                    detail: format!("{} ({server})", f.detail),
                    ..f
                })
            })
        });
    let (delivery, server) = match result {
        Ok(r) => r,
        Err(f) => {
            let message = format!(
                "{} — {} snapshot(s) stay queued",
                failure_message(domain, &f).replacen("could not publish", "could not replay", 1),
                pending.len()
            );
            return match not_applied(settings, f.reason, message) {
                Ok(code) => Ok(code),
                Err(Error::Unapplied { reason, message }) => {
                    settings.printer.error(&message);
                    Ok(crate::error::exit::for_reason(reason))
                }
                Err(e) => Err(e),
            };
        }
    };
    if args.dry_run {
        let what = match &delivery {
            Delivery::Applied(a) => format!("would apply snapshot {} ({})", newest.record.id, a.cr),
            Delivery::Stale { live_rendered_at } => {
                format!(
                    "would skip snapshot {}: the live inventory is newer ({live_rendered_at})",
                    newest.record.id
                )
            }
        };
        settings.printer.data(&format!(
            "{domain}: {what}; {} older pending snapshot(s) would be superseded\n",
            older.len()
        ))?;
        return Ok(exit::OK);
    }
    let at = now_millis();
    let mark =
        |snap: &Snapshot, state: State, by: Option<&str>, detail: Option<String>| StateRecord {
            detail,
            by: by.map(str::to_string),
            target: newest.record.target.clone(),
            ..StateRecord::new(&snap.record.id, &at, state)
        };
    let mut changes = Vec::with_capacity(pending.len());
    let summary = match &delivery {
        Delivery::Applied(a) => {
            changes.push(mark(newest, State::Applied, None, None));
            format!(
                "{domain}: applied snapshot {} (clusterinventory/cluster {} → {server}, {} requests)",
                newest.record.id, a.cr, a.requests
            )
        }
        Delivery::Stale { live_rendered_at } => {
            let why = format!("the live inventory was rendered later ({live_rendered_at})");
            changes.push(mark(newest, State::Superseded, None, Some(why.clone())));
            format!(
                "{domain}: snapshot {} not applied: {why}; marked superseded",
                newest.record.id
            )
        }
    };
    changes.extend(
        older
            .iter()
            .map(|s| mark(s, State::Superseded, Some(&newest.record.id), None)),
    );
    store.append_states(&changes)?;
    let older_note = if older.is_empty() {
        String::new()
    } else {
        format!("; {} older pending snapshot(s) superseded", older.len())
    };
    settings.printer.info(&format!("{summary}{older_note}"));
    Ok(exit::OK)
}
