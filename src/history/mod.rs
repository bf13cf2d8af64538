//! What changed, and when: the semantic diff of two inventories ([`diff`]), the audit
//! trail over a domain's history ([`audit`]), version ordering ([`version`]), what a
//! diff reference may name ([`refs`]) and one printer per report format ([`report`]). Pure: the inventories come from the store,
//! git or files through their own modules.

pub mod audit;
pub mod diff;
pub mod refs;
pub mod report;
pub mod version;
