//! `spec.bootstrap` entries: lok8s's shared entry parser (spec §3.2–§3.4).
//!
//! An entry is a scalar (`cilium`, `./targets/x`) or a single-key map whose value holds
//! inline Helm values (legacy form) or the reserved keys `values`, `valueFiles`, `env`,
//! `wait`, `dependsOn`, `name`. The parser checks them in lok8s's order and returns the
//! first rejection with lok8s's exact text. Values, value files and env values are read
//! only to validate them; nothing of them leaves this module.

use crate::project::MAX_INPUT_BYTES;
use crate::util::files;
use crate::yaml::{Doc, Node, NodeId, Tag};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

const RESERVED: [&str; 6] = ["values", "valueFiles", "env", "wait", "dependsOn", "name"];

static NAME_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^[A-Za-z0-9._-]+$").expect("valid regex"));
static ENV_KEY_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("valid regex"));

/// Where an entry comes from: a framework addon or a per-cluster / shared target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Addon,
    Target,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Addon => "addon",
            Source::Target => "target",
        }
    }
}

/// A parsed entry: what the inventory and `clinv addons` need, nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry key (`cilium`, `./targets/foo`).
    pub key: String,
    /// The name: the key's last path element, or the explicit `name:`.
    pub name: String,
    /// The resolved directory (not normalised, as lok8s builds it).
    pub dir: PathBuf,
    pub source: Source,
}

/// Where entries resolve: the project root and the domain.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub root: &'a Path,
    pub domain: &'a str,
    /// Value files already checked, shared by the entries of one spec.
    pub checked: &'a ValueFiles,
}

/// Whether each value file merges, so a file named by many entries (or many times in one
/// `valueFiles:` list) is read and parsed once, not once per mention.
pub type ValueFiles =
    std::cell::RefCell<std::collections::HashMap<PathBuf, Result<(), MergeProblem>>>;

/// Why a values file does not merge, naming the file and never its content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeProblem {
    #[error("{} is larger than {} MiB", .0.display(), MAX_INPUT_BYTES >> 20)]
    TooLarge(PathBuf),
    #[error("{} cannot be read ({kind})", .path.display())]
    Unreadable {
        path: PathBuf,
        kind: std::io::ErrorKind,
    },
    #[error("the inline values: are not a map")]
    InlineNotAMap,
    #[error("{} is not UTF-8 text", .0.display())]
    NotUtf8(PathBuf),
    #[error("{}: the top level is not a map", .0.display())]
    NotAMap(PathBuf),
    #[error("{} is too large to check ({message})", .path.display())]
    TooManyNodes { path: PathBuf, message: String },
    #[error("{} is not valid YAML (line {}, column {})", .path.display(), .pos.line, .pos.col)]
    InvalidYaml {
        path: PathBuf,
        pos: crate::error::Pos,
    },
}

