//! One file per command: its arguments → one library call → the printer. This file
//! holds what several commands share (the project, the store, the domain, the cluster
//! access and the fail-soft rule); [`crate::app`] dispatches to the commands.

pub(super) mod addons;
pub(super) mod agent;
#[cfg(feature = "gitops")]
pub(super) mod commit;
pub(super) mod crd;
pub(super) mod diff;
pub(super) mod drift;
pub(super) mod fleet;
pub(super) mod index;
pub(super) mod log;
pub(super) mod publish;
#[cfg(feature = "gitops")]
pub(super) mod push;
pub(super) mod render;
pub(super) mod replay;
pub(super) mod report_cmd;
pub(super) mod snapshots;
pub(super) mod status;
pub(super) mod updates;
pub(super) mod version;
pub(super) mod watch;

use crate::app::settings::Settings;
use crate::cluster::access::Access;
use crate::domain::Domain;
use crate::error::Result;
use crate::project::Project;

/// The run's settings as the library's flows take them.
fn context(settings: &Settings) -> crate::ops::context::Context<'_> {
    crate::ops::context::Context {
        console: &settings.printer,
        strict: settings.strict,
        root: settings.root.as_deref(),
        cwd: &settings.cwd,
        snapshots: settings.snapshots.as_deref(),
        source_date_epoch: settings.env.source_date_epoch.as_deref(),
        domain_name: settings.env.domain_name.as_deref(),
        deploys: &settings.deploy_domains,
    }
}

/// How to reach the clusters a command reads, from its flags and the environment.
fn live(settings: &Settings, limits: &crate::app::cli::ClusterArgs) -> crate::ops::live::Live {
    crate::ops::live::Live {
        snapshots: settings.snapshots.clone(),
        access: access(settings, limits),
        limits: crate::fleet::Limits {
            timeout: limits.timeout,
            probe_timeout: limits.probe_timeout,
        },
    }
}

/// The domains a command's `--domain`/`-A` ask for, plain.
fn selection(args: &crate::app::cli::DomainsArgs) -> crate::ops::context::Selection<'_> {
    crate::ops::context::Selection {
        many: args.many(),
        one: args.one(),
    }
}

/// The project named by `--root` or found above the working directory.
fn project(settings: &Settings) -> Result<Project> {
    context(settings).project()
}

/// Each delivery's limits and overrides: `--timeout`, `--probe-timeout`,
/// `--force-conflicts`, `--take-over`, `--dry-run`.
fn replay_options(args: &crate::app::cli::ReplayArgs) -> crate::cluster::Options {
    crate::cluster::Options {
        take_over: args.take_over,
        ..crate::cluster::access::options(
            args.limits.timeout,
            args.limits.probe_timeout,
            args.force_conflicts,
            args.dry_run,
        )
    }
}

/// The snapshot store: `--snapshots`, `CLINV_SNAPSHOTS`, else `<root>/snapshots`.
fn store(settings: &Settings, project: &Project) -> crate::store::Store {
    crate::store::Store::of_project(settings.snapshots.as_deref(), project.root())
}

/// The domain of a project command by the one selection rule
/// ([`crate::project::select`]), printing lok8s's notices on the way.
fn domain(settings: &Settings, project: &Project, flag: Option<&str>) -> Result<Domain> {
    context(settings).domain(project, flag)
}

/// The domains of a fleet selection among the project's ([`crate::fleet::select`]);
/// `None` for one plain `--domain` or none, which take the one-domain rule ([`domain`]).
fn fleet(project: &Project, args: &crate::app::cli::DomainsArgs) -> Result<Option<Vec<Domain>>> {
    crate::fleet::select(crate::fleet::Among::Project(project), args.many())
}

/// The closing rows of a command over several domains (group C's until the merge).
fn print_results(
    settings: &Settings,
    rows: &[crate::view::results::Row],
    format: crate::app::cli::ResultsFormat,
) -> Result<()> {
    crate::view::results::say(&settings.printer, rows, format)
}

/// `-o` of a closing table asked for one domain, which prints none.
fn one_domain_output(command: &str) -> crate::app::Failure {
    crate::app::Failure::Usage(format!(
        "{command}: -o formats the table of several domains (-A, --domain repeated, a glob); one domain prints its messages only"
    ))
}

/// [`crate::fleet::Reach`] opened from the settings, for the GitOps channels (`commit`,
/// `push`), which deliver a stored snapshot or the project rendered now.
#[cfg(feature = "gitops")]
struct StoreOnly(crate::fleet::Reach);

#[cfg(feature = "gitops")]
impl std::ops::Deref for StoreOnly {
    type Target = crate::fleet::Reach;
    fn deref(&self) -> &crate::fleet::Reach {
        &self.0
    }
}

#[cfg(feature = "gitops")]
impl StoreOnly {
    fn open(settings: &Settings) -> Result<StoreOnly> {
        reach(settings).map(StoreOnly)
    }

