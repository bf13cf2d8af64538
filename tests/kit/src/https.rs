//! A real HTTPS server on loopback for the index fetch tests.
//!
//! A CA and a server certificate made with the openssl CLI at test time, served by rustls
//! (the client's TLS stack), one canned response per connection.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Server {
    pub port: u16,
    /// The CA that signed the server certificate (PEM), for `--index-ca`.
    pub ca: PathBuf,
    /// Requests answered so far.
    pub hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

/// `openssl ARGS…` in `dir`; panics with its stderr when it fails.
pub fn openssl(dir: &Path, args: &[&str]) {
    crate::support::succeeded(Command::new("openssl").current_dir(dir).args(args));
}

/// A throwaway ECDSA P-256 private key (PKCS#8 PEM) at `dir/file`.
pub fn ec_key(dir: &Path, file: &str) {
    let curve = "ec_paramgen_curve:P-256";
    openssl(
        dir,
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            curve,
            "-out",
            file,
        ],
    );
}

/// A throwaway CA and a certificate for 127.0.0.1/localhost signed by it.
pub fn make_pki(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        dir,
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-days",
                "1",
                "-subj",
                "/CN=clinv-test-index-ca",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-sha256",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ],
    );
}

/// The rustls server configuration for the certificate [`make_pki`] left in `dir`.
pub fn tls_config(dir: &Path) -> Arc<rustls::ServerConfig> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.crt"))
        .unwrap()
        .map(|c| c.unwrap())
        .collect();
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    Arc::new(config)
}

impl Server {
    /// Serves `status` with `body` to every request until dropped.
    pub fn start(status: u16, body: &[u8]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        make_pki(dir.path());
        let config = tls_config(dir.path());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let hits = Arc::new(AtomicUsize::new(0));
        let response = {
            let mut r = format!(
                "HTTP/1.1 {status} Canned\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            r.extend_from_slice(body);
            r
        };
        let thread = {
            let (stop, hits) = (stop.clone(), hits.clone());
            std::thread::spawn(move || {
                // Bounded: the server lives at most a minute even if never dropped.
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                while !stop.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                    match listener.accept() {
                        Ok((tcp, _)) => {
                            if serve(tcp, &config, &response) {
                                hits.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        };
        Server {
            port,
            ca: dir.path().join("ca.crt"),
            hits,
            stop,
            thread: Some(thread),
            _dir: dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Stops accepting connections (the port is then closed).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One TLS connection: read the request head, write the canned response. True when a
/// request was answered (false when the client gave up, e.g. rejected the certificate).
fn serve(tcp: std::net::TcpStream, config: &Arc<rustls::ServerConfig>, response: &[u8]) -> bool {
    let _ = tcp.set_nonblocking(false);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(5)));
    let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
        return false;
    };
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return false;
        }
    }
    let ok = tls.write_all(response).and_then(|()| tls.flush()).is_ok();
    tls.conn.send_close_notify();
    let _ = tls.flush();
    ok
}
