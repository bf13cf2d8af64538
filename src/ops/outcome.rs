//! How a delivery ends, as the user hears it.
//!
//! lok8s's fail-soft rule, an owed push, a deploy domain met on the way, the render time
//! and the build warnings: the rules the delivering commands (`publish`, `commit`,
//! `push`, `replay`, `render`) share, said through the [`Console`] they are given.

use crate::console::Console;
use crate::delivery::Reason;
use crate::error::{Error, Outcome, Result};
use crate::inventory::{self, Warning};
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// The deploy domains a run met (name → its cluster domain), said once at its end in
/// one line, not a line each on every command over the fleet.
#[derive(Debug, Default)]
pub struct DeployDomains(Mutex<BTreeMap<String, Option<String>>>);

impl DeployDomains {
    /// Notes that a deploy domain has no inventory of its own.
    pub fn note(&self, domain: &str, cluster_ref: Option<&str>) {
        let mut met = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        met.insert(domain.to_string(), cluster_ref.map(str::to_string));
    }

    /// The deploy domains met so far, forgotten (each is said once).
    pub fn take(&self) -> BTreeMap<String, Option<String>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// How a command speaks: where (the console), how hard (`--strict`), and what it keeps
/// for the end of the run (the deploy domains it met).
#[derive(Clone, Copy)]
pub struct Voice<'a> {
    pub console: &'a dyn Console,
    pub strict: bool,
    pub deploy: &'a DeployDomains,
}

