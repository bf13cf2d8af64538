//! `clinv index`: the project's addon index (spec §10), as lok8s's docs build writes it,
//! printed or written to `--out`, with where its `generatedAt` came from.

use crate::catalog::index::{self, TimeSource};
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::project::Project;
use std::path::Path;

/// The index of `project` (`source_date_epoch`: `SOURCE_DATE_EPOCH`), its build warnings
/// said (an error with `strict`), printed or written to `out` (atomically).
///
/// # Errors
/// The index cannot be built; `strict` and a warning; `out` cannot be written; stdout.
pub fn say(
    console: &dyn Console,
    project: &Project,
    (source_date_epoch, strict): (Option<&str>, bool),
    out: Option<&Path>,
) -> Result<i32> {
    let generated =
        crate::ops::index::generate(project, source_date_epoch, jiff::Timestamp::now())?;
    if let Some(why) = &generated.git_unreadable {
        console.warn(&format!("index: {why}; generatedAt is the current time"));
    }
    console.debug(&match &generated.source {
        TimeSource::SourceDateEpoch => "generatedAt from SOURCE_DATE_EPOCH".to_string(),
        TimeSource::Commit(c) => format!("generatedAt from commit {c}"),
        TimeSource::Now => "generatedAt is now (no SOURCE_DATE_EPOCH, no commit)".to_string(),
    });
    let built = &generated.built;
    crate::ops::warnings::say(console, strict, &built.warnings)?;
    let text = index::encode(&built.index)?;
    match out {
        Some(path) => {
            crate::util::files::write_atomic(path, text.as_bytes(), 0o644)
                .map_err(|e| Error::io(path, e))?;
            console.info(&format!(
                "wrote {} ({} addons, generatedAt {})",
                path.display(),
                built.index.addons.len(),
                generated.generated_at
            ));
        }
        None => console.data(&text)?,
    }
    Ok(exit::OK)
}
