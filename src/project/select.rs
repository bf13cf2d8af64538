//! The one domain-selection rule of every command.
//!
//! 1. `--domain D`, then `DOMAIN_NAME`, then `clusters/.active` (lok8s's order);
//! 2. else `lok8s.dev` (lok8s's default) when the project or the store has it;
//! 3. else, for a command that reads only the snapshot store (`log`, `report`,
//!    `snapshots show`, `diff` of snapshot references), the store's only domain;
//! 4. else an error that says nothing selected a domain and lists the known ones.
//!
//! A selected domain that neither the project nor the store knows is an error with a
//! "did you mean" and the list of known domains. When a store-only command picked a
//! domain without `--domain` although the store holds several, [`Selected::note`] says
//! which one and why.
//!
//! The fleet commands also take several domains ([`Many`], [`resolve`]): `-A` (every
//! domain of the project), `--domain` repeated, or a glob (`'prod-*'`, `?`). The form
//! decides: `-A`, a glob or two `--domain`s are a fleet (the output leads with the
//! domain), however many domains match; one plain `--domain` (or none) is the rule above.

use super::{DomainKind, Project};
use crate::domain::Domain;
use crate::error::{DomainError, Result, UnknownIn};
use std::path::Path;

/// What selected the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Flag,
    Env,
    Active,
    Default,
    OnlyInStore,
}

impl Origin {
    fn describe(self) -> &'static str {
        match self {
            Origin::Flag => "--domain",
            Origin::Env => "DOMAIN_NAME",
            Origin::Active => "clusters/.active",
            Origin::Default => "lok8s's default",
            Origin::OnlyInStore => "the only domain in the store",
        }
    }
}

/// A selected domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub domain: Domain,
    pub origin: Origin,
    /// Which domain was chosen, when the choice was not obvious.
    pub note: Option<String>,
}

/// Where domains are known: the project (`clusters/<d>/`) and, for the commands that read
/// the store, the store's domains.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    pub project: Option<&'a Project>,
    /// `Some` for store-only commands: the domains that have a journal, and the store.
    pub store: Option<(&'a [Domain], &'a Path)>,
}

/// Selects the domain (rule in the module documentation).
///
/// lok8s's notices on the way (`notice: using DOMAIN_NAME=…`, an invalid
/// `clusters/.active`) are added to `notices`, to print as they are, also when the
/// selection fails.
///
/// # Errors
/// [`Error::InvalidDomain`] for a name that fails lok8s's rule, [`Error::Domain`] when
/// none is selected or the selected one is unknown.
pub fn select(
    known: Known<'_>,
    flag: Option<&str>,
    env: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<Selected> {
    let store_domains: &[Domain] = known.store.map_or(&[], |(d, _)| d);
    let in_project = |d: &Domain| {
        known
            .project
            .is_some_and(|p| !matches!(p.domain_kind(d), DomainKind::Missing { .. }))
    };
    let in_store = |d: &Domain| store_domains.contains(d);
    let default = Domain::default_domain();
    let (domain, origin) = if let Some(d) = flag {
        (Domain::parse(d)?, Origin::Flag)
    } else {
        let active = known.project.and_then(|p| p.active_domain(notices));
        if let Some(env) = env.filter(|e| !e.is_empty()) {
            if let Some(active) = active.as_deref().filter(|a| *a != env) {
                notices.push(format!(
                    "notice: using DOMAIN_NAME={env} (env); the active domain is '{active}' — pass --domain or unset DOMAIN_NAME to switch"
                ));
            }
            (Domain::parse(env)?, Origin::Env)
        } else if let Some(active) = active {
            (active, Origin::Active)
        } else if in_project(&default) || in_store(&default) {
            (default, Origin::Default)
        } else if let [only] = store_domains {
            (only.clone(), Origin::OnlyInStore)
        } else {
            return Err(nothing_selected(known).into());
        }
    };
    if !in_project(&domain) && !in_store(&domain) {
        return Err(unknown(known, &domain, origin).into());
    }
    let note = match (known.store, origin) {
        (Some((domains, _)), Origin::Env | Origin::Active | Origin::Default)
            if domains.iter().any(|d| *d != domain) =>
        {
            Some(format!(
                "domain {domain} (from {}); the store also holds {} — pass --domain to choose",
                origin.describe(),
                list(domains.iter().filter(|d| **d != domain))
            ))
        }
        _ => None,
    };
    Ok(Selected {
        domain,
        origin,
        note,
    })
}

/// Several domains: `--domain` (repeatable, each a name or a glob) and `-A`.
#[derive(Debug, Clone, Copy)]
pub struct Many<'a> {
    pub patterns: &'a [String],
    pub all: bool,
}

