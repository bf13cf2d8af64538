//! GitOps failures: the repository, a push, a signature.

/// A message from a library whose error type clinv does not keep (libgit2), as the
/// cause of a clinv error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Cause(pub String);

/// A GitOps repository operation failed, or the repository's state forbids it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// A failure inside the repository at `repo`.
    #[error("{repo}")]
    InRepo {
        repo: String,
        #[source]
        source: Box<GitError>,
    },
    /// A libgit2 call failed; `step` names what clinv was doing.
    #[error("{step}")]
    Call {
        step: String,
        #[source]
        cause: Cause,
    },
    #[error("{0}: a bare repository has no worktree; clone it and pass the clone")]
    Bare(String),
    #[error("HEAD is detached; pass --branch")]
    Detached,
    #[error("commit buffer is not UTF-8")]
    CommitNotUtf8,
    #[error("{0} exists in the repository and is not a folder")]
    NotAFolder(String),
    /// A file or symbolic link where a folder on the way to clinv's folder must be:
    /// refused before the index or the work tree is touched.
    #[error(
        "{ancestor} is {what} on the branch, on the way to {path}: clinv cannot write the folder under it — move it, or pass --path (nothing was changed)"
    )]
    InTheWay {
        ancestor: String,
        what: &'static str,
        path: String,
    },
    #[error(
        "{path}/ holds {} besides clinv's kustomization.yaml; kustomize (and so Flux and Argo CD) refuses a folder with two kustomization files — remove it",
        .others.join(", ")
    )]
    TwoKustomizations { path: String, others: Vec<String> },
    #[error("{path}/{} is not a file; clinv writes a file there — move it away", .names.join(", "))]
    NotFiles { path: String, names: Vec<String> },
    /// The branch moved between reading its tip and moving it (libgit2's words, when it
    /// gave any).
    #[error(
        "{refname} moved while clinv was committing{}; run the command again",
        .detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    Moved {
        refname: String,
        detail: Option<String>,
    },
    #[error(
        "uncommitted changes in the synced folder would be overwritten: {}; commit or discard them, or pass --force",
        .0.join(", ")
    )]
    Dirty(Vec<String>),
    #[error(
        "the Flux Kustomization {} of `flux bootstrap` ({}) applies {} of {} and {} of {}: one build would hold two ClusterInventory/cluster and two CRDs, and kustomize fails the whole Kustomization (all of that cluster's GitOps); bootstrap each cluster at its own folder (flux bootstrap --path=clusters/<domain>) or commit {} elsewhere (--path)",
        .0.kustomization, .0.file, .0.path, .0.domain, .0.other_path, .0.other, .0.domain
    )]
    BootstrapShared(Box<SharedBootstrap>),
    #[error("--print-argo --all: {branch} holds no domain folder ({example}); commit one first")]
    NoDomainFolder { branch: String, example: String },
    #[error("{path} at {commit} is not UTF-8")]
    FileNotUtf8 { path: String, commit: String },
    #[error("no {path} at {rev}")]
    NoFile { path: String, rev: String },
    #[error("{path} at {rev} is not a file")]
    NotAFile { path: String, rev: String },
    #[error("history longer than {0} commits; not searched to the end")]
    TooLong(usize),
    /// git's configuration turns certificate checks off: a setting to change, not a flag.
    #[error(
        "{0}: http.sslVerify is false (or GIT_SSL_NO_VERIFY is set): clinv does not push or fetch without checking the server's certificate; trust its CA with `git config http.sslCAInfo <ca.pem>`, or pass --allow-insecure-tls"
    )]
    InsecureTls(String),
    /// A remote or proxy URL that is not valid by the one URL reader (`why` never
    /// quotes the credentials; `url` is redacted).
    #[error("{url}: {why}")]
    Url {
        url: String,
        why: crate::util::url::UrlError,
    },
    #[error("http.extraHeader: a value is not `Name: value`")]
    ExtraHeader,
    #[error("proxy {proxy}")]
    Proxy {
        proxy: String,
        #[source]
        cause: Cause,
    },
}

impl GitError {
    /// A failed libgit2 call during `step`.
    pub fn call(step: impl Into<String>, message: impl Into<String>) -> GitError {
        GitError::Call {
            step: step.into(),
            cause: Cause(message.into()),
        }
    }
}

/// A push that the remote rejected or that did not land in time.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PushError {
    #[error("{remote} rejected {refname}: {status}")]
    Rejected {
        remote: String,
        refname: String,
        status: String,
    },
    #[error(
        "{remote}/{branch} already holds a newer inventory (renderedAt {rendered_at}); not pushing an older one"
    )]
    Newer {
        remote: String,
        branch: String,
        rendered_at: String,
    },
    #[error("push to {remote} did not land after retrying for {secs:.0}s")]
    NotLanded { remote: String, secs: f64 },
    #[error("push to {remote} failed")]
    Failed {
        remote: String,
        #[source]
        cause: Cause,
    },
    /// The remote did not answer (refused, unresolved, timed out, cut, 5xx): the push is
    /// owed, not refused — retrying later can land it.
    #[error("push to {remote} failed")]
    Unanswered {
        remote: String,
        reason: crate::delivery::Reason,
        #[source]
        cause: Cause,
    },
    /// An owed push whose remote branch moved on: delivering it is not a fast-forward,
    /// and clinv never force-pushes.
    #[error(
        "{remote}/{branch} is at {remote_tip}, which {commit} does not build on: the owed push is not a fast-forward and is never forced; it stays owed — commit again (clinv commit --push rebuilds on the new tip) to settle it"
    )]
    NotFastForward {
        remote: String,
        branch: String,
        commit: String,
        remote_tip: String,
    },
    /// The local branch no longer holds the owed commit (reset, rewritten).
    #[error(
        "{branch} no longer holds the owed commit {commit} (it is at {tip}): not pushed; it stays owed — commit again to settle it"
    )]
    NotOnBranch {
        branch: String,
        commit: String,
        tip: String,
    },
    /// The remote's URL changed since the push was owed.
    #[error(
        "remote {remote} now points at {now}, not {was} as when the push was owed: not pushed; it stays owed — commit again to settle it"
    )]
    RemoteChanged {
        remote: String,
        was: String,
        now: String,
    },
}

/// `--sign`: the signing program is not configured, not runnable, or failed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("--sign: gpg.format is ssh but user.signingkey is not set")]
    NoKey,
    #[error("--sign: gpg.format '{0}' is not supported (openpgp, ssh)")]
    Unsupported(String),
    /// The signing program did not answer (cannot be run, stopped, failed).
    #[error("--sign")]
    Helper(#[from] crate::util::helper::HelperError),
    /// The signing program succeeded without writing a signature.
    #[error("--sign: {program} gave no signature")]
    NoSignature { program: String },
}

/// A `flux bootstrap` Kustomization that applies two domains' inventory folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedBootstrap {
    /// `namespace/name`.
    pub kustomization: String,
    /// The `gotk-sync.yaml` it was read from.
    pub file: String,
    pub domain: String,
    pub path: String,
    pub other: String,
    pub other_path: String,
}
