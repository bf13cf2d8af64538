//! Loading the addon index from a file or an HTTPS URL, with an offline cache.
//!
//! The only module that speaks HTTP(S) to anything but Kubernetes. A URL index is fetched
//! with a timeout and a size limit, checked to be a valid index, and then cached under
//! `<cache>/clinv/index/<sha256 of the URL>.json` (atomic write), so `--offline` and a
//! later failed fetch can still compare. A fetch failure falls back to the cache with a
//! warning. URLs in messages are shown without credentials or query.

use crate::catalog::index::{self, AddonIndex, MAX_INDEX_BYTES};
use crate::error::{ArgumentError, Error, Result};
use crate::util::files;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the index comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexRef {
    File(PathBuf),
    Url(String),
}

impl IndexRef {
    /// `https://…` is a URL; `http://` is refused (an index steers upgrades, so it must
    /// not be tampered with in transit); anything else is a file path.
    ///
    /// # Errors
    /// [`ArgumentError::IndexUrl`] for a plain-HTTP or otherwise non-HTTPS URL.
    pub fn parse(text: &str) -> Result<IndexRef> {
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("https://") {
            crate::util::url::Url::parse(text).map_err(|why| ArgumentError::BadUrl {
                flag: "--index",
                url: display_url(text),
                why,
            })?;
            return Ok(IndexRef::Url(text.to_string()));
        }
        if lower.starts_with("http://") || (lower.contains("://") && !text.starts_with('/')) {
            return Err(ArgumentError::IndexUrl(display_url(text)).into());
        }
        Ok(IndexRef::File(PathBuf::from(text)))
    }

    /// How to name it in messages.
    pub fn display(&self) -> String {
        match self {
            IndexRef::File(p) => p.display().to_string(),
            IndexRef::Url(u) => display_url(u),
        }
    }
}

/// How a URL index is fetched.
#[derive(Debug, Clone)]
pub struct Options {
    /// Use the cache only.
    pub offline: bool,
    /// PEM file of CA certificates to trust instead of the built-in web roots.
    pub ca_file: Option<PathBuf>,
    /// `${XDG_CACHE_HOME:-$HOME/.cache}`; `None` disables the cache.
    pub cache_home: Option<PathBuf>,
    /// Bound on the whole request (connect, TLS, headers, body).
    pub timeout: Duration,
}

/// Where a loaded index came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File,
    Fetched,
    /// From the cache: because of `--offline`, or after a failed fetch.
    Cached,
}

/// A loaded index and the warnings met (a failed fetch, an unwritable cache).
#[derive(Debug)]
pub struct Loaded {
    pub index: AddonIndex,
    pub origin: Origin,
    pub warnings: Vec<String>,
}

/// Loads the index named by `r`.
///
/// # Errors
/// A file that cannot be read or is not an index; a URL that can neither be fetched nor
/// found in the cache ([`Error::IndexUnavailable`]); an unreadable `--index-ca`.
pub fn load(r: &IndexRef, opts: &Options) -> Result<Loaded> {
    match r {
        IndexRef::File(path) => Ok(Loaded {
            index: index::read_file(path)?,
            origin: Origin::File,
            warnings: Vec::new(),
        }),
        IndexRef::Url(url) => load_url(url, opts),
    }
}

fn load_url(url: &str, opts: &Options) -> Result<Loaded> {
    let shown = display_url(url);
    let cache = opts.cache_home.as_deref().map(|home| cache_path(home, url));
    let mut warnings = Vec::new();
    if opts.offline {
        let Some(path) = &cache else {
            return Err(unavailable(
                url,
                "--offline, and no cache directory (set XDG_CACHE_HOME or HOME)",
            ));
        };
        return match read_cache(path, &shown)? {
            Some(index) => Ok(Loaded {
                index,
                origin: Origin::Cached,
                warnings,
            }),
            None => Err(unavailable(
                url,
                &format!("--offline, and no cached copy ({})", path.display()),
            )),
        };
    }
    let fetched = fetch(url, opts).and_then(|bytes| {
        let index = index::parse(&bytes, &shown)?;
        Ok((bytes, index))
    });
    match fetched {
        Ok((bytes, index)) => {
            if let Some(path) = &cache
                && let Err(e) = files::write_atomic(path, &bytes, 0o644)
            {
                warnings.push(format!(
                    "index: could not cache {shown} at {}: {e}",
                    path.display()
                ));
            }
            Ok(Loaded {
                index,
                origin: Origin::Fetched,
                warnings,
            })
        }
        Err(err) => {
            let cached = match &cache {
                Some(path) => read_cache(path, &shown)?.map(|i| (i, path)),
                None => None,
            };
            match cached {
                Some((index, path)) => {
                    warnings.push(format!(
                        "index: {} — using the cached copy ({})",
                        crate::error::chain(&err),
                        path.display()
                    ));
                    Ok(Loaded {
                        index,
                        origin: Origin::Cached,
                        warnings,
                    })
                }
                None => Err(err),
            }
        }
    }
}

