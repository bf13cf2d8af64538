//! Leaf: the one place clinv reads its process environment (clippy refuses `std::env::var`
//! elsewhere).
//!
//! What it reads: `DOMAIN_NAME`, `SOURCE_DATE_EPOCH`, `NO_COLOR`, `DEBUG`, `KUBECONFIG`,
//! `HOME`, `XDG_CACHE_HOME`, `KUBERNETES_SERVICE_HOST` and `CLINV_SNAPSHOTS`
//! (app::settings); the proxy variables (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, either
//! case) for the cluster and HTTPS Git remotes; git's `GIT_SSL_*`, `GIT_SSH*` and
//! `--token-env`'s variable (gitops); `DOCKER_CONFIG`, `COSIGN_PASSWORD` and
//! `--creds-env`'s variable (oci); `CLINV_HELPER_TIMEOUT` (util::helper);
//! `CLINV_LOCK_TIMEOUT` (store::lock_timeout, for the store's and the GitOps repository's
//! locks); `CLINV_SUPERSEDE_LINES` (store::supersede_lines, a test's knob); `COLUMNS` (app::settings: the width tables fit); `_CLAP_COMPLETE_INDEX`
//! (completion).
#![allow(clippy::disallowed_methods)] // the one reader

use std::ffi::OsString;

/// The variable's value; `None` when unset or not UTF-8.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The variable's value as the OS gives it (paths need not be UTF-8).
pub fn var_os(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}
