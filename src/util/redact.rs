//! Credentials out of URLs, wherever a URL can reach a message, a snapshot or a printed
//! manifest: kubeconfig server and proxy URLs, git remotes, error texts of kube and
//! libgit2 that quote them. One rule for all, so no path forgets it.

/// `url` without the password of its user info, and for HTTP(S) without the user too (a
/// token is often put there); an SSH user (`ssh://git@host/…`) is no secret and the URL
/// needs it.
pub fn url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string(); // scp-like `git@host:path` or a path: no password
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_string();
    };
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    if scheme.starts_with("http") || user.is_empty() {
        format!("{scheme}://{host}{path}")
    } else {
        format!("{scheme}://{user}@{host}{path}")
    }
}

/// `text` with [`url`] applied to every URL in it (a URL ends at white space, a quote, a
/// bracket or a comma).
pub fn urls_in(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let ends = |c: char| c.is_whitespace() || "\"'()<>[]{},`".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |p| p + 1);
        let end = rest[i..].find(ends).map_or(rest.len(), |e| i + e);
        out.push_str(&rest[..start]);
        if start < i {
            out.push_str(&url(&rest[start..end]));
        } else {
            out.push_str(&rest[start..end]); // no scheme: not a URL
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Escapes control characters other than newline and tab.
pub fn escape_controls(message: &str) -> String {
    if !message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return message.to_string();
    }
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials() {
        // Found by tests/cluster/secrets.rs: `commit --print-argo` printed the password.
        for (given, shown) in [
            (
                "https://bot:s3cret@git.example/a/b.git",
                "https://git.example/a/b.git",
            ),
            (
                "https://ghp_token@git.example/a.git",
                "https://git.example/a.git",
            ),
            (
                "ssh://git:s3cret@git.example:22/a.git",
                "ssh://git@git.example:22/a.git",
            ),
            ("ssh://git@git.example/a.git", "ssh://git@git.example/a.git"),
            ("git@git.example:a/b.git", "git@git.example:a/b.git"),
            ("file:///srv/git/a.git", "file:///srv/git/a.git"),
            ("https://git.example/a@b.git", "https://git.example/a@b.git"),
        ] {
            assert_eq!(url(given), shown, "{given}");
        }
    }

    #[test]
    fn urls_in_messages_lose_their_credentials() {
        // Seen with a kubeconfig server or proxy-url carrying user info: kube's errors and
        // clinv's own "(server)" suffix quoted the password.
        for (given, shown) in [
            (
                "cluster unreachable: refused (https://u:s3cret@127.0.0.1:1)",
                "cluster unreachable: refused (https://127.0.0.1:1)",
            ),
            (
                "configured proxy http://u:s3cret@p:1/ requires a feature",
                "configured proxy http://p:1/ requires a feature",
            ),
            (
                "a 'git+ssh://git:pw@h/x', then https://t@h",
                "a 'git+ssh://git@h/x', then https://h",
            ),
            ("no URL here: a@b", "no URL here: a@b"),
            ("://@", "://@"),
            ("ünïcode https://ü:ß@ö/ä ok", "ünïcode https://ö/ä ok"),
        ] {
            assert_eq!(urls_in(given), shown, "{given}");
        }
    }
}
