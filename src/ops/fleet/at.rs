//! The fleet as it was: the matrix at a date (`fleet --at`), and which of its cells
//! changed since another (`--changed-since`).
//!
//! A date means what `clinv diff @DATE` means ([`crate::store::resolve`]): a day is its
//! last second, UTC; an RFC 3339 time is that instant; `today`, `yesterday` and a time
//! ago (`2d`) count from now. From the store each domain's column is its newest snapshot
//! recorded at or before it (deleted ones aside); from a repository, the newest commit of
//! the branch's first-parent history committed at or before it.

use super::{Builder, Matrix, Source};
use crate::error::{ArgumentError, Error, Result};
use crate::history::refs::SnapshotRef;
use crate::project::Project;
use crate::store::{DomainStore, Store};
use std::collections::BTreeMap;

/// The date a matrix shows, as asked and as the instant it stands for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AsOf {
    /// As typed (`2026-03-01`, `2d`).
    pub date: String,
    /// The last instant it includes, RFC 3339 UTC.
    pub until: String,
    /// From a repository: the commit read (none before the branch's first commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl AsOf {
    /// `date` read as a bound: a day is its last second.
    ///
    /// # Errors
    /// Not a date ([`ArgumentError::Time`]).
    pub fn parse(date: &str, now: jiff::Timestamp) -> Result<(AsOf, jiff::Timestamp)> {
        let until = crate::history::audit::parse_query_bound(date, true, now)
            .ok_or_else(|| Error::from(ArgumentError::Time(date.to_string())))?;
        let as_of = AsOf {
            date: date.to_string(),
            until: crate::util::time::format_seconds(until),
            commit: None,
        };
        Ok((as_of, until))
    }
}

/// Where a past matrix is read from: the sources that keep a history.
#[derive(Clone, Copy)]
pub enum Past<'a> {
    /// The snapshot store; the project (when there is one) names its deploy domains.
    Store(&'a Store, Option<&'a Project>),
    /// A GitOps repository and the branch (or revision) whose history is read.
    Repo(&'a std::path::Path, &'a str),
}

/// The matrix `fleet` shows with `--at` and `--changed-since`: at `at` (else the
/// newest, as `fleet` without it), its cells that changed since `since` marked.
///
/// # Errors
/// A date that is none; a store or repository that cannot be read.
pub fn read(
    past: Past<'_>,
    at: Option<&str>,
    since: Option<&str>,
    now: jiff::Timestamp,
) -> Result<Matrix> {
    let mut shown = match at {
        Some(date) => matrix_at(past, date, now)?,
        None => match past {
            Past::Store(store, project) => super::from_store(store, project)?,
            Past::Repo(repo, rev) => super::from_repo(repo, rev)?,
        },
    };
    if let Some(date) = since {
        let then = matrix_at(past, date, now)?;
        shown.changed = Some(changes(&then, &shown));
    }
    Ok(shown)
}

/// The matrix at `date` from `past`.
///
/// # Errors
/// As [`read`].
pub fn matrix_at(past: Past<'_>, date: &str, now: jiff::Timestamp) -> Result<Matrix> {
    let (as_of, until) = AsOf::parse(date, now)?;
    match past {
        Past::Store(store, project) => from_store_at(store, project, as_of, until),
        Past::Repo(repo, rev) => from_repo_at(repo, rev, as_of, until),
    }
}

/// A domain's newest snapshot at or before a date: its CR object and render time.
type Found = Option<(String, String)>;

/// The newest snapshot of `ds` at or before `until` (`reference`, as an `@` reference):
/// from the end of the live generation when it can tell, else from the newest end of the
/// listing, a window growing eight times each turn until it holds one or the whole
/// history (either way the cost of a domain is the part of its history after the date).
///
/// # Errors
/// An unreadable journal.
fn newest_at(ds: &DomainStore, until: jiff::Timestamp, reference: &SnapshotRef) -> Result<Found> {
    if let Some(found) = ds.newest_at_from_tail(until) {
        return Ok(found.map(|s| (s.cr, s.rendered_at)));
    }
    let found = |l: &crate::store::scan::Listing, i: usize| {
        l.row(i)
            .map(|r| (r.cr().to_string(), r.rendered_at().to_string()))
    };
    let mut want = 64usize;
    loop {
        let Some((tail, before, _)) = ds.listing_tail(want)? else {
            let all = ds.listing()?;
            return Ok(crate::store::resolve(&all, reference)
                .ok()
                .and_then(|i| found(&all, i)));
        };
        match crate::store::resolve(&tail, reference) {
            Ok(i) => return Ok(found(&tail, i)),
            Err(_) if before == 0 => return Ok(None),
            Err(_) => want = want.saturating_mul(8),
        }
    }
}

/// The matrix of every domain of `store` at `until`: each domain's newest snapshot at
/// or before it, read two domains at a time.
fn from_store_at(
    store: &Store,
    project: Option<&Project>,
    as_of: AsOf,
    until: jiff::Timestamp,
) -> Result<Matrix> {
    let mut matrix = store_at(store, &store.domains(), until, &as_of.date)?;
    if let Some(project) = project {
        let mut builder = Builder {
            matrix,
            index: BTreeMap::new(),
        };
        deploy_domains(&mut builder, project);
        matrix = builder.matrix;
    }
    matrix.as_of = Some(as_of);
    Ok(matrix)
}

