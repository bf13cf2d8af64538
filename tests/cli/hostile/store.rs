//! The snapshot store under attack: links out of it, damaged journals and objects, a
//! stale lock, a huge journal, another user's store, a read-only store.
//!
//! Rules tested (docs/guide/store.md and docs/threat-model.md): inside the store clinv
//! never follows a link (refused, or reported as damage); damage is reported with path
//! and line, never dropped; a store another user owns is read but never written.

use super::*;

/// A project and a store holding one pending snapshot of `inv`.
fn queued() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    queue(dir.path(), store.path());
    (dir, store)
}

fn snapshots(root: &Path, store: &Path, args: &[&str]) -> Run {
    let mut all = vec!["snapshots"];
    all.extend(args);
    all.extend(["--root", root.to_str().unwrap()]);
    bounded(&all).store(store).run()
}

fn objects(store: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(store.join("inv/objects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

fn an_object_linked_to_etc_passwd_is_damage_and_never_read() {
    let (dir, store) = queued();
    for object in objects(store.path()) {
        std::fs::remove_file(&object).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &object).unwrap();
    }
    let run = snapshots(dir.path(), store.path(), &["verify"]);
    assert_damage(&run, "is a symbolic link");
    assert!(run.stderr.contains("/inv/objects/"), "{}", run.stderr);
    let run = snapshots(
        dir.path(),
        store.path(),
        &["show", "latest", "--domain", "inv"],
    );
    assert_clean_failure(&run, "is a symbolic link");
    assert!(!run.stderr.contains("root:x:"));
}

fn a_journal_linked_outside_the_store_is_neither_read_nor_appended() {
    // Regression: the journal was read through the link and appended to its target.
    let (dir, store) = queued();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("journal");
    let journal = journal_file(&store.path().join("inv"));
    std::fs::rename(&journal, &target).unwrap();
    std::os::unix::fs::symlink(&target, &journal).unwrap();
    let before = tree(outside.path());
    let run = snapshots(dir.path(), store.path(), &["list", "--domain", "inv"]);
    assert_clean_failure(&run, ".log: is a symbolic link");
    let run = publish_offline(dir.path(), store.path());
    // Neither applied nor recorded: exit 11 (store format 2), nothing queued.
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "could not record a snapshot");
    assert_has(&run.stderr, ".log: is a symbolic link");
    assert_unchanged(&before, outside.path());
}

fn a_domain_folder_linked_outside_the_store_is_refused() {
    let (dir, store) = queued();
    let outside = tempfile::tempdir().unwrap();
    let moved = outside.path().join("inv");
    std::fs::rename(store.path().join("inv"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, store.path().join("inv")).unwrap();
    let before = tree(outside.path());
    let run = snapshots(
        dir.path(),
        store.path(),
        &["show", "latest", "--domain", "inv"],
    );
    assert_clean_failure(&run, "is a symbolic link");
    let run = snapshots(dir.path(), store.path(), &["gc", "--keep", "0"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_unchanged(&before, outside.path());
}

fn a_lock_linked_to_another_file_is_refused() {
    let (dir, store) = queued();
    let outside = tempfile::tempdir().unwrap();
    let victim = write(outside.path(), "victim", "untouched\n");
    std::fs::remove_file(store.path().join("inv/lock")).unwrap();
    std::os::unix::fs::symlink(&victim, store.path().join("inv/lock")).unwrap();
    let before = tree(outside.path());
    let run = bounded(&["replay"])
        .project(dir.path(), "inv")
        .store(store.path())
        .run();
    assert_clean_failure(&run, "inv/lock: is a symbolic link");
    assert_unchanged(&before, outside.path());
}

fn a_store_root_that_is_a_link_is_followed() {
    // The root is the user's choice (--snapshots, CLINV_SNAPSHOTS): a link there is fine.
    let dir = project();
    let real = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("store");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    queue(dir.path(), &link);
    assert!(journal_file(&real.path().join("inv")).is_file());
    verify(dir.path(), &link).success();
}

fn a_torn_last_line_is_ignored_and_repaired() {
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    std::io::Write::write_all(&mut f, b"0123abcd {\"kind\":\"snap").unwrap();
    drop(f);
    let run = verify(dir.path(), store.path()).success();
    assert!(
        run.stderr.contains("incomplete") || run.stdout.contains("incomplete"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    queue(dir.path(), store.path());
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.contains("\"tornBytes\":22"), "{text}");
    verify(dir.path(), store.path()).success();
}

fn a_torn_tail_longer_than_a_mebibyte_is_cut_whole() {
    // Regression: only the last 1 MiB of a longer torn tail was cut, gluing the next
    // record to the rest of the garbage.
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    let len = std::fs::metadata(&journal).unwrap().len();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    std::io::Write::write_all(&mut f, &vec![b'x'; 3 << 20]).unwrap();
    drop(f);
    queue(dir.path(), store.path());
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(
        text.contains(&format!("\"tornBytes\":{}", 3 << 20)),
        "{}",
        &text[..200]
    );
    assert!(!text.contains("xxx"));
    assert!(std::fs::metadata(&journal).unwrap().len() < len * 4);
    verify(dir.path(), store.path()).success();
}

fn a_bad_checksum_is_reported_with_its_line() {
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    let text = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(
        &journal,
        text.replacen("\"domain\":\"inv\"", "\"domain\":\"inw\"", 1),
    )
    .unwrap();
    let before = tree(store.path());
    let run = verify(dir.path(), store.path());
    assert_damage(&run, "000001.log:2: checksum mismatch");
    assert_unchanged(&before, store.path());
}

fn a_garbage_line_in_the_middle_is_reported_and_skipped() {
    let (dir, store) = queued();
    queue(dir.path(), store.path());
    let journal = journal_file(&store.path().join("inv"));
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "\u{1b}[2J garbage \u{0}\u{7f} line");
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let run = verify(dir.path(), store.path());
    assert_damage(&run, "000001.log:3:");
    assert!(
        !run.stderr.contains('\u{1b}'),
        "escape reached the terminal"
    );
    let run = snapshots(
        dir.path(),
        store.path(),
        &["list", "--domain", "inv", "-o", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("\"id\"").count(), 2, "{}", run.stdout);
    assert!(run.stderr.contains("000001.log:3"), "{}", run.stderr);
}

fn invalid_utf8_and_nul_in_the_journal_are_damage() {
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    std::io::Write::write_all(&mut f, b"\xff\xfe\0\0 {}\n").unwrap();
    drop(f);
    let run = verify(dir.path(), store.path());
    assert_damage(&run, "000001.log:4: not UTF-8");
}

fn a_missing_object_is_damage_naming_its_path() {
    let (dir, store) = queued();
    let gone = objects(store.path()).remove(0);
    std::fs::remove_file(&gone).unwrap();
    let run = verify(dir.path(), store.path());
    assert_damage(&run, gone.file_name().unwrap().to_str().unwrap());
}

fn an_altered_object_is_damage_and_not_used() {
    let (dir, store) = queued();
    for object in objects(store.path()) {
        let text = std::fs::read_to_string(&object).unwrap();
        std::fs::write(&object, text.replacen("cilium", "evilum", 1)).unwrap();
    }
    let run = verify(dir.path(), store.path());
    assert_damage(&run, "damaged: content does not match its checksum");
    let run = snapshots(
        dir.path(),
        store.path(),
        &["show", "latest", "--domain", "inv"],
    );
    assert_clean_failure(&run, "damaged");
    assert!(!run.stdout.contains("evilum"));
}

fn a_huge_object_is_refused_without_reading_it() {
    let (dir, store) = queued();
    let object = objects(store.path()).remove(0);
    sparse(&object, b"{", 100 << 20);
    let run = verify(dir.path(), store.path());
    assert_damage(&run, "file too large");
}

fn a_lock_left_by_a_dead_process_does_not_block() {
    let (dir, store) = queued();
    // The holder note of a process that no longer exists; its flock died with it.
    write(
        store.path(),
        "inv/lock.holder",
        "{\"pid\":999999999,\"host\":\"gone\",\"command\":\"publish\",\"since\":\"2020-01-01T00:00:00.000Z\"}\n",
    );
    // No wait allowed: a lock still held would fail the publish (exit 11), not slow it.
    let run = publish_offline_cmd(dir.path(), store.path())
        .env("CLINV_LOCK_TIMEOUT", "0")
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, "recorded as pending snapshot");
    verify(dir.path(), store.path()).success();
}

fn a_lock_held_by_a_live_process_is_waited_for_and_named() {
    // A real holder: the test itself, on its own open file description, with the note
    // a clinv holder leaves. A short wait fails naming that holder; a long one proceeds
    // once the lock is released, and not before.
    let (dir, store) = queued();
    let lock = store.path().join("inv/lock");
    let held = hold_lock(&lock);
    write(
        store.path(),
        "inv/lock.holder",
        format!(
            "{{\"pid\":{},\"host\":\"here\",\"command\":\"gc\"}}\n",
            std::process::id()
        ),
    );
    let run = publish_offline_cmd(dir.path(), store.path())
        .env("CLINV_LOCK_TIMEOUT", "0.3")
        .run();
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "still locked after 0.3s");
    assert_has(&run.stderr, "\"command\":\"gc\"");
    let waiting = {
        let (dir, store) = (dir.path().to_path_buf(), store.path().to_path_buf());
        std::thread::spawn(move || {
            publish_offline_cmd(&dir, &store)
                .env("CLINV_LOCK_TIMEOUT", "60")
                .run()
        })
    };
    await_waiter(&lock, Duration::from_secs(20));
    assert!(
        !waiting.is_finished(),
        "the publish did not wait for the lock"
    );
    drop(held);
    let run = waiting.join().unwrap();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stderr, "recorded as pending snapshot");
    verify(dir.path(), store.path()).success();
}

fn a_100_mb_journal_is_read_streaming_and_its_torn_tail_cut() {
    // Store format 2 has no size cap: a 100 MB segment (here a 100 MB torn last line)
    // is read streaming within the memory bound, and the next append cuts the tail.
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    let head = std::fs::read(&journal).unwrap();
    sparse(&journal, &head, 100 << 20);
    let run = snapshots(dir.path(), store.path(), &["list", "--domain", "inv"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = publish_offline(dir.path(), store.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("could not record"), "{}", run.stderr);
    assert!(std::fs::metadata(&journal).unwrap().len() < 1 << 20);
    verify(dir.path(), store.path()).success();
}

fn a_journal_that_is_a_fifo_does_not_block() {
    let (dir, store) = queued();
    let journal = journal_file(&store.path().join("inv"));
    std::fs::remove_file(&journal).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&journal)
            .status()
            .unwrap()
            .success()
    );
    let run = snapshots(dir.path(), store.path(), &["list", "--domain", "inv"]);
    assert_clean_failure(&run, ".log: not a regular file");
    let run = publish_offline(dir.path(), store.path());
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, ".log: not a regular file");
}

fn an_import_tar_with_traversing_names_writes_nothing_outside() {
    let (dir, store) = queued();
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("x.tar");
    // A tar whose members climb out: ../../evil and an absolute path.
    let status = Command::new("bash")
        .arg("-c")
        .arg("set -e; cd \"$1\"; mkdir -p a/b; echo evil > evil; tar -cf x.tar -P a/b/../../evil /etc/hostname 2>/dev/null || tar -cf x.tar evil")
        .arg("bash")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success());
    let before = tree(out.path());
    let store_before = tree(store.path());
    let run = snapshots(dir.path(), store.path(), &["import", tar.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("[error] ") && run.stderr.contains("x.tar"),
        "{}",
        run.stderr
    );
    assert_unchanged(&before, out.path());
    assert_unchanged(&store_before, store.path());
}

/// Makes `dir` and its ancestors traversable by anyone (tempdirs are 0700).
fn open_up(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut p = dir.to_path_buf();
    loop {
        if let Ok(meta) = std::fs::metadata(&p) {
            let mode = meta.permissions().mode();
            if meta.is_dir() && mode & 0o011 != 0o011 && p != Path::new("/") {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode | 0o755))
                    .unwrap();
            }
        }
        if !p.pop() {
            break;
        }
    }
}

