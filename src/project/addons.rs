//! Addon metadata read from an entry's directory (spec §4): `chartVersion` from
//! `chart.yaml`, `category` from a text search.
//!
//! [`Reader::facts`] is the one answer both the inventory and the `addons` view give, for
//! framework addons and targets alike.
//!
//! Reads stay inside the project: a directory or pin that resolves outside the root is
//! not read and is reported, and the category walk never follows symbolic links.

use crate::project::MAX_INPUT_BYTES;
use crate::project::bootstrap::{Entry, Source, clean};
use crate::util::files;
use crate::yaml::{Doc, Node};
use regex::bytes::Regex;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The inventory's category pattern: the whitespace never crosses a newline.
static CATEGORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"lok8s\.dev/category:[ \t\x0B\x0C\r]*[a-zA-Z0-9-]+").expect("valid regex")
});

/// Limits of the category walk; real addon directories hold a few dozen small files.
const MAX_WALK_ENTRIES: usize = 20_000;
const MAX_WALK_DEPTH: usize = 32;

/// What the inventory records of an entry's directory (§4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub chart_version: Option<String>,
    pub category: Option<String>,
}

/// A problem met while reading metadata; reported as a warning, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaIssue {
    /// The path resolves outside the project root: a chart pin there is still read (as
    /// lok8s does), a category never (no link is followed for it).
    OutsideRoot(PathBuf),
    /// The category walk stopped at a limit.
    WalkLimit(PathBuf),
    /// A `chart.yaml` that exists but gives no pin: unreadable, too large, not UTF-8 or
    /// not YAML. lok8s omits the chartVersion silently; clinv says why (never the text).
    UnreadablePin(PathBuf, String),
}

impl MetaIssue {
    /// One issue of each kind, at `addons/x`: what the readers' tests say.
    #[cfg(test)]
    pub(crate) fn each() -> [MetaIssue; 3] {
        let p = || PathBuf::from("addons/x");
        [
            MetaIssue::OutsideRoot(p()),
            MetaIssue::WalkLimit(p()),
            MetaIssue::UnreadablePin(p(), "not YAML".into()),
        ]
    }

    /// The warning of `reader` (`index`, `inventory`), saying what it does without the
    /// value: of an entry outside the root (`outside_root`), of a missing pin (`no_pin`).
    pub fn warning(&self, reader: &str, outside_root: &str, no_pin: &str) -> String {
        match self {
            MetaIssue::OutsideRoot(p) => format!(
                "{reader}: {} resolves outside the project root; {outside_root}",
                p.display()
            ),
            MetaIssue::WalkLimit(p) => format!(
                "{reader}: stopped searching {} for lok8s.dev/category (too many files)",
                p.display()
            ),
            MetaIssue::UnreadablePin(p, why) => {
                format!("{reader}: {}: {why}; {no_pin}", p.display())
            }
        }
    }
}

/// Reads metadata of directories below one project root.
#[derive(Debug)]
pub struct Reader {
    /// The canonical project root, when it can be resolved.
    root: Option<PathBuf>,
    pub issues: Vec<MetaIssue>,
    /// What each directory gave, so a spec naming one addon many times reads it once.
    cache: HashMap<(PathBuf, &'static str), Option<String>>,
}

impl Reader {
    pub fn new(root: &Path) -> Reader {
        Reader {
            root: root.canonicalize().ok(),
            issues: Vec::new(),
            cache: HashMap::new(),
        }
    }

    /// `read`'s answer for `dir`, computed once per directory and field.
    fn cached(
        &mut self,
        dir: &Path,
        field: &'static str,
        read: impl FnOnce(&mut Reader) -> Option<String>,
    ) -> Option<String> {
        let key = (dir.to_path_buf(), field);
        if let Some(hit) = self.cache.get(&key) {
            return hit.clone();
        }
        let value = read(self);
        self.cache.insert(key, value.clone());
        value
    }

    /// True when `path` exists and resolves inside the root; records an issue otherwise.
    fn inside(&mut self, path: &Path) -> bool {
        let Ok(real) = path.canonicalize() else {
            return false;
        };
        if self.root.as_ref().is_some_and(|r| real.starts_with(r)) {
            return true;
        }
        self.issue(MetaIssue::OutsideRoot(path.to_path_buf()));
        false
    }

