//! Small leaf utilities shared by every layer: bounded and atomic file access
//! ([`files`]), waiting for a file lock ([`lock`]), the one sanitiser for text that
//! leaves the process ([`redact`]), the messages library flows return instead of
//! printing ([`notice`]), safe points for SIGINT/SIGTERM ([`signals`]) and time formats
//! ([`time`]).

pub mod files;
pub mod lock;
pub mod notice;
pub mod redact;
pub mod signals;
pub mod time;
