//! Path traversal through every name the user or a project gives: domains, `--out`,
//! `commit --path` and `--repo`, snapshot ids, `diff` references.

use super::*;

const TRAVERSING_DOMAINS: [&str; 8] = [
    "../x",
    "/etc",
    "a/b",
    "..",
    ".",
    "-rf",
    "inv/../../etc",
    "inv\0x",
];

fn domain_refused(cmd: &[&str]) {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let before = (tree(dir.path()), tree(store.path()));
    for domain in TRAVERSING_DOMAINS {
        if domain.contains('\0') {
            continue; // not passable as an argument; covered by DOMAIN_NAME below
        }
        let flag = format!("--domain={domain}");
        let mut args = cmd.to_vec();
        args.extend(["--root", dir.path().to_str().unwrap(), &flag]);
        let run = bounded(&args).store(store.path()).run();
        assert_clean_failure(&run, &format!("invalid domain name '{domain}'"));
    }
    assert_unchanged(&before.0, dir.path());
    assert_unchanged(&before.1, store.path());
}

fn traversing_domains_are_refused_by_render() {
    domain_refused(&["render"]);
}

fn traversing_domains_are_refused_by_publish() {
    let kc = offline_kubeconfig();
    domain_refused(&["publish", "--kubeconfig", kc.to_str().unwrap()]);
}

fn traversing_domains_are_refused_by_replay_and_snapshot_export() {
    domain_refused(&["replay"]);
    domain_refused(&["log"]);
}

fn traversing_domain_name_env_and_active_file() {
    let dir = project();
    let run = bounded(&["render", "--root", dir.path().to_str().unwrap()])
        .env("DOMAIN_NAME", "../../etc")
        .run();
    assert_clean_failure(&run, "invalid domain name '../../etc'");
    // clusters/.active naming a traversal: lok8s ignores an invalid active domain.
    write(dir.path(), "clusters/.active", "../../../etc\n");
    // lok8s warns and ignores it; no lok8s.dev here either: nothing selects a domain.
    let run = bounded(&["render", "--root", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_has(&run.stderr, "invalid domain in clusters/.active, ignoring");
    assert_has(&run.stderr, "[error] no domain selected: ");
    assert!(run.stdout.is_empty());
}

fn export_refuses_traversing_domains() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    queue(dir.path(), store.path());
    let out = tempfile::tempdir().unwrap();
    for domain in ["../inv", "/etc", ".."] {
        let tar = out.path().join("x.tar");
        let run = bounded(&["snapshots", "export", tar.to_str().unwrap()])
            .project(dir.path(), domain)
            .store(store.path())
            .run();
        assert_clean_failure(&run, "invalid domain name");
        assert!(!tar.exists());
    }
}

fn render_out(root: &Path, out: &Path) -> Run {
    bounded(&["render", "--out", out.to_str().unwrap()])
        .project(root, "inv")
        .run()
}

fn render_out_naming_a_file_is_refused_and_the_file_kept() {
    // Regression: the message was "<file>/clusterinventory.crd.yaml: File exists".
    let dir = project();
    let file = write(dir.path(), "out.yaml", "keep me\n");
    let before = tree(dir.path());
    let run = render_out(dir.path(), &file);
    assert_clean_failure(&run, "out.yaml: --out must name a directory");
    assert_unchanged(&before, dir.path());
}

fn render_out_creates_a_missing_parent() {
    // Like `mkdir -p`: a missing parent is created, both files land, no temporaries.
    let dir = project();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("a/b/c");
    render_out(dir.path(), &target).success();
    assert!(target.join("clusterinventory.yaml").is_file());
    assert!(target.join("clusterinventory.crd.yaml").is_file());
    assert_no_temp(out.path());
}

fn render_out_through_a_symlink_writes_where_the_user_pointed() {
    // --out is the user's own choice: a link they name is followed (like cp, tee).
    let dir = project();
    let out = tempfile::tempdir().unwrap();
    let real = out.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, out.path().join("link")).unwrap();
    render_out(dir.path(), &out.path().join("link")).success();
    assert!(real.join("clusterinventory.yaml").is_file());
    assert_no_temp(out.path());
}

fn render_out_under_a_file_parent_is_a_clear_error() {
    let dir = project();
    let out = tempfile::tempdir().unwrap();
    let file = write(out.path(), "f", "x");
    let before = tree(out.path());
    let run = render_out(dir.path(), &file.join("sub"));
    assert_clean_failure(&run, "f/sub");
    assert_unchanged(&before, out.path());
}

/// A git repository with one empty commit and an author configured.
fn repo_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
    ]);
    dir
}

fn commit(root: &Path, repo: &Path, store: &Path, extra: &[&str]) -> Run {
    let args = ["--repo", repo.to_str().unwrap(), "--author", "T <t@t>"];
    bounded(&["commit"])
        .project(root, "inv")
        .args(&args)
        .args(extra)
        .store(store)
        .run()
}

