//! `clinv snapshots [list|show|verify|gc|export|import]`: the local store.

use crate::app::Result;
use crate::app::cli::{ImportArgs, ListArgs, SnapshotsArgs, SnapshotsCommand, TableOutput};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::fleet::Reach;
use crate::ops::snapshots::{Gc, On};
use crate::view::snapshots::{list, say};

pub fn run(settings: &Settings, args: &SnapshotsArgs) -> Result<i32> {
    // `snapshots` alone is `snapshots list`: its flags may come before `list` too, and
    // before any other subcommand they are a mistake.
    let given = &args.list;
    let list_flags = given.state.is_some()
        || given.since.is_some()
        || given.limit.is_some()
        || given.sort_by.is_some()
        || given.table.output.is_some()
        || given.table.no_headers;
    if list_flags && !matches!(args.command, None | Some(SnapshotsCommand::List(_))) {
        return Err(crate::app::Failure::Usage(
            "clinv snapshots: --state, --since, --limit, --sort-by, -o and --no-headers before a subcommand other than list \
             belong to `snapshots list`; give the subcommand's own flags after it"
                .to_string(),
        ));
    }
    let opened = super::reach(settings)?;
    let domains = match &args.command {
        Some(SnapshotsCommand::Import { .. }) => None,
        _ => selected(settings, &opened, args)?,
    };
    let (console, store) = (&settings.printer, &opened.store);
    let on = On {
        store,
        domains: domains.as_deref(),
    };
    Ok(match &args.command {
        None => list::list(console, on, &flags(&args.list)),
        Some(SnapshotsCommand::List(more)) => list::list(console, on, &flags(&merged(given, more))),
        Some(SnapshotsCommand::Show { id, output }) => {
            let domain = shown_domain(settings, &opened, on.domains, id)?;
            say::show(
                console,
                store,
                domain.as_ref(),
                id,
                output.unwrap_or_default(),
            )
        }
        Some(SnapshotsCommand::Verify { output }) => {
            say::verify(console, on, output.unwrap_or_default())
        }
        Some(SnapshotsCommand::Gc {
            keep,
            dry_run,
            allow_damage,
            output,
        }) => {
            let (keep, dry_run, allow_damage) = (*keep, *dry_run, *allow_damage);
            let how = Gc {
                keep,
                dry_run,
                allow_damage,
            };
            say::gc(console, on, how, output.unwrap_or_default())
        }
        Some(SnapshotsCommand::Export { file, allow_damage }) => {
            say::export(console, on, file, *allow_damage)
        }
        Some(SnapshotsCommand::Import(args)) => return import(settings, store, args),
    }?)
}

/// The domain of `snapshots show`: an id is unique across domains; `latest` and `@DATE`
/// need one domain, chosen by the one selection rule.
fn shown_domain(
    settings: &Settings,
    opened: &Reach,
    domains: Option<&[Domain]>,
    id: &str,
) -> Result<Option<Domain>> {
    Ok(match (domains, crate::store::parse_ref(id)?) {
        (Some([d]), _) => Some(d.clone()),
        (Some(_), _) => {
            return Err(crate::app::Failure::Usage(
                "clinv snapshots show: one snapshot of one domain; --domain names several"
                    .to_string(),
            ));
        }
        (None, crate::history::refs::SnapshotRef::Id(_)) => None,
        (None, _) => {
            let env = settings.env.domain_name.as_deref();
            Some(opened.domain(&settings.printer, None, env)?)
        }
    })
}

/// `snapshots list`'s flags: those after `list`, else those before it.
fn merged(given: &ListArgs, flags: &ListArgs) -> ListArgs {
    ListArgs {
        state: flags.state.or(given.state),
        since: flags.since.clone().or_else(|| given.since.clone()),
        limit: flags.limit.or(given.limit),
        sort_by: flags.sort_by.or(given.sort_by),
        table: TableOutput {
            output: flags
                .table
                .output
                .clone()
                .or_else(|| given.table.output.clone()),
            no_headers: flags.table.no_headers || given.table.no_headers,
            allow_missing_template_keys: flags.table.allow_missing_template_keys
                && given.table.allow_missing_template_keys,
        },
    }
}

/// `snapshots list`'s flags as the view takes them.
fn flags(args: &ListArgs) -> list::Flags {
    list::Flags {
        format: args.table.output.clone().unwrap_or_default(),
        state: args.state.map(Into::into),
        since: args.since.clone(),
        limit: args.limit,
        sort_by: args.sort_by,
        no_headers: args.table.no_headers,
        allow_missing_template_keys: args.table.allow_missing_template_keys,
    }
}

/// The domains `--domain` names: one plain name by the one selection rule (a domain the
/// store or the project knows, with "did you mean"), several names or globs among the
/// store's; `None` without `--domain`: every domain.
fn selected(
    settings: &Settings,
    opened: &Reach,
    args: &SnapshotsArgs,
) -> Result<Option<Vec<Domain>>> {
    let many = crate::project::select::Many {
        patterns: &args.domain,
        all: args.all_domains,
    };
    let env = settings.env.domain_name.as_deref();
    Ok(match &args.domain[..] {
        [] if !many.all => None,
        [one] if !many.is_many() => Some(vec![opened.domain(&settings.printer, Some(one), env)?]),
        _ => opened.fleet(many)?,
    })
}

/// `snapshots import FILE|oci://…`.
fn import(settings: &Settings, store: &crate::store::Store, args: &ImportArgs) -> Result<i32> {
    let console = &settings.printer;
    match args.file.to_str().filter(|f| f.starts_with("oci://")) {
        #[cfg(feature = "gitops")]
        Some(url) => {
            let (access, key) = super::registry_reading(&args.registry, args.verify.as_deref())?;
            Ok(say::import_oci(console, store, url, &access, key.as_ref())?)
        }
        #[cfg(not(feature = "gitops"))]
        Some(_) => Err(crate::Error::NoGitops("snapshots import oci://").into()),
        None => Ok(say::import(console, store, &args.file)?),
    }
}
