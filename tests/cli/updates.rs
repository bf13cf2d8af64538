use crate::https::Server;
use crate::support::*;
use std::path::{Path, PathBuf};

fn index_fixture() -> PathBuf {
    fixture("updates/index.json")
}

fn dump_fixture() -> PathBuf {
    fixture("updates/kubectl-get-list.yaml")
}

/// `updates` on the example's prod domain: no cluster (KUBECONFIG points nowhere) and an
/// empty snapshot store, so the rendered inventory is compared.
fn rendered(index: &str, extra: &[&str]) -> Run {
    let store = tempfile::tempdir().unwrap();
    let root = example();
    clinv(&["updates", "--index", index])
        .project(&root, "prod.acme.example")
        .args(extra)
        .store(store.path())
        .run()
}

fn from_dump(index: &str, extra: &[&str]) -> Clinv {
    let dump = dump_fixture();
    clinv(&[
        "updates",
        "--from",
        dump.to_str().unwrap(),
        "--index",
        index,
    ])
    .args(extra)
}

/// The bundled index (examples/addons-index.json) is one the example project could
/// publish: `clinv index`'s shape and names, newer versions; `updates` finds them.
fn the_example_index_is_a_published_index_of_the_example() {
    let root = example();
    let published = clinv(&["index", "--root", root.to_str().unwrap()])
        .run()
        .success();
    let published: serde_json::Value = serde_json::from_str(&published.stdout).unwrap();
    let bundled = repo().join("examples/addons-index.json");
    let text = std::fs::read_to_string(&bundled).unwrap();
    let example: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["addons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&example), names(&published));
    let updates = clinv(&[
        "updates",
        "--index",
        bundled.to_str().unwrap(),
        "--offline",
        "-o",
        "json",
    ])
    .project(&root, "prod.acme.example")
    .run()
    .success();
    let v: serde_json::Value = serde_json::from_str(&updates.stdout).unwrap();
    assert!(v["updates"].as_array().unwrap().len() >= 3, "{v}");
}

fn rendered_inventory_table_and_json_match_their_golden_files() {
    let index = index_fixture();
    let table = rendered(index.to_str().unwrap(), &["-v"]).success();
    golden("updates.prod.acme.example.txt", &table.stdout);
    assert_has(
        &table.stderr,
        "compared the inventory rendered for prod.acme.example with ",
    );
    let json = rendered(index.to_str().unwrap(), &["-o", "json"]).success();
    golden("updates.prod.acme.example.json", &json.stdout);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["inventory"], "rendered");
    // Leading v on one side only and a pair that is not SemVer (unordered); equal, older,
    // pre-release-of-current and (without --pre) a pre-release above a release are absent.
    let names: Vec<&str> = fields(&v["updates"], "name");
    assert_eq!(names, ["cilium", "metrics-server"]);
    assert_eq!(v["updates"][1]["unordered"], true);
    assert!(v["updates"][0].get("unordered").is_none());
}

fn a_kubectl_dump_is_compared_with_first_wins_and_unversioned_targets_skipped() {
    let index = index_fixture();
    let table = from_dump(index.to_str().unwrap(), &[]).run().success();
    golden("updates.kubectl-dump.txt", &table.stdout);
    let json = from_dump(index.to_str().unwrap(), &["-o", "json"])
        .run()
        .success();
    golden("updates.kubectl-dump.json", &json.stdout);
    // No project is needed with --from.
    let elsewhere = tempfile::tempdir().unwrap();
    let run = from_dump(index.to_str().unwrap(), &[])
        .cwd(elsewhere.path())
        .run()
        .success();
    assert_eq!(run.stdout, table.stdout);
}

fn nothing_newer_says_so_and_json_has_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let index = write(
        dir.path(),
        "index.json",
        r#"{"generatedAt": "2026-01-01T00:00:00Z", "addons": [{"name": "cilium", "chartVersion": "1.19.2"}]}"#,
    );
    let run = rendered(index.to_str().unwrap(), &[]).success();
    assert_eq!(
        run.stdout,
        "no updates: every compared addon is at or above its version in the index.\n"
    );
    let run = rendered(index.to_str().unwrap(), &["-o", "json"]).success();
    assert_eq!(
        run.stdout,
        "{\n  \"inventory\": \"rendered\",\n  \"live\": false,\n  \"notRead\": null,\n  \"indexGeneratedAt\": \"2026-01-01T00:00:00Z\",\n  \"updates\": []\n}\n"
    );
}

