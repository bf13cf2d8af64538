//! `clinv replay --watch`: what is owed is delivered by itself, as soon as the far end
//! answers — the store-and-forward loop.
//!
//! Each selected domain with snapshots pending is attempted as `replay` attempts it (the
//! same guards: newest per domain, the stale guard, the right-cluster guard, the
//! recorded target); a domain whose cluster did not answer waits out its own backoff
//! ([`schedule`]), probed first by one TCP connect ([`probe`]) so an unreachable fleet
//! costs next to nothing. Attempts run on `--parallel` workers, each bounded by
//! `--timeout`: one hanging cluster holds one worker, never the loop. Two domains whose
//! kubeconfigs name one API server are never delivered at once.
//!
//! What other processes record while it runs (a `publish`, an `import`) is seen through
//! the store's change file ([`crate::store::changes`]) within a quarter of a second,
//! and only the domains written are read again. The store lock is taken only by the
//! replay of one domain, to read and to mark, never across the network.

pub mod probe;
pub mod pushes;
pub mod schedule;

use super::replay::{self, Replayed, Request};
use crate::cluster::Options;
use crate::cluster::access::Access;
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::Result;
use crate::project::Project;
use crate::store::{DomainStore, Store, changes};
use probe::{Endpoint, Prober};
use pushes::{Pushed, Pushes};
use schedule::{Attempt, Schedule};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// After SIGINT/SIGTERM, a delivery in flight gets this long to end (then it is
/// abandoned at a safe point and the process exits 0, within 5 s of the signal).
pub const GRACE: Duration = Duration::from_millis(4_500);
/// How often the store's change file is read: what another process records is seen
/// within this.
const LOOK: Duration = Duration::from_millis(250);
/// Probes in flight at most (each holds a socket).
const PROBES: usize = 512;
/// The shortest sleep before a due time: what falls due within it is taken together.
const BATCH: Duration = Duration::from_millis(100);

/// Which domains the loop serves: every domain of the store, or those a name or glob
/// picks — also domains that appear while it runs.
#[derive(Debug, Clone)]
pub enum Selection {
    All,
    Patterns(Vec<String>),
}

impl Selection {
    fn picks(&self, name: &str) -> bool {
        match self {
            Selection::All => true,
            Selection::Patterns(p) => p
                .iter()
                .any(|p| p == name || crate::project::select::glob_matches(p, name)),
        }
    }
}

/// How the loop runs.
pub struct Watch<'a> {
    pub store: &'a Store,
    pub selection: Selection,
    /// The first wait after a failed attempt, and the longest.
    pub base: Duration,
    pub cap: Duration,
    /// Deliveries at once.
    pub parallel: usize,
    /// How often everything is read in full (a lost change hint is found within this).
    pub resync: Duration,
    /// The longest wait between two probes of a far end that answers nothing (a TCP
    /// connect each): a returning link is found within this, whatever the backoff.
    pub probe_every: Duration,
    /// Each attempt's limits (`--timeout`, `--probe-timeout`), `--force-conflicts`,
    /// `--take-over`.
    pub opts: Options,
    pub allow_older: bool,
    /// `--retarget`: each domain's kubeconfig as it is now, not the recorded target.
    pub retarget: bool,
}

