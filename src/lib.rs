//! clinv: the offline-first exporter for lok8s's `ClusterInventory`.
//!
//! Data flows one way: a lok8s project on disk ([`project`]) → the cluster spec
//! ([`spec`], with its `spec.bootstrap` entries parsed by [`bootstrap`] and their
//! metadata read by [`addons`]) → the inventory model ([`inventory`]) → validated
//! against the CRD ([`crd`]) and encoded ([`render`]) → printed or written
//! ([`output`], [`files`]).
//!
//! The status side runs the other way: the project's `.lok8s/addons` become the addon
//! index ([`index`], dated from git history by [`gitops::history`]); an index (a file, or fetched
//! and cached by [`fetch`]) and an inventory give the available updates ([`updates`]);
//! the agent ([`agent`]) adds Helm release records ([`helm`]) and writes `status`
//! through [`cluster`].
//!
//! The core (spec interpretation, rendering, validation) has no effects beyond reading
//! the project; printing happens only in [`output`], writing only through [`files`].

pub mod addons;
pub mod agent;
pub mod audit;
pub mod bootstrap;
pub mod cli;
pub mod cluster;
mod commands;
pub mod crd;
pub mod diff;
pub mod error;
pub mod fetch;
pub mod files;
pub mod gitops;
pub mod helm;
pub mod index;
pub mod inventory;
pub mod output;
pub mod parse;
pub mod project;
pub mod redact;
pub mod render;
pub mod report;
pub mod settings;
pub mod spec;
pub mod store;
pub mod updates;
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
