//! Credentials only where they belong (issue 39, items 7, 8 and 11): every place clinv
//! sends a credential — a registry's `Authorization`, the password to a token realm,
//! git over HTTPS, the addon index, the kubeconfig's proxy — checked against one rule:
//! a credential goes only to the scheme, host and port it was given for (or that
//! issued the challenge), and never from HTTPS to plain HTTP.
//!
//! Each case puts a loopback server that *records what it received* ([`Recorder`]) on
//! "another host" — 127.0.0.2, or another port of 127.0.0.1 (another origin) — and
//! asserts that the secret never arrives there. The servers that point there are test
//! doubles too: the kit's real docker-registry cannot send a blob-upload `Location`, a
//! redirect or a token realm on another host, nor `Link` pages that never end, and
//! nginx's git server cannot redirect to another origin that then records.

use crate::https::make_pki;
use crate::loopback_proxy::Tinyproxy;
use crate::recorder::{Recorder, Reply, Request};
use crate::support::*;
use base64::Engine as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const DOMAIN: &str = "prod.acme.example";
const USER: &str = "ci";
const PASSWORD: &str = "FAKESECRET-hostile-registry-password-31f0";
const TOKEN: &str = "FAKESECRET-bearer-token-77aa";
const REPOSITORY: &str = "inventories/prod";

fn basic(user: &str, password: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    format!("Basic {}", b64.encode(format!("{user}:{password}")))
}

/// A directory with the kit's throwaway CA (`ca.crt`) and its server certificate for
/// 127.0.0.1/localhost, which every TLS recorder of a test presents.
fn pki() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    make_pki(dir.path());
    dir
}

fn ca(pki: &Path) -> String {
    pki.join("ca.crt").display().to_string()
}

/// How a hostile registry behaves besides answering a push as distribution does.
struct Hostile {
    /// Its `WWW-Authenticate` to a request without the test's credentials.
    challenge: String,
    /// The blob-upload `Location` it gives.
    location: String,
    /// Where its `HEAD` of a blob redirects (307), when it does.
    blob_redirect: Option<String>,
}

impl Hostile {
    fn basic(location: String) -> Hostile {
        Hostile {
            challenge: r#"Basic realm="hostile""#.into(),
            location,
            blob_redirect: None,
        }
    }

    /// The registry's own upload URL (relative, as docker-registry gives it).
    fn own_location() -> String {
        format!("/v2/{REPOSITORY}/blobs/uploads/1?_state=x")
    }

    /// A registry (TLS on 127.0.0.1 when `pki`, else plain HTTP) that takes `Basic` with
    /// the test's credentials or `Bearer TOKEN`, and answers what a push asks: no blob
    /// or manifest is there, uploads and manifests are taken.
    fn start(self, pki: Option<&Path>) -> Recorder {
        Recorder::start("127.0.0.1", pki, move |r| {
            let auth = r.header("authorization").unwrap_or_default();
            if auth != basic(USER, PASSWORD) && auth != format!("Bearer {TOKEN}") {
                return Reply::new(401).header("WWW-Authenticate", &self.challenge);
            }
            let t = r.target.as_str();
            match r.method.as_str() {
                "HEAD" if t.contains("/blobs/sha256:") => match &self.blob_redirect {
                    Some(to) => Reply::new(307).header("Location", to),
                    None => Reply::new(404),
                },
                "POST" if t.ends_with("/blobs/uploads/") => {
                    Reply::new(202).header("Location", &self.location)
                }
                "PUT" if t.contains("/manifests/") || t.contains("/blobs/uploads/") => {
                    Reply::new(201)
                }
                _ => Reply::new(404),
            }
        })
    }
}

/// How a push authenticates.
#[derive(Clone, Copy)]
enum Creds {
    /// `--creds-env` with the test's user and password.
    Password,
    /// `--token-env` with [`TOKEN`].
    Token,
}

