//! `clinv index`: the project's addon index (spec §10), as lok8s's docs build writes it.

use super::{project, report_warnings};
use crate::app::cli::IndexArgs;
use crate::app::settings::Settings;
use crate::error::{Result, exit};
use crate::status::index::{self, TimeSource};

pub fn run(settings: &Settings, args: &IndexArgs) -> Result<i32> {
    let project = project(settings)?;
    let addons_dir = project.addons_dir();
    if !addons_dir.is_dir() {
        return Err(crate::Error::NoAddonsDir(addons_dir));
    }
    let sde = settings.env.source_date_epoch.as_deref();
    // Git is only consulted when SOURCE_DATE_EPOCH does not decide.
    let last_commit = if sde.is_some_and(|s| !s.is_empty()) {
        None
    } else {
        match last_change(&addons_dir) {
            Ok(found) => found,
            Err(message) => {
                settings.printer.warn(&format!(
                    "index: cannot read the git history of {} ({message}); generatedAt is the current time",
                    addons_dir.display()
                ));
                None
            }
        }
    };
    let (generated_at, source) = index::generated_at(sde, last_commit, jiff::Timestamp::now())?;
    settings.printer.debug(&match &source {
        TimeSource::SourceDateEpoch => "generatedAt from SOURCE_DATE_EPOCH".to_string(),
        TimeSource::Commit(c) => format!("generatedAt from commit {c}"),
        TimeSource::Now => "generatedAt is now (no SOURCE_DATE_EPOCH, no commit)".to_string(),
    });
    let built = index::build(&project, &generated_at)?;
    report_warnings(settings, &built.warnings)?;
    let text = index::encode(&built.index)?;
    match &args.out {
        Some(path) => {
            crate::util::files::write_atomic(path, text.as_bytes(), 0o644)
                .map_err(|e| crate::Error::io(path, e))?;
            settings.printer.info(&format!(
                "wrote {} ({} addons, generatedAt {generated_at})",
                path.display(),
                built.index.addons.len()
            ));
        }
        None => settings.printer.data(&text)?,
    }
    Ok(exit::OK)
}

/// The committer time and id of the last commit touching `dir`.
#[cfg(feature = "gitops")]
fn last_change(dir: &std::path::Path) -> std::result::Result<Option<(i64, String)>, String> {
    crate::gitops::history::last_change(dir)
        .map(|found| found.map(|c| (c.committer_time, c.commit)))
}

/// Without git support the index is dated by SOURCE_DATE_EPOCH or the current time.
#[cfg(not(feature = "gitops"))]
fn last_change(_dir: &std::path::Path) -> std::result::Result<Option<(i64, String)>, String> {
    Ok(None)
}
