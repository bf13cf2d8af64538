//! Gitless GitOps: a domain's inventory folder pushed to an OCI registry.
//!
//! Gitless GitOps: a domain's inventory folder (the files `clinv commit` writes) pushed to
//! an OCI registry as the artifact Flux's `OCIRepository` (and Argo CD 3.1+) syncs —
//! Flux's documented air-gap path. [`artifact`] packs it (pure, reproducible),
//! [`reference`] checks `oci://…`, `registry` speaks the distribution API.

pub mod artifact;
mod auth;
pub mod pull;
pub mod reference;
mod registry;
pub mod sign;

pub use artifact::{Artifact, LayerType};
pub use reference::Reference;
pub use registry::{Pushed, Signed, Tags};
pub use sign::{PublicKey, SigningKey};

use crate::error::{KeyProblem, OciError, OciReferenceError, PullProblem, Result, Unverified};
use crate::util::url::Url;
use crate::util::{env, files};
use std::path::{Path, PathBuf};

/// Largest Docker config, CA or key file read.
const MAX_FILE: u64 = 4 << 20;
/// Largest signature manifest or payload read (cosign's are a few hundred bytes).
const MAX_SIGNATURE: u64 = 1 << 20;

/// How to reach the registry.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// `--plain-http` (loopback only) or `--insecure`: a registry without TLS.
    pub plain_http: bool,
    /// `--insecure`: plain HTTP to a registry that is not on this machine too.
    pub insecure: bool,
    /// `--ca-file`: PEM certificates trusted instead of the web roots.
    pub ca_file: Option<PathBuf>,
    /// `--creds-env NAME`: a variable holding `user:password` (else the Docker config).
    pub creds_env: Option<String>,
    /// `--token-env NAME`: a variable holding a Bearer token, sent as it is.
    pub token_env: Option<String>,
    /// The end of an attempt that is given up at a time (an owed push's `--timeout`):
    /// every request is bounded by it, so nothing of the attempt goes on after it.
    pub until: Option<std::time::Instant>,
}

/// Parses `text` as an `oci://` reference.
///
/// # Errors
/// [`OciError::Reference`] (exit 2) naming what is wrong.
pub fn parse(text: &str) -> Result<Reference> {
    Reference::parse(text).map_err(|problem| {
        OciError::Reference {
            text: text.to_string(),
            problem,
        }
        .into()
    })
}

/// Parses `text` as the `oci://` reference of a push: a tag, no digest.
///
/// # Errors
/// [`OciError::Reference`] (exit 2) naming what is wrong.
pub fn parse_tag(text: &str) -> Result<Reference> {
    let reference = parse(text)?;
    if reference.digest.is_some() {
        return Err(OciError::Reference {
            text: text.to_string(),
            problem: OciReferenceError::DigestInPush,
        }
        .into());
    }
    Ok(reference)
}

/// An artifact read back from a registry.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The manifest's digest.
    pub digest: String,
    pub annotations: std::collections::BTreeMap<String, String>,
    /// The layer's files: relative slash paths and contents.
    pub files: Vec<(String, String)>,
}

/// A connection to one repository of a registry, for reading.
pub struct Session {
    client: registry::Client,
    reference: Reference,
}

impl Session {
    /// Prepares to read `reference`'s repository (nothing is sent yet).
    ///
    /// # Errors
    /// Unusable credentials or CA file.
    pub fn open(reference: &Reference, access: &Access) -> Result<Session> {
        Ok(Session {
            client: client(reference, access)?,
            reference: reference.clone(),
        })
    }

    /// The repository's tags, signature tags (`sha256-….sig`) left out, and the
    /// entries of its list that are no tag names (counted, not asked for).
    ///
    /// # Errors
    /// The registry cannot be reached or refuses; a list past the bounds.
    pub fn tags(&mut self) -> Result<Tags> {
        let mut tags = self.client.tags()?;
        tags.names.retain(|t| !t.starts_with("sha256-"));
        Ok(tags)
    }

    /// The digest `tag` names now (a `HEAD`, nothing read), `None` when it names nothing.
    ///
    /// # Errors
    /// The registry cannot be reached or refuses.
    pub fn digest(&mut self, tag: &str) -> Result<Option<String>> {
        Ok(self.client.tag_digest(tag)?)
    }

