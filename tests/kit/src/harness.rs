//! The runner of the `cli` and `cluster` test binaries (`harness = false`, libtest-mimic).
//!
//! Each test module lists its cases with [`trials!`], grouped by what they need. The
//! prerequisites are probed once, before any case runs: a case whose prerequisite is
//! absent is reported by the runner as *ignored*, with one loud line on stderr saying
//! why, and fails instead under `CI=true`. Filtering, `--list`, `--exact`, `--skip`,
//! `--ignored`/`--include-ignored` and `--test-threads` are libtest's; output is not
//! captured (`--nocapture` is accepted and changes nothing). Each case runs under a
//! watchdog ([`watched`], `CLINV_TEST_WATCHDOG`).

use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// What a case needs besides the built binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// Nothing: the case always runs.
    Nothing,
    /// A running control plane (`CLINV_TEST_KUBECONFIG`).
    Plane,
    /// A running control plane and Debian's `tinyproxy` (installed by `.ci/run`).
    PlaneAndTinyproxy,
    /// A running control plane and Flux's apply engine (`scripts/flux-apply build`,
    /// found through `CLINV_FLUX_APPLY`; `scripts/test` builds it and sets it).
    PlaneAndFluxApply,
    /// A running control plane, Flux's source-controller and kustomize-controller
    /// (`scripts/flux-controllers build`, found through `CLINV_FLUX_CONTROLLERS`;
    /// `scripts/test` builds them and sets it) and the git servers their tests push to.
    PlaneAndFluxControllers,
    /// A running control plane, Argo CD's repo-server and application-controller
    /// (`scripts/argocd build`, found through `CLINV_ARGOCD`; `scripts/test` builds them and
    /// sets it), Debian's `redis-server` and the HTTPS git server the test pushes to.
    PlaneAndArgoCd,
    /// Debian's `tinyproxy`.
    Tinyproxy,
    /// Headless Chromium.
    Chromium,
    /// bash (its programmable completion: `complete`, `COMP_WORDS`).
    Bash,
    /// Debian's openssh-server (`/usr/sbin/sshd`) and the OpenSSH client tools.
    Sshd,
    /// Running as root (chown, `nobody`).
    Root,
    /// Root and a mountable tmpfs.
    Tmpfs,
    /// No mounted Kubernetes service account (not inside a pod).
    NoServiceAccount,
    /// Debian's nginx and fcgiwrap (an HTTPS git server; installed by `.ci/run`).
    GitHttps,
    /// nginx, fcgiwrap and tinyproxy.
    GitHttpsAndTinyproxy,
    /// Debian's docker-registry (distribution) and htpasswd (installed by `.ci/run`).
    Registry,
    /// The above and `oras` and `crane` (`scripts/oci-tools build`, found through
    /// `CLINV_OCI_TOOLS`; `scripts/test` builds them and sets it).
    RegistryAndOciTools,
    /// Debian's docker-registry and tinyproxy.
    RegistryAndTinyproxy,
    /// `promtool` (Debian's `prometheus` package).
    Promtool,
    /// Debian's `prometheus` (the server, started by the test on loopback).
    Prometheus,
    /// A running control plane, Debian's `prometheus` and `promtool`.
    PlaneAndPrometheus,
    /// GNU time (a child's peak RSS from `wait4`).
    GnuTime,
    /// A running control plane and a private mount namespace (root, `unshare`).
    PlaneAndMountNamespace,
    /// The above and Debian's `tinyproxy`.
    PlaneMountNamespaceAndTinyproxy,
}

/// One registered test: its libtest name, its prerequisite and its body.
pub struct Case {
    name: String,
    need: Need,
    body: fn(),
}

impl Case {
    /// `module` is the `module_path!()` of the list: its first segment (the binary) is
    /// dropped, so names read `publish::drift_against_the_live_inventory` as under libtest.
    pub fn new(module: &str, name: &str, need: Need, body: fn()) -> Self {
        let name = match module.split_once("::") {
            Some((_, module)) => format!("{module}::{name}"),
            None => name.to_string(),
        };
        Case { name, need, body }
    }
}

/// Defines `pub fn tests() -> Vec<Case>` for the module it is used in:
///
/// ```ignore
/// trials! {
///     Nothing: [a_case, another_case],
///     Chromium: [a_case_that_renders],
/// }
/// ```
#[macro_export]
macro_rules! trials {
    ($($need:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        /// This module's test cases, for the runner.
        pub fn tests() -> Vec<$crate::harness::Case> {
            vec![$($(
                $crate::harness::Case::new(
                    module_path!(),
                    stringify!($case),
                    $crate::harness::Need::$need,
                    $case,
                ),
            )*)*]
        }
    };
}

/// Whether `program` can be started (`arg` keeps it from doing anything): what a test
/// that needs it checks before it is run, so a missing package is reported as such.
pub fn runs(program: &str, arg: &str) -> bool {
    std::process::Command::new(program)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}

/// The `clinv` binary under test, as [`run`] was given it.
static BIN: OnceLock<&'static str> = OnceLock::new();

/// The `clinv` binary under test: `env!("CARGO_BIN_EXE_clinv")` of the test binary that
/// called [`run`] (cargo sets it for the package's own tests, not for this crate).
pub fn clinv_bin() -> &'static str {
    BIN.get().expect("harness::run was given the clinv binary")
}

