//! clinv: the offline-first exporter for lok8s's `ClusterInventory`.
//!
//! The folders follow the data flow. A lok8s project on disk ([`project`]: the cluster
//! spec, its `spec.bootstrap` entries and their addon metadata) becomes the inventory
//! model ([`inventory`]: build, CRD validation, rendering, reading back). It is delivered
//! through two channels — the cluster ([`cluster`], the only module that talks to
//! kube) and Git ([`gitops`], the only one that uses git2) — and recorded first in the
//! snapshot store ([`store`], the only writer of local state). [`delivery`] names the
//! outcomes both channels share. [`history`] diffs inventories over time into an audit
//! trail; [`catalog`] compares them with the addon index and feeds the in-cluster agent.
//! [`fleet`] is the one model of a command over several domains (the selection, the
//! domains read under one deadline, the folded outcome). [`ops`] holds the flows that combine them behind the commands; [`util`] holds the
//! leaf helpers; [`console`] is where the library says what it says; [`app`] is the command line on top of it all.

// Test code writes fixtures and reads the environment freely (clippy.toml's rules are for
// the product; clippy checks the non-test build on its own).
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod app;
pub mod catalog;
pub mod cluster;
pub mod console;
pub mod delivery;
pub mod domain;
pub mod error;
pub mod fleet;
#[cfg(feature = "gitops")]
pub mod gitops;
pub mod history;
pub mod inventory;
#[cfg(feature = "gitops")]
pub mod oci;
pub mod ops;
pub mod project;
pub mod snapshot_id;
pub mod store;
pub mod util;
pub mod view;
pub mod yaml;

pub use error::{Error, Result};
