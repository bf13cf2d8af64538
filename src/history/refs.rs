//! What the `A` and `B` of `clinv diff` may name: the reference grammar. Pure; reading
//! the inventory behind a reference is [`crate::ops::refs`]. Checked in this order:
//!
//! | text | names |
//! |---|---|
//! | `-` | stdin (once) |
//! | `cluster` | the live object |
//! | `git:REV[:PATH]` | the inventory file at a git revision |
//! | `oci://REGISTRY/REPOSITORY[:TAG][@sha256:…]` | an artifact in a registry |
//! | `latest`, `latest~N` | the newest snapshot of the domain, or the N-th before it |
//! | `@DATE` | the snapshot current at DATE (`YYYY-MM-DD`, RFC 3339, `yesterday`, `1w`, `2 hours ago`) |
//! | an existing directory | its `clusterinventory.yaml` (the `render --out` layout) |
//! | a path (has `/`, or ends in `.yaml`/`.yml`/`.json`, or exists) | that file |
//! | anything else | a snapshot id |
//!
//! [`SnapshotRef`] is also what `snapshots show` and `commit --snapshot` take, so the
//! store resolves one typed selector however it was written.

#[cfg(test)]
use crate::error::Error;
use crate::error::{ReferenceError, Result};
use std::fmt;
use std::path::{Path, PathBuf};

/// The CR file of a `render --out` directory.
const RENDERED_CR: &str = "clusterinventory.yaml";

/// What a reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    Stdin,
    Cluster,
    File(PathBuf),
    Snapshot(SnapshotRef),
    Git {
        rev: String,
        path: Option<String>,
    },
    /// `oci://REGISTRY/REPOSITORY[:TAG][@sha256:…]`: an artifact `clinv push` left in a
    /// registry (the rest of the grammar is checked when it is read).
    Oci(String),
}

/// A reference into the snapshot store of a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotRef {
    /// `latest` (0) or `latest~N`.
    Latest(u32),
    /// `@DATE`: the snapshot current at that time (the text after `@`).
    At(String),
    /// A snapshot id or a prefix of one (checked by the store).
    Id(String),
}

/// Malformed `latest~N` or `@DATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("expected latest~N with N a number")]
    Latest,
    #[error(
        "expected @ and a date (YYYY-MM-DD), an RFC 3339 time, today, yesterday or a time ago (2d, 1w, '2 hours ago')"
    )]
    Date,
}

impl SnapshotRef {
    /// Parses a snapshot reference: `latest`, `latest~N`, `@DATE`, else an id.
    ///
    /// # Errors
    /// Malformed `latest~N` or `@DATE`.
    pub fn parse(text: &str) -> std::result::Result<SnapshotRef, SyntaxError> {
        Self::keyword(text).unwrap_or_else(|| Ok(SnapshotRef::Id(text.into())))
    }

    /// `latest`, `latest~N` or `@DATE`; `None` for any other text.
    fn keyword(text: &str) -> Option<std::result::Result<SnapshotRef, SyntaxError>> {
        if text == "latest" {
            return Some(Ok(SnapshotRef::Latest(0)));
        }
        if let Some(n) = text.strip_prefix("latest~") {
            return Some(
                n.parse()
                    .map(SnapshotRef::Latest)
                    .map_err(|_| SyntaxError::Latest),
            );
        }
        let date = text.strip_prefix('@')?;
        // The forms of `--since`: a date, an RFC 3339 time, today, yesterday, a time ago.
        let valid =
            crate::history::audit::parse_query_bound(date, true, jiff::Timestamp::now()).is_some();
        Some(if valid {
            Ok(SnapshotRef::At(date.into()))
        } else {
            Err(SyntaxError::Date)
        })
    }
}

/// As written: `latest`, `latest~N`, `@DATE` or the id.
impl fmt::Display for SnapshotRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotRef::Latest(0) => f.write_str("latest"),
            SnapshotRef::Latest(n) => write!(f, "latest~{n}"),
            SnapshotRef::At(date) => write!(f, "@{date}"),
            SnapshotRef::Id(id) => f.write_str(id),
        }
    }
}

