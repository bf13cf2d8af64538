//! `clinv fleet`: the addon × domain matrix of the project or the store.

use super::{StoreOnly, project, rendered_at};
use crate::app::Result;
use crate::app::cli::{FleetArgs, FleetBy, FleetFormat, FleetFrom};
use crate::app::output;
use crate::app::settings::Settings;
use crate::ops::fleet::{self, Matrix, Query};
use crate::view;

pub fn run(settings: &Settings, args: &FleetArgs) -> Result<i32> {
    // Each domain has its own cluster: a flag naming one is refused, whatever the source.
    super::one_kubeconfig_each("fleet", &args.limits)?;
    let (matrix, not_read) = read(settings, args)?;
    if !args.against.is_empty() {
        return compare(settings, args, matrix, not_read);
    }
    let many = crate::project::select::Many {
        patterns: &args.domain,
        all: args.all_domains,
    };
    let matrix = fleet::compare::only(matrix, many, |_| crate::error::UnknownIn::Nowhere)?;
    let index = match &args.behind_index {
        Some(text) => {
            let index_ref = crate::catalog::fetch::IndexRef::parse(text)?;
            let loaded = crate::catalog::fetch::load(
                &index_ref,
                &super::fetch_options(settings, &args.source),
            )?;
            for w in &loaded.warnings {
                settings.printer.warn(w);
            }
            Some(loaded.index)
        }
        None => None,
    };
    // A page colours what --behind-index and --differs find; the other formats keep only it.
    let html = args.output == Some(FleetFormat::Html);
    let query = Query {
        addon: args.addon.as_deref(),
        below: args.below.as_deref(),
        above: args.above.as_deref(),
        behind: index.as_ref().filter(|_| !html),
        differs: args.differs && !html,
    };
    let matrix = matrix.filter(&query)?;
    if let Some(unknown) = &matrix.unknown_addon {
        if settings.strict {
            return Err(crate::error::Error::from(unknown.clone()).into());
        }
        settings.printer.warn(&unknown.to_string());
    }
    let by_domain = args.by == FleetBy::Domain;
    let text = match args.output.unwrap_or_default() {
        FleetFormat::Json => view::fleet::json(&matrix)?,
        FleetFormat::Yaml => output::yaml(&view::fleet::json(&matrix)?)?,
        FleetFormat::Markdown => view::fleet::markdown(&matrix, by_domain),
        FleetFormat::Table => view::fleet::table(&matrix, by_domain, false, args.no_headers),
        FleetFormat::Wide => view::fleet::table(&matrix, by_domain, true, args.no_headers),
        FleetFormat::Html => view::fleet_html::page(
            &matrix,
            &matrix.marks(index.as_ref()),
            args.behind_index.as_deref(),
        ),
    };
    settings.printer.data(&text)?;
    notes(settings, &matrix, &query);
    Ok(matrix.exit_code(not_read))
}

/// `--against`: what differs between the two selections, in the `-o` format asked for;
/// exit as `diff`: 0 same, 1 different, 2 a domain of a side not read (16: a cluster).
fn compare(settings: &Settings, args: &FleetArgs, matrix: Matrix, not_read: bool) -> Result<i32> {
    use crate::view::fleet_compare as view;
    if args.output == Some(FleetFormat::Html) {
        return Err(crate::app::Failure::Usage(
            "clinv fleet --against: -o html is the matrix's page; use table, wide, json, yaml or markdown".into(),
        ));
    }
    let selections = fleet::compare::Selections {
        one: crate::project::select::Many {
            patterns: &args.domain,
            all: args.all_domains,
        },
        against: &args.against,
        addon: args.addon.as_deref(),
    };
    let c = fleet::compare::compare(&matrix, selections, |_| crate::error::UnknownIn::Nowhere)?;
    if let Some(unknown) = &c.unknown_addon {
        if settings.strict {
            return Err(crate::error::Error::from(unknown.clone()).into());
        }
        settings.printer.warn(&unknown.to_string());
    }
    settings
        .printer
        .data(&match args.output.unwrap_or_default() {
            FleetFormat::Json => view::json(&c)?,
            FleetFormat::Yaml => output::yaml(&view::json(&c)?)?,
            FleetFormat::Markdown => view::markdown(&c),
            FleetFormat::Wide => view::table(&c, true, args.no_headers),
            _ => view::table(&c, false, args.no_headers),
        })?;
    c.sides.iter().for_each(|s| left(settings, &s.left));
    let notes = view::notes(&c, args.addon.as_deref());
    notes.iter().for_each(|n| settings.printer.info(n));
    Ok(match (c.failed(), not_read, c.differs()) {
        (true, _, _) => crate::error::exit::diff::ERROR,
        (_, true, _) => crate::error::exit::NOT_LIVE,
        (_, _, true) => crate::error::exit::diff::DIFFERENT,
        _ => crate::error::exit::diff::SAME,
    })
}