    /// The artifact `manifest` (a tag or digest) names, its signature checked first
    /// against `verify` when given.
    ///
    /// # Errors
    /// The registry cannot be reached or refuses; [`OciError::Unverified`]; an artifact
    /// that is not one content layer of files.
    pub fn pull(&mut self, manifest: &str, verify: Option<&PublicKey>) -> Result<Pulled> {
        let separator = if manifest.starts_with("sha256:") {
            '@'
        } else {
            ':'
        };
        let named = format!("oci://{}{separator}{manifest}", self.reference.name());
        let problem = |problem| OciError::Pull {
            reference: named.clone(),
            problem,
        };
        let bytes = self
            .client
            .manifest(manifest, pull::MAX_MANIFEST)?
            .ok_or_else(|| problem(PullProblem::NotFound))?;
        let digest = artifact::digest(&bytes);
        if manifest.starts_with("sha256:") && manifest != digest {
            let (wanted, found) = (manifest.to_string(), digest);
            return Err(problem(PullProblem::DigestMismatch { wanted, found }).into());
        }
        if let Some(key) = verify {
            self.verify(&digest, key, &named)?;
        }
        let m = pull::manifest(&bytes).map_err(problem)?;
        let layer = self.client.blob(&m.layer, pull::MAX_LAYER)?;
        let files = pull::unpack(&layer).map_err(problem)?;
        Ok(Pulled {
            digest,
            annotations: m.annotations,
            files,
        })
    }

    /// Refuses `digest` unless one signature at its `.sig` tag is `key`'s of it.
    fn verify(&mut self, digest: &str, key: &PublicKey, named: &str) -> Result<()> {
        let layers = self
            .client
            .manifest(&sign::tag(digest), MAX_SIGNATURE)?
            .map(|m| sign::layers(&m))
            .unwrap_or_default();
        let reason = if layers.is_empty() {
            Unverified::Unsigned
        } else {
            for layer in &layers {
                if signs(&mut self.client, layer, key, digest)? {
                    return Ok(());
                }
            }
            Unverified::NotByKey(layers.len())
        };
        Err(OciError::Unverified {
            reference: match named.contains('@') {
                true => named.to_string(),
                false => format!("{named}@{digest}"),
            },
            reason,
        }
        .into())
    }
}

/// Whether a tag may move, given what it names now.
pub type Guard<'a> = dyn Fn(Option<&str>) -> bool + 'a;

/// What a push sends besides the artifact, and what it may take as known.
pub struct Sending<'a> {
    /// Tags besides the reference's.
    pub extra_tags: &'a [String],
    /// Signed by this key (after the artifact, so a signature never names a missing
    /// manifest).
    pub signer: Option<&'a SigningKey>,
    /// The manifest digest the store says was pushed to this repository last (see
    /// `registry::Client::push`): fewer questions to the registry.
    pub last_push: Option<&'a str>,
    /// A move of the reference's own tag happens only if this still says yes, asked with
    /// what the tag names just before it is written (after every other tag): the move
    /// of a tag that Flux and Argo CD follow is conditional on what it held.
    pub guard: Option<&'a Guard<'a>>,
}

/// Pushes `artifact` to `reference` under its tag and `sending`'s extra tags.
///
/// # Errors
/// Unusable credentials or CA file; the registry cannot be reached or refuses.
pub fn push(
    reference: &Reference,
    artifact: &Artifact,
    access: &Access,
    sending: &Sending<'_>,
) -> Result<Pushed> {
    let mut client = client(reference, access)?;
    let mut tags = match sending.guard {
        Some(_) => Vec::new(),
        None => vec![reference.tag.clone()],
    };
    let extra = sending.extra_tags.iter();
    tags.extend(extra.filter(|t| **t != reference.tag).cloned());
    let mut pushed = client.push(artifact, &tags, sending.last_push)?;
    if let Some(guard) = sending.guard {
        guarded_move(&mut client, reference, artifact, guard, &mut pushed)?;
    }
    let signer = sending.signer;
    if let Some(key) = signer {
        pushed.signed = Some(attach_signature(
            &mut client,
            reference,
            &artifact.digest,
            key,
        )?);
    }
    Ok(pushed)
}

/// Moves the reference's tag to `artifact` if `guard` still says yes with what the tag
/// names now (a registry has no conditional write: the check is the last request before
/// the write).
fn guarded_move(
    client: &mut registry::Client,
    reference: &Reference,
    artifact: &Artifact,
    guard: &Guard<'_>,
    pushed: &mut Pushed,
) -> Result<()> {
    let now = client.tag_digest(&reference.tag)?;
    if now.as_deref() == Some(artifact.digest.as_str()) {
        return Ok(());
    }
    if !guard(now.as_deref()) {
        return Err(OciError::TagChanged {
            reference: format!("{}:{}", reference.url(), reference.tag),
            now,
        }
        .into());
    }
    client.put_manifest(&reference.tag, &artifact.manifest)?;
    pushed.tagged.insert(0, reference.tag.clone());
    Ok(())
}

/// Reads a private key for `--sign` (cosign's encrypted key with the password in
/// `COSIGN_PASSWORD`, as cosign reads it).
///
/// # Errors
/// [`OciError::Key`] naming the file and what it holds instead.
pub fn signing_key(path: &Path) -> Result<SigningKey> {
    let pem = read_key(path)?;
    let password = env::var("COSIGN_PASSWORD");
    SigningKey::from_pem(&pem, password.as_deref()).map_err(|problem| key_error(path, problem))
}

