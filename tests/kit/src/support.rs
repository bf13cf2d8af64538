//! Runs the real `clinv` binary in an isolated environment: no inherited variables
//! except PATH, a fixed SOURCE_DATE_EPOCH, no colour, and a KUBECONFIG that points
//! nowhere.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const EPOCH: &str = "1700000000";

/// The repository root (this crate lives at `tests/kit/`).
pub fn repo() -> PathBuf {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR"));
    kit.ancestors().nth(2).unwrap_or(kit).to_path_buf()
}

pub fn example() -> PathBuf {
    repo().join("examples/acme")
}

pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// The result of one run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// Asserts that the command exited 0 (printing both streams when not), and hands the
    /// run back for its output.
    pub fn success(self) -> Run {
        assert_eq!(
            self.code, 0,
            "stderr: {}\nstdout: {}",
            self.stderr, self.stdout
        );
        self
    }
}

/// Asserts that `text` (a run's output, a file) contains `needle`, printing `text` when
/// not: the check most tests make, in one line so that a test reads as what it expects.
#[track_caller]
pub fn assert_has(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} is not in:\n{text}");
}

/// Asserts that `text` does not contain `needle`, printing `text` when it does.
#[track_caller]
pub fn assert_lacks(text: &str, needle: &str) {
    assert!(!text.contains(needle), "{needle:?} is in:\n{text}");
}

/// A store shared by the runs of one test process that do not choose their own.
pub fn scratch_store() -> PathBuf {
    std::env::temp_dir()
        .join(format!("clinv-tests-{}", std::process::id()))
        .join("snapshots")
}

/// A command ready to run; `env` and `cwd` adjust it.
pub struct Clinv {
    cmd: Command,
    stdin: Option<Vec<u8>>,
}

/// `--kubeconfig kc` for a command line whose command talks to a cluster; nothing for
/// the others, which refuse the flag.
pub fn aimed<'a>(args: &[&'a str], kc: &'a str) -> Vec<&'a str> {
    const CLUSTER: [&str; 7] = [
        "publish", "status", "replay", "drift", "updates", "agent", "diff",
    ];
    match args.first() {
        Some(command) if CLUSTER.contains(command) => vec!["--kubeconfig", kc],
        _ => Vec::new(),
    }
}

/// A loopback port kept for a server the test is about to start, until dropped.
///
/// A socket bound to it with `SO_REUSEADDR`, never listening: the system gives the port
/// to no `bind(0)` and no outgoing connection, and to no bind without `SO_REUSEADDR`,
/// while a server that binds with `SO_REUSEADDR` (nginx, Go's listeners,
/// sshd, tinyproxy, git daemon `--reuseaddr`, Python's `HTTPServer`) still can. Drop it
/// once the server listens. (A port read from a dropped listener, as before, was free for
/// anyone until the server bound it.)
pub struct Reserved {
    _socket: socket2::Socket,
    pub port: u16,
}

/// Reserves a port of the loopback address `host`, the system's choice ([`Reserved`]).
pub fn reserve_port(host: &str) -> Reserved {
    use socket2::{Domain, Socket, Type};
    let ip: std::net::IpAddr = host.parse().expect("a loopback IP address");
    let socket = Socket::new(Domain::for_address((ip, 0).into()), Type::STREAM, None).unwrap();
    socket.set_reuse_address(true).unwrap();
    socket
        .bind(&std::net::SocketAddr::from((ip, 0)).into())
        .unwrap();
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    Reserved {
        _socket: socket,
        port,
    }
}

/// Whether something accepts connections on `host:port`.
pub fn listening(host: &str, port: u16) -> bool {
    std::net::TcpStream::connect((host, port)).is_ok()
}

/// Calls `done` every `every` until it is true (true) or `limit` has passed (false).
pub fn poll(limit: Duration, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(every);
    }
}

/// A lock file held by the test itself, until this is dropped.
///
/// A store domain's `lock` or a repository's `clinv.lock`, on the test's own open file
/// description: clinv — another process — finds it held from the moment [`hold_lock`]
/// returns. No holder process to start and no sleep to "give it time": the test knows it
/// holds the lock.
pub struct HeldLock {
    _file: std::fs::File,
}

