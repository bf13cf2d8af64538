//! Which kubeconfig to use, and the connect-and-read sequence the commands share.

use crate::cluster::{self, Cluster, Failure, Options, Resolved, Step};
use crate::delivery::Reason;
use crate::domain::Domain;
use crate::error::Result;
use crate::project::Project;
use crate::util::files;
use kube::config::Kubeconfig;
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
    /// `--context`, or the context a snapshot was published through ([`ContextFrom`]).
    pub context: Option<String>,
    /// Who named `context`: the user, or a snapshot's recorded target.
    pub context_from: ContextFrom,
    /// `KUBECONFIG`: a path list, as kubectl reads it.
    pub env_kubeconfig: Option<OsString>,
    /// `HOME`, for `~/.kube/config`.
    pub home: Option<PathBuf>,
}

/// Who named [`Access::context`].
///
/// A context the user named and the kubeconfig does not have is the user's mistake
/// (kubectl refuses it, exit 2); one recorded with a snapshot that a regenerated
/// kubeconfig no longer names is not: the snapshot stays pending (`bad-kubeconfig`) and
/// the message says what was recorded and the way out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ContextFrom {
    /// `--context` (or none: the current context).
    #[default]
    Flag,
    /// The recorded target of snapshot `id`; `hint` says how to deliver it otherwise.
    Snapshot { id: String, hint: &'static str },
}

/// Most context names an unknown-context message lists.
const MAX_NAMED: usize = 8;

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
                // Asked for by name: a mistake to refuse, not a cluster to queue for.
                return Err(Failure {
                    usage: true,
                    ..missing(path)
                });
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

    /// Reads the chosen files and connects (the exec credential plugin, if any, runs
    /// under `opts`' deadline).
    ///
    /// # Errors
    /// As [`Access::resolve`] and [`Resolved::connect`].
    pub fn connect(&self, choice: &Choice, opts: Options) -> Result<Cluster, Failure> {
        self.resolve(choice)?.connect(opts)
    }

    /// Reads the chosen files and chooses the context: where the cluster is, before
    /// anything runs or is sent.
    ///
    /// # Errors
    /// Unreadable or invalid kubeconfigs, an unknown context.
    pub fn resolve(&self, choice: &Choice) -> Result<Resolved, Failure> {
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
        if let Some(name) = &self.context
            && !kubeconfig.contexts.iter().any(|c| &c.name == name)
        {
            return Err(match &self.context_from {
                ContextFrom::Flag => unknown_context(name, choice, &kubeconfig),
                ContextFrom::Snapshot { id, hint } => {
                    recorded_context_gone(name, id, hint, choice, &kubeconfig)
                }
            });
        }
        let mut resolved = Resolved::load(kubeconfig, self.context.as_deref())?;
        // Only paths that can be written down faithfully; a replay needs the exact file.
        resolved.target.kubeconfig = choice
            .paths
            .iter()
            .map(|p| p.to_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        Ok(resolved)
    }
}

/// `--context NAME` that no chosen kubeconfig names: a usage mistake, with a did-you-mean.
fn unknown_context(name: &str, choice: &Choice, kubeconfig: &Kubeconfig) -> Failure {
    let files: Vec<String> = choice
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mean =
        crate::util::suggest::closest(name, kubeconfig.contexts.iter().map(|c| c.name.as_str()))
            .map(|n| format!(" — did you mean '{n}'?"))
            .unwrap_or_default();
    Failure::usage(
        Reason::BadKubeconfig,
        format!(
            "--context {name}: no such context in {}{mean}",
            files.join(", ")
        ),
    )
}

/// The context a snapshot was published through, which the kubeconfig (regenerated
/// since) no longer names: not the user's flag, so never "--context"; what was recorded,
/// what the file names now, and `hint`.
fn recorded_context_gone(
    name: &str,
    id: &str,
    hint: &str,
    choice: &Choice,
    kubeconfig: &Kubeconfig,
) -> Failure {
    let files: Vec<String> = choice
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let names: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let named = match names.len() {
        0 => "it names no context".to_string(),
        n if n > MAX_NAMED => format!(
            "it names: {} and {} more",
            names[..MAX_NAMED].join(", "),
            n - MAX_NAMED
        ),
        _ => format!("it names: {}", names.join(", ")),
    };
    Failure::new(
        Reason::BadKubeconfig,
        Step::Connect,
        format!(
            "snapshot {id} was published through context '{name}' of {}, which no longer names it ({named}); {hint}",
            files.join(", ")
        ),
    )
}

