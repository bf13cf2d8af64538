//! The whole GitOps path as a team runs it, through Flux's real controllers:
//! `clinv commit --push` → a git server → **source-controller** clones it →
//! **kustomize-controller** builds and applies it → `ClusterInventory/cluster`.
//!
//! Both controllers (`scripts/flux-controllers build`, found through
//! `CLINV_FLUX_CONTROLLERS`) run as plain processes against the test API server: their
//! CRDs applied server-side, no containers, no webhooks, no notification-controller. What
//! the cluster gets is exactly what `clinv commit --print-flux` printed, plus the Secret
//! it told the user to create.

use crate::support::*;
use crate::{Plane, plane};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Field manager of the objects the tests install themselves (CRDs, namespace, the
/// printed Flux objects, as a user's `kubectl apply --server-side` would).
const MANAGER: &str = "clinv-tests";
/// Where Flux's objects live (`RUNTIME_NAMESPACE` of the controllers).
const NS: &str = "flux-system";
const DOMAIN: &str = "prod.acme.example";
const USER: &str = "bot";
const PASSWORD: &str = "FAKESECRET-flux-https-token-3d7a";
/// The loopback ports this module may take (other helpers use other ranges).
const PORTS: std::ops::Range<u16> = 39000..39500;
/// How long a controller gets to reconcile after being asked to.
const RECONCILE: Duration = Duration::from_secs(120);

/// The cache folder of `scripts/flux-controllers build`, or why there is none.
pub fn controllers() -> Result<PathBuf, String> {
    let hint = "run scripts/test (it builds scripts/flux-controllers)";
    let Some(dir) = std::env::var_os("CLINV_FLUX_CONTROLLERS").map(PathBuf::from) else {
        return Err(format!(
            "no Flux controllers: CLINV_FLUX_CONTROLLERS unset; {hint}"
        ));
    };
    for file in ["source-controller", "kustomize-controller", "versions"] {
        if !dir.join(file).is_file() {
            return Err(format!(
                "no Flux controllers: CLINV_FLUX_CONTROLLERS={} holds no {file}; {hint}",
                dir.display()
            ));
        }
    }
    Ok(dir)
}

/// The controllers and the git server the tests push to (nginx + fcgiwrap).
pub fn present() -> Result<(), String> {
    controllers()?;
    crate::git_https::present()
}

/// `n` free loopback ports of [`PORTS`], from a start that differs between processes.
fn free_ports(n: usize) -> Vec<u16> {
    let len = PORTS.end - PORTS.start;
    let start = (std::process::id() % u32::from(len)) as u16;
    let mut held = Vec::new();
    let mut ports = Vec::new();
    for i in 0..len {
        let port = PORTS.start + (start + i) % len;
        if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            held.push(listener);
            ports.push(port);
            if ports.len() == n {
                return ports;
            }
        }
    }
    panic!("fewer than {n} free ports in {PORTS:?}");
}

/// Whether a controller-runtime health endpoint answers `GET /readyz` with 200.
fn ready(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")
}

/// One controller process; its stderr (its log) goes to `log`.
struct Running {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

/// source-controller and kustomize-controller running against the plane, their CRDs
/// installed. Dropped: the Flux objects of `flux-system` are deleted while the controllers
/// still run (their finalizers), then the controllers are killed and the plane reset; when
/// the test failed, their logs are printed.
pub struct Flux<'a> {
    p: &'a Plane,
    running: Vec<Running>,
    started: Instant,
}

