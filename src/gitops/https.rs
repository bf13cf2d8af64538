//! HTTPS for push and fetch: git's smart HTTP protocol on the TLS stack the binary already
//! has (ureq on rustls + ring), registered as libgit2's `https` transport.
//!
//! libgit2 is built without a TLS stream (its OpenSSL stream loaded the whole CA bundle on
//! every start, ~70 ms, a cost every command paid). This transport is registered only when
//! a push or fetch targets an `https://` remote ([`prepare`]), so no other command pays
//! for it, and it reads nothing before then.
//!
//! What git does, it does: credentials from `git credential fill` (the configured helpers,
//! run by git itself in the repository, so `credential.helper`, `credential.<url>.*` and
//! `useHttpPath` apply) after a 401, then `approve` or `reject`; a token from an environment
//! variable (`--token-env NAME`, sent at once, as Flux's `--token-auth` does);
//! `http.extraHeader`; `http.sslCAInfo` / `http.sslCAPath` (and `GIT_SSL_CAINFO` /
//! `GIT_SSL_CAPATH`) instead of the built-in web roots; `http.sslVerify=false` (or
//! `GIT_SSL_NO_VERIFY`) only with `--allow-insecure-tls`; `http.proxy`,
//! `remote.<name>.proxy`, else `HTTPS_PROXY`/`https_proxy`/`ALL_PROXY`, unless `NO_PROXY`
//! covers the host; `http.followRedirects` (default `initial`: the first request follows up
//! to 10 redirects, the rest go to where it landed); every `http.*` key also in its
//! URL-specific form `http.<url>.*`. A password or token never reaches a message: URLs are
//! shown through [`crate::util::redact::url`].
#![allow(clippy::disallowed_types)] // gitops: the one module that uses git2

use super::layout::Access;
use crate::error::{ArgumentError, Cause, Error, GitError, Result};
use crate::util::helper::{Happened, Helper, Output};
use crate::util::redact;
use crate::util::url::Url;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// What the command line adds to git's configuration.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--token-env NAME`: the password (a token) is in this environment variable.
    pub token_env: Option<String>,
    /// `--allow-insecure-tls`: honour `http.sslVerify=false` / `GIT_SSL_NO_VERIFY`.
    pub allow_insecure_tls: bool,
}

/// Redirects the first request may follow (git's curl allows 20; 10 is plenty for a
/// moved repository and bounds a loop).
const MAX_REDIRECTS: u32 = 10;
/// Largest CA file read.
const MAX_CA_BYTES: u64 = 4 << 20;

/// Everything one push or fetch needs, read from git's configuration when it starts.
struct Settings {
    agent: ureq::Agent,
    /// Same agent configuration without redirects (`http.followRedirects=initial`).
    agent_no_redirect: ureq::Agent,
    headers: Vec<(String, String)>,
    /// `--token-env`: user (the URL's, else `git`) and the token.
    token: Option<(String, String)>,
    /// The worktree: `git credential` runs there so the repository's config applies.
    workdir: PathBuf,
    /// Where the configured CA came from (`GIT_SSL_CAINFO (/path)`), for the hint on an
    /// untrusted certificate.
    custom_ca: Option<String>,
    /// The proxy in use (`host:port`), named when it cannot be reached.
    proxy: Option<String>,
    follow_all_redirects: bool,
}

/// The settings of the push or fetch in progress (libgit2's transport factory is global;
/// clinv runs one push or fetch at a time, under the repository lock).
static CURRENT: Mutex<Option<Arc<Settings>>> = Mutex::new(None);
/// Registered once per process, on first use.
static REGISTERED: OnceLock<std::result::Result<(), GitError>> = OnceLock::new();

/// Whether `url` is for this transport.
pub fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// Before a push or fetch to `remote`: when its URL is `https://`, reads the settings
/// (git config, CA files, the token) and registers the transport (once). Anything else
/// returns at once.
///
/// # Errors
/// [`GitError::InsecureTls`] for `http.sslVerify=false` without `--allow-insecure-tls`,
/// [`ArgumentError`] for a `--token-env` that cannot be used, [`Error::InvalidFile`] for an
/// unreadable CA file.
pub fn prepare(
    repo: &git2::Repository,
    remote: &git2::Remote<'_>,
    opts: &Options,
    deadline: Duration,
) -> Result<()> {
    let url = remote.url().unwrap_or_default();
    if !is_https(url) {
        if let Some(name) = &opts.token_env {
            return Err(ArgumentError::TokenNotHttps {
                name: name.clone(),
                url: redact::url(url),
            }
            .into());
        }
        return Ok(());
    }
    Url::parse(url).map_err(|why| GitError::Url {
        url: redact::url(url),
        why,
    })?;
    let config = repo
        .config()
        .map_err(|e| GitError::call("git config", e.message()))?;
    let settings = Settings::read(
        &config,
        url,
        remote.name().ok().flatten(),
        opts,
        repo.workdir().unwrap_or(repo.path()),
        deadline,
    )?;
    *CURRENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(settings));
    register()
}

