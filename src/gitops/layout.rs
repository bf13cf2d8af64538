//! The layout around the synced folder.
//!
//! The names of the objects that sync it, the Flux and Argo CD manifests `--print-flux` /
//! `--print-argo` print, and the `flux bootstrap` tree that may already apply it.
//!
//! Names: `clusterinventory-<domain>` when that is already a DNS-1123 subdomain of at most
//! 63 characters (a Flux label value: kustomize-controller labels every object with the
//! Kustomization's name); otherwise a readable, lower-cased prefix cut to fit plus eight hex
//! digits of the SHA-256 of the domain, so two domains never share a name.

use crate::util::join_path;
use sha2::{Digest, Sha256};

/// The prefix of every generated name.
pub const NAME_PREFIX: &str = "clusterinventory";

/// Label values (and so Flux Kustomization names) hold at most 63 characters.
pub const MAX_NAME: usize = 63;

/// The name of the objects (Kustomization, GitRepository, Application) that sync `domain`.
pub fn object_name(domain: &str) -> String {
    let readable = readable(domain);
    let plain = format!("{NAME_PREFIX}-{readable}");
    if readable == domain && is_dns1123(&plain) {
        return plain;
    }
    let hash = Sha256::digest(domain.as_bytes());
    let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mut head: String = plain.chars().take(MAX_NAME - 1 - hex.len()).collect();
    while head.ends_with(['-', '.']) {
        head.pop();
    }
    format!("{head}-{hex}")
}

/// `domain` lower-cased, with every character outside `[a-z0-9.-]` turned into `-` and
/// each dot-separated part trimmed of `-` (empty parts dropped).
fn readable(domain: &str) -> String {
    let mapped: String = domain
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '.') => c,
            _ => '-',
        })
        .collect();
    mapped
        .split('.')
        .map(|p| p.trim_matches('-'))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// True when `name` is a DNS-1123 subdomain (Kubernetes object names) that is also a
/// valid label value: at most 63 characters.
pub fn is_dns1123(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

/// Where the Flux Kustomization gets the repository from.
pub enum FluxSource<'a> {
    /// A `flux bootstrap` GitRepository in the cluster (name, namespace).
    Bootstrap { name: &'a str, namespace: &'a str },
    /// No bootstrap: a GitRepository of its own, printed with the Kustomization.
    Own {
        /// As source-controller takes it (an `ssh://` URL for SSH: see `Repo::flux_url`).
        url: &'a str,
        branch: &'a str,
        access: &'a Access,
    },
}

/// What source-controller needs to clone the repository: a Secret named like the
/// GitRepository (`spec.secretRef`) unless it is open to anyone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// A local path or a repository clinv reaches without credentials.
    Open,
    /// SSH: a private key and the server's host key (`identity`, `known_hosts`).
    Ssh,
    /// HTTPS with credentials (`username`, `password`), and the CA file the repository
    /// trusts (`ca.crt`) when it is not the system's.
    Basic { ca: Option<String> },
}

impl Access {
    /// How to create the Secret (`kubectl`, placeholders for every credential), or why
    /// none is printed.
    pub fn advice(&self, name: &str, url: &str) -> Option<String> {
        let create = format!("kubectl -n flux-system create secret generic {name}");
        match self {
            Access::Ssh => Some(format!(
                "source-controller clones {url} over SSH with the Secret flux-system/{name} (spec.secretRef); create it first: {create} --from-file=identity=<private key file> --from-file=known_hosts=<known_hosts holding the server's host key>"
            )),
            Access::Basic { ca } => Some(format!(
                "source-controller clones {url} with the Secret flux-system/{name} (spec.secretRef); create it first: {create} --from-literal=username=<user> --from-literal=password=<token>{}",
                ca.as_deref()
                    .map(|f| format!(" --from-file=ca.crt={f}"))
                    .unwrap_or_default()
            )),
            Access::Open if url.starts_with("file://") || url.starts_with('/') => None,
            Access::Open => Some(format!(
                "no credentials are configured for {url}: the GitRepository has no spec.secretRef; if the repository is private, add one (see `flux create secret git`)"
            )),
        }
    }
}

