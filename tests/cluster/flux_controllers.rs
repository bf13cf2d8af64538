//! The whole GitOps path as a team runs it, through Flux's real controllers:
//! `clinv commit --push` → a git server → **source-controller** clones it →
//! **kustomize-controller** builds and applies it → `ClusterInventory/cluster`.
//!
//! Both controllers (`scripts/flux-controllers build`, found through
//! `CLINV_FLUX_CONTROLLERS`) run as plain processes against the test API server: their
//! CRDs applied server-side, no containers, no webhooks, no notification-controller. What
//! the cluster gets is exactly what `clinv commit --print-flux` printed, plus the Secret
//! it told the user to create: over HTTPS (nginx + git http-backend, basic auth, a private
//! CA) and over SSH (Debian's sshd, a key).

use crate::processes::{Processes, poll, reserve_ports};
use crate::support::*;
use crate::{Plane, documents, plane};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Field manager of the objects the tests install themselves (CRDs, namespace, the
/// printed Flux objects, as a user's `kubectl apply --server-side` would).
pub(crate) const MANAGER: &str = "clinv-tests";
/// Where Flux's objects live (`RUNTIME_NAMESPACE` of the controllers).
const NS: &str = "flux-system";
pub(crate) const DOMAIN: &str = "prod.acme.example";
pub(crate) const USER: &str = "bot";
pub(crate) const PASSWORD: &str = "FAKESECRET-flux-https-token-3d7a";
/// How long a controller gets to reconcile after being asked to.
const RECONCILE: Duration = Duration::from_secs(120);
/// Debian's OpenSSH server (openssh-server; `.ci/run` installs it).
const SSHD: &str = "/usr/sbin/sshd";

/// The cache folder of `scripts/flux-controllers build`, or why there is none.
pub fn controllers() -> Result<PathBuf, String> {
    crate::harness::built_tools(
        "Flux controllers",
        "CLINV_FLUX_CONTROLLERS",
        &["source-controller", "kustomize-controller", "versions"],
        "scripts/flux-controllers",
    )
}

/// `kubectl apply --server-side` of `text` as the admin, by the tests' field manager;
/// panics with kubectl's error (and `text`) when it is refused.
pub(crate) fn apply_stdin(p: &Plane, text: &str) {
    let manager = format!("--field-manager={MANAGER}");
    let apply = ["apply", "--server-side", manager.as_str(), "-f", "-"];
    let (code, _, err) = p.kubectl_as(&p.admin, &apply, Some(text));
    assert_eq!(code, 0, "{err}\n{text}");
}

/// The controllers and the git servers the tests push to: nginx + fcgiwrap, and sshd
/// with the OpenSSH client tools.
pub fn present() -> Result<(), String> {
    controllers()?;
    crate::git_server::present()?;
    crate::registry::present()?;
    if !Path::new(SSHD).is_file() {
        return Err(format!(
            "{SSHD} not found (apt-get install openssh-server; .ci/run does)"
        ));
    }
    for tool in ["ssh", "ssh-keygen"] {
        if !crate::harness::runs(tool, "-?") {
            return Err(format!("{tool} not found (apt-get install openssh-client)"));
        }
    }
    Ok(())
}

/// source-controller and kustomize-controller running against the plane, their CRDs
/// installed. Dropped: the Flux objects of `flux-system` are deleted while the controllers
/// still run (their finalizers), then the controllers are killed and the plane reset; when
/// the test failed, their logs are printed.
pub struct Flux<'a> {
    p: &'a Plane,
    processes: Processes,
    started: Instant,
}

