//! The functions behind commands that combine several modules (cargo's `ops`): each
//! takes plain arguments, never the command line's settings, and returns data —
//! warnings included — for the command to print.

pub mod commit;
pub mod history;
pub mod index;
pub mod refs;