impl Access {
    /// What Argo CD needs to clone `url` for the Application (or ApplicationSet) `name`:
    /// a repository Secret in `argocd` named `name` (label
    /// `argocd.argoproj.io/secret-type=repository`, `type`, `url` and the credentials), and a
    /// private CA in `argocd-tls-certs-cm` under the server's host name — the repo-server
    /// trusts no CA from the Secret. `kubectl` commands with placeholders for every
    /// credential, or why none is printed.
    pub fn argo_advice(&self, name: &str, url: &str) -> Vec<String> {
        let create = format!(
            "kubectl -n argocd create secret generic {name} --from-literal=type=git --from-literal=url={url}"
        );
        let label = format!(
            "kubectl -n argocd label secret {name} argocd.argoproj.io/secret-type=repository"
        );
        let secret = |how: &str, keys: &str| {
            format!(
                "Argo CD clones {url}{how} with the repository Secret argocd/{name} (label argocd.argoproj.io/secret-type=repository); create it first: {create} {keys} && {label}"
            )
        };
        match self {
            Access::Ssh => vec![
                secret(
                    " over SSH",
                    "--from-file=sshPrivateKey=<private key file>",
                ),
                "Argo CD checks the server's host key against the ConfigMap argocd/argocd-ssh-known-hosts-cm: add it with `argocd cert add-ssh --batch --from <known_hosts holding it>`"
                    .to_string(),
            ],
            Access::Basic { ca } => {
                let mut advice = vec![secret(
                    "",
                    "--from-literal=username=<user> --from-literal=password=<token>",
                )];
                if let (Some(file), Some(host)) = (ca, url_host(url)) {
                    advice.push(format!(
                        "Argo CD's repo-server trusts a private CA only from the ConfigMap argocd/argocd-tls-certs-cm, under the server's host name; add {file} with `argocd cert add-tls {host} --from {file}` or: kubectl -n argocd create configmap argocd-tls-certs-cm --from-file={host}={file} --dry-run=client -o yaml | kubectl apply --server-side --field-manager=clinv -f -"
                    ));
                }
                advice
            }
            Access::Open if url.starts_with("file://") || url.starts_with('/') => Vec::new(),
            Access::Open => vec![format!(
                "no credentials are configured for {url}: if the repository is private, Argo CD needs a repository Secret in argocd (see `argocd repo add`)"
            )],
        }
    }
}

/// How Argo CD's repo-server reaches a registry (for [`argo_oci_advice`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ArgoRegistry<'a> {
    /// Credentials are configured for the registry (username and password to give Argo CD).
    pub credentials: bool,
    /// A private CA (`--ca-file`).
    pub ca_file: Option<&'a str>,
    /// A registry without TLS.
    pub plain_http: bool,
}

