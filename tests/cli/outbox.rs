//! Owed pushes (issue 38 item 2): a `commit --push` or `push oci://…` whose far end does
//! not answer records the push as owed in `<store>/.outbox/`, and `clinv replay` delivers
//! it when the far end answers again — the real servers stopped and started on the same
//! port: Debian's nginx in front of `git http-backend`, Debian's docker-registry.

use crate::git_server::git_in;
use crate::registry::{PASSWORD as REG_PASSWORD, Registry, USER as REG_USER, key_pair};
use crate::support::*;
use std::path::{Path, PathBuf};

const DOMAIN: &str = "prod.acme.example";
use crate::git_https::{PASSWORD, USER};

/// git_https's fixture (a project, a HOME, a bare repository served over HTTPS), with the
/// store and its outbox.
struct GitFx(crate::git_https::Fx);

impl std::ops::Deref for GitFx {
    type Target = crate::git_https::Fx;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for GitFx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl GitFx {
    fn new() -> GitFx {
        GitFx(crate::git_https::Fx::new())
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn outbox(&self) -> PathBuf {
        self.store().join(".outbox")
    }

    /// A clone whose `origin` is the HTTPS URL with the password in its user info.
    fn clone(&self, name: &str) -> PathBuf {
        self.clone_as(name, &format!("{USER}:{PASSWORD}"))
    }

    /// A clone whose `origin` is the HTTPS URL with `userinfo`.
    fn clone_as(&self, name: &str, userinfo: &str) -> PathBuf {
        let url = format!("https://{userinfo}@127.0.0.1:{}/inv.git", self.server.port);
        self.0.clone(name, Some(&url))
    }

    fn commit_push(&self, work: &Path, extra: &[&str]) -> Run {
        let mut args = vec![
            "commit",
            "--domain",
            DOMAIN,
            "--repo",
            work.to_str().unwrap(),
            "--push",
            "origin",
            "--push-timeout",
            "5",
        ];
        args.extend_from_slice(extra);
        self.clinv(&args).run()
    }

    /// Another clone pushes a commit of its own straight to the bare repository: its id.
    fn someone_else_pushes(&self) -> String {
        let file = format!("file://{}", self.bare().display());
        git_in(
            self.dir.path(),
            &self.home(),
            &["clone", "-q", &file, "other"],
        );
        let other = self.dir.path().join("other");
        write(&other, "apps/podinfo.yaml", "kind: Namespace\n");
        let g = |args: &[&str]| git_in(&other, &self.home(), args);
        g(&["checkout", "-q", "-B", "main"]);
        g(&["add", "."]);
        let who = ["-c", "user.name=O", "-c", "user.email=o@x"];
        g(&[&who[..], &["commit", "-q", "-m", "theirs"]].concat());
        g(&["push", "-q", "origin", "main"]);
        g(&["rev-parse", "main"])
    }

    fn remote_tip(&self) -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(self.bare())
            .args(["rev-parse", "--verify", "-q", "main"])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

/// The files of an outbox folder (none when it does not exist), temporary files aside.
fn owed_files(outbox: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(outbox)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
}

/// Every byte under `dir`, as text, for a secret search.
fn all_text(dir: &Path) -> String {
    all_files(dir)
        .iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The remote is down while `commit --push` runs: the commit is made, the push is owed
/// (a warning, exit 0; `--strict` exits 5), nothing secret is stored; the remote comes
/// back on the same port and `clinv replay` pushes the owed commit, records the push as
/// `commit --push` does, and the item is gone.
fn a_commit_push_to_a_stopped_remote_is_owed_and_replay_delivers_it() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    let run = fx.commit_push(&work, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, "push owed");
    no_secret(&run);
    let owed = owed_files(&fx.outbox());
    assert_eq!(owed.len(), 1, "{owed:?}\n{}", run.stderr);
    let text = all_text(&fx.outbox());
    assert_lacks(&text, PASSWORD);
    let item: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(item["channel"], "git");
    assert_eq!(item["remote"], "origin");
    assert_eq!(item["branch"], "main");
    assert_eq!(item["reason"], "unreachable");
    let local = git_in(&work, &fx.home(), &["rev-parse", "main"]);
    assert_eq!(item["commit"], local.trim());
    assert_eq!(fx.remote_tip(), None, "nothing reached the remote");

    // --strict: the same push owed, and the unreachable code.
    fx.set_chart("1.20.1");
    let strict = fx.commit_push(&work, &["--strict"]);
    assert_eq!(strict.code, 5, "{}", strict.stderr);
    assert_has(&strict.stderr, "push owed");
    // The newer owed push to the same target replaced the older one.
    assert_eq!(owed_files(&fx.outbox()).len(), 1);
    let local = git_in(&work, &fx.home(), &["rev-parse", "main"]);

    // Visible: status, its metrics, and snapshots list.
    let status = fx.clinv(&["status", "--domain", DOMAIN]).run();
    assert_has(&status.stdout, "git: 1 push owed to origin (main)");
    let metrics = fx.clinv(&["status", "-A", "-o", "prometheus"]).run();
    assert_eq!(metrics.code, 0, "{}", metrics.stderr);
    let git_owed = format!("clinv_owed{{domain=\"{DOMAIN}\",channel=\"git\"}} 1\n");
    assert_has(&metrics.stdout, &git_owed);
    let list = fx.clinv(&["snapshots", "list", "--domain", DOMAIN]).run();
    assert_has(&list.stdout, "push owed");
    let log = fx.clinv(&["log", "--domain", DOMAIN]).run();
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert_has(&log.stderr, "git push owed to origin (main) since");

    fx.server.restart();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 0, "{}\n{}", replay.stderr, replay.stdout);
    no_secret(&replay);
    assert_eq!(fx.remote_tip().as_deref(), Some(local.trim()));
    assert!(owed_files(&fx.outbox()).is_empty(), "{}", replay.stderr);
    let shown = fx
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
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let snap = &shown["snapshot"];
    assert_eq!(snap["pushed"], "origin", "{shown}");
    assert_eq!(snap["commit"], local.trim(), "{shown}");
    // Recorded as `commit --push` records a push.
    let last = shown["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["state"], "committed", "{shown}");
    assert_eq!(last["detail"], "pushed to origin", "{shown}");
    // Nothing owed is shown any more.
    let status = fx.clinv(&["status", "--domain", DOMAIN]).run();
    assert_lacks(&status.stdout, "push owed");
    git_in(&fx.bare(), &fx.home(), &["fsck", "--strict"]);
}

impl GitFx {
    fn set_chart(&self, version: &str) {
        set_chart_version(&self.root(), "cilium", version);
    }
}

/// The remote moved on while the push was owed (another clone pushed to the branch): the
/// delivery is refused with a message naming remote, branch and both commits, nothing is
/// forced, and the push stays owed.
fn an_owed_push_to_a_remote_that_moved_on_is_refused_and_stays_owed() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    let run = fx.commit_push(&work, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ours = git_in(&work, &fx.home(), &["rev-parse", "main"]);
    // Another clone pushes straight to the bare repository meanwhile.
    let theirs = fx.someone_else_pushes();

    fx.server.restart();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 1, "{}\n{}", replay.stderr, replay.stdout);
    let said = format!("{}{}", replay.stderr, replay.stdout);
    assert_has(&said, "origin");
    assert_has(&said, "main");
    assert_has(&said, &ours.trim()[..12]);
    assert_has(&said, &theirs.trim()[..12]);
    assert_has(&said, "not a fast-forward");
    no_secret(&replay);
    assert_eq!(
        fx.remote_tip().as_deref(),
        Some(theirs.trim()),
        "not forced"
    );
    assert_eq!(owed_files(&fx.outbox()).len(), 1, "still owed");
}

/// The registry channel.
struct OciFx {
    dir: tempfile::TempDir,
    project: tempfile::TempDir,
    registry: Registry,
}

impl OciFx {
    fn new() -> OciFx {
        let dir = tempfile::tempdir().unwrap();
        let reg = dir.path().join("registry");
        std::fs::create_dir_all(&reg).unwrap();
        OciFx {
            registry: Registry::start(&reg),
            project: copy_tree(&example()),
            dir,
        }
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        clinv(args)
            .project(self.project.path(), DOMAIN)
            .env("CLINV_SNAPSHOTS", self.store().to_str().unwrap())
            .env("REGISTRY_AUTH", &format!("{REG_USER}:{REG_PASSWORD}"))
            .env("COSIGN_PASSWORD", "")
            .env("SOURCE_DATE_EPOCH", "1767225600")
    }

    fn push(&self, extra: &[&str]) -> Run {
        self.push_to(&self.registry.url("inventories/prod"))
            .args(extra)
            .run()
    }

    /// Another machine (another store) pushes an inventory rendered later straight to
    /// the registry: the digest `latest` names then.
    fn another_machine_pushes_a_newer(&self) -> String {
        let other = tempfile::tempdir().unwrap();
        self.push_to(&self.registry.url("inventories/prod"))
            .store(other.path())
            .env("SOURCE_DATE_EPOCH", "1767312000")
            .run()
            .success();
        self.tagged("latest")
    }

    /// `clinv push URL` with the registry's CA and credentials.
    fn push_to(&self, url: &str) -> Clinv {
        let ca = self.registry.ca();
        self.clinv(&[
            "push",
            url,
            "--ca-file",
            &ca,
            "--creds-env",
            "REGISTRY_AUTH",
        ])
    }

    /// The repository's artifacts carry a valid cosign signature by `public`'s key.
    fn assert_signed(&self, public: &Path) {
        let verify = self
            .clinv(&[
                "log",
                "--oci",
                &self.registry.url("inventories/prod"),
                "--ca-file",
                &self.registry.ca(),
                "--creds-env",
                "REGISTRY_AUTH",
                "--verify",
                public.to_str().unwrap(),
            ])
            .run();
        assert_eq!(verify.code, 0, "{}", verify.stderr);
    }

    /// The digest the tag names in the registry now.
    fn tagged(&self, tag: &str) -> String {
        let bytes = self.registry.get(
            &format!("inventories/prod/manifests/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
        );
        format!("sha256:{}", sha256_hex(&bytes))
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// The registry is down while `push oci://… --sign KEY` runs: the push is owed (the key's
/// path and the variables' names stored, never their values); the registry comes back and
/// `clinv replay` pushes the same manifest a direct push gives, signed.
fn a_push_to_a_stopped_registry_is_owed_and_replay_delivers_it_signed() {
    let mut fx = OciFx::new();
    let (key, public) = key_pair(fx.dir.path(), "cosign");
    let key = key.to_str().unwrap();
    fx.registry.stop();
    let run = fx.push(&["--sign", key]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, "push owed");
    no_secret(&run);
    let outbox = fx.store().join(".outbox");
    assert_eq!(owed_files(&outbox).len(), 1, "{}", run.stderr);
    let text = all_text(&outbox);
    assert_lacks(&text, REG_PASSWORD);
    assert_lacks(&text, "PRIVATE KEY");
    let item: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(item["channel"], "oci");
    assert_eq!(item["credsEnv"], "REGISTRY_AUTH");
    assert_eq!(item["signKey"], key);

    fx.registry.restart();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 0, "{}\n{}", replay.stderr, replay.stdout);
    no_secret(&replay);
    assert!(owed_files(&outbox).is_empty(), "{}", replay.stderr);
    let delivered = fx.tagged("latest");
    // A direct push of the same snapshot names the same manifest.
    let direct = fx.push(&["--snapshot", "latest", "-o", "json"]);
    assert_eq!(direct.code, 0, "{}", direct.stderr);
    let direct: serde_json::Value = serde_json::from_str(&direct.stdout).unwrap();
    assert_eq!(direct["digest"], delivered.as_str());
    // Signed: the .sig manifest holds a signature of that digest by the key.
    fx.assert_signed(&public);
    let shown = fx
        .clinv(&["snapshots", "show", "latest", "-o", "json"])
        .run()
        .success();
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    assert!(shown.to_string().contains(&delivered), "{shown}");
}

/// A damaged outbox file is named in a warning on every replay (never removed, never a
/// panic) while the other owed pushes are still delivered; exit 0 without `--strict`.
fn a_damaged_outbox_file_is_named_and_the_others_are_delivered() {
    let mut fx = OciFx::new();
    fx.registry.stop();
    let run = fx.push(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let outbox = fx.store().join(".outbox");
    let damaged = write(
        &outbox,
        "git-0123456789abcdef-prod.acme.example.json",
        "{ not json",
    );
    let future = write(
        &outbox,
        "oci-fedcba9876543210-prod.acme.example.json",
        r#"{"version":99,"channel":"oci"}"#,
    );
    fx.registry.restart();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 0, "{}\n{}", replay.stderr, replay.stdout);
    assert_has(&replay.stderr, damaged.to_str().unwrap());
    assert_has(&replay.stderr, future.to_str().unwrap());
    assert_has(&replay.stderr, "version 99");
    // status names them too.
    let status = fx.clinv(&["status"]).run();
    assert_has(&status.stderr, damaged.to_str().unwrap());
    assert_eq!(owed_files(&outbox), vec![damaged, future]);
    fx.tagged("latest");
}

/// `--token-env NAME`: the outbox holds the variable's name, never the token; the
/// delivery reads the variable when it runs (without it the server refuses: the push is
/// refused and stays owed; with it, it lands).
fn an_owed_push_reads_its_token_when_it_is_delivered() {
    let mut fx = GitFx::new();
    let work = fx.clone_as("work", USER);
    fx.server.stop();
    let run = fx
        .clinv(&[
            "commit",
            "--domain",
            DOMAIN,
            "--repo",
            work.to_str().unwrap(),
            "--push",
            "origin",
            "--token-env",
            "INV_TOKEN",
        ])
        .env("INV_TOKEN", PASSWORD)
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = all_text(&fx.outbox());
    assert_lacks(&text, PASSWORD);
    let item: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(item["tokenEnv"], "INV_TOKEN");
    fx.server.restart();
    // Without the variable, the delivery says so (as the command would) and it stays
    // owed.
    let without = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(without.code, 1, "{}", without.stderr);
    assert_has(&without.stderr, "INV_TOKEN");
    assert_eq!(owed_files(&fx.outbox()).len(), 1);
    let with = fx
        .clinv(&["replay", "--domain", DOMAIN])
        .env("INV_TOKEN", PASSWORD)
        .run();
    assert_eq!(with.code, 0, "{}", with.stderr);
    no_secret(&with);
    assert!(owed_files(&fx.outbox()).is_empty(), "{}", with.stderr);
    assert!(fx.remote_tip().is_some());
}

/// The local branch no longer holds the owed commit (amended): refused, nothing pushed,
/// still owed.
fn an_owed_commit_the_branch_no_longer_holds_is_refused() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    assert_eq!(fx.commit_push(&work, &[]).code, 0);
    let owed = git_in(&work, &fx.home(), &["rev-parse", "main"]);
    git_in(
        &work,
        &fx.home(),
        &["commit", "-q", "--amend", "-m", "rewritten"],
    );
    fx.server.restart();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 1, "{}", replay.stderr);
    assert_has(&replay.stderr, "no longer holds the owed commit");
    assert_has(&replay.stderr, owed.trim());
    assert_eq!(fx.remote_tip(), None);
    assert_eq!(owed_files(&fx.outbox()).len(), 1);
}

/// A remote that accepts connections and never answers: the delivery gives up at the
/// command's `--timeout`, the push stays owed, and the command ends.
fn a_black_holed_remote_keeps_the_push_owed_within_the_timeout() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    assert_eq!(fx.commit_push(&work, &[]).code, 0);
    let hole = std::net::TcpListener::bind(("127.0.0.1", fx.server.port)).unwrap();
    let started = std::time::Instant::now();
    let replay = fx
        .clinv(&["replay", "--domain", DOMAIN, "--timeout", "2"])
        .run();
    let took = started.elapsed();
    drop(hole);
    assert_eq!(replay.code, 0, "{}", replay.stderr);
    assert_has(&replay.stderr, "still owed");
    assert_has(&replay.stderr, "did not answer within 2s");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    assert_eq!(owed_files(&fx.outbox()).len(), 1);
    fx.server.restart();
}

/// A refusal is not owed: a wrong password (401) and a registry refusing the credentials
/// are errors as before, and nothing is queued (retrying would not help).
fn a_refused_push_is_an_error_and_not_owed() {
    let fx = GitFx::new();
    let work = fx.clone_as("work", &format!("{USER}:FAKESECRET-wrong-9d1c"));
    let run = fx.commit_push(&work, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_lacks(&run.stderr, "owed");
    assert!(owed_files(&fx.outbox()).is_empty());
}

/// A `git://` remote (libgit2's own transport) and an `ssh://` remote (the system ssh)
/// whose port refuses connections: the push is owed for each, under its own target.
fn git_and_ssh_remotes_that_refuse_connections_are_owed() {
    let dir = tempfile::tempdir().unwrap();
    let (home, work, store) = (
        dir.path().join("home"),
        dir.path().join("work"),
        dir.path().join("store"),
    );
    std::fs::create_dir_all(&home).unwrap();
    git_in(dir.path(), &home, &["init", "-q", "-b", "main", "work"]);
    let project = copy_tree(&example());
    let port = refused_port();
    let g = |args: &[&str]| git_in(&work, &home, args);
    g(&["config", "user.name", "Inventory Bot"]);
    g(&["config", "user.email", "bot@acme.example"]);
    g(&[
        "remote",
        "add",
        "daemon",
        &format!("git://127.0.0.1:{port}/inv.git"),
    ]);
    g(&[
        "remote",
        "add",
        "sshd",
        &format!("ssh://git@127.0.0.1:{port}/inv.git"),
    ]);
    for remote in ["daemon", "sshd"] {
        let run = clinv(&["commit", "--repo", work.to_str().unwrap(), "--push", remote])
            .project(project.path(), DOMAIN)
            .env("CLINV_SNAPSHOTS", store.to_str().unwrap())
            .env("HOME", home.to_str().unwrap())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .run();
        assert_eq!(run.code, 0, "{remote}: {}", run.stderr);
        assert_has(&run.stderr, "push owed");
    }
    assert_eq!(owed_files(&store.join(".outbox")).len(), 2);
}

/// One owed push whose remote takes the connection and never answers must not hold up
/// another's: git pushes run one at a time in a process, so the hung one has to end with
/// its `--timeout` (each HTTPS request is bounded by the push's deadline), and the loop
/// delivers the other once its remote is back.
fn a_hung_remote_never_holds_up_another_owed_push_in_the_loop() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    fx.commit_push(&work, &[]).success();
    // edge's repository pushes to a port that refuses now and is a black hole later.
    let port = reserve_port("127.0.0.1");
    let hung = fx.0.clone(
        "hung",
        Some(&format!("https://127.0.0.1:{}/inv.git", port.port)),
    );
    let args = [
        "commit",
        "--domain",
        "edge.acme.example",
        "--repo",
        hung.to_str().unwrap(),
    ];
    let run = fx
        .clinv(&args)
        .args(["--push", "origin", "--push-timeout", "5"])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(owed_files(&fx.outbox()).len(), 2, "{}", run.stderr);
    let hole = std::net::TcpListener::bind(("127.0.0.1", port.port)).unwrap();
    drop(port);
    let mut args = LOOP.to_vec();
    args.extend(["-A", "--timeout", "2"]);
    let run = fx.clinv(&args).spawn();
    let limit = std::time::Duration::from_secs(30);
    let started = |s: &str| {
        events(s)
            .iter()
            .filter(|e| e["event"] == "push-not-delivered")
            .count()
            >= 2
    };
    assert!(run.wait_for(limit, started), "{}", run.stderr());
    fx.server.restart();
    let pushed = run.wait_for(std::time::Duration::from_secs(15), |s| {
        has_event(s, "pushed", DOMAIN)
    });
    assert!(pushed, "{}", run.stderr());
    drop(hole);
}

/// The loop meets a remote that moved on while the push was owed: the push is refused
/// (an error line naming both commits), stays owed, and nothing is forced.
fn the_loop_refuses_an_owed_push_to_a_remote_that_moved_on() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    fx.commit_push(&work, &[]).success();
    let ours = git_in(&work, &fx.home(), &["rev-parse", "main"]);
    // Another clone pushes straight to the bare repository meanwhile.
    let theirs = fx.someone_else_pushes();
    fx.server.restart();
    let run = fx.clinv(&LOOP).args(["--domain", DOMAIN]).spawn();
    let limit = std::time::Duration::from_secs(30);
    assert!(
        run.wait_for(limit, |s| has_event(s, "push-refused", DOMAIN)),
        "{}",
        run.stderr()
    );
    let refused = events(&run.stderr())
        .into_iter()
        .find(|e| e["event"] == "push-refused")
        .unwrap();
    let msg = refused["msg"].as_str().unwrap();
    assert_has(msg, &ours.trim()[..12]);
    assert_has(msg, &theirs.trim()[..12]);
    assert_eq!(
        fx.remote_tip().as_deref(),
        Some(theirs.trim()),
        "not forced"
    );
    assert_eq!(owed_files(&fx.outbox()).len(), 1, "still owed");
}

