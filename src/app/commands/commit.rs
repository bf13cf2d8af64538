//! `clinv commit`: write a snapshot into a GitOps repository (Flux / Argo CD) and commit
//! it with git2; optionally push.

use super::{domain, project, rendered_at, report_warnings, store};
use crate::app::cli::CommitArgs;
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::gitops::layout::Destination;
use crate::gitops::{self, Committed};
use crate::inventory::{self, ClusterInventory, Loaded};
use crate::ops::commit::{self as ops, Manifest, Options, Print};
use crate::store::{DomainStore, SnapshotRecord};
use crate::{inventory::crd, inventory::render};
use std::time::Duration;

pub fn run(settings: &Settings, args: &CommitArgs) -> Result<i32> {
    // An SSH push's connection starts first and runs while the project is read, the
    // snapshot picked and the commit built (most of an SSH push is ssh's own handshake).
    if let Some(remote) = args.push.as_deref()
        && !(args.print_flux || args.print_argo)
    {
        gitops::prewarm_push(&args.repo, remote);
    }
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let path = args
        .path
        .clone()
        .unwrap_or_else(|| gitops::default_path(&domain));
    gitops::check_path(&path)?;
    let opts = Options {
        repo: &args.repo,
        path: &path,
        branch: args.branch.as_deref(),
        author: args.author.as_deref(),
        template: args.message.as_deref(),
        sign: args.sign,
        push: args
            .push
            .as_deref()
            .map(|remote| (remote, Duration::from_secs_f64(args.push_timeout))),
        force: args.force,
        allow_older: args.allow_older,
        https: gitops::https::Options {
            token_env: args.token_env.clone(),
            allow_insecure_tls: args.allow_insecure_tls,
        },
    };
    if args.print_flux || args.print_argo {
        let print = Print {
            which: if args.print_flux {
                Manifest::Flux
            } else {
                Manifest::Argo
            },
            repo_url: args.repo_url.as_deref(),
            destination: match (&args.argo_server, &args.argo_cluster_name) {
                (Some(s), _) => Some(Destination::Server(s.clone())),
                (_, Some(n)) => Some(Destination::Name(n.clone())),
                _ => None,
            },
            all: args.all,
        };
        let printed = ops::manifest(&opts, &domain, &print)?;
        super::print_notices(settings, &printed.notices);
        if let Some(text) = printed.text {
            settings.printer.data(&text)?;
        }
        return Ok(exit::OK);
    }
    let store = store(settings, &project).domain(&domain);
    let picked = ops::pick(&store, args.snapshot.as_deref())?;
    for d in &picked.damage {
        settings
            .printer
            .warn(&format!("snapshot store: {d} — skipped"));
    }
    let (snap, inventory) = match picked.found {
        Some(found) => found,
        None => match record_fresh(settings, &project, &store)? {
            Some(found) => found,
            None => return Ok(exit::OK),
        },
    };
    let outcome = ops::commit(&store, &snap, &inventory, &opts)?;
    let branch = &outcome.branch;
    match &outcome.committed {
        Committed::Older { branch_rendered_at } => {
            let message = ops::older_message(&store, branch, &snap, branch_rendered_at);
            if settings.strict {
                return Err(Error::Older(message));
            }
            settings.printer.alert(&message);
            return Ok(exit::OK);
        }
        Committed::UpToDate => settings.printer.info(&format!(
            "{path}: up to date on {branch} (snapshot {} matches apart from renderedAt)",
            snap.id
        )),
        Committed::New { oid, summary } => settings.printer.info(&format!(
            "committed {} on {branch}: inventory({domain}): {summary}",
            &oid[..12]
        )),
    }
    if let (Some(pushed), Some((remote, _))) = (outcome.pushed, opts.push) {
        let (tip, attempts) = pushed?;
        settings.printer.info(&format!(
            "pushed {branch} to {remote} ({}; {attempts} attempt(s))",
            &tip[..tip.len().min(12)],
        ));
    }
    if let Some(e) = outcome.not_recorded {
        settings.printer.warn(&format!(
            "snapshot {}: committed, but the store could not record it: {e}",
            snap.id
        ));
    }
    Ok(exit::OK)
}

/// The store has no snapshot of the domain: render one and record it now.
fn record_fresh(
    settings: &Settings,
    project: &crate::project::Project,
    store: &DomainStore,
) -> Result<Option<(SnapshotRecord, ClusterInventory)>> {
    let domain = &store.domain;
    let built = match inventory::load(project, domain, rendered_at(settings)?)? {
        Loaded::Cluster(b) => *b,
        Loaded::Deploy { cluster_ref, .. } => {
            super::deploy_domain_note(settings, domain, cluster_ref.as_deref());
            return Ok(None);
        }
    };
    report_warnings(settings, &built.warnings)?;
    render::validate(&built.inventory)?;
    let crd_json = serde_json::to_string(&crd::definition()).unwrap_or_default();
    // For Git only: never queued for the cluster (replay does not deliver it).
    let snap = store.record_for(&built.inventory, &crd_json, None, false)?;
    settings.printer.info(&format!(
        "recorded snapshot {} (the store had none for {domain})",
        snap.id
    ));
    Ok(Some((snap, built.inventory)))
}
