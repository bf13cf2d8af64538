//! Debian's Prometheus (`prometheus`, `promtool`), started by the tests on loopback.
//!
//! [`Prometheus::scraping`] starts a real server with a generated configuration that
//! scrapes one target every second, its TSDB in a temporary folder, on a reserved loopback
//! port; [`Prometheus::query`] asks its HTTP API (`/api/v1/query`) an instant PromQL
//! query. [`check_metrics`] is `promtool check metrics` (the linter Prometheus ships) on a
//! text exposition. Stopped on drop.

use crate::support::{poll, reserve_port};
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Whether Debian's `prometheus` can run; else why not (the ignored test's reason).
pub fn present() -> Result<(), String> {
    match crate::harness::runs("prometheus", "--version") {
        true => Ok(()),
        false => Err("no prometheus: apt-get install prometheus (.ci/run does)".into()),
    }
}

/// Whether `promtool` (Debian's `prometheus` package) can run; else why not.
pub fn promtool_present() -> Result<(), String> {
    match crate::harness::runs("promtool", "--version") {
        true => Ok(()),
        false => Err("no promtool: apt-get install prometheus (.ci/run does)".into()),
    }
}

/// `promtool check metrics` on `exposition`: `Err` with what it said when it refuses the
/// text or finds a problem (it reads stdin and exits non-zero on either).
pub fn check_metrics(exposition: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match out.status.success() && said.trim().is_empty() {
        true => Ok(()),
        false => Err(format!("promtool check metrics ({}): {said}", out.status)),
    }
}

/// A Prometheus server on loopback scraping one target; stopped on drop.
pub struct Prometheus {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// One sample of an instant vector: its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: serde_json::Map<String, serde_json::Value>,
    pub value: f64,
}

impl Prometheus {
    /// Prometheus scraping `http://TARGET/metrics` (`target` is `host:port`) every second
    /// as job `clinv`, ready (`/-/ready`) when this returns.
    pub fn scraping(target: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: clinv\n    static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("prometheus runs");
        let mut server = Prometheus {
            child,
            port,
            _dir: dir,
        };
        let ready = poll(Duration::from_secs(30), Duration::from_millis(100), || {
            server.get("/-/ready").is_some_and(|(code, _)| code == 200)
        });
        if !ready {
            let _ = server.child.kill();
            let log = std::fs::read_to_string(server._dir.path().join("prometheus.log"));
            panic!(
                "prometheus did not become ready: {}",
                log.unwrap_or_default()
            );
        }
        drop(reserved); // Prometheus listens: the port is its own
        server
    }

    /// `GET path` on the server: the status and body, `None` when it does not answer.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .new_agent();
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let mut answer = agent.get(&url).call().ok()?;
        let body = answer.body_mut().read_to_string().ok()?;
        Some((answer.status().as_u16(), body))
    }

    /// The instant vector `promql` evaluates to now. Panics when the query fails or its
    /// result is not a vector.
    pub fn query(&self, promql: &str) -> Vec<Sample> {
        let query = form_encode(promql);
        let (code, body) = self
            .get(&format!("/api/v1/query?query={query}"))
            .expect("prometheus answers");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            code == 200 && v["status"] == "success",
            "{promql}: {code} {body}"
        );
        assert_eq!(v["data"]["resultType"], "vector", "{body}");
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| Sample {
                labels: r["metric"].as_object().cloned().unwrap_or_default(),
                value: r["value"][1].as_str().unwrap().parse().unwrap(),
            })
            .collect()
    }

    /// The values of `promql` once it has at least one sample (scrapes come every
    /// second), within `limit`; panics naming the query otherwise.
    pub fn values_within(&self, promql: &str, limit: Duration) -> Vec<f64> {
        let mut found = Vec::new();
        let some = poll(limit, Duration::from_millis(200), || {
            found = self.query(promql);
            !found.is_empty()
        });
        assert!(some, "{promql}: no sample within {limit:?}");
        found.iter().map(|s| s.value).collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` as a URL query value: every byte but the unreserved ones percent-encoded.
fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_encoded_byte_by_byte() {
        assert_eq!(
            form_encode("clinv_owed{domain=\"x\"} > 0"),
            "clinv_owed%7Bdomain%3D%22x%22%7D%20%3E%200"
        );
    }
}