/// Takes the lock file at `path` (created if missing, as clinv creates it), which must
/// be free.
pub fn hold_lock(path: &Path) -> HeldLock {
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.try_lock()
        .unwrap_or_else(|e| panic!("{} is not free: {e}", path.display()));
    HeldLock { _file: file }
}

/// Whether a process other than this one has `path` open (Linux: its `/proc/PID/fd` links).
///
/// clinv opens a lock file only to take it, so one that has it open while the test holds
/// the lock is waiting for it: the probe that replaces "sleep, then assume".
pub fn opened_elsewhere(path: &Path) -> bool {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let me = std::process::id().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let name = p.file_name();
        let name = name.to_string_lossy();
        name.bytes().all(|b| b.is_ascii_digit())
            && name != me
            && std::fs::read_dir(p.path().join("fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == want))
    })
}

/// Waits until another process has `path` open ([`opened_elsewhere`]); panics after
/// `limit`, naming what was waited for.
pub fn await_waiter(path: &Path, limit: Duration) {
    assert!(
        poll(limit, Duration::from_millis(10), || opened_elsewhere(path)),
        "no process opened {} within {limit:?}",
        path.display()
    );
}

/// A loopback port that refuses connections, below the ephemeral range.
///
/// A port freed from a listener of this process could be handed at once to a listener of a
/// test running beside it (a black hole that must see no connection), which the "refused"
/// connections would then reach. Each call gives the next such port, so two refused servers
/// of one test differ.
pub fn refused_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(1);
    for _ in 1..1024 {
        let port = NEXT.fetch_add(1, Ordering::Relaxed) % 1023 + 1;
        let refused = std::net::TcpStream::connect(("127.0.0.1", port))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused);
        if refused {
            return port;
        }
    }
    panic!("no loopback port below 1024 refuses connections")
}

/// `git -C dir ARGS…` without the user's or the system's configuration; its stdout.
/// Panics with git's stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = succeeded(
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("HOME", "/nonexistent")
            .env("GIT_CONFIG_NOSYSTEM", "1"),
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `command` to its end, asserts that it exited 0, and gives its stdout.
///
/// Runs `command` to its end and asserts that it exited 0 (printing the command line
/// and its stderr when not): the helper programs a test drives (git, openssl, curl,
/// kubectl) must work for the test to mean anything. Its stdout.
#[track_caller]
pub fn succeeded(command: &mut Command) -> Vec<u8> {
    let program = command.get_program().to_string_lossy().into_owned();
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{program} does not start: {e}"));
    let args: Vec<_> = command.get_args().collect();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Starts a server program with no stdin, stdout or stderr (it logs to its own file);
/// panics naming the program when it cannot start.
#[track_caller]
pub fn spawn_quiet(command: &mut Command) -> std::process::Child {
    let program = command.get_program().to_string_lossy().into_owned();
    let null = std::process::Stdio::null;
    let spawned = command.stdin(null()).stdout(null()).stderr(null()).spawn();
    spawned.unwrap_or_else(|e| panic!("{program} does not start: {e}"))
}

/// GNU time (Debian's `time`; `.ci/run` installs it).
pub const GNU_TIME: &str = "/usr/bin/time";

/// Whether GNU time is there to measure a peak RSS.
pub fn gnu_time() -> Result<(), String> {
    let out = Command::new(GNU_TIME).arg("--version").output();
    match out {
        Ok(o)
            if String::from_utf8_lossy(&o.stdout).contains("GNU")
                || String::from_utf8_lossy(&o.stderr).contains("GNU") =>
        {
            Ok(())
        }
        _ => Err(format!(
            "GNU time ({GNU_TIME}, Debian's `time`) is not installed"
        )),
    }
}

/// The string `key` of every object of the JSON array `array` (a name per addon, a
/// manager per managed field); panics when `array` is not an array of such objects.
pub fn fields<'a>(array: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    let items = array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"));
    items.iter().map(|e| e[key].as_str().unwrap()).collect()
}

