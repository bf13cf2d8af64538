//! `clinv replay --watch`: the delivery loop (see [`crate::ops::watch`]) with its log
//! lines, the service manager's notifications and the metrics endpoint
//! ([`crate::view::watch::Service`]).

use super::{access, project, store};
use crate::app::cli::{EventFormat, ReplayArgs};
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::error::Outcome;
use crate::ops::watch::{self, Selection, Watch};
use crate::view::watch::{Endpoint, JsonSink, Service};

pub fn run(settings: &Settings, args: &ReplayArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let store = store(settings, &project);
    let selection = if args.all {
        Selection::All
    } else if args.domain.is_empty() {
        Selection::Patterns(vec![super::domain(settings, &project, None)?.to_string()])
    } else {
        Selection::Patterns(args.domain.clone())
    };
    let one = matches!(&selection, Selection::Patterns(p) if p.len() == 1 && !crate::project::select::is_glob(&p[0]));
    if !one && (args.limits.kubeconfig.is_some() || args.limits.context.is_some()) {
        return Err(Failure::Usage(
            "--kubeconfig/--context name one cluster, but --watch serves several domains: each is delivered to its own cluster (.kubeconfig/<name>.yaml in the project, else KUBECONFIG, else ~/.kube/config); use one --domain D with an explicit kubeconfig, or --retarget to deliver through those instead of the kubeconfigs recorded with the snapshots".into(),
        ));
    }
    let w = Watch {
        store: &store,
        selection,
        base: args.watch.backoff_base,
        cap: args.watch.backoff_cap.max(args.watch.backoff_base),
        parallel: usize::from(args.watch.parallel),
        resync: args.watch.resync_period,
        probe_every: args.watch.probe_interval,
        // --watch conflicts with --dry-run.
        opts: super::replay_options(args),
        allow_older: args.allow_older,
        retarget: args.retarget,
    };
    // One loop per store: a second one exits 18 naming the first, before it binds the
    // metrics address the first holds.
    let one_loop = store.watch_lock()?;
    let metrics = match &args.watch.metrics_addr {
        Some(addr) => Some(Endpoint::serve(addr)?),
        None => None,
    };
    let json = |level, line: &str| settings.printer.event(level, line);
    let json: &JsonSink<'_> = &json;
    let service = Service::new(
        (settings.root.as_deref(), &settings.cwd),
        access(settings, &args.limits),
        &settings.printer,
        (args.watch.log_format == EventFormat::Json).then_some(json),
        metrics,
    );
    watch::run(&w, &service, &one_loop)?;
    Ok(Outcome::Done)
}
