//! Where `clinv fleet`'s matrix comes from, and the columns `--domain`/`-A` select.
//!
//! `--at`/`--changed-since` (the store's or a repository's history), `--repo`, `--from
//! project|store|live`, else the project (or, with no project, the store `--snapshots`
//! names).

use super::{LiveRead, Matrix};
use crate::error::{Error, Result};
use crate::ops::context::Context;
use crate::ops::live::Live;
use crate::project::select::Many;
use std::path::Path;

/// `--from`: where each cell comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Project,
    Store,
    Live,
}

/// Which matrix `fleet` asked for, plain.
#[derive(Clone, Copy)]
pub struct Asked<'a> {
    pub from: Option<Origin>,
    pub repo: Option<&'a Path>,
    pub branch: Option<&'a str>,
    pub at: Option<&'a str>,
    pub changed_since: Option<&'a str>,
    /// `--domain`, `-A`.
    pub many: Many<'a>,
    /// `--against` was given: both sides need the whole matrix (the live clusters of
    /// every domain read).
    pub comparing: bool,
}

/// The matrix from the source asked for, and whether any cluster domain was not read.
///
/// `--from live` reads clusters; `--from project|live` with `--at`/`--changed-since`
/// (no history) is the caller's usage error, checked before.
///
/// # Errors
/// No project nor store, a read or selection error.
pub fn read(cx: Context<'_>, live: &Live, s: &Asked<'_>) -> Result<(Matrix, bool)> {
    if s.at.is_some() || s.changed_since.is_some() {
        return Ok((selected(past(cx, s)?, s)?, false));
    }
    if let Some(repo) = s.repo {
        let branch = s.branch.unwrap_or("HEAD");
        return Ok((selected(super::from_repo(repo, branch)?, s)?, false));
    }
    let from = match s.from {
        Some(from) => from,
        None => source(cx)?,
    };
    Ok(match from {
        Origin::Project => {
            let project = cx.project().map_err(|e| match e {
                Error::NoProject(cwd) => Error::NoFleet(cwd),
                e => e,
            })?;
            let matrix = super::from_project(&project, cx.rendered_at()?);
            (selected(matrix, s)?, false)
        }
        Origin::Store => {
            let opened = crate::fleet::Reach::open(cx.root, cx.snapshots, cx.cwd)?;
            let matrix = super::from_store(&opened.store, opened.project.as_ref())?;
            (selected(matrix, s)?, false)
        }
        Origin::Live => from_live(cx, live, s)?,
    })
}

/// The columns of the domains `--domain`/`-A` select among those the matrix knows.
fn selected(matrix: Matrix, s: &Asked<'_>) -> Result<Matrix> {
    // --against compares --domain with its own side: both need the whole matrix.
    if s.many.patterns.is_empty() || s.comparing {
        return Ok(matrix);
    }
    let known = matrix.known();
    let keep = crate::fleet::select_in(crate::fleet::Among::Listed(&known), s.many)?;
    Ok(matrix.only(&keep))
}

/// `--at`, `--changed-since`: the store's or the repository's history
/// ([`super::at::read`]); the project and the live clusters have none.
fn past(cx: Context<'_>, s: &Asked<'_>) -> Result<Matrix> {
    let now = jiff::Timestamp::now();
    if let Some(repo) = s.repo {
        let rev = s.branch.unwrap_or("HEAD");
        let past = super::at::Past::Repo(repo, rev);
        return super::at::read(past, s.at, s.changed_since, now);
    }
    let opened = crate::fleet::Reach::open(cx.root, cx.snapshots, cx.cwd)?;
    let past = super::at::Past::Store(&opened.store, opened.project.as_ref());
    super::at::read(past, s.at, s.changed_since, now)
}

/// The source of `fleet` without `--from`: the project, else the store `--snapshots` (or
/// `CLINV_SNAPSHOTS`) names — a user with only a store asks about the fleet it recorded —
/// said on stderr, since recorded is not what a project would render; with neither, an
/// error naming both ways.
fn source(cx: Context<'_>) -> Result<Origin> {
    match cx.project() {
        Ok(_) => Ok(Origin::Project),
        Err(Error::NoProject(cwd)) => match cx.snapshots {
            Some(store) => {
                cx.console.info(&format!(
                    "no lok8s project found in {} or its parents: the fleet as the store {} recorded it (--from store)",
                    cwd.display(),
                    store.display()
                ));
                Ok(Origin::Store)
            }
            None => Err(Error::NoFleet(cwd)),
        },
        Err(e) => Err(e),
    }
}

/// `--from live`: every selected domain's cluster read as `status -A` reads them
/// ([`Live::each`]), and whether any cluster domain was not read.
fn from_live(cx: Context<'_>, live: &Live, s: &Asked<'_>) -> Result<(Matrix, bool)> {
    let at = cx.rendered_at()?;
    let project = cx.project()?;
    // Only the selected clusters are read: a site's question does not wait on the fleet.
    let among = crate::fleet::Among::Project(&project);
    let every = Many {
        patterns: &[],
        all: true,
    };
    // --against compares two sides: both are read.
    let many = if s.comparing { every } else { s.many };
    let domains = crate::fleet::select_in(among, many)?;
    let reads = live.each(
        &project,
        &domains,
        || Ok::<(), Error>(()),
        |domain, live| {
            let scope = live.scope(&project, domain);
            let read = super::read_live(&scope)
                .unwrap_or_else(|e| LiveRead::Failed(crate::error::headline(&e)));
            (domain.clone(), read)
        },
        |domain, why| {
            let (what, detail) = why.words();
            let read = match why {
                crate::fleet::Skip::Deploy(cluster_ref) => LiveRead::Deploy(cluster_ref),
                crate::fleet::Skip::NotTried => LiveRead::NotRead(format!("{what}: {detail}")),
            };
            (domain.clone(), read)
        },
    )?;
    let not_read = reads.iter().any(|(_, r)| matches!(r, LiveRead::NotRead(_)));
    Ok((super::from_live(&project, at, reads), not_read))
}
