//! `clinv report`: one self-contained HTML page with the domain's inventory, a version
//! timeline and the change list ([`crate::view::report_page`]).

use crate::app::Result;
use crate::app::cli::{ReportArgs, ReportFormat};
use crate::app::settings::Settings;
use crate::view::report_page::Page;

pub fn run(settings: &Settings, args: &ReportArgs) -> Result<i32> {
    let opened = super::reach(settings)?;
    let rendered_at = || super::rendered_at(settings);
    let page = Page {
        console: &settings.printer,
        format: args.output.unwrap_or_default(),
        out: args.out.as_deref(),
        rendered_at: &rendered_at,
    };
    if let Some(domains) = opened.fleet(args.domain.many())? {
        if args.repo.is_some() {
            return Err(crate::app::Failure::Usage(
                "clinv report: --repo reads one domain's history; the fleet report reads the store"
                    .to_string(),
            ));
        }
        let bounds = (args.at.as_deref(), args.since.as_deref());
        return Ok(page.fleet(&opened.store, &domains, bounds)?);
    }
    if args.at.is_some() || args.since.is_some() {
        return Err(crate::app::Failure::Usage(
            "clinv report: --at and --since are the fleet report's (-A, --domain repeated, a glob); one domain's page shows its whole history".to_string(),
        ));
    }
    let env = settings.env.domain_name.as_deref();
    let domain = opened.domain(&settings.printer, args.domain.one(), env)?;
    let store = opened.store.domain(&domain);
    let console = &settings.printer;
    Ok(match (page.format, &args.repo, &args.out) {
        (ReportFormat::Html, None, _) => page.summarised(&store, &domain),
        // The whole trail document (log -o json's), streamed from the store to stdout.
        (ReportFormat::Json, None, None) => {
            let query = crate::ops::history::Query::everything(jiff::Timestamp::now());
            let style = crate::view::log::Style {
                format: crate::view::format::LogFormat::Json,
                oneline: false,
                strict: settings.strict,
            };
            let query = &query;
            crate::view::log::Say {
                console,
                style,
                query,
            }
            .store_json(&store, true)
        }
        (ReportFormat::Json, None, Some(file)) => {
            crate::view::log::json_to_file(console, &store, file)
        }
        (_, repo, _) => {
            let (store, repo) = (&opened.store, repo.as_deref());
            let history = crate::ops::history::load_said(console, store, &domain, repo, None)?;
            page.points(&history.points, &domain)
        }
    }?)
}
