//! Waiting for an exclusive `flock`: the store's domain lock and the GitOps repository
//! lock wait the same way, polling `try_lock` with a short backoff until a deadline.

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

/// Takes an exclusive lock on `file`, waiting up to `timeout` (2 ms, doubling to 50 ms
/// between tries). A lock whose holder died is free: the kernel released it.
///
/// # Errors
/// [`Wait::TimedOut`] or [`Wait::Io`].
pub fn exclusive(file: &File, timeout: Duration) -> Result<(), Wait> {
    let start = Instant::now();
    let mut delay = Duration::from_millis(2);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if start.elapsed() < timeout => {
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_millis(50));
            }
            Err(TryLockError::WouldBlock) => return Err(Wait::TimedOut),
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
}
