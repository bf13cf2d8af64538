//! `clinv diff A B`: the semantic diff of two inventories ([`crate::view::diff`]), of one
//! domain or of several (`-A`, `--domain` repeated, a glob). Exit codes follow
//! diff/kubectl: 0 same, 1 different, 2 any error (`app::run` maps every failure of diff
//! and drift to 2).

use crate::app::cli::DiffArgs;
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::cluster::access;
use crate::domain::Domain;
use crate::history::diff::Ignore;
use crate::ops::diff::Sources;
use crate::project::Project;
use crate::view::diff::Style;

pub fn run(settings: &Settings, args: &DiffArgs) -> Result<i32> {
    let ignore = Ignore::parse(&args.ignore)?;
    let access = super::access(settings, &args.limits);
    #[cfg(feature = "gitops")]
    let (registry, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
    let sources = Sources {
        from: &args.from,
        to: &args.to,
        ignore: &ignore,
        run: super::context(settings),
        repo: args.repo.as_deref(),
        access: &access,
        #[cfg(feature = "gitops")]
        registry: (&registry, key.as_ref()),
    };
    let style = Style {
        format: args.output.unwrap_or_default(),
        stat: args.stat,
        strict: settings.strict,
    };
    let (console, limits) = (&settings.printer, &args.limits);
    if let Some((project, domains)) = fleet(settings, args)? {
        let limits = crate::fleet::Limits {
            timeout: limits.timeout,
            probe_timeout: limits.probe_timeout,
        };
        let deploy =
            |d: &Domain, cluster: Option<&str>| super::deploy_domain_note(settings, d, cluster);
        let several = (project.as_ref(), &domains[..]);
        return Ok(crate::view::diff::several(
            console, &sources, several, limits, style, deploy,
        )?);
    }
    let deadline = access::options(limits.timeout, limits.probe_timeout, false, false);
    let one = args.domain.one();
    Ok(crate::view::diff::one(
        console, &sources, one, deadline, style,
    )?)
}

/// The domains of a fleet selection — the project's, else the store's — and the project
/// (for its deploy domains); `None` for one plain `--domain` or none.
fn fleet(settings: &Settings, args: &DiffArgs) -> Result<Option<(Option<Project>, Vec<Domain>)>> {
    if !args.domain.many().is_many() {
        return Ok(None);
    }
    super::one_kubeconfig_each("diff", &args.limits)?;
    if args.from == "-" || args.to == "-" {
        return Err(Failure::Usage(
            "clinv diff with several domains: '-' (stdin) is one inventory, not one per domain"
                .to_string(),
        ));
    }
    let opened = super::reach(settings)?;
    let domains = match &opened.project {
        Some(project) => super::fleet(project, &args.domain)?,
        None => opened.fleet(args.domain.many())?,
    };
    Ok(domains.map(|domains| (opened.project, domains)))
}