/// The matrix of `domains` of `store` at `until` (`date` names it in the reason a
/// domain has no column).
///
/// # Errors
/// A store that cannot be read.
pub fn store_at(
    store: &Store,
    domains: &[crate::domain::Domain],
    until: jiff::Timestamp,
    date: &str,
) -> Result<Matrix> {
    let reference = SnapshotRef::At(crate::util::time::format_seconds(until));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let read = crate::util::pool::ordered(domains, workers, |domain| {
        let ds = store.domain(domain);
        newest_at(&ds, until, &reference)?
            .map(|(cr, rendered_at)| ds.inventory_of(&cr, &rendered_at))
            .transpose()
    });
    let mut builder = Builder::new(Source::Store);
    let none = format!("no snapshot at or before {date}");
    for (domain, read) in domains.iter().zip(read) {
        match read {
            Ok(Some(inv)) => builder.add(domain, &inv),
            Ok(None) => builder.leave(domain, none.clone()),
            Err(e) => builder.fail(domain, crate::error::chain(&e)),
        }
    }
    Ok(builder.matrix)
}

/// The project's deploy domains, named (no inventory of their own).
pub(super) fn deploy_domains(builder: &mut Builder, project: &Project) {
    for domain in project.domains() {
        if let crate::project::DomainKind::Deploy { cluster_ref, .. } = project.domain_kind(&domain)
        {
            builder.deploy(&domain, cluster_ref);
        }
    }
}

/// The matrix of the newest commit of `rev`'s first-parent history at or before
/// `until`; before its first commit, an empty matrix that says so.
#[cfg(feature = "gitops")]
fn from_repo_at(
    repo: &std::path::Path,
    rev: &str,
    mut as_of: AsOf,
    until: jiff::Timestamp,
) -> Result<Matrix> {
    let commit = crate::gitops::history::commit_at(repo, rev, until.as_second()).map_err(|e| {
        crate::error::GitError::InRepo {
            repo: repo.display().to_string(),
            source: Box::new(e),
        }
    })?;
    let mut matrix = match &commit {
        Some(id) => super::from_repo(repo, id)?,
        None => {
            let mut m = Builder::new(Source::Repo).matrix;
            m.left.push(super::Left {
                domain: "(every domain)".into(),
                why: format!("no commit of {rev} at or before {}", as_of.date),
                failed: false,
                other_domain: false,
                deploy: None,
            });
            m
        }
    };
    as_of.commit = commit;
    matrix.as_of = Some(as_of);
    Ok(matrix)
}

#[cfg(not(feature = "gitops"))]
fn from_repo_at(
    _repo: &std::path::Path,
    _rev: &str,
    _as_of: AsOf,
    _until: jiff::Timestamp,
) -> Result<Matrix> {
    Err(Error::NoGitops("--repo"))
}

/// What changed between the matrix at `--changed-since` and the one shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changed {
    /// The date compared with.
    pub since: Option<AsOf>,
    /// Each changed cell of the shown matrix, by (addon, domain): what it was then —
    /// `None` when the domain did not have the addon (or was not recorded) then, else
    /// its version then (`Some(None)`: deployed with no chart version).
    pub was: BTreeMap<(String, String), Option<Option<String>>>,
    /// Domains of the shown matrix with no column then.
    pub added_domains: Vec<String>,
    /// Cells there then and gone now: (addon, domain, version then), in the then
    /// matrix's order.
    pub removed: Vec<(String, String, Option<String>)>,
}

/// What changed from the matrix `then` to the matrix `now`.
///
/// The cells of `now` that are not what `then` had (another version, or not there),
/// and the cells of `then` that `now` has not, for a domain `now` has a column of (a
/// domain left out of `now` is said as such, not as every addon removed).
pub fn changes(then: &Matrix, now: &Matrix) -> Changed {
    let cells = |m: &Matrix| {
        let mut out: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
        for row in &m.rows {
            for (&c, cell) in &row.cells {
                let key = (row.addon.clone(), m.domains[c].clone());
                out.insert(key, cell.version.clone());
            }
        }
        out
    };
    let (before, after) = (cells(then), cells(now));
    let mut changed = Changed {
        since: then.as_of.clone(),
        ..Changed::default()
    };
    for (key, version) in &after {
        match before.get(key) {
            Some(old) if old == version => {}
            old => {
                changed.was.insert(key.clone(), old.cloned());
            }
        }
    }
    changed.added_domains = now
        .domains
        .iter()
        .filter(|d| !then.domains.contains(d))
        .cloned()
        .collect();
    for row in &then.rows {
        for (&c, cell) in &row.cells {
            let domain = &then.domains[c];
            let key = (row.addon.clone(), domain.clone());
            if now.domains.contains(domain) && !after.contains_key(&key) {
                changed
                    .removed
                    .push((row.addon.clone(), domain.clone(), cell.version.clone()));
            }
        }
    }
    changed
}

