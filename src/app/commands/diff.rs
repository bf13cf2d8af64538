//! `clinv diff A B`: the semantic diff of two inventories, in one of four formats.
//! Exit codes follow diff/kubectl: 0 same, 1 different, 2 any error ([`Error::in_diff`]).

use super::access;
use crate::app::cli::{ClusterArgs, DiffArgs, OutputFormat};
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::history::diff::Ignore;
use crate::history::report;
use crate::inventory::{ClusterInventory, parse};
use crate::ops::refs::{RefContext, compare};
use crate::project::Project;

pub fn run(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    run_diff(settings, args).map_err(Error::in_diff)
}

fn run_diff(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    let format = settings.format(
        "diff",
        &[
            OutputFormat::Text,
            OutputFormat::Json,
            OutputFormat::Markdown,
            OutputFormat::Unified,
        ],
    )?;
    let ignore = Ignore::parse(&args.ignore)?;
    let read_live =
        |project: Option<&Project>| live(settings, args.domain.as_deref(), &args.limits, project);
    let mut cx = RefContext::new(&settings.cwd, &read_live);
    cx.root = settings.root.as_deref();
    cx.domain = args.domain.as_deref();
    cx.env_domain = settings.env.domain_name.as_deref();
    cx.snapshots = settings.snapshots.as_deref();
    cx.repo = args.repo.as_deref();
    let compared = compare(&cx, &args.from, &args.to, &ignore);
    for notice in cx.take_notices() {
        settings.printer.raw(&notice);
    }
    let compared = compared?;
    let (report, a, b) = (&compared.report, &compared.from, &compared.to);
    let color = settings.printer.color_stdout();
    let text = match format {
        OutputFormat::Json => report::json::diff(report)?,
        OutputFormat::Markdown => report::markdown::diff(report),
        OutputFormat::Unified => report::unified::diff(report, &a.inventory, &b.inventory, color)?,
        _ => report::text::diff(report, color),
    };
    settings.printer.data(&text)?;
    Ok(if report.has_changes {
        exit::diff::DIFFERENT
    } else {
        exit::diff::SAME
    })
}

/// The live object (the `cluster` reference), with the same kubeconfig rules as
/// `clinv status`.
fn live(
    settings: &Settings,
    domain: Option<&str>,
    limits: &ClusterArgs,
    project: Option<&Project>,
) -> Result<ClusterInventory> {
    let name = match project {
        Some(p) => {
            let domain = super::domain(settings, p, domain)?;
            access::cluster_name(p, &domain)
        }
        None => None,
    };
    let choice = access::choose(settings, project, name.as_deref())
        .map_err(|f| Error::Reference(format!("cluster: {}", f.detail)))?;
    settings.printer.debug(&format!(
        "kubeconfig from {}: {:?}",
        choice.origin, choice.paths
    ));
    let opts = access::options(limits.timeout, limits.probe_timeout, false, false);
    let live = access::runtime()?.block_on(async {
        let cluster = access::connect(settings, &choice, opts).await?;
        cluster.get_inventory().await
    });
    match live {
        Ok(Some(value)) => parse::inventory_from_value(value).map_err(|m| {
            Error::Reference(format!(
                "cluster: the live ClusterInventory is not readable: {m}"
            ))
        }),
        Ok(None) => Err(Error::Reference(
            "cluster: the cluster has no ClusterInventory 'cluster'".into(),
        )),
        Err(f) => Err(Error::Reference(format!(
            "cluster: cannot read the ClusterInventory: {}: {}",
            f.reason, f.detail
        ))),
    }
}
