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
    let store = opened.store.domain(&domain);
    match (args.output.unwrap_or_default(), &args.repo, &args.out) {
        (ReportFormat::Html, None, _) => return summarised(settings, args, &store, &domain),
        // The whole trail document (log -o json's), streamed from the store to stdout.
        (ReportFormat::Json, None, None) => {
            let query = crate::ops::history::Query::everything(jiff::Timestamp::now());
            return super::log::streamed_json(settings, &store, &query, true);
        }
        (ReportFormat::Json, None, Some(file)) => {
            return super::log::json_to_file(settings, &store, file);
        }
        _ => {}
    }
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
    write(settings, args, &html, points.len())
}

/// The change list of the HTML page from the store: the newest steps (the page
/// summarises; the timeline covers every step).
const REPORT_ENTRIES: usize = 1000;

/// The HTML page from the store, bounded ([`crate::ops::history::report_history`]).
fn summarised(
    settings: &Settings,
    args: &ReportArgs,
    store: &crate::store::DomainStore,
    domain: &crate::domain::Domain,
) -> Result<i32> {
    let history = crate::ops::history::report_history(store, REPORT_ENTRIES)?;
    for skipped in &history.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    let Some(current) = &history.current else {
        return Err(Error::NoHistory(domain.to_string()).into());
    };
    let at = crate::util::time::format_seconds(rendered_at(settings)?);
    let generated = report::html::Generated {
        at: &at,
        version: env!("CARGO_PKG_VERSION"),
    };
    let html =
        report::html::html_report_of(domain, &history.trail, current, &generated, history.steps);
    write(settings, args, &html, history.steps)
}

/// The page to `--out` (atomically) or stdout.
fn write(settings: &Settings, args: &ReportArgs, html: &str, steps: usize) -> Result<i32> {
    match &args.out {
        Some(file) => {
            crate::util::files::write_atomic(file, html.as_bytes(), 0o644)
                .map_err(|e| Error::io(file, e))?;
            settings.printer.info(&format!(
                "wrote {} ({} step{})",
                file.display(),
                steps,
                if steps == 1 { "" } else { "s" }
            ));
        }
        None => settings.printer.data(html)?,
    }
    Ok(exit::OK)
}