impl Many<'_> {
    /// Whether this is a fleet selection (`-A`, a glob, or two `--domain`s or more)
    /// rather than the one-domain rule.
    pub fn is_many(&self) -> bool {
        self.all || self.patterns.len() > 1 || self.patterns.iter().any(|p| is_glob(p))
    }
}

/// Whether `--domain`'s value is a glob: `*` (any run of characters) or `?` (one).
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

/// Whether `name` matches the glob `pattern` (`*` any run, `?` one character, the rest
/// literally; the whole name).
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut re = String::from("^");
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    re.push('$');
    regex::Regex::new(&re).is_ok_and(|re| re.is_match(name))
}

/// The domains a fleet selection names among `known` (the project's domains), in name
/// order, each once: every one for `-A`, else those a pattern names or matches.
///
/// `place` says where an unknown name was looked for (the project: lok8s's message with its
/// spec; the store, for `log`).
///
/// # Errors
/// [`Error::InvalidDomain`](crate::Error::InvalidDomain) for a name that fails lok8s's
/// rule; [`DomainError::Unknown`] for a name the project does not have and
/// [`DomainError::NoMatch`] for a glob that matches none, both with a "did you mean".
pub fn resolve(
    known: &[Domain],
    many: Many<'_>,
    place: impl Fn(&Domain) -> UnknownIn,
) -> Result<Vec<Domain>> {
    let mut chosen = vec![false; known.len()];
    for pattern in many.patterns {
        if is_glob(pattern) {
            let mut any = false;
            for (i, d) in known.iter().enumerate() {
                if glob_matches(pattern, d.as_str()) {
                    chosen[i] = true;
                    any = true;
                }
            }
            if !any {
                return Err(DomainError::NoMatch {
                    pattern: pattern.clone(),
                    place: place(&Domain::default_domain()),
                    suggestion: crate::util::suggest::closest(pattern.as_str(), known)
                        .map(|d| d.to_string()),
                    known: names(known),
                }
                .into());
            }
            continue;
        }
        let domain = Domain::parse(pattern)?;
        let Some(i) = known.iter().position(|d| *d == domain) else {
            return Err(DomainError::Unknown {
                place: place(&domain),
                origin: None,
                suggestion: crate::util::suggest::closest(domain.as_str(), known)
                    .map(|d| d.to_string()),
                known: names(known),
                domain: domain.to_string(),
            }
            .into());
        };
        chosen[i] = true;
    }
    Ok(known
        .iter()
        .zip(chosen)
        .filter(|(_, c)| many.all || *c)
        .map(|(d, _)| d.clone())
        .collect())
}

/// Every domain the project or the store knows, sorted, once each.
pub fn known_domains(known: Known<'_>) -> Vec<Domain> {
    let mut all: Vec<Domain> = known.project.map(Project::domains).unwrap_or_default();
    if let Some((domains, _)) = known.store {
        all.extend(domains.iter().cloned());
    }
    all.sort();
    all.dedup();
    all
}

/// Names a note lists before "and N more": a fleet of a thousand is counted.
const LISTED: usize = 10;

fn list<'a>(names: impl Iterator<Item = &'a Domain>) -> String {
    let names: Vec<&str> = names.map(Domain::as_str).collect();
    match names.len().checked_sub(LISTED) {
        Some(more) if more > 0 => format!("{} and {more} more", names[..LISTED].join(", ")),
        _ => names.join(", "),
    }
}

fn names(domains: &[Domain]) -> Vec<String> {
    domains.iter().map(ToString::to_string).collect()
}

