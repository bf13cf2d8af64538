//! `replay` after the project's kubeconfigs were regenerated (issue 40, item 7), without a
//! cluster: snapshots published through context `offline` of `.kubeconfig/<name>.yaml`
//! (a refused port, so they are queued), then the files written again with another
//! context name. The replay says what was recorded — never a `--context` the user did not
//! pass — keeps the snapshots pending (bad-kubeconfig, exit 4 with --strict), goes on with
//! the other domains, and names `--retarget`, which delivers through the kubeconfig as it
//! is now.

use crate::support::*;

const DOMAINS: [(&str, &str); 2] = [
    ("lab.acme.example", "lab"),
    ("prod.acme.example", "prod-fsn1"),
];

fn kubeconfig(port: u16, context: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: {context}\n  context: {{cluster: c, user: u}}\ncurrent-context: {context}\n"
    )
}

struct Fx {
    root: tempfile::TempDir,
    store: tempfile::TempDir,
}

impl Fx {
    /// The example project with a snapshot of each of [`DOMAINS`] pending, published
    /// through context `offline`; the kubeconfigs then regenerated with context
    /// `lok8s-<name>` (another refused port).
    fn new() -> Fx {
        let fx = Fx {
            root: copy_tree(&example()),
            store: tempfile::tempdir().unwrap(),
        };
        let refused = refused_port();
        for (domain, name) in DOMAINS {
            fx.write_kubeconfig(name, &kubeconfig(refused, "offline"));
            let run = fx.clinv(&["publish", "--domain", domain]).run().success();
            assert_has(&run.stderr, "recorded as pending snapshot");
        }
        let regenerated = refused_port();
        for (_, name) in DOMAINS {
            let context = format!("lok8s-{name}");
            fx.write_kubeconfig(name, &kubeconfig(regenerated, &context));
        }
        fx
    }

    fn write_kubeconfig(&self, name: &str, text: &str) -> std::path::PathBuf {
        write(self.root.path(), &format!(".kubeconfig/{name}.yaml"), text)
    }

    fn file(&self, name: &str) -> std::path::PathBuf {
        self.root.path().join(format!(".kubeconfig/{name}.yaml"))
    }

    fn clinv(&self, args: &[&str]) -> Clinv {
        let root = self.root.path().to_str().unwrap().to_string();
        clinv(&[&["--root", root.as_str()][..], args].concat()).store(self.store.path())
    }

    /// (domain, id, state, reason) of every snapshot.
    fn snapshots(&self) -> Vec<[String; 4]> {
        let run = self
            .clinv(&["snapshots", "list", "-o", "json"])
            .run()
            .success();
        let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
        v.iter()
            .map(|s| {
                let text = |k: &str| s[k].as_str().unwrap_or("-").to_string();
                [text("domain"), text("id"), text("state"), text("reason")]
            })
            .collect()
    }

    fn id(&self, domain: &str) -> String {
        self.snapshots()
            .into_iter()
            .find(|s| s[0] == domain)
            .map(|s| s[1].clone())
            .unwrap()
    }
}

/// What each domain's replay says when the recorded context is no longer named.
fn recorded(fx: &Fx, domain: &str, name: &str) -> String {
    format!(
        "snapshot {} was published through context 'offline' of {}, which no longer names it (it names: lok8s-{name}); replay --retarget delivers through the domain's kubeconfig as it is now",
        fx.id(domain),
        fx.file(name).display()
    )
}

fn replay_all_says_which_recorded_context_is_gone_and_keeps_the_snapshots_pending() {
    let fx = Fx::new();
    let run = fx.clinv(&["replay", "-A"]).run();
    assert_eq!(run.code, 0, "fail-soft: {}", run.stderr);
    assert!(!run.stderr.contains("--context"), "{}", run.stderr);
    for (domain, name) in DOMAINS {
        assert_has(&run.stderr, &recorded(&fx, domain, name));
        let row = run
            .stdout
            .lines()
            .find(|l| l.starts_with(domain))
            .unwrap_or_else(|| panic!("no row for {domain}: {}", run.stdout));
        assert_has(row, "pending (bad-kubeconfig)");
    }
    for s in fx.snapshots() {
        assert_eq!(
            [&s[2][..], &s[3][..]],
            ["pending", "bad-kubeconfig"],
            "{s:?}"
        );
    }
    // --strict: the reason's code (4), every domain still reported.
    let strict = fx.clinv(&["--strict", "replay", "-A"]).run();
    assert_eq!(strict.code, 4, "{}", strict.stderr);
    for (domain, name) in DOMAINS {
        assert_has(&strict.stderr, &recorded(&fx, domain, name));
    }
    // One domain, and a glob: the same message, the same code.
    let one = fx
        .clinv(&["--strict", "replay", "--domain", "lab.acme.example"])
        .run();
    assert_eq!(one.code, 4, "{}", one.stderr);
    assert_has(&one.stderr, &recorded(&fx, "lab.acme.example", "lab"));
    let glob = fx.clinv(&["replay", "--domain", "*.acme.example"]).run();
    assert_eq!(glob.code, 0, "{}", glob.stderr);
    assert_has(
        &glob.stderr,
        &recorded(&fx, "prod.acme.example", "prod-fsn1"),
    );
    assert_eq!(fx.snapshots().len(), DOMAINS.len(), "nothing published");
}

fn replay_retarget_delivers_through_the_kubeconfig_as_it_is_now() {
    let fx = Fx::new();
    for args in [
        &["replay", "-A", "--retarget"][..],
        &["replay", "--domain", "*.acme.example", "--retarget"],
        &["replay", "--domain", "lab.acme.example", "--retarget"],
    ] {
        let run = fx.clinv(args).run();
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        // The regenerated file was used: its (refused) server was tried.
        assert!(!run.stderr.contains("no longer names"), "{}", run.stderr);
        assert_has(&run.stderr, "cluster unreachable: ");
    }
    for s in fx.snapshots() {
        assert_eq!([&s[2][..], &s[3][..]], ["pending", "unreachable"], "{s:?}");
    }
    assert_eq!(fx.snapshots().len(), DOMAINS.len(), "nothing published");
}

/// The recorded kubeconfig deleted (not regenerated yet, or moved): the message offers
/// the same way out; with the file back under the project, `--retarget` uses it.
fn a_gone_recorded_kubeconfig_offers_retarget() {
    let fx = Fx::new();
    std::fs::remove_file(fx.file("lab")).unwrap();
    let run = fx
        .clinv(&["replay", "--domain", "lab.acme.example"])
        .run()
        .success();
    assert_has(
        &run.stderr,
        &format!(
            "the kubeconfig this snapshot was published with is gone ({}); replay --retarget delivers through the domain's kubeconfig as it is now, --kubeconfig through another",
            fx.file("lab").display()
        ),
    );
}

trials! {
    Nothing: [
        replay_all_says_which_recorded_context_is_gone_and_keeps_the_snapshots_pending,
        replay_retarget_delivers_through_the_kubeconfig_as_it_is_now,
        a_gone_recorded_kubeconfig_offers_retarget,
    ],
}
