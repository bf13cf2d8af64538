//! The snapshot store without a cluster: queueing, sharing, damage, crashes, concurrency,
//! retention and export/import. Every run uses a kubeconfig whose server refuses
//! connections, so publishes queue.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A refused-connection kubeconfig carrying a recognisable fake token.
pub fn dead_kubeconfig(dir: &Path) -> PathBuf {
    let port = refused_port();
    write(
        dir,
        "dead-kubeconfig.yaml",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: FAKESECRET-kube-token-77\ncontexts:\n- name: dead-ctx\n  context: {{cluster: dead, user: u}}\ncurrent-context: dead-ctx\n"
        ),
    )
}

struct Fx {
    dir: tempfile::TempDir,
    kc: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let dir = copy_tree(&example());
        let kc = dead_kubeconfig(dir.path());
        Fx { dir, kc }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn store(&self) -> PathBuf {
        self.root().join("snapshots")
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let kc = self.kc.to_str().unwrap().to_string();
        let mut all = vec!["--root", &root];
        all.extend(aimed(args, &kc));
        all.extend_from_slice(args);
        clinv(&all).store(self.store())
    }

    /// A command without `--kubeconfig` (the environment's `KUBECONFIG` names no file).
    fn clinv_unaimed(&self, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        clinv(&[&["--root", &root][..], args].concat()).store(self.store())
    }

    fn publish(&self, domain: &str) -> Run {
        self.clinv(&["publish", "--domain", domain]).run()
    }

    fn list(&self) -> Vec<serde_json::Value> {
        let run = self
            .clinv(&["snapshots", "list", "-o", "json"])
            .run()
            .success();
        serde_json::from_str(&run.stdout).unwrap()
    }

