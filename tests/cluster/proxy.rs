//! A loopback TCP proxy between clinv and the API server that injects transport faults.
//!
//! A test double by necessity: a real API server cannot be told to delay, stall, reset or
//! cut one chosen response. The proxy forwards the TLS bytes untouched (the serving
//! certificate has SAN 127.0.0.1, so clinv still verifies the real server) and only reads
//! the cleartext TLS record headers (type, version, length) to tell requests apart:
//!
//! - per connection, the client's TLS 1.3 handshake ends with its first application-data
//!   record (type 0x17): rustls sends its encrypted flight (Certificate, CertificateVerify,
//!   Finished) as one record (observed: 595 bytes with the admin certificate, then the
//!   probe's 108), and no record can mix it with a request (handshake and application
//!   data use different keys). A flight over 16 KiB (a long client chain) would break
//!   this; the slow-connection test checks the count against clinv's own.
//! - after it, a client application-data record starts a new request when the server has
//!   sent application data since the current request began (HTTP/1.1: no pipelining, so
//!   the next request waits for the whole response). A session ticket the server sends
//!   before the first request therefore cannot split a request.
//!
//! Requests are numbered from 1 across all connections of the proxy; clinv's publish is
//! 1 = the probe `GET`, 2 = the CRD apply, 3 = the CR apply (when the CRD response already
//! says Established), on one kept-alive connection.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the proxy does to the traffic.
pub enum Fault {
    /// Sleep `per_chunk` before forwarding each chunk, in both directions, once request
    /// `from_request` has begun (0: from the first byte, the handshake included).
    Delay {
        per_chunk: Duration,
        from_request: usize,
    },
    /// Accept connections, never connect upstream, never forward or close.
    StallOnAccept,
    /// Reset (SO_LINGER 0, close) every connection right after accepting it.
    ResetOnConnect,
    /// When request `n` begins, reset both sides instead of forwarding it.
    ResetAtRequest(usize),
    /// Forward the first `bytes` of the response to request `n`, then stall (keep both
    /// connections open, forward nothing more).
    StallResponse { request: usize, bytes: usize },
    /// Forward the first `bytes` of the response to request `n`, then close both sides.
    CutResponse { request: usize, bytes: usize },
    /// When request `n` begins, hold it, run `hook`, then forward it.
    Hold {
        request: usize,
        hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    },
}

/// Per-connection request tracking.
#[derive(Default)]
struct Flight {
    handshake_done: bool,
    /// The request the client is sending or awaiting the response of.
    current: Option<usize>,
    /// The server sent application data since `current` began.
    answered: bool,
    /// Response bytes forwarded for `current`.
    response_bytes: usize,
}

struct Shared {
    upstream: SocketAddr,
    fault: Fault,
    stop: AtomicBool,
    requests: Mutex<usize>,
    connections: Mutex<usize>,
    /// One line per TLS record and per fault action, for failure messages.
    log: Mutex<Vec<String>>,
}

pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on an ephemeral loopback port and forwards to `upstream` with `fault`.
    pub fn start(upstream: SocketAddr, fault: Fault) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            upstream,
            fault,
            stop: AtomicBool::new(false),
            requests: Mutex::new(0),
            connections: Mutex::new(0),
            log: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(conn) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || serve(s, conn));
                }
            }
        });
        Proxy { addr, shared }
    }

    /// `https://127.0.0.1:<port>` of the proxy.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// Requests seen (begun) so far, across connections.
    pub fn requests(&self) -> usize {
        *self.shared.requests.lock().unwrap()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        *self.shared.connections.lock().unwrap()
    }

    /// The record and action log.
    pub fn log(&self) -> String {
        self.shared.log.lock().unwrap().join("\n")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Every pump polls `stop` (reads time out every 20 ms) and then drops its sockets.
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect(self.addr);
    }
}

impl Shared {
    fn note(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }

