//! Helper programs that never answer or answer without end: Docker credential helpers
//! (`credsStore`) and kubeconfig exec credential plugins. Each is a test double — a
//! shell script — because no real helper can be made to hang or flood on purpose; each
//! also leaves a grandchild (`sleep … &`) holding its output open, as a shell-script
//! helper that started a daemon does, so killing only the script is not enough.
//!
//! Every run ends within the hostile bounds (time, `ulimit -d`) with one clear error
//! that names the helper and what happened, never its output.

use super::*;

/// A script that writes nothing and does not end within any bound here (a minute), with
/// a grandchild holding its stdout.
const HANGS: &str = "#!/bin/sh\nsleep 60 &\nsleep 60\n";
/// A script that writes `bytes` zero bytes on stdout, with a grandchild holding it.
fn floods(bytes: u64) -> String {
    format!("#!/bin/sh\nsleep 60 &\nhead -c {bytes} /dev/zero\n")
}

/// The deadline the Docker-credential cases give every helper (`CLINV_HELPER_TIMEOUT`).
const HELPER_SECS: &str = "2";

/// An executable script at `dir/name`.
fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = write(dir, name, text);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A Docker config whose `credsStore` is `docker-credential-hostile`, that script
/// being `text`; returns the directory (for `DOCKER_CONFIG`) and the `PATH`.
fn docker_helper(dir: &Path, text: &str) -> (PathBuf, String) {
    let bin = dir.join("bin");
    script(&bin, "docker-credential-hostile", text);
    let docker = dir.join("docker");
    write(&docker, "config.json", r#"{"credsStore":"hostile"}"#);
    (docker, path_with(&bin))
}

/// `log --oci` of a registry on this machine that refuses connections: the credentials
/// are looked up before the first request.
fn log_oci(dir: &Path, text: &str) -> Run {
    let (docker, path) = docker_helper(dir, text);
    bounded(&["log", "--oci", "oci://127.0.0.1:9/inv", "--plain-http"])
        .env("DOCKER_CONFIG", &docker)
        .env("PATH", path)
        .env("CLINV_HELPER_TIMEOUT", HELPER_SECS)
        .run()
}

fn a_credential_helper_that_never_answers_is_stopped_at_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let run = log_oci(dir.path(), HANGS);
    assert_clean_failure(&run, "docker-credential-hostile did not finish within 2s");
    // Stopped at its deadline, long before the helper's 60 s (a generous margin: debug
    // build, loaded machine).
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
    // push asks the same helper the same way.
    let root = project();
    let store = tempfile::tempdir().unwrap();
    queue(root.path(), store.path());
    let (docker, path) = docker_helper(dir.path(), HANGS);
    let run = bounded(&["push", "oci://127.0.0.1:9/inv", "--plain-http"])
        .project(root.path(), "inv")
        .store(store.path())
        .env("DOCKER_CONFIG", &docker)
        .env("PATH", path)
        .env("CLINV_HELPER_TIMEOUT", HELPER_SECS)
        .run();
    assert_clean_failure(&run, "docker-credential-hostile did not finish within 2s");
}

fn a_credential_helper_printing_500_mb_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let run = log_oci(dir.path(), &floods(500_000_000));
    assert_clean_failure(
        &run,
        "docker-credential-hostile wrote more than 1048576 bytes",
    );
}

/// A kubeconfig for the refusing server whose user runs the exec plugin `plugin`
/// (`client.authentication.k8s.io/v1`, with an argument and an `env:` value that must
/// never be shown).
fn exec_kubeconfig(dir: &Path, plugin: &Path) -> PathBuf {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n  - name: offline\n    cluster:\n      server: https://127.0.0.1:9\ncontexts:\n  - name: offline\n    context: {{cluster: offline, user: plugin}}\nusers:\n  - name: plugin\n    user:\n      exec:\n        apiVersion: client.authentication.k8s.io/v1\n        command: {}\n        args: [FAKESECRET-arg]\n        env: [{{name: PLUGIN_TOKEN, value: FAKESECRET-env}}]\n        interactiveMode: Never\ncurrent-context: offline\n",
        plugin.display()
    );
    write(dir, "exec.kubeconfig", text)
}

fn no_secret(run: &Run) {
    assert_lacks(&run.stderr, "FAKESECRET");
    assert_lacks(&run.stdout, "FAKESECRET");
}

/// Found by issue 39, item 9: the plugin ran before the snapshot was recorded and
/// outside `--timeout`, so a killed publish recorded nothing.
fn an_exec_plugin_that_never_answers_ends_publish_at_its_timeout_with_the_snapshot_pending() {
    let root = project();
    let store = tempfile::tempdir().unwrap();
    let plugin = script(root.path(), "plugin", HANGS);
    let kc = exec_kubeconfig(root.path(), &plugin);
    let run = bounded(&["publish", "--strict", "--timeout", "3"])
        .project(root.path(), "inv")
        .kubeconfig(&kc)
        .store(store.path())
        .run();
    assert_failure(
        &run,
        5,
        "credential plugin 'plugin' did not finish within 3s",
    );
    // Stopped at 3 s, long before the plugin's 60 s (generous: debug build, loaded machine).
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
    no_secret(&run);
    let list = bounded(&["snapshots", "list"])
        .root(root.path())
        .store(store.path())
        .run()
        .success();
    assert_has(&list.stdout, "pending");
}

fn an_exec_plugin_printing_2_gb_is_cut_off() {
    let root = project();
    let store = tempfile::tempdir().unwrap();
    let plugin = script(root.path(), "plugin", &floods(2_000_000_000));
    let kc = exec_kubeconfig(root.path(), &plugin);
    let run = bounded(&["publish", "--strict", "--timeout", "5"])
        .project(root.path(), "inv")
        .kubeconfig(&kc)
        .store(store.path())
        .run();
    assert_failure(
        &run,
        4,
        "credential plugin 'plugin' wrote more than 1048576 bytes",
    );
    no_secret(&run);
}

/// `status`, `replay` and `drift` run the plugin too: each within its `--timeout`, the
/// cluster "not read" (status and drift: exit 16) or the snapshot left pending (replay).
fn an_exec_plugin_that_never_answers_ends_status_replay_and_drift_at_their_timeout() {
    let root = project();
    let store = tempfile::tempdir().unwrap();
    queue(root.path(), store.path());
    let plugin = script(root.path(), "plugin", HANGS);
    let kc = exec_kubeconfig(root.path(), &plugin);
    for command in ["status", "replay", "drift"] {
        let run = bounded(&[command, "--timeout", "2"])
            .project(root.path(), "inv")
            .kubeconfig(&kc)
            .store(store.path())
            .run();
        assert!(
            // Within --timeout 2, long before the plugin's 60 s (a generous margin).
            run.elapsed < Duration::from_secs(30),
            "{command}: {:?}",
            run.elapsed
        );
        // Within what is left of the command's deadline when the plugin starts.
        let said = format!("{}{}", run.stdout, run.stderr);
        assert_has(&said, "credential plugin 'plugin' did not finish within ");
        no_secret(&run);
    }
}

trials! {
    Nothing: [
        a_credential_helper_that_never_answers_is_stopped_at_its_deadline,
        a_credential_helper_printing_500_mb_is_cut_off,
        an_exec_plugin_that_never_answers_ends_publish_at_its_timeout_with_the_snapshot_pending,
        an_exec_plugin_printing_2_gb_is_cut_off,
        an_exec_plugin_that_never_answers_ends_status_replay_and_drift_at_their_timeout,
    ],
}
