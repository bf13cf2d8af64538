//! What a flow gets from the run it is part of, plain: where it speaks, `--strict`, the
//! project's place, the environment values that change an answer, and the deploy
//! domains the run meets.

use crate::console::Console;
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::{Error, Outcome, Result};
use crate::fleet::Deploys;
use crate::inventory::{self, Warning};
use crate::project::Project;
use crate::project::select::{Known, Many};
use std::path::Path;

/// The run a flow is part of: the command line's settings as plain values.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Where the flow says what it says.
    pub console: &'a dyn Console,
    /// `--strict`: warnings are errors, fail-soft is not.
    pub strict: bool,
    /// `--root`, else the project is found above `cwd`.
    pub root: Option<&'a Path>,
    pub cwd: &'a Path,
    /// `--snapshots` (or `CLINV_SNAPSHOTS`), else `<root>/snapshots`.
    pub snapshots: Option<&'a Path>,
    /// `SOURCE_DATE_EPOCH`, the render time.
    pub source_date_epoch: Option<&'a str>,
    /// lok8s's current-domain variable, for the one-domain rule.
    pub domain_name: Option<&'a str>,
    /// The deploy domains the run met, said at its end.
    pub deploys: &'a Deploys,
}

/// The domains a command asks for: a fleet selection (`-A`, `--domain` repeated, a
/// glob), else the one `--domain` (or none) of the one-domain rule.
#[derive(Clone, Copy)]
pub struct Selection<'a> {
    pub many: Many<'a>,
    pub one: Option<&'a str>,
}

impl<'a> Context<'a> {
    /// The project named by `--root` or found above the working directory.
    pub fn project(&self) -> Result<Project> {
        Project::discover(self.root, self.cwd)
    }

    /// The snapshot store of `project`.
    pub fn store(&self, project: &Project) -> crate::store::Store {
        crate::store::Store::of_project(self.snapshots, project.root())
    }

    /// Notes that a deploy domain has no inventory of its own (said at the end of the run).
    pub fn deploy(&self, domain: &str, cluster_ref: Option<&str>) {
        self.deploys.note(domain, cluster_ref);
    }

    /// The domain by the one selection rule ([`crate::project::select`]) among those
    /// `known`, saying lok8s's notices on the way.
    pub fn selected(&self, known: Known<'_>, flag: Option<&str>) -> Result<Domain> {
        crate::fleet::one(self.console, known, flag, self.domain_name)
    }

    /// The domain of a project command by the one selection rule.
    pub fn domain(&self, project: &Project, flag: Option<&str>) -> Result<Domain> {
        let known = Known {
            project: Some(project),
            store: None,
        };
        self.selected(known, flag)
    }

    /// The domains of a fleet selection among the project's ([`crate::fleet::select`]);
    /// `None` for one plain `--domain` or none, which take the one-domain rule.
    pub fn fleet(&self, project: &Project, many: Many<'_>) -> Result<Option<Vec<Domain>>> {
        crate::fleet::select(crate::fleet::Among::Project(project), many)
    }

    /// The domains `selection` names: `Err` with the one domain of the one-domain rule.
    pub fn pick(&self, project: &Project, selection: Selection<'_>) -> Result<Picked> {
        Ok(match self.fleet(project, selection.many)? {
            Some(domains) => Picked::Several(domains),
            None => Picked::One(self.domain(project, selection.one)?),
        })
    }

    /// The render time (`SOURCE_DATE_EPOCH` or now), warning about an unparsable
    /// `SOURCE_DATE_EPOCH` (an error with `--strict`; the output keeps lok8s's 1970).
    pub fn rendered_at(&self) -> Result<jiff::Timestamp> {
        if let Some(w) = inventory::source_date_epoch_warning(self.source_date_epoch) {
            if self.strict {
                return Err(Error::InvalidEnv {
                    name: "SOURCE_DATE_EPOCH",
                    message: w,
                });
            }
            self.console.warn(&w);
        }
        inventory::rendered_at(self.source_date_epoch, jiff::Timestamp::now())
    }

    /// Says build warnings; with `--strict` they are errors and stop the command.
    pub fn warnings(&self, warnings: &[Warning]) -> Result<()> {
        crate::ops::warnings::say(self.console, self.strict, warnings)
    }

