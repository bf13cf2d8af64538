//! `clinv drift`: the verdict of one domain as text and JSON, and the rows of `drift -A`.

use crate::domain::Domain;
use crate::error::Outcome;
use crate::fleet::Skip;
use crate::ops::context::{Context, Picked, Selection};
use crate::ops::drift::{self, Source, Verdict};
use crate::ops::{Scope, live::Live};
use crate::project::Project;
use crate::util::redact::escape_line;
use crate::view::format::DriftFormat;

/// `{domain}: {verdict} (compared with {source})`, then the changes.
///
/// When the cluster was not read, that is the answer. The snapshot's id and time, the
/// server and the hash come from the store or the live object: one line each, control
/// characters escaped.
pub fn text(domain: &str, report: &drift::Report, color: bool) -> String {
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
        out.push_str(&crate::view::report::text::diff(changes, color));
    }
    out
}

/// `drift -o json` (`schemaVersion` 1).
///
/// `verdict` (`in-sync`, `drift`, `unknown`, `other-domain`), `live` (the cluster was read), `source` (`live`, `no-inventory`, `snapshot`,
/// `no-applied`, `not-read`) with `server` or `snapshot`, `notRead` (`{reason, detail}`
/// or null) and `changes` (the diff report of `clinv diff -o json`, or null).
///
/// # Errors
/// serde's, which this document does not produce.
pub fn json(domain: &str, report: &drift::Report) -> crate::Result<String> {
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
pub struct Row {
    pub domain: String,
    pub verdict: &'static str,
    pub detail: String,
    pub json: serde_json::Value,
}

/// `drift -A`: DOMAIN, VERDICT, DETAIL, fitted to `style`.
pub fn table(rows: &[Row], style: crate::view::TableStyle) -> String {
    let cells = rows
        .iter()
        .map(|r| [r.domain.as_str(), r.verdict, r.detail.as_str()]);
    crate::view::results::fitted(["DOMAIN", "VERDICT", "DETAIL"], cells, style)
}

/// `drift -A -o json`: each domain's document of [`json`], in a list.
///
/// # Errors
/// serde's, which these documents do not produce.
pub fn rows_json(rows: &[Row]) -> crate::Result<String> {
    crate::inventory::render::to_json(&rows.iter().map(|r| &r.json).collect::<Vec<_>>())
}

impl Row {
    /// A domain that was not compared: why.
    pub fn skipped(domain: &Domain, verdict: &'static str, detail: String) -> Row {
        let json = serde_json::json!({"schemaVersion": 1, "domain": domain.as_str(), "verdict": "unknown", "skipped": format!("{verdict}: {detail}")});
        Row {
            domain: domain.to_string(),
            verdict,
            detail,
            json,
        }
    }
}

/// A compared domain's row and outcome (an error is a row too: the others go on).
pub fn row(
    domain: &crate::domain::Domain,
    report: crate::error::Result<drift::Report>,
) -> (Row, Outcome) {
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            let why = crate::error::headline(&e);
            return (Row::skipped(domain, "error", why), Outcome::Unknown);
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
pub fn other_domain(source: &Source) -> bool {
    matches!(
        source,
        Source::NotRead {
            reason: crate::delivery::Reason::DomainMismatch,
            ..
        }
    )
}

/// What `drift` asked for: `-o` and `--offline`.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    pub format: crate::view::format::DriftFormat,
    pub offline: bool,
}

/// `clinv drift` of the domains `selection` names: one domain's changes, or a row each.
///
/// # Errors
/// What `refuse` returns for several domains (flags that name one cluster), a selection
/// or read error, a write error.
pub fn say<E: From<crate::Error>>(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    selection: Selection<'_>,
    ask: Ask,
    refuse: impl FnOnce() -> Result<(), E>,
) -> Result<Outcome, E> {
    match cx.pick(project, selection)? {
        Picked::One(domain) => Ok(say_one(cx, &live.scope(project, &domain), ask)?),
        Picked::Several(domains) => say_several(cx, live, project, &domains, ask, refuse),
    }
}

fn say_one(cx: Context<'_>, scope: &Scope<'_>, ask: Ask) -> crate::Result<Outcome> {
    let domain = scope.domain;
    let report = drift::drift(scope, cx.rendered_at()?, ask.offline)?;
    cx.console.notices(&report.notices);
    let outcome = report.outcome();
    let text = match ask.format {
        DriftFormat::Json => json(domain, &report)?,
        DriftFormat::Text | DriftFormat::Wide => text(domain, &report, cx.console.color_stdout()),
    };
    cx.console.data(&text)?;
    Ok(outcome)
}

/// `drift -A`: every domain selected, a row each ([`Live::each`]).
fn say_several<E: From<crate::Error>>(
    cx: Context<'_>,
    live: &Live,
    project: &Project,
    domains: &[Domain],
    ask: Ask,
    refuse: impl FnOnce() -> Result<(), E>,
) -> Result<Outcome, E> {
    let at = cx.rendered_at()?;
    let results = live.each(
        project,
        domains,
        refuse,
        |domain, live| {
            let scope = live.scope(project, domain);
            row(domain, drift::drift(&scope, at, ask.offline))
        },
        |domain, why| {
            let outcome = match why {
                Skip::NotTried => Outcome::NotLive,
                Skip::Deploy(_) => Outcome::Done,
            };
            let (verdict, detail) = why.words();
            (Row::skipped(domain, verdict, detail), outcome)
        },
    )?;
    let (mut rows, mut outcome) = (Vec::new(), Outcome::Done);
    for (row, found) in results {
        rows.push(row);
        outcome = outcome.worse(found);
    }
    let text = match ask.format {
        DriftFormat::Json => rows_json(&rows)?,
        format => table(
            &rows,
            crate::view::TableStyle {
                wide: format == DriftFormat::Wide,
                no_headers: false,
                width: cx.console.width(),
            },
        ),
    };
    cx.console.data(&text)?;
    Ok(outcome)
}
