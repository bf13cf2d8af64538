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

use crate::app::Result as AppResult;
use crate::app::settings::Settings;
use crate::cluster::access::Access;
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::Result;
use crate::error::{Error, Outcome};
use crate::inventory::Warning;
use crate::project::Project;
use crate::project::select::{self, Known};
use crate::util::notice::Notice;

/// The project named by `--root` or found above the working directory.
fn project(settings: &Settings) -> Result<Project> {
    Project::discover(settings.root.as_deref(), &settings.cwd)
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
    let known = Known {
        project: Some(project),
        store: None,
    };
    selected(settings, known, flag)
}

fn selected(settings: &Settings, known: Known<'_>, flag: Option<&str>) -> Result<Domain> {
    let mut notices = Vec::new();
    let selected = select::select(
        known,
        flag,
        settings.env.domain_name.as_deref(),
        &mut notices,
    );
    for notice in &notices {
        settings.printer.raw(notice);
    }
    let selected = selected?;
    if let Some(note) = &selected.note {
        settings.printer.info(note);
    }
    Ok(selected.domain)
}

/// The domains of a fleet selection among the project's ([`crate::fleet::select`]);
/// `None` for one plain `--domain` or none, which take the one-domain rule ([`domain`]).
fn fleet(project: &Project, args: &crate::app::cli::DomainsArgs) -> Result<Option<Vec<Domain>>> {
    crate::fleet::select(crate::fleet::Among::Project(project), args.many())
}

/// A command that reads the clusters of the domains it selects (`drift`, `status`): `all`
/// for several, `one` for one.
fn read_clusters<O: clap::Args>(
    settings: &Settings,
    read: &crate::app::cli::ReadArgs<O>,
    one: impl Fn(&Settings, &crate::app::cli::ReadArgs<O>, &crate::ops::Scope) -> AppResult<Outcome>,
    all: impl Fn(&Settings, &crate::app::cli::ReadArgs<O>, &Project, &[Domain]) -> AppResult<Outcome>,
) -> AppResult<Outcome> {
    let project = project(settings)?;
    let selected = &read.out.status.domain;
    match fleet(&project, selected)? {
        Some(domains) => all(settings, read, &project, &domains),
        None => {
            let domain = domain(settings, &project, selected.one())?;
            one(
                settings,
                read,
                &scope(settings, &project, &domain, &read.out.status.limits),
            )
        }
    }
}

/// The closing rows of a command over several domains, in the `-o` format asked for.
fn print_results(
    settings: &Settings,
    rows: &[crate::view::results::Row],
    format: crate::app::cli::ResultsFormat,
) -> Result<()> {
    use crate::app::cli::ResultsFormat;
    let json = || crate::inventory::render::to_json(&rows);
    settings.printer.data(&match format {
        format @ (ResultsFormat::Table | ResultsFormat::Wide) => {
            let style = crate::view::TableStyle {
                wide: format == ResultsFormat::Wide,
                no_headers: false,
                width: settings.printer.width(),
            };
            crate::view::results::table(rows, style)
        }
        ResultsFormat::Json => json()?,
        ResultsFormat::Yaml => crate::view::format::yaml(&json()?)?,
    })
}

/// `-o` of a closing table asked for one domain, which prints none.
fn one_domain_output(command: &str) -> crate::app::Failure {
    crate::app::Failure::Usage(format!(
        "{command}: -o formats the table of several domains (-A, --domain repeated, a glob); one domain prints its messages only"
    ))
}

/// A domain a fleet command leaves out, and why (`-o json`'s `left`).
#[derive(Debug, serde::Serialize)]
struct Left {
    domain: String,
    why: String,
}

impl Left {
    /// A deploy domain, said on stderr as for one domain.
    fn deploy(settings: &Settings, domain: &Domain, cluster_ref: Option<&str>) -> Left {
        deploy_domain_note(settings, domain.as_str(), cluster_ref);
        Left {
            domain: domain.to_string(),
            why: format!(
                "deploy domain: no inventory of its own (cluster: {})",
                cluster_ref.unwrap_or("-")
            ),
        }
    }

    /// A domain whose answer failed: `[error] D: …` on stderr.
    fn failed(settings: &Settings, domain: &Domain, error: &Error) -> Left {
        settings.printer.error(&format!("{domain}: {error}"));
        Left {
            domain: domain.to_string(),
            why: error.to_string(),
        }
    }
}

/// What a store-only command (`snapshots`, `log`, `report`) reads: the store from
/// `--snapshots` (or `CLINV_SNAPSHOTS`) alone, else `<root>/snapshots`; the project when
/// there is one (for `clusters/.active`), none needed.
struct StoreOnly {
    project: Option<Project>,
    store: crate::store::Store,
}

impl StoreOnly {
    fn open(settings: &Settings) -> Result<StoreOnly> {
        let reach = crate::fleet::Reach::open(
            settings.root.as_deref(),
            settings.snapshots.as_deref(),
            &settings.cwd,
        )?;
        Ok(StoreOnly {
            project: reach.project,
            store: reach.store,
        })
    }

    /// The store's domains a fleet selection (`log -A`, `--domain` repeated, a glob)
    /// names, in name order; `None` for one plain `--domain` or none.
    fn fleet(&self, many: select::Many<'_>) -> Result<Option<Vec<Domain>>> {
        let among = crate::fleet::Among::Store {
            store: &self.store,
            project: self.project.is_some(),
        };
        crate::fleet::select(among, many)
    }

    /// The domain by the one selection rule, knowing the store's domains.
    fn domain(&self, settings: &Settings, flag: Option<&str>) -> Result<Domain> {
        let domains = self.store.domains();
        let known = Known {
            project: self.project.as_ref(),
            store: Some((&domains, self.store.root())),
        };
        selected(settings, known, flag)
    }

