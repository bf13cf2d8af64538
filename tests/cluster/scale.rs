//! The delivery path at any store size (issue 41 item 1): a domain whose history holds
//! 120,000 records (a version 1 journal, migrated by the first publish) is delivered by
//! `replay`, `publish`, `status` and `drift` against the real control plane, each within
//! the store's memory bound — what they read grows with what is owed, not with the
//! history. Peak RSS from wait4 (GNU time), as the store's documents are measured.

use crate::plane;
use crate::support::*;
use crate::v1;

/// The bound of the store's documents at 120,000 records (tests/cli/store_v2.rs).
const BOUND_KIB: u64 = 64 << 10;

fn the_delivery_path_stays_in_bounded_memory_at_120k_records() {
    let p = plane();
    p.crd_only();
    let dir = copy_tree(&fixture("inv"));
    let root = dir.path();
    let store = root.join("store");
    let count = std::env::var("CLINV_DELIVERY_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(120_000u64);
    let objects = v1::render(root, "inv");
    let mut journal = v1::Journal::create(&store, "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
        journal.state(&v1::id(n), 1_600_000_000 + n as i64, "applied");
    }
    journal.finish();
    let (r, admin) = (root.to_str().unwrap(), p.admin.to_str().unwrap());
    let offline = repo().join("examples/offline.kubeconfig");
    let offline = offline.to_str().unwrap();
    let run = |args: &[&str]| {
        let all = [&["--root", r][..], args].concat();
        clinv(&all).store(&store).run_with_peak_rss()
    };
    let measured = |what: &str, args: &[&str], says: &str| {
        let (run, peak) = run(args);
        eprintln!(
            "  {what} of {count}: exit {} in {:?}, peak RSS {peak} KiB",
            run.code, run.elapsed
        );
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        let out = format!("{}{}", run.stdout, run.stderr);
        assert!(out.contains(says), "{what} says {says:?}: {out}");
        assert!(
            peak <= BOUND_KIB,
            "{what} of {count} records: peak RSS {peak} KiB > {BOUND_KIB} KiB"
        );
    };
    // The first write migrates the history; the snapshot waits for the cluster.
    let (queued, _) = run(&["publish", "--domain", "inv", "--kubeconfig", offline]);
    assert!(
        queued.stderr.contains("recorded as pending snapshot"),
        "{}",
        queued.stderr
    );
    let replay = ["replay", "--domain", "inv", "--kubeconfig", admin];
    measured("replay", &replay, "applied");
    let publish = ["publish", "--domain", "inv", "--kubeconfig", admin];
    measured("publish (applied)", &publish, "applied");
    let status = ["status", "--domain", "inv", "--kubeconfig", admin];
    measured("status", &status, "last applied:");
    measured(
        "status --offline",
        &["status", "--domain", "inv", "--offline"],
        "last applied:",
    );
    measured(
        "drift --offline",
        &["drift", "--domain", "inv", "--offline"],
        "snapshot",
    );
    // Nothing owed: a replay reads the queue and sends nothing.
    measured("replay with nothing owed", &replay, "nothing");
}

/// Lines of every live segment of `domain` in `store`.
fn journal_lines(store: &std::path::Path, domain: &str) -> usize {
    let segments = store.join(domain).join("segments");
    let current = std::fs::read_to_string(segments.join("CURRENT")).unwrap();
    let generation = segments.join(current.trim());
    std::fs::read_dir(generation)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            std::fs::read(p)
                .unwrap()
                .iter()
                .filter(|b| **b == b'\n')
                .count()
        })
        .sum()
}