/// `clinv render -o json` of `domain` in the project at `root`, parsed.
pub fn rendered(root: &Path, domain: &str) -> serde_json::Value {
    let out = clinv(&[
        "render",
        "--root",
        root.to_str().unwrap(),
        "--domain",
        domain,
        "-o",
        "json",
    ])
    .run()
    .success();
    serde_json::from_str(&out.stdout).unwrap()
}

pub fn clinv(args: &[&str]) -> Clinv {
    let mut cmd = Command::new(crate::harness::clinv_bin());
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("SOURCE_DATE_EPOCH", EPOCH)
        // Never write a store into the repository's example project.
        .env("CLINV_SNAPSHOTS", scratch_store())
        .args(args);
    Clinv { cmd, stdin: None }
}

impl Clinv {
    pub fn env(mut self, key: &str, value: &str) -> Clinv {
        self.cmd.env(key, value);
        self
    }

    /// More arguments, after those given so far.
    pub fn args<S: AsRef<std::ffi::OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Clinv {
        self.cmd.args(args);
        self
    }

    /// `--root root --domain domain`: the project and the cluster most command lines name.
    pub fn project(self, root: impl AsRef<std::ffi::OsStr>, domain: &str) -> Clinv {
        self.root(root).args(["--domain", domain])
    }

    /// `--root root`.
    pub fn root(mut self, root: impl AsRef<std::ffi::OsStr>) -> Clinv {
        self.cmd.arg("--root").arg(root);
        self
    }

    /// `--kubeconfig kubeconfig`.
    pub fn kubeconfig(mut self, kubeconfig: impl AsRef<std::ffi::OsStr>) -> Clinv {
        self.cmd.arg("--kubeconfig").arg(kubeconfig);
        self
    }

    /// The snapshot store at `dir` (`CLINV_SNAPSHOTS`) instead of the shared scratch one.
    pub fn store(mut self, dir: impl AsRef<std::ffi::OsStr>) -> Clinv {
        self.cmd.env("CLINV_SNAPSHOTS", dir);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Clinv {
        self.cmd.env_remove(key);
        self
    }

    pub fn cwd(mut self, dir: &Path) -> Clinv {
        self.cmd.current_dir(dir);
        self
    }

    /// Feeds `bytes` on stdin.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Clinv {
        self.stdin = Some(bytes.into());
        self
    }

    /// Runs under GNU time, which takes the child's peak RSS from `wait4`'s rusage:
    /// the run and that peak in KiB.
    pub fn run_with_peak_rss(self) -> (Run, u64) {
        let out = tempfile::NamedTempFile::new().unwrap();
        let mut timed = Command::new(GNU_TIME);
        timed.args(["-f", "%M", "-o"]).arg(out.path());
        timed.arg(self.cmd.get_program()).args(self.cmd.get_args());
        timed.env_clear();
        for (key, value) in self.cmd.get_envs() {
            if let Some(value) = value {
                timed.env(key, value);
            }
        }
        if let Some(dir) = self.cmd.get_current_dir() {
            timed.current_dir(dir);
        }
        let run = Clinv {
            cmd: timed,
            stdin: self.stdin,
        }
        .run();
        let text = std::fs::read_to_string(out.path()).unwrap();
        let peak = text.lines().last().and_then(|l| l.trim().parse().ok());
        (
            run,
            peak.unwrap_or_else(|| panic!("no peak RSS from {GNU_TIME}: {text}")),
        )
    }

    pub fn run(mut self) -> Run {
        use std::process::Stdio;
        let start = Instant::now();
        let output = match self.stdin.take() {
            None => self.cmd.output(),
            Some(bytes) => {
                let mut child = self
                    .cmd
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("clinv starts");
                let mut input = child.stdin.take().unwrap();
                let writer = std::thread::spawn(move || {
                    // clinv may stop reading early; a broken pipe here is fine.
                    let _ = std::io::Write::write_all(&mut input, &bytes);
                });
                let output = child.wait_with_output();
                writer.join().unwrap();
                output
            }
        };
        let Output {
            status,
            stdout,
            stderr,
        } = output.expect("clinv runs");
        Run {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            elapsed: start.elapsed(),
        }
    }
}

