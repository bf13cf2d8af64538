//! What a command over several domains leaves out, and the deploy domains a run meets.

use crate::console::Console;
use crate::domain::Domain;
use crate::error::Error;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// The deploy domains a run met, each with the cluster domain that carries it.
///
/// Noted as the commands meet them and said once, grouped, at the end of the run: a
/// fleet of deploy domains is one line, not one per domain.
#[derive(Debug, Default)]
pub struct Deploys(Mutex<BTreeMap<String, Option<String>>>);

impl Deploys {
    /// Notes that a deploy domain has no inventory of its own.
    pub fn note(&self, domain: &str, cluster_ref: Option<&str>) {
        let mut met = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        met.insert(domain.to_string(), cluster_ref.map(str::to_string));
    }

    /// The deploy domains noted so far, taken (each is said once).
    pub fn take(&self) -> BTreeMap<String, Option<String>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A domain a fleet command leaves out, and why (`-o json`'s `left`).
#[derive(Debug, serde::Serialize)]
pub struct Left {
    pub domain: String,
    pub why: String,
}

impl Left {
    /// A deploy domain, noted for the end of the run as for one domain.
    pub fn deploy(deploys: &Deploys, domain: &Domain, cluster_ref: Option<&str>) -> Left {
        deploys.note(domain.as_str(), cluster_ref);
        Left {
            domain: domain.to_string(),
            why: format!(
                "deploy domain: no inventory of its own (cluster: {})",
                cluster_ref.unwrap_or("-")
            ),
        }
    }

    /// A domain whose answer failed: `[error] D: …` said.
    pub fn failed(console: &dyn Console, domain: &Domain, error: &Error) -> Left {
        console.error(&format!("{domain}: {error}"));
        Left {
            domain: domain.to_string(),
            why: error.to_string(),
        }
    }
}