#[allow(unsafe_code)]
fn register() -> Result<()> {
    REGISTERED
        .get_or_init(|| {
            // SAFETY: `git2::transport::register` is unsafe only because libgit2's list of
            // transports is not synchronised with operations running at the same time. It
            // runs once (OnceLock), before the first push or fetch of the process, while no
            // other git operation runs: clinv's git work is on this one thread.
            unsafe {
                git2::transport::register("https", |remote| {
                    let settings = CURRENT
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clone()
                        .ok_or_else(|| git2::Error::from_str("https transport used unprepared"))?;
                    Transport::smart(
                        remote,
                        true,
                        Subtransport {
                            shared: Arc::new(Shared {
                                settings,
                                session: Mutex::new(Session::default()),
                            }),
                        },
                    )
                })
            }
            .map_err(|e| GitError::call("cannot register the https transport", e.message()))
        })
        .clone()
        .map_err(Error::from)
}

/// A variable of git's environment, when set and not empty.
fn git_env(name: &str) -> Option<String> {
    crate::util::env::var(name).filter(|v| !v.is_empty())
}

impl Settings {
    fn read(
        config: &git2::Config,
        url: &str,
        remote: Option<&str>,
        opts: &Options,
        workdir: &Path,
        deadline: Duration,
    ) -> Result<Settings> {
        let http = HttpConfig::read(config, url);
        let (tls, custom_ca) = tls(&http, opts, url)?;
        let proxy = choose_proxy(&http, config, remote, url)?;
        let (first, rest) = redirects(&http);
        let user_agent = git_env("GIT_HTTP_USER_AGENT")
            .or_else(|| http.last("useragent"))
            .unwrap_or_else(|| concat!("git/2.0 (clinv/", env!("CARGO_PKG_VERSION"), ")").into());
        let agent = |redirects: u32| -> ureq::Agent {
            ureq::Agent::config_builder()
                .https_only(true)
                .http_status_as_error(false)
                .max_redirects(redirects)
                .max_redirects_will_error(true)
                .timeout_connect(Some(deadline.min(Duration::from_secs(30))))
                // No request outlives the push or fetch it serves: a server that takes
                // the connection and never answers ends with it, and releases the one
                // git operation a process runs at a time.
                .timeout_global(Some(deadline))
                .user_agent(user_agent.as_str())
                .tls_config(tls.clone())
                .proxy(proxy.clone())
                .build()
                .into()
        };
        Ok(Settings {
            agent: agent(first),
            agent_no_redirect: agent(rest),
            headers: extra_headers(&http)?,
            token: token(opts, url)?,
            workdir: workdir.to_path_buf(),
            custom_ca,
            proxy: proxy.as_ref().map(|p| format!("{}:{}", p.host(), p.port())),
            follow_all_redirects: rest > 0,
        })
    }
}

/// What source-controller needs to clone `url` (for `--print-flux`).
///
/// What source-controller needs to clone `url` as this repository reaches it (for
/// `--print-flux`): SSH always takes a key; HTTP(S) takes credentials when clinv would
/// send some — the URL's user info, `--token-env`, or a `credential.helper` /
/// `credential.username` of git's configuration for it — with the CA file git trusts for
/// it (`GIT_SSL_CAINFO`, then `http.sslCAInfo`).
pub fn clone_access(config: Option<&git2::Config>, url: &str, token_env: bool) -> Access {
    let lower = url.to_ascii_lowercase();
    let http = lower.starts_with("https://") || lower.starts_with("http://");
    if !http {
        let scp = !url.contains("://") && !url.starts_with('/') && url.contains(':');
        let ssh = lower.starts_with("ssh://") || lower.starts_with("git+ssh://") || scp;
        return if ssh { Access::Ssh } else { Access::Open };
    }
    let credentials = token_env
        || split_userinfo(url).1.is_some()
        || config.is_some_and(|c| credential_helper(c, url));
    if !credentials {
        return Access::Open;
    }
    let ca = git_env("GIT_SSL_CAINFO")
        .or_else(|| config.and_then(|c| HttpConfig::read(c, url).last("sslcainfo")));
    Access::Basic { ca }
}

