//! Errors of the OCI channel: a malformed `oci://` reference (a usage error), and what a
//! registry answered.

use super::Cause;

/// What is wrong with a reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OciReferenceError {
    #[error("it does not start with oci://")]
    Scheme,
    #[error("no registry host")]
    NoRegistry,
    #[error("no repository after the registry")]
    NoRepository,
    #[error(
        "repository '{0}' is not a valid name (lower-case letters and digits, separated by '.', '_', '__', '-' or '/')"
    )]
    Repository(String),
    #[error(
        "tag '{0}' is not valid (up to 128 of A-Z a-z 0-9 _ . -, not starting with '.' or '-')"
    )]
    Tag(String),
    #[error("the digest after @ is not sha256: and 64 lower-case hex digits")]
    Digest,
    #[error("a digest (@sha256:…) names what was pushed; a push takes a tag")]
    DigestInPush,
}

/// A push to a registry failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OciError {
    /// A malformed reference: exit 2. (What is wrong is in the message, not a source:
    /// the printed chain would say it twice.)
    #[error("{text}: {problem}")]
    Reference {
        text: String,
        problem: OciReferenceError,
    },
    /// The registry could not be reached (connection, TLS, proxy).
    #[error("{registry}: {cause}")]
    Unreachable { registry: String, cause: Cause },
    /// The registry did not answer at all (refused, unresolved, timed out, cut): a
    /// push is owed, not refused.
    #[error("{registry}: {cause}")]
    Unanswered { registry: String, cause: Cause },
    /// 401/403 after the credentials were offered (or none were found).
    #[error("{registry}: {what}: authentication failed (HTTP {status}){hint}")]
    Auth {
        registry: String,
        what: String,
        status: u16,
        hint: &'static str,
    },
    /// Any other refusal, with the registry's own error code and message.
    #[error("{registry}: {what}: HTTP {status}: {message}")]
    Refused {
        registry: String,
        what: String,
        status: u16,
        message: String,
    },
    /// The credentials named (`--creds-env`, the Docker config) cannot be used.
    #[error("{origin}: {message}")]
    Credentials { origin: String, message: String },
    /// A CA file that cannot be read.
    #[error("{path}: {message}")]
    CaFile { path: String, message: String },
    /// An artifact that cannot be read as an inventory.
    #[error("{reference}: {problem}")]
    Pull {
        reference: String,
        problem: PullProblem,
    },
    /// `--verify KEY`: the artifact is not signed by the key (exit 17).
    #[error("{reference}: signature verification failed: {reason}")]
    Unverified {
        reference: String,
        reason: Unverified,
    },
    /// `--plain-http` to a registry that is not on this machine (exit 2).
    #[error(
        "{registry}: --plain-http is for a registry on this machine (loopback); for plain HTTP across the network, add --insecure"
    )]
    PlainHttpOffHost { registry: String },
    /// A signing (`--sign`) or verification (`--verify`) key that cannot be used.
    #[error("{path}: {problem}")]
    Key { path: String, problem: KeyProblem },
    /// The registry pointed a request elsewhere (a blob-upload `Location`, a redirect, a
    /// token realm) where clinv does not follow it, or not with the credentials.
    #[error("{registry}: {what}: {problem}")]
    Elsewhere {
        registry: String,
        what: String,
        problem: Elsewhere,
    },
    /// A tag list that does not end within the bounds (pages, tags) or loops.
    #[error("{registry}: tag list: {problem}")]
    TagList {
        registry: String,
        problem: TagListProblem,
    },
    /// An owed push whose tag moved on meanwhile: it names an artifact of an inventory
    /// rendered later, which an older one must not replace (the push stays owed).
    #[error(
        "{reference} moved on: it names {theirs} (rendered {theirs_rendered}), later than this owed push's inventory (rendered {ours_rendered}); not overwritten — the push stays owed (push --snapshot REF to replace it on purpose)"
    )]
    MovedOn {
        reference: String,
        theirs: String,
        theirs_rendered: String,
        ours_rendered: String,
    },

    /// The tag an owed push moves changed while the push was under way (another push
    /// settled it, or moved it on): not moved — the owed push is looked at again.
    #[error("{reference} changed while this push was under way (it names {}): not moved; the owed push is looked at again", .now.as_deref().unwrap_or("nothing"))]
    TagChanged {
        reference: String,
        now: Option<String>,
    },
}

