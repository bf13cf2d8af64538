//! What both test binaries (`cli` and `cluster`) share: the runner, the isolated `clinv`
//! invocation and its assert helpers, and the real servers the tests start on loopback.
//! Each binary imports the modules it uses at its root (`use clinv_testkit::{harness,
//! support, …}`), so that `crate::support`, `crate::harness` and the rest read the same in
//! both, and hands the runner its `clinv` binary ([`harness::run`]).

#[macro_use]
pub mod harness;
pub mod git_server;
pub mod https;
pub mod loopback_proxy;
pub mod prometheus;
pub mod recorder;
pub mod registry;
pub mod support;
