//! Leaf: whether `NO_PROXY` exempts a host, read as curl and Go read it. Both channels
//! that reach a server through a proxy — the cluster and an HTTPS Git remote — ask it.

use std::net::IpAddr;

/// Whether a `NO_PROXY` list covers `host:port`.
///
/// Whether a `NO_PROXY` list covers `host:port`: `*`; an IP or a CIDR block; a domain,
/// which covers itself and its subdomains (`.example.com` and `*.example.com` only the
/// subdomains); any entry may end in `:port`.
pub fn covers(list: &str, host: &str, port: u16) -> bool {
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
            assert_eq!(covers(list, host, port), covered, "{list} / {host}:{port}");
        }
    }
}
