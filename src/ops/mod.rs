//! The flows behind the commands that combine several modules.
//!
//! The flows behind the commands that combine several modules (cargo's `ops`): each
//! takes plain arguments, never the command line's settings, does its effects through
//! the modules that own them and returns typed outcomes — warnings included — for the
//! command line to print.

pub mod agent;
#[cfg(feature = "gitops")]
pub mod commit;
pub mod context;
pub mod diff;
pub mod drift;
pub mod fleet;
pub mod history;
pub mod index;
pub mod live;
pub mod owed;
pub mod publish;
#[cfg(feature = "gitops")]
pub mod pull;
#[cfg(feature = "gitops")]
pub mod push;
pub mod refs;
pub mod render;
pub mod replay;
pub mod serve;
pub mod snapshots;
pub mod status;
pub mod updates;
pub mod warnings;
pub mod watch;

use crate::cluster::Options;
use crate::cluster::access::Access;
use crate::domain::Domain;
use crate::project::Project;
use crate::store::DomainStore;

/// A flow's result and the messages of the way, said even when it failed (`commit`,
/// `push`): the command prints the notices, then looks at the result.
pub struct Reported<T> {
    pub notices: Vec<crate::util::notice::Notice>,
    pub result: crate::error::Result<T>,
}

impl<T> Reported<T> {
    /// Runs `flow`, keeping the notices it gave whether or not it failed.
    pub fn gather(
        flow: impl FnOnce(&mut Vec<crate::util::notice::Notice>) -> crate::error::Result<T>,
    ) -> Self {
        let mut notices = Vec::new();
        let result = flow(&mut notices);
        Reported { notices, result }
    }
}

/// What a channel (Git, a registry) did for one domain.
pub enum Delivered<T> {
    /// A deploy domain: it has no inventory of its own, nothing was delivered.
    DeployDomain {
        cluster_ref: Option<String>,
    },
    Done(T),
}

/// The domain a flow works on: its project, its snapshots, and how to reach its cluster.
pub struct Scope<'a> {
    pub project: &'a Project,
    pub domain: &'a Domain,
    pub store: DomainStore,
    pub access: Access,
    pub opts: Options,
}