impl<'a> Flux<'a> {
    /// Installs the CRDs and namespace, starts both controllers (logs under `dir`) and
    /// waits until both report ready.
    pub fn start(p: &'a Plane, dir: &Path) -> Flux<'a> {
        Flux::start_with(p, dir, &[])
    }

    /// [`Flux::start`] with `kustomize` flags for kustomize-controller (a lockdown).
    pub fn start_with(p: &'a Plane, dir: &Path, kustomize: &[&str]) -> Flux<'a> {
        let bin = controllers().unwrap_or_else(|why| panic!("{why}"));
        install_crds(p, &bin.join("crds"));
        let started = Instant::now();
        let kubeconfig = p.admin.to_str().unwrap();
        // Held until both controllers are ready (the end of this function).
        let (_reserved, ports) = reserve_ports(5);
        let [metrics_s, health_s, storage, metrics_k, health_k] = ports[..] else {
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
            processes: Processes::default(),
            started,
        };
        for (name, metrics, health, extra) in [
            ("source-controller", metrics_s, health_s, &source[..]),
            ("kustomize-controller", metrics_k, health_k, kustomize),
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
            let home = dir.join("controller-home");
            std::fs::create_dir_all(&home).unwrap();
            let mut command = Command::new(bin.join(name));
            command
                .args(&args)
                .env("KUBECONFIG", kubeconfig)
                .env("RUNTIME_NAMESPACE", NS)
                .env("HOME", &home);
            flux.processes.spawn(name, command, dir);
            flux.processes.wait_ready(name, health, "/readyz");
        }
        eprintln!(
            "flux controllers ready {} ms after start",
            started.elapsed().as_millis()
        );
        flux
    }

    /// The controllers' logs (the last lines of each).
    pub fn logs(&self) -> String {
        self.processes.logs(80)
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
        self.processes.kill();
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
        names.extend(p.apply_crds(file, &text, MANAGER));
    }
    for want in [
        "crd/gitrepositories.source.toolkit.fluxcd.io",
        "crd/kustomizations.kustomize.toolkit.fluxcd.io",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for name in &names {
        p.wait_established(name);
    }
    let ns = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NS}\n");
    apply_stdin(p, &ns);
}

/// A project copy, a bare repository `inv.git` behind a real git server, and a clone of
/// it whose `origin` is the server's URL, set up as for a CI job that runs
/// `clinv commit --push`.
pub(crate) struct Fx {
    pub(crate) dir: tempfile::TempDir,
    /// The bare repository the server serves.
    bare: PathBuf,
    /// What clinv's git needs besides the clone's configuration (`GIT_SSH_COMMAND`).
    env: Vec<(&'static str, String)>,
    /// The server, stopped when the fixture drops.
    _server: Box<dyn std::any::Any>,
}

impl Fx {
    /// Over HTTPS with basic auth ([`GitServer`](crate::git_server::GitServer)): the password
    /// from git's store helper, the server's private CA from `http.sslCAInfo`.
    pub(crate) fn https() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let server = crate::git_server::GitServer::start(&dir.path().join("srv"), USER, PASSWORD);
        let bare = server.dir.join("repos/inv.git");
        let credentials = dir.path().join("credentials");
        let port = server.port;
        std::fs::write(
            &credentials,
            format!("https://{USER}:{PASSWORD}@127.0.0.1:{port}\n"),
        )
        .unwrap();
        let url = server.url("/inv.git");
        let ca = server.ca().to_str().unwrap().to_string();
        let fx = Fx::new(dir, bare, Vec::new(), Box::new(server));
        let helper = format!("store --file={}", credentials.display());
        fx.configure(
            &url,
            &[("http.sslCAInfo", &ca), ("credential.helper", &helper)],
        );
        fx
    }

    /// Over SSH (Debian's sshd, [`Sshd`]) with a key file and a known_hosts file named by
    /// the client configuration in `GIT_SSH_COMMAND`.
    fn ssh() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let sshd = Sshd::start(&dir.path().join("sshd"));
        let bare = dir.path().join("srv/inv.git");
        let url = format!(
            "ssh://{}@127.0.0.1:{}{}",
            sshd.user,
            sshd.port,
            bare.display()
        );
        let env = vec![(
            "GIT_SSH_COMMAND",
            format!("ssh -F {}", sshd.config.display()),
        )];
        let fx = Fx::new(dir, bare, env, Box::new(sshd));
        fx.configure(&url, &[]);
        fx
    }

    /// The project copy and the bare repository (empty, branch `main`).
    fn new(
        dir: tempfile::TempDir,
        bare: PathBuf,
        env: Vec<(&'static str, String)>,
        server: Box<dyn std::any::Any>,
    ) -> Fx {
        let fx = Fx {
            dir,
            bare,
            env,
            _server: server,
        };
        std::fs::create_dir_all(fx.home()).unwrap();
        let project = copy_tree(&example());
        std::fs::rename(project.path(), fx.root()).unwrap();
        let parent = fx.bare.parent().unwrap();
        std::fs::create_dir_all(parent).unwrap();
        git(parent, &["init", "-q", "--bare", "-b", "main", "inv.git"]);
        fx
    }

    /// The clone `work` with `origin` at `url`, an author, and `config`.
    fn configure(&self, url: &str, config: &[(&str, &str)]) {
        let file = format!("file://{}", self.bare.display());
        git(self.dir.path(), &["clone", "-q", &file, "work"]);
        let work = self.work();
        let base = [
            ("remote.origin.url", url),
            ("user.name", "Inventory Bot"),
            ("user.email", "bot@acme.example"),
        ];
        for (key, value) in base.iter().chain(config) {
            git(&work, &["config", key, value]);
        }
        git(&work, &["checkout", "-q", "-B", "main"]);
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// `clinv commit --domain DOMAIN --repo WORK ARGS…`, as a CI job runs it.
    pub(crate) fn commit(&self, args: &[&str]) -> Run {
        let root = self.root();
        let work = self.work();
        let mut clinv = clinv(&["commit", "--repo", work.to_str().unwrap()])
            .project(&root, DOMAIN)
            .args(args)
            .env(
                "CLINV_SNAPSHOTS",
                self.dir.path().join("store").to_str().unwrap(),
            )
            .env("HOME", self.home().to_str().unwrap())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0");
        for (key, value) in &self.env {
            clinv = clinv.env(key, value);
        }
        let run = clinv.run();
        assert!(
            !run.stdout.contains(PASSWORD) && !run.stderr.contains(PASSWORD),
            "the password was printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        run.success()
    }

    /// The commit `main` names on the server.
    pub(crate) fn tip(&self) -> String {
        git(&self.bare, &["rev-parse", "main"]).trim().to_string()
    }

    /// The ClusterInventory committed on the server's `main` under `path`.
    pub(crate) fn committed_inventory(&self, path: &str) -> Value {
        let files = git(
            &self.bare,
            &["ls-tree", "-r", "--name-only", "main", "--", path],
        );
        files
            .lines()
            .filter(|f| f.ends_with(".yaml"))
            .flat_map(|f| documents(&git(&self.bare, &["show", &format!("main:{f}")])))
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
fn apply_printed_flux(p: &Plane, fx: &Fx, secret: &[(&str, &str)]) -> Printed {
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
    let filled = fill_placeholders(create, secret);
    let mut args = vec!["-n", NS, "create", "secret", "generic"];
    args.extend(filled.iter().map(String::as_str));
    assert_eq!(args[5], secret_name, "{create}");
    let (code, _, err) = p.kubectl(&args);
    assert_eq!(code, 0, "kubectl {create}: {err}");
    apply_stdin(p, &run.stdout);
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

/// The arguments of the advice's `kubectl create secret generic NAME --from-…=KEY=VALUE…`
/// (after `generic`), each `<placeholder>` VALUE filled in from `values` by its KEY.
pub(crate) fn fill_placeholders(create: &str, values: &[(&str, &str)]) -> Vec<String> {
    let (name, rest) = create.split_once(' ').unwrap_or((create, ""));
    let arg = regex::Regex::new(r"--from-(literal|file)=([A-Za-z0-9._-]+)=(<[^>]*>|\S+)").unwrap();
    let mut args = vec![name.to_string()];
    let mut keys = Vec::new();
    for c in arg.captures_iter(rest) {
        let (source, key, value) = (&c[1], &c[2], &c[3]);
        let value = match value.starts_with('<') {
            true => {
                values
                    .iter()
                    .find(|(k, _)| *k == key)
                    .unwrap_or_else(|| panic!("no value for {key} {value}: {create}"))
                    .1
            }
            false => value,
        };
        args.push(format!("--from-{source}={key}={value}"));
        keys.push(key.to_string());
    }
    let leftover = arg.replace_all(rest, "");
    assert_eq!(leftover.trim(), "", "unexpected arguments in: {create}");
    for (key, _) in values {
        assert!(
            keys.iter().any(|k| k == key),
            "the advice sets no {key}: {create}"
        );
    }
    args
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

/// The live `ClusterInventory/cluster`, which must be applied by kustomize-controller
/// alone for the Kustomization `kustomization` of flux-system.
fn live_applied(p: &Plane, kustomization: &str) -> Value {
    let live = p.live_managed();
    let labels = &live["metadata"]["labels"];
    assert_eq!(labels["kustomize.toolkit.fluxcd.io/name"], kustomization);
    assert_eq!(labels["kustomize.toolkit.fluxcd.io/namespace"], NS);
    assert_eq!(crate::managers(&live), [("kustomize-controller", "Apply")]);
    live
}

/// The live ClusterInventory is what was committed at the tip (and clinv renders from the
/// project, apart from `renderedAt`), applied by kustomize-controller for `printed`'s
/// Kustomization.
fn assert_applied_by_flux(p: &Plane, fx: &Fx, printed: &Printed) -> Value {
    let live = live_applied(p, &printed.kustomization);
    let committed = fx.committed_inventory(&printed.path);
    assert_eq!(live["spec"], committed["spec"]);
    let mut render = rendered(&fx.root(), DOMAIN)["spec"].clone();
    let mut spec = live["spec"].clone();
    for s in [&mut render, &mut spec] {
        s.as_object_mut().unwrap().remove("renderedAt");
    }
    assert_eq!(spec, render);
    live
}

/// `commit --push` → source-controller → kustomize-controller → ClusterInventory; then a
/// pin bump pushed and reconciled on request, as `flux reconcile kustomization
/// --with-source` does. `secret` fills the placeholders of the Secret `--print-flux`
/// advises, by key.
fn reconcile_a_push_and_a_pin_bump(fx: &Fx, secret: &[(&str, &str)]) {
    let p = plane();
    p.reset();
    let flux = Flux::start(&p, &fx.dir.path().join("flux"));

    let run = fx.commit(&["--push"]);
    assert_has(&run.stderr, "pushed main to origin");
    let printed = apply_printed_flux(&p, fx, secret);
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
    let live = assert_applied_by_flux(&p, fx, &printed);
    let addons = live["spec"]["addons"].to_string();
    assert!(addons.contains("\"1.19.2\""), "{addons}\n{}", printed.text);

    set_chart_version(&fx.root(), "cilium", "1.19.3");
    let run = fx.commit(&["--push"]);
    assert_has(&run.stderr, "cilium 1.19.2 → 1.19.3");
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
    let live = assert_applied_by_flux(&p, fx, &printed);
    let addons = live["spec"]["addons"].to_string();
    assert!(
        addons.contains("\"1.19.3\"") && !addons.contains("\"1.19.2\""),
        "{addons}"
    );
    show(&p, "gitrepository,kustomization");
}

/// What an operator sees at the end (the walk-through in docs/guide/gitops.md is this
/// output): the Flux objects and the ClusterInventory with its field managers.
fn show(p: &Plane, kinds: &str) {
    let (_, objects, _) = p.kubectl(&["get", kinds, "-n", NS]);
    let managers = "-o=custom-columns=NAME:.metadata.name,MANAGERS:.metadata.managedFields[*].manager,CILIUM:.spec.addons[0].chartVersion";
    let (_, live, _) = p.kubectl(&["get", "clusterinventory", managers]);
    eprintln!("$ kubectl get {kinds} -n {NS}\n{objects}$ kubectl get clusterinventory\n{live}");
}

/// Test 1 of #26: over HTTPS with basic auth and a private CA (the Secret's `username`,
/// `password`; `ca.crt` is named by clinv from `http.sslCAInfo`).
fn flux_controllers_reconcile_a_push_over_https_and_a_pin_bump() {
    let fx = Fx::https();
    reconcile_a_push_and_a_pin_bump(&fx, &[("username", USER), ("password", PASSWORD)]);
}

/// Test 2 of #26: over SSH with a key (the Secret's `identity` and `known_hosts`).
fn flux_controllers_reconcile_a_push_over_ssh_and_a_pin_bump() {
    let fx = Fx::ssh();
    let dir = fx.dir.path().join("sshd");
    let key = dir.join("id_ed25519");
    let known = dir.join("known_hosts");
    let secret = [
        ("identity", key.to_str().unwrap()),
        ("known_hosts", known.to_str().unwrap()),
    ];
    reconcile_a_push_and_a_pin_bump(&fx, &secret);
}

/// Test 3 of #26: a `flux bootstrap git --path=clusters/<domain>` layout. flux-system's
/// own Kustomization (from `flux-system/gotk-sync.yaml`, applied as bootstrap applies it)
/// builds `clusters/<domain>/` — kustomize-controller generating the kustomization that
/// takes in every subfolder — so clinv's folder is applied by flux-system itself, and
/// `--print-flux` prints nothing.
fn flux_controllers_apply_the_folder_through_a_bootstrap_kustomization() {
    let fx = Fx::https();
    let p = plane();
    p.reset();
    let flux = Flux::start(&p, &fx.dir.path().join("flux"));
    let work = fx.work();
    let url = git(&work, &["config", "remote.origin.url"])
        .trim()
        .to_string();
    let ca = git(&work, &["config", "http.sslCAInfo"]).trim().to_string();
    let dir = work.join(format!("clusters/{DOMAIN}/flux-system"));
    std::fs::create_dir_all(&dir).unwrap();
    let sync = format!(
        "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m0s\n  ref:\n    branch: main\n  secretRef:\n    name: flux-system\n  url: {url}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m0s\n  path: ./clusters/{DOMAIN}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    );
    std::fs::write(dir.join("gotk-sync.yaml"), &sync).unwrap();
    // Bootstrap also lists gotk-components.yaml; the controllers already run here.
    std::fs::write(
        dir.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gotk-sync.yaml\n",
    )
    .unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "Add Flux sync manifests"]);
    fx.commit(&["--push"]);
    let printed = fx.commit(&["--print-flux"]);
    assert_eq!(printed.stdout, "", "no second Kustomization");
    assert_has(
        &printed.stderr,
        "already applied by the Flux Kustomization flux-system/flux-system",
    );
    let secret = ["username", "password", "ca.crt"].map(|k| match k {
        "username" => format!("--from-literal=username={USER}"),
        "password" => format!("--from-literal=password={PASSWORD}"),
        _ => format!("--from-file=ca.crt={ca}"),
    });
    let mut args = vec!["-n", NS, "create", "secret", "generic", "flux-system"];
    args.extend(secret.iter().map(String::as_str));
    let (code, _, err) = p.kubectl(&args);
    assert_eq!(code, 0, "{err}");
    apply_stdin(&p, &sync);
    let revision = format!("main@sha1:{}", fx.tip());
    wait_synced(
        &p,
        &flux,
        "gitrepository",
        "flux-system",
        "artifact.revision",
        &revision,
    );
    wait_synced(
        &p,
        &flux,
        "kustomization",
        "flux-system",
        "lastAppliedRevision",
        &revision,
    );
    let live = live_applied(&p, "flux-system");
    let committed = fx.committed_inventory(&format!("clusters/{DOMAIN}/inventory"));
    assert_eq!(live["spec"], committed["spec"]);
}

/// The ClusterRole and binding docs/guide/gitops.md gives for Flux's multi-tenancy
/// lockdown (`--default-service-account=default`), as an operator applies them.
const LOCKDOWN_RBAC: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: clusterinventory-apply
rules:
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [lok8s.dev]
  resources: [clusterinventories]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: clusterinventory-apply-flux-system-default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: clusterinventory-apply
subjects:
- kind: ServiceAccount
  name: default
  namespace: flux-system
";

/// Test 4 of #26: kustomize-controller locked down (`--no-cross-namespace-refs=true`,
/// `--default-service-account=default`). What `--print-flux` prints keeps to one namespace,
/// so the lockdown's first flag passes; the second makes the Kustomization apply as
/// flux-system/default, which may apply nothing: not Ready, "forbidden" — what clinv says
/// the operator must add. With the ClusterRole of the guide bound, it reconciles.
fn flux_controllers_under_a_multi_tenancy_lockdown_reconcile_with_what_clinv_says() {
    let fx = Fx::https();
    let p = plane();
    p.reset();
    let lockdown = [
        "--no-cross-namespace-refs=true",
        "--default-service-account=default",
    ];
    let flux = Flux::start_with(&p, &fx.dir.path().join("flux"), &lockdown);
    fx.commit(&["--push"]);
    let said = fx.commit(&["--print-flux"]).stderr;
    assert!(
        said.contains("multi-tenancy lockdown") && said.contains("clusterinventories"),
        "{said}"
    );
    let printed = apply_printed_flux(&p, &fx, &[("username", USER), ("password", PASSWORD)]);
    let k = printed.kustomization.as_str();
    let mut last = String::new();
    let forbidden = poll(RECONCILE, || {
        let (_, out, _) = p.kubectl(&["get", "kustomization", k, "-n", NS, "-o", "json"]);
        last = out;
        last.contains("\"Ready\"") && last.contains("forbidden")
    });
    assert!(forbidden, "not refused as the service account:\n{last}");
    let (code, _, err) = p.kubectl(&["get", "clusterinventory", "cluster"]);
    assert_ne!(code, 0, "applied although forbidden: {err}");
    apply_stdin(&p, LOCKDOWN_RBAC);
    request_reconcile(&p, "kustomization", k);
    let revision = format!("main@sha1:{}", fx.tip());
    wait_synced(
        &p,
        &flux,
        "kustomization",
        k,
        "lastAppliedRevision",
        &revision,
    );
    assert_applied_by_flux(&p, &fx, &printed);
    for kind in [
        "clusterrolebinding/clusterinventory-apply-flux-system-default",
        "clusterrole/clusterinventory-apply",
    ] {
        p.kubectl(&["delete", kind, "--ignore-not-found"]);
    }
}

/// A registry and a project for the OCI tests (Flux's and Argo CD's); `push` runs
/// `clinv push` to `oci://…/inventories/prod` with the registry's CA and credentials.
pub(crate) struct OciPush {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) registry: crate::registry::Registry,
    pub(crate) project: tempfile::TempDir,
    pub(crate) url: String,
}

/// The repository [`OciPush`] pushes to.
pub(crate) const OCI_REPOSITORY: &str = "inventories/prod";

impl OciPush {
    pub(crate) fn start() -> OciPush {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("registry")).unwrap();
        let registry = crate::registry::Registry::start(&dir.path().join("registry"));
        let url = registry.url(OCI_REPOSITORY);
        OciPush {
            dir,
            registry,
            project: copy_tree(&example()),
            url,
        }
    }

    pub(crate) fn push(&self, extra: &[&str]) -> Run {
        use crate::registry::{PASSWORD, USER};
        let root = self.project.path().to_str().unwrap();
        let ca = self.registry.ca();
        let mut args = vec!["push", &self.url, "--root", root, "--domain", DOMAIN];
        args.extend(["--ca-file", &ca, "--creds-env", "REGISTRY_AUTH"]);
        args.extend_from_slice(extra);
        let store = self.dir.path().join("store");
        clinv(&args)
            .store(&store)
            .env("REGISTRY_AUTH", &format!("{USER}:{PASSWORD}"))
            .run()
            .success()
    }

    /// A push's digest (`-o json`).
    pub(crate) fn pushed(&self, extra: &[&str]) -> String {
        let mut args = extra.to_vec();
        args.extend(["-o", "json"]);
        let out: Value = serde_json::from_str(&self.push(&args).stdout).unwrap();
        out["digest"].as_str().unwrap().to_string()
    }

    /// The ClusterInventory of the artifact `reference` (a tag or digest), read back
    /// from the registry.
    pub(crate) fn pushed_inventory(&self, reference: &str) -> Value {
        let file = "clusterinventory.yaml";
        let text = self.registry.pulled_file(OCI_REPOSITORY, reference, file);
        documents(&text)
            .into_iter()
            .find(|d| d["kind"] == "ClusterInventory")
            .unwrap_or_else(|| panic!("no ClusterInventory in {file}:\n{text}"))
    }
}

/// [`OciPush`] and Flux's controllers (stopped first when dropped).
struct OciSite<'a> {
    flux: Flux<'a>,
    oci: OciPush,
}

impl std::ops::Deref for OciSite<'_> {
    type Target = OciPush;
    fn deref(&self) -> &OciPush {
        &self.oci
    }
}

impl<'a> OciSite<'a> {
    fn start(p: &'a Plane) -> OciSite<'a> {
        let oci = OciPush::start();
        let flux = Flux::start(p, &oci.dir.path().join("flux"));
        OciSite { flux, oci }
    }

    /// `push --print-flux`: runs every Secret command its advice gives (`want` of them),
    /// placeholders filled in, in a scratch folder; applies what it printed; the
    /// OCIRepository's name.
    fn apply_printed(&self, p: &Plane, extra: &[&str], want: usize) -> (String, Value) {
        use crate::registry::{PASSWORD, USER};
        let mut args = vec!["--print-flux"];
        args.extend_from_slice(extra);
        let printed = self.push(&args);
        let commands: Vec<&str> = printed
            .stderr
            .lines()
            .filter(|l| l.contains("kubectl -n flux-system create secret "))
            .map(|l| {
                &l[l.find("openssl ")
                    .unwrap_or_else(|| l.find("kubectl ").unwrap())..]
            })
            .collect();
        assert_eq!(commands.len(), want, "{}", printed.stderr);
        let kubectl = format!(
            "'{}' --kubeconfig '{}' ",
            crate::kubectl().display(),
            p.admin.display()
        );
        for command in commands {
            let filled = command
                .replace("<user>", USER)
                .replace("<password>", PASSWORD)
                .replace("kubectl ", &kubectl);
            succeeded(
                Command::new("sh")
                    .args(["-c", &filled])
                    .current_dir(self.dir.path()),
            );
        }
        apply_stdin(p, &printed.stdout);
        let docs = documents(&printed.stdout);
        let name = docs[0]["metadata"]["name"].as_str().unwrap().to_string();
        (name, docs[0].clone())
    }

    /// Waits until both Flux objects are Ready at `latest@<digest>`.
    fn wait_applied(&self, p: &Plane, name: &str, digest: &str) {
        let revision = format!("latest@{digest}");
        let flux = &self.flux;
        wait_synced(
            p,
            flux,
            "ocirepository",
            name,
            "artifact.revision",
            &revision,
        );
        wait_synced(
            p,
            flux,
            "kustomization",
            name,
            "lastAppliedRevision",
            &revision,
        );
    }

    /// The live ClusterInventory, applied by kustomize-controller alone, holds the
    /// project's render.
    fn assert_live_is_the_render(&self, p: &Plane, name: &str) {
        let live = live_applied(p, name);
        let mut render = rendered(self.project.path(), DOMAIN)["spec"].clone();
        let mut spec = live["spec"].clone();
        for s in [&mut render, &mut spec] {
            s.as_object_mut().unwrap().remove("renderedAt");
        }
        assert_eq!(spec, render);
    }
}

/// #26 test 5: `clinv push` to a registry, then exactly what `push --print-flux` printed
/// plus the two Secrets it advises; source-controller pulls the OCIRepository,
/// kustomize-controller applies it. A second push with the OCI layer type Argo CD needs
/// (a new manifest under the same tag) is reconciled too.
fn flux_controllers_reconcile_a_pushed_oci_artifact() {
    let p = plane();
    p.reset();
    let site = OciSite::start(&p);
    let digest = site.pushed(&[]);
    let (name, _) = site.apply_printed(&p, &[], 2);
    site.wait_applied(&p, &name, &digest);
    site.assert_live_is_the_render(&p, &name);
    // The OCI layer type Argo CD accepts (`--layer-media-type oci`): Flux takes it too.
    let oci = site.pushed(&["--layer-media-type", "oci"]);
    assert_ne!(oci, digest, "another manifest");
    request_reconcile(&p, "ocirepository", &name);
    request_reconcile(&p, "kustomization", &name);
    site.wait_applied(&p, &name, &oci);
}

/// #27: `push --sign KEY`, then what `--print-flux --sign KEY` printed with the three
/// Secrets it advises (the public key among them): source-controller verifies the cosign
/// signature (`SourceVerified=True`) and the inventory is applied. A changed inventory
/// whose signature was tampered with (one byte of it) is refused: `SourceVerified=False`,
/// and the cluster keeps the verified inventory.
fn flux_controllers_verify_a_signed_oci_artifact() {
    let p = plane();
    p.reset();
    let site = OciSite::start(&p);
    let (key, _) = crate::registry::key_pair(site.dir.path(), "cosign");
    let key = key.to_str().unwrap();
    let digest = site.pushed(&["--sign", key]);
    let (name, source) = site.apply_printed(&p, &["--sign", key], 3);
    assert_eq!(source["spec"]["verify"]["provider"], "cosign", "{source:#}");
    site.wait_applied(&p, &name, &digest);
    assert_eq!(condition(&p, &name, "SourceVerified"), "True");
    site.assert_live_is_the_render(&p, &name);
    let before = live_applied(&p, &name)["spec"].clone();
    set_chart_version(site.project.path(), "cilium", "1.20.1");
    let changed = site.pushed(&["--sign", key]);
    site.registry.tamper_signature(OCI_REPOSITORY, &changed);
    request_reconcile(&p, "ocirepository", &name);
    let refused = poll(RECONCILE, || {
        condition(&p, &name, "SourceVerified") == "False"
    });
    assert!(refused, "a tampered signature was not refused");
    request_reconcile(&p, "kustomization", &name);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        live_applied(&p, &name)["spec"],
        before,
        "the verified inventory stays"
    );
    show(&p, "ocirepository,kustomization");
}

/// The status of condition `kind` of OCIRepository `name` ("" when absent).
fn condition(p: &Plane, name: &str, kind: &str) -> String {
    let (_, out, _) = p.kubectl(&["get", "ocirepository", name, "-n", NS, "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_default();
    v["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Debian's sshd on a reserved loopback port with a throwaway host key, letting the
/// test's key `id_ed25519` in; killed on drop. `config` is a client configuration for
/// `ssh -F` (that key; `known_hosts` holding the server's host key), since OpenSSH reads
/// `~` from the passwd home, not `$HOME`.
struct Sshd {
    child: Child,
    port: u16,
    user: String,
    config: PathBuf,
}

impl Sshd {
    fn start(dir: &Path) -> Sshd {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        for key in ["host_key", "id_ed25519"] {
            let key = dir.join(key);
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "clinv-test", "-f"])
                .arg(&key)
                .output()
                .unwrap();
            assert!(out.status.success(), "ssh-keygen: {out:?}");
        }
        std::fs::copy(dir.join("id_ed25519.pub"), dir.join("authorized_keys")).unwrap();
        let (reserved, ports) = reserve_ports(1);
        let port = ports[0];
        let host = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
        let host: Vec<&str> = host.split_whitespace().take(2).collect();
        let known = write(
            dir,
            "known_hosts",
            format!("[127.0.0.1]:{port} {}\n", host.join(" ")),
        );
        let d = dir.display();
        let server = write(
            dir,
            "sshd_config",
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
            ),
        );
        let config = write(
            dir,
            "ssh_config",
            format!(
                "Host *\n  IdentityFile {d}/id_ed25519\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  ConnectTimeout 10\n",
                known.display()
            ),
        );
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&server)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .expect("sshd starts");
        let user = Command::new("id").arg("-un").output().unwrap().stdout;
        let user = String::from_utf8_lossy(&user).trim().to_string();
        let mut sshd = Sshd {
            child,
            port,
            user,
            config,
        };
        let up = poll(Duration::from_secs(10), || listening("127.0.0.1", port));
        drop(reserved);
        let log = std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
        assert!(up, "sshd did not listen on {port}:\n{log}");
        assert!(
            matches!(sshd.child.try_wait(), Ok(None)),
            "sshd exited:\n{log}"
        );
        sshd
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

trials! {
    PlaneAndFluxControllers: [
        flux_controllers_reconcile_a_push_over_https_and_a_pin_bump,
        flux_controllers_reconcile_a_push_over_ssh_and_a_pin_bump,
        flux_controllers_reconcile_a_pushed_oci_artifact,
        flux_controllers_verify_a_signed_oci_artifact,
        flux_controllers_apply_the_folder_through_a_bootstrap_kustomization,
        flux_controllers_under_a_multi_tenancy_lockdown_reconcile_with_what_clinv_says,
    ],
}
