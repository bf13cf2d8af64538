//! What both test binaries (`cli` and `cluster`) share: the runner, the isolated `clinv`
//! invocation and its assert helpers, and the real servers the tests start on loopback.
//! Each binary declares this tree once (`#[path = "../common/mod.rs"] mod common;`: a
//! test binary's modules live beside its `main.rs`) and imports the modules it uses at
//! its root, so that `crate::support`, `crate::harness` and the rest read the same in
//! both.

// Each binary uses part of what is here.
#![allow(dead_code)]

#[macro_use]
pub mod harness;
#[cfg(feature = "gitops")]
pub mod git_server;
pub mod https;
pub mod loopback_proxy;
#[cfg(feature = "gitops")]
pub mod registry;
pub mod support;
