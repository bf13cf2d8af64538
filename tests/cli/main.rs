//! CLI tests: the real binary on the bundled example and small fixtures.

mod support;

mod addons;
mod agent;
mod gitops;
mod hostile;
mod https;
mod index;
mod interface;
mod render;
mod secrets;
mod store;
mod updates;
