use crate::support::*;
use std::path::Path;
use std::process::Command;

fn index(root: &Path) -> Run {
    clinv(&["index", "--root", root.to_str().unwrap()]).run()
}

fn the_example_index_matches_its_golden_file_and_repeats_byte_for_byte() {
    let first = index(&example()).success();
    golden("index.acme.json", &first.stdout);
    assert!(first.stderr.is_empty(), "{}", first.stderr);
    for _ in 0..3 {
        assert_eq!(index(&example()).success().stdout, first.stdout);
    }
    // --out writes the same bytes atomically, and nothing on stdout.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("public/addons-index.json");
    let run = clinv(&["index", "--out", out.to_str().unwrap()])
        .root(example())
        .run()
        .success();
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr
            .contains("(7 addons, generatedAt 2023-11-14T22:13:20Z)")
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), first.stdout);
    let names: Vec<_> = std::fs::read_dir(out.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file left behind");
}

/// git with a fixed identity and commit time, and no user or system config.
fn git(dir: &Path, args: &[&str], epoch: i64) {
    let date = format!("@{epoch} +0200");
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn generated_at(stdout: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v["generatedAt"].as_str().unwrap().to_string()
}

fn generated_at_is_the_last_commit_touching_the_addons_then_now() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let no_epoch = |root: &Path| {
        clinv(&["index", "--root", root.to_str().unwrap()])
            .env("SOURCE_DATE_EPOCH", "")
            .run()
            .success()
    };
    // Not a repository: the current time.
    let before = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(2);
    let now = generated_at(&no_epoch(root).stdout);
    let parsed = clinv::util::time::parse_rfc3339(&now).unwrap();
    assert!(
        parsed >= before && parsed <= jiff::Timestamp::now(),
        "{now}"
    );
    assert!(now.ends_with('Z') && now.len() == 20, "{now}");

    git(root, &["init", "-q"], 0);
    git(root, &["add", "."], 0);
    git(root, &["commit", "-q", "-m", "import"], 1_600_000_000);
    // A later commit elsewhere does not move it.
    write(root, "clusters/prod.acme.example/notes.txt", "x");
    git(root, &["add", "."], 0);
    git(root, &["commit", "-q", "-m", "notes"], 1_650_000_000);
    let first = no_epoch(root);
    assert_eq!(generated_at(&first.stdout), "2020-09-13T12:26:40Z");
    // Same commit, same bytes; SOURCE_DATE_EPOCH still wins over git.
    assert_eq!(no_epoch(root).stdout, first.stdout);
    assert_eq!(
        generated_at(&index(root).success().stdout),
        "2023-11-14T22:13:20Z"
    );
    // Uncommitted changes do not count; a commit touching the addons does.
    write(root, ".lok8s/addons/cilium/chart.yaml", "version: 1.20.1\n");
    assert_eq!(generated_at(&no_epoch(root).stdout), "2020-09-13T12:26:40Z");
    git(
        root,
        &["commit", "-q", "-am", "cilium 1.20.1"],
        1_700_000_500,
    );
    let after = no_epoch(root).stdout;
    assert_eq!(generated_at(&after), "2023-11-14T22:21:40Z");
    assert!(after.contains("\"chartVersion\": \"1.20.1\""));
}

fn directories_symlinks_hidden_entries_and_app_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        ".lok8s/addons/b-raw/kustomization.yaml",
        "resources: []\n",
    );
    write(
        root,
        ".lok8s/addons/a-chart/chart.yaml",
        "kind: ChartRenderer\nversion: 2.0.0\nappVersion: v9.1.0\n",
    );
    write(
        root,
        ".lok8s/addons/a-chart/k.yaml",
        "labels:\n  lok8s.dev/category: networking\n",
    );
    write(root, ".lok8s/addons/.hidden/chart.yaml", "version: 1.0.0\n");
    write(root, ".lok8s/addons/plain-file", "version: 1.0.0\n");
    write(
        root,
        ".lok8s/addons/nulls/chart.yaml",
        "version: ~\nappVersion: false\n",
    );
    write(root, "elsewhere/chart.yaml", "version: 3.0.0\n");
    write(root, "elsewhere/x.yaml", "lok8s.dev/category: storage\n");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "chart.yaml", "version: 6.6.6\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(root.join("elsewhere"), root.join(".lok8s/addons/linked")).unwrap();
        symlink(root.join("nowhere"), root.join(".lok8s/addons/dangling")).unwrap();
        symlink(outside.path(), root.join(".lok8s/addons/outside")).unwrap();
    }
    let run = index(root).success();
    assert_eq!(
        run.stdout,
        r#"{
  "generatedAt": "2023-11-14T22:13:20Z",
  "addons": [
    {
      "name": "a-chart",
      "chartVersion": "2.0.0",
      "category": "networking",
      "appVersion": "v9.1.0"
    },
    {
      "name": "b-raw"
    },
    {
      "name": "linked",
      "chartVersion": "3.0.0",
      "category": "storage"
    },
    {
      "name": "nulls"
    },
    {
      "name": "outside"
    }
  ]
}
"#
    );
    assert_has(&run.stderr, "[warn] index: ");
    assert_has(&run.stderr, "outside resolves outside the project root");
    assert!(!run.stdout.contains("6.6.6"));
    let strict = clinv(&["index", "--strict", "--root", root.to_str().unwrap()]).run();
    assert_eq!(strict.code, 1);
    assert!(strict.stdout.is_empty());
}

fn an_empty_or_missing_addons_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".lok8s/addons")).unwrap();
    assert_eq!(
        index(dir.path()).success().stdout,
        "{\n  \"generatedAt\": \"2023-11-14T22:13:20Z\",\n  \"addons\": []\n}\n"
    );
    let bare = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(bare.path().join("clusters")).unwrap();
    let run = index(bare.path());
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert_eq!(
        run.stderr,
        format!(
            "[error] addons dir not found: {}\n",
            bare.path().join(".lok8s/addons").display()
        )
    );
    // A plain file where the directory should be is no addons dir either.
    write(bare.path(), ".lok8s/addons", "");
    assert_eq!(index(bare.path()).code, 1);
}

trials! {
    Nothing: [
        the_example_index_matches_its_golden_file_and_repeats_byte_for_byte,
        generated_at_is_the_last_commit_touching_the_addons_then_now,
        directories_symlinks_hidden_entries_and_app_version,
        an_empty_or_missing_addons_directory,
    ],
}
