//! The one URL reader.
//!
//! Where a credential ends, what the host and port are and what may be shown, decided once
//! for the transports (git over HTTPS, proxies, registries, the
//! addon index, kube servers), the manifests clinv prints and the redaction of messages.
//! Two readers that disagree on where the user info ends leak: the transport sends
//! `p#ss` as a password while a redaction that stops at `#` prints `user:p`.
//!
//! The rules are RFC 3986's, strictly: the authority ends at the first `/`, `?` or `#`;
//! the user info is what comes before its `@`, and may hold only unreserved characters,
//! sub-delimiters, `:` and `%XX` escapes (a raw `@`, `#`, `?` or `/` in a password is an
//! error — percent-encode it); the user info is percent-decoded by [`percent_decode`],
//! the one decoder, which refuses a `%` not followed by two hex digits and text that is
//! not UTF-8. Host, port and path are checked by `http::Uri`.

use percent_encoding::percent_decode_str;

/// Why a text is not a URL clinv accepts. It never quotes the user info.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not a URL (expected scheme://host/…)")]
    NoScheme,
    #[error("the user info holds a raw '{0}'; percent-encode it (e.g. '@' as %40)")]
    UserInfo(char),
    #[error("a '%' is not followed by two hexadecimal digits")]
    Percent,
    #[error("the user info is not UTF-8 once decoded")]
    NotUtf8,
    #[error("no valid host, port and path")]
    Address,
    /// An `@` after the authority ended: most likely a `#`, `?` or `/` in a password.
    #[error(
        "a '#', '?' or '/' ends the host before an '@'; percent-encode it in the user info (%23, %3F, %2F)"
    )]
    UserInfoCut,
}

/// A parsed absolute URL: its user info taken apart and decoded, the rest as written.
#[derive(Clone, PartialEq, Eq)]
pub struct Url {
    /// The scheme as written (compare with [`Url::scheme`], lower case).
    scheme: String,
    user: Option<String>,
    password: Option<String>,
    /// `host[:port]` as written (an IPv6 host in brackets).
    authority: String,
    /// The path as written, up to `?` or `#`.
    path: String,
    query: Option<String>,
    fragment: bool,
    uri: http::Uri,
    /// The whole text, credentials included ([`Url::with_credentials`]).
    text: String,
}

