//! `clinv updates`: which addons have a newer version in the addon index.

use super::{
    Left, deploy_domain_note, domain, fetch_options, print_notices, project, report_warnings, scope,
};
use crate::app::Result;
use crate::app::cli::UpdatesArgs;
use crate::app::settings::Settings;
use crate::catalog::fetch::{self, IndexRef};
use crate::catalog::updates;
use crate::error::exit;
use crate::ops::updates::{self as ops, Compared, Domain};
use crate::view;

pub fn run(settings: &Settings, args: &UpdatesArgs) -> Result<i32> {
    if args.from.is_some() && args.domain.many().is_many() {
        return Err(crate::app::Failure::Usage(
            "clinv updates: --from FILE is one inventory; it takes no -A, glob or second --domain"
                .into(),
        ));
    }
    let index_ref = IndexRef::parse(&args.index)?;
    let loaded = fetch::load(&index_ref, &fetch_options(settings, &args.source))?;
    for w in &loaded.warnings {
        settings.printer.warn(w);
    }
    settings.printer.debug(&format!(
        "index {} ({:?}, {} addons)",
        index_ref.display(),
        loaded.origin,
        loaded.index.addons.len()
    ));
    if args.from.is_none() {
        let project = project(settings)?;
        if let Some(domains) = super::fleet(&project, &args.domain)? {
            duplicates(settings, &index_ref, &loaded.index);
            return several(settings, args, &project, &domains, &loaded.index);
        }
    }
    let Some((compared, not_read)) = compared(settings, args)? else {
        return Ok(exit::OK);
    };
    duplicates(settings, &index_ref, &loaded.index);
    let list = updates::compute_with(&compared.addons, &loaded.index, args.pre);
    settings.printer.detail(&format!(
        "compared the {} with {}{}",
        compared.source.describe(),
        index_ref.display(),
        match loaded.index.generated_at.as_str() {
            "" => String::new(),
            at => format!(" (generated {at})"),
        }
    ));
    let not_read_text = not_read.as_ref().map(|(r, d)| format!("{r}: {d}"));
    let answer = Answer {
        compared: &compared,
        not_read: not_read_text.as_deref(),
        generated_at: &loaded.index.generated_at,
        list: &list,
    };
    settings.printer.data(&format(args, &answer)?)?;
    // Not the live cluster's answer: 16, or with --strict why the cluster was not read.
    Ok(match not_read {
        Some((reason, _)) if settings.strict => crate::error::exit::for_reason(reason),
        Some(_) => exit::NOT_LIVE,
        None => exit::OK,
    })
}

fn duplicates(
    settings: &Settings,
    index_ref: &IndexRef,
    index: &crate::catalog::index::AddonIndex,
) {
    for name in updates::duplicates(index) {
        settings.printer.warn(&format!(
            "addon index {}: '{name}' appears more than once; the first entry is compared",
            index_ref.display()
        ));
    }
}

/// The addons compared and why the cluster was not read (when it was not); `None` for a
/// deploy domain (said on stderr, exit 0).
fn compared(settings: &Settings, args: &UpdatesArgs) -> Result<Option<(Compared, NotRead)>> {
    let Some(path) = &args.from else {
        let project = project(settings)?;
        let domain = domain(settings, &project, args.domain.one())?;
        let chosen = ops::choose(
            &Domain {
                scope: scope(settings, &project, &domain, &args.limits),
                source_date_epoch: settings.env.source_date_epoch.as_deref(),
            },
            args.source.offline,
        )?;
        print_notices(settings, &chosen.notices);
        report_warnings(settings, &chosen.warnings)?;
        return Ok(match (chosen.compared, chosen.deploy) {
            (Some(c), _) => Some((c, chosen.not_read)),
            (None, cluster_ref) => {
                deploy_domain_note(settings, &domain, cluster_ref.flatten().as_deref());
                None
            }
        });
    };
    Ok(Some((ops::from_file(path)?, None)))
}

type NotRead = Option<(crate::delivery::Reason, String)>;

/// What `updates` prints, in any format.
struct Answer<'a> {
    compared: &'a Compared,
    not_read: Option<&'a str>,
    generated_at: &'a str,
    list: &'a [updates::Update],
}

/// The answer in the asked format; a table says first when the cluster was not read.
fn format(args: &UpdatesArgs, a: &Answer<'_>) -> Result<String> {
    let word = a.compared.source.word();
    let json = || view::updates::updates_json(word, a.not_read, a.generated_at, a.list);
    let names = || view::names(a.list.iter().map(|u| u.name.as_str()));
    // Versions and a one-word NOTE: no free text to fit.
    Ok(args.table.answer(None, json, names, |style| {
        let table = view::updates::updates_table(a.list, word, style);
        match (a.not_read, args.table.no_headers) {
            (Some(why), false) => format!(
                "the live cluster was not read ({}): the versions are the {}\n{table}",
                crate::util::redact::escape_line(why),
                a.compared.source.describe()
            ),
            _ => table,
        }
    })?)
}

/// One domain of `updates -A`: what was read, or why it was not.
enum Got {
    Read(crate::error::Result<ops::Chosen>),
    Skipped(super::Skip),
}

