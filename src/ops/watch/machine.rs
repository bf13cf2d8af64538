//! The delivery loop's decisions as a state machine, without threads, clocks or I/O.
//!
//! [`Machine::step`] takes one [`Input`] (a reading of the store, a probe's or an
//! attempt's answer, a signal, or time passing) at the time `now` and returns the
//! [`Action`]s it decides: what to read, probe, attempt or say, and when the loop's
//! generation ends. [`super::run`] carries the actions out and feeds the answers back;
//! the tests below drive it with a fake clock.

use super::aim::Aim;
use super::probe::Endpoint;
use super::pushes::{Listing, Pushed, Pushes};
use super::replay::{Replayed, Report};
use super::schedule::{Attempt, Schedule};
use super::{Event, GRACE};
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::store::outbox::{Owed, Push};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often the change file and the outbox are looked at: what another process
/// records is seen within this. Also the longest the loop sleeps.
pub const LOOK: Duration = Duration::from_millis(250);
/// Probes and aims in flight at most (each probe holds a socket).
pub const PROBES: usize = 512;
/// The shortest sleep before a due time: what falls due within it is taken together.
const BATCH: Duration = Duration::from_millis(100);

/// What the machine is told.
#[derive(Debug)]
pub enum Input {
    /// Time passed.
    Tick,
    /// What `domain`'s store owes, as just read (`say`: what is newly owed is said).
    Read {
        domain: Domain,
        reading: Reading,
        say: bool,
    },
    /// A full read ended: every selected domain the store holds (the others are
    /// forgotten); `start`: the loop's first.
    Listed {
        domains: HashSet<Domain>,
        start: bool,
    },
    /// The outbox as listed (only when it changed); `say`: what is newly owed is said.
    Outbox {
        listing: Listing,
        say: bool,
    },
    /// A look ([`Action::Look`]) or a full read ([`Action::ReadAll`]) ended.
    Looked,
    /// Where a taken domain's newest pending snapshot goes (`None`: not known; its
    /// attempt says why).
    Aimed(Domain, Option<Aim>),
    Probed(Domain, Result<(), Reason>),
    Attempted(Domain, Box<crate::Result<Report>>),
    Pushed(String, Pushed),
    /// SIGINT or SIGTERM.
    Stop(i32),
    /// SIGHUP: the project is read again once the attempts in flight ended.
    Reload,
    /// The store's folder was removed or replaced: the loop's lock no longer guards it.
    StoreLost(PathBuf),
}

/// A domain's queue as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Its store is gone.
    Gone,
    /// `owed` pending snapshots, the oldest recorded at `oldest_ms`; the last delivery
    /// the store knows at `applied_ms` (Unix ms).
    Owes {
        owed: usize,
        oldest_ms: Option<i64>,
        applied_ms: Option<i64>,
    },
    /// The queue cannot be read: it is attempted, and the replay says why.
    Unreadable,
}

/// What the machine decided.
#[derive(Debug)]
pub enum Action {
    /// Read the domains written since the last look, the outbox if it changed, and
    /// whether the lock still guards the store; answer [`Input::Looked`] at the end.
    Look,
    /// Read every selected domain and the whole outbox; answer [`Input::Listed`], then
    /// [`Input::Looked`].
    ReadAll {
        start: bool,
    },
    /// Read one domain again.
    Read {
        domain: Domain,
        say: bool,
    },
    /// List the outbox if it changed (a push settled).
    ListOutbox,
    /// Find where `domain`'s newest pending snapshot goes (`known`: as found before,
    /// kept while its kubeconfigs are unchanged).
    Aim {
        domain: Domain,
        known: Option<Option<Aim>>,
    },
    Probe(Domain, Endpoint),
    /// Hand a job to a free worker (never more than `--parallel` at once).
    Run(Job),
    Say(Event),
    /// This generation ends (every attempt answered, or its time is up).
    End(End),
}

/// Work for a worker: a domain's cluster delivery, or an owed push (its slot's key and
/// the item).
#[derive(Debug)]
pub enum Job {
    Cluster(Domain),
    Push(String, Box<Owed>),
}

/// How one generation of the loop (one reading of the project) ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Stop,
    Reload,
    /// The store's folder was removed or replaced.
    StoreLost,
}

/// How the machine runs.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Jobs on the workers at once (`--parallel`).
    pub parallel: usize,
    /// How often everything is read in full (`--resync-period`).
    pub resync: Duration,
    /// One attempt's bound (`--timeout`): a reload waits this long for the attempts in
    /// flight, and the grace after it.
    pub deadline: Duration,
}

