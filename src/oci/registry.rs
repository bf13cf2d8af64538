//! The distribution API a push needs, over clinv's own TLS stack (rustls): a blob that
//! is there is not sent again (`HEAD`), a missing one is uploaded in one request (`POST`
//! then `PUT ?digest=`), and a tag already naming the manifest is not written again — a
//! re-push of identical content uploads nothing and creates no manifest. What the store
//! knows of the repository (its last push there) spares the questions whose answers it
//! already has, and the tags are written side by side. Authentication
//! is the registry's challenge: `Basic`, or `Bearer` with a token from the realm it names
//! (Harbor, Zot, distribution with token auth), the credentials offered to it only.
//! Credentials never reach a message.
//!
//! Where credentials go (as Go's HTTP client, containerd's resolver and distribution's
//! auth transport keep it): the `Authorization` (Basic, or the Bearer token) only to the
//! registry's own origin — scheme, host and port; a blob-upload `Location` or a redirect
//! elsewhere (object storage) is followed without it, and a 401 from elsewhere is not
//! answered. The user's password goes to the token realm the registry names, also on
//! another host (Docker Hub's and Harbor's realms are), but only over HTTPS unless the
//! registry itself is plain HTTP by `--plain-http`/`--insecure`. Nothing leaves an HTTPS
//! registry for plain HTTP (the agent is HTTPS-only then, redirects included; ureq
//! drops `Authorization` on every redirect: `redirect_auth_headers` is `Never`).

use super::artifact::{Artifact, Blob, MANIFEST};
use super::reference::Reference;
use crate::error::{Cause, Elsewhere, OciError, TagListProblem};
use crate::util::redact;
use base64::Engine as _;
use std::time::Duration;

/// Largest answer read from a registry (an error document, a token, a tag-list page).
const MAX_ANSWER: u64 = 1 << 20;
/// Pages of a tag list read at most (its `Link` headers): with distribution's 1,000 tags
/// a page, far more than [`MAX_TAGS`]; a registry whose pages never end stops here.
const MAX_TAG_PAGES: usize = 100;
/// Tags read at most: `log --oci` reads one artifact per tag (three requests each), so a
/// repository near this bound takes hours already; the names stay under ~1.3 MB.
const MAX_TAGS: usize = 10_000;

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
    /// The registry's origin: the only one that gets `auth`.
    origin: Option<Origin>,
    /// `--plain-http`/`--insecure`: the registry itself is plain HTTP.
    plain_http: bool,
    /// The end of the attempt: each request is bounded by what is left, and none starts
    /// after it (an attempt its caller gave up on never goes on in the background).
    until: Option<std::time::Instant>,
}