/// Whether git's configuration gives `url` a credential helper or user name
/// (`credential.<key>`, or `credential.<url>.<key>` for a matching URL).
fn credential_helper(config: &git2::Config, url: &str) -> bool {
    let mut found = false;
    for_each_setting(config, "credential", |sub, key, value| {
        found |= (key == "helper" || key == "username")
            && !value.is_empty()
            && sub.is_none_or(|pattern| url_matches(pattern, url));
    });
    found
}

/// Each `<section>.<key>` and `<section>.<url>.<key>` setting of git's configuration, in
/// configuration order, as (`<url>`, the key in lower case, the value).
fn for_each_setting(
    config: &git2::Config,
    section: &str,
    mut each: impl FnMut(Option<&str>, &str, &str),
) {
    let Ok(mut iter) = config.entries(Some(&format!("^{section}\\."))) else {
        return;
    };
    let prefix = format!("{section}.");
    while let Some(Ok(entry)) = iter.next() {
        let (Ok(name), Ok(value)) = (entry.name(), entry.value()) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let (sub, key) = match rest.rsplit_once('.') {
            Some((sub, key)) => (Some(sub), key),
            None => (None, rest),
        };
        each(sub, &key.to_ascii_lowercase(), value);
    }
}

/// The TLS configuration git's settings ask for (its environment first): the CA file and
/// folder, certificate checks on unless `--allow-insecure-tls` allows them off; where
/// the custom CA in use comes from (`GIT_SSL_CAINFO (/path)`, …).
fn tls(
    http: &HttpConfig,
    opts: &Options,
    url: &str,
) -> Result<(ureq::tls::TlsConfig, Option<String>)> {
    let verify = match git_env("GIT_SSL_NO_VERIFY") {
        Some(_) => false,
        None => http.bool("sslverify").unwrap_or(true),
    };
    if !verify && !opts.allow_insecure_tls {
        return Err(GitError::InsecureTls(redact::url(url)).into());
    }
    let named = |env: &str, key: &str, config: &str| {
        let from_env = git_env(env).map(|v| (format!("{env} ({v})"), v));
        from_env.or_else(|| http.last(key).map(|v| (format!("{config} ({v})"), v)))
    };
    let ca_file = named("GIT_SSL_CAINFO", "sslcainfo", "http.sslCAInfo");
    let ca_dir = named("GIT_SSL_CAPATH", "sslcapath", "http.sslCAPath");
    let custom_ca = [&ca_file, &ca_dir]
        .into_iter()
        .flatten()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>();
    let custom_ca = (!custom_ca.is_empty()).then(|| custom_ca.join(" and "));
    let (ca_file, ca_dir) = (ca_file.map(|(_, v)| v), ca_dir.map(|(_, v)| v));
    let mut certs = Vec::new();
    if let Some(file) = &ca_file {
        certs.extend(read_pem(&expand_home(file), true)?);
    }
    if let Some(dir) = &ca_dir {
        certs.extend(read_pem_dir(&expand_home(dir))?);
    }
    let mut tls = ureq::tls::TlsConfig::builder();
    if custom_ca.is_some() {
        tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
    }
    if !verify {
        tls = tls.disable_verification(true);
    }
    Ok((tls.build(), custom_ca))
}

/// The certificates of every file in `dir` (`http.sslCAPath`): at least one.
fn read_pem_dir(dir: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut certs = Vec::new();
    for entry in entries.flatten() {
        if entry
            .file_type()
            .is_ok_and(|t| t.is_file() || t.is_symlink())
        {
            certs.extend(read_pem(&entry.path(), false)?);
        }
    }
    if certs.is_empty() {
        return Err(Error::InvalidFile {
            path: dir.to_path_buf(),
            message: "http.sslCAPath: no PEM certificate in this folder".into(),
        });
    }
    Ok(certs)
}

/// Redirects allowed on the first request and on the rest (`http.followRedirects`).
fn redirects(http: &HttpConfig) -> (u32, u32) {
    let follow = http
        .last("followredirects")
        .map(|v| v.to_ascii_lowercase())
        .unwrap_or_else(|| "initial".into());
    match follow.as_str() {
        "false" | "no" | "off" | "0" => (0, 0),
        "true" | "yes" | "on" | "1" => (MAX_REDIRECTS, MAX_REDIRECTS),
        _ => (MAX_REDIRECTS, 0),
    }
}

/// `http.extraHeader` values, as git sends them (an empty value resets the list).
fn extra_headers(http: &HttpConfig) -> Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    for value in http.all("extraheader") {
        if value.is_empty() {
            headers.clear();
        } else if let Some((name, v)) = value.split_once(':') {
            headers.push((name.trim().to_string(), v.trim().to_string()));
        } else {
            return Err(GitError::ExtraHeader.into());
        }
    }
    Ok(headers)
}