/// The loop's memory: every domain's and owed push's schedule, and what is in flight.
pub struct Machine {
    limits: Limits,
    schedule: Schedule,
    pushes: Pushes,
    /// Per domain: where its probe goes and the API server it delivers to (`None`: not
    /// known); forgotten when its store changes.
    endpoints: HashMap<Domain, Option<Aim>>,
    /// Domains taken whose aim is being found, and whether their store was not read
    /// again since it was asked (only then is the answer kept for the next attempt).
    aiming: HashMap<Domain, bool>,
    /// Servers with a delivery in flight.
    servers: HashSet<String>,
    /// Domains waiting for a server's delivery in flight to end, in turn.
    parked: HashMap<String, VecDeque<Domain>>,
    /// Domains granted an attempt (their server reserved): running, or in `ready`.
    attempting: HashMap<Domain, Option<String>>,
    /// Granted attempts waiting for a free worker, in turn: a job is handed to a worker
    /// only when one is free, so its `--timeout` starts when it does.
    ready: VecDeque<Domain>,
    /// Jobs on the workers (attempts and pushes).
    running: usize,
    /// Domains whose probe is in flight, with the API server their attempt goes to.
    probing: HashMap<Domain, String>,
    pushing: usize,
    /// The Git push in flight (its key); the others wait their turn here.
    git_pushing: Option<String>,
    git_waiting: VecDeque<String>,
    stopping: Option<i32>,
    /// Domains whose far end answers nothing, since when: each change said once.
    dark: HashMap<Domain, Instant>,
    /// This generation is ending (nothing new starts): why, and by when.
    ending: Option<(End, Instant)>,
    /// A look or a full read is asked and not answered yet: the next waits for it.
    reading: bool,
    looked: Instant,
    resynced: Instant,
    out: Vec<Action>,
}

impl Machine {
    /// A machine that knows nothing yet; its first step reads everything.
    pub fn new(limits: Limits, clusters: Schedule, pushes: Pushes, now: Instant) -> Machine {
        Machine {
            limits,
            schedule: clusters,
            pushes,
            endpoints: HashMap::new(),
            aiming: HashMap::new(),
            servers: HashSet::new(),
            parked: HashMap::new(),
            attempting: HashMap::new(),
            ready: VecDeque::new(),
            running: 0,
            probing: HashMap::new(),
            pushing: 0,
            git_pushing: None,
            git_waiting: VecDeque::new(),
            stopping: None,
            dark: HashMap::new(),
            ending: None,
            reading: true,
            looked: now,
            resynced: now,
            out: vec![Action::ReadAll { start: true }],
        }
    }

    /// Takes `input` at `now` (`now_ms`: the wall clock, for what is recorded) and
    /// returns what to do.
    pub fn step(&mut self, input: Input, now: Instant, now_ms: i64) -> Vec<Action> {
        self.take(input, now, now_ms);
        if self.ending.is_none() {
            self.begin_end(now);
        }
        if self.ending.is_none() {
            self.timers(now);
            self.start_due(now);
        }
        self.end_when_drained(now);
        std::mem::take(&mut self.out)
    }

    /// A new generation begins after the last ended (`reloaded`: the project was read
    /// again, so every far end is looked up again and whatever waits is tried now).
    pub fn resume(&mut self, reloaded: bool, now: Instant) {
        self.ending = None;
        self.looked = now;
        self.resynced = now;
        self.reading = false;
        if reloaded {
            self.endpoints.clear();
            self.schedule.retry_now(now);
            // Whatever the change hints missed is found now.
            self.reading = true;
            self.out.push(Action::ReadAll { start: false });
        }
    }

    /// How long the loop may sleep before its next step, with nothing else to wake it.
    pub fn wake(&self, now: Instant) -> Duration {
        if let Some((_, by)) = self.ending {
            // Nothing new starts while draining: what is due waits for the next
            // generation (waking for it would spin until the drain ends).
            return by.saturating_duration_since(now).min(LOOK);
        }
        let look = (self.looked + LOOK).saturating_duration_since(now);
        // What is due but has no room (probes or workers all taken) waits for an
        // answer to free one, not for time: waking for it would spin.
        let clusters = self.probing.len() + self.aiming.len() + self.attempting.len() < PROBES;
        let pushes = self.running + self.ready.len() < self.limits.parallel.max(1);
        let due = [
            clusters.then(|| self.schedule.next_wake()).flatten(),
            pushes.then(|| self.pushes.schedule.next_wake()).flatten(),
        ]
        .into_iter()
        .flatten()
        .min()
        .map_or(LOOK, |at| {
            // What falls due within a batch is taken at one wake-up: a thousand
            // dark domains wake the loop a few times a second, not once each.
            let until = at.saturating_duration_since(now);
            if until.is_zero() {
                until
            } else {
                until.max(BATCH)
            }
        });
        look.max(Duration::from_millis(1)).min(due).min(LOOK)
    }

