//! The registry of the tests on loopback: Debian's docker-registry.
//!
//! The registry of the tests on loopback: Debian's docker-registry (the distribution
//! project) over TLS with a CA made at test time and htpasswd basic auth, or token auth,
//! or plain HTTP. `clinv push oci://…` pushes to it (tests/cli/oci.rs, oci_clients.rs),
//! and Flux's source-controller and Argo CD's repo-server pull from it (tests/cluster).

use crate::support::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const USER: &str = "ci";
pub const PASSWORD: &str = "FAKESECRET-registry-password-7d2e";

/// Whether docker-registry and htpasswd can be run.
pub fn present() -> Result<(), String> {
    for (program, arg) in [("docker-registry", "--version"), ("htpasswd", "-h")] {
        if !crate::harness::runs(program, arg) {
            return Err(format!(
                "no {program}: apt-get install docker-registry apache2-utils (.ci/run does)"
            ));
        }
    }
    Ok(())
}

/// docker-registry serving `<dir>/data` over TLS with basic auth; stopped on drop.
pub struct Registry {
    child: Child,
    pub port: u16,
    dir: PathBuf,
    /// Over plain HTTP without auth ([`Registry::start_plain`]).
    plain: bool,
    /// The token server of [`Registry::start_token`], and its realm.
    token_server: Option<(Child, String)>,
}

/// How a test registry authenticates.
#[derive(Clone, Copy, PartialEq)]
enum Auth {
    /// Plain HTTP, no auth.
    None,
    /// TLS, htpasswd basic auth.
    Basic,
    /// TLS, bearer tokens from a token server (the distribution spec's token auth).
    Token,
}

impl Registry {
    pub fn start(dir: &Path) -> Registry {
        Registry::start_with(dir, Auth::Basic)
    }

    /// docker-registry over plain HTTP without auth (a lab's loopback registry).
    pub fn start_plain(dir: &Path) -> Registry {
        Registry::start_with(dir, Auth::None)
    }

    /// docker-registry over TLS with token auth: a token server on loopback over HTTPS
    /// with the registry's certificate (tests/fixtures/oci/token_server.py) checks the
    /// test's credentials and issues JWTs signed by a key whose certificate the registry
    /// trusts.
    pub fn start_token(dir: &Path) -> Registry {
        Registry::start_with(dir, Auth::Token)
    }

