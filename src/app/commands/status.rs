//! `clinv status`: the `lo status` inventory block, read from the live cluster.

use super::{domain, fail_soft, print_notices, project, scope};
use crate::app::cli::{StatusOutArgs, TextFormat};
use crate::app::output;
use crate::app::settings::Settings;
use crate::error::{Outcome, Result};
use crate::ops::status::{self, Shown};

pub fn run(settings: &Settings, out: &StatusOutArgs) -> Result<Outcome> {
    let args = &out.status;
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let report = status::status(&scope(settings, &project, &domain, &args.limits))?;
    print_notices(settings, &report.notices);
    let (source, snapshot, value) = match report.shown {
        Shown::Live(value) => ("live", None, value),
        Shown::Snapshot { id, inventory } => ("snapshot", Some(id), inventory),
        Shown::Nothing { reason, message } => return fail_soft(settings, reason, message),
    };
    let text = match out.output.unwrap_or_default() {
        // `source`: live, or snapshot (the cluster could not be read; `snapshot` is its id).
        TextFormat::Json => crate::inventory::render::to_json(&serde_json::json!({
            "schemaVersion": 1,
            "domain": domain,
            "source": source,
            "snapshot": snapshot,
            "inventory": value,
        }))?,
        TextFormat::Text => output::inventory_block(&value),
    };
    settings.printer.data(&text)?;
    Ok(Outcome::Done)
}