/// What happened, for the log (one line each) and the metrics.
#[derive(Debug)]
pub enum Event<'a> {
    /// The loop read the store: how many domains it serves and how many owe something.
    Started { domains: usize, owing: usize },
    /// A domain owes snapshots it did not owe before (or more of them).
    Owed { domain: &'a Domain, owed: usize },
    /// A domain's change was seen but it is not attempted yet (`-v`).
    Waiting {
        domain: &'a Domain,
        until: Duration,
        reason: Option<Reason>,
    },
    /// A domain waits for another domain's delivery to the same API server to end
    /// (`-v`): two never deliver at once.
    Parked { domain: &'a Domain, server: &'a str },
    /// The probe found nothing answering (`-v`: it repeats at every backoff).
    Unanswered {
        domain: &'a Domain,
        reason: Reason,
        wait: Duration,
    },
    /// One attempt's report (delivered, or not with its reason), and the wait before
    /// the next one after a failure.
    Attempted {
        domain: &'a Domain,
        report: &'a replay::Report,
        wait: Option<Duration>,
    },
    /// A push is owed that was not before (a `commit --push` or `push oci://` whose far
    /// end did not answer).
    PushOwed {
        item: &'a crate::store::outbox::Owed,
    },
    /// An outbox file that cannot be used (named each time the outbox is listed).
    OutboxDamaged { what: &'a str },
    /// One delivery of an owed push, and the wait before the next one if it is still owed.
    Pushed {
        item: &'a crate::store::outbox::Owed,
        outcome: &'a Pushed,
        wait: Option<Duration>,
    },
    /// An attempt ended in an error of its own, not the far end's: the store cannot be
    /// read or written, or the recorded target cannot be used as it is (a context the
    /// kubeconfig no longer names).
    Failed {
        domain: &'a Domain,
        error: &'a crate::Error,
        wait: Option<Duration>,
    },
    /// The store's folder was removed or replaced while the loop ran: its lock no longer
    /// guards the store, so the loop stops (a restart serves the store as it is now).
    StoreLost { store: &'a std::path::Path },
    /// SIGHUP: the project's kubeconfigs and settings were read again (or not).
    Reloaded { error: Option<&'a crate::Error> },
    /// SIGINT/SIGTERM: no new attempt starts; `in_flight` are let finish.
    Stopping { signal: i32, in_flight: usize },
}

/// What the loop needs from the command line.
///
/// The project and the cluster access as they are now (read again on SIGHUP), where events go, and a look at the schedule
/// after every change (the metrics, the service manager's watchdog).
pub trait Host: Sync {
    /// # Errors
    /// The project or its settings cannot be read.
    fn load(&self) -> Result<(Project, Access)>;
    fn event(&self, event: &Event<'_>);
    fn tick(&self, view: &View<'_>);
}

/// What the loop knows at a tick: every domain's cluster slot and every owed push's.
pub struct View<'a> {
    pub clusters: &'a Schedule,
    pub pushes: &'a Schedule<String>,
    /// The owed pushes, by the key of their slot.
    pub push_items: &'a HashMap<String, crate::store::outbox::Owed>,
}

enum Msg {
    Probed(Domain, std::result::Result<(), Reason>),
    Attempted(Domain, Box<Result<replay::Report>>),
    Pushed(String, Pushed),
    Stop(i32),
}

/// Work for a worker: a domain's cluster delivery, or an owed push (its slot's key and
/// the item).
enum Job {
    Cluster(Domain),
    Push(String, Box<crate::store::outbox::Owed>),
}

/// How one generation of the loop (one reading of the project) ended.
enum End {
    Stop,
    Reload,
    /// The store's folder was removed or replaced: its lock no longer guards it.
    StoreLost,
}

/// The loop's memory across reloads.
struct State {
    schedule: Schedule,
    tail: changes::Tail,
    /// Per domain: where its probe goes and the API server it delivers to; read again
    /// when its store changes.
    endpoints: HashMap<Domain, Option<Aim>>,
    /// Servers with a delivery in flight.
    servers: HashSet<String>,
    /// Domains waiting for a server's delivery in flight to end, in turn.
    parked: HashMap<String, std::collections::VecDeque<Domain>>,
    /// Domains granted an attempt (their server reserved): running, or in `ready`.
    attempting: HashMap<Domain, Option<String>>,
    /// Granted attempts waiting for a free worker, in turn: a job is handed to a worker
    /// only when one is free, so its `--timeout` starts when it does.
    ready: std::collections::VecDeque<Domain>,
    /// Jobs on the workers (attempts and pushes): never more than `--parallel`.
    running: usize,
    probing: usize,
    pushes: Pushes,
    pushing: usize,
    /// The Git push in flight (its key); the others wait their turn here.
    git_pushing: Option<String>,
    git_waiting: std::collections::VecDeque<String>,
    stopping: Option<i32>,
    /// This generation is ending: nothing new starts.
    draining: bool,
}

/// Runs until SIGINT or SIGTERM (then returns, exit 0), holding the store's loop lock
/// ([`Store::watch_lock`], taken by the caller before anything else binds or starts).
///
/// # Errors
/// The project cannot be read at the start, or the loop's threads cannot start.
pub fn run(w: &Watch<'_>, host: &dyn Host, one_loop: &crate::store::Lock) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let stop = Mutex::new(tx.clone());
    crate::util::signals::graceful(crate::util::signals::Graceful {
        stop: Box::new(move |s| drop(stop.lock().map(|t| t.send(Msg::Stop(s))))),
        grace: GRACE,
    });
    let hup = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    let _ = signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone());
    let probed = Mutex::new(tx.clone());
    let prober = Prober::start(w.opts.probe, move |d, r| {
        drop(probed.lock().map(|t| t.send(Msg::Probed(d, r))));
    })
    .map_err(crate::error::Error::Runtime)?;
    let mut loaded = host.load()?;
    let mut state = State {
        schedule: Schedule::new(
            w.base,
            w.cap,
            w.probe_every,
            crate::util::backoff::Rng::new(),
        ),
        tail: changes::Tail::at_end(w.store.root()),
        endpoints: HashMap::new(),
        servers: HashSet::new(),
        parked: HashMap::new(),
        attempting: HashMap::new(),
        ready: std::collections::VecDeque::new(),
        running: 0,
        probing: 0,
        pushes: Pushes::new(w.base, w.cap),
        pushing: 0,
        git_pushing: None,
        git_waiting: std::collections::VecDeque::new(),
        stopping: None,
        draining: false,
    };
    read_all(w, &mut state, Instant::now(), host, true);
    loop {
        let req = Request {
            project: &loaded.0,
            access: &loaded.1,
            opts: w.opts,
            allow_older: w.allow_older,
            retarget: w.retarget,
        };
        let generation = Generation {
            w,
            host,
            req: &req,
            prober: &prober,
            tx: &tx,
            hup: &hup,
            one_loop,
        };
        match generation.run(&mut state, &rx) {
            End::Stop => return Ok(()),
            End::StoreLost => {
                return Err(crate::error::Error::StoreReplaced {
                    store: w.store.root().to_path_buf(),
                });
            }
            End::Reload => match host.load() {
                Ok(l) => {
                    loaded = l;
                    state.endpoints.clear();
                    // Whatever the change hints missed is found now.
                    read_all(w, &mut state, Instant::now(), host, false);
                    state.schedule.retry_now(Instant::now());
                    host.event(&Event::Reloaded { error: None });
                }
                Err(e) => host.event(&Event::Reloaded { error: Some(&e) }),
            },
        }
    }
}

/// Reads every selected domain's queue (at the start, and when the change file cannot
/// tell what changed).
fn read_all(w: &Watch<'_>, state: &mut State, now: Instant, host: &dyn Host, start: bool) {
    let domains: Vec<Domain> = w
        .store
        .domains()
        .into_iter()
        .filter(|d| w.selection.picks(d.as_str()))
        .collect();
    for d in &domains {
        read_one(w, state, d, now, host, !start);
    }
    let gone: Vec<Domain> = state
        .schedule
        .slots()
        .map(|(d, _)| d)
        .filter(|d| !domains.contains(d))
        .cloned()
        .collect();
    for d in &gone {
        state.schedule.forget(d);
    }
    state.pushes.relist();
    look_at_outbox(w, state, now, host, !start);
    if start {
        host.event(&Event::Started {
            domains: domains.len(),
            owing: state.schedule.owing(),
        });
    }
}

/// Reads what `domain` owes now and schedules it.
fn read_one(
    w: &Watch<'_>,
    state: &mut State,
    domain: &Domain,
    now: Instant,
    host: &dyn Host,
    say: bool,
) {
    let store = w.store.domain(domain);
    state.endpoints.remove(domain);
    let mut applied = None;
    let (owed, oldest) = match store.queue(false) {
        Ok(q) => {
            applied = q.last_change_at(crate::store::State::Applied);
            let pending = q.pending();
            let oldest = pending
                .first()
                .and_then(|o| crate::util::time::parse_rfc3339(&o.at).map(|t| t.as_millisecond()));
            (pending.len(), oldest)
        }
        Err(_) if !crate::store::segments::Layout::new(store.dir()).exists() => {
            state.schedule.forget(domain);
            return;
        }
        // An unreadable queue is attempted: the replay says why, with its reason.
        Err(_) => (1, None),
    };
    let before = state.schedule.slot(domain).map_or(0, |s| s.owed);
    state.schedule.owed(domain, owed, oldest, now);
    if let Some(ms) = applied.and_then(|at| crate::util::time::parse_rfc3339(&at)) {
        state.schedule.delivered_before(domain, ms.as_millisecond());
    }
    if !say || owed <= before {
        return;
    }
    host.event(&Event::Owed { domain, owed });
    if let Some(slot) = state.schedule.slot(domain)
        && let Some(next) = slot.next.filter(|n| *n > now)
    {
        host.event(&Event::Waiting {
            domain,
            until: next - now,
            reason: slot.last_reason,
        });
    }
}

/// Lists the owed pushes again if the outbox changed; says what is newly owed.
fn look_at_outbox(w: &Watch<'_>, state: &mut State, now: Instant, host: &dyn Host, say: bool) {
    let (fresh, damaged) = state.pushes.refresh(w.store, &w.selection, now);
    for what in &damaged {
        host.event(&Event::OutboxDamaged { what });
    }
    for key in fresh.iter().filter(|_| say) {
        if let Some(item) = state.pushes.items.get(key) {
            host.event(&Event::PushOwed { item });
        }
    }
}

/// One reading of the project: its workers, and the loop until a stop or a reload.
struct Generation<'g> {
    w: &'g Watch<'g>,
    host: &'g dyn Host,
    req: &'g Request<'g>,
    prober: &'g Prober,
    tx: &'g Sender<Msg>,
    hup: &'g AtomicBool,
    one_loop: &'g crate::store::Lock,
}

impl Generation<'_> {
    fn run(&self, state: &mut State, rx: &Receiver<Msg>) -> End {
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let jobs_rx = Mutex::new(jobs_rx);
        std::thread::scope(|scope| {
            for _ in 0..self.w.parallel.max(1) {
                scope.spawn(|| self.worker(&jobs_rx));
            }
            let end = self.turn(state, rx, &jobs_tx);
            drop(jobs_tx);
            end
        })
    }

    /// Takes attempts off the queue until it closes.
    fn worker(&self, jobs: &Mutex<Receiver<Job>>) {
        loop {
            let Ok(job) = jobs.lock().map(|j| j.recv()) else {
                return;
            };
            let msg = match job {
                Err(_) => return,
                Ok(Job::Cluster(domain)) => {
                    let until = Instant::now() + self.req.opts.deadline;
                    let store = self.w.store.domain(&domain);
                    let report = replay::replay_until(self.req, &store, Some(until));
                    Msg::Attempted(domain, Box::new(report))
                }
                Ok(Job::Push(key, item)) => {
                    let pushed = pushes::deliver(self.w.store, &item, self.req.opts.deadline);
                    Msg::Pushed(key, pushed)
                }
            };
            let _ = self.tx.send(msg);
        }
    }

    /// The loop proper: read what changed, start what is due, take the answers.
    fn turn(&self, state: &mut State, rx: &Receiver<Msg>, jobs: &Sender<Job>) -> End {
        let mut draining: Option<(End, Instant)> = None;
        state.draining = false;
        let mut looked = Instant::now();
        let mut resynced = Instant::now();
        loop {
            let now = Instant::now();
            // The store and the change file are looked at four times a second, not on
            // every answer: a thousand probes a minute cost no path lookups.
            let look = now.duration_since(looked) >= LOOK;
            if draining.is_none() {
                draining = self.drain(state, now, look);
                if draining.is_some() {
                    state.draining = true;
                    self.unready(state, now);
                }
            }
            match &draining {
                Some((_, by))
                    if state.attempting.is_empty() && state.probing == 0 && state.pushing == 0
                        || now >= *by =>
                {
                    return draining.map_or(End::Stop, |(e, _)| e);
                }
                Some(_) => {}
                None => {
                    if now.duration_since(resynced) >= self.w.resync {
                        (resynced, looked) = (now, now);
                        read_all(self.w, state, now, self.host, false);
                    } else if look {
                        looked = now;
                        self.changes(state, now);
                        look_at_outbox(self.w, state, now, self.host, true);
                    }
                    self.start_due(state, now, jobs);
                }
            }
            self.host.tick(&View {
                clusters: &state.schedule,
                pushes: &state.pushes.schedule,
                push_items: &state.pushes.items,
            });
            // Draining, nothing new starts: what is due waits for the next generation
            // (waking for it would spin until the drain ends).
            // What falls due within a batch is taken at one wake-up: a thousand dark
            // domains probed every few seconds wake the loop a few times a second, not
            // once per domain.
            let wake = match &draining {
                Some((_, by)) => by.saturating_duration_since(now),
                None => state.schedule.next_wake().map_or(LOOK, |w| {
                    let until = w.saturating_duration_since(now);
                    if until.is_zero() {
                        until
                    } else {
                        until.max(BATCH)
                    }
                }),
            };
            match rx.recv_timeout(wake.min(LOOK)) {
                Ok(msg) => {
                    self.answer(state, msg, jobs);
                    // The answers that came together are taken together.
                    for msg in rx.try_iter().take(PROBES) {
                        self.answer(state, msg, jobs);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return End::Stop,
            }
        }
    }

    /// Whether this generation ends, and by when its attempts in flight must have: the
    /// store lost (looked at with the change file), SIGHUP, or a stop signal.
    fn drain(&self, state: &State, now: Instant, look: bool) -> Option<(End, Instant)> {
        if look && !self.one_loop.still_held() {
            self.host.event(&Event::StoreLost {
                store: self.w.store.root(),
            });
            return Some((End::StoreLost, now + GRACE));
        }
        if self.hup.swap(false, Ordering::Relaxed) {
            return Some((End::Reload, now + self.req.opts.deadline + GRACE));
        }
        let signal = state.stopping?;
        self.host.event(&Event::Stopping {
            signal,
            in_flight: state.running,
        });
        Some((End::Stop, now + GRACE))
    }

    /// Reads the domains written since the last look.
    fn changes(&self, state: &mut State, now: Instant) {
        let changed = state.tail.read();
        if changed.resync {
            read_all(self.w, state, now, self.host, false);
            return;
        }
        for name in changed.domains {
            if let Some(d) = Domain::new(&name).filter(|d| self.w.selection.picks(d.as_str())) {
                read_one(self.w, state, &d, now, self.host, true);
            }
        }
    }

    /// Starts the attempts that are due: a probe first when the far end is known.
    fn start_due(&self, state: &mut State, now: Instant, jobs: &Sender<Job>) {
        let room = PROBES.saturating_sub(state.probing + state.attempting.len());
        for domain in state.schedule.take_due(now, room) {
            self.launch(state, domain, jobs);
        }
        // A push is taken only when a worker is free for it.
        let free = self.w.parallel.max(1).saturating_sub(state.running);
        let room = free.saturating_sub(state.ready.len());
        for key in state.pushes.schedule.take_due(now, room) {
            self.push(state, key, jobs);
        }
    }

    /// Starts the delivery of an owed push. Git pushes run one at a time in a process
    /// (libgit2's transports are global): a Git push waits its turn, first come first
    /// served, so a remote that never answers holds the others up for one `--timeout`
    /// each turn, never for good.
    fn push(&self, state: &mut State, key: String, jobs: &Sender<Job>) {
        let Some(item) = state.pushes.items.get(&key) else {
            return;
        };
        let git = matches!(item.push, crate::store::outbox::Push::Git(_));
        if git && state.git_pushing.is_some() {
            state.git_waiting.push_back(key);
            return;
        }
        if git {
            state.git_pushing = Some(key.clone());
        }
        state.pushing += 1;
        state.running += 1;
        let _ = jobs.send(Job::Push(key, Box::new(item.clone())));
    }

    /// The next Git push waiting its turn, if any is still owed.
    fn next_git(&self, state: &mut State, jobs: &Sender<Job>, now: Instant) {
        state.git_pushing = None;
        while let Some(key) = state.git_waiting.pop_front() {
            if state.pushes.items.contains_key(&key) && !state.draining {
                self.push(state, key, jobs);
                return;
            }
            // Settled meanwhile (or stopping): off the schedule.
            let schedule = &mut state.pushes.schedule;
            schedule.finished(&key, Attempt::Nothing, now, now_ms());
            if !state.pushes.items.contains_key(&key) {
                schedule.owed(&key, 0, None, now);
            }
        }
    }

    /// Starts a taken domain: probed first when its far end is known; parked (still
    /// taken, off the timeline, costing nothing) while another domain's delivery to the
    /// same API server is in flight, and started when that one ends.
    fn launch(&self, state: &mut State, domain: Domain, jobs: &Sender<Job>) {
        if state
            .endpoints
            .get(&domain)
            .is_some_and(|a| a.as_ref().is_some_and(Aim::stale))
        {
            state.endpoints.remove(&domain);
        }
        let store = self.w.store.domain(&domain);
        let at = state
            .endpoints
            .entry(domain.clone())
            .or_insert_with(|| endpoint(self.req, &store))
            .clone();
        match at {
            Some(aim) if state.servers.contains(&aim.server) => {
                self.park(state, domain, aim.server);
            }
            Some(aim) => {
                state.probing += 1;
                self.prober.probe(domain, aim.endpoint);
            }
            None => self.attempt(state, domain, None, jobs),
        }
    }

    /// Parks `domain` behind the delivery in flight to `server`, and says so (`-v`).
    fn park(&self, state: &mut State, domain: Domain, server: String) {
        self.host.event(&Event::Parked {
            domain: &domain,
            server: &server,
        });
        state.parked.entry(server).or_default().push_back(domain);
    }

    fn attempt(
        &self,
        state: &mut State,
        domain: Domain,
        server: Option<String>,
        jobs: &Sender<Job>,
    ) {
        if let Some(s) = &server {
            state.servers.insert(s.clone());
        }
        state.attempting.insert(domain.clone(), server);
        state.ready.push_back(domain);
        self.start_ready(state, jobs);
    }

    /// Hands granted attempts to the workers that are free, in turn (none while
    /// draining: nothing new starts).
    fn start_ready(&self, state: &mut State, jobs: &Sender<Job>) {
        while state.running < self.w.parallel.max(1) && !state.draining {
            let Some(domain) = state.ready.pop_front() else {
                return;
            };
            state.running += 1;
            let _ = jobs.send(Job::Cluster(domain));
        }
    }

    /// A drain begins: the granted attempts no worker has started go back to the
    /// schedule, due at once (the next generation takes them), their servers freed.
    fn unready(&self, state: &mut State, now: Instant) {
        while let Some(domain) = state.ready.pop_front() {
            if let Some(Some(server)) = state.attempting.remove(&domain) {
                state.servers.remove(&server);
            }
            state.schedule.defer(&domain, now);
        }
    }

    /// One answer: a probe's, an attempt's, or a signal.
    fn answer(&self, state: &mut State, msg: Msg, jobs: &Sender<Job>) {
        let now = Instant::now();
        match msg {
            Msg::Stop(s) => state.stopping = Some(s),
            Msg::Probed(domain, result) => {
                state.probing = state.probing.saturating_sub(1);
                let server = state
                    .endpoints
                    .get(&domain)
                    .cloned()
                    .flatten()
                    .map(|a| a.server);
                match result {
                    Ok(()) if server.as_ref().is_some_and(|s| state.servers.contains(s)) => {
                        self.park(state, domain, server.unwrap_or_default());
                    }
                    Ok(()) if !state.draining => self.attempt(state, domain, server, jobs),
                    Ok(()) => state.schedule.defer(&domain, now),
                    Err(reason) => {
                        let wait =
                            state
                                .schedule
                                .finished(&domain, Attempt::Dark(reason), now, now_ms());
                        if let Some(wait) = wait {
                            self.host.event(&Event::Unanswered {
                                domain: &domain,
                                reason,
                                wait,
                            });
                        }
                    }
                }
            }
            Msg::Attempted(domain, report) => {
                self.attempted(state, domain, *report, now, jobs);
            }
            Msg::Pushed(key, pushed) => self.pushed(state, &key, &pushed, now, jobs),
        }
    }

    /// An owed push's delivery ended: settled, or its wait grows.
    fn pushed(
        &self,
        state: &mut State,
        key: &String,
        pushed: &Pushed,
        now: Instant,
        jobs: &Sender<Job>,
    ) {
        state.pushing = state.pushing.saturating_sub(1);
        state.running = state.running.saturating_sub(1);
        let git = state.git_pushing.as_ref() == Some(key);
        let attempt = match pushed {
            Pushed::Delivered { .. } => Attempt::Delivered,
            Pushed::Owed { reason, .. } => Attempt::Failed(reason.unwrap_or(Reason::Unreachable)),
            Pushed::Refused { .. } => Attempt::Failed(Reason::Rejected),
        };
        let wait = state.pushes.schedule.finished(key, attempt, now, now_ms());
        if let Some(item) = state.pushes.items.get(key) {
            self.host.event(&Event::Pushed {
                item,
                outcome: pushed,
                wait,
            });
        }
        if wait.is_none() {
            // Settled: the outbox no longer holds it (or holds a newer one).
            state.pushes.schedule.owed(key, 0, None, now);
            look_at_outbox(self.w, state, now, self.host, true);
        }
        if git {
            self.next_git(state, jobs, now);
        }
        self.start_ready(state, jobs);
    }

    fn attempted(
        &self,
        state: &mut State,
        domain: Domain,
        report: Result<replay::Report>,
        now: Instant,
        jobs: &Sender<Job>,
    ) {
        state.running = state.running.saturating_sub(1);
        self.start_ready(state, jobs);
        if let Some(Some(server)) = state.attempting.remove(&domain) {
            state.servers.remove(&server);
            // The next domain waiting for this server gets its turn.
            let next = state.parked.get_mut(&server).and_then(|q| q.pop_front());
            if state.parked.get(&server).is_some_and(|q| q.is_empty()) {
                state.parked.remove(&server);
            }
            match next {
                Some(next) if !state.draining => self.launch(state, next, jobs),
                // Its turn is the next generation's.
                Some(next) => state.schedule.defer(&next, now),
                None => {}
            }
        }
        let attempt = match &report {
            Ok(r) => match &r.outcome {
                Replayed::Delivered { .. } => Attempt::Delivered,
                Replayed::Nothing | Replayed::DryRun { .. } => Attempt::Nothing,
                // Owed and undeliverable: waits as a failure does, never due at once.
                Replayed::Damaged { .. } => Attempt::Errored,
                Replayed::NotApplied { reason, .. } => Attempt::Failed(*reason),
            },
            Err(_) => Attempt::Errored,
        };
        let wait = state.schedule.finished(&domain, attempt, now, now_ms());
        match &report {
            Ok(report) => self.host.event(&Event::Attempted {
                domain: &domain,
                report,
                wait,
            }),
            Err(error) => self.host.event(&Event::Failed {
                domain: &domain,
                error,
                wait,
            }),
        }
        if wait.is_none() {
            read_one(self.w, state, &domain, now, self.host, false);
        }
    }
}

/// Where `store`'s newest pending snapshot goes (see [`replay::endpoint`]), with the
/// modification times of the kubeconfig files it was read from.
fn endpoint(req: &Request<'_>, store: &DomainStore) -> Option<Aim> {
    let aimed = replay::endpoint(req, store)?;
    let (host, port) = aimed.addr;
    Some(Aim {
        endpoint: Endpoint { host, port },
        server: aimed.server,
        stamps: stamps(&aimed.files),
        files: aimed.files,
    })
}

/// A domain's far end as last read, and how to tell its kubeconfigs changed since.
#[derive(Debug, Clone)]
struct Aim {
    endpoint: Endpoint,
    server: String,
    files: Vec<std::path::PathBuf>,
    stamps: Vec<Option<std::time::SystemTime>>,
}

impl Aim {
    /// Whether a kubeconfig it was read from changed (one stat per file): a regenerated
    /// kubeconfig is read at the next attempt, without a SIGHUP.
    fn stale(&self) -> bool {
        stamps(&self.files) != self.stamps
    }
}

fn stamps(files: &[std::path::PathBuf]) -> Vec<Option<std::time::SystemTime>> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok())
        .collect()
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}