/// The probe budget: `CLINV_PROBE_TIMEOUT` is not read; the flag sets it (default 3 s).
pub fn options(timeout_secs: f64, probe_secs: f64, force: bool, dry_run: bool) -> Options {
    let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.05, 3600.0));
    Options {
        probe: secs(probe_secs.min(timeout_secs)),
        deadline: secs(timeout_secs),
        force,
        take_over: false,
        dry_run,
        until: None,
    }
}

/// The spec's `metadata.name` of a cluster domain: it names lok8s's kubeconfig. `None`
/// for deploy domains and a spec without a name (the other kubeconfig rules apply).
///
/// # Errors
/// The spec cannot be read or does not parse: which kubeconfig the domain uses is then
/// unknown, and guessing (`KUBECONFIG`, `~/.kube/config`) could reach another cluster.
pub fn cluster_name(project: &Project, domain: &Domain) -> crate::error::Result<Option<String>> {
    match project.domain_kind(domain) {
        crate::project::DomainKind::Cluster { spec } => {
            Ok(crate::project::spec::read(&spec, project.root(), domain)?.name)
        }
        _ => Ok(None),
    }
}

/// The live object when it is `want`'s domain's; another domain's (or one without a
/// domain label) is never shown as `want`'s: [`Reason::DomainMismatch`].
fn whose(
    object: Option<Value>,
    want: Option<&str>,
    cluster: &Cluster,
) -> Result<Option<Value>, Failure> {
    let other = object
        .as_ref()
        .zip(want)
        .and_then(|(o, want)| cluster::other_domain_than(o, want));
    match other {
        Some(detail) => Err(Failure::new(
            Reason::DomainMismatch,
            Step::Probe,
            format!("{detail} ({})", cluster.target.server),
        )),
        None => Ok(object),
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

/// Chooses the kubeconfig (for the cluster of `domain` in `project`, when given), connects
/// and reads the live inventory.
///
/// A cluster that cannot be read is not an error here: the callers fall back to what the
/// store recorded.
///
/// # Errors
/// [`Error::Runtime`] only.
pub fn read_live(
    access: &Access,
    domain: Option<(&Project, &Domain)>,
    opts: Options,
) -> Result<LiveRead> {
    cluster::ready()?;
    let name = match domain {
        Some((p, d)) => cluster_name(p, d)?,
        None => None,
    };
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
    let (result, trace) = match access.connect(&choice, opts) {
        Ok(cluster) => {
            let want = domain.map(|(_, d)| d.as_str());
            let object = cluster
                .get_inventory()
                .and_then(|o| whose(o, want, &cluster));
            let server = cluster.target.server.clone();
            (
                object.map(|object| LiveInventory { server, object }),
                cluster.trace(),
            )
        }
        Err(f) => (Err(f), Vec::new()),
    };
    Ok(LiveRead {
        choice: Some(choice),
        result,
        trace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
        path.to_path_buf()
    }

    /// A kubeconfig naming `contexts`, written to a file of its own.
    fn with_contexts(dir: &Path, contexts: &[String]) -> Choice {
        let mut text = String::from(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user: {}\ncontexts:\n",
        );
        for c in contexts {
            text.push_str(&format!(
                "- name: {c}\n  context: {{cluster: c, user: u}}\n"
            ));
        }
        let path = dir.join("kubeconfig.yaml");
        std::fs::write(&path, text).unwrap();
        Choice {
            paths: vec![path],
            origin: "test",
        }
    }

    /// The context recorded with a snapshot, gone from the regenerated file: not the
    /// user's flag (no usage error, no "--context"), what the file names now (a bounded
    /// list), and the way out; the user's own `--context` is still a usage mistake.
    #[test]
    fn a_recorded_context_that_is_gone_is_said_as_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = |choice: &Choice| {
            let access = Access {
                context: Some("offline".into()),
                context_from: ContextFrom::Snapshot {
                    id: "1908fbebd896".into(),
                    hint: "HINT",
                },
                ..Access::default()
            };
            access.resolve(choice).err().unwrap()
        };
        let choice = with_contexts(dir.path(), &["a".into(), "b".into()]);
        let f = recorded(&choice);
        assert!(!f.usage);
        assert_eq!(f.reason, Reason::BadKubeconfig);
        assert_eq!(
            f.detail,
            format!(
                "snapshot 1908fbebd896 was published through context 'offline' of {}, which no longer names it (it names: a, b); HINT",
                choice.paths[0].display()
            )
        );
        let many: Vec<String> = (0..20).map(|i| format!("c{i:02}")).collect();
        let f = recorded(&with_contexts(dir.path(), &many));
        assert!(
            f.detail
                .contains("(it names: c00, c01, c02, c03, c04, c05, c06, c07 and 12 more)"),
            "{}",
            f.detail
        );
        let f = recorded(&with_contexts(dir.path(), &[]));
        assert!(f.detail.contains("(it names no context)"), "{}", f.detail);
        let flag = Access {
            context: Some("offline".into()),
            ..Access::default()
        };
        let f = flag
            .resolve(&with_contexts(dir.path(), &["a".into()]))
            .err()
            .unwrap();
        assert!(f.usage);
        assert!(
            f.detail
                .starts_with("--context offline: no such context in ")
        );
    }

    #[test]
    fn the_kubeconfig_is_chosen_in_lok8s_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let project = Project::at(&root.join("p"));
        let flag = touch(&root.join("flag.yaml"));
        let own = touch(&root.join("p/.kubeconfig/lab.yaml"));
        let env = touch(&root.join("env.yaml"));
        let home = touch(&root.join("home/.kube/config"));
        let missing = root.join("missing.yaml");
        let list = std::env::join_paths([&missing, &env]).unwrap();
        let mut access = Access {
            kubeconfig: Some(flag.clone()),
            context: None,
            context_from: ContextFrom::Flag,
            env_kubeconfig: Some(list),
            home: Some(root.join("home")),
        };
        let chosen = |a: &Access, name: Option<&str>| {
            let c = a.choose(Some(&project), name).unwrap();
            (c.paths, c.origin)
        };
        assert_eq!(chosen(&access, Some("lab")), (vec![flag], "--kubeconfig"));
        access.kubeconfig = None;
        assert_eq!(
            chosen(&access, Some("lab")),
            (vec![own], "project .kubeconfig/")
        );
        // A name that would leave the project is not used.
        assert_eq!(
            chosen(&access, Some("../lab")),
            (vec![env.clone()], "KUBECONFIG")
        );
        assert_eq!(chosen(&access, None), (vec![env], "KUBECONFIG"));
        access.env_kubeconfig = None;
        assert_eq!(chosen(&access, None), (vec![home], "~/.kube/config"));
    }

    #[test]
    fn a_missing_kubeconfig_names_the_path_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.yaml");
        let detail = |a: Access| {
            let f = a.choose(None, None).unwrap_err();
            assert_eq!((f.reason, f.step), (Reason::NoKubeconfig, Step::Connect));
            f.detail
        };
        let flag = Access {
            kubeconfig: Some(missing.clone()),
            ..Access::default()
        };
        assert_eq!(
            detail(flag.clone()),
            format!("kubeconfig not found ({})", missing.display())
        );
        // Named by the user: a mistake (exit 2), not a cluster to queue for.
        assert!(flag.choose(None, None).unwrap_err().usage);
        let env = Access {
            env_kubeconfig: Some(missing.clone().into_os_string()),
            ..Access::default()
        };
        assert!(detail(env).contains("nope.yaml"));
        let home = Access {
            home: Some(dir.path().to_path_buf()),
            ..Access::default()
        };
        assert!(detail(home).ends_with(".kube/config)"));
    }

    #[test]
    fn budgets_are_clamped_and_the_probe_fits_the_deadline() {
        let o = options(2.0, 5.0, true, false);
        assert_eq!(o.probe, Duration::from_secs(2));
        assert_eq!(o.deadline, Duration::from_secs(2));
        assert!(o.force && !o.dry_run);
        assert_eq!(
            options(0.0, 0.0, false, false).probe,
            Duration::from_millis(50)
        );
    }
}
