//! What `clinv push oci://…` writes, read back by two independent OCI clients against the
//! real registry of `oci.rs` (Debian's docker-registry over TLS with a test CA, htpasswd):
//! ORAS's `oras` and go-containerregistry's `crane` (the library `flux` and Flux's
//! source-controller are built on). `scripts/oci-tools build` builds both from the Go
//! module proxy at pinned versions; the tests find them through `CLINV_OCI_TOOLS`, which
//! `scripts/test` sets. Both get the CA and the credentials the way an operator gives them
//! (`oras login --registry-config` into the test's folder, which crane reads as
//! `DOCKER_CONFIG`; `--ca-file` and `SSL_CERT_FILE`), nothing in `$HOME`.
//!
//! There is no reading command in clinv yet (no `pull`), so the reverse direction is what
//! a push meets in a shared repository: a tag another client moved is written again.

use crate::registry::{PASSWORD, Registry, USER};
use crate::support::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const DOMAIN: &str = "prod.acme.example";
const REPOSITORY: &str = "inventories/prod";
const TITLE: &str = "clusterinventory-prod.acme.example.tar.gz";
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const FLUX_CONFIG: &str = "application/vnd.cncf.flux.config.v1+json";
const FLUX_LAYER: &str = "application/vnd.cncf.flux.content.v1.tar+gzip";
const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// 2026-01-01T00:00:00Z, the render time of every push here.
const EPOCH: &str = "1767225600";

/// The folder `scripts/oci-tools build` printed, holding `oras` and `crane`.
pub fn present() -> Result<(), String> {
    tools().map(|_| ())
}

fn tools() -> Result<PathBuf, String> {
    crate::harness::built_tools(
        "oras/crane",
        "CLINV_OCI_TOOLS",
        &["oras", "crane"],
        "scripts/oci-tools",
    )
}

struct Fx {
    dir: tempfile::TempDir,
    project: tempfile::TempDir,
    registry: Registry,
    tools: PathBuf,
}

impl Fx {
    /// A registry, a copy of the example project, and `oras login` into the test's folder.
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["registry", "home", "docker"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let registry = Registry::start(&dir.path().join("registry"));
        let fx = Fx {
            project: copy_tree(&example()),
            registry,
            tools: tools().unwrap(),
            dir,
        };
        let mut login = fx.tool("oras");
        login
            .args(["login", &fx.host(), "-u", USER, "--password-stdin"])
            .args(fx.oras_access())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = login.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), PASSWORD.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "oras login: {}", text(&out.stderr));
        fx
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.registry.port)
    }

    /// `host/repository:tag` (or `@digest`), as oras and crane name an artifact.
    fn at(&self, tag: &str) -> String {
        let sep = if tag.starts_with("sha256:") { '@' } else { ':' };
        format!("{}/{REPOSITORY}{sep}{tag}", self.host())
    }

    /// oras's flags for the test's CA and credentials file.
    fn oras_access(&self) -> Vec<String> {
        vec![
            "--ca-file".into(),
            self.registry.ca(),
            "--registry-config".into(),
            self.dir
                .path()
                .join("docker/config.json")
                .display()
                .to_string(),
        ]
    }

    /// `tool` with a clean environment: a scratch `$HOME`, the Docker config oras wrote,
    /// the test CA as Go's trust store.
    fn tool(&self, tool: &str) -> Command {
        let mut cmd = Command::new(self.tools.join(tool));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("DOCKER_CONFIG", self.dir.path().join("docker"))
            .env("SSL_CERT_FILE", self.registry.ca());
        cmd
    }

    /// `oras SUBCOMMAND ARGS… --ca-file … --registry-config …`, its stdout.
    fn oras(&self, args: &[&str]) -> Vec<u8> {
        let out = self
            .tool("oras")
            .args(args)
            .args(self.oras_access())
            .output();
        checked("oras", args, out.unwrap())
    }

    fn crane(&self, args: &[&str]) -> Vec<u8> {
        let out = self.tool("crane").args(args).output();
        checked("crane", args, out.unwrap())
    }

    /// `clinv push` of prod with `extra`, the test's CA and credentials; its digest.
    fn push(&self, extra: &[&str]) -> (Run, String) {
        let (root, url, ca) = (
            self.project.path().display().to_string(),
            self.registry.url(REPOSITORY),
            self.registry.ca(),
        );
        let mut args = vec!["push", &url, "--root", &root, "--domain", DOMAIN];
        args.extend([
            "--ca-file",
            &ca,
            "--creds-env",
            "REGISTRY_AUTH",
            "-o",
            "json",
        ]);
        args.extend_from_slice(extra);
        let run = clinv(&args)
            .store(self.store())
            .env("REGISTRY_AUTH", &format!("{USER}:{PASSWORD}"))
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .run()
            .success();
        no_secret(&run);
        let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let digest = out["digest"].as_str().unwrap().to_string();
        (run, digest)
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    /// `clinv render --out` of prod, at the push's render time: the folder's two objects.
    fn rendered(&self) -> BTreeMap<String, Vec<u8>> {
        let out = self.dir.path().join("render-out");
        let (root, to) = (
            self.project.path().display().to_string(),
            out.display().to_string(),
        );
        clinv(&["render", "--root", &root, "--domain", DOMAIN, "--out", &to])
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .run()
            .success();
        files_under(&out)
    }

    /// `clinv commit` of prod into a fresh repository, at the push's render time: the
    /// folder it writes.
    fn committed(&self) -> BTreeMap<String, Vec<u8>> {
        let repo = self.dir.path().join("repo");
        git(self.dir.path(), &["init", "-q", "-b", "main", "repo"]);
        git(&repo, &["config", "user.name", "Inventory Bot"]);
        git(&repo, &["config", "user.email", "bot@acme.example"]);
        let (root, to) = (
            self.project.path().display().to_string(),
            repo.display().to_string(),
        );
        clinv(&["commit", "--root", &root, "--domain", DOMAIN, "--repo", &to])
            .store(self.store())
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .run()
            .success();
        files_under(&repo.join("clusters").join(DOMAIN).join("inventory"))
    }

    /// `oras pull` of `reference` into a fresh folder: the files it wrote.
    fn pulled(&self, reference: &str, into: &str) -> BTreeMap<String, Vec<u8>> {
        let out = self.dir.path().join(into);
        self.oras(&["pull", reference, "-o", out.to_str().unwrap()]);
        files_under(&out)
    }
}

