//! CLI tests: the real binary on the bundled example and small fixtures.

mod support;

mod addons;
mod audit;
mod browser;
mod diff;
mod history;
mod hostile;
mod interface;
mod render;
mod secrets;