/// Compares `actual` with `tests/golden/<name>`; `CLINV_BLESS=1` rewrites the file.
pub fn golden(name: &str, actual: &str) {
    blessed(&repo().join("tests/golden").join(name), actual);
}

/// Compares `actual` with the file at `path`; `CLINV_BLESS=1` rewrites it (creating
/// missing directories).
pub fn blessed(path: &Path, actual: &str) {
    if std::env::var_os("CLINV_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run with CLINV_BLESS=1",
            path.display()
        )
    });
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, actual);
        panic!(
            "{} differs (CLINV_BLESS=1 to accept):\n{}",
            path.display(),
            diff.unified_diff().header("expected", "actual")
        );
    }
}

/// Copies a project tree into a temporary directory so a test can change it.
pub fn copy_tree(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(from, dir.path());
    dir
}

/// Copies the folder `from` into `to` (created): its files and folders.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `text` to `dir/rel`, creating parents.
pub fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// A one-domain project whose cluster spec is `spec`.
pub fn project_with_spec(spec: &str) -> tempfile::TempDir {
    let dir = copy_tree(&fixture("inv"));
    write(dir.path(), "clusters/inv/cluster.lok8s.yaml", spec);
    dir
}

/// Sets the `version:` pin of an addon's chart.yaml in a project copy.
pub fn set_chart_version(root: &Path, addon: &str, version: &str) {
    let path = root.join(format!(".lok8s/addons/{addon}/chart.yaml"));
    replace_first(&path, r"(?m)^version: .*$", &format!("version: {version}"));
}

/// Rewrites the file with the first match of `pattern` replaced by `with` (`${1}`: a group).
pub fn replace_first(path: &Path, pattern: &str, with: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let re = regex::Regex::new(pattern).unwrap();
    std::fs::write(path, re.replace(&text, with).as_bytes()).unwrap();
}

/// A journal line for `record`: its JSON after the sha256 of that JSON, as clinv writes
/// it (what a hand-edited record needs to verify).
pub fn journal_line(record: &serde_json::Value) -> String {
    use sha2::Digest;
    let json = serde_json::to_string(record).unwrap();
    let sum = format!("{:x}", sha2::Sha256::digest(json.as_bytes()));
    format!("{sum} {json}\n")
}

/// Marks every pending snapshot of a domain applied, without a cluster.
///
/// Rewrites the domain's active segment ([`journal_file`]) with every `pending` state
/// record made `applied` (and its checksum recomputed): the store then says the snapshots
/// reached the cluster, as a delivery records it.
pub fn mark_applied(domain_dir: &Path) {
    let journal = journal_file(domain_dir);
    let mut lines = String::new();
    for line in std::fs::read_to_string(&journal).unwrap().lines() {
        let (_, json) = line.split_once(' ').unwrap();
        let mut record: serde_json::Value = serde_json::from_str(json).unwrap();
        if record["state"] == "pending" {
            record["state"] = "applied".into();
            record.as_object_mut().unwrap().remove("reason");
            record.as_object_mut().unwrap().remove("detail");
        }
        lines.push_str(&journal_line(&record));
    }
    std::fs::write(&journal, lines).unwrap();
}

/// The segment a domain's next record is appended to (store format 2:
/// `<domain>/segments/<generation>/<n>.log`, the live generation named by `CURRENT`).
pub fn journal_file(domain_dir: &Path) -> PathBuf {
    let segments = domain_dir.join("segments");
    let generation = std::fs::read_to_string(segments.join("CURRENT")).unwrap();
    let dir = segments.join(generation.trim());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    files.sort();
    files.pop().unwrap()
}

