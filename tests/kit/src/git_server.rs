//! The HTTPS git server of the tests on loopback: nginx in front of `git http-backend`.
//!
//! The HTTPS git server of the tests on loopback: Debian's nginx (TLS with a private CA
//! made at test time, basic auth) in front of `git http-backend` through Debian's
//! fcgiwrap. `clinv commit --push` over HTTPS pushes to it (tests/cli/git_https.rs), and
//! Flux's source-controller and Argo CD's repo-server clone from it (tests/cluster).

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// Whether nginx and fcgiwrap can be run.
pub fn present() -> Result<(), String> {
    for (program, arg) in [("nginx", "-v"), ("fcgiwrap", "-h")] {
        if !crate::harness::runs(program, arg) {
            return Err(format!(
                "no {program}: apt-get install nginx fcgiwrap (.ci/run does)"
            ));
        }
    }
    Ok(())
}

pub fn git_in(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = succeeded(
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0"),
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// nginx + fcgiwrap serving `<dir>/repos` over HTTPS with basic auth; stopped on drop.
/// Both run as one process each (`master_process off`, `-c 1`): killing a master would
/// leave its workers listening.
pub struct GitServer {
    nginx: Child,
    fcgiwrap: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl GitServer {
    /// Serves `<dir>/repos` (created) for `user`/`password`; `/old/<x>` redirects to `/<x>`.
    pub fn start(dir: &Path, user: &str, password: &str) -> GitServer {
        let dir = dir.to_path_buf();
        std::fs::create_dir_all(dir.join("repos")).unwrap();
        crate::https::make_pki(&dir);
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        write(&dir, "htpasswd", format!("{user}:{{PLAIN}}{password}\n"));
        let exec = git_in(&dir, &dir, &["--exec-path"]);
        let backend = Path::new(exec.trim()).join("git-http-backend");
        let d = dir.display();
        let config = format!(
            r#"daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
  access_log {d}/access.log;
  client_body_temp_path {d}/tmp-body;
  fastcgi_temp_path {d}/tmp-fastcgi;
  proxy_temp_path {d}/tmp-proxy;
  uwsgi_temp_path {d}/tmp-uwsgi;
  scgi_temp_path {d}/tmp-scgi;
  client_max_body_size 0;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {d}/server.crt;
    ssl_certificate_key {d}/server.key;
    location /old/ {{ rewrite ^/old/(.*)$ /$1 permanent; }}
    location / {{
      auth_basic "git";
      auth_basic_user_file {d}/htpasswd;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME {backend};
      fastcgi_param GIT_PROJECT_ROOT {d}/repos;
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param PATH_INFO $uri;
      fastcgi_param REMOTE_USER $remote_user;
      fastcgi_pass unix:{d}/fcgi.sock;
    }}
  }}
}}
"#,
            backend = backend.display()
        );
        let conf = write(&dir, "nginx.conf", config);
        let fcgiwrap = spawn_quiet(
            Command::new("fcgiwrap")
                .arg("-c")
                .arg("1")
                .arg("-s")
                .arg(format!("unix:{d}/fcgi.sock"))
                .env("HOME", &dir)
                .env("GIT_CONFIG_NOSYSTEM", "1"),
        );
        let nginx = spawn_quiet(
            Command::new("nginx")
                .arg("-p")
                .arg(&dir)
                .arg("-e")
                .arg(dir.join("error.log"))
                .arg("-c")
                .arg(&conf),
        );
        let server = GitServer {
            nginx,
            fcgiwrap,
            port,
            dir,
        };
        let up = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            listening("127.0.0.1", port) && server.dir.join("fcgi.sock").exists()
        });
        assert!(up, "nginx/fcgiwrap did not start:\n{}", server.error_log());
        drop(reserved); // nginx listens: the port is its own
        server
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    /// Stops nginx: the port refuses connections, as a git server that is down does
    /// (fcgiwrap and the repositories stay).
    pub fn stop(&mut self) {
        let _ = self.nginx.kill();
        let _ = self.nginx.wait();
        let down = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            !listening("127.0.0.1", self.port)
        });
        assert!(down, "nginx still listens on {}", self.port);
    }

    /// Starts nginx again, on the same port with the same configuration.
    pub fn restart(&mut self) {
        self.nginx = spawn_quiet(
            Command::new("nginx")
                .arg("-p")
                .arg(&self.dir)
                .arg("-e")
                .arg(self.dir.join("error.log"))
                .arg("-c")
                .arg(self.dir.join("nginx.conf")),
        );
        let up = poll(Duration::from_secs(10), Duration::from_millis(20), || {
            listening("127.0.0.1", self.port)
        });
        assert!(up, "nginx did not start again:\n{}", self.error_log());
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    /// Access-log lines that contain `needle` with status `status`.
    pub fn requests(&self, needle: &str, status: u16) -> usize {
        self.access_log()
            .lines()
            .filter(|l| l.contains(needle) && l.contains(&format!("\" {status} ")))
            .count()
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.nginx.kill();
        let _ = self.nginx.wait();
        let _ = self.fcgiwrap.kill();
        let _ = self.fcgiwrap.wait();
    }
}
