//! Finding the kubeconfig and connecting, shared by the commands that talk to a cluster.

use crate::app::settings::Settings;
use crate::cluster::{self, Cluster, Failure, Options, Step};
use crate::delivery::Reason;
use crate::project::Project;
use crate::util::files;
use std::path::PathBuf;
use std::time::Duration;

/// Largest kubeconfig file read.
const MAX_KUBECONFIG: u64 = 4 << 20;

/// The kubeconfig files to use, in kubectl's merge order, and where the choice came from.
#[derive(Debug)]
pub struct Choice {
    pub paths: Vec<PathBuf>,
    pub origin: &'static str,
}

/// `--kubeconfig`, else lok8s's `<root>/.kubeconfig/<metadata.name>.yaml` when it
/// exists, else `KUBECONFIG`, else `~/.kube/config`. Without a project (`clinv diff` of
/// files outside one) the project step is skipped.
///
/// # Errors
/// [`Reason::NoKubeconfig`] naming the path that was looked for.
pub fn choose(
    settings: &Settings,
    project: Option<&Project>,
    cluster_name: Option<&str>,
) -> Result<Choice, Failure> {
    let missing = |p: &std::path::Path| {
        Failure::new(
            Reason::NoKubeconfig,
            Step::Connect,
            format!("kubeconfig not found ({})", p.display()),
        )
    };
    if let Some(path) = &settings.kubeconfig {
        if !path.is_file() {
            return Err(missing(path));
        }
        return Ok(Choice {
            paths: vec![path.clone()],
            origin: "--kubeconfig",
        });
    }
    if let Some(path) = project
        .zip(cluster_name)
        .and_then(|(p, n)| p.kubeconfig_path(n))
        && path.is_file()
    {
        return Ok(Choice {
            paths: vec![path],
            origin: "project .kubeconfig/",
        });
    }
    if let Some(list) = &settings.env.kubeconfig {
        let all: Vec<PathBuf> = std::env::split_paths(list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        let present: Vec<PathBuf> = all.iter().filter(|p| p.is_file()).cloned().collect();
        return match (present.is_empty(), all.first()) {
            (false, _) => Ok(Choice {
                paths: present,
                origin: "KUBECONFIG",
            }),
            (true, Some(first)) => Err(missing(first)),
            (true, None) => Err(missing(std::path::Path::new("$KUBECONFIG"))),
        };
    }
    let default = settings
        .env
        .home
        .clone()
        .unwrap_or_default()
        .join(".kube")
        .join("config");
    if default.is_file() {
        Ok(Choice {
            paths: vec![default],
            origin: "~/.kube/config",
        })
    } else {
        Err(missing(&default))
    }
}

/// The probe budget: `CLINV_PROBE_TIMEOUT` is not read; the flag sets it (default 3 s).
pub fn options(timeout_secs: f64, probe_secs: f64, force: bool, dry_run: bool) -> Options {
    let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.05, 3600.0));
    Options {
        probe: secs(probe_secs.min(timeout_secs)),
        deadline: secs(timeout_secs),
        force,
        dry_run,
    }
}

/// Reads the chosen files and connects.
///
/// # Errors
/// Unreadable or invalid kubeconfigs, an unknown context.
pub async fn connect(
    settings: &Settings,
    choice: &Choice,
    opts: Options,
) -> Result<Cluster, Failure> {
    let mut texts = Vec::with_capacity(choice.paths.len());
    for path in &choice.paths {
        let bad = |m: String| {
            Failure::new(
                Reason::BadKubeconfig,
                Step::Connect,
                format!("{}: {m}", path.display()),
            )
        };
        let bytes = files::read_bounded(path, MAX_KUBECONFIG).map_err(|e| bad(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| bad("not valid UTF-8".into()))?;
        texts.push((path.display().to_string(), text));
    }
    let kubeconfig = cluster::parse_kubeconfigs(&texts)?;
    Cluster::connect(kubeconfig, settings.context.as_deref(), opts).await
}

/// A single-threaded runtime: one command, a handful of sequential requests.
pub fn runtime() -> crate::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::io("<tokio runtime>", e))
}

/// The spec's `metadata.name` of a cluster domain: it names lok8s's kubeconfig. `None`
/// for deploy domains, missing or unreadable specs (the other kubeconfig rules apply).
pub fn cluster_name(project: &Project, domain: &str) -> Option<String> {
    match project.domain_kind(domain) {
        crate::project::DomainKind::Cluster { spec } => {
            crate::project::spec::read(&spec, project.root(), domain)
                .ok()
                .and_then(|s| s.name)
        }
        _ => None,
    }
}
