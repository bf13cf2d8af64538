//! Reading `clusters/<domain>/cluster.lok8s.yaml` (spec §2, §3.1): driver, provider,
//! Kubernetes version, the hash of the raw bytes, and the `spec.bootstrap` entries.

use crate::error::{Error, Result};
use crate::project::MAX_INPUT_BYTES;
use crate::project::bootstrap::{self, Context, Entry, Rejection};
use crate::project::typos::{self, Typo};
use crate::util::files;
use crate::util::hash::hex_sha256;
use crate::yaml::{Doc, Node, NodeId, Tag};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

static KIND_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^[a-z][a-z0-9]*$").expect("valid regex"));

/// Refuses a spec that is a link (or sits in a linked folder) resolving outside the
/// project root: reads stay inside the project (README, threat model).
fn confined(path: &Path, root: &Path) -> Result<()> {
    let (Ok(real), Ok(root)) = (path.canonicalize(), root.canonicalize()) else {
        return Ok(()); // missing: read() says so
    };
    if !real.starts_with(&root) {
        return Err(Error::InvalidFile {
            path: path.to_path_buf(),
            message: format!(
                "resolves outside the project root (to {}); not read",
                real.display()
            ),
        });
    }
    Ok(())
}

/// What the inventory needs from a cluster spec.
#[derive(Debug)]
pub struct ClusterSpec {
    pub path: PathBuf,
    /// Lowercase hex SHA-256 of the file's raw bytes.
    pub spec_hash: String,
    /// The driver (`lo`, `kubeone`, …).
    pub kind: String,
    pub provider: Option<String>,
    pub kubernetes_version: Option<String>,
    /// `metadata.name`, which names lok8s's kubeconfig file.
    pub name: Option<String>,
    /// Every entry in order, parsed or rejected.
    pub entries: Vec<Result<Entry, Rejection>>,
    /// The top level was not a mapping: kind missing (`lo`), `spec.bootstrap` absent (so
    /// the `lo` default entry applies), as lok8s reads it; reported as a warning.
    pub not_a_mapping: bool,
    /// What lok8s reads without a word but changes the inventory (a warning each).
    pub typos: Vec<Typo>,
}

