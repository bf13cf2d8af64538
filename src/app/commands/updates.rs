//! `clinv updates`: which addons have a newer version in the addon index.

use super::{deploy_domain_note, domain, project, rendered_at, report_warnings, store};
use crate::app::cli::{IndexSourceArgs, TableFormat, UpdatesArgs};
use crate::app::output;
use crate::app::settings::Settings;
use crate::cluster::{Failure, access};
use crate::error::{Error, Result, exit};
use crate::inventory::{self, Loaded};
use crate::project::Project;
use crate::status::fetch::{self, IndexRef};
use crate::status::updates::{self, Current};
use std::path::PathBuf;
use std::time::Duration;

/// Largest `--from` file read.
const MAX_FROM_BYTES: u64 = 8 << 20;

pub fn run(settings: &Settings, args: &UpdatesArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    let index_ref = IndexRef::parse(&args.index)?;
    let loaded = load_index(settings, &index_ref, &args.source)?;
    let Some(compared) = inventory_to_compare(settings, args)? else {
        return Ok(exit::OK);
    };
    let list = updates::compute(&compared.addons, &loaded.index);
    settings.printer.info(&format!(
        "compared the {} with {}{}",
        compared.source.describe(),
        index_ref.display(),
        match loaded.index.generated_at.as_str() {
            "" => String::new(),
            at => format!(" (generated {at})"),
        }
    ));
    let text = match format {
        TableFormat::Json => {
            output::updates_json(compared.source.word(), &loaded.index.generated_at, &list)?
        }
        _ => output::updates_table(&list),
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// Loads the index, printing the warnings of a fallback to the cache.
///
/// # Errors
/// As [`fetch::load`].
pub fn load_index(
    settings: &Settings,
    index_ref: &IndexRef,
    source: &IndexSourceArgs,
) -> Result<fetch::Loaded> {
    let opts = fetch_options(settings, source);
    let loaded = fetch::load(index_ref, &opts)?;
    for w in &loaded.warnings {
        settings.printer.warn(w);
    }
    settings.printer.debug(&format!(
        "index {} ({:?}, {} addons)",
        index_ref.display(),
        loaded.origin,
        loaded.index.addons.len()
    ));
    Ok(loaded)
}

pub fn fetch_options(settings: &Settings, source: &IndexSourceArgs) -> fetch::Options {
    fetch::Options {
        offline: source.offline,
        ca_file: source.index_ca.clone(),
        cache_home: settings.env.cache_home(),
        timeout: Duration::from_secs_f64(source.fetch_timeout.clamp(0.1, 3600.0)),
    }
}

/// Which inventory was compared.
enum Source {
    File(PathBuf),
    Live {
        server: String,
    },
    Snapshot {
        id: String,
        state: &'static str,
        at: String,
    },
    Rendered {
        domain: String,
    },
}

impl Source {
    fn word(&self) -> &'static str {
        match self {
            Source::File(_) => "file",
            Source::Live { .. } => "live",
            Source::Snapshot { .. } => "snapshot",
            Source::Rendered { .. } => "rendered",
        }
    }

    fn describe(&self) -> String {
        match self {
            Source::File(p) => format!("inventory in {}", p.display()),
            Source::Live { server } => format!("live inventory of {server}"),
            Source::Snapshot { id, state, at } => {
                format!("inventory of snapshot {id} ({state}, recorded {at})")
            }
            Source::Rendered { domain } => format!("inventory rendered for {domain}"),
        }
    }
}

struct Compared {
    source: Source,
    addons: Vec<Current>,
}

/// The inventory to compare, in order of preference: `--from FILE`; the live object
/// when the cluster is reachable and has one; the newest snapshot of the domain in the
/// snapshot store (what was last deployed, applied or still queued); the inventory
/// rendered from the project now. `None` for a deploy domain with none of these (said on
/// stderr).
fn inventory_to_compare(settings: &Settings, args: &UpdatesArgs) -> Result<Option<Compared>> {
    if let Some(path) = &args.from {
        return from_file(path).map(Some);
    }
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    match live(settings, &project, &domain, args)? {
        Ok(Some(found)) => return Ok(Some(found)),
        Ok(None) => settings
            .printer
            .info("the cluster has no ClusterInventory; not comparing a live one"),
        Err(f) => settings
            .printer
            .info(&format!("cluster not used ({}: {})", f.reason, f.detail)),
    }
    if let Some(found) = newest_snapshot(settings, &project, &domain) {
        return Ok(Some(found));
    }
    rendered(settings, &project, &domain)
}

/// The newest snapshot of `domain` in the store, if any can be read.
fn newest_snapshot(settings: &Settings, project: &Project, domain: &str) -> Option<Compared> {
    let store = store(settings, project).domain(domain);
    let journal = match store.read() {
        Ok(j) => j,
        Err(e) => {
            settings.printer.warn(&format!("snapshots: {e}"));
            return None;
        }
    };
    let snap = journal.newest_first().next()?;
    match store.inventory(&snap.record) {
        Ok(inv) => Some(Compared {
            addons: updates::from_inventory(&inv),
            source: Source::Snapshot {
                id: snap.record.id.clone(),
                state: snap.state.as_str(),
                at: snap.record.at.clone(),
            },
        }),
        Err(e) => {
            settings
                .printer
                .warn(&format!("snapshot {}: {e} — not used", snap.record.id));
            None
        }
    }
}

fn from_file(path: &std::path::Path) -> Result<Compared> {
    let bytes =
        crate::util::files::read_bounded(path, MAX_FROM_BYTES).map_err(|e| Error::io(path, e))?;
    let origin = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidFile {
        path: path.to_path_buf(),
        message: "not valid UTF-8".into(),
    })?;
    let object = updates::find_inventory(&text, &origin)?;
    Ok(Compared {
        addons: updates::from_object(&object, &origin)?,
        source: Source::File(path.to_path_buf()),
    })
}