fn malformed_inputs_are_clear_errors_naming_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "[1, 2]",
            "not a JSON addon index: the top level is an array, not an object",
        ),
        (
            "{\"addons\": 5}",
            "addons: expected an array, found a number",
        ),
        (
            "{\"addons\": [{\"name\": \"a\", \"chartVersion\": [1]}]}",
            "addons[0].chartVersion: expected a string, found an array",
        ),
        ("{\"addons\": [{}]}", "addons[0].name: missing or empty"),
        (
            "{\"addons\": [",
            "not a JSON addon index: EOF while parsing",
        ),
        ("\u{0}\u{1}binary", "not a JSON addon index: "),
    ];
    for (text, want) in cases {
        let path = write(dir.path(), "bad.json", text);
        let run = rendered(path.to_str().unwrap(), &[]);
        assert_eq!(run.code, 1, "{text}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        let expected = format!("[error] {}: {want}", path.display());
        assert!(run.stderr.contains(&expected), "{text}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"));
    }
    let missing = rendered("/nonexistent/index.json", &[]);
    assert_eq!(missing.code, 1);
    assert_has(&missing.stderr, "/nonexistent/index.json");
    // A --from file without an inventory, or with a wrong type, names file and field.
    let pod = write(dir.path(), "pod.yaml", "apiVersion: v1\nkind: Pod\n");
    let run = clinv(&[
        "updates",
        "--from",
        pod.to_str().unwrap(),
        "--index",
        index_fixture().to_str().unwrap(),
    ])
    .run();
    assert_eq!(run.code, 1);
    assert_has(
        &run.stderr,
        "pod.yaml: no ClusterInventory object (found kind Pod)",
    );
    let typed = write(
        dir.path(),
        "cr.json",
        r#"{"apiVersion": "lok8s.dev/v1alpha1", "kind": "ClusterInventory", "metadata": {"name": "cluster"},
            "spec": {"lok8sVersion": "1", "kind": "lo", "specHash": "h", "renderedAt": "2026-01-01T00:00:00Z",
                "addons": [{"name": "a", "chartVersion": 1.2}]}}"#,
    );
    let run = clinv(&[
        "updates",
        "--from",
        typed.to_str().unwrap(),
        "--index",
        index_fixture().to_str().unwrap(),
    ])
    .run();
    assert_eq!(run.code, 1);
    assert_has(
        &run.stderr,
        "cr.json: spec.addons[0].chartVersion: expected a string, found a number",
    );
    // Plain HTTP and unsupported output formats are usage errors.
    assert_eq!(rendered("http://127.0.0.1:1/i.json", &[]).code, 2);
    assert_eq!(
        rendered(index_fixture().to_str().unwrap(), &["-o", "toml"]).code,
        2
    );
}

