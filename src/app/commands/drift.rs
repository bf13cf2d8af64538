//! `clinv drift`: does the cluster hold what the project renders? Exit 0 in sync, 1
//! drift (the changes listed like `clinv diff`), 2 unknown or an error, 16 the live
//! cluster could not be read (said in the result; `--offline` compares with the snapshot
//! applied last instead).

use super::{print_notices, rendered_at, scope};
use crate::app::Result;
use crate::app::cli::{DriftFormat as TextFormat, DriftOutput, ReadArgs};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::Outcome;
use crate::ops::Scope;
use crate::ops::drift::{self, Source, Verdict};
use crate::project::Project;
use crate::util::redact::escape_line;

pub fn run(settings: &Settings, read: &ReadArgs<DriftOutput>) -> Result<Outcome> {
    super::read_clusters(settings, read, one, all)
}

fn one(settings: &Settings, read: &ReadArgs<DriftOutput>, scope: &Scope) -> Result<Outcome> {
    let (out, domain) = (&read.out, scope.domain);
    let report = drift::drift(scope, rendered_at(settings)?, out.status.offline)?;
    print_notices(settings, &report.notices);
    let outcome = match (&report.verdict, report.source.read_the_cluster()) {
        _ if other_domain(&report.source) => Outcome::OtherDomain,
        (_, false) => Outcome::NotLive,
        (Verdict::InSync, _) => Outcome::Done,
        (Verdict::Drift(_), _) => Outcome::Different,
        (Verdict::Unknown, _) => Outcome::Unknown,
    };
    let text = match out.text.output.unwrap_or_default() {
        TextFormat::Json => json(domain, &report)?,
        TextFormat::Text | TextFormat::Wide => text(settings, domain, &report),
    };
    settings.printer.data(&text)?;
    Ok(outcome)
}

/// `{domain}: {verdict} (compared with {source})`, then the changes; when the cluster was
/// not read, that is the answer. The snapshot's id and time, the server and the hash
/// come from the store or the live object: one line each, control characters escaped.
fn text(settings: &Settings, domain: &str, report: &drift::Report) -> String {
    if let Source::NotRead { detail, .. } = &report.source
        && other_domain(&report.source)
    {
        return format!(
            "{domain}: another domain's inventory — {}; the cluster's is not {domain}'s answer\n",
            escape_line(detail)
        );
    }
    if let Source::NotRead { reason, detail } = &report.source {
        return format!(
            "{domain}: unknown — the live cluster was not read ({reason}: {}); --offline compares with the snapshot applied last\n",
            escape_line(detail)
        );
    }
    let source = escape_line(&report.source.to_string());
    let verdict = match &report.verdict {
        Verdict::InSync => "in sync",
        Verdict::Drift(_) => "drift",
        Verdict::Unknown => "unknown",
    };
    let mut out = format!("{domain}: {verdict} (compared with {source})\n");
    if let Verdict::Drift(changes) = &report.verdict {
        // From what the cluster (or the snapshot) holds to what the project renders.
        out.push('\n');
        out.push_str(&crate::view::report::text::diff(
            changes,
            settings.printer.color_stdout(),
        ));
    }
    out
}

/// `drift -o json` (`schemaVersion` 1): `verdict` (`in-sync`, `drift`, `unknown`,
/// `other-domain`),
/// `live` (the cluster was read), `source` (`live`, `no-inventory`, `snapshot`,
/// `no-applied`, `not-read`) with `server` or `snapshot`, `notRead` (`{reason, detail}`
/// or null) and `changes` (the diff report of `clinv diff -o json`, or null).
fn json(domain: &str, report: &drift::Report) -> crate::Result<String> {
    crate::inventory::render::to_json(&doc(domain, report))
}

/// The document of [`json`]: one element of `drift -A -o json` too.
fn doc(domain: &str, report: &drift::Report) -> serde_json::Value {
    let (source, server, snapshot, not_read) = match &report.source {
        Source::Live { server } => ("live", Some(server), None, None),
        Source::NoInventory { server } => ("no-inventory", Some(server), None, None),
        Source::Snapshot { id, state, at } => (
            "snapshot",
            None,
            Some(serde_json::json!({"id": id, "state": state.as_str(), "appliedAt": at})),
            None,
        ),
        Source::NoApplied => ("no-applied", None, None, None),
        Source::NotRead { reason, detail } => (
            "not-read",
            None,
            None,
            Some(serde_json::json!({"reason": reason.as_str(), "detail": detail})),
        ),
    };
    let (verdict, changes) = match &report.verdict {
        _ if other_domain(&report.source) => ("other-domain", None),
        Verdict::InSync => ("in-sync", None),
        Verdict::Drift(changes) => ("drift", Some(changes)),
        Verdict::Unknown => ("unknown", None),
    };
    serde_json::json!({
        "schemaVersion": 1,
        "domain": domain,
        "verdict": verdict,
        "live": report.source.read_the_cluster() && server.is_some(),
        "source": source,
        "server": server,
        "snapshot": snapshot,
        "notRead": not_read,
        "changes": changes,
    })
}

