//! `clinv commit`: what a commit did, said — refused as older, pushed, owed, not
//! recorded — and the closing rows of a commit of several domains.

use crate::domain::Domain;
use crate::error::{Error, Result, exit};
use crate::gitops::{Committed, Found};
use crate::ops::commit::{self as ops, Options, Print};
use crate::ops::context::Context;
use crate::view::results::Row;

/// `--print-flux` / `--print-argo`: the manifests that sync the folder, on stdout.
///
/// # Errors
/// What [`ops::manifest`] returns, or a write to stdout.
pub fn print(cx: Context<'_>, opts: &Options<'_>, domain: &str, print: &Print<'_>) -> Result<i32> {
    let printed = ops::manifest(opts, domain, print)?;
    cx.console.notices(&printed.notices);
    if let Some(text) = printed.text {
        cx.console.data(&text)?;
    }
    Ok(exit::OK)
}

/// One domain's commit ([`ops::run`]): its messages, then how it ended.
///
/// # Errors
/// The commit's error, or what [`committed`] returns.
pub fn say(
    cx: Context<'_>,
    domain: &Domain,
    report: ops::Report,
    opts: &Options<'_>,
) -> Result<i32> {
    cx.delivered(domain.as_str(), report, |done| committed(cx, *done, opts))
}

/// `pushed BRANCH to REMOTE (TIP; N attempt(s))`.
fn say_pushed(cx: Context<'_>, pushed: Option<&(String, u32)>, opts: &Options<'_>, branch: &str) {
    if let (Some((tip, attempts)), Some((remote, _))) = (pushed, opts.push) {
        cx.console.info(&format!(
            "pushed {branch} to {remote} ({}; {attempts} attempt(s))",
            &tip[..tip.len().min(12)],
        ));
    }
}

/// After a commit: refused as older (an error with --strict), pushed, not recorded.
fn committed(cx: Context<'_>, done: ops::Commit, opts: &Options<'_>) -> Result<i32> {
    let ops::Commit {
        snapshot: snap,
        outcome,
        older,
        ..
    } = done;
    if let Committed::Older { .. } = &outcome.committed {
        let message = older.unwrap_or_default();
        if cx.strict {
            return Err(Error::Older(message));
        }
        cx.console.alert(&message);
        return Ok(exit::OK);
    }
    say_pushed(cx, outcome.pushed.as_ref(), opts, &outcome.branch);
    if let Some(e) = outcome.not_recorded {
        cx.console.warn(&format!(
            "snapshot {}: committed, but the store could not record it: {}",
            snap.id,
            crate::error::chain(&e)
        ));
    }
    match outcome.owed {
        Some(owing) => cx.owed_push(owing),
        None => Ok(exit::OK),
    }
}

/// Several domains in one commit ([`ops::several`]), said.
///
/// Their messages, the rows DOMAIN, RESULT, DETAIL, and the exit code — 13 under
/// `--strict` when a folder was left alone because the branch holds an inventory
/// rendered later.
///
/// # Errors
/// The commit's error.
pub fn several(
    cx: Context<'_>,
    report: ops::several::Report,
    opts: &Options<'_>,
) -> Result<(Vec<Row>, i32)> {
    cx.console.notices(&report.notices);
    let done = report.result?;
    say_pushed(cx, done.pushed.as_ref(), opts, &done.branch);
    let mut owed_code = exit::OK;
    for owing in done.owed {
        // Every domain's owed push is said, --strict or not, before the table.
        let code = match cx.owed_push(owing) {
            Ok(code) => code,
            Err(e) => {
                cx.console.error(&e.to_string());
                e.exit_code()
            }
        };
        owed_code = owed_code.max(code);
    }
    for (domain, e) in &done.not_recorded {
        cx.console.warn(&format!(
            "{domain}: committed, but the store could not record it: {}",
            crate::error::chain(e)
        ));
    }
    let mut older = false;
    let rows: Vec<_> = done
        .rows
        .iter()
        .map(|(domain, row)| several_row(cx, domain, row, &mut older))
        .collect();
    let code = if older && cx.strict {
        exit::OLDER
    } else {
        owed_code
    };
    Ok((rows, code))
}

/// One domain's row of a commit of several; a folder left alone as older is said on
/// stderr (an error with `--strict`).
fn several_row(cx: Context<'_>, domain: &Domain, row: &ops::several::Row, older: &mut bool) -> Row {
    let (found, detail) = match row {
        ops::several::Row::DeployDomain { cluster_ref } => {
            cx.deploy(domain.as_str(), cluster_ref.as_deref());
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
                if cx.strict {
                    cx.console.error(&format!("{domain}: {message}"));
                } else {
                    cx.console.alert(&format!("{domain}: {message}"));
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