fn checked(tool: &str, args: &[&str], out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{tool} {}: {}",
        args.join(" "),
        text(&out.stderr)
    );
    out.stdout
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under `dir` by its slash path relative to `dir`, with its bytes.
fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    all_files(dir)
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The files of a gzip'd tar by path; every entry must be a regular file.
fn unpacked(tar_gz: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(tar_gz)
        .read_to_end(&mut tar)
        .unwrap();
    let mut files = BTreeMap::new();
    for entry in tar::Archive::new(&tar[..]).entries().unwrap() {
        let mut entry = entry.unwrap();
        assert_eq!(entry.header().entry_type(), tar::EntryType::Regular);
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        assert!(files.insert(path, bytes).is_none(), "a path twice");
    }
    files
}

fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The snapshot id `clinv push` names on stderr ("pushed snapshot <id> of …").
fn snapshot_of(run: &Run) -> String {
    let after = run.stderr.split("pushed snapshot ").nth(1);
    let id = after.and_then(|a| a.split_whitespace().next());
    id.unwrap_or_else(|| panic!("no snapshot id: {}", run.stderr))
        .to_string()
}

/// The manifest as Flux's `flux push artifact` writes it, with the layer type asked for,
/// the layer titled for `oras pull`, and exactly the annotations clinv was given or sets.
fn check_manifest(m: &serde_json::Value, layer_type: &str, snapshot: &str) {
    assert_eq!(m["schemaVersion"], 2);
    assert_eq!(m["mediaType"], MANIFEST);
    assert!(m.get("artifactType").is_none(), "Flux writes none: {m}");
    assert_eq!(m["config"]["mediaType"], FLUX_CONFIG);
    assert_eq!(m["config"]["digest"], sha256_digest(b"{}"));
    assert_eq!(m["config"]["size"], 2);
    let layers = m["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "one content layer: {m}");
    assert_eq!(layers[0]["mediaType"], layer_type);
    assert_eq!(
        layers[0]["annotations"],
        serde_json::json!({ "org.opencontainers.image.title": TITLE })
    );
    let notes: BTreeMap<String, String> = serde_json::from_value(m["annotations"].clone()).unwrap();
    let want = [
        ("org.opencontainers.image.created", "2026-01-01T00:00:00Z"),
        (
            "org.opencontainers.image.revision",
            &snapshot[..snapshot.len().min(12)],
        ),
        (
            "org.opencontainers.image.source",
            "https://git.acme.example/platform/fleet",
        ),
        ("team", "platform"),
    ];
    let keys: Vec<&str> = notes.keys().map(String::as_str).collect();
    assert_eq!(keys, want.map(|(k, _)| k), "{m}");
    for (key, value) in want {
        assert!(notes[key].starts_with(value), "{key}: {}", notes[key]);
    }
}

/// What clinv pushed with `layer_args`, read back by oras and crane: the same manifest
/// bytes through both, under both tags, whose digest is the one clinv printed; Flux's
/// media types and the annotations; the config; and the layer `oras pull` writes under
/// its title, checked by [`check_layer`].
fn read_back(layer_args: &[&str], layer_type: &str) {
    let fx = Fx::new();
    let mut extra = vec![
        "--source",
        "https://git.acme.example/platform/fleet",
        "-a",
        "team=platform",
    ];
    extra.extend_from_slice(layer_args);
    let (run, digest) = fx.push(&extra);
    let snapshot = snapshot_of(&run);
    let snapshot_tag = format!("snapshot-{snapshot}");
    for tag in ["latest", snapshot_tag.as_str()] {
        let by_crane = text(&fx.crane(&["digest", &fx.at(tag)]));
        assert_eq!(by_crane.trim(), digest, "crane digest of {tag}");
    }
    let listed = text(&fx.crane(&["ls", &format!("{}/{REPOSITORY}", fx.host())]));
    let mut tags: Vec<&str> = listed.lines().collect();
    tags.sort_unstable();
    assert_eq!(tags, ["latest", snapshot_tag.as_str()]);
    let manifest = fx.crane(&["manifest", &fx.at("latest")]);
    assert_eq!(
        fx.oras(&["manifest", "fetch", &fx.at(&digest)]),
        manifest,
        "oras and crane read the same manifest"
    );
    assert_eq!(sha256_digest(&manifest), digest);
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    check_manifest(&m, layer_type, &snapshot);
    assert_eq!(fx.crane(&["config", &fx.at("latest")]), b"{}");
    let pulled = fx.pulled(&fx.at("latest"), "pulled");
    assert_eq!(pulled.keys().collect::<Vec<_>>(), [TITLE], "only the layer");
    let blob = &pulled[TITLE];
    assert_eq!(sha256_digest(blob), m["layers"][0]["digest"]);
    assert_eq!(blob.len(), m["layers"][0]["size"]);
    check_layer(&fx, blob);
}

/// The Argo CD annotation `clinv commit` adds to each object of the folder (docs/guide/
/// gitops.md), which `render --out` does not write.
const ARGO: [(&str, &str); 2] = [
    (
        "clusterinventory.crd.yaml",
        "  annotations:\n    argocd.argoproj.io/sync-wave: '-1'\n",
    ),
    (
        "clusterinventory.yaml",
        "  annotations:\n    argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true\n",
    ),
];

/// A pulled layer: a tar+gzip of exactly the folder `clinv commit` writes, byte for byte;
/// its two objects `clinv render --out`'s but for the Argo CD annotation the folder adds.
fn check_layer(fx: &Fx, blob: &[u8]) {
    let files = unpacked(blob);
    let committed = fx.committed();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        [
            "clusterinventory.crd.yaml",
            "clusterinventory.yaml",
            "kustomization.yaml"
        ]
    );
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &committed {
        assert!(files[name] == *bytes, "{name} differs from commit's");
    }
    assert_eq!(
        text(&files["kustomization.yaml"]),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - clusterinventory.crd.yaml\n  - clusterinventory.yaml\n"
    );
    let rendered = fx.rendered();
    assert_eq!(rendered.len(), 2, "{:?}", rendered.keys());
    for (name, annotation) in ARGO {
        let object = text(&files[name]);
        assert_eq!(object.matches(annotation).count(), 1, "{name}: {object}");
        assert_eq!(
            object.replacen(annotation, "", 1),
            text(&rendered[name]),
            "{name}"
        );
    }
}

