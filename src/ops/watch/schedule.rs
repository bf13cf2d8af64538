//! When each domain is attempted next: the delivery loop's state machine, without I/O.
//!
//! A domain is idle (nothing owed), due (owed and not waiting), busy (an attempt in
//! flight) or waiting out its backoff. Each failed attempt doubles the domain's wait
//! (`--backoff-base` to `--backoff-cap`, ±20 % jitter so a fleet that failed together does
//! not retry in step); a delivery, or finding nothing owed, resets it. Domains never wait
//! on each other: a slow one is busy on its own.

use crate::delivery::Reason;
use crate::domain::Domain;
use crate::util::backoff::{Jitter, Policy, Rng};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// One domain's place in the loop, and what it has done since the loop started.
#[derive(Debug, Clone, Default)]
pub struct Slot {
    /// Snapshots owed to the cluster, as last read from the store.
    pub owed: usize,
    /// When the oldest of them was recorded (Unix ms).
    pub oldest_ms: Option<i64>,
    /// Failed attempts in a row (attempts that reached the far end, or errors).
    pub failures_in_row: u32,
    /// Probes in a row that found nothing answering: they wait on a cadence of their
    /// own, capped short, so a link that returns is found within seconds.
    dark_in_row: u32,
    /// When its far end first answered nothing, this dark spell.
    dark_since: Option<Instant>,
    /// When it is attempted next (`None`: nothing owed).
    pub next: Option<Instant>,
    /// An attempt is in flight.
    pub busy: bool,
    /// The last delivery by this loop (Unix ms).
    pub delivered_ms: Option<i64>,
    pub deliveries: u64,
    /// Failed attempts by reason, since the loop started.
    pub failures: BTreeMap<Reason, u64>,
    /// The reason of the last failed attempt (cleared by a delivery).
    pub last_reason: Option<Reason>,
    /// Attempts that ended in an error of their own (not the far end's).
    pub errors: u64,
    /// The last attempt found nothing to deliver: if the store still says something is
    /// owed right after, no attempt can make progress, and it waits as a failure does.
    empty_handed: bool,
    /// The domain's store could not be read at the last look.
    pub unreadable: bool,
    /// The last attempt ended in an error of its own (the store, a damaged snapshot, an
    /// unusable recorded target), not the far end's.
    pub errored: bool,
}

/// Probes a second at most, however many far ends are dark: 1,000 dark domains are
/// probed on the short cadence, 10,000 every 50 s or so.
const PROBE_RATE: f64 = 200.0;

/// `slot`'s far end answered (or something else than a probe happened): no longer dark.
fn lit(dark: &mut usize, slot: &mut Slot) {
    if slot.dark_in_row > 0 {
        *dark = dark.saturating_sub(1);
    }
    slot.dark_in_row = 0;
    slot.dark_since = None;
}

/// How an attempt ended, as far as the schedule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The newest owed snapshot reached the cluster (or was found there).
    Delivered,
    /// Nothing was owed after all (another process delivered it).
    Nothing,
    /// Not delivered, for this reason: wait longer before the next attempt.
    Failed(Reason),
    /// The attempt ended in an error of its own (the store, an unusable recorded
    /// target): wait longer, too.
    Errored,
    /// The probe found nothing answering (a TCP connect, no attempt): probed again on
    /// the short cadence, the attempts' backoff untouched.
    Dark(Reason),
}

/// Every selected domain's slot (or owed push's: any key) and the backoff they share.
pub struct Schedule<K = Domain> {
    slots: HashMap<K, Slot>,
    /// The slots waiting for a time (not busy), by that time: what is due and when to
    /// wake cost a look at the front, not a pass over 10,000 domains.
    timeline: BTreeSet<(Instant, K)>,
    policy: Policy,
    /// The longest wait: a far end dark for longer starts its backoff over.
    cap: Duration,
    /// The probes' cadence for a far end that does not answer at all (jittered below
    /// it only: a returning link is found within the cap).
    probes: Policy,
    /// Slots whose far end answered nothing at its last probe.
    dark: usize,
    rng: Rng,
}

