//! Small leaf utilities shared by every layer.
//!
//! Bounded and atomic file access ([`files`]), the one retry backoff ([`backoff`]), waiting
//! for a file lock ([`lock`]), content hashes ([`hash`]), which hosts `NO_PROXY` exempts
//! ([`no_proxy`]), the one sanitiser for text that leaves the process ([`redact`]), the
//! messages library flows return instead of printing ([`notice`]), bounded parallel work
//! ([`pool`]), safe points for SIGINT/SIGTERM ([`signals`]), "did you mean" ([`suggest`]),
//! time formats ([`time`]), the one URL reader ([`url`]) and the one runner of helper
//! programs ([`helper`]).
//!

/// `parent`, `sep` and `child` joined; `child` alone under an empty parent (the root of a
/// Git path, of a field path).
pub fn join_path(parent: &str, sep: char, child: &str) -> String {
    match parent {
        "" => child.to_string(),
        _ => format!("{parent}{sep}{child}"),
    }
}

/// Whether an HTTP request (git's HTTPS transport, a registry's) got no answer.
///
/// Refused, unresolved, unreachable, timed out, cut or reset. A TLS failure (a certificate that does not verify, a plain-HTTP answer) is an answer: the
/// server is there and says something else. Such a push is owed, not refused.
pub fn unanswered(err: &ureq::Error) -> bool {
    use std::io::ErrorKind as K;
    match err {
        ureq::Error::Io(e) => matches!(
            e.kind(),
            K::ConnectionRefused
                | K::ConnectionReset
                | K::ConnectionAborted
                | K::NotConnected
                | K::BrokenPipe
                | K::UnexpectedEof
                | K::TimedOut
                | K::HostUnreachable
                | K::NetworkUnreachable
                | K::AddrNotAvailable
        ),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed | ureq::Error::Timeout(_) => true,
        _ => false,
    }
}

pub mod backoff;
pub mod env;
pub mod files;
pub mod hash;
pub mod helper;
pub mod lock;
pub mod no_proxy;
pub mod notice;
pub mod pool;
pub mod redact;
pub mod runtime;
pub mod signals;
pub mod suggest;
pub mod time;
pub mod url;
