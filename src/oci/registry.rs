//! The distribution API a push needs, over clinv's own TLS stack (rustls): a blob that
//! is there is not sent again (`HEAD`), a missing one is uploaded in one request (`POST`
//! then `PUT ?digest=`), and a tag already naming the manifest is not written again — a
//! re-push of identical content uploads nothing and creates no manifest. What the store
//! knows of the repository (its last push there) spares the questions whose answers it
//! already has, and the tags are written side by side. Authentication
//! is the registry's challenge: `Basic`, or `Bearer` with a token from the realm it names
//! (Harbor, Zot, distribution with token auth), the credentials offered to it only.
//! Credentials never reach a message.

use super::artifact::{Artifact, Blob, MANIFEST};
use super::reference::Reference;
use crate::error::{Cause, OciError};
use crate::util::redact;
use base64::Engine as _;
use std::time::Duration;

/// Largest answer read from a registry (an error document, a token).
const MAX_ANSWER: u64 = 1 << 20;

/// How to reach a registry (a clone shares the connection pool and the answered
/// challenge, and opens a connection of its own when it sends while the other does).
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
    reference: Reference,
    credentials: Option<(String, String)>,
    /// `Authorization` once a challenge was answered (or a token was given).
    auth: Option<String>,
    /// The token came from `--token-env`: a refusal is the token's.
    token_given: bool,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// Blobs sent (0 when the registry had them all).
    pub uploaded: usize,
    /// Tags written (a tag already naming the manifest is not written again).
    pub tagged: Vec<String>,
    /// With `--sign`: whether a signature was added or this key's was already there.
    pub signed: Option<Signed>,
}

/// What `--sign` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signed {
    /// A signature by the key was added to the artifact's `.sig` manifest.
    Added,
    /// The `.sig` manifest already held a valid signature by the key: nothing written.
    Present,
}