/// Runs `cases` against the `clinv` binary at `bin` with the command line's arguments.
///
/// `probe` says whether a prerequisite is present (`Err` says why not); it is called once
/// per prerequisite that a selected case needs.
pub fn run(
    bin: &'static str,
    mut cases: Vec<Case>,
    probe: impl Fn(Need) -> Result<(), String>,
) -> ExitCode {
    BIN.set(bin).expect("harness::run runs once");
    let args = Arguments::from_args();
    let bound = watchdog().unwrap_or_else(|why| panic!("{why}"));
    let ci = std::env::var("CI").as_deref() == Ok("true");
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(twice) = cases.windows(2).find(|w| w[0].name == w[1].name) {
        panic!("{} is registered twice", twice[0].name);
    }

    // Probe what the selected cases need, once.
    let mut missing: BTreeMap<Need, (Result<(), String>, usize)> = BTreeMap::new();
    for case in &cases {
        // By name only: under `--ignored` the cases about to be ignored are the selected ones.
        let named = Trial::test(case.name.clone(), || Ok(())).with_ignored_flag(true);
        let selected = !args.is_filtered_out(&named);
        if case.need != Need::Nothing && selected {
            missing
                .entry(case.need)
                .or_insert_with(|| (probe(case.need), 0))
                .1 += 1;
        }
    }
    if !args.list {
        for (result, count) in missing.values() {
            if let Err(why) = result {
                if ci {
                    eprintln!("\n*** CI=true: {count} test(s) FAIL: {why} ***\n");
                } else {
                    eprintln!("\n*** {count} test(s) IGNORED: {why} ***\n");
                }
            }
        }
    }

    let trials = cases
        .into_iter()
        .map(|case| {
            let absent = match missing.get(&case.need) {
                Some((Err(why), _)) => Some(why.clone()),
                _ => None,
            };
            let ignored = absent.is_some() && !ci;
            let body = case.body;
            let name = case.name.clone();
            Trial::test(case.name, move || match absent {
                Some(why) if ci => Err(Failed::from(format!("CI=true but {why}"))),
                Some(why) => Err(Failed::from(format!("prerequisite missing: {why}"))),
                None => watched(&name, body, bound),
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// How long one case may run before the watchdog fails it.
///
/// `CLINV_TEST_WATCHDOG` changes it. Far beyond any case (the slowest take a few minutes
/// on a loaded machine), short of a CI job's limit.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(600);

/// The watchdog's bound: `CLINV_TEST_WATCHDOG` (whole seconds, at least 1), else
/// [`DEFAULT_WATCHDOG`]; `Err` names the variable and its bad value.
pub fn watchdog() -> Result<Duration, String> {
    match std::env::var("CLINV_TEST_WATCHDOG") {
        Err(_) => Ok(DEFAULT_WATCHDOG),
        Ok(v) => v
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .map(Duration::from_secs)
            .ok_or_else(|| {
                format!("CLINV_TEST_WATCHDOG={v:?}: not a whole number of seconds >= 1")
            }),
    }
}

/// Runs one case's `body` under the watchdog: on a thread of its own (named for the
/// case, with the main thread's 8 MiB stack), waited for at most `bound`.
///
/// A case still running then fails with a message naming it and the bound, said at once
/// on stderr too, so a hung case fails the run instead of hanging CI; its thread is left
/// behind (a thread cannot be killed) and ends with the process. A panic in the case is
/// passed on as it is, so libtest reports it as before.
pub fn watched(name: &str, body: fn(), bound: Duration) -> Result<(), Failed> {
    let (done, finished) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(8 << 20)
        .spawn(move || {
            body();
            let _ = done.send(());
        })
        .expect("a thread for the case");
    match finished.recv_timeout(bound) {
        // Finished, or panicked (the sender dropped while unwinding).
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match thread.join() {
            Ok(()) => Ok(()),
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            let why = format!(
                "watchdog: {name} still running after {}s (CLINV_TEST_WATCHDOG); failed, \
                 its thread left behind",
                bound.as_secs_f64()
            );
            eprintln!("\n*** {why} ***\n");
            Err(Failed::from(why))
        }
    }
}

/// The folder of tools a script built and `scripts/test` exported in `var`, or why not.
///
/// The folder of tools a script built and `scripts/test` exported in `var`, when it holds
/// every one of `files`; else why not (the reason an ignored test gives), naming `what`
/// and the `script` that builds it. (The agent-only build has none of those tests.)
pub fn built_tools(
    what: &str,
    var: &str,
    files: &[&str],
    script: &str,
) -> Result<std::path::PathBuf, String> {
    let hint = format!("run scripts/test (it builds {script})");
    let Some(dir) = std::env::var_os(var).map(std::path::PathBuf::from) else {
        return Err(format!("no {what}: {var} unset; {hint}"));
    };
    match files.iter().find(|f| !dir.join(f).is_file()) {
        Some(file) => Err(format!(
            "no {what}: {var}={} holds no {file}; {hint}",
            dir.display()
        )),
        None => Ok(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_past_the_bound_fails_naming_itself() {
        let hangs: fn() = || std::thread::sleep(Duration::from_secs(3600));
        let start = std::time::Instant::now();
        let failed = watched("store::a_hung_case", hangs, Duration::from_millis(200))
            .expect_err("the watchdog fails a hung case");
        let message = format!("{failed:?}");
        assert!(
            message.contains("store::a_hung_case") && message.contains("CLINV_TEST_WATCHDOG"),
            "{message}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_case_within_the_bound_passes_and_a_panic_is_passed_on() {
        assert!(watched("quick", || (), Duration::from_secs(60)).is_ok());
        let panicked = std::panic::catch_unwind(|| {
            watched(
                "boom",
                || panic!("the case's own message"),
                Duration::from_secs(60),
            )
        })
        .expect_err("the panic reaches libtest");
        assert_eq!(
            panicked.downcast_ref::<&str>(),
            Some(&"the case's own message")
        );
    }
}