/// `--token-env`'s token, with the URL's user (else `git`).
fn token(opts: &Options, url: &str) -> Result<Option<(String, String)>> {
    let Some(name) = &opts.token_env else {
        return Ok(None);
    };
    let token = git_env(name).ok_or_else(|| ArgumentError::TokenUnset(name.clone()))?;
    let user = split_userinfo(url)
        .1
        .map(|(u, _)| u)
        .filter(|u| !u.is_empty());
    Ok(Some((user.unwrap_or_else(|| "git".into()), token)))
}

/// `http.proxy` (URL-specific first), `remote.<name>.proxy`, else the environment; none
/// when `NO_PROXY` covers the host (as curl does for a configured proxy too).
fn choose_proxy(
    http: &HttpConfig,
    config: &git2::Config,
    remote: Option<&str>,
    url: &str,
) -> Result<Option<ureq::Proxy>> {
    let env = |k: &str| crate::util::env::var(k).filter(|v| !v.trim().is_empty());
    let configured = remote
        .and_then(|r| config.get_string(&format!("remote.{r}.proxy")).ok())
        .or_else(|| http.last("proxy"));
    let chosen = match configured {
        Some(p) if p.is_empty() => return Ok(None), // an empty value turns proxying off
        Some(p) => Some(p),
        None => env("HTTPS_PROXY")
            .or_else(|| env("https_proxy"))
            .or_else(|| env("ALL_PROXY"))
            .or_else(|| env("all_proxy")),
    };
    let Some(proxy) = chosen else {
        return Ok(None);
    };
    let (host, port) = host_port(url);
    let no_proxy = env("NO_PROXY")
        .or_else(|| env("no_proxy"))
        .unwrap_or_default();
    if crate::util::no_proxy::covers(&no_proxy, &host, port) {
        return Ok(None);
    }
    // curl's default scheme for a proxy without one.
    let proxy = Url::parse_or_http(&proxy).map_err(|why| GitError::Url {
        url: redact::url(&proxy),
        why,
    })?;
    ureq::Proxy::new(proxy.with_credentials())
        .map(Some)
        .map_err(|e| {
            Error::from(GitError::Proxy {
                proxy: proxy.redacted(),
                cause: Cause(redact::detail(&e.to_string())),
            })
        })
}

/// `http.*` of git's configuration as it applies to one URL: `http.<url>.<key>` when
/// `<url>` matches (the longest match wins, as in git), else `http.<key>`.
struct HttpConfig {
    /// (key in lower case, specificity, value), in configuration order.
    entries: Vec<(String, usize, String)>,
}

impl HttpConfig {
    fn read(config: &git2::Config, url: &str) -> HttpConfig {
        let mut entries = Vec::new();
        for_each_setting(config, "http", |sub, key, value| {
            let specificity = match sub {
                None => 0,
                Some(pattern) if url_matches(pattern, url) => pattern.len(),
                Some(_) => return,
            };
            entries.push((key.to_string(), specificity, value.to_string()));
        });
        HttpConfig { entries }
    }

    /// The single value of `key`: most specific, then last.
    fn last(&self, key: &str) -> Option<String> {
        let best = self
            .entries
            .iter()
            .filter(|(k, _, _)| k == key)
            .map(|(_, s, _)| *s)
            .max()?;
        self.entries
            .iter()
            .rev()
            .find(|(k, s, _)| k == key && *s == best)
            .map(|(_, _, v)| v.clone())
    }

    fn bool(&self, key: &str) -> Option<bool> {
        self.last(key).map(|v| {
            !matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0" | ""
            )
        })
    }

    /// Every value of a multi-valued key, in order.
    fn all(&self, key: &str) -> Vec<String> {
        self.entries
            .iter()
            .filter(|(k, _, _)| k == key)
            .map(|(_, _, v)| v.clone())
            .collect()
    }
}

/// git's `http.<url>.*` matching, simplified: same scheme and host (a `*.` label matches
/// one label), the port when given, and a path prefix at a `/` boundary.
fn url_matches(pattern: &str, url: &str) -> bool {
    let strip = |u: &str| -> Option<(String, String, String)> {
        let u = Url::parse(u).ok()?;
        Some((
            u.scheme(),
            u.authority().to_ascii_lowercase(),
            u.path().to_string(),
        ))
    };
    let (Some((ps, pa, pp)), Some((us, ua, up))) = (strip(pattern), strip(url)) else {
        return false;
    };
    if ps != us {
        return false;
    }
    let host_ok = if let Some(suffix) = pa.strip_prefix("*.") {
        ua.split_once('.').is_some_and(|(_, rest)| rest == suffix)
    } else {
        pa == ua || (!pa.contains(':') && ua == format!("{pa}:443"))
    };
    let pp = pp.trim_end_matches('/');
    host_ok && (pp.is_empty() || up == pp || up.starts_with(&format!("{pp}/")))
}

