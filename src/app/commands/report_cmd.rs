//! `clinv report`: one self-contained HTML page with the domain's inventory, a version
//! timeline and the change list.

use super::{StoreOnly, rendered_at};
use crate::app::Result;
use crate::app::cli::{ReportArgs, ReportFormat};
use crate::app::settings::Settings;
use crate::error::{Error, exit};
use crate::view::report;

pub fn run(settings: &Settings, args: &ReportArgs) -> Result<i32> {
    let opened = StoreOnly::open(settings)?;
    let domain = opened.domain(settings, args.domain.domain.as_deref())?;
    let points =
        super::history(settings, &opened.store, &domain, args.repo.as_deref(), None)?.points;
    let Some(current) = points.last() else {
        return Err(Error::NoHistory(domain.to_string()).into());
    };
    let trail = crate::ops::history::trail(&points);
    // Dated like a render: SOURCE_DATE_EPOCH when set (reproducible pages), else now.
    let at = crate::util::time::format_seconds(rendered_at(settings)?);
    let generated = report::html::Generated {
        at: &at,
        version: env!("CARGO_PKG_VERSION"),
    };
    let html = match args.output.unwrap_or_default() {
        ReportFormat::Json => report::json::trail(&trail)?,
        ReportFormat::Html => {
            report::html::html_report(&domain, &trail, &current.inventory, &generated)
        }
    };
    match &args.out {
        Some(file) => {
            crate::util::files::write_atomic(file, html.as_bytes(), 0o644)
                .map_err(|e| Error::io(file, e))?;
            settings.printer.info(&format!(
                "wrote {} ({} step{})",
                file.display(),
                points.len(),
                if points.len() == 1 { "" } else { "s" }
            ));
        }
        None => settings.printer.data(&html)?,
    }
    Ok(exit::OK)
}