/// The registry's tag moved on while the push was owed: another machine (another store)
/// pushed an inventory rendered later to it. The owed, older artifact is refused — the
/// message names both — the tag keeps the newer one, and the push stays owed.
fn an_owed_artifact_whose_tag_moved_on_is_refused_and_stays_owed() {
    let mut fx = OciFx::new();
    fx.registry.stop();
    assert_has(&fx.push(&[]).success().stderr, "push owed");
    fx.registry.restart();
    let theirs = fx.another_machine_pushes_a_newer();
    let replay = fx.clinv(&["replay", "--domain", DOMAIN]).run();
    assert_eq!(replay.code, 1, "{}\n{}", replay.stderr, replay.stdout);
    let said = format!("{}{}", replay.stderr, replay.stdout);
    assert_has(&said, "moved on");
    assert_has(&said, &theirs);
    assert_eq!(fx.tagged("latest"), theirs, "not overwritten");
    assert_eq!(
        owed_files(&fx.store().join(".outbox")).len(),
        1,
        "still owed"
    );
}

/// `commit -A --push` to a remote that does not answer: one commit for the fleet, its
/// push owed by each domain it carries (a warning each, exit 0; `--strict` exits 5);
/// `replay -A` pushes it once the remote is back — the first delivery pushes, the others
/// find it there — and the outbox is empty.
fn a_fleet_commit_push_to_a_stopped_remote_is_owed_by_each_domain() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    let args = [
        "commit",
        "-A",
        "--repo",
        work.to_str().unwrap(),
        "--push",
        "origin",
    ];
    let run = fx.clinv(&args).args(["--push-timeout", "5"]).run();
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    no_secret(&run);
    let owed = owed_files(&fx.outbox());
    let domains = ["edge.acme.example", "lab.acme.example", "prod.acme.example"];
    assert_eq!(owed.len(), domains.len(), "{owed:?}\n{}", run.stderr);
    for d in domains {
        let said = run
            .stderr
            .lines()
            .any(|l| l.contains("push owed") && l.contains(d));
        assert!(said, "{d}: {}", run.stderr);
    }
    assert_eq!(fx.remote_tip(), None);
    let local = git_in(&work, &fx.home(), &["rev-parse", "main"]);

    fx.server.restart();
    let replay = fx.clinv(&["replay", "-A"]).run();
    assert_eq!(replay.code, 0, "{}\n{}", replay.stderr, replay.stdout);
    assert_eq!(fx.remote_tip().as_deref(), Some(local.trim()));
    assert!(owed_files(&fx.outbox()).is_empty(), "{}", replay.stderr);
}