/// A project and a store, readable by anyone, with one pending snapshot, all owned by root.
fn shared() -> (tempfile::TempDir, tempfile::TempDir) {
    let (dir, store) = queued();
    open_up(dir.path());
    open_up(&store.path().join("inv/objects"));
    for f in tree(store.path()).keys() {
        use std::os::unix::fs::PermissionsExt;
        let p = store.path().join(f);
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    (dir, store)
}

/// `clinv replay` of `inv` as the unprivileged user.
fn replay_as_nobody(root: &Path, store: &Path) -> Run {
    bounded(&["replay"])
        .project(root, "inv")
        .store(store)
        .user(NOBODY)
        .run()
}

fn publish_as(dir: &Path, store: &Path, uid: Option<u32>) -> Run {
    let b = publish_offline_cmd(dir, store);
    match uid {
        Some(uid) => b.user(uid).run(),
        None => b.run(),
    }
}

fn another_users_store_is_read_but_never_written() {
    let (dir, store) = shared();
    let before = tree(store.path());
    let run = publish_as(dir.path(), store.path(), Some(NOBODY));
    // Neither applied nor recorded: exit 11 (store format 2).
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "could not record a snapshot");
    assert_has(
        &run.stderr,
        "owned by uid 0, not by the current user (uid 65534)",
    );
    assert_has(&run.stderr, store.path().to_str().unwrap());
    let run = replay_as_nobody(dir.path(), store.path());
    assert_clean_failure(&run, "owned by uid 0");
    // Reading is allowed.
    let run = bounded(&["snapshots", "list", "--root", dir.path().to_str().unwrap()])
        .store(store.path())
        .user(NOBODY)
        .run()
        .success();
    assert!(run.stdout.contains("pending"), "{}", run.stdout);
    assert_unchanged(&before, store.path());
    verify(dir.path(), store.path()).success();
}

