//! The snapshot store v2 contract (issue #13): one case per finding of the issue, named
//! for it, each run black-box against the binary. v1 stores are written by hand
//! (`v1.rs`), so the cases hold for a binary that writes the old format and for one that
//! writes the new one.
//!
//! `CLINV_STORE_RECORDS` sets the size of the over-the-old-cap journal of finding 1
//! (default 130,000 records, just over 64 MiB); `scripts/store-scale` runs it with the
//! 150,000 of the issue's acceptance.

use crate::hostile::{assert_clean_failure, assert_unchanged, bounded, tree};
use crate::support::*;
use crate::v1::{self, Journal, Objects};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A copy of the `inv` fixture and a store of its own; publishes go to a server that
/// refuses connections, so they queue.
struct Fx {
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Fx {
    fn new() -> Fx {
        Fx {
            dir: copy_tree(&fixture("inv")),
            store: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> &Path {
        self.store.path()
    }

    /// `clinv` on this project and store (global options first).
    fn clinv(&self, args: &[&str]) -> Clinv {
        self.clinv_in(self.store(), args)
    }

    fn clinv_in(&self, store: &Path, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let kc = v1_offline().to_str().unwrap().to_string();
        let mut all = vec!["--root", &root];
        all.extend(aimed(args, &kc));
        all.extend_from_slice(args);
        clinv(&all).store(store)
    }

    /// The same command as a child process (for races and signals).
    fn spawn_in(&self, store: &Path, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_clinv"))
            .args(["--root", self.root().to_str().unwrap()])
            .args(aimed(args, v1_offline().to_str().unwrap()))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", "/nonexistent")
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .env("CLINV_SNAPSHOTS", store)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Publishes the `inv` domain with Kubernetes `version` (a distinct inventory).
    fn publish(&self, version: &str) -> Run {
        set_version(self.root(), version);
        self.clinv(&["publish", "--domain", "inv"]).run()
    }

    /// [`Fx::publish`], which must queue; the queued id.
    fn queue(&self, version: &str) -> String {
        let run = self.publish(version);
        assert_eq!(run.code, 0, "{}", run.stderr);
        queued_id(&run.stderr).unwrap_or_else(|| panic!("not queued: {}", run.stderr))
    }

    fn list_in(&self, store: &Path) -> Vec<serde_json::Value> {
        let run = self
            .clinv_in(
                store,
                &["snapshots", "list", "--domain", "inv", "-o", "json"],
            )
            .run();
        if run.code != 0 && run.stderr.contains("no snapshots") {
            return Vec::new();
        }
        let run = run.success();
        if run.stdout.trim().is_empty() {
            return Vec::new();
        }
        serde_json::from_str(&run.stdout).unwrap()
    }

    fn ids_in(&self, store: &Path) -> Vec<String> {
        self.list_in(store)
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    }

    fn latest_in(&self, store: &Path) -> Run {
        self.clinv_in(store, &["snapshots", "--domain", "inv", "show", "latest"])
            .run()
    }
}

fn v1_offline() -> PathBuf {
    repo().join("examples/offline.kubeconfig")
}

/// The id in "recorded as pending snapshot <id>".
pub fn queued_id(stderr: &str) -> Option<String> {
    stderr
        .split("recorded as pending snapshot ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_hexdigit()).next())
        .map(str::to_string)
}

/// Objects of a distinct inventory per `n`: the rendered CR with its Kubernetes version
/// changed (still a valid ClusterInventory).
fn variant(base: &Objects, n: u64) -> Objects {
    let mut cr: serde_json::Value = serde_json::from_str(&base.cr).unwrap();
    cr["spec"]["kubernetesVersion"] = format!("v1.30.{n}").into();
    Objects {
        cr: serde_json::to_string(&cr).unwrap(),
        ..base.clone()
    }
}

/// A v1 store of `count` applied snapshots of `inv`, each with its own CR object,
/// recorded a minute apart from 2020 on; returns the objects by snapshot.
fn applied_store(fx: &Fx, store: &Path, count: u64) -> Vec<Objects> {
    let base = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(store, "inv");
    let mut all = Vec::new();
    for n in 0..count {
        let objects = variant(&base, n);
        journal.objects(&objects);
        let secs = 1_580_000_000 + 60 * n as i64;
        journal.snapshot(&v1::id(0xa000 + n), secs, &objects);
        journal.state(&v1::id(0xa000 + n), secs + 1, "applied");
        all.push(objects);
    }
    journal.finish();
    all
}

fn wait_out(child: Child, what: &str) -> Run {
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    };
    assert!(
        run.code >= 0,
        "{what} died of a signal: {:?} {}",
        out.status,
        run.stderr
    );
    run
}

// 1. -------------------------------------------------------------------------------

/// The record count of the big journal: `CLINV_STORE_RECORDS` or 130,000.
fn big_count() -> u64 {
    std::env::var("CLINV_STORE_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(130_000)
}

fn a_v1_journal_over_64_mib_is_read_and_written_by_every_command() {
    let fx = Fx::new();
    let count = big_count();
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
    }
    let path = journal.finish();
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(
        len > 64 << 20,
        "the journal must be over the old 64 MiB cap: {len} bytes ({count} records)"
    );
    let step = |args: &[&str]| {
        let run = fx.clinv(args).run();
        eprintln!("  {args:?}: exit {} in {:?}", run.code, run.elapsed);
        assert_eq!(
            run.code, 0,
            "{args:?} over a {len}-byte v1 journal ({count} records): {}",
            run.stderr
        );
        run
    };
    // Reads.
    let list = step(&["snapshots", "list", "--domain", "inv"]);
    assert!(
        list.stdout.lines().count() as u64 >= count,
        "list shows {} lines for {count} snapshots",
        list.stdout.lines().count()
    );
    let latest = v1::id(count - 1);
    let log = step(&["log", "--domain", "inv"]);
    assert!(log.stdout.contains(&latest), "log lacks the newest record");
    // Version 1 records carry no host: the log names none, and numbers them all.
    let newest = log.stdout.lines().next().unwrap_or("");
    assert!(
        newest.starts_with(&format!("#{count}  {latest}  ")) && !newest.contains("  on "),
        "{newest}"
    );
    step(&["snapshots", "verify", "--domain", "inv"]);
    // The README's way out: export to a fresh store.
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("big.tar");
    step(&[
        "snapshots",
        "--domain",
        "inv",
        "export",
        tar.to_str().unwrap(),
    ]);
    let fresh = out.path().join("fresh");
    let import = fx
        .clinv_in(&fresh, &["snapshots", "import", tar.to_str().unwrap()])
        .run();
    assert_eq!(import.code, 0, "import of the export: {}", import.stderr);
    let show = fx
        .clinv_in(&fresh, &["snapshots", "--domain", "inv", "show", &latest])
        .run();
    assert_eq!(show.code, 0, "the newest record, imported: {}", show.stderr);
    // Writes: gc (all pending: nothing goes), replay (unreachable: stays queued), publish.
    step(&["snapshots", "gc", "--keep", "20"]);
    let replay = step(&["replay", "--domain", "inv"]);
    assert!(
        !replay.stderr.contains("too large"),
        "replay: {}",
        replay.stderr
    );
    let run = fx.publish("v1.31.99");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let id = queued_id(&run.stderr).unwrap_or_else(|| {
        panic!(
            "publish into the big journal recorded nothing: {}",
            run.stderr
        )
    });
    // The new record carries the host that recorded it, and the next revision.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let head = step(&["log", "--domain", "inv", "--max-count", "1", "--oneline"]);
    assert!(
        head.stdout.ends_with(&format!("  #{} {id}\n", count + 1)),
        "{}",
        head.stdout
    );
    let newest = step(&["log", "--domain", "inv", "--max-count", "1"]);
    assert!(
        newest
            .stdout
            .lines()
            .next()
            .unwrap_or("")
            .ends_with(&format!("  on {}", host.trim())),
        "{}",
        newest.stdout
    );
    let shown = step(&["snapshots", "--domain", "inv", "show", "latest"]);
    assert!(
        shown.stdout.starts_with(&format!("# snapshot {id}")),
        "latest is not the new publish {id}: {}",
        shown.stdout.lines().next().unwrap_or("")
    );
    // The oldest record survives the append (and any migration).
    step(&["snapshots", "show", &v1::id(0), "--domain", "inv"]);
}

// 2. -------------------------------------------------------------------------------

fn an_imported_older_pending_snapshot_never_becomes_latest() {
    // Store A records first (older), store B later (newer); B imports A's archive.
    let older = Fx::new();
    let old_id = older.queue("v1.31.1");
    std::thread::sleep(Duration::from_millis(50));
    let newer = Fx::new();
    let new_id = newer.queue("v1.31.2");
    let tar = older.store().join("a.tar");
    older
        .clinv(&[
            "snapshots",
            "--domain",
            "inv",
            "export",
            tar.to_str().unwrap(),
        ])
        .run()
        .success();
    newer
        .clinv(&["snapshots", "import", tar.to_str().unwrap()])
        .run()
        .success();
    let latest = newer.latest_in(newer.store()).success();
    assert!(
        latest.stdout.starts_with(&format!("# snapshot {new_id}")),
        "latest must stay the newer recorded {new_id}, not the imported older {old_id}: {}",
        latest.stdout.lines().next().unwrap_or("")
    );
    let ids = newer.ids_in(newer.store());
    assert_eq!(ids, [new_id.clone(), old_id.clone()], "list, newest first");
    let previous = newer
        .clinv(&["snapshots", "--domain", "inv", "show", "latest~1"])
        .run()
        .success();
    assert!(previous.stdout.starts_with(&format!("# snapshot {old_id}")));
    let log = newer.clinv(&["log", "--domain", "inv"]).run().success();
    let first = log.stdout.find(&new_id);
    let second = log.stdout.find(&old_id);
    assert!(
        first.is_some() && second.is_some() && first < second,
        "log, newest first: {}",
        log.stdout
    );
}

// 3. -------------------------------------------------------------------------------

/// A TCP listener that accepts and never answers; `accepted` turns true on the first
/// connection. The listener lives as long as the returned guard.
struct BlackHole {
    port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

fn black_hole() -> BlackHole {
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(AtomicBool::new(false));
    let flag = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            flag.store(true, Ordering::SeqCst);
            held.push(conn); // never read, never answered, never closed
        }
    });
    BlackHole { port, accepted }
}

fn kubeconfig_for(dir: &Path, port: u16) -> PathBuf {
    write(
        dir,
        "black-hole.kubeconfig",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: hole\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: hole\n  context: {{cluster: hole, user: u}}\ncurrent-context: hole\n"
        ),
    )
}

fn a_publish_never_waits_out_a_replay_against_a_black_holed_server() {
    use std::sync::atomic::Ordering;
    let fx = Fx::new();
    fx.queue("v1.31.1");
    let hole = black_hole();
    let out = tempfile::tempdir().unwrap();
    let kc = kubeconfig_for(out.path(), hole.port);
    let mut replay = Command::new(env!("CARGO_BIN_EXE_clinv"))
        .args(["--root", fx.root().to_str().unwrap()])
        .args(["--kubeconfig", kc.to_str().unwrap()])
        .args(["replay", "--domain", "inv", "--timeout", "60"])
        .args(["--probe-timeout", "60"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CLINV_SNAPSHOTS", fx.store())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !hole.accepted.load(Ordering::SeqCst) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "replay never connected"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    // The replay now waits on the black hole; a publish must record at once.
    let run = fx.publish("v1.31.2");
    let listed = {
        let _ = replay.kill();
        let _ = replay.wait();
        fx.ids_in(fx.store())
    };
    let id = queued_id(&run.stderr);
    assert!(
        run.elapsed < Duration::from_secs(10),
        "publish waited {:?} for a replay's network wait (exit {}): {}",
        run.elapsed,
        run.code,
        run.stderr
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let id = id.unwrap_or_else(|| panic!("publish recorded nothing: {}", run.stderr));
    assert!(listed.contains(&id), "{id} not in {listed:?}");
}

fn a_publish_that_cannot_take_the_lock_exits_11_never_0_unrecorded() {
    let fx = Fx::new();
    fx.queue("v1.31.1");
    // Held by the test past the wait (`CLINV_LOCK_TIMEOUT`, short: no test waits out
    // the 30 s default).
    let held = hold_lock(&fx.store().join("inv/lock"));
    let before = fx.ids_in(fx.store()).len();
    set_version(fx.root(), "v1.31.2");
    let run = fx
        .clinv(&["publish", "--domain", "inv"])
        .env("CLINV_LOCK_TIMEOUT", "1")
        .run();
    drop(held);
    let after = fx.ids_in(fx.store());
    assert_eq!(
        run.code,
        11,
        "a publish that neither applied nor recorded must exit 11, got exit {} after {:?} \
         ({before} snapshot(s) before, {} after): {}",
        run.code,
        run.elapsed,
        after.len(),
        run.stderr
    );
    assert_eq!(after.len(), before, "{}", run.stderr);
    assert!(
        run.stderr.contains("not recorded") && run.stderr.contains("lock"),
        "exit 11 says why and names the lock: {}",
        run.stderr
    );
}

/// The domain lock's wait is `CLINV_LOCK_TIMEOUT` seconds: a lock held past it fails
/// the publish after that wait (not the 30 s default), saying how long it waited and
/// which variable sets it; a value that is no number of seconds is refused before
/// anything is done, naming the variable; an empty one is the default.
fn the_lock_wait_is_clinv_lock_timeout() {
    let fx = Fx::new();
    fx.queue("v1.31.1");
    let before = fx.ids_in(fx.store());
    let publish = |timeout: &str| {
        fx.clinv(&["publish", "--domain", "inv"])
            .env("CLINV_LOCK_TIMEOUT", timeout)
            .run()
    };
    set_version(fx.root(), "v1.31.2");
    let held = hold_lock(&fx.store().join("inv/lock"));
    let run = publish("0.5");
    drop(held);
    assert_eq!(run.code, 11, "{}", run.stderr);
    assert_has(&run.stderr, "still locked after 0.5s (CLINV_LOCK_TIMEOUT)");
    // The wait is honoured: not cut short (a generous upper bound: not the default).
    assert!(
        run.elapsed >= Duration::from_millis(500) && run.elapsed < Duration::from_secs(25),
        "waited {:?}",
        run.elapsed
    );
    for bad in ["abc", "-1", "1e3", "inf", "3601", " 5", "0x10"] {
        let run = publish(bad);
        assert_eq!(run.code, 1, "{bad:?}: {}", run.stderr);
        assert_has(&run.stderr, "CLINV_LOCK_TIMEOUT: '");
        assert_has(&run.stderr, "is not a number of seconds");
        assert_eq!(fx.ids_in(fx.store()), before, "{bad:?} recorded");
    }
    // A status reads the store too: refused alike, before any work.
    let run = fx
        .clinv(&["status", "--domain", "inv"])
        .env("CLINV_LOCK_TIMEOUT", "soon")
        .run();
    assert_has(&run.stderr, "CLINV_LOCK_TIMEOUT: 'soon'");
    let run = publish("");
    assert_eq!(run.code, 0, "an empty value is the default: {}", run.stderr);
    assert_eq!(fx.ids_in(fx.store()).len(), before.len() + 1);
}

// 4. -------------------------------------------------------------------------------

fn gc_refuses_with_a_damaged_line_and_never_deletes_its_object() {
    let fx = Fx::new();
    // Three inventories, applied; a fourth, older snapshot of the first inventory sits
    // between them in the journal (neither its first nor its last line). gc --keep 1
    // dooms it, and with the first snapshot's line damaged nothing readable keeps their
    // object.
    let base = v1::render(fx.root(), "inv");
    let objects: Vec<Objects> = (0..3).map(|n| variant(&base, n)).collect();
    let mut journal = Journal::create(fx.store(), "inv");
    for (id, secs, o) in [
        (0xa000, 1_580_000_000, &objects[0]),
        (0xa001, 1_580_000_060, &objects[1]),
        (0xd000, 1_570_000_000, &objects[0]),
        (0xa002, 1_580_000_120, &objects[2]),
    ] {
        journal.objects(o);
        journal.snapshot(&v1::id(id), secs, o);
        journal.state(&v1::id(id), secs + 1, "applied");
    }
    let journal = journal.finish();
    let text = std::fs::read_to_string(&journal).unwrap();
    // Damage the first snapshot's line (its checksum no longer matches); its CR id is
    // still readable in it.
    let damaged = text.replacen("\"domain\":\"inv\"", "\"domain\":\"inw\"", 1);
    assert_ne!(text, damaged);
    std::fs::write(&journal, damaged).unwrap();
    let victim = fx
        .store()
        .join("inv/objects")
        .join(format!("{}.json", objects[0].cr_id()));
    assert!(victim.exists());
    let gc = fx.clinv(&["snapshots", "gc", "--keep", "1"]).run();
    assert!(
        victim.exists(),
        "gc (exit {}) deleted the object of the damaged record: {}",
        gc.code,
        gc.stderr
    );
    assert_eq!(
        gc.code, 1,
        "gc with damage present must refuse: {}{}",
        gc.stdout, gc.stderr
    );
    assert!(
        gc.stderr.contains(":1") || gc.stderr.contains("line 1"),
        "gc names the damage (path:line): {}",
        gc.stderr
    );
    // Told to go on, gc still keeps every object a damaged line names.
    let gc = fx
        .clinv(&["snapshots", "gc", "--keep", "1", "--allow-damage"])
        .run();
    assert_eq!(gc.code, 0, "{}", gc.stderr);
    assert!(
        victim.exists(),
        "--allow-damage deleted a damaged line's object"
    );
    // The damaged line is kept verbatim (in whatever file gc left it); repaired, its
    // snapshot verifies: its object is still there.
    let holder = all_files(fx.store())
        .into_iter()
        .find(|f| {
            std::fs::read(f)
                .map(|b| String::from_utf8_lossy(&b).contains("\"domain\":\"inw\""))
                .unwrap_or(false)
        })
        .expect("gc dropped the damaged line");
    let text = std::fs::read_to_string(&holder).unwrap();
    std::fs::write(
        &holder,
        text.replacen("\"domain\":\"inw\"", "\"domain\":\"inv\"", 1),
    )
    .unwrap();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_lacks(&verify.stderr, &objects[0].cr_id());
}

// 5. -------------------------------------------------------------------------------

const RACES: usize = 25;

fn import_racing_gc_never_leaves_a_snapshot_without_its_object() {
    let fx = Fx::new();
    // The destination: applied snapshots, all but the newest doomed by `gc --keep 1`,
    // behind a long history so gc holds the lock a while.
    let base = tempfile::tempdir().unwrap();
    let objects = applied_store(&fx, base.path(), 6);
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(base.path().join("inv/journal"))
            .unwrap();
        let newest = &objects[5];
        let mut extra = Journal::create(&base.path().join("extra"), "inv");
        for n in 0..8_000u64 {
            extra.snapshot(&v1::id(0xc0000 + n), 1_590_000_000 + n as i64, newest);
            extra.state(&v1::id(0xc0000 + n), 1_590_000_000 + n as i64, "applied");
        }
        let path = extra.finish();
        file.write_all(&std::fs::read(path).unwrap()).unwrap();
        std::fs::remove_dir_all(base.path().join("extra")).unwrap();
    }
    // The archive: pending snapshots (newer) of the very inventories gc dooms.
    let source = tempfile::tempdir().unwrap();
    let mut journal = Journal::create(source.path(), "inv");
    let mut imported = Vec::new();
    for (n, objects) in objects[..5].iter().enumerate() {
        journal.objects(objects);
        let id = v1::id(0xb000 + n as u64);
        journal.snapshot(&id, 1_650_000_000 + n as i64, objects);
        imported.push(id);
    }
    journal.finish();
    let tar = source.path().join("pending.tar");
    fx.clinv_in(
        source.path(),
        &[
            "snapshots",
            "--domain",
            "inv",
            "export",
            tar.to_str().unwrap(),
        ],
    )
    .run()
    .success();
    for round in 0..RACES {
        let dest = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dest.path());
        let gc = fx.spawn_in(dest.path(), &["snapshots", "gc", "--keep", "1"]);
        std::thread::sleep(Duration::from_micros((round as u64 * 1_700) % 15_000));
        let import = fx.spawn_in(dest.path(), &["snapshots", "import", tar.to_str().unwrap()]);
        let gc = wait_out(gc, "gc");
        let import = wait_out(import, "import");
        let verify = fx.clinv_in(dest.path(), &["snapshots", "verify"]).run();
        let problem = |why: &str| {
            format!(
                "round {round}: {why}\n gc exit {}: {}\n import exit {}: {}\n verify exit {}: {}",
                gc.code, gc.stderr, import.code, import.stderr, verify.code, verify.stderr
            )
        };
        assert!(verify.code == 0, "{}", problem("store inconsistent"));
        if import.code == 0 {
            for id in &imported {
                let show = fx
                    .clinv_in(dest.path(), &["snapshots", "--domain", "inv", "show", id])
                    .run();
                assert_eq!(
                    show.code,
                    0,
                    "{}",
                    problem(&format!("{id}: {}", show.stderr))
                );
            }
        }
    }
}

// 6. -------------------------------------------------------------------------------

fn export_racing_gc_writes_a_consistent_archive() {
    let fx = Fx::new();
    let base = tempfile::tempdir().unwrap();
    // Many objects, so export reads them over a window gc deletes in.
    applied_store(&fx, base.path(), 300);
    for round in 0..RACES {
        let work = tempfile::tempdir().unwrap();
        let src = work.path().join("src");
        copy_dir(base.path(), &src);
        let tar = work.path().join("x.tar");
        let export = fx.spawn_in(
            &src,
            &[
                "snapshots",
                "--domain",
                "inv",
                "export",
                tar.to_str().unwrap(),
            ],
        );
        std::thread::sleep(Duration::from_micros((round as u64 * 1_300) % 12_000));
        let gc = fx.spawn_in(&src, &["snapshots", "gc", "--keep", "1"]);
        let export = wait_out(export, "export");
        let gc = wait_out(gc, "gc");
        assert_eq!(export.code, 0, "round {round}: export: {}", export.stderr);
        assert_eq!(gc.code, 0, "round {round}: gc: {}", gc.stderr);
        let dest = work.path().join("dest");
        let import = fx
            .clinv_in(&dest, &["snapshots", "import", tar.to_str().unwrap()])
            .run();
        let verify = fx.clinv_in(&dest, &["snapshots", "verify"]).run();
        assert!(
            import.code == 0 && verify.code == 0,
            "round {round}: the archive of an export racing gc is inconsistent\n import exit {}: {}\n verify exit {}: {}",
            import.code,
            import.stderr,
            verify.code,
            verify.stderr
        );
    }
}

fn import_refuses_an_archive_missing_a_referenced_object() {
    let fx = Fx::new();
    let objects = applied_store(&fx, fx.store(), 2);
    let whole = fx.store().join("whole.tar");
    fx.clinv(&[
        "snapshots",
        "--domain",
        "inv",
        "export",
        whole.to_str().unwrap(),
    ])
    .run()
    .success();
    // The same archive without the first snapshot's CR object.
    let missing = format!("{}.json", objects[0].cr_id());
    let cut = fx.store().join("cut.tar");
    {
        let mut archive = tar::Archive::new(std::fs::File::open(&whole).unwrap());
        let mut out = tar::Builder::new(std::fs::File::create(&cut).unwrap());
        let mut dropped = false;
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().into_owned();
            if path.to_string_lossy().ends_with(&missing) {
                dropped = true;
                continue;
            }
            let header = entry.header().clone();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
            out.append(&header, &data[..]).unwrap();
        }
        out.finish().unwrap();
        assert!(dropped, "the export holds {missing}");
    }
    let dest = tempfile::tempdir().unwrap();
    let dest_store = dest.path().join("store");
    let run = fx
        .clinv_in(&dest_store, &["snapshots", "import", cut.to_str().unwrap()])
        .run();
    assert_eq!(
        run.code, 1,
        "an archive missing {missing} must be refused: {}",
        run.stderr
    );
    assert!(run.stderr.contains(&objects[0].cr_id()), "{}", run.stderr);
    assert!(
        tree(&dest_store).is_empty(),
        "nothing written: {:?}",
        tree(&dest_store).keys().collect::<Vec<_>>()
    );
}

// 7. -------------------------------------------------------------------------------

fn a_pax_size_header_does_not_bypass_the_import_bounds() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = crate::hostile::project();
    let store = tempfile::tempdir().unwrap();
    crate::hostile::queue(dir.path(), store.path());
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("pax.tar");
    // After the format entry, 16 journal entries whose ustar header says 0 bytes and
    // whose PAX header says 80 MiB (over the 64 MiB per-entry bound), each followed by
    // 80 MiB of (sparse) data: 1.25 GiB in all.
    const BODY: u64 = 80 << 20;
    let mut file = std::fs::File::create(&path).unwrap();
    {
        // A genuine first entry, so the archive is read on.
        let mut header = tar::Header::new_ustar();
        header.set_path("FORMAT").unwrap();
        let body = b"clinv-snapshots/v1\n";
        header.set_size(body.len() as u64);
        header.set_mode(0o600);
        header.set_cksum();
        file.write_all(header.as_bytes()).unwrap();
        let mut block = body.to_vec();
        block.resize(512, 0);
        file.write_all(&block).unwrap();
    }
    let record = format!(" size={BODY}\n");
    let record = format!("{}{record}", record.len() + 2);
    assert_eq!(
        record.len(),
        record.split(' ').next().unwrap().parse::<usize>().unwrap()
    );
    for i in 0..16 {
        let mut pax = tar::Header::new_ustar();
        pax.set_entry_type(tar::EntryType::XHeader);
        pax.set_path(format!("PaxHeaders/journal{i}")).unwrap();
        pax.set_size(record.len() as u64);
        pax.set_mode(0o644);
        pax.set_cksum();
        file.write_all(pax.as_bytes()).unwrap();
        let mut block = record.clone().into_bytes();
        block.resize(512, 0);
        file.write_all(&block).unwrap();
        let mut header = tar::Header::new_ustar();
        header.set_path("inv/journal").unwrap();
        header.set_size(0);
        header.set_mode(0o600);
        header.set_cksum();
        file.write_all(header.as_bytes()).unwrap();
        file.seek(SeekFrom::Current(BODY as i64)).unwrap();
    }
    let end = file.stream_position().unwrap() + 1024;
    file.set_len(end).unwrap();
    drop(file);
    let before = tree(store.path());
    let run = bounded(&["snapshots", "import", path.to_str().unwrap()])
        .root(dir.path())
        .store(store.path())
        .run();
    // Refused by import's own bound, not by running out of memory (once:
    // "out of memory" under the 128 MiB limit, about 1 GiB without it).
    assert_clean_failure(&run, "pax.tar");
    assert!(
        !run.stderr.contains("out of memory") && run.stderr.contains("limit"),
        "the PAX size must meet the per-entry bound: {}",
        run.stderr
    );
    assert_unchanged(&before, store.path());
}