/// `push --print-argo`: what Argo CD needs to pull `url`.
///
/// `push --print-argo`: what Argo CD needs to pull `url` (`oci://host/repo`) — Argo CD
/// v3's repository Secret `name` of `type: oci` (its `url` the Application's `repoURL`;
/// `username`/`password`; `insecureOCIForceHttp` for a registry without TLS), and a private
/// CA in the ConfigMap argocd-tls-certs-cm under the registry's host name (where the
/// repo-server looks an OCI registry's CA up, as a Git server's).
pub fn argo_oci_advice(name: &str, url: &str, access: ArgoRegistry<'_>) -> Vec<String> {
    let mut keys = String::new();
    if access.credentials {
        keys.push_str(" --from-literal=username=<user> --from-literal=password=<password>");
    }
    if access.plain_http {
        keys.push_str(" --from-literal=insecureOCIForceHttp=true");
    }
    let mut advice = Vec::new();
    if keys.is_empty() {
        advice.push(format!(
            "no credentials are configured for {url}: if the repository is private, Argo CD needs a repository Secret of type oci in argocd (see `argocd repo add {url} --type oci`)"
        ));
    } else {
        advice.push(format!(
            "Argo CD pulls {url} with the repository Secret argocd/{name} (type oci, label argocd.argoproj.io/secret-type=repository); create it first: kubectl -n argocd create secret generic {name} --from-literal=type=oci --from-literal=url={url}{keys} && kubectl -n argocd label secret {name} argocd.argoproj.io/secret-type=repository"
        ));
    }
    if let (Some(file), Some(host)) = (access.ca_file, url_host(url)) {
        advice.push(format!(
            "Argo CD's repo-server trusts a private CA only from the ConfigMap argocd/argocd-tls-certs-cm, under the registry's host name; add {file} with `argocd cert add-tls {host} --from {file}` or: kubectl -n argocd create configmap argocd-tls-certs-cm --from-file={host}={file} --dry-run=client -o yaml | kubectl apply --server-side --field-manager=clinv -f -"
        ));
    }
    advice
}

/// The host name of `url` (`scheme://[user@]host[:port]/…`) without its port: the key
/// Argo CD looks a server's CA up by. `None` for an IPv6 literal (not a ConfigMap key).
fn url_host(url: &str) -> Option<String> {
    let url = crate::util::url::Url::parse(url).ok()?;
    (!url.is_ipv6()).then(|| url.host())
}

/// The Flux manifests that sync `path`: a GitRepository (with [`FluxSource::Own`]) and a
/// Kustomization.
///
/// Its `retryInterval` is 1m: a first apply can fail while the API server does not serve
/// the just-created CRD yet ("no matches for kind"), and without it Flux retries only after
/// the 10m `interval`.
pub fn flux(domain: &str, path: &str, source: &FluxSource<'_>) -> String {
    let name = object_name(domain);
    let (repository, source_name, source_namespace) = match source {
        FluxSource::Bootstrap { name, namespace } => (String::new(), *name, *namespace),
        FluxSource::Own {
            url,
            branch,
            access,
        } => (
            format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 5m\n  url: {}\n  ref:\n    branch: {}\n{}---\n",
                quote(url),
                quote(branch),
                match access {
                    Access::Open => String::new(),
                    Access::Ssh | Access::Basic { .. } =>
                        format!("  secretRef:\n    name: {name}\n"),
                }
            ),
            name.as_str(),
            "flux-system",
        ),
    };
    format!(
        "{repository}apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  retryInterval: 1m\n  path: {}\n  prune: true\n  wait: true\n  sourceRef:\n    kind: GitRepository\n    name: {source_name}\n    namespace: {source_namespace}\n",
        quote(&format!("./{path}"))
    )
}

/// How source-controller reaches a registry (for [`flux_oci`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegistryAccess {
    /// A `kubernetes.io/dockerconfigjson` Secret named like the OCIRepository.
    pub credentials: bool,
    /// A Secret `<name>-ca` holding `ca.crt` (`spec.certSecretRef`).
    pub ca: bool,
    /// A registry without TLS (`spec.insecure`).
    pub insecure: bool,
    /// Signed with cosign: `spec.verify` with a Secret `<name>-cosign` holding the public
    /// key.
    pub verify: bool,
}