    /// lok8s's fail-soft rule for what did not reach the cluster: a warning and success;
    /// with `--strict`, an error with the reason's exit code.
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
    /// [`Error::NotRecorded`], or what [`Context::fail_soft`] returns.
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
                self.deploy(domain, cluster_ref.as_deref());
                Ok(crate::error::exit::OK)
            }
            crate::ops::Delivered::Done(t) => done(t),
        }
    }
}

/// A context of no project, for the unit tests of the code that takes one.
#[cfg(test)]
impl<'a> Context<'a> {
    pub(crate) fn detached(console: &'a dyn Console, deploys: &'a Deploys, strict: bool) -> Self {
        Context {
            console,
            strict,
            root: None,
            cwd: Path::new("/nonexistent"),
            snapshots: None,
            source_date_epoch: None,
            domain_name: None,
            deploys,
        }
    }
}

/// The domains a selection names: several, or the one of the one-domain rule.
pub enum Picked {
    One(Domain),
    Several(Vec<Domain>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Recorded;

    fn context<'a>(console: &'a Recorded, deploys: &'a Deploys, strict: bool) -> Context<'a> {
        Context {
            source_date_epoch: Some("yesterday"),
            ..Context::detached(console, deploys, strict)
        }
    }

    /// What did not reach the cluster: a warning and success, said louder when no replay
    /// delivers it; an error with `--strict`, and always for another domain's inventory.
    #[test]
    fn fail_soft_warns_unless_strict_or_another_domains() {
        let deploys = Deploys::default();
        let said = Recorded::default();
        let cx = context(&said, &deploys, false);
        let done = cx.fail_soft(Reason::NoKubeconfig, "not applied".into());
        assert!(matches!(done, Ok(Outcome::Done)));
        assert!(cx.fail_soft(Reason::ClockSkew, "skew".into()).is_ok());
        assert_eq!(said.messages(), ["[warn] not applied", "[warn] skew"]);
        let other = cx.fail_soft(Reason::DomainMismatch, "other".into());
        assert!(matches!(
            other,
            Err(Error::Unapplied {
                reason: Reason::DomainMismatch,
                ..
            })
        ));
        let strict = Recorded::default();
        let cx = context(&strict, &deploys, true);
        let refused = cx.fail_soft(Reason::NoKubeconfig, "not applied".into());
        assert!(matches!(
            refused,
            Err(Error::Unapplied {
                reason: Reason::NoKubeconfig,
                ..
            })
        ));
        assert!(strict.messages().is_empty(), "{:?}", strict.messages());
    }

    /// Build warnings are warnings (their detail at debug), errors that stop the command
    /// with `--strict`; an unparsable SOURCE_DATE_EPOCH likewise.
    #[test]
    fn warnings_and_a_bad_source_date_epoch_are_errors_with_strict() {
        let deploys = Deploys::default();
        let warning = Warning {
            message: "w".into(),
            detail: Some("d".into()),
        };
        let said = Recorded::default();
        let cx = context(&said, &deploys, false);
        assert!(cx.warnings(std::slice::from_ref(&warning)).is_ok());
        assert_eq!(cx.rendered_at().unwrap(), jiff::Timestamp::UNIX_EPOCH);
        let messages = said.messages();
        assert_eq!(messages[..2], ["[warn] w", "[debug]   reason: d"]);
        assert!(messages[2].starts_with("[warn] SOURCE_DATE_EPOCH \"yesterday\""));
        let strict = Recorded::default();
        let cx = context(&strict, &deploys, true);
        assert!(matches!(cx.warnings(&[warning]), Err(Error::Strict(1))));
        assert!(matches!(cx.rendered_at(), Err(Error::InvalidEnv { .. })));
        assert_eq!(strict.messages()[..2], ["[error] w", "[debug]   reason: d"]);
    }

    /// A deploy domain is noted for the end of the run, never said on the way.
    #[test]
    fn deploy_domains_are_noted_not_said() {
        let deploys = Deploys::default();
        let said = Recorded::default();
        let cx = context(&said, &deploys, false);
        cx.deploy("apps.example", Some("prod.example"));
        let domain = Domain::parse("edge.example").unwrap();
        let left = crate::fleet::Left::deploy(cx.deploys, &domain, None);
        assert_eq!(
            left.why,
            "deploy domain: no inventory of its own (cluster: -)"
        );
        assert!(said.messages().is_empty());
        let met = deploys.take();
        assert_eq!(met.len(), 2);
        assert_eq!(met["apps.example"].as_deref(), Some("prod.example"));
        assert!(deploys.take().is_empty());
    }
}