// 8. -------------------------------------------------------------------------------

fn verify_rejects_a_cr_object_that_is_not_a_cluster_inventory() {
    let fx = Fx::new();
    let good = v1::render(fx.root(), "inv");
    let bogus = Objects {
        cr: r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cluster"},"data":{"a":"b"}}"#
            .to_string(),
        ..good.clone()
    };
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&good);
    journal.objects(&bogus);
    journal.snapshot(&v1::id(1), 1_700_000_000, &good);
    journal.snapshot(&v1::id(2), 1_700_000_060, &bogus);
    journal.finish();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_eq!(
        verify.code, 1,
        "verify passed a ConfigMap as a ClusterInventory: {}{}",
        verify.stdout, verify.stderr
    );
    assert!(
        verify.stderr.contains(&bogus.cr_id()),
        "verify names the object: {}",
        verify.stderr
    );
    // A valid-JSON non-CRD under a record's crd is a failure as well.
    let fx = Fx::new();
    let bogus = Objects {
        crd: r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"crd"}}"#.to_string(),
        ..good.clone()
    };
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&bogus);
    journal.snapshot(&v1::id(3), 1_700_000_000, &bogus);
    journal.finish();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_eq!(
        verify.code, 1,
        "verify passed a ConfigMap as the CRD: {}",
        verify.stderr
    );
}

