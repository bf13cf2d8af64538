//! What the `A` and `B` of `clinv diff` may name, and reading the inventory behind each.
//!
//! A reference is parsed first ([`parse_ref`], pure) and then resolved
//! ([`resolve_ref`]). The grammar, checked in this order:
//!
//! | text | names |
//! |---|---|
//! | `-` | stdin (once) |
//! | `cluster` | the live object, read through [`crate::cluster`] |
//! | `git:REV[:PATH]` | the inventory file at a git revision |
//! | `latest`, `latest~N` | the newest snapshot of the domain, or the N-th before it |
//! | `@DATE` | the snapshot current at DATE (`YYYY-MM-DD` or RFC 3339) |
//! | an existing directory | its `clusterinventory.yaml` (the `render --out` layout) |
//! | a path (has `/`, or ends in `.yaml`/`.yml`/`.json`, or exists) | that file |
//! | anything else | a snapshot id |
//!
//! Snapshot references resolve through the snapshot store of the domain, git references
//! through [`crate::gitops::history`] in the repository given with `--repo`.

use crate::app::cli::ClusterArgs;
use crate::app::settings::Settings;
use crate::cluster::access;
use crate::error::{Error, Result};
use crate::inventory::ClusterInventory;
use crate::project::{MAX_INPUT_BYTES, Project};
use crate::util::time;
use crate::{inventory::parse, util::files};
use std::cell::{Cell, OnceCell};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    Stdin,
    Cluster,
    File(PathBuf),
    Snapshot(SnapshotRef),
    Git { rev: String, path: Option<String> },
}

/// A reference into the snapshot store of the domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotRef {
    /// `latest` (0) or `latest~N`.
    Latest(u32),
    /// `@DATE`: the snapshot current at that time (the text after `@`).
    At(String),
    /// A snapshot id.
    Id(String),
}

/// A resolved reference: the inventory and how to name it in reports.
#[derive(Debug)]
pub struct Resolved {
    pub inventory: ClusterInventory,
    pub label: String,
}

/// Everything resolution may need; the project is looked up only when a reference
/// needs it, so two files can be compared outside any project.
pub struct RefContext<'a> {
    pub settings: &'a Settings,
    /// `--domain`, for the kubeconfig of `cluster` (and the store's domain).
    pub domain: Option<&'a str>,
    pub limits: &'a ClusterArgs,
    /// `--repo`, for `git:` references.
    pub repo: Option<&'a Path>,
    project: OnceCell<Option<Project>>,
    stdin_used: Cell<bool>,
}

impl<'a> RefContext<'a> {
    pub fn new(settings: &'a Settings, domain: Option<&'a str>, limits: &'a ClusterArgs) -> Self {
        RefContext {
            settings,
            domain,
            limits,
            repo: None,
            project: OnceCell::new(),
            stdin_used: Cell::new(false),
        }
    }

    /// The project named by `--root` or found above the working directory, if any.
    pub fn project(&self) -> Option<&Project> {
        self.project
            .get_or_init(|| super::project(self.settings).ok())
            .as_ref()
    }
}