    /// What the metrics and the status line show.
    pub fn view(&self) -> super::View<'_> {
        super::View {
            clusters: &self.schedule,
            pushes: &self.pushes.schedule,
            push_items: &self.pushes.items,
        }
    }

    fn say(&mut self, event: Event) {
        self.out.push(Action::Say(event));
    }

    fn take(&mut self, input: Input, now: Instant, now_ms: i64) {
        match input {
            Input::Tick => {}
            Input::Read {
                domain,
                reading,
                say,
            } => self.read(domain, reading, say, now),
            Input::Listed { domains, start } => self.listed(&domains, start),
            Input::Outbox { listing, say } => self.outbox(listing, say, now),
            Input::Looked => self.reading = false,
            Input::Aimed(domain, aim) => self.aimed(domain, aim),
            Input::Probed(domain, result) => self.probed(domain, result, now, now_ms),
            Input::Attempted(domain, report) => self.attempted(domain, *report, now, now_ms),
            Input::Pushed(key, pushed) => self.pushed(key, pushed, now, now_ms),
            Input::Stop(signal) => self.stopping = Some(signal),
            Input::Reload => self.drain(End::Reload, now + self.limits.deadline + GRACE, now),
            Input::StoreLost(store) => {
                self.say(Event::StoreLost { store });
                self.drain(End::StoreLost, now + GRACE, now);
            }
        }
    }

    /// A stop signal ends the generation (once one is not ending already).
    fn begin_end(&mut self, now: Instant) {
        if let Some(signal) = self.stopping {
            self.say(Event::Stopping {
                signal,
                in_flight: self.running,
            });
            self.drain(End::Stop, now + GRACE, now);
        }
    }

    /// The generation ends by `by`: nothing new starts; the granted attempts no worker
    /// has started, and the domains whose aim is being found, go back to the schedule,
    /// due at once (the next generation takes them), their servers freed.
    fn drain(&mut self, end: End, by: Instant, now: Instant) {
        if self.ending.is_some() {
            return;
        }
        self.ending = Some((end, by));
        while let Some(domain) = self.ready.pop_front() {
            if let Some(Some(server)) = self.attempting.remove(&domain) {
                self.servers.remove(&server);
            }
            self.schedule.defer(&domain, now);
        }
        for domain in std::mem::take(&mut self.aiming).into_keys() {
            self.schedule.defer(&domain, now);
        }
    }

    fn end_when_drained(&mut self, now: Instant) {
        let Some((end, by)) = self.ending else {
            return;
        };
        let idle = self.attempting.is_empty() && self.probing.is_empty() && self.pushing == 0;
        if idle || now >= by {
            self.out.push(Action::End(end));
        }
    }

    /// The change file and the outbox are looked at four times a second, everything is
    /// read on the resync period; one read at a time.
    fn timers(&mut self, now: Instant) {
        if self.reading {
            return;
        }
        if now.duration_since(self.resynced) >= self.limits.resync {
            (self.resynced, self.looked) = (now, now);
            self.reading = true;
            self.out.push(Action::ReadAll { start: false });
        } else if now.duration_since(self.looked) >= LOOK {
            self.looked = now;
            self.reading = true;
            self.out.push(Action::Look);
        }
    }

    /// What `domain` owes now, scheduled.
    fn read(&mut self, domain: Domain, reading: Reading, say: bool, now: Instant) {
        self.endpoints.remove(&domain);
        if let Some(unread) = self.aiming.get_mut(&domain) {
            *unread = false;
        }
        let (owed, oldest, applied) = match reading {
            Reading::Gone => {
                self.dark.remove(&domain);
                self.schedule.forget(&domain);
                return;
            }
            Reading::Owes {
                owed,
                oldest_ms,
                applied_ms,
            } => (owed, oldest_ms, applied_ms),
            Reading::Unreadable => (1, None, None),
        };
        let before = self.schedule.slot(&domain).map_or(0, |s| s.owed);
        self.schedule.owed(&domain, owed, oldest, now);
        let readable = reading != Reading::Unreadable;
        self.schedule.readable(&domain, readable);
        if let Some(ms) = applied {
            self.schedule.delivered_before(&domain, ms);
        }
        if !say || owed <= before {
            return;
        }
        let waiting = self.schedule.slot(&domain).and_then(|s| {
            s.next
                .filter(|n| *n > now)
                .map(|n| (n - now, s.last_reason))
        });
        self.say(Event::Owed {
            domain: domain.clone(),
            owed,
        });
        if let Some((until, reason)) = waiting {
            self.say(Event::Waiting {
                domain,
                until,
                reason,
            });
        }
    }

    fn listed(&mut self, domains: &HashSet<Domain>, start: bool) {
        let gone: Vec<Domain> = self
            .schedule
            .slots()
            .map(|(d, _)| d)
            .filter(|d| !domains.contains(*d))
            .cloned()
            .collect();
        for d in &gone {
            self.schedule.forget(d);
        }
        if start {
            self.say(Event::Started {
                domains: domains.len(),
                owing: self.schedule.owing(),
            });
        }
    }

    fn outbox(&mut self, mut listing: Listing, say: bool, now: Instant) {
        let damaged = std::mem::take(&mut listing.damaged);
        let fresh = self.pushes.apply(listing, now);
        for what in damaged {
            self.say(Event::OutboxDamaged { what });
        }
        for key in fresh.iter().filter(|_| say) {
            if let Some(item) = self.pushes.items.get(key) {
                let item = item.clone();
                self.say(Event::PushOwed { item });
            }
        }
    }

    /// Starts the attempts that are due (each domain's aim found first), and the owed
    /// pushes a free worker can take.
    fn start_due(&mut self, now: Instant) {
        let room =
            PROBES.saturating_sub(self.probing.len() + self.aiming.len() + self.attempting.len());
        for domain in self.schedule.take_due(now, room) {
            self.aim(domain);
        }
        let free = self.limits.parallel.max(1).saturating_sub(self.running);
        let room = free.saturating_sub(self.ready.len());
        for key in self.pushes.schedule.take_due(now, room) {
            self.push(key);
        }
    }

    /// Asks where a taken domain goes (the answer comes as [`Input::Aimed`]).
    fn aim(&mut self, domain: Domain) {
        let known = self.endpoints.get(&domain).cloned();
        self.aiming.insert(domain.clone(), true);
        self.out.push(Action::Aim { domain, known });
    }

    /// A taken domain's far end is known: probed first; parked (still taken, off the
    /// timeline, costing nothing) while another domain's delivery to the same API
    /// server is in flight, and started when that one ends. An answer for a domain no
    /// longer taken (a drain gave it back) is dropped.
    fn aimed(&mut self, domain: Domain, aim: Option<Aim>) {
        let Some(unread) = self.aiming.remove(&domain) else {
            return;
        };
        if unread {
            self.endpoints.insert(domain.clone(), aim.clone());
        }
        match aim {
            Some(aim) if self.servers.contains(&aim.server) => self.park(domain, aim.server),
            Some(aim) => {
                self.probing.insert(domain.clone(), aim.server);
                self.out.push(Action::Probe(domain, aim.endpoint));
            }
            None => self.attempt(domain, None),
        }
    }

    /// Parks `domain` behind the delivery in flight to `server`, and says so (`-v`).
    fn park(&mut self, domain: Domain, server: String) {
        self.say(Event::Parked {
            domain: domain.clone(),
            server: server.clone(),
        });
        self.parked.entry(server).or_default().push_back(domain);
    }

    fn attempt(&mut self, domain: Domain, server: Option<String>) {
        if let Some(s) = &server {
            self.servers.insert(s.clone());
        }
        self.attempting.insert(domain.clone(), server);
        self.ready.push_back(domain);
        self.start_ready();
    }

    /// Hands granted attempts to the workers that are free, in turn (none while
    /// ending: nothing new starts).
    fn start_ready(&mut self) {
        while self.running < self.limits.parallel.max(1) && self.ending.is_none() {
            let Some(domain) = self.ready.pop_front() else {
                return;
            };
            self.running += 1;
            self.out.push(Action::Run(Job::Cluster(domain)));
        }
    }

    fn probed(&mut self, domain: Domain, result: Result<(), Reason>, now: Instant, now_ms: i64) {
        // The server as aimed at, even if the store was read again meanwhile.
        let server = self.probing.remove(&domain);
        if result.is_ok()
            && let Some(since) = self.dark.remove(&domain)
        {
            self.say(Event::Back {
                domain: domain.clone(),
                after: now.saturating_duration_since(since),
            });
        }
        match result {
            Ok(()) if server.as_ref().is_some_and(|s| self.servers.contains(s)) => {
                self.park(domain, server.unwrap_or_default());
            }
            Ok(()) if self.ending.is_none() => self.attempt(domain, server),
            Ok(()) => self.schedule.defer(&domain, now),
            Err(reason) => {
                if !self.dark.contains_key(&domain) {
                    self.dark.insert(domain.clone(), now);
                    self.say(Event::Dark {
                        domain: domain.clone(),
                        reason,
                    });
                }
                let attempt = Attempt::Dark(reason);
                if let Some(wait) = self.schedule.finished(&domain, attempt, now, now_ms) {
                    self.say(Event::Unanswered {
                        domain,
                        reason,
                        wait,
                    });
                }
            }
        }
    }

    /// A domain's attempt ended: its server's next parked domain gets its turn, and the
    /// domain waits (a failure), or is read again (delivered, or nothing owed).
    fn attempted(
        &mut self,
        domain: Domain,
        report: crate::Result<Report>,
        now: Instant,
        now_ms: i64,
    ) {
        self.running = self.running.saturating_sub(1);
        self.start_ready();
        if let Some(Some(server)) = self.attempting.remove(&domain) {
            self.free(&server, now);
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
        let wait = self.schedule.finished(&domain, attempt, now, now_ms);
        if wait.is_none() {
            self.out.push(Action::Read {
                domain: domain.clone(),
                say: false,
            });
        }
        self.say(match report {
            Ok(report) => Event::Attempted {
                domain,
                report,
                wait,
            },
            Err(error) => Event::Failed {
                domain,
                error,
                wait,
            },
        });
    }

    /// `server`'s delivery ended: the next domain waiting for it gets its turn.
    fn free(&mut self, server: &str, now: Instant) {
        self.servers.remove(server);
        let next = self.parked.get_mut(server).and_then(VecDeque::pop_front);
        if self.parked.get(server).is_some_and(VecDeque::is_empty) {
            self.parked.remove(server);
        }
        match next {
            Some(next) if self.ending.is_none() => self.aim(next),
            // Its turn is the next generation's.
            Some(next) => self.schedule.defer(&next, now),
            None => {}
        }
    }

    /// Starts the delivery of an owed push. Git pushes run one at a time in a process
    /// (libgit2's transports are global): a Git push waits its turn, first come first
    /// served, so a remote that never answers holds the others up for one `--timeout`
    /// each turn, never for good.
    fn push(&mut self, key: String) {
        let Some(item) = self.pushes.items.get(&key) else {
            return;
        };
        let git = matches!(item.push, Push::Git(_));
        if git && self.git_pushing.is_some() {
            self.git_waiting.push_back(key);
            return;
        }
        let job = Job::Push(key.clone(), Box::new(item.clone()));
        if git {
            self.git_pushing = Some(key);
        }
        self.pushing += 1;
        self.running += 1;
        self.out.push(Action::Run(job));
    }

    /// The next Git push waiting its turn, if any is still owed.
    fn next_git(&mut self, now: Instant, now_ms: i64) {
        self.git_pushing = None;
        while let Some(key) = self.git_waiting.pop_front() {
            if self.pushes.items.contains_key(&key) && self.ending.is_none() {
                self.push(key);
                return;
            }
            // Settled meanwhile (or ending): off the schedule.
            let schedule = &mut self.pushes.schedule;
            schedule.finished(&key, Attempt::Nothing, now, now_ms);
            if !self.pushes.items.contains_key(&key) {
                schedule.owed(&key, 0, None, now);
            }
        }
    }

    /// An owed push's delivery ended: settled, or its wait grows.
    fn pushed(&mut self, key: String, pushed: Pushed, now: Instant, now_ms: i64) {
        self.pushing = self.pushing.saturating_sub(1);
        self.running = self.running.saturating_sub(1);
        let git = self.git_pushing.as_ref() == Some(&key);
        let attempt = match &pushed {
            Pushed::Delivered { .. } => Attempt::Delivered,
            Pushed::Owed { reason, .. } => Attempt::Failed(reason.unwrap_or(Reason::Unreachable)),
            Pushed::Refused { .. } => Attempt::Failed(Reason::Rejected),
        };
        let wait = self.pushes.schedule.finished(&key, attempt, now, now_ms);
        if let Some(item) = self.pushes.items.get(&key).cloned() {
            self.say(Event::Pushed {
                item,
                outcome: pushed,
                wait,
            });
        }
        if wait.is_none() {
            // Settled: the outbox no longer holds it (or holds a newer one).
            self.pushes.schedule.owed(&key, 0, None, now);
            self.out.push(Action::ListOutbox);
        }
        if git {
            self.next_git(now, now_ms);
        }
        self.start_ready();
    }
}

