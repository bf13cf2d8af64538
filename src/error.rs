//! The library's error type and the one mapping from errors to exit codes.

use std::path::PathBuf;

/// Exit codes, documented in the README. Kept in one place so every command agrees.
pub mod exit {
    /// Success (also: a fail-soft command that only warned).
    pub const OK: i32 = 0;
    /// Invalid input, a refused render, or any other failure of the command itself.
    pub const FAILURE: i32 = 1;
    /// Usage error: unknown flag, bad flag value, unsupported output format, a
    /// `-o jsonpath=` template that does not parse.
    pub const USAGE: i32 = 2;
    /// Not recorded: `publish` neither applied nor recorded the inventory (always), or
    /// applied it but could not record it (with `--strict`).
    pub const NOT_RECORDED: i32 = 11;
    /// `--strict`: a delivery was refused because the target (the live object, the
    /// branch) holds an inventory rendered later — the clock-skew warning, a commit
    /// refused as older. `--allow-older` delivers it.
    pub const OLDER: i32 = 13;

    /// `clinv diff` follows the diff/kubectl convention instead of the codes above:
    /// 0 the inventories are the same, 1 they differ, 2 any error (even one that is exit
    /// 1 elsewhere). Ignored changes never make them differ.
    pub mod diff {
        pub const SAME: i32 = 0;
        pub const DIFFERENT: i32 = 1;
        pub const ERROR: i32 = 2;
    }

    /// With `--strict`, why a publish, replay or status could not reach the cluster.
    pub fn for_reason(reason: crate::delivery::Reason) -> i32 {
        use crate::delivery::Reason as R;
        match reason {
            R::RenderFailed => FAILURE,
            R::NoKubeconfig => 3,
            R::BadKubeconfig => 4,
            R::Unreachable => 5,
            R::Unauthorized => 6,
            R::Forbidden => 7,
            R::Conflict => 8,
            R::ServerError => 9,
            R::Rejected => 10,
            R::ClockSkew => OLDER,
            R::GitopsManaged => 14,
            R::TlsIdentity => 15,
            R::DomainMismatch => 12,
        }
    }
}