// 9. -------------------------------------------------------------------------------

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn sigterm_and_sigint_end_a_waiting_command_with_143_and_130() {
    let fx = Fx::new();
    fx.queue("v1.31.1");
    let lock = fx.store().join("inv/lock");
    let _held = hold_lock(&lock);
    for (name, code) in [("TERM", 143), ("INT", 130)] {
        set_version(fx.root(), "v1.31.5");
        let child = fx.spawn_in(fx.store(), &["publish", "--domain", "inv"]);
        // The publish is waiting for the lock once it has the lock file open.
        await_waiter(&lock, Duration::from_secs(20));
        signal(&child, name);
        let run = wait_out(child, "publish");
        assert_eq!(run.code, code, "SIG{name}: {}", run.stderr);
        assert!(
            run.stderr.contains("interrupted"),
            "SIG{name} says so: {}",
            run.stderr
        );
        assert!(temp_files(fx.store()).is_empty());
    }
}

fn a_signal_during_an_import_exits_130_and_leaves_no_temporary_file() {
    let fx = Fx::new();
    // An archive big enough that importing it takes a while.
    let src = tempfile::tempdir().unwrap();
    let base = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(src.path(), "inv");
    for n in 0..300u64 {
        let objects = variant(&base, n);
        journal.objects(&objects);
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
    }
    for n in 300..30_000u64 {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &base);
    }
    journal.objects(&base);
    journal.finish();
    let tar = src.path().join("big.tar");
    fx.clinv_in(
        src.path(),
        &[
            "snapshots",
            "--domain",
            "inv",
            "export",
            tar.to_str().unwrap(),
        ],
    )
    .run()
    .success();
    let start = Instant::now();
    fx.clinv_in(
        &src.path().join("probe"),
        &["snapshots", "import", tar.to_str().unwrap()],
    )
    .run()
    .success();
    let span = start.elapsed();
    let mut interrupted = 0;
    for round in 1..=6u32 {
        let dest = tempfile::tempdir().unwrap();
        let mut child = fx.spawn_in(dest.path(), &["snapshots", "import", tar.to_str().unwrap()]);
        std::thread::sleep(span * round / 8);
        if child.try_wait().unwrap().is_some() {
            continue;
        }
        signal(&child, "INT");
        let run = wait_out(child, "import");
        interrupted += 1;
        assert!(
            run.code == 130 || run.code == 0,
            "round {round}: SIGINT during import: exit {}: {}",
            run.code,
            run.stderr
        );
        if run.code == 130 {
            assert!(run.stderr.contains("interrupted"), "{}", run.stderr);
        }
        let left = temp_files(dest.path());
        assert!(left.is_empty(), "round {round}: left behind: {left:?}");
        let verify = fx.clinv_in(dest.path(), &["snapshots", "verify"]).run();
        assert!(
            verify.code == 0 || verify.stderr.contains("no snapshots"),
            "round {round}: {}",
            verify.stderr
        );
    }
    assert!(
        interrupted > 0,
        "every import ended before its signal ({span:?})"
    );
}

