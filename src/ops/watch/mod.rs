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

mod aim;
pub mod machine;
pub mod probe;
pub mod pushes;
mod reader;
pub mod schedule;

use super::replay::{self, Request};
use crate::cluster::Options;
use crate::cluster::access::Access;
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::Result;
use crate::project::Project;
use crate::store::Store;
use crate::store::outbox::Owed;
use machine::{Action, End, Input, Job, Limits, Machine, PROBES};
use probe::Prober;
use pushes::{Pushed, Pushes};
use reader::{Ask, Reader};
use schedule::Schedule;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// After SIGINT/SIGTERM, a delivery in flight gets this long to end (then it is
/// abandoned at a safe point and the process exits 0, within 5 s of the signal).
pub const GRACE: Duration = Duration::from_millis(4_500);

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
pub enum Event {
    /// The loop read the store: how many domains it serves and how many owe something.
    Started { domains: usize, owing: usize },
    /// A domain owes snapshots it did not owe before (or more of them).
    Owed { domain: Domain, owed: usize },
    /// A domain's change was seen but it is not attempted yet (`-v`).
    Waiting {
        domain: Domain,
        until: Duration,
        reason: Option<Reason>,
    },
    /// A domain waits for another domain's delivery to the same API server to end
    /// (`-v`): two never deliver at once.
    Parked { domain: Domain, server: String },
    /// A domain's far end stopped answering (said once, when it does; the probes that
    /// follow are `Unanswered`).
    Dark { domain: Domain, reason: Reason },
    /// A domain's far end answers again after `after` dark (said once).
    Back { domain: Domain, after: Duration },
    /// The probe found nothing answering (`-v`: it repeats at every backoff).
    Unanswered {
        domain: Domain,
        reason: Reason,
        wait: Duration,
    },
    /// One attempt's report (delivered, or not with its reason), and the wait before
    /// the next one after a failure.
    Attempted {
        domain: Domain,
        report: replay::Report,
        wait: Option<Duration>,
    },
    /// A push is owed that was not before (a `commit --push` or `push oci://` whose far
    /// end did not answer).
    PushOwed { item: Owed },
    /// An outbox file that cannot be used (named each time the outbox is listed).
    OutboxDamaged { what: String },
    /// One delivery of an owed push, and the wait before the next one if it is still owed.
    Pushed {
        item: Owed,
        outcome: Pushed,
        wait: Option<Duration>,
    },
    /// An attempt ended in an error of its own, not the far end's: the store cannot be
    /// read or written, or the recorded target cannot be used as it is (a context the
    /// kubeconfig no longer names).
    Failed {
        domain: Domain,
        error: crate::Error,
        wait: Option<Duration>,
    },
    /// The store's folder was removed or replaced while the loop ran: its lock no longer
    /// guards the store, so the loop stops (a restart serves the store as it is now).
    StoreLost { store: std::path::PathBuf },
    /// SIGHUP: the project's kubeconfigs and settings were read again (or not).
    Reloaded { error: Option<crate::Error> },
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
    fn event(&self, event: &Event);
    fn tick(&self, view: &View<'_>);
}

/// What the loop knows at a tick: every domain's cluster slot and every owed push's.
pub struct View<'a> {
    pub clusters: &'a Schedule,
    pub pushes: &'a Schedule<String>,
    /// The owed pushes, by the key of their slot.
    pub push_items: &'a HashMap<String, crate::store::outbox::Owed>,
}

/// Runs until SIGINT or SIGTERM (then returns, exit 0), holding the store's loop lock
/// ([`Store::watch_lock`], taken by the caller before anything else binds or starts).
///
/// The decisions are the [`Machine`]'s; this carries them out: the reads on a thread
/// of their own ([`reader`]), the probes on the probe thread, the attempts and pushes on
/// `--parallel` workers, and the answers fed back one at a time.
///
/// # Errors
/// The project cannot be read at the start, or the loop's threads cannot start.
pub fn run(w: &Watch<'_>, host: &dyn Host, one_loop: &crate::store::Lock) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Input>();
    let stop = Mutex::new(tx.clone());
    crate::util::signals::graceful(crate::util::signals::Graceful {
        stop: Box::new(move |s| {
            if let Ok(t) = stop.lock() {
                let _ = t.send(Input::Stop(s));
            }
        }),
        grace: GRACE,
    });
    let hup = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    let _ = signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone());
    let probed = Mutex::new(tx.clone());
    let prober = Prober::start(w.opts.probe, move |d, r| {
        if let Ok(t) = probed.lock() {
            let _ = t.send(Input::Probed(d, r));
        }
    })
    .map_err(crate::error::Error::Runtime)?;
    let mut loaded = host.load()?;
    let limits = Limits {
        parallel: w.parallel.max(1),
        resync: w.resync,
        deadline: w.opts.deadline,
    };
    let rng = crate::util::backoff::Rng::new();
    let clusters = Schedule::new(w.base, w.cap, w.probe_every, rng);
    let pushes = Pushes::new(w.base, w.cap);
    let mut machine = Machine::new(limits, clusters, pushes, Instant::now());
    let mut reader = Reader::new(w.store, &w.selection, one_loop);
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
        };
        match generation.run(&mut machine, &rx, &mut reader) {
            End::Stop => return Ok(()),
            End::StoreLost => {
                return Err(crate::error::Error::StoreReplaced {
                    store: w.store.root().to_path_buf(),
                });
            }
            End::Reload => match host.load() {
                Ok(l) => {
                    loaded = l;
                    machine.resume(true, Instant::now());
                    host.event(&Event::Reloaded { error: None });
                }
                Err(e) => {
                    machine.resume(false, Instant::now());
                    host.event(&Event::Reloaded { error: Some(e) });
                }
            },
        }
    }
}

