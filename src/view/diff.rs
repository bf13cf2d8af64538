//! `clinv diff A B`: the semantic diff of two inventories, in one of four formats.
//!
//! Exit codes follow diff/kubectl: 0 same, 1 different, 2 any error (`app::run` maps
//! every failure of diff and drift to 2).
//!
//! With several domains, one section per domain in the order given: text and markdown
//! one after the other (text under a `== DOMAIN ==` line), `-o json` a list of reports;
//! a domain that cannot be compared is said on stderr (exit 2 once all are shown).

use crate::cluster::Options;
use crate::console::Console;
use crate::domain::Domain;
use crate::error::{Result, exit};
use crate::history::diff::Report;
use crate::ops::diff::{Messages, Sources};
use crate::ops::refs::Compared;
use crate::project::Project;
use crate::view::format::DiffFormat;
use crate::view::report;

/// How the comparison is said: `-o`, `--stat`, and `--strict` (an `--ignore` path that
/// selects nothing is then an error).
#[derive(Clone, Copy)]
pub struct Style {
    pub format: DiffFormat,
    pub stat: bool,
    pub strict: bool,
}

/// One domain's comparison (`domain`: the one-domain rule when `None`), said; exit 0
/// same, 1 different.
///
/// # Errors
/// A reference that cannot be read; `--strict` and an unmatched `--ignore`; stdout.
pub fn one(
    console: &dyn Console,
    sources: &Sources<'_>,
    domain: Option<&str>,
    opts: Options,
    style: Style,
) -> Result<i32> {
    let (compared, messages) = sources.compare(domain, opts);
    say_messages(console, &messages);
    let compared = compared?;
    warn_unmatched(console, style, &compared)?;
    console.data(&text(style, &compared, console.color_stdout())?)?;
    Ok(verdict(compared.report.has_changes))
}

/// Each domain's comparison ([`Sources::several`]), one section each; a domain that
/// failed is an `[error]`, exit 2 once all are shown.
///
/// # Errors
/// `--strict` and an unmatched `--ignore`; stdout.
pub fn several(
    console: &dyn Console,
    sources: &Sources<'_>,
    (project, domains): (Option<&Project>, &[Domain]),
    limits: crate::fleet::Limits,
    style: Style,
    deploy: impl Fn(&Domain, Option<&str>) + Sync,
) -> Result<i32> {
    let results = sources.several(project, domains, limits, deploy);
    let color = console.color_stdout();
    let (mut reports, mut out, mut failed, mut changed): (Vec<&Report>, String, bool, bool) =
        (Vec::new(), String::new(), false, false);
    let answered = domains.iter().zip(&results);
    for (domain, (compared, messages)) in answered.filter_map(|(d, r)| Some((d, r.as_ref()?))) {
        say_messages(console, messages);
        let compared = match compared {
            Ok(c) => c,
            Err(e) => {
                console.error(&format!("{domain}: {}", crate::error::chain(e)));
                failed = true;
                continue;
            }
        };
        warn_unmatched(console, style, compared)?;
        changed |= compared.report.has_changes;
        match style.format {
            DiffFormat::Json => reports.push(&compared.report),
            DiffFormat::Markdown | DiffFormat::Unified => {
                out.push_str(&text(style, compared, color)?)
            }
            DiffFormat::Text => out.push_str(&format!(
                "== {domain} ==\n{}",
                text(style, compared, color)?
            )),
        }
    }
    if style.format == DiffFormat::Json {
        out = crate::inventory::render::to_json(&reports)?;
    }
    console.data(&out)?;
    Ok(if failed {
        exit::diff::ERROR
    } else {
        verdict(changed)
    })
}

fn say_messages(console: &dyn Console, (notices, notes): &Messages) {
    for notice in notices {
        console.raw(notice);
    }
    for note in notes {
        console.info(note);
    }
}

/// An `--ignore` path that selects nothing: a typo ignores nothing, never silently.
fn warn_unmatched(console: &dyn Console, style: Style, compared: &Compared) -> Result<()> {
    for unmatched in &compared.unmatched {
        if style.strict {
            return Err(crate::error::Error::from(unmatched.clone()));
        }
        console.warn(&unmatched.to_string());
    }
    Ok(())
}

/// One comparison in the format asked for.
fn text(style: Style, compared: &Compared, color: bool) -> Result<String> {
    let (report, a, b) = (&compared.report, &compared.from, &compared.to);
    Ok(match style.format {
        DiffFormat::Json => report::json::diff(report)?,
        DiffFormat::Markdown => report::markdown::diff(report),
        DiffFormat::Unified => report::unified::diff(report, &a.inventory, &b.inventory, color)?,
        _ if style.stat => report::text::header(report, color) + &report::text::stat(report, color),
        _ => report::text::header(report, color) + &report::text::diff(report, color),
    })
}

fn verdict(changed: bool) -> i32 {
    if changed {
        exit::diff::DIFFERENT
    } else {
        exit::diff::SAME
    }
}