fn a_dead_writers_temporary_files_are_removed_by_the_next_writer() {
    let fx = Fx::new();
    fx.queue("v1.31.1");
    // What a killed import leaves: staged objects and a staged journal of a dead pid.
    let dead = 999_999_999;
    let mut planted = Vec::new();
    // In the domain's folders (the store root is under no domain's lock). Objects are
    // staged in the domain folder; `objects/` itself (a file per distinct inventory) is
    // never listed by an append, so an older clinv's leftover there waits for gc.
    let object_temp = format!(".{}.json.tmp.{dead}.0", "ab".repeat(32));
    let mut in_objects = None;
    for dir in walk_dirs(fx.store()).into_iter().skip(1) {
        if dir.ends_with("objects") {
            in_objects = Some(write(&dir, &object_temp, "half-written"));
        } else {
            planted.push(write(
                &dir,
                &format!(".journal.tmp.{dead}.1"),
                "half-written",
            ));
        }
    }
    let domain = planted[0].parent().unwrap().to_path_buf();
    assert_eq!(
        domain.parent(),
        Some(fx.store()),
        "{domain:?} is no domain folder"
    );
    planted.push(write(&domain, &object_temp, "half-written"));
    assert!(planted.len() >= 3, "{planted:?}");
    fx.queue("v1.31.2");
    let in_objects = in_objects.expect("an objects folder");
    let left = temp_files(fx.store());
    assert_eq!(
        left,
        vec![in_objects.clone()],
        "the next writer left a dead writer's temporary files"
    );
    fx.clinv(&["snapshots", "gc", "--keep", "10"])
        .run()
        .success();
    let left = temp_files(fx.store());
    assert!(left.is_empty(), "gc left: {left:?}");
    fx.clinv(&["snapshots", "verify"]).run().success();
}

