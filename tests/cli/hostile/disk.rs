//! A full disk: a small tmpfs holds the store, the `render --out` folder or the GitOps
//! repository, filled before clinv runs. Each write fails with ENOSPC naming the path,
//! leaves no partial or temporary file and the previous state intact (verifiable), and
//! a later run succeeds once space is freed. Needs root (mount); fails under `CI=true`
//! without it, skips loudly elsewhere.

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

fn tmpfs() -> Option<Tmpfs> {
    if !root_or_skip("a full tmpfs") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but mount -t tmpfs failed"
        );
        eprintln!("\n*** SKIPPED: cannot mount a tmpfs here ***\n");
        return None;
    }
    Some(Tmpfs { dir })
}

/// Tree of `dir` without the filler.
fn state(dir: &Path) -> Tree {
    let mut t = tree(dir);
    t.remove(Path::new("filler"));
    t
}

#[test]
fn a_full_store_keeps_its_state_when_new_objects_do_not_fit() {
    let Some(fs) = tmpfs() else { return };
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
    assert_eq!(run.code, 0, "publish is fail-soft: {}", run.stderr);
    assert!(
        run.stderr.contains("could not record a snapshot")
            && run.stderr.contains("No space left on device")
            && run.stderr.contains("/store/inv/objects/"),
        "{}",
        run.stderr
    );
    assert_eq!(state(fs.path()), before);
    assert_no_temp(fs.path());
    verify(dir.path(), &store).ok();
    fs.free();
    queue(dir.path(), &store);
    let run = verify(dir.path(), &store).ok();
    assert!(
        run.stdout.contains("2 snapshot") || run.stderr.contains("2 snapshot"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn a_full_store_never_keeps_half_a_journal_record() {
    // Regression: a short append (ENOSPC mid-record) left a torn line behind.
    let Some(fs) = tmpfs() else { return };
    let dir = project();
    let store = fs.path().join("store");
    let journal = store.join("inv/journal");
    // Publish the same inventory until the next record will not fit the journal's last
    // page (objects already exist, so only the journal grows).
    queue(dir.path(), &store);
    while std::fs::metadata(&journal).unwrap().len() % 4096 < 3700 {
        queue(dir.path(), &store);
    }
    fs.fill();
    let before = state(fs.path());
    let run = publish_offline(dir.path(), &store);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device") && run.stderr.contains("journal"),
        "{}",
        run.stderr
    );
    assert_eq!(state(fs.path()), before, "journal changed");
    assert!(std::fs::read(&journal).unwrap().ends_with(b"\n"));
    verify(dir.path(), &store).ok();
    fs.free();
    queue(dir.path(), &store);
    verify(dir.path(), &store).ok();
}

#[test]
fn a_full_store_refuses_an_import_cleanly() {
    let Some(fs) = tmpfs() else { return };
    let dir = project();
    let other = tempfile::tempdir().unwrap();
    queue(dir.path(), other.path());
    let tar = other.path().join("inv.tar");
    bounded(&[
        "snapshots",
        "export",
        "--root",
        dir.path().to_str().unwrap(),
        "--domain",
        "inv",
        tar.to_str().unwrap(),
    ])
    .store(other.path())
    .run()
    .ok();
    let store = fs.path().join("store");
    fs.fill();
    let before = state(fs.path());
    let run = bounded(&[
        "snapshots",
        "import",
        tar.to_str().unwrap(),
        "--root",
        dir.path().to_str().unwrap(),
    ])
    .store(&store)
    .run();
    assert_clean_failure(&run, "No space left on device");
    assert!(run.stderr.contains("/store"), "{}", run.stderr);
    // At most the empty folders it created; no file.
    let _ = before;
    assert!(
        state(fs.path()).values().all(|v| v.starts_with("dir ")),
        "{:?}",
        state(fs.path())
    );
    fs.free();
    bounded(&[
        "snapshots",
        "import",
        tar.to_str().unwrap(),
        "--root",
        dir.path().to_str().unwrap(),
    ])
    .store(&store)
    .run()
    .ok();
    verify(dir.path(), &store).ok();
}

#[test]
fn render_out_on_a_full_disk_keeps_the_previous_files() {
    let Some(fs) = tmpfs() else { return };
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
    bounded(&argv).run().ok();
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
    bounded(&argv).run().ok();
    let cr = std::fs::read_to_string(out.join("clusterinventory.yaml")).unwrap();
    assert!(!cr.contains("cert-manager"), "{cr}");
}

#[test]
fn commit_on_a_full_disk_leaves_the_repository_consistent() {
    let Some(fs) = tmpfs() else { return };
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
            "--root",
            dir.path().to_str().unwrap(),
            "--domain",
            "inv",
            "--repo",
            repo.to_str().unwrap(),
            "--author",
            "T <t@t>",
        ])
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
    commit().ok();
    assert_ne!(git(&["rev-parse", "HEAD"]).1, head);
    assert!(git(&["fsck", "--no-progress"]).0);
}
