//! What `clinv commit` writes and prints, checked by the real GitOps machinery:
//!
//! - the committed folder built with kustomize's krusty and applied with Flux's own apply
//!   engine (`github.com/fluxcd/pkg/ssa`, configured as kustomize-controller does:
//!   `scripts/flux-apply`), from an empty cluster through a chart pin bump and an addon
//!   removal, and re-applied unchanged;
//! - the Kustomization (and GitRepository) of `--print-flux` and the Application of
//!   `--print-argo`, validated by a strict server-side dry run against the real Flux and
//!   Argo CD CRDs (`tests/fixtures/crds/`, see its README).
//!
//! The folder and the Kustomization's name come from clinv's own output (`--print-flux`),
//! never from an assumed layout.

use crate::support::*;
use crate::{Plane, documents, plane};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const DOMAIN: &str = "prod.acme.example";
/// The origin remote of the test repository (only printed, never contacted).
const ORIGIN: &str = "https://git.acme.example/platform/gitops.git";
/// Field manager of the objects the tests install themselves (CRDs, namespaces).
const MANAGER: &str = "clinv-tests";

/// The `flux-apply` binary (`scripts/flux-apply build`), or why there is none.
pub fn flux_apply() -> Result<PathBuf, String> {
    match std::env::var_os("CLINV_FLUX_APPLY").map(PathBuf::from) {
        Some(bin) if bin.is_file() => Ok(bin),
        Some(bin) => Err(format!(
            "no Flux apply engine: CLINV_FLUX_APPLY={} is not a file; run scripts/flux-apply build",
            bin.display()
        )),
        None => Err(
            "no Flux apply engine: CLINV_FLUX_APPLY unset; run scripts/test (it builds scripts/flux-apply)"
                .into(),
        ),
    }
}

/// The Kustomization of `--print-flux`: what Flux applies, under which name.
struct Kustomization {
    name: String,
    namespace: String,
    /// `spec.path` without its leading `./`: a folder of the repository.
    path: String,
}

