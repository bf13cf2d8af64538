//! `clinv fleet --against`: what differs between two selections of the fleet.
//!
//! "What differs between the two sites?" is one command: the matrix (from any source —
//! project, store, live clusters, a GitOps repository) and two domain selections give,
//! per addon, the versions each side runs and the domains running each. An addon is
//! shown when the two sides do not run the same **set** of versions (absence counts as
//! one: an addon on one side only differs); a mix that both sides share (`v1.18.0` and
//! `v1.20.1` on each) is the same. Unlike `--differs`, which compares every cell with its
//! row's majority, it needs no majority: cert-manager at 5/5/4/1 across three sites
//! compares as cleanly as at 15/0.

use super::{Left, Matrix};
use crate::domain::Domain;
use crate::error::{ArgumentError, Result, UnknownIn};
use crate::history::version;
use crate::project::select::{self, Many};
use std::collections::{BTreeMap, BTreeSet};

/// What a side of the comparison has of an addon in one domain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Held {
    /// Deployed at this chart version.
    Version(String),
    /// Deployed without a chart version (a raw folder, a target).
    Unversioned,
    /// Not deployed.
    Absent,
}

/// One thing a side holds of an addon, and the domains that hold it (name order).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Running {
    pub held: Held,
    pub domains: Vec<String>,
}

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// How the user chose it: the patterns as given, or `None` for the rest of the
    /// fleet (no `--domain`, or `-A`).
    pub selection: Option<Vec<String>>,
    /// Its domains with a column in the matrix, in name order.
    pub domains: Vec<String>,
    /// Its domains without one (deploy domains, domains that could not be read).
    pub left: Vec<Left>,
}

/// An addon whose two sides differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Differs {
    pub addon: String,
    pub category: Option<String>,
    /// What each side holds: versions in SemVer order (text order for the others), then
    /// no version, then absent.
    pub sides: [Vec<Running>; 2],
}

/// The comparison of two selections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub source: super::Source,
    pub sides: [Side; 2],
    /// The addons whose sides differ, in the matrix's row order.
    pub rows: Vec<Differs>,
    /// The addons both sides run alike (left out of `rows`), in row order.
    pub same: Vec<String>,
    /// `--addon` named an addon no domain of the matrix has.
    pub unknown_addon: Option<ArgumentError>,
}

impl Comparison {
    /// The exit code, as `diff`'s: 0 same, 1 different, 2 a domain of a side not read
    /// (16: a cluster, `not_read`).
    pub fn exit_code(&self, not_read: bool) -> i32 {
        use crate::error::exit;
        match (self.failed(), not_read, self.differs()) {
            (true, _, _) => exit::diff::ERROR,
            (_, true, _) => exit::NOT_LIVE,
            (_, _, true) => exit::diff::DIFFERENT,
            _ => exit::diff::SAME,
        }
    }

    /// Whether anything differs (`diff`'s exit 1).
    pub fn differs(&self) -> bool {
        !self.rows.is_empty()
    }

    /// A domain of either side could not be read (a spec that does not parse, a damaged
    /// snapshot, another domain's inventory on its cluster): the answer is incomplete.
    pub fn failed(&self) -> bool {
        self.sides
            .iter()
            .flat_map(|s| &s.left)
            .any(|l| l.failed || l.other_domain)
    }
}

/// The two selections as given: `--domain`/`-A` (side one; none or `-A`: the rest of the
/// fleet) and `--against` (side two).
#[derive(Debug, Clone, Copy)]
pub struct Selections<'a> {
    pub one: Many<'a>,
    pub against: &'a [String],
    /// `--addon`: only this addon's row (a side that does not run it shows `-`).
    pub addon: Option<&'a str>,
}

