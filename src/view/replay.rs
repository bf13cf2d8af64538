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

/// `replay --all`: one row per domain — what happened, and to which snapshot or server.
pub fn replay_rows(reports: &[crate::ops::replay::DomainReport]) -> Vec<Row> {
    use crate::ops::replay::Replayed;
    let mut rows = Vec::new();
    for r in reports {
        let (result, detail) = match &r.report {
            Err(e) => ("error".to_string(), crate::error::headline(e)),
            Ok(report) => match &report.outcome {
                Replayed::Nothing => ("nothing to replay".into(), "-".into()),
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