fn cache_file(cache_home: &Path, url: &str) -> PathBuf {
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(url.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    cache_home.join("clinv/index").join(format!("{hex}.json"))
}

fn a_url_index_is_fetched_over_https_cached_and_used_offline() {
    let body = std::fs::read(index_fixture()).unwrap();
    let mut server = Server::start(200, &body);
    let url = server.url("/addons-index.json?rev=7");
    let cache = tempfile::tempdir().unwrap();
    let ca = server.ca.to_str().unwrap().to_string();
    let with_cache = |c: Clinv| c.env("XDG_CACHE_HOME", cache.path().to_str().unwrap());
    let expected = from_dump(index_fixture().to_str().unwrap(), &[])
        .run()
        .success()
        .stdout;

    let run = with_cache(from_dump(&url, &["--index-ca", &ca]))
        .run()
        .success();
    assert_eq!(run.stdout, expected);
    assert_eq!(server.hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The query (it may carry a token) is not printed.
    assert!(!run.stderr.contains("rev=7"), "{}", run.stderr);
    let cached = cache_file(cache.path(), &url);
    assert_eq!(std::fs::read(&cached).unwrap(), body);

    // --offline reads the cache and never connects.
    let run = with_cache(from_dump(&url, &["--offline"])).run().success();
    assert_eq!(run.stdout, expected);
    assert_eq!(server.hits.load(std::sync::atomic::Ordering::SeqCst), 1);

    // The server is gone: the fetch fails, the cache answers, with a warning.
    server.stop();
    let run = with_cache(from_dump(&url, &["--index-ca", &ca]))
        .run()
        .success();
    assert_eq!(run.stdout, expected);
    assert_has(
        &run.stderr,
        &format!(
            "[warn] index: addon index https://127.0.0.1:{}/addons-index.json?…: ",
            server.port
        ),
    );
    assert_has(&run.stderr, "— using the cached copy");
    // Without a cache, the same failure is an error.
    let empty = tempfile::tempdir().unwrap();
    let run = from_dump(&url, &["--index-ca", &ca])
        .env("XDG_CACHE_HOME", empty.path().to_str().unwrap())
        .run();
    assert_eq!(run.code, 1, "{}", run.stderr);
    let run = from_dump(&url, &["--offline"])
        .env("XDG_CACHE_HOME", empty.path().to_str().unwrap())
        .run();
    assert_eq!(run.code, 1);
    assert_has(&run.stderr, "--offline, and no cached copy");
}

fn the_cache_defaults_to_home_and_bad_answers_are_not_cached() {
    let body = std::fs::read(index_fixture()).unwrap();
    let server = Server::start(200, &body);
    let url = server.url("/i.json");
    let home = tempfile::tempdir().unwrap();
    from_dump(&url, &["--index-ca", server.ca.to_str().unwrap()])
        .env("HOME", home.path().to_str().unwrap())
        .run()
        .success();
    assert!(cache_file(&home.path().join(".cache"), &url).is_file());

    // An untrusted certificate (the built-in web roots do not know the test CA).
    let run = from_dump(&url, &[])
        .env("HOME", home.path().to_str().unwrap())
        .run()
        .success();
    assert!(run.stderr.contains("certificate"), "{}", run.stderr);
    assert_has(&run.stderr, "using the cached copy");

    // HTTP errors and a body that is not an index are errors, and never cached.
    let not_found = Server::start(404, b"{\"message\": \"no\"}");
    let garbage = Server::start(200, b"{\"addons\": [{\"name\": 7}]}");
    let fresh = tempfile::tempdir().unwrap();
    for (server, want) in [
        (&not_found, "HTTP 404".to_string()),
        (
            &garbage,
            "addons[0].name: expected a string, found a number".to_string(),
        ),
    ] {
        let url = server.url("/i.json");
        let run = from_dump(&url, &["--index-ca", server.ca.to_str().unwrap()])
            .env("XDG_CACHE_HOME", fresh.path().to_str().unwrap())
            .run();
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stderr.contains(&want), "{}", run.stderr);
        assert!(!cache_file(fresh.path(), &url).exists());
    }
    // A CA file that holds no certificate is named.
    let dir = tempfile::tempdir().unwrap();
    let bad_ca = write(dir.path(), "ca.pem", "not a certificate\n");
    let run = from_dump(&url, &["--index-ca", bad_ca.to_str().unwrap()])
        .env("XDG_CACHE_HOME", fresh.path().to_str().unwrap())
        .run();
    assert_eq!(run.code, 1);
    assert_has(&run.stderr, "ca.pem: no PEM certificate");
}

/// Issue #24, point 1: a pending snapshot never reached the cluster and is not taken for
/// it; the snapshot applied last is, before the render.
fn without_a_cluster_the_snapshot_applied_last_comes_before_the_render() {
    let dir = copy_tree(&example());
    let root = dir.path();
    let store = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| clinv(args).store(store.path()).run().success();
    let r = root.to_str().unwrap();
    // A publish without a cluster queues a snapshot (cilium 1.19.2) ...
    run(&["publish", "--root", r, "--domain", "prod.acme.example"]);
    // ... then the project moves on (cilium 1.18.0, not deployed anywhere yet).
    write(
        root,
        ".lok8s/addons/cilium/chart.yaml",
        "kind: ChartRenderer\nversion: 1.18.0\n",
    );
    let index = index_fixture();
    let args = [
        "updates",
        "--root",
        r,
        "--domain",
        "prod.acme.example",
        "--index",
        index.to_str().unwrap(),
        "-o",
        "json",
        "-v",
    ];
    let out = run(&args);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["inventory"], "rendered",
        "the pending snapshot is not used"
    );
    assert_eq!(v["updates"][0]["current"], "1.18.0");
    // Once the store says it was applied, the snapshot is what the cluster holds.
    mark_applied(&store.path().join("prod.acme.example"));
    let out = run(&args);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["inventory"], "snapshot");
    assert_eq!(v["updates"][0]["current"], "1.19.2");
    assert_has(&out.stderr, "compared the inventory of snapshot ");
    assert!(out.stderr.contains("(applied, recorded "), "{}", out.stderr);
    // An empty store falls through to the render.
    let empty = tempfile::tempdir().unwrap();
    let out = clinv(&args).store(empty.path()).run().success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["inventory"], "rendered");
    assert_eq!(v["updates"][0]["current"], "1.18.0");
}

