//! `clinv agent`: the in-cluster status writer.
//!
//! One pass: load the index (if any), `GET` the live inventory, compute
//! `availableUpdates`, list Helm release records (when RBAC allows), and merge-patch
//! `status` through the status subresource as `clinv-agent`. Loop mode repeats every
//! `--interval` with jitter, backs off on errors and never exits on them; a condition
//! is logged once, when it starts, not on every pass.

use super::access;
use super::updates::{fetch_options, of_object};
use crate::app::cli::AgentArgs;
use crate::app::settings::Settings;
use crate::cluster::{Cluster, Failure, Live, Options};
use crate::delivery::Reason;
use crate::error::{Error, Result, exit};
use crate::status::agent::{self, jitter_unit, next_wait};
use crate::status::fetch::{self, IndexRef};
use crate::status::helm;
use crate::status::index::AddonIndex;

/// How one pass ended.
enum Outcome {
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

/// A message of a pass, with its level.
enum Note {
    Warn(String),
    Debug(String),
}

pub fn run(settings: &Settings, args: &AgentArgs) -> Result<i32> {
    let index_ref = args.index.as_deref().map(IndexRef::parse).transpose()?;
    let opts = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
    let rt = access::runtime()?;
    let strict_once = args.once && settings.strict;
    let mut failures = 0u32;
    let mut passes = 0u64;
    let mut last: Option<String> = None;
    loop {
        passes += 1;
        let (outcome, notes) = pass(settings, args, index_ref.as_ref(), opts, &rt, strict_once);
        if args.once {
            print_notes(settings, &notes, true);
            return finish_once(settings, outcome);
        }
        let (text, failed) = match outcome {
            Outcome::Wrote {
                server,
                updates,
                observed,
            } => (wrote_line(&server, updates, observed), false),
            Outcome::NotWritten { idle, message, .. } => (message, !idle),
            Outcome::IndexFailed(e) => (e.to_string(), true),
        };
        // Loop mode logs a pass only when its lines differ from the previous pass's.
        let key = format!("{}\n{text}", warnings(&notes).join("\n"));
        let changed = last.as_deref() != Some(key.as_str());
        print_notes(settings, &notes, changed);
        if changed {
            if text.starts_with("agent: wrote ") {
                settings.printer.info(&text);
            } else {
                settings.printer.warn(&text);
            }
        }
        last = Some(key);
        failures = if failed {
            failures.saturating_add(1)
        } else {
            0
        };
        if args.max_iterations.is_some_and(|max| passes >= max) {
            return Ok(exit::OK);
        }
        let wait = next_wait(args.interval, failures, jitter_unit());
        settings
            .printer
            .debug(&format!("next pass in {:.1}s", wait.as_secs_f64()));
        std::thread::sleep(wait);
    }
}

fn warnings(notes: &[Note]) -> Vec<&str> {
    notes
        .iter()
        .filter_map(|n| match n {
            Note::Warn(t) => Some(t.as_str()),
            Note::Debug(_) => None,
        })
        .collect()
}

/// Prints debug notes always and warnings when `warn` is set.
fn print_notes(settings: &Settings, notes: &[Note], warn: bool) {
    for note in notes {
        match note {
            Note::Warn(t) if warn => settings.printer.warn(t),
            Note::Warn(_) => {}
            Note::Debug(t) => settings.printer.debug(t),
        }
    }
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

fn finish_once(settings: &Settings, outcome: Outcome) -> Result<i32> {
    match outcome {
        Outcome::Wrote {
            server,
            updates,
            observed,
        } => {
            settings
                .printer
                .info(&wrote_line(&server, updates, observed));
            Ok(exit::OK)
        }
        Outcome::NotWritten {
            reason, message, ..
        } => {
            if settings.strict {
                return Err(Error::Unapplied { reason, message });
            }
            settings.printer.warn(&message);
            Ok(exit::OK)
        }
        Outcome::IndexFailed(e) => Err(e),
    }
}

/// One pass. Never panics and never returns early on a cluster error: everything ends
/// up in the outcome.
fn pass(
    settings: &Settings,
    args: &AgentArgs,
    index_ref: Option<&IndexRef>,
    opts: Options,
    rt: &tokio::runtime::Runtime,
    strict_once: bool,
) -> (Outcome, Vec<Note>) {
    let mut notes = Vec::new();
    // The index is read first (blocking HTTP, outside the async part).
    let index: Option<AddonIndex> = match index_ref {
        None => None,
        Some(r) => match fetch::load(r, &fetch_options(settings, &args.source)) {
            Ok(loaded) => {
                notes.extend(loaded.warnings.into_iter().map(Note::Warn));
                Some(loaded.index)
            }
            Err(e) if strict_once => return (Outcome::IndexFailed(e), notes),
            Err(e) => {
                notes.push(Note::Warn(format!(
                    "agent: {e} — availableUpdates is left as it is"
                )));
                None
            }
        },
    };
    let outcome = rt.block_on(async {
        let cluster = match connect(settings, opts).await {
            Ok(c) => c,
            Err(f) => return not_written(&f, "cannot connect"),
        };
        let outcome = write_status(&cluster, index.as_ref(), &mut notes).await;
        for line in cluster.trace() {
            notes.push(Note::Debug(line));
        }
        outcome
    });
    (outcome, notes)
}

async fn connect(settings: &Settings, opts: Options) -> Result<Cluster, Failure> {
    if settings.kubeconfig.is_none() && settings.env.in_cluster {
        return Cluster::connect_in_cluster(opts);
    }
    let choice = access::choose(settings, None, None)?;
    access::connect(settings, &choice, opts).await
}

async fn write_status(
    cluster: &Cluster,
    index: Option<&AddonIndex>,
    notes: &mut Vec<Note>,
) -> Outcome {
    let server = cluster.target.server.clone();
    let live = match cluster.read_inventory().await {
        Ok(Live::Found(v)) => v,
        Ok(Live::NoCrd) => {
            return Outcome::NotWritten {
                reason: Reason::Rejected,
                idle: true,
                message: format!(
                    "agent: no ClusterInventory CRD (clusterinventories.lok8s.dev) in {server} — nothing written"
                ),
            };
        }
        Ok(Live::NoObject) => {
            return Outcome::NotWritten {
                reason: Reason::Rejected,
                idle: true,
                message: format!(
                    "agent: no ClusterInventory 'cluster' in {server} — nothing written"
                ),
            };
        }
        Err(f) => return not_written(&f, "cannot read the ClusterInventory"),
    };
    let updates = match index.map(|i| of_object(&live, i)) {
        None => None,
        Some(Ok(list)) => Some(list),
        Some(Err(e)) => {
            notes.push(Note::Warn(format!(
                "agent: {e} — availableUpdates is left as it is"
            )));
            None
        }
    };
    let observed = match cluster.helm_releases().await {
        Ok(found) => {
            if found.undecodable > 0 {
                notes.push(Note::Warn(format!(
                    "agent: {} Helm release record(s) could not be decoded and are not listed",
                    found.undecodable
                )));
            }
            if found.truncated {
                notes.push(Note::Warn(
                    "agent: too many Helm release records; observedAddons lists the first pages only"
                        .into(),
                ));
            }
            Some(helm::observed(&found.releases))
        }
        // No RBAC to list Secrets is a supported set-up: skip quietly.
        Err(f) if f.reason == Reason::Forbidden => {
            notes.push(Note::Debug(format!(
                "agent: no RBAC to list Secrets; observedAddons is left as it is ({})",
                f.detail
            )));
            None
        }
        Err(f) => {
            notes.push(Note::Warn(format!(
                "agent: cannot list Helm release records ({}: {}); observedAddons is left as it is",
                f.reason, f.detail
            )));
            None
        }
    };
    let now = crate::util::time::format_seconds(jiff::Timestamp::now());
    let body = agent::status_body(updates.as_deref(), observed.as_deref(), &now);
    match cluster.patch_status(&body).await {
        Ok(_) => Outcome::Wrote {
            server,
            updates: updates.map(|u| u.len()),
            observed: observed.map(|o| o.len()),
        },
        Err(f) if f.code == Some(404) => Outcome::NotWritten {
            reason: Reason::Rejected,
            idle: true,
            message: format!(
                "agent: no ClusterInventory 'cluster' in {server} (gone before the status write) — nothing written"
            ),
        },
        Err(f) if f.reason == Reason::Forbidden => Outcome::NotWritten {
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

fn not_written(f: &Failure, what: &str) -> Outcome {
    let hint = match f.reason {
        Reason::Forbidden => " (RBAC: get on clusterinventories is missing)",
        _ => "",
    };
    Outcome::NotWritten {
        reason: f.reason,
        idle: false,
        message: format!(
            "agent: {what}{hint}: {}: {} — nothing written",
            f.reason, f.detail
        ),
    }
}