/// Issue 49, finding 6: once the remote is back, a direct `commit --push` (one domain, or
/// `-A`) that lands the branch settles what was owed: `status` no longer says "push owed"
/// and the outbox is empty, without a `replay`.
fn a_direct_commit_push_that_lands_settles_what_was_owed() {
    for all in [false, true] {
        let mut fx = GitFx::new();
        let work = fx.clone("work");
        fx.server.stop();
        let mut args = vec![
            "commit",
            "--repo",
            work.to_str().unwrap(),
            "--push",
            "origin",
        ];
        let scope = if all {
            vec!["-A"]
        } else {
            vec!["--domain", DOMAIN]
        };
        args.extend(&scope);
        let run = fx.clinv(&args).args(["--push-timeout", "5"]).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!owed_files(&fx.outbox()).is_empty(), "{}", run.stderr);
        fx.server.restart();
        let again = fx.clinv(&args).args(["--push-timeout", "5"]).run();
        assert_eq!(again.code, 0, "{}", again.stderr);
        let local = git_in(&work, &fx.home(), &["rev-parse", "main"]);
        assert_eq!(fx.remote_tip().as_deref(), Some(local.trim()));
        assert!(
            owed_files(&fx.outbox()).is_empty(),
            "all={all}: {:?}\n{}",
            owed_files(&fx.outbox()),
            again.stderr
        );
        let status = fx.clinv(&["status", "-A", "--offline"]).run();
        assert!(!status.stdout.contains("push owed"), "{}", status.stdout);
        assert!(!status.stderr.contains("push owed"), "{}", status.stderr);
    }
}

