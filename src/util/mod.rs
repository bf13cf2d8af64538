//! Small leaf utilities shared by every layer: bounded and atomic file access
//! ([`files`]) and the one sanitiser for text that leaves the process ([`redact`]).

pub mod files;
pub mod redact;