// Summaries -------------------------------------------------------------------------

/// Sealed segments are read from their summaries once a listing wrote them: `snapshots
/// list` (each format, a state filter) and `log` print exactly what they print from the
/// lines — damaged lines of the sealed segment included — and a segment edited in place
/// afterwards is read from its lines again (its summary is stale), as `verify` reads it.
fn summaries_never_change_a_listing() {
    let fx = Fx::new();
    let base = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&base);
    let states = ["applied", "superseded", "pending"];
    for n in 0..3000u64 {
        // One record from a clock that went back: the lines are not in the order, so the
        // migration keeps the journal as it is, the sealed segment 000000.log (an
        // ordered one is rewritten into rolled segments).
        let secs = 1_580_000_000 + 60 * n as i64 - if n == 1500 { 3600 } else { 0 };
        let id = v1::id(0xb000 + n);
        journal.snapshot(&id, secs, &base);
        if n % 4 != 0 {
            journal.state(&id, secs + 1, states[n as usize % 3]);
        }
    }
    let path = journal.finish();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.insert_str(
        text.len() / 2 + text[text.len() / 2..].find('\n').unwrap() + 1,
        "0000 {\"kind\":\"snapshot\"}\n",
    );
    std::fs::write(&path, &text).unwrap();
    // The next write migrates: the v1 journal becomes the sealed segment 000000.log.
    let queued = fx.queue("v1.31.1");
    // The queued snapshot was recorded now: its AGE changes from run to run; so may any
    // other's, when a day boundary passes between two runs (records are a minute apart).
    let age = regex::Regex::new(r"\b[0-9]{1,3}[ydhms](?:[0-9]{1,3}[dhms])?\b").unwrap();
    let steady = |out: &str| -> String {
        out.lines()
            .map(|l| {
                if l.contains(&queued) {
                    "<queued now>".to_string()
                } else {
                    age.replace_all(l, "<age>").into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let generation = fx.store().join("inv/segments/1");
    let sealed = generation.join("000000.log");
    let summary = generation.join("000000.sum");
    assert!(sealed.is_file());
    let commands: [&[&str]; 6] = [
        &["snapshots", "list", "--domain", "inv"],
        &["snapshots", "list", "--domain", "inv", "-o", "wide"],
        &["snapshots", "list", "--domain", "inv", "-o", "name"],
        &["snapshots", "list", "--domain", "inv", "--state", "applied"],
        &["snapshots", "list", "--domain", "inv", "--no-headers"],
        &["log", "--domain", "inv"],
    ];
    let runs = |what: &str| -> Vec<(i32, String, String)> {
        commands
            .iter()
            .map(|args| {
                let run = fx.clinv(args).run();
                assert!(
                    run.code == 0 || run.code == 1,
                    "{what} {args:?}: {}",
                    run.stderr
                );
                (run.code, steady(&run.stdout), run.stderr)
            })
            .collect()
    };
    assert!(!summary.exists(), "a summary before any listing");
    let first = fx.clinv(commands[0]).run();
    assert!(
        first.stderr.contains("000000.log") && first.stderr.contains("checksum"),
        "the damaged line is reported: {}",
        first.stderr
    );
    assert!(
        summary.is_file(),
        "the first listing wrote the sealed segment's summary"
    );
    assert!(
        !generation.join("000001.sum").exists(),
        "the active segment has no summary"
    );
    let written = std::fs::metadata(&summary).unwrap().modified().unwrap();
    let with = runs("with summaries");
    assert_eq!(
        std::fs::metadata(&summary).unwrap().modified().unwrap(),
        written,
        "a valid summary is used, not written again"
    );
    let without: Vec<_> = commands
        .iter()
        .map(|args| {
            // Not every listing writes one (`-o wide` reads every line).
            if summary.exists() {
                std::fs::remove_file(&summary).unwrap();
            }
            let run = fx.clinv(args).run();
            (run.code, steady(&run.stdout), run.stderr)
        })
        .collect();
    for ((args, a), b) in commands.iter().zip(&with).zip(&without) {
        assert_eq!(a, b, "{args:?} with and without summaries");
    }
    assert!(with[0].1.lines().count() > 2000, "{}", with[0].1);
    assert_eq!(steady(&first.stdout), with[0].1);

    // Edited in place after its summary was written (a state flipped, same size): the
    // listing reads the line again and reports it damaged, as verify does.
    assert!(summary.is_file());
    let mut bytes = std::fs::read(&sealed).unwrap();
    let at = bytes.len() / 3;
    let at = at
        + bytes[at..]
            .windows(7)
            .position(|w| w == b"applied")
            .unwrap();
    bytes[at..at + 7].copy_from_slice(b"APPLIED");
    std::fs::write(&sealed, &bytes).unwrap();
    let edited = fx.clinv(commands[0]).run();
    let verify = fx.clinv(&["snapshots", "verify", "--domain", "inv"]).run();
    assert_eq!(verify.code, 1, "{}", verify.stderr);
    assert_eq!(
        edited.stderr.matches("checksum").count(),
        2,
        "both damaged lines are reported: {}",
        edited.stderr
    );
    assert_ne!(
        steady(&edited.stdout),
        steady(&first.stdout),
        "the edited line is read again"
    );
}

/// Every folder under `dir` (itself included).
fn walk_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk_dirs(&e.path()));
        }
    }
    out
}

/// Issue #28: migration, export, import, verify and gc of a 200,000-record history each
/// stay under 64 MB peak RSS, measured by `wait4` (GNU time). Before: 442, ~600, 484, (the
/// full read) and 546 MB (release build, `scripts/bench.py store-scale --records 200000`).
fn store_commands_stay_in_bounded_memory_at_200k_records() {
    const BOUND_KIB: u64 = 64 << 10;
    let fx = Fx::new();
    let count = std::env::var("CLINV_RSS_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000u64);
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
        journal.state(&v1::id(n), 1_600_000_000 + n as i64, "superseded");
    }
    journal.finish();
    let measured = |what: &str, clinv: Clinv| {
        let (run, peak) = clinv.run_with_peak_rss();
        eprintln!(
            "  {what} of {count}: exit {} in {:?}, peak RSS {peak} KiB",
            run.code, run.elapsed
        );
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(
            peak <= BOUND_KIB,
            "{what} of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
        );
        run
    };
    let publish = measured(
        "migration (an offline publish)",
        fx.clinv(&["publish", "--domain", "inv"]),
    );
    assert_has(&publish.stderr, "recorded as pending snapshot");
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("all.tar");
    let tar = tar.to_str().unwrap();
    measured(
        "export",
        fx.clinv(&["snapshots", "--domain", "inv", "export", tar]),
    );
    let fresh = out.path().join("fresh");
    let import = measured("import", fx.clinv_in(&fresh, &["snapshots", "import", tar]));
    // Each snapshot and its state change, and the publish's snapshot and its pending state.
    let added = format!("imported {} record(s)", 2 * count + 2);
    assert!(import.stderr.contains(&added), "{}", import.stderr);
    let verify = measured("verify", fx.clinv(&["snapshots", "verify"]));
    let counted = format!(
        "{} snapshot(s), 2 object(s) in 1 domain(s): verified",
        count + 1
    );
    assert!(verify.stdout.contains(&counted), "{}", verify.stdout);
    let gc = measured(
        "gc --keep 20",
        fx.clinv(&["snapshots", "gc", "--keep", "20"]),
    );
    // All but the first, the newest 20 (the pending publish among them).
    assert_eq!(
        gc.stdout.lines().count() as u64,
        count - 20,
        "{}",
        gc.stderr
    );
    let list = fx
        .clinv(&["snapshots", "list", "--domain", "inv"])
        .run()
        .success();
    assert_eq!(list.stdout.lines().count(), 1 + 1 + 20, "{}", list.stdout);
    let list = fx
        .clinv_in(&fresh, &["snapshots", "list", "--domain", "inv"])
        .run()
        .success();
    assert_eq!(list.stdout.lines().count() as u64, 1 + count + 1);
}