/// The loop tries the owed push while its far end is down, `restart`s it, and pushes it.
fn tried_then_pushed(run: &Background, restart: impl FnOnce()) {
    let limit = std::time::Duration::from_secs(30);
    let tried = run.wait_for(limit, |s| has_event(s, "push-not-delivered", DOMAIN));
    assert!(tried, "{}", run.stderr());
    restart();
    let pushed = run.wait_for(limit, |s| has_event(s, "pushed", DOMAIN));
    assert!(pushed, "{}", run.stderr());
}

/// The loop's arguments: every domain, JSON events, short waits.
const LOOP: [&str; 9] = [
    "replay",
    "--watch",
    "--log-format",
    "json",
    "-v",
    "--backoff-base",
    "500ms",
    "--backoff-cap",
    "2s",
];

/// `replay --watch` delivers an owed commit by itself once the remote is back (a
/// failed attempt first, while it is down), and says so in its log.
fn the_loop_pushes_an_owed_commit_once_the_remote_is_back() {
    let mut fx = GitFx::new();
    let work = fx.clone("work");
    fx.server.stop();
    fx.commit_push(&work, &[]).success();
    let local = git_in(&work, &fx.home(), &["rev-parse", "main"]);
    let run = fx.clinv(&LOOP).args(["--domain", DOMAIN]).spawn();
    tried_then_pushed(&run, || fx.server.restart());
    assert_eq!(fx.remote_tip().as_deref(), Some(local.trim()));
    assert!(owed_files(&fx.outbox()).is_empty());
    assert_lacks(&run.stderr(), PASSWORD);
}