/// `clinv push` of the example's prod domain to `registry` (a fresh store each time).
fn push(registry: &Recorder, pki: &Path, creds: Creds, extra: &[&str]) -> Run {
    let project = copy_tree(&example());
    let store = tempfile::tempdir().unwrap();
    let url = format!("oci://{}/{REPOSITORY}", registry.authority());
    let cmd = clinv(&["push", &url])
        .project(project.path(), DOMAIN)
        .args(["--ca-file", &ca(pki)])
        .args(extra)
        .store(store.path())
        .env("DOCKER_CONFIG", "/nonexistent");
    match creds {
        Creds::Password => cmd
            .args(["--creds-env", "REGISTRY_AUTH"])
            .env("REGISTRY_AUTH", &format!("{USER}:{PASSWORD}")),
        Creds::Token => cmd.args(["--token-env", "CI_TOKEN"]).env("CI_TOKEN", TOKEN),
    }
    .run()
}

/// Nothing of the test's secrets (the password, its Basic form, the token) in any
/// request `server` received.
fn got_no_secret(server: &Recorder, name: &str) {
    let requests = server.requests();
    for r in &requests {
        let text = r.text();
        assert!(
            !text.contains(PASSWORD)
                && !text.contains(&basic(USER, PASSWORD))
                && !text.contains(TOKEN)
                && r.header("authorization").is_none(),
            "{name} received a credential: {} {} {:?}",
            r.method,
            r.target,
            r.headers
        );
    }
}

