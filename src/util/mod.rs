//! Small leaf utilities shared by every layer: bounded and atomic file access
//! ([`files`]), the one sanitiser for text that leaves the process ([`redact`]) and the
//! time formats ([`time`]).

pub mod files;
pub mod redact;
pub mod time;