    fn start_with(dir: &Path, auth: Auth) -> Registry {
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        let d = dir.display();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {d}/data\nhttp:\n  addr: 127.0.0.1:{port}\n"
        );
        if auth != Auth::None {
            crate::https::make_pki(dir);
            config.push_str(&format!(
                "  tls:\n    certificate: {d}/server.crt\n    key: {d}/server.key\n"
            ));
        }
        if auth == Auth::Basic {
            let out = Command::new("htpasswd")
                .args(["-Bbn", USER, PASSWORD])
                .output()
                .unwrap();
            assert!(out.status.success());
            std::fs::write(dir.join("htpasswd"), &out.stdout).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: clinv-test\n    path: {d}/htpasswd\n"
            ));
        }
        let token_server = (auth == Auth::Token).then(|| {
            let (server, realm) = token_server(dir);
            config.push_str(&format!(
                "auth:\n  token:\n    realm: {realm}\n    service: {SERVICE}\n    issuer: {ISSUER}\n    rootcertbundle: {d}/token.crt\n"
            ));
            (server, realm)
        });
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let log = std::fs::File::create(dir.join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.join("config.yml"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let up = poll(Duration::from_secs(20), Duration::from_millis(50), || {
            listening("127.0.0.1", port)
        });
        assert!(up, "docker-registry did not start");
        drop(reserved); // the registry listens: the port is its own
        Registry {
            child,
            port,
            dir: dir.to_path_buf(),
            plain: auth == Auth::None,
            token_server,
        }
    }

    /// Stops the registry: its port refuses connections (the data stays).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let down = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            !listening("127.0.0.1", self.port)
        });
        assert!(down, "docker-registry still listens on {}", self.port);
    }

    /// Starts the registry again, on the same port with the same configuration and data.
    pub fn restart(&mut self) {
        let log = std::fs::File::options()
            .append(true)
            .open(self.dir.join("registry.log"))
            .unwrap();
        self.child = Command::new("docker-registry")
            .arg("serve")
            .arg(self.dir.join("config.yml"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let up = poll(Duration::from_secs(20), Duration::from_millis(50), || {
            listening("127.0.0.1", self.port)
        });
        assert!(up, "docker-registry did not start again");
    }

    /// `clinv ARGS` with the registry's CA and the test's credentials (`--creds-env`).
    pub fn clinv(&self, args: &[&str]) -> Clinv {
        let ca = self.ca();
        let mut all = args.to_vec();
        all.extend(["--ca-file", &ca, "--creds-env", "REGISTRY_AUTH"]);
        clinv(&all).env("REGISTRY_AUTH", &format!("{USER}:{PASSWORD}"))
    }

    /// A token for pull and push on `repository`, from the token server with the test's
    /// credentials (as `docker login` or a CI job would get one).
    pub fn token(&self, repository: &str) -> String {
        let (_, realm) = self.token_server.as_ref().expect("a token registry");
        let url = format!("{realm}?service={SERVICE}&scope=repository:{repository}:pull,push");
        let out = succeeded(Command::new("curl").args([
            "-sSf",
            "--cacert",
            &self.ca(),
            "-u",
            &format!("{USER}:{PASSWORD}"),
            &url,
        ]));
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        doc["token"].as_str().unwrap().to_string()
    }

    /// The token server's log: one line per request (path, service, scope, auth).
    pub fn token_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("token.log")).unwrap_or_default()
    }

    pub fn url(&self, repository: &str) -> String {
        format!("oci://127.0.0.1:{}/{repository}", self.port)
    }

    pub fn ca(&self) -> String {
        self.dir.join("ca.crt").display().to_string()
    }

    /// GET from the registry's API with the test's credentials (curl, as an operator would).
    pub fn get(&self, path: &str, accept: &str) -> Vec<u8> {
        let mut curl = Command::new("curl");
        curl.arg("-sSf");
        if !self.plain {
            let user = format!("{USER}:{PASSWORD}");
            curl.args(["--cacert", &self.ca(), "-u", &user]);
        }
        let scheme = if self.plain { "http" } else { "https" };
        succeeded(
            curl.args(["-H", &format!("Accept: {accept}")])
                .arg(format!("{scheme}://127.0.0.1:{}/v2/{path}", self.port)),
        )
    }

    /// The file `name` of the artifact `reference` (a tag or digest) of `repository`, read
    /// back through the registry's API: its manifest's one layer, unpacked.
    pub fn pulled_file(&self, repository: &str, reference: &str, name: &str) -> String {
        let media = "application/vnd.oci.image.manifest.v1+json";
        let manifest = self.get(&format!("{repository}/manifests/{reference}"), media);
        let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        let layer = m["layers"][0]["digest"].as_str().unwrap();
        let blob = self.get(&format!("{repository}/blobs/{layer}"), "*/*");
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&blob[..])
            .read_to_end(&mut tar)
            .unwrap();
        for entry in tar::Archive::new(&tar[..]).entries().unwrap() {
            let mut entry = entry.unwrap();
            if entry.path().unwrap().to_str() == Some(name) {
                let mut text = String::new();
                entry.read_to_string(&mut text).unwrap();
                return text;
            }
        }
        panic!("no {name} in {repository}@{reference}")
    }

    /// Flips one byte of the signature in `digest`'s cosign `.sig` manifest and puts the
    /// manifest back (curl, as an attacker with push rights would).
    pub fn tamper_signature(&self, repository: &str, digest: &str) {
        use base64::Engine as _;
        let tag = format!("{}.sig", digest.replacen(':', "-", 1));
        let media = "application/vnd.oci.image.manifest.v1+json";
        let path = format!("{repository}/manifests/{tag}");
        let mut m: serde_json::Value = serde_json::from_slice(&self.get(&path, media)).unwrap();
        let key = "dev.cosignproject.cosign/signature";
        let b64 = base64::engine::general_purpose::STANDARD;
        let layers = m["layers"].as_array_mut().unwrap();
        for layer in layers {
            let mut der = b64
                .decode(layer["annotations"][key].as_str().unwrap())
                .unwrap();
            let last = der.len() - 1;
            der[last] ^= 1;
            layer["annotations"][key] = b64.encode(der).into();
        }
        succeeded(
            Command::new("curl")
                .args(["-sSf", "-X", "PUT", "--cacert", &self.ca()])
                .args(["-u", &format!("{USER}:{PASSWORD}")])
                .args(["-H", &format!("Content-Type: {media}")])
                .args(["--data-binary", &m.to_string()])
                .arg(format!("https://127.0.0.1:{}/v2/{path}", self.port)),
        );
    }

    /// Requests of `method` the registry logged on a path containing `needle`.
    pub fn requests(&self, method: &str, needle: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.join("registry.log")).unwrap_or_default();
        log.lines()
            .filter(|l| {
                l.contains(&format!("http.request.method={method}"))
                    && l.contains("response completed")
                    && l.contains(needle)
            })
            .count()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some((t, _)) = &mut self.token_server {
            let _ = t.kill();
            let _ = t.wait();
        }
    }
}

pub const SERVICE: &str = "clinv-test-registry";
const ISSUER: &str = "clinv-test-issuer";

/// Starts the token server with a fresh RSA key and self-signed certificate in `dir`
/// (`token.key`, `token.crt`), serving HTTPS with the registry's server certificate
/// ([`crate::https::make_pki`] made it in `dir` already); its realm URL.
fn token_server(dir: &Path) -> (Child, String) {
    succeeded(
        Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=clinv-test-token-issuer", "-keyout"])
            .arg(dir.join("token.key"))
            .arg("-out")
            .arg(dir.join("token.crt")),
    );
    let reserved = reserve_port("127.0.0.1");
    let port = reserved.port;
    let script = crate::support::fixture("oci/token_server.py");
    let child = Command::new("python3")
        .arg(script)
        .arg(port.to_string())
        .arg(dir.join("token.key"))
        .arg(dir.join("token.crt"))
        .args([ISSUER, SERVICE, USER, PASSWORD])
        .arg(dir.join("token.log"))
        .arg(dir.join("server.crt"))
        .arg(dir.join("server.key"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let up = poll(Duration::from_secs(20), Duration::from_millis(50), || {
        listening("127.0.0.1", port)
    });
    assert!(up, "the token server did not start");
    drop(reserved); // the token server listens: the port is its own
    (child, format!("https://127.0.0.1:{port}/token"))
}

/// A throwaway ECDSA P-256 key pair made by openssl (cosign's key type) in `dir`:
/// (private PKCS#8 PEM, public PEM).
pub fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (key, public) = (format!("{name}.key"), format!("{name}.pub"));
    crate::https::ec_key(dir, &key);
    crate::https::openssl(dir, &["pkey", "-in", &key, "-pubout", "-out", &public]);
    (dir.join(key), dir.join(public))
}
