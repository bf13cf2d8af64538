//! How a command reaches the clusters of the domains it reads.
//!
//! `status`, `drift`, `updates`, `publish`, `fleet --from live`: one domain's [`Scope`],
//! and several read at once under the command's one deadline ([`crate::fleet::each`]).

use super::Scope;
use crate::cluster::access::{self, Access};
use crate::domain::Domain;
use crate::fleet::{Limits, Skip};
use crate::project::Project;
use std::path::PathBuf;

/// How to reach a domain's cluster and its snapshots: the kubeconfig flags and
/// environment, `--snapshots`, the command's `--timeout` and `--probe-timeout`.
#[derive(Debug, Clone)]
pub struct Live {
    pub snapshots: Option<PathBuf>,
    pub access: Access,
    pub limits: Limits,
}

impl Live {
    /// A domain of the project with its snapshots and its cluster, for the flows that
    /// read the live inventory (status, drift, updates).
    pub fn scope<'a>(&self, project: &'a Project, domain: &'a Domain) -> Scope<'a> {
        let store = crate::store::Store::of_project(self.snapshots.as_deref(), project.root());
        Scope {
            project,
            domain,
            store: store.domain(domain),
            access: self.access.clone(),
            opts: access::options(self.limits.timeout, self.limits.probe_timeout, false, false),
        }
    }

    /// Several domains, each read through its own kubeconfig by [`crate::fleet::each`]
    /// within the one `--timeout`: `read` gets a cluster domain and how to reach it with
    /// what is left of the limits (no `--kubeconfig`/`--context`: they name one cluster).
    ///
    /// `refuse` is the caller's word on flags that name one cluster, said first (a
    /// usage error is the command line's, so the caller says it).
    ///
    /// # Errors
    /// What `refuse` returns.
    pub fn each<R: Send, E>(
        &self,
        project: &Project,
        domains: &[Domain],
        refuse: impl FnOnce() -> Result<(), E>,
        read: impl Fn(&Domain, &Live) -> R + Sync,
        skip: impl Fn(&Domain, Skip) -> R + Sync,
    ) -> Result<Vec<R>, E> {
        refuse()?;
        let read = |domain: &Domain, left: Limits| {
            let live = Live {
                snapshots: self.snapshots.clone(),
                access: Access {
                    kubeconfig: None,
                    context: None,
                    ..self.access.clone()
                },
                limits: left,
            };
            read(domain, &live)
        };
        Ok(crate::fleet::each(
            Some(project),
            domains,
            self.limits,
            read,
            skip,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flags that name one cluster are refused before any domain is read; the domains
    /// read get no `--kubeconfig`/`--context` (each has its own) and the same store.
    #[test]
    fn several_domains_refuse_first_and_drop_the_one_cluster_flags() {
        let dir = tempfile::tempdir().unwrap();
        // An empty project: the domain is no deploy domain, so it is read.
        let project = Project::at(dir.path());
        let live = Live {
            snapshots: Some(dir.path().join("store")),
            access: Access {
                kubeconfig: Some("/x".into()),
                context: Some("c".into()),
                ..Access::default()
            },
            limits: Limits {
                timeout: 5.0,
                probe_timeout: 1.0,
            },
        };
        let domains = [Domain::parse("a.example").unwrap()];
        let read = |_: &Domain, _: &Live| panic!("read after a refusal");
        let refused = live.each(&project, &domains, || Err("one cluster"), read, |_, _| ());
        assert_eq!(refused, Err("one cluster"));
        let seen = live
            .each(
                &project,
                &domains,
                || Ok::<(), ()>(()),
                |_, live| (live.access.kubeconfig.clone(), live.access.context.clone()),
                |_, _| (None, None),
            )
            .unwrap();
        assert_eq!(seen, [(None, None)]);
    }
}
