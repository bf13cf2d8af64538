//! `clinv status`: the `lo status` inventory block, read from the live cluster.

use super::access;
use super::{domain, project};
use crate::app::cli::StatusArgs;
use crate::app::output;
use crate::app::settings::Settings;
use crate::delivery::Reason;
use crate::error::{Error, Result, exit};

pub fn run(settings: &Settings, args: &StatusArgs) -> Result<i32> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    // The spec only names lok8s's kubeconfig; status works without it.
    let name = access::cluster_name(&project, &domain);
    let fail = |reason: Reason, message: String| -> Result<i32> {
        if settings.strict {
            return Err(Error::Unapplied { reason, message });
        }
        settings.printer.warn(&message);
        Ok(exit::OK)
    };
    let opts = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
    let rt = access::runtime()?;
    let live = access::choose(settings, Some(&project), name.as_deref()).and_then(|choice| {
        rt.block_on(async {
            let cluster = access::connect(settings, &choice, opts).await?;
            cluster.get_inventory().await
        })
    });
    match live {
        Ok(Some(value)) => {
            settings.printer.data(&output::inventory_block(&value))?;
            Ok(exit::OK)
        }
        Ok(None) => fail(
            Reason::Rejected,
            "status: the cluster has no ClusterInventory 'cluster'".into(),
        ),
        Err(f) => {
            // Unreachable: show what was last recorded for the domain, and say so.
            let journal = super::store(settings, &project).domain(&domain).read()?;
            let newest = journal
                .newest_first()
                .next()
                .map(|s| (s.record.clone(), s.state));
            if let Some((snap, state)) = newest
                && let Ok(inventory) = super::store(settings, &project)
                    .domain(&domain)
                    .inventory(&snap)
            {
                settings.printer.warn(&format!(
                    "status: cluster not readable ({}: {}); showing the newest snapshot {} ({}, recorded {})",
                    f.reason,
                    f.detail,
                    snap.id,
                    state.as_str(),
                    snap.at
                ));
                let value = serde_json::to_value(&inventory).unwrap_or_default();
                settings.printer.data(&output::inventory_block(&value))?;
                return Ok(exit::OK);
            }
            fail(
                f.reason,
                format!(
                    "status: cannot read the ClusterInventory: {}: {}",
                    f.reason, f.detail
                ),
            )
        }
    }
}