#[cfg(test)]
mod tests {
    //! The machine against a simulated world on a fake clock: stores that owe, far ends
    //! that deliver, hang, refuse, stay dark or hold a damaged snapshot, and the loop's
    //! promises checked at every step — never more attempts than workers, never two
    //! at one API server, never a spin, and what is owed delivered once it can be.

    use super::*;
    use crate::cluster::Delivery;
    use crate::snapshot_id::SnapshotId;
    use crate::util::backoff::Rng;
    use std::collections::BTreeMap;

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);
    const DEADLINE: Duration = Duration::from_secs(20);

    /// How a domain's far end behaves.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Far {
        Delivers,
        /// The probe answers, the attempt hangs until its `--timeout`.
        Hangs,
        Refuses,
        /// Owed, and no attempt can deliver it (an object of the snapshot missing).
        Damaged,
        /// Nothing answers the probe.
        Dark,
    }

    fn d(i: usize) -> Domain {
        Domain::parse(&format!("d{i}.example")).unwrap()
    }

    struct World {
        m: Machine,
        parallel: usize,
        now: Instant,
        ms: i64,
        /// Answers on their way, by arrival time (then by order sent).
        inbox: BTreeMap<(Instant, u64), Input>,
        sent: u64,
        owed: BTreeMap<Domain, usize>,
        server: HashMap<Domain, String>,
        far: HashMap<Domain, Far>,
        /// Written since the last look, when the change file tells (`hints`).
        written: Vec<Domain>,
        hints: bool,
        in_flight: HashMap<Domain, String>,
        runs: HashMap<Domain, usize>,
        probes: usize,
        delivered: HashMap<Domain, Instant>,
        events: Vec<Event>,
        ends: Vec<End>,
    }

    impl World {
        fn new(parallel: usize, resync: Duration) -> World {
            let now = Instant::now();
            let limits = Limits {
                parallel,
                resync,
                deadline: DEADLINE,
            };
            let clusters = Schedule::new(5 * S, 300 * S, 10 * S, Rng::seeded(7));
            World {
                m: Machine::new(limits, clusters, Pushes::new(5 * S, 300 * S), now),
                parallel,
                now,
                ms: 1_800_000_000_000,
                inbox: BTreeMap::new(),
                sent: 0,
                owed: BTreeMap::new(),
                server: HashMap::new(),
                far: HashMap::new(),
                written: Vec::new(),
                hints: true,
                in_flight: HashMap::new(),
                runs: HashMap::new(),
                probes: 0,
                delivered: HashMap::new(),
                events: Vec::new(),
                ends: Vec::new(),
            }
        }

        /// Domain `i` owes `owed`, delivers to `server`, and behaves as `far`.
        fn domain(&mut self, i: usize, owed: usize, server: &str, far: Far) {
            self.owed.insert(d(i), owed);
            self.server.insert(d(i), server.to_string());
            self.far.insert(d(i), far);
        }

        /// Another process records a snapshot of domain `i`.
        fn record(&mut self, i: usize) {
            *self.owed.entry(d(i)).or_default() += 1;
            self.written.push(d(i));
        }

        fn answer(&mut self, after: Duration, input: Input) {
            self.sent += 1;
            self.inbox.insert((self.now + after, self.sent), input);
        }

        fn reading(&self, domain: &Domain) -> Reading {
            match self.owed.get(domain) {
                None => Reading::Gone,
                Some(&owed) => Reading::Owes {
                    owed,
                    oldest_ms: Some(1),
                    applied_ms: None,
                },
            }
        }

        /// Runs the loop for `span` of fake time (or until its generation ends),
        /// checking its promises at each step.
        fn run(&mut self, span: Duration) {
            let until = self.now + span;
            let mut idle_steps = 0;
            loop {
                let wake = self.now + self.m.wake(self.now);
                let next = self.inbox.keys().next().map(|k| k.0);
                let at = next.map_or(wake, |n| n.min(wake));
                if at > until {
                    self.ms += (until - self.now).as_millis() as i64;
                    self.now = until;
                    return;
                }
                let input = match next {
                    Some(n) if n == at => self.inbox.pop_first().unwrap().1,
                    _ => Input::Tick,
                };
                idle_steps = match (&input, at == self.now) {
                    (Input::Tick, true) => idle_steps + 1,
                    _ => 0,
                };
                assert!(
                    idle_steps < 50,
                    "the loop spins: woken at once, again and again"
                );
                self.ms += (at - self.now).as_millis() as i64;
                self.now = at;
                self.observe(&input);
                let actions = self.m.step(input, at, self.ms);
                for action in actions {
                    self.act(action);
                }
                if !self.ends.is_empty() {
                    // The generation ended: the executor steps no more until it resumes.
                    return;
                }
            }
        }

        fn act(&mut self, action: Action) {
            match action {
                Action::Look => {
                    let hints = self.hints;
                    for domain in std::mem::take(&mut self.written) {
                        if hints {
                            self.read(domain, true);
                        }
                    }
                    self.answer(MS, Input::Looked);
                }
                Action::ReadAll { start } => {
                    for domain in self.owed.keys().cloned().collect::<Vec<_>>() {
                        self.read(domain, !start);
                    }
                    let domains = self.owed.keys().cloned().collect();
                    self.answer(MS, Input::Listed { domains, start });
                    self.answer(MS, Input::Looked);
                }
                Action::Read { domain, say } => self.read(domain, say),
                Action::ListOutbox => {}
                Action::Aim { domain, .. } => {
                    let server = self.server[&domain].clone();
                    let endpoint = Endpoint {
                        host: server.clone(),
                        port: 443,
                    };
                    let aim = Aim::at(endpoint, &server);
                    self.answer(MS, Input::Aimed(domain, Some(aim)));
                }
                Action::Probe(domain, _) => {
                    self.probes += 1;
                    match self.far[&domain] {
                        Far::Dark => {
                            self.answer(2 * S, Input::Probed(domain, Err(Reason::Unreachable)))
                        }
                        _ => self.answer(5 * MS, Input::Probed(domain, Ok(()))),
                    }
                }
                Action::Run(Job::Cluster(domain)) => self.start(domain),
                Action::Run(Job::Push(..)) => panic!("no push is owed in this world"),
                Action::Say(event) => self.events.push(event),
                Action::End(end) => self.ends.push(end),
            }
        }

        /// What `domain`'s store owes, on its way to the machine.
        fn read(&mut self, domain: Domain, say: bool) {
            let reading = self.reading(&domain);
            let read = Input::Read {
                domain,
                reading,
                say,
            };
            self.answer(MS, read);
        }

        /// An attempt starts: the promises, then its answer on its way.
        fn start(&mut self, domain: Domain) {
            let server = self.server[&domain].clone();
            assert!(
                self.in_flight.len() < self.parallel,
                "more attempts than workers"
            );
            assert!(
                !self.in_flight.values().any(|s| *s == server),
                "two attempts at {server} at once"
            );
            assert!(
                self.in_flight
                    .insert(domain.clone(), server.clone())
                    .is_none()
            );
            *self.runs.entry(domain.clone()).or_default() += 1;
            let owed = self.owed.get(&domain).copied().unwrap_or(0);
            let (after, outcome) = match self.far[&domain] {
                _ if owed == 0 => (10 * MS, Replayed::Nothing),
                Far::Delivers => (50 * MS, delivered(&server)),
                Far::Hangs | Far::Dark => (DEADLINE, not_applied(Reason::Unreachable)),
                Far::Refuses => (100 * MS, not_applied(Reason::Rejected)),
                Far::Damaged => (10 * MS, Replayed::Damaged { pending: owed }),
            };
            let report = Report {
                outcome,
                notices: Vec::new(),
            };
            self.answer(after, Input::Attempted(domain, Box::new(Ok(report))));
        }

        /// The world's side of an answer as it arrives: the attempt is over, and what
        /// landed is no longer owed.
        fn observe(&mut self, input: &Input) {
            if let Input::Attempted(domain, report) = input {
                self.in_flight.remove(domain);
                if let Ok(Report {
                    outcome: Replayed::Delivered { .. },
                    ..
                }) = report.as_ref()
                {
                    self.owed.insert(domain.clone(), 0);
                    self.delivered.entry(domain.clone()).or_insert(self.now);
                }
            }
        }
    }

    fn delivered(server: &str) -> Replayed {
        Replayed::Delivered {
            snapshot: SnapshotId::new("s"),
            server: server.to_string(),
            delivery: Delivery::Stale {
                live_rendered_at: String::new(),
            },
            superseded: 0,
        }
    }

    fn not_applied(reason: Reason) -> Replayed {
        Replayed::NotApplied {
            reason,
            queued: 1,
            message: String::new(),
        }
    }

    fn attempts(w: &World, i: usize) -> usize {
        w.runs.get(&d(i)).copied().unwrap_or(0)
    }

    #[test]
    fn hundreds_of_domains_whose_probe_answers_and_attempt_hangs_hold_the_workers_and_no_more() {
        let mut w = World::new(4, 300 * S);
        for i in 0..300 {
            w.domain(i, 1, &format!("s{i}"), Far::Hangs);
        }
        w.domain(300, 1, "s300", Far::Delivers);
        w.run(30 * 60 * S);
        // Every domain got its turn, none more than its backoff allows.
        assert!((0..301).all(|i| attempts(&w, i) >= 1));
        assert!(
            (0..300).all(|i| attempts(&w, i) <= 8),
            "{:?}",
            w.runs.values().max()
        );
        assert!(w.delivered.contains_key(&d(300)));
        assert!(w.probes >= 300);
    }

    #[test]
    fn more_due_domains_than_room_wait_for_an_answer_not_for_time() {
        let mut w = World::new(4, 300 * S);
        for i in 0..PROBES + 100 {
            w.domain(i, 1, &format!("s{i}"), Far::Hangs);
        }
        // The spin check is the world's: woken at once again and again fails.
        w.run(120 * S);
        assert_eq!(w.in_flight.len(), 4);
        assert!(w.probes >= PROBES);
    }

    #[test]
    fn a_lost_change_hint_is_found_by_the_resync_period() {
        let mut w = World::new(4, 120 * S);
        w.domain(1, 0, "s1", Far::Delivers);
        w.hints = false;
        w.run(S);
        w.record(1);
        w.run(119 * S);
        assert!(
            !w.delivered.contains_key(&d(1)),
            "nothing told the loop yet"
        );
        w.run(2 * S);
        assert!(w.delivered.contains_key(&d(1)), "the resync found it");
    }

    #[test]
    fn a_snapshot_recorded_while_it_runs_is_delivered_within_a_look() {
        let mut w = World::new(4, 300 * S);
        w.domain(1, 0, "s1", Far::Delivers);
        w.run(S);
        w.record(1);
        let recorded = w.now;
        w.run(S);
        let took = w.delivered[&d(1)] - recorded;
        assert!(took <= LOOK + 100 * MS, "{took:?}");
    }

    #[test]
    fn a_reload_gives_the_queued_attempts_back_and_runs_them_in_the_next_generation() {
        let mut w = World::new(1, 300 * S);
        w.domain(0, 1, "s0", Far::Hangs);
        w.domain(1, 1, "s1", Far::Delivers);
        w.domain(2, 1, "s2", Far::Delivers);
        w.run(S);
        assert_eq!(w.in_flight.len(), 1, "one worker");
        let before: usize = w.runs.values().sum();
        let step = w.m.step(Input::Reload, w.now, w.ms);
        assert!(step.iter().all(|a| !matches!(a, Action::Run(_))));
        // Draining: nothing starts, nothing spins, the end comes when the hanging
        // attempt answers (at its --timeout).
        w.run(DEADLINE);
        assert_eq!(
            w.runs.values().sum::<usize>(),
            before,
            "nothing started while draining"
        );
        assert_eq!(w.ends, [End::Reload]);
        w.ends.clear();
        w.far.insert(d(0), Far::Delivers);
        w.m.resume(true, w.now);
        w.run(5 * S);
        assert!((0..3).all(|i| w.delivered.contains_key(&d(i))));
    }

    #[test]
    fn a_stop_ends_at_once_when_idle_and_after_the_grace_when_an_attempt_hangs() {
        let mut w = World::new(2, 300 * S);
        w.domain(0, 1, "s0", Far::Hangs);
        w.run(S);
        let stopped = w.now;
        w.answer(Duration::ZERO, Input::Stop(15));
        w.run(10 * S);
        assert_eq!(w.ends.first(), Some(&End::Stop));
        assert!(
            w.events
                .iter()
                .any(|e| matches!(e, Event::Stopping { in_flight: 1, .. }))
        );
        assert!(w.now >= stopped + GRACE);
    }

    #[test]
    fn a_damaged_snapshot_waits_longer_each_time_and_never_spins() {
        let mut w = World::new(4, 300 * S);
        w.domain(0, 1, "s0", Far::Damaged);
        w.run(3600 * S);
        let n = attempts(&w, 0);
        // 5 s doubling to 5 min (±20 %): about 17 attempts in an hour, not thousands.
        assert!((8..=25).contains(&n), "{n} attempts in an hour");
        let waits: Vec<Duration> = w
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Attempted { wait, .. } => *wait,
                _ => None,
            })
            .collect();
        assert_eq!(waits.len(), n, "each attempt said, with its wait");
    }

    #[test]
    fn a_dark_far_end_is_probed_on_its_cadence_and_delivered_within_seconds_of_returning() {
        let mut w = World::new(4, 300 * S);
        w.domain(0, 1, "s0", Far::Dark);
        w.run(3600 * S);
        assert_eq!(
            attempts(&w, 0),
            0,
            "nothing attempted while nothing answers"
        );
        // The probe cadence is capped at 10 s (±20 %), each probe waiting 2 s.
        assert!(
            (250..=400).contains(&w.probes),
            "{} probes in an hour",
            w.probes
        );
        // Said once when it went dark, once when it came back: not at every probe.
        let dark = |w: &World| {
            w.events
                .iter()
                .filter(|e| matches!(e, Event::Dark { .. }))
                .count()
        };
        assert_eq!(dark(&w), 1);
        w.far.insert(d(0), Far::Delivers);
        let back = w.now;
        w.run(30 * S);
        let backs: Vec<Duration> = w
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Back { after, .. } => Some(*after),
                _ => None,
            })
            .collect();
        assert!(backs.len() == 1 && backs[0] >= 3600 * S, "{backs:?}");
        assert_eq!(dark(&w), 1);
        let took = w.delivered[&d(0)] - back;
        assert!(took <= 12 * S + 2 * S, "{took:?}");
    }

    #[test]
    fn domains_at_one_api_server_deliver_in_turn() {
        let mut w = World::new(8, 300 * S);
        for i in 0..6 {
            w.domain(i, 1, "shared", Far::Delivers);
        }
        w.run(5 * S);
        assert!((0..6).all(|i| w.delivered.contains_key(&d(i))));
        assert!(w.events.iter().any(|e| matches!(e, Event::Parked { .. })));
    }

    #[test]
    fn a_random_world_keeps_every_promise() {
        let fars = [
            Far::Delivers,
            Far::Hangs,
            Far::Refuses,
            Far::Damaged,
            Far::Dark,
        ];
        for seed in 0..40 {
            let mut rng = Rng::seeded(seed);
            let mut pick = |n: usize| (rng.unit() * n as f64) as usize;
            let parallel = 1 + pick(6);
            let mut w = World::new(parallel, S * (60 + 60 * pick(5) as u32));
            let n = 5 + pick(40);
            for i in 0..n {
                let far = fars[pick(fars.len())];
                w.domain(i, pick(3), &format!("s{}", pick(8)), far);
            }
            for _ in 0..40 {
                match pick(10) {
                    0 => w
                        .far
                        .insert(d(pick(n)), fars[pick(fars.len())])
                        .map(drop)
                        .unwrap_or(()),
                    1 | 2 => w.record(pick(n)),
                    3 => w.hints = !w.hints,
                    4 if w.ends.is_empty() => w.answer(Duration::ZERO, Input::Reload),
                    _ => {}
                }
                w.run(S * (1 + pick(120)) as u32);
                if let Some(end) = w.ends.pop() {
                    assert_eq!(end, End::Reload, "seed {seed}");
                    w.m.resume(pick(2) == 0, w.now);
                }
            }
            // Then every far end delivers: within the longest backoff and a resync,
            // nothing is owed any more.
            for far in w.far.values_mut() {
                *far = Far::Delivers;
            }
            w.hints = true;
            w.run(900 * S);
            if let Some(end) = w.ends.pop() {
                w.m.resume(true, w.now);
                assert_eq!(end, End::Reload);
                w.run(900 * S);
            }
            let owing: Vec<_> = w.owed.iter().filter(|(_, o)| **o > 0).collect();
            assert!(owing.is_empty(), "seed {seed}: still owed {owing:?}");
        }
    }
}
