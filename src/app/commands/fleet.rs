//! `clinv fleet`: the addon × domain matrix of the project or the store.

use super::{StoreOnly, project, rendered_at};
use crate::app::Result;
use crate::app::cli::{FleetArgs, FleetBy, FleetFormat, FleetFrom};
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
    let mut matrix = matrix.filter(&query)?;
    if args.changed_only {
        matrix = matrix.changed_only();
    }
    if let Some(unknown) = &matrix.unknown_addon {
        if settings.strict {
            return Err(crate::error::Error::from(unknown.clone()).into());
        }
        settings.printer.warn(&unknown.to_string());
    }
    let by_domain = args.by == FleetBy::Domain;
    let text = match args.output.unwrap_or_default() {
        FleetFormat::Json => view::fleet::json(&matrix)?,
        FleetFormat::Yaml => crate::view::format::yaml(&view::fleet::json(&matrix)?)?,
        FleetFormat::Markdown => view::fleet::markdown(&matrix, by_domain),
        format @ (FleetFormat::Table | FleetFormat::Wide) => {
            let style = view::TableStyle {
                wide: format == FleetFormat::Wide,
                no_headers: args.no_headers,
                width: settings.printer.width(),
            };
            view::fleet::table(&matrix, by_domain, style)
        }
        FleetFormat::Html => view::fleet_html::page(
            &matrix,
            &matrix.marks(index.as_ref()),
            args.behind_index.as_deref(),
            by_domain,
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
            FleetFormat::Yaml => crate::view::format::yaml(&view::json(&c)?)?,
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
    if args.at.is_some() || args.changed_since.is_some() {
        return Ok((selected(past(settings, args)?, args)?, false));
    }
    if let Some(repo) = &args.repo {
        let branch = args.branch.as_deref().unwrap_or("HEAD");
        return Ok((selected(fleet::from_repo(repo, branch)?, args)?, false));
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
            let matrix = fleet::from_project(&project, rendered_at(settings)?);
            (selected(matrix, args)?, false)
        }
        FleetFrom::Store => {
            let opened = StoreOnly::open(settings)?;
            let matrix = fleet::from_store(&opened.store, opened.project.as_ref())?;
            (selected(matrix, args)?, false)
        }
        FleetFrom::Live => live(settings, args)?,
    })
}

/// The columns of the domains `--domain`/`-A` select among those the matrix knows.
fn selected(matrix: Matrix, args: &FleetArgs) -> crate::error::Result<Matrix> {
    // --against compares --domain with its own side: both need the whole matrix.
    if args.domain.is_empty() || !args.against.is_empty() {
        return Ok(matrix);
    }
    let known = matrix.known();
    let keep = crate::fleet::select_in(crate::fleet::Among::Listed(&known), args.many())?;
    Ok(matrix.only(&keep))
}

/// `--at`, `--changed-since`: the store's or the repository's history
/// ([`fleet::at::read`]); the project and the live clusters have none.
fn past(settings: &Settings, args: &FleetArgs) -> Result<Matrix> {
    let (at, since) = (args.at.as_deref(), args.changed_since.as_deref());
    let now = jiff::Timestamp::now();
    if let Some(repo) = &args.repo {
        let rev = args.branch.as_deref().unwrap_or("HEAD");
        return Ok(fleet::at::read(
            fleet::at::Past::Repo(repo, rev),
            at,
            since,
            now,
        )?);
    }
    if let Some(from @ (FleetFrom::Project | FleetFrom::Live)) = args.from {
        let flag = if at.is_some() {
            "--at"
        } else {
            "--changed-since"
        };
        let (word, what) = match from {
            FleetFrom::Project => ("project", "a project renders what it is now"),
            _ => ("live", "a cluster is read as it is now"),
        };
        return Err(crate::app::Failure::Usage(format!(
            "clinv fleet {flag}: --from {word} has no history ({what}); read the store (--from store, the default with {flag}) or a GitOps repository (--repo)"
        )));
    }
    let opened = StoreOnly::open(settings)?;
    let past = fleet::at::Past::Store(&opened.store, opened.project.as_ref());
    Ok(fleet::at::read(past, at, since, now)?)
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
fn live(settings: &Settings, args: &FleetArgs) -> Result<(Matrix, bool)> {
    use fleet::LiveRead;
    let at = rendered_at(settings)?;
    let project = project(settings)?;
    // Only the selected clusters are read: a site's question does not wait on the fleet.
    let among = crate::fleet::Among::Project(&project);
    let every = crate::project::select::Many {
        patterns: &[],
        all: true,
    };
    // --against compares two sides: both are read.
    let many = match args.against.is_empty() {
        true => args.many(),
        false => every,
    };
    let domains = crate::fleet::select_in(among, many)?;
    let reads = super::each_domain(
        "fleet --from live",
        &args.limits,
        &project,
        &domains,
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
    for line in fleet::at::notes(m) {
        settings.printer.info(&line);
    }
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
