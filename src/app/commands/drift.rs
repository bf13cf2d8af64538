//! `clinv drift`: was the cluster last deployed from the local spec? Exit 0 in sync, 1
//! drift, 2 unknown.

use super::{domain, print_notices, project, scope};
use crate::app::cli::StatusArgs;
use crate::app::settings::Settings;
use crate::error::{Outcome, Result};
use crate::ops::drift::{self, Verdict};
use crate::util::redact::escape_line;

pub fn run(settings: &Settings, args: &StatusArgs) -> Result<Outcome> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let report = drift::drift(&scope(settings, &project, &domain, &args.limits))?;
    print_notices(settings, &report.notices);
    // The snapshot's id and time, the server and the hash come from the store or the
    // live object: one line each, control characters escaped.
    let source = escape_line(&report.source.to_string());
    let (outcome, verdict) = match report.verdict {
        Verdict::InSync => (Outcome::Done, "in sync".to_string()),
        Verdict::Drift { local, remote } => (
            Outcome::Different,
            format!(
                "drift: the local spec hashes to {}…, {source} carries {}…",
                &local[..12],
                escape_line(&remote.chars().take(12).collect::<String>())
            ),
        ),
        Verdict::Unknown => (Outcome::Unknown, "unknown".to_string()),
    };
    settings
        .printer
        .data(&format!("{domain}: {verdict} (compared with {source})\n"))?;
    Ok(outcome)
}