/// The Flux manifests that sync an artifact pushed by `clinv push`: an `OCIRepository`
/// following `tag` of `url` (`oci://host/repo`) and a Kustomization of its root (with the
/// `retryInterval` of [`flux`]).
pub fn flux_oci(domain: &str, url: &str, tag: &str, access: RegistryAccess) -> String {
    let name = object_name(domain);
    let mut source = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 5m\n  url: {}\n  ref:\n    tag: {}\n",
        quote(url),
        quote(tag)
    );
    if access.credentials {
        source.push_str(&format!("  secretRef:\n    name: {name}\n"));
    }
    if access.ca {
        source.push_str(&format!("  certSecretRef:\n    name: {name}-ca\n"));
    }
    if access.insecure {
        source.push_str("  insecure: true\n");
    }
    if access.verify {
        source.push_str(&format!(
            "  verify:\n    provider: cosign\n    secretRef:\n      name: {name}-cosign\n"
        ));
    }
    format!(
        "{source}---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  retryInterval: 1m\n  path: ./\n  prune: true\n  wait: true\n  sourceRef:\n    kind: OCIRepository\n    name: {name}\n    namespace: flux-system\n"
    )
}

/// Where an Argo CD Application sends the objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// `destination.server` (the in-cluster server by default).
    Server(String),
    /// `destination.name`: a cluster registered in Argo CD.
    Name(String),
}

impl Destination {
    fn yaml(&self, indent: &str) -> String {
        match self {
            Destination::Server(s) => format!("{indent}server: {}\n", quote(s)),
            Destination::Name(n) => format!("{indent}name: {}\n", quote(n)),
        }
    }
}

/// The in-cluster server Argo CD uses when it runs in the target cluster.
pub const IN_CLUSTER: &str = "https://kubernetes.default.svc";

const SYNC_POLICY: &str = "syncPolicy:\n  automated:\n    prune: true\n    selfHeal: true\n  syncOptions:\n    - ServerSideApply=true\n";

/// The Argo CD Application that syncs `path` on `branch` of `url` into `destination`.
pub fn argo(
    domain: &str,
    path: &str,
    branch: &str,
    url: &str,
    destination: &Destination,
) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {}\n    targetRevision: {}\n    path: {}\n  destination:\n{}{}",
        object_name(domain),
        quote(url),
        quote(branch),
        quote(path),
        destination.yaml("    "),
        indent(SYNC_POLICY, "  "),
    )
}

/// One domain of an ApplicationSet.
pub struct Element {
    pub domain: String,
    pub path: String,
    pub destination: Destination,
}

/// The Argo CD ApplicationSet with one Application per domain (a list generator; each
/// element carries the generated name, the folder and the destination).
pub fn argo_set(url: &str, branch: &str, elements: &[Element]) -> String {
    let by_name = elements
        .iter()
        .all(|e| matches!(e.destination, Destination::Name(_)));
    let mut list = String::new();
    for e in elements {
        let target = match &e.destination {
            Destination::Server(s) | Destination::Name(s) => s,
        };
        list.push_str(&format!(
            "        - domain: {}\n          name: {}\n          path: {}\n          destination: {}\n",
            quote(&e.domain),
            object_name(&e.domain),
            quote(&e.path),
            quote(target)
        ));
    }
    let destination = if by_name {
        "        name: '{{destination}}'\n"
    } else {
        "        server: '{{destination}}'\n"
    };
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: {NAME_PREFIX}\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements:\n{list}  template:\n    metadata:\n      name: '{{{{name}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: {}\n        targetRevision: {}\n        path: '{{{{path}}}}'\n      destination:\n{destination}{}",
        quote(url),
        quote(branch),
        indent(SYNC_POLICY, "      "),
    )
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

/// A YAML scalar: plain when it cannot be misread, else single-quoted.
fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+~".contains(c))
        && !value.starts_with(['-', '.', ':', '@', '~'])
        // `a:` would read as a mapping; nothing else in this alphabet can misparse.
        && !value.ends_with(':')
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "''"))
    }
}

/// The `flux bootstrap` Kustomization that already applies a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    /// The `gotk-sync.yaml` it was read from.
    pub file: String,
    pub name: String,
    pub namespace: String,
    /// Its GitRepository (`spec.sourceRef.name`).
    pub source: String,
}

