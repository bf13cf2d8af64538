//! `clinv agent`: the in-cluster status writer.
//!
//! One pass: load the index (if any), `GET` the live inventory, compute
//! `availableUpdates`, list Helm release records (when RBAC allows), and merge-patch
//! `status` through the status subresource as `clinv-agent`. Loop mode repeats every
//! interval with jitter, backs off on errors and never stops on them; a condition is
//! logged once, when it starts, not on every pass. The schedule and the status body are
//! the pure parts in [`crate::catalog::agent`].

use crate::catalog::agent::{next_wait, status_body};
use crate::catalog::fetch::{self, IndexRef};
use crate::catalog::index::AddonIndex;
use crate::catalog::{helm, updates};
use crate::cluster::access::Access;
use crate::cluster::{Cluster, Failure, Live, Options};
use crate::delivery::Reason;
use crate::error::{Error, Outcome, Result};
use crate::ops::context::Context;
use crate::util::backoff::Rng;
use crate::util::notice::{Level, Notice};
use std::time::Duration;

/// How the agent runs.
pub struct Config {
    /// The addon index; without it, `availableUpdates` is left as it is.
    pub index: Option<IndexRef>,
    pub fetch: fetch::Options,
    pub access: Access,
    /// In a pod and no `--kubeconfig`: use the pod's service account.
    pub in_cluster: bool,
    pub opts: Options,
    /// `--once --strict`: an index that cannot be loaded stops the pass before anything
    /// is sent.
    pub strict_once: bool,
    pub interval: Duration,
    /// Stop after this many passes (tests).
    pub max_iterations: Option<u64>,
}

/// How one pass ended.
#[derive(Debug)]
pub enum Pass {
    /// Status was written; the counts of what was included (`None` = left as it was).
    Wrote {
        server: String,
        updates: Option<usize>,
        observed: Option<usize>,
    },
    /// Nothing was written. `idle` marks the expected fail-soft conditions (no CRD, no
    /// object), which do not back off.
    NotWritten {
        reason: Reason,
        idle: bool,
        message: String,
    },
    /// `--once --strict` and the index could not be loaded: nothing was sent.
    IndexFailed(Error),
}

impl Pass {
    /// The line that reports the pass.
    pub fn line(&self) -> String {
        match self {
            Pass::Wrote {
                server,
                updates,
                observed,
            } => wrote_line(server, *updates, *observed),
            Pass::NotWritten { message, .. } => message.clone(),
            Pass::IndexFailed(e) => crate::error::chain(e),
        }
    }

    /// A failure that makes the next pass wait longer.
    fn failed(&self) -> bool {
        match self {
            Pass::Wrote { .. } => false,
            Pass::NotWritten { idle, .. } => !idle,
            Pass::IndexFailed(_) => true,
        }
    }
}

/// A pass and the messages of the way there.
#[derive(Debug)]
pub struct PassReport {
    pub pass: Pass,
    pub notices: Vec<Notice>,
}

/// One pass (`clinv agent --once`).
///
/// # Errors
/// Only [`Error::Runtime`]: everything else ends up in the pass.
pub fn once(cfg: &Config) -> Result<PassReport> {
    crate::cluster::ready()?;
    Ok(pass(cfg))
}

/// Runs passes until `max_iterations` (forever without it), handing `log` the lines to
/// print after each pass and before each wait.
///
/// # Errors
/// Only [`Error::Runtime`], before the first pass.
pub fn run(cfg: &Config, mut log: impl FnMut(&[Notice])) -> Result<()> {
    crate::cluster::ready()?;
    let mut failures = 0u32;
    let mut passes = 0u64;
    let mut last: Option<String> = None;
    let mut jitter = Rng::new();
    loop {
        passes += 1;
        let report = pass(cfg);
        failures = if report.pass.failed() {
            failures.saturating_add(1)
        } else {
            0
        };
        log(&loop_lines(report, &mut last));
        if cfg.max_iterations.is_some_and(|max| passes >= max) {
            return Ok(());
        }
        let wait = next_wait(cfg.interval, failures, jitter.unit());
        log(&[Notice::debug(format!(
            "next pass in {:.1}s",
            wait.as_secs_f64()
        ))]);
        std::thread::sleep(wait);
    }
}