    /// Records `issue` once.
    fn issue(&mut self, issue: MetaIssue) {
        if !self.issues.contains(&issue) {
            self.issues.push(issue);
        }
    }

    /// The chart pin and category of `dir`: what `render` records and `addons` shows.
    pub fn facts(&mut self, dir: &Path) -> Facts {
        Facts {
            chart_version: self.chart_version(dir),
            category: self.category(dir),
        }
    }

    /// `chartVersion` (§4.1): the raw text of `chart.yaml`'s top-level `version`.
    pub fn chart_version(&mut self, dir: &Path) -> Option<String> {
        self.pin_scalar(dir, "version")
    }

    /// `appVersion` of a chart pin: `chart.yaml`'s top-level `appVersion`, read by the
    /// same rules as [`Reader::chart_version`] (absent, null, empty or `false` → none).
    /// lok8s's khelm pins carry none today; the index (§10) lists it when one does.
    pub fn app_version(&mut self, dir: &Path) -> Option<String> {
        self.pin_scalar(dir, "appVersion")
    }

    /// The raw text of a top-level scalar `key` of `dir/chart.yaml`.
    fn pin_scalar(&mut self, dir: &Path, key: &'static str) -> Option<String> {
        self.cached(dir, key, |r| r.read_pin_scalar(dir, key))
    }

    fn read_pin_scalar(&mut self, dir: &Path, key: &str) -> Option<String> {
        let chart = dir.join("chart.yaml");
        if !chart.is_file() {
            return None;
        }
        // lok8s reads the pin through any link (a shared checkout outside the project):
        // so does clinv, or the two managers would flip-flop the spec. Only the one
        // scalar is taken, through a bounded read; the link is reported.
        self.inside(&chart);
        let bytes = match files::read_bounded(&chart, MAX_INPUT_BYTES) {
            Ok(bytes) => bytes,
            Err(e) => {
                let why = if e.kind() == std::io::ErrorKind::InvalidData {
                    format!("larger than {} MiB", MAX_INPUT_BYTES >> 20)
                } else {
                    format!("cannot be read ({})", e.kind())
                };
                self.issue(MetaIssue::UnreadablePin(chart, why));
                return None;
            }
        };
        match std::str::from_utf8(&bytes).map(Doc::parse) {
            Err(_) => self.issue(MetaIssue::UnreadablePin(chart, "not UTF-8 text".into())),
            Ok(Err(e)) => self.issue(MetaIssue::UnreadablePin(
                chart,
                format!("not valid YAML (line {}, column {})", e.pos.line, e.pos.col),
            )),
            Ok(Ok(_)) => {}
        }
        pin_field(&bytes, key)
    }

    /// `category` (§4.2): the byte-wise smallest `lok8s.dev/category:` match in any
    /// regular file below `dir`, its value stripped of whitespace.
    pub fn category(&mut self, dir: &Path) -> Option<String> {
        self.cached(dir, "category", |r| r.read_category(dir))
    }

    fn read_category(&mut self, dir: &Path) -> Option<String> {
        // A directory that is itself a symlink yields nothing (lok8s's Go port).
        let meta = std::fs::symlink_metadata(dir).ok()?;
        if !meta.is_dir() || !self.inside(dir) {
            return None;
        }
        let re = &*CATEGORY;
        let mut best: Option<Vec<u8>> = None;
        let mut stack = vec![(dir.to_path_buf(), 0usize)];
        let mut seen = 0usize;
        while let Some((path, depth)) = stack.pop() {
            let Ok(read) = std::fs::read_dir(&path) else {
                continue;
            };
            for item in read.flatten() {
                seen += 1;
                if seen > MAX_WALK_ENTRIES || depth > MAX_WALK_DEPTH {
                    self.issues.push(MetaIssue::WalkLimit(dir.to_path_buf()));
                    return finish(best);
                }
                let Ok(kind) = item.file_type() else { continue };
                if kind.is_dir() {
                    stack.push((item.path(), depth + 1));
                } else if kind.is_file() {
                    let Ok(bytes) = files::read_bounded(&item.path(), MAX_INPUT_BYTES) else {
                        continue;
                    };
                    if let Some(m) = smallest_match(re, &bytes)
                        && best.as_deref().is_none_or(|b| m < b)
                    {
                        best = Some(m.to_vec());
                    }
                }
            }
        }
        finish(best)
    }

