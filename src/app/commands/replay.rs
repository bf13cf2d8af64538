//! `clinv replay`: deliver what was queued, per domain (see [`crate::ops::replay`]).

use super::{access, domain, print_notices, project, store};
use crate::app::cli::ReplayArgs;
use crate::app::settings::Settings;
use crate::cluster::Delivery;
use crate::cluster::access::options;
use crate::delivery::stale_detail;
use crate::error::{Outcome, Result};
use crate::ops::replay::{self, Replayed, Request};

pub fn run(settings: &Settings, args: &ReplayArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let store = store(settings, &project);
    let domains = if args.all {
        store.domains()
    } else {
        vec![domain(settings, &project, args.domain.domain.as_deref())?]
    };
    let access = access(settings);
    let req = Request {
        project: &project,
        access: &access,
        opts: options(
            args.limits.timeout,
            args.limits.probe_timeout,
            args.force_conflicts,
            args.dry_run,
        ),
    };
    // `--all` goes on after a domain that was not delivered; `--strict` then exits with
    // the worst reason's code.
    let mut unapplied = Vec::new();
    for d in domains {
        let report = replay::replay_domain(&req, &store.domain(&d))?;
        print_notices(settings, &report.notices);
        match report.outcome {
            Replayed::Nothing => settings.printer.info(&format!("{d}: nothing to replay")),
            Replayed::NotApplied {
                reason, message, ..
            } => {
                if settings.strict {
                    settings.printer.error(&message);
                    unapplied.push(reason);
                } else {
                    settings.printer.warn(&message);
                }
            }
            Replayed::DryRun {
                snapshot,
                delivery,
                older,
            } => {
                let what = match &delivery {
                    Delivery::Applied(a) => format!("would apply snapshot {snapshot} ({})", a.cr),
                    Delivery::Stale { live_rendered_at } => format!(
                        "would skip snapshot {snapshot}: the live inventory is newer ({live_rendered_at})"
                    ),
                };
                settings.printer.data(&format!(
                    "{d}: {what}; {older} older pending snapshot(s) would be superseded\n"
                ))?;
            }
            Replayed::Delivered {
                snapshot,
                server,
                delivery,
                superseded,
            } => {
                let summary = match &delivery {
                    Delivery::Applied(a) => format!(
                        "{d}: applied snapshot {snapshot} (clusterinventory/cluster {} → {server}, {} requests)",
                        a.cr, a.requests
                    ),
                    Delivery::Stale { live_rendered_at } => format!(
                        "{d}: snapshot {snapshot} not applied: {}; marked superseded",
                        stale_detail(live_rendered_at)
                    ),
                };
                let older = match superseded.len() {
                    0 => String::new(),
                    n => format!("; {n} older pending snapshot(s) superseded"),
                };
                settings.printer.info(&format!("{summary}{older}"));
            }
        }
    }
    Ok(Outcome::Unapplied(unapplied))
}