    fn objects(&self, domain: &str) -> Vec<PathBuf> {
        std::fs::read_dir(self.store().join(domain).join("objects"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

fn an_unreachable_publish_is_queued_with_its_reason_and_target_and_no_secrets() {
    let fx = Fx::new();
    let run = fx.publish("prod.acme.example").success();
    let list = fx.list();
    assert_eq!(list.len(), 1);
    let snap = &list[0];
    let id = snap["id"].as_str().unwrap();
    assert_has(
        &run.stderr,
        &format!("— recorded as pending snapshot {id} (clinv replay delivers it)"),
    );
    assert_eq!(snap["state"], "pending");
    assert_eq!(snap["reason"], "unreachable");
    assert_eq!(snap["domain"], "prod.acme.example");
    assert!(
        snap["target"]["server"]
            .as_str()
            .unwrap()
            .starts_with("https://127.0.0.1:")
    );
    assert_eq!(snap["target"]["context"], "dead-ctx");
    assert_eq!(snap["tool"], format!("clinv {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(snap["specHash"].as_str().unwrap().len(), 64);
    // The stored CR is exactly what render produces.
    let show = fx
        .clinv(&["snapshots", "show", id, "-o", "json"])
        .run()
        .success();
    let shown: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let rendered = fx
        .clinv(&["render", "--domain", "prod.acme.example", "-o", "json"])
        .run()
        .success();
    let mut want: serde_json::Value = serde_json::from_str(&rendered.stdout).unwrap();
    want["spec"]["renderedAt"] = shown["inventory"]["spec"]["renderedAt"].clone();
    assert_eq!(shown["inventory"], want);
    // Nothing secret in any store file: values, env, value files, the kubeconfig token.
    let files = all_files(&fx.store());
    assert!(files.len() >= 4);
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(
            !text.contains("FAKESECRET"),
            "{} leaks a secret",
            f.display()
        );
        assert!(!text.contains("token"), "{} mentions a token", f.display());
    }
}

/// A publish of the inventory the newest snapshot already holds (renderedAt aside) is an
/// event on that snapshot, not a new step: `latest~1` is the previous distinct
/// inventory, `log` has no "no changes" steps, and `snapshots show` lists the events.
fn identical_inventories_fold_into_one_snapshot_with_their_events() {
    let fx = Fx::new();
    let publish_at = |epoch: &str| {
        fx.clinv(&["publish", "--domain", "prod.acme.example"])
            .env("SOURCE_DATE_EPOCH", epoch)
            .run()
            .success()
    };
    for epoch in ["1700000000", "1700000100", "1700000200"] {
        let run = publish_at(epoch);
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    let list = fx.list();
    assert_eq!(list.len(), 1, "{list:?}");
    let first = list[0]["id"].as_str().unwrap().to_string();
    assert_eq!(list[0]["renderedAt"], "2023-11-14T22:13:20Z");
    assert_eq!(list[0]["state"], "pending");
    let events: Vec<&str> = fields(&list[0]["events"], "renderedAt");
    assert_eq!(events, ["2023-11-14T22:15:00Z", "2023-11-14T22:16:40Z"]);
    assert_eq!(
        fx.objects("prod.acme.example").len(),
        2,
        "one CR object (renderedAt aside) and one CRD"
    );
    let show = fx.clinv(&["snapshots", "show", &first]).run().success();
    assert_has(
        &show.stdout,
        "published again (renderedAt 2023-11-14T22:15:00Z",
    );
    assert_has(
        &show.stdout,
        "published again (renderedAt 2023-11-14T22:16:40Z",
    );
    // A real change is a new step, and latest~1 is the previous distinct inventory.
    set_chart_version(fx.root(), "cilium", "1.20.1");
    publish_at("1700000300");
    publish_at("1700000400");
    let list = fx.list();
    assert_eq!(list.len(), 2, "{list:?}");
    let previous = fx
        .clinv(&[
            "snapshots",
            "show",
            "latest~1",
            "--domain",
            "prod.acme.example",
            "-o",
            "json",
        ])
        .run()
        .success();
    let previous: serde_json::Value = serde_json::from_str(&previous.stdout).unwrap();
    assert_eq!(previous["snapshot"]["id"], first.as_str());
    let log = fx
        .clinv(&["log", "--domain", "prod.acme.example"])
        .run()
        .success();
    assert!(!log.stdout.contains("no changes"), "{}", log.stdout);
    // Only the newest folds: going back to the first inventory is a new step.
    set_chart_version(fx.root(), "cilium", "1.19.2");
    publish_at("1700000500");
    assert_eq!(fx.list().len(), 3);
    // An export carries the events; an import restores them.
    let tar = fx.root().join("folded.tar");
    fx.clinv(&["snapshots", "export", tar.to_str().unwrap()])
        .run()
        .success();
    let other = Fx::new();
    other
        .clinv(&["snapshots", "import", tar.to_str().unwrap()])
        .run()
        .success();
    let imported = other.list();
    let folded = imported.iter().find(|s| s["id"] == first.as_str()).unwrap();
    assert_eq!(folded["events"].as_array().unwrap().len(), 2, "{folded}");
    other.clinv(&["snapshots", "verify"]).run().success();
}

fn references_and_filters() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("lab.acme.example").success();
    // A different inventory (an identical one would fold into the newest snapshot).
    set_chart_version(fx.root(), "cilium", "1.20.1");
    fx.publish("prod.acme.example").success();
    let run = fx
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
    let prod: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let ids: Vec<String> = prod
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    let show = |r: &str| {
        fx.clinv(&["snapshots", "--domain", "prod.acme.example", "show", r])
            .run()
    };
    assert!(
        show("latest")
            .success()
            .stdout
            .starts_with(&format!("# snapshot {}\n", ids[0]))
    );
    assert!(
        show("latest~1")
            .success()
            .stdout
            .starts_with(&format!("# snapshot {}\n", ids[1]))
    );
    assert!(
        show(&ids[1][..6])
            .success()
            .stdout
            .contains("# state:      pending (unreachable)")
    );
    assert_eq!(show("latest~9").code, 1);
    assert_eq!(show("../../etc").code, 2);
    let run = fx
        .clinv(&[
            "snapshots",
            "list",
            "--domain",
            "lab.acme.example",
            "--state",
            "pending",
        ])
        .run()
        .success();
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    let run = fx
        .clinv(&["snapshots", "list", "--state", "applied"])
        .run()
        .success();
    assert!(run.stdout.is_empty() && run.stderr.contains("no snapshots"));
}

fn damage_is_reported_with_its_path_and_skipped_never_deleted() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("lab.acme.example").success();
    assert_eq!(fx.clinv(&["snapshots", "verify"]).run().code, 0);
    // A truncated object: the CR's (`show` reads it; the CRD is `verify`'s to find).
    let objects = fx.objects("lab.acme.example");
    let victim = objects
        .iter()
        .find(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("ClusterInventory") && !text.contains("CustomResourceDefinition")
        })
        .unwrap();
    let text = std::fs::read(victim).unwrap();
    std::fs::write(victim, &text[..text.len() / 2]).unwrap();
    let verify = fx.clinv(&["snapshots", "verify"]).run();
    assert_eq!(verify.code, 1);
    assert_has(&verify.stderr, &victim.display().to_string());
    assert!(verify.stderr.contains("damaged"), "{}", verify.stderr);
    let show = fx
        .clinv(&[
            "snapshots",
            "--domain",
            "lab.acme.example",
            "show",
            "latest",
        ])
        .run();
    assert_eq!(show.code, 1);
    assert!(show.stderr.contains(&victim.display().to_string()));
    assert!(victim.exists(), "never deleted");
    // A bit flip in the other domain's object.
    let objects = fx.objects("prod.acme.example");
    let mut bytes = std::fs::read(&objects[0]).unwrap();
    bytes[20] ^= 0x20;
    std::fs::write(&objects[0], bytes).unwrap();
    assert_eq!(
        fx.clinv(&["snapshots", "verify", "--domain", "prod.acme.example"])
            .run()
            .code,
        1
    );
    // A hand-edited journal line: reported with path and line, skipped by list.
    let journal = journal_file(&fx.store().join("prod.acme.example"));
    let edited = std::fs::read_to_string(&journal).unwrap().replacen(
        "prod.acme.example",
        "prod.acme.examplf",
        1,
    );
    std::fs::write(&journal, edited).unwrap();
    let list = fx.clinv(&["snapshots", "list"]).run().success();
    assert_has(
        &list.stderr,
        &format!("{}:2: checksum mismatch", journal.display()),
    );
    assert!(!list.stdout.contains("prod.acme.example"));
}

fn a_torn_journal_tail_and_a_stale_lock_are_not_fatal() {
    use std::io::Write;
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    let journal = journal_file(&fx.store().join("prod.acme.example"));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap()
        .write_all(b"4f2a {\"kind\":\"snapshot\",\"id\":\"dead")
        .unwrap();
    std::fs::write(
        fx.store().join("prod.acme.example/lock.holder"),
        "{\"pid\":999999999,\"host\":\"gone\",\"command\":\"publish\"}\n",
    )
    .unwrap();
    let verify = fx.clinv(&["snapshots", "verify"]).run().success();
    assert_has(&verify.stderr, "incomplete last record");
    assert_eq!(fx.list().len(), 1);
    set_chart_version(fx.root(), "cilium", "1.20.1");
    fx.publish("prod.acme.example").success();
    assert_eq!(fx.list().len(), 2);
    fx.clinv(&["snapshots", "verify"]).run().success();
    assert!(
        std::fs::read_to_string(&journal)
            .unwrap()
            .contains("\"kind\":\"repair\"")
    );
}

/// A small deterministic PRNG (xorshift) so crash points differ run to run but the
/// test needs no extra crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

fn publishes_killed_at_random_points_lose_nothing_that_completed() {
    let fx = Fx::new();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let (mut completed, mut killed) = (Vec::new(), 0);
    let bin = env!("CARGO_BIN_EXE_clinv");
    // Kill anywhere in a run's lifetime: from exec to just after exit.
    let start = std::time::Instant::now();
    fx.publish("prod.acme.example").success();
    let span = (start.elapsed().as_micros() as u64 * 3 / 2).max(2_000);
    for i in 0..200 {
        let mut child = std::process::Command::new(bin)
            .args([
                "--root",
                fx.root().to_str().unwrap(),
                "--kubeconfig",
                fx.kc.to_str().unwrap(),
                "publish",
                "--domain",
                "prod.acme.example",
            ])
            .env_clear()
            .env("SOURCE_DATE_EPOCH", (1_700_000_000 + i).to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next(span)));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let id = stderr
                .split("recorded as pending snapshot ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .unwrap()
                .to_string();
            completed.push(id);
        } else {
            killed += 1;
        }
    }
    eprintln!(
        "crash test (seed {seed}): {} completed, {killed} killed",
        completed.len()
    );
    assert!(
        killed > 10 && completed.len() > 10,
        "kill points must cover both outcomes (seed {seed}, span {span} µs)"
    );
    fx.clinv(&["snapshots", "verify"]).run().success();
    let ids: Vec<String> = fx
        .list()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    for id in &completed {
        assert!(
            ids.contains(id),
            "completed publish {id} is missing (seed {seed})"
        );
    }
}

/// Twenty processes publishing at once: each publish is recorded (one snapshot, and an
/// event for each identical publish), nothing torn.
fn twenty_concurrent_publishes_all_land() {
    let fx = Fx::new();
    let children: Vec<_> = (0..20)
        .map(|i| {
            std::process::Command::new(env!("CARGO_BIN_EXE_clinv"))
                .args([
                    "--root",
                    fx.root().to_str().unwrap(),
                    "--kubeconfig",
                    fx.kc.to_str().unwrap(),
                    "publish",
                    "--domain",
                    "prod.acme.example",
                ])
                .env_clear()
                .env("SOURCE_DATE_EPOCH", (1_700_000_000 + i).to_string())
                .output()
        })
        .collect();
    let mut ids = Vec::new();
    for out in children {
        let out = out.unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        ids.push(
            stderr
                .split("recorded as pending snapshot ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string(),
        );
    }
    // One inventory: the first publish records the snapshot, the other nineteen fold
    // into it as events — each of the twenty is in the journal.
    let list = fx.list();
    assert_eq!(list.len(), 1, "{list:?}");
    assert!(ids.iter().all(|id| *id == list[0]["id"]), "{ids:?}");
    assert_eq!(list[0]["events"].as_array().unwrap().len(), 19);
    fx.clinv(&["snapshots", "verify"]).run().success();
}

fn gc_keeps_the_first_the_newest_and_every_pending_snapshot() {
    let fx = Fx::new();
    for i in 0..5 {
        set_chart_version(fx.root(), "cilium", &format!("1.19.{}", 10 + i));
        fx.publish("prod.acme.example").success();
    }
    // All pending: nothing may go.
    let run = fx
        .clinv(&["snapshots", "gc", "--keep", "1"])
        .run()
        .success();
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_eq!(fx.list().len(), 5);
}

/// Issue 40, item 8: the counts an import prints add up. A second publish of the same
/// inventory is folded into its snapshot as an event; imported into a fresh store and then
/// again, the records the first import added are the records the second finds held, and
/// each import's added and already held make the archive's records.
fn import_counts_add_up_with_folded_publishes() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("prod.acme.example").success();
    let tar = fx.root().join("prod.tar");
    let tar = tar.to_str().unwrap();
    let export = fx.clinv(&["snapshots", "export", tar]).run().success();
    assert_has(
        &export.stderr,
        "[info] exported 4 record(s) and 2 object(s)",
    );
    let other = Fx::new();
    let first = other.clinv(&["snapshots", "import", tar]).run().success();
    assert_has(
        &first.stderr,
        &format!(
            "[info] imported 4 record(s) from {tar}: 1 snapshot(s), 2 state change(s), 1 repeated publish(es) folded into their snapshot(s); 0 already held; the store's 0 record(s) untouched\n"
        ),
    );
    let again = other.clinv(&["snapshots", "import", tar]).run().success();
    assert_has(
        &again.stderr,
        &format!(
            "[info] imported 0 record(s) from {tar}: 0 snapshot(s), 0 state change(s), 0 repeated publish(es) folded into their snapshot(s); 4 already held; the store's 4 record(s) untouched\n"
        ),
    );
    // Into the store it came from: every record held, none added.
    let home = fx.clinv(&["snapshots", "import", tar]).run().success();
    assert_has(&home.stderr, "imported 0 record(s)");
    assert_has(
        &home.stderr,
        "; 4 already held; the store's 4 record(s) untouched",
    );
}

/// Issue 49, finding 3: an archive whose record has the id of a held one but another
/// content (its line checksum recomputed, so the archive verifies) is a conflict, not
/// "already held": the domain is refused, nothing of it written, exit 1. Byte-identical
/// records are still "already held".
fn import_refuses_a_record_that_differs_from_the_held_one_of_its_id() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    let tar = fx.root().join("prod.tar");
    fx.clinv(&["snapshots", "export", tar.to_str().unwrap()])
        .run()
        .success();
    let forged = fx.root().join("forged.tar");
    forge_spec_hash(&tar, &forged);
    let held_before = fx.list();
    let run = fx
        .clinv(&["snapshots", "import", forged.to_str().unwrap()])
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "prod.acme.example");
    assert_has(&run.stderr, "differs from the one this store holds");
    assert_has(
        &run.stderr,
        "; 0 already held; the store's 2 record(s) untouched",
    );
    assert_eq!(fx.list(), held_before, "nothing of the domain written");
    // The genuine archive: already held, as before.
    let again = fx
        .clinv(&["snapshots", "import", tar.to_str().unwrap()])
        .run()
        .success();
    assert_has(&again.stderr, "already held");
}

