//! `clinv publish`: render, record a snapshot, apply it when the cluster is reachable
//! ([`crate::ops::publish`]). Fail-soft like lok8s: what keeps the inventory from the
//! cluster is a warning and exit 0 (the snapshot stays queued for `clinv replay`),
//! unless `--strict` ([`crate::view::publish`]).

use super::{access, context, domain, project, store};
use crate::app::Result;
use crate::app::cli::PublishArgs;
use crate::app::settings::Settings;
use crate::error::Outcome;
use crate::ops::publish::several::{self, Plan};
use crate::view::publish as view;

pub fn run(settings: &Settings, args: &PublishArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let fleet = super::fleet(&project, &args.domain)?;
    if fleet.is_none() && args.results.output.is_some() {
        return Err(super::one_domain_output("publish"));
    }
    let plan = Plan {
        project: &project,
        store: &store(settings, &project),
        access: &access(settings, &args.limits),
        source_date_epoch: settings.env.source_date_epoch.as_deref(),
        strict: settings.strict,
        take_over: args.take_over,
        force_conflicts: args.force_conflicts,
        dry_run: args.dry_run,
    };
    let limits = crate::fleet::Limits {
        timeout: args.limits.timeout,
        probe_timeout: args.limits.probe_timeout,
    };
    let Some(domains) = fleet else {
        let domain = domain(settings, &project, args.domain.one())?;
        let report = plan.publish(&domain, limits, None)?;
        return Ok(view::say(context(settings), &domain, report, args.dry_run)?);
    };
    // Each domain through its own kubeconfig: --kubeconfig/--context are refused.
    super::one_kubeconfig_each("publish", &args.limits)?;
    let got = several::several(&plan, &domains, limits);
    let (rows, outcome) = view::several(context(settings), args.dry_run, &domains, got);
    super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    Ok(outcome)
}
