//! The recorded example history in `tests/fixtures/history/prod.acme.example/`: 26 steps
//! of one domain over a year — upgrades, a pre-release rolled back (downgrade), additions,
//! removals, a category change, a source change, an unordered version change, Kubernetes
//! upgrades, queued/superseded/committed outcomes and replays without changes.
//!
//! The files are generated here from the story below and committed, so they are readable
//! on their own; the test fails when they drift (`CLINV_BLESS=1` rewrites them).

use crate::support::*;
use clinv::inventory::{Addon, ClusterInventory, DOMAIN_LABEL, InventorySpec, Metadata};
use clinv::project::bootstrap::Source;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const DOMAIN: &str = "prod.acme.example";

/// One recorded step, as the snapshot store would hand it over.
pub struct Recorded {
    pub id: String,
    pub at: String,
    pub outcome: String,
    pub inventory: ClusterInventory,
}

pub fn dir() -> PathBuf {
    fixture("history").join(DOMAIN)
}

/// The story: `(at, outcome, what changes)`; `spec` marks an edit of the cluster spec
/// (new specHash), the rest comes from framework pins and chart metadata.
fn story() -> Vec<(&'static str, &'static str, Vec<Edit>)> {
    use Edit::*;
    vec![
        ("2025-01-13T09:14:05Z", "applied", vec![]),
        (
            "2025-01-27T10:02:41Z",
            "applied",
            vec![Lok8s("0.6.1"), Chart("cilium", "1.16.5")],
        ),
        (
            "2025-02-10T08:47:12Z",
            "applied",
            vec![
                Add("rook-ceph", Source::Addon, Some("v1.15.6"), Some("storage")),
                Add("rook-ceph-cluster", Source::Target, None, Some("storage")),
            ],
        ),
        (
            "2025-02-24T15:30:00Z",
            "pending",
            vec![Lok8s("0.6.2"), Chart("ingress-nginx", "4.12.0")],
        ),
        ("2025-02-25T07:05:19Z", "applied", vec![]),
        (
            "2025-03-17T09:00:00Z",
            "applied",
            vec![Lok8s("0.7.0"), Kubernetes("v1.31.4")],
        ),
        (
            "2025-04-07T13:21:09Z",
            "applied",
            vec![
                Lok8s("0.7.1"),
                Chart("cert-manager", "v1.16.2"),
                Chart("metrics-server", "3.12.2"),
            ],
        ),
        (
            "2025-04-22T09:45:33Z",
            "applied",
            vec![Add(
                "kube-prometheus-stack",
                Source::Addon,
                Some("66.3.1"),
                Some("observability"),
            )],
        ),
        (
            "2025-05-05T16:12:00Z",
            "committed",
            vec![Lok8s("0.7.2-rc.1"), Chart("cilium", "1.17.0-rc.1")],
        ),
        (
            "2025-05-06T08:03:27Z",
            "applied",
            vec![Lok8s("0.7.2"), Chart("cilium", "1.16.6")],
        ),
        (
            "2025-05-26T11:40:00Z",
            "superseded",
            vec![Lok8s("0.7.3"), Chart("kube-prometheus-stack", "69.2.0")],
        ),
        (
            "2025-05-26T17:55:48Z",
            "applied",
            vec![Lok8s("0.7.4"), Chart("kube-prometheus-stack", "69.3.0")],
        ),
        (
            "2025-06-16T09:10:10Z",
            "applied",
            vec![Lok8s("0.7.5"), Category("ingress-nginx", "ingress")],
        ),
        (
            "2025-07-07T14:25:00Z",
            "applied",
            vec![Move("cert-manager-webhook-hetzner", Source::Target)],
        ),
        (
            "2025-07-28T09:30:51Z",
            "applied",
            vec![
                Add("velero", Source::Addon, Some("8.1.0"), Some("backup")),
                Remove("metrics-server"),
            ],
        ),
        (
            "2025-08-18T10:00:00Z",
            "applied",
            vec![
                Lok8s("0.7.6"),
                Kubernetes("v1.31.10"),
                Chart("rook-ceph", "v1.16.4"),
            ],
        ),
        (
            "2025-09-08T12:12:12Z",
            "committed",
            vec![
                Lok8s("0.7.9"),
                Chart("cilium", "1.17.4"),
                Chart("ingress-nginx", "4.12.1"),
            ],
        ),
        (
            "2025-09-09T06:58:03Z",
            "applied",
            vec![Spec, Chart("cert-manager", "v1.17.2")],
        ),
        (
            "2025-10-06T09:20:00Z",
            "applied",
            vec![Add(
                "external-dns",
                Source::Addon,
                Some("1.15.0"),
                Some("networking"),
            )],
        ),
        (
            "2025-10-27T15:45:30Z",
            "applied",
            vec![Lok8s("0.8.0"), Chart("velero", "v8.2")],
        ),
        (
            "2025-11-17T09:00:00Z",
            "applied",
            vec![Kubernetes("v1.32.3")],
        ),
        (
            "2025-12-08T16:20:00Z",
            "pending",
            vec![
                Lok8s("0.8.1"),
                Chart("cilium", "1.18.0"),
                Chart("ingress-nginx", "4.12.3"),
            ],
        ),
        ("2025-12-09T07:31:02Z", "applied", vec![]),
        (
            "2026-01-12T10:05:00Z",
            "applied",
            vec![
                Spec,
                Chart("kube-prometheus-stack", "69.2.0"),
                Add("loki", Source::Addon, Some("6.24.0"), Some("observability")),
            ],
        ),
        (
            "2026-02-02T09:41:17Z",
            "applied",
            vec![
                Lok8s("0.8.2"),
                Chart("cert-manager", "v1.18.0"),
                Chart("velero", "9.0.0"),
            ],
        ),
        (
            "2026-02-23T11:11:11Z",
            "applied",
            vec![
                Lok8s("0.8.3"),
                Kubernetes("v1.33.1"),
                Chart("cilium", "1.18.2"),
            ],
        ),
    ]
}

