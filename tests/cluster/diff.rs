//! `clinv diff` with the live object (`cluster`) as one side.

use crate::plane;
use crate::support::*;

/// The text after `clinv diff`'s two header lines and the blank line after them.
fn body(stdout: &str) -> &str {
    let mut parts = stdout.splitn(3, '\n');
    let (a, b) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    assert!(
        a.starts_with("--- ") && b.starts_with("+++ "),
        "no header:\n{stdout}"
    );
    parts
        .next()
        .and_then(|r| r.strip_prefix('\n'))
        .unwrap_or("")
}

fn the_live_object_diffs_against_rendered_files() {
    let p = plane();
    let dir = copy_tree(&example());
    let root = dir.path();
    let kc = p.admin.to_str().unwrap();
    let root_s = root.to_str().unwrap();
    let base = [
        "--root",
        root_s,
        "--domain",
        "prod.acme.example",
        "--kubeconfig",
        kc,
    ];
    let mut args = vec!["publish"];
    args.extend_from_slice(&base);
    clinv(&args).run().success();
    // Status from another manager and the server's metadata never count.
    let status = r#"{"status":{"lastReported":"2026-07-06T12:00:00Z"}}"#;
    p.patch_status_as("kubehz-agent", status);
    let out = tempfile::tempdir().unwrap();
    let before = out.path().join("before.yaml");
    let mut render = vec!["render"];
    render.extend_from_slice(&base[..4]);
    std::fs::write(&before, clinv(&render).run().success().stdout).unwrap();
    let diff = |a: &str, b: &str| {
        let mut args = vec!["diff", a, b];
        args.extend_from_slice(&base);
        clinv(&args).run()
    };
    let run = diff(before.to_str().unwrap(), "cluster");
    assert_eq!(
        (run.code, body(&run.stdout)),
        (0, "no changes\n"),
        "{}",
        run.stderr
    );
    // The header names the live object as the side `cluster` resolved to.
    assert!(
        run.stdout.lines().nth(1).is_some_and(|l| l.starts_with("+++ cluster")
            && l.contains("  live object, rendered ")),
        "{}",
        run.stdout
    );
    // kubectl's own dump, with managedFields and status, on stdin.
    let (_, dump, _) = p.kubectl(&[
        "get",
        "clinv",
        "cluster",
        "-o",
        "yaml",
        "--show-managed-fields",
    ]);
    assert!(dump.contains("managedFields") && dump.contains("lastReported"));
    let mut args = vec!["diff", "-", before.to_str().unwrap()];
    args.extend_from_slice(&base);
    let run = clinv(&args).stdin(dump).run();
    assert_eq!(
        (run.code, body(&run.stdout)),
        (0, "no changes\n"),
        "{}",
        run.stderr
    );
    // A local change shows against the cluster until it is published.
    edit_prod_spec(root, "    - metrics-server\n", "");
    let after = out.path().join("after.yaml");
    std::fs::write(&after, clinv(&render).run().success().stdout).unwrap();
    let run = diff("cluster", after.to_str().unwrap());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stdout, "- metrics-server 3.12.2\n");
    assert!(run.stdout.contains("~ specHash "), "{}", run.stdout);
}

trials! {
    Plane: [
        the_live_object_diffs_against_rendered_files,
    ],
}