/// `url` without its user info, and the user info (user, password) when it has one.
/// A URL that is not valid by [`Url::parse`] ([`prepare`] refuses those) gives no
/// credentials and only its redacted form.
fn split_userinfo(url: &str) -> (String, Option<(String, Option<String>)>) {
    match Url::parse(url) {
        Ok(u) => {
            let info = u
                .user()
                .map(|user| (user.to_string(), u.password().map(str::to_string)));
            (u.bare(), info)
        }
        Err(_) => (redact::url(url), None),
    }
}

/// Scheme, host and port of a URL: credentials given for one go to no other.
fn origin(url: &str) -> Option<(String, String, u16)> {
    let u = Url::parse(url).ok()?;
    Some((u.scheme(), u.host(), u.port_or_default()))
}

/// Host and port of a URL (the scheme's port when it has none), for `NO_PROXY`.
fn host_port(url: &str) -> (String, u16) {
    Url::parse(url).map_or_else(
        |_| (String::new(), 443),
        |u| (u.host(), u.port_or_default()),
    )
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), crate::util::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The certificates of a PEM file; `required`: a file without one is an error.
fn read_pem(path: &Path, required: bool) -> Result<Vec<ureq::tls::Certificate<'static>>> {
    let bytes =
        crate::util::files::read_bounded(path, MAX_CA_BYTES).map_err(|e| Error::io(path, e))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(_) if !required => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::InvalidFile {
                    path: path.to_path_buf(),
                    message: format!("http.sslCAInfo: not a PEM certificate file: {e}"),
                });
            }
        }
    }
    if certs.is_empty() && required {
        return Err(Error::InvalidFile {
            path: path.to_path_buf(),
            message: "http.sslCAInfo: no PEM certificate in this file".into(),
        });
    }
    Ok(certs)
}

/// Where the credentials in use came from.
#[derive(Clone)]
enum Source {
    /// `--token-env` or the remote URL's user info: nothing to approve or reject.
    Given,
    /// `git credential fill`: approved after it worked, rejected when refused.
    Helper { approved: bool },
}

#[derive(Default)]
struct Session {
    /// The repository URL the requests go to (after the first request's redirects).
    base: Option<String>,
    /// User, password and where they came from.
    credentials: Option<(String, String, Source)>,
    /// Whether credentials were already asked for (one round, as git).
    asked: bool,
}

struct Shared {
    settings: Arc<Settings>,
    session: Mutex<Session>,
}

impl Shared {
    /// The session, also after another thread panicked holding it.
    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `git credential approve|reject` of the helper's credentials. A helper that cannot
    /// store or erase is no failure of the push (git ignores it too).
    fn tell_helper(&self, action: &str, base: &str, user: &str, password: &str) {
        let _ = credential(
            &self.settings.workdir,
            action,
            base,
            Some(user),
            Some(password),
        );
    }
}

struct Subtransport {
    shared: Arc<Shared>,
}

impl SmartSubtransport for Subtransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let (service, ls) = match action {
            Service::UploadPackLs => ("git-upload-pack", true),
            Service::UploadPack => ("git-upload-pack", false),
            Service::ReceivePackLs => ("git-receive-pack", true),
            Service::ReceivePack => ("git-receive-pack", false),
        };
        {
            let mut session = self.shared.session();
            if session.base.is_none() {
                let (bare, info) = split_userinfo(url);
                session.base = Some(bare.trim_end_matches('/').to_string());
                if let Some((user, pass)) = &self.shared.settings.token {
                    session.credentials = Some((user.clone(), pass.clone(), Source::Given));
                } else if let Some((user, Some(pass))) = info {
                    session.credentials = Some((user, pass, Source::Given));
                } else if let Some((user, None)) = info {
                    // A user without a password: the helpers are asked for that user.
                    session.credentials = Some((user, String::new(), Source::Given));
                }
            }
        }
        Ok(Box::new(Stream {
            shared: Arc::clone(&self.shared),
            service,
            ls,
            body: Vec::new(),
            reader: None,
        }))
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