fn commit_path_traversal_is_a_usage_error() {
    let dir = project();
    let repo = repo_dir();
    let store = tempfile::tempdir().unwrap();
    let before = tree(repo.path());
    for (path, why) in [
        ("../x", "no empty, . or .. components"),
        ("a/../../b", "no empty, . or .. components"),
        ("a//b", "no empty, . or .. components"),
        ("/etc/x", "must be a relative path"),
        ("", "must be a relative path"),
        (".git/hooks", "must not point into .git"),
        ("sub/.GIT/x", "must not point into .git"),
    ] {
        let run = commit(dir.path(), repo.path(), store.path(), &["--path", path]);
        assert_failure(&run, 2, why);
        assert_has(&run.stderr, &format!("--path '{path}'"));
    }
    assert_unchanged(&before, repo.path());
}

fn commit_repo_that_is_not_a_repository() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let run = commit(dir.path(), plain.path(), store.path(), &[]);
    assert_clean_failure(&run, "could not find repository");
    assert!(run.stderr.contains(plain.path().to_str().unwrap()));
    assert_eq!(std::fs::read_dir(plain.path()).unwrap().count(), 0);
    let run = commit(
        dir.path(),
        Path::new("/nonexistent/repo"),
        store.path(),
        &[],
    );
    assert_clean_failure(&run, "/nonexistent/repo");
    let file = write(plain.path(), "file", "x");
    let run = commit(dir.path(), &file, store.path(), &[]);
    assert_clean_failure(&run, "file");
}

fn commit_snapshot_ids_that_traverse_are_refused() {
    let dir = project();
    let repo = repo_dir();
    let store = tempfile::tempdir().unwrap();
    queue(dir.path(), store.path());
    for id in ["../x", "/etc/passwd", "zzzz", "abc", "latest~x"] {
        let run = commit(dir.path(), repo.path(), store.path(), &["--snapshot", id]);
        assert_failure(&run, 2, &format!("bad snapshot reference '{id}'"));
    }
}

fn snapshot_ids_that_traverse_are_refused_by_show() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    queue(dir.path(), store.path());
    for id in [
        "../../x",
        "/etc/passwd",
        "..",
        "objects",
        "xyz1",
        "latest~-1",
    ] {
        let run = bounded(&["snapshots", "show", id])
            .project(dir.path(), "inv")
            .store(store.path())
            .run();
        assert_failure(&run, 2, &format!("bad snapshot reference '{id}'"));
    }
    // A hex id that matches nothing is "not found", exit 1.
    let run = bounded(&["snapshots", "show", "ffffffff"])
        .project(dir.path(), "inv")
        .store(store.path())
        .run();
    assert_clean_failure(&run, "no snapshot 'ffffffff'");
}

fn diff_references_that_traverse_or_are_not_hex() {
    let dir = project();
    let store = tempfile::tempdir().unwrap();
    queue(dir.path(), store.path());
    let root = dir.path().to_str().unwrap();
    let run = bounded(&[
        "diff", "--root", root, "--domain", "inv", "../../x", "latest",
    ])
    .store(store.path())
    .run();
    assert_failure(&run, 2, "../../x");
    let run = bounded(&["diff", "/etc/passwd", "latest"])
        .project(root, "inv")
        .store(store.path())
        .run();
    assert_failure(&run, 2, "/etc/passwd: no Kubernetes object found");
    assert!(
        !run.stderr.contains("root:x:"),
        "file content echoed: {}",
        run.stderr
    );
    // Not a snapshot reference, so a file name: not found, named.
    let run = bounded(&[
        "diff", "--root", root, "--domain", "inv", "zz../x", "latest",
    ])
    .store(store.path())
    .run();
    assert_failure(&run, 2, "zz../x: No such file or directory");
}

fn root_that_is_a_file_or_missing() {
    let dir = project();
    let file = write(dir.path(), "file", "x");
    let run = bounded(&["render"]).project(&file, "inv").run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("[error] ") && run.stderr.contains("file"),
        "{}",
        run.stderr
    );
    let run = bounded(&["render"])
        .project("/nonexistent/project", "inv")
        .run();
    assert_clean_failure(&run, "project root not found: /nonexistent/project");
}

trials! {
    Nothing: [
        traversing_domains_are_refused_by_render,
        traversing_domains_are_refused_by_publish,
        traversing_domains_are_refused_by_replay_and_snapshot_export,
        traversing_domain_name_env_and_active_file,
        export_refuses_traversing_domains,
        render_out_naming_a_file_is_refused_and_the_file_kept,
        render_out_creates_a_missing_parent,
        render_out_through_a_symlink_writes_where_the_user_pointed,
        render_out_under_a_file_parent_is_a_clear_error,
        commit_path_traversal_is_a_usage_error,
        commit_repo_that_is_not_a_repository,
        commit_snapshot_ids_that_traverse_are_refused,
        snapshot_ids_that_traverse_are_refused_by_show,
        diff_references_that_traverse_or_are_not_hex,
        root_that_is_a_file_or_missing,
    ],
}
