//! `clinv status`: the `lo status` inventory block, read from the live cluster, and the
//! domain's delivery (source, ages, last apply, queue).

use super::{fail_soft, print_notices, scope};
use crate::app::Result;
use crate::app::cli::{ReadArgs, StatusFormat, StatusOutput};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::Outcome;
use crate::ops::status::{self, Shown};
use crate::ops::{Scope, drift};
use crate::project::Project;
use crate::view;

pub fn run(settings: &Settings, read: &ReadArgs<StatusOutput>) -> Result<Outcome> {
    if read.out.text.output == Some(StatusFormat::Prometheus) {
        return metrics(settings, read);
    }
    super::read_clusters(settings, read, one, all)
}

/// Whether `-o` asked for JSON (prometheus never gets here: [`run`] answers it).
fn json(read: &ReadArgs<StatusOutput>) -> bool {
    read.out.text.output == Some(StatusFormat::Json)
}

fn one(settings: &Settings, read: &ReadArgs<StatusOutput>, scope: &Scope) -> Result<Outcome> {
    let domain = scope.domain;
    let report = status::status(scope, read.out.status.offline)?;
    print_notices(settings, &report.notices);
    // Nothing applied yet (--offline): said on stdout, then status's nothing-to-show exit.
    let nothing = match &report.shown {
        Shown::NothingApplied { message, .. } => Some(message.clone()),
        _ => None,
    };
    let (source, value, not_read) = match view::status::answer(report.shown) {
        Ok(answer) => answer,
        Err((reason, message)) => return fail_soft(settings, reason, message),
    };
    let text = if json(read) {
        view::status::status_json(domain, &source, report.delivery.as_ref(), value)?
    } else {
        let now = jiff::Timestamp::now().as_second();
        let mut text = view::status::block(&source, &value);
        text.push_str(&view::status::status_section(
            domain,
            &source,
            report.delivery.as_ref(),
            &value,
            now,
        ));
        text
    };
    settings.printer.data(&text)?;
    if let Some(message) = nothing {
        return fail_soft(settings, crate::delivery::Reason::Rejected, message);
    }
    // Not the live cluster's answer: 16, or with --strict why the cluster was not read.
    Ok(match not_read {
        Some(crate::delivery::Reason::DomainMismatch) => Outcome::OtherDomain,
        Some(reason) if settings.strict => Outcome::Unapplied(vec![reason]),
        Some(_) => Outcome::NotLive,
        None => Outcome::Done,
    })
}

/// One domain's row of `status -A` (an error is a row too: the others go on): what was
/// read, and its drift from the project's render.
fn row(
    scope: &crate::ops::Scope<'_>,
    offline: bool,
    rendered_at: jiff::Timestamp,
    now: i64,
) -> view::status::FleetRow {
    let domain = scope.domain;
    match status::status(scope, offline).and_then(|r| answered_row(scope, r, rendered_at, now)) {
        Ok(row) => row,
        Err(e) => view::status::FleetRow::failed(domain, &crate::error::headline(&e)),
    }
}

fn answered_row(
    scope: &crate::ops::Scope<'_>,
    report: status::Report,
    rendered_at: jiff::Timestamp,
    now: i64,
) -> crate::error::Result<view::status::FleetRow> {
    let domain = scope.domain;
    // Nothing applied yet (--offline): no inventory to compare, a row that says so.
    if let Shown::NothingApplied { said, .. } = &report.shown {
        return Ok(view::status::FleetRow::skipped(
            domain, "nothing", said, false,
        ));
    }
    let (source, value, why) = match view::status::answer(report.shown) {
        Ok(answer) => answer,
        Err((_, message)) => {
            return Ok(view::status::FleetRow::skipped(
                domain, "nothing", &message, false,
            ));
        }
    };
    // Never "in sync" from a snapshot shown because the cluster was not read.
    let drift = match (source.read_the_cluster(), why) {
        (_, Some(crate::delivery::Reason::DomainMismatch)) => view::status::Drifted::OtherDomain,
        (true, _) => view::status::Drifted::of(drift::against(scope, rendered_at, &value)),
        (false, _) => view::status::Drifted::NotRead,
    };
    let delivery = report.delivery.as_ref();
    let json = view::status::status_doc(domain, &source, delivery, value)?;
    Ok(view::status::FleetRow::of(
        domain, &source, delivery, &drift, json, now,
    ))
}