fn root_refuses_to_write_a_store_another_user_owns() {
    // Like git's safe.directory: root writing root-owned 0600 files into a user's store
    // would lock the owner out of it.
    let (dir, store) = queued();
    chown_tree(store.path(), NOBODY);
    let before = tree(store.path());
    let run = bounded(&["snapshots", "gc", "--keep", "0"])
        .root(dir.path())
        .store(store.path())
        .run();
    assert_clean_failure(&run, "owned by uid 65534, not by the current user (uid 0)");
    let run = publish_as(dir.path(), store.path(), None);
    assert!(run.stderr.contains("owned by uid 65534"), "{}", run.stderr);
    assert_unchanged(&before, store.path());
    verify(dir.path(), store.path()).success();
}

fn a_read_only_store_of_ones_own_is_a_clear_error() {
    let (dir, store) = shared();
    chown_tree(store.path(), NOBODY);
    use std::os::unix::fs::PermissionsExt;
    for f in tree(store.path()).keys() {
        let p = store.path().join(f);
        let mode = if p.is_dir() { 0o555 } else { 0o444 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = tree(store.path());
    let run = publish_as(dir.path(), store.path(), Some(NOBODY));
    // Neither applied nor recorded: exit 11 (store format 2).
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "could not record a snapshot");
    assert_has(&run.stderr, "Permission denied");
    assert_has(&run.stderr, store.path().to_str().unwrap());
    let run = replay_as_nobody(dir.path(), store.path());
    assert_clean_failure(&run, "Permission denied");
    assert_unchanged(&before, store.path());
    std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn a_deeply_nested_journal_record_with_a_valid_checksum_is_damage() {
    use sha2::Digest;
    let (dir, store) = queued();
    let json = format!(
        "{{\"kind\":\"snapshot\",\"v\":{}1{}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    let sum = format!("{:x}", sha2::Sha256::digest(json.as_bytes()));
    let journal = journal_file(&store.path().join("inv"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    std::io::Write::write_all(&mut f, format!("{sum} {json}\n").as_bytes()).unwrap();
    drop(f);
    let run = verify(dir.path(), store.path());
    assert_damage(
        &run,
        "000001.log:4: unreadable record: recursion limit exceeded",
    );
    // The good records are still listed.
    let run = snapshots(
        dir.path(),
        store.path(),
        &["list", "--domain", "inv", "-o", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("\"id\"").count(), 1, "{}", run.stdout);
}

fn a_100_mb_import_entry_is_refused_without_reading_it() {
    // Regression: import read the whole archive (up to 1 GiB) into memory first.
    let (dir, store) = queued();
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("big.tar");
    let mut header = tar::Header::new_gnu();
    header.set_path("inv/journal").unwrap();
    header.set_size(100 << 20);
    header.set_mode(0o600);
    header.set_cksum();
    // Header, then a sparse 100 MB body and the end-of-archive blocks.
    sparse(&tar, header.as_bytes(), 512 + (100 << 20) + 1024);
    let before = tree(store.path());
    let run = snapshots(dir.path(), store.path(), &["import", tar.to_str().unwrap()]);
    assert_clean_failure(
        &run,
        "big.tar: entry \"inv/journal\": 104857600 bytes is over the limit",
    );
    assert_unchanged(&before, store.path());
}

fn a_store_root_owned_by_another_user_is_usable_for_ones_own_domains() {
    // A shared or group-owned volume: the root belongs to someone else, the domain
    // folder clinv creates in it is ours.
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    chown_tree(store.path(), NOBODY);
    queue(dir.path(), store.path());
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(store.path().join("inv")).unwrap().uid(),
        0
    );
    verify(dir.path(), store.path()).success();
}

trials! {
    Nothing: [
        an_object_linked_to_etc_passwd_is_damage_and_never_read,
        a_journal_linked_outside_the_store_is_neither_read_nor_appended,
        a_domain_folder_linked_outside_the_store_is_refused,
        a_lock_linked_to_another_file_is_refused,
        a_store_root_that_is_a_link_is_followed,
        a_torn_last_line_is_ignored_and_repaired,
        a_torn_tail_longer_than_a_mebibyte_is_cut_whole,
        a_bad_checksum_is_reported_with_its_line,
        a_garbage_line_in_the_middle_is_reported_and_skipped,
        invalid_utf8_and_nul_in_the_journal_are_damage,
        a_missing_object_is_damage_naming_its_path,
        an_altered_object_is_damage_and_not_used,
        a_huge_object_is_refused_without_reading_it,
        a_lock_left_by_a_dead_process_does_not_block,
        a_lock_held_by_a_live_process_is_waited_for_and_named,
        a_100_mb_journal_is_read_streaming_and_its_torn_tail_cut,
        a_journal_that_is_a_fifo_does_not_block,
        an_import_tar_with_traversing_names_writes_nothing_outside,
        a_deeply_nested_journal_record_with_a_valid_checksum_is_damage,
        a_100_mb_import_entry_is_refused_without_reading_it,
    ],
    Root: [
        another_users_store_is_read_but_never_written,
        root_refuses_to_write_a_store_another_user_owns,
        a_read_only_store_of_ones_own_is_a_clear_error,
        a_store_root_owned_by_another_user_is_usable_for_ones_own_domains,
    ],
}
