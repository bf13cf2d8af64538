//! The one backoff for every wait-and-retry loop in clinv.
//!
//! The lock wait, the push retry, the agent's schedule, the cluster's CRD and CR polls ask
//! a [`Policy`] for their delays, so they grow, cap, jitter and stop at a deadline by the
//! same rules.
//!
//! A [`Policy`] is a pure function from the attempt number and a random unit to a
//! delay ([`Policy::delay`]); [`Delays`] is the iterator a retry loop walks: one delay
//! per retry, ending when the attempt budget is spent or the next attempt would start
//! after the deadline. Jitter comes from [`Rng`], seeded from the standard library's
//! random hasher in production and from a fixed seed in tests, so a test sees the same
//! delays on every run.

use std::time::{Duration, Instant};

/// How a delay is spread, so clients that failed together do not retry in step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// The delay as computed.
    None,
    /// Up to this much added: `[d, d + max)`.
    Add(Duration),
    /// Scaled by a factor in `[1 - f, 1 + f)` (`Spread(0.1)` is ±10 %).
    Spread(f64),
    /// Anywhere in `[0, d)` ("full jitter"): the most spread for many clients.
    Full,
}

/// An exponential backoff: `first`, doubling per attempt, never above `cap`, then
/// jittered. The cap bounds the delay before jitter: `Add` and `Spread` may exceed it by
/// their amount, `Full` never does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    first: Duration,
    cap: Duration,
    jitter: Jitter,
    retries: Option<u32>,
    to_deadline: bool,
}

impl Policy {
    /// Starts at `first`, doubles per attempt, caps at `cap` (at least `first`); no
    /// jitter, no attempt budget.
    pub const fn exponential(first: Duration, cap: Duration) -> Self {
        let cap = if cap.as_nanos() < first.as_nanos() {
            first
        } else {
            cap
        };
        Self {
            first,
            cap,
            jitter: Jitter::None,
            retries: None,
            to_deadline: false,
        }
    }

    /// The same policy with `jitter`.
    pub const fn jitter(self, jitter: Jitter) -> Self {
        Self { jitter, ..self }
    }

    /// At most `retries` delays (a loop of `retries + 1` attempts).
    pub const fn retries(self, retries: u32) -> Self {
        Self {
            retries: Some(retries),
            ..self
        }
    }

    /// The wait that would pass the deadline is cut to end at it, once (one last attempt
    /// at the deadline), instead of ending the delays: for a cheap attempt such as a
    /// lock try, where giving up early would be wrong.
    pub const fn last_at_deadline(self) -> Self {
        Self {
            to_deadline: true,
            ..self
        }
    }

    /// The delay before retry `n` (0-based) without jitter: `first · 2ⁿ`, at most `cap`.
    pub fn nominal(&self, n: u32) -> Duration {
        let factor = 2u32.saturating_pow(n.min(31));
        self.first.saturating_mul(factor).min(self.cap)
    }

    /// The delay before retry `n` with the jitter `unit` (in `[0, 1)`; clamped).
    pub fn delay(&self, n: u32, unit: f64) -> Duration {
        let d = self.nominal(n);
        let unit = if unit.is_nan() {
            0.0
        } else {
            unit.clamp(0.0, 1.0)
        };
        match self.jitter {
            Jitter::None => d,
            Jitter::Add(max) => d.saturating_add(max.mul_f64(unit)),
            Jitter::Spread(f) => {
                let f = f.clamp(0.0, 1.0);
                d.mul_f64(1.0 - f + 2.0 * f * unit)
            }
            Jitter::Full => d.mul_f64(unit),
        }
    }

    /// The delays of a retry loop that must start its last attempt before `deadline`
    /// (`None`: only the attempt budget ends it), jittered from a fresh [`Rng::new`].
    pub fn until(&self, deadline: Option<Instant>) -> Delays {
        self.seeded(deadline, Rng::new())
    }

    /// [`Policy::until`] with jitter from `rng` (a fixed seed in tests).
    pub fn seeded(&self, deadline: Option<Instant>, rng: Rng) -> Delays {
        Delays {
            policy: *self,
            n: 0,
            deadline,
            rng,
            done: false,
        }
    }
}

/// The delays of one retry loop: ask for the next before each retry; `None` means give
/// up (the budget is spent or the next attempt would start at or after the deadline).
#[derive(Clone, Debug)]
pub struct Delays {
    policy: Policy,
    n: u32,
    deadline: Option<Instant>,
    rng: Rng,
    done: bool,
}

impl Delays {
    /// How many delays were handed out (the retries so far).
    pub fn retries(&self) -> u32 {
        self.n
    }

    /// The next delay as of `now` (the clock is a parameter so tests need no sleeps).
    pub fn next_at(&mut self, now: Instant) -> Option<Duration> {
        if self.done || self.policy.retries.is_some_and(|max| self.n >= max) {
            return None;
        }
        let d = self.policy.delay(self.n, self.rng.unit());
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(now);
            if d >= left {
                self.done = true;
                return (self.policy.to_deadline && !left.is_zero()).then(|| {
                    self.n += 1;
                    left
                });
            }
        }
        self.n += 1;
        Some(d)
    }
}

#[cfg(test)]
impl Delays {
    /// Every delay from `start` on, as if each wait were slept exactly (no clock read).
    pub fn walk(&mut self, start: Instant) -> Vec<Duration> {
        let mut now = start;
        let mut all = Vec::new();
        while let Some(wait) = self.next_at(now) {
            now += wait;
            all.push(wait);
        }
        all
    }
}