struct Stream {
    shared: Arc<Shared>,
    service: &'static str,
    ls: bool,
    body: Vec<u8>,
    reader: Option<ureq::BodyReader<'static>>,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.reader.is_none() {
            let response = self.send()?;
            self.reader = Some(response.into_body().into_reader());
        }
        match self.reader.as_mut() {
            Some(r) => r.read(buf),
            None => Ok(0),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.reader.is_some() {
            return Err(io::Error::other("https: write after the response was read"));
        }
        self.body.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream {
    /// Sends the request (GET of the advertisement or POST of the buffered body), asking
    /// for credentials once after a 401, and checks the answer.
    fn send(&mut self) -> io::Result<http::Response<ureq::Body>> {
        let settings = Arc::clone(&self.shared.settings);
        let suffix = if self.ls {
            format!("/info/refs?service={}", self.service)
        } else {
            format!("/{}", self.service)
        };
        loop {
            let (base, credentials) = {
                let s = self.shared.session();
                (s.base.clone().unwrap_or_default(), s.credentials.clone())
            };
            let shown = redact::url(&base);
            let response = self
                .request(&settings, &format!("{base}{suffix}"), credentials.as_ref())
                .map_err(|e| {
                    if crate::util::unanswered(&e) {
                        super::far_end_silent(crate::delivery::Reason::Unreachable);
                    }
                    io::Error::other(transport_error(&e, &shown, &settings))
                })?;
            // Where the first request landed is the base from now on: credentials are
            // approved, rejected or asked for there, not where it started.
            let base = match self.ls {
                true => self.follow(&response, &suffix, &base, &shown)?,
                false => base,
            };
            match response.status().as_u16() {
                200 => {
                    self.check_advertisement(&response, &shown)?;
                    self.approve(&base);
                    return Ok(response);
                }
                401 if !self.asked() => self.ask(&base)?,
                status => {
                    if status >= 500 {
                        super::far_end_silent(crate::delivery::Reason::ServerError);
                    }
                    return Err(self.refused(status, &base, &shown, credentials.is_some()));
                }
            }
        }
    }

    /// One request: the advertisement's GET or the service's POST, with git's extra
    /// headers and the credentials (basic auth) when there are any.
    fn request(
        &self,
        settings: &Settings,
        url: &str,
        credentials: Option<&(String, String, Source)>,
    ) -> Result<http::Response<ureq::Body>, ureq::Error> {
        let agent = if self.ls || settings.follow_all_redirects {
            &settings.agent
        } else {
            &settings.agent_no_redirect
        };
        let auth = credentials
            .filter(|(_, p, _)| !p.is_empty())
            .map(|(u, p, _)| basic(u, p));
        let extra = settings
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()));
        let headers: Vec<(&str, String)> =
            extra.chain(auth.map(|a| ("Authorization", a))).collect();
        if self.ls {
            let mut req = agent.get(url);
            for (k, v) in headers {
                req = req.header(k, v);
            }
            return req.call();
        }
        let mut req = agent
            .post(url)
            .header(
                "Content-Type",
                format!("application/x-{}-request", self.service),
            )
            .header("Accept", format!("application/x-{}-result", self.service));
        for (k, v) in headers {
            req = req.header(k, v);
        }
        req.send(&self.body[..])
    }

    /// Where the first request landed is where the rest go (a 401 there too); never
    /// away from https. On another origin (scheme, host, port) the credentials given
    /// for the remote — its URL's user info, `--token-env`, a helper's answer for the
    /// old URL — are dropped: a helper is asked for the new URL if it asks for some,
    /// as git does (`credential_from_url` on the new base). The base now in use.
    fn follow(
        &self,
        response: &http::Response<ureq::Body>,
        suffix: &str,
        base: &str,
        shown: &str,
    ) -> io::Result<String> {
        let landed = ureq::ResponseExt::get_uri(response).to_string();
        let Some(moved) = landed.strip_suffix(suffix).filter(|m| *m != base) else {
            return Ok(base.to_string());
        };
        if !is_https(moved) {
            return Err(io::Error::other(format!(
                "{shown}: redirected to a URL that is not https://"
            )));
        }
        let moved = split_userinfo(moved).0;
        let mut session = self.shared.session();
        if origin(&moved).is_none() || origin(&moved) != origin(base) {
            session.credentials = None;
            session.asked = false;
        }
        session.base = Some(moved.clone());
        Ok(moved)
    }

    /// The advertisement must be git's (a login page answers 200 too).
    fn check_advertisement(
        &self,
        response: &http::Response<ureq::Body>,
        shown: &str,
    ) -> io::Result<()> {
        if !self.ls {
            return Ok(());
        }
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if kind == format!("application/x-{}-advertisement", self.service) {
            return Ok(());
        }
        Err(io::Error::other(format!(
            "{shown}: not a git smart-HTTP server (answered {})",
            if kind.is_empty() {
                "without a content type"
            } else {
                kind
            }
        )))
    }

    /// The error for a refusing answer (a 401 after credentials were asked for, 403, 404,
    /// anything else); credentials a helper gave are rejected there, as git does.
    fn refused(&self, status: u16, base: &str, shown: &str, had_credentials: bool) -> io::Error {
        let message = match status {
            401 => {
                let rejected = self.reject(base);
                format!(
                    "{shown}: authentication failed (HTTP 401){}",
                    match (rejected, had_credentials) {
                        (true, _) =>
                            "; the credentials from the git credential helper were refused and rejected (removed from the helper's store)",
                        (false, true) =>
                            "; the credentials given (--token-env or the remote URL) were refused",
                        (false, false) => "",
                    }
                )
            }
            403 => format!(
                "{shown}: access denied (HTTP 403): the credentials do not allow {}",
                if self.service == "git-receive-pack" {
                    "pushing"
                } else {
                    "fetching"
                }
            ),
            404 => format!("{shown}: repository not found (HTTP 404)"),
            other => format!("{shown}: HTTP {other}"),
        };
        io::Error::other(message)
    }

    fn asked(&self) -> bool {
        self.shared.session().asked
    }

    /// After a 401: `git credential fill` (for the URL's user, when it has one).
    fn ask(&self, base: &str) -> io::Result<()> {
        let mut s = self.shared.session();
        s.asked = true;
        if matches!(s.credentials, Some((_, ref p, Source::Given)) if !p.is_empty()) {
            // Given credentials were refused: nothing else to try (as git with a URL password).
            return Err(io::Error::other(format!(
                "{}: authentication failed (HTTP 401); the credentials given (--token-env or the remote URL) were refused",
                redact::url(base)
            )));
        }
        let user = s.credentials.as_ref().map(|(u, _, _)| u.clone());
        let filled = credential(
            &self.shared.settings.workdir,
            "fill",
            base,
            user.as_deref(),
            None,
        )
        .map_err(|e| {
            io::Error::other(format!(
                "authentication required and no credentials were found ({e}); configure a git credential helper (credential.helper) or pass --token-env NAME"
            ))
        })?;
        let get = |k: &str| {
            filled
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(str::to_string)
        };
        match (get("username").or(user), get("password")) {
            (Some(u), Some(p)) if !p.is_empty() => {
                s.credentials = Some((u, p, Source::Helper { approved: false }));
                Ok(())
            }
            _ => Err(io::Error::other(format!(
                "{}: authentication required and git credential fill gave no password (configure credential.helper, or pass --token-env NAME)",
                redact::url(base)
            ))),
        }
    }

    fn approve(&self, base: &str) {
        let mut s = self.shared.session();
        if let Some((u, p, Source::Helper { approved })) = &mut s.credentials
            && !*approved
        {
            *approved = true;
            self.shared.tell_helper("approve", base, u, p);
        }
    }

    /// `git credential reject` for helper credentials; true when there were some.
    fn reject(&self, base: &str) -> bool {
        let s = self.shared.session();
        match &s.credentials {
            Some((u, p, Source::Helper { .. })) => {
                self.shared.tell_helper("reject", base, u, p);
                true
            }
            _ => false,
        }
    }
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// Runs `git credential <action>` in `dir` for `url` through the helper runner
/// ([`crate::util::helper`]: no terminal prompt, bounded in time and output); returns its
/// output (`fill`). A failure names git and what happened, never what it wrote.
fn credential(
    dir: &Path,
    action: &str,
    url: &str,
    user: Option<&str>,
    password: Option<&str>,
) -> io::Result<String> {
    let mut input = format!("url={url}\n");
    if let Some(u) = user {
        input.push_str(&format!("username={u}\n"));
    }
    if let Some(p) = password {
        input.push_str(&format!("password={p}\n"));
    }
    input.push('\n');
    let mut command = std::process::Command::new("git");
    command.args(["credential", action]).current_dir(dir);
    let out = Helper::new(command)
        .input(input)
        .run()
        .and_then(Output::succeeded)
        .map_err(|e| {
            let hint = match e.what {
                Happened::NotRun(_) => "; pass --token-env NAME instead",
                _ => "",
            };
            io::Error::other(format!(
                "{}: git credential {action}: {}{hint}",
                redact::url(url),
                crate::error::chain(&e)
            ))
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A transport failure as one line, with what to do for an untrusted certificate.
fn transport_error(err: &ureq::Error, shown: &str, settings: &Settings) -> String {
    let text = redact::detail(&crate::error::chain_once(err));
    if text.contains("invalid peer certificate") || text.contains("UnknownIssuer") {
        let hint = match &settings.custom_ca {
            Some(from) => format!(
                "the server's certificate is not signed by the CA of {from}; point it at the CA that signed the server's certificate"
            ),
            None => "the server's certificate is not signed by a public CA; trust its CA with `git config http.sslCAInfo /path/to/ca.pem` (or GIT_SSL_CAINFO)".to_string(),
        };
        return format!("{shown}: TLS: {text}: {hint}");
    }
    // Through a proxy, clinv connects only to the proxy: a refused or unresolved
    // connection is the proxy's, as git says ("Failed to connect to <proxy> port N").
    if let Some(proxy) = &settings.proxy
        && not_connected(err)
    {
        return format!("{shown}: cannot connect to the proxy {proxy}: {text}");
    }
    format!("{shown}: {text}")
}

/// Whether `err` is a failure to open the connection (refused, unresolved, timed out).
fn not_connected(err: &ureq::Error) -> bool {
    match err {
        ureq::Error::Io(e) => matches!(
            e.kind(),
            io::ErrorKind::ConnectionRefused
                | io::ErrorKind::HostUnreachable
                | io::ErrorKind::NetworkUnreachable
                | io::ErrorKind::AddrNotAvailable
        ),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => true,
        ureq::Error::Timeout(t) => {
            matches!(t, ureq::Timeout::Connect | ureq::Timeout::Resolve)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_specific_keys_match_as_git_does() {
        let url = "https://git.example.com:8443/team/repo.git";
        assert!(url_matches("https://git.example.com:8443", url));
        assert!(url_matches("https://git.example.com:8443/team", url));
        assert!(url_matches("https://*.example.com:8443/", url));
        assert!(!url_matches("https://git.example.com:8443/tea", url));
        assert!(!url_matches("https://other.example.com:8443", url));
        assert!(!url_matches("http://git.example.com:8443", url));
        assert!(url_matches(
            "https://git.example.com",
            "https://u:p@git.example.com/x"
        ));
    }

    #[test]
    fn user_info_is_split_off_and_decoded() {
        let (bare, info) = split_userinfo("https://bot:p%40ss@h:1/r.git");
        assert_eq!(bare, "https://h:1/r.git");
        assert_eq!(info, Some(("bot".into(), Some("p@ss".into()))));
        assert_eq!(host_port("https://u@[::1]:8443/r"), ("::1".into(), 8443));
        assert_eq!(host_port("https://h/r"), ("h".into(), 443));
    }

    /// Redaction and the transport read a URL's credential by the same rule: nothing
    /// the transport would send as a user or password survives redaction, whether the
    /// URL is well formed or not (`#`, `?`, `/`, `@` raw in the password; an uppercase
    /// scheme; IPv6 hosts; ports), in a URL alone or quoted in a message.
    #[test]
    fn redaction_hides_every_credential_the_transport_would_send() {
        let cases = [
            "https://SECRETUSER:SECRET%40PW@host/r.git",
            "https://SECRETUSER:SECRET@PW@host/r.git",
            "https://SECRETUSER@SECRETH@host/r.git",
            "https://SECRETUSER:SECRETPW@[::1]:8443/r.git",
            "https://SECRETUSER:SECRETPW@host:8443/r.git",
            "https://SECRETUSER:SECRET#PW@host/r.git",
            "https://SECRETUSER:SECRET?PW@host/r.git",
            "https://SECRETUSER:SECRET/PW@host/r.git",
            "https://SECRETUSER:SECRET,PW@host/r.git",
            "https://SECRETUSER:SECRET(PW@host/r.git",
            "HTTPS://SECRETUSER@host/r.git",
            "Https://SECRETUSER:SECRETPW@host/r.git",
        ];
        let mut leaks = Vec::new();
        for url in cases {
            for shown in [
                redact::url(url),
                redact::urls_in(&format!("fatal: unable to access '{url}': refused")),
                redact::urls_in(&format!("pushing to {url}, refused")),
            ] {
                if shown.contains("SECRET") {
                    leaks.push(format!("{url} shown as {shown}"));
                }
            }
        }
        assert!(leaks.is_empty(), "{leaks:#?}");
    }

    #[test]
    fn origins_are_scheme_host_and_port() {
        let o = |u| origin(u).unwrap();
        assert_eq!(
            o("https://u:p@Git.Example/r.git"),
            o("https://git.example:443/x")
        );
        assert_ne!(o("https://git.example/r"), o("https://git.example:8443/r"));
        assert_ne!(o("https://git.example/r"), o("http://git.example/r"));
        assert_ne!(o("https://git.example/r"), o("https://other.example/r"));
    }
}
