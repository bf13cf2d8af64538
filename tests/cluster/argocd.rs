//! The whole GitOps path as a team runs it, through Argo CD's real components:
//! `clinv commit --push` → a git server → **argocd-repo-server** fetches the commit and
//! builds the folder (kustomize) → **argocd-application-controller** syncs it →
//! `ClusterInventory/cluster`. And the registry channel: `clinv push oci://…` → a registry
//! (docker-registry, TLS, basic auth) → the repo-server pulls the artifact → the same.
//!
//! Both run as plain processes (`scripts/argocd build`, found through `CLINV_ARGOCD`)
//! against the test API server with `ARGOCD_FAKE_IN_CLUSTER=true` (the in-cluster
//! destination `https://kubernetes.default.svc` is the kubeconfig's server, as in Argo CD's
//! own local setup), with Debian's redis-server on loopback. The cluster holds what Argo
//! CD's install manifests give it for these two: the Application and AppProject CRDs, the
//! namespace `argocd` with argocd-cm, argocd-rbac-cm, argocd-secret and the `default`
//! AppProject. Besides, exactly what `clinv commit --print-argo` (`push --print-argo`)
//! printed and the commands its advice gives, run as printed. One step stands in for the
//! kubelet: the repo-server's pod mounts the ConfigMap argocd-tls-certs-cm at its TLS data
//! path; here its keys are copied there as files (what Argo CD's dev-mounter does outside
//! a cluster).

use crate::flux_controllers::{DOMAIN, Fx, MANAGER, OCI_REPOSITORY, OciPush, PASSWORD, USER};
use crate::processes::{Processes, poll, reserve_ports};
use crate::support::{Run, listening};
use crate::{Plane, documents, plane};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Argo CD's namespace (the controller's `--namespace`).
const NS: &str = "argocd";
/// How long Argo CD gets to sync after an Application is applied or refreshed.
const SYNC: Duration = Duration::from_secs(180);
/// Debian's Redis (redis-server; `.ci/run` installs it).
const REDIS: &str = "redis-server";

