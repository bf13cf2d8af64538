//! Secrets against every command, on the real control plane: recognisable markers are
//! planted in spec values, `env:` overrides and value files, in a kubeconfig (the real
//! client key of the admin user, a bearer token and a password for two more contexts), in
//! Helm release records and in the process environment. Every command runs, succeeding
//! and failing, with and without `-v` / `DEBUG` / `RUST_LOG`; stdout, stderr, every file
//! clinv wrote (store, output folders, index cache), every object, ref and config of the
//! GitOps clone and its bare remote, and the live objects with their managedFields must
//! hold none of them — as text, as base64, or as the PEM body of a key. Store folders
//! must be 0700 and files 0600; clinv's files in the GitOps repository are ordinary repo
//! files.

use crate::agent::ensure_helm_releases;
use crate::loopback_proxy::Tinyproxy;
use crate::support::*;
use crate::{Plane, kubeconfig_with_server, plane, refused_server};
use base64::Engine;
use std::path::{Path, PathBuf};
use std::process::Command;

const DOMAIN: &str = "prod.acme.example";
/// Every marker starts with this; the example project plants its own as well.
const MARK: &str = "FAKESECRET";
/// Planted here on top of the example's markers.
const VALUE_FILE: &str = "FAKESECRET-valuefile-3e81c2";
const ENV_OVERRIDE: &str = "FAKESECRET-envoverride-a94d07";
const INLINE_VALUE: &str = "FAKESECRET-inline-value-6f2b19";
const KUBE_TOKEN: &str = "FAKESECRET-kube-token-5c0e77";
const KUBE_PASSWORD: &str = "FAKESECRET-kube-password-d1a4f0";
const GIT_URL_PASSWORD: &str = "FAKESECRET-git-url-password-77b2";
const INDEX_URL_PASSWORD: &str = "FAKESECRET-index-url-password-08c5";
const SERVER_URL_PASSWORD: &str = "FAKESECRET-server-url-password-1e9d";
const PROXY_URL_PASSWORD: &str = "FAKESECRET-proxy-url-password-5a37";
/// The password of a working proxy (tinyproxy with BasicAuth) in a kubeconfig proxy-url.
const AUTH_PROXY_PASSWORD: &str = "FAKESECRET-auth-proxy-password-b40c";
/// A `?token=` query in a kubeconfig server URL.
const SERVER_URL_QUERY: &str = "FAKESECRET-server-url-query-4c2e";
/// A failing exec credential plugin: its `env:` value and argument (in the kubeconfig),
/// and what it writes to stdout and stderr (in the plugin itself).
const PLUGIN_ENV: &str = "FAKESECRET-plugin-env-9b13";
const PLUGIN_ARG: &str = "FAKESECRET-plugin-arg-20fd";
const PLUGIN_STDOUT: &str = "FAKESECRET-plugin-stdout-e6a8";
const PLUGIN_STDERR: &str = "FAKESECRET-plugin-stderr-71c4";
/// The plugin's file name: all a message may say of it, with its exit status.
const PLUGIN: &str = "clinv-test-credential-plugin";
/// The process environment of every run.
const ENV: [(&str, &str); 5] = [
    ("AWS_SECRET_ACCESS_KEY", "FAKESECRET-aws-secret-9a1f"),
    ("GIT_PASSWORD", "FAKESECRET-git-password-2b7c"),
    ("HELM_KUBETOKEN", "FAKESECRET-helm-kubetoken-4d0e"),
    ("HELM_REGISTRY_PASSWORD", "FAKESECRET-helm-registry-61aa"),
    ("GITHUB_TOKEN", "FAKESECRET-github-token-c3f5"),
];

/// What must never show up: (what it is, the text searched for).
struct Needles(Vec<(String, String)>);

impl Needles {
    fn add(&mut self, what: &str, text: &str) {
        self.0.push((what.to_string(), text.to_string()));
    }

