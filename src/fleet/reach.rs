//! What a command that reads the store can know: the store, and the project when there
//! is one (for its deploy domains and `clusters/.active`); and the one-domain selection
//! of every command, its lok8s notices said on the way.

use crate::console::Console;
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::project::select::{self, Known, Many};
use crate::store::Store;
use std::path::Path;

/// The store a store-only command (`snapshots`, `log`, `report`, `diff`, `commit
/// --snapshot`) reads, and the project when there is one.
pub struct Reach {
    pub project: Option<Project>,
    pub store: Store,
}

impl Reach {
    /// The store from `snapshots` (`--snapshots`, `CLINV_SNAPSHOTS`) alone, else
    /// `<root>/snapshots` of the project `root` names or `cwd` is in.
    ///
    /// # Errors
    /// A `--root` that names no project ([`Error::RootNotFound`] and its kind); no store:
    /// no project found and no store named ([`Error::NoStore`]).
    pub fn open(root: Option<&Path>, snapshots: Option<&Path>, cwd: &Path) -> Result<Reach> {
        let project = match Project::discover(root, cwd) {
            Ok(p) => Some(p),
            // `--root` that names nothing is still an error; no project found is not,
            // when the store is named.
            Err(Error::NoProject(_)) if snapshots.is_some() => None,
            Err(Error::NoProject(cwd)) => return Err(Error::NoStore(cwd)),
            Err(e) => return Err(e),
        };
        let store = match (snapshots, &project) {
            (Some(dir), _) => Store::at(dir),
            (None, Some(p)) => Store::of_project(None, p.root()),
            (None, None) => return Err(Error::NoStore(cwd.to_path_buf())),
        };
        Ok(Reach { project, store })
    }

    /// The store's domains a fleet selection (`log -A`, `--domain` repeated, a glob)
    /// names, in name order; `None` for one plain `--domain` or none.
    ///
    /// # Errors
    /// As [`crate::fleet::select`].
    pub fn fleet(&self, many: Many<'_>) -> Result<Option<Vec<Domain>>> {
        let among = crate::fleet::Among::Store {
            store: &self.store,
            project: self.project.is_some(),
        };
        crate::fleet::select(among, many)
    }

    /// The domain by the one selection rule, knowing the store's domains (`env`:
    /// `DOMAIN_NAME`).
    ///
    /// # Errors
    /// As [`one`].
    pub fn domain(
        &self,
        console: &dyn Console,
        flag: Option<&str>,
        env: Option<&str>,
    ) -> Result<Domain> {
        let domains = self.store.domains();
        let known = Known {
            project: self.project.as_ref(),
            store: Some((&domains, self.store.root())),
        };
        one(console, known, flag, env)
    }

    /// The domains of a fleet selection a GitOps channel delivers for: among the project's
    /// when it renders (`stored`: false), among the store's for a stored `--snapshot`;
    /// `None` for one plain `--domain` or none.
    ///
    /// # Errors
    /// As [`crate::fleet::select`].
    pub fn delivered_fleet(&self, many: Many<'_>, stored: bool) -> Result<Option<Vec<Domain>>> {
        match (&self.project, stored) {
            (Some(project), false) => {
                crate::fleet::select(crate::fleet::Among::Project(project), many)
            }
            _ => self.fleet(many),
        }
    }

    /// The domain a GitOps channel (`commit`, `push`) delivers for: among the project's
    /// when it renders (`stored`: false), among the store's too for a stored
    /// `--snapshot`.
    ///
    /// # Errors
    /// As [`one`].
    pub fn delivered_domain(
        &self,
        console: &dyn Console,
        flag: Option<&str>,
        env: Option<&str>,
        stored: bool,
    ) -> Result<Domain> {
        match (&self.project, stored) {
            (Some(project), false) => {
                let known = Known {
                    project: Some(project),
                    store: None,
                };
                one(console, known, flag, env)
            }
            _ => self.domain(console, flag, env),
        }
    }
}

/// The domain of a command by the one selection rule ([`crate::project::select`]).
///
/// Among `known`, with `--domain` (`flag`) and `DOMAIN_NAME` (`env`): lok8s's notices
/// are said as they are (also when the selection fails), the note of a choice that was
/// not obvious as `[info]`.
///
/// # Errors
/// As [`crate::project::select::select`].
pub fn one(
    console: &dyn Console,
    known: Known<'_>,
    flag: Option<&str>,
    env: Option<&str>,
) -> Result<Domain> {
    let mut notices = Vec::new();
    let selected = select::select(known, flag, env, &mut notices);
    for notice in &notices {
        console.raw(notice);
    }
    let selected = selected?;
    if let Some(note) = &selected.note {
        console.info(note);
    }
    Ok(selected.domain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::Recorded;

    fn domains(names: &[&str]) -> Vec<Domain> {
        names.iter().map(|d| Domain::parse(d).unwrap()).collect()
    }

    /// A choice among the store's domains that was not obvious (`DOMAIN_NAME`) is said
    /// as `[info]`; `--domain` is no note.
    #[test]
    fn a_choice_that_was_not_obvious_is_said() {
        let store = domains(&["air-1", "hel-1"]);
        let known = Known {
            project: None,
            store: Some((&store, Path::new("/s"))),
        };
        let recorded = Recorded::default();
        let chosen = one(&recorded, known, None, Some("hel-1")).unwrap();
        assert_eq!(chosen.as_str(), "hel-1");
        let said = recorded.messages();
        assert_eq!(said.len(), 1);
        assert!(
            said[0].starts_with("[info] domain hel-1 (from ") && said[0].contains("air-1"),
            "{said:?}"
        );
        let recorded = Recorded::default();
        one(&recorded, known, Some("air-1"), Some("hel-1")).unwrap();
        assert!(recorded.messages().is_empty());
    }

    /// A domain nobody knows is an error, and nothing is said for it.
    #[test]
    fn an_unknown_domain_is_an_error() {
        let store = domains(&["air-1"]);
        let known = Known {
            project: None,
            store: Some((&store, Path::new("/s"))),
        };
        let recorded = Recorded::default();
        assert!(one(&recorded, known, Some("fsn-1"), None).is_err());
        assert!(recorded.messages().is_empty());
    }
}