impl Client {
    /// A client for `reference`'s registry: `https://` unless `plain_http`, trusting
    /// `ca` (PEM certificates) instead of the web roots when given.
    pub fn new(
        reference: &Reference,
        plain_http: bool,
        ca: Option<Vec<ureq::tls::Certificate<'static>>>,
        credentials: Option<(String, String)>,
        proxy: Option<ureq::Proxy>,
    ) -> Client {
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(certs) = &ca {
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(certs));
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(5)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_global(Some(Duration::from_secs(300)))
            .user_agent(concat!("clinv/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build())
            .proxy(proxy)
            .build()
            .into();
        let scheme = if plain_http { "http" } else { "https" };
        Client {
            agent,
            base: format!(
                "{scheme}://{}/v2/{}",
                reference.registry, reference.repository
            ),
            reference: reference.clone(),
            credentials,
            auth: None,
            token_given: false,
        }
    }

    /// Sends `token` as the Bearer token from the first request on (`--token-env`): the
    /// registry's challenge is not asked for, and a 401 is the token's refusal.
    pub fn bearer(&mut self, token: &str) {
        self.auth = Some(format!("Bearer {token}"));
        self.token_given = true;
    }

    /// Sends the blobs the registry lacks, then the manifest under each of `tags` that
    /// does not name it already. `last_push` is the manifest the store says this client
    /// pushed to the repository last: the repository then has the config (the same for
    /// every artifact), which is not asked about, and when that manifest is another one
    /// the layer is taken as new and sent without asking. A registry that lacks the
    /// config after all refuses the manifest (`MANIFEST_BLOB_UNKNOWN`): then it is sent,
    /// and the manifest again.
    ///
    /// # Errors
    /// The registry cannot be reached, refuses the credentials or a request.
    pub fn push(
        &mut self,
        artifact: &Artifact,
        tags: &[String],
        last_push: Option<&str>,
    ) -> Result<Pushed, OciError> {
        let mut uploaded = if last_push.is_some_and(|d| d != artifact.digest) {
            self.upload(&artifact.layer)?;
            1
        } else {
            usize::from(self.ensure_blob(&artifact.layer)?)
        };
        let config_checked = last_push.is_none();
        if config_checked {
            uploaded += usize::from(self.ensure_blob(&artifact.config)?);
        }
        // A blob the repository lacked means no manifest in it names this one (a registry
        // takes a manifest only once the blobs it names are there), so no tag can: the
        // tags are written without asking first — two requests fewer per changed push.
        let mut tagged = Vec::new();
        for tag in tags {
            if uploaded > 0 || self.tag_digest(tag)?.as_deref() != Some(artifact.digest.as_str()) {
                tagged.push(tag.clone());
            }
        }
        let refused = self.put_manifests(&tagged, &artifact.manifest, !config_checked)?;
        if !refused.is_empty() {
            uploaded += usize::from(self.ensure_blob(&artifact.config)?);
            for tag in &refused {
                self.put_manifest(tag, &artifact.manifest)?;
            }
        }
        Ok(Pushed {
            uploaded,
            tagged,
            signed: None,
        })
    }

    /// Uploads `blob` unless the registry has it; whether it was sent.
    pub fn ensure_blob(&mut self, blob: &Blob) -> Result<bool, OciError> {
        if self.has_blob(&blob.digest)? {
            return Ok(false);
        }
        self.upload(blob)?;
        Ok(true)
    }

    /// The manifest a tag or digest names (read up to `limit` bytes), `None` when it
    /// names nothing.
    pub fn manifest(&mut self, reference: &str, limit: u64) -> Result<Option<Vec<u8>>, OciError> {
        let url = format!("{}/manifests/{reference}", self.base);
        let mut response = self.send("GET", &url, &[("Accept", MANIFEST)], None, "manifest")?;
        match response.status().as_u16() {
            200 => self.read(&mut response, limit, "manifest").map(Some),
            404 => Ok(None),
            _ => Err(self.refused("manifest", response)),
        }
    }

    /// A blob's bytes (at most `limit`), refused unless they hash to `digest`.
    pub fn blob(&mut self, digest: &str, limit: u64) -> Result<Vec<u8>, OciError> {
        let url = format!("{}/blobs/{digest}", self.base);
        let mut response = self.send("GET", &url, &[], None, "blob")?;
        if response.status().as_u16() != 200 {
            return Err(self.refused("blob", response));
        }
        let bytes = self.read(&mut response, limit, "blob")?;
        if super::artifact::digest(&bytes) != digest {
            return Err(
                self.unreachable(&format!("blob {digest}: the bytes do not match the digest"))
            );
        }
        Ok(bytes)
    }

    /// Every tag of the repository, following the registry's `Link` pages.
    pub fn tags(&mut self) -> Result<Vec<String>, OciError> {
        let origin_end = self.base.find("/v2/").unwrap_or(self.base.len());
        let mut url = format!("{}/tags/list?n=1000", self.base);
        let mut tags = Vec::new();
        loop {
            let mut response = self.send("GET", &url, &[], None, "tag list")?;
            match response.status().as_u16() {
                200 => {}
                404 => return Ok(tags),
                _ => return Err(self.refused("tag list", response)),
            }
            let next = header(&response, "link")
                .and_then(|l| l.split_once('<'))
                .and_then(|(_, r)| r.split_once('>'))
                .map(|(path, _)| path.to_string());
            let body = self.read(&mut response, MAX_ANSWER, "tag list")?;
            let doc: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| self.unreachable(&format!("tag list: {e}")))?;
            let page = doc["tags"].as_array().into_iter().flatten();
            tags.extend(page.filter_map(|t| t.as_str().map(str::to_string)));
            match next {
                Some(path) if path.starts_with('/') => {
                    url = format!("{}{path}", &self.base[..origin_end]);
                }
                _ => return Ok(tags),
            }
        }
    }

    fn read(
        &self,
        response: &mut http::Response<ureq::Body>,
        limit: u64,
        what: &str,
    ) -> Result<Vec<u8>, OciError> {
        response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| self.unreachable(&format!("{what}: {e}")))
    }

