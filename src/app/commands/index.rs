//! `clinv index`: the project's addon index (spec §10), as lok8s's docs build writes it.

use super::{project, report_warnings};
use crate::app::Result;
use crate::app::cli::IndexArgs;
use crate::app::settings::Settings;
use crate::catalog::index::{self, TimeSource};
use crate::error::exit;

pub fn run(settings: &Settings, args: &IndexArgs) -> Result<i32> {
    let project = project(settings)?;
    let sde = settings.env.source_date_epoch.as_deref();
    let generated = crate::ops::index::generate(&project, sde, jiff::Timestamp::now())?;
    if let Some(why) = &generated.git_unreadable {
        settings
            .printer
            .warn(&format!("index: {why}; generatedAt is the current time"));
    }
    settings.printer.debug(&match &generated.source {
        TimeSource::SourceDateEpoch => "generatedAt from SOURCE_DATE_EPOCH".to_string(),
        TimeSource::Commit(c) => format!("generatedAt from commit {c}"),
        TimeSource::Now => "generatedAt is now (no SOURCE_DATE_EPOCH, no commit)".to_string(),
    });
    let built = &generated.built;
    report_warnings(settings, &built.warnings)?;
    let text = index::encode(&built.index)?;
    match &args.out {
        Some(path) => {
            crate::util::files::write_atomic(path, text.as_bytes(), 0o644)
                .map_err(|e| crate::Error::io(path, e))?;
            settings.printer.info(&format!(
                "wrote {} ({} addons, generatedAt {})",
                path.display(),
                built.index.addons.len(),
                generated.generated_at
            ));
        }
        None => settings.printer.data(&text)?,
    }
    Ok(exit::OK)
}
