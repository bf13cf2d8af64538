//! Waiting for an exclusive `flock`: the store's domain lock and the GitOps repository
//! lock wait the same way, polling `try_lock` with a short backoff until a deadline.

use crate::util::backoff::Policy;
use std::fs::{File, TryLockError};
use std::time::{Duration, Instant};

/// Why a lock was not taken.
#[derive(Debug)]
pub enum Wait {
    /// Another holder kept it past the timeout.
    TimedOut,
    /// The lock call itself failed.
    Io(std::io::Error),
}

/// How a lock wait polls: 2 ms doubling to 50 ms, the last wait cut to end at the
/// timeout so the lock is tried once more exactly there (never given up early, never
/// waited past).
pub const POLL: Policy =
    Policy::exponential(Duration::from_millis(2), Duration::from_millis(50)).last_at_deadline();

/// Takes an exclusive lock on `file`, waiting up to `timeout` ([`POLL`]). A lock whose
/// holder died is free: the kernel released it.
///
/// # Errors
/// [`Wait::TimedOut`] or [`Wait::Io`].
pub fn exclusive(file: &File, timeout: Duration) -> Result<(), Wait> {
    let mut delays = POLL.until(Some(Instant::now() + timeout));
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => match delays.next() {
                Some(delay) => std::thread::sleep(delay),
                None => return Err(Wait::TimedOut),
            },
            Err(TryLockError::Error(e)) => return Err(Wait::Io(e)),
        }
    }
}

/// Opens `path` as a lock file (created if missing, never truncated) and takes it, as
/// [`exclusive`]: the one place outside the store that creates a file, and it holds
/// nothing.
///
/// # Errors
/// [`Wait::Io`] when the file cannot be opened; as [`exclusive`].
pub fn open_exclusive(path: &std::path::Path, timeout: Duration) -> Result<File, Wait> {
    #[allow(clippy::disallowed_methods)] // a lock file: empty, only its flock counts
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(Wait::Io)?;
    exclusive(&file, timeout)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_times_out_and_a_released_one_is_taken() {
        let held = tempfile::NamedTempFile::new().unwrap();
        exclusive(held.as_file(), Duration::ZERO).unwrap();
        let other = File::open(held.path()).unwrap();
        assert!(matches!(
            exclusive(&other, Duration::from_millis(30)),
            Err(Wait::TimedOut)
        ));
        drop(held);
        exclusive(&other, Duration::from_millis(30)).unwrap();
    }

    /// The wait ends at the timeout, not up to one backoff step (50 ms) after it: the
    /// last wait is cut to end at the deadline and the lock is tried once more there.
    #[test]
    fn a_held_lock_times_out_at_the_timeout_not_after_it() {
        let held = tempfile::NamedTempFile::new().unwrap();
        exclusive(held.as_file(), Duration::ZERO).unwrap();
        let other = File::open(held.path()).unwrap();
        // Just past a step of the old schedule (2, 6, 14, 30, 62, 112, 162 ms): it waited
        // until 162 ms.
        let timeout = Duration::from_millis(113);
        let start = Instant::now();
        assert!(matches!(exclusive(&other, timeout), Err(Wait::TimedOut)));
        let took = start.elapsed();
        assert!(took >= timeout, "gave up early: {took:?}");
        assert!(
            took < timeout + Duration::from_millis(25),
            "overshot: {took:?}"
        );
    }

    /// A lock released while another waits is taken then, not at the timeout (a step of
    /// the backoff is at most 50 ms; the bound leaves a loaded machine room).
    #[test]
    fn a_lock_released_during_the_wait_is_taken() {
        let held = tempfile::NamedTempFile::new().unwrap();
        exclusive(held.as_file(), Duration::ZERO).unwrap();
        let other = File::open(held.path()).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(40));
            drop(held);
        });
        let start = Instant::now();
        exclusive(&other, Duration::from_secs(5)).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        release.join().unwrap();
    }
}
