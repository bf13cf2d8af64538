//! A full disk: a small tmpfs holds the store, the `render --out` folder or the GitOps
//! repository, filled before clinv runs. Each write fails with ENOSPC naming the path,
//! leaves no partial or temporary file and the previous state intact (verifiable), and
//! a later run succeeds once space is freed. Needs root (mount); fails under `CI=true`
//! without it, reported as ignored elsewhere.

use super::*;

/// A mounted tmpfs, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills every free byte with `filler` (a file it writes until ENOSPC).
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path().join("filler")).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        // Then byte by byte into the last page, so no slack is left at all.
        while f.write_all(&[0]).is_ok() {}
        let _ = f.sync_all();
    }

    fn free(&self) {
        std::fs::remove_file(self.path().join("filler")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A small tmpfs on a new temporary directory, or why it cannot be mounted.
fn mount() -> Result<Tmpfs, String> {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs"])
        .arg(dir.path())
        .output()
        .map_err(|e| format!("cannot mount a tmpfs here: mount: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cannot mount a tmpfs here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Tmpfs { dir })
}

/// Whether a tmpfs can be mounted (the runner's prerequisite `Need::Tmpfs`).
pub fn probe() -> Result<(), String> {
    super::root()?;
    mount().map(drop)
}

/// The tmpfs; only the tests registered with `Need::Tmpfs` call this.
fn tmpfs() -> Tmpfs {
    mount().unwrap_or_else(|why| panic!("{why}"))
}

/// Tree of `dir` without the filler.
fn state(dir: &Path) -> Tree {
    let mut t = tree(dir);
    t.remove(Path::new("filler"));
    t
}

fn a_full_store_keeps_its_state_when_new_objects_do_not_fit() {
    let fs = tmpfs();
    let dir = project();
    let store = fs.path().join("store");
    queue(dir.path(), &store);
    // A different inventory: its CR object must be written and does not fit.
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap: [cilium]\n",
    );
    fs.fill();
    let before = state(fs.path());
    let run = publish_offline(dir.path(), &store);
    // Neither applied nor recorded: exit 11 (store format 2).
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "could not record a snapshot");
    assert_has(&run.stderr, "No space left on device");
    assert_has(&run.stderr, "/store/inv/objects/");
    assert_eq!(state(fs.path()), before);
    assert_no_temp(fs.path());
    verify(dir.path(), &store).success();
    fs.free();
    queue(dir.path(), &store);
    let run = verify(dir.path(), &store).success();
    assert!(
        run.stdout.contains("2 snapshot") || run.stderr.contains("2 snapshot"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

fn a_full_store_never_keeps_half_a_journal_record() {
    // Regression: a short append (ENOSPC mid-record) left a torn line behind.
    let fs = tmpfs();
    let dir = project();
    let store = fs.path().join("store");
    // Publish the same inventory until the next record will not fit the journal's last
    // page (objects already exist, so only the journal grows: each publish after the
    // first is an event record of about 230 bytes on the one snapshot).
    queue(dir.path(), &store);
    let journal = journal_file(&store.join("inv"));
    while std::fs::metadata(&journal).unwrap().len() % 4096 < 3880 {
        queue(dir.path(), &store);
    }
    fs.fill();
    let before = state(fs.path());
    let run = publish_offline(dir.path(), &store);
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "No space left on device");
    assert_has(&run.stderr, "segments");
    assert_eq!(state(fs.path()), before, "journal changed");
    assert!(std::fs::read(&journal).unwrap().ends_with(b"\n"));
    verify(dir.path(), &store).success();
    fs.free();
    queue(dir.path(), &store);
    verify(dir.path(), &store).success();
}

fn a_full_store_refuses_an_import_cleanly() {
    let fs = tmpfs();
    let dir = project();
    let other = tempfile::tempdir().unwrap();
    queue(dir.path(), other.path());
    let tar = other.path().join("inv.tar");
    bounded(&["snapshots", "export", tar.to_str().unwrap()])
        .project(dir.path(), "inv")
        .store(other.path())
        .run()
        .success();
    let store = fs.path().join("store");
    fs.fill();
    let before = state(fs.path());
    let run = bounded(&["snapshots", "import", tar.to_str().unwrap()])
        .root(dir.path())
        .store(&store)
        .run();
    assert_clean_failure(&run, "No space left on device");
    assert!(run.stderr.contains("/store"), "{}", run.stderr);
    // At most the empty folders and the (empty) lock file it created; no other file.
    let _ = before;
    assert!(
        state(fs.path())
            .iter()
            .all(|(k, v)| v.starts_with("dir ") || k.ends_with("lock")),
        "{:?}",
        state(fs.path())
    );
    fs.free();
    bounded(&["snapshots", "import", tar.to_str().unwrap()])
        .root(dir.path())
        .store(&store)
        .run()
        .success();
    verify(dir.path(), &store).success();
}

fn render_out_on_a_full_disk_keeps_the_previous_files() {
    let fs = tmpfs();
    let dir = project();
    let out = fs.path().join("out");
    let args = |root: &Path| {
        vec![
            "render".to_string(),
            "--root".into(),
            root.display().to_string(),
            "--domain".into(),
            "inv".into(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let run_args = args(dir.path());
    let argv: Vec<&str> = run_args.iter().map(String::as_str).collect();
    bounded(&argv).run().success();
    write(
        dir.path(),
        "clusters/inv/cluster.lok8s.yaml",
        "kind: KubeOne\nspec:\n  bootstrap: [cilium]\n",
    );
    fs.fill();
    let before = state(fs.path());
    let run = bounded(&argv).run();
    assert_clean_failure(&run, "No space left on device");
    assert!(run.stderr.contains("/out/"), "{}", run.stderr);
    assert_eq!(state(fs.path()), before);
    assert_no_temp(fs.path());
    fs.free();
    bounded(&argv).run().success();
    let cr = std::fs::read_to_string(out.join("clusterinventory.yaml")).unwrap();
    assert!(!cr.contains("cert-manager"), "{cr}");
}

fn commit_on_a_full_disk_leaves_the_repository_consistent() {
    let fs = tmpfs();
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let repo = fs.path().join("repo");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", "/nonexistent")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    std::fs::create_dir(&repo).unwrap();
    assert!(git(&["init", "-q", "--template=", "-b", "main"]).0);
    assert!(
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init"
        ])
        .0
    );
    let commit = || {
        bounded(&[
            "commit",
            "--repo",
            repo.to_str().unwrap(),
            "--author",
            "T <t@t>",
        ])
        .project(dir.path(), "inv")
        .store(store.path())
        .run()
    };
    fs.fill();
    let head = git(&["rev-parse", "HEAD"]).1;
    let run = commit();
    assert_clean_failure(&run, "No space left on device");
    assert_eq!(git(&["rev-parse", "HEAD"]).1, head, "the branch moved");
    assert_no_temp(&repo);
    assert!(!repo.join("clusters").exists(), "half a folder checked out");
    fs.free();
    assert!(git(&["fsck", "--no-progress"]).0, "git fsck failed");
    assert_eq!(
        git(&["status", "--porcelain"]).1,
        "",
        "the worktree changed"
    );
    commit().success();
    assert_ne!(git(&["rev-parse", "HEAD"]).1, head);
    assert!(git(&["fsck", "--no-progress"]).0);
}

trials! {
    Tmpfs: [
        a_full_store_keeps_its_state_when_new_objects_do_not_fit,
        a_full_store_never_keeps_half_a_journal_record,
        a_full_store_refuses_an_import_cleanly,
        render_out_on_a_full_disk_keeps_the_previous_files,
        commit_on_a_full_disk_leaves_the_repository_consistent,
    ],
}
