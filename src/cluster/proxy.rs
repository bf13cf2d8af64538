//! Which proxy, if any, carries the requests to the API server: the kubeconfig cluster's
//! `proxy-url` when it has one (as kubectl: then the environment is not read), else
//! `HTTPS_PROXY`/`https_proxy` for an `https://` server (`HTTP_PROXY`/`http_proxy` for
//! `http://`) unless `NO_PROXY`/`no_proxy` covers the server. kube itself matches
//! `NO_PROXY` against the proxy's host instead of the server's, so the choice is made
//! here and handed to kube as the configuration's `proxy_url`.

use std::net::IpAddr;

/// The proxy for `server`: `explicit` (the kubeconfig's `proxy-url`), else the one the
/// environment names (`env` reads a variable). `Err` names the variable whose value is
/// not a URL (without the value: it may carry a password).
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
        .is_some_and(|list| no_proxy_covers(&list, host, port));
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

/// Whether a `NO_PROXY` list covers `host:port`: `*`; an IP or a CIDR block; a domain,
/// which covers itself and its subdomains (`.example.com` and `*.example.com` only the
/// subdomains); any entry may end in `:port`.
pub fn no_proxy_covers(list: &str, host: &str, port: u16) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let ip: Option<IpAddr> = host.parse().ok();
    list.split([',', ' '])
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            if let Some((net, bits)) = entry.split_once('/') {
                return match (ip, net.parse::<IpAddr>(), bits.parse::<u8>()) {
                    (Some(ip), Ok(net), Ok(bits)) => in_block(ip, net, bits),
                    _ => false,
                };
            }
            let (name, want_port) = split_port(&entry);
            if want_port.is_some_and(|p| p != port) {
                return false;
            }
            let name = name.trim_end_matches('.');
            if let (Some(ip), Ok(entry_ip)) = (ip, name.parse::<IpAddr>()) {
                return ip == entry_ip;
            }
            if let Some(suffix) = name.strip_prefix("*.").or_else(|| name.strip_prefix('.')) {
                return host.ends_with(&format!(".{suffix}"));
            }
            host == name || host.ends_with(&format!(".{name}"))
        })
}

/// `host[:port]`, `[v6]:port` or a bare IPv6 address.
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (entry, None),
        };
    }
    match entry.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match p.parse() {
            Ok(p) => (h, Some(p)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    }
}

fn in_block(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_entries() {
        for (list, host, port, covered) in [
            ("*", "h.example", 443, true),
            ("127.0.0.1", "127.0.0.1", 6443, true),
            ("127.0.0.1:6443", "127.0.0.1", 6443, true),
            ("127.0.0.1:443", "127.0.0.1", 6443, false),
            ("127.0.0.0/8", "127.0.0.1", 6443, true),
            ("10.0.0.0/8", "127.0.0.1", 6443, false),
            ("127.0.0.2", "127.0.0.1", 6443, false),
            ("example.com", "example.com", 443, true),
            ("example.com", "api.example.com", 443, true),
            ("example.com", "badexample.com", 443, false),
            (".example.com", "example.com", 443, false),
            (".example.com", "api.example.com", 443, true),
            ("*.example.com", "api.example.com", 443, true),
            ("a.invalid, EXAMPLE.com", "api.example.com", 443, true),
            ("::1", "[::1]", 443, true),
            ("[::1]:443", "[::1]", 443, true),
            ("fd00::/8", "fd12::1", 443, true),
            ("", "example.com", 443, false),
        ] {
            assert_eq!(
                no_proxy_covers(list, host, port),
                covered,
                "{list} / {host}:{port}"
            );
        }
    }

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
