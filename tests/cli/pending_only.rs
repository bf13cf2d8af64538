//! `status --offline` of a domain with only pending snapshots (issue 40, item 8): it
//! says so on stdout and in JSON — nothing applied yet, how many are pending and since
//! when — with status's exit code for nothing to show (0; `--strict`: 10).

use crate::support::*;

const DOMAIN: &str = "lab.acme.example";

struct Fx {
    root: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Fx {
    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root.path().to_str().unwrap().to_string();
        clinv(&[&["--root", root.as_str()][..], args].concat()).store(self.store.path())
    }
}

/// The example with lab's kubeconfig refused and `n` snapshots of lab published (each
/// a different inventory, so each is its own snapshot).
fn pending(n: u32) -> Fx {
    let fx = Fx {
        root: copy_tree(&example()),
        store: tempfile::tempdir().unwrap(),
    };
    let port = refused_port();
    write(
        fx.root.path(),
        ".kubeconfig/lab.yaml",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
        ),
    );
    let spec = fx
        .root
        .path()
        .join(format!("clusters/{DOMAIN}/cluster.lok8s.yaml"));
    let text = std::fs::read_to_string(&spec).unwrap();
    for i in 0..n {
        std::fs::write(&spec, format!("{text}# {i}\n")).unwrap();
        let run = fx
            .clinv(&["publish", "--domain", DOMAIN])
            .env("SOURCE_DATE_EPOCH", &(1_800_000_000 + i).to_string())
            .run()
            .success();
        assert_has(&run.stderr, "recorded as pending snapshot");
    }
    fx
}

/// The recorded time of the oldest of the domain's snapshots, and how many there are.
fn oldest(fx: &Fx) -> (String, usize) {
    let run = fx
        .clinv(&["snapshots", "list", "-o", "json"])
        .run()
        .success();
    let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    assert!(v.iter().all(|s| s["state"] == "pending"), "{v:?}");
    let at = v.last().unwrap()["at"].as_str().unwrap().to_string();
    (at, v.len())
}

fn status_offline_says_nothing_is_applied_yet_and_what_is_pending() {
    let fx = pending(2);
    let (since, n) = oldest(&fx);
    assert_eq!(n, 2);
    let said = format!(
        "nothing applied yet; 2 snapshot(s) pending since {since} (clinv replay delivers them)"
    );
    let run = fx.clinv(&["status", "--domain", DOMAIN, "--offline"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stdout, &said);
    assert_has(&run.stdout, "--- Delivery (lab.acme.example) ---");
    assert_has(&run.stdout, "  last applied: never\n");
    assert_has(&run.stdout, "  queue:        2 pending, oldest ");
    // --strict: status's code for nothing to show, the same text on stdout.
    let strict = fx
        .clinv(&["--strict", "status", "--domain", DOMAIN, "--offline"])
        .run();
    assert_eq!(strict.code, 10, "{}", strict.stderr);
    assert_has(&strict.stdout, &said);

    let json = fx
        .clinv(&["status", "--domain", DOMAIN, "--offline", "-o", "json"])
        .run();
    assert_eq!(json.code, 0, "{}", json.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", json.stdout));
    assert_eq!(doc["schemaVersion"], 3);
    assert_eq!(doc["domain"], DOMAIN);
    assert_eq!(doc["source"], "none");
    assert_eq!(doc["live"], false);
    assert_eq!(doc["notRead"], serde_json::Value::Null);
    assert_eq!(doc["snapshot"], serde_json::Value::Null);
    assert_eq!(doc["lastApplied"], serde_json::Value::Null);
    assert_eq!(doc["inventory"], serde_json::Value::Null);
    assert_eq!(doc["queue"]["pending"], 2);
    assert_eq!(doc["queue"]["oldestPendingAt"], since.as_str());
    assert_eq!(doc["nothingApplied"], said.as_str());
}

/// A domain with nothing at all in the store: nothing applied, nothing pending.
fn status_offline_of_a_domain_without_snapshots_says_so() {
    let fx = pending(0);
    let run = fx.clinv(&["status", "--domain", DOMAIN, "--offline"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_has(&run.stdout, "nothing applied yet; nothing pending");
    assert_has(&run.stdout, "  queue:        empty\n");
}

trials! {
    Nothing: [
        status_offline_says_nothing_is_applied_yet_and_what_is_pending,
        status_offline_of_a_domain_without_snapshots_says_so,
    ],
}