/// One reading of the project: its workers and its reader, and the loop until a stop
/// or a reload.
struct Generation<'g> {
    w: &'g Watch<'g>,
    host: &'g dyn Host,
    req: &'g Request<'g>,
    prober: &'g Prober,
    tx: &'g Sender<Input>,
    hup: &'g AtomicBool,
}

/// Where the actions go.
struct Hands<'h> {
    jobs: &'h Sender<Job>,
    asks: &'h Sender<Ask>,
}

impl Generation<'_> {
    fn run(&self, machine: &mut Machine, rx: &Receiver<Input>, reader: &mut Reader<'_>) -> End {
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let (asks_tx, asks_rx) = mpsc::channel::<Ask>();
        let jobs_rx = Mutex::new(jobs_rx);
        let closing = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..self.w.parallel.max(1) {
                scope.spawn(|| self.worker(&jobs_rx));
            }
            let closing = &closing;
            scope.spawn(move || reader.serve(self.req, asks_rx, self.tx, closing));
            let hands = Hands {
                jobs: &jobs_tx,
                asks: &asks_tx,
            };
            let end = self.turn(machine, rx, &hands);
            closing.store(true, Ordering::Relaxed);
            drop(jobs_tx);
            drop(asks_tx);
            end
        })
    }

    /// Takes jobs off the queue until it closes.
    fn worker(&self, jobs: &Mutex<Receiver<Job>>) {
        loop {
            let Ok(Ok(job)) = jobs.lock().map(|j| j.recv()) else {
                return;
            };
            let input = match job {
                Job::Cluster(domain) => {
                    let until = Instant::now() + self.req.opts.deadline;
                    let store = self.w.store.domain(&domain);
                    let report = replay::replay_until(self.req, &store, Some(until));
                    Input::Attempted(domain, Box::new(report))
                }
                Job::Push(key, item) => {
                    let pushed = pushes::deliver(self.w.store, &item, self.req.opts.deadline);
                    Input::Pushed(key, pushed)
                }
            };
            let _ = self.tx.send(input);
        }
    }

    /// The loop proper: an input (or time passing) into the machine, its actions
    /// carried out, a look at the schedule for the metrics and the watchdog.
    fn turn(&self, machine: &mut Machine, rx: &Receiver<Input>, hands: &Hands<'_>) -> End {
        let mut input = Input::Tick;
        loop {
            if let Some(end) = self.feed(machine, input, hands) {
                return end;
            }
            // The answers that came together are taken together, then looked at once.
            for more in rx.try_iter().take(PROBES) {
                if let Some(end) = self.feed(machine, more, hands) {
                    return end;
                }
            }
            self.host.tick(&machine.view());
            if self.hup.swap(false, Ordering::Relaxed) {
                input = Input::Reload;
                continue;
            }
            input = match rx.recv_timeout(machine.wake(Instant::now())) {
                Ok(input) => input,
                Err(RecvTimeoutError::Timeout) => Input::Tick,
                Err(RecvTimeoutError::Disconnected) => return End::Stop,
            };
        }
    }

    /// One step of the machine, its actions carried out; the end of the generation if
    /// it decided so.
    fn feed(&self, machine: &mut Machine, input: Input, hands: &Hands<'_>) -> Option<End> {
        let mut end = None;
        for action in machine.step(input, Instant::now(), now_ms()) {
            let ask = match action {
                Action::Look => Ask::Look,
                Action::ReadAll { start } => Ask::All { start },
                Action::Read { domain, say } => Ask::One { domain, say },
                Action::ListOutbox => Ask::Outbox,
                Action::Aim { domain, known } => Ask::Aim { domain, known },
                Action::Probe(domain, endpoint) => {
                    self.prober.probe(domain, endpoint);
                    continue;
                }
                Action::Run(job) => {
                    let _ = hands.jobs.send(job);
                    continue;
                }
                Action::Say(event) => {
                    self.host.event(&event);
                    continue;
                }
                Action::End(e) => {
                    end = Some(e);
                    continue;
                }
            };
            let _ = hands.asks.send(ask);
        }
        end
    }
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}
