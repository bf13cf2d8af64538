//! Resolved settings: the parsed command line plus the environment, read once here and
//! nowhere else.

use crate::app::cli::GlobalArgs;
use crate::app::output::{Printer, Verbosity};
use std::path::PathBuf;

/// The environment variables clinv reads.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `DOMAIN_NAME`: lok8s's domain override.
    pub domain_name: Option<String>,
    /// `SOURCE_DATE_EPOCH`: fixed render time for reproducible output.
    pub source_date_epoch: Option<String>,
    /// `NO_COLOR` set and non-empty.
    pub no_color: bool,
    /// `DEBUG` set and non-empty (lok8s's debug switch).
    pub debug: bool,
    /// `KUBECONFIG`: a path list, as kubectl reads it.
    pub kubeconfig: Option<std::ffi::OsString>,
    /// `HOME`, for `~/.kube/config` and the default cache directory.
    pub home: Option<PathBuf>,
    /// `XDG_CACHE_HOME` (set and non-empty): where fetched addon indexes are cached.
    pub xdg_cache_home: Option<PathBuf>,
    /// `KUBERNETES_SERVICE_HOST` set and non-empty: running in a pod (the agent then
    /// uses the pod's service account unless `--kubeconfig` is given).
    pub in_cluster: bool,
    /// `COLUMNS`, a positive whole number: the width tables fit, terminal or not (a
    /// pipe's tables are otherwise as wide as their cells).
    pub columns: Option<usize>,
}

impl Env {
    /// Reads the process environment.
    pub fn from_process() -> Env {
        let var = crate::util::env::var;
        let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
        Env {
            domain_name: var("DOMAIN_NAME"),
            source_date_epoch: var("SOURCE_DATE_EPOCH"),
            no_color: set("NO_COLOR"),
            debug: set("DEBUG"),
            kubeconfig: crate::util::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()),
            home: crate::util::env::var_os("HOME").map(PathBuf::from),
            xdg_cache_home: crate::util::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            in_cluster: set("KUBERNETES_SERVICE_HOST"),
            columns: var("COLUMNS")
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&c| c > 0),
        }
    }

    /// `${XDG_CACHE_HOME:-$HOME/.cache}`, when either is set.
    pub fn cache_home(&self) -> Option<PathBuf> {
        self.xdg_cache_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".cache")))
    }
}

/// Everything a command needs to know about how it was invoked.
#[derive(Debug)]
pub struct Settings {
    pub root: Option<PathBuf>,
    pub cwd: PathBuf,
    pub snapshots: Option<PathBuf>,
    pub strict: bool,
    pub env: Env,
    pub printer: Printer,
    /// The deploy domains a run met (name → its cluster domain), said once at its end in
    /// one line, not a line each on every command over the fleet.
    pub deploy_domains: crate::fleet::Deploys,
}

impl Settings {
    pub fn new(global: GlobalArgs, env: Env) -> Settings {
        let verbosity = if global.quiet {
            Verbosity::Quiet
        } else if global.verbose > 0 || env.debug {
            Verbosity::Debug
        } else {
            Verbosity::Normal
        };
        Settings {
            printer: Printer::new(global.color, env.no_color, verbosity).columns(env.columns),
            root: global.root,
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            snapshots: global.snapshots,
            strict: global.strict,
            env,
            deploy_domains: crate::fleet::Deploys::default(),
        }
    }
}