/// A copy of the export `from` whose snapshot record says another `specHash`, its line
/// checksum recomputed: every check of the archive itself passes.
fn forge_spec_hash(from: &Path, to: &Path) {
    let mut archive = tar::Archive::new(std::fs::File::open(from).unwrap());
    let mut out = tar::Builder::new(std::fs::File::create(to).unwrap());
    let mut forged = false;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut header = entry.header().clone();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        let text = String::from_utf8(data.clone()).unwrap_or_default();
        if text.contains("\"kind\":\"snapshot\"") {
            let mut lines = String::new();
            for line in text.lines() {
                let (_, json) = line.split_once(' ').unwrap();
                let mut record: serde_json::Value = serde_json::from_str(json).unwrap();
                if record["kind"] == "snapshot" {
                    record["specHash"] = "0".repeat(64).into();
                    forged = true;
                }
                lines.push_str(&journal_line(&record));
            }
            data = lines.into_bytes();
            header.set_size(data.len() as u64);
            header.set_cksum();
        }
        out.append(&header, &data[..]).unwrap();
    }
    out.finish().unwrap();
    assert!(forged, "the export holds a snapshot record");
}

fn export_and_import_round_trip_without_overwriting() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("prod.acme.example").success();
    let tar = fx.root().join("prod.tar");
    fx.clinv(&[
        "snapshots",
        "--domain",
        "prod.acme.example",
        "export",
        tar.to_str().unwrap(),
    ])
    .run()
    .success();
    let other = Fx::new();
    let import = other
        .clinv(&["snapshots", "import", tar.to_str().unwrap()])
        .run()
        .success();
    assert!(
        import.stderr.contains("imported 2 record(s)")
            || import.stderr.contains("imported 4 record(s)"),
        "{}",
        import.stderr
    );
    let a: Vec<_> = fx
        .list()
        .iter()
        .map(|s| (s["id"].clone(), s["state"].clone()))
        .collect();
    let b: Vec<_> = other
        .list()
        .iter()
        .map(|s| (s["id"].clone(), s["state"].clone()))
        .collect();
    assert_eq!(a, b);
    other.clinv(&["snapshots", "verify"]).run().success();
    let again = other
        .clinv(&["snapshots", "import", tar.to_str().unwrap()])
        .run()
        .success();
    assert_has(&again.stderr, "imported 0 record(s)");
    // A tampered archive is refused before anything is written.
    let mut bytes = std::fs::read(&tar).unwrap();
    let at = bytes
        .windows(12)
        .position(|w| w == b"lok8sVersion")
        .unwrap();
    bytes[at + 16] ^= 0x01;
    let bad = fx.root().join("bad.tar");
    std::fs::write(&bad, bytes).unwrap();
    let third = Fx::new();
    let run = third
        .clinv(&["snapshots", "import", bad.to_str().unwrap()])
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!third.store().exists(), "nothing written");
}