/// Flux's layer type (`flux push artifact`'s, the default).
fn oras_and_crane_read_a_flux_layer() {
    read_back(&[], FLUX_LAYER);
}

/// `--layer-media-type oci`, the type a default Argo CD takes.
fn oras_and_crane_read_an_oci_layer() {
    read_back(&["--layer-media-type", "oci"], OCI_LAYER);
}

/// ORAS packing the same parts — the layer clinv wrote under its title, a `{}` config
/// of Flux's type, the same annotations — writes the byte-identical manifest: clinv's
/// digest is the one a standard client computes, not an artefact of its own encoding;
/// and `clinv diff` reads the artifact oras pushed.
fn oras_packs_the_same_parts_into_the_same_manifest() {
    let fx = Fx::new();
    let (run, digest) = fx.push(&[
        "--source",
        "https://git.acme.example/platform/fleet",
        "-a",
        "team=platform",
    ]);
    let manifest = fx.crane(&["manifest", &fx.at(&digest)]);
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    check_manifest(&m, FLUX_LAYER, &snapshot_of(&run));
    let parts = fx.dir.path().join("parts");
    std::fs::create_dir_all(&parts).unwrap();
    fx.pulled(&fx.at(&digest), "parts");
    std::fs::write(parts.join("config.json"), b"{}").unwrap();
    let layer = format!("{TITLE}:{FLUX_LAYER}");
    let config = format!("config.json:{FLUX_CONFIG}");
    let mut args = vec!["push".to_string(), fx.at("by-oras"), layer];
    args.extend(["--config".to_string(), config]);
    for (key, value) in m["annotations"].as_object().unwrap() {
        args.push("--annotation".into());
        args.push(format!("{key}={}", value.as_str().unwrap()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = fx
        .tool("oras")
        .current_dir(&parts)
        .args(&args)
        .args(fx.oras_access())
        .output();
    checked("oras", &args, out.unwrap());
    let by_oras = fx.crane(&["manifest", &fx.at("by-oras")]);
    assert_eq!(text(&by_oras), text(&manifest));
    assert_eq!(
        text(&fx.crane(&["digest", &fx.at("by-oras")])).trim(),
        digest
    );
    // And back: clinv reads what oras pushed, as the same inventory.
    let by_oras = format!("oci://{}", fx.at("by-oras"));
    let by_clinv = format!("oci://{}", fx.at(&digest));
    let same = fx.registry.clinv(&["diff", &by_oras, &by_clinv]).run();
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
}

/// A tag another client moved (oras pushed something else as `latest`) is written again
/// by the next push of the same inventory — clinv asks the registry, it does not trust
/// what it pushed before — and the immutable snapshot tag, still right, is left alone.
fn a_tag_another_client_moved_is_written_again() {
    let fx = Fx::new();
    let (_, digest) = fx.push(&[]);
    let other = fx.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "not an inventory\n").unwrap();
    let at = fx.at("latest");
    let args = ["push", at.as_str(), "notes.txt"];
    let mut oras = fx.tool("oras");
    oras.current_dir(&other).args(args).args(fx.oras_access());
    checked("oras", &args, oras.output().unwrap());
    let moved = text(&fx.crane(&["digest", &fx.at("latest")]));
    assert_ne!(moved.trim(), digest, "oras moved latest");
    let (again, same) = fx.push(&[]);
    assert_eq!(same, digest, "the same inventory, the same artifact");
    assert_has(&again.stderr, "0 blob(s) uploaded; tagged latest)");
    assert_eq!(
        text(&fx.crane(&["digest", &fx.at("latest")])).trim(),
        digest
    );
}

/// Requests of `method` on the repository's manifests the registry has answered so far
/// (its own log, as `oci.rs` counts them).
fn manifest_requests(fx: &Fx, method: &str) -> usize {
    let log = std::fs::read_to_string(fx.dir.path().join("registry/registry.log")).unwrap();
    log.lines()
        .filter(|l| {
            l.contains(&format!("http.request.method={method}"))
                && l.contains("response completed")
                && l.contains(&format!("/v2/{REPOSITORY}/manifests/"))
        })
        .count()
}

/// A changed inventory is a new layer, so a new manifest no tag can name yet: its two
/// tags are written without a `HEAD` each first (what oras does too) — and both name it.
fn a_changed_push_writes_its_tags_without_asking() {
    let fx = Fx::new();
    let (_, first) = fx.push(&[]);
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let (heads, puts) = (
        manifest_requests(&fx, "HEAD"),
        manifest_requests(&fx, "PUT"),
    );
    let (run, changed) = fx.push(&[]);
    assert_ne!(changed, first);
    assert_eq!(manifest_requests(&fx, "HEAD"), heads, "no tag check");
    assert_eq!(manifest_requests(&fx, "PUT"), puts + 2, "both tags written");
    let snapshot_tag = format!("snapshot-{}", snapshot_of(&run));
    for tag in ["latest", snapshot_tag.as_str()] {
        let by_crane = text(&fx.crane(&["digest", &fx.at(tag)]));
        assert_eq!(by_crane.trim(), changed, "crane digest of {tag}");
    }
}

trials! {
    RegistryAndOciTools: [
        oras_and_crane_read_a_flux_layer,
        oras_and_crane_read_an_oci_layer,
        oras_packs_the_same_parts_into_the_same_manifest,
        a_tag_another_client_moved_is_written_again,
        a_changed_push_writes_its_tags_without_asking,
    ],
}
