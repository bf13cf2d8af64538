//! `oci://` references, checked against the distribution spec's grammar.
//!
//! `oci://REGISTRY[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`, checked against the
//! distribution spec's grammar before anything is sent (a repository is lower case; a tag
//! at most 128 characters of `[A-Za-z0-9_.-]`, not starting with `.` or `-`; a digest
//! `sha256:` and 64 lower-case hex digits).

pub use crate::error::OciReferenceError as ReferenceError;

/// Where an artifact is pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    pub repository: String,
    pub tag: String,
    /// `@sha256:…`: this manifest, whatever the tag names now (reading only; a push
    /// takes a tag).
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `oci://host[:port]/repo[:tag][@sha256:hex]` (tag `latest` when none).
    ///
    /// # Errors
    /// A [`ReferenceError`] naming the part that is wrong.
    pub fn parse(text: &str) -> Result<Reference, ReferenceError> {
        let rest = text.strip_prefix("oci://").ok_or(ReferenceError::Scheme)?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) if valid_digest(digest) => (rest, Some(digest.to_string())),
            Some(_) => return Err(ReferenceError::Digest),
            None => (rest, None),
        };
        let (registry, path) = rest.split_once('/').ok_or(ReferenceError::NoRepository)?;
        if registry.is_empty()
            || registry
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ReferenceError::NoRegistry);
        }
        let last = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last..].split_once(':') {
            Some((_, tag)) => (&path[..last + path[last..].len() - tag.len() - 1], tag),
            None => (path, "latest"),
        };
        if repository.is_empty() {
            return Err(ReferenceError::NoRepository);
        }
        if !valid_repository(repository) {
            return Err(ReferenceError::Repository(repository.to_string()));
        }
        if !valid_tag(tag) {
            return Err(ReferenceError::Tag(tag.to_string()));
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag: tag.to_string(),
            digest,
        })
    }

    /// What names the manifest in the registry's API: the digest, else the tag.
    pub fn manifest(&self) -> &str {
        self.digest.as_deref().unwrap_or(&self.tag)
    }

    /// `oci://registry/repository:tag`, or `…@sha256:…` when a digest names the manifest.
    pub fn shown(&self) -> String {
        match &self.digest {
            Some(d) => format!("{}@{d}", self.url()),
            None => format!("{}:{}", self.url(), self.tag),
        }
    }

    /// `registry/repository`, as cosign names a signed image.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// `oci://registry/repository` (no tag), as an `OCIRepository` names it.
    pub fn url(&self) -> String {
        format!("oci://{}/{}", self.registry, self.repository)
    }
}

/// The distribution spec's `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/…)*`.
fn valid_repository(name: &str) -> bool {
    name.len() <= 255
        && name.split('/').all(|part| {
            let b = part.as_bytes();
            let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            if !b.first().is_some_and(alnum) {
                return false;
            }
            let mut i = 0;
            while i < b.len() {
                if alnum(&b[i]) {
                    i += 1;
                    continue;
                }
                let end = match b[i] {
                    b'.' => i + 1,
                    b'_' if b.get(i + 1) == Some(&b'_') => i + 2,
                    b'_' => i + 1,
                    b'-' => i + b[i..].iter().take_while(|c| **c == b'-').count(),
                    _ => return false,
                };
                if !b.get(end).is_some_and(alnum) {
                    return false;
                }
                i = end;
            }
            true
        })
}

/// `sha256:` and 64 lower-case hex digits.
fn valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
pub fn valid_tag(tag: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-';
    !tag.is_empty() && tag.len() <= 128 && tag.bytes().all(ok) && !tag.starts_with(['.', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_as_the_distribution_spec_says() {
        let r = Reference::parse("oci://127.0.0.1:5000/fleet/prod.acme.example:v1").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_str()),
            ("127.0.0.1:5000", "fleet/prod.acme.example", "v1")
        );
        assert_eq!(r.url(), "oci://127.0.0.1:5000/fleet/prod.acme.example");
        let r = Reference::parse("oci://registry.example/inventories/prod").unwrap();
        assert_eq!(r.tag, "latest");
        assert_eq!(r.repository, "inventories/prod");
        for (bad, why) in [
            ("https://r/x", ReferenceError::Scheme),
            ("oci://r", ReferenceError::NoRepository),
            ("oci:///x", ReferenceError::NoRegistry),
            ("oci://r/Prod", ReferenceError::Repository("Prod".into())),
            ("oci://r/a..b", ReferenceError::Repository("a..b".into())),
            ("oci://r/a/-b", ReferenceError::Repository("a/-b".into())),
            ("oci://r/a:-x", ReferenceError::Tag("-x".into())),
            ("oci://r/a:", ReferenceError::Tag(String::new())),
            ("oci://r/a@sha256:00", ReferenceError::Digest),
        ] {
            assert_eq!(Reference::parse(bad), Err(why), "{bad}");
        }
        assert!(Reference::parse("oci://r/a__b-c.d/e--f").is_ok());
        let hex = "0123456789abcdef".repeat(4);
        let r = Reference::parse(&format!("oci://r/a:v1@sha256:{hex}")).unwrap();
        assert_eq!(
            (r.tag.as_str(), r.manifest()),
            ("v1", format!("sha256:{hex}").as_str())
        );
        assert_eq!(Reference::parse("oci://r/a").unwrap().manifest(), "latest");
        assert!(Reference::parse("oci://r/a-.b").is_err());
        assert!(Reference::parse("oci://r/a___b").is_err());
        assert!(!valid_tag(&"x".repeat(129)));
    }
}
