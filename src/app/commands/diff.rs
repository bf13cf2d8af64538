//! `clinv diff A B`: the semantic diff of two inventories, in one of four formats.
//! Exit codes follow diff/kubectl: 0 same, 1 different, 2 any error (`app::run` maps
//! every failure of diff and drift to 2).

use crate::app::Result;
use crate::app::cli::{DiffArgs, DiffFormat};
use crate::app::settings::Settings;
use crate::cluster::access;
use crate::error::exit;
use crate::history::diff::Ignore;
use crate::ops::refs::{RefContext, compare};
use crate::view::report;

pub fn run(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let ignore = Ignore::parse(&args.ignore)?;
    let access = super::access(settings, &args.limits);
    let opts = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
    let mut cx = RefContext::new(&settings.cwd);
    cx.root = settings.root.as_deref();
    cx.domain = args.domain.as_deref();
    cx.env_domain = settings.env.domain_name.as_deref();
    cx.snapshots = settings.snapshots.as_deref();
    cx.repo = args.repo.as_deref();
    cx.cluster = Some((&access, opts));
    #[cfg(feature = "gitops")]
    let (registry, key) = (
        super::registry_access(&args.registry),
        args.verify
            .as_deref()
            .map(crate::oci::public_key)
            .transpose()?,
    );
    #[cfg(feature = "gitops")]
    {
        cx.registry = Some((&registry, key.as_ref()));
    }
    let compared = compare(&cx, &args.from, &args.to, &ignore);
    for notice in cx.take_notices() {
        settings.printer.raw(&notice);
    }
    for note in cx.take_notes() {
        settings.printer.info(&note);
    }
    let compared = compared?;
    // An --ignore path that selects nothing: a typo ignores nothing, never silently.
    for unmatched in &compared.unmatched {
        if settings.strict {
            return Err(crate::error::Error::from(unmatched.clone()).into());
        }
        settings.printer.warn(&unmatched.to_string());
    }
    let (report, a, b) = (&compared.report, &compared.from, &compared.to);
    let color = settings.printer.color_stdout();
    let text = match format {
        DiffFormat::Json => report::json::diff(report)?,
        DiffFormat::Markdown => report::markdown::diff(report),
        DiffFormat::Unified => report::unified::diff(report, &a.inventory, &b.inventory, color)?,
        _ if args.stat => report::text::header(report, color) + &report::text::stat(report, color),
        _ => report::text::header(report, color) + &report::text::diff(report, color),
    };
    settings.printer.data(&text)?;
    Ok(if report.has_changes {
        exit::diff::DIFFERENT
    } else {
        exit::diff::SAME
    })
}