/// A line/column position (both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Everything that can stop a clinv command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Flags or arguments that do not make sense together.
    #[error("{0}")]
    Usage(String),

    /// No `--root` and no ancestor of the working directory looks like a lok8s project.
    #[error(
        "no lok8s project found in {0} or its parents (looked for .lok8s/ or clusters/); pass --root"
    )]
    NoProject(PathBuf),

    /// `--root` does not name a directory.
    #[error("project root not found: {0}")]
    RootNotFound(PathBuf),

    /// A domain that fails lok8s's name rule (also the path-traversal guard).
    #[error("invalid domain name '{0}' (must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$)")]
    InvalidDomain(String),

    /// A domain that cannot be used: none is selected, or the project and the store do
    /// not know it. The message says why and lists the known domains ("did you mean").
    #[error("{0}")]
    Domain(String),

    /// `clusters/<domain>/cluster.lok8s.yaml` is missing or not a regular file.
    #[error("inventory: cluster spec not found: {0}")]
    SpecNotFound(PathBuf),

    /// The spec's `kind` is present but not a bare driver name.
    #[error("inventory: cluster spec declares a malformed kind: {0}")]
    MalformedKind(PathBuf),

    /// A YAML file that does not parse; names the file, line and column.
    #[error("{path}:{pos}: invalid YAML: {message}")]
    InvalidYaml {
        path: PathBuf,
        pos: Pos,
        message: String,
    },

    /// A file that cannot be used as it is (too large, not UTF-8, …).
    #[error("{path}: {message}")]
    InvalidFile { path: PathBuf, message: String },

    /// An environment variable with an unusable value.
    #[error("{name}: {message}")]
    InvalidEnv { name: &'static str, message: String },

    /// The rendered object breaks the CRD's constraints; one line per violation.
    #[error("the ClusterInventory would be rejected by the API server:\n{}", .0.join("\n"))]
    Invalid(Vec<String>),

    /// `--strict` and at least one warning.
    #[error("--strict: {0} warning(s) treated as errors")]
    Strict(usize),

    /// `--strict` and the cluster could not be reached or refused the inventory.
    #[error("{message}")]
    Unapplied {
        reason: crate::delivery::Reason,
        message: String,
    },

    /// `clinv index` in a project without `.lok8s/addons` (lok8s's wording).
    #[error("addons dir not found: {}", .0.display())]
    NoAddonsDir(PathBuf),

    /// An addon index (file, download or cache) that is not a valid index; names the
    /// origin and the field.
    #[error("{origin}: {message}")]
    InvalidIndex { origin: String, message: String },

    /// A URL index that could neither be fetched nor found in the cache.
    #[error("addon index {url}: {message}")]
    IndexUnavailable { url: String, message: String },

    /// A ClusterInventory (`--from` file or live object) whose addons cannot be read;
    /// names the origin and the field.
    #[error("{origin}: {message}")]
    InvalidInventory { origin: String, message: String },
    /// `-o jsonpath=TEMPLATE` that cannot be applied to the document (a field none of
    /// its inputs has, an index out of bounds); kubectl's wording.
    #[error("error executing jsonpath \"{template}\": {message}")]
    JsonPath { template: String, message: String },

    /// A reference (`clinv diff A B`) that names nothing clinv can read here.
    #[error("{0}")]
    Reference(String),

    /// An error of `clinv diff`: exit 2 whatever the cause, because 1 means "the
    /// inventories differ" there. Wrapped once, at the command's edge.
    #[error(transparent)]
    Diff(Box<Error>),

    /// `clinv addons` on a spec whose `kind` is malformed (lok8s's wording).
    #[error("cluster spec for '{domain}' declares a malformed kind ({})", .path.display())]
    MalformedKindOf { domain: String, path: PathBuf },

    /// A snapshot reference that names no snapshot, or more than one.
    #[error("{0}")]
    NoSnapshot(String),

    /// `clinv report` for a domain with no recorded or committed history.
    #[error("no history for {0}: publish or commit it first")]
    NoHistory(String),

    /// The snapshot store is damaged: a checksum mismatch or an unreadable record.
    #[error("{0}")]
    Damaged(String),

    /// A lock (the store's or a repository's) still held by another process.
    #[error("{0}")]
    Locked(String),

    /// `publish` could not record the inventory in the store, and did not apply it
    /// (or, with `--strict`, applied it): exit 11.
    #[error("not recorded: {0}")]
    NotRecorded(String),

    /// `--strict`: the target holds an inventory rendered later and this one was not
    /// delivered (a commit refused as older, clock skew): exit 13.
    #[error("{0}")]
    Older(String),

    /// A GitOps repository operation failed, or the repository's state forbids it.
    #[error("{0}")]
    Git(String),

    /// No author for a GitOps commit.
    #[error(
        "no commit author: pass --author \"Name <email>\" or set user.name and user.email in git config"
    )]
    NoAuthor,

    /// A push that the remote rejected or that did not land in time.
    #[error("{0}")]
    Push(String),

    /// `--sign`: the signing program is not configured, not runnable, or failed.
    #[error("{0}")]
    Sign(String),

    /// A feature left out of this build (`cargo build --no-default-features`).
    #[error("{0} needs clinv built with the gitops feature")]
    NoGitops(&'static str),

    /// A value serde could not encode: a bug or a resource limit, never bad usage.
    #[error("cannot encode {what}: {message}")]
    Encode { what: &'static str, message: String },

    /// stdout was closed by the reader (`clinv render | head`): stop quietly, exit 0.
    #[error("broken pipe")]
    BrokenPipe,

    /// The async runtime could not be started: a local failure, never the cluster's.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),

    /// An I/O failure, with the path it concerns.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code for this error: the one mapping (every variant is listed, so
    /// a new one has to choose).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::NoGitops(_) => exit::USAGE,
            Error::NotRecorded(_) => exit::NOT_RECORDED,
            Error::Older(_) => exit::OLDER,
            Error::BrokenPipe => exit::OK,
            Error::Unapplied { reason, .. } => exit::for_reason(*reason),
            Error::Diff(_) => exit::diff::ERROR,
            Error::NoProject(_)
            | Error::RootNotFound(_)
            | Error::InvalidDomain(_)
            | Error::Domain(_)
            | Error::SpecNotFound(_)
            | Error::MalformedKind(_)
            | Error::MalformedKindOf { .. }
            | Error::InvalidYaml { .. }
            | Error::InvalidFile { .. }
            | Error::InvalidEnv { .. }
            | Error::Invalid(_)
            | Error::Strict(_)
            | Error::NoAddonsDir(_)
            | Error::InvalidIndex { .. }
            | Error::IndexUnavailable { .. }
            | Error::InvalidInventory { .. }
            | Error::Reference(_)
            | Error::JsonPath { .. }
            | Error::NoSnapshot(_)
            | Error::NoHistory(_)
            | Error::Damaged(_)
            | Error::Locked(_)
            | Error::Git(_)
            | Error::NoAuthor
            | Error::Push(_)
            | Error::Sign(_)
            | Error::Encode { .. }
            | Error::Runtime(_)
            | Error::Io { .. } => exit::FAILURE,
        }
    }

    /// A serde encoding failure of `what` (e.g. "JSON", "the index").
    pub fn encode(what: &'static str, err: impl std::fmt::Display) -> Error {
        Error::Encode {
            what,
            message: err.to_string(),
        }
    }

    /// Marks an error of `clinv diff` (see [`Error::Diff`]); a broken pipe stays a quiet
    /// exit 0.
    pub fn in_diff(self) -> Error {
        match self {
            Error::BrokenPipe | Error::Diff(_) => self,
            other => Error::Diff(Box::new(other)),
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// How a command ended when it did not fail outright; mapped to its exit code next to
/// [`Error::exit_code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done.
    Done,
    /// A comparison found the two sides different (`clinv drift`: the cluster was not
    /// deployed from the local spec).
    Different,
    /// A comparison had nothing to compare with.
    Unknown,
    /// `--strict` deliveries that failed, each already reported (`replay --all` goes on
    /// with the other domains): the worst reason's code.
    Unapplied(Vec<crate::delivery::Reason>),
}

impl Outcome {
    /// The process exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Done => exit::OK,
            Outcome::Different => exit::diff::DIFFERENT,
            Outcome::Unknown => exit::diff::ERROR,
            Outcome::Unapplied(reasons) => reasons
                .iter()
                .map(|r| exit::for_reason(*r))
                .max()
                .unwrap_or(exit::OK),
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_errors_exit_2_except_a_broken_pipe() {
        for e in [
            Error::Git("x".into()),
            Error::Usage("x".into()),
            Error::Reference("x".into()),
            Error::io("p", std::io::Error::other("x")),
        ] {
            let text = e.to_string();
            let wrapped = e.in_diff();
            assert_eq!(wrapped.exit_code(), exit::diff::ERROR);
            assert_eq!(wrapped.to_string(), text, "the message is unchanged");
            assert_eq!(wrapped.in_diff().exit_code(), exit::diff::ERROR);
        }
        assert_eq!(Error::BrokenPipe.in_diff().exit_code(), exit::OK);
        assert_eq!(Error::Reference("x".into()).exit_code(), exit::FAILURE);
        assert_eq!(Error::NotRecorded("x".into()).exit_code(), 11);
    }

    #[test]
    fn outcomes_map_to_codes() {
        use crate::delivery::Reason;
        assert_eq!(Outcome::Done.exit_code(), exit::OK);
        assert_eq!(Outcome::Different.exit_code(), 1);
        assert_eq!(Outcome::Unknown.exit_code(), 2);
        assert_eq!(Outcome::Unapplied(vec![]).exit_code(), exit::OK);
        assert_eq!(exit::for_reason(Reason::ClockSkew), 13);
        assert_eq!(exit::for_reason(Reason::GitopsManaged), 14);
        assert_eq!(exit::for_reason(Reason::TlsIdentity), 15);
        assert_eq!(Error::Older("x".into()).exit_code(), 13);
        let both = Outcome::Unapplied(vec![Reason::Rejected, Reason::NoKubeconfig]);
        assert_eq!(both.exit_code(), exit::for_reason(Reason::Rejected));
    }

    #[test]
    fn an_encoding_failure_is_not_a_usage_error() {
        let e = Error::encode("JSON", "key must be a string");
        assert_eq!(e.exit_code(), exit::FAILURE);
        assert_eq!(e.to_string(), "cannot encode JSON: key must be a string");
    }
}
