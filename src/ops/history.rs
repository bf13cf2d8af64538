//! The history of a domain, oldest first, from the snapshot store or from a GitOps
//! repository's commits — the input of `log` and `report` — and the two views of it.

use crate::error::{Error, Result};
use crate::history::audit::{self, Span, Step, Trail};
use crate::history::diff::Ignore;
use crate::inventory::ClusterInventory;
use crate::store::{DomainStore, State};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// One point of the history.
pub struct Point {
    pub id: String,
    pub at: String,
    pub outcome: &'static str,
    pub inventory: Rc<ClusterInventory>,
}

impl Point {
    pub fn step(&self) -> Step<'_> {
        Step {
            id: &self.id,
            at: &self.at,
            outcome: self.outcome,
            inventory: &self.inventory,
        }
    }
}

/// The points, and what was skipped on the way (damaged records and objects).
pub struct History {
    pub points: Vec<Point>,
    pub skipped: Vec<String>,
}

/// Where the history is read.
pub enum Source<'a> {
    /// The domain's snapshot store.
    Store(&'a DomainStore),
    /// The committed CR of `domain` (in the default GitOps folder) along `rev`'s
    /// first-parent history in `repo`.
    Repo {
        repo: &'a Path,
        rev: &'a str,
        domain: &'a str,
    },
}

fn outcome(state: State) -> &'static str {
    match state {
        State::Pending => "queued",
        State::Applied => "applied",
        State::Committed => "committed",
        State::Superseded | State::Deleted => "superseded",
        State::Recorded => "recorded",
    }
}

/// Reads the history.
///
/// # Errors
/// An unreadable store or repository; a committed CR that does not parse.
pub fn load(source: Source<'_>) -> Result<History> {
    match source {
        Source::Store(store) => from_store(store),
        Source::Repo { repo, rev, domain } => from_repo(repo, rev, domain).map(|points| History {
            points,
            skipped: Vec::new(),
        }),
    }
}

/// Every snapshot of the domain (gc'd ones aside). Snapshots that share a CR object share
/// one parsed inventory, so memory grows with distinct inventories, not with records.
/// Damaged records and objects are skipped and named in [`History::skipped`].
fn from_store(store: &DomainStore) -> Result<History> {
    let journal = store.read()?;
    let mut skipped: Vec<String> = journal
        .damage
        .iter()
        .map(|d| format!("snapshot store: {d}"))
        .collect();
    let mut cache: HashMap<String, Rc<ClusterInventory>> = HashMap::new();
    let mut points = Vec::with_capacity(journal.snapshots.len());
    // Consumed as it goes: each point takes its snapshot's id and time.
    for snap in journal
        .snapshots
        .into_iter()
        .filter(|s| s.state != State::Deleted)
    {
        let inventory = match cache.get(&snap.record.cr) {
            Some(i) => i.clone(),
            None => match store.inventory(&snap.record) {
                Ok(i) => {
                    let rc = Rc::new(i);
                    cache.insert(snap.record.cr.clone(), rc.clone());
                    rc
                }
                Err(e) => {
                    skipped.push(format!("snapshot {}: {e}", snap.record.id));
                    continue;
                }
            },
        };
        let outcome = outcome(snap.state);
        points.push(Point {
            id: snap.record.id,
            at: snap.record.at,
            outcome,
            inventory,
        });
    }
    Ok(History { points, skipped })
}

/// Without git support there is no repository history to read.
#[cfg(not(feature = "gitops"))]
fn from_repo(_repo: &Path, _rev: &str, _domain: &str) -> Result<Vec<Point>> {
    Err(Error::NoGitops("--repo"))
}

/// The versions of the committed CR along the branch's first-parent history.
#[cfg(feature = "gitops")]
fn from_repo(repo: &Path, rev: &str, domain: &str) -> Result<Vec<Point>> {
    let path = &crate::gitops::default_cr_path(domain);
    let versions = crate::gitops::history::file_history(repo, rev, path)
        .map_err(|e| Error::Git(format!("{}: {e}", repo.display())))?;
    let mut out = Vec::with_capacity(versions.len());
    for v in versions {
        let text = String::from_utf8(v.content)
            .map_err(|_| Error::Git(format!("{path} at {} is not UTF-8", v.commit)))?;
        let inventory = crate::inventory::parse::inventory_from_text(&text).map_err(|m| {
            Error::InvalidFile {
                path: format!("{}:{}:{path}", repo.display(), &v.commit[..12]).into(),
                message: m,
            }
        })?;
        out.push(Point {
            id: v.commit[..12].to_string(),
            at: v.at,
            outcome: "committed",
            inventory: Rc::new(inventory),
        });
    }
    Ok(out)
}

/// What `clinv log` shows.
pub struct Query<'a> {
    /// Only entries at or after this date or time.
    pub since: Option<&'a str>,
    /// Only entries at or before this date or time (a bare date: the end of that day).
    pub until: Option<&'a str>,
    /// At most this many entries, newest first.
    pub max_count: Option<usize>,
    /// One addon's version spans instead of the change list.
    pub addon: Option<&'a str>,
    /// Oldest first (`--reverse`), after `max_count` took the newest.
    pub reverse: bool,
    /// What relative bounds (`2d`, `yesterday`) count from.
    pub now: jiff::Timestamp,
}

/// `clinv log`'s answer.
pub enum Log {
    /// The spans of `--addon` (empty: the addon never appears).
    Addon(Vec<Span>),
    /// The change list, filtered and truncated.
    Trail(Trail),
}

/// The audit trail of `points`, or one addon's timeline.
///
/// # Errors
/// [`Error::Usage`] for a `since`/`until` that is not a date or RFC 3339 time.
pub fn log(points: &[Point], query: &Query<'_>) -> Result<Log> {
    let bound = |t: Option<&str>, end: bool| {
        t.map(|t| {
            audit::parse_query_bound(t, end, query.now).ok_or_else(|| {
                Error::Usage(format!(
                    "'{t}' is not a date (YYYY-MM-DD), an RFC 3339 time, today, yesterday or a time ago (30m, 12h, 2d, 1w)"
                ))
            })
        })
        .transpose()
    };
    let (since, until) = (bound(query.since, false)?, bound(query.until, true)?);
    let steps: Vec<Step> = points.iter().map(Point::step).collect();
    if let Some(name) = query.addon {
        return Ok(Log::Addon(audit::addon_timeline(&steps, name)));
    }
    let mut trail = audit::trail(&steps, &Ignore::default());
    trail.entries.retain(|e| {
        let at = audit::parse_bound(&e.at, false);
        since.is_none_or(|s| at.is_some_and(|a| a >= s))
            && until.is_none_or(|u| at.is_some_and(|a| a <= u))
    });
    if let Some(n) = query.max_count {
        trail.entries.truncate(n);
    }
    if query.reverse {
        trail.entries.reverse();
    }
    Ok(Log::Trail(trail))
}

/// The whole trail of `points` (`clinv report`).
pub fn trail(points: &[Point]) -> Trail {
    let steps: Vec<Step> = points.iter().map(Point::step).collect();
    audit::trail(&steps, &Ignore::default())
}
