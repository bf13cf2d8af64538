//! Stores in the v1 format (one `<domain>/journal` of `<sha256 of json> <json>\n` lines,
//! objects named by the sha256 of their bytes), written by hand so a test does not depend
//! on the format the binary itself writes: the contract reads v1 stores as they are, at
//! any size, so these fixtures work against the old and the new store alike.

use crate::support::*;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// One journal line for `json`: `<sha256 of json> <json>\n`.
pub fn line(json: &serde_json::Value) -> String {
    let text = serde_json::to_string(json).unwrap();
    format!("{} {text}\n", sha256(text.as_bytes()))
}

/// The server of `examples/offline.kubeconfig` (refuses connections).
pub const OFFLINE_SERVER: &str = "https://127.0.0.1:9";

/// A rendered inventory as the store keeps it: the CR without `renderedAt` and the CRD,
/// compact JSON, each under the sha256 of its bytes.
#[derive(Clone)]
pub struct Objects {
    pub cr: String,
    pub crd: String,
    pub spec_hash: String,
    pub lok8s_version: String,
}

impl Objects {
    pub fn cr_id(&self) -> String {
        sha256(self.cr.as_bytes())
    }

    pub fn crd_id(&self) -> String {
        sha256(self.crd.as_bytes())
    }
}

/// Renders `domain` of the project at `root` into store objects.
pub fn render(root: &Path, domain: &str) -> Objects {
    let r = root.to_str().unwrap();
    let run = clinv(&["render", "--root", r, "--domain", domain, "-o", "json"])
        .run()
        .success();
    let mut cr: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    cr["spec"].as_object_mut().unwrap().remove("renderedAt");
    let crd: serde_json::Value =
        serde_json::from_str(&clinv(&["crd", "-o", "json"]).run().success().stdout).unwrap();
    Objects {
        spec_hash: cr["spec"]["specHash"].as_str().unwrap().to_string(),
        lok8s_version: cr["spec"]["lok8sVersion"].as_str().unwrap().to_string(),
        cr: serde_json::to_string(&cr).unwrap(),
        crd: serde_json::to_string(&crd).unwrap(),
    }
}

/// RFC 3339 with milliseconds for `secs` after the epoch.
pub fn at(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%S.000Z")
        .to_string()
}

fn rendered(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A v1 journal being written: records are appended in memory, then written at once.
pub struct Journal {
    pub domain: String,
    pub dir: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl Journal {
    /// Starts `<store>/<domain>/journal` (replacing it) and its objects folder.
    pub fn create(store: &Path, domain: &str) -> Journal {
        let dir = store.join(domain);
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        let file = std::fs::File::create(dir.join("journal")).unwrap();
        Journal {
            domain: domain.to_string(),
            dir,
            out: std::io::BufWriter::with_capacity(1 << 20, file),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("journal")
    }

    /// Writes the objects of `objects` (if absent).
    pub fn objects(&mut self, objects: &Objects) {
        for text in [&objects.cr, &objects.crd] {
            let path = self
                .dir
                .join("objects")
                .join(format!("{}.json", sha256(text.as_bytes())));
            if !path.exists() {
                std::fs::write(path, text).unwrap();
            }
        }
    }

    /// Appends a snapshot record recorded at `secs` (and rendered then); the objects
    /// must have been written with [`Journal::objects`].
    pub fn snapshot(&mut self, id: &str, secs: i64, objects: &Objects) {
        // Formatted directly (every field is plain ASCII): this runs 100,000+ times.
        let text = format!(
            r#"{{"kind":"snapshot","v":1,"id":"{id}","at":"{}","domain":"{}","renderedAt":"{}","specHash":"{}","lok8sVersion":"{}","tool":"clinv 0.1.0","cr":"{}","crd":"{}","target":{{"server":"{OFFLINE_SERVER}","context":"offline"}}}}"#,
            at(secs),
            self.domain,
            rendered(secs),
            objects.spec_hash,
            objects.lok8s_version,
            objects.cr_id(),
            objects.crd_id(),
        );
        let line = format!("{} {text}\n", sha256(text.as_bytes()));
        self.out.write_all(line.as_bytes()).unwrap();
    }

    /// Appends a state change (`applied`, `superseded`, ...).
    pub fn state(&mut self, id: &str, secs: i64, state: &str) {
        let record = serde_json::json!({
            "kind": "state", "v": 1, "id": id, "at": at(secs), "state": state,
        });
        self.out.write_all(line(&record).as_bytes()).unwrap();
    }

    pub fn finish(mut self) -> PathBuf {
        self.out.flush().unwrap();
        self.path()
    }
}

/// A 12-hex snapshot id for number `n`.
pub fn id(n: u64) -> String {
    format!("{n:012x}")
}
