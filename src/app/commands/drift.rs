//! `clinv drift`: was the cluster last deployed from the local spec? Compares the sha256
//! of `cluster.lok8s.yaml` with the live inventory's `specHash`, or the newest snapshot's
//! when the cluster cannot be read. Exit 0 in sync, 1 drift, 2 unknown.

use super::{access, domain, project, store};
use crate::app::cli::StatusArgs;
use crate::app::settings::Settings;
use crate::error::{Error, Result};
use crate::project::DomainKind;

pub const IN_SYNC: i32 = 0;
pub const DRIFT: i32 = 1;
pub const UNKNOWN: i32 = 2;

pub fn run(settings: &Settings, args: &StatusArgs) -> Result<i32> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let DomainKind::Cluster { spec } = project.domain_kind(&domain) else {
        return Err(Error::SpecNotFound(
            project.domain_dir(&domain).join("cluster.lok8s.yaml"),
        ));
    };
    let bytes = crate::util::files::read_bounded(&spec, crate::project::MAX_INPUT_BYTES)
        .map_err(|e| Error::io(&spec, e))?;
    let local = crate::project::spec::hex_sha256(&bytes);
    let name = access::cluster_name(&project, &domain);
    let live = access::choose(settings, Some(&project), name.as_deref()).and_then(|choice| {
        let opts = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
        access::runtime()
            .map_err(|e| {
                crate::cluster::Failure::new(
                    crate::delivery::Reason::Unreachable,
                    crate::cluster::Step::Connect,
                    e.to_string(),
                )
            })?
            .block_on(async {
                let cluster = access::connect(settings, &choice, opts).await?;
                cluster
                    .get_inventory()
                    .await
                    .map(|v| (v, cluster.target.server.clone()))
            })
    });
    let (source, remote) = match live {
        Ok((Some(v), server)) => (
            format!("the live inventory at {server}"),
            v.pointer("/spec/specHash")
                .and_then(|h| h.as_str())
                .map(str::to_string),
        ),
        Ok((None, server)) => (
            format!("the cluster at {server} (no ClusterInventory)"),
            None,
        ),
        Err(f) => {
            settings.printer.info(&format!(
                "cluster not readable ({}: {}); comparing with the newest snapshot",
                f.reason, f.detail
            ));
            let journal = store(settings, &project).domain(&domain).read()?;
            match journal.newest_first().next() {
                Some(s) => (
                    format!(
                        "snapshot {} ({}, recorded {})",
                        s.record.id,
                        s.state.as_str(),
                        s.record.at
                    ),
                    Some(s.record.spec_hash.clone()),
                ),
                None => ("no live inventory and no snapshot".into(), None),
            }
        }
    };
    let (code, verdict) = match remote {
        Some(h) if h == local => (IN_SYNC, "in sync".to_string()),
        Some(h) => (
            DRIFT,
            format!(
                "drift: the local spec hashes to {}…, {source} carries {}…",
                &local[..12],
                &h[..h.len().min(12)]
            ),
        ),
        None => (UNKNOWN, "unknown".to_string()),
    };
    settings
        .printer
        .data(&format!("{domain}: {verdict} (compared with {source})\n"))?;
    Ok(code)
}
