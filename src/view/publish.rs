//! `clinv publish`: one domain's report said — its messages, the outcome by lok8s's
//! fail-soft rule — and the closing rows of several.

use crate::cluster::Change;
use crate::domain::Domain;
use crate::error::{Error, Outcome, Result, exit};
use crate::fleet::Skip;
use crate::ops::context::Context;
use crate::ops::publish::several::Got;
use crate::ops::publish::{self, Published, Report};
use crate::view::results::Row;

/// One domain's report: its messages, and the outcome by lok8s's fail-soft rule
/// (`dry_run`: the server's dry run, its diff on stdout).
///
/// # Errors
/// Neither applied nor recorded (always), applied but not recorded (`--strict`), not
/// applied under `--strict`, a write to stdout.
pub fn say(cx: Context<'_>, domain: &Domain, mut report: Report, dry_run: bool) -> Result<Outcome> {
    cx.console.notices(&report.notices);
    if let Some(not_recorded) = report.not_recorded.take() {
        let applied = matches!(report.outcome, Published::Applied { .. });
        // Neither applied nor recorded: the inventory is lost, always an error. Applied
        // but not recorded: a warning (already printed), an error with --strict.
        if !applied || cx.strict {
            if let Published::NotApplied(n) = &report.outcome {
                cx.console.warn(&n.message);
            }
            let what = if applied {
                "applied but not"
            } else {
                "neither applied nor"
            };
            return Err(Error::NotRecorded {
                what: format!("the inventory of {domain} was {what} recorded"),
                source: Box::new(not_recorded.0),
            });
        }
    }
    match report.outcome {
        Published::DeployDomain { cluster_ref } => {
            cx.deploy(domain.as_str(), cluster_ref.as_deref());
        }
        Published::NotApplied(n) => return cx.fail_soft(n.reason, n.message),
        Published::Applied {
            server, applied, ..
        } => {
            let crd = match applied.crd {
                Change::Created => "CRD created",
                _ => "CRD applied",
            };
            let suffix = if dry_run { ", server dry run" } else { "" };
            cx.console.info(&format!(
                "clusterinventory/cluster {} ({crd}; {domain} → {server}, {} requests{suffix})",
                applied.cr, applied.requests
            ));
            if dry_run {
                cx.console.data(&publish::dry_run_diff(&applied)?)?;
            }
        }
    }
    Ok(Outcome::Done)
}

/// Several domains' reports, each said as for one domain: the rows DOMAIN, RESULT,
/// DETAIL, and the highest of the domains' exit codes (a domain not tried in time was
/// neither applied nor recorded: 11).
pub fn several(
    cx: Context<'_>,
    dry_run: bool,
    domains: &[Domain],
    got: Vec<Got>,
) -> (Vec<Row>, Outcome) {
    let mut rows = Vec::new();
    let mut codes = Vec::new();
    for (domain, got) in domains.iter().zip(got) {
        let (result, detail, code) = outcome(cx, dry_run, domain, got);
        rows.push(Row::new(domain.as_str(), result, detail));
        codes.push(code);
    }
    (rows, Outcome::Worst(codes))
}

/// One domain's RESULT, DETAIL and exit code, its messages said.
fn outcome(cx: Context<'_>, dry_run: bool, domain: &Domain, got: Got) -> (String, String, i32) {
    match got {
        Got::Published(published) => match *published {
            Ok(report) => {
                let (result, detail) = words(&report);
                let code = match say(cx, domain, report, dry_run) {
                    Ok(outcome) => outcome.exit_code(),
                    Err(e) => failed(cx, domain, &e),
                };
                (result, detail, code)
            }
            Err(e) => (
                "error".to_string(),
                crate::error::headline(&e),
                failed(cx, domain, &e),
            ),
        },
        Got::Skipped(skip) => {
            let (word, detail) = skip.words();
            let code = match &skip {
                Skip::NotTried => exit::NOT_RECORDED,
                Skip::Deploy(cluster) => {
                    cx.deploy(domain.as_str(), cluster.as_deref());
                    exit::OK
                }
            };
            (word.to_string(), detail, code)
        }
    }
}

/// `[error] D: …` for a domain whose publish failed; its exit code.
fn failed(cx: Context<'_>, domain: &Domain, e: &Error) -> i32 {
    cx.console.error(&format!("{domain}: {e}"));
    e.exit_code()
}

/// The RESULT and DETAIL of a domain's report.
fn words(report: &Report) -> (String, String) {
    match (&report.outcome, &report.not_recorded) {
        (Published::NotApplied(n), Some(_)) => (
            "not recorded".into(),
            format!("{}: neither applied nor recorded", n.reason),
        ),
        (Published::NotApplied(n), None) => match &n.pending {
            Some(id) => (
                format!("pending ({})", n.reason),
                format!("snapshot {id}; clinv replay delivers it"),
            ),
            None => (
                format!("not published ({})", n.reason),
                "nothing recorded".into(),
            ),
        },
        (
            Published::Applied {
                server, applied, ..
            },
            _,
        ) => (
            "applied".into(),
            format!("clusterinventory/cluster {} → {server}", applied.cr),
        ),
        (Published::DeployDomain { cluster_ref }, _) => (
            "deploy domain".into(),
            format!(
                "no inventory of its own (cluster: {})",
                cluster_ref.as_deref().unwrap_or("-")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Recorded;
    use crate::fleet::Deploys;

    /// A domain not tried in time is a row and exit 11; a deploy domain a row, exit 0,
    /// and kept for the run's one line at its end — never a line of its own here.
    #[test]
    fn skipped_domains_are_rows_with_their_exit_codes() {
        let (said, met) = (Recorded::default(), Deploys::default());
        let cx = crate::ops::context::Context::detached(&said, &met, false);
        let domains = ["late", "dep"].map(|d| Domain::new(d).unwrap());
        let got = vec![
            Got::Skipped(Skip::NotTried),
            Got::Skipped(Skip::Deploy(Some("prod".into()))),
        ];
        let (rows, outcome) = several(cx, false, &domains, got);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].domain.as_str(), rows[1].domain.as_str()),
            ("late", "dep")
        );
        assert_eq!(rows[1].result, "deploy domain");
        assert_eq!(outcome.exit_code(), exit::NOT_RECORDED);
        assert!(said.messages().is_empty(), "{:?}", said.messages());
        assert_eq!(met.take()["dep"].as_deref(), Some("prod"));
    }
}