impl<'a> Flux<'a> {
    /// Installs the CRDs and namespace, starts both controllers (logs under `dir`) and
    /// waits until both report ready.
    pub fn start(p: &'a Plane, dir: &Path) -> Flux<'a> {
        let bin = controllers().unwrap_or_else(|why| panic!("{why}"));
        install_crds(p, &bin.join("crds"));
        let started = Instant::now();
        let kubeconfig = p.admin.to_str().unwrap();
        let [metrics_s, health_s, storage, metrics_k, health_k] = free_ports(5)[..] else {
            unreachable!()
        };
        let storage_dir = dir.join("storage");
        std::fs::create_dir_all(&storage_dir).unwrap();
        let storage_addr = format!("--storage-addr=127.0.0.1:{storage}");
        let storage_adv = format!("--storage-adv-addr=127.0.0.1:{storage}");
        let storage_path = format!("--storage-path={}", storage_dir.display());
        let source = [storage_addr.as_str(), &storage_adv, &storage_path];
        let mut flux = Flux {
            p,
            running: Vec::new(),
            started,
        };
        for (name, metrics, health, extra) in [
            ("source-controller", metrics_s, health_s, &source[..]),
            ("kustomize-controller", metrics_k, health_k, &[][..]),
        ] {
            let metrics = format!("--metrics-addr=127.0.0.1:{metrics}");
            let health_addr = format!("--health-addr=127.0.0.1:{health}");
            let mut args = vec![
                "--enable-leader-election=false",
                "--events-addr=",
                "--watch-all-namespaces=true",
                "--log-level=debug",
                &metrics,
                &health_addr,
            ];
            args.extend_from_slice(extra);
            flux.spawn(name, &bin.join(name), &args, kubeconfig, dir);
            flux.wait_ready(name, health);
        }
        eprintln!(
            "flux controllers ready {} ms after start",
            started.elapsed().as_millis()
        );
        flux
    }

    fn spawn(&mut self, name: &'static str, bin: &Path, args: &[&str], kc: &str, dir: &Path) {
        let log = dir.join(format!("{name}.log"));
        let home = dir.join("controller-home");
        std::fs::create_dir_all(&home).unwrap();
        let child = Command::new(bin)
            .args(args)
            .env("KUBECONFIG", kc)
            .env("RUNTIME_NAMESPACE", NS)
            .env("HOME", &home)
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", bin.display()));
        self.running.push(Running { name, child, log });
    }

    /// Waits until the controller `name` answers on its health port; panics (printing its
    /// log through Drop) when it exits or takes more than 60 s.
    fn wait_ready(&mut self, name: &str, health: u16) {
        let until = Instant::now() + Duration::from_secs(60);
        let running = self.running.iter_mut().find(|r| r.name == name).unwrap();
        while !ready(health) {
            if let Ok(Some(status)) = running.child.try_wait() {
                panic!("{name} exited: {status}");
            }
            assert!(Instant::now() < until, "{name} not ready after 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The controllers' logs (the last lines of each).
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for r in &self.running {
            let text = std::fs::read_to_string(&r.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(80)..];
            all.push_str(&format!("--- {} ({}) ---\n", r.name, r.log.display()));
            for line in tail {
                all.push_str(line);
                all.push('\n');
            }
        }
        all
    }

    /// Seconds since the controllers were started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

impl Drop for Flux<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the Flux controllers' logs:\n{}", self.logs());
        }
        let p = self.p;
        // The Kustomization first: its finalizer prunes what it applied.
        for kind in [
            "kustomizations.kustomize.toolkit.fluxcd.io",
            "gitrepositories.source.toolkit.fluxcd.io",
        ] {
            p.kubectl(&["delete", kind, "--all", "-n", NS, "--timeout=60s"]);
        }
        for r in &mut self.running {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
        // Whatever a dead controller left: without its finalizer it goes.
        for kind in [
            "kustomizations.kustomize.toolkit.fluxcd.io",
            "gitrepositories.source.toolkit.fluxcd.io",
        ] {
            let (_, names, _) = p.kubectl(&["get", kind, "-n", NS, "-o", "name"]);
            for name in names.lines() {
                let clear = r#"{"metadata":{"finalizers":null}}"#;
                p.kubectl(&["patch", name, "-n", NS, "--type=merge", "-p", clear]);
            }
        }
        p.kubectl(&["delete", "secrets", "--all", "-n", NS]);
        p.reset();
    }
}

/// Applies every CRD of `dir` server-side, waits until each is Established, and creates
/// the namespace `flux-system`.
fn install_crds(p: &Plane, dir: &Path) {
    let mut names = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for doc in documents(&text) {
            assert_eq!(
                doc["kind"],
                "CustomResourceDefinition",
                "{}",
                file.display()
            );
            names.push(format!("crd/{}", doc["metadata"]["name"].as_str().unwrap()));
        }
        let (code, _, err) = p.kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            &format!("--field-manager={MANAGER}"),
            "-f",
            file.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{}: {err}", file.display());
    }
    for want in [
        "crd/gitrepositories.source.toolkit.fluxcd.io",
        "crd/kustomizations.kustomize.toolkit.fluxcd.io",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for name in &names {
        let established = poll(Duration::from_secs(60), || {
            let (_, out, _) = p.kubectl(&[
                "get",
                name,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
            ]);
            out == "True"
        });
        assert!(established, "{name} is not Established after 60 s");
    }
    let ns = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NS}\n");
    let (code, _, err) = p.kubectl_as(
        &p.admin,
        &[
            "apply",
            "--server-side",
            &format!("--field-manager={MANAGER}"),
            "-f",
            "-",
        ],
        Some(&ns),
    );
    assert_eq!(code, 0, "{err}");
}

/// Calls `done` every 250 ms until it is true (true) or `limit` has passed (false).
fn poll(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The YAML documents of a multi-document text, as JSON values (empty ones dropped).
fn documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap()
        .into_iter()
        .filter(|doc| !doc.is_null())
        .collect()
}

/// A project copy, a bare repository served over HTTPS with basic auth by
/// [`GitServer`](crate::git_https::GitServer), and a clone of it whose `origin` is the HTTPS
/// URL: the password from git's store helper, the server's private CA from
/// `http.sslCAInfo` — how a CI job that runs `clinv commit --push` is set up.
struct Https {
    dir: tempfile::TempDir,
    server: crate::git_https::GitServer,
}

impl Https {
    fn new() -> Https {
        let dir = tempfile::tempdir().unwrap();
        let server = crate::git_https::GitServer::start(&dir.path().join("srv"), USER, PASSWORD);
        let fx = Https { dir, server };
        std::fs::create_dir_all(fx.home()).unwrap();
        let project = copy_tree(&example());
        std::fs::rename(project.path(), fx.root()).unwrap();
        let repos = fx.server.dir.join("repos");
        git(&repos, &["init", "-q", "--bare", "-b", "main", "inv.git"]);
        let file = format!("file://{}", fx.bare().display());
        git(fx.dir.path(), &["clone", "-q", &file, "work"]);
        let work = fx.work();
        let credentials = fx.dir.path().join("credentials");
        let port = fx.server.port;
        std::fs::write(
            &credentials,
            format!("https://{USER}:{PASSWORD}@127.0.0.1:{port}\n"),
        )
        .unwrap();
        let helper = format!("store --file={}", credentials.display());
        let ca = fx.server.ca();
        for (key, value) in [
            ("remote.origin.url", fx.server.url("/inv.git").as_str()),
            ("user.name", "Inventory Bot"),
            ("user.email", "bot@acme.example"),
            ("http.sslCAInfo", ca.to_str().unwrap()),
            ("credential.helper", &helper),
        ] {
            git(&work, &["config", key, value]);
        }
        git(&work, &["checkout", "-q", "-B", "main"]);
        fx
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn bare(&self) -> PathBuf {
        self.server.dir.join("repos/inv.git")
    }

    /// `clinv commit --domain DOMAIN --repo WORK ARGS…`, as a CI job runs it.
    fn commit(&self, args: &[&str]) -> Run {
        let root = self.root();
        let work = self.work();
        let mut all = vec![
            "--root",
            root.to_str().unwrap(),
            "commit",
            "--domain",
            DOMAIN,
            "--repo",
            work.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        let run = clinv(&all)
            .env(
                "CLINV_SNAPSHOTS",
                self.dir.path().join("store").to_str().unwrap(),
            )
            .env("HOME", self.home().to_str().unwrap())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .run();
        assert!(
            !run.stdout.contains(PASSWORD) && !run.stderr.contains(PASSWORD),
            "the password was printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        run.success()
    }

    /// The commit `main` names on the server.
    fn tip(&self) -> String {
        git(&self.bare(), &["rev-parse", "main"]).trim().to_string()
    }

    /// The ClusterInventory committed on the server's `main` under `path`.
    fn committed_inventory(&self, path: &str) -> Value {
        let files = git(
            &self.bare(),
            &["ls-tree", "-r", "--name-only", "main", "--", path],
        );
        files
            .lines()
            .filter(|f| f.ends_with(".yaml"))
            .flat_map(|f| documents(&git(&self.bare(), &["show", &format!("main:{f}")])))
            .find(|d| d["kind"] == "ClusterInventory")
            .unwrap_or_else(|| panic!("no ClusterInventory committed under {path}: {files}"))
    }
}

/// What `--print-flux` printed: the documents, and the two objects' names.
struct Printed {
    text: String,
    source: String,
    kustomization: String,
    path: String,
}

/// `commit --print-flux`: applies exactly what it printed (server-side, as a user would)
/// after creating the Secret its advice names, with the placeholders filled in.
fn apply_printed_flux(p: &Plane, fx: &Https, secret: &[(&str, &str)]) -> Printed {
    let run = fx.commit(&["--print-flux"]);
    let docs = documents(&run.stdout);
    let find = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind)
            .unwrap_or_else(|| panic!("--print-flux printed no {kind}:\n{}", run.stdout))
    };
    let (repo, k) = (find("GitRepository"), find("Kustomization"));
    let source = repo["metadata"]["name"].as_str().unwrap().to_string();
    // #26 finding 4: a remote that needs credentials needs spec.secretRef, or
    // source-controller cannot clone it and nothing ever becomes Ready.
    let secret_name = repo["spec"]["secretRef"]["name"]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "--print-flux gave the GitRepository no spec.secretRef:\n{}",
                run.stdout
            )
        });
    assert_eq!(k["spec"]["sourceRef"]["name"], source.as_str());
    let create = run
        .stderr
        .lines()
        .find_map(|l| l.split_once("kubectl -n flux-system create secret generic "))
        .map(|(_, rest)| rest.trim())
        .unwrap_or_else(|| panic!("--print-flux says no Secret to create:\n{}", run.stderr));
    let mut command = create.to_string();
    for (placeholder, value) in secret {
        command = command.replace(placeholder, value);
    }
    let mut args = vec!["-n", NS, "create", "secret", "generic"];
    args.extend(command.split_whitespace());
    assert_eq!(args[5], secret_name, "{create}");
    assert!(!command.contains('<'), "a placeholder is left: {create}");
    let (code, _, err) = p.kubectl(&args);
    assert_eq!(code, 0, "kubectl {create}: {err}");
    let (code, _, err) = p.kubectl_as(
        &p.admin,
        &[
            "apply",
            "--server-side",
            &format!("--field-manager={MANAGER}"),
            "-f",
            "-",
        ],
        Some(&run.stdout),
    );
    assert_eq!(code, 0, "{err}\n{}", run.stdout);
    Printed {
        text: run.stdout.clone(),
        source,
        kustomization: k["metadata"]["name"].as_str().unwrap().to_string(),
        path: k["spec"]["path"]
            .as_str()
            .unwrap()
            .trim_start_matches("./")
            .to_string(),
    }
}