    /// Waits until the proxy is dropped or the connection is closed by the other pump.
    fn stalled(&self, dead: &AtomicBool) {
        while !self.stop.load(Ordering::SeqCst) && !dead.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Makes the last close of `s` send RST instead of FIN (SO_LINGER 0).
fn linger_zero(s: &TcpStream) {
    let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
}

/// Reads with a short timeout so the pump notices `stop` and `dead`: `None` at EOF, on
/// an error, or when it should end.
fn read(shared: &Shared, dead: &AtomicBool, mut from: &TcpStream, buf: &mut [u8]) -> Option<usize> {
    loop {
        if shared.stop.load(Ordering::SeqCst) || dead.load(Ordering::SeqCst) {
            return None;
        }
        match from.read(buf) {
            Ok(0) => return None,
            Ok(n) => return Some(n),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return None,
        }
    }
}

fn serve(shared: Arc<Shared>, client: TcpStream) {
    let n = {
        let mut c = shared.connections.lock().unwrap();
        *c += 1;
        *c
    };
    shared.note(format!("conn {n}: accepted"));
    match shared.fault {
        Fault::StallOnAccept => {
            shared.stalled(&AtomicBool::new(false));
            return;
        }
        Fault::ResetOnConnect => {
            shared.note(format!("conn {n}: reset"));
            linger_zero(&client);
            return;
        }
        _ => {}
    }
    let Ok(server) = TcpStream::connect(shared.upstream) else {
        linger_zero(&client);
        return;
    };
    for s in [&client, &server] {
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    }
    let conn = Arc::new(Conn {
        n,
        flight: Mutex::new(Flight::default()),
        dead: AtomicBool::new(false),
    });
    let (c2, s2, sh2, conn2) = (
        client.try_clone().unwrap(),
        server.try_clone().unwrap(),
        shared.clone(),
        conn.clone(),
    );
    let up = std::thread::spawn(move || upstream(&sh2, &conn2, c2, s2));
    downstream(&shared, &conn, client, server);
    let _ = up.join();
}

/// One proxied connection, shared by its two pumps.
struct Conn {
    n: usize,
    flight: Mutex<Flight>,
    /// Set by a pump that reset or closed the connection: the other drops its handles too
    /// (the RST goes out when the last descriptor closes).
    dead: AtomicBool,
}

/// The length of a TLS 1.3 record that carries an alert.
const TLS13_ALERT: usize = 19;

/// Client → server: numbers requests and applies the request faults.
fn upstream(shared: &Shared, c: &Conn, client: TcpStream, server: TcpStream) {
    let (conn, flight) = (c.n, &c.flight);
    let mut to_server = &server;
    let mut records = Records::default();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let Some(n) = read(shared, &c.dead, &client, &mut buf) else {
            let _ = server.shutdown(Shutdown::Write);
            return;
        };
        let mut from = 0;
        for (offset, kind, len) in records.scan(&buf[..n]) {
            shared.note(format!(
                "conn {conn}: client record type {kind:#04x} len {len}"
            ));
            let begun = {
                let mut f = flight.lock().unwrap();
                // An application-data record of 19 bytes is TLS 1.3's encrypted alert
                // (2 bytes, its type and a 16-byte tag): the client's close_notify when it
                // drops a kept-alive connection, not a request (no request is that small).
                if kind != 0x17 || len <= TLS13_ALERT {
                    None
                } else if !f.handshake_done {
                    f.handshake_done = true;
                    None
                } else if f.current.is_none() || f.answered {
                    let mut r = shared.requests.lock().unwrap();
                    *r += 1;
                    *f = Flight {
                        handshake_done: true,
                        current: Some(*r),
                        ..Flight::default()
                    };
                    Some(*r)
                } else {
                    None
                }
            };
            let Some(request) = begun else { continue };
            shared.note(format!("conn {conn}: request {request} begins"));
            if to_server.write_all(&buf[from..offset]).is_err() {
                return;
            }
            from = offset;
            match &shared.fault {
                Fault::ResetAtRequest(r) if *r == request => {
                    shared.note(format!("conn {conn}: reset at request {request}"));
                    linger_zero(&client);
                    linger_zero(&server);
                    c.dead.store(true, Ordering::SeqCst);
                    return;
                }
                Fault::Hold { request: r, hook } if *r == request => {
                    shared.note(format!("conn {conn}: holding request {request}"));
                    if let Some(hook) = hook.lock().unwrap().take() {
                        hook();
                    }
                    shared.note(format!("conn {conn}: releasing request {request}"));
                }
                _ => {}
            }
        }
        delay(shared, flight);
        if to_server.write_all(&buf[from..n]).is_err() {
            let _ = client.shutdown(Shutdown::Both);
            c.dead.store(true, Ordering::SeqCst);
            return;
        }
    }
}

/// Server → client: applies the response faults.
fn downstream(shared: &Shared, c: &Conn, client: TcpStream, server: TcpStream) {
    let (conn, flight) = (c.n, &c.flight);
    let mut to_client = &client;
    let mut records = Records::default();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let Some(n) = read(shared, &c.dead, &server, &mut buf) else {
            shared.note(format!("conn {conn}: server side ended"));
            let _ = client.shutdown(Shutdown::Write);
            return;
        };
        let starts = records.scan(&buf[..n]);
        for (_, kind, len) in &starts {
            shared.note(format!(
                "conn {conn}: server record type {kind:#04x} len {len}"
            ));
        }
        let (request, already) = {
            let mut f = flight.lock().unwrap();
            if f.current.is_some() && starts.iter().any(|(_, kind, _)| *kind == 0x17) {
                f.answered = true;
            }
            let already = f.response_bytes;
            f.response_bytes += n;
            (f.current.unwrap_or(0), already)
        };
        let limit = match &shared.fault {
            Fault::StallResponse { request: r, bytes }
            | Fault::CutResponse { request: r, bytes }
                if *r == request =>
            {
                Some(bytes.saturating_sub(already).min(n))
            }
            _ => None,
        };
        delay(shared, flight);
        let send = limit.unwrap_or(n);
        if to_client.write_all(&buf[..send]).is_err() {
            let _ = server.shutdown(Shutdown::Both);
            c.dead.store(true, Ordering::SeqCst);
            return;
        }
        if send < n {
            match shared.fault {
                Fault::CutResponse { .. } => {
                    shared.note(format!(
                        "conn {conn}: cut the response to request {request} after {} bytes",
                        already + send
                    ));
                    let _ = client.shutdown(Shutdown::Both);
                    let _ = server.shutdown(Shutdown::Both);
                    c.dead.store(true, Ordering::SeqCst);
                }
                _ => {
                    shared.note(format!(
                        "conn {conn}: stalling the response to request {request} after {} bytes",
                        already + send
                    ));
                    shared.stalled(&c.dead);
                }
            }
            return;
        }
    }
}

