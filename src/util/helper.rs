//! The one runner of helper programs: Docker credential helpers, `git credential`, the
//! commit-signing program (gpg, ssh-keygen) and kubeconfig exec credential plugins.
//!
//! Each is bounded the same way: a deadline (the child — and, off a terminal, its whole
//! process group, so a shell script's own children die too — is killed and reaped at it), a
//! cap on what it writes ([`MAX_OUTPUT`] per stream: beyond it the child is killed), no
//! terminal prompt (`GIT_TERMINAL_PROMPT=0`, stdin a pipe), and one error that names the
//! program and what happened — never its output, arguments or environment, which may hold
//! credentials.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Most bytes read from a helper's stdout, and from its stderr. Every answer clinv
/// asks for (a credential, an ExecCredential with a client key, a signature) is a few
/// KiB.
pub const MAX_OUTPUT: usize = 1 << 20;

/// The deadline of a helper that no command deadline bounds (Docker credential helpers,
/// `git credential`, signing): time enough to type a passphrase into a pinentry.
///
/// `CLINV_HELPER_TIMEOUT` (seconds) changes it.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// How often the runner looks whether the child has ended.
const TICK: Duration = Duration::from_millis(10);

/// What a helper that ran to its end gave back.
#[derive(Debug)]
pub struct Output {
    /// The program's file name, as errors name it.
    pub program: String,
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// Empty for an interactive helper (its stderr is the user's terminal).
    pub stderr: Vec<u8>,
}

/// A helper that did not give an answer: the program's file name and what happened
/// (`gpg did not finish within 60s and was stopped`); its cause, when it could not be
/// started, is the system's error.
#[derive(Debug)]
pub struct HelperError {
    /// The program's file name (never its directory, arguments or environment).
    pub program: String,
    pub what: Happened,
}

impl std::fmt::Display for HelperError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.program, self.what)
    }
}

impl std::error::Error for HelperError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.what {
            Happened::NotRun(e) => Some(e),
            _ => None,
        }
    }
}

/// What kept a helper from answering (the text after the program's name).
#[derive(Debug, thiserror::Error)]
pub enum Happened {
    #[error("cannot be run")]
    NotRun(std::io::Error),
    #[error("did not finish within {}s and was stopped", tenths(*.0))]
    TimedOut(Duration),
    #[error("wrote more than {0} bytes and was stopped")]
    TooMuch(usize),
    #[error("failed ({0})")]
    Failed(ExitStatus),
}

/// One helper run: the command, what it is given on stdin, its deadline.
pub struct Helper {
    command: Command,
    input: Vec<u8>,
    deadline: Duration,
    interactive: bool,
}

/// The helper deadline: `CLINV_HELPER_TIMEOUT` seconds when it is a positive number,
/// else [`DEFAULT_DEADLINE`].
pub fn default_deadline() -> Duration {
    super::env::var("CLINV_HELPER_TIMEOUT")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_DEADLINE, |s| Duration::from_secs_f64(s.min(3600.0)))
}

impl Helper {
    /// `command` with nothing on stdin, under [`default_deadline`].
    pub fn new(command: Command) -> Helper {
        Helper {
            command,
            input: Vec::new(),
            deadline: default_deadline(),
            interactive: false,
        }
    }

    /// What the helper reads on stdin (then closed).
    pub fn input(mut self, input: impl Into<Vec<u8>>) -> Helper {
        self.input = input.into();
        self
    }

    /// Ends the helper after `deadline` instead (a command's own, e.g. `--timeout`).
    pub fn deadline(mut self, deadline: Duration) -> Helper {
        self.deadline = deadline;
        self
    }

    /// The helper may talk to the user: its stdin and stderr are clinv's own (an exec
    /// plugin's `interactiveMode`); nothing is written to it.
    pub fn interactive(mut self) -> Helper {
        self.interactive = true;
        self
    }