/// Waits until the Flux object `kind/name` is `Ready=True` with `field` (a JSON path under
/// `.status`) at `revision`; panics with its status after [`RECONCILE`].
fn wait_synced(p: &Plane, flux: &Flux, kind: &str, name: &str, field: &str, revision: &str) {
    let mut last = Value::Null;
    let synced = poll(RECONCILE, || {
        let (code, out, _) = p.kubectl(&["get", kind, name, "-n", NS, "-o", "json"]);
        if code != 0 {
            return false;
        }
        last = serde_json::from_str(&out).unwrap();
        let status = &last["status"];
        let ready = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        let at = field.split('.').fold(status, |v, key| &v[key]);
        ready && at == revision
    });
    assert!(
        synced,
        "{kind}/{name} not Ready at {revision} after {RECONCILE:?}:\n{:#}",
        last["status"]
    );
    eprintln!(
        "{kind}/{name} Ready at {revision}, {:.1} s after the controllers started",
        flux.elapsed()
    );
}

/// `flux reconcile`'s request: a new `reconcile.fluxcd.io/requestedAt` annotation.
fn request_reconcile(p: &Plane, kind: &str, name: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let annotation = format!("reconcile.fluxcd.io/requestedAt={now}");
    let (code, _, err) = p.kubectl(&["annotate", "--overwrite", "-n", NS, kind, name, &annotation]);
    assert_eq!(code, 0, "{err}");
}

