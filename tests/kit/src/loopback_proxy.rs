//! Debian's `tinyproxy` as a real HTTP proxy on loopback for the tests.
//!
//! Started with a generated configuration on a free port of 127.0.0.2 (the servers under
//! test listen on 127.0.0.1, so `NO_PROXY` for the server and for the proxy differ), with
//! or without BasicAuth, killed on drop. Its log says which tunnels (`CONNECT`) it opened.

use crate::support::{listening, poll, reserve_port, spawn_quiet, write};
use std::process::{Child, Command};
use std::time::Duration;

/// Whether `tinyproxy` can be run.
pub fn present() -> Result<(), &'static str> {
    match crate::harness::runs("tinyproxy", "-v") {
        true => Ok(()),
        false => Err("no tinyproxy: apt-get install tinyproxy (.ci/run does)"),
    }
}

/// A running tinyproxy; killed on drop.
pub struct Tinyproxy {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Tinyproxy {
    /// Starts tinyproxy on a free port of 127.0.0.2, requiring `credentials` when given.
    pub fn start(credentials: Option<(&str, &str)>) -> Tinyproxy {
        let dir = tempfile::tempdir().unwrap();
        let reserved = reserve_port("127.0.0.2");
        let port = reserved.port;
        let mut config = format!(
            "Port {port}\nListen 127.0.0.2\nTimeout 30\nLogFile \"{}\"\nLogLevel Info\nMaxClients 20\nAllow 127.0.0.0/8\n",
            dir.path().join("log").display()
        );
        if let Some((user, password)) = credentials {
            config.push_str(&format!("BasicAuth {user} {password}\n"));
        }
        let conf = write(dir.path(), "tinyproxy.conf", config);
        let child = spawn_quiet(Command::new("tinyproxy").arg("-d").arg("-c").arg(&conf));
        let proxy = Tinyproxy { child, port, dir };
        let up = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            listening("127.0.0.2", port)
        });
        assert!(up, "tinyproxy did not listen:\n{}", proxy.log());
        drop(reserved); // tinyproxy listens: the port is its own
        proxy
    }

    /// `http://127.0.0.2:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.2:{}", self.port)
    }

    /// `http://<user>:<password>@127.0.0.2:<port>`.
    pub fn url_with(&self, user: &str, password: &str) -> String {
        format!("http://{user}:{password}@127.0.0.2:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// Tunnels opened to `server` (`https://host:port` or `host:port`) so far.
    pub fn tunnels(&self, server: &str) -> usize {
        let host = server.trim_start_matches("https://");
        self.log()
            .lines()
            .filter(|l| l.contains(&format!("CONNECT {host} ")))
            .count()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
