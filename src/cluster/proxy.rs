//! Which proxy, if any, carries the requests to the API server.
//!
//! The kubeconfig cluster's `proxy-url` when it has one (as kubectl: then the environment
//! is not read), else `HTTPS_PROXY`/`https_proxy` for an `https://` server
//! (`HTTP_PROXY`/`http_proxy` for `http://`) unless `NO_PROXY`/`no_proxy` covers the
//! server. kube itself matches `NO_PROXY` against the proxy's host instead of the server's,
//! so the choice is made here and handed to kube as the configuration's `proxy_url`.

use crate::util::no_proxy;

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
    let host = server.host().unwrap_or_default();
    let port = server.port_u16().unwrap_or(match server.scheme_str() {
        Some("http") => 80,
        _ => 443,
    });
    let bypass = nonempty("NO_PROXY")
        .or_else(|| nonempty("no_proxy"))
        .is_some_and(|list| no_proxy::covers(&list, host, port));
    if bypass {
        return Ok(None);
    }
    parse(&url)
        .map(Some)
        .ok_or_else(|| format!("{name} is not a URL"))
}

/// A proxy URL; one without a scheme is `http://` (as curl and Go read it).
fn parse(url: &str) -> Option<http::Uri> {
    let url = url.trim();
    let url = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    url.parse::<http::Uri>()
        .ok()
        .filter(|u| u.authority().is_some())
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
}