/// What loop mode prints of a pass: debug lines always; its warnings and its line only
/// when they differ from the previous pass's (`last` keeps those).
fn loop_lines(report: PassReport, last: &mut Option<String>) -> Vec<Notice> {
    let text = report.pass.line();
    let warnings: Vec<&str> = report
        .notices
        .iter()
        .filter(|n| n.level == Level::Warn)
        .map(|n| n.text.as_str())
        .collect();
    let key = format!("{}\n{text}", warnings.join("\n"));
    let changed = last.as_deref() != Some(key.as_str());
    *last = Some(key);
    let mut lines: Vec<Notice> = report
        .notices
        .into_iter()
        .filter(|n| changed || n.level != Level::Warn)
        .collect();
    if changed {
        lines.push(match report.pass {
            Pass::Wrote { .. } => Notice::info(text),
            _ => Notice::warn(text),
        });
    }
    lines
}

fn wrote_line(server: &str, updates: Option<usize>, observed: Option<usize>) -> String {
    let updates = match updates {
        Some(n) => format!("{n} available update(s)"),
        None => "availableUpdates left as it was (no index)".to_string(),
    };
    let observed = match observed {
        Some(n) => format!("{n} observed addon(s)"),
        None => "observedAddons left as it was".to_string(),
    };
    format!("agent: wrote ClusterInventory status: {updates}, {observed} ({server})")
}

/// One pass. Never panics and never returns early on a cluster error: everything ends
/// up in the outcome.
fn pass(cfg: &Config) -> PassReport {
    let mut notices = Vec::new();
    // The index is read first (blocking HTTP, outside the async part).
    let index: Option<AddonIndex> = match &cfg.index {
        None => None,
        Some(r) => match fetch::load(r, &cfg.fetch) {
            Ok(loaded) => {
                notices.extend(loaded.warnings.into_iter().map(Notice::warn));
                Some(loaded.index)
            }
            Err(e) if cfg.strict_once => {
                return PassReport {
                    pass: Pass::IndexFailed(e),
                    notices,
                };
            }
            Err(e) => {
                notices.push(Notice::warn(format!(
                    "agent: {} — availableUpdates is left as it is",
                    crate::error::chain(&e)
                )));
                None
            }
        },
    };
    let pass = match connect(cfg) {
        Ok(cluster) => {
            let pass = write_status(&cluster, index.as_ref(), &mut notices);
            notices.extend(cluster.trace().into_iter().map(Notice::debug));
            pass
        }
        Err(f) => not_written(&f, "cannot connect"),
    };
    PassReport { pass, notices }
}

fn connect(cfg: &Config) -> Result<Cluster, Failure> {
    if cfg.access.kubeconfig.is_none() && cfg.in_cluster {
        return Cluster::connect_in_cluster(cfg.opts);
    }
    let choice = cfg.access.choose(None, None)?;
    cfg.access.connect(&choice, cfg.opts)
}

fn write_status(cluster: &Cluster, index: Option<&AddonIndex>, notices: &mut Vec<Notice>) -> Pass {
    let server = cluster.target.server.clone();
    let idle = |message: String| Pass::NotWritten {
        reason: Reason::Rejected,
        idle: true,
        message,
    };
    let live = match cluster.read_inventory() {
        Ok(Live::Found(v)) => v,
        Ok(Live::NoCrd) => {
            return idle(format!(
                "agent: no ClusterInventory CRD (clusterinventories.lok8s.dev) in {server} — nothing written"
            ));
        }
        Ok(Live::NoObject) => {
            return idle(format!(
                "agent: no ClusterInventory 'cluster' in {server} — nothing written"
            ));
        }
        Err(f) => return not_written(&f, "cannot read the ClusterInventory"),
    };
    let updates = index.and_then(|i| available_updates(&live, i, notices));
    let observed = observed(cluster, notices);
    let now = crate::inventory::format_time(jiff::Timestamp::now());
    let body = status_body(updates.as_deref(), observed.as_deref(), &now);
    match cluster.patch_status(&body) {
        Ok(_) => Pass::Wrote {
            server,
            updates: updates.map(|u| u.len()),
            observed: observed.map(|o| o.len()),
        },
        Err(f) if f.code == Some(404) => idle(format!(
            "agent: no ClusterInventory 'cluster' in {server} (gone before the status write) — nothing written"
        )),
        Err(f) if f.reason == Reason::Forbidden => Pass::NotWritten {
            reason: f.reason,
            idle: false,
            message: format!(
                "agent: cannot write ClusterInventory status (RBAC: patch on clusterinventories/status is missing): {}",
                f.detail
            ),
        },
        Err(f) => not_written(&f, "cannot write ClusterInventory status"),
    }
}