/// The live inventory, `Ok(Ok(None))` when the cluster answers without one and
/// `Ok(Err(_))` when it cannot be read; `Err` only when the runtime cannot start.
fn live(
    settings: &Settings,
    project: &Project,
    domain: &str,
    args: &UpdatesArgs,
) -> Result<Result<Option<Compared>, Failure>> {
    let opts = access::options(args.limits.timeout, args.limits.probe_timeout, false, false);
    let read = access::read_live(&super::access(settings), Some((project, domain)), opts)?;
    for line in &read.trace {
        settings.printer.debug(line);
    }
    let (server, value) = match read.result {
        Ok(found) => (found.server, found.object),
        Err(f) => return Ok(Err(f)),
    };
    let Some(value) = value else {
        return Ok(Ok(None));
    };
    let label = value
        .pointer("/metadata/labels/lok8s.dev~1domain")
        .and_then(serde_json::Value::as_str);
    if let Some(other) = label.filter(|l| *l != domain) {
        settings.printer.warn(&format!(
            "the live inventory of {server} is for domain '{other}', not '{domain}'"
        ));
    }
    let origin = format!("the live ClusterInventory ({server})");
    match updates::from_object(&value, &origin) {
        Ok(addons) => Ok(Ok(Some(Compared {
            addons,
            source: Source::Live { server },
        }))),
        Err(e) => {
            settings.printer.warn(&e.to_string());
            Ok(Ok(None))
        }
    }
}

fn rendered(settings: &Settings, project: &Project, domain: &str) -> Result<Option<Compared>> {
    match inventory::load(project, domain, rendered_at(settings)?)? {
        Loaded::Cluster(built) => {
            report_warnings(settings, &built.warnings)?;
            Ok(Some(Compared {
                addons: updates::from_inventory(&built.inventory),
                source: Source::Rendered {
                    domain: domain.to_string(),
                },
            }))
        }
        Loaded::Deploy { cluster_ref, .. } => {
            deploy_domain_note(settings, domain, cluster_ref.as_deref());
            Ok(None)
        }
    }
}