    /// A marker as text and as base64 (the whole 3-byte groups, so the encoding is the
    /// same wherever it starts in a base64'd blob aligned with it).
    fn marker(&mut self, marker: &str) {
        self.add(marker, marker);
        let aligned = &marker.as_bytes()[..marker.len() / 3 * 3];
        let b64 = base64::engine::general_purpose::STANDARD.encode(aligned);
        self.add(&format!("{marker} (base64)"), &b64);
    }

    /// A client key: its `client-key-data` base64 and every line of its PEM body.
    fn client_key(&mut self, what: &str, kubeconfig: &Path) {
        let config: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(kubeconfig).unwrap()).unwrap();
        let data = config["users"][0]["user"]["client-key-data"]
            .as_str()
            .expect("the kubeconfig has a client key")
            .to_string();
        let pem = base64::engine::general_purpose::STANDARD
            .decode(&data)
            .unwrap();
        let pem = String::from_utf8(pem).unwrap();
        let body: Vec<&str> = pem
            .lines()
            .filter(|l| !l.starts_with("-----") && l.len() >= 16)
            .collect();
        assert!(!body.is_empty(), "{what}: no PEM body in {pem}");
        self.add(&format!("{what} client-key-data"), &data);
        for (i, line) in body.iter().enumerate() {
            self.add(&format!("{what} PEM body line {}", i + 1), line);
        }
    }

    /// The needles found in `text`.
    fn hits(&self, text: &[u8]) -> Vec<&str> {
        let text = String::from_utf8_lossy(text);
        self.0
            .iter()
            .filter(|(_, n)| text.contains(n.as_str()))
            .map(|(w, _)| w.as_str())
            .collect()
    }
}

struct Fx {
    dir: tempfile::TempDir,
    project: tempfile::TempDir,
    /// The admin kubeconfig (real client key) plus token, password, URL-userinfo and
    /// proxy-password contexts.
    kubeconfig: PathBuf,
    /// The same credentials towards a server that refuses connections.
    dead: tempfile::NamedTempFile,
    nobody: PathBuf,
    needles: Needles,
    leaks: Vec<String>,
    runs: usize,
    /// Verbose runs that printed `[debug]` lines (the debug paths really ran).
    debugged: usize,
    /// The proxy that requires [`AUTH_PROXY_PASSWORD`] (context `authproxy-ctx`).
    proxy: Tinyproxy,
}

impl Fx {
    fn new(p: &Plane) -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let project = copy_tree(&example());
        let root = project.path();
        // More markers: a value file, an env override and an inline value of an entry
        // that has none in the example.
        let values = root.join("clusters/prod.acme.example/values/cilium-prod.yaml");
        let mut text = std::fs::read_to_string(&values).unwrap();
        text.push_str(&format!("bgp:\n  password: {VALUE_FILE}\n"));
        std::fs::write(&values, text).unwrap();
        let spec = root.join("clusters/prod.acme.example/cluster.lok8s.yaml");
        let text = std::fs::read_to_string(&spec).unwrap().replace(
            "    - metrics-server\n",
            &format!(
                "    - metrics-server:\n        env:\n          API_KEY: {ENV_OVERRIDE}\n        values:\n          auth: {{token: {INLINE_VALUE}}}\n"
            ),
        );
        std::fs::write(&spec, text).unwrap();

