//! `clinv log -A --addon NAME` as text: a line per step, each led by its domain — the
//! columns of `log -A --oneline` (domain, change, time, outcome, revision and id),
//! aligned.

use crate::ops::fleet::addon_log::Event;
use crate::view::report::text::Oneline;

/// The lines of `events`, in their order.
///
/// A domain's first step is named by what it did to the addon (`+ cert-manager v1.18.0`), not by the whole first install a step's own
/// line gives it: the addon is what this log is about.
pub fn text(events: &[Event], color: bool, now: Option<jiff::Timestamp>) -> String {
    let shown: Vec<_> = events
        .iter()
        .map(|e| {
            let mut entry = e.entry.clone();
            entry.initial = false;
            (e.domain.as_str(), entry)
        })
        .collect();
    let mut lines = Oneline::new(color, now);
    for (domain, entry) in &shown {
        lines.measure(Some(domain), entry);
    }
    shown
        .iter()
        .map(|(domain, entry)| lines.line(Some(domain), entry))
        .collect()
}
