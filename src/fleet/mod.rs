//! The fleet model: every command that covers more than one domain is a client of it.
//!
//! Three steps, each once: the selection (`-A`, `--domain` repeated, a glob) resolved
//! among the domains a command can know — the project's, the store's, a repository's or
//! a matrix's ([`select`]); the domains read in parallel, each with what is left of the
//! command's one deadline, deploy domains skipped ([`each`]); and the answers folded
//! into one exit code ([`crate::error::Outcome::worse`]). Commands name the domains
//! they print; nothing here prints.

mod each;
mod left;
mod reach;
mod select;

pub use each::{Limits, PARALLEL, Skip, each};
pub use left::{Deploys, Left};
pub use reach::{Reach, one};
pub use select::{Among, select, select_in};