/// The user and password never reach a log through `{:?}`.
impl std::fmt::Debug for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Url {
    /// Parses an absolute URL strictly (see the module's rules).
    ///
    /// # Errors
    /// A [`UrlError`] saying what is wrong, never quoting the user info.
    pub fn parse(text: &str) -> Result<Url, UrlError> {
        let (scheme, rest) = text.split_once("://").ok_or(UrlError::NoScheme)?;
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !scheme_ok {
            return Err(UrlError::NoScheme);
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, authority) = match authority.split_once('@') {
            Some((info, host)) => (Some(info), host),
            None => (None, authority),
        };
        if authority.contains('@') {
            return Err(UrlError::UserInfo('@'));
        }
        // An '@' after the authority ended: a password cut by a raw '#', '?' or '/'.
        let bad_address = if userinfo.is_none() && tail.contains('@') {
            UrlError::UserInfoCut
        } else {
            UrlError::Address
        };
        if !port_ok(authority) {
            return Err(bad_address);
        }
        let (user, password) = match userinfo {
            Some(info) => {
                if let Some(c) = info.chars().find(|c| !userinfo_char(*c)) {
                    return Err(UrlError::UserInfo(c));
                }
                match info.split_once(':') {
                    Some((u, p)) => (Some(percent_decode(u)?), Some(percent_decode(p)?)),
                    None => (Some(percent_decode(info)?), None),
                }
            }
            None => (None, None),
        };
        let (tail, fragment) = match tail.split_once('#') {
            Some((t, _)) => (t, true),
            None => (tail, false),
        };
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, Some(q.to_string())),
            None => (tail, None),
        };
        let uri: http::Uri = format!("{scheme}://{authority}{tail}")
            .parse()
            .map_err(|_| bad_address)?;
        if uri.host().is_none_or(str::is_empty) {
            return Err(UrlError::Address);
        }
        Ok(Url {
            scheme: scheme.to_string(),
            user,
            password,
            authority: authority.to_string(),
            path: path.to_string(),
            query,
            fragment,
            uri,
            text: text.to_string(),
        })
    }

    /// [`Url::parse`], with `http://` in front of a text without a scheme (how curl and
    /// Go read a proxy given as `host:port`).
    ///
    /// # Errors
    /// As [`Url::parse`].
    pub fn parse_or_http(text: &str) -> Result<Url, UrlError> {
        let text = text.trim();
        if text.contains("://") {
            Url::parse(text)
        } else {
            Url::parse(&format!("http://{text}"))
        }
    }

    /// The whole URL as parsed, credentials included: for a transport that takes its
    /// credentials from the URL (a proxy's), never to show.
    pub fn with_credentials(&self) -> &str {
        &self.text
    }

    /// The scheme in lower case.
    pub fn scheme(&self) -> String {
        self.scheme.to_ascii_lowercase()
    }

    /// Whether the scheme is `http` or `https` (any case).
    pub fn is_http(&self) -> bool {
        matches!(self.scheme().as_str(), "http" | "https")
    }

    /// The host in lower case, an IPv6 literal without its brackets.
    pub fn host(&self) -> String {
        let host = self.uri.host().unwrap_or_default();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        host.to_ascii_lowercase()
    }

    /// Whether the host is an IPv6 literal.
    pub fn is_ipv6(&self) -> bool {
        self.uri.host().is_some_and(|h| h.starts_with('['))
    }

    /// The port as written.
    pub fn port(&self) -> Option<u16> {
        self.uri.port_u16()
    }

    /// The port, else the scheme's (443 for `https`, 80 for the rest).
    pub fn port_or_default(&self) -> u16 {
        self.port()
            .unwrap_or(if self.scheme() == "https" { 443 } else { 80 })
    }

    /// The decoded user, when the URL has user info.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The decoded password, when the user info has a `:`.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The path as written (empty when the URL has none).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `host[:port]` as written, without the user info.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The URL without its user info (query and fragment kept): what a transport
    /// requests, and what may be stored.
    pub fn bare(&self) -> String {
        let query = self
            .query
            .as_ref()
            .map_or(String::new(), |q| format!("?{q}"));
        format!("{}://{}{}{query}", self.scheme, self.authority, self.path)
    }

    /// The URL as it may be shown: no password; for HTTP(S) no user either (a token is
    /// often put there), while an SSH user (`ssh://git@host/…`) stays; the query and
    /// the fragment become `?…` and `#…` (`?token=…`).
    pub fn redacted(&self) -> String {
        let user = match &self.user {
            Some(u) if !u.is_empty() && !self.is_http() => {
                format!("{}@", encode_userinfo(u))
            }
            _ => String::new(),
        };
        let cut = if self.query.is_some() {
            "?…"
        } else if self.fragment {
            "#…"
        } else {
            ""
        };
        format!(
            "{}://{user}{}{}{cut}",
            self.scheme, self.authority, self.path
        )
    }
}

/// `text` shown without credentials, whether or not it parses.
///
/// A URL by [`Url::redacted`]; a text with `://` that is not a valid URL loses everything up to
/// its last `@` (where any reader could think the user info ends) and its query or
/// fragment; a text without `://` (a path, scp-like `git@host:path`) as it is.
pub fn redact(text: &str) -> String {
    if let Ok(url) = Url::parse(text) {
        return url.redacted();
    }
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    match rest.find(['?', '#']) {
        Some(i) => format!("{scheme}://{}{}…", &rest[..i], &rest[i..=i]),
        None => format!("{scheme}://{rest}"),
    }
}

/// Decodes `%XX` escapes strictly: a `%` must start an escape, and the result must be
/// UTF-8. The one decoder of user info (HTTPS and SSH URLs alike).
///
/// # Errors
/// [`UrlError::Percent`] or [`UrlError::NotUtf8`].
pub fn percent_decode(text: &str) -> Result<String, UrlError> {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        {
            return Err(UrlError::Percent);
        }
    }
    percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| UrlError::NotUtf8)
}

/// Whether the port of `host[:port]` (`[v6]:port`), when there is one, is a number that
/// fits in 16 bits (`http::Uri` takes `host:abc` and drops the port).
fn port_ok(authority: &str) -> bool {
    let port = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, "")) => None,
            Some((_, tail)) => match tail.strip_prefix(':') {
                Some(port) => Some(port),
                None => return false,
            },
            None => return false,
        },
        None => authority.rsplit_once(':').map(|(_, port)| port),
    };
    port.is_none_or(|p| {
        !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok()
    })
}

/// RFC 3986 `userinfo`: unreserved, sub-delims, `:` and `%` (escapes checked on decoding).
fn userinfo_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:%".contains(c)
}

/// A decoded user written back into user info.
fn encode_userinfo(user: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(user, KEEP).to_string()
}

