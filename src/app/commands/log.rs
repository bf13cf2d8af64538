//! `clinv log`: what was deployed, when, and what changed — from the snapshot store, or
//! from a GitOps repository's commits with `--repo`.

use super::history::{self, Point};
use super::{domain, project, store};
use crate::app::cli::{LogArgs, LogFormat};
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::{history::audit, history::diff, history::report};

pub fn run(settings: &Settings, args: &LogArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let points = load(
        settings,
        &project,
        &domain,
        args.repo.as_deref(),
        args.branch.as_deref(),
    )?;
    let bound = |t: &Option<String>, end: bool| -> Result<Option<jiff::Timestamp>> {
        t.as_deref()
            .map(|t| {
                audit::parse_bound(t, end).ok_or_else(|| {
                    Error::Usage(format!(
                        "'{t}' is not a date (YYYY-MM-DD) or an RFC 3339 time"
                    ))
                })
            })
            .transpose()
    };
    let (since, until) = (bound(&args.since, false)?, bound(&args.until, true)?);
    let steps: Vec<audit::Step> = points.iter().map(Point::step).collect();
    if let Some(name) = &args.addon {
        let spans = audit::addon_timeline(&steps, name);
        if spans.is_empty() {
            settings
                .printer
                .info(&format!("{name} never appears in the history of {domain}"));
            return Ok(exit::OK);
        }
        let text = match format {
            LogFormat::Json => crate::inventory::render::to_json(&spans)?,
            _ => spans
                .iter()
                .rev()
                .map(|s| {
                    let until = match (&s.until, &s.until_id) {
                        (Some(t), Some(id)) => format!("until {t} ({id})"),
                        _ => "current".into(),
                    };
                    format!(
                        "{name} {}  arrived {} ({}, {:?})  {until}\n",
                        s.version.as_deref().unwrap_or("-"),
                        s.since,
                        s.since_id,
                        s.arrival
                    )
                })
                .collect(),
        };
        settings.printer.data(&text)?;
        return Ok(exit::OK);
    }
    let mut trail = audit::trail(&steps, &diff::Ignore::default());
    trail.entries.retain(|e| {
        let at = audit::parse_bound(&e.at, false);
        since.is_none_or(|s| at.is_some_and(|a| a >= s))
            && until.is_none_or(|u| at.is_some_and(|a| a <= u))
    });
    if let Some(n) = args.max_count {
        trail.entries.truncate(n);
    }
    let text = match format {
        LogFormat::Json => report::json::trail(&trail)?,
        LogFormat::Markdown => report::markdown::trail(&trail),
        _ => report::text::trail(&trail, settings.printer.color_stdout()),
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// The history from the store, or from `--repo` (branch: `--branch`, else HEAD).
pub fn load(
    settings: &Settings,
    project: &crate::project::Project,
    domain: &str,
    repo: Option<&std::path::Path>,
    branch: Option<&str>,
) -> Result<Vec<Point>> {
    match repo {
        Some(repo) => history::from_repo(
            repo,
            branch.unwrap_or("HEAD"),
            &format!("clusters/{domain}/inventory/clusterinventory.yaml"),
        ),
        None => history::from_store(settings, &store(settings, project).domain(domain)),
    }
}