// Issue 39: nothing lost or poisoned across the air gap (13, 14, gc) ------------------

/// A store of `count` applied snapshots of `domain` (ids from `first`), each with its own
/// CR object, recorded a minute apart from 2020 on; returns the objects by snapshot.
fn applied_domain(fx: &Fx, store: &Path, domain: &str, first: u64, count: u64) -> Vec<Objects> {
    let base = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(store, domain);
    let mut all = Vec::new();
    for n in 0..count {
        let objects = variant(&base, first + n);
        journal.objects(&objects);
        let secs = 1_580_000_000 + 60 * n as i64;
        journal.snapshot(&v1::id(first + n), secs, &objects);
        journal.state(&v1::id(first + n), secs + 1, "applied");
        all.push(objects);
    }
    journal.finish();
    all
}

/// The names of an archive's entries, with their bytes.
fn entries(tar: &Path) -> Vec<(String, String)> {
    let mut archive = tar::Archive::new(std::fs::File::open(tar).unwrap());
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        out.push((name, text));
    }
    out
}

/// `tar` without the entries whose names end with `suffix`.
fn without(tar: &Path, suffix: &str, cut: &Path) {
    let mut archive = tar::Archive::new(std::fs::File::open(tar).unwrap());
    let mut out = tar::Builder::new(std::fs::File::create(cut).unwrap());
    let mut dropped = false;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        if path.to_string_lossy().ends_with(suffix) {
            dropped = true;
            continue;
        }
        let header = entry.header().clone();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        out.append(&header, &data[..]).unwrap();
    }
    out.finish().unwrap();
    assert!(dropped, "the archive holds {suffix}");
}

fn snapshot_ids(fx: &Fx, store: &Path, domain: &str) -> Vec<String> {
    let run = fx
        .clinv_in(
            store,
            &["snapshots", "list", "--domain", domain, "-o", "json"],
        )
        .run()
        .success();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    rows.iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// 13: a damaged journal line is never dropped in silence. export refuses (exit 1,
/// naming the line, no archive); `--allow-damage` writes the archive without it, names
/// it, records it in the archive's `LEFT-OUT` entry, and still exits 1; the importer is
/// told too.
fn export_refuses_a_damaged_line_and_allow_damage_says_what_it_left_out() {
    let fx = Fx::new();
    applied_store(&fx, fx.store(), 3);
    let journal = fx.store().join("inv/journal");
    let text = std::fs::read_to_string(&journal).unwrap();
    // Line 3: the second snapshot's record; its checksum no longer matches.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen("\"domain\":\"inv\"", "\"domain\":\"inw\"", 1);
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_eq!(verify.code, 1, "verify sees the damage: {}", verify.stdout);
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("inv.tar");
    let export = export_inv(&fx, &tar, false);
    assert_eq!(
        export.code, 1,
        "export of a damaged store: {}",
        export.stderr
    );
    assert_has(&export.stderr, "journal:3");
    assert!(
        tree(out.path()).is_empty(),
        "nothing written: {:?}",
        tree(out.path())
    );
    let export = export_inv(&fx, &tar, true);
    assert_eq!(
        export.code, 1,
        "an archive with a gap exits 1: {}",
        export.stderr
    );
    assert_has(&export.stderr, "journal:3");
    assert_has(&export.stderr, "left out");
    let held = entries(&tar);
    let manifest = held
        .iter()
        .find(|(name, _)| name == "LEFT-OUT")
        .unwrap_or_else(|| {
            panic!(
                "no LEFT-OUT entry: {:?}",
                held.iter().map(|e| &e.0).collect::<Vec<_>>()
            )
        });
    assert_has(&manifest.1, "inv/journal:3");
    assert_lacks(&manifest.1, fx.store().to_str().unwrap());
    let fresh = out.path().join("fresh");
    let import = fx
        .clinv_in(&fresh, &["snapshots", "import", tar.to_str().unwrap()])
        .run();
    assert_eq!(import.code, 0, "{}", import.stderr);
    assert_has(&import.stderr, "exported without");
    assert_has(&import.stderr, "inv/journal:3");
    fx.clinv_in(&fresh, &["snapshots", "verify"])
        .run()
        .success();
    assert_eq!(
        snapshot_ids(&fx, &fresh, "inv"),
        [v1::id(0xa002), v1::id(0xa000)]
    );
}

/// `snapshots --domain inv export TAR`, with `--allow-damage` when `allow_damage`.
fn export_inv(fx: &Fx, tar: &Path, allow_damage: bool) -> Run {
    let damage: &[&str] = if allow_damage {
        &["--allow-damage"]
    } else {
        &[]
    };
    let args = [
        &["snapshots", "--domain", "inv", "export"][..],
        damage,
        &[tar.to_str().unwrap()],
    ];
    fx.clinv(&args.concat()).run()
}

/// 13: an object that is missing is never left out in silence, and export's count is
/// of the objects it wrote. `--allow-damage` leaves out the snapshot that names it (and
/// its state changes), so the archive imports whole on the far side.
fn export_refuses_a_missing_object_and_counts_only_what_it_wrote() {
    let fx = Fx::new();
    let objects = applied_store(&fx, fx.store(), 3);
    let gone = objects[1].cr_id();
    std::fs::remove_file(fx.store().join(format!("inv/objects/{gone}.json"))).unwrap();
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("inv.tar");
    let export = export_inv(&fx, &tar, false);
    assert_eq!(
        export.code, 1,
        "export without an object: {}",
        export.stderr
    );
    assert_has(&export.stderr, &gone);
    assert!(
        tree(out.path()).is_empty(),
        "nothing written: {:?}",
        tree(out.path())
    );
    let export = export_inv(&fx, &tar, true);
    assert_eq!(export.code, 1, "{}", export.stderr);
    assert_has(&export.stderr, &gone);
    assert_has(&export.stderr, &v1::id(0xa001));
    // Two snapshots and their state changes; two CRs and the CRD.
    assert_has(&export.stderr, "exported 4 record(s) and 3 object(s)");
    let held = entries(&tar);
    let objects_held = held.iter().filter(|(n, _)| n.contains("/objects/")).count();
    assert_eq!(objects_held, 3);
    let fresh = out.path().join("fresh");
    let import = fx
        .clinv_in(&fresh, &["snapshots", "import", tar.to_str().unwrap()])
        .run();
    assert_eq!(import.code, 0, "{}", import.stderr);
    assert_has(&import.stderr, &v1::id(0xa001));
    fx.clinv_in(&fresh, &["snapshots", "verify"])
        .run()
        .success();
    assert_eq!(
        snapshot_ids(&fx, &fresh, "inv"),
        [v1::id(0xa002), v1::id(0xa000)]
    );
}

/// 13: a domain whose archive lacks an object never holds the healthy domains hostage:
/// they are imported, the damaged domain is not written at all, and import exits 1
/// naming it and the object.
fn import_takes_the_healthy_domains_and_refuses_the_one_missing_an_object() {
    let fx = Fx::new();
    let objects = applied_domain(&fx, fx.store(), "inv", 0xa000, 2);
    applied_domain(&fx, fx.store(), "other", 0xb000, 2);
    let out = tempfile::tempdir().unwrap();
    let whole = out.path().join("whole.tar");
    let export = fx
        .clinv(&["snapshots", "export", whole.to_str().unwrap()])
        .run();
    assert_eq!(export.code, 0, "{}", export.stderr);
    let cut = out.path().join("cut.tar");
    let missing = objects[0].cr_id();
    without(&whole, &format!("inv/objects/{missing}.json"), &cut);
    let fresh = out.path().join("fresh");
    let import = fx
        .clinv_in(&fresh, &["snapshots", "import", cut.to_str().unwrap()])
        .run();
    assert_eq!(import.code, 1, "{}", import.stderr);
    assert_has(&import.stderr, &missing);
    assert_has(&import.stderr, "inv");
    assert_eq!(
        snapshot_ids(&fx, &fresh, "other"),
        [v1::id(0xb001), v1::id(0xb000)],
        "the healthy domain is imported"
    );
    assert!(
        tree(&fresh.join("inv")).is_empty(),
        "nothing of the refused domain is written: {:?}",
        tree(&fresh.join("inv"))
    );
    fx.clinv_in(&fresh, &["snapshots", "verify"])
        .run()
        .success();
}

/// 2099-01-01T00:00:00Z.
const Y2099: i64 = 4_070_908_800;

/// 14: records from beyond the future tolerance (24 h) are refused per domain at import
/// (the healthy domains are imported), and a far-future record already in a store never
/// moves the recorded time of a later local record.
fn records_from_the_future_are_refused_and_never_move_a_local_clock() {
    let fx = Fx::new();
    let base = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&base);
    journal.snapshot(&v1::id(0xa000), 1_580_000_000, &base);
    journal.state(&v1::id(0xa000), 1_580_000_001, "applied");
    let future = variant(&base, 99);
    journal.objects(&future);
    journal.snapshot(&v1::id(0xf099), Y2099, &future);
    journal.state(&v1::id(0xf099), Y2099 + 1, "applied");
    journal.finish();
    applied_domain(&fx, fx.store(), "other", 0xb000, 1);
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("all.tar");
    fx.clinv(&["snapshots", "export", tar.to_str().unwrap()])
        .run()
        .success();
    let fresh = out.path().join("fresh");
    let import = fx
        .clinv_in(&fresh, &["snapshots", "import", tar.to_str().unwrap()])
        .run();
    assert_eq!(import.code, 1, "{}", import.stderr);
    assert_has(&import.stderr, "2099-01-01T00:00:00");
    assert_has(&import.stderr, "future");
    assert_has(&import.stderr, &v1::id(0xf099));
    assert_eq!(snapshot_ids(&fx, &fresh, "other"), [v1::id(0xb000)]);
    assert!(
        tree(&fresh.join("inv")).is_empty(),
        "nothing of the refused domain is written: {:?}",
        tree(&fresh.join("inv"))
    );
    // The store that holds the 2099 record: a publish is stamped with its own clock.
    let id = fx.queue("v1.31.7");
    let rows = fx.list_in(fx.store());
    let row = rows
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} not listed: {rows:?}"));
    let at = row["at"].as_str().unwrap();
    let now = jiff::Timestamp::now().as_second();
    let recorded: jiff::Timestamp = at.parse().unwrap();
    assert!(
        (recorded.as_second() - now).abs() < 600,
        "the publish is stamped {at}, not now: one record's clock moved another's"
    );
}