/// Reads and interprets a cluster spec.
///
/// # Errors
/// Missing file, a file over the size limit, not UTF-8, invalid YAML (a deliberate
/// difference from lok8s, which renders an empty inventory), or a malformed kind.
pub fn read(path: &Path, root: &Path, domain: &str) -> Result<ClusterSpec> {
    confined(path, root)?;
    let bytes = match files::read_bounded(path, MAX_INPUT_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::SpecNotFound(path.to_path_buf()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            return Err(Error::SpecNotFound(path.to_path_buf()));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    parse(&bytes, path, root, domain)
}

/// Interprets the raw bytes of the cluster spec at `path` (named in errors): the part of
/// [`read`] after the file is read, so the spec can be checked without a file.
///
/// # Errors
/// As [`read`], except for the file access.
pub fn parse(bytes: &[u8], path: &Path, root: &Path, domain: &str) -> Result<ClusterSpec> {
    let spec_hash = hex_sha256(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        Error::InvalidFile {
            path: path.to_path_buf(),
            message: format!(
                "not valid UTF-8 (line {line}, byte offset {})",
                e.valid_up_to()
            ),
        }
    })?;
    if let Some(at) = text.find('\0') {
        let line = text[..at].matches('\n').count() + 1;
        return Err(Error::InvalidFile {
            path: path.to_path_buf(),
            message: format!("contains a NUL byte (line {line}); not a YAML text file"),
        });
    }
    let doc = Doc::parse(text).map_err(|e| {
        if e.too_large {
            Error::InvalidFile {
                path: path.to_path_buf(),
                message: format!("too large: {} (at line {})", e.message, e.pos.line),
            }
        } else {
            Error::InvalidYaml {
                path: path.to_path_buf(),
                pos: e.pos,
                message: e.message,
            }
        }
    })?;
    let checked = bootstrap::ValueFiles::default();
    let ctx = Context {
        root,
        domain,
        checked: &checked,
    };
    interpret(&doc, path, spec_hash, ctx)
}

fn interpret(doc: &Doc, path: &Path, spec_hash: String, ctx: Context<'_>) -> Result<ClusterSpec> {
    let top = doc.root().filter(|r| !doc.is_null(*r));
    let not_a_mapping = top.is_some_and(|r| !matches!(doc.node(r), Node::Map(_)));
    let top = top.filter(|_| !not_a_mapping);
    let get = |keys: &[&str]| top.and_then(|t| doc.path(t, keys));

    let raw_kind = get(&["kind"]).and_then(|k| scalar_text(doc, k));
    let typos = top
        .map(|t| typos::check(doc, t, raw_kind))
        .unwrap_or_default();
    let kind = match raw_kind {
        None => "lo".to_string(),
        Some(raw) => {
            let lower = raw.to_lowercase();
            if !KIND_RE.is_match(&lower) {
                return Err(Error::MalformedKind(path.to_path_buf()));
            }
            lower
        }
    };
    let provider = get(&["spec", "provider", "name"]).and_then(|n| coerced(doc, n));
    let kubernetes_version = get(&["spec", "kubernetes", "version"])
        .and_then(|n| coerced(doc, n))
        .map(|v| v.split('@').next().unwrap_or_default().to_string())
        .filter(|v| !v.is_empty());
    let name = get(&["metadata", "name"]).and_then(|n| coerced(doc, n));

    // A top level that is not a mapping has no `spec.bootstrap`: lok8s applies the `lo`
    // default entry then (spec §3.1), like for any absent bootstrap.
    let entries = {
        let spec = get(&["spec"]).filter(|s| matches!(doc.node(*s), Node::Map(_)));
        match spec.and_then(|s| doc.entries(s)).and_then(|pairs| {
            pairs
                .into_iter()
                .find(|(k, _)| doc.text(*k) == Some("bootstrap"))
                .map(|(_, v)| v)
        }) {
            Some(b) => entry_nodes(doc, b)
                .into_iter()
                .map(|n| bootstrap::parse(doc, n, ctx))
                .collect(),
            None if kind == "lo" => default_entries(ctx),
            None => Vec::new(),
        }
    };
    Ok(ClusterSpec {
        path: path.to_path_buf(),
        spec_hash,
        kind,
        provider,
        kubernetes_version,
        name,
        entries,
        not_a_mapping,
        typos,
    })
}

/// The entries of a present `spec.bootstrap` node (spec §3.1): a sequence's elements, a
/// mapping's values; anything empty or scalar is an explicit opt-out.
fn entry_nodes(doc: &Doc, b: NodeId) -> Vec<NodeId> {
    match doc.node(b) {
        Node::Seq(items) => items.clone(),
        Node::Map(_) => doc
            .entries(b)
            .unwrap_or_default()
            .into_iter()
            .map(|(_, v)| v)
            .collect(),
        Node::Scalar { .. } => Vec::new(),
    }
}

/// The `lo` driver's default: the bare word `cilium` (a kind cluster ships without a CNI).
fn default_entries(ctx: Context<'_>) -> Vec<Result<Entry, Rejection>> {
    let doc = Doc::parse("cilium").expect("static YAML parses");
    let root = doc.root().expect("static YAML has a root");
    vec![bootstrap::parse(&doc, root, ctx)]
}

/// A scalar's raw text, `None` for null, maps and lists (kind: a type error → missing).
fn scalar_text(doc: &Doc, node: NodeId) -> Option<&str> {
    match doc.node(node) {
        Node::Scalar { tag: Tag::Null, .. } => None,
        Node::Scalar { text, .. } if text.is_empty() => None,
        Node::Scalar { text, .. } => Some(text),
        _ => None,
    }
}

/// lok8s's coercion for provider and version: raw scalar text; null, lowercase `false`,
/// empty, maps and lists are empty.
fn coerced(doc: &Doc, node: NodeId) -> Option<String> {
    scalar_text(doc, node)
        .filter(|t| *t != "false")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn spec(text: &str) -> Result<ClusterSpec> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.lok8s.yaml");
        fs::write(&path, text).unwrap();
        read(&path, dir.path(), "test.lok8s.dev")
    }

    fn kind(text: &str) -> Result<String> {
        spec(text).map(|s| s.kind)
    }

    fn names(s: &ClusterSpec) -> Vec<String> {
        s.entries
            .iter()
            .map(|e| match e {
                Ok(e) => e.name.clone(),
                Err(r) => format!("!{}", r.key),
            })
            .collect()
    }

    #[test]
    fn kind_to_driver() {
        for (yaml, want) in [
            ("kind: Lo", "lo"),
            ("kind: LO", "lo"),
            ("kind: KubeOne", "kubeone"),
            ("kind: CAPI", "capi"),
            ("kind: Kkp", "kkp"),
            ("kind: Deploy", "deploy"),
            ("kind: K8s1", "k8s1"),
            ("kind: true", "true"),
            ("kind: false", "false"),
            ("spec: {}", "lo"),
            ("kind: null", "lo"),
            ("kind: ~", "lo"),
            ("kind:", "lo"),
            ("kind: \"\"", "lo"),
            ("kind: {a: 1}", "lo"),
            ("kind: [a]", "lo"),
            ("- a", "lo"),
            ("", "lo"),
        ] {
            assert_eq!(kind(yaml).unwrap(), want, "{yaml}");
        }
        for bad in [
            "kind: ../../evil",
            "kind: \"a b\"",
            "kind: kube-one",
            "kind: 123",
            "kind: \"Lo \"",
        ] {
            assert!(matches!(kind(bad), Err(Error::MalformedKind(_))), "{bad}");
        }
    }

    #[test]
    fn provider_and_version_coercion() {
        let s =
            spec("spec:\n  provider: {name: 1.30}\n  kubernetes: {version: v1.31.10@sha256:abc}\n")
                .unwrap();
        assert_eq!(s.provider.as_deref(), Some("1.30"));
        assert_eq!(s.kubernetes_version.as_deref(), Some("v1.31.10"));
        for (yaml, provider) in [
            ("spec: {provider: {name: false}}", None),
            ("spec: {provider: {name: False}}", Some("False")),
            ("spec: {provider: {name: ~}}", None),
            ("spec: {provider: {name: [a]}}", None),
            ("spec: {provider: hetzner}", None),
            ("spec: {provider: {name: hetzner}}", Some("hetzner")),
        ] {
            assert_eq!(spec(yaml).unwrap().provider.as_deref(), provider, "{yaml}");
        }
        let s = spec("spec: {kubernetes: {version: '@sha256:x'}}").unwrap();
        assert_eq!(s.kubernetes_version, None);
        let s = spec("spec: {kubernetes: {version: v1@a@b}}").unwrap();
        assert_eq!(s.kubernetes_version.as_deref(), Some("v1"));
    }

    #[test]
    fn spec_hash_is_of_raw_bytes() {
        let a = spec("kind: Lo\n").unwrap().spec_hash;
        let b = spec("kind: Lo").unwrap().spec_hash;
        assert_ne!(a, b);
        assert_eq!(b, hex_sha256(b"kind: Lo"));
        assert_eq!(hex_sha256(b"").len(), 64);
    }

    #[test]
    fn bootstrap_resolution() {
        let cases: &[(&str, &[&str])] = &[
            ("kind: Lo", &["cilium"]),
            ("", &["cilium"]),
            ("kind: Lo\nspec: ~", &["cilium"]),
            ("kind: Lo\nspec: text", &["cilium"]),
            ("kind: KubeOne", &[]),
            ("kind: Capi\nspec: {}", &[]),
            ("kind: Lo\nspec: {bootstrap: []}", &[]),
            ("kind: Lo\nspec: {bootstrap: {}}", &[]),
            ("kind: Lo\nspec: {bootstrap: ~}", &[]),
            ("kind: Lo\nspec:\n  bootstrap:\n", &[]),
            ("kind: Lo\nspec: {bootstrap: cilium}", &[]),
            ("kind: Lo\nspec: {bootstrap: [a, b, a]}", &["a", "b", "a"]),
            (
                "kind: Lo\nspec: {bootstrap: {z: x, a: ./targets/y}}",
                &["x", "y"],
            ),
            (
                "kind: KubeOne\nspec:\n  # c\n  bootstrap:\n    - cilium\n    # c2\n    - ccm:\n        networking:\n          enabled: true\n",
                &["cilium", "ccm"],
            ),
            (
                "kind: Lo\nspec: {bootstrap: [{}, cilium, {a: 1, b: 2}]}",
                &["!?", "cilium", "!a"],
            ),
            // Not a mapping: no bootstrap, so the `lo` default (lok8s).
            ("- a\n- b", &["cilium"]),
            ("just a scalar", &["cilium"]),
        ];
        for (yaml, want) in cases {
            assert_eq!(names(&spec(yaml).unwrap()), *want, "{yaml}");
        }
        assert!(spec("- a").unwrap().not_a_mapping);
    }

    #[test]
    fn invalid_yaml_is_an_error_with_position() {
        let err = spec("kind: Lo\nspec:\n  bootstrap: [a,\n").unwrap_err();
        assert!(matches!(err, Error::InvalidYaml { .. }), "{err}");
        assert!(err.to_string().contains("cluster.lok8s.yaml:"), "{err}");
        assert!(matches!(
            spec("kind: \u{0}").unwrap_err(),
            Error::InvalidFile { .. }
        ));
    }

    #[test]
    fn missing_spec_and_directory_spec_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.lok8s.yaml");
        assert!(matches!(
            read(&path, dir.path(), "d"),
            Err(Error::SpecNotFound(_))
        ));
        fs::create_dir(&path).unwrap();
        assert!(matches!(
            read(&path, dir.path(), "d"),
            Err(Error::SpecNotFound(_))
        ));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.lok8s.yaml");
        fs::write(&path, b"kind: Lo\nx: \xff\xfe\n").unwrap();
        let err = read(&path, dir.path(), "d").unwrap_err();
        assert!(err.to_string().contains("not valid UTF-8 (line 2"), "{err}");
    }
}
