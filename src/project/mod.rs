//! The lok8s project on disk: finding its root, resolving the active domain, and the
//! paths of the files the inventory reads (spec §1).

pub mod addons;
pub mod bootstrap;
pub mod select;
pub mod spec;
pub mod typos;
pub mod view;

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::util::files;
use crate::yaml::Doc;
use std::path::{Path, PathBuf};

/// Largest cluster spec, chart pin or value file clinv reads. Real ones are a few KiB.
pub const MAX_INPUT_BYTES: u64 = 8 << 20;

pub use crate::domain::{DEFAULT as DEFAULT_DOMAIN, is_valid as is_valid_domain};

/// A lok8s project root.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
}

/// What a domain directory holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainKind {
    /// `cluster.lok8s.yaml` exists: this domain has an inventory.
    Cluster { spec: PathBuf },
    /// Only `deploy.lok8s.yaml`: no inventory of its own; `cluster_ref` names the cluster.
    Deploy {
        file: PathBuf,
        cluster_ref: Option<String>,
    },
    /// Neither file.
    Missing { spec: PathBuf },
}

impl Project {
    /// Uses `explicit` (`--root`) when given, else the nearest ancestor of `cwd` that
    /// holds `.lok8s/` or `clusters/`.
    ///
    /// # Errors
    /// `--root` is not a directory, or no project is found.
    pub fn discover(explicit: Option<&Path>, cwd: &Path) -> Result<Project> {
        if let Some(root) = explicit {
            if !root.is_dir() {
                return Err(Error::RootNotFound(root.to_path_buf()));
            }
            return Ok(Project::at(root));
        }
        cwd.ancestors()
            .find(|dir| dir.join(".lok8s").is_dir() || dir.join("clusters").is_dir())
            .map(Project::at)
            .ok_or_else(|| Error::NoProject(cwd.to_path_buf()))
    }