enum Edit {
    Lok8s(&'static str),
    Kubernetes(&'static str),
    Chart(&'static str, &'static str),
    Category(&'static str, &'static str),
    Move(&'static str, Source),
    Add(
        &'static str,
        Source,
        Option<&'static str>,
        Option<&'static str>,
    ),
    Remove(&'static str),
    /// Any other edit of the cluster spec (a local pin).
    Spec,
}

fn addon(name: &str, source: Source, version: Option<&str>, category: Option<&str>) -> Addon {
    Addon {
        name: name.into(),
        source: Some(source),
        chart_version: version.map(Into::into),
        category: category.map(Into::into),
        app_version: None,
    }
}

fn first() -> ClusterInventory {
    use Source::*;
    ClusterInventory {
        api_version: "lok8s.dev/v1alpha1".into(),
        kind: "ClusterInventory".into(),
        metadata: Metadata {
            name: "cluster".into(),
            labels: BTreeMap::from([(DOMAIN_LABEL.into(), DOMAIN.into())]),
        },
        spec: InventorySpec {
            lok8s_version: "0.6.0".into(),
            kind: "kubeone".into(),
            spec_hash: String::new(),
            rendered_at: String::new(),
            addons: vec![
                addon("cilium", Addon, Some("1.16.3"), Some("networking")),
                addon(
                    "cert-manager",
                    Addon,
                    Some("v1.15.3"),
                    Some("infrastructure"),
                ),
                addon(
                    "cert-manager-webhook-hetzner",
                    Addon,
                    None,
                    Some("infrastructure"),
                ),
                addon("ingress-nginx", Addon, Some("4.11.3"), Some("networking")),
                addon(
                    "metrics-server",
                    Addon,
                    Some("3.12.1"),
                    Some("observability"),
                ),
                addon("networking", Target, None, Some("networking")),
                addon("site-glue", Target, None, None),
            ],
            provider: Some("hetzner".into()),
            kubernetes_version: Some("v1.30.6".into()),
        },
    }
}

/// The steps of the story, built in memory.
pub fn generate() -> Vec<Recorded> {
    let mut inv = first();
    let mut revision = 1;
    let mut out = Vec::new();
    for (i, (at, outcome, edits)) in story().into_iter().enumerate() {
        let mut spec_edit = i == 0;
        for edit in edits {
            let find = |inv: &mut ClusterInventory, name: &str| -> usize {
                inv.spec.addons.iter().position(|a| a.name == name).unwrap()
            };
            match edit {
                Edit::Lok8s(v) => inv.spec.lok8s_version = v.into(),
                Edit::Kubernetes(v) => {
                    inv.spec.kubernetes_version = Some(v.into());
                    spec_edit = true;
                }
                Edit::Chart(name, v) => {
                    let i = find(&mut inv, name);
                    inv.spec.addons[i].chart_version = Some(v.into());
                }
                Edit::Category(name, c) => {
                    let i = find(&mut inv, name);
                    inv.spec.addons[i].category = Some(c.into());
                }
                Edit::Move(name, s) => {
                    let i = find(&mut inv, name);
                    inv.spec.addons[i].source = Some(s);
                    spec_edit = true;
                }
                Edit::Add(name, s, v, c) => {
                    // Framework addons before the targets, as specs list them.
                    let at = match s {
                        Source::Addon => inv
                            .spec
                            .addons
                            .iter()
                            .rposition(|a| a.source == Some(Source::Addon))
                            .map_or(0, |p| p + 1),
                        Source::Target => inv.spec.addons.len(),
                    };
                    inv.spec.addons.insert(at, addon(name, s, v, c));
                    spec_edit = true;
                }
                Edit::Remove(name) => {
                    let i = find(&mut inv, name);
                    inv.spec.addons.remove(i);
                    spec_edit = true;
                }
                Edit::Spec => spec_edit = true,
            }
        }
        if spec_edit {
            inv.spec.spec_hash = clinv::util::hash::hex_sha256(
                format!("{DOMAIN} cluster spec, revision {revision}").as_bytes(),
            );
            revision += 1;
        }
        inv.spec.rendered_at = at.into();
        out.push(Recorded {
            id: format!("{:03}", i + 1),
            at: at.into(),
            outcome: outcome.into(),
            inventory: inv.clone(),
        });
    }
    out
}

const MANIFEST: &str = "steps.tsv";

/// Reads the committed fixture the way a store would: the manifest, then each file.
pub fn load() -> Vec<Recorded> {
    let manifest = std::fs::read_to_string(dir().join(MANIFEST)).unwrap();
    manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let text = std::fs::read_to_string(dir().join(cols[3])).unwrap();
            Recorded {
                id: cols[0].into(),
                at: cols[1].into(),
                outcome: cols[2].into(),
                inventory: clinv::inventory::parse::inventory_from_text(&text).unwrap(),
            }
        })
        .collect()
}

/// The store's view: steps borrowing from `recorded`.
pub fn steps(recorded: &[Recorded]) -> Vec<clinv::history::audit::Step<'_>> {
    recorded
        .iter()
        .map(|r| clinv::history::audit::Step {
            id: &r.id,
            at: &r.at,
            outcome: &r.outcome,
            inventory: &r.inventory,
            revision: None,
            author: None,
            host: None,
        })
        .collect()
}

pub fn file(id: &str) -> PathBuf {
    dir().join(format!("{id}.yaml"))
}

fn the_recorded_history_fixture_is_current() {
    let generated = generate();
    assert!(generated.len() >= 20);
    let mut manifest =
        format!("# Recorded history of {DOMAIN}, oldest first: id, time, outcome, file.\n");
    for r in &generated {
        let name = format!("{}.yaml", r.id);
        manifest.push_str(&format!("{}\t{}\t{}\t{name}\n", r.id, r.at, r.outcome));
        blessed(
            &dir().join(&name),
            &clinv::inventory::render::to_yaml(&r.inventory).unwrap(),
        );
    }
    blessed(&dir().join(MANIFEST), &manifest);
    // And the files read back to the same objects.
    let loaded = load();
    assert_eq!(loaded.len(), generated.len());
    for (l, g) in loaded.iter().zip(&generated) {
        assert_eq!((&l.id, &l.at, &l.outcome), (&g.id, &g.at, &g.outcome));
        assert_eq!(l.inventory, g.inventory);
    }
}

fn the_history_covers_every_kind_of_change() {
    let recorded = load();
    let trail = clinv::history::audit::trail(&steps(&recorded), &Default::default());
    let mut seen = std::collections::BTreeSet::new();
    for e in trail.entries.iter().filter(|e| !e.initial) {
        for c in &e.changes {
            seen.insert(format!("{} {}", c.field.as_str(), c.change.as_str()));
        }
    }
    for expected in [
        "addon added",
        "addon removed",
        "chartVersion upgraded",
        "chartVersion downgraded",
        "chartVersion changed",
        "category changed",
        "source changed",
        "kubernetesVersion upgraded",
        "lok8sVersion upgraded",
        "specHash changed",
    ] {
        assert!(seen.contains(expected), "{expected} missing from {seen:?}");
    }
    let outcomes: std::collections::BTreeSet<&str> =
        recorded.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(
        outcomes.into_iter().collect::<Vec<_>>(),
        ["applied", "committed", "pending", "superseded"]
    );
    assert!(trail.entries.iter().any(|e| !e.initial && !e.has_changes));
}

/// The README's `log --oneline` sample is what `scripts/example-history` records now:
/// every line it shows (the change, and `#N`) is that line of the run — ids, times and
/// milliseconds aside, which differ per run (and without faketime the dates are today's).
fn the_readme_sample_of_the_example_history_is_current() {
    let out = tempfile::tempdir().unwrap();
    let script = repo().join("scripts/example-history");
    let status = std::process::Command::new(&script)
        .arg(out.path())
        .env("CLINV_BIN", crate::harness::clinv_bin())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{}", script.display());
    let log = clinv(&["log", "--domain", DOMAIN, "--oneline"])
        .store(out.path().join("snapshots"))
        .run()
        .success();
    // A line without its time, state and id: the change and `#N`.
    let shape = |line: &str| -> String {
        let fields: Vec<&str> = line.split("  ").filter(|f| !f.is_empty()).collect();
        let n = fields.iter().rev().find(|f| f.trim().starts_with('#'));
        let n = n.map(|f| f.trim().split(' ').next().unwrap()).unwrap_or("");
        format!("{} {n}", fields[0].trim())
    };
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marker = "$ clinv log --domain prod.acme.example --oneline      # on scripts/example-history's store";
    let sample: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with(marker))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| *l != "…")
        .collect();
    assert!(sample.len() >= 2, "no sample after {marker:?} in README.md");
    let printed: Vec<String> = log.stdout.lines().map(shape).collect();
    for line in sample {
        assert!(
            printed.contains(&shape(line)),
            "README.md: {line:?} is not printed now:\n{}",
            log.stdout
        );
    }
    assert_eq!(
        shape(
            readme
                .lines()
                .skip_while(|l| !l.starts_with(marker))
                .nth(1)
                .unwrap()
        ),
        printed[0],
        "the sample starts with the newest step"
    );
}

trials! {
    Nothing: [
        the_recorded_history_fixture_is_current,
        the_history_covers_every_kind_of_change,
        the_readme_sample_of_the_example_history_is_current,
    ],
}
