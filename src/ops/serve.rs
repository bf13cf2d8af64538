//! The delivery loop's HTTP endpoints: `/metrics`, `/healthz`, `/readyz`.
//!
//! A small HTTP/1 server (hyper, the HTTP stack kube already links) whose connections are
//! tasks on the process's runtime ([`crate::util::runtime`]), so the loop's own work never
//! waits on a scrape and a scrape never waits on the loop:
//!
//! - `GET /metrics`: the text the render closure returns on each scrape (its content type
//!   given at start); 500 when it fails;
//! - `GET /healthz`: 200 while the process runs and, once it [beats](Server::beat), while
//!   its beats keep coming; 503 when they stopped (liveness);
//! - `GET /readyz`: 503 until [`Server::set_ready`], then 200 (readiness);
//! - any other path 404, any other method 405.
//!
//! Bounded: request bodies are never read, headers are hyper's (≤ ~400 KiB) and must
//! arrive within [`HEADER_TIMEOUT`], each connection is a task of its own (a slow client
//! holds only its own), and at most [`MAX_CONNECTIONS`] are open at once. A connection
//! past the bound is not refused: the one idle longest (no request since it was opened or
//! since its last one) is closed to make room, so clients that open connections and send
//! nothing cannot keep a liveness probe out (issue #48). Dropping the [`Server`] (or
//! [`Server::shutdown`]) stops it and every connection.

use crate::error::{ArgumentError, Error, Result};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a client has to send its request line and headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections open at once; a scraper and a probe or two need a handful.
pub const MAX_CONNECTIONS: usize = 64;

/// The content type of `/healthz`, `/readyz` and the error answers.
pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";

/// What `/metrics` answers on each scrape: the text, or why it could not be made.
pub type Render = dyn Fn() -> Result<String> + Send + Sync;

/// A running server; stops when dropped.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// The accepting task (`None` once stopped).
    accept: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

/// What the connections share: the readiness flag, the open connections and the render.
struct Shared {
    ready: AtomicBool,
    /// When the serving process last said it is alive ([`Server::beat`]), and how long
    /// it may stay silent before `/healthz` says it stalled (`None`: never).
    beat: Mutex<(Instant, Option<Duration>)>,
    /// Connection tasks alive (counted until the task is dropped).
    open: AtomicUsize,
    /// The open connections by id, for closing the one idle longest at the bound.
    slots: Mutex<Vec<Slot>>,
    content_type: &'static str,
    render: Box<Render>,
}

/// One open connection: when it was opened or last sent a request, and its task.
struct Slot {
    id: u64,
    last: Instant,
    task: tokio::task::JoinHandle<()>,
}

impl Shared {
    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        // Nothing panics while holding it; a poisoned list is still a valid list.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long the process has been silent past its bound, if it has.
    fn stalled(&self) -> Option<Duration> {
        let (at, stall) = *self.beat.lock().unwrap_or_else(PoisonError::into_inner);
        let silent = at.elapsed();
        stall.filter(|s| silent > *s).map(|_| silent)
    }

    /// Connection `id` sent a request: it is not idle.
    fn touch(&self, id: u64) {
        if let Some(slot) = self.slots().iter_mut().find(|s| s.id == id) {
            slot.last = Instant::now();
        }
    }

    /// Takes out the connection idle longest, to be closed (`None`: none is open).
    fn idlest(&self) -> Option<tokio::task::JoinHandle<()>> {
        let mut slots = self.slots();
        slots.retain(|s| !s.task.is_finished());
        let oldest = slots
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.last)
            .map(|(i, _)| i)?;
        Some(slots.swap_remove(oldest).task)
    }
}

impl Server {
    /// The address it listens on (the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on `/readyz` answers 200 (`true`) or 503 (`false`).
    pub fn set_ready(&self, ready: bool) {
        self.shared.ready.store(ready, Ordering::SeqCst);
    }

