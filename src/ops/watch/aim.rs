//! Where a domain's delivery goes — the address its probe connects to and the API
//! server its attempt reaches — as read from the kubeconfigs, with how to tell that
//! they changed since (a regenerated kubeconfig is read again without a SIGHUP).

use super::probe::Endpoint;
use super::replay::{self, Request};
use crate::store::DomainStore;
use std::path::PathBuf;
use std::time::SystemTime;

/// A domain's far end as last read, and how to tell its kubeconfigs changed since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aim {
    pub endpoint: Endpoint,
    pub server: String,
    files: Vec<PathBuf>,
    stamps: Vec<Option<SystemTime>>,
}

impl Aim {
    /// A far end found without kubeconfig files to watch (the tests' aims).
    #[cfg(test)]
    pub fn at(endpoint: Endpoint, server: &str) -> Aim {
        Aim {
            endpoint,
            server: server.to_string(),
            files: Vec::new(),
            stamps: Vec::new(),
        }
    }

    /// Whether a kubeconfig it was read from changed (one stat per file): a regenerated
    /// kubeconfig is read at the next attempt, without a SIGHUP.
    pub fn stale(&self) -> bool {
        stamps(&self.files) != self.stamps
    }
}

/// Where `store`'s newest pending snapshot goes (see [`replay::endpoint`]), with the
/// modification times of the kubeconfig files it was read from.
pub fn find(req: &Request<'_>, store: &DomainStore) -> Option<Aim> {
    let aimed = replay::endpoint(req, store)?;
    let (host, port) = aimed.addr;
    Some(Aim {
        endpoint: Endpoint { host, port },
        server: aimed.server,
        stamps: stamps(&aimed.files),
        files: aimed.files,
    })
}

fn stamps(files: &[PathBuf]) -> Vec<Option<SystemTime>> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok())
        .collect()
}