/// One domain's row of `drift -A`.
struct Row {
    domain: String,
    verdict: &'static str,
    detail: String,
    json: serde_json::Value,
}

/// `drift -A`: every domain of the project, a row each ([`super::each_domain`]).
fn all(
    settings: &Settings,
    args: &ReadArgs<DriftOutput>,
    project: &Project,
    domains: &[Domain],
) -> Result<Outcome> {
    let at = rendered_at(settings)?;
    let results = super::each_domain(
        "drift",
        &args.out.status.limits,
        project,
        domains,
        |domain, limits| {
            let scope = scope(settings, project, domain, limits);
            one_row(domain, drift::drift(&scope, at, args.out.status.offline))
        },
        |domain, why| {
            let outcome = match why {
                super::Skip::NotTried => Outcome::NotLive,
                super::Skip::Deploy(_) => Outcome::Done,
            };
            let (verdict, detail) = why.words();
            (skipped(domain, verdict, detail), outcome)
        },
    )?;
    let (mut rows, mut outcome) = (Vec::new(), Outcome::Done);
    for (row, found) in results {
        rows.push(row);
        outcome = outcome.worse(found);
    }
    let text = match args.out.text.output.unwrap_or_default() {
        TextFormat::Json => {
            crate::inventory::render::to_json(&rows.iter().map(|r| &r.json).collect::<Vec<_>>())?
        }
        format @ (TextFormat::Text | TextFormat::Wide) => crate::view::results::fitted(
            ["DOMAIN", "VERDICT", "DETAIL"],
            rows.iter()
                .map(|r| [r.domain.as_str(), r.verdict, r.detail.as_str()]),
            crate::view::TableStyle {
                wide: format == TextFormat::Wide,
                no_headers: false,
                width: settings.printer.width(),
            },
        ),
    };
    settings.printer.data(&text)?;
    Ok(outcome)
}

/// A domain that was not compared: why.
fn skipped(domain: &Domain, verdict: &'static str, detail: String) -> Row {
    let json = serde_json::json!({"schemaVersion": 1, "domain": domain.as_str(), "verdict": "unknown", "skipped": format!("{verdict}: {detail}")});
    Row {
        domain: domain.to_string(),
        verdict,
        detail,
        json,
    }
}

/// A compared domain's row and outcome (an error is a row too: the others go on).
fn one_row(
    domain: &crate::domain::Domain,
    report: crate::error::Result<drift::Report>,
) -> (Row, Outcome) {
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            let why = crate::error::headline(&e);
            return (skipped(domain, "error", why), Outcome::Unknown);
        }
    };
    let json = doc(domain.as_str(), &report);
    let (verdict, detail, outcome) = match (&report.source, &report.verdict) {
        (Source::NotRead { detail, .. }, _) if other_domain(&report.source) => {
            ("other domain", escape_line(detail), Outcome::OtherDomain)
        }
        (Source::NotRead { reason, detail }, _) => (
            "not read",
            format!("{reason}: {}", escape_line(detail)),
            Outcome::NotLive,
        ),
        (source, Verdict::InSync) => ("in sync", escape_line(&source.to_string()), Outcome::Done),
        (source, Verdict::Drift(changes)) => (
            "drift",
            format!(
                "{} change(s) from {}",
                changes.changes.len(),
                escape_line(&source.to_string())
            ),
            Outcome::Different,
        ),
        (source, Verdict::Unknown) => (
            "unknown",
            escape_line(&source.to_string()),
            Outcome::Unknown,
        ),
    };
    (
        Row {
            domain: domain.to_string(),
            verdict,
            detail,
            json,
        },
        outcome,
    )
}

/// The cluster answered with another domain's ClusterInventory: its own verdict, never a
/// drift of this domain's.
fn other_domain(source: &Source) -> bool {
    matches!(
        source,
        Source::NotRead {
            reason: crate::delivery::Reason::DomainMismatch,
            ..
        }
    )
}
