//! Tests against a real kube-apiserver + etcd (`scripts/control-plane up`; `scripts/test`
//! starts it). Without one they fail under `CI=true` and are reported as ignored
//! elsewhere (`harness = false`: see `tests/kit/src/harness.rs`).
//!
//! They share one cluster and its singleton object, so each takes the lock in [`plane`].

#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[macro_use]
extern crate clinv_testkit;
#[cfg(feature = "gitops")]
use clinv_testkit::{git_server, registry};
use clinv_testkit::{harness, loopback_proxy, support};

mod agent;
#[cfg(feature = "gitops")]
mod argocd;
mod diff;
mod faults;
#[cfg(feature = "gitops")]
mod flux_controllers;
mod flux_engine;
mod gitops;
mod incluster;
mod model;
mod outputs;
mod plugins;
#[cfg(feature = "gitops")]
mod processes;
mod proxy;
mod publish;
mod races;
mod replay;
mod scale;
mod secrets;
mod store_v2;
mod tinyproxy;
/// Version 1 stores written by hand (shared with the CLI tests).
#[path = "../cli/v1.rs"]
#[allow(dead_code)]
mod v1;
mod watch;

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// The running plane: admin and RBAC-less kubeconfigs.
pub struct Plane {
    pub admin: PathBuf,
    pub nobody: PathBuf,
    _guard: MutexGuard<'static, ()>,
}

static LOCK: Mutex<()> = Mutex::new(());

fn main() -> std::process::ExitCode {
    let cases = [
        agent::tests(),
        #[cfg(feature = "gitops")]
        argocd::tests(),
        diff::tests(),
        faults::tests(),
        flux_engine::tests(),
        #[cfg(feature = "gitops")]
        flux_controllers::tests(),
        gitops::tests(),
        incluster::tests(),
        model::tests(),
        outputs::tests(),
        plugins::tests(),
        proxy::tests(),
        publish::tests(),
        races::tests(),
        replay::tests(),
        scale::tests(),
        secrets::tests(),
        store_v2::tests(),
        tinyproxy::tests(),
        watch::tests(),
    ];
    harness::run(
        env!("CARGO_BIN_EXE_clinv"),
        cases.into_iter().flatten().collect(),
        |need| match need {
            harness::Need::Plane => kubeconfig().map(|_| ()),
            harness::Need::PlaneAndTinyproxy => {
                kubeconfig().and_then(|_| loopback_proxy::present().map_err(|why| why.to_string()))
            }
            harness::Need::PlaneAndFluxApply => {
                kubeconfig().and_then(|_| flux_engine::flux_apply().map(|_| ()))
            }
            #[cfg(feature = "gitops")]
            harness::Need::PlaneAndFluxControllers => {
                kubeconfig().and_then(|_| flux_controllers::present())
            }
            #[cfg(feature = "gitops")]
            harness::Need::PlaneAndArgoCd => kubeconfig().and_then(|_| argocd::present()),
            harness::Need::PlaneAndPrometheus => kubeconfig()
                .and_then(|_| clinv_testkit::prometheus::present())
                .and_then(|_| clinv_testkit::prometheus::promtool_present()),
            harness::Need::PlaneAndMountNamespace => {
                kubeconfig().and_then(|_| incluster::mount_namespace())
            }
            harness::Need::PlaneMountNamespaceAndTinyproxy => kubeconfig()
                .and_then(|_| incluster::mount_namespace())
                .and_then(|_| loopback_proxy::present().map_err(|why| why.to_string())),
            other => unreachable!("no cluster test needs {other:?}"),
        },
    )
}

/// The admin kubeconfig of the running plane, or why there is none.
fn kubeconfig() -> Result<PathBuf, String> {
    match std::env::var_os("CLINV_TEST_KUBECONFIG").map(PathBuf::from) {
        Some(admin) if admin.is_file() => Ok(admin),
        Some(admin) => Err(format!(
            "no control plane: CLINV_TEST_KUBECONFIG={} is not a file; run scripts/test",
            admin.display()
        )),
        None => Err("no control plane: CLINV_TEST_KUBECONFIG unset; run scripts/test".into()),
    }
}

