//! Which proxy, if any, carries the requests to the API server.
//!
//! The kubeconfig cluster's `proxy-url` when it has one (as kubectl: then the environment
//! is not read), else `HTTPS_PROXY`/`https_proxy` for an `https://` server
//! (`HTTP_PROXY`/`http_proxy` for `http://`) unless `NO_PROXY`/`no_proxy` covers the
//! server. kube itself matches `NO_PROXY` against the proxy's host instead of the server's,
//! so the choice is made here and handed to kube as the configuration's `proxy_url`.

use crate::util::no_proxy;
use crate::util::url::Url;

/// The proxy for `server`: `explicit` (the kubeconfig's `proxy-url`), else the one the
/// environment names (`env` reads a variable).
///
/// `Err` names the variable whose value is not a URL (without the value: it may carry a
/// password).
pub fn choose(
    explicit: Option<&str>,
    server: &http::Uri,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<http::Uri>, String> {
    let nonempty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if let Some(url) = explicit.filter(|u| !u.trim().is_empty()) {
        return parse(url)
            .map(Some)
            .ok_or_else(|| "proxy-url is not a URL".into());
    }
    let names = if server.scheme_str() == Some("http") {
        ["HTTP_PROXY", "http_proxy"]
    } else {
        ["HTTPS_PROXY", "https_proxy"]
    };
    let Some((name, url)) = names.iter().find_map(|n| nonempty(n).map(|v| (*n, v))) else {
        return Ok(None);
    };
    let (host, port) = match Url::parse(&server.to_string()) {
        Ok(server) => (server.host(), server.port_or_default()),
        Err(_) => (String::new(), 443),
    };
    let bypass = nonempty("NO_PROXY")
        .or_else(|| nonempty("no_proxy"))
        .is_some_and(|list| no_proxy::covers(&list, &host, port));
    if bypass {
        return Ok(None);
    }
    parse(&url)
        .map(Some)
        .ok_or_else(|| format!("{name} is not a URL"))
}

/// A proxy URL; one without a scheme is `http://` (as curl and Go read it). Its user
/// info is kube's proxy BasicAuth, so it is read by the one URL reader's rules.
fn parse(url: &str) -> Option<http::Uri> {
    let url = Url::parse_or_http(url).ok()?;
    url.with_credentials().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_is_chosen_like_kubectl() {
        let server: http::Uri = "https://127.0.0.1:6443".parse().unwrap();
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                vars.iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        let chosen =
            |explicit, vars| choose(explicit, &server, env(vars)).map(|u| u.map(|u| u.to_string()));
        assert_eq!(chosen(None, &[]), Ok(None));
        assert_eq!(
            chosen(None, &[("HTTPS_PROXY", "http://p:3128")]),
            Ok(Some("http://p:3128/".into()))
        );
        assert_eq!(
            chosen(None, &[("https_proxy", "p:3128")]),
            Ok(Some("http://p:3128/".into()))
        );
        // HTTP_PROXY is for http:// servers only.
        assert_eq!(chosen(None, &[("HTTP_PROXY", "http://p:3128")]), Ok(None));
        assert_eq!(
            chosen(
                None,
                &[("HTTPS_PROXY", "http://p:3128"), ("NO_PROXY", "127.0.0.1")]
            ),
            Ok(None)
        );
        // NO_PROXY is about the server, not the proxy.
        assert_eq!(
            chosen(None, &[("HTTPS_PROXY", "http://p:3128"), ("no_proxy", "p")]),
            Ok(Some("http://p:3128/".into()))
        );
        // The kubeconfig's proxy-url wins and ignores NO_PROXY.
        assert_eq!(
            chosen(
                Some("http://k:8080"),
                &[("HTTPS_PROXY", "http://p:3128"), ("NO_PROXY", "*")]
            ),
            Ok(Some("http://k:8080/".into()))
        );
        assert_eq!(
            chosen(None, &[("HTTPS_PROXY", "http://u:s3cret@[bad")]),
            Err("HTTPS_PROXY is not a URL".into())
        );
    }

    /// The server and the proxy are read by the one URL reader: an IPv6 server still
    /// matches `NO_PROXY`, and a proxy password with a raw `@` is refused instead of
    /// sent split at another `@` than the one redaction cuts at (it was sent).
    #[test]
    fn an_ipv6_server_and_a_proxy_password_are_read_as_the_other_transports_read_them() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                vars.iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        let v6: http::Uri = "https://[::1]:6443".parse().unwrap();
        let proxy: &[(&str, &str)] = &[("HTTPS_PROXY", "http://p:3128"), ("NO_PROXY", "::1")];
        assert_eq!(choose(None, &v6, env(proxy)), Ok(None));
        let server: http::Uri = "https://10.0.0.1:6443".parse().unwrap();
        let bad: &[(&str, &str)] = &[("HTTPS_PROXY", "http://u:s3c@ret@p:3128")];
        assert_eq!(
            choose(None, &server, env(bad)),
            Err("HTTPS_PROXY is not a URL".into())
        );
        let good: &[(&str, &str)] = &[("HTTPS_PROXY", "http://u:s3c%40ret@p:3128")];
        let chosen = choose(None, &server, env(good)).unwrap().unwrap();
        assert_eq!(chosen.host(), Some("p"));
    }
}