/// `status -A`: every domain of the project, a row each ([`super::each_domain`]): where
/// the answer came from, the queue and the last apply.
fn all(
    settings: &Settings,
    read: &ReadArgs<StatusOutput>,
    project: &Project,
    domains: &[Domain],
) -> Result<Outcome> {
    let now = jiff::Timestamp::now().as_second();
    let at = super::rendered_at(settings)?;
    let offline = read.out.status.offline;
    let results = super::each_domain(
        "status",
        &read.out.status.limits,
        project,
        domains,
        |domain, limits| row(&scope(settings, project, domain, limits), offline, at, now),
        |domain, why| {
            let (what, detail) = why.words();
            let not_tried = matches!(why, super::Skip::NotTried);
            view::status::FleetRow::skipped(domain, what, &detail, not_tried)
        },
    )?;
    let text = if json(read) {
        crate::inventory::render::to_json(&results.iter().map(|r| &r.json).collect::<Vec<_>>())?
    } else {
        view::status::fleet_table(
            &results,
            view::TableStyle {
                wide: read.out.text.output == Some(StatusFormat::Wide),
                no_headers: false,
                width: settings.printer.width(),
            },
        )
    };
    settings.printer.data(&text)?;
    let outcomes = results.iter().map(view::status::FleetRow::outcome);
    Ok(outcomes.fold(Outcome::Done, Outcome::worse))
}

/// `status -o prometheus`: what each selected domain owes and last delivered, from its
/// store alone (never a cluster, as `--offline`), as Prometheus text for node_exporter's
/// textfile collector.
///
/// A store that cannot be read is a warning naming the domain and `clinv_store_readable`
/// 0 — never a domain left out — and the exposition is still written (exit 0; with
/// `--strict` the warning is an error and the exit 1). Deploy domains have no inventory
/// of their own, so no series: an `[info]` names each.
fn metrics(settings: &Settings, read: &ReadArgs<StatusOutput>) -> Result<Outcome> {
    let project = super::project(settings)?;
    let selected = &read.out.status.domain;
    let domains = match super::fleet(&project, selected)? {
        Some(domains) => domains,
        None => vec![super::domain(settings, &project, selected.one())?],
    };
    let store = super::store(settings, &project);
    // Reading a store is local work (no network): one worker per core, in name order.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let read = crate::util::pool::ordered(&domains, cores, |domain| {
        match project.domain_kind(domain) {
            crate::project::DomainKind::Deploy { cluster_ref, .. } => Err(cluster_ref),
            _ => Ok(status::Delivery::of_store(&store.domain(domain))),
        }
    });
    let mut facts = view::metrics::Facts::default();
    let mut unreadable = 0;
    for (domain, read) in domains.iter().zip(read) {
        let name = domain.to_string();
        match read {
            Err(cluster_ref) => {
                super::deploy_domain_note(settings, &name, cluster_ref.as_deref());
            }
            Ok(Ok((delivery, _))) => {
                facts.rows.extend(view::metrics::rows_of(&name, &delivery));
                facts.readable.insert(name, true);
            }
            Ok(Err(e)) => {
                let message = format!("status: {name}: {}", crate::error::chain(&e));
                match settings.strict {
                    true => settings.printer.error(&message),
                    false => settings.printer.warn(&message),
                }
                unreadable += 1;
                facts.readable.insert(name, false);
            }
        }
    }
    settings.printer.data(&view::metrics::encode(&facts)?)?;
    if settings.strict && unreadable > 0 {
        return Err(crate::error::Error::Strict(unreadable).into());
    }
    Ok(Outcome::Done)
}
