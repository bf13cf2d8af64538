//! The one sanitiser for text that leaves the process or reaches the store.
//!
//! Credentials out of URLs (kubeconfig server and proxy URLs, git remotes, index and
//! `file://` URLs, error texts of kube and libgit2 that quote them), credential-plugin
//! failures reduced to the plugin's name and exit status, control characters escaped. One
//! rule for all, so no path forgets it.

/// `url` without the password of its user info, and for HTTP(S) without the user too.
///
/// A token is often put there; an SSH user (`ssh://git@host/…`) is no secret and the URL
/// needs it. The query and the fragment go too (`?token=…`, `#access_token=…`): what
/// stays of them is `?…` or `#…`, so a reader sees that the URL had one. Read by the
/// transports' own rules ([`crate::util::url`]); a text that is no valid URL loses all
/// up to its last `@`.
pub fn url(url: &str) -> String {
    crate::util::url::redact(url)
}

/// A failure detail as it may be printed and stored.
///
/// Credential-plugin failures reduced to the plugin's command name and exit status
/// ([`plugin_failures`]), URLs without credentials, query or fragment ([`urls_in`]),
/// credentials a server echoed cut ([`credentials`]), control characters escaped.
pub fn detail(text: &str) -> String {
    escape_controls(&credentials(&urls_in(&plugin_failures(text))))
}

/// What stands for a credential cut from a text.
const CUT: &str = "…";

/// `text` without the credentials a server may echo back in an error.
///
/// Some servers quote the request they refused (issue #48): the value of an
/// `Authorization:` (or `Proxy-Authorization:`) header, a `Bearer <token>` and a
/// `Basic <base64 of user:password>` anywhere are replaced by `…`; the scheme stays, so a
/// reader still sees which kind was refused. A challenge's parameters (`Bearer
/// realm="…"`) and plain words (`basic auth`, `bearer token`) are kept.
pub fn credentials(text: &str) -> String {
    use std::sync::LazyLock;
    static HEADER: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)\b((?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)(?:([a-z][a-z0-9_-]*)[ \t]+)?([^\s"'\\,;)}\]]+)"#,
        )
        .expect("valid regex")
    });
    static SCHEME: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(bearer|basic)[ \t]+([A-Za-z0-9._~+/-]+=*)").expect("valid regex")
    });
    let lower = text.to_ascii_lowercase();
    if !["authorization", "bearer", "basic"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return text.to_string();
    }
    let headers = HEADER.replace_all(text, |c: &regex::Captures<'_>| match c.get(2) {
        Some(scheme) => format!("{}{} {CUT}", &c[1], scheme.as_str()),
        None => format!("{}{CUT}", &c[1]),
    });
    SCHEME
        .replace_all(&headers, |c: &regex::Captures<'_>| {
            let (whole, token) = (&c[0], &c[2]);
            let end = c.get(0).map_or(0, |m| m.end());
            let parameter = token.ends_with('=') && headers[end..].starts_with('"');
            let secret = if c[1].eq_ignore_ascii_case("basic") {
                basic_credential(token)
            } else {
                opaque(token)
            };
            if parameter || !secret {
                whole.to_string()
            } else {
                format!("{} {CUT}", &c[1])
            }
        })
        .into_owned()
}

/// A Basic credential is the base64 of `user:password`.
fn basic_credential(token: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(token)
        .is_ok_and(|plain| plain.contains(&b':'))
}

/// A token, not a word: it holds a digit or punctuation, or is too long for a word.
fn opaque(token: &str) -> bool {
    token.len() >= 20 || token.bytes().any(|b| !b.is_ascii_alphabetic() && b != b'-')
}

/// `text` with each of `secrets` (what clinv itself sent: a token, a password) replaced by
/// `…`, wherever a server echoed it; secrets shorter than 4 bytes are left (they would cut
/// ordinary words).
pub fn sent(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().map(|s| s.trim()).filter(|s| s.len() >= 4) {
        if out.contains(secret) {
            out = out.replace(secret, CUT);
        }
    }
    out
}

