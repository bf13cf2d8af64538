//! `clinv replay`: a dry run, a delivery, and the `--all` rows.

use super::results::Row;
use crate::cluster::Delivery;

/// `replay --dry-run`: what a replay of domain `d` would do.
pub fn replay_dry_run(d: &str, snapshot: &str, delivery: &Delivery, older: usize) -> String {
    let what = match delivery {
        Delivery::Applied(a) => format!("would apply snapshot {snapshot} ({})", a.cr),
        Delivery::Stale { live_rendered_at } => format!(
            "would skip snapshot {snapshot}: the live inventory is newer ({live_rendered_at})"
        ),
    };
    format!("{d}: {what}; {older} older pending snapshot(s) would be superseded\n")
}

/// What a replay of domain `d` delivered, and how many older snapshots it superseded.
pub fn replay_delivered(
    d: &str,
    snapshot: &str,
    server: &str,
    delivery: &Delivery,
    superseded: usize,
) -> String {
    let summary = match delivery {
        Delivery::Applied(a) => format!(
            "{d}: applied snapshot {snapshot} (clusterinventory/cluster {} → {server}, {} requests)",
            a.cr, a.requests
        ),
        Delivery::Stale { live_rendered_at } => format!(
            "{d}: snapshot {snapshot} not applied: {}; marked superseded",
            crate::delivery::stale_detail(live_rendered_at)
        ),
    };
    match superseded {
        0 => summary,
        n => format!("{summary}; {n} older pending snapshot(s) superseded"),
    }
}

/// A domain whose pending snapshots are all damaged, in words.
pub fn damaged(d: &str, pending: usize) -> String {
    format!(
        "{d}: {pending} snapshot(s) pending, but none is intact: nothing can be delivered until the store is repaired (clinv snapshots verify names the damage)"
    )
}

/// `replay --all`: one row per domain — what happened, and to which snapshot or server.
pub fn replay_rows(reports: &[crate::ops::replay::DomainReport]) -> Vec<Row> {
    use crate::ops::replay::Replayed;
    let mut rows = Vec::new();
    for r in reports {
        let (result, detail) = match &r.report {
            Err(e) => ("error".to_string(), crate::error::headline(e)),
            Ok(report) => match &report.outcome {
                Replayed::Nothing => ("nothing to replay".into(), "-".into()),
                Replayed::Damaged { pending } => (
                    "damaged".into(),
                    format!("{pending} snapshot(s) pending, none intact"),
                ),
                Replayed::NotApplied { reason, queued, .. } => (
                    format!("pending ({reason})"),
                    format!("{queued} snapshot(s)"),
                ),
                Replayed::DryRun {
                    snapshot, delivery, ..
                } => match delivery {
                    Delivery::Applied(a) => (
                        "dry run".into(),
                        format!("would apply {snapshot} ({})", a.cr),
                    ),
                    Delivery::Stale { .. } => {
                        ("dry run".into(), format!("would supersede {snapshot}"))
                    }
                },
                Replayed::Delivered {
                    snapshot,
                    server,
                    delivery,
                    ..
                } => match delivery {
                    Delivery::Applied(a) => (
                        "applied".into(),
                        format!("{snapshot} ({}) → {server}", a.cr),
                    ),
                    Delivery::Stale { live_rendered_at } => (
                        "superseded".into(),
                        format!(
                            "{snapshot}: {}",
                            crate::delivery::stale_detail(live_rendered_at)
                        ),
                    ),
                },
            },
        };
        rows.push(Row::new(r.domain.as_str(), result, detail));
    }
    rows
}

