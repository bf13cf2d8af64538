//! SIGINT and SIGTERM end a command at a safe point, never in the middle of a write.
//!
//! Writers of local state wrap each write in a [`critical`] section. A signal that
//! arrives outside every section ends the process at once; one that arrives inside waits
//! until the last section closes. Either way the process exits with `128 + signal`
//! (130 for SIGINT, 143 for SIGTERM), after the callback given to [`install`] has said
//! why. SIGKILL cannot be caught: the store's atomic writes and torn-tail repair cover it.

use std::sync::{OnceLock, RwLock, RwLockReadGuard};

/// A command ended by signal N exits with `EXIT_BASE + N`, as a shell reports it.
pub const EXIT_BASE: i32 = 128;

/// Held shared by every critical section, exclusively by the exit.
static GATE: RwLock<()> = RwLock::new(());
static ON_SIGNAL: OnceLock<fn(i32)> = OnceLock::new();
/// A long-running command's own stop: it is told of the first signal and given
/// [`Graceful::grace`] to end by itself.
static GRACEFUL: OnceLock<Graceful> = OnceLock::new();

/// How a long-running command (the delivery loop) ends on SIGINT or SIGTERM.
///
/// `stop` is called with the first signal, and the process exits 0 once `grace` has passed if the
/// command has not returned by then (a delivery still in flight is abandoned at a safe
/// point: no write is cut, and the next run finds what reached the cluster). A second
/// signal ends the process at once, as for every other command.
pub struct Graceful {
    pub stop: Box<dyn Fn(i32) + Send + Sync>,
    pub grace: std::time::Duration,
}

/// Hands SIGINT and SIGTERM to `graceful` from now on (once per process).
pub fn graceful(graceful: Graceful) {
    let _ = GRACEFUL.set(graceful);
}

/// Ends the process with `code` once no write is in progress.
fn exit_when_safe(code: i32, signal: Option<i32>) -> ! {
    // Waits for every open critical section; new ones then block until exit.
    let _gate = GATE.write().unwrap_or_else(|e| e.into_inner());
    crate::util::helper::kill_running();
    if let (Some(signal), Some(f)) = (signal, ON_SIGNAL.get()) {
        f(signal);
    }
    #[allow(clippy::disallowed_methods)] // the one exit outside main: a signal
    std::process::exit(code);
}

thread_local! {
    /// Open critical sections of this thread: only the outermost holds the gate.
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A write in progress: a signal waits for it to end.
pub struct Critical(#[allow(dead_code)] Option<RwLockReadGuard<'static, ()>>);

/// Marks a write that must not be cut short by SIGINT or SIGTERM.
///
/// Sections nest: an inner one (an atomic file write inside a store append) takes nothing
/// more, so a signal waiting for the gate can never block it.
pub fn critical() -> Critical {
    let depth = DEPTH.with(|d| {
        let depth = d.get();
        d.set(depth + 1);
        depth
    });
    Critical((depth == 0).then(|| GATE.read().unwrap_or_else(|e| e.into_inner())))
}

impl Drop for Critical {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Starts the thread that turns SIGINT/SIGTERM into an orderly exit; `on_signal` runs
/// (with the signal number) once no write is in progress, just before the exit.
///
/// # Errors
/// The handlers cannot be registered.
#[cfg(unix)]
pub fn install(on_signal: fn(i32)) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let _ = ON_SIGNAL.set(on_signal);
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut told = false;
            for signal in signals.forever() {
                match GRACEFUL.get() {
                    Some(g) if !told => {
                        told = true;
                        (g.stop)(signal);
                        let grace = g.grace;
                        let _ = std::thread::Builder::new()
                            .name("grace".into())
                            .spawn(move || {
                                std::thread::sleep(grace);
                                exit_when_safe(0, None)
                            });
                    }
                    _ => exit_when_safe(EXIT_BASE + signal, Some(signal)),
                }
            }
        })?;
    Ok(())
}

#[cfg(not(unix))]
pub fn install(_on_signal: fn(i32)) -> std::io::Result<()> {
    Ok(())
}

/// The conventional name of a signal number.
pub fn name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn nested_sections_do_not_wait_for_a_waiting_signal() {
        // Found while adding critical sections around store appends: with a signal
        // waiting for the gate, a second read of it in the same thread (an atomic write
        // inside an append) waited for the signal, which waited for the first: a hang.
        let outer = critical();
        let exit = std::thread::spawn(|| drop(GATE.write()));
        std::thread::sleep(Duration::from_millis(50));
        let (tx, rx) = std::sync::mpsc::channel();
        let inner = critical();
        tx.send(()).unwrap();
        assert!(rx.recv_timeout(Duration::from_secs(1)).is_ok());
        drop(inner);
        drop(outer);
        exit.join().unwrap();
    }
}
