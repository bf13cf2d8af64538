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
    let scope = scope(settings, &project, &domain, &args.limits);
    let report = status::status(&scope, args.offline)?;
    print_notices(settings, &report.notices);
    let (source, value, not_read) = match report.shown {
        Shown::Live(value) => (StatusSource::Live, value, None),
        Shown::Snapshot {
            id,
            at,
            not_read,
            inventory,
        } => {
            let why = not_read.as_ref().map(|(r, d)| format!("{r}: {d}"));
            let source = StatusSource::Snapshot { id, at, why };
            (source, inventory, not_read.map(|(r, _)| r))
        }
        Shown::NotRead { reason, detail } => {
            let why = format!("{reason}: {detail}");
            (
                StatusSource::NotRead { why },
                serde_json::Value::Null,
                Some(reason),
            )
        }
        Shown::Nothing { reason, message } => return fail_soft(settings, reason, message),
    };
    let text = match out.output.unwrap_or_default() {
        TextFormat::Json => {
            view::status::status_json(&domain, &source, report.delivery.as_ref(), value)?
        }
        TextFormat::Text => {
            let now = jiff::Timestamp::now().as_second();
            let mut text = view::status::block(&source, &value);
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
    // Not the live cluster's answer: 16, or with --strict why the cluster was not read.
    Ok(match not_read {
        Some(reason) if settings.strict => Outcome::Unapplied(vec![reason]),
        Some(_) => Outcome::NotLive,
        None => Outcome::Done,
    })
}
