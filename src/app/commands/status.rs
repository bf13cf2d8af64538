//! `clinv status`: the `lo status` inventory block, read from the live cluster.

use super::{domain, fail_soft, print_notices, project, scope};
use crate::app::cli::StatusArgs;
use crate::app::output;
use crate::app::settings::Settings;
use crate::error::{Outcome, Result};
use crate::ops::status::{self, Shown};

pub fn run(settings: &Settings, args: &StatusArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let report = status::status(&scope(settings, &project, &domain, &args.limits))?;
    print_notices(settings, &report.notices);
    match report.shown {
        Shown::Live(value)
        | Shown::Snapshot {
            inventory: value, ..
        } => {
            settings.printer.data(&output::inventory_block(&value))?;
            Ok(Outcome::Done)
        }
        Shown::Nothing { reason, message } => fail_soft(settings, reason, message),
    }
}