fn nothing_selected(known: Known<'_>) -> DomainError {
    let why = match known.project {
        Some(_) => {
            "no --domain, no DOMAIN_NAME, no clusters/.active, and no clusters/lok8s.dev (lok8s's default)"
        }
        None => {
            "no --domain, no DOMAIN_NAME, no lok8s project for clusters/.active, and the store does not hold exactly one domain"
        }
    };
    DomainError::NoneSelected {
        why,
        known: names(&known_domains(known)),
    }
}

fn unknown(known: Known<'_>, domain: &Domain, origin: Origin) -> DomainError {
    let all = known_domains(known);
    let place = match (known.project, known.store) {
        (Some(p), None) => UnknownIn::Project {
            spec: p.domain_dir(domain).join("cluster.lok8s.yaml"),
        },
        (_, Some((_, store))) => UnknownIn::Store {
            store: store.to_path_buf(),
            project: known.project.is_some(),
        },
        (None, None) => UnknownIn::Nowhere,
    };
    DomainError::Unknown {
        domain: domain.to_string(),
        place,
        origin: (origin != Origin::Flag).then(|| origin.describe()),
        suggestion: crate::util::suggest::closest(domain, &all).map(|d| d.to_string()),
        known: names(&all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn project(domains: &[&str], active: Option<&str>) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        for d in domains {
            fs::create_dir_all(dir.path().join("clusters").join(d)).unwrap();
            fs::write(
                dir.path()
                    .join("clusters")
                    .join(d)
                    .join("cluster.lok8s.yaml"),
                "kind: Lo\n",
            )
            .unwrap();
        }
        fs::create_dir_all(dir.path().join("clusters")).unwrap();
        if let Some(a) = active {
            fs::write(dir.path().join("clusters/.active"), a).unwrap();
        }
        let p = Project::at(dir.path());
        (dir, p)
    }

    #[test]
    fn flag_env_active_default_then_error() {
        let mut notes = Vec::new();
        let (_d, p) = project(&["a.dev", "b.dev"], Some("b.dev\n"));
        let known = Known {
            project: Some(&p),
            store: None,
        };
        let s = select(known, Some("a.dev"), Some("b.dev"), &mut notes).unwrap();
        assert_eq!((s.domain.as_str(), s.origin), ("a.dev", Origin::Flag));
        let s = select(known, None, Some("a.dev"), &mut notes).unwrap();
        assert_eq!(s.origin, Origin::Env);
        assert_eq!(notes.len(), 1);
        let s = select(known, None, None, &mut notes).unwrap();
        assert_eq!((s.domain.as_str(), s.origin), ("b.dev", Origin::Active));
        let (_d, p) = project(&["a.dev", "b.dev"], None);
        let known = Known {
            project: Some(&p),
            store: None,
        };
        let Err(crate::Error::Domain(m)) = select(known, None, None, &mut notes) else {
            panic!()
        };
        let m = m.to_string();
        assert_eq!(
            m,
            "no domain selected: no --domain, no DOMAIN_NAME, no clusters/.active, and no clusters/lok8s.dev (lok8s's default)\nknown domains: a.dev, b.dev — pass --domain D"
        );
        let Err(crate::Error::Domain(m)) = select(known, Some("a.dve"), None, &mut notes) else {
            panic!()
        };
        let m = m.to_string();
        assert!(
            m.ends_with("\ndid you mean 'a.dev'? known domains: a.dev, b.dev"),
            "{m}"
        );
        assert!(m.starts_with("inventory: cluster spec not found: "), "{m}");
    }

    fn many<'a>(patterns: &'a [String], all: bool) -> Many<'a> {
        Many { patterns, all }
    }

    fn resolved(known: &[Domain], patterns: &[&str], all: bool) -> Result<Vec<String>> {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        let spec = |d: &Domain| UnknownIn::Project {
            spec: Path::new("/p/clusters").join(d.as_str()),
        };
        resolve(known, many(&patterns, all), spec)
            .map(|v| v.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn globs_match_whole_names_with_star_and_question_mark() {
        assert!(glob_matches("prod-*", "prod-eu.dev"));
        assert!(glob_matches("*", "a.dev"));
        assert!(glob_matches("a?.dev", "ab.dev"));
        assert!(!glob_matches("a?.dev", "a.dev"));
        assert!(!glob_matches("prod-*", "x-prod-eu.dev"));
        // `.` and other characters are literal, not regex.
        assert!(!glob_matches("a.dev", "axdev"));
        assert!(!glob_matches("a.*", "ab"));
        assert!(glob_matches("*.dev", ".dev"));
        assert!(glob_matches("[a]*", "[a]x"));
        assert!(!glob_matches("[a]*", "ax"));
    }

    #[test]
    fn several_domains_resolve_in_name_order_once_each() {
        let known: Vec<Domain> = ["a.dev", "b.dev", "prod-1.dev", "prod-2.dev"]
            .iter()
            .map(|d| crate::domain::d(d))
            .collect();
        assert_eq!(resolved(&known, &[], true).unwrap().len(), 4);
        assert_eq!(
            resolved(&known, &["prod-*", "b.dev", "prod-1.dev"], false).unwrap(),
            ["b.dev", "prod-1.dev", "prod-2.dev"]
        );
        assert!(!many(&["x".into()], false).is_many());
        assert!(many(&["x*".into()], false).is_many());
        assert!(many(&["x".into(), "y".into()], false).is_many());
        assert!(many(&[], true).is_many());
        assert!(!many(&[], false).is_many());
        let Err(crate::Error::Domain(e)) = resolved(&known, &["a.dev", "b.dve"], false) else {
            panic!()
        };
        assert_eq!(
            e.to_string(),
            "inventory: cluster spec not found: /p/clusters/b.dve\ndid you mean 'b.dev'? known domains: a.dev, b.dev, prod-1.dev, prod-2.dev"
        );
        let Err(crate::Error::Domain(e)) = resolved(&known, &["prd-*"], false) else {
            panic!()
        };
        assert_eq!(
            e.to_string(),
            "--domain 'prd-*' matches no domain of the project\nknown domains: a.dev, b.dev, prod-1.dev, prod-2.dev"
        );
        assert!(matches!(
            resolved(&known, &["a.dev", "../etc"], false),
            Err(crate::Error::InvalidDomain(_))
        ));
    }

    /// A store of a thousand domains is counted in the note, not listed on one line.
    #[test]
    fn the_ambiguity_note_lists_a_few_domains_and_counts_the_rest() {
        let many: Vec<Domain> = (0..25)
            .map(|i| crate::domain::d(&format!("d{i:02}.dev")))
            .collect();
        let known = Known {
            project: None,
            store: Some((&many, Path::new("/s"))),
        };
        let s = select(known, None, Some("d00.dev"), &mut Vec::new()).unwrap();
        let note = s.note.unwrap();
        assert!(
            note.contains("the store also holds d01.dev, d02.dev,"),
            "{note}"
        );
        assert!(
            note.contains("d10.dev and 14 more — pass --domain"),
            "{note}"
        );
        assert!(!note.contains("d11.dev"), "{note}");
    }

    #[test]
    fn store_only_commands_take_the_only_domain_and_say_when_ambiguous() {
        let mut notes = Vec::new();
        let one = [crate::domain::d("x.dev")];
        let store = Path::new("/s");
        let known = Known {
            project: None,
            store: Some((&one, store)),
        };
        let s = select(known, None, None, &mut notes).unwrap();
        assert_eq!(
            (s.domain.as_str(), s.origin, s.note),
            ("x.dev", Origin::OnlyInStore, None)
        );
        let two = [crate::domain::d("x.dev"), crate::domain::d("y.dev")];
        let known = Known {
            project: None,
            store: Some((&two, store)),
        };
        let Err(crate::Error::Domain(m)) = select(known, None, None, &mut notes) else {
            panic!()
        };
        let m = m.to_string();
        assert!(m.contains("known domains: x.dev, y.dev"), "{m}");
        let s = select(known, None, Some("y.dev"), &mut notes).unwrap();
        assert_eq!(
            s.note.as_deref(),
            Some(
                "domain y.dev (from DOMAIN_NAME); the store also holds x.dev — pass --domain to choose"
            )
        );
        let Err(crate::Error::Domain(m)) = select(known, Some("y.dve"), None, &mut notes) else {
            panic!()
        };
        let m = m.to_string();
        assert_eq!(
            m,
            "unknown domain 'y.dve': no snapshots of it in /s\ndid you mean 'y.dev'? known domains: x.dev, y.dev"
        );
    }
}
