//! `clinv commit`: write the project's inventory as it is now (recorded first) or a stored
//! snapshot (`--snapshot`) into a GitOps repository (Flux / Argo CD) and commit it with
//! git2; optionally push ([`crate::ops::commit`], said by [`crate::view::commit`]).

use super::{StoreOnly, context};
use crate::app::Result;
use crate::app::cli::CommitArgs;
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::gitops;
use crate::gitops::layout::Destination;
use crate::ops::commit::{self as ops, Manifest, Options, Print};
use crate::view::commit as view;
use std::time::Duration;

pub fn run(settings: &Settings, args: &CommitArgs) -> Result<i32> {
    // An SSH push's connection starts first and runs while the project is read, the
    // snapshot picked and the commit built (most of an SSH push is ssh's own handshake).
    let printing = args.print_flux || args.print_argo;
    if let Some(remote) = args.push.as_deref()
        && !printing
    {
        gitops::prewarm_push(&args.repo, remote);
    }
    if args.print_argo && (args.all || args.domain.many().is_many()) {
        // An ApplicationSet over the branch's folders: no domain to select first.
        let path = args.path.clone().unwrap_or_default();
        return print(settings, args, &options(args, &path), "");
    }
    let opened = StoreOnly::open(settings)?;
    if opened.project.is_none() && args.snapshot.is_none() && !printing {
        return Err(nothing_to_render(settings));
    }
    if let Some(domains) = opened.delivered_fleet(&args.domain, args.snapshot.as_deref())? {
        return several(settings, args, &opened, &domains);
    }
    if args.results.output.is_some() {
        return Err(super::one_domain_output("commit"));
    }
    // Rendering: the project's domains; a stored snapshot: the store's too.
    let flag = args.domain.one();
    let domain = opened.delivered_domain(settings, flag, args.snapshot.as_deref())?;
    let path = args
        .path
        .clone()
        .unwrap_or_else(|| gitops::default_path(&domain));
    gitops::check_path(&path)?;
    let opts = options(args, &path);
    if printing {
        return print(settings, args, &opts, domain.as_str());
    }
    let Some(source) = opened.delivered(settings, args.snapshot.as_deref()) else {
        return Err(nothing_to_render(settings));
    };
    let report = ops::run(&opened.store.domain(&domain), &source, &opts);
    Ok(view::say(context(settings), &domain, report, &opts)?)
}

fn options<'a>(args: &'a CommitArgs, path: &'a str) -> Options<'a> {
    Options {
        repo: &args.repo,
        path,
        branch: args.branch.as_deref(),
        author: args.author.as_deref(),
        template: args.message.as_deref(),
        sign: match (args.sign, args.no_sign) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
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
    }
}

/// `--print-flux` / `--print-argo`: the manifests that sync the folder.
fn print(settings: &Settings, args: &CommitArgs, opts: &Options<'_>, domain: &str) -> Result<i32> {
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
        set: (args.print_argo && (args.all || args.domain.many().is_many()))
            .then(|| args.domain.many()),
        path_given: args.path.is_some(),
    };
    Ok(view::print(context(settings), opts, domain, &print)?)
}

/// Several domains in one commit ([`ops::several`], said by [`view::several`]): one
/// folder each, so `--path` and `--print-flux` are refused.
fn several(
    settings: &Settings,
    args: &CommitArgs,
    opened: &StoreOnly,
    domains: &[Domain],
) -> Result<i32> {
    if args.path.is_some() || args.print_flux {
        return Err(crate::app::Failure::Usage(
            "commit: --path and --print-flux name one domain's folder; several domains are committed to clusters/<domain>/inventory each (--print-argo -A prints an ApplicationSet over them)".to_string(),
        ));
    }
    let Some(source) = opened.delivered(settings, args.snapshot.as_deref()) else {
        return Err(nothing_to_render(settings));
    };
    let stores: Vec<_> = domains.iter().map(|d| opened.store.domain(d)).collect();
    let opts = options(args, "");
    let report = ops::several::run(&stores, &source, &opts);
    let (rows, code) = view::several(context(settings), report, &opts)?;
    super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    Ok(code)
}

/// No project and no `--snapshot`: nothing to commit.
fn nothing_to_render(settings: &Settings) -> crate::app::Failure {
    crate::app::Failure::Usage(format!(
        "commit: no lok8s project found in {} or its parents to render the inventory from; pass --snapshot ID to commit a snapshot of the store (latest, latest~1, an id), or --root",
        settings.cwd.display()
    ))
}