impl<K: Ord + std::hash::Hash + Clone> Schedule<K> {
    /// An empty schedule whose waits go from `base` to `cap`, and whose probes of a far
    /// end that does not answer at all wait at most `probe_cap`.
    pub fn new(base: Duration, cap: Duration, probe_cap: Duration, rng: Rng) -> Schedule<K> {
        let probe_cap = probe_cap.min(cap);
        Schedule {
            slots: HashMap::new(),
            timeline: BTreeSet::new(),
            policy: Policy::exponential(base, cap).jitter(Jitter::Spread(0.2)),
            cap,
            probes: Policy::exponential(base.min(probe_cap), probe_cap),
            dark: 0,
            rng,
        }
    }

    /// What the store says `domain` owes now (read after a change, or at the start).
    /// Something newly owed by a domain that is not waiting is due at once; a domain
    /// waiting out a backoff keeps its wait (its cluster did not answer a moment ago).
    pub fn owed(&mut self, domain: &K, owed: usize, oldest_ms: Option<i64>, now: Instant) {
        let unit = self.rng.unit();
        let slot = self.slots.entry(domain.clone()).or_default();
        slot.owed = owed;
        slot.oldest_ms = oldest_ms;
        let stuck = std::mem::take(&mut slot.empty_handed) && owed > 0 && !slot.busy;
        if owed == 0 {
            slot.failures_in_row = 0;
            lit(&mut self.dark, slot);
            self.set_next(domain, None);
        } else if stuck {
            // Never due at once again: that would spin on what no attempt delivers.
            slot.errors += 1;
            let wait = self.policy.delay(slot.failures_in_row, unit);
            slot.failures_in_row = slot.failures_in_row.saturating_add(1);
            self.set_next(domain, Some(now + wait));
        } else if slot.next.is_none() {
            self.set_next(domain, Some(now));
        }
    }

    /// Moves `domain` to `next` on the timeline (a busy slot keeps off it).
    fn set_next(&mut self, domain: &K, next: Option<Instant>) {
        let Some(slot) = self.slots.get_mut(domain) else {
            return;
        };
        if let Some(old) = slot.next {
            self.timeline.remove(&(old, domain.clone()));
        }
        slot.next = next;
        if let Some(at) = next.filter(|_| !slot.busy) {
            self.timeline.insert((at, domain.clone()));
        }
    }

    /// What the store says was delivered last (Unix ms): kept unless the loop knows a
    /// later delivery.
    pub fn delivered_before(&mut self, domain: &K, ms: i64) {
        if let Some(slot) = self.slots.get_mut(domain) {
            slot.delivered_ms = slot.delivered_ms.max(Some(ms));
        }
    }

    /// Whether `domain`'s store could be read at the last look (the metrics and the
    /// readiness say so).
    pub fn readable(&mut self, domain: &K, ok: bool) {
        if let Some(slot) = self.slots.get_mut(domain) {
            slot.unreadable = !ok;
        }
    }

    /// Forgets a domain that left the selection (its store was removed).
    pub fn forget(&mut self, domain: &K) {
        if self.slots.get(domain).is_some_and(|s| !s.busy) {
            self.set_next(domain, None);
            if let Some(mut slot) = self.slots.remove(domain) {
                lit(&mut self.dark, &mut slot);
            }
        }
    }

    /// The domains due at `now`, oldest wait first, marked busy; at most `limit`.
    pub fn take_due(&mut self, now: Instant, limit: usize) -> Vec<K> {
        let mut taken = Vec::new();
        while taken.len() < limit {
            match self.timeline.first() {
                Some((at, _)) if *at <= now => {}
                _ => break,
            }
            let Some((_, domain)) = self.timeline.pop_first() else {
                break;
            };
            if let Some(slot) = self.slots.get_mut(&domain) {
                slot.busy = true;
            }
            taken.push(domain);
        }
        taken
    }

