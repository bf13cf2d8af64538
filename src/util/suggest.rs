//! "Did you mean": the one rule for every name a user can misspell (domains, drivers,
//! spec keys, addon names, addon directories).

/// The known name closest to `wanted`, when it is close: a Levenshtein distance of at most
/// a third of its length (at least 2), or `wanted` is a prefix of it.
///
/// Ties go to the first in `known`; `wanted` itself is never suggested.
pub fn closest<I, S>(wanted: &str, known: I) -> Option<S>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    known
        .into_iter()
        .filter(|k| k.as_ref() != wanted)
        .map(|k| (strsim::levenshtein(wanted, k.as_ref()), k))
        .filter(|(d, k)| {
            let k = k.as_ref();
            *d <= (k.chars().count() / 3).max(2) || (!wanted.is_empty() && k.starts_with(wanted))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn close_names_only() {
        let known = ["prod.acme.example", "lab.acme.example"];
        assert_eq!(
            closest("prod.acme.exmple", known),
            Some("prod.acme.example")
        );
        assert_eq!(closest("lab", known), Some("lab.acme.example"));
        assert_eq!(closest("zzz", known), None);
        assert_eq!(
            closest("kubeoen", ["lo", "kubeone", "capi", "kkp"]),
            Some("kubeone")
        );
        assert_eq!(closest("cilum", ["cilium", "cert-manager"]), Some("cilium"));
        assert_eq!(closest("nmae", ["name"]), Some("name"));
        assert_eq!(closest("region", ["name"]), None);
        assert_eq!(closest("name", ["name"]), None, "never itself");
        assert_eq!(closest("", ["name"]), None);
    }
}