/// The control plane, held until the returned value drops. The runner runs the tests
/// that call this only when the plane is there.
pub fn plane() -> Plane {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let admin = kubeconfig().unwrap_or_else(|why| panic!("{why}"));
    let nobody = admin.with_file_name("kubeconfig-nobody");
    let plane = Plane {
        admin,
        nobody,
        _guard: guard,
    };
    // Each test starts without a live inventory: the tests share one plane, and what an
    // earlier one left is another domain's, which a publish now refuses (issue 39). No CRD
    // yet is as good (kubectl then fails, and nothing is there to delete).
    let _ = plane.kubectl(&[
        "delete",
        "clusterinventory",
        "cluster",
        "--ignore-not-found",
    ]);
    plane
}

impl Plane {
    /// kubectl against the plane as admin.
    pub fn kubectl(&self, args: &[&str]) -> (i32, String, String) {
        self.kubectl_as(&self.admin, args, None)
    }

    /// Merges `status` into the inventory's status subresource as the field manager
    /// `manager`: another tool's write (the agent's), which clinv must leave alone.
    pub fn patch_status_as(&self, manager: &str, status: &str) {
        let manager = format!("--field-manager={manager}");
        let (code, _, err) = self.kubectl(&[
            "patch",
            "clusterinventory",
            "cluster",
            "--subresource=status",
            "--type=merge",
            &manager,
            "-p",
            status,
        ]);
        assert_eq!(code, 0, "{err}");
    }