/// Item 7: a blob-upload `Location` on another origin (object storage) is followed
/// without the registry's `Authorization` — Basic or a `--token-env` token; a 401 there
/// is not answered with the registry's credentials; a `Location` on plain HTTP from an
/// HTTPS registry is refused before anything is sent, naming where it pointed.
fn a_blob_upload_location_elsewhere_gets_no_credentials() {
    let pki = pki();
    let storage = Recorder::start("127.0.0.1", Some(pki.path()), |_| Reply::new(201));
    let location = storage.url("/uploads/1?_state=x");
    for creds in [Creds::Password, Creds::Token] {
        let registry = Hostile::basic(location.clone()).start(Some(pki.path()));
        let pushed = push(&registry, pki.path(), creds, &[]);
        assert_eq!(pushed.code, 0, "{}", pushed.stderr);
        no_secret(&pushed);
        assert!(!registry.authorized().is_empty(), "the registry got them");
    }
    assert!(
        storage.requests().iter().any(|r| r.method == "PUT"),
        "the blobs went to the Location"
    );
    got_no_secret(&storage, "the storage on another port");

    let asking = Recorder::start("127.0.0.1", Some(pki.path()), |r| {
        match r.header("authorization") {
            Some(_) => Reply::new(201),
            None => Reply::new(401).header("WWW-Authenticate", r#"Basic realm="storage""#),
        }
    });
    let registry = Hostile::basic(asking.url("/uploads/1")).start(Some(pki.path()));
    let refused = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(
        &refused.stderr,
        &format!(
            "blob upload: https://{} asked for credentials (HTTP 401): the registry's are not sent to another host",
            asking.authority()
        ),
    );
    no_secret(&refused);
    got_no_secret(&asking, "the storage that asked for credentials");

    let plain = Recorder::start("127.0.0.2", None, |_| Reply::new(201));
    let registry = Hostile::basic(plain.url("/uploads/1?_state=x")).start(Some(pki.path()));
    let refused = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(
        &refused.stderr,
        &format!(
            "blob upload: it sent the request on to plain-HTTP http://{}: refused",
            plain.authority()
        ),
    );
    assert_lacks(&refused.stderr, "_state");
    no_secret(&refused);
    assert!(plain.requests().is_empty(), "{:?}", plain.requests());
}

/// Item 8: the password goes to the token realm a registry names only over HTTPS — on
/// another host too (Docker Hub's and Harbor's realms are); a plain-HTTP realm of an
/// HTTPS registry is refused with its host named and nothing sent to it; a registry
/// that is itself plain HTTP (`--plain-http`, loopback) may name a plain-HTTP realm.
fn a_token_realm_gets_the_password_only_over_https() {
    let pki = pki();
    let token = || Reply::new(200).body(format!(r#"{{"token":"{TOKEN}"}}"#));
    let bearer = |realm: &str| format!(r#"Bearer realm="{realm}",service="hostile""#);
    let registry_with = |realm: &Recorder, tls: Option<&Path>| {
        let mut hostile = Hostile::basic(Hostile::own_location());
        hostile.challenge = bearer(&realm.url("/token"));
        hostile.start(tls)
    };

    let plain_realm = Recorder::start("127.0.0.2", None, move |_| token());
    let registry = registry_with(&plain_realm, Some(pki.path()));
    let refused = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(
        &refused.stderr,
        &format!(
            "its token service http://{} is plain HTTP: refused, the credentials are not sent in the clear",
            plain_realm.authority()
        ),
    );
    no_secret(&refused);
    assert!(
        plain_realm.requests().is_empty(),
        "{:?}",
        plain_realm.requests()
    );

    let expected = basic(USER, PASSWORD);
    let realm = Recorder::start("127.0.0.1", Some(pki.path()), move |r| {
        match r.header("authorization") == Some(expected.as_str()) {
            true => token(),
            false => Reply::new(401),
        }
    });
    let registry = registry_with(&realm, Some(pki.path()));
    let pushed = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    assert!(!realm.authorized().is_empty(), "the https realm got them");
    assert!(registry.received(&format!("Bearer {TOKEN}")));
    assert!(!registry.received(&basic(USER, PASSWORD)));

    // An https realm that redirects to plain HTTP: refused there too, nothing sent.
    let plain_target = Recorder::start("127.0.0.2", None, move |_| token());
    let to = plain_target.url("/token");
    let moving = Recorder::start("127.0.0.1", Some(pki.path()), move |_| {
        Reply::new(302).header("Location", &to)
    });
    let registry = registry_with(&moving, Some(pki.path()));
    let refused = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(
        &refused.stderr,
        &format!("plain-HTTP http://{}: refused", plain_target.authority()),
    );
    no_secret(&refused);
    assert!(plain_target.requests().is_empty());

    let lab_realm = Recorder::start("127.0.0.2", None, move |_| token());
    let lab = registry_with(&lab_realm, None);
    let pushed = push(&lab, pki.path(), Creds::Password, &["--plain-http"]);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    assert!(!lab_realm.authorized().is_empty());
}

/// A redirect the registry answers with (a blob check sent to object storage) is
/// followed without the `Authorization` (ureq's `redirect_auth_headers` is `Never`),
/// and from an HTTPS registry never to plain HTTP.
fn a_redirect_is_followed_without_credentials_and_never_to_plain_http() {
    let pki = pki();
    let storage = Recorder::start("127.0.0.1", Some(pki.path()), |_| Reply::new(404));
    let mut hostile = Hostile::basic(Hostile::own_location());
    hostile.blob_redirect = Some(storage.url("/blob"));
    let registry = hostile.start(Some(pki.path()));
    let pushed = push(&registry, pki.path(), Creds::Password, &[]);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    assert!(!storage.requests().is_empty(), "the redirect was followed");
    got_no_secret(&storage, "the redirect's target");

    let plain = Recorder::start("127.0.0.2", None, |_| Reply::new(404));
    let mut hostile = Hostile::basic(Hostile::own_location());
    hostile.blob_redirect = Some(plain.url("/blob"));
    let registry = hostile.start(Some(pki.path()));
    let refused = push(&registry, pki.path(), Creds::Token, &[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(
        &refused.stderr,
        &format!(
            "blob check: it sent the request on to plain-HTTP http://{}: refused",
            plain.authority()
        ),
    );
    assert!(plain.requests().is_empty(), "{:?}", plain.requests());
}

/// A registry (TLS, anonymous) whose tag list is `page(n)` for its n-th page; manifests
/// answer 500 (so a client that got past the list fails at once, not after thousands of
/// requests). A test double: docker-registry's pages end.
fn tag_registry(
    pki: &Path,
    page: impl Fn(usize) -> Reply + Send + Sync + 'static,
) -> (Recorder, Arc<AtomicUsize>) {
    let pages = Arc::new(AtomicUsize::new(0));
    let counted = pages.clone();
    let registry = Recorder::start("127.0.0.1", Some(pki), move |r: &Request| {
        if r.target.contains("/tags/list") {
            page(counted.fetch_add(1, Ordering::SeqCst))
        } else {
            Reply::new(500).body("manifests are not served here")
        }
    });
    (registry, pages)
}

fn log_oci(registry: &Recorder, pki: &Path) -> Run {
    let url = format!("oci://{}/{REPOSITORY}", registry.authority());
    clinv(&["log", "--oci", &url, "--ca-file", &ca(pki)])
        .env("DOCKER_CONFIG", "/nonexistent")
        .run()
}

/// `{"tags": [...]}` with a `Link` to `next` when given.
fn tags_page(tags: &[String], next: Option<String>) -> Reply {
    let body = serde_json::json!({ "name": REPOSITORY, "tags": tags }).to_string();
    let reply = Reply::new(200)
        .header("Content-Type", "application/json")
        .body(body);
    match next {
        Some(path) => reply.header("Link", &format!("<{path}>; rel=\"next\"")),
        None => reply,
    }
}

/// Item 11: a tag list is read within bounds — 100 pages, 10,000 tags, no page twice —
/// and past one `log --oci` stops with an error naming the registry and the bound
/// (it grew past 1.7 GB in 30 s). The hostile pages stop after 1,000 so that a client
/// without bounds ends too (and then fails on the manifests, not with these errors).
fn tag_list_pages_are_bounded() {
    let pki = pki();
    let next = |n: usize| Some(format!("/v2/{REPOSITORY}/tags/list?n=1000&last=t{n}"));
    let (endless, pages) = tag_registry(pki.path(), move |n| {
        tags_page(&[format!("t{n}")], next(n).filter(|_| n < 1000))
    });
    let run = log_oci(&endless, pki.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        &format!(
            "{}: tag list: more than 100 pages (Link headers); clinv reads at most 100",
            endless.authority()
        ),
    );
    assert_eq!(pages.load(Ordering::SeqCst), 100);

    let (looping, pages) = tag_registry(pki.path(), move |n| {
        tags_page(&["t".into()], next(0).filter(|_| n < 1000))
    });
    let run = log_oci(&looping, pki.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "tag list: its Link header names a page it already sent (a loop)",
    );
    assert_eq!(pages.load(Ordering::SeqCst), 2);

    let (crowded, pages) = tag_registry(pki.path(), move |n| {
        let tags: Vec<String> = (0..6000).map(|i| format!("p{n}-{i}")).collect();
        tags_page(&tags, next(n).filter(|_| n < 1))
    });
    let run = log_oci(&crowded, pki.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "tag list: more than 10000 tags; clinv reads at most 10000",
    );
    assert_eq!(pages.load(Ordering::SeqCst), 2);
}

/// One tag with control characters in a registry's list does not fail `log --oci`: it
/// is skipped and said (how many, the first escaped); the valid tags are still read.
fn a_tag_with_control_characters_is_skipped_and_said() {
    let pki = pki();
    let registry = Recorder::start("127.0.0.1", Some(pki.path()), |r| {
        if r.target.contains("/tags/list") {
            let tags = ["bad\u{7}tag\u{1b}[31m".to_string(), "v1".to_string()];
            tags_page(&tags, None)
        } else {
            Reply::new(404)
        }
    });
    let run = log_oci(&registry, pki.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(
        &run.stderr,
        &format!(
            "oci://{}/{REPOSITORY}: 1 tag(s) that are not valid tag names (the first: 'bad\\u{{7}}tag\\u{{1b}}[31m') — skipped",
            registry.authority()
        ),
    );
    assert_lacks(&run.stderr, "\u{7}");
    let asked = registry.requests();
    assert!(
        asked.iter().any(|r| r.target.ends_with("/manifests/v1")),
        "the valid tag was read: {asked:?}"
    );
}

/// pkt-line framing of git's smart protocol.
fn pkt(line: &str) -> String {
    format!("{:04x}{line}", line.len() + 4)
}

/// A git server's answer to the receive-pack advertisement of an empty repository.
fn advertisement() -> Reply {
    let refs = pkt("0000000000000000000000000000000000000000 capabilities^{}\0report-status\n");
    let body = format!("{}0000{refs}0000", pkt("# service=git-receive-pack\n"));
    Reply::new(200)
        .header(
            "Content-Type",
            "application/x-git-receive-pack-advertisement",
        )
        .body(body)
}

/// A clone of an empty bare repository whose `origin` is `url`, trusting the CA in
/// `pki` (`http.sslCAInfo`), with `config` set; its path.
fn git_work(dir: &Path, url: &str, pki: &Path, config: &[(&str, &str)]) -> std::path::PathBuf {
    use crate::git_server::git_in;
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    git_in(
        dir,
        &home,
        &["init", "-q", "--bare", "-b", "main", "inv.git"],
    );
    let bare = format!("file://{}", dir.join("inv.git").display());
    git_in(dir, &home, &["clone", "-q", &bare, "work"]);
    let work = dir.join("work");
    let g = |args: &[&str]| git_in(&work, &home, args);
    g(&["remote", "set-url", "origin", url]);
    g(&["config", "user.name", "Inventory Bot"]);
    g(&["config", "user.email", "bot@acme.example"]);
    g(&["config", "http.sslCAInfo", &ca(pki)]);
    for (k, v) in config {
        g(&["config", k, v]);
    }
    g(&["checkout", "-q", "-B", "main"]);
    work
}

/// `clinv commit --push` of the example's prod domain to `work`'s origin, with `args`.
fn commit_push(dir: &Path, work: &Path, args: &[&str], extra: &[(&str, &str)]) -> Run {
    let project = copy_tree(&example());
    let mut cmd = clinv(&["commit", "--domain", DOMAIN, "--push", "--repo"])
        .args([work])
        .args(args)
        .root(project.path())
        .store(dir.join("store"))
        .env("HOME", dir.join("home").to_str().unwrap())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0");
    for (k, v) in extra {
        cmd = cmd.env(k, v);
    }
    cmd.run()
}

/// Git over HTTPS: when the first request is redirected to another origin, the
/// credentials given for the remote (its URL's user info, `--token-env`) do not follow
/// to the rest of the push there, and a credential helper is asked for the new URL, not
/// the old one (git's `credential_from_url` on the new base). The other origin records.
fn git_credentials_do_not_follow_a_redirect_to_another_origin() {
    let pki = pki();
    let other = Recorder::start("127.0.0.1", Some(pki.path()), |r| {
        if r.header("authorization").is_none() && r.method == "POST" {
            return Reply::new(401).header("WWW-Authenticate", r#"Basic realm="other""#);
        }
        match r.method.as_str() {
            "GET" => advertisement(),
            _ => Reply::new(500),
        }
    });
    let to = other.url("");
    let hostile = Recorder::start("127.0.0.1", Some(pki.path()), move |r| {
        Reply::new(301).header("Location", &format!("{to}{}", r.target))
    });
    let remote = hostile
        .url("/inv.git")
        .replace("https://", &format!("https://bot:{PASSWORD}@"));
    for (n, token) in [(1, false), (2, true)] {
        let dir = tempfile::tempdir().unwrap();
        let url = if token {
            hostile.url("/inv.git")
        } else {
            remote.clone()
        };
        let work = git_work(dir.path(), &url, pki.path(), &[]);
        let extra = [("CI_TOKEN", TOKEN)];
        let run = match token {
            true => commit_push(dir.path(), &work, &["--token-env", "CI_TOKEN"], &extra),
            false => commit_push(dir.path(), &work, &[], &[]),
        };
        assert_ne!(run.code, 0, "push {n}: {}", run.stderr);
        no_secret(&run);
        got_no_secret(&other, "the other origin");
    }
    assert!(!hostile.authorized().is_empty(), "its own origin got them");
    assert!(other.requests().iter().any(|r| r.method == "POST"));

    // A helper for the first origin only: not asked for the second.
    let asking = Recorder::start("127.0.0.1", Some(pki.path()), |r| {
        match r.header("authorization") {
            Some(_) => advertisement(),
            None => Reply::new(401).header("WWW-Authenticate", r#"Basic realm="other""#),
        }
    });
    let to = asking.url("");
    let hostile = Recorder::start("127.0.0.1", Some(pki.path()), move |r| {
        Reply::new(301).header("Location", &format!("{to}{}", r.target))
    });
    let dir = tempfile::tempdir().unwrap();
    let helper = format!("!f() {{ echo username=bot; echo password={PASSWORD}; }}; f");
    let key = format!("credential.{}.helper", hostile.url(""));
    let work = git_work(
        dir.path(),
        &hostile.url("/inv.git"),
        pki.path(),
        &[(&key, &helper)],
    );
    let run = commit_push(dir.path(), &work, &[], &[]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    no_secret(&run);
    got_no_secret(&asking, "the origin the helper has no credentials for");
    assert!(!hostile.requests().is_empty());
}

/// The addon index: the user info of an `--index` URL (sent as Basic to its own origin)
/// and its query (a token) do not follow a redirect to another origin, and a redirect to
/// plain HTTP is refused (`https_only`) with nothing sent there.
fn an_index_redirect_elsewhere_gets_no_credentials() {
    let pki = pki();
    let index = std::fs::read(fixture("updates/index.json")).unwrap();
    let target = Recorder::start("127.0.0.1", Some(pki.path()), move |_| {
        Reply::new(200).body(index.clone())
    });
    let plain = Recorder::start("127.0.0.2", None, |_| Reply::new(200).body("{}"));
    for (to, ok) in [
        (target.url("/moved.json"), true),
        (plain.url("/moved.json"), false),
    ] {
        let from = Recorder::start("127.0.0.1", Some(pki.path()), move |_| {
            Reply::new(302).header("Location", &to)
        });
        let url = format!(
            "https://bot:{PASSWORD}@{}/index.json?token={TOKEN}",
            from.authority()
        );
        let dump = fixture("updates/kubectl-get-list.yaml");
        let run = clinv(&["updates", "--from", dump.to_str().unwrap(), "--index", &url])
            .args(["--index-ca", &ca(pki.path())])
            .env(
                "XDG_CACHE_HOME",
                tempfile::tempdir().unwrap().path().to_str().unwrap(),
            )
            .run();
        assert_eq!(run.code == 0, ok, "{}", run.stderr);
        no_secret(&run);
        assert!(
            from.received(&basic("bot", PASSWORD)),
            "its own origin got the user info"
        );
    }
    assert_eq!(target.requests().len(), 1);
    got_no_secret(&target, "the index's new origin");
    assert!(plain.requests().is_empty(), "{:?}", plain.requests());
}

/// The kubeconfig's `proxy-url` BasicAuth goes to the proxy only (in its `CONNECT`),
/// never to the API server at the tunnel's end; the kubeconfig's token goes to the API
/// server only. Real tinyproxy with BasicAuth; the API server is a recorder (what it
/// received is the point).
fn proxy_credentials_go_only_to_the_proxy() {
    const PROXY_PASSWORD: &str = "FAKESECRET-proxy-password-41b2";
    let api = Recorder::start("127.0.0.1", None, |_| {
        Reply::new(500).body(r#"{"kind":"Status","message":"recorded"}"#)
    });
    let proxy = Tinyproxy::start(Some(("ops", PROXY_PASSWORD)));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write(
        dir.path(),
        "kubeconfig",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    proxy-url: {}\nusers:\n- name: u\n  user:\n    token: {TOKEN}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n",
            api.url(""),
            proxy.url_with("ops", PROXY_PASSWORD)
        ),
    );
    let project = copy_tree(&example());
    let run = clinv(&["status", "--timeout", "10"])
        .project(project.path(), DOMAIN)
        .kubeconfig(&kubeconfig)
        .store(dir.path().join("store"))
        .run();
    no_secret(&run);
    assert!(proxy.tunnels(&api.authority()) >= 1, "{}", proxy.log());
    let received = api.requests();
    assert!(!received.is_empty(), "{}\n{}", run.stderr, proxy.log());
    for r in &received {
        let text = r.text();
        assert!(
            !text.contains(PROXY_PASSWORD) && r.header("proxy-authorization").is_none(),
            "the API server received the proxy's credentials:\n{text}"
        );
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
}

trials! {
    Nothing: [
        a_blob_upload_location_elsewhere_gets_no_credentials,
        a_token_realm_gets_the_password_only_over_https,
        a_redirect_is_followed_without_credentials_and_never_to_plain_http,
        tag_list_pages_are_bounded,
        a_tag_with_control_characters_is_skipped_and_said,
        git_credentials_do_not_follow_a_redirect_to_another_origin,
        an_index_redirect_elsewhere_gets_no_credentials,
    ],
    Tinyproxy: [proxy_credentials_go_only_to_the_proxy],
}
