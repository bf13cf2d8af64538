//! `clinv drift`: does the cluster hold what the project renders? Exit 0 in sync, 1
//! drift (the changes listed like `clinv diff`), 2 unknown or an error, 16 the live
//! cluster could not be read (said in the result; `--offline` compares with the snapshot
//! applied last instead).

use super::{print_notices, rendered_at, scope};
use crate::app::Result;
use crate::app::cli::{DriftFormat as TextFormat, DriftOutput, ReadArgs};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::Outcome;
use crate::ops::Scope;
use crate::ops::drift::{self, Verdict};
use crate::project::Project;
use crate::view::drift as view;

pub fn run(settings: &Settings, read: &ReadArgs<DriftOutput>) -> Result<Outcome> {
    super::read_clusters(settings, read, one, all)
}

fn one(settings: &Settings, read: &ReadArgs<DriftOutput>, scope: &Scope) -> Result<Outcome> {
    let (out, domain) = (&read.out, scope.domain);
    let report = drift::drift(scope, rendered_at(settings)?, out.status.offline)?;
    print_notices(settings, &report.notices);
    let outcome = match (&report.verdict, report.source.read_the_cluster()) {
        _ if view::other_domain(&report.source) => Outcome::OtherDomain,
        (_, false) => Outcome::NotLive,
        (Verdict::InSync, _) => Outcome::Done,
        (Verdict::Drift(_), _) => Outcome::Different,
        (Verdict::Unknown, _) => Outcome::Unknown,
    };
    let text = match out.text.output.unwrap_or_default() {
        TextFormat::Json => view::json(domain, &report)?,
        TextFormat::Text | TextFormat::Wide => {
            view::text(domain, &report, settings.printer.color_stdout())
        }
    };
    settings.printer.data(&text)?;
    Ok(outcome)
}

/// `drift -A`: every domain of the project, a row each ([`super::each_domain`]).
fn all(
    settings: &Settings,
    args: &ReadArgs<DriftOutput>,
    project: &Project,
    domains: &[Domain],
) -> Result<Outcome> {
    let at = rendered_at(settings)?;
    let results = super::each_domain(
        "drift",
        &args.out.status.limits,
        project,
        domains,
        |domain, limits| {
            let scope = scope(settings, project, domain, limits);
            view::row(domain, drift::drift(&scope, at, args.out.status.offline))
        },
        |domain, why| {
            let outcome = match why {
                super::Skip::NotTried => Outcome::NotLive,
                super::Skip::Deploy(_) => Outcome::Done,
            };
            let (verdict, detail) = why.words();
            (view::Row::skipped(domain, verdict, detail), outcome)
        },
    )?;
    let (mut rows, mut outcome) = (Vec::new(), Outcome::Done);
    for (row, found) in results {
        rows.push(row);
        outcome = outcome.worse(found);
    }
    let text = match args.out.text.output.unwrap_or_default() {
        TextFormat::Json => view::rows_json(&rows)?,
        format => view::table(
            &rows,
            crate::view::TableStyle {
                wide: format == TextFormat::Wide,
                no_headers: false,
                width: settings.printer.width(),
            },
        ),
    };
    settings.printer.data(&text)?;
    Ok(outcome)
}
