//! Leaf: a cluster domain name that passed lok8s's rule.
//!
//! The rule (`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`) is also the path-traversal guard: a
//! [`Domain`] is one path component, so the store, the project and a GitOps folder can
//! join it to their paths. It is checked once — from a flag, `DOMAIN_NAME`,
//! `clusters/.active`, a folder name, a store record or a Git path — and travels as this
//! type from there; nothing builds a path from an unchecked string.

use std::fmt;
use std::sync::LazyLock;

static DOMAIN_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*$").expect("valid regex"));

/// The domain when nothing selects one (lok8s's default).
pub const DEFAULT: &str = "lok8s.dev";

/// True when `name` passes lok8s's domain rule.
pub fn is_valid(name: &str) -> bool {
    DOMAIN_RE.is_match(name)
}

/// A checked cluster domain.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Domain(String);

impl Domain {
    /// `text` as a domain.
    ///
    /// # Errors
    /// [`crate::Error::InvalidDomain`] when it fails lok8s's rule.
    pub fn parse(text: &str) -> crate::Result<Domain> {
        Domain::new(text).ok_or_else(|| crate::Error::InvalidDomain(text.to_string()))
    }

    /// `text` as a domain, `None` when it fails the rule (a folder or file name that is
    /// not a domain is passed over, not an error).
    pub fn new(text: &str) -> Option<Domain> {
        is_valid(text).then(|| Domain(text.to_string()))
    }

    /// lok8s's default domain.
    pub fn default_domain() -> Domain {
        Domain(DEFAULT.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Domain {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Domain {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for Domain {
    fn as_ref(&self) -> &std::path::Path {
        self.0.as_ref()
    }
}

impl std::borrow::Borrow<str> for Domain {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<&str> for Domain {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl<'de> serde::Deserialize<'de> for Domain {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Domain, D::Error> {
        let text = String::deserialize(d)?;
        Domain::new(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid domain name '{text}'")))
    }
}

/// A domain written in a test.
#[cfg(test)]
pub(crate) fn d(text: &str) -> Domain {
    Domain::parse(text).expect("a valid domain in a test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_safe_path_component_is_a_domain() {
        for good in ["lok8s.dev", "a", "Prod_Lab.Example", "0-x"] {
            assert_eq!(Domain::parse(good).unwrap().as_str(), good);
        }
        for bad in [
            "", ".", "..", "../x", "a/b", "-a", ".hidden", "a b", "a\n", "é",
        ] {
            assert!(Domain::parse(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<Domain>(&format!("{bad:?}")).is_err());
        }
    }
}
