//! The flows behind the commands that combine several modules (cargo's `ops`): each
//! takes plain arguments, never the command line's settings, does its effects through
//! the modules that own them and returns typed outcomes — warnings included — for the
//! command line to print.

pub mod agent;
#[cfg(feature = "gitops")]
pub mod commit;
pub mod drift;
pub mod history;
pub mod index;
pub mod publish;
pub mod refs;
pub mod replay;
pub mod status;
pub mod updates;