    /// The domains of a fleet selection a GitOps channel delivers for: among the project's
    /// when it renders, among the store's for a stored `--snapshot`; `None` for one plain
    /// `--domain` or none.
    #[cfg(feature = "gitops")]
    fn delivered_fleet(
        &self,
        args: &crate::app::cli::DomainsArgs,
        snapshot: Option<&str>,
    ) -> Result<Option<Vec<Domain>>> {
        match (&self.project, snapshot) {
            (Some(project), None) => fleet(project, args),
            _ => self.fleet(args.many()),
        }
    }

    /// The domain a GitOps channel (`commit`, `push`) delivers for: among the project's
    /// when it renders, among the store's too for a stored `--snapshot`.
    #[cfg(feature = "gitops")]
    fn delivered_domain(
        &self,
        settings: &Settings,
        flag: Option<&str>,
        snapshot: Option<&str>,
    ) -> Result<Domain> {
        match (&self.project, snapshot) {
            (Some(project), None) => domain(settings, project, flag),
            _ => self.domain(settings, flag),
        }
    }

    /// What a GitOps channel delivers: `--snapshot`'s stored snapshot, else the project
    /// rendered now; `None` with neither.
    #[cfg(feature = "gitops")]
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

/// How a command speaks: the printer, `--strict`, the deploy domains the run met.
pub(super) fn voice(settings: &Settings) -> crate::ops::outcome::Voice<'_> {
    crate::ops::outcome::Voice {
        console: &settings.printer,
        strict: settings.strict,
        deploy: &settings.deploy_domains,
    }
}

/// The render time ([`crate::ops::outcome::Voice::rendered_at`]).
fn rendered_at(settings: &Settings) -> Result<jiff::Timestamp> {
    voice(settings).rendered_at(settings.env.source_date_epoch.as_deref())
}

/// Says build warnings ([`crate::ops::outcome::Voice::warnings`]).
fn report_warnings(settings: &Settings, warnings: &[Warning]) -> Result<()> {
    voice(settings).warnings(warnings)
}

/// Notes a deploy domain, said at the end of the run ([`say_deploy_domains`]).
fn deploy_domain_note(settings: &Settings, domain: &str, cluster_ref: Option<&str>) {
    settings.deploy_domains.note(domain, cluster_ref);
}

/// The deploy domains the run met, in one `[info]` line.
pub(super) fn say_deploy_domains(settings: &Settings) {
    crate::view::results::say_deploy_domains(&settings.printer, &settings.deploy_domains);
}

/// A domain of the project with its snapshots and its cluster, for the flows that read
/// the live inventory (status, drift, updates).
fn scope<'a>(
    settings: &Settings,
    project: &'a Project,
    domain: &'a Domain,
    limits: &crate::app::cli::ClusterArgs,
) -> crate::ops::Scope<'a> {
    let opts = crate::cluster::access::options(limits.timeout, limits.probe_timeout, false, false);
    crate::ops::Scope {
        project,
        domain,
        store: store(settings, project).domain(domain),
        access: access(settings, limits),
        opts,
    }
}

use crate::fleet::Skip;

/// Several domains of the commands that read each domain's cluster (`drift`, `status`,
/// `updates`, `publish`, `fleet --from live`): each through its own kubeconfig (so
/// `--kubeconfig`/`--context` are refused), read by [`crate::fleet::each`] within the one
/// `--timeout`; `read` gets a cluster domain and what is left of the limits.
fn each_domain<R: Send>(
    command: &str,
    limits: &crate::app::cli::ClusterArgs,
    project: &Project,
    domains: &[Domain],
    read: impl Fn(&Domain, &crate::app::cli::ClusterArgs) -> R + Sync,
    skip: impl Fn(&Domain, Skip) -> R + Sync,
) -> crate::app::Result<Vec<R>> {
    one_kubeconfig_each(command, limits)?;
    let budget = crate::fleet::Limits {
        timeout: limits.timeout,
        probe_timeout: limits.probe_timeout,
    };
    let read = |domain: &Domain, left: crate::fleet::Limits| {
        let limits = crate::app::cli::ClusterArgs {
            kubeconfig: None,
            context: None,
            timeout: left.timeout,
            probe_timeout: left.probe_timeout,
        };
        read(domain, &limits)
    };
    Ok(crate::fleet::each(
        Some(project),
        domains,
        budget,
        read,
        skip,
    ))
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

/// Prints the messages a library flow returned, in order.
fn print_notices(settings: &Settings, notices: &[Notice]) {
    let console: &dyn crate::console::Console = &settings.printer;
    console.notices(notices);
}

/// lok8s's fail-soft rule ([`crate::ops::outcome::Voice::fail_soft`]).
fn fail_soft(settings: &Settings, reason: Reason, message: String) -> crate::app::Result<Outcome> {
    Ok(voice(settings).fail_soft(reason, message)?)
}

/// The history from the store, or from `--repo` (branch: `--branch`, else HEAD), with
/// what was skipped printed as warnings.
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
    }
}

fn history(
    settings: &Settings,
    store: &crate::store::Store,
    domain: &Domain,
    repo: Option<&std::path::Path>,
    branch: Option<&str>,
) -> Result<crate::ops::history::History> {
    let store = store.domain(domain);
    let source = match repo {
        Some(repo) => crate::ops::history::Source::Repo {
            repo,
            rev: branch.unwrap_or("HEAD"),
            domain,
        },
        None => crate::ops::history::Source::Store(&store),
    };
    let history = crate::ops::history::load(source)?;
    for skipped in &history.skipped {
        settings.printer.warn(&format!("{skipped} — skipped"));
    }
    Ok(history)
}
