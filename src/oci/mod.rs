//! Gitless GitOps: a domain's inventory folder (the files `clinv commit` writes) pushed to
//! an OCI registry as the artifact Flux's `OCIRepository` (and Argo CD 3.1+) syncs —
//! Flux's documented air-gap path. [`artifact`] packs it (pure, reproducible),
//! [`reference`] checks `oci://…`, `registry` speaks the distribution API.

pub mod artifact;
pub mod reference;
mod registry;

pub use artifact::{Artifact, LayerType};
pub use reference::Reference;
pub use registry::Pushed;

use crate::error::{OciError, Result};
use crate::util::{env, files};
use std::path::{Path, PathBuf};

/// Largest Docker config or CA file read.
const MAX_FILE: u64 = 4 << 20;

/// How to reach the registry.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// `--plain-http`: a registry without TLS (a lab's loopback registry).
    pub plain_http: bool,
    /// `--ca-file`: PEM certificates trusted instead of the web roots.
    pub ca_file: Option<PathBuf>,
    /// `--creds-env NAME`: a variable holding `user:password` (else the Docker config).
    pub creds_env: Option<String>,
}

/// Parses `text` as an `oci://` reference.
///
/// # Errors
/// [`OciError::Reference`] (exit 2) naming what is wrong.
pub fn parse(text: &str) -> Result<Reference> {
    Reference::parse(text).map_err(|source| {
        OciError::Reference {
            text: text.to_string(),
            source,
        }
        .into()
    })
}

/// Pushes `artifact` to `reference` under its tag and `extra_tags`.
///
/// # Errors
/// Unusable credentials or CA file; the registry cannot be reached or refuses.
pub fn push(
    reference: &Reference,
    artifact: &Artifact,
    extra_tags: &[String],
    access: &Access,
) -> Result<Pushed> {
    let credentials = credentials(&reference.registry, access.creds_env.as_deref())?;
    let ca = access.ca_file.as_deref().map(read_ca).transpose()?;
    let proxy = proxy(&reference.registry, access.plain_http);
    let mut client = registry::Client::new(reference, access.plain_http, ca, credentials, proxy);
    let mut tags = vec![reference.tag.clone()];
    tags.extend(extra_tags.iter().filter(|t| **t != reference.tag).cloned());
    Ok(client.push(artifact, &tags)?)
}

/// Whether the Docker config holds credentials for `registry` (for `--print-flux`).
pub fn has_credentials(registry: &str) -> bool {
    matches!(credentials(registry, None), Ok(Some(_)))
}

/// `user:password` from `--creds-env`, else the Docker config's `auths` entry for the
/// registry (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`); none without
/// either. Credential helpers (`credsStore`) are not run.
fn credentials(registry: &str, creds_env: Option<&str>) -> Result<Option<(String, String)>> {
    if let Some(name) = creds_env {
        let value =
            env::var(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| OciError::Credentials {
                    origin: format!("--creds-env {name}"),
                    message: "the variable is not set".into(),
                })?;
        let (user, password) = value.split_once(':').ok_or_else(|| OciError::Credentials {
            origin: format!("--creds-env {name}"),
            message: "not user:password".into(),
        })?;
        return Ok(Some((user.to_string(), password.to_string())));
    }
    let dir = env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")));
    let Some(path) = dir.map(|d| d.join("config.json")) else {
        return Ok(None);
    };
    docker_auth(&path, registry)
}

/// The `auths.<registry>` entry of a Docker config: `auth` (base64 `user:password`) or
/// `username` and `password`.
fn docker_auth(path: &Path, registry: &str) -> Result<Option<(String, String)>> {
    use base64::Engine as _;
    let bad = |message: &str| OciError::Credentials {
        origin: path.display().to_string(),
        message: message.to_string(),
    };
    let Ok(bytes) = files::read_bounded(path, MAX_FILE) else {
        return Ok(None);
    };
    let config: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| bad("not a JSON document"))?;
    let entry = &config["auths"][registry];
    if let Some(auth) = entry["auth"].as_str() {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .ok_or_else(|| {
                bad(&format!(
                    "auths.{registry}.auth is not base64 of user:password"
                ))
            })?;
        let (u, p) = decoded
            .split_once(':')
            .ok_or_else(|| bad(&format!("auths.{registry}.auth is not user:password")))?;
        return Ok(Some((u.to_string(), p.to_string())));
    }
    match (entry["username"].as_str(), entry["password"].as_str()) {
        (Some(u), Some(p)) => Ok(Some((u.to_string(), p.to_string()))),
        _ => Ok(None),
    }
}

fn read_ca(path: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>> {
    let bad = |message: String| OciError::CaFile {
        path: path.display().to_string(),
        message,
    };
    let bytes = files::read_bounded(path, MAX_FILE).map_err(|e| bad(e.to_string()))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(bad(format!("not a PEM certificate file: {e}")).into()),
        }
    }
    if certs.is_empty() {
        return Err(bad("no PEM certificate in this file".into()).into());
    }
    Ok(certs)
}

/// The proxy of the environment for the registry (`HTTPS_PROXY`, or `HTTP_PROXY` for
/// `--plain-http`; `ALL_PROXY`), none when `NO_PROXY` covers it.
fn proxy(registry: &str, plain_http: bool) -> Option<ureq::Proxy> {
    let get = |k: &str| {
        env::var(k)
            .or_else(|| env::var(&k.to_ascii_lowercase()))
            .filter(|v| !v.trim().is_empty())
    };
    let chosen = if plain_http {
        get("HTTP_PROXY")
    } else {
        get("HTTPS_PROXY")
    }
    .or_else(|| get("ALL_PROXY"))?;
    let (host, port) = match registry.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => {
            (h.to_string(), p.parse().unwrap_or(443))
        }
        _ => (registry.to_string(), if plain_http { 80 } else { 443 }),
    };
    let no_proxy = get("NO_PROXY").unwrap_or_default();
    if crate::util::no_proxy::covers(&no_proxy, &host, port) {
        return None;
    }
    let url = if chosen.contains("://") {
        chosen
    } else {
        format!("http://{chosen}")
    };
    ureq::Proxy::new(&url).ok()
}