/// The same for the registry: the artifact pushed and signed by the loop.
fn the_loop_pushes_an_owed_artifact_signed_once_the_registry_is_back() {
    let mut fx = OciFx::new();
    let (key, public) = key_pair(fx.dir.path(), "cosign");
    fx.registry.stop();
    fx.push(&["--sign", key.to_str().unwrap()]).success();
    let run = fx.clinv(&LOOP).spawn();
    tried_then_pushed(&run, || fx.registry.restart());
    assert!(owed_files(&fx.store().join(".outbox")).is_empty());
    fx.assert_signed(&public);
    assert_lacks(&run.stderr(), REG_PASSWORD);
}

/// A door on loopback in front of a server: shut (every connection closed at once),
/// open (forwarded), or slow (a new connection is held `slow` before it is forwarded,
/// and dropped if its client gave up meanwhile — the TLS handshake cannot end before,
/// so nothing of its request reaches the server). A test double by necessity: a real
/// registry cannot be told to be slow for one connection.
struct Door {
    port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
    /// Connections let through at once before slow ones are held.
    free: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

const SHUT: u8 = 0;
const OPEN: u8 = 1;
const SLOW: u8 = 2;

impl Door {
    fn start(upstream: u16, slow: std::time::Duration) -> Door {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(SHUT));
        let free = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (m, f) = (mode.clone(), free.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let mut mode = m.load(Ordering::SeqCst);
                if mode == SHUT {
                    continue;
                }
                let take = |n: usize| n.checked_sub(1);
                if mode == SLOW
                    && f.fetch_update(Ordering::SeqCst, Ordering::SeqCst, take)
                        .is_ok()
                {
                    mode = OPEN;
                }
                std::thread::spawn(move || {
                    if mode == SLOW {
                        std::thread::sleep(slow);
                        client.set_nonblocking(true).unwrap();
                        let mut one = [0u8; 1];
                        if matches!(client.peek(&mut one), Ok(0)) {
                            return;
                        }
                        client.set_nonblocking(false).unwrap();
                    }
                    let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                        return;
                    };
                    let (mut c2, mut s2) =
                        (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let (mut c, mut s) = (client, server);
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut c2, &mut s2);
                        let _ = s2.shutdown(std::net::Shutdown::Write);
                    });
                    let _ = std::io::copy(&mut s, &mut c);
                    let _ = c.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        Door { port, mode, free }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, std::sync::atomic::Ordering::SeqCst);
    }

    /// Slow, after `free` connections let through at once.
    fn slow_after(&self, free: usize) {
        self.free.store(free, std::sync::atomic::Ordering::SeqCst);
        self.set(SLOW);
    }
}

