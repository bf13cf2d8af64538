//! `clinv report`: one self-contained HTML page with the domain's inventory, a version
//! timeline and the change list.

use super::rendered_at;
use crate::app::Result;
use crate::app::cli::{ReportArgs, ReportFormat};
use crate::app::settings::Settings;
use crate::error::{Error, exit};
use crate::view::report;

pub fn run(settings: &Settings, args: &ReportArgs) -> Result<i32> {
    let opened = super::reach(settings)?;
    if let Some(domains) = opened.fleet(args.domain.many())? {
        return fleet(settings, args, &opened.store, &domains);
    }
    if args.at.is_some() || args.since.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv report: --at and --since are the fleet report's (-A, --domain repeated, a glob); one domain's page shows its whole history".to_string(),
        ));
    }
    let domain = opened.domain(&settings.printer, args.domain.one(), settings.env.domain_name.as_deref())?;
    let store = opened.store.domain(&domain);
    match (args.output.unwrap_or_default(), &args.repo, &args.out) {
        (ReportFormat::Html, None, _) => return summarised(settings, args, &store, &domain),
        // The whole trail document (log -o json's), streamed from the store to stdout.
        (ReportFormat::Json, None, None) => {
            let query = crate::ops::history::Query::everything(jiff::Timestamp::now());
            let say = crate::view::log::Say {
                console: &settings.printer,
                style: crate::view::log::Style {
                    format: crate::view::format::LogFormat::Json,
                    oneline: false,
                    strict: settings.strict,
                },
                query: &query,
            };
            return Ok(say.store_json(&store, true)?);
        }
        (ReportFormat::Json, None, Some(file)) => {
            return Ok(crate::view::log::json_to_file(&settings.printer, &store, file)?);
        }
        _ => {}
    }
    let points =
        crate::ops::history::load_said(&settings.printer, &opened.store, &domain, args.repo.as_deref(), None)?.points;
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

/// `report -A`: the fleet page ([`crate::ops::fleet::report::load`]), or `-o json`.
fn fleet(
    settings: &Settings,
    args: &ReportArgs,
    store: &crate::store::Store,
    domains: &[crate::domain::Domain],
) -> Result<i32> {
    if args.repo.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv report: --repo reads one domain's history; the fleet report reads the store"
                .to_string(),
        ));
    }
    let (at, since) = (args.at.as_deref(), args.since.as_deref());
    let fleet = crate::ops::fleet::report::load(store, domains, at, since, jiff::Timestamp::now())?;
    for skipped in &fleet.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    let at = crate::util::time::format_seconds(rendered_at(settings)?);
    let generated = report::html::Generated {
        at: &at,
        version: env!("CARGO_PKG_VERSION"),
    };
    let text = match args.output.unwrap_or_default() {
        ReportFormat::Html => report::fleet::page(&fleet, &generated),
        ReportFormat::Json => report::fleet::json(&fleet)?,
    };
    write(settings, args, &text, fleet.steps)
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
