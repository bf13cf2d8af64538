//! The library's typed errors and the one mapping from errors to exit codes.
//!
//! Each variant says what went wrong in terms a caller can act on; a variant's message
//! never folds in its cause: [`chain`] prints the causes after it, as `[error]` shows them.
//! Usage errors (flags that do not make sense together) are not here: only the command
//! line makes them (`app::Failure`). A malformed value the library itself parses (a
//! reference, a time, an `--ignore` path) is an [`ArgumentError`].

mod git;
mod input;
mod oci;
mod store;

pub use git::{Cause, GitError, PushError, SharedBootstrap, SignError};
pub use input::{ArgumentError, DomainError, InventoryError, ReferenceError, UnknownIn};
pub use oci::{
    Elsewhere, KeyProblem, OciError, OciReferenceError, PullProblem, TagListProblem, Unverified,
};
pub use store::{Damaged, SnapshotError};

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
    /// `--strict`: no kubeconfig was found (`KUBECONFIG`, `~/.kube/config`).
    pub const NO_KUBECONFIG: i32 = 3;
    /// `--strict`: the kubeconfig or context cannot be used (also a failing exec plugin).
    pub const BAD_KUBECONFIG: i32 = 4;
    /// `--strict`: the API server did not answer (refused, timed out).
    pub const UNREACHABLE: i32 = 5;
    /// `--strict`: 401.
    pub const UNAUTHORIZED: i32 = 6;
    /// `--strict`: 403 (RBAC).
    pub const FORBIDDEN: i32 = 7;
    /// `--strict`: another field manager owns a field.
    pub const CONFLICT: i32 = 8;
    /// `--strict`: 5xx.
    pub const SERVER_ERROR: i32 = 9;
    /// `--strict`: any other refusal by the API server (or no CRD or object to read).
    pub const REJECTED: i32 = 10;
    /// Not recorded: `publish` neither applied nor recorded the inventory (always), or
    /// applied it but could not record it (with `--strict`).
    pub const NOT_RECORDED: i32 = 11;
    /// Another domain's ClusterInventory is where this domain's would be.
    ///
    /// Another domain's ClusterInventory (or one without a domain label) is where this
    /// domain's would be: `publish` and `replay` refused to write over it (`--take-over`
    /// does), or `status`, `drift`, `fleet --from live` read it — not this domain's answer.
    pub const DOMAIN_MISMATCH: i32 = 12;
    /// `--strict`: a delivery was refused because the target (the live object, the
    /// branch) holds an inventory rendered later — the clock-skew warning, a commit
    /// refused as older. `--allow-older` delivers it.
    pub const OLDER: i32 = 13;
    /// `--strict`: a GitOps controller manages the live object.
    pub const GITOPS_MANAGED: i32 = 14;
    /// `--strict`: the server's certificate does not verify.
    pub const TLS_IDENTITY: i32 = 15;
    /// The answer is about the live cluster, and the cluster could not be read.
    ///
    /// `status`, `drift`, `updates`: the answer is about the live cluster and the cluster
    /// could not be read — what was printed says so and is not the cluster's (`--offline`
    /// asks for the recorded answer instead).
    pub const NOT_LIVE: i32 = 16;
    /// `--verify KEY`: an OCI artifact is unsigned, or no signature on it is a valid one
    /// of its digest by the key (tampered, another key).
    pub const UNVERIFIED: i32 = 17;
    /// `replay --watch`: another loop already serves this store (its pid is named).
    pub const WATCHED: i32 = 18;
    /// Ended by a signal at a safe point: `128 + N`, as a shell reports it.
    pub const SIGNALLED_BASE: i32 = crate::util::signals::EXIT_BASE;

    /// `clinv diff` follows the diff/kubectl convention instead of the codes above: 0 the
    /// inventories are the same, 1 they differ, 2 any error (even one that is exit 1
    /// elsewhere).
    ///
    /// Ignored changes never make them differ.
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
            R::NoKubeconfig => NO_KUBECONFIG,
            R::BadKubeconfig => BAD_KUBECONFIG,
            R::Unreachable => UNREACHABLE,
            R::Unauthorized => UNAUTHORIZED,
            R::Forbidden => FORBIDDEN,
            R::Conflict => CONFLICT,
            R::ServerError => SERVER_ERROR,
            R::Rejected => REJECTED,
            R::ClockSkew => OLDER,
            R::GitopsManaged => GITOPS_MANAGED,
            R::TlsIdentity => TLS_IDENTITY,
            R::DomainMismatch => DOMAIN_MISMATCH,
        }
    }
}