/// What an owed push's delivery did, in one line: `git push delivered: 1a2b3c4d5e6f of D
/// to origin (main)`, `… still owed (unreachable): …`, `… refused: …`.
#[cfg(feature = "gitops")]
pub fn owed_line(item: &crate::ops::owed::Owed, delivery: &crate::ops::owed::Delivery) -> String {
    use crate::ops::owed::Delivery as D;
    let what = owed_what(item);
    match delivery {
        D::Delivered {
            already_there,
            not_recorded,
            ..
        } => {
            let there = if *already_there {
                " (it was already there)"
            } else {
                ""
            };
            let unrecorded = not_recorded
                .as_ref()
                .map(|e| format!("; but the store could not record it: {e}"))
                .unwrap_or_default();
            format!(
                "{} push delivered: {what}{there}{unrecorded}",
                item.push.channel()
            )
        }
        D::StillOwed { reason, message } => format!(
            "{} push still owed{}: {what}: {message}",
            item.push.channel(),
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        D::Refused { message } => format!(
            "{} push refused, still owed: {what}: {message}",
            item.push.channel()
        ),
    }
}

/// An owed push's row in the closing table of several domains.
#[cfg(feature = "gitops")]
pub fn owed_row(item: &crate::ops::owed::Owed, delivery: &crate::ops::owed::Delivery) -> Row {
    use crate::ops::owed::Delivery as D;
    let channel = item.push.channel();
    let result = match delivery {
        D::Delivered { .. } => format!("{channel} push delivered"),
        D::StillOwed { reason, .. } => match reason {
            Some(r) => format!("{channel} push owed ({r})"),
            None => format!("{channel} push owed"),
        },
        D::Refused { .. } => format!("{channel} push refused"),
    };
    Row::new(&item.domain, result, owed_what(item))
}

/// The owed push in words: the commit or snapshot, the domain, where it goes.
#[cfg(feature = "gitops")]
fn owed_what(item: &crate::ops::owed::Owed) -> String {
    let which = match &item.push {
        crate::ops::owed::Push::Git(g) => g.commit.chars().take(12).collect::<String>(),
        crate::ops::owed::Push::Oci(_) => format!("snapshot {}", item.snapshot),
    };
    format!("{which} of {} to {}", item.domain, item.push.shown_target())
}

/// Each domain's outcome said in turn (a domain whose store failed: `[error] D: …` when
/// there are several; alone, the error ends the command); the reasons `--strict` makes
/// errors, collected.
///
/// # Errors
/// A write to stdout (a dry run's lines).
pub fn say(
    cx: crate::ops::context::Context<'_>,
    reports: &[crate::ops::replay::DomainReport],
) -> crate::error::Result<Vec<crate::delivery::Reason>> {
    let mut unapplied = Vec::new();
    for r in reports {
        match &r.report {
            Ok(report) => show(cx, &r.domain, report, &mut unapplied)?,
            Err(e) if reports.len() > 1 => {
                cx.console
                    .error(&format!("{}: {}", r.domain, crate::error::chain(e)))
            }
            Err(_) => {}
        }
    }
    Ok(unapplied)
}

/// One domain's outcome; with `--strict` a reason it was not delivered is collected.
fn show(
    cx: crate::ops::context::Context<'_>,
    d: &crate::domain::Domain,
    report: &crate::ops::replay::Report,
    unapplied: &mut Vec<crate::delivery::Reason>,
) -> crate::error::Result<()> {
    use crate::delivery::Reason;
    use crate::ops::replay::Replayed;
    let console = cx.console;
    console.notices(&report.notices);
    match &report.outcome {
        Replayed::Nothing => console.info(&format!("{d}: nothing to replay")),
        Replayed::Damaged { pending } => console.error(&damaged(d.as_str(), *pending)),
        Replayed::NotApplied {
            reason, message, ..
        } => {
            // Another domain's inventory there is a mistake to fix, never fail-soft.
            if cx.strict || *reason == Reason::DomainMismatch {
                console.error(message);
                unapplied.push(*reason);
            } else if matches!(reason, Reason::ClockSkew | Reason::GitopsManaged) {
                // Newer content not delivered: -q does not hide it.
                console.alert(message);
            } else {
                console.warn(message);
            }
        }
        Replayed::DryRun {
            snapshot,
            delivery,
            older,
        } => console.data(&replay_dry_run(d, snapshot, delivery, *older))?,
        Replayed::Delivered {
            snapshot,
            server,
            delivery,
            superseded,
        } => console.info(&replay_delivered(
            d,
            snapshot,
            server,
            delivery,
            *superseded,
        )),
    }
    Ok(())
}

/// The owed pushes after the cluster channel, said; the rows, and whether one was
/// refused.
///
/// A line each (and a row each for several domains); still owed is fail-soft
/// (`--strict`: its reason collected), refused is an error.
#[cfg(feature = "gitops")]
pub fn say_owed(
    cx: crate::ops::context::Context<'_>,
    owed: &crate::ops::replay::Owed,
    unapplied: &mut Vec<crate::delivery::Reason>,
) -> (Vec<Row>, bool) {
    use crate::ops::owed::Delivery;
    let console = cx.console;
    let report = match owed {
        crate::ops::replay::Owed::Would(listing) => {
            // Nothing is pushed: what would be is said.
            for e in &listing.owed {
                let o = &e.owed;
                let (channel, to) = (o.push.channel(), o.push.shown_target());
                let line = format!(
                    "{}: would deliver the owed {channel} push to {to}",
                    o.domain
                );
                console.info(&line);
            }
            return (Vec::new(), false);
        }
        crate::ops::replay::Owed::Delivered(report) => report,
    };
    for d in &report.damaged {
        console.warn(&format!("outbox: {d}"));
    }
    let mut refused = false;
    let mut rows = Vec::new();
    for (item, delivery) in &report.deliveries {
        let line = owed_line(item, delivery);
        match delivery {
            Delivery::Delivered { .. } => console.info(&line),
            Delivery::StillOwed { reason, .. } => match reason {
                Some(r) if cx.strict => {
                    console.error(&line);
                    unapplied.push(*r);
                }
                _ => console.warn(&line),
            },
            Delivery::Refused { .. } => {
                console.error(&line);
                refused = true;
            }
        }
        rows.push(owed_row(item, delivery));
    }
    (rows, refused)
}
