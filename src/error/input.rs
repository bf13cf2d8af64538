//! What is wrong with what the user gave: a domain, a flag's value, a reference, an
//! inventory file.

use std::path::PathBuf;

/// Why no usable domain was selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// Nothing selected a domain: no flag, environment, active domain or default.
    #[error("no domain selected: {why}\n{} — pass --domain D", known_line(.known))]
    NoneSelected {
        why: &'static str,
        known: Vec<String>,
    },

    /// The selected domain is neither in the project nor in the store.
    #[error("{}\n{}", .place.head(.domain, .origin), self.hint())]
    Unknown {
        domain: String,
        place: UnknownIn,
        /// What selected it, when it was not `--domain`.
        origin: Option<&'static str>,
        suggestion: Option<String>,
        known: Vec<String>,
    },

    /// A `--domain` glob that matches none of the domains known where it was looked for.
    #[error("--domain '{pattern}' matches no domain {}\n{}", .place.among(), self.hint())]
    NoMatch {
        pattern: String,
        place: UnknownIn,
        suggestion: Option<String>,
        known: Vec<String>,
    },

    /// `render` of a deploy domain: its cluster's domain carries the inventory.
    #[error("'{domain}' is a deploy domain: it has no inventory of its own{}", deploy_tail(.cluster_ref.as_deref()))]
    DeployOnly {
        domain: String,
        cluster_ref: Option<String>,
    },
}

/// Where an unknown domain was looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownIn {
    /// A project command: the spec that is missing.
    Project {
        spec: PathBuf,
    },
    /// A command that reads the store (and the project, when there is one).
    Store {
        store: PathBuf,
        project: bool,
    },
    Nowhere,
}

impl UnknownIn {
    /// Where a glob was matched, as the message says it.
    fn among(&self) -> String {
        match self {
            UnknownIn::Project { .. } => "of the project".to_string(),
            UnknownIn::Store { store, .. } => format!("in the store {}", store.display()),
            UnknownIn::Nowhere => "known here".to_string(),
        }
    }

    fn head(&self, domain: &str, origin: &Option<&'static str>) -> String {
        let mut head = match self {
            // A project command: lok8s's own message first.
            UnknownIn::Project { spec } => {
                format!("inventory: cluster spec not found: {}", spec.display())
            }
            UnknownIn::Store { store, project } => format!(
                "unknown domain '{domain}': no snapshots of it in {}{}",
                store.display(),
                if *project {
                    format!(" and no clusters/{domain}/ in the project")
                } else {
                    String::new()
                }
            ),
            UnknownIn::Nowhere => format!("unknown domain '{domain}'"),
        };
        if let Some(origin) = origin {
            head.push_str(&format!(" (selected by {origin})"));
        }
        head
    }
}

impl DomainError {
    /// The second line of an unknown domain's message: "did you mean" and the known
    /// domains (`addons` shows it under lok8s's own warning).
    pub fn hint(&self) -> String {
        match self {
            DomainError::Unknown {
                suggestion, known, ..
            }
            | DomainError::NoMatch {
                suggestion, known, ..
            } => {
                let mean = suggestion
                    .as_ref()
                    .map(|best| format!("did you mean '{best}'? "))
                    .unwrap_or_default();
                format!("{mean}{}", known_line(known))
            }
            DomainError::NoneSelected { known, .. } => known_line(known),
            DomainError::DeployOnly { .. } => String::new(),
        }
    }
}

fn known_line(all: &[String]) -> String {
    if all.is_empty() {
        "no domain is known here (no clusters/<domain>/ in a project, no snapshots in the store)"
            .to_string()
    } else if all.len() <= KNOWN_LISTED {
        format!("known domains: {}", all.join(", "))
    } else {
        // A fleet of a thousand is counted, not printed on one line.
        format!(
            "{} known domains: {}, … and {} more",
            all.len(),
            all[..KNOWN_LISTED].join(", "),
            all.len() - KNOWN_LISTED
        )
    }
}

/// Known domains an error lists by name; more are counted.
const KNOWN_LISTED: usize = 10;

fn deploy_tail(cluster_ref: Option<&str>) -> String {
    match cluster_ref {
        Some(r) => format!("; its cluster '{r}' carries the inventory (clinv render --domain {r})"),
        None => " (its deploy.lok8s.yaml names no spec.clusterRef.domain)".to_string(),
    }
}

