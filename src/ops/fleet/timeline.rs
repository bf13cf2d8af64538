//! The fleet timeline: which domain changed what, when — one upgrade rolled out to ten
//! domains is one event naming the ten, not ten lines.
//!
//! An event is one change (the same addon or field, the same kind, the same old and new
//! value) recorded by one or more domains within [`WINDOW_SECONDS`] of the event's first
//! recording: a rollout that crosses midnight stays one event, the same upgrade a week
//! later on another site is another. A domain's first recorded step is an event of its
//! own kind (what it held is not a change), as is a step that changed nothing. A domain
//! that makes the same change twice within the window (an upgrade, a rollback, the
//! upgrade again) starts a second event: every event names each of its domains once.

use crate::history::audit::{self, Entry};
use crate::history::diff::{Change, Op};

/// How long after an event's first recording the same change by another domain still
/// belongs to it: a day.
pub const WINDOW_SECONDS: i64 = 24 * 3600;

/// What an event is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum What {
    /// The domains' first recorded step.
    First,
    /// A step recorded with no change.
    Unchanged,
    /// One change, the same for every domain of the event.
    Change { change: Box<Change> },
}

impl What {
    /// What makes two occurrences the same event (with the window).
    fn key(&self) -> (u8, String, &'static str, Option<&str>, Option<&str>) {
        match self {
            What::First => (0, String::new(), "", None, None),
            What::Unchanged => (1, String::new(), "", None, None),
            What::Change { change: c } => {
                let op = match c.change {
                    Op::Added => "added",
                    Op::Removed => "removed",
                    Op::Upgraded => "upgraded",
                    Op::Downgraded => "downgraded",
                    Op::Changed => "changed",
                };
                (2, c.path.clone(), op, c.from.as_deref(), c.to.as_deref())
            }
        }
    }
}

/// One domain's step, or one change of it, at a time.
#[derive(Debug, Clone)]
pub struct Occurrence {
    pub domain: String,
    pub at: jiff::Timestamp,
    pub what: What,
}

/// The occurrences of one `log` entry of `domain`: its first step, its changes, or
/// that it changed nothing. An entry whose time does not parse has none.
pub fn occurrences(domain: &str, entry: &Entry) -> Vec<Occurrence> {
    let Some(at) = audit::parse_bound(&entry.at, false) else {
        return Vec::new();
    };
    let one = |what| Occurrence {
        domain: domain.to_string(),
        at,
        what,
    };
    if entry.initial {
        return vec![one(What::First)];
    }
    if entry.changes.is_empty() {
        return vec![one(What::Unchanged)];
    }
    entry
        .changes
        .iter()
        .map(|c| {
            one(What::Change {
                change: Box::new(c.clone()),
            })
        })
        .collect()
}

/// An event of the timeline: what, when (its first and last recording), and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(serialize_with = "seconds")]
    pub start: jiff::Timestamp,
    #[serde(serialize_with = "seconds")]
    pub end: jiff::Timestamp,
    #[serde(flatten)]
    pub what: What,
    /// Each domain once, in the order they recorded it.
    pub domains: Vec<String>,
}

fn seconds<S: serde::Serializer>(t: &jiff::Timestamp, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::util::time::format_seconds(*t))
}

/// Groups `occurrences` (in any order) into events, oldest first (ties: in the order
/// of what they are about).
///
/// Sorted by (what, time, domain), the events of one key are consecutive and created in
/// the order of their start; an occurrence joins the oldest of them that is still open
/// (its first recording within the window) and does not name its domain yet. That is
/// the first open event after the one the domain joined last (the earlier ones hold it
/// or are closed for good), so each occurrence costs O(log n), not a scan — at a
/// thousand domains each re-recorded a hundred times, a hundred thousand occurrences.
pub fn group(mut occurrences: Vec<Occurrence>) -> Vec<Event> {
    occurrences
        .sort_by(|a, b| (a.what.key(), a.at, &a.domain).cmp(&(b.what.key(), b.at, &b.domain)));
    let mut events: Vec<Event> = Vec::new();
    // This key's events: from `run_start`; the first still open; each domain's last.
    let (mut run_start, mut first_open) = (0, 0);
    let mut last: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for o in occurrences {
        let same_key = events.last().is_some_and(|e| e.what.key() == o.what.key());
        if !same_key {
            (run_start, first_open) = (events.len(), events.len());
            last.clear();
        }
        while first_open < events.len()
            && o.at.as_second() - events[first_open].start.as_second() > WINDOW_SECONDS
        {
            first_open += 1;
        }
        let after_last = last.get(&o.domain).map_or(run_start, |&i| i + 1);
        let joins = first_open.max(after_last);
        if joins < events.len() {
            let e = &mut events[joins];
            e.end = e.end.max(o.at);
            last.insert(o.domain.clone(), joins);
            e.domains.push(o.domain);
        } else {
            last.insert(o.domain.clone(), events.len());
            events.push(Event {
                start: o.at,
                end: o.at,
                what: o.what,
                domains: vec![o.domain],
            });
        }
    }
    events.sort_by(|a, b| (a.start, a.what.key()).cmp(&(b.start, b.what.key())));
    events
}