/// A snapshot queued with `--kubeconfig K` is replayed through K, not through whatever
/// the environment names; with K gone, replay says that no server was contacted and why,
/// and an explicit `--kubeconfig` still chooses another.
fn replay_goes_where_the_publish_was_aimed() {
    let fx = Fx::new();
    fx.publish("lab.acme.example").success();
    let queued_for = fx.list()[0]["target"].clone();
    assert_eq!(
        queued_for["kubeconfig"],
        serde_json::json!([fx.kc.to_str().unwrap()])
    );
    let server = queued_for["server"].as_str().unwrap().to_string();
    let replay = || {
        fx.clinv_unaimed(&["replay", "--domain", "lab.acme.example"])
            .run()
            .success()
    };
    let run = replay();
    assert_has(&run.stderr, "cluster unreachable: ");
    assert_has(&run.stderr, &server);
    assert_eq!(fx.list()[0]["reason"], "unreachable");
    assert_eq!(fx.list()[0]["target"], queued_for);

    std::fs::remove_file(&fx.kc).unwrap();
    let run = replay();
    assert_has(
        &run.stderr,
        &format!(
            "no server was contacted: the kubeconfig this snapshot was published with is gone ({}); replay --retarget delivers through the domain's kubeconfig as it is now, --kubeconfig through another",
            fx.kc.display()
        ),
    );
    assert!(!run.stderr.contains("rejected"), "{}", run.stderr);
    assert_eq!(fx.list()[0]["reason"], "no-kubeconfig");

    let elsewhere = dead_kubeconfig(&fx.root().join("other"));
    let run = fx
        .clinv_unaimed(&[
            "replay",
            "--domain",
            "lab.acme.example",
            "--kubeconfig",
            elsewhere.to_str().unwrap(),
        ])
        .run()
        .success();
    assert_has(
        &run.stderr,
        &format!("was published for {server}; delivering it to https://127.0.0.1:"),
    );
    assert_eq!(fx.list()[0]["reason"], "unreachable");
}

