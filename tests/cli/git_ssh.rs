//! `clinv commit --push` (and the fetch of a rebuilt push) over SSH against a real
//! OpenSSH server: Debian's `sshd` on a loopback port with a throwaway host key and an
//! authorized key made with ssh-keygen at test time, started and stopped by each test
//! (`.ci/run` installs openssh-server). The client is the system `ssh`, configured as a
//! user would: `~/.ssh/config`-style files passed with `-F` through `GIT_SSH_COMMAND` or
//! `core.sshCommand` (OpenSSH reads `~` from the passwd home, not `$HOME`, so the tests
//! never rely on the real one), an ssh-agent started by the test, known_hosts files.
//!
//! A child module of `gitops` (its fixture is private there).

use crate::gitops::{Fx, log};
use crate::support::{git, listening, poll, reserve_port, write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// Whether a real sshd can be run here (the runner's `Need::Sshd`).
pub fn present() -> Result<(), String> {
    if !Path::new(SSHD).is_file() {
        return Err(format!(
            "{SSHD} not found (apt-get install openssh-server; .ci/run does)"
        ));
    }
    for tool in ["ssh", "ssh-keygen", "ssh-agent", "ssh-add"] {
        if !crate::harness::runs(tool, "-?") {
            return Err(format!("{tool} not found (apt-get install openssh-client)"));
        }
    }
    // sshd refuses to start without its privilege separation directory.
    std::fs::create_dir_all("/run/sshd")
        .map_err(|e| format!("/run/sshd cannot be created ({e}); sshd needs it"))
}

fn ssh_keygen(args: &[&str]) {
    crate::support::succeeded(Command::new("ssh-keygen").args(args));
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A running sshd on 127.0.0.1 that lets the test's key in; killed on drop.
struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Sshd {
    fn start() -> Sshd {
        present().unwrap_or_else(|why| panic!("{why}"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let host_key = d.join("host_key");
        let client_key = d.join("id_ed25519");
        for key in [&host_key, &client_key] {
            ssh_keygen(&[
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "clinv-test",
                "-f",
                key.to_str().unwrap(),
            ]);
        }
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        let config = write(
            d,
            "sshd_config",
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\nStrictModes no\nUsePAM no\nPubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nLogLevel VERBOSE\n",
                host_key.display(),
                d.join("authorized_keys").display()
            ),
        );
        let log = std::fs::File::create(d.join("sshd.log")).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sshd starts");
        let mut sshd = Sshd { child, port, dir };
        let up = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            if let Ok(Some(status)) = sshd.child.try_wait() {
                panic!("sshd exited ({status}):\n{}", sshd.log());
            }
            listening("127.0.0.1", port)
        });
        assert!(up, "sshd did not listen:\n{}", sshd.log());
        drop(reserved); // sshd listens: the port is its own
        sshd
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The server's host key as a known_hosts line.
    fn known_hosts_line(&self) -> String {
        let key = std::fs::read_to_string(self.path("host_key.pub")).unwrap();
        let mut parts = key.split_whitespace();
        let (kind, blob) = (parts.next().unwrap(), parts.next().unwrap());
        format!("[127.0.0.1]:{} {kind} {blob}\n", self.port)
    }

    /// A client config (for `ssh -F`): `Host gitserver` is an alias for this server with
    /// its port and the user; `identity` adds `IdentityFile` (the test's key) to both
    /// hosts; known_hosts is `known_hosts` (written with the server's key when `trusted`).
    fn client_config(&self, identity: bool, trusted: bool) -> PathBuf {
        let known = self.path("known_hosts");
        let line = if trusted {
            self.known_hosts_line()
        } else {
            String::new()
        };
        std::fs::write(&known, line).unwrap();
        let id = match identity {
            true => format!(
                "  IdentityFile {}\n  IdentitiesOnly yes\n",
                self.path("id_ed25519").display()
            ),
            false => String::new(),
        };
        write(
            self.dir.path(),
            "ssh_config",
            format!(
                "Host gitserver\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n{id}\nHost 127.0.0.1\n{id}\nHost *\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  ConnectTimeout 10\n",
                port = self.port,
                user = user(),
                known = known.display()
            ),
        )
    }

    /// `ssh -F CONFIG`, as `GIT_SSH_COMMAND` or `core.sshCommand`.
    fn ssh_command(&self, config: &Path) -> String {
        format!("ssh -F {}", config.display())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An ssh-agent holding the test's key; killed on drop.
struct Agent {
    pid: String,
    socket: String,
}

impl Agent {
    fn start(key: &Path) -> Agent {
        let dir = key.parent().unwrap();
        let socket = dir.join("agent.sock").to_str().unwrap().to_string();
        let out = Command::new("ssh-agent")
            .args(["-s", "-a", &socket])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let pid = text
            .split("SSH_AGENT_PID=")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .unwrap_or_else(|| panic!("ssh-agent: {text}"))
            .to_string();
        let agent = Agent { pid, socket };
        crate::support::succeeded(
            Command::new("ssh-add")
                .arg(key)
                .env("SSH_AUTH_SOCK", &agent.socket),
        );
        agent
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(&self.pid).status();
    }
}

impl Fx {
    fn set_origin(&self, url: &str) {
        git(&self.work(), &["remote", "set-url", "origin", url]);
    }

    fn remote_path(&self) -> String {
        self.remote().to_str().unwrap().to_string()
    }

    /// `commit --push` through `ssh -F CONFIG` lands the first inventory on the remote.
    fn pushes_first(&self, sshd: &Sshd, config: &Path) {
        let run = self.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(config))]);
        assert_eq!(run.code, 0, "{}\n{}", run.stderr, sshd.log());
        crate::support::assert_has(&run.stderr, "pushed main to origin");
        assert_eq!(log(&self.remote()), [FIRST]);
    }

    /// `commit --push` with `env` added.
    fn push_with(&self, env: &[(&str, &str)]) -> crate::support::Run {
        let repo = self.work();
        let mut c = self.clinv(&[
            "commit",
            "--domain",
            "prod.acme.example",
            "--repo",
            repo.to_str().unwrap(),
            "--push",
        ]);
        for (k, v) in env {
            c = c.env(k, v);
        }
        c.run()
    }
}

const FIRST: &str =
    "inventory(prod.acme.example): record inventory (9 addons, Kubernetes v1.31.10)";

fn push_through_ssh_agent() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    // No IdentityFile: the only key the server accepts is in the agent.
    let config = sshd.client_config(false, true);
    let key = sshd.path("id_ed25519");
    let agent = Agent::start(&key);
    // The key file is gone: only the agent holds it now.
    std::fs::remove_file(&key).unwrap();
    fx.set_origin(&format!(
        "ssh://{}@127.0.0.1:{}{}",
        user(),
        sshd.port,
        fx.remote_path()
    ));
    let command = sshd.ssh_command(&config);
    // Without the agent the server lets nobody in, and the message says what to do.
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &command)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("Permission denied"), "{}", run.stderr);
    assert!(run.stderr.contains("ssh-add"), "{}", run.stderr);
    assert!(log(&fx.remote()).is_empty());
    // With it, the push lands.
    let run = fx.push_with(&[
        ("GIT_SSH_COMMAND", &command),
        ("SSH_AUTH_SOCK", &agent.socket),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, sshd.log());
    crate::support::assert_has(&run.stderr, "pushed main to origin");
    assert_eq!(log(&fx.remote()), [FIRST]);
    assert_eq!(
        git(&fx.remote(), &["rev-parse", "main"]),
        git(&fx.work(), &["rev-parse", "main"])
    );
}

