//! `clinv push oci://…` to a real registry on loopback: Debian's docker-registry (the
//! distribution project, what Harbor and many internal registries run) over TLS with a
//! CA made at test time and htpasswd basic auth. What is pushed is read back through the
//! registry's own API (manifest, blobs) and unpacked.

use crate::registry::{PASSWORD, Registry, SERVICE, USER, key_pair};
use crate::support::*;
use std::io::Read;
use std::path::Path;
use std::process::Command;

const DOMAIN: &str = "prod.acme.example";

struct Fx {
    dir: tempfile::TempDir,
    project: tempfile::TempDir,
    registry: Registry,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let reg = dir.path().join("registry");
        std::fs::create_dir_all(&reg).unwrap();
        let registry = Registry::start(&reg);
        let project = copy_tree(&example());
        Fx {
            dir,
            project,
            registry,
        }
    }

    /// `clinv push` of prod to the registry, with `args` and nothing else of the test's.
    fn bare(&self, args: &[&str]) -> Clinv {
        let root = self.project.path().to_path_buf();
        let url = self.registry.url("inventories/prod");
        clinv(&["push", &url])
            .project(&root, DOMAIN)
            .args(args)
            .env(
                "CLINV_SNAPSHOTS",
                self.dir.path().join("store").to_str().unwrap(),
            )
    }

    /// [`Fx::bare`] with the registry's CA and credentials, at a fixed render time.
    fn push(&self, extra: &[&str]) -> Clinv {
        let ca = self.registry.ca();
        let mut args = vec!["--ca-file", &ca, "--creds-env", "REGISTRY_AUTH"];
        args.extend_from_slice(extra);
        self.bare(&args)
            .env("REGISTRY_AUTH", &format!("{USER}:{PASSWORD}"))
            .env("SOURCE_DATE_EPOCH", "1767225600")
    }
}

/// The pushed artifact, read back through the registry's API: Flux's media types, the
/// annotations from the snapshot, one layer holding exactly the folder `commit` writes.
fn push_to_a_registry_and_read_it_back() {
    let fx = Fx::new();
    let run = fx.push(&["-o", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    no_secret(&run);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let digest = out["digest"].as_str().unwrap().to_string();
    let repository = format!("127.0.0.1:{}/inventories/prod", fx.registry.port);
    assert_eq!(out["repository"], repository.as_str());
    assert_eq!(out["tag"], "latest");
    assert_eq!(out["url"], format!("{repository}:latest@{digest}"));
    let manifest = fx.registry.get(
        "inventories/prod/manifests/latest",
        "application/vnd.oci.image.manifest.v1+json",
    );
    assert_eq!(
        sha256_digest(&manifest),
        digest,
        "the tag names what was printed"
    );
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(
        m["config"]["mediaType"],
        "application/vnd.cncf.flux.config.v1+json"
    );
    assert_eq!(m["layers"].as_array().unwrap().len(), 1);
    let layer = &m["layers"][0];
    assert_eq!(
        layer["mediaType"],
        "application/vnd.cncf.flux.content.v1.tar+gzip"
    );
    assert_eq!(
        m["annotations"]["org.opencontainers.image.created"], "2026-01-01T00:00:00Z",
        "the snapshot's time, from SOURCE_DATE_EPOCH, not now"
    );
    assert!(m["annotations"]["org.opencontainers.image.revision"].is_string());
    // The immutable tag names the same manifest.
    let snapshot = run.stderr.split("pushed snapshot ").nth(1).unwrap()[..12].to_string();
    let by_snapshot = fx.registry.get(
        &format!("inventories/prod/manifests/snapshot-{snapshot}"),
        "application/vnd.oci.image.manifest.v1+json",
    );
    assert_eq!(by_snapshot, manifest);
    // The layer is the folder, as commit writes it.
    let blob = fx.registry.get(
        &format!(
            "inventories/prod/blobs/{}",
            layer["digest"].as_str().unwrap()
        ),
        "*/*",
    );
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(&blob[..])
        .read_to_end(&mut tar)
        .unwrap();
    let mut names = Vec::new();
    for entry in tar::Archive::new(&tar[..]).entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().display().to_string();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        if name == "clusterinventory.yaml" {
            assert!(
                text.contains(&format!("lok8s.dev/domain: {DOMAIN}")),
                "{text}"
            );
        }
        names.push(name);
    }
    assert_eq!(
        names,
        [
            "clusterinventory.crd.yaml",
            "clusterinventory.yaml",
            "kustomization.yaml"
        ]
    );
    // Read by digest, as Argo CD's repo-server resolves the tag first.
    let inventory = fx
        .registry
        .pulled_file("inventories/prod", &digest, "clusterinventory.yaml");
    assert!(inventory.contains("kind: ClusterInventory"), "{inventory}");
    // The registry channel is the snapshot's state, with the digest.
    let store = fx.dir.path().join("store");
    let clinv_store = |args: &[&str]| clinv(args).store(&store).run().success();
    let list = clinv_store(&["snapshots", "list", "--domain", DOMAIN]);
    assert_has(&list.stdout, &format!("{snapshot}  pushed"));
    let show = clinv_store(&["snapshots", "show", &snapshot, "--domain", DOMAIN]);
    let want = format!("# registry:   pushed as oci://{repository}:latest@{digest}");
    assert!(show.stdout.contains(&want), "{}", show.stdout);
    let pushed = clinv_store(&[
        "snapshots",
        "list",
        "--domain",
        DOMAIN,
        "--state",
        "pushed",
        "-o",
        "name",
    ]);
    assert_eq!(pushed.stdout.lines().count(), 1, "{}", pushed.stdout);
    // `status` shows the registry channel, the cluster unread (and never in sync).
    let root = fx.project.path().to_str().unwrap();
    let status = clinv(&["status", "--root", root, "--domain", DOMAIN])
        .store(&store)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .run();
    assert_eq!(status.code, 16, "{}", status.stderr);
    let want = format!(", snapshot {snapshot}, as oci://{repository}:latest@{digest})");
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.starts_with("  last pushed:") && l.ends_with(&want)),
        "{}",
        status.stdout
    );
    // So does the fleet view of the store: where each domain's newest snapshot went.
    let fleet = |format: &str| clinv_store(&["fleet", "--from", "store", "-o", format]).stdout;
    let reference = format!("oci://{repository}:latest@{digest}");
    let json: serde_json::Value = serde_json::from_str(&fleet("json")).unwrap();
    assert_eq!(
        json["delivered"][DOMAIN]["pushed"],
        reference.as_str(),
        "{json}"
    );
    let table = fleet("table");
    let row = table.lines().find(|l| l.starts_with("(delivered)"));
    assert!(row.is_some_and(|r| r.ends_with(" pushed")), "{table}");
    assert_has(&fleet("wide"), &format!("pushed {reference}"));
    assert_has(
        &fleet("html"),
        &format!("<td title=\"{reference}\">pushed</td>"),
    );
}