/// Cuts what kube's texts for a failing exec credential plugin quote.
///
/// kube's texts for a failing exec credential plugin quote the whole command (its
/// environment, the plugin's `env:` values among them, and its arguments) and its stdout
/// and stderr; the texts for unparsable plugin output quote that output. Both are cut:
/// what stays is `credential plugin '<name>' failed (<exit status>)` or the phrase
/// without the quoted output. Everything after such a text is dropped. clinv now runs
/// plugins itself (`cluster::plugin`, the same wording); this stays for any kube text.
pub fn plugin_failures(text: &str) -> String {
    const RUN: &str = "auth exec command '";
    const STATUS: &str = "' failed with status ";
    if let Some(i) = text.find(RUN) {
        let rest = &text[i + RUN.len()..];
        let (name, status) = match rest.find(STATUS) {
            Some(j) => {
                let status = &rest[j + STATUS.len()..];
                let status = status.split(": Output").next().unwrap_or_default();
                let status: String = status
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(40)
                    .collect();
                (program_name(&rest[..j]), status)
            }
            None => (None, "unknown status".to_string()),
        };
        let name = name.unwrap_or_else(|| "?".into());
        return format!("{}credential plugin '{name}' failed ({status})", &text[..i]);
    }
    for phrase in ["failed to parse auth exec output", "failed exec auth"] {
        if let Some(i) = text.find(phrase) {
            return text[..i + phrase.len()].to_string();
        }
    }
    text.to_string()
}

/// The file name of the program in the `Debug` text of a `std::process::Command`
/// (`cd "dir" && env -u K K="v" "program" "arg"…`), or `None` when it cannot be found.
fn program_name(command: &str) -> Option<String> {
    // Tokens: a bare prefix and an optional quoted part (with `\`-escapes).
    let mut tokens: Vec<(String, Option<String>)> = Vec::new();
    let mut chars = command.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ').is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut bare = String::new();
        while let Some(c) = chars.next_if(|c| *c != ' ' && *c != '"') {
            bare.push(c);
        }
        let quoted = if chars.next_if_eq(&'"').is_some() {
            let mut q = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            q.push(n);
                        }
                    }
                    '"' => break,
                    c => q.push(c),
                }
            }
            Some(q)
        } else {
            None
        };
        tokens.push((bare, quoted));
    }
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            (b, None) if b == "cd" => i += 3, // `cd "dir" &&`
            (b, None) if b == "env" || b == "-i" => i += 1,
            (b, None) if b == "-u" => i += 2,
            (b, Some(_)) if b.ends_with('=') => i += 1, // `KEY="value"`
            (b, None) if b.contains('=') => i += 1,
            (b, Some(program)) if b.is_empty() || b == "[" => {
                let name = program.rsplit('/').next().unwrap_or(program);
                return Some(escape_line(name));
            }
            _ => return None,
        }
    }
    None
}