/// gc with a damaged object refuses as verify fails (exit 1, naming it) and changes
/// nothing; `--allow-damage` runs and leaves the damaged object as it is.
fn gc_refuses_while_an_object_is_damaged_and_allow_damage_leaves_it() {
    let fx = Fx::new();
    let objects = applied_store(&fx, fx.store(), 4);
    // Snapshot 1 is doomed by `gc --keep 1` (kept: the first, the newest, the last applied).
    let damaged = objects[1].cr_id();
    let path = fx.store().join(format!("inv/objects/{damaged}.json"));
    std::fs::write(&path, "{\"not\": \"the content of its name\"}").unwrap();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    let before = snapshot_ids(&fx, fx.store(), "inv");
    let gc = fx.clinv(&["snapshots", "gc", "--keep", "1"]).run();
    assert_eq!(
        gc.code, verify.code,
        "gc with a damaged object: {}{}",
        gc.stdout, gc.stderr
    );
    assert_has(&gc.stderr, &damaged);
    assert_eq!(
        snapshot_ids(&fx, fx.store(), "inv"),
        before,
        "gc deleted nothing"
    );
    let dry = fx
        .clinv(&["snapshots", "gc", "--keep", "1", "--dry-run"])
        .run();
    assert_eq!(dry.code, 1, "{}", dry.stderr);
    assert_has(&dry.stderr, &damaged);
    let gc = fx
        .clinv(&["snapshots", "gc", "--keep", "1", "--allow-damage"])
        .run();
    assert_eq!(gc.code, 0, "{}", gc.stderr);
    assert_eq!(
        snapshot_ids(&fx, fx.store(), "inv"),
        [v1::id(0xa003), v1::id(0xa000)]
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"not\": \"the content of its name\"}",
        "the damaged object is left as it is"
    );
    // A kept snapshot's object missing: refused the same way.
    let fx = Fx::new();
    let objects = applied_store(&fx, fx.store(), 4);
    let gone = objects[3].cr_id();
    std::fs::remove_file(fx.store().join(format!("inv/objects/{gone}.json"))).unwrap();
    let gc = fx.clinv(&["snapshots", "gc", "--keep", "1"]).run();
    assert_eq!(gc.code, 1, "{}", gc.stderr);
    assert_has(&gc.stderr, &gone);
    assert_eq!(snapshot_ids(&fx, fx.store(), "inv").len(), 4);
}

/// Issue 39 (12): the documents of the listing commands are streamed. `snapshots list -o
/// json`, `-o yaml` and `gc --dry-run -o json` of 120,000 records (`CLINV_DOC_RECORDS`)
/// each stay under 64 MB peak RSS, measured by `wait4` (GNU time), and hold every row.
fn store_documents_stay_in_bounded_memory_at_120k_records() {
    const BOUND_KIB: u64 = 64 << 10;
    let fx = Fx::new();
    let count = std::env::var("CLINV_DOC_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(120_000u64);
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
        journal.state(&v1::id(n), 1_600_000_000 + n as i64, "superseded");
    }
    journal.finish();
    let measured = |what: &str, args: &[&str]| {
        let (run, peak) = fx.clinv(args).run_with_peak_rss();
        eprintln!(
            "  {what} of {count}: exit {} in {:?}, peak RSS {peak} KiB",
            run.code, run.elapsed
        );
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(
            peak <= BOUND_KIB,
            "{what} of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
        );
        run
    };
    let list = ["snapshots", "list", "--domain", "inv", "-o"];
    let json = measured("snapshots list -o json", &[&list[..], &["json"]].concat());
    let rows = json.stdout.matches("\n    \"id\": ").count() as u64;
    assert_eq!(rows, count, "every row in the JSON");
    assert!(json.stdout.starts_with("[\n  {\n") && json.stdout.ends_with("\n  }\n]\n"));
    // Newest first, as the table.
    let newest = json.stdout.find(&v1::id(count - 1)).unwrap();
    let oldest = json.stdout.find(&format!("\"{}\"", v1::id(0))).unwrap();
    assert!(newest < oldest);
    let yaml = measured("snapshots list -o yaml", &[&list[..], &["yaml"]].concat());
    let rows = yaml.stdout.lines().filter(|l| l.starts_with("- ")).count() as u64;
    assert_eq!(rows, count, "every row in the YAML");
    let gc = measured(
        "gc --dry-run -o json",
        &["snapshots", "gc", "--keep", "20", "--dry-run", "-o", "json"],
    );
    let rows = gc.stdout.matches("\"deleted\": false").count() as u64;
    assert_eq!(rows, count - 21, "all but the first and the newest 20");
}

