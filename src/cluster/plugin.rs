//! Exec credential plugins (`users[].user.exec`), run by clinv rather than by kube: kube
//! runs one synchronously while it builds the client, outside any deadline, and reads its
//! whole output (up to three times for one client). Here the plugin runs once, through
//! the one helper runner ([`crate::util::helper`]) under the command's deadline and output
//! cap, and what it gives — a token, or a client certificate and key — replaces `exec`
//! in the user kube builds the client from. The plugin sees what kube (and client-go)
//! give it: its `env:` and `args`, `KUBERNETES_EXEC_INFO` (`apiVersion`, `interactive`,
//! and with `provideClusterInfo` the cluster), clinv's terminal only when
//! `interactiveMode` allows it. A failure names the plugin and what happened, never its
//! environment, arguments or output.

use super::{Failure, Step};
use crate::delivery::Reason;
use crate::util::helper::{Happened, Helper, HelperError, Output};
use crate::yaml::Doc;
use kube::config::{AuthInfo, ExecConfig, ExecInteractiveMode};
use std::time::Duration;

/// Runs the exec plugin of `user`, if it has one, within `deadline`, and puts its
/// credential in place of `exec`.
///
/// # Errors
/// A plugin that does not answer in time ([`Reason::Unreachable`], as a server that does
/// not), or that cannot be run, fails, writes too much or answers without a credential
/// ([`Reason::BadKubeconfig`]); a `gcp` auth-provider that would run a command.
pub fn resolve(user: &mut AuthInfo, deadline: Duration) -> Result<(), Failure> {
    // The legacy `gcp` auth-provider runs its `cmd-path` inside kube, unbounded; kubectl
    // removed it in 1.26 for the exec plugin that replaced it.
    if let Some(provider) = &user.auth_provider
        && provider.name == "gcp"
        && provider.config.contains_key("cmd-path")
    {
        return Err(bad(
            "auth-provider gcp with cmd-path is not supported (kubectl removed it in 1.26): use the gke-gcloud-auth-plugin exec credential plugin".into(),
        ));
    }
    let Some(exec) = user.exec.take() else {
        return Ok(());
    };
    let out = run(&exec, deadline)
        .and_then(Output::succeeded)
        .map_err(failed)?;
    let doc = std::str::from_utf8(&out.stdout)
        .ok()
        .and_then(|text| Doc::parse(text).ok());
    let field = |key: &str| {
        let doc = doc.as_ref()?;
        let id = doc.path(doc.root()?, &["status", key])?;
        doc.text(id).filter(|t| !t.is_empty()).map(str::to_string)
    };
    let certificate = field("clientCertificateData").zip(field("clientKeyData"));
    if let Some((certificate, key)) = certificate {
        // A kubeconfig holds them as base64 of the PEM text, each ending in a newline
        // (kube joins key and certificate as they are).
        use base64::Engine as _;
        let encode = |pem: String| {
            let pem = if pem.ends_with('\n') { pem } else { pem + "\n" };
            base64::engine::general_purpose::STANDARD.encode(pem)
        };
        user.client_certificate_data = Some(encode(certificate));
        user.client_key_data = Some(encode(key).into());
        return Ok(());
    }
    match field("token") {
        Some(token) => {
            user.token = Some(token.into());
            Ok(())
        }
        None => Err(bad(format!(
            "credential plugin '{}' gave no status.token or status.clientCertificateData and clientKeyData",
            out.program
        ))),
    }
}

/// Starts the plugin as kube would and waits for it, within `deadline`.
fn run(exec: &ExecConfig, deadline: Duration) -> Result<Output, HelperError> {
    let Some(program) = &exec.command else {
        return Err(HelperError {
            program: "?".into(),
            what: Happened::NotRun(std::io::Error::other("no command")),
        });
    };
    let mut command = std::process::Command::new(program);
    command.args(exec.args.iter().flatten());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            command.env(name, value);
        }
    }
    let interactive = exec.interactive_mode != Some(ExecInteractiveMode::Never);
    let mut spec = serde_json::json!({ "interactive": interactive });
    if exec.provide_cluster_info
        && let Some(cluster) = &exec.cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    let info = serde_json::json!({
        "apiVersion": exec.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    });
    command.env("KUBERNETES_EXEC_INFO", info.to_string());
    for name in exec.drop_env.iter().flatten() {
        command.env_remove(name);
    }
    let helper = Helper::new(command).deadline(deadline);
    match interactive {
        true => helper.interactive().run(),
        false => helper.run(),
    }
}

