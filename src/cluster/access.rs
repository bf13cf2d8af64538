//! Which kubeconfig to use, and the connect-and-read sequence the commands share.

use crate::cluster::{self, Cluster, Failure, Options, Step};
use crate::delivery::Reason;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::util::files;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest kubeconfig file read.
const MAX_KUBECONFIG: u64 = 4 << 20;

/// The settings that decide how to reach a cluster.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// `KUBECONFIG`: a path list, as kubectl reads it.
    pub env_kubeconfig: Option<OsString>,
    /// `HOME`, for `~/.kube/config`.
    pub home: Option<PathBuf>,
}

/// The kubeconfig files to use, in kubectl's merge order, and where the choice came from.
#[derive(Debug, Clone)]
pub struct Choice {
    pub paths: Vec<PathBuf>,
    pub origin: &'static str,
}

impl Access {
    /// `--kubeconfig`, else lok8s's `<root>/.kubeconfig/<metadata.name>.yaml` when it
    /// exists, else `KUBECONFIG`, else `~/.kube/config`. Without a project (`clinv diff`
    /// of files outside one) the project step is skipped.
    ///
    /// # Errors
    /// [`Reason::NoKubeconfig`] naming the path that was looked for.
    pub fn choose(
        &self,
        project: Option<&Project>,
        cluster_name: Option<&str>,
    ) -> Result<Choice, Failure> {
        let missing = |p: &Path| {
            Failure::new(
                Reason::NoKubeconfig,
                Step::Connect,
                format!("kubeconfig not found ({})", p.display()),
            )
        };
        if let Some(path) = &self.kubeconfig {
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
        if let Some(list) = &self.env_kubeconfig {
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
                (true, None) => Err(missing(Path::new("$KUBECONFIG"))),
            };
        }
        let default = self
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

    /// Reads the chosen files and connects.
    ///
    /// # Errors
    /// Unreadable or invalid kubeconfigs, an unknown context.
    pub async fn connect(&self, choice: &Choice, opts: Options) -> Result<Cluster, Failure> {
        let mut texts = Vec::with_capacity(choice.paths.len());
        for path in &choice.paths {
            let bad = |m: String| {
                Failure::new(
                    Reason::BadKubeconfig,
                    Step::Connect,
                    format!("{}: {m}", path.display()),
                )
            };
            let bytes =
                files::read_bounded(path, MAX_KUBECONFIG).map_err(|e| bad(e.to_string()))?;
            let text = String::from_utf8(bytes).map_err(|_| bad("not valid UTF-8".into()))?;
            texts.push((path.display().to_string(), text));
        }
        let kubeconfig = cluster::parse_kubeconfigs(&texts)?;
        Cluster::connect(kubeconfig, self.context.as_deref(), opts).await
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

/// A single-threaded runtime: one command, a handful of sequential requests.
///
/// # Errors
/// [`Error::Runtime`]: the process cannot get the resources (a local failure, not the
/// cluster's).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
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

/// The live inventory and the server it came from.
#[derive(Debug, Clone)]
pub struct LiveInventory {
    pub server: String,
    /// `None` when the server answered without a ClusterInventory.
    pub object: Option<Value>,
}

/// What [`read_live`] did.
#[derive(Debug)]
pub struct LiveRead {
    /// The kubeconfig used; `None` when none was found (and nothing was sent).
    pub choice: Option<Choice>,
    /// The inventory, or why the cluster could not be read.
    pub result: Result<LiveInventory, Failure>,
    /// One line per request, for `-v`.
    pub trace: Vec<String>,
}

/// Chooses the kubeconfig (for the cluster of `domain` in `project`, when given),
/// connects and reads the live inventory. A cluster that cannot be read is not an error
/// here: the callers fall back to what the store recorded.
///
/// # Errors
/// [`Error::Runtime`] only.
pub fn read_live(
    access: &Access,
    domain: Option<(&Project, &str)>,
    opts: Options,
) -> Result<LiveRead> {
    let rt = runtime()?;
    let name = domain.and_then(|(p, d)| cluster_name(p, d));
    let choice = match access.choose(domain.map(|(p, _)| p), name.as_deref()) {
        Ok(c) => c,
        Err(f) => {
            return Ok(LiveRead {
                choice: None,
                result: Err(f),
                trace: Vec::new(),
            });
        }
    };
    let (result, trace) = rt.block_on(async {
        let cluster = match access.connect(&choice, opts).await {
            Ok(c) => c,
            Err(f) => return (Err(f), Vec::new()),
        };
        let object = cluster.get_inventory().await;
        let server = cluster.target.server.clone();
        (
            object.map(|object| LiveInventory { server, object }),
            cluster.trace(),
        )
    });
    Ok(LiveRead {
        choice: Some(choice),
        result,
        trace,
    })
}