/// Why an entry was rejected. `Display` gives lok8s's exact message; some of those
/// messages carry user values, so only [`Rejection::key`] is ever shown to users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("bootstrap: entry must be a single-key map, got {keys} keys: {entry_json}")]
    KeyCount { keys: usize, entry_json: String },
    #[error(
        "bootstrap: '{key}' entry value must be a map of {{values,env,wait}} or chart values, got {tag}"
    )]
    ValueType { key: String, tag: String },
    #[error("bootstrap: failed to parse addon name from {entry_json}")]
    AddonName { entry_json: String },
    #[error("bootstrap: '{key}' name: must be a non-empty scalar entry name (got {tag})")]
    NameType { key: String, tag: String },
    #[error("bootstrap: '{key}' name: must be a non-empty string")]
    NameEmpty { key: String },
    #[error(
        "bootstrap: '{key}' name: '{value}' is not a valid entry name (must match [A-Za-z0-9._-]+)"
    )]
    NamePattern { key: String, value: String },
    #[error("bootstrap: '{key}' has a non-boolean wait: '{value}' (use true or false)")]
    Wait { key: String, value: String },
    #[error(
        "bootstrap: '{key}' sets '{field}:' but is not a chart addon (no chart.yaml under {}); '{field}:' is helm-only",
        .dir.display()
    )]
    NotAChart {
        key: String,
        field: &'static str,
        dir: PathBuf,
    },
    #[error("bootstrap: '{key}' valueFiles: must be a list of file paths (got {tag})")]
    ValueFilesType { key: String, tag: String },
    #[error("bootstrap: '{key}' valueFiles: each element must be a file path string (got {tag})")]
    ValueFileType { key: String, tag: String },
    #[error("bootstrap: '{key}' valueFiles: empty element — each element must be a file path")]
    ValueFileEmpty { key: String },
    #[error("bootstrap: '{key}' valueFiles: file not found: {}", .path.display())]
    ValueFileMissing { key: String, path: PathBuf },
    #[error(
        "bootstrap: '{key}' valueFiles: failed to merge ({})",
        .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
    )]
    ValueFilesMerge {
        key: String,
        paths: Vec<PathBuf>,
        /// Why, without any value: which file and what about it (`-v` and warnings).
        why: MergeProblem,
    },
    #[error("bootstrap: '{key}' env: must be a map of KEY: scalar (got {tag})")]
    EnvType { key: String, tag: String },
    #[error(
        "bootstrap: '{key}' env: values must be scalars; non-scalar value for: {} (did you mean values:?)",
        .keys.join(", ")
    )]
    EnvNonScalar { key: String, keys: Vec<String> },
    #[error(
        "bootstrap: '{key}' env: key '{env_key}' is not a valid shell variable name (must match [A-Za-z_][A-Za-z0-9_]*)"
    )]
    EnvKey { key: String, env_key: String },
    #[error("bootstrap: '{key}' dependsOn: must be a list of entry names (got {tag})")]
    DependsOnType { key: String, tag: String },
    #[error("bootstrap: '{key}' dependsOn: null element — must be a list of entry names")]
    DependsOnNull { key: String },
    #[error(
        "bootstrap: '{key}' dependsOn: each element must be a scalar entry name (got a map/list element)"
    )]
    DependsOnElement { key: String },
    #[error("bootstrap: failed to parse entry {entry}")]
    Unparseable { entry: String },
}

impl EntryError {
    /// A short reason that never carries entry values (safe for `-v` output).
    pub fn summary(&self) -> String {
        use EntryError as E;
        let text = match self {
            E::ValueFilesMerge { why, .. } => return format!("valueFiles: {why}"),
            E::KeyCount { .. } => "a map entry must have exactly one key",
            E::ValueType { .. } => "the entry value must be a map or empty",
            E::AddonName { .. } => "the addon name escapes .lok8s/addons",
            E::NameType { .. } | E::NameEmpty { .. } | E::NamePattern { .. } => {
                "name: must be a non-empty [A-Za-z0-9._-]+ string"
            }
            E::Wait { .. } => "wait: must be true or false",
            E::NotAChart { .. } => "values:/valueFiles: set on an addon without chart.yaml",
            E::ValueFilesType { .. } | E::ValueFileType { .. } | E::ValueFileEmpty { .. } => {
                "valueFiles: must be a list of file paths"
            }
            E::ValueFileMissing { .. } => "valueFiles: a file does not exist",
            E::EnvType { .. } | E::EnvNonScalar { .. } | E::EnvKey { .. } => {
                "env: must map shell variable names to scalars"
            }
            E::DependsOnType { .. } | E::DependsOnNull { .. } | E::DependsOnElement { .. } => {
                "dependsOn: must be a list of entry names"
            }
            E::Unparseable { .. } => "the entry cannot be parsed",
        };
        text.to_string()
    }
}

/// A rejected entry: the key lok8s names in its warning, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub key: String,
    pub error: EntryError,
}

/// Parses one entry node of `doc`.
///
/// # Errors
/// The entry breaks a rule of spec §3.2–§3.4.
pub fn parse(doc: &Doc, node: NodeId, ctx: Context<'_>) -> Result<Entry, Rejection> {
    match doc.node(node) {
        Node::Scalar { text, tag } => {
            let key = if *tag == Tag::Null {
                "null".to_string()
            } else {
                text.to_string()
            };
            resolve_key(doc, node, &key, ctx).map_err(|error| Rejection { key, error })
        }
        // A list element survives the parser; its compact JSON becomes the key.
        Node::Seq(_) => {
            let key = doc.to_json(node);
            resolve_key(doc, node, &key, ctx).map_err(|error| Rejection { key, error })
        }
        Node::Map(_) => {
            let pairs = doc.entries(node).unwrap_or_default();
            let warn_key = pairs
                .iter()
                .map(|(k, _)| doc.key_text(*k))
                .min()
                .unwrap_or_else(|| "?".to_string());
            parse_map(doc, node, &pairs, ctx).map_err(|error| Rejection {
                key: warn_key,
                error,
            })
        }
    }
}