pub use crate::yaml::Pos;

/// Everything that can stop a clinv command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No `--root` and no ancestor of the working directory looks like a lok8s project.
    #[error(
        "no lok8s project found in {0} or its parents (looked for .lok8s/ or clusters/); pass --root"
    )]
    NoProject(PathBuf),

    /// A command that reads only the snapshot store found neither a project (for its
    /// `<root>/snapshots`) nor `--snapshots`.
    #[error(
        "no lok8s project found in {0} or its parents, and no store named: pass --snapshots DIR (or set CLINV_SNAPSHOTS) for a store without a project, or --root for a project's"
    )]
    NoStore(PathBuf),

    /// `fleet` found no project to render and, for its default source, no store named
    /// either: both ways out are named, since a user with only a store has one too.
    #[error(
        "no lok8s project found in {0} or its parents (looked for .lok8s/ or clusters/): pass --root DIR for the fleet a project renders, or --from store with --snapshots DIR (or CLINV_SNAPSHOTS) for the fleet a store recorded"
    )]
    NoFleet(PathBuf),

    /// `--root` does not name a directory.
    #[error("project root not found: {0}")]
    RootNotFound(PathBuf),

    /// A domain that fails lok8s's name rule (also the path-traversal guard).
    #[error("invalid domain name '{0}' (must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$)")]
    InvalidDomain(String),

    /// A domain that cannot be used: none is selected, the project and the store do not
    /// know it, or it deploys into another domain's cluster.
    #[error(transparent)]
    Domain(#[from] DomainError),

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

    /// A ClusterInventory (`--from` file, live object, committed file) that cannot be
    /// read; names the origin, the cause names the field.
    #[error("{origin}")]
    InvalidInventory {
        origin: String,
        #[source]
        source: InventoryError,
    },

    /// `-o jsonpath=TEMPLATE` that cannot be applied to the document (a field none of
    /// its inputs has, an index out of bounds); kubectl's wording.
    #[error("error executing jsonpath \"{template}\": {message}")]
    JsonPath { template: String, message: String },

    /// A malformed value of a flag or argument that the library parses.
    #[error(transparent)]
    Argument(#[from] ArgumentError),

    /// A reference (`clinv diff A B`) that names nothing clinv can read here.
    #[error(transparent)]
    Reference(#[from] ReferenceError),

    /// `clinv addons` on a spec whose `kind` is malformed (lok8s's wording).
    #[error("cluster spec for '{domain}' declares a malformed kind ({})", .path.display())]
    MalformedKindOf { domain: String, path: PathBuf },

    /// A snapshot reference that names no snapshot, or more than one.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),

    /// `clinv report` for a domain with no recorded or committed history.
    #[error("no history for {0}: publish or commit it first")]
    NoHistory(String),

    /// The snapshot store is damaged: a checksum mismatch or an unreadable record.
    #[error(transparent)]
    Damaged(#[from] Damaged),

    /// A lock (the store's or a repository's) still held by another process.
    #[error("{what}: {holder}")]
    Locked { what: String, holder: String },

    /// `replay --watch` on a store another loop serves: one loop per store delivers.
    #[error("{} is already served by another clinv replay --watch ({holder}); stop it first, or wait for it", .store.display())]
    Watched { store: PathBuf, holder: String },

    /// The store a running `replay --watch` serves was removed or replaced under it: its
    /// lock no longer guards the store, so it stopped (a restart serves it as it is now).
    #[error("{} was removed or replaced while the delivery loop served it (its lock no longer guards it): stopped, so that a new start serves the store as it is now", .store.display())]
    StoreReplaced { store: PathBuf },

    /// What failed for one domain of several (`commit -A`): the domain, and the cause's
    /// exit code.
    #[error("{domain}")]
    InDomain {
        domain: String,
        #[source]
        source: Box<Error>,
    },

    /// The inventory could not be recorded in the store: exit 11.
    #[error("not recorded: {what}")]
    NotRecorded {
        what: String,
        #[source]
        source: Box<Error>,
    },

    /// `--strict`: the target holds an inventory rendered later and this one was not
    /// delivered (a commit refused as older): exit 13.
    #[error("{0}")]
    Older(String),

    /// A GitOps repository operation failed, or the repository's state forbids it.
    #[error(transparent)]
    Git(#[from] GitError),

    /// A push to an OCI registry failed, or its reference is malformed.
    #[error(transparent)]
    Oci(#[from] OciError),

    /// No author for a GitOps commit.
    #[error(
        "no commit author: pass --author \"Name <email>\" or set user.name and user.email in git config"
    )]
    NoAuthor,

    /// A push that the remote rejected or that did not land in time.
    #[error(transparent)]
    Push(#[from] PushError),

    /// `--sign`: the signing program is not configured, not runnable, or failed.
    #[error(transparent)]
    Sign(#[from] SignError),

    /// A feature left out of this build (`cargo build --no-default-features`).
    #[error("{0} needs clinv built with the gitops feature")]
    NoGitops(&'static str),

    /// A value serde could not encode: a bug or a resource limit, never bad usage.
    #[error("cannot encode {what}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    /// The Prometheus client could not encode the metrics (it writes to a `String`: a bug,
    /// never bad usage).
    #[error("cannot encode the metrics")]
    Exposition(#[source] std::fmt::Error),

    /// The metrics server could not listen on the address asked for (in use, not this
    /// host's, a privileged port): exit 1, the address named.
    #[error("cannot listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },

    /// stdout was closed by the reader (`clinv render | head`): stop quietly, exit 0.
    #[error("broken pipe")]
    BrokenPipe,

    /// The async runtime could not be started: a local failure, never the cluster's.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),

    /// An I/O failure, with the path it concerns.
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code for this error: the one mapping (every variant is listed, so
    /// a new one has to choose).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoGitops(_) | Error::Argument(_) => exit::USAGE,
            Error::Oci(e) if e.is_usage() => exit::USAGE,
            Error::Oci(OciError::Unverified { .. }) => exit::UNVERIFIED,
            Error::Reference(e) if e.is_malformed() => exit::USAGE,
            Error::InDomain { source, .. } => source.exit_code(),
            Error::NotRecorded { .. } => exit::NOT_RECORDED,
            Error::Older(_) => exit::OLDER,
            Error::Watched { .. } => exit::WATCHED,
            Error::BrokenPipe => exit::OK,
            Error::Unapplied { reason, .. } => exit::for_reason(*reason),
            Error::NoProject(_)
            | Error::StoreReplaced { .. }
            | Error::NoStore(_)
            | Error::NoFleet(_)
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
            | Error::Snapshot(_)
            | Error::NoHistory(_)
            | Error::Damaged(_)
            | Error::Locked { .. }
            | Error::Git(_)
            | Error::Oci(_)
            | Error::NoAuthor
            | Error::Push(_)
            | Error::Sign(_)
            | Error::Encode { .. }
            | Error::Exposition(_)
            | Error::Listen { .. }
            | Error::Runtime(_)
            | Error::Io { .. } => exit::FAILURE,
        }
    }

    /// A serde encoding failure of `what` (e.g. "JSON", "the index").
    pub fn encode(what: &'static str, source: serde_json::Error) -> Error {
        Error::Encode { what, source }
    }

    /// An error writing stdout: a closed pipe (`clinv render | head`) ends the command
    /// quietly ([`Error::BrokenPipe`]).
    pub fn stdout(e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::io("<stdout>", e)
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// `inventory` of `origin` could not be read.
    pub fn inventory(origin: impl Into<String>, source: InventoryError) -> Error {
        Error::InvalidInventory {
            origin: origin.into(),
            source,
        }
    }
}

/// An error and its causes, `: `-separated, as `[error]` prints it (and as a warning or a
/// report row quotes it): each cause once, in order.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// A foreign error (a transport's) and those of its causes its text does not already
/// hold, `: `-separated: the innermost cause often carries the useful part.
pub fn chain_once(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        if !text.contains(&next) {
            text = format!("{text}: {next}");
        }
        cause = e.source();
    }
    text
}

/// The first line of [`chain`]: an error in one table cell (`replay --all`, `drift -A`,
/// `status -A`).
pub fn headline(error: &dyn std::error::Error) -> String {
    let text = chain(error);
    text.lines().next().unwrap_or_default().to_string()
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
    /// The live cluster could not be read; the answer said so ([`exit::NOT_LIVE`]).
    NotLive,
    /// Several domains, each already reported with its exit code (`publish -A`): the
    /// highest.
    Worst(Vec<i32>),
    /// The cluster holds another domain's ClusterInventory (or one without a domain
    /// label): what it holds is not this domain's answer ([`exit::DOMAIN_MISMATCH`]).
    OtherDomain,
    /// Several domains, and one could not be answered at all (its spec does not parse):
    /// its row says why, the others were answered ([`exit::FAILURE`]).
    Failed,
}

impl Outcome {
    /// The outcome of a fleet, folded domain by domain.
    ///
    /// A domain that could not be answered (`Unknown`, `Failed`) over another domain's
    /// inventory (12) over a cluster not read (16) over a difference over done.
    #[must_use]
    pub fn worse(self, other: Outcome) -> Outcome {
        let rank = |o: &Outcome| match o {
            Outcome::Unknown | Outcome::Failed => 4,
            Outcome::OtherDomain => 3,
            Outcome::NotLive => 2,
            Outcome::Different => 1,
            _ => 0,
        };
        if rank(&other) > rank(&self) {
            other
        } else {
            self
        }
    }

    /// The process exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Done => exit::OK,
            Outcome::Different => exit::diff::DIFFERENT,
            Outcome::Unknown => exit::diff::ERROR,
            Outcome::NotLive => exit::NOT_LIVE,
            Outcome::Unapplied(reasons) => reasons
                .iter()
                .map(|r| exit::for_reason(*r))
                .max()
                .unwrap_or(exit::OK),
            Outcome::Worst(codes) => codes.iter().copied().max().unwrap_or(exit::OK),
            Outcome::Failed => exit::FAILURE,
            Outcome::OtherDomain => exit::DOMAIN_MISMATCH,
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_to_codes() {
        use crate::delivery::Reason;
        assert_eq!(Outcome::Done.exit_code(), exit::OK);
        assert_eq!(Outcome::Different.exit_code(), 1);
        assert_eq!(Outcome::Unknown.exit_code(), 2);
        assert_eq!(Outcome::Unapplied(vec![]).exit_code(), exit::OK);
        assert_eq!(Outcome::Worst(vec![]).exit_code(), exit::OK);
        assert_eq!(
            Outcome::Worst(vec![exit::OK, exit::NOT_RECORDED, exit::FAILURE]).exit_code(),
            exit::NOT_RECORDED
        );
        assert_eq!(exit::for_reason(Reason::ClockSkew), 13);
        assert_eq!(exit::for_reason(Reason::GitopsManaged), 14);
        assert_eq!(exit::for_reason(Reason::TlsIdentity), 15);
        assert_eq!(Error::Older("x".into()).exit_code(), 13);
        let both = Outcome::Unapplied(vec![Reason::Rejected, Reason::NoKubeconfig]);
        assert_eq!(both.exit_code(), exit::for_reason(Reason::Rejected));
    }

    #[test]
    fn an_encoding_failure_is_not_a_usage_error_and_names_its_cause() {
        let source = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let e = Error::encode("JSON", source);
        assert_eq!(e.exit_code(), exit::FAILURE);
        assert_eq!(e.to_string(), "cannot encode JSON");
        assert!(chain(&e).starts_with("cannot encode JSON: EOF while parsing"));
    }

    #[test]
    fn the_chain_names_each_cause_once() {
        let io = Error::io("/x/y", std::io::Error::other("disk on fire"));
        assert_eq!(io.to_string(), "/x/y");
        assert_eq!(chain(&io), "/x/y: disk on fire");
        let nested = Error::NotRecorded {
            what: "the inventory of d".into(),
            source: Box::new(io),
        };
        assert_eq!(
            chain(&nested),
            "not recorded: the inventory of d: /x/y: disk on fire"
        );
        assert_eq!(nested.exit_code(), exit::NOT_RECORDED);
    }
}
