//! What changed, and when: diffs, audit trails, version order, diff references.
//!
//! What changed, and when: the semantic diff of two inventories ([`diff`]), the audit
//! trail over a domain's history ([`audit`]), version ordering ([`version`]), and what a
//! diff reference may name ([`refs`]). Pure: the inventories come from the store, git or
//! files through their own modules; their report formats are views
//! ([`crate::view::report`]).

pub mod audit;
pub mod diff;
pub mod refs;
pub mod version;