/// The live ClusterInventory is what was committed at the tip (and clinv renders from the
/// project, apart from `renderedAt`), applied by kustomize-controller for `printed`'s
/// Kustomization.
fn assert_applied_by_flux(p: &Plane, fx: &Https, printed: &Printed) -> Value {
    let (code, out, err) = p.kubectl(&[
        "get",
        "clusterinventory",
        "cluster",
        "--show-managed-fields",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "no ClusterInventory/cluster: {err}");
    let live: Value = serde_json::from_str(&out).unwrap();
    let committed = fx.committed_inventory(&printed.path);
    assert_eq!(live["spec"], committed["spec"]);
    let mut render = rendered(&fx.root(), DOMAIN)["spec"].clone();
    let mut spec = live["spec"].clone();
    for s in [&mut render, &mut spec] {
        s.as_object_mut().unwrap().remove("renderedAt");
    }
    assert_eq!(spec, render);
    let labels = &live["metadata"]["labels"];
    assert_eq!(
        labels["kustomize.toolkit.fluxcd.io/name"],
        printed.kustomization.as_str()
    );
    assert_eq!(labels["kustomize.toolkit.fluxcd.io/namespace"], NS);
    let managers: Vec<(&str, &str)> = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or_default(),
                m["operation"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(managers, [("kustomize-controller", "Apply")]);
    live
}

/// Test 1 of #26: `commit --push` over HTTPS (basic auth, a private CA) → source-controller
/// → kustomize-controller → ClusterInventory; then a pin bump pushed and reconciled on
/// request, as `flux reconcile kustomization --with-source` does.
fn flux_controllers_reconcile_a_push_over_https_and_a_pin_bump() {
    let p = plane();
    p.reset();
    let fx = Https::new();
    let flux = Flux::start(&p, &fx.dir.path().join("flux"));

    let run = fx.commit(&["--push"]);
    assert!(
        run.stderr.contains("pushed main to origin"),
        "{}",
        run.stderr
    );
    let printed = apply_printed_flux(&p, &fx, &[("<user>", USER), ("<token>", PASSWORD)]);
    let revision = format!("main@sha1:{}", fx.tip());
    let k = printed.kustomization.as_str();
    wait_synced(
        &p,
        &flux,
        "gitrepository",
        &printed.source,
        "artifact.revision",
        &revision,
    );
    wait_synced(
        &p,
        &flux,
        "kustomization",
        k,
        "lastAppliedRevision",
        &revision,
    );
    let live = assert_applied_by_flux(&p, &fx, &printed);
    let addons = live["spec"]["addons"].to_string();
    assert!(addons.contains("\"1.19.2\""), "{addons}\n{}", printed.text);

    set_chart_version(&fx.root(), "cilium", "1.19.3");
    let run = fx.commit(&["--push"]);
    assert!(
        run.stderr.contains("cilium 1.19.2 → 1.19.3"),
        "{}",
        run.stderr
    );
    let bumped = format!("main@sha1:{}", fx.tip());
    assert_ne!(bumped, revision);
    request_reconcile(&p, "gitrepository", &printed.source);
    wait_synced(
        &p,
        &flux,
        "gitrepository",
        &printed.source,
        "artifact.revision",
        &bumped,
    );
    request_reconcile(&p, "kustomization", k);
    wait_synced(
        &p,
        &flux,
        "kustomization",
        k,
        "lastAppliedRevision",
        &bumped,
    );
    let live = assert_applied_by_flux(&p, &fx, &printed);
    let addons = live["spec"]["addons"].to_string();
    assert!(
        addons.contains("\"1.19.3\"") && !addons.contains("\"1.19.2\""),
        "{addons}"
    );
}

trials! {
    PlaneAndFluxControllers: [flux_controllers_reconcile_a_push_over_https_and_a_pin_bump],
}