    /// The `addons` view's TYPE column: `khelm`, `raw`, `empty`, or `missing` when there is
    /// no directory (a typo'd name, a target not yet written).
    pub fn addon_type(&mut self, dir: &Path) -> &'static str {
        let kind = self.cached(dir, "type", |r| Some(r.read_type(dir).to_string()));
        TYPES
            .into_iter()
            .find(|t| kind.as_deref() == Some(*t))
            .unwrap_or("empty")
    }

    fn read_type(&mut self, dir: &Path) -> &'static str {
        let chart = dir.join("chart.yaml");
        if !dir.is_dir() {
            "missing"
        } else if chart.is_file()
            && self.inside(&chart)
            && files::read_bounded(&chart, MAX_INPUT_BYTES).is_ok_and(|b| is_khelm(&b))
        {
            "khelm"
        } else if dir.join("kustomization.yaml").is_file()
            || dir.join("kustomization.yml").is_file()
        {
            "raw"
        } else {
            "empty"
        }
    }
}

/// The values of the view's TYPE column.
const TYPES: [&str; 4] = ["khelm", "raw", "empty", "missing"];

/// The raw text of a top-level scalar `key` of a chart pin's bytes (§4.1): none when the
/// pin is not UTF-8 YAML, or the value is absent, null, empty, not a scalar, or `false`.
pub fn pin_field(bytes: &[u8], key: &str) -> Option<String> {
    let doc = Doc::parse(std::str::from_utf8(bytes).ok()?).ok()?;
    let node = doc.get(doc.root()?, key)?;
    match doc.node(node) {
        Node::Scalar { text, .. } if doc.is_null(node) || text.is_empty() => None,
        Node::Scalar { text, .. } if &**text == "false" => None,
        Node::Scalar { text, .. } => Some(text.to_string()),
        _ => None,
    }
}

/// True when a chart pin's bytes are a khelm `ChartRenderer` (the view's TYPE `khelm`).
pub fn is_khelm(bytes: &[u8]) -> bool {
    let Some(doc) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| Doc::parse(t).ok())
    else {
        return false;
    };
    doc.root()
        .and_then(|r| doc.get(r, "kind"))
        .and_then(|k| doc.text(k).map(|t| t == "ChartRenderer"))
        .unwrap_or(false)
}

fn smallest_match<'a>(re: &Regex, bytes: &'a [u8]) -> Option<&'a [u8]> {
    re.find_iter(bytes).map(|m| m.as_bytes()).min()
}

fn finish(best: Option<Vec<u8>>) -> Option<String> {
    let best = best?;
    let text = String::from_utf8_lossy(&best);
    let value = text.rsplit(':').next().unwrap_or_default();
    Some(value.chars().filter(|c| !c.is_whitespace()).collect())
}

/// One row of the `addons` view: the inventory's facts of an entry (name, source, version,
/// category — the same reader as `render`), and where the entry lives and is configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub name: String,
    pub source: Source,
    /// `None` prints as `-` in the table and is omitted from JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The entry's directory, normalised and relative to the project root.
    pub path: String,
    pub configure: String,
}

/// Builds the view's rows for parsed entries.
pub fn view_rows(entries: &[Entry], root: &Path, reader: &mut Reader) -> Vec<Row> {
    entries
        .iter()
        .map(|e| {
            let Facts {
                chart_version,
                category,
            } = reader.facts(&e.dir);
            Row {
                name: e.name.clone(),
                source: e.source,
                category,
                kind: reader.addon_type(&e.dir).into(),
                version: chart_version,
                path: relative(&e.dir, root),
                configure: match e.source {
                    Source::Target if e.key.starts_with("./") => "per-cluster glue",
                    Source::Target => "shared glue",
                    Source::Addon => hint(&e.dir),
                }
                .into(),
            }
        })
        .collect()
}

/// `dir` normalised (`a/./b/../c` → `a/c`) and relative to `root` when inside it.
fn relative(dir: &Path, root: &Path) -> String {
    let dir = clean(&dir.to_string_lossy());
    let root = clean(&root.to_string_lossy());
    match dir
        .strip_prefix(&root)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(rest) => rest.to_string(),
        None => dir,
    }
}

