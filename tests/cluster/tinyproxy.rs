//! Cluster access through a real HTTP proxy on loopback: Debian's `tinyproxy`
//! ([`Tinyproxy`]), started per test, with and without BasicAuth, stopped when the test
//! ends.

use crate::loopback_proxy::Tinyproxy;
use crate::support::*;
use crate::{Plane, plane};
use base64::Engine;
use std::path::{Path, PathBuf};

const DOMAIN: &str = "prod.acme.example";
const PROXY_USER: &str = "ops";
const PROXY_PASSWORD: &str = "FAKESECRET-proxy-password-c81e";

/// The API server URL of the admin kubeconfig.
fn server(p: &Plane) -> String {
    let config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    config["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .trim_end_matches('/')
        .to_string()
}

/// The admin kubeconfig with `proxy-url` set on its cluster.
fn with_proxy_url(p: &Plane, dir: &Path, proxy: &str) -> PathBuf {
    let mut config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&p.admin).unwrap()).unwrap();
    config["clusters"][0]["cluster"]["proxy-url"] = proxy.into();
    write(
        dir,
        "kubeconfig-proxied",
        serde_saphyr::to_string(&config).unwrap(),
    )
}

struct Fx {
    project: tempfile::TempDir,
    store: tempfile::TempDir,
    versions: u32,
}

impl Fx {
    fn new() -> Fx {
        Fx {
            project: copy_tree(&example()),
            store: tempfile::tempdir().unwrap(),
            versions: 0,
        }
    }

    /// A new inventory (so the publish has something to configure), then `clinv
    /// publish --strict` with `kubeconfig` and the environment `env`.
    fn publish(&mut self, kubeconfig: &Path, env: &[(&str, &str)]) -> Run {
        self.versions += 1;
        set_chart_version(
            self.project.path(),
            "cilium",
            &format!("1.30.{}", self.versions),
        );
        self.run(&["publish", "--strict"], kubeconfig, env)
    }

    fn run(&self, args: &[&str], kubeconfig: &Path, env: &[(&str, &str)]) -> Run {
        let mut all = args.to_vec();
        all.extend([
            "--root",
            self.project.path().to_str().unwrap(),
            "--domain",
            DOMAIN,
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--timeout",
            "20",
        ]);
        let mut cmd = clinv(&all).store(self.store.path());
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        cmd.run()
    }
}

fn publish_goes_through_the_proxy_and_no_proxy_covering_the_server_bypasses_it() {
    let p = plane();
    p.crd_only();
    let server = server(&p);
    let proxy = Tinyproxy::start(None);
    let url = proxy.url();
    let mut fx = Fx::new();

    // HTTPS_PROXY: the publish goes through a tunnel of the proxy.
    let run = fx.publish(&p.admin, &[("HTTPS_PROXY", &url)]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, proxy.log());
    assert_has(&run.stderr, "clusterinventory/cluster");
    let through = proxy.tunnels(&server);
    assert!(through >= 1, "no tunnel:\n{}", proxy.log());
    // Lower case too, as curl and Go read it.
    let run = fx.publish(&p.admin, &[("https_proxy", &url)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(proxy.tunnels(&server) > through, "{}", proxy.log());

    // NO_PROXY naming the server (host, host:port, a CIDR, `*`): straight to it.
    let before = proxy.tunnels(&server);
    let host_port = server.trim_start_matches("https://");
    for no_proxy in [
        "127.0.0.1",
        host_port,
        "127.0.0.0/8",
        "*",
        "example.invalid,127.0.0.1",
    ] {
        let run = fx.publish(&p.admin, &[("HTTPS_PROXY", &url), ("NO_PROXY", no_proxy)]);
        assert_eq!(run.code, 0, "NO_PROXY={no_proxy}: {}", run.stderr);
        assert_eq!(
            proxy.tunnels(&server),
            before,
            "NO_PROXY={no_proxy}: {}",
            proxy.log()
        );
    }
    // NO_PROXY naming the proxy's host, not the server's: still through the proxy.
    let run = fx.publish(
        &p.admin,
        &[("HTTPS_PROXY", &url), ("no_proxy", "127.0.0.2")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(proxy.tunnels(&server) > before, "{}", proxy.log());

    // The kubeconfig's proxy-url, without any environment.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = with_proxy_url(&p, dir.path(), &url);
    let before = proxy.tunnels(&server);
    let run = fx.publish(&kubeconfig, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(proxy.tunnels(&server) > before, "{}", proxy.log());

    // The proxy is really on the path: once it is gone, the cluster is unreachable.
    drop(proxy);
    let run = fx.publish(&p.admin, &[("HTTPS_PROXY", &url)]);
    assert_eq!(run.code, 5, "{}", run.stderr);
}

fn a_proxy_with_credentials_works_and_they_reach_no_output_or_the_store() {
    let p = plane();
    p.crd_only();
    let server = server(&p);
    let proxy = Tinyproxy::start(Some((PROXY_USER, PROXY_PASSWORD)));
    let good = proxy.url_with(PROXY_USER, PROXY_PASSWORD);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = with_proxy_url(&p, dir.path(), &good);
    let mut fx = Fx::new();
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{PROXY_USER}:{PROXY_PASSWORD}"));
    let mut outputs = Vec::new();

    let run = fx.publish(&p.admin, &[("HTTPS_PROXY", &good)]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, proxy.log());
    assert!(proxy.tunnels(&server) >= 1, "{}", proxy.log());
    outputs.push(run);
    let run = fx.publish(&kubeconfig, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    outputs.push(run);
    // Verbose runs of the other cluster commands, and failing ones: a wrong password
    // (407) and a proxy that is gone.
    for args in [&["status", "-v"][..], &["drift", "-v"], &["replay", "-v"]] {
        outputs.push(fx.run(args, &p.admin, &[("HTTPS_PROXY", &good), ("DEBUG", "1")]));
        outputs.push(fx.run(args, &kubeconfig, &[("RUST_LOG", "trace")]));
    }
    let wrong = proxy.url_with(PROXY_USER, "FAKESECRET-wrong-password-0b9d");
    let run = fx.publish(&p.admin, &[("HTTPS_PROXY", &wrong)]);
    assert_ne!(run.code, 0, "{}", run.stderr);
    outputs.push(run);
    drop(proxy);
    for args in [&["publish", "-v"][..], &["status"], &["drift"]] {
        outputs.push(fx.run(args, &kubeconfig, &[]));
        outputs.push(fx.run(args, &p.admin, &[("HTTPS_PROXY", &good)]));
    }
    outputs.push(fx.run(&["snapshots", "list"], &p.admin, &[]));
    outputs.push(fx.run(&["snapshots", "show", "latest"], &p.admin, &[]));

    let needles = ["FAKESECRET", basic.as_str()];
    let mut leaks = Vec::new();
    for run in &outputs {
        for text in [&run.stdout, &run.stderr] {
            if needles.iter().any(|n| text.contains(n)) {
                leaks.push(text.clone());
            }
        }
    }
    let mut files = Vec::new();
    let mut dirs = vec![fx.store.path().to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                dirs.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    assert!(files.len() >= 3, "{files:?}");
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        if needles.iter().any(|n| text.contains(n)) {
            leaks.push(format!("{}: {text}", f.display()));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n---\n"));
}

trials! {
    PlaneAndTinyproxy: [
        publish_goes_through_the_proxy_and_no_proxy_covering_the_server_bypasses_it,
        a_proxy_with_credentials_works_and_they_reach_no_output_or_the_store,
    ],
}
