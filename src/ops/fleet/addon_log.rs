//! `clinv log -A --addon NAME`: the fleet's history of one addon.
//!
//! Every selected domain's steps that change the addon (added, removed, another version,
//! another category or source), merged newest first (oldest first with `--reverse`), each
//! entry narrowed to the addon's changes and naming its domain — "when did each cluster
//! get cert-manager 1.20, and which still has not" as one list.
//!
//! Bounded as `log -A` is: each domain is read only as far back as the query needs (with
//! `--since`, from the newest end of its journal back to the step before the window; see
//! [`history::window`]), two at a time; a domain whose steps read never hold the addon
//! costs no comparison; with `--max-count N` each domain gives at most N entries.

use crate::domain::Domain;
use crate::error::{ArgumentError, Result};
use crate::history::audit::{self, Entry};
use crate::history::diff::{Change, Summary};
use crate::ops::history::{self, Log, Query};
use crate::store::Store;

/// One step of one domain that changes the addon.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Event {
    pub domain: String,
    /// The step's entry as `log` makes it, its `changes` (and `ignored`) only the addon's.
    #[serde(flatten)]
    pub entry: Entry,
}

/// The fleet's history of an addon.
#[derive(Debug, Default)]
pub struct AddonLog {
    /// Newest first (oldest first with `reverse`), at most `max_count`.
    pub events: Vec<Event>,
    /// Damaged records and objects, each named with its domain.
    pub skipped: Vec<String>,
    /// Whether any step read holds the addon (a name no step has is a typo, not "never
    /// changed").
    pub seen: bool,
    /// The closest addon name the steps read hold, when none holds the addon.
    pub suggestion: Option<String>,
}

/// One domain's part.
struct Part {
    events: Vec<Event>,
    skipped: Vec<String>,
    seen: bool,
    suggestion: Option<String>,
}

/// Reads the history of `query.addon` in `domains` of `store`.
///
/// # Errors
/// A bad `since`/`until` (before anything is read); an unreadable store.
pub fn load(store: &Store, domains: &[Domain], query: &Query<'_>) -> Result<AddonLog> {
    for (bound, end) in [(query.since, false), (query.until, true)] {
        if let Some(text) = bound
            && audit::parse_query_bound(text, end, query.now).is_none()
        {
            return Err(ArgumentError::Time(text.to_string()).into());
        }
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let parts = crate::util::pool::ordered(domains, workers, |domain| part(store, domain, query));
    let mut log = AddonLog::default();
    for part in parts {
        let part = part?;
        log.events.extend(part.events);
        log.skipped.extend(part.skipped);
        log.seen |= part.seen;
        log.suggestion = log.suggestion.or(part.suggestion);
    }
    if log.seen {
        log.suggestion = None;
    }
    // Stable: a tie keeps the domains' order, and each domain's own (newest first).
    log.events
        .sort_by_cached_key(|e| std::cmp::Reverse(audit::parse_bound(&e.entry.at, false)));
    if let Some(max) = query.max_count {
        log.events.truncate(max);
    }
    if query.reverse {
        log.events.reverse();
    }
    Ok(log)
}

/// The events of one domain, newest first (at most `max_count`).
fn part(store: &Store, domain: &Domain, query: &Query<'_>) -> Result<Part> {
    let name = query.addon.unwrap_or_default();
    let steps = history::load_store(&store.domain(domain), history::window(query))?;
    let skipped = (steps.skipped.iter())
        .map(|s| format!("{domain}: {s}"))
        .collect();
    let (seen, suggestion) = match steps.addon(name) {
        Log::Never { suggestion } => (false, suggestion),
        _ => (true, None),
    };
    let mut events = Vec::new();
    if seen {
        let every = Query {
            addon: None,
            max_count: None,
            reverse: false,
            ..*query
        };
        for entry in steps.entry_iter(&every)? {
            if query.max_count.is_some_and(|max| events.len() >= max) {
                break;
            }
            if let Some(entry) = narrowed(entry, name) {
                events.push(Event {
                    domain: domain.to_string(),
                    entry,
                });
            }
        }
    }
    Ok(Part {
        events,
        skipped,
        seen,
        suggestion,
    })
}

/// `entry` with only the changes of the addon `name` (every occurrence), or `None` when it
/// has none.
fn narrowed(mut entry: Entry, name: &str) -> Option<Entry> {
    let of = |c: &Change| c.addon.as_deref() == Some(name);
    entry.changes.retain(of);
    if entry.changes.is_empty() {
        return None;
    }
    entry.ignored.retain(of);
    entry.summary = Summary::of(&entry.changes, entry.ignored.len());
    entry.has_changes = true;
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::diff::{Field, Op};

    fn change(addon: Option<&str>, field: Field, op: Op) -> Change {
        Change {
            path: String::new(),
            field,
            change: op,
            addon: addon.map(str::to_string),
            occurrence: addon.map(|_| 1),
            from: Some("1".into()),
            to: Some("2".into()),
            entry: None,
        }
    }

    #[test]
    fn an_entry_keeps_only_the_addons_changes_and_counts_them() {
        let entry = Entry {
            id: "a".into(),
            at: "2026-03-01T00:00:00Z".into(),
            outcome: "applied".into(),
            revision: 2,
            author: None,
            host: None,
            initial: false,
            kubernetes_version: None,
            has_changes: true,
            summary: Summary::default(),
            changes: vec![
                change(None, Field::KubernetesVersion, Op::Upgraded),
                change(Some("cert-manager"), Field::ChartVersion, Op::Upgraded),
                change(Some("cilium"), Field::ChartVersion, Op::Downgraded),
                change(Some("cert-manager"), Field::Category, Op::Changed),
            ],
            ignored: vec![change(Some("cilium"), Field::AppVersion, Op::Changed)],
        };
        let kept = narrowed(entry.clone(), "cert-manager").unwrap();
        assert_eq!(kept.changes.len(), 2);
        assert_eq!((kept.summary.upgraded, kept.summary.changed), (1, 1));
        assert_eq!(kept.summary.ignored, 0);
        assert!(kept.ignored.is_empty());
        assert!(narrowed(entry, "ingress-nginx").is_none());
    }
}