/// Issue 39 (12): the listing's other forms are written from compact listings as they
/// go. `snapshots list -o wide` (whole records read twice), a per-row `-o jsonpath`,
/// `--sort-by` (the compact rows sorted) and `-o name` of 40,000 records
/// (`CLINV_DOC_RECORDS`) each stay under 64 MB peak RSS, measured by `wait4`.
fn listing_forms_stay_in_bounded_memory_at_40k_records() {
    const BOUND_KIB: u64 = 64 << 10;
    let fx = Fx::new();
    let count = std::env::var("CLINV_DOC_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40_000u64);
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
        let state = if n % 3 == 0 { "applied" } else { "superseded" };
        journal.state(&v1::id(n), 1_600_000_000 + n as i64, state);
    }
    journal.finish();
    let measured = |what: &str, extra: &[&str]| {
        let args = [&["snapshots", "list", "--domain", "inv"][..], extra].concat();
        let (run, peak) = fx.clinv(&args).run_with_peak_rss();
        eprintln!(
            "  snapshots list {what} of {count}: exit {} in {:?}, peak RSS {peak} KiB",
            run.code, run.elapsed
        );
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(
            peak <= BOUND_KIB,
            "snapshots list {what} of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
        );
        run.stdout
    };
    let wide = measured("-o wide", &["-o", "wide"]);
    let lines: Vec<&str> = wide.lines().collect();
    assert_eq!(lines.len() as u64, count + 1, "the header and a row each");
    assert!(lines[0].starts_with("DOMAIN") && lines[0].ends_with("TOOL"));
    assert!(lines[1].contains(&v1::id(count - 1)) && lines[1].contains(&objects.spec_hash[..12]));
    let ids = measured(
        "-o jsonpath",
        &["-o", r#"jsonpath={range [*]}{.id}{"\n"}{end}"#],
    );
    let ids: Vec<&str> = ids.lines().collect();
    assert_eq!(ids.len() as u64, count);
    assert_eq!(ids[0], v1::id(count - 1), "newest first");
    let picked = measured(
        "-o jsonpath (an index and a filter)",
        &["-o", r#"jsonpath={[-1].id} {[?(@.state=="applied")].id}"#],
    );
    let picked: Vec<&str> = picked.split(' ').collect();
    assert_eq!(picked[0], v1::id(0), "the last row is the oldest");
    assert_eq!(
        picked.len() as u64 - 1,
        count.div_ceil(3),
        "every third is applied"
    );
    let sorted = measured(
        "--sort-by state -o json",
        &["--sort-by", "state", "-o", "json"],
    );
    let applied = sorted.find("\"state\": \"applied\"").unwrap();
    let superseded = sorted.find("\"state\": \"superseded\"").unwrap();
    assert!(applied < superseded, "sorted by state");
    assert_eq!(sorted.matches("\n    \"id\": ").count() as u64, count);
    let by_time = measured("--sort-by time", &["--sort-by", "time", "--no-headers"]);
    let first = by_time.lines().next().unwrap();
    assert!(first.contains(&v1::id(0)), "oldest first: {first}");
    assert_eq!(by_time.lines().count() as u64, count);
}

/// `log -o json` of one domain at 120,000 records stays under the bound of the store's
/// other documents: the trail is written an entry at a time, its timeline built as the
/// steps go by; `report`'s page lists the newest 1,000 steps (issue 39 item 12).
fn log_json_and_report_stay_in_bounded_memory_at_120k_records() {
    const BOUND_KIB: u64 = 64 << 10;
    let fx = Fx::new();
    let count = std::env::var("CLINV_DOC_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(120_000u64);
    let objects = v1::render(fx.root(), "inv");
    let mut journal = Journal::create(fx.store(), "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
        journal.state(&v1::id(n), 1_600_000_000 + n as i64, "superseded");
    }
    journal.finish();
    let (run, peak) = fx
        .clinv(&["log", "--domain", "inv", "-o", "json"])
        .run_with_peak_rss();
    eprintln!(
        "  log -o json of {count}: exit {} in {:?}, peak RSS {peak} KiB",
        run.code, run.elapsed
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        peak <= BOUND_KIB,
        "log -o json of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
    );
    let entries = run.stdout.matches("\n      \"id\": ").count() as u64;
    assert_eq!(entries, count, "every entry in the JSON");
    assert!(run.stdout.starts_with("{\n  \"schemaVersion\": "));
    assert!(run.stdout.contains("\n  ],\n  \"timeline\": {\n"));
    assert!(run.stdout.ends_with("\n  }\n}\n"));
    // The other forms of the log are streamed the same way (issue 39 item 12).
    for (form, extra) in [
        ("log -o markdown", &["-o", "markdown"][..]),
        ("log --reverse -o json", &["--reverse", "-o", "json"]),
        ("log --oneline", &["--oneline"]),
        ("log --addon cilium", &["--addon", "cilium"]),
        ("log -A", &["-A"]),
        ("log -A -o json", &["-A", "-o", "json"]),
    ] {
        let domain: &[&str] = if extra.contains(&"-A") {
            &[]
        } else {
            &["--domain", "inv"]
        };
        let args = [&["log"][..], domain, extra].concat();
        let (other, peak) = fx.clinv(&args).run_with_peak_rss();
        eprintln!(
            "  {form} of {count}: exit {} in {:?}, peak RSS {peak} KiB",
            other.code, other.elapsed
        );
        assert_eq!(other.code, 0, "{form}: {}", other.stderr);
        assert!(
            peak <= BOUND_KIB,
            "{form} of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
        );
        let lines = other.stdout.lines().count() as u64;
        match form {
            "log -o markdown" => assert_eq!(lines, count + 6, "the head and a row per step"),
            "log --oneline" => assert_eq!(lines, count, "a line per step"),
            "log --addon cilium" => assert!(other.stdout.starts_with("cilium ")),
            "log -A" => assert_eq!(other.stdout.matches("\ninv  #").count() as u64, count - 1),
            "log -A -o json" => {
                assert_eq!(
                    other.stdout.matches("\"domain\": \"inv\"").count() as u64,
                    count
                )
            }
            _ => {
                let oldest = other.stdout.find(&format!("\"{}\"", v1::id(0))).unwrap();
                let newest = other.stdout.find(&v1::id(count - 1)).unwrap();
                assert!(oldest < newest, "oldest first");
            }
        }
    }
    // report -o json is the same document, streamed the same way to stdout.
    let log_json = run.stdout;
    let (run, peak) = fx
        .clinv(&["report", "--domain", "inv", "-o", "json"])
        .run_with_peak_rss();
    eprintln!(
        "  report -o json of {count}: exit {} in {:?}, peak RSS {peak} KiB",
        run.code, run.elapsed
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        peak <= BOUND_KIB,
        "report -o json of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
    );
    assert!(
        run.stdout == log_json,
        "report -o json is log -o json's document"
    );
    // And into a file, atomically, in the same memory.
    let file = fx.root().join("trail.json");
    let (run, peak) = fx
        .clinv(&[
            "report",
            "--domain",
            "inv",
            "-o",
            "json",
            "--out",
            file.to_str().unwrap(),
        ])
        .run_with_peak_rss();
    eprintln!("  report -o json --out of {count}: peak RSS {peak} KiB");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("({count} steps)")),
        "{}",
        run.stderr
    );
    assert!(peak <= BOUND_KIB, "report -o json --out: {peak} KiB");
    assert!(
        std::fs::read_to_string(&file).unwrap() == log_json,
        "the same document"
    );
    // The page summarises: the timeline of every step, the newest steps' changes.
    let (run, peak) = fx.clinv(&["report", "--domain", "inv"]).run_with_peak_rss();
    eprintln!(
        "  report of {count}: exit {} in {:?}, peak RSS {peak} KiB",
        run.code, run.elapsed
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        peak <= BOUND_KIB,
        "report of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
    );
    assert!(run.stdout.contains(&format!(" · {count} recorded steps")));
    let older = format!("the {} older steps are not listed", count - 1000);
    assert!(run.stdout.contains(&older), "{}", &run.stdout[..2000]);
}

trials! {
    GnuTime: [
        listing_forms_stay_in_bounded_memory_at_40k_records,
        log_json_and_report_stay_in_bounded_memory_at_120k_records,
        store_commands_stay_in_bounded_memory_at_200k_records,
        store_documents_stay_in_bounded_memory_at_120k_records,
    ],
    Nothing: [
        a_v1_journal_over_64_mib_is_read_and_written_by_every_command,
        an_imported_older_pending_snapshot_never_becomes_latest,
        a_publish_never_waits_out_a_replay_against_a_black_holed_server,
        a_publish_that_cannot_take_the_lock_exits_11_never_0_unrecorded,
        the_lock_wait_is_clinv_lock_timeout,
        gc_refuses_with_a_damaged_line_and_never_deletes_its_object,
        import_racing_gc_never_leaves_a_snapshot_without_its_object,
        export_racing_gc_writes_a_consistent_archive,
        import_refuses_an_archive_missing_a_referenced_object,
        a_pax_size_header_does_not_bypass_the_import_bounds,
        verify_rejects_a_cr_object_that_is_not_a_cluster_inventory,
        sigterm_and_sigint_end_a_waiting_command_with_143_and_130,
        a_signal_during_an_import_exits_130_and_leaves_no_temporary_file,
        a_dead_writers_temporary_files_are_removed_by_the_next_writer,
        summaries_never_change_a_listing,
        export_refuses_a_damaged_line_and_allow_damage_says_what_it_left_out,
        export_refuses_a_missing_object_and_counts_only_what_it_wrote,
        import_takes_the_healthy_domains_and_refuses_the_one_missing_an_object,
        records_from_the_future_are_refused_and_never_move_a_local_clock,
        gc_refuses_while_an_object_is_damaged_and_allow_damage_leaves_it,
    ],
}