/// The Kustomizations a `gotk-sync.yaml` declares, with their `spec.path`.
pub fn read_sync(file: &str, text: &str) -> Vec<(Bootstrap, String)> {
    let mut out = Vec::new();
    for doc in crate::yaml::Doc::documents(text) {
        let Ok(doc) = doc else { break };
        let Some(v) = doc.root().map(|r| doc.to_value(r)) else {
            continue;
        };
        if v["kind"].as_str() != Some("Kustomization")
            || !v["apiVersion"]
                .as_str()
                .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
        {
            continue;
        }
        let s = |v: &serde_json::Value, default: &str| v.as_str().unwrap_or(default).to_string();
        out.push((
            Bootstrap {
                file: file.to_string(),
                name: s(&v["metadata"]["name"], "flux-system"),
                namespace: s(&v["metadata"]["namespace"], "flux-system"),
                source: s(&v["spec"]["sourceRef"]["name"], "flux-system"),
            },
            s(&v["spec"]["path"], "./"),
        ));
    }
    out
}

/// The kustomization file names kustomize recognises (it refuses a folder with two).
pub const KUSTOMIZATION_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// True when a Flux Kustomization over `spec_path` applies the folder `target` (which holds
/// its own kustomization).
///
/// kustomize-controller generates a kustomization for a path without one that takes in
/// every subfolder (a subfolder with a kustomization as a whole), so every folder between
/// the two must either have no kustomization file or list the next step down in its
/// `resources`. `read(dir)` gives the kustomization file in `dir`.
pub fn covers(spec_path: &str, target: &str, read: &dyn Fn(&str) -> Option<String>) -> bool {
    let root = normalize(spec_path);
    let target = normalize(target);
    let rest = if root.is_empty() {
        target.as_str()
    } else if target == root {
        ""
    } else if let Some(r) = target.strip_prefix(&format!("{root}/")) {
        r
    } else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    let mut dir = root;
    let mut i = 0;
    while i < parts.len() {
        if let Some(text) = read(&dir) {
            // Listed resources that lead to the target: the longest one wins.
            let remaining = parts[i..].join("/");
            let step = resources(&text)
                .into_iter()
                .map(|r| normalize(&r))
                .filter(|r| remaining == *r || remaining.starts_with(&format!("{r}/")))
                .map(|r| r.split('/').count())
                .max();
            let Some(step) = step else {
                return false;
            };
            for p in &parts[i..i + step] {
                dir = join_path(&dir, '/', p);
            }
            i += step;
        } else {
            dir = join_path(&dir, '/', parts[i]);
            i += 1;
        }
    }
    true
}

