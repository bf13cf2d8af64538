//! `clinv drift`: does the cluster hold what the project renders? Exit 0 in sync, 1
//! drift (the changes listed like `clinv diff`), 2 unknown.

use super::{domain, print_notices, project, rendered_at, scope};
use crate::app::Result;
use crate::app::cli::StatusArgs;
use crate::app::settings::Settings;
use crate::error::Outcome;
use crate::ops::drift::{self, Verdict};
use crate::util::redact::escape_line;

pub fn run(settings: &Settings, args: &StatusArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let report = drift::drift(
        &scope(settings, &project, &domain, &args.limits),
        rendered_at(settings)?,
    )?;
    print_notices(settings, &report.notices);
    // The snapshot's id and time, the server and the hash come from the store or the
    // live object: one line each, control characters escaped.
    let source = escape_line(&report.source.to_string());
    let (outcome, verdict, changes) = match report.verdict {
        Verdict::InSync => (Outcome::Done, "in sync", None),
        Verdict::Drift(changes) => (Outcome::Different, "drift", Some(changes)),
        Verdict::Unknown => (Outcome::Unknown, "unknown", None),
    };
    let mut out = format!("{domain}: {verdict} (compared with {source})\n");
    if let Some(changes) = changes {
        // From what the cluster (or the snapshot) holds to what the project renders.
        out.push('\n');
        out.push_str(&crate::view::report::text::diff(
            &changes,
            settings.printer.color_stdout(),
        ));
    }
    settings.printer.data(&out)?;
    Ok(outcome)
}
