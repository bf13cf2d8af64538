//! `clinv fleet`: the addon × domain matrix of the project or the store.

use crate::app::Result;
use crate::app::cli::{FleetArgs, FleetBy, FleetFormat, FleetFrom};
use crate::app::settings::Settings;
use crate::ops::fleet::read::{Asked, Origin};
use crate::view::fleet_answer::Ask;

pub fn run(settings: &Settings, args: &FleetArgs) -> Result<i32> {
    // Each domain has its own cluster: a flag naming one is refused, whatever the source.
    super::one_kubeconfig_each("fleet", &args.limits)?;
    no_history(args)?;
    let cx = super::context(settings);
    let live = super::live(settings, &args.limits);
    let (matrix, not_read) = crate::ops::fleet::read::read(cx, &live, &asked(args))?;
    let ask = Ask {
        behind_index: args.behind_index.as_deref(),
        fetch: super::fetch_options(settings, &args.source),
        output: args.output,
        addon: args.addon.as_deref(),
        below: args.below.as_deref(),
        above: args.above.as_deref(),
        differs: args.differs,
        changed_only: args.changed_only,
        by_domain: args.by == FleetBy::Domain,
        no_headers: args.no_headers,
        many: args.many(),
        against: &args.against,
    };
    if args.against.is_empty() {
        return Ok(crate::view::fleet_answer::say(cx, &ask, matrix, not_read)?);
    }
    if args.output == Some(FleetFormat::Html) {
        return Err(crate::app::Failure::Usage(
            "clinv fleet --against: -o html is the matrix's page; use table, wide, json, yaml or markdown".into(),
        ));
    }
    Ok(crate::view::fleet_compare::say(cx, &ask, matrix, not_read)?)
}

/// The matrix asked for, plain.
fn asked(args: &FleetArgs) -> Asked<'_> {
    Asked {
        from: args.from.map(|from| match from {
            FleetFrom::Project => Origin::Project,
            FleetFrom::Store => Origin::Store,
            FleetFrom::Live => Origin::Live,
        }),
        repo: args.repo.as_deref(),
        branch: args.branch.as_deref(),
        at: args.at.as_deref(),
        changed_since: args.changed_since.as_deref(),
        many: args.many(),
        comparing: !args.against.is_empty(),
    }
}

/// `--at`, `--changed-since` read the store's or a repository's history: `--from
/// project|live` have none.
fn no_history(args: &FleetArgs) -> Result<()> {
    let flag = match (&args.at, &args.changed_since) {
        (Some(_), _) => "--at",
        (None, Some(_)) => "--changed-since",
        (None, None) => return Ok(()),
    };
    let (word, what) = match (&args.repo, args.from) {
        (None, Some(FleetFrom::Project)) => ("project", "a project renders what it is now"),
        (None, Some(FleetFrom::Live)) => ("live", "a cluster is read as it is now"),
        _ => return Ok(()),
    };
    Err(crate::app::Failure::Usage(format!(
        "clinv fleet {flag}: --from {word} has no history ({what}); read the store (--from store, the default with {flag}) or a GitOps repository (--repo)"
    )))
}
