//! `clinv commit`: write the project's inventory as it is now (recorded first) or a stored
//! snapshot (`--snapshot`) into a GitOps repository (Flux / Argo CD) and commit it with
//! git2; optionally push.

use super::StoreOnly;
use crate::app::Result;
use crate::app::cli::CommitArgs;
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::{Error, exit};
use crate::gitops::layout::Destination;
use crate::gitops::{self, Committed};
use crate::ops::commit::{self as ops, Manifest, Options, Print};
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
    super::voice(settings).delivered(&domain, report, |done| committed(settings, *done, &opts))
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
    let printed = ops::manifest(opts, domain, &print)?;
    super::print_notices(settings, &printed.notices);
    if let Some(text) = printed.text {
        settings.printer.data(&text)?;
    }
    Ok(exit::OK)
}

/// After a commit: refused as older (an error with --strict), pushed, not recorded.
fn committed(settings: &Settings, done: ops::Commit, opts: &Options<'_>) -> Result<i32> {
    let ops::Commit {
        snapshot: snap,
        outcome,
        older,
        ..
    } = done;
    if let Committed::Older { .. } = &outcome.committed {
        let message = older.unwrap_or_default();
        if settings.strict {
            return Err(Error::Older(message).into());
        }
        settings.printer.alert(&message);
        return Ok(exit::OK);
    }
    if let (Some((tip, attempts)), Some((remote, _))) = (&outcome.pushed, opts.push) {
        settings.printer.info(&format!(
            "pushed {} to {remote} ({}; {attempts} attempt(s))",
            outcome.branch,
            &tip[..tip.len().min(12)],
        ));
    }
    if let Some(e) = outcome.not_recorded {
        settings.printer.warn(&format!(
            "snapshot {}: committed, but the store could not record it: {}",
            snap.id,
            crate::error::chain(&e)
        ));
    }
    match outcome.owed {
        Some(owing) => Ok(super::voice(settings).owed_push(owing)?),
        None => Ok(exit::OK),
    }
}

/// Several domains in one commit ([`ops::several`]): their messages, a closing table
/// DOMAIN, RESULT, DETAIL, and the exit code — 13 under `--strict` when a folder was left
/// alone because the branch holds an inventory rendered later.
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
    super::print_notices(settings, &report.notices);
    let done = report.result?;
    if let (Some((tip, attempts)), Some((remote, _))) = (&done.pushed, opts.push) {
        settings.printer.info(&format!(
            "pushed {} to {remote} ({}; {attempts} attempt(s))",
            done.branch,
            &tip[..tip.len().min(12)],
        ));
    }
    let mut owed_code = exit::OK;
    for owing in done.owed {
        // Every domain's owed push is said, --strict or not, before the table.
        let code = match super::voice(settings).owed_push(owing) {
            Ok(code) => code,
            Err(e) => {
                settings.printer.error(&e.to_string());
                e.exit_code()
            }
        };
        owed_code = owed_code.max(code);
    }
    for (domain, e) in &done.not_recorded {
        settings.printer.warn(&format!(
            "{domain}: committed, but the store could not record it: {}",
            crate::error::chain(e)
        ));
    }
    let mut older = false;
    let rows: Vec<_> = done
        .rows
        .iter()
        .map(|(domain, row)| several_row(settings, domain, row, &mut older))
        .collect();
    super::print_results(settings, &rows, args.results.output.unwrap_or_default())?;
    Ok(if older && settings.strict {
        exit::OLDER
    } else {
        owed_code
    })
}

/// One domain's row of a commit of several; a folder left alone as older is said on
/// stderr (an error with `--strict`).
fn several_row(
    settings: &Settings,
    domain: &Domain,
    row: &ops::several::Row,
    older: &mut bool,
) -> crate::view::results::Row {
    use crate::gitops::Found;
    use crate::view::results::Row;
    let (found, detail) = match row {
        ops::several::Row::DeployDomain { cluster_ref } => {
            super::deploy_domain_note(settings, domain, cluster_ref.as_deref());
            let cluster = cluster_ref.as_deref().unwrap_or("-");
            let detail = format!("no inventory of its own (cluster: {cluster})");
            return Row::new(domain.as_str(), "deploy domain", detail);
        }
        ops::several::Row::Folder {
            snapshot,
            origin,
            path,
            found,
            older: why,
        } => {
            if let Some(message) = why {
                *older = true;
                if settings.strict {
                    settings.printer.error(&format!("{domain}: {message}"));
                } else {
                    settings.printer.alert(&format!("{domain}: {message}"));
                }
            }
            (found, format!("{} → {path}", origin.describe(snapshot)))
        }
    };
    let result = match found {
        Found::Changed { .. } => "committed",
        Found::UpToDate => "up to date",
        Found::Older { .. } => "left alone (older)",
    };
    Row::new(domain.as_str(), result, detail)
}

/// No project and no `--snapshot`: nothing to commit.
fn nothing_to_render(settings: &Settings) -> crate::app::Failure {
    crate::app::Failure::Usage(format!(
        "commit: no lok8s project found in {} or its parents to render the inventory from; pass --snapshot ID to commit a snapshot of the store (latest, latest~1, an id), or --root",
        settings.cwd.display()
    ))
}
