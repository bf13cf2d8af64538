//! `clinv commit` against real repositories: a worktree, a bare remote over file://, a
//! remote served by `git daemon`, concurrent committers, a rejecting hook, signing.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A project copy, its store, a bare remote and a clone (`work`) with an identity; shared
/// with `commit_many`.
pub struct Fx {
    pub dir: tempfile::TempDir,
}

impl Fx {
    /// Publishes prod with no kubeconfig (KUBECONFIG names a missing file) at `epoch`:
    /// one queued snapshot.
    fn queue_at(&self, epoch: &str) {
        self.clinv(&["publish", "--domain", "prod.acme.example"])
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success();
    }

    /// `snapshots show latest -o json` of prod.
    fn latest_snapshot(&self) -> serde_json::Value {
        let run = self
            .clinv(&[
                "snapshots",
                "show",
                "latest",
                "--domain",
                "prod.acme.example",
                "-o",
                "json",
            ])
            .run()
            .success();
        serde_json::from_str(&run.stdout).unwrap()
    }

    /// A project copy, a bare remote and a clone of it with an identity configured.
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let fx = Fx { dir };
        copy_dir(&example(), &fx.root());
        git(
            fx.dir.path(),
            &["init", "-q", "--bare", "-b", "main", "remote.git"],
        );
        fx.clone_remote("work");
        fx
    }

    pub fn clone_remote(&self, name: &str) -> PathBuf {
        let url = format!("file://{}", self.dir.path().join("remote.git").display());
        git(self.dir.path(), &["clone", "-q", &url, name]);
        let work = self.dir.path().join(name);
        git(&work, &["config", "user.name", "Inventory Bot"]);
        git(&work, &["config", "user.email", "bot@acme.example"]);
        git(&work, &["checkout", "-q", "-B", "main"]);
        work
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn remote(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    pub fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let mut all = vec!["--root", root.as_str()];
        all.extend_from_slice(args);
        clinv(&all).env(
            "CLINV_SNAPSHOTS",
            self.dir.path().join("store").to_str().unwrap(),
        )
    }

    fn commit(&self, repo: &Path, extra: &[&str]) -> Run {
        self.clinv(&[
            "commit",
            "--repo",
            repo.to_str().unwrap(),
            "--domain",
            "prod.acme.example",
        ])
        .args(extra)
        .run()
    }

    /// `commit --print-argo --all`: the ApplicationSet over the branch's folders.
    fn argo_set(&self, repo: &Path, extra: &[&str]) -> Run {
        let repo = repo.to_str().unwrap();
        self.clinv(&["commit", "--repo", repo, "--print-argo", "--all"])
            .args(extra)
            .run()
    }

    pub fn set_chart_version(&self, addon: &str, version: &str) {
        set_chart_version(&self.root(), addon, version);
    }
}