/// A malformed value of a flag that the library parses: exit 2, as clap's own errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    #[error("--annotation '{0}': expected KEY=VALUE")]
    Annotation(String),
    #[error(
        "push: no lok8s project found to render the inventory from; pass --snapshot ID to push a snapshot of the store, or --root"
    )]
    NothingToPush,
    #[error("--path '{path}': {why}")]
    Path { path: String, why: &'static str },
    #[error("--branch '{0}' is not a valid branch name")]
    Branch(String),
    #[error("--author '{0}': expected \"Name <email>\"")]
    AuthorForm(String),
    #[error("--author: {0}")]
    Author(String),
    #[error("--repo-url '{0}': expected a repository URL")]
    RepoUrl(String),
    #[error(
        "{flag}: the repository has no remote '{remote}' to take its URL from; pass --repo-url URL (the URL Flux / Argo CD clone from)"
    )]
    NoRemote { flag: &'static str, remote: String },
    #[error(
        "'{0}' is not a date (YYYY-MM-DD), an RFC 3339 time, today, yesterday or a time ago (30m, 12h, 2d, 1w)"
    )]
    Time(String),
    #[error("'{text}' is not a version (SemVer with or without v; 1.20 means 1.20.0)")]
    Version { text: String },
    #[error("--ignore '{text}': {why}")]
    Ignore { text: String, why: String },
    /// `--addon NAME` that no domain read has (a typo must not read as "nobody runs it").
    #[error("--addon '{name}': no domain of the {from} has an addon of that name{mean}")]
    Addon {
        name: String,
        from: &'static str,
        /// ` — did you mean 'x'?`, or empty.
        mean: String,
    },
    #[error("--token-env {name}: the remote {url} is not https://")]
    TokenNotHttps { name: String, url: String },
    #[error("--token-env {0}: the environment variable is not set or empty")]
    TokenUnset(String),
    /// `--metrics-addr` that names no address to listen on.
    #[error(
        "--metrics-addr '{text}': expected HOST:PORT (127.0.0.1:9464, [::1]:9464, localhost:9464): {why}"
    )]
    ListenAddress { text: String, why: String },
    #[error(
        "{flag} '{value}' with --all must contain {{domain}}: one destination for every domain would write each domain's ClusterInventory (a singleton) over the others"
    )]
    NoDomainPlaceholder { flag: &'static str, value: String },
    #[error(
        "--message: {0} names one domain's value; with several domains the template takes only {{domain}} (the changed domains) and {{summary}}"
    )]
    FleetTemplate(String),
    /// A URL the one URL reader refuses (`url` redacted; `why` never quotes credentials).
    #[error("{flag} {url}: {why}")]
    BadUrl {
        flag: &'static str,
        url: String,
        why: crate::util::url::UrlError,
    },
    #[error("--index: only https:// URLs or file paths are accepted (got {0})")]
    IndexUrl(String),
    /// An explicit `--kubeconfig` that does not exist or a `--context` it does not name
    /// (kubectl refuses these rather than falling back): `scope` is the domain or
    /// `inventory` (publish's word).
    #[error("{scope}: {detail}")]
    Kubeconfig { scope: String, detail: String },
    /// `fleet --against`: a domain on both sides would be compared with itself.
    #[error(
        "--against: {count} domain{} on both sides of the comparison ({domains}); choose selections that share no domain (without --domain, --against compares with the rest of the fleet)",
        if *.count == 1 { " is" } else { "s are" }
    )]
    SidesOverlap { count: usize, domains: String },
    /// `fleet --against`: a side with no inventory to compare (only deploy domains, or
    /// domains that could not be read).
    #[error("{side}: no domain of this side has an inventory to compare ({why})")]
    EmptySide { side: String, why: String },
}

/// A reference (`clinv diff A B`, `--snapshot`) that is malformed or names nothing that
/// can be read here.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// Syntax: exit 2.
    #[error("invalid reference '{text}': {why}")]
    Malformed { text: String, why: String },
    /// A malformed snapshot id or selector: exit 2.
    #[error("bad snapshot reference '{text}' ({why})")]
    BadSnapshot { text: String, why: String },
    #[error("'-' (stdin) can be used only once")]
    StdinTwice,
    #[error("'{0}' is a git reference: pass --repo DIR")]
    NeedsRepo(String),
    #[error("'{0}': give the path (git:REV:PATH) or a project")]
    NeedsPath(String),
    #[error(
        "'{0}' names a snapshot, but there is no snapshot store here: pass --snapshots DIR (or --root of a lok8s project)"
    )]
    NoStore(String),
    /// A `git:` reference that cannot be read from the repository.
    #[error("'{text}'")]
    Git {
        text: String,
        #[source]
        source: super::GitError,
    },
    #[error("cluster: this command cannot read a cluster")]
    ClusterNotHere,
    /// The cluster could not be reached (reason and detail of the failure).
    #[error("cluster: {0}")]
    ClusterUnreachable(String),
    #[error("cluster: the live ClusterInventory is not readable")]
    ClusterUnreadable(#[source] InventoryError),
    #[error("cluster: the cluster has no ClusterInventory 'cluster'")]
    ClusterMissing,
    #[error("cluster: cannot read the ClusterInventory: {0}")]
    ClusterFailed(String),
}

impl ReferenceError {
    /// Syntax errors are usage errors (exit 2); the rest name something absent (1).
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            ReferenceError::Malformed { .. }
                | ReferenceError::BadSnapshot { .. }
                | ReferenceError::StdinTwice
                | ReferenceError::NeedsRepo(_)
                | ReferenceError::NeedsPath(_)
        )
    }
}

/// Why a text is not one readable ClusterInventory.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error("empty file: expected a ClusterInventory object")]
    Empty,
    #[error("invalid JSON")]
    Json(#[source] serde_json::Error),
    #[error("invalid YAML")]
    Yaml(#[source] crate::yaml::YamlError),
    #[error("no Kubernetes object found: expected a ClusterInventory")]
    NoObject,
    #[error("no ClusterInventory object (found kind {})", .0.join(", "))]
    OtherKinds(Vec<String>),
    #[error("{0} ClusterInventory objects; expected exactly one")]
    Several(usize),
    /// A field of the wrong type or value, or missing; `field` is its path.
    #[error("{field}: {problem}")]
    Field { field: String, problem: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fleet of a thousand domains is not listed on one line: the count, the first
    /// few, how many more (issue 40 item 8); a short list is listed whole.
    #[test]
    fn a_long_list_of_known_domains_is_counted_not_printed() {
        let few: Vec<String> = ["a.dev", "b.dev"].map(String::from).to_vec();
        assert_eq!(known_line(&few), "known domains: a.dev, b.dev");
        let many: Vec<String> = (0..1000).map(|i| format!("site-{i:04}.example")).collect();
        let line = known_line(&many);
        assert!(line.len() < 300, "{} characters: {line}", line.len());
        assert!(
            line.starts_with("1000 known domains: site-0000.example, "),
            "{line}"
        );
        assert!(line.ends_with(" and 990 more"), "{line}");
    }
}
