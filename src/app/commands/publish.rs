//! `clinv publish`: render, record a snapshot, apply it when the cluster is reachable.
//! Fail-soft like lok8s: what keeps the inventory from the cluster is a warning and exit
//! 0 (the snapshot stays queued for `clinv replay`), unless `--strict`.

use super::{access, deploy_domain_note, domain, fail_soft, print_notices, project, store};
use crate::app::Result;
use crate::app::cli::PublishArgs;
use crate::app::settings::Settings;
use crate::cluster::Change;
use crate::cluster::access::options;
use crate::error::{Error, Outcome};
use crate::ops::publish::{self, Published, Request};

pub fn run(settings: &Settings, args: &PublishArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let opts = options(
        args.limits.timeout,
        args.limits.probe_timeout,
        args.force_conflicts,
        args.dry_run,
    );
    let mut report = publish::publish(&Request {
        project: &project,
        domain: &domain,
        source_date_epoch: settings.env.source_date_epoch.as_deref(),
        store: &store(settings, &project).domain(&domain),
        access: &access(settings, &args.limits),
        opts,
        strict: settings.strict,
    })?;
    print_notices(settings, &report.notices);
    if let Some(not_recorded) = report.not_recorded.take() {
        let applied = matches!(report.outcome, Published::Applied { .. });
        // Neither applied nor recorded: the inventory is lost, always an error. Applied
        // but not recorded: a warning (already printed), an error with --strict.
        if !applied || settings.strict {
            if let Published::NotApplied(n) = &report.outcome {
                settings.printer.warn(&n.message);
            }
            let what = if applied {
                "applied but not"
            } else {
                "neither applied nor"
            };
            return Err(Error::NotRecorded {
                what: format!("the inventory of {domain} was {what} recorded"),
                source: Box::new(not_recorded.0),
            }
            .into());
        }
    }
    match report.outcome {
        Published::DeployDomain { cluster_ref } => {
            deploy_domain_note(settings, &domain, cluster_ref.as_deref());
        }
        Published::NotApplied(n) => return fail_soft(settings, n.reason, n.message),
        Published::Applied {
            server, applied, ..
        } => {
            let crd = match applied.crd {
                Change::Created => "CRD created",
                _ => "CRD applied",
            };
            let suffix = if args.dry_run { ", server dry run" } else { "" };
            settings.printer.info(&format!(
                "clusterinventory/cluster {} ({crd}; {domain} → {server}, {} requests{suffix})",
                applied.cr, applied.requests
            ));
            if args.dry_run {
                settings.printer.data(&publish::dry_run_diff(&applied)?)?;
            }
        }
    }
    Ok(Outcome::Done)
}
