//! The in-cluster status writer's pure parts: its schedule (Go-style intervals, jitter,
//! backoff) and the status it writes.
//!
//! The passes themselves run in [`crate::ops::agent`]; the requests in [`crate::cluster`].

use crate::catalog::helm::Observed;
use crate::catalog::updates::Update;
use crate::util::backoff::{Jitter, Policy};
use serde_json::{Map, Value};
use std::time::Duration;

/// The longest wait after repeated failures (unless the interval itself is longer).
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);

/// Parses a Go `time.ParseDuration` string that must be positive: a sequence of decimal
/// numbers with units `ns`, `us`/`µs`, `ms`, `s`, `m`, `h` (`90s`, `1.5m`, `1h30m`).
///
/// # Errors
/// A message for clap when the text is not a positive duration.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration '{text}' (Go syntax, e.g. 60s, 5m, 1h30m)");
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() || rest.starts_with('-') {
        return Err(bad());
    }
    if rest == "0" {
        return Err(format!("invalid duration '{text}': must be positive"));
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (number, tail) = rest.split_at(digits);
        if number.is_empty() || number == "." {
            return Err(bad());
        }
        let value: f64 = number.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += value * scale;
        rest = next;
    }
    if total.is_nan() || total <= 0.0 || total > 1e9 {
        return Err(format!("invalid duration '{text}': must be positive"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// The agent's schedule between passes.
///
/// The interval after a good pass; after `failures` consecutive failed passes, the interval
/// doubled per failure, capped at max(interval, 10 min); ±10 % jitter, so a fleet of agents
/// does not hit its API servers in step.
pub fn schedule(interval: Duration) -> Policy {
    Policy::exponential(interval, interval.max(MAX_BACKOFF)).jitter(Jitter::Spread(0.1))
}

/// The wait before the next pass after `failures` failed ones, with the jitter `unit`
/// in [0, 1) ([`schedule`]).
pub fn next_wait(interval: Duration, failures: u32, unit: f64) -> Duration {
    schedule(interval).delay(failures, unit)
}

/// The value of `status` for one write.
///
/// Keys that are `None` are left out, so a merge patch leaves those fields as they are; an
/// empty update list is written as `[]` (never `null`, which would delete the field).
/// `unordered` is not part of the schema and is not sent.
pub fn status_body(
    updates: Option<&[Update]>,
    observed: Option<&[Observed]>,
    last_reported: &str,
) -> Value {
    let mut status = Map::new();
    if let Some(observed) = observed {
        status.insert(
            "observedAddons".into(),
            serde_json::to_value(observed).unwrap_or(Value::Array(Vec::new())),
        );
    }
    if let Some(updates) = updates {
        let list = updates
            .iter()
            .map(|u| serde_json::json!({"name": u.name, "current": u.current, "latest": u.latest}))
            .collect();
        status.insert("availableUpdates".into(), Value::Array(list));
    }
    status.insert("lastReported".into(), Value::from(last_reported));
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let ok = |t: &str| parse_duration(t).unwrap();
        assert_eq!(ok("60s"), Duration::from_secs(60));
        assert_eq!(ok("5m"), Duration::from_secs(300));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("300ms"), Duration::from_millis(300));
        assert_eq!(ok("2m3.5s"), Duration::from_millis(123_500));
        for bad in [
            "", "0", "0s", "-5s", "5", "s", "5x", "1..2s", ".s", "abc", "1h-5m",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn backoff_doubles_to_a_cap_and_jitter_is_ten_percent() {
        let i = Duration::from_secs(60);
        assert_eq!(next_wait(i, 0, 0.5), i);
        assert_eq!(next_wait(i, 1, 0.5), Duration::from_secs(120));
        assert_eq!(next_wait(i, 3, 0.5), Duration::from_secs(480));
        assert_eq!(next_wait(i, 4, 0.5), MAX_BACKOFF);
        assert_eq!(next_wait(i, 99, 0.5), MAX_BACKOFF);
        let long = Duration::from_secs(3600);
        assert_eq!(
            next_wait(long, 5, 0.5),
            long,
            "never shorter than the interval"
        );
        assert_eq!(next_wait(i, 0, 0.0), Duration::from_secs(54));
        assert_eq!(next_wait(i, 0, 1.0), Duration::from_secs(66));
        assert_eq!(next_wait(i, 99, 1.0), MAX_BACKOFF.mul_f64(1.1));
    }

    #[test]
    fn status_body_shapes() {
        let u = Update {
            name: "cilium".into(),
            current: "1.19.2".into(),
            latest: "1.20.1".into(),
            unordered: true,
            prerelease: false,
        };
        assert_eq!(
            status_body(Some(&[u]), None, "2026-07-06T12:00:00Z"),
            serde_json::json!({"availableUpdates": [{"name": "cilium", "current": "1.19.2", "latest": "1.20.1"}], "lastReported": "2026-07-06T12:00:00Z"})
        );
        assert_eq!(
            status_body(Some(&[]), Some(&[]), "t").to_string(),
            r#"{"observedAddons":[],"availableUpdates":[],"lastReported":"t"}"#
        );
        assert_eq!(
            status_body(None, None, "t"),
            serde_json::json!({"lastReported": "t"})
        );
    }
}