/// `credential plugin '<name>' <what happened>`: the text kube's failures were reduced to
/// ([`crate::util::redact::plugin_failures`]), now made here.
fn failed(e: HelperError) -> Failure {
    let reason = match e.what {
        Happened::TimedOut(_) => Reason::Unreachable,
        _ => Reason::BadKubeconfig,
    };
    let mut text = format!("credential plugin '{}' {}", e.program, e.what);
    if let Happened::NotRun(cause) = &e.what {
        text = format!("{text}: {cause}");
    }
    Failure::new(reason, Step::Connect, text)
}

fn bad(text: String) -> Failure {
    Failure::new(Reason::BadKubeconfig, Step::Connect, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The user as a kubeconfig would hold it (secrets included).
    fn written(u: &AuthInfo) -> serde_json::Value {
        serde_json::to_value(u).unwrap()
    }

    fn user(script: &str) -> AuthInfo {
        let exec: ExecConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "sh",
            "args": ["-c", script, "FAKESECRET-arg"],
            "env": [{"name": "PLUGIN_TOKEN", "value": "FAKESECRET-env"}],
            "interactiveMode": "Never",
        }))
        .unwrap();
        AuthInfo {
            exec: Some(exec),
            ..AuthInfo::default()
        }
    }

    const SECS: Duration = Duration::from_secs(10);

    #[test]
    fn a_token_replaces_exec_and_the_plugin_sees_its_env_and_exec_info() {
        let mut u = user(
            r#"case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) exit 9;; esac
               printf 'status:\n  token: "%s-t"\n' "$PLUGIN_TOKEN""#,
        );
        resolve(&mut u, SECS).unwrap();
        assert!(u.exec.is_none());
        assert_eq!(written(&u)["token"], "FAKESECRET-env-t");
    }

    #[test]
    fn a_certificate_and_key_become_base64_pem() {
        let mut u = user(
            r#"printf %s '{"status":{"clientCertificateData":"CERT","clientKeyData":"KEY\n","token":"t"}}'"#,
        );
        resolve(&mut u, SECS).unwrap();
        let u = written(&u);
        assert_eq!(u["client-certificate-data"], "Q0VSVAo="); // "CERT\n"
        assert_eq!(u["client-key-data"], "S0VZCg=="); // "KEY\n"
        assert!(u.get("token").is_none(), "{u}");
    }

    #[test]
    fn failures_name_the_plugin_never_its_output_env_or_args() {
        for (script, reason, said) in [
            (
                "echo FAKESECRET-out; exit 3",
                Reason::BadKubeconfig,
                "credential plugin 'sh' failed (exit status: 3)",
            ),
            (
                "echo '{\"status\":{}}'",
                Reason::BadKubeconfig,
                "credential plugin 'sh' gave no status.token",
            ),
            (
                "echo 'FAKESECRET: [unclosed'",
                Reason::BadKubeconfig,
                "credential plugin 'sh' gave no status.token",
            ),
        ] {
            let f = resolve(&mut user(script), SECS).unwrap_err();
            assert_eq!(f.reason, reason, "{script}");
            assert!(f.detail.starts_with(said), "{}", f.detail);
            assert!(!f.detail.contains("FAKESECRET"), "{}", f.detail);
        }
        let mut gcp: AuthInfo = serde_json::from_value(serde_json::json!({
            "auth-provider": {"name": "gcp", "config": {"cmd-path": "/bin/FAKESECRET"}},
        }))
        .unwrap();
        let f = resolve(&mut gcp, SECS).unwrap_err();
        assert!(f.detail.contains("gke-gcloud-auth-plugin"), "{}", f.detail);
        let f = resolve(&mut user("sleep 30"), Duration::from_millis(200)).unwrap_err();
        assert_eq!(f.reason, Reason::Unreachable);
        assert_eq!(
            f.detail,
            "credential plugin 'sh' did not finish within 0.2s and was stopped"
        );
    }
}