fn delay(shared: &Shared, flight: &Mutex<Flight>) {
    if let Fault::Delay {
        per_chunk,
        from_request,
    } = shared.fault
    {
        let current = flight.lock().unwrap().current.unwrap_or(0);
        if current >= from_request {
            std::thread::sleep(per_chunk);
        }
    }
}

/// Finds TLS record headers in a byte stream cut into arbitrary chunks.
#[derive(Default)]
struct Records {
    header: Vec<u8>,
    /// Body bytes of the current record still to come.
    left: usize,
}

impl Records {
    /// The records whose 5-byte header completes in `chunk`: (offset of the header in the
    /// chunk, or 0 when it began in an earlier chunk; content type; body length).
    fn scan(&mut self, chunk: &[u8]) -> Vec<(usize, u8, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < chunk.len() {
            if self.left > 0 {
                let n = self.left.min(chunk.len() - i);
                self.left -= n;
                i += n;
                continue;
            }
            let start = i;
            let n = (5 - self.header.len()).min(chunk.len() - i);
            self.header.extend_from_slice(&chunk[i..i + n]);
            i += n;
            if self.header.len() == 5 {
                let h = std::mem::take(&mut self.header);
                let len = u16::from_be_bytes([h[3], h[4]]) as usize;
                out.push((start, h[0], len));
                self.left = len;
            }
        }
        out
    }
}

fn record_headers_are_found_across_chunk_boundaries() {
    let mut r = Records::default();
    // One 3-byte record, then a header split over two chunks.
    assert_eq!(
        r.scan(&[0x16, 3, 3, 0, 3, 1, 2, 3, 0x17, 3]),
        vec![(0, 0x16, 3)]
    );
    assert_eq!(r.scan(&[3, 0, 2, 9]), vec![(0, 0x17, 2)]);
    assert_eq!(r.scan(&[9, 0x17, 3, 3, 0, 0]), vec![(1, 0x17, 0)]);
}

trials! {
    Nothing: [
        record_headers_are_found_across_chunk_boundaries,
    ],
}
