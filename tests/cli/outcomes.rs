//! Honest outcomes without a cluster: user mistakes are refused (exit 2) instead of
//! queued, an unparsable SOURCE_DATE_EPOCH is said, and `--strict` catches every warning.

use crate::store::dead_kubeconfig;
use crate::support::*;
use std::path::{Path, PathBuf};

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

    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root().to_str().unwrap().to_string();
        let mut all = vec!["--root", root.as_str()];
        all.extend_from_slice(args);
        clinv(&all).env(
            "CLINV_SNAPSHOTS",
            self.root().join("snapshots").to_str().unwrap(),
        )
    }

    fn snapshots(&self) -> Vec<serde_json::Value> {
        let run = self
            .clinv(&["snapshots", "list", "-o", "json"])
            .run()
            .success();
        serde_json::from_str(&run.stdout).unwrap()
    }
}

const PROD: &str = "prod.acme.example";

fn a_named_kubeconfig_or_context_that_does_not_exist_is_refused_not_queued() {
    let fx = Fx::new();
    let kc = fx.kc.to_str().unwrap();
    // kubectl refuses both; so does every delivery (exit 2), and nothing is recorded.
    let cases: [(&[&str], &str); 3] = [
        (
            &["--kubeconfig", "/nonexistent/kc"],
            "kubeconfig not found (/nonexistent/kc)",
        ),
        (
            &["--kubeconfig", kc, "--context", "nope"],
            "--context nope: no such context in ",
        ),
        (
            &["--kubeconfig", kc, "--context", "dead-cxt"],
            " — did you mean 'dead-ctx'?",
        ),
    ];
    let run_all = |verb: &str| {
        for (extra, said) in &cases {
            let mut args = vec![verb, "--domain", PROD];
            args.extend_from_slice(extra);
            let run = fx.clinv(&args).run();
            assert_eq!(run.code, 2, "{verb} {extra:?}: {}", run.stderr);
            assert!(
                run.stderr.starts_with("[error] ") && run.stderr.contains(said),
                "{verb} {extra:?}: {}",
                run.stderr
            );
            assert!(!run.stderr.contains("queued"), "{}", run.stderr);
        }
    };
    run_all("publish");
    assert!(
        fx.snapshots().is_empty(),
        "a refused publish recorded a snapshot"
    );
    // Not named by the user (KUBECONFIG, ~/.kube/config): a missing file is the
    // offline case, queued for replay.
    let run = fx.clinv(&["publish", "--domain", PROD]).run().success();
    assert_has(&run.stderr, "recorded as pending snapshot");
    // Replay refuses the mistakes before touching the queue.
    run_all("replay");
    assert_eq!(fx.snapshots().len(), 1);
    // A context that exists, on a server that refuses: queued as well.
    let run = fx
        .clinv(&["publish", "--context", "dead-ctx", "--domain", PROD])
        .kubeconfig(kc)
        .run()
        .success();
    assert_has(&run.stderr, "recorded as pending snapshot");
    assert!(fx.snapshots().iter().all(|s| s["state"] == "pending"));
}

fn an_unparsable_source_date_epoch_is_warned_about_and_strict_refuses_it() {
    let fx = Fx::new();
    let render = fx
        .clinv(&["render", "--domain", PROD, "-o", "json"])
        .env("SOURCE_DATE_EPOCH", "2026-12-01")
        .run()
        .success();
    // The output stays lok8s's: an unparsable value is 1970.
    let cr: serde_json::Value = serde_json::from_str(&render.stdout).unwrap();
    assert_eq!(cr["spec"]["renderedAt"], "1970-01-01T00:00:00Z");
    assert_has(
        &render.stderr,
        "[warn] SOURCE_DATE_EPOCH \"2026-12-01\" is not a whole number of seconds: renderedAt is 1970-01-01T00:00:00Z",
    );
    let publish = fx
        .clinv(&["publish", "--domain", PROD])
        .env("SOURCE_DATE_EPOCH", "2026-12-01")
        .run()
        .success();
    assert!(
        publish.stderr.starts_with("[warn] SOURCE_DATE_EPOCH"),
        "{}",
        publish.stderr
    );
    for verb in ["render", "publish"] {
        let run = fx
            .clinv(&[verb, "--domain", PROD, "--strict"])
            .env("SOURCE_DATE_EPOCH", "2026-12-01")
            .run();
        assert_eq!(run.code, 1, "{verb}: {}", run.stderr);
        assert!(run.stderr.contains("SOURCE_DATE_EPOCH"), "{}", run.stderr);
    }
    // A valid value says nothing.
    let run = fx
        .clinv(&["render", "--domain", PROD])
        .env("SOURCE_DATE_EPOCH", " 1700000000\n")
        .run()
        .success();
    assert!(!run.stderr.contains("SOURCE_DATE_EPOCH"), "{}", run.stderr);
}

/// Issue 39 (13): an export that would leave an object out fails without `--strict`:
/// refused with nothing written, or (`--allow-damage`) written and still exit 1.
fn an_export_missing_an_object_fails_without_strict() {
    let fx = Fx::new();
    fx.clinv(&["publish", "--domain", PROD]).run().success();
    let objects = fx.root().join("snapshots").join(PROD).join("objects");
    let first = std::fs::read_dir(&objects)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_file())
        .unwrap();
    std::fs::remove_file(&first).unwrap();
    let name = first.file_name().unwrap().to_str().unwrap().to_string();
    let tar = fx.root().join("out.tar");
    let run = fx
        .clinv(&["snapshots", "export", tar.to_str().unwrap()])
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, &name);
    assert_has(&run.stderr, "no archive written");
    assert!(!tar.exists());
    let run = fx
        .clinv(&[
            "snapshots",
            "export",
            "--allow-damage",
            tar.to_str().unwrap(),
        ])
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(
        &run.stderr,
        &format!("[warn] left out of the archive: {PROD}/objects/{name}"),
    );
    assert!(tar.exists());
}

trials! {
    Nothing: [
        a_named_kubeconfig_or_context_that_does_not_exist_is_refused_not_queued,
        an_unparsable_source_date_epoch_is_warned_about_and_strict_refuses_it,
        an_export_missing_an_object_fails_without_strict,
    ],
}
