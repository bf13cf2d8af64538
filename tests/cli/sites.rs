//! A fleet of three sites for the tests of one selection on every command: twelve
//! cluster domains (`air-1…4`, `fsn-1…4`, `hel-1…4` `.sites.example`, so a glob names a
//! site), each site with its own cert-manager pin (air v1.18.0, hel v1.17.2, fsn the
//! project's), a deploy domain carried by air-1, a domain whose spec does not parse, and
//! a store with a history of three dates (January, March and June 2026: cilium bumped in
//! March, metrics-server in June), every snapshot queued (the clusters never answered).

use crate::support::*;
use std::path::{Path, PathBuf};

pub const SITES: [&str; 3] = ["air", "fsn", "hel"];

/// The store's dates: 2026-01-15, 2026-03-01, 2026-06-01 (UTC noon).
pub const DATES: [(&str, &str); 3] = [
    ("2026-01-15", "1768478400"),
    ("2026-03-01", "1772366400"),
    ("2026-06-01", "1780315200"),
];

pub struct Sites {
    dir: tempfile::TempDir,
}

impl Sites {
    /// The project and its store, built once per call (about a second).
    pub fn new() -> Sites {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        copy_dir(&example().join(".lok8s"), &root.join(".lok8s"));
        let lab = example().join("clusters/lab.acme.example");
        for site in SITES {
            for n in 1..=4 {
                let domain = format!("{site}-{n}.sites.example");
                let to = root.join("clusters").join(&domain);
                copy_dir(&lab, &to);
                pin(&to, site);
            }
        }
        write(
            root,
            "clusters/apps.sites.example/deploy.lok8s.yaml",
            "kind: Deploy\nmetadata:\n  name: apps\nspec:\n  clusterRef:\n    domain: air-1.sites.example\n",
        );
        write(
            root,
            "clusters/broken.sites.example/cluster.lok8s.yaml",
            "kind: Capi\nspec: [unclosed\n",
        );
        write(root, "clusters/.active", "air-2.sites.example\n");
        let sites = Sites { dir };
        sites.record_history();
        sites
    }

    fn record_history(&self) {
        let bumps = [
            None,
            Some(("cilium", "1.19.0")),
            Some(("metrics-server", "3.13.0")),
        ];
        for ((_, epoch), bump) in DATES.iter().zip(bumps) {
            if let Some((addon, version)) = bump {
                set_chart_version(self.root(), addon, version);
            }
            // The broken domain fails, the others are recorded: exit 1 is expected.
            let run = self
                .run(&["publish", "-A"])
                .env("SOURCE_DATE_EPOCH", epoch)
                .run();
            assert_has(&run.stderr, "broken.sites.example");
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn store(&self) -> PathBuf {
        self.root().join("snapshots")
    }

    /// The twelve cluster domains, in name order.
    pub fn clusters() -> Vec<String> {
        SITES
            .iter()
            .flat_map(|s| (1..=4).map(move |n| format!("{s}-{n}.sites.example")))
            .collect()
    }

    /// `clinv ARGS…` in the project, with its store, every cluster behind the
    /// kubeconfig that never answers.
    pub fn run(&self, args: &[&str]) -> Clinv {
        let offline = repo().join("examples/offline.kubeconfig");
        clinv(args)
            .cwd(self.root())
            .store(self.store())
            .env("KUBECONFIG", offline.to_str().unwrap())
    }
}

/// A site's cert-manager: air and hel pin their own copy, fsn takes the project's.
fn pin(domain_dir: &Path, site: &str) {
    let chart = domain_dir.join("addons/cert-manager/chart.yaml");
    match site {
        "air" => {}
        "hel" => replace_first(&chart, r"(?m)^version: .*$", "version: v1.17.2"),
        _ => replace_first(
            &domain_dir.join("cluster.lok8s.yaml"),
            r"(?m)^    certs: \./addons/cert-manager$",
            "    certs: cert-manager",
        ),
    }
}
