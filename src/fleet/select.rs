//! The one selection of a command over several domains, resolved among the domains it
//! can know, with one set of rules: names that fail lok8s's rule are refused, unknown
//! names and globs that match nothing are errors with the closest name, and a fleet is
//! in name order, each domain once.

use crate::domain::Domain;
use crate::error::{Result, UnknownIn};
use crate::project::Project;
use crate::project::select::{Many, resolve};
use crate::store::Store;

/// Where a command looks for the domains a selection names.
#[derive(Clone, Copy)]
pub enum Among<'a> {
    /// The project's domains (`clusters/<domain>/`): a command that renders.
    Project(&'a Project),
    /// The store's domains: a command that reads what was recorded (`project`: whether a
    /// project is there too, for the message).
    Store { store: &'a Store, project: bool },
    /// Domains a command read from elsewhere (a repository's folders, a matrix's
    /// columns).
    Listed(&'a [Domain]),
}

/// The domains a fleet selection names among `among`, in name order; `None` for one
/// plain `--domain` or none, which take the one-domain rule
/// ([`crate::project::select::select`]).
///
/// # Errors
/// A name that fails lok8s's rule, a name not known there, a glob that matches none.
pub fn select(among: Among<'_>, many: Many<'_>) -> Result<Option<Vec<Domain>>> {
    if !many.is_many() {
        return Ok(None);
    }
    select_in(among, many).map(Some)
}

/// [`select`] for a command that always covers a fleet: no selection is every domain.
///
/// # Errors
/// As [`select`].
pub fn select_in(among: Among<'_>, many: Many<'_>) -> Result<Vec<Domain>> {
    let all = Many {
        patterns: many.patterns,
        all: many.all || many.patterns.is_empty(),
    };
    match among {
        Among::Project(project) => resolve(&project.domains(), all, |d| UnknownIn::Project {
            spec: project.domain_dir(d).join("cluster.lok8s.yaml"),
        }),
        Among::Store { store, project } => resolve(&store.domains(), all, |_| UnknownIn::Store {
            store: store.root().to_path_buf(),
            project,
        }),
        Among::Listed(known) => resolve(known, all, |_| UnknownIn::Nowhere),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<Domain> {
        ["air-1", "air-2", "fsn-1", "hel-1"]
            .iter()
            .map(|d| Domain::parse(d).unwrap())
            .collect()
    }

    fn many(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| p.to_string()).collect()
    }

    fn names(domains: &[Domain]) -> Vec<&str> {
        domains.iter().map(Domain::as_str).collect()
    }

    #[test]
    fn one_plain_domain_or_none_is_not_a_fleet() {
        let known = known();
        for patterns in [&[][..], &["air-1"][..]] {
            let patterns = many(patterns);
            let m = Many {
                patterns: &patterns,
                all: false,
            };
            assert_eq!(select(Among::Listed(&known), m).unwrap(), None);
        }
    }

    #[test]
    fn globs_and_names_give_each_domain_once_in_name_order() {
        let known = known();
        let patterns = many(&["fsn-1", "air-*", "air-2"]);
        let m = Many {
            patterns: &patterns,
            all: false,
        };
        let got = select(Among::Listed(&known), m).unwrap().unwrap();
        assert_eq!(names(&got), ["air-1", "air-2", "fsn-1"]);
    }

    #[test]
    fn a_command_over_the_fleet_takes_every_domain_without_a_selection() {
        let known = known();
        let m = Many {
            patterns: &[],
            all: false,
        };
        let got = select_in(Among::Listed(&known), m).unwrap();
        assert_eq!(names(&got), ["air-1", "air-2", "fsn-1", "hel-1"]);
        let one = ["hel-1".to_string()];
        let m = Many {
            patterns: &one,
            all: false,
        };
        assert_eq!(
            names(&select_in(Among::Listed(&known), m).unwrap()),
            ["hel-1"]
        );
    }

    #[test]
    fn unknown_names_and_empty_globs_are_errors_with_the_closest_name() {
        let known = known();
        let typo = ["air-3".to_string(), "fsn-1".to_string()];
        let m = Many {
            patterns: &typo,
            all: false,
        };
        let e = select(Among::Listed(&known), m).unwrap_err().to_string();
        assert!(e.contains("unknown domain 'air-3'"), "{e}");
        assert!(e.contains("did you mean 'air-1'"), "{e}");
        let glob = ["ams-*".to_string()];
        let m = Many {
            patterns: &glob,
            all: false,
        };
        let e = select(Among::Listed(&known), m).unwrap_err().to_string();
        assert!(
            e.contains("--domain 'ams-*' matches no domain known here"),
            "{e}"
        );
        let bad = ["bad/domain".to_string(), "x".to_string()];
        let m = Many {
            patterns: &bad,
            all: false,
        };
        assert!(matches!(
            select(Among::Listed(&known), m),
            Err(crate::Error::InvalidDomain(_))
        ));
    }
}
