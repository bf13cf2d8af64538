//! `clinv replay --watch`: the delivery loop (see [`crate::ops::watch`]) with its log
//! lines ([`crate::view::watch`]), the service manager's notifications and the metrics
//! endpoint ([`crate::view::watch::Endpoint`]).

use super::{access, project, store};
use crate::app::cli::{EventFormat, ReplayArgs};
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::error::Outcome;
use crate::ops::watch::{self, Event, Selection, Watch};
use crate::view::watch::Endpoint;
use std::sync::Mutex;
use std::time::Instant;

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
    let host = Host {
        settings,
        args,
        ready: std::sync::Once::new(),
        watchdog: sd_notify::watchdog_enabled().map(|d| (d / 2, Mutex::new(Instant::now()))),
        metrics,
    };
    watch::run(&w, &host, &one_loop)?;
    Ok(Outcome::Done)
}

/// The command line's side of the loop.
struct Host<'a> {
    settings: &'a Settings,
    args: &'a ReplayArgs,
    ready: std::sync::Once,
    /// Under systemd with `WatchdogSec=`: how often to say the loop is alive, and when
    /// it last did.
    watchdog: Option<(std::time::Duration, Mutex<Instant>)>,
    metrics: Option<Endpoint>,
}

impl watch::Host for Host<'_> {
    fn load(
        &self,
    ) -> crate::error::Result<(crate::project::Project, crate::cluster::access::Access)> {
        let project =
            crate::project::Project::discover(self.settings.root.as_deref(), &self.settings.cwd)?;
        Ok((project, access(self.settings, &self.args.limits)))
    }

    fn event(&self, event: &Event<'_>) {
        if let Event::Stopping { .. } = event {
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
        }
        let line = crate::view::watch::line(event);
        let printer = &self.settings.printer;
        match self.args.watch.log_format {
            EventFormat::Json => printer.event(line.level, &line.json(&crate::store::now_millis())),
            EventFormat::Text => line.say(printer),
        }
    }

    fn tick(&self, view: &watch::View<'_>) {
        self.ready.call_once(|| {
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
        });
        if let Some(m) = &self.metrics {
            m.refresh(view);
        }
        if let Some((every, last)) = &self.watchdog
            && let Ok(mut last) = last.lock()
            && last.elapsed() >= *every
        {
            *last = Instant::now();
            let status = format!(
                "{} domain(s) owe snapshots, {} push(es) owed",
                view.clusters.owing(),
                view.pushes.owing()
            );
            let _ = sd_notify::notify(&[
                sd_notify::NotifyState::Watchdog,
                sd_notify::NotifyState::Status(&status),
            ]);
        }
    }
}