pub fn log(repo: &Path) -> Vec<String> {
    let has_main = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "--verify", "-q", "main"])
        .output()
        .unwrap()
        .status
        .success();
    if !has_main {
        return Vec::new();
    }
    git(repo, &["log", "--format=%s", "main"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Serves the fixture's directory with `git daemon` (push enabled) until dropped.
struct Daemon {
    child: std::process::Child,
    port: u16,
}

impl Daemon {
    fn start(base: &Path) -> Daemon {
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        // `git daemon` would run git-daemon as a child that outlives a kill of `git`;
        // start the program itself so that dropping the guard stops it.
        let exec_path = git(base, &["--exec-path"]);
        let child = Command::new(Path::new(exec_path.trim()).join("git-daemon"))
            .args([
                "--reuseaddr",
                "--enable=receive-pack",
                "--export-all",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        drop(reserved); // git daemon (--reuseaddr) listens: the port is its own
        Daemon { child, port }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn commit_writes_the_three_files_with_a_stable_subject_and_trailers() {
    let fx = Fx::new();
    let run = fx.commit(&fx.work(), &[]).success();
    assert!(run.stderr.contains("committed "), "{}", run.stderr);
    let files = git(&fx.work(), &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(
        files,
        "clusters/prod.acme.example/inventory/clusterinventory.crd.yaml\nclusters/prod.acme.example/inventory/clusterinventory.yaml\nclusters/prod.acme.example/inventory/kustomization.yaml\n"
    );
    let kust = git(
        &fx.work(),
        &[
            "show",
            "HEAD:clusters/prod.acme.example/inventory/kustomization.yaml",
        ],
    );
    assert_eq!(
        kust,
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - clusterinventory.crd.yaml\n  - clusterinventory.yaml\n"
    );
    let crd = git(
        &fx.work(),
        &[
            "show",
            "HEAD:clusters/prod.acme.example/inventory/clusterinventory.crd.yaml",
        ],
    );
    assert!(
        crd.contains("annotations:\n    argocd.argoproj.io/sync-wave: '-1'\n"),
        "{crd}"
    );
    let cr = git(
        &fx.work(),
        &[
            "show",
            "HEAD:clusters/prod.acme.example/inventory/clusterinventory.yaml",
        ],
    );
    assert!(
        cr.contains("argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true"),
        "{cr}"
    );
    let message = git(&fx.work(), &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(
            "inventory(prod.acme.example): record inventory (9 addons, Kubernetes v1.31.10)\n"
        ),
        "{message}"
    );
    let hash = clinv::util::hash::hex_sha256(
        &std::fs::read(
            fx.root()
                .join("clusters/prod.acme.example/cluster.lok8s.yaml"),
        )
        .unwrap(),
    );
    let trailers = git(&fx.work(), &["log", "-1", "--format=%(trailers:only)"]);
    assert!(
        trailers.contains(&format!("Spec-Hash: {hash}\n"))
            && trailers.contains("Lok8s-Version: 0.7.9\n")
            && trailers.contains("Snapshot: "),
        "{trailers}"
    );
    assert_eq!(
        git(&fx.work(), &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]).trim(),
        "Inventory Bot <bot@acme.example>|Inventory Bot <bot@acme.example>"
    );
    assert!(
        git(&fx.work(), &["status", "--porcelain"]).is_empty(),
        "the worktree follows the commit"
    );
    // The snapshot is marked committed with the commit id.
    let list = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success();
    let snaps: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(snaps[0]["state"], "committed");
    assert_eq!(
        snaps[0]["commit"].as_str().unwrap(),
        git(&fx.work(), &["rev-parse", "HEAD"]).trim()
    );
}

fn only_renderedat_differing_is_up_to_date_and_a_real_change_names_itself() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    // A new snapshot whose only difference is renderedAt.
    fx.queue_at("1700000500");
    let run = fx.commit(&fx.work(), &[]).success();
    assert!(run.stderr.contains("up to date on main"), "{}", run.stderr);
    assert_eq!(log(&fx.work()).len(), 1);
    // A chart upgrade: one commit whose subject names it.
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000600");
    fx.commit(
        &fx.work(),
        &["--author", "Release Train <train@acme.example>"],
    )
    .success();
    let subjects = log(&fx.work());
    assert_eq!(
        subjects[0],
        "inventory(prod.acme.example): cilium 1.19.2 → 1.20.1"
    );
    assert_eq!(
        git(&fx.work(), &["log", "-1", "--format=%an <%ae>"]).trim(),
        "Release Train <train@acme.example>"
    );
    assert_eq!(subjects.len(), 2);
}

/// `snapshots list -o json` of prod: the ids, newest first.
fn snapshot_ids(fx: &Fx) -> Vec<String> {
    let list = fx
        .clinv(&[
            "snapshots",
            "list",
            "--domain",
            "prod.acme.example",
            "-o",
            "json",
        ])
        .run()
        .success();
    let snaps: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    snaps
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn committed_cr(fx: &Fx) -> String {
    git(
        &fx.work(),
        &[
            "show",
            "main:clusters/prod.acme.example/inventory/clusterinventory.yaml",
        ],
    )
}

/// Issue #16 finding 3: `commit` renders the project as it is now (a pin changed after
/// the last publish is committed, not "up to date"), records that render first (for Git
/// only), folds it into an identical newest snapshot, and says which snapshot it
/// committed; `--snapshot` commits a stored one instead.
fn commit_renders_the_current_project_and_snapshot_picks_a_stored_one() {
    let fx = Fx::new();
    fx.queue_at(EPOCH);
    let published = fx.latest_snapshot()["snapshot"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The render is identical to the published snapshot: folded, no new snapshot.
    let run = fx.commit(&fx.work(), &[]).success();
    assert!(
        run.stderr.contains(&format!(
            "snapshot {published} (rendered from the project; already the store's newest)"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot_ids(&fx), vec![published.clone()]);
    assert!(committed_cr(&fx).contains("chartVersion: 1.19.2"));
    // A local change, not published: committed all the same.
    fx.set_chart_version("cilium", "1.20.1");
    let run = fx.commit(&fx.work(), &[]).success();
    let ids = snapshot_ids(&fx);
    assert_eq!(ids.len(), 2, "the render is recorded first: {ids:?}");
    let rendered = ids[0].clone();
    assert!(
        !run.stderr.contains("up to date")
            && run.stderr.contains(&format!(
                "snapshot {rendered} (rendered from the project; recorded for Git only)"
            )),
        "{}",
        run.stderr
    );
    assert!(committed_cr(&fx).contains("chartVersion: 1.20.1"));
    assert_eq!(
        log(&fx.work())[0],
        "inventory(prod.acme.example): cilium 1.19.2 → 1.20.1"
    );
    let trailers = git(&fx.work(), &["log", "-1", "--format=%(trailers:only)"]);
    assert!(
        trailers.contains(&format!("Snapshot: {rendered}\n")),
        "{trailers}"
    );
    // Recorded for Git only: replay never delivers it, the published one stays queued.
    let show = fx
        .clinv(&[
            "snapshots",
            "show",
            &rendered,
            "--domain",
            "prod.acme.example",
            "-o",
            "json",
        ])
        .run()
        .success();
    let show: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(show["snapshot"]["cluster"], false, "{show}");
    assert_eq!(show["snapshot"]["state"], "committed", "{show}");
    // Committing the same project again: folded into that snapshot, up to date.
    let run = fx.commit(&fx.work(), &[]).success();
    assert!(
        run.stderr.contains("up to date on main")
            && run.stderr.contains(&format!(
                "snapshot {rendered} (rendered from the project; already the store's newest)"
            )),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot_ids(&fx).len(), 2);
    // --snapshot latest~1: the published snapshot from the store, rendering nothing.
    fx.set_chart_version("cilium", "1.21.0");
    let run = fx.commit(&fx.work(), &["--snapshot", "latest~1"]).success();
    assert!(
        run.stderr
            .contains(&format!("snapshot {published} (from the store)")),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot_ids(&fx).len(), 2, "nothing rendered nor recorded");
    assert!(committed_cr(&fx).contains("chartVersion: 1.19.2"));
    assert_eq!(
        log(&fx.work())[0],
        "inventory(prod.acme.example): cilium 1.20.1 → 1.19.2"
    );
    assert_eq!(log(&fx.work()).len(), 3);
    // A snapshot the store does not hold is "no such snapshot" (1), not a usage error;
    // a malformed one stays a usage error (2).
    for (reference, code, says) in [
        ("ffffffff", 1, "no snapshot"),
        ("latest~9", 1, "fewer snapshots"),
        ("latest~x", 2, "bad snapshot reference"),
    ] {
        let run = fx.commit(&fx.work(), &["--snapshot", reference]);
        assert_eq!(run.code, code, "{reference}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{reference}: {}", run.stderr);
    }
    assert_eq!(log(&fx.work()).len(), 3, "nothing committed");
}

/// Without a project (the store alone, `--snapshots`), `commit` has nothing to render:
/// `--snapshot` is required, and with it the stored snapshot is committed.
fn commit_without_a_project_needs_snapshot() {
    let fx = Fx::new();
    fx.queue_at(EPOCH);
    let elsewhere = fx.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let store = fx.dir.path().join("store");
    let work = fx.work();
    let base = [
        "--snapshots",
        store.to_str().unwrap(),
        "commit",
        "--domain",
        "prod.acme.example",
        "--repo",
        work.to_str().unwrap(),
    ];
    let run = clinv(&base).cwd(&elsewhere).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no lok8s project") && run.stderr.contains("--snapshot"),
        "{}",
        run.stderr
    );
    assert!(log(&fx.work()).is_empty(), "nothing committed");
    let mut with = base.to_vec();
    with.extend(["--snapshot", "latest"]);
    let run = clinv(&with).cwd(&elsewhere).run().success();
    assert!(run.stderr.contains("(from the store)"), "{}", run.stderr);
    assert_eq!(log(&fx.work()).len(), 1);
}

/// The record-first promise: a render the store cannot record is not committed (exit 11,
/// the repository untouched).
fn a_render_the_store_cannot_record_is_not_committed() {
    let fx = Fx::new();
    fx.queue_at(EPOCH);
    // The store's object folder is a file now: nothing can be written into it.
    let objects = fx.dir.path().join("store/prod.acme.example/objects");
    std::fs::remove_dir_all(&objects).unwrap();
    std::fs::write(&objects, "").unwrap();
    fx.set_chart_version("cilium", "1.20.1");
    let run = fx.commit(&fx.work(), &[]);
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("not recorded: the inventory of prod.acme.example rendered for commit; nothing committed: ")
            && run.stderr.contains("nothing committed"),
        "{}",
        run.stderr
    );
    assert!(log(&fx.work()).is_empty(), "nothing committed");
    assert!(!fx.work().join("clusters").exists());
}

fn an_older_snapshot_is_never_committed_over_a_newer_one() {
    let fx = Fx::new();
    fx.queue_at("1700000000");
    let old = fx.latest_snapshot();
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000900");
    fx.commit(&fx.work(), &[]).success();
    let run = fx
        .commit(
            &fx.work(),
            &["--snapshot", old["snapshot"]["id"].as_str().unwrap()],
        )
        .success();
    assert!(
        run.stderr.contains("already holds a newer inventory")
            && run.stderr.contains("clinv commit --allow-older commits it")
            && !run.stderr.contains("clock skew"),
        "{}",
        run.stderr
    );
    assert_eq!(log(&fx.work()).len(), 1);
    // --strict: a refused commit is exit 13; -q does not hide the warning.
    let id = old["snapshot"]["id"].as_str().unwrap();
    let strict = fx.commit(&fx.work(), &["--snapshot", id, "--strict"]);
    assert_eq!(strict.code, 13, "{}", strict.stderr);
    let quiet = fx.commit(&fx.work(), &["--snapshot", id, "-q"]).success();
    assert!(
        quiet
            .stderr
            .contains("[warn] main already holds a newer inventory"),
        "{}",
        quiet.stderr
    );
    assert_eq!(log(&fx.work()).len(), 1);
    // --allow-older commits it all the same.
    fx.commit(&fx.work(), &["--snapshot", id, "--allow-older"])
        .success();
    assert_eq!(log(&fx.work()).len(), 2);
}

/// A snapshot recorded after the branch's, with an older renderedAt (a fixed
/// SOURCE_DATE_EPOCH in CI, another machine's clock): refused, but the warning says it
/// is clock skew, with both times and the override, and -q does not hide it.
fn a_commit_refused_by_clock_skew_says_so() {
    let fx = Fx::new();
    fx.queue_at("1700000900");
    fx.commit(&fx.work(), &[]).success();
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000000");
    let newer = fx.latest_snapshot();
    let run = fx.commit(&fx.work(), &["-q"]).success();
    let id = newer["snapshot"]["id"].as_str().unwrap();
    assert!(
        run.stderr.starts_with("[warn] clock skew: main holds an inventory of prod.acme.example rendered at 2023-11-14T22:28:20Z, but the store recorded snapshot ")
            && run.stderr.contains(id)
            && run.stderr.contains("older renderedAt (2023-11-14T22:13:20Z)")
            && run.stderr.contains("clinv commit --allow-older commits it"),
        "{}",
        run.stderr
    );
    assert_eq!(fx.commit(&fx.work(), &["--strict"]).code, 13);
    fx.commit(&fx.work(), &["--allow-older"]).success();
    let cr = git(
        &fx.work(),
        &[
            "show",
            "main:clusters/prod.acme.example/inventory/clusterinventory.yaml",
        ],
    );
    assert!(cr.contains("chartVersion: 1.20.1"), "{cr}");
}

fn push_to_a_file_remote_and_a_stale_clone_rebases_and_retries() {
    let fx = Fx::new();
    let other = fx.clone_remote("other");
    let run = fx.commit(&fx.work(), &["--push"]).success();
    assert!(
        run.stderr.contains("pushed main to origin"),
        "{}",
        run.stderr
    );
    assert_eq!(log(&fx.remote()).len(), 1);
    // `other` cloned before that push: its push is non-fast-forward, so it rebuilds.
    let run = fx
        .clinv(&[
            "commit",
            "--domain",
            "lab.acme.example",
            "--repo",
            other.to_str().unwrap(),
            "--push",
        ])
        .run()
        .success();
    assert!(run.stderr.contains("2 attempt(s)"), "{}", run.stderr);
    let subjects = log(&fx.remote());
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(
        subjects[0].starts_with("inventory(lab.acme.example)")
            && subjects[1].starts_with("inventory(prod.acme.example)")
    );
    let files = git(&fx.remote(), &["ls-tree", "-r", "--name-only", "main"]);
    assert_eq!(files.lines().count(), 6, "both folders: {files}");
}

fn concurrent_committers_to_one_remote_both_land() {
    let fx = Fx::new();
    let a = fx.clone_remote("a");
    let b = fx.clone_remote("b");
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = [("prod.acme.example", &a), ("lab.acme.example", &b)]
            .into_iter()
            .map(|(domain, repo)| {
                let fx = &fx;
                s.spawn(move || {
                    fx.clinv(&[
                        "commit",
                        "--domain",
                        domain,
                        "--repo",
                        repo.to_str().unwrap(),
                        "--push",
                    ])
                    .run()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let subjects = log(&fx.remote());
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    git(&fx.remote(), &["fsck", "--strict"]);
    // Whichever rebuilt on the other's tip has a worktree that matches its branch.
    for repo in [&a, &b] {
        assert_eq!(
            git(repo, &["status", "--porcelain"]),
            "",
            "{}",
            repo.display()
        );
    }
}

/// Operator review, finding 2: parallel CI jobs pushing different domains through a
/// real receive-pack (git daemon) whose pre-receive hook widens the race: the loser is
/// told "failed to update ref" — the tip moved — and must fetch, rebuild and retry,
/// whatever the server's wording.
fn a_ref_update_lost_to_a_parallel_push_is_retried() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &["--push"]).success(); // main exists on the remote
    let hook = fx.remote().join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\ncat >/dev/null\nsleep 1\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let daemon = Daemon::start(fx.dir.path());
    let url = format!("git://127.0.0.1:{}/remote.git", daemon.port);
    let clones: Vec<PathBuf> = ["a", "b"].iter().map(|n| fx.clone_remote(n)).collect();
    for c in &clones {
        git(c, &["remote", "add", "daemon", &url]);
    }
    let domains = ["lab.acme.example", "edge.acme.example"];
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = domains
            .iter()
            .zip(&clones)
            .map(|(domain, repo)| {
                let fx = &fx;
                s.spawn(move || {
                    let repo = repo.to_str().unwrap();
                    fx.clinv(&[
                        "commit", "--domain", domain, "--repo", repo, "--push", "daemon",
                    ])
                    .run()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    drop(daemon);
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(log(&fx.remote()).len(), 3, "every push landed");
}

fn a_rejected_ref_is_a_failure_not_a_success() {
    let fx = Fx::new();
    let hook = fx.remote().join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'inventory pushes are frozen' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // A server runs hooks (libgit2's local file:// transport does not).
    let daemon = Daemon::start(fx.dir.path());
    git(
        &fx.work(),
        &[
            "remote",
            "add",
            "daemon",
            &format!("git://127.0.0.1:{}/remote.git", daemon.port),
        ],
    );
    let run = fx.commit(&fx.work(), &["--push", "daemon"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("rejected") || run.stderr.contains("declined"),
        "{}",
        run.stderr
    );
    // The local commit is said first, then the push's error; nothing says "pushed".
    let committed = run
        .stderr
        .find("[info] committed snapshot")
        .expect(&run.stderr);
    let error = run.stderr.find("[error]").expect(&run.stderr);
    assert!(committed < error, "{}", run.stderr);
    assert!(!run.stderr.contains("pushed"), "{}", run.stderr);
    assert!(log(&fx.remote()).is_empty());
}

fn push_to_a_git_daemon_remote() {
    let fx = Fx::new();
    let daemon = Daemon::start(fx.dir.path());
    git(
        &fx.work(),
        &[
            "remote",
            "add",
            "daemon",
            &format!("git://127.0.0.1:{}/remote.git", daemon.port),
        ],
    );
    let run = fx.commit(&fx.work(), &["--push", "daemon"]);
    let run = run.success();
    assert_has(&run.stderr, "pushed main to daemon");
    assert_eq!(log(&fx.remote()).len(), 1);
    // Someone else pushes over the daemon; the rebuilt commit leaves the worktree
    // matching the branch (their file checked out, nothing staged).
    let other = fx.clone_remote("other");
    write(&other, "apps/podinfo.yaml", "kind: Namespace\n");
    git(&other, &["add", "."]);
    git(&other, &["commit", "-q", "-m", "podinfo"]);
    git(&other, &["push", "-q", "origin", "main"]);
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000600");
    let run = fx.commit(&fx.work(), &["--push", "daemon"]);
    drop(daemon);
    let run = run.success();
    assert!(run.stderr.contains("2 attempt(s)"), "{}", run.stderr);
    assert_eq!(git(&fx.work(), &["status", "--porcelain"]), "");
    assert!(fx.work().join("apps/podinfo.yaml").is_file());
    assert_eq!(log(&fx.remote()).len(), 3);
}

fn no_secret_reaches_any_git_object() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &["--push"]).success();
    fx.clinv(&[
        "commit",
        "--domain",
        "lab.acme.example",
        "--repo",
        fx.work().to_str().unwrap(),
        "--push",
    ])
    .run()
    .success();
    for repo in [fx.work(), fx.remote()] {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.len() > 1000);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("FAKESECRET"),
            "{} leaks",
            repo.display()
        );
    }
}

fn ssh_signed_commits_verify_and_move_the_branch() {
    let fx = Fx::new();
    let key = fx.dir.path().join("signing_key");
    let out = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "bot@acme.example",
            "-f",
        ])
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    git(&fx.work(), &["config", "gpg.format", "ssh"]);
    git(
        &fx.work(),
        &["config", "user.signingkey", key.to_str().unwrap()],
    );
    fx.commit(&fx.work(), &["--sign"]).success();
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let allowed = fx.dir.path().join("allowed_signers");
    std::fs::write(&allowed, format!("bot@acme.example {public}")).unwrap();
    let out = Command::new("git")
        .arg("-C")
        .arg(fx.work())
        .args([
            "-c",
            &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
            "verify-commit",
            "HEAD",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Good \"git\" signature"));
    assert_eq!(
        git(&fx.work(), &["rev-parse", "HEAD"]),
        git(&fx.work(), &["rev-parse", "main"])
    );
    // Operator review, finding 3: `commit.gpgsign=true` signs as git does, without
    // --sign; --no-sign overrides it.
    let verified = || {
        Command::new("git")
            .arg("-C")
            .arg(fx.work())
            .args([
                "-c",
                &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
            ])
            .args(["verify-commit", "HEAD"])
            .output()
            .unwrap()
            .status
            .success()
    };
    git(&fx.work(), &["config", "commit.gpgsign", "true"]);
    fx.set_chart_version("cilium", "1.20.1");
    fx.commit(&fx.work(), &[]).success();
    assert!(verified(), "commit.gpgsign=true signs");
    fx.set_chart_version("cilium", "1.20.2");
    fx.commit(&fx.work(), &["--no-sign"]).success();
    assert!(!verified(), "--no-sign does not");
    assert_eq!(
        git(&fx.work(), &["log", "--format=%s", "-n", "3"])
            .lines()
            .count(),
        3
    );
}

/// Issue 41, "Helper processes": a repository with `commit.gpgsign` and a `gpg.program`
/// that never answers hung `clinv commit` until it was killed. The program is a test
/// double (a script: no real gpg can be made to hang on purpose) that does not end within
/// a minute and leaves a grandchild holding its output; the commit ends at the helper
/// deadline (`CLINV_HELPER_TIMEOUT`) with an error naming the program, and the branch
/// has not moved.
fn a_gpg_program_that_never_answers_is_stopped_at_the_helper_deadline() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    let before = log(&fx.work());
    let gpg = fx.dir.path().join("hanging-gpg");
    std::fs::write(
        &gpg,
        "#!/bin/sh\necho FAKESECRET-gpg-output\nsleep 60 &\nsleep 60\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gpg, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&fx.work(), &["config", "commit.gpgsign", "true"]);
    git(
        &fx.work(),
        &["config", "gpg.program", gpg.to_str().unwrap()],
    );
    fx.set_chart_version("cilium", "1.20.1");
    let run = fx
        .clinv(&[
            "commit",
            "--repo",
            fx.work().to_str().unwrap(),
            "--domain",
            "prod.acme.example",
        ])
        .env("CLINV_HELPER_TIMEOUT", "2")
        .run();
    assert!(
        run.elapsed < std::time::Duration::from_secs(10),
        "took {:?}",
        run.elapsed
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "hanging-gpg did not finish within 2s");
    assert!(!run.stderr.contains("FAKESECRET"), "{}", run.stderr);
    assert_eq!(log(&fx.work()), before);
}

fn interface_errors() {
    let fx = Fx::new();
    assert_eq!(fx.commit(&fx.work(), &["--path", "../escape"]).code, 2);
    assert_eq!(fx.commit(&fx.work(), &["--author", "no email"]).code, 2);
    // No identity anywhere.
    git(&fx.work(), &["config", "--unset", "user.name"]);
    git(&fx.work(), &["config", "--unset", "user.email"]);
    let run = fx.commit(&fx.work(), &[]);
    assert_eq!(run.code, 1);
    assert_has(&run.stderr, "no commit author: pass --author");
    // A second kustomization file in the folder is refused, for the reason kustomize
    // gives.
    git(&fx.work(), &["config", "user.name", "B"]);
    git(&fx.work(), &["config", "user.email", "b@x.example"]);
    fx.commit(&fx.work(), &[]).success();
    write(
        &fx.work(),
        "clusters/prod.acme.example/inventory/kustomization.yml",
        "resources: []\n",
    );
    git(&fx.work(), &["add", "."]);
    git(&fx.work(), &["commit", "-q", "-m", "second kustomization"]);
    fx.set_chart_version("cilium", "1.21.0");
    fx.queue_at("1700009999");
    let run = fx.commit(&fx.work(), &[]);
    assert_eq!(run.code, 1);
    assert_has(
        &run.stderr,
        "holds kustomization.yml besides clinv's kustomization.yaml",
    );
    assert_has(&run.stderr, "two kustomization files");
}

fn yaml_docs(text: &str) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple(text).unwrap()
}

const GOTK_SYNC: &str = "# This manifest was generated by flux. DO NOT EDIT.
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  secretRef:
    name: flux-system
  url: ssh://git@git.acme.example/platform/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s
  path: ./clusters/BOOT
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
";

/// Commits a `flux bootstrap --path=clusters/<name>` tree with plain git.
fn bootstrap(work: &Path, name: &str) {
    write(
        work,
        &format!("clusters/{name}/flux-system/gotk-sync.yaml"),
        GOTK_SYNC.replace("BOOT", name),
    );
    write(
        work,
        &format!("clusters/{name}/flux-system/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gotk-components.yaml\n- gotk-sync.yaml\n",
    );
    git(work, &["add", "."]);
    git(work, &["commit", "-q", "-m", "Add Flux sync manifests"]);
}

fn print_flux_respects_a_flux_bootstrap_tree() {
    // Found by issue 15: the default folder sits inside a `flux bootstrap
    // --path=clusters/<domain>` tree, so flux-system already applies it; the printed
    // Kustomization then fought flux-system over the objects.
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    bootstrap(&fx.work(), "prod.acme.example");
    let run = fx.commit(&fx.work(), &["--print-flux"]).success();
    assert_eq!(run.stdout, "", "no second Kustomization");
    assert_has(
        &run.stderr,
        "already applied by the Flux Kustomization flux-system/flux-system",
    );
    assert_has(
        &run.stderr,
        "clusters/prod.acme.example/flux-system/gotk-sync.yaml",
    );
    // Operator review, finding 8: the Kustomization printed before bootstrapping prunes
    // (the CRD, so every ClusterInventory) when deleted as it is: the safe order is given.
    assert_has(
        &run.stderr,
        "`flux suspend kustomization clusterinventory-prod.acme.example` (or set its `prune: false`",
    );
    assert_has(&run.stderr, "then delete it");
    // A kustomization.yaml at the bootstrap path that does not list the folder: flux-system
    // does not apply it, so the Kustomization is printed, over the bootstrap's source.
    write(
        &fx.work(),
        "clusters/prod.acme.example/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - flux-system\n",
    );
    git(&fx.work(), &["add", "."]);
    git(&fx.work(), &["commit", "-q", "-m", "explicit list"]);
    let run = fx.commit(&fx.work(), &["--print-flux"]).success();
    let docs = yaml_docs(&run.stdout);
    assert_eq!(docs.len(), 1, "{}", run.stdout);
    assert_eq!(docs[0]["kind"], "Kustomization");
    assert_eq!(docs[0]["spec"]["sourceRef"]["name"], "flux-system");
    // Listed: applied by flux-system again.
    write(
        &fx.work(),
        "clusters/prod.acme.example/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - flux-system\n  - ./inventory\n",
    );
    git(&fx.work(), &["commit", "-q", "-am", "list the inventory"]);
    let run = fx.commit(&fx.work(), &["--print-flux"]).success();
    assert_eq!(run.stdout, "");
    // A bootstrap of another cluster does not cover this folder: the Kustomization uses
    // that bootstrap's GitRepository.
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    bootstrap(&fx.work(), "lab.acme.example");
    let run = fx.commit(&fx.work(), &["--print-flux"]).success();
    let docs = yaml_docs(&run.stdout);
    assert_eq!(docs.len(), 1, "{}", run.stdout);
    assert_eq!(
        docs[0]["spec"]["path"],
        "./clusters/prod.acme.example/inventory"
    );
    assert_eq!(docs[0]["spec"]["sourceRef"]["name"], "flux-system");
}

fn print_argo_needs_a_repository_url_and_takes_a_destination() {
    // Found by issue 15: without an `origin` remote the Application said
    // `repoURL: <your repository URL>` (which validates), and its destination was always
    // the in-cluster server.
    let fx = Fx::new();
    git(&fx.work(), &["remote", "remove", "origin"]);
    for flag in ["--print-argo", "--print-flux"] {
        let run = fx.commit(&fx.work(), &[flag]);
        assert_eq!(run.code, 2, "{flag}: {}", run.stderr);
        assert!(
            run.stdout.is_empty()
                && run.stderr.contains("no remote 'origin'")
                && run.stderr.contains("--repo-url"),
            "{}",
            run.stderr
        );
    }
    let url = "https://user:s3cret@git.acme.example/platform/fleet.git";
    // The Application `--print-argo --repo-url url` and `extra` print, with the
    // password left out and no placeholder.
    let argo = |extra: &[&str]| -> serde_json::Value {
        let args = [&["--print-argo", "--repo-url", url][..], extra].concat();
        let run = fx.commit(&fx.work(), &args).success();
        assert!(!run.stdout.contains("s3cret") && !run.stdout.contains('<'));
        serde_saphyr::from_str(&run.stdout).unwrap()
    };
    let v = argo(&[]);
    assert_eq!(
        v["spec"]["source"]["repoURL"],
        "https://git.acme.example/platform/fleet.git"
    );
    let v = argo(&["--argo-cluster-name", "prod"]);
    assert_eq!(v["spec"]["destination"]["name"], "prod");
    assert!(v["spec"]["destination"]["server"].is_null());
    let v = argo(&["--argo-server", "https://10.0.0.1:6443"]);
    assert_eq!(v["spec"]["destination"]["server"], "https://10.0.0.1:6443");
    let both = fx.commit(
        &fx.work(),
        &[
            "--print-argo",
            "--argo-server",
            "https://x",
            "--argo-cluster-name",
            "y",
        ],
    );
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// Issue 40 item 2: `--print-argo -A` is the ApplicationSet, with no `--domain` to give
/// (it used to demand one it then ignored, and refuse `-A` while recommending it); a glob
/// or `--domain` repeated gives one over those domains' folders only.
fn print_argo_takes_the_fleet_selection() {
    let fx = Fx::new();
    let work = fx.work();
    let work = work.to_str().unwrap();
    fx.clinv(&["commit", "-A", "--repo", work]).run();
    let names = |run: &Run| -> Vec<String> {
        let v: serde_json::Value = serde_saphyr::from_str(&run.stdout).unwrap();
        assert_eq!(v["kind"], "ApplicationSet");
        v["spec"]["generators"][0]["list"]["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["domain"].as_str().unwrap().to_string())
            .collect()
    };
    let base = ["commit", "--repo", work, "--print-argo"];
    let all = fx.clinv(&[&base[..], &["-A"]].concat()).run().success();
    let old = fx.clinv(&[&base[..], &["--all"]].concat()).run().success();
    assert_eq!(all.stdout, old.stdout);
    assert_eq!(
        names(&all),
        ["edge.acme.example", "lab.acme.example", "prod.acme.example"]
    );
    let some = fx
        .clinv(
            &[
                &base[..],
                &[
                    "--domain",
                    "*b.acme.example",
                    "--domain",
                    "edge.acme.example",
                ],
            ]
            .concat(),
        )
        .run()
        .success();
    assert_eq!(names(&some), ["edge.acme.example", "lab.acme.example"]);
    let none = fx
        .clinv(&[&base[..], &["--domain", "stage-*"]].concat())
        .run();
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_has(&none.stderr, "'stage-*' matches no domain");
}

fn print_argo_all_is_an_applicationset_over_every_domain() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    fx.clinv(&[
        "commit",
        "--domain",
        "lab.acme.example",
        "--repo",
        fx.work().to_str().unwrap(),
    ])
    .run()
    .success();
    let run = fx.argo_set(&fx.work(), &[]).success();
    let v: serde_json::Value = serde_saphyr::from_str(&run.stdout).unwrap();
    assert_eq!(v["kind"], "ApplicationSet");
    let elements = v["spec"]["generators"][0]["list"]["elements"]
        .as_array()
        .unwrap();
    let got: Vec<(&str, &str, &str)> = elements
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["destination"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "clusterinventory-lab.acme.example",
                "clusters/lab.acme.example/inventory",
                "lab.acme.example"
            ),
            (
                "clusterinventory-prod.acme.example",
                "clusters/prod.acme.example/inventory",
                "prod.acme.example"
            ),
        ]
    );
    let template = &v["spec"]["template"]["spec"];
    assert_eq!(template["destination"]["name"], "{{destination}}");
    assert_eq!(template["source"]["path"], "{{path}}");
    assert!(
        template["source"]["repoURL"]
            .as_str()
            .unwrap()
            .starts_with("file://")
    );
    // One destination for every domain would write the singleton twice: refused.
    let run = fx.argo_set(&fx.work(), &["--argo-server", "https://10.0.0.1:6443"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_has(&run.stderr, "must contain {domain}");
    let run = fx
        .argo_set(&fx.work(), &["--argo-server", "https://api.{domain}:6443"])
        .success();
    let v: serde_json::Value = serde_saphyr::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["spec"]["generators"][0]["list"]["elements"][0]["destination"],
        "https://api.lab.acme.example:6443"
    );
    assert_eq!(
        v["spec"]["template"]["spec"]["destination"]["server"],
        "{{destination}}"
    );
}

fn a_rebuilt_push_leaves_the_index_and_files_matching_the_branch() {
    // Found by issue 15: after a push rebuilt on a moved tip, `git status` showed the
    // other person's file staged for deletion.
    let fx = Fx::new();
    let other = fx.clone_remote("other");
    write(&other, "README.md", "fleet\n");
    git(&other, &["add", "."]);
    git(&other, &["commit", "-q", "-m", "readme"]);
    git(&other, &["push", "-q", "origin", "main"]);
    // Something of ours staged elsewhere stays staged, and only that.
    write(&fx.work(), "notes.txt", "mine\n");
    git(&fx.work(), &["add", "notes.txt"]);
    let run = fx.commit(&fx.work(), &["--push"]).success();
    assert!(run.stderr.contains("2 attempt(s)"), "{}", run.stderr);
    assert_eq!(
        git(&fx.work(), &["status", "--porcelain"]),
        "A  notes.txt\n"
    );
    assert_eq!(
        std::fs::read_to_string(fx.work().join("README.md")).unwrap(),
        "fleet\n"
    );
    assert_eq!(
        git(&fx.work(), &["rev-parse", "HEAD"]),
        git(&fx.remote(), &["rev-parse", "main"])
    );
    // The other clone commits with clinv too and pulls: both worktrees clean.
    fx.clinv(&[
        "commit",
        "--domain",
        "lab.acme.example",
        "--repo",
        other.to_str().unwrap(),
        "--push",
    ])
    .run()
    .success();
    assert_eq!(git(&other, &["status", "--porcelain"]), "");
    assert!(
        other
            .join("clusters/prod.acme.example/inventory/clusterinventory.yaml")
            .is_file()
    );
}

fn uncommitted_changes_in_the_folder_stop_the_commit() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    let cr = "clusters/prod.acme.example/inventory/clusterinventory.yaml";
    let edited = format!(
        "{}# local note\n",
        std::fs::read_to_string(fx.work().join(cr)).unwrap()
    );
    write(&fx.work(), cr, &edited);
    // Nothing to write: up to date, the edit is left alone and nothing is refused.
    fx.queue_at("1700000500");
    let run = fx.commit(&fx.work(), &[]).success();
    assert!(run.stderr.contains("up to date"), "{}", run.stderr);
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000600");
    let run = fx.commit(&fx.work(), &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, cr);
    assert_has(&run.stderr, "--force");
    assert_eq!(log(&fx.work()).len(), 1, "nothing committed");
    assert_eq!(std::fs::read_to_string(fx.work().join(cr)).unwrap(), edited);
    // Staged or untracked count too.
    git(&fx.work(), &["add", cr]);
    assert_eq!(fx.commit(&fx.work(), &[]).code, 1);
    // --force overwrites them; the worktree then matches the branch.
    fx.commit(&fx.work(), &["--force"]).success();
    assert_eq!(log(&fx.work()).len(), 2);
    assert_eq!(git(&fx.work(), &["status", "--porcelain"]), "");
    // A clinv killed after writing the files but before moving the branch (scripts/soak
    // kills committers) left them as the commit named by refs/clinv/checkout: they are
    // clinv's, not the user's, and do not stop the next commit.
    let written = format!(
        "{}# as a killed clinv left it\n",
        std::fs::read_to_string(fx.work().join(cr)).unwrap()
    );
    write(&fx.work(), cr, &written);
    git(&fx.work(), &["add", cr]);
    let tree = git(&fx.work(), &["write-tree"]);
    let pending = git(
        &fx.work(),
        &["commit-tree", tree.trim(), "-p", "HEAD", "-m", "pending"],
    );
    fx.set_chart_version("cilium", "1.20.2");
    fx.queue_at("1700000700");
    assert_eq!(
        fx.commit(&fx.work(), &[]).code,
        1,
        "without the marker: refused"
    );
    git(
        &fx.work(),
        &["update-ref", "refs/clinv/checkout", pending.trim()],
    );
    fx.commit(&fx.work(), &[]).success();
    assert_eq!(log(&fx.work()).len(), 3);
    assert_eq!(git(&fx.work(), &["status", "--porcelain"]), "");
    assert_eq!(
        git(&fx.work(), &["for-each-ref", "refs/clinv/"]),
        "",
        "the marker goes once the branch moved"
    );
}

fn a_change_outside_clinv_is_named_and_extra_files_are_kept() {
    // Found by issue 15: a committed edit to the folder's kustomization was reverted with
    // no word; a folder holding a README was refused saying Flux and Argo would apply it
    // (the kustomization lists only the two objects).
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    let dir = "clusters/prod.acme.example/inventory";
    write(
        &fx.work(),
        &format!("{dir}/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - clusterinventory.crd.yaml\n  - clusterinventory.yaml\n  - extra.yaml\n",
    );
    write(
        &fx.work(),
        &format!("{dir}/README.md"),
        "Written by clinv.\n",
    );
    git(&fx.work(), &["add", "."]);
    git(
        &fx.work(),
        &["commit", "-q", "-m", "add extra.yaml to the inventory"],
    );
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000600");
    fx.commit(&fx.work(), &[]).success();
    let message = git(&fx.work(), &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("outside clinv")
            && message.contains("kustomization.yaml")
            && message.contains("add extra.yaml to the inventory"),
        "{message}"
    );
    let trailers = git(&fx.work(), &["log", "-1", "--format=%(trailers:only)"]);
    assert!(
        trailers.contains("Snapshot: "),
        "trailers stay last: {message}"
    );
    let files = git(&fx.work(), &["ls-tree", "-r", "--name-only", "HEAD", dir]);
    assert!(files.contains("README.md"), "{files}");
    let kust = git(
        &fx.work(),
        &["show", &format!("HEAD:{dir}/kustomization.yaml")],
    );
    assert!(!kust.contains("extra.yaml"), "{kust}");
    assert_eq!(git(&fx.work(), &["status", "--porcelain"]), "");
    // The next clinv commit names nothing: clinv wrote the folder last.
    fx.set_chart_version("cilium", "1.20.2");
    fx.queue_at("1700000700");
    fx.commit(&fx.work(), &[]).success();
    let message = git(&fx.work(), &["log", "-1", "--format=%B"]);
    assert!(!message.contains("outside clinv"), "{message}");
    // A folder someone else created (a README first) is named too.
    let fx = Fx::new();
    write(&fx.work(), &format!("{dir}/README.md"), "Inventory.\n");
    git(&fx.work(), &["add", "."]);
    git(&fx.work(), &["commit", "-q", "-m", "prepare the folder"]);
    fx.commit(&fx.work(), &[]).success();
    let message = git(&fx.work(), &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("- README.md (") && message.contains("prepare the folder"),
        "{message}"
    );
}

fn a_ref_lock_left_by_a_killed_process_is_named() {
    // Found by scripts/soak: a commit killed while moving the branch leaves
    // `refs/heads/main.lock`; every later commit failed saying the branch "moved" and to
    // run the command again, which never helps.
    let fx = Fx::new();
    let lock = fx.work().join(".git/refs/heads/main.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let run = fx.commit(&fx.work(), &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "refs/heads/main is locked");
    assert_has(&run.stderr, "main.lock");
    assert_has(
        &run.stderr,
        "remove the lock file if no git process is running",
    );
    assert_lacks(&run.stderr, "run the command again");
    assert!(log(&fx.work()).is_empty(), "nothing committed");
    std::fs::remove_file(&lock).unwrap();
    fx.commit(&fx.work(), &[]).success();
    assert_eq!(log(&fx.work()).len(), 1);
    // The same for the remote-tracking ref a killed push or fetch was updating.
    let tracking = fx.work().join(".git/refs/remotes/origin/main.lock");
    std::fs::create_dir_all(tracking.parent().unwrap()).unwrap();
    std::fs::write(&tracking, "").unwrap();
    let run = fx.commit(&fx.work(), &["--push"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "origin/main.lock");
    assert_has(&run.stderr, "one was killed while writing");
}

fn pushers_to_a_local_remote_take_its_lock() {
    // Found by scripts/soak: libgit2's local transport writes the remote's ref without
    // compare-and-swap, so of two clinv processes pushing at once both exited 0 while the
    // later write dropped the other's commit from the remote. Pushes to a file:// remote
    // now hold its clinv.lock; a held one makes the push wait, then fail naming it.
    let fx = Fx::new();
    let held = std::fs::File::create(fx.remote().join("clinv.lock")).unwrap();
    held.lock().unwrap();
    let run = fx.commit(&fx.work(), &["--push", "--push-timeout", "1"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "clinv.lock: another clinv process is pushing to this repository",
    );
    assert_has(&run.stderr, "(still after 1s, --push-timeout)");
    assert!(log(&fx.remote()).is_empty(), "nothing pushed");
    drop(held);
    fx.commit(&fx.work(), &["--push"]).success();
    assert_eq!(log(&fx.remote()).len(), 1);
    // The worktree's own lock waits `CLINV_LOCK_TIMEOUT`, as the store's does.
    let held = hold_lock(&fx.work().join(".git/clinv.lock"));
    let run = fx
        .clinv(&["commit", "--repo", fx.work().to_str().unwrap()])
        .args(["--domain", "prod.acme.example"])
        .env("CLINV_LOCK_TIMEOUT", "0.3")
        .run();
    drop(held);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        "another clinv process holds the repository lock (still after 0.3s, CLINV_LOCK_TIMEOUT)",
    );
}

fn flux_and_argo_manifests() {
    let fx = Fx::new();
    let flux = fx.commit(&fx.work(), &["--print-flux"]).success().stdout;
    // No `flux bootstrap` in the repository: a GitRepository of its own and the
    // Kustomization over it.
    let docs = yaml_docs(&flux);
    assert_eq!(docs.len(), 2, "{flux}");
    assert_eq!(docs[0]["kind"], "GitRepository");
    assert!(
        docs[0]["spec"]["url"]
            .as_str()
            .unwrap()
            .starts_with("file://")
    );
    assert_eq!(docs[0]["spec"]["ref"]["branch"], "main");
    let v = &docs[1];
    assert_eq!(v["kind"], "Kustomization");
    assert_eq!(v["spec"]["path"], "./clusters/prod.acme.example/inventory");
    assert_eq!(v["spec"]["sourceRef"]["name"], docs[0]["metadata"]["name"]);
    assert_eq!(v["metadata"]["name"], "clusterinventory-prod.acme.example");
    let argo = fx.commit(&fx.work(), &["--print-argo"]).success().stdout;
    let v: serde_json::Value = serde_saphyr::from_str(&argo).unwrap();
    assert_eq!(v["kind"], "Application");
    assert_eq!(
        v["spec"]["source"]["path"],
        "clusters/prod.acme.example/inventory"
    );
    assert_eq!(
        v["spec"]["destination"]["server"],
        "https://kubernetes.default.svc"
    );
    assert_eq!(v["spec"]["source"]["targetRevision"], "main");
    assert!(
        v["spec"]["source"]["repoURL"]
            .as_str()
            .unwrap()
            .starts_with("file://")
    );
    assert!(log(&fx.work()).is_empty(), "printing commits nothing");
}

/// Issue 40, item 8: a remote that is a local path (`file://`, absolute or relative) goes
/// into the printed GitRepository / Application as it is, but no controller can clone it
/// from inside a cluster: every printer warns, naming the URL and `--repo-url`; a URL a
/// cluster can reach (`--repo-url https://…`, an scp-like SSH remote) is not warned of.
fn a_local_path_as_repository_url_is_warned_of() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    let remote = fx.remote();
    let remote = remote.to_str().unwrap();
    let file_url = format!("file://{remote}");
    for url in [file_url.as_str(), remote, "../remote.git"] {
        git(&fx.work(), &["remote", "set-url", "origin", url]);
        for args in [
            &["--print-flux"][..],
            &["--print-argo"][..],
            &["--print-argo", "--all"][..],
        ] {
            let run = match args {
                ["--print-argo", "--all"] => fx.argo_set(&fx.work(), &[]),
                args => fx.commit(&fx.work(), args),
            }
            .success();
            let warn = run
                .stderr
                .lines()
                .find(|l| l.starts_with("[warn]") && l.contains("local path"))
                .unwrap_or_else(|| panic!("{url} {args:?}: no warning in {}", run.stderr));
            assert_has(warn, url);
            assert_has(warn, "--repo-url");
            assert_has(&run.stdout, url);
        }
    }
    for (remote, args) in [
        (
            remote,
            &[
                "--print-flux",
                "--repo-url",
                "https://git.acme.example/fleet.git",
            ][..],
        ),
        (
            "git@git.acme.example:platform/fleet.git",
            &["--print-argo"][..],
        ),
        ("https://git.acme.example/fleet.git", &["--print-flux"][..]),
    ] {
        git(&fx.work(), &["remote", "set-url", "origin", remote]);
        let run = fx.commit(&fx.work(), args).success();
        assert_lacks(&run.stderr, "local path");
    }
}

/// Operator review, finding 4: an SSH remote, and an HTTPS one clinv has credentials for,
/// need a Secret source-controller clones with; `--print-flux` names it in the
/// GitRepository and says how to create it (placeholders, never a credential).
fn print_flux_names_the_secret_a_private_remote_needs() {
    let fx = Fx::new();
    let work = fx.work();
    let flux = |remote: &str, config: &[(&str, &str)]| {
        git(&work, &["remote", "set-url", "origin", remote]);
        for (key, value) in config {
            git(&work, &["config", key, value]);
        }
        let run = fx.commit(&work, &["--print-flux"]).success();
        for (key, _) in config {
            git(&work, &["config", "--unset", key]);
        }
        (yaml_docs(&run.stdout), run.stderr)
    };
    let name = "clusterinventory-prod.acme.example";
    for ssh in [
        "git@git.acme.example:platform/gitops.git",
        "ssh://git@git.acme.example:2222/platform/gitops.git",
    ] {
        let (docs, stderr) = flux(ssh, &[]);
        assert_eq!(docs[0]["spec"]["secretRef"]["name"], name, "{ssh}");
        assert!(
            stderr.contains(&format!(
                "kubectl -n flux-system create secret generic {name}"
            )) && stderr.contains("--from-file=identity=")
                && stderr.contains("--from-file=known_hosts="),
            "{stderr}"
        );
    }
    let https = "https://git.acme.example/platform/gitops.git";
    // Credentials from a helper, the URL or --token-env: a Secret with username/password.
    for config in [
        &[("credential.helper", "store")][..],
        &[
            ("http.sslCAInfo", "/etc/ca.pem"),
            ("credential.helper", "store"),
        ],
    ] {
        let (docs, stderr) = flux(https, config);
        assert_eq!(docs[0]["spec"]["secretRef"]["name"], name, "{stderr}");
        assert!(
            stderr.contains("--from-literal=username=")
                && stderr.contains("--from-literal=password="),
            "{stderr}"
        );
        assert_eq!(
            stderr.contains("--from-file=ca.crt=/etc/ca.pem"),
            config.len() == 2,
            "{stderr}"
        );
    }
    let (docs, stderr) = flux(
        "https://bot:s3cr3t@git.acme.example/platform/gitops.git",
        &[],
    );
    assert_eq!(docs[0]["spec"]["secretRef"]["name"], name, "{stderr}");
    assert!(
        !stderr.contains("s3cr3t") && !serde_json::to_string(&docs).unwrap().contains("s3cr3t")
    );
    // None configured: no Secret, and a word on what a private repository needs.
    let (docs, stderr) = flux(https, &[]);
    assert!(docs[0]["spec"]["secretRef"].is_null(), "{stderr}");
    assert!(stderr.contains("private"), "{stderr}");
    // A local remote needs nothing.
    let local = format!("file://{}", fx.remote().display());
    let (docs, stderr) = flux(&local, &[]);
    assert!(
        docs[0]["spec"]["secretRef"].is_null() && !stderr.contains("secret"),
        "{stderr}"
    );
}

/// Operator review, finding 1: `commit --branch NEW` (a pull request's first step)
/// starts the branch from the current tip, as `git switch -c` does — never an orphan.
fn a_new_branch_starts_from_the_current_tip() {
    let fx = Fx::new();
    let work = fx.work();
    std::fs::write(work.join("README.md"), "team repository\n").unwrap();
    git(&work, &["add", "README.md"]);
    git(&work, &["commit", "-q", "-m", "readme"]);
    let tip = git(&work, &["rev-parse", "HEAD"]);
    fx.commit(&work, &["--branch", "inventory-update"])
        .success();
    let parent = git(&work, &["rev-parse", "inventory-update^"]);
    assert_eq!(parent, tip, "the new branch's commit sits on main's tip");
    let files = git(&work, &["ls-tree", "-r", "--name-only", "inventory-update"]);
    assert!(files.lines().any(|f| f == "README.md"), "{files}");
    assert!(
        files.contains("clusters/prod.acme.example/inventory/"),
        "{files}"
    );
    // A merge base with main: a pull request has history in common.
    git(&work, &["merge-base", "main", "inventory-update"]);
    // main did not move, and HEAD stays on it.
    assert_eq!(git(&work, &["rev-parse", "main"]), tip);
    assert_eq!(
        git(&work, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main"
    );
    // In an empty repository there is no tip: the first commit is a root.
    let fresh = Fx::new();
    fresh
        .commit(&fresh.work(), &["--branch", "first"])
        .success();
    let parents = git(
        &fresh.work(),
        &["rev-list", "--parents", "-n", "1", "first"],
    );
    assert_eq!(parents.split_whitespace().count(), 1, "{parents}");
}

/// Operator review, finding 6: SSH remotes as git accepts them, printed as URLs
/// source-controller can clone — the bracketed `[user@host:port]:path`, a home-relative
/// scp path (named, since a forge and a plain sshd read it differently), and a host that
/// is an alias of the SSH configuration (resolved with `ssh -G`, and said so).
fn print_flux_writes_ssh_remotes_as_source_controller_needs_them() {
    let fx = Fx::new();
    let work = fx.work();
    let config = fx.dir.path().join("ssh_config");
    std::fs::write(
        &config,
        "Host gitbox\n  HostName git.internal.example\n  Port 2222\n",
    )
    .unwrap();
    let flux = |remote: &str| {
        git(&work, &["remote", "set-url", "origin", remote]);
        let run = fx.commit(&work, &["--print-flux"]).success();
        (
            yaml_docs(&run.stdout)[0]["spec"]["url"]
                .as_str()
                .unwrap()
                .to_string(),
            run.stderr,
        )
    };
    let (url, _) = flux("[git@git.acme.example:2222]:/srv/git/gitops.git");
    assert_eq!(url, "ssh://git@git.acme.example:2222/srv/git/gitops.git");
    // Home-relative paths: go-git (source-controller) sends an ssh:// path as it is, so
    // `/~/x` would ask a plain sshd for the absolute /~/x (issue 39, finding 17): the
    // forge reading is printed, and the warning never offers a `/~/` URL as the fix.
    for remote in [
        "git@git.acme.example:~/gitops.git",
        "git@git.acme.example:gitops.git",
    ] {
        let (url, stderr) = flux(remote);
        assert_eq!(url, "ssh://git@git.acme.example/gitops.git");
        assert_has(
            &stderr,
            "source-controller (go-git) cannot reach a home-relative path",
        );
        assert_has(
            &stderr,
            "--repo-url with the absolute path, ssh://git@git.acme.example/<home directory>/gitops.git",
        );
    }
    let (url, stderr) = flux("git@git.acme.example:platform/gitops.git");
    assert_eq!(url, "ssh://git@git.acme.example/platform/gitops.git");
    assert_has(
        &stderr,
        "pass --repo-url with the absolute path, ssh://git@git.acme.example/<home directory>/platform/gitops.git",
    );
    git(
        &work,
        &[
            "config",
            "core.sshCommand",
            &format!("ssh -F {}", config.display()),
        ],
    );
    let (url, stderr) = flux("ssh://git@gitbox/srv/git/gitops.git");
    assert_eq!(
        url,
        "ssh://git@git.internal.example:2222/srv/git/gitops.git"
    );
    assert!(
        stderr.contains("gitbox") && stderr.contains("alias"),
        "{stderr}"
    );
    git(&work, &["config", "--unset", "core.sshCommand"]);
}

/// Issue 39, findings 16 and 17: `--print-argo` prints an SSH remote as Argo CD's
/// repo-server (the git CLI) reads it the same way as the user's git: the bracketed
/// `[user@host:port]:path` (whose user Argo CD's URL parser takes as `[git`) as an
/// `ssh://` URL, a home-relative path there as git spells it (`/~/`), an scp-like
/// `user@host:path` as it is (git reads it relative to the home, as the user's git did).
fn print_argo_writes_ssh_remotes_as_the_git_cli_reads_them() {
    let fx = Fx::new();
    let work = fx.work();
    let argo = |remote: &str| {
        git(&work, &["remote", "set-url", "origin", remote]);
        let run = fx.commit(&work, &["--print-argo"]).success();
        (
            yaml_docs(&run.stdout)[0]["spec"]["source"]["repoURL"]
                .as_str()
                .unwrap()
                .to_string(),
            run.stderr,
        )
    };
    let (url, _) = argo("[git@git.acme.example:2222]:/srv/git/gitops.git");
    assert_eq!(url, "ssh://git@git.acme.example:2222/srv/git/gitops.git");
    let (url, stderr) = argo("[git@git.acme.example:2222]:gitops.git");
    assert_eq!(url, "ssh://git@git.acme.example:2222/~/gitops.git");
    assert_has(
        &stderr,
        "a forge (GitHub, GitLab, Gitea, Bitbucket) serves it at ssh://git@git.acme.example:2222/gitops.git",
    );
    let (url, stderr) = argo("git@git.acme.example:platform/gitops.git");
    assert_eq!(url, "git@git.acme.example:platform/gitops.git");
    assert_lacks(&stderr, "home directory");
    let (url, _) = argo("ssh://git@git.acme.example/srv/git/gitops.git");
    assert_eq!(url, "ssh://git@git.acme.example/srv/git/gitops.git");
}

/// Issue 39, finding 15: a tracked file or symbolic link where a folder on the way to the
/// domain's folder must be (`clusters/prod.acme.example` a file, `clusters` a link) is
/// refused before the index or the work tree is touched — libgit2 failed half-way
/// ("type does not match") after deleting the file and staging half a change, and every
/// retry failed the same way. The repository is left exactly as it was.
fn a_file_on_the_way_to_the_folder_leaves_the_repository_as_it_was() {
    for (blocker, make) in [("clusters/prod.acme.example", "file"), ("clusters", "link")] {
        let fx = Fx::new();
        let work = fx.work();
        match make {
            "file" => {
                std::fs::create_dir_all(work.join("clusters")).unwrap();
                std::fs::write(work.join(blocker), "notes\n").unwrap();
            }
            _ => {
                std::fs::create_dir_all(work.join("elsewhere")).unwrap();
                std::os::unix::fs::symlink("elsewhere", work.join(blocker)).unwrap();
            }
        }
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "notes"]);
        let head = git(&work, &["rev-parse", "HEAD"]);
        let tree = |w: &Path| git(w, &["status", "--porcelain", "--ignored"]);
        assert_eq!(tree(&work), "");
        for _ in 0..2 {
            let run = fx.commit(&work, &[]);
            assert_eq!(run.code, 1, "{}", run.stderr);
            assert_has(
                &run.stderr,
                &format!(
                    "{blocker} is a file or symbolic link on the branch, on the way to clusters/prod.acme.example/inventory"
                ),
            );
            assert_lacks(&run.stderr, "does not match");
            assert_eq!(tree(&work), "", "nothing staged or deleted");
            assert_eq!(git(&work, &["rev-parse", "HEAD"]), head);
        }
        // Another folder is the way out.
        fx.commit(&work, &["--path", "inventories/prod"]).success();
    }
}

/// Operator review, finding 5: a domain committed with `--path`: `--print-flux` without
/// repeating it names the folder the branch holds, and `--print-argo --all` takes it in.
fn printed_manifests_use_the_folder_the_branch_holds() {
    let fx = Fx::new();
    let work = fx.work();
    fx.commit(&work, &["--path", "tenants/acme/prod"]).success();
    fx.clinv(&[
        "commit",
        "--domain",
        "lab.acme.example",
        "--repo",
        work.to_str().unwrap(),
    ])
    .run()
    .success();
    let run = fx.commit(&work, &["--print-flux"]).success();
    let docs = yaml_docs(&run.stdout);
    assert_eq!(
        docs[1]["spec"]["path"], "./tenants/acme/prod",
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("tenants/acme/prod"), "{}", run.stderr);
    let argo = fx.commit(&work, &["--print-argo"]).success();
    let v: serde_json::Value = serde_saphyr::from_str(&argo.stdout).unwrap();
    assert_eq!(v["spec"]["source"]["path"], "tenants/acme/prod");
    let run = fx.argo_set(&work, &[]).success();
    let v: serde_json::Value = serde_saphyr::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = fields(&v["spec"]["generators"][0]["list"]["elements"], "path");
    assert_eq!(
        paths,
        ["clusters/lab.acme.example/inventory", "tenants/acme/prod"]
    );
    // An explicit --path is what is printed, even where the branch holds nothing yet.
    let run = fx
        .commit(&work, &["--print-flux", "--path", "elsewhere/prod"])
        .success();
    assert_eq!(
        yaml_docs(&run.stdout)[1]["spec"]["path"],
        "./elsewhere/prod"
    );
    assert!(run.stderr.contains("holds no inventory"), "{}", run.stderr);
}

/// Operator review, finding 7: a `flux bootstrap --path=clusters` Kustomization covers
/// every domain's folder: two ClusterInventory/cluster (and two CRDs) in one build fail
/// the whole flux-system Kustomization. The second domain's commit is refused, naming
/// the Kustomization and both domains; `--print-flux` says the same.
fn a_bootstrap_over_several_domains_is_refused() {
    let fx = Fx::new();
    let work = fx.work();
    write(
        &work,
        "clusters/flux-system/gotk-sync.yaml",
        GOTK_SYNC.replace("./clusters/BOOT", "./clusters"),
    );
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "Add Flux sync manifests"]);
    fx.commit(&work, &[]).success();
    let before = log(&work);
    let run = fx
        .clinv(&[
            "commit",
            "--domain",
            "lab.acme.example",
            "--repo",
            work.to_str().unwrap(),
        ])
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "flux-system/flux-system",
        "prod.acme.example",
        "lab.acme.example",
        "ClusterInventory/cluster",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    assert_eq!(log(&work), before, "nothing committed");
    // A folder of its own per cluster (bootstrap --path=clusters/<domain>) is the way out.
    let run = fx.commit(&work, &["--print-flux"]).success();
    assert_has(&run.stderr, "flux-system/flux-system");
}

fn an_older_snapshot_is_never_pushed_over_a_newer_one() {
    let fx = Fx::new();
    let stale = fx.clone_remote("stale");
    // The stale clone's store gets an older snapshot first.
    fx.queue_at("1700000000");
    let old = fx.latest_snapshot();
    // Someone else pushes a newer inventory.
    fx.set_chart_version("cilium", "1.20.1");
    fx.queue_at("1700000900");
    fx.commit(&fx.work(), &["--push"]).success();
    // The stale clone commits the older one locally, then must not push it over.
    let run = fx.commit(
        &stale,
        &[
            "--snapshot",
            old["snapshot"]["id"].as_str().unwrap(),
            "--push",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "already holds a newer inventory");
    assert_eq!(
        log(&fx.remote()),
        ["inventory(prod.acme.example): record inventory (9 addons, Kubernetes v1.31.10)"]
    );
    let cr = git(
        &fx.remote(),
        &[
            "show",
            "main:clusters/prod.acme.example/inventory/clusterinventory.yaml",
        ],
    );
    assert!(cr.contains("chartVersion: 1.20.1"), "{cr}");
}

/// `fleet --repo`: the committed inventory of every domain folder on a branch — the
/// team's shared record, not the project as it is now; a folder that is not a domain is
/// named, never silently skipped.
fn fleet_reads_every_domain_folder_of_a_gitops_repository() {
    let fx = Fx::new();
    let work = fx.work();
    let commit = |domain: &str| {
        fx.clinv(&[
            "commit",
            "--domain",
            domain,
            "--repo",
            work.to_str().unwrap(),
        ])
        .run()
        .success();
    };
    commit("prod.acme.example");
    commit("lab.acme.example");
    set_chart_version(&fx.root(), "cilium", "1.20.1");
    commit("prod.acme.example");
    set_chart_version(&fx.root(), "cilium", "1.21.0");
    std::fs::create_dir_all(work.join("clusters/Not_A_Domain/inventory")).unwrap();
    std::fs::write(
        work.join("clusters/Not_A_Domain/inventory/clusterinventory.yaml"),
        "x: 1\n",
    )
    .unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "a stray folder"]);
    let run = fx
        .clinv(&[
            "fleet",
            "--repo",
            work.to_str().unwrap(),
            "--addon",
            "cilium",
        ])
        .run();
    // A folder whose file is no inventory is an error of the fleet (issue 39, finding 4:
    // one rule for every source and command), the other domains printed.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "ADDON   lab.acme.example  prod.acme.example\ncilium  1.19.2            1.20.1\n"
    );
    assert_has(&run.stderr, "[error] Not_A_Domain: not in the matrix: ");
    assert_has(&run.stderr, "expected a ClusterInventory");
    // An older revision of the branch: before prod's bump.
    let old = fx
        .clinv(&[
            "fleet",
            "--repo",
            work.to_str().unwrap(),
            "--branch",
            "HEAD~2",
            "--addon",
            "cilium",
            "-o",
            "json",
        ])
        .run()
        .success();
    let v: serde_json::Value = serde_json::from_str(&old.stdout).unwrap();
    assert_eq!(v["source"], "repository");
    assert_eq!(v["addons"][0]["versions"]["prod.acme.example"], "1.19.2");
}

/// `status` and `status -A` show the Git channel from the store: when the newest commit
/// was recorded, of which snapshot, and the commit — for a domain whose cluster was
/// never read too (a GitOps-only domain); never for the domains not committed.
fn status_shows_the_last_commit_of_each_domain() {
    let fx = Fx::new();
    fx.commit(&fx.work(), &[]).success();
    let head = git(&fx.work(), &["rev-parse", "HEAD"]);
    let head = head.trim();
    let status = fx
        .clinv(&["status", "--domain", "prod.acme.example"])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .run();
    assert_eq!(status.code, 16, "{}", status.stderr);
    let line = status
        .stdout
        .lines()
        .find(|l| l.starts_with("  last committed: "))
        .unwrap_or_else(|| panic!("{}", status.stdout));
    assert!(line.ends_with(&format!(", commit {head})")), "{line}");
    let all = fx
        .clinv(&["status", "-A", "-o", "json"])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .run();
    assert_eq!(all.code, 16, "{}", all.stderr);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&all.stdout).unwrap();
    for row in &rows {
        let committed = &row["lastCommitted"];
        match row["domain"].as_str().unwrap() {
            "prod.acme.example" => assert_eq!(committed["to"], head, "{row}"),
            "apps.acme.example" => assert!(row.get("skipped").is_some(), "{row}"),
            _ => assert!(committed.is_null(), "{row}"),
        }
        assert_eq!(row["lastPushed"], serde_json::Value::Null, "{row}");
    }
    let table = fx
        .clinv(&["status", "-A", "-o", "wide"])
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .run();
    let prod = table
        .stdout
        .lines()
        .find(|l| l.starts_with("prod.acme.example"))
        .unwrap();
    let cells: Vec<&str> = prod
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    // -o wide: DOMAIN DRIFT PENDING LAST-APPLIED SOURCE LAST-COMMITTED LAST-PUSHED.
    assert_eq!(cells[1..4], ["unknown (not read)", "0", "never"], "{prod}");
    assert!(cells[5].ends_with("s ago") && cells[6] == "never", "{prod}");
    // The fleet view of the store shows where each newest snapshot went.
    let fleet = |format: &str| fx.clinv(&["fleet", "--from", "store", "-o", format]).run();
    let json: serde_json::Value = serde_json::from_str(&fleet("json").success().stdout).unwrap();
    let delivered = json["delivered"].as_object().unwrap();
    assert_eq!(delivered.len(), 1, "{json}");
    assert_eq!(delivered["prod.acme.example"]["committed"], true, "{json}");
    let table = fleet("table").success().stdout;
    let row = table.lines().find(|l| l.starts_with("(delivered)"));
    let row = row.unwrap_or_else(|| panic!("{table}"));
    assert_eq!(row.split_whitespace().nth(1), Some("committed"), "{table}");
}

trials! {
    Nothing: [
        status_shows_the_last_commit_of_each_domain,
        fleet_reads_every_domain_folder_of_a_gitops_repository,
        commit_writes_the_three_files_with_a_stable_subject_and_trailers,
        only_renderedat_differing_is_up_to_date_and_a_real_change_names_itself,
        commit_renders_the_current_project_and_snapshot_picks_a_stored_one,
        commit_without_a_project_needs_snapshot,
        a_render_the_store_cannot_record_is_not_committed,
        an_older_snapshot_is_never_committed_over_a_newer_one,
        a_commit_refused_by_clock_skew_says_so,
        push_to_a_file_remote_and_a_stale_clone_rebases_and_retries,
        concurrent_committers_to_one_remote_both_land,
        a_rejected_ref_is_a_failure_not_a_success,
        a_ref_update_lost_to_a_parallel_push_is_retried,
        push_to_a_git_daemon_remote,
        no_secret_reaches_any_git_object,
        ssh_signed_commits_verify_and_move_the_branch,
        a_gpg_program_that_never_answers_is_stopped_at_the_helper_deadline,
        interface_errors,
        a_ref_lock_left_by_a_killed_process_is_named,
        pushers_to_a_local_remote_take_its_lock,
        flux_and_argo_manifests,
        a_local_path_as_repository_url_is_warned_of,
        printed_manifests_use_the_folder_the_branch_holds,
        print_flux_writes_ssh_remotes_as_source_controller_needs_them,
        print_argo_writes_ssh_remotes_as_the_git_cli_reads_them,
        a_file_on_the_way_to_the_folder_leaves_the_repository_as_it_was,
        a_new_branch_starts_from_the_current_tip,
        print_flux_names_the_secret_a_private_remote_needs,
        an_older_snapshot_is_never_pushed_over_a_newer_one,
        print_flux_respects_a_flux_bootstrap_tree,
        a_bootstrap_over_several_domains_is_refused,
        print_argo_needs_a_repository_url_and_takes_a_destination,
        print_argo_all_is_an_applicationset_over_every_domain,
        print_argo_takes_the_fleet_selection,
        a_rebuilt_push_leaves_the_index_and_files_matching_the_branch,
        uncommitted_changes_in_the_folder_stop_the_commit,
        a_change_outside_clinv_is_named_and_extra_files_are_kept,
    ],
}