impl Voice<'_> {
    /// lok8s's fail-soft rule for what did not reach the cluster: a warning and success;
    /// with `--strict`, an error with the reason's exit code.
    ///
    /// # Errors
    /// [`Error::Unapplied`] under `--strict`, or for another domain's inventory.
    pub fn fail_soft(&self, reason: Reason, message: String) -> Result<Outcome> {
        // Another domain's inventory where this one would go is a mistake in the fleet's
        // kubeconfigs, not a cluster that will answer later: never fail-soft.
        if self.strict || reason == Reason::DomainMismatch {
            return Err(Error::Unapplied { reason, message });
        }
        if matches!(reason, Reason::ClockSkew | Reason::GitopsManaged) {
            // Not delivered, and no replay will deliver it by itself: -q does not hide it.
            self.console.alert(&message);
        } else {
            self.console.warn(&message);
        }
        Ok(Outcome::Done)
    }

    /// A push whose far end did not answer, recorded as owed: the cluster channel's
    /// fail-soft rule (a warning and exit 0; `--strict`: the reason's exit code). Not
    /// recorded either: exit 11 — nothing will deliver it.
    ///
    /// # Errors
    /// [`Error::NotRecorded`], or what [`Voice::fail_soft`] returns.
    pub fn owed_push(&self, owing: crate::ops::owed::Owing) -> Result<i32> {
        if let Some(source) = owing.not_recorded {
            return Err(Error::NotRecorded {
                what: owing.message,
                source: Box::new(source),
            });
        }
        self.fail_soft(owing.reason, owing.message)
            .map(|o| o.exit_code())
    }

    /// Notes a deploy domain; said at the end of the run, with the others met.
    pub fn deploy_domain(&self, domain: &str, cluster_ref: Option<&str>) {
        self.deploy.note(domain, cluster_ref);
    }

    /// A delivery's notices, then its end: the deploy domain's note (exit 0), or what
    /// `done` makes of it.
    ///
    /// # Errors
    /// The delivery's error, or `done`'s.
    pub fn delivered<T, E: From<Error>>(
        &self,
        domain: &str,
        report: crate::ops::Reported<crate::ops::Delivered<T>>,
        done: impl FnOnce(T) -> std::result::Result<i32, E>,
    ) -> std::result::Result<i32, E> {
        self.console.notices(&report.notices);
        match report.result? {
            crate::ops::Delivered::DeployDomain { cluster_ref } => {
                self.deploy_domain(domain, cluster_ref.as_deref());
                Ok(crate::error::exit::OK)
            }
            crate::ops::Delivered::Done(t) => done(t),
        }
    }

    /// The render time (`SOURCE_DATE_EPOCH` or now), warning about an unparsable
    /// `SOURCE_DATE_EPOCH` (an error with `--strict`; the output keeps lok8s's 1970).
    ///
    /// # Errors
    /// [`Error::InvalidEnv`] under `--strict`, or a time out of range.
    pub fn rendered_at(&self, source_date_epoch: Option<&str>) -> Result<jiff::Timestamp> {
        if let Some(w) = inventory::source_date_epoch_warning(source_date_epoch) {
            if self.strict {
                return Err(Error::InvalidEnv {
                    name: "SOURCE_DATE_EPOCH",
                    message: w,
                });
            }
            self.console.warn(&w);
        }
        inventory::rendered_at(source_date_epoch, jiff::Timestamp::now())
    }

    /// Says build warnings; with `--strict` they are errors and stop the command.
    ///
    /// # Errors
    /// [`Error::Strict`] under `--strict` when there are any.
    pub fn warnings(&self, warnings: &[Warning]) -> Result<()> {
        for w in warnings {
            if self.strict {
                self.console.error(&w.message);
            } else {
                self.console.warn(&w.message);
            }
            if let Some(detail) = &w.detail {
                self.console.debug(&format!("  reason: {detail}"));
            }
        }
        if self.strict && !warnings.is_empty() {
            return Err(Error::Strict(warnings.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Recorded;

    fn voice<'a>(console: &'a Recorded, deploy: &'a DeployDomains, strict: bool) -> Voice<'a> {
        Voice {
            console,
            strict,
            deploy,
        }
    }

    /// Unreachable is a warning and success; clock skew an alert; --strict and another
    /// domain's inventory are errors with the reason.
    #[test]
    fn fail_soft_warns_alerts_or_fails_by_reason_and_strict() {
        let (said, met) = (Recorded::default(), DeployDomains::default());
        let soft = voice(&said, &met, false);
        assert!(matches!(
            soft.fail_soft(Reason::Unreachable, "u".into()),
            Ok(Outcome::Done)
        ));
        assert!(matches!(
            soft.fail_soft(Reason::ClockSkew, "c".into()),
            Ok(Outcome::Done)
        ));
        assert!(matches!(
            soft.fail_soft(Reason::DomainMismatch, "m".into()),
            Err(Error::Unapplied {
                reason: Reason::DomainMismatch,
                ..
            })
        ));
        assert_eq!(said.messages(), ["[warn] u", "[warn] c"]);
        let strict = voice(&said, &met, true);
        assert!(strict.fail_soft(Reason::Unreachable, "s".into()).is_err());
        assert_eq!(said.messages().len(), 2);
    }

    /// A deploy domain is kept for the end of the run, once, and then forgotten.
    #[test]
    fn deploy_domains_are_kept_once_then_taken() {
        let met = DeployDomains::default();
        met.note("b", Some("p"));
        met.note("a", None);
        met.note("b", Some("p"));
        let taken = met.take();
        assert_eq!(taken.len(), 2);
        assert_eq!(taken["b"].as_deref(), Some("p"));
        assert!(met.take().is_empty());
    }

    /// Warnings are warnings, or errors that stop the command under --strict.
    #[test]
    fn warnings_stop_only_a_strict_command() {
        let (said, met) = (Recorded::default(), DeployDomains::default());
        let w = [Warning {
            message: "w".into(),
            detail: None,
        }];
        voice(&said, &met, false).warnings(&w).unwrap();
        assert!(matches!(
            voice(&said, &met, true).warnings(&w),
            Err(Error::Strict(1))
        ));
        assert_eq!(said.messages(), ["[warn] w", "[error] w"]);
    }
}
