//! `clinv report -A`: the fleet report — the matrix of the selected domains at a date
//! (the newest without one) and the fleet's timeline up to it, grouped into events
//! ([`super::timeline`]).

use super::Matrix;
use super::at::{self, AsOf};
use super::timeline::{self, Event, What};
use crate::domain::Domain;
use crate::error::Result;
use crate::ops::history::Query;
use crate::store::Store;

/// What the fleet page shows.
#[derive(Debug)]
pub struct FleetReport {
    /// The domains selected, in name order.
    pub domains: Vec<String>,
    pub matrix: Matrix,
    /// The timeline, oldest first.
    pub events: Vec<Event>,
    /// The recorded steps the timeline groups.
    pub steps: usize,
    /// Those of them that changed nothing (recorded again): counted, not events of the
    /// page — at a thousand domains re-recorded a hundred times they would be most of it.
    pub unchanged: usize,
    /// `--since`, as typed.
    pub since: Option<String>,
    /// Damaged history lines skipped, each naming its domain.
    pub skipped: Vec<String>,
}

/// The report of `domains` of `store`: the matrix at `at` (the newest snapshot of each
/// domain without it), and the events recorded after `since` and up to `at`.
///
/// # Errors
/// A date that is none; a store that cannot be read.
pub fn load(
    store: &Store,
    domains: &[Domain],
    at: Option<&str>,
    since: Option<&str>,
    now: jiff::Timestamp,
) -> Result<FleetReport> {
    let (as_of, until) = match at {
        Some(date) => {
            let (as_of, until) = AsOf::parse(date, now)?;
            (Some(as_of), until)
        }
        // The newest: every snapshot, even one recorded by a clock somewhat ahead.
        None => (
            None,
            now.checked_add(jiff::SignedDuration::from_hours(
                crate::store::FUTURE_TOLERANCE_HOURS,
            ))
            .unwrap_or(now),
        ),
    };
    // The newest: as `fleet --from store` shows it, what is still pending marked queued.
    let mut matrix = match at {
        Some(date) => at::store_at(store, domains, until, date)?,
        None => super::from_store_newest(store, domains)?,
    };
    matrix.as_of = as_of;
    let until_text = at.map(|_| crate::util::time::format_seconds(until));
    let query = Query {
        since,
        until: until_text.as_deref(),
        max_count: None,
        addon: None,
        reverse: false,
        now,
    };
    let (mut events, steps, skipped) = timeline::of_store(store, domains, &query)?;
    let unchanged = events
        .iter()
        .filter(|e| e.what == What::Unchanged)
        .map(|e| e.domains.len())
        .sum();
    events.retain(|e| e.what != What::Unchanged);
    Ok(FleetReport {
        domains: domains.iter().map(ToString::to_string).collect(),
        matrix,
        events,
        steps,
        unchanged,
        since: since.map(str::to_string),
        skipped,
    })
}
