//! The addon catalog and what runs against it.
//!
//! The project's addon index ([`index`], fetched and cached by [`fetch`]), the updates an
//! index offers an inventory ([`updates`]), Helm's release records of what runs ([`helm`])
//! and the status body the in-cluster agent writes ([`agent`]). (`clinv status`, the
//! command, is `ops::status`.)

pub mod agent;
pub mod fetch;
pub mod helm;
pub mod index;
pub mod updates;