/// The one-line configuration hint, looked up by the directory's base name.
fn hint(dir: &Path) -> &'static str {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("cilium") => {
            "encryption + policy mode (policyAuditMode) in cilium inline values / values.<driver>.yaml"
        }
        Some("cert-manager") => {
            "issue TLS via ClusterIssuer/Certificate CRs in a networking target"
        }
        _ => "see docs/guide/addons.md",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        dir
    }

    fn version(chart: &str) -> Option<String> {
        let d = dir_with(&[("a/chart.yaml", chart)]);
        Reader::new(d.path()).chart_version(&d.path().join("a"))
    }

    fn app_version(chart: &str) -> Option<String> {
        let d = dir_with(&[("a/chart.yaml", chart)]);
        Reader::new(d.path()).app_version(&d.path().join("a"))
    }

    /// `version` and `appVersion` follow one rule: a scalar is kept as written (YAML
    /// would read `1.10` as 1.1 and `True` as a boolean); `false`, empty, null or not a
    /// scalar is no version.
    #[test]
    fn chart_and_app_versions_keep_raw_text() {
        for (value, kept) in [
            ("1.10", true),
            ("010", true),
            ("v1.21.1", true),
            ("True", true),
            ("False", true),
            ("false", false),
            ("''", false),
            ("~", false),
            ("{a: 1}", false),
            ("[1]", false),
        ] {
            let want = kept.then(|| value.to_string());
            assert_eq!(version(&format!("version: {value}")), want, "{value}");
            let chart = format!("version: 1.2.3\nappVersion: {value}\n");
            assert_eq!(app_version(&chart), want, "{value}");
        }
        for chart in ["name: x", "", "- 1", "version: [", "version: 1.2.3\n"] {
            assert_eq!(app_version(chart), None, "{chart}");
        }
        for chart in ["name: x", "", "- 1", "version: ["] {
            assert_eq!(version(chart), None, "{chart}");
        }
        let renderer = "kind: ChartRenderer\nversion: 1.20.1\n";
        assert_eq!(version(renderer).as_deref(), Some("1.20.1"));
        let d = tempfile::tempdir().unwrap();
        assert_eq!(
            Reader::new(d.path()).chart_version(&d.path().join("none")),
            None
        );
    }

    fn category(files: &[(&str, &str)]) -> Option<String> {
        let d = dir_with(files);
        Reader::new(d.path()).category(&d.path().join("a"))
    }

    /// Found while fuzzing: each of a spec's entries read its directory again, so a spec
    /// naming one addon 1,000,000 times read the same files 1,000,000 times.
    #[test]
    fn a_directory_is_read_once_per_reader() {
        let d = dir_with(&[
            ("a/chart.yaml", "kind: ChartRenderer\nversion: 1.2.3\n"),
            ("a/k.yaml", "lok8s.dev/category: networking\n"),
        ]);
        let dir = d.path().join("a");
        let mut reader = Reader::new(d.path());
        let read = |r: &mut Reader| (r.chart_version(&dir), r.category(&dir), r.addon_type(&dir));
        let first = read(&mut reader);
        assert_eq!(
            first,
            (Some("1.2.3".into()), Some("networking".into()), "khelm")
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read(&mut reader), first, "read again instead of remembered");
        assert_eq!(read(&mut Reader::new(d.path())), (None, None, "missing"));
    }

    #[test]
    fn category_is_the_bytewise_first_match() {
        type Files<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Files, Option<&str>)] = &[
            (
                &[(
                    "a/kustomization.yaml",
                    "labels:\n- pairs:\n    lok8s.dev/category: networking\n",
                )],
                Some("networking"),
            ),
            (
                &[(
                    "a/k.yaml",
                    "pairs: { lok8s.dev/name: cm, lok8s.dev/category: infrastructure }",
                )],
                Some("infrastructure"),
            ),
            (
                &[
                    ("a/x", "lok8s.dev/category:\talpha-1"),
                    ("a/y", "lok8s.dev/category: zeta"),
                ],
                Some("alpha-1"),
            ),
            (
                &[
                    ("a/x", "lok8s.dev/category:   networking"),
                    ("a/deep/y", "lok8s.dev/category: storage"),
                ],
                Some("networking"),
            ),
            (
                &[("a/x", "# lok8s.dev/category: storage_x")],
                Some("storage"),
            ),
            (
                &[("a/x", "lok8s.dev/category: b\nlok8s.dev/category: a")],
                Some("a"),
            ),
            (&[("a/x", "lok8s.dev/category:\nnetworking")], None),
            (&[("a/x", "LOK8S.dev/category: x")], None),
            (&[("a/x", "nothing")], None),
        ];
        for (files, want) in cases {
            assert_eq!(category(files).as_deref(), *want, "{files:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn category_does_not_follow_symlinks() {
        let d = dir_with(&[
            ("outside/x", "lok8s.dev/category: leaked"),
            ("a/y", "nothing"),
        ]);
        std::os::unix::fs::symlink(d.path().join("outside/x"), d.path().join("a/link")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), d.path().join("a/dirlink")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), d.path().join("linked")).unwrap();
        let mut r = Reader::new(d.path());
        assert_eq!(r.category(&d.path().join("a")), None);
        assert_eq!(r.category(&d.path().join("linked")), None);
    }

    #[cfg(unix)]
    #[test]
    fn pins_outside_the_root_are_read_and_reported() {
        let outside = dir_with(&[("chart.yaml", "version: 6.6.6\n")]);
        let d = dir_with(&[("a/k", "x")]);
        std::os::unix::fs::symlink(
            outside.path().join("chart.yaml"),
            d.path().join("a/chart.yaml"),
        )
        .unwrap();
        let mut r = Reader::new(d.path());
        // Read through the link as lok8s does, and reported.
        assert_eq!(
            r.chart_version(&d.path().join("a")).as_deref(),
            Some("6.6.6")
        );
        assert_eq!(
            r.issues,
            [MetaIssue::OutsideRoot(d.path().join("a/chart.yaml"))]
        );
    }

    /// The view and the inventory read a target's directory alike: a per-cluster chart
    /// pin has its version and category, not lok8s's `target` / `-`.
    #[test]
    fn view_rows_give_targets_their_facts_and_a_clean_path() {
        let d = dir_with(&[
            (
                "clusters/d/addons/cm/chart.yaml",
                "kind: ChartRenderer\nversion: v1.18.0\n",
            ),
            (
                "clusters/d/addons/cm/k.yaml",
                "lok8s.dev/category: infrastructure\n",
            ),
        ]);
        let root = d.path();
        let entry = |key: &str, dir: &str, source| Entry {
            key: key.into(),
            name: crate::project::bootstrap::base(key),
            dir: PathBuf::from(format!("{}/{dir}", root.display())),
            source,
        };
        let entries = [
            entry("./addons/cm", "clusters/d/./addons/cm", Source::Target),
            entry("../.targets/x", "clusters/d/../.targets/x", Source::Target),
            entry("nope", ".lok8s/addons/nope", Source::Addon),
        ];
        let rows = view_rows(&entries, root, &mut Reader::new(root));
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                let v = |o: &Option<String>| o.clone().unwrap_or_default();
                (
                    v(&r.version),
                    v(&r.category),
                    r.kind.as_str(),
                    r.path.as_str(),
                    r.configure.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "v1.18.0".into(),
                    "infrastructure".into(),
                    "khelm",
                    "clusters/d/addons/cm",
                    "per-cluster glue"
                ),
                (
                    String::new(),
                    String::new(),
                    "missing",
                    "clusters/.targets/x",
                    "shared glue"
                ),
                (
                    String::new(),
                    String::new(),
                    "missing",
                    ".lok8s/addons/nope",
                    "see docs/guide/addons.md"
                ),
            ]
        );
    }

    #[test]
    fn addon_types() {
        let d = dir_with(&[
            ("k/chart.yaml", "kind: ChartRenderer\nversion: 1\n"),
            ("c/chart.yaml", "kind: Other\n"),
            ("c/kustomization.yml", ""),
            ("e/readme", ""),
        ]);
        let mut r = Reader::new(d.path());
        assert_eq!(r.addon_type(&d.path().join("k")), "khelm");
        assert_eq!(r.addon_type(&d.path().join("c")), "raw");
        assert_eq!(r.addon_type(&d.path().join("e")), "empty");
        assert_eq!(r.addon_type(&d.path().join("missing")), "missing");
    }
}
