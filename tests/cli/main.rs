//! CLI tests: the real binary on the bundled example and small fixtures.

mod support;

mod addons;
mod agent;
mod audit;
mod browser;
mod diff;
#[cfg(feature = "gitops")]
mod gitops;
mod history;
mod history_store;
mod hostile;
mod https;
mod index;
mod interface;
mod render;
mod secrets;
mod store;
mod updates;