/// The scheme, host and port of a URL — what "the same server" means for credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    fn of(url: &str) -> Option<Origin> {
        let uri: http::Uri = url.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default = if scheme == "https" { 443 } else { 80 };
        Some(Origin {
            host: uri.host()?.to_ascii_lowercase(),
            port: uri.port_u16().unwrap_or(default),
            scheme,
        })
    }

    /// `scheme://host:port`: a URL named in a message without its path and query (an
    /// upload session's state, a token).
    fn shown(&self) -> String {
        format!("{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// [`Origin::shown`] of `url`, or a stand-in when it is not a URL.
fn shown(url: &str) -> String {
    Origin::of(url).map_or_else(|| "a URL that does not parse".into(), |o| o.shown())
}

/// What a tag list holds.
#[derive(Debug, Default)]
pub struct Tags {
    /// The tags, in the registry's order.
    pub names: Vec<String>,
    /// Entries that are not valid tag names (control characters, too long): skipped.
    pub invalid: usize,
    /// The first of them, escaped and cut to 64 characters.
    pub first_invalid: Option<String>,
}

impl Tags {
    /// Takes `tag` when it is a valid tag name (one that can be asked for), else counts it.
    fn add(&mut self, tag: &str) {
        if super::reference::valid_tag(tag) {
            self.names.push(tag.to_string());
            return;
        }
        self.invalid += 1;
        if self.first_invalid.is_none() {
            let cut: String = tag.chars().take(64).collect();
            self.first_invalid = Some(redact::escape_line(&cut));
        }
    }
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
            // An HTTPS registry is never left for plain HTTP: a `Location`, a redirect
            // or a realm on http:// is refused before anything is sent.
            .https_only(!plain_http)
            .max_redirects(5)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_global(Some(Duration::from_secs(300)))
            .user_agent(concat!("clinv/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build())
            .proxy(proxy)
            .build()
            .into();
        let scheme = if plain_http { "http" } else { "https" };
        let base = format!(
            "{scheme}://{}/v2/{}",
            reference.registry, reference.repository
        );
        Client {
            agent,
            origin: Origin::of(&base),
            base,
            reference: reference.clone(),
            credentials,
            auth: None,
            token_given: false,
            plain_http,
            until: None,
        }
    }

    /// Bounds every request from now on by `at` ([`Client::until`]'s rule).
    pub fn until(&mut self, at: std::time::Instant) {
        self.until = Some(at);
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

    /// Every tag of the repository, following the registry's `Link` pages — at most
    /// [`MAX_TAG_PAGES`] pages and [`MAX_TAGS`] tags, and no page twice.
    ///
    /// # Errors
    /// [`OciError::TagList`] past a bound or on a loop; the registry cannot be reached
    /// or refuses.
    pub fn tags(&mut self) -> Result<Tags, OciError> {
        let origin_end = self.base.find("/v2/").unwrap_or(self.base.len());
        let mut url = format!("{}/tags/list?n=1000", self.base);
        let mut seen = std::collections::HashSet::new();
        let (mut read, mut tags) = (0, Tags::default());
        for _ in 0..MAX_TAG_PAGES {
            seen.insert(url.clone());
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
            for tag in doc["tags"].as_array().into_iter().flatten() {
                read += 1;
                if read > MAX_TAGS {
                    return Err(self.tag_list(TagListProblem::Tags(MAX_TAGS)));
                }
                tags.add(tag.as_str().unwrap_or_default());
            }
            match next {
                Some(path) if path.starts_with('/') => {
                    url = format!("{}{path}", &self.base[..origin_end]);
                    if seen.contains(&url) {
                        return Err(self.tag_list(TagListProblem::Loop));
                    }
                }
                _ => return Ok(tags),
            }
        }
        Err(self.tag_list(TagListProblem::Pages(MAX_TAG_PAGES)))
    }

    fn tag_list(&self, problem: TagListProblem) -> OciError {
        OciError::TagList {
            registry: self.reference.registry.clone(),
            problem,
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
        let response = self.once(method, url, headers, body, what)?;
        if response.status().as_u16() != 401 {
            return self.checked_auth(response, what);
        }
        // A 401 from where a `Location` or a redirect led (the response's own URL) is
        // not the registry's challenge: its credentials are not offered there.
        let from = ureq::ResponseExt::get_uri(&response).to_string();
        if !self.ours(&from) {
            let by = shown(&from);
            return Err(self.elsewhere(what, Elsewhere::Challenged { by }));
        }
        if self.auth.is_some() {
            return self.checked_auth(response, what);
        }
        let challenge = header(&response, "www-authenticate")
            .unwrap_or_default()
            .to_string();
        self.auth = Some(self.answer(&challenge, what)?);
        let response = self.once(method, url, headers, body, what)?;
        self.checked_auth(response, what)
    }

    /// Whether `url` is on the registry's origin (scheme, host and port): the only
    /// place its `Authorization` goes.
    fn ours(&self, url: &str) -> bool {
        self.origin.is_some() && Origin::of(url) == self.origin
    }

    fn elsewhere(&self, what: &str, problem: Elsewhere) -> OciError {
        OciError::Elsewhere {
            registry: self.reference.registry.clone(),
            what: what.to_string(),
            problem,
        }
    }

    /// A request that failed before an answer: refused for plain HTTP (an HTTPS-only
    /// agent met an http:// URL), or the registry could not be reached — with a hint
    /// when an HTTPS request met a plain-HTTP server.
    fn failed(&self, error: &ureq::Error, what: &str) -> OciError {
        if let ureq::Error::RequireHttpsOnly(to) = error {
            let to = shown(to);
            return self.elsewhere(what, Elsewhere::PlainHttp { to });
        }
        let text = error.to_string();
        // No answer at all (refused, unresolved, timed out, cut): a push is owed.
        if crate::util::unanswered(error) {
            return OciError::Unanswered {
                registry: self.reference.registry.clone(),
                cause: Cause(self.scrub(&text)),
            };
        }
        if !self.plain_http && text.contains("InvalidContentType") {
            return self.unreachable(&format!(
                "{text}: the registry answered in plain HTTP; pass --plain-http if that is intended (--insecure for a registry not on this machine)"
            ));
        }
        self.unreachable(&text)
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

    /// One request; the `Authorization` goes with it only to the registry's origin.
    fn once(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        what: &str,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let mut request = http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(a) = &self.auth
            && self.ours(url)
        {
            request = request.header("Authorization", a);
        }
        let left = match self.until {
            Some(at) => match at.checked_duration_since(std::time::Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                // Not an answer: the push stays owed.
                _ => {
                    return Err(OciError::Unanswered {
                        registry: self.reference.registry.clone(),
                        cause: Cause("no answer before the attempt's --timeout".into()),
                    });
                }
            },
            None => None,
        };
        let sent = match body {
            Some(bytes) => request.body(bytes).map(|r| self.run(r, left)),
            None => request.body(()).map(|r| self.run(r, left)),
        };
        sent.map_err(|e| self.unreachable(&e.to_string()))?
            .map_err(|e| self.failed(&e, what))
    }

    /// Sends `request`, within `left` when the attempt has an end.
    fn run<B: ureq::AsSendBody>(
        &self,
        request: http::Request<B>,
        left: Option<Duration>,
    ) -> Result<http::Response<ureq::Body>, ureq::Error> {
        use ureq::RequestExt;
        match left {
            Some(left) => request
                .with_agent(&self.agent)
                .configure()
                .timeout_global(Some(left))
                .build()
                .run(),
            None => self.agent.run(request),
        }
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
        self.check_realm(&realm, what)?;
        let separator = if realm.contains('?') { '&' } else { '?' };
        let mut url = format!(
            "{realm}{separator}scope=repository:{}:pull,push",
            self.reference.repository
        );
        if let Some(service) = param("service") {
            url.push_str(&format!("&service={service}"));
        }
        let mut request = self.agent.get(&url);
        if let Some(b) = &basic {
            request = request.header("Authorization", b);
        }
        let mut response = request.call().map_err(|e| self.failed(&e, what))?;
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

    /// The realm is where the user's password goes: an http(s) URL, and HTTPS unless the
    /// registry itself is plain HTTP by the user's flag. Another host is allowed (Docker
    /// Hub's realm is auth.docker.io, Harbor's and GitLab's are often elsewhere too).
    fn check_realm(&self, realm: &str, what: &str) -> Result<(), OciError> {
        let origin = Origin::of(realm).filter(|o| o.scheme == "https" || o.scheme == "http");
        let Some(origin) = origin else {
            let realm = redact::escape_line(&redact::url(realm));
            return Err(self.elsewhere(what, Elsewhere::BadRealm { realm }));
        };
        if origin.scheme == "http" && !self.plain_http {
            let realm = origin.shown();
            return Err(self.elsewhere(what, Elsewhere::PlainRealm { realm }));
        }
        Ok(())
    }

    fn unreachable(&self, message: &str) -> OciError {
        OciError::Unreachable {
            registry: self.reference.registry.clone(),
            cause: Cause(self.scrub(message)),
        }
    }

    /// A text from the registry (or about its answer) as a failure detail: without the
    /// token or password this client sent, should the registry echo them, and through
    /// [`redact::detail`].
    fn scrub(&self, text: &str) -> String {
        let token = self
            .auth
            .as_deref()
            .and_then(|a| a.split_once(' '))
            .map(|(_, value)| value);
        let password = self.credentials.as_ref().map(|(_, p)| p.as_str());
        let sent: Vec<&str> = token.into_iter().chain(password).collect();
        redact::detail(&redact::sent(text, &sent))
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
            message: self.scrub(&message),
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

    #[test]
    fn an_origin_is_scheme_host_and_port() {
        let o = |u: &str| Origin::of(u).unwrap();
        assert_eq!(
            o("https://Registry.Example/v2/a"),
            o("https://registry.example:443/x")
        );
        assert_eq!(o("http://r.example/v2/a").shown(), "http://r.example:80");
        assert_ne!(o("https://r.example/v2"), o("https://r.example:5000/v2"));
        assert_ne!(o("https://r.example/v2"), o("http://r.example:443/v2"));
        assert_ne!(o("https://r.example/v2"), o("https://storage.example/v2"));
        assert_eq!(Origin::of("/v2/relative"), None);
        assert_eq!(
            shown("https://u:p@s.example/up?_state=x"),
            "https://s.example:443"
        );
    }

    #[test]
    fn realms_take_the_password_only_over_https_unless_the_registry_is_plain() {
        let reference = Reference::parse("oci://registry.example/a/b:t").unwrap();
        let https = Client::new(&reference, false, None, None, None);
        let plain = Client::new(&reference, true, None, None, None);
        assert!(https.check_realm("https://auth.example/token", "x").is_ok());
        for (client, realm, problem) in [
            (
                &https,
                "http://auth.example:8080/token?x=1",
                "http://auth.example:8080 is plain HTTP",
            ),
            (
                &https,
                "ftp://auth.example/token",
                "'ftp://auth.example/token' is not",
            ),
            (&plain, "file:///etc/passwd", "'file:///etc/passwd' is not"),
        ] {
            let err = client.check_realm(realm, "x").unwrap_err().to_string();
            assert!(err.contains(problem), "{err}");
        }
        assert!(plain.check_realm("http://auth.example/token", "x").is_ok());
    }

    #[test]
    fn a_refusal_that_echoes_what_was_sent_does_not_repeat_it() {
        // Issue #48, finding 12: a server's message is stored as the failure detail.
        let reference = Reference::parse("oci://registry.example/a/b:t").unwrap();
        let credentials = Some(("bot".to_string(), "pw-s3cret-1".to_string()));
        let mut client = Client::new(&reference, false, None, credentials, None);
        client.bearer("opaquetokenvalue");
        let body = r#"{"errors":[{"code":"UNAUTHORIZED","message":"token opaquetokenvalue, password pw-s3cret-1: refused"}]}"#;
        let response = http::Response::builder()
            .status(401)
            .body(ureq::Body::builder().data(body))
            .unwrap();
        let said = client.refused("pushing", response).to_string();
        assert!(
            said.contains("UNAUTHORIZED token …, password …: refused"),
            "{said}"
        );
        let said = client.unreachable("echo: opaquetokenvalue").to_string();
        assert!(!said.contains("opaquetokenvalue"), "{said}");
    }
}