    /// Records how an attempt ended at `now` (wall clock `now_ms`) and when the domain is
    /// attempted next; returns the wait it got after a failure.
    pub fn finished(
        &mut self,
        domain: &K,
        attempt: Attempt,
        now: Instant,
        now_ms: i64,
    ) -> Option<Duration> {
        let unit = self.rng.unit();
        let slot = self.slots.entry(domain.clone()).or_default();
        slot.busy = false;
        slot.errored = attempt == Attempt::Errored;
        let wait = match attempt {
            Attempt::Delivered | Attempt::Nothing => {
                if attempt == Attempt::Delivered {
                    slot.deliveries += 1;
                    slot.delivered_ms = Some(now_ms);
                    slot.failures_in_row = 0;
                }
                lit(&mut self.dark, slot);
                slot.empty_handed = attempt == Attempt::Nothing;
                slot.last_reason = None;
                None
            }
            Attempt::Dark(reason) => {
                *slot.failures.entry(reason).or_default() += 1;
                slot.last_reason = Some(reason);
                if slot.dark_in_row == 0 {
                    self.dark += 1;
                    slot.dark_since = Some(now);
                }
                // However many are dark, they are probed at most PROBE_RATE a second.
                let spread = Duration::from_secs_f64(self.dark as f64 / PROBE_RATE);
                // Up to a fifth shorter than the cadence, never longer.
                let cadence = self.probes.delay(slot.dark_in_row, unit);
                let wait = cadence
                    .mul_f64(0.8 + 0.2 * unit)
                    .max(spread.mul_f64(0.8 + 0.4 * unit));
                slot.dark_in_row = slot.dark_in_row.saturating_add(1);
                Some(wait)
            }
            Attempt::Failed(_) | Attempt::Errored => {
                // Dark for longer than the longest wait: the backoff earned before the
                // far end went dark is history; this failure starts it over.
                if slot
                    .dark_since
                    .is_some_and(|since| now.saturating_duration_since(since) >= self.cap)
                {
                    slot.failures_in_row = 0;
                }
                lit(&mut self.dark, slot);
                match attempt {
                    Attempt::Failed(reason) => {
                        *slot.failures.entry(reason).or_default() += 1;
                        slot.last_reason = Some(reason);
                    }
                    _ => slot.errors += 1,
                }
                let wait = self.policy.delay(slot.failures_in_row, unit);
                slot.failures_in_row = slot.failures_in_row.saturating_add(1);
                Some(wait)
            }
        };
        // After a delivery the store is read again by the caller: something recorded
        // meanwhile is due at once through `owed`.
        self.set_next(domain, wait.map(|w| now + w));
        wait
    }

    /// Hands back a domain taken but not started (its cluster is busy with another
    /// domain's delivery): attempted again at `at`, its backoff unchanged.
    pub fn defer(&mut self, domain: &K, at: Instant) {
        if let Some(slot) = self.slots.get_mut(domain) {
            slot.busy = false;
            slot.next = None;
            self.set_next(domain, Some(at));
        }
    }

    /// When the loop must wake next for an attempt (`None`: nothing is waiting).
    pub fn next_wake(&self) -> Option<Instant> {
        self.timeline.first().map(|(at, _)| *at)
    }

    /// Every slot, for the metrics and the status line.
    pub fn slots(&self) -> impl Iterator<Item = (&K, &Slot)> {
        self.slots.iter()
    }

    /// One domain's slot.
    pub fn slot(&self, domain: &K) -> Option<&Slot> {
        self.slots.get(domain)
    }

    /// Domains with something owed.
    pub fn owing(&self) -> usize {
        self.slots.values().filter(|s| s.owed > 0).count()
    }

