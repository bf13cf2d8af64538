//! `clinv publish`: render, record a snapshot, apply it when the cluster is reachable.
//! Fail-soft like lok8s: what keeps the inventory from the cluster is a warning and exit
//! 0 (the snapshot stays queued for `clinv replay`), unless `--strict`.

use super::{access, deploy_domain_note, domain, fail_soft, print_notices, project, store};
use crate::app::Result;
use crate::app::cli::{ClusterArgs, PublishArgs};
use crate::app::settings::Settings;
use crate::cluster::Change;
use crate::cluster::access::options;
use crate::domain::Domain;
use crate::error::{Error, Outcome, exit};
use crate::ops::publish::{self, Published, Request};

pub fn run(settings: &Settings, args: &PublishArgs) -> Result<Outcome> {
    let project = project(settings)?;
    if let Some(domains) = super::fleet(&project, &args.domain)? {
        return several(settings, args, &project, &domains);
    }
    if args.results.output.is_some() {
        return Err(super::one_domain_output("publish"));
    }
    let domain = domain(settings, &project, args.domain.one())?;
    let report = publish_one(settings, args, &project, &domain, &args.limits, None)?;
    show(settings, args, &domain, report)
}

/// Renders, records and applies one domain's inventory within `limits`.
fn publish_one(
    settings: &Settings,
    args: &PublishArgs,
    project: &crate::project::Project,
    domain: &Domain,
    limits: &ClusterArgs,
    not_tried: Option<f64>,
) -> crate::error::Result<publish::Report> {
    let opts = crate::cluster::Options {
        take_over: args.take_over,
        ..options(
            limits.timeout,
            limits.probe_timeout,
            args.force_conflicts,
            args.dry_run,
        )
    };
    publish::publish(&Request {
        project,
        domain,
        source_date_epoch: settings.env.source_date_epoch.as_deref(),
        store: &store(settings, project).domain(domain),
        access: &access(settings, limits),
        opts,
        strict: settings.strict,
        not_tried,
    })
}

/// One domain's report: its messages, and the outcome by lok8s's fail-soft rule.
fn show(
    settings: &Settings,
    args: &PublishArgs,
    domain: &Domain,
    mut report: publish::Report,
) -> Result<Outcome> {
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
            deploy_domain_note(settings, domain, cluster_ref.as_deref());
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

/// One domain of `publish -A`: its report, or why it was not published.
enum Got {
    Published(Box<crate::error::Result<publish::Report>>),
    Skipped(super::Skip),
}

/// Several domains (`-A`, `--domain` repeated, a glob): each published through its own
/// kubeconfig ([`super::each_domain`]: up to 64 at once, within the one `--timeout`), its
/// messages printed as for one domain, then a table DOMAIN, RESULT, DETAIL. The exit code
/// is the highest of the domains' (a domain not tried in time was neither applied nor
/// recorded: 11).
fn several(
    settings: &Settings,
    args: &PublishArgs,
    project: &crate::project::Project,
    domains: &[Domain],
) -> Result<Outcome> {
    let publish = |domain: &Domain, limits: &ClusterArgs, not_tried: Option<f64>| {
        let report = publish_one(settings, args, project, domain, limits, not_tried);
        Got::Published(Box::new(report))
    };
    let results = super::each_domain(
        "publish",
        &args.limits,
        project,
        domains,
        |domain, limits| publish(domain, limits, None),
        // Out of time: still recorded and queued (offline first), the cluster not tried.
        |domain, skip| match skip {
            super::Skip::NotTried => publish(domain, &args.limits, Some(args.limits.timeout)),
            skip => Got::Skipped(skip),
        },
    )?;
    let mut rows = Vec::new();
    let mut codes = Vec::new();
    for (domain, got) in domains.iter().zip(results) {
        let (result, detail, code) = outcome(settings, args, domain, got);
        rows.push(crate::view::results::Row::new(
            domain.as_str(),
            result,
            detail,
        ));
        codes.push(code);
    }
    super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    Ok(Outcome::Worst(codes))
}

/// One domain's RESULT, DETAIL and exit code, its messages printed.
fn outcome(
    settings: &Settings,
    args: &PublishArgs,
    domain: &Domain,
    got: Got,
) -> (String, String, i32) {
    match got {
        Got::Published(published) => match *published {
            Ok(report) => {
                let (result, detail) = words(&report);
                let code = match show(settings, args, domain, report) {
                    Ok(outcome) => outcome.exit_code(),
                    Err(e) => failed(settings, domain, e),
                };
                (result, detail, code)
            }
            Err(e) => (
                "error".to_string(),
                crate::error::headline(&e),
                failed(settings, domain, e.into()),
            ),
        },
        Got::Skipped(skip) => {
            let (word, detail) = skip.words();
            let code = match &skip {
                super::Skip::NotTried => exit::NOT_RECORDED,
                super::Skip::Deploy(cluster) => {
                    deploy_domain_note(settings, domain.as_str(), cluster.as_deref());
                    exit::OK
                }
            };
            (word.to_string(), detail, code)
        }
    }
}

/// `[error] D: …` for a domain whose publish failed; its exit code.
fn failed(settings: &Settings, domain: &Domain, e: crate::app::Failure) -> i32 {
    settings.printer.error(&format!("{domain}: {e}"));
    e.exit_code()
}

/// The RESULT and DETAIL of a domain's report.
fn words(report: &publish::Report) -> (String, String) {
    match (&report.outcome, &report.not_recorded) {
        (Published::NotApplied(n), Some(_)) => (
            "not recorded".into(),
            format!("{}: neither applied nor recorded", n.reason),
        ),
        (Published::NotApplied(n), None) => match &n.pending {
            Some(id) => (
                format!("pending ({})", n.reason),
                format!("snapshot {id}; clinv replay delivers it"),
            ),
            None => (
                format!("not published ({})", n.reason),
                "nothing recorded".into(),
            ),
        },
        (
            Published::Applied {
                server, applied, ..
            },
            _,
        ) => (
            "applied".into(),
            format!("clusterinventory/cluster {} → {server}", applied.cr),
        ),
        (Published::DeployDomain { cluster_ref }, _) => (
            "deploy domain".into(),
            format!(
                "no inventory of its own (cluster: {})",
                cluster_ref.as_deref().unwrap_or("-")
            ),
        ),
    }
}