/// A project copy, its snapshot store and a GitOps repository with an `origin` remote.
struct Fx {
    project: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Fx {
    fn new() -> Fx {
        let fx = Fx {
            project: copy_tree(&example()),
            dir: tempfile::tempdir().unwrap(),
        };
        git(fx.dir.path(), &["init", "-q", "-b", "main", "repo"]);
        git(&fx.repo(), &["remote", "add", "origin", ORIGIN]);
        fx
    }

    fn root(&self) -> PathBuf {
        self.project.path().to_path_buf()
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root();
        let mut all = vec!["--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        clinv(&all).env(
            "CLINV_SNAPSHOTS",
            self.dir.path().join("store").to_str().unwrap(),
        )
    }

    /// Records a snapshot of the project as it is now, rendered at `epoch` (a publish
    /// with no cluster: queued).
    fn record_at(&self, epoch: &str) {
        // KUBECONFIG naming no file: unreachable, so queued (an explicit --kubeconfig
        // that does not exist is a usage error).
        self.clinv(&["publish", "--domain", DOMAIN])
            .env("KUBECONFIG", "/nonexistent")
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success();
    }

    /// `clinv commit --repo R ARGS…`, which must succeed.
    fn commit_run(&self, args: &[&str]) -> Run {
        let repo = self.repo();
        let mut all = vec!["commit", "--repo", repo.to_str().unwrap()];
        all.extend_from_slice(args);
        self.clinv(&all).run().success()
    }

    /// `clinv commit` of the newest snapshot; its stderr.
    fn commit(&self) -> String {
        let author = ["--author", "Inventory Bot <bot@acme.example>"];
        self.commit_run(&[&["--domain", DOMAIN][..], &author].concat())
            .stderr
    }

    /// `clinv commit --repo R ARGS…` with no domain (`--print-argo --all`): the documents.
    fn printed_all(&self, args: &[&str]) -> (String, Vec<Value>) {
        let run = self.commit_run(args);
        let docs = documents(&run.stdout);
        (run.stdout, docs)
    }

    /// `clinv commit --print-flux` (or `--print-argo`): the printed documents.
    fn printed(&self, flag: &str) -> (String, Vec<Value>) {
        self.printed_all(&["--domain", DOMAIN, flag])
    }

    fn kustomization(&self) -> Kustomization {
        let (text, docs) = self.printed("--print-flux");
        let k = docs
            .iter()
            .find(|d| d["kind"] == "Kustomization")
            .unwrap_or_else(|| panic!("--print-flux printed no Kustomization:\n{text}"));
        let path = k["spec"]["path"].as_str().unwrap();
        Kustomization {
            name: k["metadata"]["name"].as_str().unwrap().to_string(),
            namespace: k["metadata"]["namespace"].as_str().unwrap().to_string(),
            path: path.trim_start_matches("./").to_string(),
        }
    }

    /// The inventory of the newest snapshot: clinv's render.
    fn rendered(&self) -> Value {
        let run = self
            .clinv(&[
                "snapshots",
                "show",
                "latest",
                "--domain",
                DOMAIN,
                "-o",
                "json",
            ])
            .run()
            .success();
        let snapshot: Value = serde_json::from_str(&run.stdout).unwrap();
        snapshot["inventory"].clone()
    }

    /// The objects krusty builds from the Kustomization's folder.
    fn built(&self, k: &Kustomization) -> Vec<Value> {
        let out = Command::new(flux_apply().unwrap())
            .args(["-build-only", "-root"])
            .arg(self.repo())
            .args(["-path", &k.path])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "flux-apply -build-only: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        documents(&stdout)
    }

    /// Builds the Kustomization's folder with krusty and applies it with Flux's engine;
    /// the change set as (subject, action) pairs.
    fn flux_apply(&self, p: &Plane, k: &Kustomization) -> Vec<(String, String)> {
        // What Flux reads is the committed tree, not the worktree: check that the folder
        // is committed and nothing in the worktree differs from it.
        let tracked = git(&self.repo(), &["ls-files", "--", &k.path]);
        assert!(
            tracked.contains("kustomization.yaml"),
            "{} holds no committed kustomization.yaml: {tracked}",
            k.path
        );
        let dirty = git(&self.repo(), &["status", "--porcelain", "--", &k.path]);
        assert_eq!(dirty, "", "the worktree differs from the commit");
        let out = Command::new(flux_apply().unwrap())
            .arg("-kubeconfig")
            .arg(&p.admin)
            .arg("-root")
            .arg(self.repo())
            .args([
                "-path",
                &k.path,
                "-name",
                &k.name,
                "-namespace",
                &k.namespace,
            ])
            .args(["-timeout", "60s"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "flux-apply: {stderr}\n{stdout}");
        let result: Value = serde_json::from_str(&stdout).unwrap();
        result["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["subject"].as_str().unwrap().to_string(),
                    e["action"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

/// Deletes the CRD (and so the CR) when dropped, so that the objects Flux's engine owns
/// never reach another test, even when this one fails.
struct ResetOnDrop<'a>(&'a Plane);

impl Drop for ResetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.reset();
    }
}

const CRD: &str = "CustomResourceDefinition/clusterinventories.lok8s.dev";
const CR: &str = "ClusterInventory/cluster";

/// The live object equals clinv's render: the ClusterInventory that krusty builds from the
/// committed folder exactly, and the newest snapshot apart from `renderedAt` (a snapshot
/// that differs only there is not committed). It carries Flux's owner labels and is
/// managed by kustomize-controller.
fn assert_live_is_the_render(p: &Plane, fx: &Fx, k: &Kustomization) -> Value {
    let live = p.live().expect("the ClusterInventory is live");
    let built = fx.built(k);
    let rendered = built
        .iter()
        .find(|d| d["kind"] == "ClusterInventory")
        .expect("the folder builds a ClusterInventory");
    assert_eq!(live["spec"], rendered["spec"]);
    let mut snapshot = fx.rendered();
    let mut spec = live["spec"].clone();
    for s in [&mut snapshot["spec"], &mut spec] {
        s.as_object_mut().unwrap().remove("renderedAt");
    }
    assert_eq!(spec, snapshot["spec"]);
    let labels = live["metadata"]["labels"].as_object().unwrap();
    for (key, value) in rendered["metadata"]["labels"].as_object().unwrap() {
        assert_eq!(labels.get(key), Some(value), "label {key}");
    }
    assert_eq!(labels["kustomize.toolkit.fluxcd.io/name"], k.name.as_str());
    assert_eq!(
        labels["kustomize.toolkit.fluxcd.io/namespace"],
        k.namespace.as_str()
    );
    let with_fields = p.live_managed();
    let managers = crate::managers(&with_fields);
    assert!(
        managers.contains(&("kustomize-controller", "Apply")),
        "{managers:?}"
    );
    live
}

fn flux_applies_the_committed_folder_from_empty_through_a_pin_bump_and_an_addon_removal_idempotently()
 {
    let p = plane();
    p.reset();
    let _reset = ResetOnDrop(&p);
    let fx = Fx::new();
    // A snapshot recorded at `epoch` and committed, the commit saying `said`.
    let commit = |epoch: &str, said: &str| {
        fx.record_at(epoch);
        let out = fx.commit();
        assert!(out.contains(said), "{out}");
    };
    commit("1700000000", "committed");
    let k = fx.kustomization();
    // Flux's engine applies the folder: the CRD and the CR change as `crd` and `cr` say,
    // and the live object is the render; it and its addons.
    let apply = |crd: &str, cr: &str| {
        let changes = fx.flux_apply(&p, &k);
        let want = [(CRD, crd), (CR, cr)].map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(changes, want);
        let live = assert_live_is_the_render(&p, &fx, &k);
        let addons = live["spec"]["addons"].to_string();
        (live, addons)
    };

    // An empty cluster: the CRD lands (and is waited for), then the CR.
    let (_, addons) = apply("created", "created");
    assert!(addons.contains("\"1.19.2\""), "{addons}");

    // A chart pin bump, committed: the CR is configured, the CRD is left alone.
    set_chart_version(&fx.root(), "cilium", "1.19.3");
    commit("1700000100", "cilium 1.19.2 → 1.19.3");
    let (_, addons) = apply("unchanged", "configured");
    assert!(
        addons.contains("\"1.19.3\"") && !addons.contains("\"1.19.2\""),
        "{addons}"
    );

    // An addon removed from the cluster's spec, committed: gone from the live object.
    let spec = fx
        .root()
        .join("clusters")
        .join(DOMAIN)
        .join("cluster.lok8s.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("\n    - metrics-server\n"), "{text}");
    std::fs::write(&spec, text.replace("\n    - metrics-server\n", "\n")).unwrap();
    commit("1700000200", "committed");
    let (live, addons) = apply("unchanged", "configured");
    assert!(!addons.contains("metrics-server"), "{addons}");
    assert!(addons.contains("cert-manager"), "{addons}");

    // Re-applied unchanged (also after a snapshot that differs only in renderedAt, which
    // commits nothing): Flux's engine finds nothing to change, and the object is the same
    // down to its resourceVersion.
    commit("1700000300", "up to date");
    for _ in 0..2 {
        let (again, _) = apply("unchanged", "unchanged");
        assert_eq!(
            again["metadata"]["resourceVersion"],
            live["metadata"]["resourceVersion"]
        );
    }
}

/// A fixture CRD as upstream published it: `NAME.yaml`, or `NAME.yaml.gz` (the 1.4 MB
/// ApplicationSet CRD, kept compressed) unpacked into `scratch`; its sha256 must be the one
/// the fixtures' README records. `None` for other files.
fn upstream_crd(path: &Path, scratch: &Path) -> Option<(PathBuf, String)> {
    use sha2::Digest;
    let name = path.file_name()?.to_str()?;
    let (file, text) = if let Some(plain) = name.strip_suffix(".gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()),
            &mut text,
        )
        .unwrap();
        let unpacked = scratch.join(plain);
        std::fs::write(&unpacked, &text).unwrap();
        (unpacked, text)
    } else {
        (path.to_path_buf(), std::fs::read_to_string(path).ok()?)
    };
    let plain = file.file_name()?.to_str()?.to_string();
    if !plain.ends_with(".yaml") {
        return None;
    }
    let readme = std::fs::read_to_string(path.with_file_name("README.md")).unwrap();
    let recorded = readme
        .lines()
        .find(|l| l.starts_with(&format!("| `{plain}` |")))
        .and_then(|l| l.trim_end_matches('|').rsplit('|').next())
        .map(str::trim)
        .unwrap_or_else(|| panic!("tests/fixtures/crds/README.md does not list {plain}"));
    let digest = format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
    assert_eq!(
        digest, recorded,
        "{plain} is not the upstream file the README names"
    );
    Some((file, text))
}

/// The Flux and Argo CD CRDs of `tests/fixtures/crds/` installed (server-side: the Argo CD
/// ones are too large for a last-applied annotation), Established, and the namespaces the
/// printed objects live in.
fn install_gitops_crds(p: &Plane) {
    let dir = fixture("crds");
    let unpacked = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some((path, text)) = upstream_crd(&path, unpacked.path()) else {
            continue;
        };
        names.extend(p.apply_crds(&path, &text, MANAGER));
    }
    names.sort();
    assert_eq!(
        names,
        [
            "crd/applications.argoproj.io",
            "crd/applicationsets.argoproj.io",
            "crd/gitrepositories.source.toolkit.fluxcd.io",
            "crd/kustomizations.kustomize.toolkit.fluxcd.io",
            "crd/ocirepositories.source.toolkit.fluxcd.io",
        ]
    );
    for name in &names {
        p.wait_established(name);
    }
    let namespaces = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: argocd\n";
    p.apply(MANAGER, &[], namespaces);
}

/// A strict server-side dry run of `doc`: (exit code, stdout + stderr).
fn dry_run(p: &Plane, doc: &Value) -> (i32, String) {
    let yaml = serde_saphyr::to_string(doc).unwrap();
    let (code, out, err) = p.kubectl_as(
        &p.admin,
        &[
            "apply",
            "--server-side",
            "--dry-run=server",
            "--validate=strict",
            &format!("--field-manager={MANAGER}"),
            "-f",
            "-",
        ],
        Some(&yaml),
    );
    (code, format!("{out}{err}"))
}

/// Every printed document passes; the same documents with an unknown field, or the field
/// at `bad_value` of the first `kind` document set to `wrong`, are rejected (the dry run
/// really checks the schema).
fn assert_valid(p: &Plane, docs: &[Value], kind: &str, bad_value: &[&str], wrong: &str) {
    for doc in docs {
        let (code, out) = dry_run(p, doc);
        assert_eq!(code, 0, "{out}\n{doc:#}");
        assert!(out.contains("(server dry run)"), "{out}");

        let mut unknown = doc.clone();
        unknown["spec"]["notAField"] = Value::Bool(true);
        let (code, out) = dry_run(p, &unknown);
        assert_ne!(code, 0, "an unknown field passed: {out}");
        assert!(out.contains("notAField"), "{out}");
    }
    let mut bad = docs.iter().find(|d| d["kind"] == kind).unwrap().clone();
    let mut at = &mut bad;
    for key in bad_value {
        at = &mut at[*key];
    }
    *at = wrong.into();
    let (code, out) = dry_run(p, &bad);
    assert_ne!(code, 0, "{bad_value:?} = {wrong:?} passed: {out}");
}

/// The gitops CRDs installed on the plane and a fixture with one committed inventory: what
/// the `--print-*` checks start from.
fn committed(p: &Plane) -> Fx {
    install_gitops_crds(p);
    let fx = Fx::new();
    fx.record_at("1700000000");
    fx.commit();
    fx
}

fn the_printed_flux_objects_pass_a_strict_dry_run_against_the_real_flux_crds() {
    let p = plane();
    let fx = committed(&p);
    let (text, docs) = fx.printed("--print-flux");
    assert!(
        docs.iter().any(|d| d["kind"] == "Kustomization"),
        "no Kustomization:\n{text}"
    );
    for doc in &docs {
        let api = doc["apiVersion"].as_str().unwrap_or_default();
        assert!(
            matches!(
                (api, doc["kind"].as_str().unwrap_or_default()),
                ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
                    | ("source.toolkit.fluxcd.io/v1", "GitRepository")
            ),
            "unexpected object (not covered by the fixtures' CRDs):\n{text}"
        );
    }
    assert_valid(
        &p,
        &docs,
        "Kustomization",
        &["spec", "interval"],
        "ten minutes",
    );
}

/// `clinv push --print-flux` / `--print-argo` (issue #27): the OCIRepository, its
/// Kustomization and the Argo CD Application for an artifact pass the real CRDs' strict
/// dry run, with a Secret, a CA Secret and `insecure` named as asked.
fn the_printed_oci_objects_pass_a_strict_dry_run_against_the_real_crds() {
    let p = plane();
    install_gitops_crds(&p);
    let fx = Fx::new();
    let print = |extra: &[&str]| {
        let run = fx
            .clinv(&[
                "push",
                "oci://registry.acme.example:5000/inventories/prod:v3",
                "--domain",
                DOMAIN,
            ])
            .args(extra)
            .run()
            .success();
        (documents(&run.stdout), run.stderr)
    };
    let (docs, stderr) = print(&[
        "--print-flux",
        "--creds-env",
        "REGISTRY_AUTH",
        "--ca-file",
        "/etc/ca.pem",
    ]);
    assert_eq!(docs[0]["kind"], "OCIRepository");
    assert_eq!(
        docs[0]["spec"]["url"],
        "oci://registry.acme.example:5000/inventories/prod"
    );
    assert_eq!(docs[0]["spec"]["ref"]["tag"], "v3");
    assert_eq!(
        docs[0]["spec"]["secretRef"]["name"],
        docs[0]["metadata"]["name"]
    );
    assert!(docs[0]["spec"]["certSecretRef"]["name"].is_string());
    assert_eq!(docs[1]["spec"]["sourceRef"]["kind"], "OCIRepository");
    assert!(
        stderr.contains("create secret docker-registry") && stderr.contains("ca.crt=/etc/ca.pem"),
        "{stderr}"
    );
    assert_valid(&p, &docs, "OCIRepository", &["spec", "ref"], "v3");
    let (docs, _) = print(&["--print-flux", "--plain-http"]);
    assert_eq!(docs[0]["spec"]["insecure"], true);
    assert!(docs[0]["spec"]["secretRef"].is_null());
    assert_valid(&p, &docs, "OCIRepository", &["spec", "insecure"], "yes");
    let (docs, stderr) = print(&["--print-argo", "--layer-media-type", "oci"]);
    assert_eq!(
        docs[0]["spec"]["source"]["repoURL"],
        "oci://registry.acme.example:5000/inventories/prod"
    );
    assert_eq!(docs[0]["spec"]["source"]["targetRevision"], "v3");
    assert!(!stderr.contains("refuses"), "{stderr}");
    assert_valid(&p, &docs, "Application", &["spec", "source"], "oci");
}

fn the_printed_argo_application_passes_a_strict_dry_run_against_the_real_argo_crds() {
    let p = plane();
    let fx = committed(&p);
    let (text, docs) = fx.printed("--print-argo");
    let app = docs
        .iter()
        .find(|d| d["kind"] == "Application")
        .unwrap_or_else(|| panic!("no Application:\n{text}"));
    assert_eq!(app["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(app["spec"]["source"]["repoURL"], ORIGIN, "{text}");
    assert_valid(
        &p,
        &docs,
        "Application",
        &["spec", "syncPolicy", "automated", "prune"],
        "sometimes",
    );
}

fn the_printed_argo_applicationset_passes_a_strict_dry_run_against_the_real_argo_crds() {
    let p = plane();
    let fx = committed(&p);
    let (text, docs) = fx.printed_all(&["--print-argo", "--all"]);
    let set = docs
        .iter()
        .find(|d| d["kind"] == "ApplicationSet")
        .unwrap_or_else(|| panic!("no ApplicationSet:\n{text}"));
    assert_eq!(set["apiVersion"], "argoproj.io/v1alpha1");
    assert_valid(
        &p,
        &docs,
        "ApplicationSet",
        &["spec", "goTemplate"],
        "sometimes",
    );
}

trials! {
    Plane: [
        the_printed_argo_applicationset_passes_a_strict_dry_run_against_the_real_argo_crds,
        the_printed_flux_objects_pass_a_strict_dry_run_against_the_real_flux_crds,
        the_printed_argo_application_passes_a_strict_dry_run_against_the_real_argo_crds,
        the_printed_oci_objects_pass_a_strict_dry_run_against_the_real_crds,
    ],
    PlaneAndFluxApply: [
        flux_applies_the_committed_folder_from_empty_through_a_pin_bump_and_an_addon_removal_idempotently,
    ],
}