/// `text` with every control character escaped, newline and tab included: for one value
/// on one line of data (an id, a hash, a server read from the store or a live object).
pub fn escape_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` with [`url`] applied to every URL in it (a URL ends at white space, a quote, a
/// bracket or a comma).
pub fn urls_in(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let ends = |c: char| c.is_whitespace() || "\"'()<>[]{},`".contains(c);
    let hard_stop = |c: char| c.is_whitespace() || "\"<>`".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |p| p + 1);
        let hard = rest[i..].find(hard_stop).map_or(rest.len(), |e| i + e);
        let mut end = rest[i..hard].find(ends).map_or(hard, |e| i + e);
        // A password may hold `,`, `'`, `(`, `#`, `/`… (raw or not): the URL runs at least
        // to the last `@` before white space, where a transport may take the user info
        // to end.
        if let Some(at) = rest[end..hard].rfind('@') {
            let at = end + at;
            end = rest[at..hard].find(ends).map_or(hard, |e| at + e);
        }
        // Punctuation that ends the sentence is not part of the URL (`…json?…: refused`).
        while end > i + 3 && rest[..end].ends_with(['.', ',', ':', ';', '!']) {
            end -= 1;
        }
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
    fn urls_lose_their_query_and_fragment() {
        // Found by tests/cluster/secrets.rs: a kubeconfig server `?token=` was printed
        // after every failure and stored as the snapshot's server.
        for (given, shown) in [
            (
                "https://127.0.0.1:6443/?token=s3cret",
                "https://127.0.0.1:6443/?…",
            ),
            (
                "https://127.0.0.1:6443?token=s3cret",
                "https://127.0.0.1:6443?…",
            ),
            ("https://u:p@h/x?token=s3cret#frag", "https://h/x?…"),
            (
                "file:///srv/index.json?token=s3cret",
                "file:///srv/index.json?…",
            ),
            ("https://h/a#access_token=s3cret", "https://h/a#…"),
            ("ssh://git:pw@h/x?k=v", "ssh://git@h/x?…"),
            ("https://h/x?…", "https://h/x?…"),
        ] {
            assert_eq!(url(given), shown, "{given}");
        }
        assert_eq!(
            urls_in("refused (https://h:1/?token=s3cret), then http://p:3128#x ok"),
            "refused (https://h:1/?…), then http://p:3128#… ok"
        );
        assert_eq!(
            urls_in("index https://h/i.json?…: refused; see https://h/a."),
            "index https://h/i.json?…: refused; see https://h/a."
        );
    }

    #[test]
    fn credential_plugin_failures_keep_only_the_name_and_the_status() {
        // kube's text for a failing exec plugin: the Command's Debug (env and args), the
        // exit status and the Output's Debug (stdout, stderr).
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args([
            "-c",
            "echo out-s3cret; echo err-s3cret >&2; exit 3",
            "arg-s3cret",
        ])
        .env("PLUGIN_TOKEN", "env-s3cret \"quoted\"")
        .env_remove("DROPPED")
        .current_dir("/");
        let out = cmd.output().unwrap();
        let text = format!(
            "auth error: auth exec command '{cmd:?}' failed with status {}: {out:?}",
            out.status
        );
        assert!(
            text.contains("err-s3cret") && text.contains("env-s3cret"),
            "{text}"
        );
        let cleaned = detail(&format!("cluster unreachable: {text}\nmore"));
        assert_eq!(
            cleaned,
            "cluster unreachable: auth error: credential plugin 'sh' failed (exit status: 3)"
        );
        for (given, shown) in [
            (
                "failed to parse auth exec output: line 1: token-s3cret",
                "failed to parse auth exec output",
            ),
            (
                "failed exec auth: Executing \"gcloud\" \"s3cret\" failed",
                "failed exec auth",
            ),
            (
                "auth exec command 'unparsable' failed with status exit status: 1: Output",
                "credential plugin '?' failed (exit status: 1)",
            ),
            ("connection refused", "connection refused"),
        ] {
            assert_eq!(plugin_failures(given), shown, "{given}");
        }
        assert_eq!(escape_line("a\nb\u{1b}"), "a\\nb\\u{1b}");
    }

    #[test]
    fn credentials_a_server_echoes_are_cut() {
        // Issue #48, finding 12: a 401 whose message echoed the Authorization header.
        for (given, shown) in [
            (
                "401: Authorization: Bearer abc.def.ghi rejected",
                "401: Authorization: Bearer … rejected",
            ),
            ("authorization=Basic dXNlcjpwYXNz", "authorization=Basic …"),
            (
                r#"{"Authorization":"token ghp_abc123","x":1}"#,
                r#"{"Authorization":"token …","x":1}"#,
            ),
            (
                r#"{\"authorization\": \"Bearer x1\"}"#,
                r#"{\"authorization\": \"Bearer …\"}"#,
            ),
            (
                "Proxy-Authorization: Basic dXNlcjpwYXNz\nnext",
                "Proxy-Authorization: Basic …\nnext",
            ),
            ("Authorization: s3cret-raw", "Authorization: …"),
            ("got bearer eyJhbGciOi.x.y from", "got bearer … from"),
            ("sent Basic dXNlcjpwYXNz, refused", "sent Basic …, refused"),
            ("BEARER abcdefghijklmnopqrstuvwxyz", "BEARER …"),
        ] {
            assert_eq!(credentials(given), shown, "{given}");
            assert_eq!(detail(given), escape_controls(shown), "{given}");
        }
        for kept in [
            r#"Bearer realm="https://auth.example/token",service="r",error="invalid_token""#,
            r#"Basic realm="registry""#,
            "basic auth failed: no bearer token given",
            r#"clusterrole.rbac.authorization.k8s.io "x" not found"#,
            "Basic abcdefgh (no colon inside)",
            "connection refused",
        ] {
            assert_eq!(credentials(kept), kept);
        }
    }

    #[test]
    fn what_clinv_sent_is_cut_wherever_it_is_echoed() {
        assert_eq!(
            sent(
                "denied for tok3n-value and pw (pw)",
                &["tok3n-value", "pw", " "]
            ),
            "denied for … and pw (pw)"
        );
        assert_eq!(sent("nothing", &[]), "nothing");
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
