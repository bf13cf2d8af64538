//! `clinv status`: the `lo status` inventory block, read from the live cluster, and the
//! domain's delivery (source, ages, last apply, queue).

use super::{domain, fail_soft, print_notices, project, scope};
use crate::app::Result;
use crate::app::cli::{StatusOutArgs, TextFormat};
use crate::app::settings::Settings;
use crate::error::Outcome;
use crate::ops::status::{self, Shown};
use crate::view;
use crate::view::status::StatusSource;

pub fn run(settings: &Settings, out: &StatusOutArgs) -> Result<Outcome> {
    let args = &out.status;
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let report = status::status(&scope(settings, &project, &domain, &args.limits))?;
    print_notices(settings, &report.notices);
    let (source, value) = match report.shown {
        Shown::Live(value) => (StatusSource::Live, value),
        Shown::Snapshot {
            id,
            at,
            why,
            inventory,
        } => (StatusSource::Snapshot { id, at, why }, inventory),
        Shown::Nothing { reason, message } => return fail_soft(settings, reason, message),
    };
    let text = match out.output.unwrap_or_default() {
        TextFormat::Json => {
            view::status::status_json(&domain, &source, report.delivery.as_ref(), value)?
        }
        TextFormat::Text => {
            let now = jiff::Timestamp::now().as_second();
            let mut text = view::status::inventory_block(&value);
            text.push_str(&view::status::status_section(
                &domain,
                &source,
                report.delivery.as_ref(),
                &value,
                now,
            ));
            text
        }
    };
    settings.printer.data(&text)?;
    Ok(Outcome::Done)
}