impl Iterator for Delays {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.next_at(Instant::now())
    }
}

/// A small generator of jitter (SplitMix64): not for secrets, only to spread retries.
/// The standard library's randomly keyed hasher seeds it, so no RNG crate is needed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeded from the process's random hasher keys and the clock.
    pub fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        Self(h.finish())
    }

    /// The same sequence for the same seed (tests).
    pub const fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    /// The next number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Default for Rng {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn all(policy: &Policy, seed: u64) -> Vec<Duration> {
        policy.seeded(None, Rng::seeded(seed)).collect()
    }

    #[test]
    fn doubles_from_first_to_the_cap_and_stays_there() {
        let p = Policy::exponential(10 * MS, 75 * MS);
        let got: Vec<_> = (0..6).map(|n| p.nominal(n)).collect();
        assert_eq!(got, [10, 20, 40, 75, 75, 75].map(|m| m * MS));
        assert_eq!(p.nominal(u32::MAX), 75 * MS, "no overflow at any attempt");
        let huge = Policy::exponential(Duration::from_secs(u64::MAX / 4), Duration::MAX);
        assert_eq!(huge.nominal(40), Duration::MAX, "saturates");
        assert_eq!(
            Policy::exponential(50 * MS, 10 * MS).nominal(3),
            50 * MS,
            "a cap below first is first"
        );
    }

    #[test]
    fn jitter_stays_in_its_range_and_varies() {
        let base = Policy::exponential(100 * MS, 2000 * MS);
        for (jitter, lo, hi) in [
            (Jitter::None, 1.0, 1.0),
            (Jitter::Spread(0.1), 0.9, 1.1),
            (Jitter::Full, 0.0, 1.0),
        ] {
            let p = base.jitter(jitter).retries(40);
            let delays = all(&p, 7);
            assert_eq!(delays.len(), 40);
            for (n, d) in delays.iter().enumerate() {
                let nominal = p.nominal(n as u32).as_secs_f64();
                let d = d.as_secs_f64();
                assert!(
                    d >= nominal * lo - 1e-9 && d <= nominal * hi + 1e-9,
                    "{jitter:?} {n}"
                );
            }
            let distinct = delays[10..].windows(2).filter(|w| w[0] != w[1]).count();
            assert_eq!(distinct > 0, jitter != Jitter::None, "{jitter:?}");
        }
        let p = base.jitter(Jitter::Add(100 * MS)).retries(40);
        for (n, d) in all(&p, 3).into_iter().enumerate() {
            let nominal = p.nominal(n as u32);
            assert!(d >= nominal && d < nominal + 100 * MS, "{n}: {d:?}");
        }
        assert_eq!(base.jitter(Jitter::Spread(0.1)).delay(0, 0.0), 90 * MS);
        assert_eq!(base.jitter(Jitter::Spread(0.1)).delay(0, 1.0), 110 * MS);
        assert_eq!(base.jitter(Jitter::Full).delay(0, f64::NAN), Duration::ZERO);
    }

    #[test]
    fn a_seed_gives_the_same_delays_and_another_seed_others() {
        let p = Policy::exponential(MS, Duration::from_secs(1))
            .jitter(Jitter::Full)
            .retries(20);
        assert_eq!(all(&p, 42), all(&p, 42));
        assert_ne!(all(&p, 42), all(&p, 43));
        let mut r = Rng::new();
        assert!((0..1000).map(|_| r.unit()).all(|u| (0.0..1.0).contains(&u)));
    }

    #[test]
    fn the_attempt_budget_ends_the_delays() {
        let p = Policy::exponential(MS, 4 * MS).retries(3);
        let mut d = p.seeded(None, Rng::seeded(0));
        assert_eq!(d.by_ref().count(), 3);
        assert_eq!(d.retries(), 3);
        assert_eq!(d.next(), None);
        assert_eq!(
            Policy::exponential(MS, MS).retries(0).until(None).next(),
            None
        );
    }

    #[test]
    fn no_attempt_starts_at_or_after_the_deadline() {
        let t0 = Instant::now();
        let p = Policy::exponential(10 * MS, 40 * MS);
        let mut d = p.seeded(Some(t0 + 100 * MS), Rng::seeded(0));
        let got = d.walk(t0);
        // 10 + 20 + 40 = 70; the next 40 would start the attempt at 110.
        assert_eq!(got, [10, 20, 40].map(|m| m * MS));
        assert_eq!(d.next_at(t0), None, "once over, it stays over");
        let mut past = p.seeded(Some(t0), Rng::seeded(0));
        assert_eq!(past.next_at(t0 + MS), None);
    }

    #[test]
    fn the_last_wait_can_end_exactly_at_the_deadline() {
        let t0 = Instant::now();
        let p = Policy::exponential(10 * MS, 40 * MS).last_at_deadline();
        let got = p.seeded(Some(t0 + 100 * MS), Rng::seeded(0)).walk(t0);
        assert_eq!(got, [10, 20, 40, 30].map(|m| m * MS));
        assert_eq!(got.iter().sum::<Duration>(), 100 * MS);
        let mut zero = p.seeded(Some(t0), Rng::seeded(0));
        assert_eq!(zero.next_at(t0), None, "no wait when no time is left");
    }
}