/// A re-push of identical content uploads nothing and writes no manifest; another
/// machine (a fresh store) gets the same layer digest; a changed inventory a new one.
fn a_repush_of_identical_content_uploads_nothing() {
    let fx = Fx::new();
    let first = fx.push(&[]).run().success();
    let puts = fx.registry.requests("PUT", "/inventories/prod/");
    assert!(puts >= 3, "two blobs and the manifest: {puts}");
    let again = fx.push(&[]).run().success();
    assert_eq!(again.stdout, first.stdout, "the same digest");
    assert_has(&again.stderr, "nothing uploaded");
    assert_eq!(
        fx.registry.requests("PUT", "/inventories/prod/"),
        puts,
        "no PUT"
    );
    // Another machine (a fresh store), the same project and time: the same layer bytes;
    // the manifest differs only by its revision, the other store's snapshot id (a project
    // in a Git checkout gives `<branch>@sha1:<sha>` instead, the same everywhere).
    let layer = |fx: &Fx| {
        let m = fx.registry.get(
            "inventories/prod/manifests/latest",
            "application/vnd.oci.image.manifest.v1+json",
        );
        let m: serde_json::Value = serde_json::from_slice(&m).unwrap();
        (m["layers"][0]["digest"].clone(), m["annotations"].clone())
    };
    let (first_layer, first_notes) = layer(&fx);
    let other = fx
        .push(&[])
        .env(
            "CLINV_SNAPSHOTS",
            fx.dir.path().join("other-store").to_str().unwrap(),
        )
        .run()
        .success();
    assert_ne!(other.stdout, first.stdout);
    let (other_layer, other_notes) = layer(&fx);
    assert_eq!(other_layer, first_layer);
    assert_eq!(
        other_notes["org.opencontainers.image.created"],
        first_notes["org.opencontainers.image.created"]
    );
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let changed = fx.push(&[]).run().success();
    assert_ne!(changed.stdout, first.stdout);
}

