//! Real controllers as plain processes against the plane: what the Flux and the Argo CD
//! tests both need to start them (reserved loopback ports, a process per log file, waiting
//! for a health endpoint, the logs when a test fails) and to wait on what they do.

use crate::support::{Reserved, reserve_port};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `n` loopback ports reserved for servers about to start (see [`Reserved`]: Go's,
/// Redis's and sshd's listeners bind with `SO_REUSEADDR`, so they can take them); hold
/// them until the servers listen. Ports read from dropped listeners were free for any
/// other test to take first.
pub(crate) fn reserve_ports(n: usize) -> (Vec<Reserved>, Vec<u16>) {
    let reserved: Vec<Reserved> = (0..n).map(|_| reserve_port("127.0.0.1")).collect();
    let ports = reserved.iter().map(|r| r.port).collect();
    (reserved, ports)
}

/// Calls `done` every 250 ms until it is true (true) or `limit` has passed (false).
pub(crate) fn poll(limit: Duration, done: impl FnMut() -> bool) -> bool {
    crate::support::poll(limit, Duration::from_millis(250), done)
}

/// Whether `GET path` on the loopback `port` answers 200 (a health endpoint).
pub(crate) fn http_ok(port: u16, path: &str) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")
}

/// One process; its output (its log) goes to `log`.
struct Running {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

/// The processes one test started, by name. Their owner kills them ([`Processes::kill`])
/// when it has cleaned up what they made.
#[derive(Default)]
pub(crate) struct Processes {
    running: Vec<Running>,
}

impl Processes {
    /// Starts `command` as `name`, without the proxy variables of the environment (the
    /// plane and the servers are on loopback), its stdout and stderr in `dir/<name>.log`.
    pub(crate) fn spawn(&mut self, name: &'static str, mut command: Command, dir: &Path) {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        for proxy in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
            command.env_remove(proxy);
        }
        let program = command.get_program().to_owned();
        let child = command
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
        self.running.push(Running { name, child, log });
    }

    /// Waits until `name` answers `GET path` on `port`; panics (its owner prints the logs)
    /// when it exits or takes more than 60 s.
    pub(crate) fn wait_ready(&mut self, name: &str, port: u16, path: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        let running = self.running.iter_mut().find(|r| r.name == name).unwrap();
        while !http_ok(port, path) {
            if let Ok(Some(status)) = running.child.try_wait() {
                panic!("{name} exited: {status}");
            }
            assert!(Instant::now() < until, "{name} not ready after 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The last `lines` lines of each process's log.
    pub(crate) fn logs(&self, lines: usize) -> String {
        let mut all = String::new();
        for r in &self.running {
            let text = std::fs::read_to_string(&r.log).unwrap_or_default();
            let all_lines: Vec<&str> = text.lines().collect();
            let tail = &all_lines[all_lines.len().saturating_sub(lines)..];
            all.push_str(&format!("--- {} ({}) ---\n", r.name, r.log.display()));
            for line in tail {
                all.push_str(line);
                all.push('\n');
            }
        }
        all
    }

    /// Kills and reaps every process.
    pub(crate) fn kill(&mut self) {
        for r in &mut self.running {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}