    /// The serving process is alive now; `/healthz` answers 503 once `stall` passes
    /// without another beat (a loop whose thread is stuck is restarted, not trusted).
    pub fn beat(&self, stall: Duration) {
        let mut beat = self
            .shared
            .beat
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *beat = (Instant::now(), Some(stall));
    }

    /// Stops listening and closes every connection; returns when they are closed.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        let Some(accept) = self.accept.take() else {
            return;
        };
        accept.abort();
        let Ok(runtime) = crate::util::runtime::get() else {
            return;
        };
        // The listener is closed once the accepting task is gone: no connection is
        // opened after the open ones are taken.
        let _ = runtime.block_on(accept);
        let tasks: Vec<_> = std::mem::take(&mut *self.shared.slots())
            .into_iter()
            .map(|s| s.task)
            .collect();
        for task in &tasks {
            task.abort();
        }
        runtime.block_on(async {
            for task in tasks {
                let _ = task.await;
            }
        });
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Listens on `addr` (`HOST:PORT`) and serves the endpoints from the process's runtime;
/// `/metrics` answers `render()` as `content_type`.
///
/// # Errors
/// `addr` is not `HOST:PORT` or names no address ([`ArgumentError::ListenAddress`]);
/// the address cannot be listened on ([`Error::Listen`]: in use, not this host's);
/// the runtime cannot start.
pub fn start(
    addr: &str,
    content_type: &'static str,
    render: impl Fn() -> Result<String> + Send + Sync + 'static,
) -> Result<Server> {
    let listener = bind(addr)?;
    let listen = |source| Error::Listen {
        addr: addr.to_string(),
        source,
    };
    let local = listener.local_addr().map_err(listen)?;
    listener.set_nonblocking(true).map_err(listen)?;
    let runtime = crate::util::runtime::get().map_err(Error::Runtime)?;
    let listener = {
        let _context = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(listen)?
    };
    let shared = Arc::new(Shared {
        ready: AtomicBool::new(false),
        beat: Mutex::new((Instant::now(), None)),
        open: AtomicUsize::new(0),
        slots: Mutex::new(Vec::with_capacity(MAX_CONNECTIONS)),
        content_type,
        render: Box::new(render),
    });
    let accept = runtime.spawn(accept(listener, shared.clone()));
    Ok(Server {
        addr: local,
        shared,
        accept: Some(accept),
    })
}

/// A listener on the first of `addr`'s addresses that can be bound.
fn bind(addr: &str) -> Result<TcpListener> {
    let malformed = |why: String| ArgumentError::ListenAddress {
        text: addr.to_string(),
        why,
    };
    let candidates: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| malformed(e.to_string()))?
        .collect();
    let mut last = None;
    for candidate in &candidates {
        match TcpListener::bind(candidate) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(source) => Error::Listen {
            addr: addr.to_string(),
            source,
        },
        None => malformed("it names no address".into()).into(),
    })
}

/// Accepts connections until the server stops, each served by a task of its own;
/// at the bound, the connection idle longest is closed first.
async fn accept(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let mut next_id = 0u64;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: wait instead of spinning.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if !make_room(&shared).await {
            continue;
        }
        next_id += 1;
        let id = next_id;
        shared.open.fetch_add(1, Ordering::SeqCst);
        let open = Open {
            id,
            shared: shared.clone(),
        };
        let task = tokio::spawn(serve(stream, open));
        // A connection that ended before it is listed leaves a finished task here,
        // which `idlest` and the stop skip.
        shared.slots().push(Slot {
            id,
            last: Instant::now(),
            task,
        });
    }
}

/// Closes connections idle longest until one more fits under [`MAX_CONNECTIONS`]; waits
/// until each closed one is gone, so the bound is never passed. False when none can be
/// closed (the new connection is then dropped).
async fn make_room(shared: &Shared) -> bool {
    while shared.open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
        let Some(task) = shared.idlest() else {
            return false;
        };
        task.abort();
        // Cancelled (or ended on its own): its socket and count are dropped with it.
        let _ = task.await;
    }
    true
}