    /// [`crate::fleet::Reach::delivered_fleet`].
    fn delivered_fleet(
        &self,
        args: &crate::app::cli::DomainsArgs,
        snapshot: Option<&str>,
    ) -> Result<Option<Vec<Domain>>> {
        self.0.delivered_fleet(args.many(), snapshot.is_some())
    }

    /// [`crate::fleet::Reach::delivered_domain`].
    fn delivered_domain(
        &self,
        settings: &Settings,
        flag: Option<&str>,
        snapshot: Option<&str>,
    ) -> Result<Domain> {
        let env = settings.env.domain_name.as_deref();
        (self.0).delivered_domain(&settings.printer, flag, env, snapshot.is_some())
    }

    /// What a GitOps channel delivers: `--snapshot`'s stored snapshot, else the project
    /// rendered now; `None` with neither.
    fn delivered<'a>(
        &'a self,
        settings: &'a Settings,
        snapshot: Option<&'a str>,
    ) -> Option<crate::ops::commit::Source<'a>> {
        use crate::ops::commit::Source;
        match (snapshot, &self.project) {
            (Some(reference), _) => Some(Source::Stored(reference)),
            (None, Some(project)) => Some(Source::Project {
                project,
                source_date_epoch: settings.env.source_date_epoch.as_deref(),
                strict: settings.strict,
            }),
            (None, None) => None,
        }
    }
}

/// What a store-only command reads: the store from `--snapshots` (or
/// `CLINV_SNAPSHOTS`) alone, else `<root>/snapshots`; the project when there is one.
fn reach(settings: &Settings) -> Result<crate::fleet::Reach> {
    let (root, snapshots) = (settings.root.as_deref(), settings.snapshots.as_deref());
    crate::fleet::Reach::open(root, snapshots, &settings.cwd)
}

/// The render time (`SOURCE_DATE_EPOCH` or now), see [`crate::ops::context::Context::rendered_at`].
fn rendered_at(settings: &Settings) -> Result<jiff::Timestamp> {
    context(settings).rendered_at()
}

/// Notes a deploy domain, said at the end of the run ([`say_deploy_domains`]).
fn deploy_domain_note(settings: &Settings, domain: &str, cluster_ref: Option<&str>) {
    settings.deploy_domains.note(domain, cluster_ref);
}

/// The deploy domains the run met, in one `[info]` line.
pub(super) fn say_deploy_domains(settings: &Settings) {
    crate::view::results::say_deploy_domains(&settings.printer, &settings.deploy_domains);
}

/// Several domains are each read through their own kubeconfig: `--kubeconfig` and
/// `--context`, which name one cluster, are a usage error.
fn one_kubeconfig_each(
    command: &str,
    limits: &crate::app::cli::ClusterArgs,
) -> crate::app::Result<()> {
    if limits.kubeconfig.is_some() || limits.context.is_some() {
        return Err(crate::app::Failure::Usage(format!(
            "clinv {command} with several domains: each is read through its own kubeconfig (.kubeconfig/<name>.yaml in the project, else KUBECONFIG, else ~/.kube/config); --kubeconfig/--context name one cluster"
        )));
    }
    Ok(())
}

/// How to reach the cluster: `--kubeconfig`, `--context`, `KUBECONFIG`, `HOME`.
fn access(settings: &Settings, cluster: &crate::app::cli::ClusterArgs) -> Access {
    Access {
        kubeconfig: cluster.kubeconfig.clone(),
        context: cluster.context.clone(),
        env_kubeconfig: settings.env.kubeconfig.clone(),
        home: settings.env.home.clone(),
        ..Access::default()
    }
}

/// How to fetch an addon index: `--offline`, `--index-ca`, `--fetch-timeout` and the cache.
fn fetch_options(
    settings: &Settings,
    source: &crate::app::cli::IndexSourceArgs,
) -> crate::catalog::fetch::Options {
    crate::catalog::fetch::Options {
        offline: source.offline,
        ca_file: source.index_ca.clone(),
        cache_home: settings.env.cache_home(),
        timeout: std::time::Duration::from_secs_f64(source.fetch_timeout.clamp(0.1, 3600.0)),
    }
}

/// How to read a registry's artifacts, from the flags: how to reach it, and the key
/// their signature must verify with (`--verify`).
#[cfg(feature = "gitops")]
fn registry_reading(
    registry: &crate::app::cli::RegistryArgs,
    verify: Option<&std::path::Path>,
) -> crate::Result<(crate::oci::Access, Option<crate::oci::PublicKey>)> {
    let key = verify.map(crate::oci::public_key).transpose()?;
    Ok((registry_access(registry), key))
}

/// How to reach a registry, from the flags.
#[cfg(feature = "gitops")]
fn registry_access(args: &crate::app::cli::RegistryArgs) -> crate::oci::Access {
    crate::oci::Access {
        plain_http: args.plain_http || args.insecure,
        insecure: args.insecure,
        ca_file: args.ca_file.clone(),
        creds_env: args.creds_env.clone(),
        token_env: args.token_env.clone(),
        until: None,
    }
}