/// Parses a reference; `is_dir`/`exists` answer for the file system.
///
/// # Errors
/// [`ReferenceError::Malformed`] (exit 2) for malformed `latest~N`, `@DATE` or `git:`
/// syntax.
pub fn parse_ref(
    text: &str,
    is_dir: impl Fn(&Path) -> bool,
    exists: impl Fn(&Path) -> bool,
) -> Result<Ref> {
    let usage = |why: &str| {
        Err(ReferenceError::Malformed {
            text: text.to_string(),
            why: why.to_string(),
        }
        .into())
    };
    if text.is_empty() {
        return usage(
            "empty; expected a file, '-', 'cluster', latest[~N], @DATE, git:REV[:PATH], oci://… or a snapshot id",
        );
    }
    if text == "-" {
        return Ok(Ref::Stdin);
    }
    if text == "cluster" {
        return Ok(Ref::Cluster);
    }
    if let Some(rest) = text.strip_prefix("git:") {
        let (rev, path) = match rest.split_once(':') {
            Some((rev, path)) => (rev, Some(path)),
            None => (rest, None),
        };
        if rev.is_empty() || path == Some("") {
            return usage("expected git:REV or git:REV:PATH");
        }
        return Ok(Ref::Git {
            rev: rev.into(),
            path: path.map(Into::into),
        });
    }
    if text.starts_with("oci://") {
        return Ok(Ref::Oci(text.to_string()));
    }
    if let Some(selector) = SnapshotRef::keyword(text) {
        return match selector {
            Ok(s) => Ok(Ref::Snapshot(s)),
            Err(e) => usage(&e.to_string()),
        };
    }
    let path = Path::new(text);
    if is_dir(path) {
        return Ok(Ref::File(path.join(RENDERED_CR)));
    }
    let path_like = text.contains('/')
        || [".yaml", ".yml", ".json"].iter().any(|e| text.ends_with(e))
        || exists(path);
    if path_like {
        Ok(Ref::File(path.to_path_buf()))
    } else {
        Ok(Ref::Snapshot(SnapshotRef::Id(text.into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Ref> {
        parse_ref(text, |p| p == Path::new("out"), |p| p == Path::new("plain"))
    }

    #[test]
    fn the_reference_grammar() {
        assert_eq!(parse("-").unwrap(), Ref::Stdin);
        assert_eq!(parse("cluster").unwrap(), Ref::Cluster);
        assert_eq!(
            parse("oci://r/a:v1").unwrap(),
            Ref::Oci("oci://r/a:v1".into())
        );
        assert_eq!(parse("./cluster").unwrap(), Ref::File("./cluster".into()));
        assert_eq!(parse("a.yaml").unwrap(), Ref::File("a.yaml".into()));
        assert_eq!(parse("dir/a").unwrap(), Ref::File("dir/a".into()));
        assert_eq!(parse("plain").unwrap(), Ref::File("plain".into()));
        assert_eq!(
            parse("out").unwrap(),
            Ref::File(Path::new("out").join("clusterinventory.yaml"))
        );
        assert_eq!(
            parse("latest").unwrap(),
            Ref::Snapshot(SnapshotRef::Latest(0))
        );
        assert_eq!(
            parse("latest~3").unwrap(),
            Ref::Snapshot(SnapshotRef::Latest(3))
        );
        assert_eq!(
            parse("@2026-03-02").unwrap(),
            Ref::Snapshot(SnapshotRef::At("2026-03-02".into()))
        );
        assert_eq!(
            parse("@2026-03-02T10:00:00Z").unwrap(),
            Ref::Snapshot(SnapshotRef::At("2026-03-02T10:00:00Z".into()))
        );
        assert_eq!(
            parse("20260302-3fb0c5e0").unwrap(),
            Ref::Snapshot(SnapshotRef::Id("20260302-3fb0c5e0".into()))
        );
        assert_eq!(
            parse("git:HEAD~1").unwrap(),
            Ref::Git {
                rev: "HEAD~1".into(),
                path: None
            }
        );
        assert_eq!(
            parse("git:main:gitops/ci.yaml").unwrap(),
            Ref::Git {
                rev: "main".into(),
                path: Some("gitops/ci.yaml".into())
            }
        );
    }

    #[test]
    fn malformed_references_are_usage_errors() {
        for bad in [
            "",
            "latest~",
            "latest~x",
            "latest~-1",
            "@",
            "@tomorrow",
            "@2 months ago",
            "@2026-13-01",
            "git:",
            "git::x",
            "git:main:",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(
                matches!(err, Error::Reference(ReferenceError::Malformed { .. })),
                "{bad}: {err}"
            );
            assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        }
    }

    #[test]
    fn snapshot_references_print_as_written() {
        for text in [
            "latest",
            "latest~2",
            "@2026-03-02",
            "@yesterday",
            "@1w",
            "@2 hours ago",
            "3fb0c5e0",
        ] {
            assert_eq!(SnapshotRef::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(SnapshotRef::parse("latest~x"), Err(SyntaxError::Latest));
    }
}