/// The updates the index offers for the live addons; `None` (left as it is) when the
/// live object cannot be read as an inventory.
fn available_updates(
    live: &serde_json::Value,
    index: &AddonIndex,
    notices: &mut Vec<Notice>,
) -> Option<Vec<updates::Update>> {
    match updates::from_object(live, "the live ClusterInventory") {
        Ok(addons) => Some(updates::compute(&addons, index)),
        Err(e) => {
            notices.push(Notice::warn(format!(
                "agent: {} — availableUpdates is left as it is",
                crate::error::chain(&e)
            )));
            None
        }
    }
}

/// What Helm says runs; `None` (left as it is) when the records cannot be listed.
fn observed(cluster: &Cluster, notices: &mut Vec<Notice>) -> Option<Vec<helm::Observed>> {
    match cluster.helm_releases() {
        Ok(found) => {
            if found.undecodable > 0 {
                notices.push(Notice::warn(format!(
                    "agent: {} Helm release record(s) could not be decoded and are not listed",
                    found.undecodable
                )));
            }
            if found.truncated {
                notices.push(Notice::warn(
                    "agent: too many Helm release records; observedAddons lists the first pages only",
                ));
            }
            Some(helm::observed(&found.releases))
        }
        // No RBAC to list Secrets is a supported set-up: skip quietly.
        Err(f) if f.reason == Reason::Forbidden => {
            notices.push(Notice::debug(format!(
                "agent: no RBAC to list Secrets; observedAddons is left as it is ({})",
                f.detail
            )));
            None
        }
        Err(f) => {
            notices.push(Notice::warn(format!(
                "agent: cannot list Helm release records ({}: {}); observedAddons is left as it is",
                f.reason, f.detail
            )));
            None
        }
    }
}

fn not_written(f: &Failure, what: &str) -> Pass {
    let hint = match f.reason {
        Reason::Forbidden => " (RBAC: get on clusterinventories is missing)",
        _ => "",
    };
    Pass::NotWritten {
        reason: f.reason,
        idle: false,
        message: format!(
            "agent: {what}{hint}: {}: {} — nothing written",
            f.reason, f.detail
        ),
    }
}

/// `clinv agent`: the loop (its notices said as they come), or one pass (`--once`)
/// said with its line; what was not written follows the fail-soft rule.
///
/// # Errors
/// A loop that cannot start, `--strict`'s fail-soft error, `--once --strict` with an
/// index that could not be loaded.
pub fn say(cx: Context<'_>, cfg: &Config, once: bool) -> Result<Outcome> {
    if !once {
        run(cfg, |lines| cx.console.notices(lines))?;
        return Ok(Outcome::Done);
    }
    let report = self::once(cfg)?;
    cx.console.notices(&report.notices);
    match report.pass {
        pass @ Pass::Wrote { .. } => {
            cx.console.info(&pass.line());
            Ok(Outcome::Done)
        }
        Pass::NotWritten {
            reason, message, ..
        } => cx.fail_soft(reason, message),
        Pass::IndexFailed(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(warn: &str, pass: Pass) -> PassReport {
        PassReport {
            pass,
            notices: vec![Notice::warn(warn), Notice::debug("api: GET")],
        }
    }

    fn idle() -> Pass {
        Pass::NotWritten {
            reason: Reason::Rejected,
            idle: true,
            message: "agent: no CRD".into(),
        }
    }

    #[test]
    fn loop_mode_logs_a_condition_once_and_debug_lines_always() {
        let mut last = None;
        let first = loop_lines(report("w", idle()), &mut last);
        assert_eq!(
            first,
            [
                Notice::warn("w"),
                Notice::debug("api: GET"),
                Notice::warn("agent: no CRD")
            ]
        );
        let again = loop_lines(report("w", idle()), &mut last);
        assert_eq!(again, [Notice::debug("api: GET")]);
        let wrote = Pass::Wrote {
            server: "https://k".into(),
            updates: Some(2),
            observed: None,
        };
        let changed = loop_lines(report("w", wrote), &mut last);
        assert_eq!(
            changed.last(),
            Some(&Notice::info(
                "agent: wrote ClusterInventory status: 2 available update(s), observedAddons left as it was (https://k)"
            ))
        );
    }

    #[test]
    fn only_unexpected_conditions_back_off() {
        assert!(!idle().failed());
        assert!(
            Pass::NotWritten {
                reason: Reason::Forbidden,
                idle: false,
                message: String::new()
            }
            .failed()
        );
        assert!(Pass::IndexFailed(Error::NoAuthor).failed());
    }
}