fn unavailable(url: &str, message: &str) -> Error {
    Error::IndexUnavailable {
        url: display_url(url),
        message: message.to_string(),
    }
}

/// `<home>/clinv/index/<sha256 of the URL, hex>.json`.
pub fn cache_path(cache_home: &Path, url: &str) -> PathBuf {
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    cache_home
        .join("clinv")
        .join("index")
        .join(format!("{hex}.json"))
}

/// The cached index, `None` when there is none. A cached file that is not an index is
/// an error (it was validated before it was written, so something else changed it).
fn read_cache(path: &Path, shown: &str) -> Result<Option<AddonIndex>> {
    match files::read_bounded(path, MAX_INDEX_BYTES) {
        Ok(bytes) => {
            index::parse(&bytes, &format!("{} (cache of {shown})", path.display())).map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// GETs `url` over HTTPS (redirects followed, HTTPS only) and returns the body.
fn fetch(url: &str, opts: &Options) -> Result<Vec<u8>> {
    use ureq::tls::{RootCerts, TlsConfig};
    let mut tls = TlsConfig::builder();
    if let Some(ca) = &opts.ca_file {
        tls = tls.root_certs(RootCerts::new_with_certs(&read_ca(ca)?));
    }
    // Proxies: ureq's default configuration reads ALL_PROXY/HTTPS_PROXY/HTTP_PROXY (CONNECT,
    // BasicAuth from the URL's user info) and NO_PROXY; tests/cli/updates.rs checks it
    // through a real tinyproxy.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .https_only(true)
        .timeout_global(Some(opts.timeout))
        .max_redirects(5)
        .http_status_as_error(false)
        .user_agent(concat!("clinv/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls.build())
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|e| unavailable(url, &describe(&e)))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(unavailable(url, &format!("HTTP {status}")));
    }
    response
        .body_mut()
        .with_config()
        .limit(MAX_INDEX_BYTES)
        .read_to_vec()
        .map_err(|e| unavailable(url, &format!("reading the body: {}", describe(&e))))
}

/// A transport error as one line: the innermost cause carries the useful part.
fn describe(err: &ureq::Error) -> String {
    crate::error::chain_once(err)
}

/// The certificates of a PEM file.
fn read_ca(path: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>> {
    let bytes = files::read_bounded(path, 1 << 20).map_err(|e| Error::io(path, e))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => {
                return Err(Error::InvalidFile {
                    path: path.to_path_buf(),
                    message: format!("not a PEM certificate file: {e}"),
                });
            }
        }
    }
    if certs.is_empty() {
        return Err(Error::InvalidFile {
            path: path.to_path_buf(),
            message: "no PEM certificate in the file".into(),
        });
    }
    Ok(certs)
}

/// A URL without user info and query, for messages (`https://host/path?…`): the one
/// redaction ([`crate::util::redact::url`]).
pub fn display_url(url: &str) -> String {
    crate::util::redact::url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_refs() {
        assert_eq!(
            IndexRef::parse("https://lok8s.io/addons-index.json").unwrap(),
            IndexRef::Url("https://lok8s.io/addons-index.json".into())
        );
        assert_eq!(
            IndexRef::parse("docs/addons-index.json").unwrap(),
            IndexRef::File("docs/addons-index.json".into())
        );
        assert!(IndexRef::parse("http://example.invalid/x").is_err());
        assert!(IndexRef::parse("ftp://example.invalid/x").is_err());
        // Not a URL by the one reader: refused, never sent, the password not quoted.
        let e = IndexRef::parse("https://u:SECRET@PW@example.invalid/x").unwrap_err();
        assert!(!e.to_string().contains("SECRET"), "{e}");
    }

    #[test]
    fn urls_are_shown_without_credentials_or_query() {
        for (url, shown) in [
            (
                "https://user:s3cret@host.example:8443/a/b.json?token=abc",
                "https://host.example:8443/a/b.json?…",
            ),
            ("https://h/x.json", "https://h/x.json"),
            ("https://h", "https://h"),
        ] {
            assert_eq!(display_url(url), shown);
        }
    }

    #[test]
    fn cache_path_is_the_sha256_of_the_url() {
        let p = cache_path(Path::new("/c"), "https://lok8s.io/addons-index.json");
        let name = p.file_name().unwrap().to_str().unwrap();
        assert_eq!(p.parent().unwrap(), Path::new("/c/clinv/index"));
        assert_eq!(name.len(), 64 + 5);
        assert!(name.ends_with(".json"));
    }

    #[test]
    fn offline_without_cache_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            offline: true,
            ca_file: None,
            cache_home: Some(dir.path().to_path_buf()),
            timeout: Duration::from_secs(1),
        };
        let err = load(
            &IndexRef::Url("https://example.invalid/i.json".into()),
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "addon index https://example.invalid/i.json: --offline, and no cached copy"
            ),
            "{err}"
        );
    }
}