    /// Every domain waiting out a backoff is due at once (the far end may be back: a
    /// reload after SIGHUP, or a test's nudge).
    pub fn retry_now(&mut self, now: Instant) {
        let owing: Vec<K> = self
            .slots
            .iter()
            .filter(|(_, s)| s.owed > 0 && !s.busy)
            .map(|(d, _)| d.clone())
            .collect();
        for d in owing {
            self.set_next(&d, Some(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn d(name: &str) -> Domain {
        Domain::parse(name).unwrap()
    }

    fn schedule() -> Schedule {
        Schedule::new(5 * S, 300 * S, 10 * S, Rng::seeded(7))
    }

    #[test]
    fn something_owed_is_due_at_once_and_taken_once() {
        let mut s = schedule();
        let t = Instant::now();
        s.owed(&d("a.example"), 2, Some(1), t);
        s.owed(&d("b.example"), 0, None, t);
        assert_eq!(s.take_due(t, 10), vec![d("a.example")]);
        assert!(s.take_due(t, 10).is_empty(), "busy is not due again");
        assert_eq!(s.next_wake(), None);
    }

    #[test]
    fn failures_double_the_wait_up_to_the_cap_and_a_delivery_resets_it() {
        let mut s = schedule();
        let a = d("a.example");
        let t = Instant::now();
        s.owed(&a, 1, None, t);
        let mut waits = Vec::new();
        for _ in 0..9 {
            s.take_due(Instant::now() + 1000 * S, 1);
            waits.push(
                s.finished(&a, Attempt::Failed(Reason::Unreachable), t, 0)
                    .unwrap(),
            );
        }
        for (n, w) in waits.iter().enumerate() {
            let nominal = (5 * S * 2u32.pow(n as u32)).min(300 * S);
            assert!(
                *w >= nominal.mul_f64(0.8) && *w <= nominal.mul_f64(1.2),
                "{n}: {w:?}"
            );
        }
        assert_eq!(s.slot(&a).unwrap().failures[&Reason::Unreachable], 9);
        s.take_due(Instant::now() + 1000 * S, 1);
        assert_eq!(s.finished(&a, Attempt::Delivered, t, 42), None);
        let slot = s.slot(&a).unwrap();
        assert_eq!(
            (slot.failures_in_row, slot.deliveries, slot.delivered_ms),
            (0, 1, Some(42))
        );
        s.owed(&a, 1, None, t);
        assert_eq!(s.take_due(t, 1), vec![a], "owed again: due at once");
    }

    #[test]
    fn a_domain_in_backoff_keeps_its_wait_when_more_is_recorded() {
        let mut s = schedule();
        let a = d("a.example");
        let t = Instant::now();
        s.owed(&a, 1, None, t);
        s.take_due(t, 1);
        let wait = s
            .finished(&a, Attempt::Failed(Reason::ServerError), t, 0)
            .unwrap();
        s.owed(&a, 2, None, t);
        assert!(s.take_due(t, 1).is_empty());
        assert_eq!(s.next_wake(), Some(t + wait));
        s.owed(&a, 0, None, t);
        assert_eq!(s.next_wake(), None, "nothing owed: no wait");
    }

    /// Issue 48, finding 5: an attempt that finds nothing to deliver while the store
    /// still says something is owed (a damaged record) waits out a growing backoff, and
    /// a real delivery later resets it.
    #[test]
    fn owing_after_an_attempt_that_found_nothing_waits_and_the_wait_grows() {
        let mut s = schedule();
        let a = d("a.example");
        let mut t = Instant::now();
        s.owed(&a, 1, None, t);
        let mut waits = Vec::new();
        for _ in 0..4 {
            assert_eq!(s.take_due(t, 1), vec![a.clone()]);
            assert_eq!(s.finished(&a, Attempt::Nothing, t, 0), None);
            s.owed(&a, 1, None, t);
            assert!(s.take_due(t, 1).is_empty(), "never due at once again");
            let next = s.slot(&a).unwrap().next.unwrap();
            waits.push(next - t);
            t = next;
        }
        assert!(waits[0] >= 4 * S, "{waits:?}");
        assert!(waits.windows(2).all(|w| w[1] > w[0]), "{waits:?}");
        assert_eq!(s.slot(&a).unwrap().errors, 4);
        // Delivered meanwhile by another process, then something new is owed: at once.
        s.take_due(t, 1);
        s.finished(&a, Attempt::Nothing, t, 0);
        s.owed(&a, 0, None, t);
        s.owed(&a, 1, None, t);
        assert_eq!(s.take_due(t, 1), vec![a.clone()]);
        assert_eq!(s.finished(&a, Attempt::Delivered, t, 1), None);
        assert_eq!(s.slot(&a).unwrap().failures_in_row, 0);
    }

    /// Issue 48, "back within seconds": a far end that answers nothing is probed on a
    /// cadence capped at the probe cap however long it has been dark, while attempts
    /// that reached it and failed keep the long backoff; a probe that connects again
    /// after a failed attempt leaves that backoff where it was.
    #[test]
    fn a_dark_far_end_is_probed_on_a_short_cadence_and_failures_keep_the_long_backoff() {
        let mut s = schedule();
        let a = d("a.example");
        let t = Instant::now();
        s.owed(&a, 1, None, t);
        let mut longest = Duration::ZERO;
        for _ in 0..50 {
            s.take_due(t + 1000 * S, 1);
            let wait = s
                .finished(&a, Attempt::Dark(Reason::Unreachable), t, 0)
                .unwrap();
            longest = longest.max(wait);
        }
        assert!(longest <= 12 * S && longest >= 8 * S, "{longest:?}");
        assert_eq!(s.slot(&a).unwrap().failures[&Reason::Unreachable], 50);
        assert_eq!(s.slot(&a).unwrap().failures_in_row, 0);
        let mut waits = Vec::new();
        for _ in 0..8 {
            s.take_due(t + 100_000 * S, 1);
            waits.push(
                s.finished(&a, Attempt::Failed(Reason::ServerError), t, 0)
                    .unwrap(),
            );
        }
        assert!(waits[7] >= 240 * S, "{waits:?}");
        s.take_due(t + 100_000 * S, 1);
        let dark = s
            .finished(&a, Attempt::Dark(Reason::Unreachable), t, 0)
            .unwrap();
        assert!(dark <= 6 * S, "the probe cadence starts over: {dark:?}");
        assert_eq!(s.slot(&a).unwrap().failures_in_row, 8);
    }

    /// Issue 48, `bench.py watch-recovery`: a link that returns is found within the
    /// probe cap (`--probe-interval`, "the longest wait between two probes"), never up
    /// to a fifth later: 1,000 links back at once were found after up to 12.1 s with
    /// 10 s asked, which left 2.9 s of the 15 s for every delivery.
    #[test]
    fn a_dark_far_end_is_probed_again_within_the_probe_cap() {
        let mut s = schedule();
        let t = Instant::now();
        let names: Vec<Domain> = (0..1_000).map(|i| d(&format!("d{i}.example"))).collect();
        for n in &names {
            s.owed(n, 1, None, t);
        }
        let mut waits = Vec::new();
        for round in 0..5 {
            for n in s.take_due(t + 10_000 * S, usize::MAX) {
                let wait = s
                    .finished(&n, Attempt::Dark(Reason::Unreachable), t, 0)
                    .unwrap();
                if round > 0 {
                    waits.push(wait);
                }
            }
        }
        let longest = waits.iter().max().unwrap();
        let shortest = waits.iter().min().unwrap();
        assert!(*longest <= 10 * S, "found only after {longest:?}");
        assert!(*shortest >= 8 * S, "{shortest:?}");
        assert!(
            *longest - *shortest >= S,
            "still spread: {shortest:?}..{longest:?}"
        );
    }

    /// Issue 48, `bench.py watch-recovery`: a far end dark for longer than the longest
    /// wait (`--backoff-cap`) starts its backoff over once it answers. A failure at the
    /// first attempt after the link returned (a write refused as the object changed
    /// meanwhile, an API server still starting) waited out the backoff earned before the
    /// link went down: 5 minutes after an hour dark. A short dark spell keeps it.
    #[test]
    fn a_failure_after_a_dark_spell_longer_than_the_cap_starts_the_backoff_over() {
        let mut s = schedule();
        let a = d("a.example");
        let mut now = Instant::now();
        s.owed(&a, 1, None, now);
        let fail = |s: &mut Schedule, now: Instant| {
            s.take_due(now + 100_000 * S, 1);
            s.finished(&a, Attempt::Failed(Reason::ServerError), now, 0)
                .unwrap()
        };
        for _ in 0..8 {
            fail(&mut s, now);
        }
        let dark = |s: &mut Schedule, from: Instant, spell: Duration| {
            let mut at = from;
            while at < from + spell {
                s.take_due(at + 100_000 * S, 1);
                at += s
                    .finished(&a, Attempt::Dark(Reason::Unreachable), at, 0)
                    .unwrap();
            }
            at
        };
        now = dark(&mut s, now, 60 * S);
        let kept = fail(&mut s, now);
        assert!(kept >= 240 * S, "a minute dark keeps the backoff: {kept:?}");
        now = dark(&mut s, now + kept, 3_600 * S);
        let over = fail(&mut s, now);
        assert!(over <= 6 * S, "an hour dark starts it over: {over:?}");
        assert_eq!(s.slot(&a).unwrap().failures_in_row, 1);
    }

    /// However many far ends are dark, they are probed at most [`PROBE_RATE`] a second:
    /// the probes' waits spread with their number, and shrink again as they come back.
    #[test]
    fn many_dark_far_ends_are_probed_at_a_bounded_rate() {
        let mut s = schedule();
        let t = Instant::now();
        let names: Vec<Domain> = (0..4_000).map(|i| d(&format!("d{i}.example"))).collect();
        for n in &names {
            s.owed(n, 1, None, t);
        }
        let mut last = Duration::ZERO;
        for _ in 0..3 {
            for n in s.take_due(t + 10_000 * S, usize::MAX) {
                last = s
                    .finished(&n, Attempt::Dark(Reason::Unreachable), t, 0)
                    .unwrap();
            }
        }
        assert_eq!(s.dark, 4_000);
        // 4,000 at 200 a second: about 20 s each, not the 10 s cap.
        assert!(last >= 16 * S && last <= 24 * S, "{last:?}");
        for n in &names[..3_900] {
            s.take_due(t + 100_000 * S, usize::MAX);
            s.finished(n, Attempt::Delivered, t, 0);
        }
        s.take_due(t + 100_000 * S, usize::MAX);
        assert_eq!(s.dark, 100);
        let one = &names[3_999];
        let wait = s
            .finished(one, Attempt::Dark(Reason::Unreachable), t, 0)
            .unwrap();
        assert!(wait <= 12 * S, "{wait:?}");
        s.forget(one);
        assert_eq!(s.dark, 99);
    }

    /// Model test: any sequence of reads and outcomes keeps the invariants — a busy
    /// domain is never handed out twice, an owing idle domain is always scheduled, and
    /// the waits stay within the policy's bounds.
    #[test]
    fn random_sequences_keep_the_invariants() {
        let names: Vec<Domain> = (0..5).map(|i| d(&format!("d{i}.example"))).collect();
        let mut rng = Rng::seeded(99);
        let mut s = schedule();
        let start = Instant::now();
        let mut busy: Vec<Domain> = Vec::new();
        for step in 0..5_000u64 {
            let now = start + Duration::from_millis(step * 500);
            let pick = |r: &mut Rng| names[(r.unit() * names.len() as f64) as usize].clone();
            match (rng.unit() * 3.0) as u32 {
                0 => s.owed(&pick(&mut rng), (rng.unit() * 3.0) as usize, None, now),
                1 => {
                    for dom in s.take_due(now, 2) {
                        assert!(!busy.contains(&dom), "{dom} handed out twice");
                        busy.push(dom);
                    }
                }
                _ if !busy.is_empty() => {
                    let dom = busy.remove(0);
                    let outcome = match (rng.unit() * 3.0) as u32 {
                        0 => Attempt::Delivered,
                        1 => Attempt::Nothing,
                        _ => Attempt::Failed(Reason::Unreachable),
                    };
                    match s.finished(&dom, outcome, now, 0) {
                        Some(w) => assert!(w >= S * 4 && w <= S * 360, "{w:?}"),
                        // As the loop does: the store is read again after an attempt.
                        None => s.owed(&dom, (rng.unit() * 2.0) as usize, None, now),
                    }
                }
                _ => {}
            }
            assert_eq!(
                s.timeline.len(),
                s.slots()
                    .filter(|(_, x)| x.next.is_some() && !x.busy)
                    .count()
            );
            for (dom, slot) in s.slots() {
                assert_eq!(slot.busy, busy.contains(dom), "{dom}");
                if let (Some(at), false) = (slot.next, slot.busy) {
                    assert!(
                        s.timeline.contains(&(at, dom.clone())),
                        "{dom} off the timeline"
                    );
                }
                if slot.owed > 0 && !slot.busy && slot.last_reason.is_none() {
                    assert!(slot.next.is_some(), "{dom} owes and is never attempted");
                }
            }
        }
    }
}
