//! clinv: the offline-first exporter for lok8s's `ClusterInventory`.
//!
//! Data flows one way: a lok8s project on disk ([`project`]) → the cluster spec
//! ([`spec`], with its `spec.bootstrap` entries parsed by [`bootstrap`] and their
//! metadata read by [`addons`]) → the inventory model ([`inventory`]) → validated
//! against the CRD ([`crd`]) and encoded ([`render`]) → printed or written
//! ([`output`], [`files`]).
//!
//! The core (spec interpretation, rendering, validation) has no effects beyond reading
//! the project; printing happens only in [`output`], writing only through [`files`].

pub mod addons;
pub mod audit;
pub mod bootstrap;
pub mod cli;
pub mod cluster;
mod commands;
pub mod crd;
pub mod diff;
pub mod error;
pub mod files;
pub mod inventory;
pub mod output;
pub mod parse;
pub mod project;
pub mod render;
pub mod report;
pub mod settings;
pub mod spec;
pub mod version;
pub mod yaml;

pub use error::{Error, Result};

/// Parses the process arguments, runs the command and returns the exit code.
pub fn main() -> i32 {
    use clap::Parser;
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (2).
            let _ = e.print();
            return if e.use_stderr() {
                error::exit::USAGE
            } else {
                error::exit::OK
            };
        }
    };
    commands::run(cli)
}