    /// A project rooted at `root` (no checks).
    pub fn at(root: &Path) -> Project {
        // lok8s builds "absolute" target paths by string concatenation onto the root, so
        // keep the root free of a trailing separator.
        let text = root.to_string_lossy();
        let trimmed = text.trim_end_matches('/');
        let root = if trimmed.is_empty() {
            PathBuf::from("/")
        } else {
            PathBuf::from(trimmed)
        };
        Project { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/.lok8s/addons`.
    pub fn addons_dir(&self) -> PathBuf {
        self.root.join(".lok8s").join("addons")
    }

    /// `<root>/clusters/<domain>`.
    pub fn domain_dir(&self, domain: &Domain) -> PathBuf {
        self.root.join("clusters").join(domain)
    }

    /// `<root>/.kubeconfig/<name>.yaml`, where lok8s writes a cluster's kubeconfig;
    /// `None` when the spec's `metadata.name` is not a plain file name (`../../x`, `a/b`),
    /// which would point the kubeconfig outside the project.
    pub fn kubeconfig_path(&self, cluster_name: &str) -> Option<PathBuf> {
        let plain = !cluster_name.is_empty()
            && !cluster_name.starts_with('.')
            && !cluster_name.contains(['/', '\\', '\0']);
        plain.then(|| {
            self.root
                .join(".kubeconfig")
                .join(format!("{cluster_name}.yaml"))
        })
    }

    pub(crate) fn active_domain(&self, notices: &mut Vec<String>) -> Option<Domain> {
        let path = self.root.join("clusters").join(".active");
        let bytes = files::read_bounded(&path, 4096).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let name = text.trim_end_matches(['\n', '\r']);
        if name.is_empty() {
            return None;
        }
        if let Some(domain) = Domain::new(name) {
            Some(domain)
        } else {
            notices.push("warning: invalid domain in clusters/.active, ignoring".to_string());
            None
        }
    }

    /// The domains of the project, sorted: each `clusters/<d>/` with a valid name that
    /// holds a cluster or a deploy spec.
    pub fn domains(&self) -> Vec<Domain> {
        let mut out: Vec<Domain> = std::fs::read_dir(self.root.join("clusters"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(Domain::new))
            .filter(|d| !matches!(self.domain_kind(d), DomainKind::Missing { .. }))
            .collect();
        out.sort();
        out
    }

    /// Classifies a (valid) domain directory (spec §1 rule 3).
    pub fn domain_kind(&self, domain: &Domain) -> DomainKind {
        let dir = self.domain_dir(domain);
        let spec = dir.join("cluster.lok8s.yaml");
        if spec.is_file() {
            return DomainKind::Cluster { spec };
        }
        let file = dir.join("deploy.lok8s.yaml");
        if file.is_file() {
            let cluster_ref = files::read_bounded(&file, MAX_INPUT_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|text| {
                    let doc = Doc::parse(&text).ok()?;
                    let node = doc.path(doc.root()?, &["spec", "clusterRef", "domain"])?;
                    doc.text(node)
                        .filter(|t| !doc.is_null(node) && !t.is_empty())
                        .map(str::to_string)
                });
            return DomainKind::Deploy { file, cluster_ref };
        }
        DomainKind::Missing { spec }
    }

    /// `lok8sVersion`: `.lok8s/VERSION`, whitespace-trimmed, or `dev` when absent.
    ///
    /// # Errors
    /// The file exists but cannot be read or is not UTF-8.
    pub fn lok8s_version(&self) -> Result<String> {
        let path = self.root.join(".lok8s").join("VERSION");
        match files::read_bounded(&path, 4096) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(|s| s.trim().to_string())
                .map_err(|_| Error::InvalidFile {
                    path,
                    message: "not valid UTF-8".into(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok("dev".to_string()),
            Err(e) => Err(Error::io(path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn domain_rule_is_the_traversal_guard() {
        for ok in ["inv", "inv.dev", "good.example", "a_b-c", "9x"] {
            assert!(is_valid_domain(ok), "{ok}");
        }
        for bad in [
            "../etc",
            "/abs",
            "foo/../bar",
            "a/b",
            ".hidden",
            "",
            "-x",
            "a b",
            "é",
        ] {
            assert!(!is_valid_domain(bad), "{bad}");
        }
    }

    fn project_with_active(active: Option<&str>) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("clusters")).unwrap();
        if let Some(a) = active {
            fs::write(dir.path().join("clusters/.active"), a).unwrap();
        }
        let p = Project::at(dir.path());
        (dir, p)
    }

    /// lok8s's order through the one selection rule (every domain exists here).
    fn resolve(
        p: &Project,
        flag: Option<&str>,
        env: Option<&str>,
    ) -> Result<(String, Vec<String>)> {
        for d in ["act.dev", "flag.dev", "env.dev", DEFAULT_DOMAIN] {
            fs::create_dir_all(p.root().join("clusters").join(d)).unwrap();
            fs::write(
                p.root().join("clusters").join(d).join("cluster.lok8s.yaml"),
                "",
            )
            .unwrap();
        }
        let known = select::Known {
            project: Some(p),
            store: None,
        };
        let mut notes = Vec::new();
        let selected = select::select(known, flag, env, &mut notes)?;
        Ok((selected.domain.to_string(), notes))
    }

    #[test]
    fn domain_precedence_flag_env_active_default() {
        let (_d, p) = project_with_active(Some("act.dev\n\n"));
        assert_eq!(
            resolve(&p, Some("flag.dev"), Some("env.dev")).unwrap().0,
            "flag.dev"
        );
        let (d, notes) = resolve(&p, None, Some("env.dev")).unwrap();
        assert_eq!(d, "env.dev");
        assert_eq!(
            notes,
            [
                "notice: using DOMAIN_NAME=env.dev (env); the active domain is 'act.dev' — pass --domain or unset DOMAIN_NAME to switch"
            ]
        );
        assert_eq!(
            resolve(&p, None, Some("act.dev")).unwrap(),
            ("act.dev".into(), vec![])
        );
        assert_eq!(resolve(&p, None, None).unwrap(), ("act.dev".into(), vec![]));
        assert_eq!(resolve(&p, None, Some("")).unwrap().0, "act.dev");
        let (_d, p) = project_with_active(None);
        assert_eq!(resolve(&p, None, None).unwrap().0, "lok8s.dev");
    }

    #[test]
    fn invalid_active_domain_is_ignored_with_lok8s_warning() {
        let (_d, p) = project_with_active(Some("../etc\n"));
        let (d, notes) = resolve(&p, None, None).unwrap();
        assert_eq!(d, "lok8s.dev");
        assert_eq!(
            notes,
            ["warning: invalid domain in clusters/.active, ignoring"]
        );
    }

    #[test]
    fn invalid_explicit_domains_are_errors() {
        let (_d, p) = project_with_active(None);
        assert!(matches!(
            resolve(&p, Some("../x"), None),
            Err(Error::InvalidDomain(_))
        ));
        assert!(matches!(
            resolve(&p, None, Some("a/b")),
            Err(Error::InvalidDomain(_))
        ));
    }

    #[test]
    fn discovery_walks_up_to_the_nearest_project() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".lok8s")).unwrap();
        fs::create_dir_all(dir.path().join("deep/er")).unwrap();
        let p = Project::discover(None, &dir.path().join("deep/er")).unwrap();
        assert_eq!(p.root(), dir.path());
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            Project::discover(None, empty.path()),
            Err(Error::NoProject(_))
        ));
        let missing = dir.path().join("nope");
        assert!(matches!(
            Project::discover(Some(&missing), dir.path()),
            Err(Error::RootNotFound(_))
        ));
    }

    #[test]
    fn cluster_wins_over_deploy_and_deploy_names_its_cluster() {
        let (d, p) = project_with_active(None);
        let dep = d.path().join("clusters/apps");
        fs::create_dir_all(&dep).unwrap();
        fs::write(
            dep.join("deploy.lok8s.yaml"),
            "kind: Deploy\nspec:\n  clusterRef:\n    domain: prod\n",
        )
        .unwrap();
        assert!(
            matches!(p.domain_kind(&crate::domain::d("apps")), DomainKind::Deploy { cluster_ref: Some(r), .. } if r == "prod")
        );
        fs::write(dep.join("cluster.lok8s.yaml"), "kind: Lo\n").unwrap();
        assert!(matches!(
            p.domain_kind(&crate::domain::d("apps")),
            DomainKind::Cluster { .. }
        ));
        fs::create_dir_all(d.path().join("clusters/dir/cluster.lok8s.yaml")).unwrap();
        assert!(matches!(
            p.domain_kind(&crate::domain::d("dir")),
            DomainKind::Missing { .. }
        ));
    }
}