        let plugin = dir.path().join(PLUGIN);
        std::fs::write(
            &plugin,
            format!(
                "#!/bin/sh\necho \"{PLUGIN_STDOUT} $PLUGIN_TOKEN $*\"\necho \"{PLUGIN_STDERR} $PLUGIN_TOKEN $*\" >&2\nexit 1\n"
            ),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let kubeconfig = dir.path().join("kubeconfig");
        let proxy = Tinyproxy::start(Some(("ops", AUTH_PROXY_PASSWORD)));
        let proxy_url = proxy.url_with("ops", AUTH_PROXY_PASSWORD);
        std::fs::write(
            &kubeconfig,
            planted_kubeconfig(&p.admin, &plugin, &proxy_url),
        )
        .unwrap();
        // lok8s's project kubeconfig, used when no --kubeconfig is given.
        write(
            root,
            ".kubeconfig/prod-fsn1.yaml",
            std::fs::read(&kubeconfig).unwrap(),
        );
        let dead = kubeconfig_with_server(&kubeconfig, &refused_server());

        let mut needles = Needles(Vec::new());
        needles.add("the FAKESECRET prefix", MARK);
        let re = regex::Regex::new(r"FAKESECRET-[A-Za-z0-9-]+").unwrap();
        let mut planted: Vec<String> = Vec::new();
        for file in files_under(root) {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            planted.extend(re.find_iter(&text).map(|m| m.as_str().to_string()));
        }
        planted.sort();
        planted.dedup();
        for extra in [
            KUBE_TOKEN,
            KUBE_PASSWORD,
            GIT_URL_PASSWORD,
            INDEX_URL_PASSWORD,
            PLUGIN_STDOUT,
            PLUGIN_STDERR,
        ]
        .into_iter()
        .chain(ENV.iter().map(|(_, v)| *v))
        {
            planted.push(extra.to_string());
        }
        for m in &planted {
            needles.marker(m);
        }
        needles.client_key("admin", &p.admin);
        needles.client_key("nobody", &p.nobody);
        // The BasicAuth header the proxy gets.
        needles.add(
            "the auth proxy's Basic credentials",
            &base64::engine::general_purpose::STANDARD.encode(format!("ops:{AUTH_PROXY_PASSWORD}")),
        );

        // The planting worked: the inputs hold what the outputs must not.
        let inputs: Vec<u8> = files_under(root)
            .iter()
            .flat_map(|f| std::fs::read(f).unwrap())
            .collect();
        for m in [VALUE_FILE, ENV_OVERRIDE, INLINE_VALUE] {
            assert!(
                needles.hits(&inputs).contains(&m),
                "{m} is not planted in the project"
            );
        }
        assert!(
            planted.len() >= 6 + 3 + 4 + ENV.len(),
            "the example's own markers are missing: {planted:?}"
        );
        let kc = std::fs::read(&kubeconfig).unwrap();
        let in_kubeconfig = needles.hits(&kc);
        for m in [
            KUBE_TOKEN,
            KUBE_PASSWORD,
            SERVER_URL_QUERY,
            AUTH_PROXY_PASSWORD,
            PLUGIN_ENV,
            PLUGIN_ARG,
            "admin client-key-data",
        ] {
            assert!(in_kubeconfig.contains(&m), "{m} is not in the kubeconfig");
        }

        Fx {
            dir,
            project,
            kubeconfig,
            dead,
            nobody: p.nobody.clone(),
            needles,
            leaks: Vec::new(),
            runs: 0,
            debugged: 0,
            proxy,
        }
    }

