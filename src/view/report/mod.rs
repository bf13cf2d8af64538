//! Printers for diff reports and audit trails, one module per format.
//!
//! Each turns the data model ([`crate::history::diff::Report`],
//! [`crate::history::audit::Trail`]) into a string; none prints —
//! [`crate::app::output::Printer`] writes the result.
//!
//! Values come from files and live objects, so every printer neutralises them for its
//! format: control characters are escaped everywhere, Markdown and HTML are escaped.

pub mod fleet;
pub mod html;
pub mod json;
pub mod markdown;
mod phrase;
pub mod stream;
pub mod text;
pub mod unified;