/// Resolves both selections among the domains `matrix` knows (those with a column and
/// those left out), then compares them.
///
/// `place` says where an unknown name was looked for, as for every selection.
///
/// # Errors
/// An unknown name or a glob that matches nothing (as every selection); sides that share
/// a domain ([`ArgumentError::SidesOverlap`]); a side without any domain that has an
/// inventory ([`ArgumentError::EmptySide`]).
pub fn compare(
    matrix: &Matrix,
    selections: Selections<'_>,
    place: impl Fn(&Domain) -> UnknownIn,
) -> Result<Comparison> {
    let known = matrix.known();
    let against = Many {
        patterns: selections.against,
        all: false,
    };
    let two = select::resolve(&known, against, &place)?;
    let rest = selections.one.all || selections.one.patterns.is_empty();
    let one = match rest {
        true => known.iter().filter(|d| !two.contains(d)).cloned().collect(),
        false => select::resolve(&known, selections.one, &place)?,
    };
    let shared: Vec<&str> = one
        .iter()
        .filter(|d| two.contains(d))
        .map(Domain::as_str)
        .collect();
    if !shared.is_empty() {
        return Err(ArgumentError::SidesOverlap {
            count: shared.len(),
            domains: listed(&shared),
        }
        .into());
    }
    let one = side(
        matrix,
        (!rest).then(|| selections.one.patterns.to_vec()),
        &one,
    )?;
    let two = side(matrix, Some(selections.against.to_vec()), &two)?;
    let mut c = between(matrix, [one, two], selections.addon);
    c.unknown_addon = selections.addon.and_then(|name| matrix.unknown(name));
    Ok(c)
}

/// Up to this many names in a message, then "and N more".
const LISTED: usize = 10;