/// One word for a snapshot the cluster has not taken yet: `pending`, in every listing,
/// log, report, message and JSON; `queued` is accepted as its alias by `--state`.
fn one_word_per_state() {
    let fx = Fx::new();
    let publish = fx.publish("lab.acme.example").success();
    let replay = fx
        .clinv(&["replay", "--domain", "lab.acme.example"])
        .run()
        .success();
    let list = |state: &str| {
        fx.clinv(&["snapshots", "list", "--state", state, "-o", "json"])
            .run()
            .success()
            .stdout
    };
    assert_eq!(list("queued"), list("pending"));
    assert_eq!(fx.list()[0]["state"], "pending");
    let log = fx
        .clinv(&["log", "--domain", "lab.acme.example", "-o", "json"])
        .run()
        .success();
    let log: serde_json::Value = serde_json::from_str(&log.stdout).unwrap();
    assert_eq!(log["entries"][0]["outcome"], "pending", "{log}");
    let text = fx
        .clinv(&["log", "--domain", "lab.acme.example", "--oneline"])
        .run()
        .success();
    let report = fx
        .clinv(&["report", "--domain", "lab.acme.example"])
        .run()
        .success();
    for (what, out) in [
        ("publish", &publish.stderr),
        ("replay", &replay.stderr),
        ("log", &text.stdout),
        ("report", &report.stdout),
    ] {
        assert!(out.contains("pending"), "{what}: {out}");
        assert!(!out.contains("queued"), "{what}: {out}");
    }
}

