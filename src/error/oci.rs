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
    #[error("a digest (@sha256:…) names what was pushed; a push takes a tag")]
    Digest,
}

/// A push to a registry failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OciError {
    /// A malformed reference: exit 2.
    #[error("{text}: {source}")]
    Reference {
        text: String,
        #[source]
        source: OciReferenceError,
    },
    /// The registry could not be reached (connection, TLS, proxy).
    #[error("{registry}: {cause}")]
    Unreachable { registry: String, cause: Cause },
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
}

impl OciError {
    /// Whether this is a malformed argument (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, OciError::Reference { .. })
    }
}