/// Whether a git remote URL names a path on this machine, as git reads it.
///
/// A `file://` URL, or text with neither a scheme (`://`) nor the `host:path` of
/// scp-like SSH (a `:` before the first `/`). A controller in a cluster cannot clone
/// such a URL, so a manifest that carries one is warned of.
pub fn is_local_path(url: &str) -> bool {
    let url = url.trim();
    if url.starts_with("file://") {
        return true;
    }
    if url.contains("://") {
        return false;
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_paths_are_told_from_urls_a_cluster_can_clone() {
        for local in [
            "file:///srv/git/fleet.git",
            "/srv/git/fleet.git",
            "../fleet.git",
            "fleet",
            "./a:b.git",
        ] {
            assert!(is_local_path(local), "{local}");
        }
        for remote in [
            "https://git.acme.example/fleet.git",
            "ssh://git@git.acme.example/fleet.git",
            "git@git.acme.example:platform/fleet.git",
            "[git@git.acme.example:2222]:platform/fleet.git",
            "git.acme.example:fleet.git",
        ] {
            assert!(!is_local_path(remote), "{remote}");
        }
    }

    use super::*;

    #[test]
    fn user_info_is_taken_apart_and_decoded_strictly() {
        let u = Url::parse("https://bot:p%40ss@h:1/r.git").unwrap();
        assert_eq!((u.user(), u.password()), (Some("bot"), Some("p@ss")));
        assert_eq!(u.bare(), "https://h:1/r.git");
        assert_eq!((u.host().as_str(), u.port()), ("h", Some(1)));
        let u = Url::parse("https://tok@h/r").unwrap();
        assert_eq!((u.user(), u.password()), (Some("tok"), None));
        let u = Url::parse("https://u:p,s;s=x@h/").unwrap();
        assert_eq!(u.password(), Some("p,s;s=x"));
        for (bad, why) in [
            ("https://user:p@ss@host/", UrlError::UserInfo('@')),
            ("https://u@h@host", UrlError::UserInfo('@')),
            ("https://user:p%4@host/", UrlError::Percent),
            ("https://user:p%zz@host/", UrlError::Percent),
            ("https://user:p%ff@host/", UrlError::NotUtf8),
            ("https://user:p#ss@host/", UrlError::UserInfoCut),
            ("https://user:p?ss@host/", UrlError::UserInfoCut),
            ("https://user:p/ss@host/", UrlError::UserInfoCut),
            ("https://host:x/", UrlError::Address),
            ("https://user:p ss@host/", UrlError::UserInfo(' ')),
            ("host/r.git", UrlError::NoScheme),
            ("1x://host/", UrlError::NoScheme),
            ("https:///r.git", UrlError::Address),
            ("https://h:99999/", UrlError::Address),
        ] {
            assert_eq!(Url::parse(bad), Err(why), "{bad}");
        }
    }

    #[test]
    fn hosts_ports_and_schemes() {
        let u = Url::parse("HTTPS://U:P@[::1]:8443/r.git?x=1#f").unwrap();
        assert_eq!(u.scheme(), "https");
        assert!(u.is_http() && u.is_ipv6());
        assert_eq!((u.host().as_str(), u.port_or_default()), ("::1", 8443));
        assert_eq!(u.bare(), "HTTPS://[::1]:8443/r.git?x=1");
        assert_eq!(u.redacted(), "HTTPS://[::1]:8443/r.git?…");
        let u = Url::parse("https://Git.Example").unwrap();
        assert_eq!(
            (u.host().as_str(), u.port_or_default()),
            ("git.example", 443)
        );
        assert_eq!(u.path(), "");
        assert_eq!(Url::parse("http://h/").unwrap().port_or_default(), 80);
        let p = Url::parse_or_http(" proxy:3128 ").unwrap();
        assert_eq!((p.scheme().as_str(), p.port()), ("http", Some(3128)));
    }

    #[test]
    fn redaction_keeps_an_ssh_user_and_nothing_secret() {
        for (text, shown) in [
            ("ssh://git@h/r.git", "ssh://git@h/r.git"),
            ("ssh://git:pw@h/r.git", "ssh://git@h/r.git"),
            ("https://tok@h/r.git#x", "https://h/r.git#…"),
            ("git@h:r.git", "git@h:r.git"),
            ("/srv/r.git", "/srv/r.git"),
            // Not URLs by the rules: cut at the last '@' all the same.
            ("https://u:p#s@h/r?t=1", "https://h/r?…"),
            ("https://u:p@s@h/r", "https://h/r"),
            ("https://u:p/s@h/r", "https://h/r"),
        ] {
            assert_eq!(redact(text), shown, "{text}");
        }
        assert_eq!(
            format!("{:?}", Url::parse("https://u:SECRET@h/").unwrap()),
            "https://h/"
        );
    }
}