/// The project-local store (`<root>/snapshots`) ignores itself in Git: a `git add -A` of
/// the project and a `clinv commit` into the project's own repository never take it.
fn the_project_local_store_never_reaches_git() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    let ignore = std::fs::read_to_string(fx.store().join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
    let git = |args: &[&str]| git(fx.root(), args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    let staged = git(&["diff", "--cached", "--name-only"]);
    assert!(staged.contains("clusters/"), "{staged}");
    assert!(!staged.contains("snapshots/"), "{staged}");
    // The store's domains and listings do not take the file for a domain.
    let list = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success();
    assert!(!list.stderr.contains(".gitignore"), "{}", list.stderr);
}

/// Store-only commands outside a project, without --snapshots: the error says how to
/// name a store (not only --root). Quiet no-ops say what happened.
fn store_only_use_is_discoverable_and_no_op_is_silent() {
    let empty = tempfile::tempdir().unwrap();
    for args in [
        &["snapshots", "import", "a.tar"][..],
        &["snapshots", "list"],
        &["log"],
    ] {
        let run = clinv(args)
            .env_remove("CLINV_SNAPSHOTS")
            .cwd(empty.path())
            .run();
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("pass --snapshots DIR"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    let gc = fx.clinv(&["snapshots", "gc", "--dry-run"]).run().success();
    assert!(gc.stdout.is_empty(), "{}", gc.stdout);
    assert_has(&gc.stderr, "[info] nothing to delete");
    // verify's verdict is data: -q keeps it.
    let verify = fx.clinv(&["snapshots", "verify", "-q"]).run().success();
    assert!(
        verify.stdout.ends_with("in 1 domain(s): verified\n"),
        "{}",
        verify.stdout
    );
}

/// `snapshots list --since`, `--limit` and `--sort-by` (kubectl's), and the relative times of
/// `--since` in snapshot references (`@0s`, `@yesterday`, git's `@2 hours ago`).
fn list_since_sort_by_and_relative_references() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("lab.acme.example").success();
    set_chart_version(fx.root(), "cilium", "1.20.1");
    fx.publish("prod.acme.example").success();
    let list = |args: &[&str]| {
        let run = fx
            .clinv(&[&["snapshots", "list"][..], args].concat())
            .run()
            .success();
        run.stdout
    };
    let domains = |text: &str| -> Vec<String> {
        text.lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    // Each domain newest first by default; --sort-by domain is ascending and stable.
    assert_eq!(
        domains(&list(&[])),
        ["lab.acme.example", "prod.acme.example", "prod.acme.example"]
    );
    let by_time: Vec<serde_json::Value> =
        serde_json::from_str(&list(&["--sort-by", "time", "-o", "json"])).unwrap();
    let domains_by_time: Vec<&str> = by_time
        .iter()
        .map(|s| s["domain"].as_str().unwrap())
        .collect();
    assert_eq!(
        domains_by_time,
        ["prod.acme.example", "lab.acme.example", "prod.acme.example"]
    );
    // --limit N: the newest N of each domain, in every format.
    let ids = |text: &str| -> Vec<String> {
        text.lines()
            .skip(1)
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .collect()
    };
    let all = ids(&list(&[]));
    assert_eq!(
        ids(&list(&["--limit", "1"])),
        [all[0].clone(), all[1].clone()]
    );
    assert_eq!(ids(&list(&["--limit", "2"])), all);
    let names = list(&["--limit", "1", "-o", "name"]);
    assert_eq!(names.lines().count(), 2, "{names}");
    assert!(
        names.contains(&format!("prod.acme.example/{}", all[1])),
        "{names}"
    );
    let limited: Vec<serde_json::Value> =
        serde_json::from_str(&list(&["--limit", "1", "-o", "json"])).unwrap();
    assert_eq!(limited.len(), 2);
    assert_eq!(limited[1]["id"], all[1].as_str());
    assert_eq!(ids(&list(&["--limit", "0"])), Vec::<String>::new());
    // The table with --sort-by is the table (one header, same columns).
    let sorted = list(&["--sort-by", "id"]);
    assert!(sorted.starts_with("DOMAIN "), "{sorted}");
    assert_eq!(sorted.lines().count(), 4, "{sorted}");
    // --since: everything was recorded within the last 2 hours, nothing since tomorrow's date.
    for since in ["2 hours ago", "2h", "today"] {
        assert_eq!(domains(&list(&["--since", since])).len(), 3, "{since}");
    }
    let run = fx
        .clinv(&["snapshots", "list", "--since", "2999-01-01"])
        .run()
        .success();
    assert!(
        run.stdout.is_empty() && run.stderr.contains("no snapshots"),
        "{}",
        run.stderr
    );
    let bad = fx
        .clinv(&["snapshots", "list", "--since", "2 months ago"])
        .run();
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    // References: now is the newest; yesterday had none.
    let show = |r: &str| {
        fx.clinv(&["snapshots", "--domain", "prod.acme.example", "show", r])
            .run()
    };
    assert_eq!(
        show("@0 seconds ago").success().stdout,
        show("latest").success().stdout
    );
    let none = show("@yesterday");
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert!(none.stderr.contains("yesterday"), "{}", none.stderr);
}

/// `log -A`: every domain's changes merged newest first, each naming its domain; the
/// window, --max-count, --oneline and -o json as for one domain.
fn log_of_every_domain() {
    let fx = Fx::new();
    fx.publish("prod.acme.example").success();
    fx.publish("lab.acme.example").success();
    set_chart_version(fx.root(), "cilium", "1.20.1");
    fx.publish("prod.acme.example").success();
    let log = |args: &[&str]| {
        fx.clinv(&[&["log", "-A"][..], args].concat())
            .run()
            .success()
    };
    // --oneline: one line per event (issue 40: a change several domains made within a
    // day is one line naming them); here the two first steps are one event.
    let oneline = log(&["--oneline"]).stdout;
    let lines: Vec<&str> = oneline.lines().collect();
    assert_eq!(lines.len(), 2, "{oneline}");
    assert!(
        lines[0].starts_with("~ cilium 1.19.2 → 1.20.1 (upgrade)")
            && lines[0].ends_with("  1 domain: prod.acme.example"),
        "{oneline}"
    );
    assert!(
        lines[1].starts_with("first recorded step")
            && lines[1].ends_with("  2 domains: prod.acme.example, lab.acme.example"),
        "{oneline}"
    );
    // Aligned: the time starts in one column on every line.
    let col: Vec<usize> = lines
        .iter()
        .map(|l| l.split("  20").next().unwrap().chars().count())
        .collect();
    assert!(col.windows(2).all(|w| w[0] == w[1]), "{oneline}");
    // --max-count counts the newest steps of the merge, whichever domains they come
    // from, before they are grouped.
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let newest = log(&["--oneline", "--max-count", "1"]).stdout;
    assert_eq!(
        newest.lines().map(words).collect::<Vec<_>>(),
        [words(lines[0])]
    );
    let two = log(&["--oneline", "--max-count", "2"]).stdout;
    assert!(two.ends_with("  1 domain: lab.acme.example\n"), "{two}");
    let all = log(&["--oneline", "--max-count", "3"]).stdout;
    assert_eq!(all, oneline);
    let json: Vec<serde_json::Value> = serde_json::from_str(&log(&["-o", "json"]).stdout).unwrap();
    assert_eq!(json.len(), 3);
    assert_eq!(json[1]["domain"], "lab.acme.example");
    assert_eq!(json[1]["initial"], true);
    let text = log(&[]).stdout;
    assert!(text.starts_with("prod.acme.example  #2  "), "{text}");
    assert!(text.contains("\nlab.acme.example  #1  "), "{text}");
    // An empty window: no data, a line that says so, exit 0.
    let empty = log(&["--since", "2999-01-01"]);
    assert!(empty.stdout.is_empty(), "{}", empty.stdout);
    assert_has(
        &empty.stderr,
        "no recorded step of any domain since 2999-01-01",
    );
    // One domain or all of them, not both.
    let both = fx
        .clinv(&["log", "-A", "--domain", "lab.acme.example"])
        .run();
    assert_eq!(both.code, 2, "{}", both.stderr);
}

trials! {
    Nothing: [
        log_of_every_domain,
        list_since_sort_by_and_relative_references,
        the_project_local_store_never_reaches_git,
        store_only_use_is_discoverable_and_no_op_is_silent,
        one_word_per_state,
        replay_goes_where_the_publish_was_aimed,
        an_unreachable_publish_is_queued_with_its_reason_and_target_and_no_secrets,
        identical_inventories_fold_into_one_snapshot_with_their_events,
        references_and_filters,
        damage_is_reported_with_its_path_and_skipped_never_deleted,
        a_torn_journal_tail_and_a_stale_lock_are_not_fatal,
        publishes_killed_at_random_points_lose_nothing_that_completed,
        twenty_concurrent_publishes_all_land,
        gc_keeps_the_first_the_newest_and_every_pending_snapshot,
        export_and_import_round_trip_without_overwriting,
        import_counts_add_up_with_folded_publishes,
        import_refuses_a_record_that_differs_from_the_held_one_of_its_id,
    ],
}
