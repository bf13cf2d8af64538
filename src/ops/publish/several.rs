//! `publish` over several domains (`-A`, `--domain` repeated, a glob).
//!
//! Each is published through its own kubeconfig by [`crate::fleet::each`] (up to 64 at
//! once, within the one `--timeout`); a domain whose turn came too late is still
//! recorded and queued (offline first), the cluster not tried.

use super::{Report, Request};
use crate::cluster::access::{Access, options};
use crate::domain::Domain;
use crate::error::Result;
use crate::fleet::{Limits, Skip};
use crate::project::Project;
use crate::store::Store;

/// What every domain's publish shares: the project, its store, how to reach a cluster,
/// and the delivery's overrides.
pub struct Plan<'a> {
    pub project: &'a Project,
    pub store: &'a Store,
    pub access: &'a Access,
    /// `SOURCE_DATE_EPOCH`: a fixed `renderedAt` for reproducible output.
    pub source_date_epoch: Option<&'a str>,
    /// `--strict`: build warnings stop the publish.
    pub strict: bool,
    pub take_over: bool,
    pub force_conflicts: bool,
    pub dry_run: bool,
}

impl Plan<'_> {
    /// Renders, records and applies one domain's inventory within `limits`
    /// ([`super::publish`]); `not_tried`: the command's `--timeout` ran out first.
    ///
    /// # Errors
    /// What [`super::publish`] returns.
    pub fn publish(
        &self,
        domain: &Domain,
        limits: Limits,
        not_tried: Option<f64>,
    ) -> Result<Report> {
        let opts = crate::cluster::Options {
            take_over: self.take_over,
            ..options(
                limits.timeout,
                limits.probe_timeout,
                self.force_conflicts,
                self.dry_run,
            )
        };
        super::publish(&Request {
            project: self.project,
            domain,
            source_date_epoch: self.source_date_epoch,
            store: &self.store.domain(domain),
            access: self.access,
            opts,
            strict: self.strict,
            not_tried,
        })
    }
}

/// One domain of `publish -A`: its report, or why it was not published.
pub enum Got {
    Published(Box<Result<Report>>),
    Skipped(Skip),
}

/// Each of `domains` published within the one `limits`, in their order.
pub fn several(plan: &Plan<'_>, domains: &[Domain], limits: Limits) -> Vec<Got> {
    let publish = |domain: &Domain, limits: Limits, not_tried: Option<f64>| {
        Got::Published(Box::new(plan.publish(domain, limits, not_tried)))
    };
    crate::fleet::each(
        Some(plan.project),
        domains,
        limits,
        |domain, left| publish(domain, left, None),
        // Out of time: still recorded and queued (offline first), the cluster not tried.
        |domain, skip| match skip {
            Skip::NotTried => publish(domain, limits, Some(limits.timeout)),
            skip => Got::Skipped(skip),
        },
    )
}