/// Every file under `dir`.
pub fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(all_files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// Every file under `dir` whose name marks it temporary.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    all_files(dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".tmp."))
        .collect()
}

/// Edits the example's prod cluster spec (`clusters/prod.acme.example/cluster.lok8s.yaml`
/// under `root`): `from` becomes `to`.
pub fn edit_prod_spec(root: &Path, from: &str, to: &str) {
    let spec = root.join("clusters/prod.acme.example/cluster.lok8s.yaml");
    let text = std::fs::read_to_string(&spec).unwrap().replace(from, to);
    std::fs::write(&spec, text).unwrap();
}

/// Sets the Kubernetes version of the `inv` fixture's cluster spec (a distinct
/// inventory per version).
pub fn set_version(root: &Path, version: &str) {
    let path = root.join("clusters/inv/cluster.lok8s.yaml");
    replace_first(
        &path,
        r"(?m)^(\s*version: ).*$",
        &format!("${{1}}{version}"),
    );
}

/// No test secret (every one holds `FAKESECRET`) in what a run printed.
pub fn no_secret(run: &Run) {
    assert!(
        !run.stdout.contains("FAKESECRET") && !run.stderr.contains("FAKESECRET"),
        "a secret was printed:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A port handed to a server about to start stays its own until it listens: no other
    /// bind takes it meanwhile — not a plain one (another test's server on the same port),
    /// not the system's choice of a free port.
    #[test]
    fn a_port_handed_out_is_taken_by_no_one_else_before_its_server() {
        let reserved = reserve_port("127.0.0.1");
        let port = reserved.port;
        // A server that binds without SO_REUSEADDR. (Rust's own listeners set it, as
        // servers do: a std listener asked for this very port would share it — so the
        // kit hands out only ports the system chose, never ones from a fixed range.)
        let plain =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        assert!(
            plain
                .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
                .is_err(),
            "another test's server took port {port} before this one's started"
        );
        let chosen: Vec<TcpListener> = (0..500)
            .map(|_| TcpListener::bind(("127.0.0.1", 0)).unwrap())
            .collect();
        assert!(
            chosen
                .iter()
                .all(|l| l.local_addr().unwrap().port() != port),
            "the system chose the reserved port {port} for another bind"
        );
        // Its own server binds it (as servers do, with SO_REUSEADDR) and listens.
        let server =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        server.set_reuse_address(true).unwrap();
        server
            .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
            .unwrap();
        server.listen(8).unwrap();
        drop(reserved);
        assert!(listening("127.0.0.1", port));
    }
}

/// A clinv left running (the delivery loop): its stderr gathered as it comes, signals
/// sent with kill(1), killed when dropped.
pub struct Background {
    child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Clinv {
    /// Starts clinv without waiting for it (stdout discarded, stderr gathered).
    pub fn spawn(mut self) -> Background {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = self
            .cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("clinv starts");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Background {
            child,
            stderr,
            reader: Some(reader),
        }
    }
}

impl Background {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits up to `limit` until its stderr satisfies `done`.
    pub fn wait_for(&self, limit: Duration, done: impl Fn(&str) -> bool) -> bool {
        poll(limit, Duration::from_millis(50), || done(&self.stderr()))
    }

    /// Sends `signal` (a kill(1) name: TERM, INT, HUP, KILL).
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{signal} {}", self.child.id());
    }

    /// Its exit code once it ended, waiting up to `limit` (`None`: still running, or
    /// ended by a signal).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<Option<i32>> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
                return Some(status.code());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON events of a delivery loop's stderr (`--log-format json`: every line must
/// be one).
pub fn events(stderr: &str) -> Vec<serde_json::Value> {
    stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: not JSON: {l}")))
        .collect()
}

pub fn has_event(stderr: &str, event: &str, domain: &str) -> bool {
    events(stderr)
        .iter()
        .any(|e| e["event"] == event && (domain.is_empty() || e["domain"] == domain))
}

pub fn count_events(stderr: &str, event: &str) -> usize {
    events(stderr)
        .iter()
        .filter(|e| e["event"] == event)
        .count()
}