/// Where the registry pointed, and why clinv does not go there (with the credentials).
///
/// Credentials go only to the scheme, host and port they were given for (the registry's),
/// and the user's password to a token service only over HTTPS; nothing leaves an HTTPS
/// registry for plain HTTP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Elsewhere {
    #[error(
        "it sent the request on to plain-HTTP {to}: refused (nothing goes from an HTTPS registry to plain HTTP)"
    )]
    PlainHttp { to: String },
    #[error(
        "its token service {realm} is plain HTTP: refused, the credentials are not sent in the clear (a registry that is itself plain HTTP takes --plain-http or --insecure)"
    )]
    PlainRealm { realm: String },
    #[error("its token service '{realm}' is not an http:// or https:// URL")]
    BadRealm { realm: String },
    #[error("{by} asked for credentials (HTTP 401): the registry's are not sent to another host")]
    Challenged { by: String },
}

/// Why a tag list was not read to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagListProblem {
    #[error("more than {0} pages (Link headers); clinv reads at most {0}")]
    Pages(usize),
    #[error("more than {0} tags; clinv reads at most {0}")]
    Tags(usize),
    #[error("its Link header names a page it already sent (a loop)")]
    Loop,
}

/// What is wrong with an artifact read back from a registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PullProblem {
    #[error("the registry has no manifest by that name")]
    NotFound,
    #[error("the manifest is not an OCI image manifest")]
    NotAManifest,
    #[error("the manifest's digest is {found}, not the {wanted} asked for")]
    DigestMismatch { wanted: String, found: String },
    #[error("{0} content layers; an inventory artifact has exactly one")]
    LayerCount(usize),
    #[error("layer type {0} is not a tar+gzip content layer (Flux's or OCI's)")]
    LayerType(String),
    #[error("the layer is larger than {0} bytes")]
    TooLarge(u64),
    #[error("the layer is not a gzip'd tar: {0}")]
    NotTarGzip(String),
    #[error("the layer holds '{0}', not a plain relative file")]
    UnsafeEntry(String),
    #[error("the layer's {0} is not UTF-8 text")]
    NotText(String),
    #[error("the layer holds no {0}")]
    Missing(&'static str),
    #[error("the layer's {0} is not the CustomResourceDefinition clinv writes")]
    Invalid(&'static str),
}

/// Why `--verify KEY` refused an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unverified {
    #[error("it is not signed (no cosign signature at its .sig tag)")]
    Unsigned,
    #[error("none of its {0} signature(s) is a valid signature of this digest by the key")]
    NotByKey(usize),
}

/// Why a key file cannot sign or verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyProblem {
    #[error("cannot be read")]
    Unreadable,
    #[error("holds no PEM key of the kind needed (PRIVATE KEY to sign, PUBLIC KEY to verify)")]
    NotPem,
    #[error("not an ECDSA P-256 key (cosign's key type; RSA and other curves are not taken)")]
    NotP256,
    #[error(
        "a SEC1 'EC PRIVATE KEY': convert it to PKCS#8 with `openssl pkcs8 -topk8 -nocrypt -in KEY`"
    )]
    Sec1,
    #[error("cosign's encrypted key: its password is read from COSIGN_PASSWORD, which is not set")]
    NoPassword,
    #[error("cosign's encrypted key does not open with the password in COSIGN_PASSWORD")]
    WrongPassword,
    #[error(
        "not a cosign encrypted key clinv can open (scrypt with N up to 2^20, r up to 16, p up to 4; nacl/secretbox)"
    )]
    BadEncryptedKey,
    #[error("the system's random source failed")]
    Random,
}

impl OciError {
    /// Why the far end did not answer, when it did not: the registry was not reached
    /// (refused, unresolved, timed out, cut) or failed (5xx). A push is owed then;
    /// anything else is the registry's refusal.
    pub fn unanswered(&self) -> Option<crate::delivery::Reason> {
        match self {
            OciError::Unanswered { .. } => Some(crate::delivery::Reason::Unreachable),
            OciError::Refused { status, .. } if *status >= 500 => {
                Some(crate::delivery::Reason::ServerError)
            }
            _ => None,
        }
    }

    /// Whether this is a malformed argument (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            OciError::Reference { .. } | OciError::PlainHttpOffHost { .. }
        )
    }
}