/// `--layer-media-type oci` (for Argo CD) changes only the layer's media type; `-a`
/// adds annotations; `--source` sets the source.
fn the_oci_layer_type_and_annotations() {
    let fx = Fx::new();
    let run = fx
        .push(&[
            "--layer-media-type",
            "oci",
            "-a",
            "team=platform",
            "--source",
            "https://git.acme.example/platform/fleet",
            "-o",
            "json",
        ])
        .run()
        .success();
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let manifest = fx.registry.get(
        "inventories/prod/manifests/latest",
        "application/vnd.oci.image.manifest.v1+json",
    );
    assert_eq!(sha256_digest(&manifest), out["digest"].as_str().unwrap());
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(
        m["layers"][0]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar+gzip"
    );
    assert_eq!(m["annotations"]["team"], "platform");
    assert_eq!(
        m["annotations"]["org.opencontainers.image.source"],
        "https://git.acme.example/platform/fleet"
    );
}

/// Refused credentials, no credentials, an untrusted CA and a malformed reference are
/// clear errors with documented exit codes that never show the secret.
fn failures_are_named_without_the_secret() {
    let fx = Fx::new();
    let wrong = fx
        .push(&[])
        .env("REGISTRY_AUTH", &format!("{USER}:FAKESECRET-wrong"))
        .run();
    assert_eq!(wrong.code, 1, "{}", wrong.stderr);
    assert_has(&wrong.stderr, "authentication failed (HTTP 401)");
    assert_has(&wrong.stderr, "credentials were refused");
    no_secret(&wrong);
    let root = fx.project.path().to_path_buf();
    let none = fx
        .bare(&["--ca-file", &fx.registry.ca()])
        .env(
            "DOCKER_CONFIG",
            fx.dir.path().join("no-docker").to_str().unwrap(),
        )
        .run();
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "no credentials for this registry");
    let untrusted = fx.bare(&[]).run();
    assert_eq!(untrusted.code, 1, "{}", untrusted.stderr);
    assert_has(&untrusted.stderr, "127.0.0.1");
    for bad in ["https://r/x", "oci://r/UPPER", "oci://r/x:-tag"] {
        let run = clinv(&["push", bad]).project(&root, DOMAIN).run();
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains(bad), "{}", run.stderr);
    }
    // The Docker config's auths entry is used when no --creds-env is given.
    let docker = fx.dir.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64_encode(&format!("{USER}:{PASSWORD}"));
    std::fs::write(
        docker.join("config.json"),
        format!(
            r#"{{"auths":{{"127.0.0.1:{}":{{"auth":"{auth}"}}}}}}"#,
            fx.registry.port
        ),
    )
    .unwrap();
    let run = fx
        .bare(&["--ca-file", &fx.registry.ca()])
        .env("DOCKER_CONFIG", docker.to_str().unwrap())
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    no_secret(&run);
}

