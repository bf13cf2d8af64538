//! `clinv diff A B`: the semantic diff of two inventories, in one of four formats.
//! Exit codes follow diff/kubectl: 0 same, 1 different, 2 any error ([`Error::in_diff`]).

use super::refs::{RefContext, check_refs, resolve_ref};
use crate::app::cli::{DiffArgs, DiffFormat};
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::history::diff::{self, Ignore};
use crate::history::report;

pub fn run(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    compare(settings, args).map_err(Error::in_diff)
}

fn compare(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let ignore = Ignore::parse(&args.ignore)?;
    check_refs(&[&args.from, &args.to])?;
    let mut cx = RefContext::new(settings, args.domain.as_deref(), &args.limits);
    cx.repo = args.repo.as_deref();
    let a = resolve_ref(&cx, &args.from)?;
    let b = resolve_ref(&cx, &args.to)?;
    let mut report = diff::diff_with(&a.inventory, &b.inventory, &ignore);
    report.from.reference = Some(a.label);
    report.to.reference = Some(b.label);
    let color = settings.printer.color_stdout();
    let text = match format {
        DiffFormat::Json => report::json::diff(&report)?,
        DiffFormat::Markdown => report::markdown::diff(&report),
        DiffFormat::Unified => report::unified::diff(&report, &a.inventory, &b.inventory, color)?,
        _ => report::text::diff(&report, color),
    };
    settings.printer.data(&text)?;
    Ok(if report.has_changes {
        exit::diff::DIFFERENT
    } else {
        exit::diff::SAME
    })
}