    fn root(&self) -> &Path {
        self.project.path()
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn imported(&self) -> PathBuf {
        self.dir.path().join("imported")
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn remote(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    fn s(path: &Path) -> String {
        path.to_str().unwrap().to_string()
    }

    /// Runs clinv once plain and once with `-v`, `DEBUG=1` and `RUST_LOG=trace`, with the
    /// secret environment; scans both outputs. Returns the plain run.
    fn both(&mut self, args: &[String]) -> Run {
        let plain = self.once(args, false);
        self.once(args, true);
        plain
    }

    fn once(&mut self, args: &[String], verbose: bool) -> Run {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        if verbose {
            all.push("-v");
        }
        let mut cmd = clinv(&all)
            .env("CLINV_SNAPSHOTS", &Fx::s(&self.store()))
            .env("XDG_CACHE_HOME", &Fx::s(&self.out().join("cache")));
        for (k, v) in ENV {
            cmd = cmd.env(k, v);
        }
        if verbose {
            cmd = cmd.env("DEBUG", "1").env("RUST_LOG", "trace");
        }
        let run = cmd.run();
        self.runs += 1;
        if verbose && run.stderr.contains("[debug] ") {
            self.debugged += 1;
        }
        // A usage error would scan nothing of the command's real work (`diff` uses 2
        // for every error).
        if run.code == 2 && all[0] != "diff" {
            self.leaks.push(format!(
                "usage error: clinv {}
{}",
                all.join(" "),
                run.stderr
            ));
        }
        for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            let hits = self.needles.hits(text.as_bytes());
            if !hits.is_empty() {
                self.leaks.push(format!(
                    "clinv {} ({stream}): {hits:?}\n{text}",
                    all.join(" ")
                ));
            }
        }
        run
    }

    fn scan(&mut self, what: &str, bytes: &[u8]) {
        let hits = self.needles.hits(bytes);
        if !hits.is_empty() {
            self.leaks.push(format!("{what}: {hits:?}"));
        }
    }

    fn scan_files(&mut self, dir: &Path, skip_git_objects: bool) -> usize {
        let files = files_under(dir);
        let mut n = 0;
        for f in files {
            if skip_git_objects && f.components().any(|c| c.as_os_str() == "objects") {
                continue; // compressed: read through `git cat-file` instead
            }
            let bytes = std::fs::read(&f).unwrap();
            self.scan(&f.display().to_string(), &bytes);
            n += 1;
        }
        n
    }

    fn scan_git(&mut self, repo: &Path) {
        let out = git(repo, &["cat-file", "--batch-all-objects", "--batch"]);
        assert!(!out.is_empty(), "{}: no objects", repo.display());
        self.scan(&format!("git objects of {}", repo.display()), &out);
        let refs = git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"]);
        self.scan(&format!("git refs of {}", repo.display()), &refs);
        self.scan_files(repo, true);
    }
}

/// The admin kubeconfig with a second user holding a bearer token, a third holding a
/// password and a fourth whose exec credential plugin (`plugin`) fails, each with its own
/// context; the admin context stays current.
fn planted_kubeconfig(admin: &Path, plugin: &Path, auth_proxy: &str) -> String {
    let mut config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(admin).unwrap()).unwrap();
    let cluster = config["clusters"][0]["name"].as_str().unwrap().to_string();
    let user = |name: &str, user: serde_json::Value| {
        serde_json::to_value(serde_json::json!({"name": name, "user": user})).unwrap()
    };
    let context = |name: &str, user: &str| {
        serde_json::to_value(
            serde_json::json!({"name": name, "context": {"cluster": cluster, "user": user}}),
        )
        .unwrap()
    };
    let users = config["users"].as_array_mut().unwrap();
    users.push(user(
        "token-user",
        serde_json::to_value(serde_json::json!({"token": KUBE_TOKEN})).unwrap(),
    ));
    users.push(user(
        "basic-user",
        serde_json::to_value(serde_json::json!({"username": "ops", "password": KUBE_PASSWORD}))
            .unwrap(),
    ));
    users.push(user(
        "exec-user",
        serde_json::to_value(serde_json::json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": plugin,
            "args": ["--token", PLUGIN_ARG],
            "env": [{"name": "PLUGIN_TOKEN", "value": PLUGIN_ENV}],
        }}))
        .unwrap(),
    ));
    let contexts = config["contexts"].as_array_mut().unwrap();
    contexts.push(context("token-ctx", "token-user"));
    contexts.push(context("basic-ctx", "basic-user"));
    contexts.push(context("exec-ctx", "exec-user"));
    // The admin's credentials towards the same server, named by a URL with user info, and
    // through a proxy whose URL carries a password.
    let admin_user = config["users"][0]["name"].as_str().unwrap().to_string();
    let mut with_userinfo = config["clusters"][0].clone();
    let server = with_userinfo["cluster"]["server"]
        .as_str()
        .unwrap()
        .replacen(
            "https://",
            &format!("https://ops:{SERVER_URL_PASSWORD}@"),
            1,
        );
    with_userinfo["cluster"]["server"] = server.into();
    with_userinfo["name"] = "userinfo-cluster".into();
    let mut with_query = config["clusters"][0].clone();
    let server = with_query["cluster"]["server"].as_str().unwrap();
    let server = format!("{}/?token={SERVER_URL_QUERY}", server.trim_end_matches('/'));
    with_query["cluster"]["server"] = server.into();
    with_query["name"] = "query-cluster".into();
    let mut proxied = config["clusters"][0].clone();
    proxied["cluster"]["proxy-url"] = format!("http://ops:{PROXY_URL_PASSWORD}@127.0.0.1:9").into();
    proxied["name"] = "proxy-cluster".into();
    let mut auth_proxied = config["clusters"][0].clone();
    auth_proxied["cluster"]["proxy-url"] = auth_proxy.into();
    auth_proxied["name"] = "authproxy-cluster".into();
    let clusters = config["clusters"].as_array_mut().unwrap();
    clusters.extend([with_userinfo, with_query, proxied, auth_proxied]);
    let contexts = config["contexts"].as_array_mut().unwrap();
    for (name, cluster) in [
        ("userinfo-ctx", "userinfo-cluster"),
        ("query-ctx", "query-cluster"),
        ("proxy-ctx", "proxy-cluster"),
        ("authproxy-ctx", "authproxy-cluster"),
    ] {
        contexts.push(
            serde_json::to_value(serde_json::json!(
                {"name": name, "context": {"cluster": cluster, "user": admin_user}}
            ))
            .unwrap(),
        );
    }
    serde_saphyr::to_string(&config).unwrap()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            out.extend(files_under(&e.path()));
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    succeeded(Command::new("git").arg("-C").arg(dir).args(args))
}