/// The domains with no column, said: deploy domains once at the end of the run, the
/// others each on a line (an error when it should have had one).
fn left(settings: &Settings, left: &[fleet::Left]) {
    for left in left {
        if let Some(cluster_ref) = &left.deploy {
            super::deploy_domain_note(settings, &left.domain, cluster_ref.as_deref());
            continue;
        }
        let line = format!("{}: not in the matrix: {}", left.domain, left.why);
        if left.failed || left.other_domain {
            settings.printer.error(&line);
        } else {
            settings.printer.info(&line);
        }
    }
}

/// The matrix from the source asked for (`--repo`, `--from`, else [`source`]), and
/// whether any cluster domain was not read (`--from live`).
fn read(settings: &Settings, args: &FleetArgs) -> Result<(Matrix, bool)> {
    if let Some(repo) = &args.repo {
        let branch = args.branch.as_deref().unwrap_or("HEAD");
        return Ok((fleet::from_repo(repo, branch)?, false));
    }
    let from = match args.from {
        Some(from) => from,
        None => source(settings)?,
    };
    Ok(match from {
        FleetFrom::Project => {
            let project = project(settings).map_err(|e| match e {
                crate::error::Error::NoProject(cwd) => crate::error::Error::NoFleet(cwd),
                e => e,
            })?;
            (fleet::from_project(&project, rendered_at(settings)?), false)
        }
        FleetFrom::Store => {
            let opened = StoreOnly::open(settings)?;
            let matrix = fleet::from_store(&opened.store, opened.project.as_ref())?;
            (matrix, false)
        }
        FleetFrom::Live => live(settings, &args.limits)?,
    })
}

/// The source of `fleet` without `--from`: the project, else the store `--snapshots` (or
/// `CLINV_SNAPSHOTS`) names — a user with only a store asks about the fleet it recorded —
/// said on stderr, since recorded is not what a project would render; with neither, an
/// error naming both ways.
fn source(settings: &Settings) -> crate::error::Result<FleetFrom> {
    use crate::error::Error;
    match project(settings) {
        Ok(_) => Ok(FleetFrom::Project),
        Err(Error::NoProject(cwd)) => match &settings.snapshots {
            Some(store) => {
                settings.printer.info(&format!(
                    "no lok8s project found in {} or its parents: the fleet as the store {} recorded it (--from store)",
                    cwd.display(),
                    store.display()
                ));
                Ok(FleetFrom::Store)
            }
            None => Err(Error::NoFleet(cwd)),
        },
        Err(e) => Err(e),
    }
}

/// `--from live`: every domain's cluster read as `status -A` reads them ([`super::each_domain`]),
/// and whether any cluster domain was not read.
fn live(settings: &Settings, limits: &crate::app::cli::ClusterArgs) -> Result<(Matrix, bool)> {
    use fleet::LiveRead;
    let at = rendered_at(settings)?;
    let project = project(settings)?;
    let reads = super::each_domain(
        "fleet --from live",
        limits,
        &project,
        &project.domains(),
        |domain, limits| {
            let scope = super::scope(settings, &project, domain, limits);
            let read = fleet::read_live(&scope)
                .unwrap_or_else(|e| LiveRead::Failed(crate::error::headline(&e)));
            (domain.clone(), read)
        },
        |domain, why| {
            let (what, detail) = why.words();
            let read = match why {
                super::Skip::Deploy(cluster_ref) => LiveRead::Deploy(cluster_ref),
                super::Skip::NotTried => LiveRead::NotRead(format!("{what}: {detail}")),
            };
            (domain.clone(), read)
        },
    )?;
    let not_read = reads.iter().any(|(_, r)| matches!(r, LiveRead::NotRead(_)));
    Ok((fleet::from_live(&project, at, reads), not_read))
}

/// What the matrix leaves out, said: domains with no column, versions a bound could not
/// order, and a query that matched nothing.
fn notes(settings: &Settings, m: &Matrix, query: &Query<'_>) {
    left(settings, &m.left);
    if !m.unordered.is_empty() {
        settings.printer.warn(&format!(
            "{} version(s) are not SemVer and cannot be compared with the bound, so they are left out: {}",
            m.unordered.len(),
            m.unordered.join(", ")
        ));
    }
    if m.rows.is_empty() && m.unknown_addon.is_none() {
        let what = query.addon.unwrap_or("any addon");
        let what = match (query.behind.is_some(), query.differs) {
            (true, _) => format!("{what} behind the index"),
            (_, true) => format!("{what} at a version other than the majority's"),
            _ => what.to_string(),
        };
        let bound = match (query.below, query.above) {
            (Some(b), Some(a)) => format!(" between {a} and {b}"),
            (Some(b), None) => format!(" below {b}"),
            (None, Some(a)) => format!(" above {a}"),
            (None, None) => String::new(),
        };
        settings
            .printer
            .info(&format!("no domain runs {what}{bound}"));
    }
}
