//! CLI tests: the real binary on the bundled example and small fixtures.

mod support;

mod addons;
mod gitops;
mod hostile;
mod interface;
mod render;
mod secrets;
mod store;