/// Issue 48, finding 2: the loop gives up on a slow registry at `--timeout`; the attempt
/// it gave up must stop there, never land later and move the tag back to the older
/// artifact after a newer one was pushed meanwhile (the one Flux and Argo CD deploy).
fn an_owed_push_given_up_never_moves_the_tag_back_later() {
    let fx = OciFx::new();
    let door = Door::start(fx.registry.port, std::time::Duration::from_secs(4));
    let url = format!("oci://127.0.0.1:{}/inventories/prod", door.port);
    assert_has(&fx.push_to(&url).run().success().stderr, "push owed");
    // The attempt's look at the tag gets through; its push is held.
    door.slow_after(1);
    let run = fx.clinv(&LOOP).args(["--timeout", "1"]).spawn();
    let limit = std::time::Duration::from_secs(20);
    assert!(
        run.wait_for(limit, |s| has_event(s, "push-not-delivered", DOMAIN)),
        "{}",
        run.stderr()
    );
    // A newer inventory is pushed straight to the registry meanwhile.
    let newer = fx.another_machine_pushes_a_newer();
    door.set(OPEN);
    // The held connections are let through after 4 s; the given-up attempts are over.
    std::thread::sleep(std::time::Duration::from_secs(8));
    assert_eq!(fx.tagged("latest"), newer, "moved back:\n{}", run.stderr());
}

