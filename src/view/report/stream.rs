//! The logs of a store written as they are made.
//!
//! An entry at a time into a writer, so a history of a million records is never held as
//! entries or text. `failed` turns a write error into the caller's error (stdout's, or a
//! file's).

use crate::error::{Error, Result};
use crate::ops::history::{FleetLog, Query, StoreSteps};
use crate::view::report::{json, markdown, text};
use std::io::Write;

type Failed<'a> = &'a dyn Fn(std::io::Error) -> Error;

/// The trail document of `steps` for `query` ([`json::trail`]'s bytes; `[]` for an empty
/// window). Returns the number of entries.
///
/// # Errors
/// A bad `since`/`until`; a write error.
pub fn write_json(
    steps: &StoreSteps,
    query: &Query<'_>,
    out: &mut dyn Write,
    failed: Failed<'_>,
) -> Result<usize> {
    let (label, timeline) = steps.timeline();
    let head = json::trail_head(label.as_deref())?;
    let mut first = true;
    let n = steps.entries(query, |entry| {
        if first {
            out.write_all(head.as_bytes()).map_err(failed)?;
        }
        let text = json::trail_entry(entry, first)?;
        first = false;
        out.write_all(text.as_bytes()).map_err(failed)
    })?;
    let text = match (n == 0, query.windowed()) {
        (true, true) => "[]\n".to_string(),
        (true, false) => head.clone() + &json::trail_end(&timeline, true)?,
        (false, _) => json::trail_end(&timeline, false)?,
    };
    out.write_all(text.as_bytes()).map_err(failed)?;
    Ok(n)
}

/// The markdown trail of `steps` for `query` ([`markdown::trail`]'s bytes): its head
/// (the `n` entries counted beforehand), then a row per entry.
///
/// # Errors
/// A bad `since`/`until`; a write error.
pub fn write_markdown(
    steps: &StoreSteps,
    query: &Query<'_>,
    n: usize,
    out: &mut dyn Write,
    failed: Failed<'_>,
) -> Result<()> {
    let (label, timeline) = steps.timeline();
    let head = markdown::trail_head(label.as_deref(), n, &timeline);
    out.write_all(head.as_bytes()).map_err(failed)?;
    if timeline.start.is_some() && timeline.end.is_some() {
        steps.entries(query, |entry| {
            let row = markdown::trail_row(entry);
            out.write_all(row.as_bytes()).map_err(failed)
        })?;
    }
    Ok(())
}

/// The plain log of `steps` for `query` ([`text::trail_aged`]'s bytes), or with
/// `lines` the `--oneline` log (measured here first, then written). Returns the
/// number of entries.
///
/// # Errors
/// A bad `since`/`until`; a write error.
pub fn write_text(
    steps: &StoreSteps,
    query: &Query<'_>,
    mut lines: Option<text::Oneline>,
    (color, aged): (bool, Option<jiff::Timestamp>),
    out: &mut dyn Write,
    failed: Failed<'_>,
) -> Result<usize> {
    if let Some(lines) = &mut lines {
        steps.entries(query, |entry| {
            lines.measure(None, entry);
            Ok(())
        })?;
    }
    let (mut buf, mut first) = (String::new(), true);
    let n = steps.entries(query, |entry| {
        buf.clear();
        match &lines {
            Some(lines) => buf.push_str(&lines.line(None, entry)),
            None => text::entry_aged(&mut buf, entry, first, color, aged),
        }
        first = false;
        out.write_all(buf.as_bytes()).map_err(failed)
    })?;
    if n == 0 && !query.windowed() {
        out.write_all(text::NO_HISTORY.as_bytes()).map_err(failed)?;
    }
    Ok(n)
}

/// `log -A` as text, an entry at a time, each led by its domain; with `lines` the
/// `--oneline` log (measured here first, then written). Returns the number of entries.
///
/// # Errors
/// A write error.
pub fn write_fleet_text(
    log: &FleetLog<'_>,
    mut lines: Option<text::Oneline>,
    (color, aged): (bool, Option<jiff::Timestamp>),
    out: &mut dyn Write,
    failed: Failed<'_>,
) -> Result<usize> {
    if let Some(lines) = &mut lines {
        log.each(|domain, entry| {
            lines.measure(Some(domain), entry);
            Ok(())
        })?;
    }
    let (mut n, mut buf) = (0, String::new());
    log.each(|domain, entry| {
        buf.clear();
        match &lines {
            Some(lines) => buf.push_str(&lines.line(Some(domain), entry)),
            None => text::fleet_entry(&mut buf, domain, entry, n == 0, color, aged),
        }
        n += 1;
        out.write_all(buf.as_bytes()).map_err(failed)
    })?;
    Ok(n)
}
