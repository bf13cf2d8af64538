//! Small leaf utilities shared by every layer: bounded and atomic file access
//! ([`files`]), the one sanitiser for text that leaves the process ([`redact`]) and the
//! messages library flows return instead of printing ([`notice`]).

pub mod files;
pub mod notice;
pub mod redact;
pub mod signals;
