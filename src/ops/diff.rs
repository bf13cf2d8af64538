//! `clinv diff A B`: each domain's two references read and compared.
//!
//! One domain, or several (`-A`, `--domain` repeated, a glob) up to [`crate::fleet::PARALLEL`] at once
//! within the one `--timeout`, each resolved for that domain (its snapshots, its `git:`
//! folder, its cluster).

use crate::cluster::Options;
use crate::cluster::access::{self, Access};
use crate::domain::Domain;
use crate::error::Result;
use crate::history::diff::Ignore;
use crate::ops::context::Context;
use crate::ops::refs::{Compared, RefContext, compare};
use crate::project::Project;
use std::path::Path;

/// Where the references are read from, for any domain: the command line's flags and
/// environment as plain values.
pub struct Sources<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub ignore: &'a Ignore,
    /// The run: `--root` (else the project above its working directory), `DOMAIN_NAME`,
    /// `--snapshots`.
    pub run: Context<'a>,
    /// `--repo`, for `git:` references.
    pub repo: Option<&'a Path>,
    /// How to reach a cluster (`cluster` references).
    pub access: &'a Access,
    /// How to reach a registry, and `--verify`'s key (`oci://` references).
    #[cfg(feature = "gitops")]
    pub registry: (&'a crate::oci::Access, Option<&'a crate::oci::PublicKey>),
}

/// What a reference's resolution said on the way: lok8s's notices and clinv's notes.
pub type Messages = (Vec<String>, Vec<String>);

/// One domain's comparison and what was said on the way (also when it failed).
pub type Answer = (Result<Compared>, Messages);

impl Sources<'_> {
    /// A and B of `domain` (the one-domain rule when `None`), compared within `opts`.
    pub fn compare(&self, domain: Option<&str>, opts: Options) -> Answer {
        let mut cx = RefContext::new(self.run.cwd);
        cx.root = self.run.root;
        cx.domain = domain;
        cx.env_domain = self.run.domain_name;
        cx.snapshots = self.run.snapshots;
        cx.repo = self.repo;
        cx.cluster = Some((self.access, opts));
        #[cfg(feature = "gitops")]
        {
            cx.registry = Some(self.registry);
        }
        let compared = compare(&cx, self.from, self.to, self.ignore);
        (compared, (cx.take_notices(), cx.take_notes()))
    }

    /// Each domain's comparison in the order given ([`crate::fleet::each`]): `None` for
    /// a deploy domain, which has no inventory of its own (`deploy` is told of it, with
    /// the cluster that carries it); a domain not tried within the limits is an error.
    pub fn several(
        &self,
        project: Option<&Project>,
        domains: &[Domain],
        limits: crate::fleet::Limits,
        deploy: impl Fn(&Domain, Option<&str>) + Sync,
    ) -> Vec<Option<Answer>> {
        let compare = |d: &Domain, left: crate::fleet::Limits| {
            let opts = access::options(left.timeout, left.probe_timeout, false, false);
            Some(self.compare(Some(d.as_str()), opts))
        };
        let skip = |d: &Domain, why: crate::fleet::Skip| match why {
            crate::fleet::Skip::Deploy(cluster_ref) => {
                deploy(d, cluster_ref.as_deref());
                None
            }
            not_tried => {
                let (word, detail) = not_tried.words();
                let e = crate::Error::Unapplied {
                    reason: crate::delivery::Reason::Unreachable,
                    message: format!("{word}: {detail}"),
                };
                Some((Err(e), Messages::default()))
            }
        };
        crate::fleet::each(project, domains, limits, compare, skip)
    }
}