/// Reads a public key for `--verify`.
///
/// # Errors
/// [`OciError::Key`] naming the file and what it holds instead.
pub fn public_key(path: &Path) -> Result<PublicKey> {
    let pem = read_key(path)?;
    PublicKey::from_pem(&pem).map_err(|problem| key_error(path, problem))
}

fn read_key(path: &Path) -> Result<Vec<u8>> {
    files::read_bounded(path, MAX_FILE).map_err(|_| key_error(path, KeyProblem::Unreadable))
}

fn key_error(path: &Path, problem: KeyProblem) -> crate::Error {
    OciError::Key {
        path: path.display().to_string(),
        problem,
    }
    .into()
}

fn client(reference: &Reference, access: &Access) -> Result<registry::Client> {
    if access.plain_http && !access.insecure && !loopback(&reference.registry) {
        return Err(OciError::PlainHttpOffHost {
            registry: reference.registry.clone(),
        }
        .into());
    }
    let ca = access.ca_file.as_deref().map(read_ca).transpose()?;
    let proxy = proxy(&reference.registry, access.plain_http);
    let (credentials, token) = match &access.token_env {
        Some(name) => (None, Some(auth::token(name)?)),
        None => {
            let creds = auth::credentials(
                &reference.registry,
                access.creds_env.as_deref(),
                access.until,
            )?;
            (creds, None)
        }
    };
    let mut client = registry::Client::new(reference, access.plain_http, ca, credentials, proxy);
    if let Some(token) = token {
        client.bearer(&token);
    }
    if let Some(at) = access.until {
        client.until(at);
    }
    Ok(client)
}

/// Adds `key`'s signature of `digest` to its `.sig` manifest (keeping the signatures
/// already there, as cosign does), unless one by `key` is there already: a re-push of
/// the same artifact with the same key writes nothing.
fn attach_signature(
    client: &mut registry::Client,
    reference: &Reference,
    digest: &str,
    key: &SigningKey,
) -> Result<Signed> {
    let tag = sign::tag(digest);
    let existing = client
        .manifest(&tag, MAX_SIGNATURE)?
        .map(|m| sign::layers(&m))
        .unwrap_or_default();
    let public = key.public();
    for layer in &existing {
        if signs(client, layer, &public, digest)? {
            return Ok(Signed::Present);
        }
    }
    let payload = artifact::Blob::new(
        sign::SIMPLE_SIGNING,
        sign::payload(&reference.name(), digest),
    );
    let signature = key.sign(&payload.bytes).map_err(|problem| OciError::Key {
        path: "--sign".into(),
        problem,
    })?;
    client.ensure_blob(&payload)?;
    let mut layers = existing;
    layers.push(sign::Layer {
        digest: payload.digest.clone(),
        size: payload.bytes.len() as u64,
        signature,
        annotations: serde_json::Map::new(),
    });
    let (config, manifest) = sign::manifest(&layers);
    client.ensure_blob(&config)?;
    client.put_manifest(&tag, &manifest)?;
    Ok(Signed::Added)
}

/// Whether `layer` is a valid signature by `public` vouching for `digest`.
fn signs(
    client: &mut registry::Client,
    layer: &sign::Layer,
    public: &PublicKey,
    digest: &str,
) -> Result<bool> {
    if layer.size > MAX_SIGNATURE || layer.signature.is_empty() {
        return Ok(false);
    }
    let payload = client.blob(&layer.digest, MAX_SIGNATURE)?;
    Ok(public.verifies(&payload, &layer.signature)
        && sign::claimed_digest(&payload).as_deref() == Some(digest))
}

/// Whether the Docker config gives credentials for `registry` (for `--print-flux`).
pub fn has_credentials(registry: &str) -> bool {
    matches!(auth::credentials(registry, None, None), Ok(Some(_)))
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

/// Whether `registry` (`host[:port]`) is this machine: `localhost`, or a loopback
/// IPv4 or IPv6 address.
fn loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.rsplit_once(':').map_or(registry, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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
    let scheme = if plain_http { "http" } else { "https" };
    let registry = Url::parse(&format!("{scheme}://{registry}")).ok()?;
    let no_proxy = get("NO_PROXY").unwrap_or_default();
    if crate::util::no_proxy::covers(&no_proxy, &registry.host(), registry.port_or_default()) {
        return None;
    }
    let proxy = Url::parse_or_http(&chosen).ok()?;
    ureq::Proxy::new(proxy.with_credentials()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries_are_this_machine_only() {
        for on in [
            "127.0.0.1:5000",
            "127.8.0.1",
            "localhost:5000",
            "[::1]:5000",
        ] {
            assert!(loopback(on), "{on}");
        }
        for off in [
            "registry.example:5000",
            "10.0.0.1:5000",
            "[2001:db8::1]:5000",
            "localhost.example",
        ] {
            assert!(!loopback(off), "{off}");
        }
    }
}