trials! {
    Sshd: [git_and_ssh_remotes_that_refuse_connections_are_owed],
    GitHttps: [
        a_refused_push_is_an_error_and_not_owed,
        an_owed_push_reads_its_token_when_it_is_delivered,
        an_owed_commit_the_branch_no_longer_holds_is_refused,
        a_black_holed_remote_keeps_the_push_owed_within_the_timeout,
        a_commit_push_to_a_stopped_remote_is_owed_and_replay_delivers_it,
        an_owed_push_to_a_remote_that_moved_on_is_refused_and_stays_owed,
        the_loop_pushes_an_owed_commit_once_the_remote_is_back,
        a_fleet_commit_push_to_a_stopped_remote_is_owed_by_each_domain,
        a_direct_commit_push_that_lands_settles_what_was_owed,
        a_hung_remote_never_holds_up_another_owed_push_in_the_loop,
        the_loop_refuses_an_owed_push_to_a_remote_that_moved_on,
    ],
    Registry: [
        a_push_to_a_stopped_registry_is_owed_and_replay_delivers_it_signed,
        a_damaged_outbox_file_is_named_and_the_others_are_delivered,
        the_loop_pushes_an_owed_artifact_signed_once_the_registry_is_back,
        an_owed_artifact_whose_tag_moved_on_is_refused_and_stays_owed,
        an_owed_push_given_up_never_moves_the_tag_back_later,
    ],
}
