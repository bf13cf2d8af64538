//! A loopback HTTP(S) server that records every request it receives.
//!
//! A loopback HTTP(S) server that records every request it receives (method, target,
//! headers, body) and answers each through the test's own function — the test double
//! for a server that misbehaves in a way no real part of the kit can (a registry that
//! sends a blob-upload `Location` or a token realm on another host, `Link` pages that
//! never end, a git server that redirects to another origin) and for the "other host"
//! such a server points at, whose record says whether a credential reached it.
//!
//! Two listeners are two origins when their host or port differs: 127.0.0.1 and
//! 127.0.0.2 are both this machine, and so are two ports of one address. With TLS the
//! server presents the kit's certificate for 127.0.0.1/localhost ([`crate::https`]),
//! so an `https://` origin is 127.0.0.1 or localhost on a port of its own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The request target (`/v2/…?n=1000`).
    pub target: String,
    /// Header names in lower case, values as sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The whole request as text (head and body), for assertions that a secret is in
    /// no part of it.
    pub fn text(&self) -> String {
        let mut text = format!("{} {}\n", self.method, self.target);
        for (k, v) in &self.headers {
            text.push_str(&format!("{k}: {v}\n"));
        }
        text.push_str(&String::from_utf8_lossy(&self.body));
        text
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        self.body = body.into();
        self
    }
}

type Answer = dyn Fn(&Request) -> Reply + Send + Sync;

/// A running recorder; stops on drop.
pub struct Recorder {
    pub host: String,
    pub port: u16,
    tls: bool,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Listens on a free port of `host` — over TLS with the kit's certificate in
    /// `pki` (made by [`crate::https::make_pki`]) when given — answering each request
    /// with `answer`. Each connection is served on a thread of its own and closed
    /// after one answer.
    pub fn start(
        host: &str,
        pki: Option<&Path>,
        answer: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Recorder {
        let listener = TcpListener::bind((host, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = pki.map(crate::https::tls_config);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let answer: Arc<Answer> = Arc::new(answer);
        let thread = {
            let (stop, requests) = (stop.clone(), requests.clone());
            std::thread::spawn(move || {
                // Bounded: the server lives at most two minutes even if never dropped.
                let deadline = Instant::now() + Duration::from_secs(120);
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((tcp, _)) => {
                            let (config, requests, answer) =
                                (config.clone(), requests.clone(), answer.clone());
                            std::thread::spawn(move || {
                                serve(tcp, config, &requests, &*answer);
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        Recorder {
            host: host.to_string(),
            port,
            tls: pki.is_some(),
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// `http(s)://host:port` + `path`.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}{path}", self.host, self.port)
    }

    /// `host:port`.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests that carried an `Authorization` header.
    pub fn authorized(&self) -> Vec<Request> {
        let all = self.requests();
        all.into_iter()
            .filter(|r| r.header("authorization").is_some())
            .collect()
    }

    /// Whether `needle` is in any part of any request received.
    pub fn received(&self, needle: &str) -> bool {
        self.requests().iter().any(|r| r.text().contains(needle))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    tcp: TcpStream,
    config: Option<Arc<rustls::ServerConfig>>,
    requests: &Mutex<Vec<Request>>,
    answer: &Answer,
) {
    let _ = tcp.set_nonblocking(false);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(10)));
    match config {
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(config) else {
                return;
            };
            exchange(rustls::StreamOwned::new(conn, tcp), requests, answer);
        }
        None => exchange(tcp, requests, answer),
    }
}

/// Reads one request, records it, writes the answer and closes.
fn exchange(stream: impl Read + Write, requests: &Mutex<Vec<Request>>, answer: &Answer) {
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    requests.lock().unwrap().push(request.clone());
    let reply = answer(&request);
    let mut out = format!("HTTP/1.1 {} Recorded\r\n", reply.status);
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        reply.body.len()
    ));
    let stream = reader.get_mut();
    let mut bytes = out.into_bytes();
    if request.method != "HEAD" {
        bytes.extend_from_slice(&reply.body);
    }
    let _ = stream.write_all(&bytes).and_then(|()| stream.flush());
}

fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if let Some(n) = request.header("content-length") {
        let n: usize = n.parse().ok()?;
        let mut body = vec![0; n.min(64 << 20)];
        reader.read_exact(&mut body).ok()?;
        request.body = body;
    } else if request
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked(reader)?;
    }
    Some(request)
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
        if body.len() > 64 << 20 {
            return None;
        }
    }
}