fn push_with_a_key_file_named_by_identityfile() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let config = sshd.client_config(true, true);
    // scp-like, with git's bracketed `[user@host:port]:path` form for a port.
    fx.set_origin(&format!(
        "[{}@127.0.0.1:{}]:{}",
        user(),
        sshd.port,
        fx.remote_path()
    ));
    fx.pushes_first(&sshd, &config);
    assert!(
        sshd.log().contains("Accepted publickey"),
        "the key file was used:\n{}",
        sshd.log()
    );
}

fn push_through_a_host_alias_on_another_port_with_core_sshcommand() {
    let sshd = Sshd::start();
    assert_ne!(sshd.port, 22);
    let fx = Fx::new();
    let config = sshd.client_config(true, true);
    // `gitserver` exists only in the config: HostName, Port, User, IdentityFile.
    fx.set_origin(&format!("gitserver:{}", fx.remote_path()));
    git(
        &fx.work(),
        &["config", "core.sshCommand", &sshd.ssh_command(&config)],
    );
    let run = fx.push_with(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, sshd.log());
    assert_eq!(log(&fx.remote()), [FIRST]);
    // GIT_SSH_COMMAND wins over core.sshCommand, as in git.
    fx.set_chart_version("cilium", "1.20.1");
    let run = fx.push_with(&[("GIT_SSH_COMMAND", "ssh -F /nonexistent/ssh_config")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    crate::support::assert_has(&run.stderr, "/nonexistent/ssh_config");
    assert!(run.stderr.contains("GIT_SSH_COMMAND"), "{}", run.stderr);
}

fn push_to_an_ssh_url_with_a_port() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let config = sshd.client_config(true, true);
    fx.set_origin(&format!(
        "ssh://{}@127.0.0.1:{}{}",
        user(),
        sshd.port,
        fx.remote_path()
    ));
    fx.pushes_first(&sshd, &config);
    // Pushing the same inventory again is up to date, over the same transport.
    let again = fx.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(&config))]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(log(&fx.remote()), [FIRST]);
}

