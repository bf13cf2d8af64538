//! Small leaf utilities shared by every layer: bounded and atomic file access
//! ([`files`]), waiting for a file lock ([`lock`]) and the one sanitiser for text that
//! leaves the process ([`redact`]).

pub mod files;
pub mod lock;
pub mod redact;