    /// Runs the helper to its end, its deadline or its output cap.
    ///
    /// # Errors
    /// [`HelperError`]: it cannot be started, did not end in time, wrote too much.
    /// An exit status other than success is the caller's to judge ([`Output::status`];
    /// [`Output::succeeded`]).
    pub fn run(mut self) -> Result<Output, HelperError> {
        use std::io::IsTerminal;
        use std::os::unix::process::CommandExt;
        let program = program_name(&self.command);
        let fail = |what| HelperError {
            program: program.clone(),
            what,
        };
        // Off a terminal the helper gets a process group of its own, killed whole at the
        // end; on one it stays in clinv's (a terminal serves only its foreground group,
        // and a helper may ask there: ssh-keygen for a passphrase, a login plugin).
        let group = !std::io::stdin().is_terminal();
        if group {
            self.command.process_group(0);
        }
        let (stdin, stderr) = match self.interactive {
            true => (Stdio::inherit(), Stdio::inherit()),
            false => (Stdio::piped(), Stdio::piped()),
        };
        self.command
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(stderr);
        let end = Instant::now() + self.deadline;
        let mut child = self
            .command
            .spawn()
            .map_err(|e| fail(Happened::NotRun(e)))?;
        let _live = group.then(|| Live::note(child.id()));
        if let Some(mut stdin) = child.stdin.take() {
            let input = std::mem::take(&mut self.input);
            // A helper that exits without reading its input is judged by its answer.
            std::thread::spawn(move || stdin.write_all(&input));
        }
        let done = read_streams(&mut child);
        let result = wait(&mut child, &done, end, self.deadline);
        if result.is_err() {
            stop(&mut child, group);
        }
        let (status, [stdout, stderr]) = result.map_err(fail)?;
        Ok(Output {
            program,
            status,
            stdout,
            stderr,
        })
    }
}

impl Output {
    /// `self` when the helper exited with success.
    ///
    /// # Errors
    /// [`Happened::Failed`] naming the program and its exit status.
    pub fn succeeded(self) -> Result<Output, HelperError> {
        if self.status.success() {
            return Ok(self);
        }
        Err(HelperError {
            program: self.program,
            what: Happened::Failed(self.status),
        })
    }
}

/// Stream `i` (0 stdout, 1 stderr) and all it held, `None` when over the cap.
type Read1 = (usize, Option<Vec<u8>>);

/// Reads the child's stdout and stderr, each to its end or to the cap on a thread of its
/// own; a stream that is not a pipe counts as read. A thread left blocked on a pipe that
/// an escaped grandchild still holds ends with clinv: the runner never joins it.
fn read_streams(child: &mut Child) -> mpsc::Receiver<Read1> {
    let (tx, done) = mpsc::channel();
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child.stdout.take().map(|p| Box::new(p) as _),
        child.stderr.take().map(|p| Box::new(p) as _),
    ];
    for (i, pipe) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        match pipe {
            Some(pipe) => drop(std::thread::spawn(move || tx.send((i, read_capped(pipe))))),
            None => drop(tx.send((i, Some(Vec::new())))),
        }
    }
    done
}

/// Waits until both streams ended and the child exited, one stream went over the cap, or
/// `end`.
fn wait(
    child: &mut Child,
    done: &mpsc::Receiver<Read1>,
    end: Instant,
    deadline: Duration,
) -> Result<(ExitStatus, [Vec<u8>; 2]), Happened> {
    let mut read: [Option<Vec<u8>>; 2] = [None, None];
    let mut status = None;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match done.recv_timeout(TICK.min(left)) {
            Ok((i, Some(bytes))) => read[i] = Some(bytes),
            Ok((_, None)) => return Err(Happened::TooMuch(MAX_OUTPUT)),
            Err(_) => {}
        }
        if status.is_none() {
            status = child.try_wait().map_err(Happened::NotRun)?;
        }
        if let (Some(status), [Some(_), Some(_)]) = (status, &read) {
            return Ok((status, read.map(Option::unwrap_or_default)));
        }
        if Instant::now() >= end {
            return Err(Happened::TimedOut(deadline));
        }
    }
}

/// `d` in seconds to a tenth: `3`, `0.5`.
fn tenths(d: Duration) -> f64 {
    (d.as_secs_f64() * 10.0).round() / 10.0
}