fn an_unknown_host_key_is_refused_with_how_to_add_it() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let config = sshd.client_config(true, false);
    let known = sshd.path("known_hosts");
    fx.set_origin(&format!("gitserver:{}", fx.remote_path()));
    let started = Instant::now();
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(&config))]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "no prompt waited"
    );
    let hint = format!("ssh-keyscan -p {} 127.0.0.1", sshd.port);
    assert!(run.stderr.contains(&hint), "{}", run.stderr);
    assert!(run.stderr.contains("not in known_hosts"), "{}", run.stderr);
    assert!(!run.stderr.contains("invalid or unknown remote ssh hostkey"));
    // Nothing was accepted or pushed.
    assert_eq!(std::fs::read_to_string(&known).unwrap(), "");
    assert!(log(&fx.remote()).is_empty());
    // The hint works: the scanned key (checked against the server's) lets the push in.
    let scanned = Command::new("ssh-keyscan")
        .args(["-t", "ed25519", "-p", &sshd.port.to_string(), "127.0.0.1"])
        .output()
        .unwrap();
    let scanned = String::from_utf8_lossy(&scanned.stdout).into_owned();
    assert_eq!(scanned.trim(), sshd.known_hosts_line().trim());
    std::fs::write(&known, scanned).unwrap();
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(&config))]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(log(&fx.remote()), [FIRST]);
}

fn a_changed_host_key_is_refused_with_how_to_replace_it() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let config = sshd.client_config(true, false);
    // known_hosts holds another key for this server.
    let other = sshd.path("other_key");
    ssh_keygen(&[
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-f",
        other.to_str().unwrap(),
    ]);
    let key = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let mut parts = key.split_whitespace();
    let line = format!(
        "[127.0.0.1]:{} {} {}\n",
        sshd.port,
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    std::fs::write(sshd.path("known_hosts"), &line).unwrap();
    fx.set_origin(&format!("gitserver:{}", fx.remote_path()));
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(&config))]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let remove = format!("ssh-keygen -R '[127.0.0.1]:{}'", sshd.port);
    assert!(run.stderr.contains(&remove), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(sshd.path("known_hosts")).unwrap(),
        line
    );
    assert!(log(&fx.remote()).is_empty());
}