fn parse_map(
    doc: &Doc,
    node: NodeId,
    pairs: &[(NodeId, NodeId)],
    ctx: Context<'_>,
) -> Result<Entry, EntryError> {
    let [(key_node, value)] = pairs else {
        return Err(EntryError::KeyCount {
            keys: pairs.len(),
            entry_json: doc.to_json(node),
        });
    };
    if !matches!(doc.node(*key_node), Node::Scalar { .. }) {
        return Err(EntryError::Unparseable {
            entry: doc.to_json(node),
        });
    }
    let key = doc.key_text(*key_node);
    let fields = match doc.node(*value) {
        Node::Map(_) => doc.entries(*value).unwrap_or_default(),
        Node::Scalar { tag: Tag::Null, .. } => Vec::new(),
        _ => {
            return Err(EntryError::ValueType {
                key,
                tag: doc.tag_name(*value).to_string(),
            });
        }
    };
    let mut entry = resolve_key(doc, node, &key, ctx)?;
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| doc.text(*k) == Some(name))
            .map(|(_, v)| *v)
    };
    if !fields
        .iter()
        .any(|(k, _)| doc.text(*k).is_some_and(|t| RESERVED.contains(&t)))
    {
        return Ok(entry); // legacy form: the whole map is inline Helm values
    }
    if let Some(name) = field("name") {
        entry.name = check_name(doc, name, &key)?;
    }
    if let Some(wait) = field("wait") {
        check_wait(doc, wait, &key)?;
    }
    let values = field("values");
    if values.is_some() {
        check_chart(&entry.dir, &key, "values")?;
    }
    if let Some(files) = field("valueFiles") {
        check_chart(&entry.dir, &key, "valueFiles")?;
        check_value_files(doc, files, values, &key, ctx)?;
    }
    if let Some(env) = field("env") {
        check_env(doc, env, &key)?;
    }
    if let Some(deps) = field("dependsOn") {
        check_depends_on(doc, deps, &key)?;
    }
    Ok(entry)
}

/// Key → name, directory, source (spec §3.3).
fn resolve_key(doc: &Doc, node: NodeId, key: &str, ctx: Context<'_>) -> Result<Entry, EntryError> {
    let root = ctx.root.to_string_lossy();
    let (dir, source) = if key.starts_with('/') {
        (PathBuf::from(format!("{root}{key}")), Source::Target)
    } else if key.starts_with("./") || key.starts_with("../") {
        (
            PathBuf::from(format!("{root}/clusters/{}/{key}", ctx.domain)),
            Source::Target,
        )
    } else {
        let cleaned = clean(&format!(".lok8s/addons/{key}"));
        if cleaned != ".lok8s/addons" && !cleaned.starts_with(".lok8s/addons/") {
            return Err(EntryError::AddonName {
                entry_json: doc.to_json(node),
            });
        }
        (
            PathBuf::from(format!("{root}/.lok8s/addons/{key}")),
            Source::Addon,
        )
    };
    let name = match source {
        Source::Target => base(key),
        Source::Addon => key.to_string(),
    };
    Ok(Entry {
        key: key.to_string(),
        name,
        dir,
        source,
    })
}

fn check_name(doc: &Doc, node: NodeId, key: &str) -> Result<String, EntryError> {
    let key = key.to_string();
    match doc.node(node) {
        Node::Scalar {
            text,
            tag: Tag::Str,
        } => {
            if text.is_empty() {
                Err(EntryError::NameEmpty { key })
            } else if !NAME_RE.is_match(text) {
                Err(EntryError::NamePattern {
                    key,
                    value: text.to_string(),
                })
            } else {
                Ok(text.to_string())
            }
        }
        _ => Err(EntryError::NameType {
            key,
            tag: doc.tag_name(node).to_string(),
        }),
    }
}

fn check_wait(doc: &Doc, node: NodeId, key: &str) -> Result<bool, EntryError> {
    match doc.node(node) {
        Node::Scalar { tag: Tag::Null, .. } => Ok(false),
        Node::Scalar { text, .. } if matches!(&**text, "false" | "False" | "FALSE") => Ok(false),
        Node::Scalar { text, .. } if &**text == "true" => Ok(true),
        Node::Scalar { text, .. } => Err(EntryError::Wait {
            key: key.into(),
            value: text.to_string(),
        }),
        _ => Err(EntryError::Wait {
            key: key.into(),
            value: doc.to_json(node),
        }),
    }
}

