//! `clinv replay`: deliver what was queued, per domain ([`crate::ops::replay`], said by
//! [`crate::view::replay`]).

use super::{access, context, domain, project, store};
use crate::app::cli::ReplayArgs;
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::error::Outcome;
use crate::ops::replay::{self, Request};
use crate::project::select::Many;
use crate::view::replay as view;

pub fn run(settings: &Settings, args: &ReplayArgs) -> Result<Outcome> {
    if args.watch.watch {
        return super::watch::run(settings, args);
    }
    let project = project(settings)?;
    let store = store(settings, &project);
    let many = Many {
        patterns: &args.domain,
        all: args.all,
    };
    let several = many.is_many();
    let domains = if several {
        replay::domains(&store, many)?
    } else if args.results.output.is_some() {
        return Err(super::one_domain_output("replay"));
    } else {
        vec![domain(
            settings,
            &project,
            args.domain.first().map(String::as_str),
        )?]
    };
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
    // the worst reason's code.
    #[cfg_attr(not(feature = "gitops"), allow(unused_mut))]
    let mut unapplied = view::say(context(settings), &reports)?;
    #[cfg(feature = "gitops")]
    let (owed_rows, refused) = {
        let timeout = std::time::Duration::from_secs_f64(args.limits.timeout);
        let owed = replay::owed(&store, &domains, args.dry_run, timeout);
        view::say_owed(context(settings), &owed, &mut unapplied)
    };
    #[cfg(not(feature = "gitops"))]
    let (owed_rows, refused) = (Vec::new(), false);
    if several {
        let mut rows = view::replay_rows(&reports);
        rows.extend(owed_rows);
        super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    }
    Ok(replay::outcome(reports, unapplied, refused)?)
}