fn a_stale_clone_fetches_over_ssh_and_rebuilds_its_push() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let stale = fx.clone_remote("stale");
    let config = sshd.client_config(true, true);
    let url = format!("gitserver:{}", fx.remote_path());
    fx.set_origin(&url);
    git(&stale, &["remote", "set-url", "origin", &url]);
    let command = sshd.ssh_command(&config);
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &command)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The clone from before that push commits another domain on its old tip: the push is
    // rejected, it fetches the remote tip over SSH, rebuilds on it and pushes again.
    let run = fx
        .clinv(&[
            "commit",
            "--domain",
            "lab.acme.example",
            "--repo",
            stale.to_str().unwrap(),
            "--push",
        ])
        .env("GIT_SSH_COMMAND", &command)
        .run();
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, sshd.log());
    assert!(run.stderr.contains("2 attempt(s)"), "{}", run.stderr);
    let subjects = log(&fx.remote());
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(subjects[0].starts_with("inventory(lab.acme.example)"));
    assert_eq!(subjects[1], FIRST);
    assert_eq!(
        git(&fx.remote(), &["rev-parse", "main"]),
        git(&stale, &["rev-parse", "main"])
    );
}

fn an_encrypted_key_never_prompts_and_takes_a_passphrase_helper_when_asked() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    // The only authorized key is encrypted, named by IdentityFile; no agent.
    let key = sshd.path("id_ed25519");
    ssh_keygen(&[
        "-q",
        "-p",
        "-P",
        "",
        "-N",
        "pass phrase",
        "-f",
        key.to_str().unwrap(),
    ]);
    let config = sshd.client_config(true, true);
    fx.set_origin(&format!("gitserver:{}", fx.remote_path()));
    let askpass = write(
        &fx.dir.path().join("bin"),
        "askpass",
        "#!/bin/sh\necho 'pass phrase'\n",
    );
    std::fs::set_permissions(
        &askpass,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let askpass = askpass.to_str().unwrap();
    // BatchMode=yes: ssh asks nobody, not even the helper; the message says what to do.
    let started = Instant::now();
    let run = fx.push_with(&[
        ("GIT_SSH_COMMAND", &sshd.ssh_command(&config)),
        ("SSH_ASKPASS", askpass),
        ("SSH_ASKPASS_REQUIRE", "force"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(20));
    crate::support::assert_has(&run.stderr, "must be in the agent");
    assert!(log(&fx.remote()).is_empty());
    // A command that turns BatchMode off itself (ssh takes its first value) gets the
    // passphrase from the helper.
    let command = format!("{} -o BatchMode=no", sshd.ssh_command(&config));
    let run = fx.push_with(&[
        ("GIT_SSH_COMMAND", &command),
        ("SSH_ASKPASS", askpass),
        ("SSH_ASKPASS_REQUIRE", "force"),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, sshd.log());
    assert_eq!(log(&fx.remote()), [FIRST]);
    assert!(!run.stderr.contains("pass phrase"));
}

fn a_missing_repository_on_the_server_is_named() {
    let sshd = Sshd::start();
    let fx = Fx::new();
    let config = sshd.client_config(true, true);
    fx.set_origin("gitserver:/nonexistent/it's here.git");
    let run = fx.push_with(&[("GIT_SSH_COMMAND", &sshd.ssh_command(&config))]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // The remote git's own words, for the path exactly as given (quoted for the shell).
    crate::support::assert_has(
        &run.stderr,
        "'/nonexistent/it's here.git' does not appear to be a git repository",
    );
    assert!(run.stderr.contains("exit status 128"), "{}", run.stderr);
}

trials! {
    Sshd: [
        push_through_ssh_agent,
        push_with_a_key_file_named_by_identityfile,
        push_through_a_host_alias_on_another_port_with_core_sshcommand,
        push_to_an_ssh_url_with_a_port,
        an_unknown_host_key_is_refused_with_how_to_add_it,
        a_changed_host_key_is_refused_with_how_to_replace_it,
        a_stale_clone_fetches_over_ssh_and_rebuilds_its_push,
        an_encrypted_key_never_prompts_and_takes_a_passphrase_helper_when_asked,
        a_missing_repository_on_the_server_is_named,
    ],
}