/// What Argo CD's install manifests create for the repo-server and the
/// application-controller, besides the CRDs: the namespace, the settings ConfigMaps and
/// Secret (empty: the defaults) and the `default` AppProject.
const BASE: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: argocd
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-rbac-cm, app.kubernetes.io/part-of: argocd}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-tls-certs-cm
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-tls-certs-cm, app.kubernetes.io/part-of: argocd}
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-secret, app.kubernetes.io/part-of: argocd}
type: Opaque
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations: [{namespace: '*', server: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
";

/// The cache folder of `scripts/argocd build`, or why there is none.
pub fn argocd() -> Result<PathBuf, String> {
    crate::harness::built_tools(
        "Argo CD",
        "CLINV_ARGOCD",
        &["argocd", "kustomize", "versions"],
        "scripts/argocd",
    )
}

/// Argo CD, Redis, the HTTPS git server (nginx + fcgiwrap) and the registry
/// (docker-registry) the tests push to.
pub fn present() -> Result<(), String> {
    argocd()?;
    crate::git_server::present()?;
    crate::registry::present()?;
    if !crate::harness::runs(REDIS, "--version") {
        return Err(format!(
            "no {REDIS}: apt-get install redis-server (.ci/run does)"
        ));
    }
    Ok(())
}

/// Redis, argocd-repo-server and argocd-application-controller running against the plane,
/// what they need installed. Dropped: the Applications are deleted, the processes killed,
/// what the test created in `argocd` deleted and the plane reset; when the test failed,
/// the logs are printed.
pub struct Argo<'a> {
    p: &'a Plane,
    processes: Processes,
    started: Instant,
    /// The repo-server's `ARGOCD_TLS_DATA_PATH` (argocd-tls-certs-cm's mount in a pod).
    tls: PathBuf,
}

impl<'a> Argo<'a> {
    /// Installs the CRDs and the base objects, starts Redis, the repo-server and the
    /// application-controller (logs and state under `dir`) and waits until all answer.
    pub fn start(p: &'a Plane, dir: &Path) -> Argo<'a> {
        Argo::start_with(p, dir, &[])
    }

    /// [`Argo::start`] with `repo_env` set on the repo-server, as an operator sets it on
    /// its Deployment.
    pub fn start_with(p: &'a Plane, dir: &Path, repo_env: &[(&str, String)]) -> Argo<'a> {
        let bin = argocd().unwrap_or_else(|why| panic!("{why}"));
        install(p, &bin.join("crds"));
        // Held until every server answers (the end of this function).
        let (_reserved, ports) = reserve_ports(4);
        let [redis, repo, repo_metrics, metrics] = ports[..] else {
            unreachable!()
        };
        let tls = dir.join("tls");
        for sub in ["tls", "ssh", "home"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let mut argo = Argo {
            p,
            processes: Processes::default(),
            started: Instant::now(),
            tls,
        };
        let port = redis.to_string();
        let args = ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"];
        let mut redis_args = args.to_vec();
        redis_args.extend(["--port", &port]);
        let mut command = Command::new(REDIS);
        command.args(&redis_args);
        argo.processes.spawn("redis", command, dir);
        let up = poll(Duration::from_secs(20), || listening("127.0.0.1", redis));
        assert!(
            up,
            "redis-server not listening on {redis}:\n{}",
            argo.logs()
        );
        argo.spawn_argo(&bin, dir, [redis, repo, repo_metrics, metrics], repo_env);
        let processes = &mut argo.processes;
        processes.wait_ready("argocd-repo-server", repo_metrics, "/healthz");
        processes.wait_ready("argocd-application-controller", metrics, "/healthz");
        eprintln!(
            "argo cd ready {} ms after start",
            argo.started.elapsed().as_millis()
        );
        argo
    }

    /// The repo-server and the application-controller, as Argo CD's Procfile runs them
    /// outside a cluster: the multi-call binary by the name of its link, `--redis`,
    /// `--repo-server`, `ARGOCD_FAKE_IN_CLUSTER=true`, the kubeconfig; the cache folder on
    /// the repo-server's PATH as `/usr/local/bin` is in the image (git's askpass helper is
    /// `argocd`; kustomize).
    fn spawn_argo(&mut self, bin: &Path, dir: &Path, ports: [u16; 4], repo_env: &[(&str, String)]) {
        let [redis, repo, repo_metrics, metrics] = ports.map(|p| p.to_string());
        let redis = format!("127.0.0.1:{redis}");
        let repo_addr = format!("127.0.0.1:{repo}");
        let kubeconfig = self.p.admin.to_str().unwrap().to_string();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let sock = dir.join("askpass.sock");
        let env = [
            ("ARGOCD_FAKE_IN_CLUSTER", "true".to_string()),
            ("KUBECONFIG", kubeconfig.clone()),
            ("ARGOCD_TLS_DATA_PATH", self.tls.display().to_string()),
            (
                "ARGOCD_SSH_DATA_PATH",
                dir.join("ssh").display().to_string(),
            ),
            ("ARGOCD_GPG_ENABLED", "false".to_string()),
            ("ARGOCD_ASK_PASS_SOCK", sock.display().to_string()),
            ("HOME", dir.join("home").display().to_string()),
            ("PATH", path),
        ];
        let common = ["--loglevel=debug", "--logformat=text", "--redis", &redis];
        let mut repo_args = common.to_vec();
        repo_args.extend(["--address=127.0.0.1", "--port", &repo]);
        repo_args.extend([
            "--metrics-address=127.0.0.1",
            "--metrics-port",
            &repo_metrics,
        ]);
        let server = bin.join("argocd-repo-server");
        let mut server_env = env.to_vec();
        server_env.extend(repo_env.iter().cloned());
        let mut command = Command::new(server);
        command.args(&repo_args).envs(server_env);
        self.processes.spawn("argocd-repo-server", command, dir);
        let mut ctl_args = common.to_vec();
        ctl_args.extend(["--repo-server", &repo_addr, "--metrics-port", &metrics]);
        ctl_args.extend(["--kubeconfig", &kubeconfig, "--namespace", NS]);
        let controller = bin.join("argocd-application-controller");
        let mut command = Command::new(controller);
        command.args(&ctl_args).envs(env);
        self.processes
            .spawn("argocd-application-controller", command, dir);
    }

    /// What the kubelet does for the repo-server's pod: argocd-tls-certs-cm's keys as files
    /// of its TLS data path (one PEM file per server name).
    fn mount_tls_certs(&self) {
        let (code, out, err) = self.p.kubectl(&[
            "get",
            "configmap",
            "argocd-tls-certs-cm",
            "-n",
            NS,
            "-o",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let cm: Value = serde_json::from_str(&out).unwrap();
        for (host, pem) in cm["data"].as_object().into_iter().flatten() {
            std::fs::write(self.tls.join(host), pem.as_str().unwrap()).unwrap();
        }
    }

    /// The processes' logs (the last lines of each).
    pub fn logs(&self) -> String {
        self.processes.logs(60)
    }
}

impl Drop for Argo<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("Argo CD's logs:\n{}", self.logs());
        }
        let p = self.p;
        p.kubectl(&[
            "delete",
            "applications.argoproj.io",
            "--all",
            "-n",
            NS,
            "--timeout=60s",
        ]);
        self.processes.kill();
        // Whatever a dead controller left: without its finalizer it goes.
        let (_, names, _) = p.kubectl(&["get", "applications.argoproj.io", "-n", NS, "-o", "name"]);
        for name in names.lines() {
            let clear = r#"{"metadata":{"finalizers":null}}"#;
            p.kubectl(&["patch", name, "-n", NS, "--type=merge", "-p", clear]);
            p.kubectl(&["delete", name, "-n", NS, "--wait=false"]);
        }
        // The namespace stays (no namespace controller on the plane to empty it).
        for kind in ["secrets", "configmaps", "appprojects.argoproj.io"] {
            p.kubectl(&["delete", kind, "--all", "-n", NS]);
        }
        p.reset();
    }
}

/// Applies every CRD of `dir` server-side, waits until each is Established, then the base
/// objects ([`BASE`]).
fn install(p: &Plane, dir: &Path) {
    let apply = [
        "apply",
        "--server-side",
        "--force-conflicts",
        &format!("--field-manager={MANAGER}"),
        "-f",
    ];
    let mut args = apply.to_vec();
    args.push(dir.to_str().unwrap());
    let (code, _, err) = p.kubectl(&args);
    assert_eq!(code, 0, "{}: {err}", dir.display());
    for crd in ["applications.argoproj.io", "appprojects.argoproj.io"] {
        p.wait_established(crd);
    }
    let mut args = apply.to_vec();
    args.push("-");
    let (code, _, err) = p.kubectl_as(&p.admin, &args, Some(BASE));
    assert_eq!(code, 0, "{err}");
}

/// What `--print-argo` printed: its text, the Application's name and its source.
struct Printed {
    text: String,
    name: String,
    source: Value,
}

/// `commit --print-argo` or `push --print-argo` (`run`): runs the `kubectl -n argocd …`
/// commands its advice gives, with `values` filling the `<placeholder>`s of
/// `--from-literal=KEY=<…>` by KEY, then applies exactly what it printed (server-side, as
/// a user would).
fn apply_printed_argo(p: &Plane, argo: &Argo, run: &Run, values: &[(&str, &str)]) -> Printed {
    let docs = documents(&run.stdout);
    assert_eq!(docs.len(), 1, "{}", run.stdout);
    let app = &docs[0];
    assert_eq!(app["kind"], "Application", "{}", run.stdout);
    assert_eq!(app["metadata"]["namespace"], NS, "{}", run.stdout);
    let placeholder = regex::Regex::new(r"--from-literal=([A-Za-z0-9._-]+)=<[^>]*>").unwrap();
    for line in run.stderr.lines() {
        let Some(at) = line.find("kubectl -n argocd ") else {
            continue;
        };
        let command = placeholder.replace_all(&line[at..], |c: &regex::Captures| {
            let key = &c[1];
            let value = values
                .iter()
                .find(|(k, _)| *k == key)
                .unwrap_or_else(|| panic!("no value for {key}: {line}"))
                .1;
            format!("--from-literal={key}={value}")
        });
        assert!(!command.contains('<'), "a placeholder left in: {command}");
        as_user(p, &command);
    }
    argo.mount_tls_certs();
    crate::flux_controllers::apply_stdin(p, &run.stdout);
    Printed {
        text: run.stdout.clone(),
        name: app["metadata"]["name"].as_str().unwrap().to_string(),
        source: app["spec"]["source"].clone(),
    }
}

/// Runs `command` through `sh` as a user would paste it, with the plane's admin kubeconfig
/// and the tests' kubectl first in PATH.
fn as_user(p: &Plane, command: &str) {
    let bin = tempfile::tempdir().unwrap();
    let mut kubectl = crate::kubectl();
    if !kubectl.is_absolute() {
        kubectl = which_kubectl();
    }
    std::os::unix::fs::symlink(&kubectl, bin.path().join("kubectl")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    crate::support::succeeded(
        Command::new("sh")
            .args(["-c", command])
            .env("KUBECONFIG", &p.admin)
            .env("PATH", path),
    );
}

/// `kubectl` as found in PATH (when [`crate::kubectl`] names no path).
fn which_kubectl() -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "command -v kubectl"])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Waits until the Application `name` is Synced and Healthy at `revision` by a sync that
/// succeeded; panics with its status after [`SYNC`].
fn wait_synced(p: &Plane, argo: &Argo, name: &str, revision: &str) {
    let mut last = Value::Null;
    let synced = poll(SYNC, || {
        let (code, out, _) = p.kubectl(&["get", "application", name, "-n", NS, "-o", "json"]);
        if code != 0 {
            return false;
        }
        last = serde_json::from_str(&out).unwrap();
        let status = &last["status"];
        let op = &status["operationState"];
        status["sync"]["status"] == "Synced"
            && status["health"]["status"] == "Healthy"
            && status["sync"]["revision"] == revision
            && op["phase"] == "Succeeded"
            && op["syncResult"]["revision"] == revision
    });
    assert!(
        synced,
        "Application {name} not synced at {revision} after {SYNC:?}:\n{:#}",
        last["status"]
    );
    eprintln!(
        "Application {name} synced at {revision} (health {}), {:.1} s after Argo CD started",
        last["status"]["health"]["status"],
        argo.started.elapsed().as_secs_f64()
    );
}

/// `argocd app get --refresh`'s request: the annotation `argocd.argoproj.io/refresh`.
fn request_refresh(p: &Plane, name: &str) {
    let refresh = "argocd.argoproj.io/refresh=normal";
    let args = [
        "annotate",
        "--overwrite",
        "-n",
        NS,
        "application",
        name,
        refresh,
    ];
    let (code, _, err) = p.kubectl(&args);
    assert_eq!(code, 0, "{err}");
}

/// The live ClusterInventory: applied by Argo CD alone (server-side, its field manager)
/// and tracked for `printed`'s Application; its spec `delivered`'s (what was committed at
/// the tip, or pushed) and what clinv renders from the project at `root` (apart from
/// `renderedAt`).
fn assert_applied_by_argo(p: &Plane, printed: &Printed, delivered: &Value, root: &Path) -> Value {
    let live = p.live_managed();
    let tracking = &live["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"];
    let want = format!("{}:lok8s.dev/ClusterInventory:/cluster", printed.name);
    assert_eq!(tracking, want.as_str(), "{:#}", live["metadata"]);
    assert_eq!(crate::managers(&live), [("argocd-controller", "Apply")]);
    assert_eq!(live["spec"], delivered["spec"]);
    let mut render = crate::support::rendered(root, DOMAIN)["spec"].clone();
    let mut spec = live["spec"].clone();
    for s in [&mut render, &mut spec] {
        s.as_object_mut().unwrap().remove("renderedAt");
    }
    assert_eq!(spec, render);
    live
}

/// Issue #26, Argo CD: over HTTPS with basic auth and a private CA, `commit --push` →
/// repo-server → application-controller → ClusterInventory; then a pushed pin bump
/// synced on a refresh request, as `argocd app get --refresh` asks.
fn argocd_syncs_a_push_over_https_and_a_pin_bump() {
    let fx = Fx::https();
    let p = plane();
    p.reset();
    let argo = Argo::start(&p, &fx.dir.path().join("argocd"));
    let run = fx.commit(&["--push"]);
    crate::support::assert_has(&run.stderr, "pushed main to origin");
    let values = [("username", USER), ("password", PASSWORD)];
    let printed = apply_printed_argo(&p, &argo, &fx.commit(&["--print-argo"]), &values);
    let tip = fx.tip();
    wait_synced(&p, &argo, &printed.name, &tip);
    let committed =
        |printed: &Printed| fx.committed_inventory(printed.source["path"].as_str().unwrap());
    let live = assert_applied_by_argo(&p, &printed, &committed(&printed), &fx.root());
    let addons = live["spec"]["addons"].to_string();
    assert!(addons.contains("\"1.19.2\""), "{addons}\n{}", printed.text);

    crate::support::set_chart_version(&fx.root(), "cilium", "1.19.3");
    let run = fx.commit(&["--push"]);
    crate::support::assert_has(&run.stderr, "cilium 1.19.2 → 1.19.3");
    let bumped = fx.tip();
    assert_ne!(bumped, tip);
    request_refresh(&p, &printed.name);
    wait_synced(&p, &argo, &printed.name, &bumped);
    let live = assert_applied_by_argo(&p, &printed, &committed(&printed), &fx.root());
    let addons = live["spec"]["addons"].to_string();
    assert!(
        addons.contains("\"1.19.3\"") && !addons.contains("\"1.19.2\""),
        "{addons}"
    );
}

/// Issue #27, Argo CD from a registry: `clinv push --layer-media-type oci` to a registry
/// over TLS (private CA) with basic auth, then exactly what `push --print-argo` printed
/// and what its advice creates; the repo-server pulls the artifact at the pushed digest,
/// the application-controller syncs it. Then a pushed pin bump (a new manifest under the
/// same tag) synced on a refresh request.
fn argocd_syncs_a_pushed_oci_artifact_and_a_pin_bump() {
    let p = plane();
    p.reset();
    let oci = OciPush::start();
    let argo = Argo::start(&p, &oci.dir.path().join("argocd"));
    let layer = ["--layer-media-type", "oci"];
    let digest = oci.pushed(&layer);
    let run = oci.push(&["--print-argo", "--layer-media-type", "oci"]);
    // The advice: the repository Secret (type oci, credentials) and the registry's CA.
    eprintln!("push --print-argo:\n{}{}", run.stderr, run.stdout);
    let advised = run.stderr.matches("kubectl -n argocd create ").count();
    assert_eq!(advised, 2, "{}", run.stderr);
    crate::support::assert_has(&run.stderr, "--from-literal=type=oci");
    let values = [
        ("username", crate::registry::USER),
        ("password", crate::registry::PASSWORD),
    ];
    let printed = apply_printed_argo(&p, &argo, &run, &values);
    assert_eq!(
        printed.source["repoURL"],
        oci.url.as_str(),
        "{}",
        printed.text
    );
    assert_eq!(printed.source["targetRevision"], "latest");
    assert_eq!(printed.source["path"], ".");
    wait_synced(&p, &argo, &printed.name, &digest);
    let root = oci.project.path();
    let live = assert_applied_by_argo(&p, &printed, &oci.pushed_inventory(&digest), root);
    let addons = live["spec"]["addons"].to_string();
    assert!(addons.contains("\"1.19.2\""), "{addons}\n{}", printed.text);

    crate::support::set_chart_version(root, "cilium", "1.19.3");
    let bumped = oci.pushed(&layer);
    assert_ne!(bumped, digest, "a new manifest under the same tag");
    request_refresh(&p, &printed.name);
    wait_synced(&p, &argo, &printed.name, &bumped);
    let live = assert_applied_by_argo(&p, &printed, &oci.pushed_inventory(&bumped), root);
    let addons = live["spec"]["addons"].to_string();
    assert!(
        addons.contains("\"1.19.3\"") && !addons.contains("\"1.19.2\""),
        "{addons}"
    );
}

/// #27, a registry without TLS or auth (a lab's loopback registry): `push --plain-http`,
/// then what `push --print-argo --plain-http` printed and advised — a repository Secret of
/// type oci with `insecureOCIForceHttp`, no credentials: Argo CD pulls over plain HTTP.
fn argocd_syncs_an_oci_artifact_from_a_plain_http_registry() {
    let p = plane();
    p.reset();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("registry")).unwrap();
    let registry = crate::registry::Registry::start_plain(&dir.path().join("registry"));
    let project = crate::support::copy_tree(&crate::support::example());
    let argo = Argo::start(&p, &dir.path().join("argocd"));
    let url = registry.url(OCI_REPOSITORY);
    let store = dir.path().join("store");
    let push = |extra: &[&str]| {
        let root = project.path().to_str().unwrap();
        let mut args = vec!["push", &url, "--root", root, "--domain", DOMAIN];
        args.extend(["--plain-http", "--layer-media-type", "oci"]);
        args.extend_from_slice(extra);
        crate::support::clinv(&args)
            .store(&store)
            .env("DOCKER_CONFIG", dir.path().to_str().unwrap())
            .run()
            .success()
    };
    let out: Value = serde_json::from_str(&push(&["-o", "json"]).stdout).unwrap();
    let digest = out["digest"].as_str().unwrap();
    let run = push(&["--print-argo"]);
    let force = "--from-literal=insecureOCIForceHttp=true";
    assert!(run.stderr.contains(force), "{}", run.stderr);
    assert!(!run.stderr.contains("username"), "{}", run.stderr);
    let printed = apply_printed_argo(&p, &argo, &run, &[]);
    wait_synced(&p, &argo, &printed.name, digest);
    let file = registry.pulled_file(OCI_REPOSITORY, digest, "clusterinventory.yaml");
    let pushed = documents(&file)
        .into_iter()
        .find(|d| d["kind"] == "ClusterInventory")
        .unwrap();
    assert_applied_by_argo(&p, &printed, &pushed, project.path());
}

/// Flux's layer type, `clinv push`'s default.
const FLUX_LAYER: &str = "application/vnd.cncf.flux.content.v1.tar+gzip";

/// Waits until a condition of the Application `name` says `needle`; panics with its
/// status after [`SYNC`].
fn wait_condition(p: &Plane, name: &str, needle: &str) {
    let mut last = Value::Null;
    let said = poll(SYNC, || {
        let (_, out, _) = p.kubectl(&["get", "application", name, "-n", NS, "-o", "json"]);
        last = serde_json::from_str(&out).unwrap_or_default();
        let conditions = last["status"]["conditions"].as_array().cloned();
        conditions
            .into_iter()
            .flatten()
            .any(|c| c["message"].as_str().is_some_and(|m| m.contains(needle)))
    });
    assert!(said, "no condition says {needle}:\n{:#}", last["status"]);
    eprintln!("Application {name}: {:#}", last["status"]["conditions"]);
}

/// #27: an artifact with Flux's layer type (push's default). `push --print-argo` warns;
/// a default repo-server refuses it, naming the type; with the type added to the
/// repo-server's `ARGOCD_REPO_SERVER_OCI_LAYER_MEDIA_TYPES` (its defaults kept), as an
/// operator sets it, the same objects sync.
fn argocd_takes_flux_s_layer_type_only_when_the_operator_allows_it() {
    let p = plane();
    p.reset();
    let oci = OciPush::start();
    let digest = oci.pushed(&[]);
    let run = oci.push(&["--print-argo"]);
    crate::support::assert_has(&run.stderr, "refuses Flux's layer type");
    let values = [
        ("username", crate::registry::USER),
        ("password", crate::registry::PASSWORD),
    ];
    {
        let argo = Argo::start(&p, &oci.dir.path().join("argocd-default"));
        let printed = apply_printed_argo(&p, &argo, &run, &values);
        let refused =
            format!("oci layer media type {FLUX_LAYER} is not in the list of allowed media types");
        wait_condition(&p, &printed.name, &refused);
    }
    let defaults = "application/vnd.oci.image.layer.v1.tar,application/vnd.oci.image.layer.v1.tar+gzip,application/vnd.cncf.helm.chart.content.v1.tar+gzip";
    let allowed = format!("{defaults},{FLUX_LAYER}");
    let env = [("ARGOCD_REPO_SERVER_OCI_LAYER_MEDIA_TYPES", allowed)];
    let argo = Argo::start_with(&p, &oci.dir.path().join("argocd"), &env);
    let printed = apply_printed_argo(&p, &argo, &run, &values);
    wait_synced(&p, &argo, &printed.name, &digest);
    let pushed = oci.pushed_inventory(&digest);
    assert_applied_by_argo(&p, &printed, &pushed, oci.project.path());
}

trials! {
    PlaneAndArgoCd: [
        argocd_takes_flux_s_layer_type_only_when_the_operator_allows_it,
        argocd_syncs_a_push_over_https_and_a_pin_bump,
        argocd_syncs_a_pushed_oci_artifact_and_a_pin_bump,
        argocd_syncs_an_oci_artifact_from_a_plain_http_registry,
    ],
}