/// An index URL is fetched through the proxy `HTTPS_PROXY` names (a real tinyproxy on
/// loopback), straight when `NO_PROXY` covers the index host, and through a proxy that
/// requires credentials without printing them.
fn the_index_is_fetched_through_https_proxy_unless_no_proxy_covers_it() {
    use crate::loopback_proxy::Tinyproxy;
    const PASSWORD: &str = "FAKESECRET-index-proxy-password-3d7a";
    let body = std::fs::read(index_fixture()).unwrap();
    let server = Server::start(200, &body);
    let url = server.url("/addons-index.json");
    let host = format!("127.0.0.1:{}", server.port);
    let ca = server.ca.to_str().unwrap().to_string();
    let expected = from_dump(index_fixture().to_str().unwrap(), &[])
        .run()
        .success()
        .stdout;
    let fetch = |env: &[(&str, &str)]| {
        let cache = tempfile::tempdir().unwrap();
        let mut cmd = from_dump(&url, &["--index-ca", &ca, "-v"])
            .env("XDG_CACHE_HOME", cache.path().to_str().unwrap());
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        cmd.run()
    };
    let hits = || server.hits.load(std::sync::atomic::Ordering::SeqCst);

    let proxy = Tinyproxy::start(None);
    let run = fetch(&[("HTTPS_PROXY", &proxy.url())]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, proxy.log());
    assert_eq!(run.stdout, expected);
    assert_eq!((proxy.tunnels(&host), hits()), (1, 1), "{}", proxy.log());
    for no_proxy in ["127.0.0.1", "*"] {
        let run = fetch(&[("HTTPS_PROXY", &proxy.url()), ("NO_PROXY", no_proxy)]);
        assert_eq!(run.code, 0, "NO_PROXY={no_proxy}: {}", run.stderr);
        assert_eq!(
            proxy.tunnels(&host),
            1,
            "NO_PROXY={no_proxy}: {}",
            proxy.log()
        );
    }
    drop(proxy);

    let proxy = Tinyproxy::start(Some(("ops", PASSWORD)));
    let before = hits();
    let run = fetch(&[("HTTPS_PROXY", &proxy.url_with("ops", PASSWORD))]);
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, proxy.log());
    assert_eq!(
        (proxy.tunnels(&host), hits()),
        (1, before + 1),
        "{}",
        proxy.log()
    );
    let wrong = fetch(&[(
        "HTTPS_PROXY",
        &proxy.url_with("ops", "FAKESECRET-wrong-77e1"),
    )]);
    assert_ne!(wrong.code, 0, "{}", wrong.stderr);
    for run in [&run, &wrong] {
        assert!(
            !run.stdout.contains("FAKESECRET") && !run.stderr.contains("FAKESECRET"),
            "{}{}",
            run.stdout,
            run.stderr
        );
    }
}

trials! {
    Nothing: [
        rendered_inventory_table_and_json_match_their_golden_files,
        the_example_index_is_a_published_index_of_the_example,
        a_kubectl_dump_is_compared_with_first_wins_and_unversioned_targets_skipped,
        nothing_newer_says_so_and_json_has_an_empty_list,
        malformed_inputs_are_clear_errors_naming_file_and_field,
        a_url_index_is_fetched_over_https_cached_and_used_offline,
        the_cache_defaults_to_home_and_bad_answers_are_not_cached,
        without_a_cluster_the_snapshot_applied_last_comes_before_the_render,
    ],
    Tinyproxy: [
        the_index_is_fetched_through_https_proxy_unless_no_proxy_covers_it,
    ],
}
