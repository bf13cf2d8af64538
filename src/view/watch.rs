//! `replay --watch`: one log line per event of the delivery loop, as text or as one
//! JSON object (never a spinner: the loop runs under systemd, in a pod, in cron's mail).

use super::metrics::{self, Facts};
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::ops::replay::Replayed;
use crate::ops::watch::Event;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How loud an event is: `Debug` lines show with `-v` only, `Info` not with `-q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One event, said: its level, its name, the sentence, and its fields for JSON.
#[derive(Debug)]
pub struct Line {
    pub level: Level,
    pub event: &'static str,
    pub text: String,
    fields: Map<String, Value>,
}

impl Line {
    fn new(level: Level, event: &'static str, text: String) -> Line {
        Line {
            level,
            event,
            text,
            fields: Map::new(),
        }
    }

    fn with(mut self, key: &str, value: impl Into<Value>) -> Line {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    /// The JSON form: `{"time", "level", "event", "msg", …fields}` on one line.
    pub fn json(&self, time: &str) -> String {
        let mut object = Map::new();
        object.insert("time".into(), time.into());
        object.insert("level".into(), self.level.as_str().into());
        object.insert("event".into(), self.event.into());
        object.insert("msg".into(), self.text.clone().into());
        object.extend(self.fields.clone());
        Value::Object(object).to_string()
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1}s")
    } else {
        format!("{}s", s.round())
    }
}

/// The line of `event`.
pub fn line(event: &Event) -> Line {
    match event {
        Event::Started { domains, owing } => Line::new(
            Level::Info,
            "started",
            format!("serving {domains} domain(s); {owing} owe snapshots to their cluster"),
        )
        .with("domains", *domains)
        .with("owing", *owing),
        Event::Owed { domain, owed } => Line::new(
            Level::Info,
            "owed",
            format!("{domain}: {owed} snapshot(s) pending"),
        )
        .with("domain", domain.as_str())
        .with("owed", *owed),
        Event::Waiting {
            domain,
            until,
            reason,
        } => waiting(domain, *until, *reason),
        Event::Unanswered {
            domain,
            reason,
            wait,
        } => unanswered(domain, *reason, *wait),
        Event::Dark { domain, reason } => dark(domain, *reason),
        Event::Back { domain, after } => back(domain, *after),
        Event::Parked { domain, server } => Line::new(
            Level::Debug,
            "waiting",
            format!(
                "{domain}: not attempted yet: another domain's delivery to {server} is in flight (two never deliver to one API server at once)"
            ),
        )
        .with("domain", domain.as_str()),
        Event::Attempted {
            domain,
            report,
            wait,
        } => attempted(domain.as_str(), report, *wait),
        Event::PushOwed { item } => push_owed(item),
        Event::OutboxDamaged { what } => Line::new(
            Level::Warn,
            "outbox-damaged",
            format!("owed push not usable, left as it is: {what}"),
        ),
        Event::Pushed {
            item,
            outcome,
            wait,
        } => pushed(item, outcome, *wait),
        Event::Failed {
            domain,
            error,
            wait,
        } => failed(domain, error, *wait),
        Event::StoreLost { store } => Line::new(
            Level::Error,
            "store-lost",
            format!(
                "{} was removed or replaced under the loop (its lock no longer guards it): stopping",
                store.display()
            ),
        ),
        Event::Reloaded { error } => reloaded(error.as_ref()),
        Event::Stopping { signal, in_flight } => stopping(*signal, *in_flight),
    }
}

fn dark(domain: &Domain, reason: Reason) -> Line {
    Line::new(
        Level::Warn,
        "unreachable",
        format!(
            "{domain}: unreachable: nothing answers at the cluster's address ({reason}); probed until it does"
        ),
    )
    .with("domain", domain.as_str())
    .with("reason", reason.as_str())
}

fn back(domain: &Domain, after: Duration) -> Line {
    Line::new(
        Level::Info,
        "reachable",
        format!("{domain}: reachable again after {}", secs(after)),
    )
    .with("domain", domain.as_str())
    .with("dark_seconds", after.as_secs_f64())
}

fn failed(domain: &Domain, error: &crate::Error, wait: Option<Duration>) -> Line {
    let chain = crate::error::chain(error);
    // Most errors name their domain already.
    let text = match chain.starts_with(&format!("{domain}:")) {
        true => chain,
        false => format!("{domain}: {chain}"),
    };
    let line = Line::new(Level::Error, "failed", format!("{text}{}", next(wait)))
        .with("domain", domain.as_str())
        .with("reason", failure_kind(error));
    match wait {
        Some(w) => line.with("wait_seconds", w.as_secs_f64()),
        None => line,
    }
}

/// What kind of error of its own ended an attempt, for the `failed` line's `reason`:
/// `store` (it could not be read or written: a full disk, a lock, a damaged record),
/// the delivery reason when it names one, `runtime`, else `error`.
fn failure_kind(error: &crate::Error) -> &'static str {
    use crate::Error as E;
    match error {
        E::InDomain { source, .. } | E::NotRecorded { source, .. } => failure_kind(source),
        E::Io { .. }
        | E::Locked { .. }
        | E::Damaged(_)
        | E::Snapshot(_)
        | E::NoStore(_)
        | E::InvalidFile { .. }
        | E::StoreReplaced { .. } => "store",
        E::Unapplied { reason, .. } => reason.as_str(),
        E::Runtime(_) => "runtime",
        _ => "error",
    }
}

/// The lines of `event`: what an attempt's replay said on the way, then its own line.
///
/// The replay's messages are what one-shot `replay` says: a delivery to another server
/// than the recorded one, a damaged snapshot skipped, older ones superseded.
pub fn lines(event: &Event) -> Vec<Line> {
    let mut lines = Vec::new();
    if let Event::Attempted { domain, report, .. } = event {
        lines.extend(report.notices.iter().map(|n| notice(domain, n)));
    }
    lines.push(line(event));
    lines
}

/// One message of a replay, at its level.
fn notice(domain: &Domain, n: &crate::util::notice::Notice) -> Line {
    use crate::util::notice::Level as N;
    let level = match n.level {
        N::Error => Level::Error,
        N::Warn => Level::Warn,
        N::Info => Level::Info,
        N::Detail | N::Debug => Level::Debug,
    };
    Line::new(level, "replay-said", n.text.clone()).with("domain", domain.as_str())
}

/// "; next attempt in 40s", or nothing.
fn next(wait: Option<Duration>) -> String {
    wait.map(|w| format!("; next attempt in {}", secs(w)))
        .unwrap_or_default()
}

fn waiting(domain: &Domain, until: Duration, reason: Option<Reason>) -> Line {
    let why = reason.map_or("the last attempt failed".into(), |r| {
        format!("last attempt: {r}")
    });
    Line::new(
        Level::Debug,
        "waiting",
        format!(
            "{domain}: not attempted yet: in backoff for {} more ({why})",
            secs(until)
        ),
    )
    .with("domain", domain.as_str())
    .with("wait_seconds", until.as_secs_f64())
}

fn unanswered(domain: &Domain, reason: Reason, wait: Duration) -> Line {
    Line::new(
        Level::Debug,
        "unanswered",
        format!(
            "{domain}: nothing answers at the cluster's address ({reason}){}",
            next(Some(wait))
        ),
    )
    .with("domain", domain.as_str())
    .with("reason", reason.as_str())
    .with("wait_seconds", wait.as_secs_f64())
}

fn push_owed(item: &crate::store::outbox::Owed) -> Line {
    Line::new(
        Level::Info,
        "push-owed",
        format!(
            "{}: {} push owed to {} ({})",
            item.domain,
            item.push.channel(),
            item.push.shown_target(),
            item.reason
        ),
    )
    .with("domain", item.domain.as_str())
    .with("channel", item.push.channel())
}

fn reloaded(error: Option<&crate::Error>) -> Line {
    match error {
        None => Line::new(
            Level::Info,
            "reloaded",
            "SIGHUP: the project's kubeconfigs and settings read again; every domain owed is attempted now".into(),
        ),
        Some(e) => Line::new(
            Level::Error,
            "reload-failed",
            format!(
                "SIGHUP: the project cannot be read again, going on as before: {}",
                crate::error::chain(e)
            ),
        ),
    }
}

fn stopping(signal: i32, in_flight: usize) -> Line {
    Line::new(
        Level::Info,
        "stopping",
        format!(
            "{}: stopping; {in_flight} delivery(ies) in flight get up to {} to end",
            crate::util::signals::name(signal),
            secs(crate::ops::watch::GRACE)
        ),
    )
    .with("in_flight", in_flight)
}

/// One delivery of an owed push.
fn pushed(
    item: &crate::store::outbox::Owed,
    outcome: &crate::ops::watch::pushes::Pushed,
    wait: Option<Duration>,
) -> Line {
    use crate::ops::watch::pushes::Pushed;
    let what = format!(
        "{}: {} push to {}",
        item.domain,
        item.push.channel(),
        item.push.shown_target()
    );
    let next = next(wait);
    let line = match outcome {
        Pushed::Delivered { already_there } => Line::new(
            Level::Info,
            "pushed",
            match already_there {
                true => format!("{what}: the far end already had it; recorded"),
                false => format!("{what}: delivered"),
            },
        ),
        Pushed::Owed { reason, message } => Line::new(
            Level::Warn,
            "push-not-delivered",
            format!("{what}: still owed: {message}{next}"),
        )
        .with("reason", reason.map_or("local", |r| r.as_str())),
        Pushed::Refused { message } => Line::new(
            Level::Error,
            "push-refused",
            format!("{what}: refused, stays owed until it is fixed: {message}{next}"),
        ),
    };
    let line = line
        .with("domain", item.domain.as_str())
        .with("channel", item.push.channel())
        .with("snapshot", item.snapshot.as_str());
    match wait {
        Some(w) => line.with("wait_seconds", w.as_secs_f64()),
        None => line,
    }
}

/// One attempt's report: delivered, nothing to do, or not delivered and why.
fn attempted(domain: &str, report: &crate::ops::replay::Report, wait: Option<Duration>) -> Line {
    let line = match &report.outcome {
        Replayed::Delivered {
            snapshot,
            server,
            delivery,
            superseded,
        } => Line::new(
            Level::Info,
            "delivered",
            super::replay::replay_delivered(domain, snapshot, server, delivery, *superseded),
        )
        .with("snapshot", snapshot.as_str())
        .with("superseded", *superseded),
        Replayed::Damaged { pending } => Line::new(
            Level::Warn,
            "damaged",
            format!("{}{}", super::replay::damaged(domain, *pending), next(wait)),
        )
        .with("queued", *pending),
        Replayed::Nothing | Replayed::DryRun { .. } => Line::new(
            Level::Debug,
            "nothing",
            format!("{domain}: nothing pending (delivered meanwhile)"),
        ),
        Replayed::NotApplied {
            reason,
            queued,
            message,
        } => Line::new(
            Level::Warn,
            "not-delivered",
            format!(
                "{message}{}",
                wait.map(|w| format!("; next attempt in {}", secs(w)))
                    .unwrap_or_default()
            ),
        )
        .with("reason", reason.as_str())
        .with("queued", *queued),
    };
    let line = line.with("domain", domain);
    match wait {
        Some(w) => line.with("wait_seconds", w.as_secs_f64()),
        None => line,
    }
}

/// How long the loop may go without a turn before `/healthz` says it stalled: it turns
/// at least four times a second; its reads and attempts run on threads of their own.
pub const STALL: Duration = Duration::from_secs(30);

/// The loop's metrics endpoint (`--metrics-addr`) and the facts it serves, rebuilt from
/// the loop at most once a second (a scrape reads the last ones; it never waits for the
/// loop).
pub struct Endpoint {
    server: crate::ops::serve::Server,
    facts: Arc<Mutex<Facts>>,
    built: Mutex<Option<Instant>>,
}

impl Endpoint {
    /// Serves `/metrics` (and the probes) on `addr`, not ready until the first refresh.
    ///
    /// # Errors
    /// What [`crate::ops::serve::start`] returns (a bad or taken address).
    pub fn serve(addr: &str) -> crate::error::Result<Endpoint> {
        let facts = Arc::new(Mutex::new(Facts::default()));
        let shared = facts.clone();
        let server = crate::ops::serve::start(addr, metrics::CONTENT_TYPE, move || {
            let facts = shared.lock().unwrap_or_else(|e| e.into_inner());
            metrics::encode(&facts)
        })?;
        Ok(Endpoint {
            server,
            facts,
            built: Mutex::new(None),
        })
    }

    /// The facts rebuilt from the loop's `view`, unless they were within the second;
    /// the loop is alive (it turned), and ready while every domain's store reads and no
    /// attempt ended in an error of its own (the store, a damaged snapshot, a target).
    pub fn refresh(&self, view: &crate::ops::watch::View<'_>) {
        self.server.beat(STALL);
        let Ok(mut built) = self.built.lock() else {
            return;
        };
        if built.is_some_and(|b| b.elapsed() < Duration::from_secs(1)) {
            return;
        }
        *built = Some(Instant::now());
        let fresh = metrics::of_loop(
            view,
            Instant::now(),
            jiff::Timestamp::now().as_millisecond(),
        );
        if let Ok(mut facts) = self.facts.lock() {
            *facts = fresh;
        }
        let sound = view
            .clusters
            .slots()
            .all(|(_, s)| !s.unreadable && !s.errored);
        self.server.set_ready(sound);
    }
}

impl Line {
    /// The line as text, said at its level.
    pub fn say(&self, console: &dyn crate::console::Console) {
        match self.level {
            Level::Debug => console.debug(&self.text),
            Level::Info => console.info(&self.text),
            Level::Warn => console.warn(&self.text),
            Level::Error => console.error(&self.text),
        }
    }
}

/// Where `--log-format json` lines go: one JSON object at its level (the printer filters
/// by `-q`/`-v` as for the tagged lines).
pub type JsonSink<'a> = dyn Fn(Level, &str) + Sync + 'a;

/// The loop's side that faces the world ([`crate::ops::watch::Host`]): its log lines,
/// the service manager's notifications (sd_notify) and the metrics endpoint.
pub struct Service<'a> {
    /// `--root`, and the directory the project is found above.
    pub root: Option<&'a std::path::Path>,
    pub cwd: &'a std::path::Path,
    /// How to reach the clusters (`--kubeconfig`, `--context`, the environment).
    pub access: crate::cluster::access::Access,
    /// Where text log lines go.
    pub console: &'a dyn crate::console::Console,
    /// `--log-format json`: where a line's JSON object goes, at its level.
    pub json: Option<&'a JsonSink<'a>>,
    pub metrics: Option<Endpoint>,
    ready: std::sync::Once,
    /// Under systemd with `WatchdogSec=`: how often to say the loop is alive, and when
    /// it last did.
    watchdog: Option<(Duration, Mutex<Instant>)>,
}

impl<'a> Service<'a> {
    /// A service that says its lines to `console` (or as JSON to `json`), not yet ready.
    pub fn new(
        (root, cwd): (Option<&'a std::path::Path>, &'a std::path::Path),
        access: crate::cluster::access::Access,
        console: &'a dyn crate::console::Console,
        json: Option<&'a JsonSink<'a>>,
        metrics: Option<Endpoint>,
    ) -> Service<'a> {
        Service {
            root,
            cwd,
            access,
            console,
            json,
            metrics,
            ready: std::sync::Once::new(),
            watchdog: sd_notify::watchdog_enabled().map(|d| (d / 2, Mutex::new(Instant::now()))),
        }
    }
}

impl crate::ops::watch::Host for Service<'_> {
    fn load(
        &self,
    ) -> crate::error::Result<(crate::project::Project, crate::cluster::access::Access)> {
        let project = crate::project::Project::discover(self.root, self.cwd)?;
        Ok((project, self.access.clone()))
    }

    fn event(&self, event: &Event) {
        if let Event::Stopping { .. } = event {
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
        }
        for line in lines(event) {
            match self.json {
                Some(json) => json(line.level, &line.json(&crate::store::now_millis())),
                None => line.say(self.console),
            }
        }
    }

    fn tick(&self, view: &crate::ops::watch::View<'_>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_is_one_line_of_text_and_one_json_object() {
        let d = Domain::parse("prod-7.example").unwrap();
        let l = line(&Event::Unanswered {
            domain: d,
            reason: crate::delivery::Reason::Unreachable,
            wait: Duration::from_secs(40),
        });
        assert_eq!(
            l.text,
            "prod-7.example: nothing answers at the cluster's address (unreachable); next attempt in 40s"
        );
        assert_eq!(l.level, Level::Debug);
        let v: Value = serde_json::from_str(&l.json("2026-12-05T14:00:00Z")).unwrap();
        assert_eq!(
            v,
            json!({"time": "2026-12-05T14:00:00Z", "level": "debug", "event": "unanswered",
                   "msg": l.text, "domain": "prod-7.example", "reason": "unreachable",
                   "wait_seconds": 40.0})
        );
        assert!(!l.json("t").contains('\n'));
    }

    #[test]
    fn a_failed_attempt_says_what_failed_and_how_long_it_waits() {
        let d = Domain::parse("prod-7.example").unwrap();
        let full = std::io::Error::from_raw_os_error(28);
        let error = crate::Error::InDomain {
            domain: d.to_string(),
            source: Box::new(crate::Error::io("/s/prod-7.example/segments/1/1.log", full)),
        };
        let l = line(&Event::Failed {
            domain: d,
            error,
            wait: Some(Duration::from_secs(10)),
        });
        let v: Value = serde_json::from_str(&l.json("t")).unwrap();
        assert_eq!(v["event"], "failed");
        assert_eq!(v["reason"], "store");
        assert_eq!(v["wait_seconds"], 10.0);
        assert!(l.text.contains("No space left on device"), "{}", l.text);
    }
}