/// `--sign`: a cosign `.sig` manifest beside the artifact whose layer is a simple-signing
/// payload naming the artifact's digest, its signature checked by openssl (not by clinv);
/// a re-push with the same key writes nothing, another key adds a second signature.
fn a_signed_push_carries_a_cosign_signature() {
    let fx = Fx::new();
    let (key, public) = key_pair(fx.dir.path(), "cosign");
    let run = fx
        .push(&["--sign", key.to_str().unwrap(), "-o", "json"])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("; signed)"), "{}", run.stderr);
    let digest = serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let tag = format!("{}.sig", digest.replacen(':', "-", 1));
    let layers = |fx: &Fx| {
        let m = fx.registry.get(
            &format!("inventories/prod/manifests/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
        );
        let m: serde_json::Value = serde_json::from_slice(&m).unwrap();
        m["layers"].as_array().unwrap().clone()
    };
    let first = layers(&fx);
    assert_eq!(first.len(), 1);
    let layer = &first[0];
    assert_eq!(
        layer["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );
    let payload = fx.registry.get(
        &format!(
            "inventories/prod/blobs/{}",
            layer["digest"].as_str().unwrap()
        ),
        "*/*",
    );
    let claims: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        claims["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );
    assert_eq!(
        claims["critical"]["type"],
        "cosign container image signature"
    );
    assert_eq!(
        claims["critical"]["identity"]["docker-reference"],
        format!("127.0.0.1:{}/inventories/prod", fx.registry.port)
    );
    let signature = layer["annotations"]["dev.cosignproject.cosign/signature"]
        .as_str()
        .unwrap();
    assert!(openssl_verifies(
        fx.dir.path(),
        &public,
        &payload,
        signature
    ));
    let (_, other_public) = key_pair(fx.dir.path(), "other");
    assert!(!openssl_verifies(
        fx.dir.path(),
        &other_public,
        &payload,
        signature
    ));
    // The same key again: nothing written.
    let puts = fx.registry.requests("PUT", "/inventories/prod/");
    let again = fx.push(&["--sign", key.to_str().unwrap()]).run().success();
    assert_has(&again.stderr, "signature already there");
    assert_eq!(fx.registry.requests("PUT", "/inventories/prod/"), puts);
    // Another key: its signature is added beside the first.
    let (other_key, _) = key_pair(fx.dir.path(), "second");
    fx.push(&["--sign", other_key.to_str().unwrap()])
        .run()
        .success();
    let both = layers(&fx);
    assert_eq!(both.len(), 2);
    assert_eq!(both[0], first[0]);
    // A key that cannot sign is named, and nothing is pushed.
    let pubs_as_key = fx.push(&["--sign", public.to_str().unwrap()]).run();
    assert_eq!(pubs_as_key.code, 1, "{}", pubs_as_key.stderr);
    assert_has(&pubs_as_key.stderr, "cosign.pub");
}

/// `log --oci`: the history read back from the registry — one entry per pushed
/// inventory, in render order, with what changed; `--verify KEY` passes only while every
/// artifact carries a valid signature by the key: an unsigned one, a tampered signature
/// and another key's public half exit 17 and print nothing.
fn the_registry_history_reads_back_and_verifies() {
    let fx = Fx::new();
    let (key, public) = key_pair(fx.dir.path(), "cosign");
    let (key, public) = (key.to_str().unwrap(), public.to_str().unwrap());
    let push = |epoch: &str, extra: &[&str]| {
        let mut args = vec!["-o", "json"];
        args.extend_from_slice(extra);
        let run = fx
            .push(&args)
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success();
        let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        out["digest"].as_str().unwrap().to_string()
    };
    push("1767225600", &["--sign", key]);
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let second = push("1767312000", &["--sign", key]);
    let url = fx.registry.url("inventories/prod");
    let log = |extra: &[&str]| {
        let mut args = vec!["log", "--oci", &url];
        args.extend_from_slice(extra);
        fx.registry.clinv(&args).run()
    };
    let verified = log(&["--verify", public, "-o", "json"]);
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    no_secret(&verified);
    let trail: serde_json::Value = serde_json::from_str(&verified.stdout).unwrap();
    let entries = trail["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{}", verified.stdout);
    assert_eq!(trail["domain"], DOMAIN);
    assert_eq!(entries[0]["outcome"], "pushed");
    assert!(verified.stdout.contains("1.20.1"), "{}", verified.stdout);
    // Unsigned: refused, nothing printed.
    set_chart_version(fx.project.path(), "cilium", "1.20.2");
    push("1767398400", &[]);
    let plain = log(&["-o", "json"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let n = serde_json::from_str::<serde_json::Value>(&plain.stdout).unwrap();
    assert_eq!(
        n["entries"].as_array().unwrap().len(),
        3,
        "{}",
        plain.stdout
    );
    let unsigned = log(&["--verify", public]);
    assert_eq!(unsigned.code, 17, "{}", unsigned.stderr);
    assert_has(&unsigned.stderr, "not signed");
    assert_eq!(unsigned.stdout, "");
    // Signed again, then the second's signature tampered with; another key.
    push("1767398400", &["--sign", key]);
    assert_eq!(log(&["--verify", public]).code, 0);
    fx.registry.tamper_signature("inventories/prod", &second);
    let tampered = log(&["--verify", public]);
    assert_eq!(tampered.code, 17, "{}", tampered.stderr);
    assert!(tampered.stderr.contains(&second), "{}", tampered.stderr);
    assert_has(&tampered.stderr, "none of its 1 signature");
    let (_, other) = key_pair(fx.dir.path(), "other");
    let by_other = log(&["--verify", other.to_str().unwrap()]);
    assert_eq!(by_other.code, 17, "{}", by_other.stderr);
    // diff between two tags (and a digest): what changed, exit 1; a tampered side is an
    // error under --verify (exit 2, diff's convention).
    let first = format!("{url}:latest@{second}");
    let diff = |from: &str, to: &str, extra: &[&str]| {
        let mut args = vec!["diff", from, to];
        args.extend_from_slice(extra);
        fx.registry.clinv(&args).run()
    };
    let latest = format!("{url}:latest");
    let changed = diff(&first, &latest, &["-o", "json"]);
    assert_eq!(changed.code, 1, "{}", changed.stderr);
    assert!(changed.stdout.contains("1.20.2"), "{}", changed.stdout);
    assert!(
        changed.stdout.contains(&second),
        "the resolved digest: {}",
        changed.stdout
    );
    let refused = diff(&first, &latest, &["--verify", public]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert_has(&refused.stderr, "signature verification failed");
    assert_eq!(diff(&latest, &latest, &["--verify", public]).code, 0);
}

/// `snapshots import oci://…` on the other side of an air gap: a fresh store records the
/// artifact as a snapshot of its domain (the signature verified first); pushed again from
/// that store, it packs the same layer bytes (the objects round-trip); a second import
/// records nothing; a tampered artifact is refused with exit 17 and nothing recorded.
fn an_artifact_imports_into_another_store() {
    let fx = Fx::new();
    let (key, public) = key_pair(fx.dir.path(), "cosign");
    let (key, public) = (key.to_str().unwrap(), public.to_str().unwrap());
    fx.push(&["--sign", key]).run().success();
    let url = fx.registry.url("inventories/prod");
    let other = fx.dir.path().join("air-gapped-store");
    let import = |extra: &[&str]| {
        let mut args = vec!["snapshots", "import", &url];
        args.extend_from_slice(extra);
        let store = other.to_str().unwrap();
        fx.registry.clinv(&args).store(store).run()
    };
    let first = import(&["--verify", public]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_has(&first.stderr, "signature verified");
    assert_has(
        &first.stderr,
        &format!("recorded as a snapshot of {DOMAIN}"),
    );
    no_secret(&first);
    let again = import(&["--verify", public]);
    assert_has(&again.stderr, "already the newest snapshot");
    let list = clinv(&["snapshots", "list", "--domain", DOMAIN, "-o", "name"])
        .store(&other)
        .run()
        .success();
    assert_eq!(list.stdout.lines().count(), 1, "{}", list.stdout);
    // Pushed again from the importing store: the same layer.
    let layer = |tag: &str| {
        let m = fx.registry.get(
            &format!("inventories/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
        );
        let m: serde_json::Value = serde_json::from_slice(&m).unwrap();
        m["layers"][0]["digest"].clone()
    };
    let copy = fx.registry.url("inventories/copy");
    let args = ["push", &copy, "--snapshot", "latest", "--domain", DOMAIN];
    fx.registry.clinv(&args).store(&other).run().success();
    assert_eq!(
        layer("copy/manifests/latest"),
        layer("prod/manifests/latest")
    );
    // A changed inventory whose signature was tampered with: refused, nothing recorded.
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let run = fx.push(&["--sign", key, "-o", "json"]).run().success();
    let digest = serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_string();
    fx.registry.tamper_signature("inventories/prod", &digest);
    let refused = import(&["--verify", public]);
    assert_eq!(refused.code, 17, "{}", refused.stderr);
    let list = clinv(&["snapshots", "list", "--domain", DOMAIN, "-o", "name"])
        .store(&other)
        .run()
        .success();
    assert_eq!(
        list.stdout.lines().count(),
        1,
        "nothing recorded: {}",
        list.stdout
    );
}

/// Plain HTTP: `--plain-http` reaches a registry on this machine (push, `log --oci`);
/// for any other host it is refused (exit 2, before anything is sent) unless `--insecure`
/// says so; `--print-flux` then sets the OCIRepository's `spec.insecure`.
fn plain_http_is_for_loopback_unless_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start_plain(dir.path());
    let project = copy_tree(&example());
    let root = project.path().to_str().unwrap();
    let store = dir.path().join("store");
    let url = registry.url("inventories/prod");
    let run = |args: &[&str]| {
        clinv(args)
            .store(&store)
            .env("DOCKER_CONFIG", dir.path().join("none").to_str().unwrap())
            .run()
    };
    let push = |to: &str, flags: &[&str]| {
        let args = ["push", to, "--root", root, "--domain", DOMAIN];
        run(&[&args[..], flags].concat())
    };
    let pushed = push(&url, &["--plain-http"]);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let log = run(&["log", "--oci", &url, "--plain-http", "--oneline"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert_eq!(log.stdout.lines().count(), 1, "{}", log.stdout);
    let far = "oci://registry.example:5000/inventories/prod";
    let refused = push(far, &["--plain-http"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("--insecure"), "{}", refused.stderr);
    let refused = run(&["log", "--oci", far, "--plain-http"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let printed = push(far, &["--insecure", "--print-flux"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert_has(&printed.stdout, "  insecure: true\n");
    let insecure = push(&url, &["--insecure"]);
    assert_eq!(insecure.code, 0, "{}", insecure.stderr);
}

/// Credential helpers as Docker runs them: `credsStore` (or `credHelpers.<registry>`)
/// names `docker-credential-<name>`, asked `get` with the registry on stdin. The helper
/// here is a small script speaking that protocol (what a user's helper is: a program on
/// PATH); "credentials not found" falls back to `auths`; a failing helper is named and
/// its output never shown.
fn credential_helpers_are_asked_as_docker_asks_them() {
    let fx = Fx::new();
    let bin = fx.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let registry = format!("127.0.0.1:{}", fx.registry.port);
    let asked = fx.dir.path().join("asked");
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = get ] || exit 3\nread -r server\necho \"$server\" >> '{}'\nif [ -z \"$EMPTY\" ] && [ \"$server\" = '{registry}' ]; then\n  printf '{{\"ServerURL\":\"%s\",\"Username\":\"{USER}\",\"Secret\":\"{PASSWORD}\"}}' \"$server\"\nelse\n  echo 'credentials not found in native keychain'; exit 1\nfi\n",
        asked.display()
    );
    let helper = bin.join("docker-credential-clinvtest");
    std::fs::write(&helper, script).unwrap();
    let broken = bin.join("docker-credential-broken");
    std::fs::write(
        &broken,
        format!("#!/bin/sh\necho 'FAKESECRET-helper-output {PASSWORD}'\nexit 2\n"),
    )
    .unwrap();
    for f in [&helper, &broken] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let docker = fx.dir.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let push_with = |config: &str, empty: &str| {
        std::fs::write(docker.join("config.json"), config).unwrap();
        fx.bare(&["--ca-file", &fx.registry.ca()])
            .env("DOCKER_CONFIG", docker.to_str().unwrap())
            .env("PATH", &path)
            .env("EMPTY", empty)
            .run()
    };
    let push = |config: &str| push_with(config, "");
    let run = push(r#"{"credsStore":"clinvtest"}"#);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&asked).unwrap(),
        format!("{registry}\n")
    );
    no_secret(&run);
    let per_registry =
        format!(r#"{{"credsStore":"broken","credHelpers":{{"{registry}":"clinvtest"}}}}"#);
    assert_eq!(push(&per_registry).code, 0);
    // The helper has none ("credentials not found"): auths is the fallback.
    let none = push_with(r#"{"credsStore":"clinvtest"}"#, "1");
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert!(none.stderr.contains("no credentials"), "{}", none.stderr);
    let auth = base64_encode(&format!("{USER}:{PASSWORD}"));
    let fallback = format!(
        r#"{{"credHelpers":{{"{registry}":"clinvtest"}},"auths":{{"{registry}":{{"auth":"{auth}"}}}}}}"#
    );
    assert_eq!(push_with(&fallback, "1").code, 0);
    let failing = push(r#"{"credsStore":"broken"}"#);
    assert_eq!(failing.code, 1, "{}", failing.stderr);
    assert_has(&failing.stderr, "docker-credential-broken");
    assert!(!failing.stderr.contains("FAKESECRET"), "{}", failing.stderr);
}

/// `--token-env NAME`: a token the registry's auth service issued (as a CI job holds one),
/// sent as the Bearer token from the first request — no credentials, nothing asked of the
/// token service — and never printed; a token the registry refuses is named as such.
fn a_token_from_the_environment_is_the_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start_token(dir.path());
    let project = copy_tree(&example());
    let url = registry.url("inventories/prod");
    let token = registry.token("inventories/prod");
    let asked = registry.token_log().lines().count();
    let push = |token: &str| {
        let root = project.path().to_str().unwrap();
        let args = ["push", &url, "--root", root, "--domain", DOMAIN];
        clinv(
            &[
                &args[..],
                &["--ca-file", &registry.ca(), "--token-env", "CI_TOKEN"],
            ]
            .concat(),
        )
        .store(dir.path().join("store"))
        .env("CI_TOKEN", token)
        .env("DOCKER_CONFIG", dir.path().join("none").to_str().unwrap())
        .run()
    };
    let pushed = push(&token);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    assert_lacks(&pushed.stderr, &token);
    assert_eq!(
        registry.token_log().lines().count(),
        asked,
        "nothing asked of the token service"
    );
    let refused = push("FAKESECRET-not-a-token");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_has(&refused.stderr, "the token from --token-env was refused");
    no_secret(&refused);
    let conflict = clinv(&["push", &url, "--creds-env", "A", "--token-env", "B"]).run();
    assert_eq!(conflict.code, 2, "{}", conflict.stderr);
}

/// The bearer-token flow of a distribution registry with token auth (Harbor's, GitLab's,
/// Docker Hub's kind): the registry's 401 names a realm; clinv fetches a token there with
/// the credentials for `repository:<repo>:pull,push` and sends it as `Bearer` — push,
/// signed push, `log --oci` and import all work; wrong credentials are refused by the
/// token server and said as an authentication failure without the secret.
fn the_bearer_token_flow_of_a_token_auth_registry() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start_token(dir.path());
    let project = copy_tree(&example());
    let (key, public) = key_pair(dir.path(), "cosign");
    let url = registry.url("inventories/prod");
    let run = |args: &[&str], creds: &str| {
        let store = dir.path().join("store");
        registry
            .clinv(args)
            .store(&store)
            .env("REGISTRY_AUTH", creds)
            .run()
    };
    let good = format!("{USER}:{PASSWORD}");
    let root = project.path().to_str().unwrap();
    let push = [
        "push",
        &url,
        "--root",
        root,
        "--domain",
        DOMAIN,
        "--sign",
        key.to_str().unwrap(),
    ];
    let pushed = run(&push, &good);
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    no_secret(&pushed);
    let log = registry.token_log();
    assert!(
        log.contains("scope=['repository:inventories/prod:pull,push'] auth=ok"),
        "{log}"
    );
    assert!(log.contains(&format!("service=['{SERVICE}']")), "{log}");
    let read = run(
        &[
            "log",
            "--oci",
            &url,
            "--verify",
            public.to_str().unwrap(),
            "--oneline",
        ],
        &good,
    );
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(read.stdout.lines().count(), 1, "{}", read.stdout);
    let wrong = run(&push, &format!("{USER}:FAKESECRET-wrong-token-password"));
    assert_eq!(wrong.code, 1, "{}", wrong.stderr);
    assert_has(&wrong.stderr, "authentication failed");
    no_secret(&wrong);
}

/// `openssl dgst -sha256 -verify` of a base64 DER signature over `payload`.
fn openssl_verifies(dir: &Path, public: &Path, payload: &[u8], signature: &str) -> bool {
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD
        .decode(signature)
        .unwrap();
    std::fs::write(dir.join("payload"), payload).unwrap();
    std::fs::write(dir.join("sig.der"), der).unwrap();
    Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(public)
        .arg("-signature")
        .arg(dir.join("sig.der"))
        .arg(dir.join("payload"))
        .output()
        .unwrap()
        .status
        .success()
}

fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn base64_encode(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// Blobs are asked about only while the store does not know what the repository holds:
/// after a push to it, the config (`{}`, the same for every artifact) is known, and a
/// changed inventory's layer is new. A repository that lost the config after all refuses
/// the manifest (`MANIFEST_BLOB_UNKNOWN`), and the push sends it and the manifest again.
fn the_config_is_asked_about_once_and_sent_again_when_lost() {
    let fx = Fx::new();
    fx.push(&[]).run().success();
    let config = sha256_digest(b"{}");
    let asked = || fx.registry.requests("HEAD", &format!("/blobs/{config}"));
    assert_eq!(asked(), 1, "the first push asks");
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let heads = fx.registry.requests("HEAD", "/blobs/");
    let changed = fx.push(&[]).run().success();
    assert_has(&changed.stderr, "1 blob(s) uploaded");
    // The last push was another manifest: the new layer is sent without asking either.
    assert_eq!(
        fx.registry.requests("HEAD", "/blobs/"),
        heads,
        "no blob asked about"
    );
    // The repository loses the config: its link in the registry's own storage.
    let layers = "registry/data/docker/registry/v2/repositories/inventories/prod/_layers";
    let hex = config.trim_start_matches("sha256:");
    let link = fx.dir.path().join(layers).join("sha256").join(hex);
    std::fs::remove_dir_all(&link).unwrap();
    set_chart_version(fx.project.path(), "cilium", "1.20.2");
    let puts = || fx.registry.requests("PUT", "/manifests/latest");
    let before = puts();
    let healed = fx.push(&[]).run().success();
    assert_has(&healed.stderr, "2 blob(s) uploaded");
    assert_eq!(puts(), before + 2, "refused for the config, then taken");
    let got = fx
        .registry
        .get(&format!("inventories/prod/blobs/{config}"), "*/*");
    assert_eq!(got, b"{}");
}

/// Through a real proxy (tinyproxy, CONNECT) from `HTTPS_PROXY`, with the proxy's
/// credentials kept out of every output; straight to the registry when `NO_PROXY`
/// covers it.
fn push_goes_through_a_proxy_unless_no_proxy_covers_the_registry() {
    use crate::loopback_proxy::Tinyproxy;
    let fx = Fx::new();
    let host = format!("127.0.0.1:{}", fx.registry.port);
    let proxy = Tinyproxy::start(Some(("proxyuser", "FAKESECRET-proxy")));
    let through = proxy.url_with("proxyuser", "FAKESECRET-proxy");
    let via = |proxy_url: &str, no_proxy: &str| {
        let push = fx.push(&[]).env("HTTPS_PROXY", proxy_url);
        push.env("NO_PROXY", no_proxy).run()
    };
    let run = via(&through, "");
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, proxy.log());
    no_secret(&run);
    assert!(proxy.tunnels(&host) >= 1, "{}", proxy.log());
    // A wrong proxy password is the proxy's refusal, named without the password.
    let wrong = proxy.url_with("proxyuser", "FAKESECRET-wrong");
    set_chart_version(fx.project.path(), "cilium", "1.20.1");
    let refused = via(&wrong, "");
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    no_secret(&refused);
    let before = proxy.tunnels(&host);
    let straight = via(&through, "127.0.0.1");
    assert_eq!(straight.code, 0, "{}", straight.stderr);
    assert_eq!(proxy.tunnels(&host), before, "{}", proxy.log());
}

/// `--verify` on an unsigned artifact: the error says its reason once, exactly (it said
/// "…: signature verification failed: it is not signed …: it is not signed …" — the
/// reason both in the message and as its cause).
fn the_verify_error_says_its_reason_once() {
    let fx = Fx::new();
    let (_, public) = key_pair(fx.dir.path(), "cosign");
    let run = fx.push(&["-o", "json"]).run().success();
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let digest = out["digest"].as_str().unwrap();
    let url = fx.registry.url("inventories/prod");
    let public = public.to_str().unwrap();
    let refused = fx
        .registry
        .clinv(&["log", "--oci", &url, "--verify", public])
        .run();
    assert_eq!(refused.code, 17, "{}", refused.stderr);
    assert_eq!(
        refused.stderr,
        format!(
            "[error] {url}@{digest}: signature verification failed: it is not signed (no cosign signature at its .sig tag)\n"
        )
    );
}

/// A push over HTTPS to a registry that speaks plain HTTP says so, and what to pass
/// (rustls alone says "received corrupt message of type InvalidContentType").
fn plain_http_without_the_flag_says_what_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start_plain(dir.path());
    let project = copy_tree(&example());
    let url = registry.url("inventories/prod");
    let run = clinv(&["push", &url])
        .project(project.path(), DOMAIN)
        .store(dir.path().join("store"))
        .env("DOCKER_CONFIG", dir.path().join("none").to_str().unwrap())
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "the registry answered in plain HTTP; pass --plain-http if that is intended (--insecure for a registry not on this machine)",
    );
}

/// A malformed reference and an unusable key say their problem once (both carried it
/// in the message and as its cause, printed twice).
fn a_malformed_reference_or_key_says_its_problem_once() {
    let bad = clinv(&["push", "oci://127.0.0.1:5000/Bad_Repo"]).run();
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert_eq!(
        bad.stderr,
        "[error] oci://127.0.0.1:5000/Bad_Repo: repository 'Bad_Repo' is not a valid name (lower-case letters and digits, separated by '.', '_', '__', '-' or '/')\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let key = write(dir.path(), "cosign.pub", "not a key");
    let url = "oci://127.0.0.1:5000/inventories/prod";
    let run = clinv(&["log", "--oci", url, "--verify", key.to_str().unwrap()]).run();
    assert_eq!(
        run.stderr,
        format!(
            "[error] {}: holds no PEM key of the kind needed (PRIVATE KEY to sign, PUBLIC KEY to verify)\n",
            key.display()
        )
    );
}

trials! {
    Nothing: [a_malformed_reference_or_key_says_its_problem_once],
    Registry: [
        the_verify_error_says_its_reason_once,
        plain_http_without_the_flag_says_what_to_pass,
        push_to_a_registry_and_read_it_back,
        a_repush_of_identical_content_uploads_nothing,
        the_oci_layer_type_and_annotations,
        failures_are_named_without_the_secret,
        a_signed_push_carries_a_cosign_signature,
        the_registry_history_reads_back_and_verifies,
        an_artifact_imports_into_another_store,
        plain_http_is_for_loopback_unless_insecure,
        credential_helpers_are_asked_as_docker_asks_them,
        the_bearer_token_flow_of_a_token_auth_registry,
        a_token_from_the_environment_is_the_bearer_token,
        the_config_is_asked_about_once_and_sent_again_when_lost,
    ],
    RegistryAndTinyproxy: [push_goes_through_a_proxy_unless_no_proxy_covers_the_registry],
}