fn listed(names: &[&str]) -> String {
    let mut out = names
        .iter()
        .take(LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED {
        out.push_str(&format!(" and {} more", names.len() - LISTED));
    }
    out
}

/// The side of `domains`: those with a column, and those left out.
fn side(matrix: &Matrix, selection: Option<Vec<String>>, domains: &[Domain]) -> Result<Side> {
    let chosen: BTreeSet<&str> = domains.iter().map(Domain::as_str).collect();
    let side = Side {
        domains: (matrix.domains.iter())
            .filter(|d| chosen.contains(d.as_str()))
            .cloned()
            .collect(),
        left: (matrix.left.iter())
            .filter(|l| chosen.contains(l.domain.as_str()))
            .cloned()
            .collect(),
        selection,
    };
    if side.domains.is_empty() {
        let why = match side.left.as_slice() {
            [] => "it selects no domain".to_string(),
            left => {
                let names: Vec<&str> = left.iter().map(|l| l.domain.as_str()).collect();
                format!("no inventory read: {}", listed(&names))
            }
        };
        return Err(ArgumentError::EmptySide {
            side: label(&side),
            why,
        }
        .into());
    }
    Ok(side)
}

/// A side as messages and headers name it: its patterns (`air-*`, `a, b`), or `the rest`.
pub fn label(side: &Side) -> String {
    match &side.selection {
        None => "the rest".to_string(),
        Some(patterns) if patterns.len() > 3 => {
            format!("{}, +{} more", patterns[..3].join(", "), patterns.len() - 3)
        }
        Some(patterns) => patterns.join(", "),
    }
}

/// The comparison of two sides already resolved (of every addon, or of `addon` only): a
/// pure function of the matrix.
pub fn between(matrix: &Matrix, sides: [Side; 2], addon: Option<&str>) -> Comparison {
    let columns = sides.clone().map(|s| {
        let chosen: BTreeSet<String> = s.domains.into_iter().collect();
        (matrix.domains.iter().enumerate())
            .filter(|(_, d)| chosen.contains(*d))
            .map(|(c, d)| (c, d.as_str()))
            .collect::<Vec<_>>()
    });
    let (mut rows, mut same) = (Vec::new(), Vec::new());
    for row in matrix
        .rows
        .iter()
        .filter(|r| addon.is_none_or(|a| r.addon == a))
    {
        let held = columns.clone().map(|cols| {
            let mut by: BTreeMap<Held, Vec<String>> = BTreeMap::new();
            for (c, domain) in cols {
                let held = match row.cells.get(&c) {
                    Some(cell) => cell
                        .version
                        .clone()
                        .map_or(Held::Unversioned, Held::Version),
                    None => Held::Absent,
                };
                by.entry(held).or_default().push(domain.to_string());
            }
            ordered(by)
        });
        let set = |side: &[Running]| side.iter().map(|r| r.held.clone()).collect::<BTreeSet<_>>();
        let absent = |side: &[Running]| side.iter().all(|r| r.held == Held::Absent);
        if absent(&held[0]) && absent(&held[1]) {
            continue;
        }
        if set(&held[0]) == set(&held[1]) {
            same.push(row.addon.clone());
            continue;
        }
        rows.push(Differs {
            addon: row.addon.clone(),
            category: row.category.clone(),
            sides: held,
        });
    }
    Comparison {
        source: matrix.source,
        sides,
        rows,
        same,
        unknown_addon: None,
    }
}

/// A side's holdings in reading order: versions by SemVer precedence (text order where
/// one is not SemVer), then no version, then absent.
fn ordered(by: BTreeMap<Held, Vec<String>>) -> Vec<Running> {
    let mut out: Vec<Running> = by
        .into_iter()
        .map(|(held, domains)| Running { held, domains })
        .collect();
    out.sort_by(|a, b| match (&a.held, &b.held) {
        (Held::Version(x), Held::Version(y)) => match (version::parse(x), version::parse(y)) {
            (Some(p), Some(q)) => p.cmp_precedence(&q).then_with(|| x.cmp(y)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => x.cmp(y),
        },
        (a, b) => a.cmp(b),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;

    /// cert-manager at 5/5/4/1 over three sites of five (the case), cilium the
    /// same everywhere, a glue folder on `air` only, metrics-server on both sites in the
    /// same mix; `nbg-9` is a deploy domain.
    fn fleet() -> Matrix {
        let sites = ["air", "fsn", "nbg"].map(|site| (1..=5).map(move |n| format!("{site}-{n}")));
        let domains: Vec<String> = sites.into_iter().flatten().collect();
        let names: Vec<&str> = domains.iter().map(String::as_str).collect();
        let certs = |c: usize| match c {
            0..5 => "v1.18.0",
            5..10 => "v1.19.0",
            14 => "v1.21.0-rc.1",
            _ => "v1.20.1",
        };
        let metrics = |c: usize| match c.is_multiple_of(5) {
            true => "3.12.1",
            false => "3.12.2",
        };
        let every = |version: &dyn Fn(usize) -> &'static str| {
            (0..15).map(|c| (c, Some(version(c)))).collect::<Vec<_>>()
        };
        let rows = [
            ("cilium", every(&|_| "1.19.2")),
            ("cert-manager", every(&certs)),
            ("glue", (0..5).map(|c| (c, None)).collect()),
            ("metrics-server", every(&metrics)),
        ];
        let mut m = super::super::fixture(Source::Project, &names, &rows);
        m.left = vec![Left::new(
            &crate::domain::d("nbg-9"),
            "a deploy domain".into(),
        )];
        m
    }

    fn compared(one: &[&str], against: &[&str]) -> Result<Comparison> {
        let one: Vec<String> = one.iter().map(|s| s.to_string()).collect();
        let against: Vec<String> = against.iter().map(|s| s.to_string()).collect();
        let selections = Selections {
            one: Many {
                patterns: &one,
                all: false,
            },
            against: &against,
            addon: None,
        };
        compare(&fleet(), selections, |_| UnknownIn::Nowhere)
    }

    fn held(c: &Comparison, addon: &str, side: usize) -> Vec<(Held, usize)> {
        let row = c.rows.iter().find(|r| r.addon == addon).unwrap();
        row.sides[side]
            .iter()
            .map(|r| (r.held.clone(), r.domains.len()))
            .collect()
    }

    fn v(text: &str) -> Held {
        Held::Version(text.into())
    }

    #[test]
    fn two_sites_differ_in_what_they_run_and_what_only_one_has() {
        let c = compared(&["air-*"], &["nbg-*"]).unwrap();
        let names: Vec<&str> = c.rows.iter().map(|r| r.addon.as_str()).collect();
        // cilium alike; metrics-server the same mix (one 3.12.1 on each site).
        assert_eq!(names, ["cert-manager", "glue"]);
        assert_eq!(c.same, ["cilium", "metrics-server"]);
        assert!(c.differs());
        assert_eq!(held(&c, "cert-manager", 0), [(v("v1.18.0"), 5)]);
        // SemVer order: the release candidate of 1.21 after 1.20.1.
        assert_eq!(
            held(&c, "cert-manager", 1),
            [(v("v1.20.1"), 4), (v("v1.21.0-rc.1"), 1)]
        );
        assert_eq!(held(&c, "glue", 0), [(Held::Unversioned, 5)]);
        assert_eq!(held(&c, "glue", 1), [(Held::Absent, 5)]);
        // The deploy domain of the glob is on its side, left out.
        assert_eq!(c.sides[1].left[0].domain, "nbg-9");
        assert_eq!(c.sides[1].domains.len(), 5);
    }

    #[test]
    fn sides_running_the_same_compare_equal() {
        let c = compared(&["air-2", "air-3"], &["air-4"]).unwrap();
        assert!(!c.differs(), "{:?}", c.rows);
        assert_eq!(c.same.len(), 4);
        assert_eq!(label(&c.sides[0]), "air-2, air-3");
    }

    #[test]
    fn without_a_first_selection_the_other_side_is_the_rest_of_the_fleet() {
        let c = compared(&[], &["nbg-5"]).unwrap();
        assert_eq!(c.sides[0].selection, None);
        assert_eq!(c.sides[0].domains.len(), 14);
        assert_eq!(label(&c.sides[0]), "the rest");
        let row = held(&c, "cert-manager", 0);
        assert_eq!(
            row,
            [(v("v1.18.0"), 5), (v("v1.19.0"), 5), (v("v1.20.1"), 4)]
        );
        assert_eq!(held(&c, "cert-manager", 1), [(v("v1.21.0-rc.1"), 1)]);
        // glue: on five of the rest, absent from nine of them and from nbg-5.
        assert_eq!(
            held(&c, "glue", 0),
            [(Held::Unversioned, 5), (Held::Absent, 9)]
        );
    }

    /// `fleet --domain X` without `--against`: [`Matrix::only`] of the selection.
    fn narrowed(many: Many<'_>) -> Matrix {
        let m = fleet();
        let keep = crate::fleet::select_in(crate::fleet::Among::Listed(&m.known()), many);
        m.only(&keep.unwrap())
    }

    #[test]
    fn a_selection_keeps_its_columns_renumbered_and_its_left() {
        let patterns = ["nbg-4".to_string(), "nbg-*".to_string()];
        let many = Many {
            patterns: &patterns[1..],
            all: false,
        };
        let m = narrowed(many);
        assert_eq!(m.domains, ["nbg-1", "nbg-2", "nbg-3", "nbg-4", "nbg-5"]);
        assert_eq!(m.left.len(), 1);
        // glue is on air only: its row goes.
        let names: Vec<&str> = m.rows.iter().map(|r| r.addon.as_str()).collect();
        assert_eq!(names, ["cilium", "cert-manager", "metrics-server"]);
        assert_eq!(m.rows[1].cells[&4].version.as_deref(), Some("v1.21.0-rc.1"));
        let many = Many {
            patterns: &patterns[..1],
            all: false,
        };
        let m = narrowed(many);
        assert_eq!((m.domains.len(), m.left.len()), (1, 0));
    }

    #[test]
    fn overlapping_empty_and_unknown_sides_are_refused() {
        let e = compared(&["air-*"], &["air-1", "fsn-1"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--against: 1 domain is on both sides of the comparison (air-1); choose selections that share no domain (without --domain, --against compares with the rest of the fleet)"
        );
        let e = compared(&["air-*"], &["nbg-9"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "nbg-9: no domain of this side has an inventory to compare (no inventory read: nbg-9)"
        );
        let e = compared(&["air-*"], &["zrh-*"]).unwrap_err().to_string();
        assert!(e.contains("'zrh-*' matches no domain"), "{e}");
    }
}