/// All of `pipe`, or `None` when it holds more than [`MAX_OUTPUT`] bytes.
fn read_capped(pipe: impl Read) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut capped = pipe.take(MAX_OUTPUT as u64 + 1);
    // A read error ends the stream as it is: the exit status judges the helper.
    let _ = capped.read_to_end(&mut bytes);
    (bytes.len() <= MAX_OUTPUT).then_some(bytes)
}

/// The process groups of the helpers running now: a process that ends on a signal kills
/// them ([`kill_running`]), so a helper that hangs (an exec plugin) never outlives it.
static RUNNING: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// A helper's group noted in [`RUNNING`] while it runs.
struct Live(u32);

impl Live {
    fn note(pid: u32) -> Live {
        RUNNING.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
        Live(pid)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        running.retain(|p| *p != self.0);
    }
}

/// Kills the process group of every helper still running (the process is about to exit:
/// their waiters, and the deadlines that would kill them, end with it).
pub fn kill_running() {
    let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    for pid in running.iter() {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Kills the child — with its process group when it has its own — and reaps it.
fn stop(child: &mut Child, group: bool) {
    if group && let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        // The group may be gone already (every member exited): nothing to kill.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The file name of the command's program: what an error may say of it.
fn program_name(command: &Command) -> String {
    std::path::Path::new(command.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "the helper".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Helper {
        let mut command = Command::new("sh");
        command.args(["-c", script, "FAKESECRET-arg"]);
        Helper::new(command)
    }

    #[test]
    fn an_answer_comes_back_with_its_status_and_the_input_was_read() {
        let out = sh("cat; echo err >&2; exit 3")
            .input("given")
            .run()
            .unwrap();
        assert_eq!(out.stdout, b"given");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
        let e = out.succeeded().unwrap_err();
        assert_eq!(e.to_string(), "sh failed (exit status: 3)");
        assert!(sh("exit 0").run().unwrap().succeeded().is_ok());
    }

    #[test]
    fn a_helper_past_its_deadline_is_stopped_with_its_children() {
        use std::io::IsTerminal;
        let dir = tempfile::tempdir().unwrap();
        let late = dir.path().join("late");
        let script = format!("(sleep 1; touch '{}') & sleep 30", late.display());
        let started = Instant::now();
        let e = sh(&script)
            .deadline(Duration::from_millis(300))
            .run()
            .unwrap_err();
        // Stopped at 0.3 s, long before the script's 30 s (generous: debug, loaded machine).
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            e.to_string(),
            "sh did not finish within 0.3s and was stopped"
        );
        if !std::io::stdin().is_terminal() {
            std::thread::sleep(Duration::from_millis(1500));
            assert!(!late.exists(), "the grandchild was killed with the group");
        }
    }

    #[test]
    fn output_over_the_cap_stops_the_helper() {
        let e = sh("head -c 5000000 /dev/zero; sleep 30").run().unwrap_err();
        assert!(matches!(e.what, Happened::TooMuch(MAX_OUTPUT)), "{e}");
        let e = sh("head -c 5000000 /dev/zero >&2").run().unwrap_err();
        assert_eq!(
            e.to_string(),
            "sh wrote more than 1048576 bytes and was stopped"
        );
        // At the cap exactly is an answer.
        let cap = format!("head -c {MAX_OUTPUT} /dev/zero");
        assert_eq!(sh(&cap).run().unwrap().stdout.len(), MAX_OUTPUT);
    }

    #[test]
    fn a_program_that_cannot_start_is_named_with_the_system_error() {
        let e = Helper::new(Command::new("/nonexistent/dir/no-such-helper"))
            .run()
            .unwrap_err();
        // The file name only: a directory can name a user or a project.
        assert_eq!(e.to_string(), "no-such-helper cannot be run");
        let cause = std::error::Error::source(&e).unwrap().to_string();
        assert!(cause.contains("No such file"), "{cause}");
    }

    #[test]
    fn a_helper_gets_no_terminal_prompt() {
        let out = sh("printf %s \"$GIT_TERMINAL_PROMPT\"").run().unwrap();
        assert_eq!(out.stdout, b"0");
    }
}
