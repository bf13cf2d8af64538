//! CLI tests: the real binary on the bundled example and small fixtures.
//!
//! `harness = false`: the runner is `tests/kit/src/harness.rs` (libtest-mimic), so a case whose
//! prerequisite (Chromium, root, a tmpfs) is absent is reported as ignored, and fails
//! under `CI=true`.

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[macro_use]
extern crate clinv_testkit;
#[cfg(feature = "gitops")]
use clinv_testkit::{git_server, recorder, registry};
use clinv_testkit::{harness, https, loopback_proxy, prometheus, support};

mod addon_history;
mod addons;
mod agent;
mod audit;
mod browser;
#[cfg(feature = "gitops")]
mod commit_many;
mod compare;
mod completion;
mod contract;
#[cfg(feature = "gitops")]
mod credentials;
mod diff;
#[cfg(feature = "gitops")]
mod every_selection;
mod fleet;
mod fleet_history;
#[cfg(feature = "gitops")]
mod git_https;
#[cfg(feature = "gitops")]
mod git_ssh;
#[cfg(feature = "gitops")]
mod gitops;
mod history;
mod history_store;
mod hostile;
mod index;
mod interface;
mod jsonpath;
mod metrics;
#[cfg(feature = "gitops")]
mod oci;
#[cfg(feature = "gitops")]
mod oci_clients;
#[cfg(feature = "gitops")]
mod outbox;
mod outcomes;
mod pending_only;
mod reference;
mod render;
mod replay_all;
mod retarget;
mod secrets;
mod selection;
mod several;
#[cfg(feature = "gitops")]
mod sites;
mod store;
mod store_v2;
mod times;
mod typos;
mod updates;
mod v1;
mod watch;

fn main() -> std::process::ExitCode {
    #[cfg_attr(not(feature = "gitops"), allow(unused_mut))]
    let mut cases = vec![
        addon_history::tests(),
        addons::tests(),
        agent::tests(),
        audit::tests(),
        compare::tests(),
        completion::tests(),
        contract::tests(),
        diff::tests(),
        fleet::tests(),
        fleet_history::tests(),
        history::tests(),
        history_store::tests(),
        hostile::tests(),
        index::tests(),
        interface::tests(),
        jsonpath::tests(),
        metrics::tests(),
        outcomes::tests(),
        pending_only::tests(),
        reference::tests(),
        render::tests(),
        replay_all::tests(),
        retarget::tests(),
        secrets::tests(),
        selection::tests(),
        several::tests(),
        store::tests(),
        store_v2::tests(),
        times::tests(),
        typos::tests(),
        updates::tests(),
        watch::tests(),
    ];
    #[cfg(feature = "gitops")]
    cases.push(gitops::tests());
    #[cfg(feature = "gitops")]
    cases.push(every_selection::tests());
    #[cfg(feature = "gitops")]
    cases.push(fleet_history::gitops_tests());
    #[cfg(feature = "gitops")]
    cases.push(commit_many::tests());
    #[cfg(feature = "gitops")]
    cases.push(compare::gitops::tests());
    #[cfg(feature = "gitops")]
    cases.push(git_https::tests());
    #[cfg(feature = "gitops")]
    cases.push(oci::tests());
    #[cfg(feature = "gitops")]
    cases.push(credentials::tests());
    #[cfg(feature = "gitops")]
    cases.push(oci_clients::tests());
    #[cfg(feature = "gitops")]
    cases.push(git_ssh::tests());
    #[cfg(feature = "gitops")]
    cases.push(outbox::tests());
    harness::run(
        env!("CARGO_BIN_EXE_clinv"),
        cases.into_iter().flatten().collect(),
        |need| match need {
            harness::Need::Chromium => browser::present(),
            harness::Need::Bash => completion::bash(),
            harness::Need::GnuTime => support::gnu_time(),
            harness::Need::Promtool => prometheus::promtool_present(),
            harness::Need::Prometheus => prometheus::present(),
            harness::Need::Root => hostile::root(),
            harness::Need::Tmpfs => hostile::tmpfs(),
            harness::Need::NoServiceAccount => agent::outside_a_pod(),
            harness::Need::Tinyproxy => loopback_proxy::present().map_err(str::to_string),
            #[cfg(feature = "gitops")]
            harness::Need::GitHttps => git_server::present(),
            #[cfg(feature = "gitops")]
            harness::Need::GitHttpsAndTinyproxy => git_server::present()
                .and_then(|()| loopback_proxy::present().map_err(str::to_string)),
            #[cfg(feature = "gitops")]
            harness::Need::Sshd => git_ssh::present(),
            #[cfg(feature = "gitops")]
            harness::Need::Registry => registry::present(),
            #[cfg(feature = "gitops")]
            harness::Need::RegistryAndTinyproxy => {
                registry::present().and_then(|()| loopback_proxy::present().map_err(str::to_string))
            }
            #[cfg(feature = "gitops")]
            harness::Need::RegistryAndOciTools => {
                registry::present().and_then(|()| oci_clients::present())
            }
            other => unreachable!("no cli test needs {other:?}"),
        },
    )
}
