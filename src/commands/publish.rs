//! `clinv publish`: render, then server-side apply the CRD and the CR when the cluster is
//! reachable. Fail-soft like lok8s: anything that keeps the inventory from the cluster
//! is a warning and exit 0, unless `--strict`.

use super::access;
use super::{deploy_domain_note, domain, project, rendered_at, report_warnings};
use crate::cli::PublishArgs;
use crate::cluster::{Applied, Change, Failure, Reason, Step};
use crate::error::{Error, Result, exit};
use crate::inventory::{self, Built, Loaded};
use crate::render;
use crate::settings::Settings;

pub fn run(settings: &Settings, args: &PublishArgs) -> Result<i32> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let built = match build(settings, &project, &domain) {
        Ok(Some(built)) => built,
        Ok(None) => return Ok(exit::OK),
        Err(err) => {
            settings.printer.error(&err.to_string());
            let message = format!(
                "inventory: failed to build the ClusterInventory for {domain} — skipping publish"
            );
            return not_applied(settings, Reason::RenderFailed, message);
        }
    };
    let choice = match access::choose(settings, Some(&project), built.cluster_name.as_deref()) {
        Ok(c) => c,
        Err(f) => {
            let message = format!(
                "inventory: {} — skipping ClusterInventory publish",
                f.detail
            );
            return not_applied(settings, f.reason, message);
        }
    };
    settings.printer.debug(&format!(
        "kubeconfig from {}: {:?}",
        choice.origin, choice.paths
    ));
    let opts = access::options(
        args.limits.timeout,
        args.limits.probe_timeout,
        args.force_conflicts,
        args.dry_run,
    );
    let rt = access::runtime()?;
    let result = rt.block_on(async {
        let cluster = access::connect(settings, &choice, opts).await?;
        let server = cluster.target.server.clone();
        let result = cluster.publish(&built.inventory).await;
        for line in cluster.trace() {
            settings.printer.debug(&line);
        }
        match result {
            Ok(applied) => Ok((applied, server)),
            Err(f) => Err(Failure {
                detail: format!("{} ({server})", f.detail),
                ..f
            }),
        }
    });
    match result {
        Ok((applied, server)) => {
            report(settings, &domain, &server, &applied, args.dry_run)?;
            Ok(exit::OK)
        }
        Err(f) => not_applied(settings, f.reason, failure_message(&domain, &f)),
    }
}

/// Builds and validates; `None` for a deploy domain (said on stderr).
fn build(
    settings: &Settings,
    project: &crate::project::Project,
    domain: &str,
) -> Result<Option<Built>> {
    let built = match inventory::load(project, domain, rendered_at(settings)?)? {
        Loaded::Cluster(built) => *built,
        Loaded::Deploy { cluster_ref, .. } => {
            deploy_domain_note(settings, domain, cluster_ref.as_deref());
            return Ok(None);
        }
    };
    report_warnings(settings, &built.warnings)?;
    render::validate(&built.inventory)?;
    Ok(Some(built))
}

fn failure_message(domain: &str, f: &Failure) -> String {
    let what = match (f.reason, f.step) {
        (Reason::Conflict, Step::Crd) => {
            "the ClusterInventory CRD conflicts with one owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Conflict, _) => {
            "a field is owned by another field manager (--force-conflicts takes it over)"
        }
        (Reason::Unreachable, _) => "cluster unreachable",
        (Reason::Unauthorized, _) => "the cluster rejected the credentials",
        (Reason::Forbidden, _) => "forbidden: the identity lacks RBAC for the ClusterInventory",
        (Reason::BadKubeconfig, _) => "the kubeconfig is not usable",
        (Reason::ServerError, _) => "the API server failed",
        _ => "the API server rejected it",
    };
    format!(
        "inventory: could not publish the ClusterInventory for {domain}: {what}: {} — skipping publish",
        f.detail
    )
}

/// Fail-soft: a warning and exit 0; with `--strict`, an error with the reason's code.
fn not_applied(settings: &Settings, reason: Reason, message: String) -> Result<i32> {
    if settings.strict {
        return Err(Error::Unapplied { reason, message });
    }
    settings.printer.warn(&message);
    Ok(exit::OK)
}

fn report(
    settings: &Settings,
    domain: &str,
    server: &str,
    a: &Applied,
    dry_run: bool,
) -> Result<()> {
    let crd = match a.crd {
        Change::Created => "CRD created",
        _ => "CRD applied",
    };
    let suffix = if dry_run { ", server dry run" } else { "" };
    settings.printer.info(&format!(
        "clusterinventory/cluster {} ({crd}; {domain} → {server}, {} requests{suffix})",
        a.cr, a.requests
    ));
    if dry_run {
        let old = a
            .before
            .as_ref()
            .and_then(|b| b.get("spec"))
            .map(render::to_yaml)
            .transpose()?;
        let new = a.after.get("spec").map(render::to_yaml).transpose()?;
        let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
        let diff = similar::TextDiff::from_lines(&old, &new);
        let mut text = format!("clusterinventory/cluster {} (dry run)\n", a.cr);
        text.push_str(
            &diff
                .unified_diff()
                .context_radius(2)
                .header("live spec", "rendered spec")
                .to_string(),
        );
        settings.printer.data(&text)?;
    }
    Ok(())
}
