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
pub mod signals;
pub mod suggest;
pub mod time;
pub mod url;