fn a(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Store folders 0700, files 0600 (the lock and the journal included).
#[cfg(unix)]
fn assert_private(dir: &Path) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir), 0o700, "{}", dir.display());
    let mut n = 1;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            n += assert_private(&path);
        } else {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
            n += 1;
        }
    }
    n
}

fn no_command_leaks_a_planted_secret_anywhere_and_the_store_is_private() {
    let p = plane();
    p.crd_only();
    ensure_helm_releases(&p);
    let mut fx = Fx::new(&p);
    let root = Fx::s(fx.root());
    let kc = Fx::s(&fx.kubeconfig);
    let dead = Fx::s(fx.dead.path());
    let nobody = Fx::s(&fx.nobody);
    let out = Fx::s(&fx.out());
    let work = Fx::s(&fx.work());
    let remote = Fx::s(&fx.remote());
    let imported = Fx::s(&fx.imported());
    let index = Fx::s(&fixture("updates/index.json"));
    std::fs::create_dir_all(fx.out()).unwrap();

    // The GitOps side: a bare remote, a clone with an identity, a remote that does not
    // exist and one whose URL carries a password (https is not built in: it fails).
    let status = Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main", &remote])
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("git")
        .args(["clone", "-q", &format!("file://{remote}"), &work])
        .output()
        .unwrap();
    assert!(status.status.success());
    for args in [
        &["config", "user.name", "Inventory Bot"][..],
        &["config", "user.email", "bot@acme.example"],
        &["symbolic-ref", "HEAD", "refs/heads/main"],
        &["remote", "add", "gone", "file:///nonexistent/gitops.git"],
        &[
            "remote",
            "add",
            "leaky",
            &format!("https://bot:{GIT_URL_PASSWORD}@git.invalid/acme/gitops.git"),
        ],
    ] {
        git(fx.work().as_path(), args);
    }
    write(&fx.work(), "README.md", "GitOps\n");
    git(&fx.work(), &["add", "README.md"]);
    git(&fx.work(), &["commit", "-q", "-m", "init"]);
    git(&fx.work(), &["push", "-q", "origin", "main"]);

    let prod = |cmd: &[&str], rest: &[&str]| -> Vec<String> {
        let mut v = a(cmd);
        v.extend(a(&["--root", &root, "--domain", DOMAIN]));
        v.extend(a(rest));
        v
    };

    // Rendering.
    fx.both(&prod(&["render"], &[]));
    fx.both(&prod(&["render"], &["-o", "json"]));
    fx.both(&prod(&["render"], &["--out", &format!("{out}/render")]));
    fx.both(&prod(&["render"], &["--strict"]));
    fx.both(&a(&["crd"]));
    fx.both(&a(&["crd", "-o", "json"]));
    fx.both(&prod(&["addons"], &[]));
    fx.both(&prod(&["addons"], &["-o", "json"]));
    fx.both(&a(&["index", "--root", &root]));
    fx.both(&a(&[
        "index",
        "--root",
        &root,
        "--out",
        &format!("{out}/index.json"),
    ]));

    // Publishing: applied, dry run, queued, and each --strict failure.
    let run = fx.both(&prod(&["publish"], &["--kubeconfig", &kc]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, "clusterinventory/cluster");
    fx.both(&prod(&["publish"], &[])); // lok8s's project kubeconfig
    fx.both(&prod(&["publish"], &["--kubeconfig", &kc, "--dry-run"]));
    set_chart_version(fx.root(), "cilium", "1.20.1");
    let run = fx.both(&prod(&["publish"], &["--kubeconfig", &dead]));
    assert_has(&run.stderr, "recorded as pending snapshot");
    for (extra, code) in [
        (&["--kubeconfig", &dead][..], 5),
        (&["--kubeconfig", &nobody], 7),
        (&["--kubeconfig", &kc, "--context", "token-ctx"], 6),
        // The API server has no basic auth: the request counts as anonymous (403).
        (&["--kubeconfig", &kc, "--context", "basic-ctx"], 7),
        (&["--kubeconfig", &kc, "--context", "userinfo-ctx"], 0),
        // The proxy (127.0.0.1:9) refuses: the cluster is unreachable through it.
        (&["--kubeconfig", &kc, "--context", "proxy-ctx"], 5),
        (&["--kubeconfig", &kc, "--context", "query-ctx"], 0),
        (&["--kubeconfig", &kc, "--context", "authproxy-ctx"], 0),
        (&["--kubeconfig", &kc, "--context", "exec-ctx"], 4),
    ] {
        let mut rest = vec!["--strict"];
        rest.extend_from_slice(extra);
        let run = fx.both(&prod(&["publish"], &rest));
        assert_eq!(run.code, code, "{extra:?}: {}", run.stderr);
    }
    // The failing plugin is named, with its exit status, and nothing else of it is said.
    let run = fx.both(&prod(
        &["publish"],
        &["--kubeconfig", &kc, "--context", "exec-ctx"],
    ));
    let said = format!("credential plugin '{PLUGIN}' failed (exit status: 1)");
    assert!(run.stderr.contains(&said), "{}", run.stderr);

    // Replay and status.
    fx.both(&prod(
        &["replay"],
        &["--kubeconfig", &kc, "--context", "token-ctx", "--strict"],
    ));
    fx.both(&prod(&["replay"], &["--kubeconfig", &dead]));
    assert!(
        fx.proxy.log().contains("CONNECT 127.0.0.1:"),
        "the auth proxy carried nothing:\n{}",
        fx.proxy.log()
    );
    for ctx in ["exec-ctx", "query-ctx", "authproxy-ctx"] {
        fx.both(&prod(
            &["replay"],
            &["--kubeconfig", &kc, "--context", ctx, "--strict"],
        ));
        fx.both(&prod(&["status"], &["--kubeconfig", &kc, "--context", ctx]));
        fx.both(&prod(&["drift"], &["--kubeconfig", &kc, "--context", ctx]));
        fx.both(&prod(
            &["diff", "cluster", "latest"],
            &["--kubeconfig", &kc, "--context", ctx],
        ));
        fx.both(&prod(
            &["updates"],
            &["--index", &index, "--kubeconfig", &kc, "--context", ctx],
        ));
        fx.both(&a(&[
            "agent",
            "--once",
            "--index",
            &index,
            "--kubeconfig",
            &kc,
            "--context",
            ctx,
        ]));
    }
    fx.both(&prod(&["replay"], &["--kubeconfig", &kc, "--dry-run"]));
    let run = fx.both(&prod(&["replay"], &["--kubeconfig", &kc]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    fx.both(&prod(&["status"], &["--kubeconfig", &kc]));
    fx.both(&prod(&["status"], &["--kubeconfig", &dead]));
    fx.both(&prod(&["status"], &["--kubeconfig", &nobody, "--strict"]));

    // The store.
    fx.both(&prod(&["snapshots", "list"], &[]));
    fx.both(&prod(&["snapshots", "list"], &["-o", "json"]));
    fx.both(&prod(&["snapshots", "show", "latest"], &[]));
    fx.both(&prod(&["snapshots", "show", "latest~1"], &["-o", "json"]));
    let run = fx.both(&a(&["snapshots", "verify", "--root", &root]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    fx.both(&prod(
        &["snapshots", "export"],
        &[&format!("{out}/export.tar")],
    ));
    fx.both(&a(&[
        "snapshots",
        "import",
        "--root",
        &root,
        "--snapshots",
        &imported,
        &format!("{out}/export.tar"),
    ]));

    // GitOps: commit, push, a failing push, one to a URL with a password.
    let run = fx.both(&prod(&["commit"], &["--repo", &work, "--push"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    set_chart_version(fx.root(), "cilium", "1.20.2");
    fx.both(&prod(&["publish"], &["--kubeconfig", &kc]));
    fx.both(&prod(&["commit"], &["--repo", &work]));
    let run = fx.both(&prod(&["commit"], &["--repo", &work, "--push", "gone"]));
    assert_eq!(run.code, 1, "{}", run.stderr);
    let run = fx.both(&prod(&["commit"], &["--repo", &work, "--push", "leaky"]));
    assert_eq!(run.code, 1, "{}", run.stderr);
    fx.both(&prod(
        &["commit"],
        &["--repo", &work, "--print-argo", "--push", "leaky"],
    ));
    fx.both(&prod(&["commit"], &["--repo", &work, "--print-flux"]));
    fx.both(&prod(&["commit"], &["--repo", &work, "--push"]));

    // History, diff with store, git and live references, report, drift.
    fx.both(&prod(&["diff", "latest~1", "latest"], &[]));
    fx.both(&prod(&["diff", "git:HEAD~1", "latest"], &["--repo", &work]));
    fx.both(&prod(
        &["diff", "cluster", "latest"],
        &["--kubeconfig", &kc],
    ));
    fx.both(&prod(
        &["diff", "cluster", "latest"],
        &["--kubeconfig", &dead],
    ));
    fx.both(&prod(
        &["diff", &format!("{out}/render"), "cluster"],
        &["--kubeconfig", &kc, "--context", "token-ctx"],
    ));
    fx.both(&prod(&["log"], &[]));
    fx.both(&prod(&["log"], &["-o", "json"]));
    fx.both(&prod(&["log"], &["--repo", &work, "-o", "markdown"]));
    fx.both(&prod(
        &["report"],
        &["--out", &format!("{out}/report.html")],
    ));
    fx.both(&prod(
        &["report"],
        &["--repo", &work, "--out", &format!("{out}/report-git.html")],
    ));
    fx.both(&prod(&["drift"], &["--kubeconfig", &kc]));
    fx.both(&prod(&["drift"], &["--kubeconfig", &dead]));
    fx.both(&prod(&["drift"], &["--kubeconfig", &nobody]));

    // Updates from a local index and a URL with a password; the agent.
    fx.both(&prod(
        &["updates"],
        &["--index", &index, "--kubeconfig", &kc],
    ));
    fx.both(&prod(
        &["updates"],
        &["--index", &index, "--kubeconfig", &dead, "-o", "json"],
    ));
    fx.both(&prod(
        &["updates"],
        &[
            "--index",
            &index,
            "--from",
            &format!("{out}/render/clusterinventory.yaml"),
        ],
    ));
    let secret_url = format!(
        "https://ops:{INDEX_URL_PASSWORD}@{}/index.json?token={INDEX_URL_PASSWORD}",
        refused_server().trim_start_matches("https://")
    );
    let run = fx.both(&prod(
        &["updates"],
        &["--index", &secret_url, "--kubeconfig", &dead],
    ));
    assert_ne!(run.code, 0, "{}", run.stderr);
    let run = fx.both(&a(&[
        "agent",
        "--once",
        "--index",
        &index,
        "--kubeconfig",
        &kc,
    ]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    fx.both(&a(&[
        "agent",
        "--once",
        "--strict",
        "--kubeconfig",
        &nobody,
    ]));
    fx.both(&a(&[
        "agent",
        "--once",
        "--strict",
        "--kubeconfig",
        &kc,
        "--context",
        "token-ctx",
    ]));

    // gc last, so the runs above had history to read.
    fx.both(&prod(&["snapshots", "gc"], &["--keep", "1", "--dry-run"]));
    fx.both(&prod(&["snapshots", "gc"], &["--keep", "1"]));

    // Everything clinv wrote. The remote with the password is the test's own config.
    git(&fx.work(), &["remote", "remove", "leaky"]);
    let store = fx.store();
    let written = fx.scan_files(&store, false)
        + fx.scan_files(&fx.imported(), false)
        + fx.scan_files(&fx.out(), false);
    assert!(written >= 12, "too few files written: {written}");
    let (work, remote) = (fx.work(), fx.remote());
    fx.scan_git(&work);
    fx.scan_git(&remote);
    let (code, live, err) = p.kubectl(&[
        "get",
        "clusterinventory,crd",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(live.contains("managedFields") && live.contains("\"observedAddons\""));
    fx.scan("the live ClusterInventory and CRD", live.as_bytes());

    assert!(
        fx.debugged >= 20,
        "only {} -v runs printed debug lines",
        fx.debugged
    );
    assert!(
        fx.leaks.is_empty(),
        "{} leak(s) in {} runs:\n{}",
        fx.leaks.len(),
        fx.runs,
        fx.leaks.join("\n---\n")
    );

    // Modes: the store is private; clinv's GitOps files are ordinary repo files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let n = assert_private(&store) + assert_private(&fx.imported());
        let domain = store.join(DOMAIN);
        for f in ["segments/CURRENT", "lock", "lock.holder"] {
            assert!(domain.join(f).is_file(), "{f} missing");
        }
        assert!(n >= 8, "{n}");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let folder = fx.work().join(format!("clusters/{DOMAIN}/inventory"));
        let by_git = mode(&fx.work().join("README.md"));
        for f in files_under(&folder) {
            assert_eq!(mode(&f), by_git, "{} is not like git's files", f.display());
        }
        let tree = String::from_utf8(git(&fx.work(), &["ls-tree", "-r", "HEAD"])).unwrap();
        let ours: Vec<&str> = tree.lines().filter(|l| l.contains("/inventory/")).collect();
        assert_eq!(ours.len(), 3, "{tree}");
        assert!(ours.iter().all(|l| l.starts_with("100644 blob")), "{tree}");
    }
}

trials! {
    PlaneAndTinyproxy: [
        no_command_leaks_a_planted_secret_anywhere_and_the_store_is_private,
    ],
}