/// Issue 48, a backlog at any size: a site dark for a long time queued 20,000
/// snapshots; the first publish that reaches the cluster supersedes all of them with one
/// record (not one line each: a million would be 200 MB of appends and as many rows for
/// every later reader), and every command after it sees nothing owed.
fn a_backlog_is_superseded_with_one_record() {
    let p = plane();
    p.crd_only();
    let dir = copy_tree(&fixture("inv"));
    let root = dir.path();
    let store = root.join("store");
    let count = 20_000u64;
    let objects = v1::render(root, "inv");
    let mut journal = v1::Journal::create(&store, "inv");
    journal.objects(&objects);
    for n in 0..count {
        journal.snapshot(&v1::id(n), 1_600_000_000 + n as i64, &objects);
    }
    journal.finish();
    let (r, admin) = (root.to_str().unwrap(), p.admin.to_str().unwrap());
    let offline = repo().join("examples/offline.kubeconfig");
    let run = |args: &[&str]| {
        let all = [&["--root", r][..], args].concat();
        clinv(&all).store(&store).run_with_peak_rss()
    };
    let (queued, _) = run(&[
        "publish",
        "--domain",
        "inv",
        "--kubeconfig",
        offline.to_str().unwrap(),
    ]);
    assert!(
        queued.stderr.contains("recorded as pending snapshot"),
        "{}",
        queued.stderr
    );
    let before = journal_lines(&store, "inv");
    let (published, peak) = run(&["publish", "--domain", "inv", "--kubeconfig", admin]);
    assert_eq!(published.code, 0, "{}", published.stderr);
    let grew = journal_lines(&store, "inv") - before;
    eprintln!("  first online publish over {count} pending: {grew} line(s), peak RSS {peak} KiB");
    assert!(
        grew <= 3,
        "superseding {count} snapshots appended {grew} lines"
    );
    assert!(peak <= BOUND_KIB, "peak RSS {peak} KiB > {BOUND_KIB} KiB");
    let (replay, _) = run(&["replay", "--domain", "inv", "--kubeconfig", admin]);
    assert!(replay.stderr.contains("nothing"), "{}", replay.stderr);
    let (pending, _) = run(&[
        "snapshots",
        "list",
        "--domain",
        "inv",
        "--state",
        "pending",
        "-o",
        "name",
    ]);
    assert_eq!(pending.stdout, "", "{}", pending.stderr);
    let (superseded, _) = run(&[
        "snapshots",
        "list",
        "--domain",
        "inv",
        "--state",
        "superseded",
        "-o",
        "name",
    ]);
    assert_eq!(
        superseded.stdout.lines().count() as u64,
        count + 1,
        "{}",
        superseded.stderr
    );
    let (shown, _) = run(&[
        "snapshots",
        "--domain",
        "inv",
        "show",
        &v1::id(7),
        "-o",
        "json",
    ]);
    assert!(
        shown.stdout.contains("\"state\": \"superseded\""),
        "{}",
        shown.stdout
    );
    let (verify, _) = run(&["snapshots", "verify", "--domain", "inv"]);
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    // The record travels: exported and imported into an empty store, kept by gc.
    let tar = root.join("backlog.tar");
    let (export, _) = run(&["snapshots", "export", tar.to_str().unwrap()]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let other = root.join("other");
    let imported = clinv(&["--root", r, "snapshots", "import", tar.to_str().unwrap()])
        .store(&other)
        .run();
    assert_eq!(imported.code, 0, "{}", imported.stderr);
    let pending = [
        "snapshots",
        "list",
        "--domain",
        "inv",
        "--state",
        "pending",
        "-o",
        "name",
    ];
    let listed = clinv(&[&["--root", r][..], &pending[..]].concat())
        .store(&other)
        .run();
    assert_eq!(
        (listed.code, listed.stdout.as_str()),
        (0, ""),
        "{}",
        listed.stderr
    );
    let (gc, _) = run(&["snapshots", "gc", "--keep", "20"]);
    assert_eq!(gc.code, 0, "{}", gc.stderr);
    let (listed, _) = run(&pending);
    assert_eq!(
        (listed.code, listed.stdout.as_str()),
        (0, ""),
        "{}",
        listed.stderr
    );
    let (replay, _) = run(&["replay", "--domain", "inv", "--kubeconfig", admin]);
    assert!(replay.stderr.contains("nothing"), "{}", replay.stderr);
}

trials! {
    Plane: [
        the_delivery_path_stays_in_bounded_memory_at_120k_records,
        a_backlog_is_superseded_with_one_record,
    ],
}