    pub fn kubectl_as(
        &self,
        kubeconfig: &std::path::Path,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (i32, String, String) {
        use std::io::Write;
        let mut child = Command::new(kubectl())
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `kubectl apply --server-side` of `text` as admin, by the field manager `manager`
    /// and with `extra` flags (`--force-conflicts`): how the tests play another tool
    /// writing the object. Panics with kubectl's error when the apply is refused.
    pub fn apply(&self, manager: &str, extra: &[&str], text: &str) {
        let manager = format!("--field-manager={manager}");
        let args = [
            &["apply", "--server-side", &manager][..],
            extra,
            &["-f", "-"],
        ]
        .concat();
        let (code, _, err) = self.kubectl_as(&self.admin, &args, Some(text));
        assert_eq!(code, 0, "{err}");
    }

    /// Applies the CRDs of `file` (whose text is `text`) server-side by `manager`, taking
    /// over conflicting fields: what the Flux and Argo CD tests install first. Their
    /// `crd/<name>`s; panics when a document is not a CRD or kubectl refuses them.
    pub fn apply_crds(&self, file: &std::path::Path, text: &str, manager: &str) -> Vec<String> {
        let mut names = Vec::new();
        for doc in documents(text) {
            let kind = &doc["kind"];
            assert_eq!(kind, "CustomResourceDefinition", "{}", file.display());
            names.push(format!("crd/{}", doc["metadata"]["name"].as_str().unwrap()));
        }
        let manager = format!("--field-manager={manager}");
        let apply = [
            "apply",
            "--server-side",
            "--force-conflicts",
            &manager,
            "-f",
        ];
        let (code, _, err) = self.kubectl(&[&apply[..], &[file.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{}: {err}", file.display());
        names
    }

    /// The live inventory with its managed fields (`--show-managed-fields`): who wrote
    /// what. Panics when there is none.
    pub fn live_managed(&self) -> serde_json::Value {
        let get = [
            "get",
            "clusterinventory",
            "cluster",
            "--show-managed-fields",
            "-o",
            "json",
        ];
        let (code, out, err) = self.kubectl(&get);
        assert_eq!(code, 0, "no ClusterInventory/cluster: {err}");
        serde_json::from_str(&out).unwrap()
    }

    /// The live inventory as JSON, or `None` when absent.
    pub fn live(&self) -> Option<serde_json::Value> {
        let (code, out, _) = self.kubectl(&["get", "clusterinventory", "cluster", "-o", "json"]);
        (code == 0).then(|| serde_json::from_str(&out).unwrap())
    }

    /// Makes sure the CRD exists (applied by field manager lok8s, Established) and the
    /// CR does not, so a test starts from an installed but empty cluster.
    pub fn crd_only(&self) {
        let crd = support::clinv(&["crd", "-o", "json"])
            .run()
            .success()
            .stdout;
        self.apply("lok8s", &[], &crd);
        self.wait_established("clusterinventories.lok8s.dev");
        let (code, _, err) = self.kubectl(&[
            "delete",
            "clusterinventory",
            "cluster",
            "--ignore-not-found",
        ]);
        assert_eq!(code, 0, "{err}");
    }

    /// Waits up to 60 s until the CRD `name` is Established. Polled rather than
    /// `kubectl wait`, which fails outright on a CRD whose status has no conditions yet.
    pub fn wait_established(&self, name: &str) {
        let query = "jsonpath={.status.conditions[?(@.type==\"Established\")].status}";
        let crd = format!("crd/{}", name.trim_start_matches("crd/"));
        for _ in 0..240 {
            if self.kubectl(&["get", &crd, "-o", query]).1 == "True" {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        panic!("{crd} is not Established after 60 s");
    }

    /// Deletes the CR and the CRD so a test starts from nothing.
    pub fn reset(&self) {
        self.kubectl(&[
            "delete",
            "crd",
            "clusterinventories.lok8s.dev",
            "--ignore-not-found",
            "--wait=true",
        ]);
        for _ in 0..100 {
            let (code, _, _) = self.kubectl(&["get", "crd", "clusterinventories.lok8s.dev"]);
            if code != 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The YAML documents of a multi-document text, as JSON values (empty ones dropped).
pub fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple::<serde_json::Value>(text)
        .unwrap()
        .into_iter()
        .filter(|doc| !doc.is_null())
        .collect()
}

/// Who wrote an object read with its managed fields: (manager, operation) per entry.
pub fn managers(object: &serde_json::Value) -> Vec<(&str, &str)> {
    let entries = object["metadata"]["managedFields"].as_array();
    let entries = entries.unwrap_or_else(|| panic!("no managedFields: {object}"));
    entries
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or_default(),
                m["operation"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

/// The kubectl binary: `CLINV_KUBECTL`, the image's versioned kubectl, or `kubectl`.
pub fn kubectl() -> PathBuf {
    if let Some(k) = std::env::var_os("CLINV_KUBECTL") {
        return k.into();
    }
    let versioned = PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33");
    if versioned.is_file() {
        versioned
    } else {
        PathBuf::from("kubectl")
    }
}

/// An `https://127.0.0.1:<port>` URL nobody listens on (connections are refused).
pub fn refused_server() -> String {
    format!("https://127.0.0.1:{}", support::refused_port())
}

/// A copy of `kubeconfig` whose server is `server` (same credentials).
pub fn kubeconfig_with_server(
    kubeconfig: &std::path::Path,
    server: &str,
) -> tempfile::NamedTempFile {
    kubeconfig_with(kubeconfig, "server", server)
}

/// A copy of `kubeconfig` with the value of every `key:` line replaced by `value`.
pub fn kubeconfig_with(
    kubeconfig: &std::path::Path,
    key: &str,
    value: &str,
) -> tempfile::NamedTempFile {
    let text = std::fs::read_to_string(kubeconfig).unwrap();
    let re = regex::Regex::new(&format!(r"(?m)^(\s*){}: \S+$", regex::escape(key))).unwrap();
    assert!(re.is_match(&text), "no {key} in {}", kubeconfig.display());
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        re.replace_all(&text, format!("${{1}}{key}: {value}").as_str())
            .as_bytes(),
    )
    .unwrap();
    file
}