/// Serves one connection until it ends, fails or is closed to make room.
async fn serve(stream: tokio::net::TcpStream, open: Open) {
    let shared = &open.shared;
    let service = hyper::service::service_fn(|request| {
        shared.touch(open.id);
        let answer = answer(request.method(), request.uri().path(), shared);
        std::future::ready(Ok::<_, std::convert::Infallible>(answer))
    });
    // A client that goes away or sends garbage ends only its own connection.
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
}

/// One open connection, counted (and listed) until its task ends or is dropped.
struct Open {
    id: u64,
    shared: Arc<Shared>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.shared.slots().retain(|s| s.id != self.id);
        self.shared.open.fetch_sub(1, Ordering::SeqCst);
    }
}

type Answer = hyper::Response<http_body_util::Full<hyper::body::Bytes>>;

/// The answer to `method path` (the body of a request is never read).
fn answer(method: &hyper::Method, path: &str, shared: &Shared) -> Answer {
    use hyper::StatusCode as S;
    if !matches!(path, "/metrics" | "/healthz" | "/readyz") {
        return text(S::NOT_FOUND, TEXT_PLAIN, "not found\n".into());
    }
    if method != hyper::Method::GET && method != hyper::Method::HEAD {
        let mut refused = text(
            S::METHOD_NOT_ALLOWED,
            TEXT_PLAIN,
            "GET or HEAD only\n".into(),
        );
        let allow = hyper::header::HeaderValue::from_static("GET, HEAD");
        refused.headers_mut().insert(hyper::header::ALLOW, allow);
        return refused;
    }
    match path {
        "/healthz" => match shared.stalled() {
            None => text(S::OK, TEXT_PLAIN, "ok\n".into()),
            Some(silent) => text(
                S::SERVICE_UNAVAILABLE,
                TEXT_PLAIN,
                format!("stalled: no turn of the loop for {}s\n", silent.as_secs()),
            ),
        },
        "/readyz" if shared.ready.load(Ordering::SeqCst) => {
            text(S::OK, TEXT_PLAIN, "ready\n".into())
        }
        "/readyz" => text(S::SERVICE_UNAVAILABLE, TEXT_PLAIN, "not ready\n".into()),
        _ => match (shared.render)() {
            Ok(metrics) => text(S::OK, shared.content_type, metrics),
            // The headline only: a scraper is told that it failed, not the store's paths.
            Err(e) => text(S::INTERNAL_SERVER_ERROR, TEXT_PLAIN, format!("{e}\n")),
        },
    }
}