/// Parses a reference; `is_dir`/`exists` answer for the file system.
///
/// # Errors
/// [`Error::Usage`] (exit 2) for malformed `latest~N`, `@DATE` or `git:` syntax.
pub fn parse_ref(
    text: &str,
    is_dir: impl Fn(&Path) -> bool,
    exists: impl Fn(&Path) -> bool,
) -> Result<Ref> {
    let usage = |why: &str| Err(Error::Usage(format!("invalid reference '{text}': {why}")));
    if text.is_empty() {
        return usage(
            "empty; expected a file, '-', 'cluster', latest[~N], @DATE, git:REV[:PATH] or a snapshot id",
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
    if text == "latest" {
        return Ok(Ref::Snapshot(SnapshotRef::Latest(0)));
    }
    if let Some(n) = text.strip_prefix("latest~") {
        return match n.parse::<u32>() {
            Ok(n) => Ok(Ref::Snapshot(SnapshotRef::Latest(n))),
            Err(_) => usage("expected latest~N with N a number"),
        };
    }
    if let Some(date) = text.strip_prefix('@') {
        let valid = time::parse_date(date).is_some() || time::parse_rfc3339(date).is_some();
        if !valid {
            return usage("expected @YYYY-MM-DD or @ and an RFC 3339 time");
        }
        return Ok(Ref::Snapshot(SnapshotRef::At(date.into())));
    }
    let path = Path::new(text);
    if is_dir(path) {
        return Ok(Ref::File(path.join(super::render::CR_FILE)));
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

/// Parses every reference before any is read, so a malformed second reference is
/// reported before the first one reaches a cluster, and stdin is named at most once.
///
/// # Errors
/// As [`parse_ref`]; [`Error::Usage`] when `-` appears twice.
pub fn check_refs(texts: &[&str]) -> Result<()> {
    let mut stdin = 0;
    for text in texts {
        if parse_ref(text, Path::is_dir, Path::exists)? == Ref::Stdin {
            stdin += 1;
        }
    }
    if stdin > 1 {
        return Err(Error::Usage("'-' (stdin) can be used only once".into()));
    }
    Ok(())
}

/// Parses and reads a reference.
///
/// # Errors
/// Malformed syntax ([`Error::Usage`]); an unreadable or invalid file
/// ([`Error::Io`], [`Error::InvalidFile`]); an unreachable cluster or a reference this
/// build cannot resolve ([`Error::Reference`]).
pub fn resolve_ref(cx: &RefContext, text: &str) -> Result<Resolved> {
    let r = parse_ref(text, Path::is_dir, Path::exists)?;
    let inventory = match &r {
        Ref::Stdin => stdin(cx)?,
        Ref::Cluster => live(cx)?,
        Ref::File(path) => file(path)?,
        Ref::Snapshot(s) => snapshot(cx, text, s)?,
        Ref::Git { rev, path } => git(cx, text, rev, path.as_deref())?,
    };
    Ok(Resolved {
        inventory,
        label: text.to_string(),
    })
}

fn decode(path: &Path, bytes: Vec<u8>) -> Result<ClusterInventory> {
    let invalid = |message: String| Error::InvalidFile {
        path: path.to_path_buf(),
        message,
    };
    let text = String::from_utf8(bytes).map_err(|_| invalid("not valid UTF-8".into()))?;
    parse::inventory_from_text(&text).map_err(invalid)
}

fn file(path: &Path) -> Result<ClusterInventory> {
    let bytes = files::read_bounded(path, MAX_INPUT_BYTES).map_err(|e| Error::io(path, e))?;
    decode(path, bytes)
}

fn stdin(cx: &RefContext) -> Result<ClusterInventory> {
    if cx.stdin_used.replace(true) {
        return Err(Error::Usage("'-' (stdin) can be used only once".into()));
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("<stdin>", e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::InvalidFile {
            path: "<stdin>".into(),
            message: format!("input too large (limit {} MiB)", MAX_INPUT_BYTES >> 20),
        });
    }
    decode(Path::new("<stdin>"), bytes)
}

/// The live object, with the same kubeconfig rules as `clinv status`.
fn live(cx: &RefContext) -> Result<ClusterInventory> {
    let project = cx.project();
    let domain = match project {
        Some(p) => Some((p, super::domain(cx.settings, p, cx.domain)?)),
        None => None,
    };
    let opts = access::options(cx.limits.timeout, cx.limits.probe_timeout, false, false);
    let read = access::read_live(
        &super::access(cx.settings),
        domain.as_ref().map(|(p, d)| (*p, d.as_str())),
        opts,
    )?;
    let Some(choice) = &read.choice else {
        let detail = read.result.err().map(|f| f.detail).unwrap_or_default();
        return Err(Error::Reference(format!("cluster: {detail}")));
    };
    cx.settings.printer.debug(&format!(
        "kubeconfig from {}: {:?}",
        choice.origin, choice.paths
    ));
    let live = read.result.map(|found| found.object);
    match live {
        Ok(Some(value)) => parse::inventory_from_value(value).map_err(|m| {
            Error::Reference(format!(
                "cluster: the live ClusterInventory is not readable: {m}"
            ))
        }),
        Ok(None) => Err(Error::Reference(
            "cluster: the cluster has no ClusterInventory 'cluster'".into(),
        )),
        Err(f) => Err(Error::Reference(format!(
            "cluster: cannot read the ClusterInventory: {}: {}",
            f.reason, f.detail
        ))),
    }
}

/// A snapshot of the domain's store: `latest`, `latest~N`, an id, or `@DATE` (the newest
/// snapshot recorded at or before DATE; a bare date means the end of that day, UTC).
fn snapshot(cx: &RefContext, text: &str, r: &SnapshotRef) -> Result<ClusterInventory> {
    let project = cx.project().ok_or_else(|| {
        Error::Reference(format!(
            "'{text}' names a snapshot, but no lok8s project was found (pass --root)"
        ))
    })?;
    let domain = super::domain(cx.settings, project, cx.domain)?;
    let store = super::store(cx.settings, project).domain(&domain);
    let journal = store.read()?;
    let snap = match r {
        SnapshotRef::Latest(n) => crate::store::resolve(&journal, &format!("latest~{n}"))?,
        SnapshotRef::Id(id) => crate::store::resolve(&journal, id)?,
        SnapshotRef::At(date) => {
            let until = crate::history::audit::parse_bound(date, true).ok_or_else(|| {
                Error::Usage(format!(
                    "invalid reference '{text}': not a date or RFC 3339 time"
                ))
            })?;
            journal
                .newest_first()
                .find(|s| {
                    crate::history::audit::parse_bound(&s.record.at, false)
                        .is_some_and(|at| at <= until)
                })
                .ok_or_else(|| {
                    Error::Reference(format!(
                        "no snapshot of {domain} recorded at or before {date}"
                    ))
                })?
        }
    };
    store.inventory(&snap.record)
}

/// Without git support a `git:` reference cannot be read.
#[cfg(not(feature = "gitops"))]
fn git(_cx: &RefContext, _text: &str, _rev: &str, _path: Option<&str>) -> Result<ClusterInventory> {
    Err(Error::NoGitops("a git: reference"))
}

/// The committed inventory at `REV[:PATH]` in the repository given with `--repo`
/// (default path: `clusters/<domain>/inventory/clusterinventory.yaml`).
#[cfg(feature = "gitops")]
fn git(cx: &RefContext, text: &str, rev: &str, path: Option<&str>) -> Result<ClusterInventory> {
    let repo = cx
        .repo
        .ok_or_else(|| Error::Usage(format!("'{text}' is a git reference: pass --repo DIR")))?;
    let default;
    let path = match path {
        Some(p) => p,
        None => {
            let project = cx.project().ok_or_else(|| {
                Error::Usage(format!(
                    "'{text}': give the path (git:REV:PATH) or a project"
                ))
            })?;
            let domain = super::domain(cx.settings, project, cx.domain)?;
            default = format!("clusters/{domain}/inventory/clusterinventory.yaml");
            &default
        }
    };
    let bytes = crate::gitops::history::file_at(repo, rev, path)
        .map_err(|e| Error::Reference(format!("'{text}': {e}")))?;
    decode(
        Path::new(&format!("{}:{rev}:{path}", repo.display())),
        bytes,
    )
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
            "@yesterday",
            "@2026-13-01",
            "git:",
            "git::x",
            "git:main:",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(matches!(err, Error::Usage(_)), "{bad}: {err}");
        }
    }
}
