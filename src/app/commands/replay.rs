//! `clinv replay`: deliver what was queued, per domain (see [`crate::ops::replay`]).

use super::{access, domain, print_notices, project, store};
use crate::app::cli::ReplayArgs;
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::delivery::Reason;
use crate::error::Outcome;
use crate::ops::replay::{self, Replayed, Request};
use crate::view;

pub fn run(settings: &Settings, args: &ReplayArgs) -> Result<Outcome> {
    if args.watch.watch {
        return super::watch::run(settings, args);
    }
    let project = project(settings)?;
    let store = store(settings, &project);
    let (domains, several) = selected(settings, &project, &store, args)?;
    let access = access(settings, &args.limits);
    if domains.len() > 1 && (access.kubeconfig.is_some() || access.context.is_some()) {
        return Err(Failure::Usage(format!(
            "--kubeconfig/--context name one cluster, but --all replays {} domains: each domain is delivered to its own cluster (.kubeconfig/<name>.yaml in the project, else KUBECONFIG, else ~/.kube/config); use --domain D with an explicit kubeconfig, or --retarget to deliver through those instead of the kubeconfigs recorded with the snapshots",
            domains.len()
        )));
    }
    let req = Request {
        project: &project,
        access: &access,
        opts: super::replay_options(args),
        allow_older: args.allow_older,
        retarget: args.retarget,
    };
    let reports = replay::replay_all(&req, &store, &domains)?;
    // `--all` goes on after a domain that was not delivered; `--strict` then exits with
    // the worst reason's code. A domain whose store failed ends the command with its
    // error once every domain is reported.
    let mut unapplied = Vec::new();
    for r in &reports {
        match &r.report {
            Ok(report) => show(settings, &r.domain, report, &mut unapplied)?,
            Err(e) if reports.len() > 1 => {
                settings
                    .printer
                    .error(&format!("{}: {}", r.domain, crate::error::chain(e)))
            }
            Err(_) => {}
        }
    }
    #[cfg(feature = "gitops")]
    let (owed_rows, refused) = owed(settings, &store, &domains, args, &mut unapplied);
    #[cfg(not(feature = "gitops"))]
    let (owed_rows, refused) = (Vec::new(), false);
    if several {
        let mut rows = view::replay::replay_rows(&reports);
        rows.extend(owed_rows);
        super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    }
    match reports.into_iter().find_map(|r| r.report.err()) {
        Some(e) => Err(e.into()),
        // A refused owed push needs someone to act: exit 1 (or a worse --strict code).
        None if refused => Ok(Outcome::Worst(
            unapplied
                .iter()
                .map(|r| crate::error::exit::for_reason(*r))
                .chain([crate::error::exit::FAILURE])
                .collect(),
        )),
        None => Ok(Outcome::Unapplied(unapplied)),
    }
}

/// The domains `replay` serves (`-A`, `--domain` repeated or a glob, else the one
/// domain), and whether they are several.
fn selected(
    settings: &Settings,
    project: &crate::project::Project,
    store: &crate::store::Store,
    args: &ReplayArgs,
) -> Result<(Vec<crate::domain::Domain>, bool)> {
    let many = crate::project::select::Many {
        patterns: &args.domain,
        all: args.all,
    };
    let several = many.is_many();
    let domains = match (args.all, several) {
        (true, _) => store.domains(),
        (false, true) => crate::project::select::resolve(&store.domains(), many, |_| {
            crate::error::UnknownIn::Store {
                store: store.root().to_path_buf(),
                project: true,
            }
        })?,
        (false, false) => {
            if args.results.output.is_some() {
                return Err(super::one_domain_output("replay"));
            }
            vec![domain(
                settings,
                project,
                args.domain.first().map(String::as_str),
            )?]
        }
    };
    Ok((domains, several))
}

/// The owed pushes of `domains`, each delivered once after the cluster channel: a line
/// each (and a row each for several domains); still owed is fail-soft (`--strict`: the
/// reason's code), refused is an error. Whether one was refused.
#[cfg(feature = "gitops")]
fn owed(
    settings: &Settings,
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
    args: &ReplayArgs,
    unapplied: &mut Vec<Reason>,
) -> (Vec<view::results::Row>, bool) {
    use crate::ops::owed::Delivery;
    if args.dry_run {
        // Nothing is pushed: what would be is said.
        let listing = crate::ops::owed::owed(store, Some(domains));
        for e in &listing.owed {
            let o = &e.owed;
            let (channel, to) = (o.push.channel(), o.push.shown_target());
            let line = format!(
                "{}: would deliver the owed {channel} push to {to}",
                o.domain
            );
            settings.printer.info(&line);
        }
        return (Vec::new(), false);
    }
    let timeout = std::time::Duration::from_secs_f64(args.limits.timeout);
    let report = replay::deliver_owed(store, domains, timeout);
    for d in &report.damaged {
        settings.printer.warn(&format!("outbox: {d}"));
    }
    let mut refused = false;
    let mut rows = Vec::new();
    for (item, delivery) in &report.deliveries {
        let line = view::replay::owed_line(item, delivery);
        match delivery {
            Delivery::Delivered { .. } => settings.printer.info(&line),
            Delivery::StillOwed { reason, .. } => match reason {
                Some(r) if settings.strict => {
                    settings.printer.error(&line);
                    unapplied.push(*r);
                }
                _ => settings.printer.warn(&line),
            },
            Delivery::Refused { .. } => {
                settings.printer.error(&line);
                refused = true;
            }
        }
        rows.push(view::replay::owed_row(item, delivery));
    }
    (rows, refused)
}

/// One domain's outcome; with `--strict` a reason it was not delivered is collected.
fn show(
    settings: &Settings,
    d: &crate::domain::Domain,
    report: &replay::Report,
    unapplied: &mut Vec<Reason>,
) -> Result<()> {
    print_notices(settings, &report.notices);
    match &report.outcome {
        Replayed::Nothing => settings.printer.info(&format!("{d}: nothing to replay")),
        Replayed::NotApplied {
            reason, message, ..
        } => {
            // Another domain's inventory there is a mistake to fix, never fail-soft.
            if settings.strict || *reason == Reason::DomainMismatch {
                settings.printer.error(message);
                unapplied.push(*reason);
            } else if matches!(reason, Reason::ClockSkew | Reason::GitopsManaged) {
                // Newer content not delivered: -q does not hide it.
                settings.printer.alert(message);
            } else {
                settings.printer.warn(message);
            }
        }
        Replayed::DryRun {
            snapshot,
            delivery,
            older,
        } => settings
            .printer
            .data(&view::replay::replay_dry_run(d, snapshot, delivery, *older))?,
        Replayed::Delivered {
            snapshot,
            server,
            delivery,
            superseded,
        } => settings.printer.info(&view::replay::replay_delivered(
            d,
            snapshot,
            server,
            delivery,
            superseded.len(),
        )),
    }
    Ok(())
}
