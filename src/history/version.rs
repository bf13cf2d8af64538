//! Ordering of addon and Kubernetes versions.
//!
//! Rules (documented in the README): a version is SemVer 2.0 with or without a leading `v`
//! (`1.20.1`, `v1.31.10`, `1.21.0-rc.1`); pre-releases sort below their release; build
//! metadata is ignored for ordering. Anything else cannot be ordered: two such versions are
//! only "equal" or "different" ([`Order::Unordered`]).

use std::cmp::Ordering;

/// How two versions relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Same text, or SemVer-equal.
    Equal,
    /// The second is newer.
    Upgrade,
    /// The second is older.
    Downgrade,
    /// Different, but at least one of them is not SemVer.
    Unordered,
}

/// Parses `text` as SemVer, allowing a leading `v`.
pub fn parse(text: &str) -> Option<semver::Version> {
    let t = text.strip_prefix(['v', 'V']).unwrap_or(text);
    semver::Version::parse(t).ok()
}

/// Compares `from` with `to`.
pub fn compare(from: &str, to: &str) -> Order {
    if from == to {
        return Order::Equal;
    }
    match (parse(from), parse(to)) {
        (Some(a), Some(b)) => match a.cmp_precedence(&b) {
            Ordering::Less => Order::Upgrade,
            Ordering::Greater => Order::Downgrade,
            Ordering::Equal => Order::Equal,
        },
        _ => Order::Unordered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each version is older than every later one: an upgrade to it, a downgrade back.
    fn ascending(versions: &[&str]) {
        for (i, older) in versions.iter().enumerate() {
            for newer in &versions[i + 1..] {
                assert_eq!(compare(older, newer), Order::Upgrade, "{older} → {newer}");
                assert_eq!(compare(newer, older), Order::Downgrade, "{newer} → {older}");
            }
        }
    }

    #[test]
    fn semver_with_or_without_v() {
        ascending(&["1.19.2", "v1.20.1", "1.31.9", "v1.31.10"]);
        assert_eq!(compare("1.2.3", "v1.2.3"), Order::Equal);
        assert_eq!(compare("1.2.3+build.1", "1.2.3"), Order::Equal);
    }

    #[test]
    fn prereleases_sort_below_their_release() {
        ascending(&[
            "1.20.9",
            "1.21.0-alpha",
            "1.21.0-beta",
            "1.21.0-rc.1",
            "1.21.0",
        ]);
    }

    #[test]
    fn non_semver_is_unordered_unless_identical() {
        assert_eq!(compare("1.19", "1.20"), Order::Unordered);
        assert_eq!(compare("latest", "stable"), Order::Unordered);
        assert_eq!(compare("2024-01", "2024-01"), Order::Equal);
        assert_eq!(compare("1.2.3", "main"), Order::Unordered);
    }
}