fn check_chart(dir: &Path, key: &str, field: &'static str) -> Result<(), EntryError> {
    if dir.is_dir() && !dir.join("chart.yaml").exists() {
        return Err(EntryError::NotAChart {
            key: key.into(),
            field,
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

fn check_value_files(
    doc: &Doc,
    node: NodeId,
    values: Option<NodeId>,
    key: &str,
    ctx: Context<'_>,
) -> Result<(), EntryError> {
    let key_s = || key.to_string();
    let Node::Seq(items) = doc.node(node) else {
        return Err(EntryError::ValueFilesType {
            key: key_s(),
            tag: doc.tag_name(node).into(),
        });
    };
    let mut paths = Vec::with_capacity(items.len());
    for item in items {
        let text = match doc.node(*item) {
            Node::Scalar {
                text,
                tag: Tag::Str,
            } => text,
            _ => {
                let tag = doc.tag_name(*item).to_string();
                return Err(EntryError::ValueFileType { key: key_s(), tag });
            }
        };
        if text.is_empty() {
            return Err(EntryError::ValueFileEmpty { key: key_s() });
        }
        let path = if text.starts_with('/') {
            PathBuf::from(&**text)
        } else {
            let root = ctx.root.to_string_lossy();
            PathBuf::from(format!("{root}/clusters/{}/{text}", ctx.domain))
        };
        if !path.exists() {
            return Err(EntryError::ValueFileMissing { key: key_s(), path });
        }
        paths.push(path);
    }
    let why = if values.is_some_and(|v| !is_map_or_null(doc, v)) {
        Some(MergeProblem::InlineNotAMap)
    } else {
        paths.iter().find_map(|p| merges_once(ctx, p).err())
    };
    match why {
        Some(why) => Err(EntryError::ValueFilesMerge {
            key: key_s(),
            paths,
            why,
        }),
        None => Ok(()),
    }
}

/// [`merges`], remembered per path in `ctx`.
fn merges_once(ctx: Context<'_>, path: &Path) -> Result<(), MergeProblem> {
    if let Some(known) = ctx.checked.borrow().get(path) {
        return known.clone();
    }
    let result = merges(path);
    ctx.checked
        .borrow_mut()
        .insert(path.to_path_buf(), result.clone());
    result
}

/// A values file merges when it parses as YAML and its top level is a map (or empty);
/// otherwise why not, naming the file and never its content.
fn merges(path: &Path) -> Result<(), MergeProblem> {
    let owned = || path.to_path_buf();
    let bytes = files::read_bounded(path, MAX_INPUT_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            MergeProblem::TooLarge(owned())
        } else {
            MergeProblem::Unreadable {
                path: owned(),
                kind: e.kind(),
            }
        }
    })?;
    let text = String::from_utf8(bytes).map_err(|_| MergeProblem::NotUtf8(owned()))?;
    match Doc::parse(&text) {
        Ok(doc) if doc.root().is_none_or(|r| is_map_or_null(&doc, r)) => Ok(()),
        Ok(_) => Err(MergeProblem::NotAMap(owned())),
        Err(e) if e.too_large => Err(MergeProblem::TooManyNodes {
            path: owned(),
            message: e.message,
        }),
        Err(e) => Err(MergeProblem::InvalidYaml {
            path: owned(),
            pos: e.pos,
        }),
    }
}

fn is_map_or_null(doc: &Doc, node: NodeId) -> bool {
    matches!(doc.node(node), Node::Map(_)) || doc.is_null(node)
}

fn check_env(doc: &Doc, node: NodeId, key: &str) -> Result<(), EntryError> {
    let pairs = match doc.node(node) {
        Node::Map(_) => doc.entries(node).unwrap_or_default(),
        Node::Scalar { tag: Tag::Null, .. } => return Ok(()),
        Node::Scalar { text, .. } if text.is_empty() => return Ok(()),
        _ => {
            return Err(EntryError::EnvType {
                key: key.into(),
                tag: doc.tag_name(node).into(),
            });
        }
    };
    let mut non_scalar: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !matches!(doc.node(*v), Node::Scalar { .. }))
        .map(|(k, _)| doc.key_text(*k))
        .collect();
    if !non_scalar.is_empty() {
        non_scalar.sort();
        return Err(EntryError::EnvNonScalar {
            key: key.into(),
            keys: non_scalar,
        });
    }
    for (k, _) in &pairs {
        let env_key = doc.key_text(*k);
        if !env_key.is_empty() && !ENV_KEY_RE.is_match(&env_key) {
            return Err(EntryError::EnvKey {
                key: key.into(),
                env_key,
            });
        }
    }
    Ok(())
}

fn check_depends_on(doc: &Doc, node: NodeId, key: &str) -> Result<(), EntryError> {
    let Node::Seq(items) = doc.node(node) else {
        return Err(EntryError::DependsOnType {
            key: key.into(),
            tag: doc.tag_name(node).into(),
        });
    };
    for item in items {
        match doc.node(*item) {
            Node::Scalar { tag: Tag::Null, .. } => {
                return Err(EntryError::DependsOnNull { key: key.into() });
            }
            Node::Scalar { .. } => {}
            _ => return Err(EntryError::DependsOnElement { key: key.into() }),
        }
    }
    Ok(())
}

/// Go's `path.Clean`: lexical normalisation of a slash-separated path.
pub fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`: the last element, trailing slashes ignored.
pub fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    struct Fx {
        dir: tempfile::TempDir,
    }

    impl Fx {
        fn new() -> Fx {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir_all(dir.path().join(".lok8s/addons/cilium")).unwrap();
            fs::write(
                dir.path().join(".lok8s/addons/cilium/chart.yaml"),
                "version: 1.20.1\n",
            )
            .unwrap();
            fs::create_dir_all(dir.path().join(".lok8s/addons/raw")).unwrap();
            fs::create_dir_all(dir.path().join("clusters/test.lok8s.dev/targets/foo")).unwrap();
            fs::write(dir.path().join("clusters/test.lok8s.dev/a.yaml"), "x: 1\n").unwrap();
            fs::write(
                dir.path().join("clusters/test.lok8s.dev/list.yaml"),
                "- 1\n",
            )
            .unwrap();
            Fx { dir }
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        fn parse(&self, entry: &str) -> Result<Entry, Rejection> {
            self.parse_with(entry, &ValueFiles::default())
        }

        fn parse_with(&self, entry: &str, checked: &ValueFiles) -> Result<Entry, Rejection> {
            let doc = Doc::parse(entry).unwrap();
            let ctx = Context {
                root: self.root(),
                domain: "test.lok8s.dev",
                checked,
            };
            parse(&doc, doc.root().unwrap(), ctx)
        }

        fn err(&self, entry: &str) -> (String, String) {
            let r = self.parse(entry).unwrap_err();
            let root = self.root().display().to_string();
            (r.key, r.error.to_string().replace(&root, "<root>"))
        }

        fn ok(&self, entry: &str) -> (String, String, Source) {
            let e = self.parse(entry).unwrap();
            let dir = e
                .dir
                .display()
                .to_string()
                .replace(&self.root().display().to_string(), "<root>");
            (e.name, dir, e.source)
        }
    }

    #[test]
    fn key_shapes_give_name_directory_and_source() {
        let fx = Fx::new();
        let cases = [
            (
                "cilium",
                "cilium",
                "<root>/.lok8s/addons/cilium",
                Source::Addon,
            ),
            (
                "\"./targets/foo\"",
                "foo",
                "<root>/clusters/test.lok8s.dev/./targets/foo",
                Source::Target,
            ),
            (
                "./targets/foo/",
                "foo",
                "<root>/clusters/test.lok8s.dev/./targets/foo/",
                Source::Target,
            ),
            ("/abs/bar", "bar", "<root>/abs/bar", Source::Target),
            (
                "../.targets/networking",
                "networking",
                "<root>/clusters/test.lok8s.dev/../.targets/networking",
                Source::Target,
            ),
            (
                "{\"./x\": {\"name\": \"bar\"}}",
                "bar",
                "<root>/clusters/test.lok8s.dev/./x",
                Source::Target,
            ),
            (
                "{\"./targets/rook-ceph\": {\"name\": \"rook-ceph-cluster\", \"dependsOn\": [\"rook-ceph\"]}}",
                "rook-ceph-cluster",
                "<root>/clusters/test.lok8s.dev/./targets/rook-ceph",
                Source::Target,
            ),
            ("~", "null", "<root>/.lok8s/addons/null", Source::Addon),
            (
                "cilium:",
                "cilium",
                "<root>/.lok8s/addons/cilium",
                Source::Addon,
            ),
            (
                "cilium: {encryption: {enabled: true}}",
                "cilium",
                "<root>/.lok8s/addons/cilium",
                Source::Addon,
            ),
            (
                "cilium: {}",
                "cilium",
                "<root>/.lok8s/addons/cilium",
                Source::Addon,
            ),
        ];
        for (entry, name, dir, source) in cases {
            assert_eq!(fx.ok(entry), (name.into(), dir.into(), source), "{entry}");
        }
    }

    #[test]
    fn every_rejection_has_lok8s_text_and_warning_key() {
        let fx = Fx::new();
        let cases: &[(&str, &str, &str)] = &[
            (
                "{}",
                "?",
                "bootstrap: entry must be a single-key map, got 0 keys: {}",
            ),
            (
                "{bad: 1, two: 2}",
                "bad",
                "bootstrap: entry must be a single-key map, got 2 keys: {\"bad\":1,\"two\":2}",
            ),
            (
                "{zeta: 1, alpha: 2}",
                "alpha",
                "bootstrap: entry must be a single-key map, got 2 keys: {\"zeta\":1,\"alpha\":2}",
            ),
            (
                "cilium: true",
                "cilium",
                "bootstrap: 'cilium' entry value must be a map of {values,env,wait} or chart values, got bool",
            ),
            (
                "cilium: [a]",
                "cilium",
                "bootstrap: 'cilium' entry value must be a map of {values,env,wait} or chart values, got seq",
            ),
            (
                "cilium: text",
                "cilium",
                "bootstrap: 'cilium' entry value must be a map of {values,env,wait} or chart values, got str",
            ),
            (
                "..",
                "..",
                "bootstrap: failed to parse addon name from \"..\"",
            ),
            (
                "x/../..",
                "x/../..",
                "bootstrap: failed to parse addon name from \"x/../..\"",
            ),
            (
                "cilium: {name: true}",
                "cilium",
                "bootstrap: 'cilium' name: must be a non-empty scalar entry name (got bool)",
            ),
            (
                "cilium: {name: 123}",
                "cilium",
                "bootstrap: 'cilium' name: must be a non-empty scalar entry name (got int)",
            ),
            (
                "cilium: {name: null}",
                "cilium",
                "bootstrap: 'cilium' name: must be a non-empty scalar entry name (got null)",
            ),
            (
                "cilium: {name: {a: 1}}",
                "cilium",
                "bootstrap: 'cilium' name: must be a non-empty scalar entry name (got map)",
            ),
            (
                "cilium: {name: ''}",
                "cilium",
                "bootstrap: 'cilium' name: must be a non-empty string",
            ),
            (
                "cilium: {name: 'a b'}",
                "cilium",
                "bootstrap: 'cilium' name: 'a b' is not a valid entry name (must match [A-Za-z0-9._-]+)",
            ),
            (
                "cilium: {wait: yes}",
                "cilium",
                "bootstrap: 'cilium' has a non-boolean wait: 'yes' (use true or false)",
            ),
            (
                "cilium: {wait: \"yes\"}",
                "cilium",
                "bootstrap: 'cilium' has a non-boolean wait: 'yes' (use true or false)",
            ),
            (
                "cilium: {wait: 1}",
                "cilium",
                "bootstrap: 'cilium' has a non-boolean wait: '1' (use true or false)",
            ),
            (
                "cilium: {wait: True}",
                "cilium",
                "bootstrap: 'cilium' has a non-boolean wait: 'True' (use true or false)",
            ),
            (
                "raw: {values: {a: 1}}",
                "raw",
                "bootstrap: 'raw' sets 'values:' but is not a chart addon (no chart.yaml under <root>/.lok8s/addons/raw); 'values:' is helm-only",
            ),
            (
                "raw: {valueFiles: []}",
                "raw",
                "bootstrap: 'raw' sets 'valueFiles:' but is not a chart addon (no chart.yaml under <root>/.lok8s/addons/raw); 'valueFiles:' is helm-only",
            ),
            (
                "cilium: {valueFiles: a.yaml}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: must be a list of file paths (got str)",
            ),
            (
                "cilium: {valueFiles: [1]}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: each element must be a file path string (got int)",
            ),
            (
                "cilium: {valueFiles: ['']}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: empty element — each element must be a file path",
            ),
            (
                "cilium: {valueFiles: [nope.yaml]}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: file not found: <root>/clusters/test.lok8s.dev/nope.yaml",
            ),
            (
                "cilium: {valueFiles: [a.yaml, list.yaml]}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: failed to merge (<root>/clusters/test.lok8s.dev/a.yaml <root>/clusters/test.lok8s.dev/list.yaml)",
            ),
            (
                "cilium: {valueFiles: [a.yaml], values: [1]}",
                "cilium",
                "bootstrap: 'cilium' valueFiles: failed to merge (<root>/clusters/test.lok8s.dev/a.yaml)",
            ),
            (
                "cilium: {env: [A]}",
                "cilium",
                "bootstrap: 'cilium' env: must be a map of KEY: scalar (got seq)",
            ),
            (
                "cilium: {env: {B: {x: 1}, A: [1], C: ok}}",
                "cilium",
                "bootstrap: 'cilium' env: values must be scalars; non-scalar value for: A, B (did you mean values:?)",
            ),
            (
                "cilium: {env: {1BAD: x}}",
                "cilium",
                "bootstrap: 'cilium' env: key '1BAD' is not a valid shell variable name (must match [A-Za-z_][A-Za-z0-9_]*)",
            ),
            (
                "cilium: {dependsOn: x}",
                "cilium",
                "bootstrap: 'cilium' dependsOn: must be a list of entry names (got str)",
            ),
            (
                "cilium: {dependsOn: [a, ~]}",
                "cilium",
                "bootstrap: 'cilium' dependsOn: null element — must be a list of entry names",
            ),
            (
                "cilium: {dependsOn: [[a]]}",
                "cilium",
                "bootstrap: 'cilium' dependsOn: each element must be a scalar entry name (got a map/list element)",
            ),
        ];
        for (entry, key, text) in cases {
            assert_eq!(
                fx.err(entry),
                (key.to_string(), text.to_string()),
                "{entry}"
            );
        }
    }

    #[test]
    fn accepted_explicit_forms() {
        let fx = Fx::new();
        for entry in [
            "cilium: {wait: true}",
            "cilium: {wait: false, values: {a: 1}}",
            "cilium: {wait: FALSE}",
            "cilium: {wait: ~}",
            "cilium: {name: \"123\"}",
            "cilium: {valueFiles: []}",
            "cilium: {valueFiles: [a.yaml], values: {b: 2}}",
            "cilium: {env: {}}",
            "cilium: {env: ~}",
            "cilium: {env: {'': x, _OK1: 1, B: true}}",
            "cilium: {dependsOn: [a, 1, 2.5]}",
            "missing: {values: {a: 1}}",
        ] {
            assert!(fx.parse(entry).is_ok(), "{entry}: {:?}", fx.parse(entry));
        }
    }

    /// Found while fuzzing: every mention of a value file read and parsed it again, so an
    /// 8 MiB spec naming one 8 MiB value file 100,000 times read 800 GB.
    #[test]
    fn a_value_file_is_read_once_per_spec() {
        let fx = Fx::new();
        let entry = "cilium: {valueFiles: [a.yaml, a.yaml]}";
        let checked = ValueFiles::default();
        assert!(fx.parse_with(entry, &checked).is_ok());
        assert_eq!(checked.borrow().len(), 1);
        fs::write(fx.root().join("clusters/test.lok8s.dev/a.yaml"), "- 1\n").unwrap();
        assert!(
            fx.parse_with(entry, &checked).is_ok(),
            "read again instead of remembered"
        );
        assert!(fx.parse(entry).is_err(), "a new spec reads it again");
    }

    #[test]
    fn go_path_helpers() {
        assert_eq!(clean(".lok8s/addons/x/../.."), ".lok8s");
        assert_eq!(clean(".lok8s/addons/"), ".lok8s/addons");
        assert_eq!(clean("a//b/./c/.."), "a/b");
        assert_eq!(clean("/../x"), "/x");
        assert_eq!(base("./targets/foo/"), "foo");
        assert_eq!(base("/"), "/");
        assert_eq!(base("./"), ".");
        assert_eq!(base("bar"), "bar");
    }
}