/// What the marks of `--changed-since` do not show, said on stderr: how many cells
/// changed, the domains new since the date, and the addons gone since.
pub fn notes(m: &Matrix) -> Vec<String> {
    let Some(changed) = &m.changed else {
        return Vec::new();
    };
    let since = changed.since.as_ref().map_or("", |s| s.date.as_str());
    let mut out = vec![format!(
        "{} cell(s) changed since {since} (marked (was V), or (new) where the domain did not have the addon then)",
        m.changed_marks().len()
    )];
    if !changed.added_domains.is_empty() {
        out.push(format!(
            "{} domain(s) with no snapshot at or before {since}: {}",
            changed.added_domains.len(),
            changed.added_domains.join(", ")
        ));
    }
    for (addon, domain, was) in &changed.removed {
        let was = was.as_deref().unwrap_or("*");
        out.push(format!("{domain}: {addon} {was} removed since {since}"));
    }
    out
}

impl Matrix {
    /// The changed cells by (addon, column), each with what it was: `was V` (`*`: no
    /// chart version), or `new since DATE`.
    pub(super) fn changed_marks(&self) -> BTreeMap<(String, usize), String> {
        let Some(changed) = &self.changed else {
            return BTreeMap::new();
        };
        let since = changed.since.as_ref().map_or("", |s| s.date.as_str());
        let mut out = BTreeMap::new();
        for row in &self.rows {
            for &c in row.cells.keys() {
                let key = (row.addon.clone(), self.domains[c].clone());
                let text = match changed.was.get(&key) {
                    None => continue,
                    Some(Some(was)) => format!("was {}", was.as_deref().unwrap_or("*")),
                    Some(None) => format!("new since {since}"),
                };
                out.insert((row.addon.clone(), c), text);
            }
        }
        out
    }

    /// `--changed-only`: keeps the cells that changed since the date compared with (every
    /// cell without one); rows and domains left without a cell go.
    pub fn changed_only(mut self) -> Matrix {
        let Some(changed) = &self.changed else {
            return self;
        };
        let domains = self.domains.clone();
        for row in &mut self.rows {
            let addon = row.addon.clone();
            row.cells.retain(|&c, _| {
                changed
                    .was
                    .contains_key(&(addon.clone(), domains[c].clone()))
            });
        }
        self.rows.retain(|r| !r.cells.is_empty());
        self.keep_used_domains()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(domains: &[&str], rows: &[(&str, &[(usize, &str)])]) -> Matrix {
        let rows: Vec<_> = rows
            .iter()
            .map(|(addon, cells)| (*addon, cells.iter().map(|&(c, v)| (c, Some(v))).collect()))
            .collect();
        crate::ops::fleet::fixture(Source::Store, domains, &rows)
    }

    #[test]
    fn changes_name_each_changed_cell_with_what_it_was_and_the_new_domains() {
        let then = matrix(
            &["a", "b"],
            &[
                ("cilium", &[(0, "1.18"), (1, "1.18")]),
                ("metrics", &[(0, "3.12"), (1, "3.12")]),
            ],
        );
        let now = matrix(
            &["a", "b", "c"],
            &[
                ("cilium", &[(0, "1.19"), (1, "1.18"), (2, "1.19")]),
                ("metrics", &[(1, "3.12")]),
                ("cert-manager", &[(1, "1.20")]),
            ],
        );
        let c = changes(&then, &now);
        let key = |a: &str, d: &str| (a.to_string(), d.to_string());
        assert_eq!(
            c.was.get(&key("cilium", "a")),
            Some(&Some(Some("1.18".into())))
        );
        assert_eq!(c.was.get(&key("cilium", "c")), Some(&None));
        assert_eq!(c.was.get(&key("cert-manager", "b")), Some(&None));
        assert!(!c.was.contains_key(&key("cilium", "b")));
        assert_eq!(c.was.len(), 3);
        assert_eq!(c.added_domains, ["c"]);
        assert_eq!(
            c.removed,
            [(
                "metrics".to_string(),
                "a".to_string(),
                Some("3.12".to_string())
            )]
        );
        let mut shown = now.clone();
        shown.changed = Some(c);
        let only = shown.changed_only();
        assert_eq!(only.domains, ["a", "b", "c"]);
        assert_eq!(
            only.rows
                .iter()
                .map(|r| r.addon.as_str())
                .collect::<Vec<_>>(),
            ["cilium", "cert-manager"]
        );
        assert_eq!(only.rows[0].cells.len(), 2);
    }

    #[test]
    fn a_date_is_its_last_second_and_a_word_is_refused() {
        let now = "2026-12-05T12:00:00Z".parse().unwrap();
        let (as_of, _) = AsOf::parse("2026-03-01", now).unwrap();
        assert_eq!(as_of.until, "2026-03-01T23:59:59Z");
        let (as_of, _) = AsOf::parse("2d", now).unwrap();
        assert_eq!(as_of.until, "2026-12-03T12:00:00Z");
        assert!(AsOf::parse("last tuesday", now).is_err());
    }
}