fn text(status: hyper::StatusCode, content_type: &'static str, body: String) -> Answer {
    let mut answer = hyper::Response::new(http_body_util::Full::new(body.into()));
    *answer.status_mut() = status;
    let kind = hyper::header::HeaderValue::from_static(content_type);
    answer
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, kind);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .new_agent()
    }

    /// The status, content type and body of `GET path`.
    fn get(server: &Server, path: &str) -> (u16, String, String) {
        let url = format!("http://{}{path}", server.local_addr());
        let mut answer = agent().get(&url).call().expect(&url);
        let kind = answer
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let body = answer.body_mut().read_to_string().unwrap();
        (answer.status().as_u16(), kind, body)
    }

    fn scrapes() -> (Server, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        let server = start("127.0.0.1:0", TEXT, move || {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(format!("scrape {n}\n"))
        })
        .unwrap();
        (server, count)
    }

    #[test]
    fn healthz_says_a_process_whose_beats_stopped_has_stalled() {
        let (server, _) = scrapes();
        server.beat(Duration::from_millis(200));
        assert_eq!(get(&server, "/healthz").0, 200);
        std::thread::sleep(Duration::from_millis(400));
        let (code, _, body) = get(&server, "/healthz");
        assert_eq!(code, 503, "{body}");
        assert!(
            body.starts_with("stalled: no turn of the loop for"),
            "{body}"
        );
        server.beat(Duration::from_millis(200));
        assert_eq!(get(&server, "/healthz").0, 200);
    }

    #[test]
    fn each_path_answers_its_code_and_metrics_are_rendered_on_each_scrape() {
        let (server, count) = scrapes();
        assert_ne!(server.local_addr().port(), 0);
        assert_eq!(get(&server, "/healthz").0, 200);
        let (code, _, body) = get(&server, "/readyz");
        assert_eq!((code, body.as_str()), (503, "not ready\n"));
        server.set_ready(true);
        assert_eq!(
            get(&server, "/readyz"),
            (200, TEXT_PLAIN.into(), "ready\n".into())
        );
        assert_eq!(
            get(&server, "/metrics"),
            (200, TEXT.into(), "scrape 1\n".into())
        );
        assert_eq!(get(&server, "/metrics").2, "scrape 2\n");
        assert_eq!(get(&server, "/metrics?x=1").2, "scrape 3\n");
        assert_eq!(get(&server, "/").0, 404);
        assert_eq!(get(&server, "/metrics/x").0, 404);
        assert_eq!(count.load(Ordering::SeqCst), 3);
        let url = format!("http://{}/metrics", server.local_addr());
        let head = agent().head(&url).call().unwrap();
        assert_eq!(head.status().as_u16(), 200);
        assert_eq!(count.load(Ordering::SeqCst), 4);
        let posted = agent().post(&url).send("x").unwrap();
        assert_eq!(posted.status().as_u16(), 405);
        assert_eq!(posted.headers().get("allow").unwrap(), "GET, HEAD");
    }

    #[test]
    fn a_render_that_fails_is_a_500_that_names_no_detail() {
        let server = start("127.0.0.1:0", TEXT, || {
            Err(Error::Exposition(std::fmt::Error))
        })
        .unwrap();
        let (code, _, body) = get(&server, "/metrics");
        assert_eq!((code, body.as_str()), (500, "cannot encode the metrics\n"));
        assert_eq!(get(&server, "/healthz").0, 200);
    }

    #[test]
    fn an_address_in_use_is_an_error_that_names_it() {
        let (server, _) = scrapes();
        let addr = server.local_addr().to_string();
        let e = start(&addr, TEXT, || Ok(String::new())).unwrap_err();
        assert!(matches!(e, Error::Listen { .. }), "{e:?}");
        assert_eq!(e.to_string(), format!("cannot listen on {addr}"));
        assert_eq!(e.exit_code(), crate::error::exit::FAILURE);
    }

    #[test]
    fn an_address_that_is_not_host_and_port_is_a_usage_error() {
        for text in ["9464", "", "localhost", "127.0.0.1:port", "[::1:9464"] {
            let e = start(text, TEXT, || Ok(String::new())).unwrap_err();
            assert!(
                matches!(&e, Error::Argument(ArgumentError::ListenAddress { text: t, .. }) if t == text),
                "{text}: {e:?}"
            );
            assert_eq!(e.exit_code(), crate::error::exit::USAGE);
        }
    }

    #[test]
    fn a_slow_client_does_not_hold_the_others() {
        let (server, _) = scrapes();
        let mut slow = std::net::TcpStream::connect(server.local_addr()).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        assert_eq!(get(&server, "/healthz").0, 200);
        assert_eq!(get(&server, "/metrics").2, "scrape 1\n");
        drop(slow);
    }

    /// `n` connections that send nothing, each opened again the moment the server closes
    /// it: one unprivileged client holding every slot (issue #48, finding 8). Stops when
    /// dropped.
    struct Hog {
        stop: Arc<AtomicBool>,
        threads: Vec<std::thread::JoinHandle<()>>,
    }

    impl Hog {
        fn new(addr: SocketAddr, n: usize) -> Hog {
            let stop = Arc::new(AtomicBool::new(false));
            let threads = (0..n)
                .map(|_| {
                    let stop = stop.clone();
                    std::thread::Builder::new()
                        .stack_size(64 << 10)
                        .spawn(move || hold(addr, &stop))
                        .unwrap()
                })
                .collect();
            Hog { stop, threads }
        }
    }

    /// Holds one idle connection, reopening it whenever it is closed, until `stop`.
    fn hold(addr: SocketAddr, stop: &AtomicBool) {
        while !stop.load(Ordering::SeqCst) {
            let Ok(mut c) = std::net::TcpStream::connect(addr) else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            let mut buf = [0; 64];
            while !stop.load(Ordering::SeqCst) {
                match c.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => break,
                }
            }
        }
    }

    impl Drop for Hog {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
        }
    }

    fn wait_open(server: &Server, at_least: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while server.shared.open.load(Ordering::SeqCst) < at_least {
            assert!(std::time::Instant::now() < deadline, "not all accepted");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn health_probes_are_answered_while_idle_clients_hold_every_slot() {
        let (server, _) = scrapes();
        let hog = Hog::new(server.local_addr(), MAX_CONNECTIONS);
        wait_open(&server, MAX_CONNECTIONS);
        let url = format!("http://{}/healthz", server.local_addr());
        let probe = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .new_agent();
        for n in 0..8 {
            let started = std::time::Instant::now();
            let answer = probe.get(&url).call();
            let code = answer.as_ref().map(|a| a.status().as_u16());
            assert!(
                matches!(code, Ok(200)),
                "probe {n}: {code:?} after {:?}",
                started.elapsed()
            );
            assert!(started.elapsed() < Duration::from_secs(1), "probe {n}");
            let open = server.shared.open.load(Ordering::SeqCst);
            assert!(open <= MAX_CONNECTIONS, "{open} open");
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(hog);
    }

    /// The server closed `c`: end of stream (or a reset) within a few seconds.
    fn assert_closed(c: &mut std::net::TcpStream) {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut rest = Vec::new();
        match c.read_to_end(&mut rest) {
            Ok(_) => assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest)),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        }
    }

    #[test]
    fn past_the_bound_the_connection_idle_longest_is_closed_and_the_new_one_served() {
        let (server, _) = scrapes();
        let addr = server.local_addr();
        // Opened one after the other, so the first is the one idle longest.
        let mut idle: Vec<_> = (1..=MAX_CONNECTIONS)
            .map(|n| {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                c.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
                wait_open(&server, n);
                c
            })
            .collect();
        // The second one sends a whole request: no longer the idlest of the rest.
        idle[1].write_all(b"Host: x\r\n\r\n").unwrap();
        idle[1]
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut answered = [0; 12];
        idle[1].read_exact(&mut answered).unwrap();
        assert_eq!(&answered, b"HTTP/1.1 200");
        for expected in [0, 2] {
            assert_eq!(get(&server, "/healthz").0, 200);
            let open = server.shared.open.load(Ordering::SeqCst);
            assert!(open <= MAX_CONNECTIONS, "{open} open");
            assert_closed(&mut idle[expected]);
            // The probe's own connection ended too: fill its slot again.
            idle.push(std::net::TcpStream::connect(addr).unwrap());
            wait_open(&server, MAX_CONNECTIONS);
        }
        drop(idle);
        let freed = std::time::Instant::now() + Duration::from_secs(5);
        while server.shared.open.load(Ordering::SeqCst) > 0 {
            assert!(std::time::Instant::now() < freed, "not freed");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(server.shared.slots().is_empty());
    }

    #[test]
    fn a_stopped_server_closes_its_connections_and_its_port() {
        let (server, _) = scrapes();
        let addr = server.local_addr();
        let mut open = std::net::TcpStream::connect(addr).unwrap();
        open.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        server.shutdown();
        open.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut rest = Vec::new();
        // Closed, not left hanging: end of stream (or a reset), within the timeout.
        match open.read_to_end(&mut rest) {
            Ok(_) => assert!(rest.is_empty(), "{rest:?}"),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        }
        assert!(std::net::TcpStream::connect(addr).is_err());
    }

    #[test]
    fn dropping_the_server_stops_it() {
        let (server, _) = scrapes();
        let addr = server.local_addr();
        drop(server);
        assert!(std::net::TcpStream::connect(addr).is_err());
    }
}
