//! `clinv report`: one self-contained HTML page (or its JSON) with a domain's inventory,
//! a version timeline and the change list — or the fleet's page — printed or written to
//! `--out`.

use crate::console::Console;
use crate::domain::Domain;
use crate::error::{Error, Result, exit};
use crate::ops::history::{Point, say_skipped};
use crate::store::{DomainStore, Store};
use crate::view::format::ReportFormat;
use crate::view::report;
use std::path::Path;

/// The change list of the HTML page from the store: the newest steps (the page
/// summarises; the timeline covers every step).
const REPORT_ENTRIES: usize = 1000;

/// Where and how a report is said.
pub struct Page<'a> {
    pub console: &'a dyn Console,
    pub format: ReportFormat,
    /// `--out`: the file written (atomically) instead of stdout.
    pub out: Option<&'a Path>,
    /// When the page is dated: asked once the history was read (a render's time,
    /// `SOURCE_DATE_EPOCH` when set: reproducible pages).
    pub rendered_at: &'a dyn Fn() -> Result<jiff::Timestamp>,
}

impl Page<'_> {
    /// The HTML page from the store, bounded ([`crate::ops::history::report_history`]).
    ///
    /// # Errors
    /// The store cannot be read; no step; as [`Page::write`].
    pub fn summarised(&self, store: &DomainStore, domain: &Domain) -> Result<i32> {
        let history = crate::ops::history::report_history(store, REPORT_ENTRIES)?;
        say_skipped(self.console, &history.skipped);
        let Some(current) = &history.current else {
            return Err(Error::NoHistory(domain.to_string()));
        };
        let at = crate::util::time::format_seconds((self.rendered_at)()?);
        let generated = generated(&at);
        let trail = &history.trail;
        let html = report::html::html_report_of(domain, trail, current, &generated, history.steps);
        self.write(&html, history.steps)
    }

    /// The page (or its JSON trail) of one domain's points (from `--repo`).
    ///
    /// # Errors
    /// No point; as [`Page::write`].
    pub fn points(&self, points: &[Point], domain: &Domain) -> Result<i32> {
        let Some(current) = points.last() else {
            return Err(Error::NoHistory(domain.to_string()));
        };
        let trail = crate::ops::history::trail(points);
        let at = crate::util::time::format_seconds((self.rendered_at)()?);
        let html = match self.format {
            ReportFormat::Json => report::json::trail(&trail)?,
            ReportFormat::Html => {
                report::html::html_report(domain, &trail, &current.inventory, &generated(&at))
            }
        };
        self.write(&html, points.len())
    }

    /// `report -A`: the fleet page ([`crate::ops::fleet::report::load`]), or `-o json`,
    /// `at` and `since` bounding it.
    ///
    /// # Errors
    /// The store cannot be read; a bad `--at`/`--since`; as [`Page::write`].
    pub fn fleet(
        &self,
        store: &Store,
        domains: &[Domain],
        (at, since): (Option<&str>, Option<&str>),
    ) -> Result<i32> {
        let now = jiff::Timestamp::now();
        let fleet = crate::ops::fleet::report::load(store, domains, at, since, now)?;
        say_skipped(self.console, &fleet.skipped);
        let at = crate::util::time::format_seconds((self.rendered_at)()?);
        let text = match self.format {
            ReportFormat::Html => report::fleet::page(&fleet, &generated(&at)),
            ReportFormat::Json => report::fleet::json(&fleet)?,
        };
        self.write(&text, fleet.steps)
    }

    /// The page to `--out` (atomically) or stdout.
    fn write(&self, html: &str, steps: usize) -> Result<i32> {
        match self.out {
            Some(file) => {
                crate::util::files::write_atomic(file, html.as_bytes(), 0o644)
                    .map_err(|e| Error::io(file, e))?;
                self.console.info(&format!(
                    "wrote {} ({} step{})",
                    file.display(),
                    steps,
                    if steps == 1 { "" } else { "s" }
                ));
            }
            None => self.console.data(html)?,
        }
        Ok(exit::OK)
    }
}

/// The page's footer: when, and by which clinv.
fn generated(at: &str) -> report::html::Generated<'_> {
    report::html::Generated {
        at,
        version: env!("CARGO_PKG_VERSION"),
    }
}
