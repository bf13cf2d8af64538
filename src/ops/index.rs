//! `clinv index`: the project's addon index, stamped with `SOURCE_DATE_EPOCH`, else the
//! last commit touching `.lok8s/addons`, else now.

use crate::catalog::index::{self, Built, TimeSource};
use crate::error::{Error, Result};
use crate::project::Project;

/// The index and where its `generatedAt` came from.
pub struct Generated {
    pub built: Built,
    pub generated_at: String,
    pub source: TimeSource,
    /// Why the git history could not be read (then `generatedAt` is now).
    pub git_unreadable: Option<String>,
}

/// Builds the index of `project`.
///
/// # Errors
/// No addons folder, a malformed `SOURCE_DATE_EPOCH`, or an unreadable addon.
pub fn generate(
    project: &Project,
    source_date_epoch: Option<&str>,
    now: jiff::Timestamp,
) -> Result<Generated> {
    let addons_dir = project.addons_dir();
    if !addons_dir.is_dir() {
        return Err(Error::NoAddonsDir(addons_dir));
    }
    let mut git_unreadable = None;
    // Git is only consulted when SOURCE_DATE_EPOCH does not decide.
    let last_commit = if source_date_epoch.is_some_and(|s| !s.is_empty()) {
        None
    } else {
        match last_change(&addons_dir) {
            Ok(found) => found,
            Err(message) => {
                git_unreadable = Some(format!(
                    "cannot read the git history of {} ({})",
                    addons_dir.display(),
                    crate::error::chain(&message)
                ));
                None
            }
        }
    };
    let (generated_at, source) = index::generated_at(source_date_epoch, last_commit, now)?;
    let built = index::build(project, &generated_at)?;
    Ok(Generated {
        built,
        generated_at,
        source,
        git_unreadable,
    })
}

/// The committer time and id of the last commit touching `dir`.
#[cfg(feature = "gitops")]
fn last_change(
    dir: &std::path::Path,
) -> std::result::Result<Option<(i64, String)>, crate::error::GitError> {
    crate::gitops::history::last_change(dir)
        .map(|found| found.map(|c| (c.committer_time, c.commit)))
}

/// Without git support the index is dated by SOURCE_DATE_EPOCH or the current time.
#[cfg(not(feature = "gitops"))]
fn last_change(
    _dir: &std::path::Path,
) -> std::result::Result<Option<(i64, String)>, crate::error::GitError> {
    Ok(None)
}