/// A `/`-separated relative path without `./`, `.` parts or a trailing `/`.
fn normalize(path: &str) -> String {
    path.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn resources(kustomization: &str) -> Vec<String> {
    let Some(v) = crate::yaml::Doc::parse(kustomization)
        .ok()
        .and_then(|doc| Some(doc.to_value(doc.root()?)))
    else {
        return Vec::new();
    };
    ["resources", "bases", "components"]
        .iter()
        .filter_map(|k| v[*k].as_array())
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn argo_looks_a_private_ca_up_by_the_host_name_without_port() {
        assert_eq!(
            url_host("https://127.0.0.1:8443/inv.git").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            url_host("https://bot:p%40ss@git.acme.example/org/inv.git").as_deref(),
            Some("git.acme.example")
        );
        assert_eq!(url_host("https://[::1]:8443/inv.git"), None);
        assert_eq!(url_host("/srv/inv.git"), None);
    }

    #[test]
    fn argo_advice_names_the_repository_secret_and_the_ca() {
        let url = "https://git.acme.example/inv.git";
        let ca = Access::Basic {
            ca: Some("/etc/ca.pem".into()),
        };
        let advice = ca.argo_advice("clusterinventory-a", url);
        assert_eq!(advice.len(), 2, "{advice:?}");
        assert!(advice[0].contains(
            "kubectl -n argocd create secret generic clusterinventory-a --from-literal=type=git --from-literal=url=https://git.acme.example/inv.git --from-literal=username=<user> --from-literal=password=<token> && kubectl -n argocd label secret clusterinventory-a argocd.argoproj.io/secret-type=repository"
        ));
        assert!(advice[1].contains("--from-file=git.acme.example=/etc/ca.pem"));
        let plain = Access::Basic { ca: None }.argo_advice("n", url);
        assert_eq!(plain.len(), 1);
        assert_eq!(Access::Ssh.argo_advice("n", "git@h:r.git").len(), 2);
        assert!(Access::Open.argo_advice("n", "file:///r").is_empty());
        assert_eq!(Access::Open.argo_advice("n", url).len(), 1);
    }

    #[test]
    fn argo_oci_advice_names_the_oci_repository_secret_and_the_ca() {
        let url = "oci://registry.acme.example:5000/inventories/prod";
        let access = ArgoRegistry {
            credentials: true,
            ca_file: Some("/etc/ca.pem"),
            plain_http: false,
        };
        let advice = argo_oci_advice("clusterinventory-a", url, access);
        assert_eq!(advice.len(), 2, "{advice:?}");
        assert!(advice[0].contains(
            "kubectl -n argocd create secret generic clusterinventory-a --from-literal=type=oci --from-literal=url=oci://registry.acme.example:5000/inventories/prod --from-literal=username=<user> --from-literal=password=<password> && kubectl -n argocd label secret clusterinventory-a argocd.argoproj.io/secret-type=repository"
        ));
        assert!(advice[1].contains("--from-file=registry.acme.example=/etc/ca.pem"));
        let plain = ArgoRegistry {
            plain_http: true,
            ..ArgoRegistry::default()
        };
        let advice = argo_oci_advice("n", url, plain);
        assert_eq!(advice.len(), 1, "{advice:?}");
        assert!(advice[0].ends_with(
            "--from-literal=insecureOCIForceHttp=true && kubectl -n argocd label secret n argocd.argoproj.io/secret-type=repository"
        ));
        let open = argo_oci_advice("n", url, ArgoRegistry::default());
        assert!(open[0].starts_with("no credentials"), "{open:?}");
    }

    #[test]
    fn ordinary_domains_keep_their_readable_name() {
        assert_eq!(
            object_name("prod.acme.example"),
            "clusterinventory-prod.acme.example"
        );
        assert_eq!(object_name("lok8s.dev"), "clusterinventory-lok8s.dev");
    }

    #[test]
    fn edge_domains_get_valid_distinct_names() {
        let long = format!("{}.example", "a".repeat(60));
        let long2 = format!("{}.example", "a".repeat(61));
        let edges = [
            "",
            "Prod.Example",
            "prod.example",
            "prod_example",
            "prod-example",
            "a_",
            "a-",
            "a.",
            "a..b",
            "a.-b",
            "a.b-",
            "A",
            "0",
            "x_y.Z_W",
            &"x".repeat(46),
            &"x".repeat(47),
            &"x".repeat(200),
            &long,
            &long2,
            &format!("{}-.b", "a".repeat(44)),
            &format!("{}.-b", "a".repeat(44)),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for d in edges {
            let n = object_name(d);
            assert!(is_dns1123(&n), "{d} → {n}");
            assert!(n.starts_with("clusterinventory-"), "{d} → {n}");
            assert!(seen.insert(n.clone()), "{d} → {n} is not distinct");
        }
        // 46 characters still fit as they are; 47 need the hash.
        assert_eq!(object_name(&"x".repeat(46)).len(), 63);
        assert!(!object_name(&"x".repeat(47)).contains(&"x".repeat(47)));
        // Upper case and `_` are readable in the prefix.
        assert!(object_name("Prod.Example").starts_with("clusterinventory-prod.example-"));
        assert!(object_name("prod_example").starts_with("clusterinventory-prod-example-"));
    }

    #[test]
    fn printed_manifests_carry_valid_names() {
        for d in ["Prod_Lab.Example", &"d".repeat(80)] {
            let own = FluxSource::Own {
                url: "ssh://git@git.example/team/gitops.git",
                branch: "main",
                access: &Access::Ssh,
            };
            let text = flux(d, "clusters/x/inventory", &own);
            let docs: Vec<serde_json::Value> = crate::yaml::Doc::documents(&text)
                .map(|doc| {
                    let doc = doc.unwrap();
                    doc.to_value(doc.root().unwrap())
                })
                .collect();
            assert_eq!(docs.len(), 2);
            assert_eq!(docs[0]["kind"], "GitRepository");
            assert_eq!(
                docs[0]["spec"]["url"],
                "ssh://git@git.example/team/gitops.git"
            );
            for doc in &docs {
                assert!(is_dns1123(doc["metadata"]["name"].as_str().unwrap()));
            }
            assert_eq!(
                docs[1]["spec"]["sourceRef"]["name"],
                docs[0]["metadata"]["name"]
            );
            let app = crate::yaml::Doc::parse(&argo(
                d,
                "p",
                "main",
                "https://git.example/x.git",
                &Destination::Name("prod".into()),
            ))
            .unwrap();
            let app = app.to_value(app.root().unwrap());
            assert!(is_dns1123(app["metadata"]["name"].as_str().unwrap()));
            assert_eq!(app["spec"]["destination"]["name"], "prod");
        }
    }

    #[test]
    fn bootstrap_coverage() {
        let none = |_: &str| None;
        assert!(covers("./clusters/prod", "clusters/prod/inventory", &none));
        assert!(covers("./", "clusters/prod/inventory", &none));
        assert!(covers("", "inv", &none));
        assert!(!covers(
            "./clusters/prod",
            "clusters/prod2/inventory",
            &none
        ));
        assert!(!covers("./clusters/prod", "inventory/prod", &none));
        // A kustomization at the bootstrap path decides what is taken in.
        let listed = |dir: &str| {
            (dir == "clusters/prod")
                .then(|| "resources:\n  - flux-system\n  - ./inventory/\n".to_string())
        };
        assert!(covers(
            "./clusters/prod",
            "clusters/prod/inventory",
            &listed
        ));
        let unlisted = |dir: &str| {
            (dir == "clusters/prod").then(|| "resources:\n  - flux-system\n".to_string())
        };
        assert!(!covers(
            "./clusters/prod",
            "clusters/prod/inventory",
            &unlisted
        ));
        let deeper = |dir: &str| match dir {
            "" => Some("resources: [clusters/prod]\n".to_string()),
            "clusters/prod" => Some("resources: [apps]\n".to_string()),
            _ => None,
        };
        assert!(covers(".", "clusters/prod/apps/inventory", &deeper));
        assert!(!covers(".", "clusters/prod/inventory", &deeper));
    }

    #[test]
    fn gotk_sync_is_read() {
        let text = "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  path: ./clusters/prod\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n";
        let found = read_sync("clusters/prod/flux-system/gotk-sync.yaml", text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "./clusters/prod");
        assert_eq!(found[0].0.name, "flux-system");
    }

    proptest! {
        #[test]
        fn any_domain_gives_a_valid_name(d in "[a-zA-Z0-9][a-zA-Z0-9._-]{0,300}") {
            let n = object_name(&d);
            prop_assert!(is_dns1123(&n), "{} → {}", d, n);
        }

        #[test]
        fn any_string_gives_a_valid_name(d in "\\PC{0,100}") {
            prop_assert!(is_dns1123(&object_name(&d)));
        }

        #[test]
        fn distinct_domains_give_distinct_names(a in "[a-zA-Z0-9][a-zA-Z0-9._-]{0,80}", b in "[a-zA-Z0-9][a-zA-Z0-9._-]{0,80}") {
            prop_assume!(a != b);
            prop_assert_ne!(object_name(&a), object_name(&b));
        }
    }
}