    fn has_blob(&mut self, digest: &str) -> Result<bool, OciError> {
        let url = format!("{}/blobs/{digest}", self.base);
        let response = self.send("HEAD", &url, &[], None, "blob check")?;
        match response.status().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            _ => Err(self.refused("blob check", response)),
        }
    }

    fn upload(&mut self, blob: &Blob) -> Result<(), OciError> {
        let url = format!("{}/blobs/uploads/", self.base);
        let response = self.send("POST", &url, &[], Some(&[]), "blob upload")?;
        if response.status().as_u16() != 202 {
            return Err(self.refused("blob upload", response));
        }
        let location = header(&response, "location")
            .unwrap_or_default()
            .to_string();
        let location = self.absolute(&location);
        let separator = if location.contains('?') { '&' } else { '?' };
        let put = format!("{location}{separator}digest={}", blob.digest);
        let headers = [("Content-Type", "application/octet-stream")];
        let response = self.send("PUT", &put, &headers, Some(&blob.bytes), "blob upload")?;
        match response.status().as_u16() {
            201 | 204 => Ok(()),
            _ => Err(self.refused("blob upload", response)),
        }
    }

    /// The digest `tag` names now, `None` when it names nothing.
    pub fn tag_digest(&mut self, tag: &str) -> Result<Option<String>, OciError> {
        let url = format!("{}/manifests/{tag}", self.base);
        let response = self.send("HEAD", &url, &[("Accept", MANIFEST)], None, "tag check")?;
        match response.status().as_u16() {
            200 => Ok(header(&response, "docker-content-digest").map(str::to_string)),
            404 => Ok(None),
            _ => Err(self.refused("tag check", response)),
        }
    }

    /// Puts the manifest under each of `tags` at once, each tag but the first through a
    /// clone (its own connection): the registry's time per request — it checks the
    /// password every time — is then spent side by side. The tags refused for a blob the
    /// registry lacks, when `blob_unknown_is_answer`.
    fn put_manifests(
        &mut self,
        tags: &[String],
        manifest: &[u8],
        blob_unknown_is_answer: bool,
    ) -> Result<Vec<String>, OciError> {
        let Some((first, rest)) = tags.split_first() else {
            return Ok(Vec::new());
        };
        let (first_taken, others) = std::thread::scope(|scope| {
            let others: Vec<_> = rest
                .iter()
                .map(|tag| {
                    let mut client = self.clone();
                    scope.spawn(move || client.try_manifest(tag, manifest, blob_unknown_is_answer))
                })
                .collect();
            let first_taken = self.try_manifest(first, manifest, blob_unknown_is_answer);
            let others: Vec<_> = others.into_iter().map(|h| h.join()).collect();
            (first_taken, others)
        });
        let mut refused = Vec::new();
        let taken = std::iter::once(first_taken).chain(others.into_iter().map(|joined| {
            joined.unwrap_or_else(|_| Err(self.unreachable("manifest: the sending thread failed")))
        }));
        for (tag, taken) in tags.iter().zip(taken) {
            if !taken? {
                refused.push(tag.clone());
            }
        }
        Ok(refused)
    }

    pub fn put_manifest(&mut self, tag: &str, manifest: &[u8]) -> Result<(), OciError> {
        self.try_manifest(tag, manifest, false).map(|_| ())
    }

    /// Puts the manifest under `tag`; `false` when `blob_unknown_is_answer` and the
    /// registry refused it for a blob it lacks.
    fn try_manifest(
        &mut self,
        tag: &str,
        manifest: &[u8],
        blob_unknown_is_answer: bool,
    ) -> Result<bool, OciError> {
        let url = format!("{}/manifests/{tag}", self.base);
        let headers = [("Content-Type", MANIFEST)];
        let response = self.send("PUT", &url, &headers, Some(manifest), "manifest")?;
        match response.status().as_u16() {
            201 | 200 => Ok(true),
            _ => {
                let (code, refused) = self.refusal("manifest", response);
                let blob_unknown = matches!(
                    code.as_deref(),
                    Some("MANIFEST_BLOB_UNKNOWN" | "BLOB_UNKNOWN")
                );
                if blob_unknown && blob_unknown_is_answer {
                    Ok(false)
                } else {
                    Err(refused)
                }
            }
        }
    }

    /// A `Location` the registry gave, made absolute.
    fn absolute(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            return location.to_string();
        }
        let origin_end = self.base.find("/v2/").unwrap_or(self.base.len());
        format!("{}{location}", &self.base[..origin_end])
    }

    /// One request, answering the registry's challenge once (a 401 with
    /// `WWW-Authenticate`) and sending again.
    fn send(
        &mut self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        what: &str,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let response = self.once(method, url, headers, body)?;
        if response.status().as_u16() != 401 || self.auth.is_some() {
            return self.checked_auth(response, what);
        }
        let challenge = header(&response, "www-authenticate")
            .unwrap_or_default()
            .to_string();
        self.auth = Some(self.answer(&challenge, what)?);
        let response = self.once(method, url, headers, body)?;
        self.checked_auth(response, what)
    }

    fn checked_auth(
        &self,
        response: http::Response<ureq::Body>,
        what: &str,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let status = response.status().as_u16();
        let anonymous = self.credentials.is_none() && !self.token_given;
        if status == 401 || (status == 403 && anonymous) {
            return Err(OciError::Auth {
                registry: self.reference.registry.clone(),
                what: what.to_string(),
                status,
                hint: if self.token_given {
                    ": the token from --token-env was refused"
                } else if self.credentials.is_some() {
                    ": the credentials were refused"
                } else {
                    ": no credentials for this registry (docker login, or --creds-env NAME holding user:password)"
                },
            });
        }
        Ok(response)
    }

    fn once(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let mut request = http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(a) = &self.auth {
            request = request.header("Authorization", a);
        }
        let sent = match body {
            Some(bytes) => request.body(bytes).map(|r| self.agent.run(r)),
            None => request.body(()).map(|r| self.agent.run(r)),
        };
        sent.map_err(|e| self.unreachable(&e.to_string()))?
            .map_err(|e| self.unreachable(&e.to_string()))
    }

    /// The `Authorization` a challenge asks for: `Basic` with the credentials, or a
    /// `Bearer` token fetched from the realm it names (with the credentials, if any).
    fn answer(&self, challenge: &str, what: &str) -> Result<String, OciError> {
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        let denied = |status| OciError::Auth {
            registry: self.reference.registry.clone(),
            what: what.to_string(),
            status,
            hint: ": no credentials for this registry (docker login, or --creds-env NAME holding user:password)",
        };
        let basic = self.credentials.as_ref().map(|(u, p)| {
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
            format!("Basic {token}")
        });
        if scheme.eq_ignore_ascii_case("basic") {
            return basic.ok_or_else(|| denied(401));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(denied(401));
        }
        let param = |name: &str| challenge_param(params, name);
        let realm = param("realm").ok_or_else(|| denied(401))?;
        let mut url = format!(
            "{realm}?scope=repository:{}:pull,push",
            self.reference.repository
        );
        if let Some(service) = param("service") {
            url.push_str(&format!("&service={service}"));
        }
        let mut request = self.agent.get(&url);
        if let Some(b) = &basic {
            request = request.header("Authorization", b);
        }
        let mut response = request
            .call()
            .map_err(|e| self.unreachable(&e.to_string()))?;
        if response.status().as_u16() != 200 {
            return Err(denied(response.status().as_u16()));
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string()
            .map_err(|e| self.unreachable(&format!("token: {e}")))?;
        let body: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| self.unreachable(&format!("token: {e}")))?;
        let token = body["token"].as_str().or(body["access_token"].as_str());
        token
            .map(|t| format!("Bearer {t}"))
            .ok_or_else(|| self.unreachable("token: the realm's answer holds no token"))
    }

    fn unreachable(&self, message: &str) -> OciError {
        OciError::Unreachable {
            registry: self.reference.registry.clone(),
            cause: Cause(redact::detail(message)),
        }
    }

    /// The registry's refusal, with its own error code and message when it gave them.
    fn refused(&self, what: &str, response: http::Response<ureq::Body>) -> OciError {
        self.refusal(what, response).1
    }

    /// [`Client::refused`], and the registry's error code (`MANIFEST_BLOB_UNKNOWN`, …).
    fn refusal(
        &self,
        what: &str,
        mut response: http::Response<ureq::Body>,
    ) -> (Option<String>, OciError) {
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string()
            .unwrap_or_default();
        let doc = serde_json::from_str::<serde_json::Value>(&text).ok();
        let first = doc.as_ref().map(|v| &v["errors"][0]);
        let code = first.and_then(|e| e["code"].as_str()).map(str::to_string);
        let message = match (&code, first.and_then(|e| e["message"].as_str())) {
            (Some(code), Some(message)) => format!("{code} {message}"),
            _ => text.lines().next().unwrap_or("").to_string(),
        };
        let refused = OciError::Refused {
            registry: self.reference.registry.clone(),
            what: what.to_string(),
            status,
            message: redact::detail(&message),
        };
        (code, refused)
    }
}

/// `name="value"` (or unquoted) from a challenge's parameters.
fn challenge_param(params: &str, name: &str) -> Option<String> {
    let mut rest = params;
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim().trim_start_matches(',').trim();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"')?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value.to_string());
        }
        rest = next.trim_start_matches(',');
    }
    None
}

/// A response header's value, when it is present and text.
fn header<'r>(response: &'r http::Response<ureq::Body>, name: &str) -> Option<&'r str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters_quoted_or_not() {
        let p = r#"realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#;
        assert_eq!(
            challenge_param(p, "realm").as_deref(),
            Some("https://auth.example/token")
        );
        assert_eq!(
            challenge_param(p, "service").as_deref(),
            Some("registry.example")
        );
        assert_eq!(
            challenge_param(p, "scope").as_deref(),
            Some("repository:a/b:pull")
        );
        assert_eq!(
            challenge_param("realm=x,service=y", "service").as_deref(),
            Some("y")
        );
        assert_eq!(challenge_param(p, "missing"), None);
    }
}