/// The grouped timeline of `domains` of `store` for `query`'s window, the number of
/// steps it groups, and the damaged lines skipped (each naming its domain).
///
/// One domain's history at a time (two at once), reduced to its occurrences before the
/// next is read: grouping needs no merge order, so the memory is the occurrences, not
/// every domain's inventories (a thousand domains × a hundred changed steps).
///
/// # Errors
/// A bad `since`/`until`; an unreadable store.
pub fn of_store(
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
    query: &crate::ops::history::Query<'_>,
) -> crate::error::Result<(Vec<Event>, usize, Vec<String>)> {
    use crate::ops::history::{Window, load_store};
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    type One = (Vec<Occurrence>, usize, Vec<String>);
    let read =
        crate::util::pool::ordered(domains, workers, |domain| -> crate::error::Result<One> {
            let steps = load_store(&store.domain(domain), Window::All)?;
            let name = domain.to_string();
            let (mut all, mut n) = (Vec::new(), 0);
            for entry in steps.entry_iter(query)? {
                all.extend(occurrences(&name, &entry));
                n += 1;
            }
            let skipped: Vec<String> = steps
                .skipped
                .iter()
                .map(|s| format!("{name}: {s}"))
                .collect();
            Ok((all, n, skipped))
        });
    let (mut all, mut steps, mut skipped) = (Vec::new(), 0, Vec::new());
    for one in read {
        let (occ, n, left) = one?;
        all.extend(occ);
        steps += n;
        skipped.extend(left);
    }
    Ok((group(all), steps, skipped))
}

/// The grouped timeline of `log`'s entries, and how many steps it had.
///
/// # Errors
/// A store that cannot be read while the entries are walked.
pub fn of_log(
    log: &crate::ops::history::FleetLog<'_>,
) -> crate::error::Result<(Vec<Event>, usize)> {
    let mut all = Vec::new();
    let steps = log.each(|domain, entry| {
        all.extend(occurrences(domain, entry));
        Ok(())
    })?;
    Ok((group(all), steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::diff::Field;

    fn at(t: &str) -> jiff::Timestamp {
        t.parse().unwrap()
    }

    fn upgrade(addon: &str, from: &str, to: &str) -> What {
        What::Change {
            change: Box::new(Change {
                path: format!("spec.addons[{addon}].chartVersion"),
                field: Field::ChartVersion,
                change: Op::Upgraded,
                addon: Some(addon.into()),
                occurrence: Some(1),
                from: Some(from.into()),
                to: Some(to.into()),
                entry: None,
            }),
        }
    }

    fn occ(domain: &str, t: &str, what: What) -> Occurrence {
        Occurrence {
            domain: domain.into(),
            at: at(t),
            what,
        }
    }

    #[test]
    fn one_upgrade_across_domains_within_a_day_is_one_event_even_across_midnight() {
        let up = || upgrade("cilium", "1.18.4", "1.19.2");
        let events = group(vec![
            occ("hel-2", "2026-04-02T23:30:00Z", up()),
            occ("hel-1", "2026-04-02T23:00:00Z", up()),
            occ("hel-3", "2026-04-03T01:00:00Z", up()),
            // A week later, the same upgrade elsewhere: another event.
            occ("nbg-1", "2026-04-10T08:00:00Z", up()),
            // Another change at the same time: another event.
            occ(
                "hel-1",
                "2026-04-02T23:00:00Z",
                upgrade("metrics", "3.12.2", "3.13.0"),
            ),
            occ("hel-1", "2026-03-01T10:00:00Z", What::First),
            occ("hel-2", "2026-03-01T10:00:00Z", What::First),
        ]);
        assert_eq!(events.len(), 4, "{events:#?}");
        assert_eq!(events[0].what, What::First);
        assert_eq!(events[0].domains, ["hel-1", "hel-2"]);
        assert_eq!(events[1].what, up());
        assert_eq!(events[1].domains, ["hel-1", "hel-2", "hel-3"]);
        assert_eq!(events[1].start, at("2026-04-02T23:00:00Z"));
        assert_eq!(events[1].end, at("2026-04-03T01:00:00Z"));
        assert_eq!(events[2].domains, ["hel-1"]);
        assert_eq!(events[3].domains, ["nbg-1"]);
    }

    #[test]
    fn the_window_counts_from_the_first_recording_and_a_domain_is_named_once() {
        let up = || upgrade("cilium", "1", "2");
        let events = group(vec![
            occ("a", "2026-01-01T00:00:00Z", up()),
            occ("b", "2026-01-01T23:00:00Z", up()),
            // 25 h after the first: a new event, though 2 h after the last.
            occ("c", "2026-01-02T01:00:00Z", up()),
            // The same domain again within the window: a new event too.
            occ("a", "2026-01-01T02:00:00Z", up()),
        ]);
        let domains: Vec<Vec<String>> = events.iter().map(|e| e.domains.clone()).collect();
        assert_eq!(
            domains,
            [vec!["a", "b"], vec!["a", "c"]]
                .map(|v| v.into_iter().map(String::from).collect::<Vec<_>>())
        );
    }

    #[test]
    fn domains_recorded_again_and_again_make_one_event_per_round() {
        // Three domains, each recorded five times a second apart (with no change): five
        // events of three domains, each domain once in each.
        let mut all = Vec::new();
        for round in 0..5 {
            for d in ["a", "b", "c"] {
                let t = format!("2026-01-01T00:00:0{round}Z");
                all.push(occ(d, &t, What::Unchanged));
            }
        }
        let events = group(all);
        assert_eq!(events.len(), 5);
        for e in &events {
            assert_eq!(e.domains, ["a", "b", "c"]);
        }
    }
}
