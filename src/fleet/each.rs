//! Several domains read at once under the command's one deadline: a black-holed cluster
//! holds up one worker, not the others, and a domain whose turn comes after the deadline
//! is said to be not tried rather than read late.

use crate::domain::Domain;
use crate::project::{DomainKind, Project};
use std::time::{Duration, Instant};

/// How many domains are read at once: enough that a fleet of slow clusters is read
/// within one `--timeout`, few enough for a laptop's sockets and file handles.
pub const PARALLEL: usize = 64;

/// A command's budget: its one `--timeout` and each cluster's probe budget, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub timeout: f64,
    pub probe_timeout: f64,
}

/// Why a domain was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// A deploy domain: no inventory of its own (its cluster domain, when named).
    Deploy(Option<String>),
    /// The one `--timeout` of the command was spent before its turn.
    NotTried,
}

impl Skip {
    /// What a row says: the verdict and its detail.
    pub fn words(&self) -> (&'static str, String) {
        match self {
            Skip::Deploy(cluster) => (
                "deploy domain",
                format!(
                    "no inventory of its own (cluster: {})",
                    cluster.as_deref().unwrap_or("-")
                ),
            ),
            Skip::NotTried => ("not tried", "the --timeout was spent".to_string()),
        }
    }
}

/// `read` of each of `domains`, up to [`PARALLEL`] at once, in their order.
///
/// `read` gets a cluster domain and what is left of `limits` when its turn comes; `skip`
/// gets a deploy domain of `project` (when there is one: a store alone knows none), and
/// a domain whose turn comes after the deadline.
pub fn each<R: Send>(
    project: Option<&Project>,
    domains: &[Domain],
    limits: Limits,
    read: impl Fn(&Domain, Limits) -> R + Sync,
    skip: impl Fn(&Domain, Skip) -> R + Sync,
) -> Vec<R> {
    let deadline = Instant::now() + Duration::from_secs_f64(limits.timeout.max(0.0));
    crate::util::pool::ordered(domains, PARALLEL, |domain| {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        match project.map(|p| p.domain_kind(domain)) {
            Some(DomainKind::Deploy { cluster_ref, .. }) => skip(domain, Skip::Deploy(cluster_ref)),
            _ if left <= 0.0 => skip(domain, Skip::NotTried),
            _ => read(
                domain,
                Limits {
                    timeout: left.min(limits.timeout),
                    probe_timeout: limits.probe_timeout.min(left),
                },
            ),
        }
    })
}