/// What several domains compared, and the domains left out.
#[derive(Default)]
struct Fleet<'a> {
    compared: Vec<(
        &'a crate::domain::Domain,
        Compared,
        Vec<updates::Update>,
        NotRead,
    )>,
    left: Vec<Left>,
    failed: bool,
    not_tried: bool,
}

/// Several domains (`-A`, repeated `--domain`, a glob): each compared as for one, read
/// through its own kubeconfig within the one `--timeout` ([`super::each_domain`]); one
/// table led by DOMAIN. Exit 1 when a domain failed, else 16 when a cluster was not read
/// (with `--strict` why, 3–10), else 0.
fn several(
    settings: &Settings,
    args: &UpdatesArgs,
    project: &crate::project::Project,
    domains: &[crate::domain::Domain],
    index: &crate::catalog::index::AddonIndex,
) -> Result<i32> {
    let results = super::each_domain(
        "updates",
        &args.limits,
        project,
        domains,
        |domain, limits| {
            let d = Domain {
                scope: scope(settings, project, domain, limits),
                source_date_epoch: settings.env.source_date_epoch.as_deref(),
            };
            Got::Read(ops::choose(&d, args.source.offline))
        },
        |_, skip| Got::Skipped(skip),
    )?;
    let mut fleet = Fleet::default();
    for (domain, got) in domains.iter().zip(results) {
        gather(settings, args, index, &mut fleet, domain, got)?;
    }
    settings
        .printer
        .data(&fleet_format(args, &fleet, &index.generated_at)?)?;
    let not_read = fleet.compared.iter().find_map(|(_, _, _, n)| n.as_ref());
    Ok(match (fleet.failed, not_read, fleet.not_tried) {
        (true, _, _) => exit::FAILURE,
        (false, Some((reason, _)), _) if settings.strict => exit::for_reason(*reason),
        (false, Some(_), _) | (false, None, true) => exit::NOT_LIVE,
        (false, None, false) => exit::OK,
    })
}

/// One domain's result into `fleet`, its notices and warnings printed.
fn gather<'a>(
    settings: &Settings,
    args: &UpdatesArgs,
    index: &crate::catalog::index::AddonIndex,
    fleet: &mut Fleet<'a>,
    domain: &'a crate::domain::Domain,
    got: Got,
) -> Result<()> {
    match got {
        Got::Read(Ok(chosen)) => {
            print_notices(settings, &chosen.notices);
            report_warnings(settings, &chosen.warnings)?;
            let Some(compared) = chosen.compared else {
                let cluster = chosen.deploy.flatten();
                fleet
                    .left
                    .push(Left::deploy(settings, domain, cluster.as_deref()));
                return Ok(());
            };
            if let Some((_, why)) = &chosen.not_read {
                settings.printer.warn(&format!(
                    "{domain}: the live cluster was not read ({}): the versions are the {}",
                    crate::util::redact::escape_line(why),
                    compared.source.describe()
                ));
            }
            let list = updates::compute_with(&compared.addons, index, args.pre);
            fleet
                .compared
                .push((domain, compared, list, chosen.not_read));
        }
        Got::Read(Err(e)) => {
            fleet.left.push(Left::failed(settings, domain, &e));
            fleet.failed = true;
        }
        Got::Skipped(super::Skip::Deploy(cluster)) => {
            fleet
                .left
                .push(Left::deploy(settings, domain, cluster.as_deref()));
        }
        Got::Skipped(skip) => {
            let (word, detail) = skip.words();
            settings
                .printer
                .warn(&format!("{domain}: {word}: {detail}"));
            fleet.left.push(Left {
                domain: domain.to_string(),
                why: format!("{word}: {detail}"),
            });
            fleet.not_tried = true;
        }
    }
    Ok(())
}

/// `updates -A` in the asked format.
fn fleet_format(args: &UpdatesArgs, fleet: &Fleet<'_>, generated_at: &str) -> Result<String> {
    let rows: Vec<view::updates::FleetUpdate<'_>> = fleet
        .compared
        .iter()
        .flat_map(|(domain, compared, list, _)| {
            list.iter().map(|update| view::updates::FleetUpdate {
                domain: domain.as_str(),
                compared: compared.source.word(),
                update,
            })
        })
        .collect();
    let domains: Vec<view::updates::FleetDomain<'_>> = fleet
        .compared
        .iter()
        .map(
            |(domain, compared, _, not_read)| view::updates::FleetDomain {
                domain: domain.as_str(),
                inventory: compared.source.word(),
                live: not_read.is_none() && compared.source.word() == "live",
                not_read: not_read.as_ref().map(|(_, why)| why.as_str()),
            },
        )
        .collect();
    let json = || view::updates::fleet_updates_json(&domains, generated_at, &rows, &fleet.left);
    let names = || {
        let name = |r: &view::updates::FleetUpdate<'_>| {
            let name = crate::util::redact::escape_line(&r.update.name);
            format!("{}/{name}\n", r.domain)
        };
        rows.iter().map(name).collect()
    };
    let table = |style| view::updates::fleet_updates_table(&rows, style);
    // Versions and a one-word NOTE: no free text to fit.
    Ok(args.table.answer(None, json, names, table)?)
}
