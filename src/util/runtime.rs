//! The process's one async runtime: the cluster clients, the loop's probes and its
//! HTTP endpoints all run on it.
//!
//! Built on first use, never before (most commands never need it). A multi-thread
//! runtime with two workers and a small blocking pool (name lookups): any thread may
//! `block_on` a cluster request on it — `replay --all` and the loop's workers do, many
//! at once — while the probes and the endpoints run as tasks beside them. The thread
//! count stays fixed whatever the fleet.

#![allow(clippy::disallowed_types)] // the one place a runtime is built

use std::sync::OnceLock;
use tokio::runtime::Runtime;

/// Worker threads: the probes and the endpoints are I/O-bound and small.
const WORKERS: usize = 2;
/// Threads for blocking work (a name lookup each): bounded, so a resolver that hangs
/// holds a few threads, not hundreds.
const BLOCKING: usize = 8;

static RUNTIME: OnceLock<Result<Runtime, (std::io::ErrorKind, String)>> = OnceLock::new();

/// The runtime, built on the first call.
///
/// # Errors
/// The process cannot get the threads or descriptors it needs (said again on every
/// call: the runtime is built once).
pub fn get() -> std::io::Result<&'static Runtime> {
    let built = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .max_blocking_threads(BLOCKING)
            .thread_name("clinv-async")
            .enable_all()
            .build()
            .map_err(|e| (e.kind(), e.to_string()))
    });
    built
        .as_ref()
        .map_err(|(kind, text)| std::io::Error::new(*kind, text.clone()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_runtime_serves_many_threads_at_once() {
        let rt = super::get().unwrap();
        assert!(std::ptr::eq(rt, super::get().unwrap()));
        let sums: Vec<u64> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8u64)
                .map(|i| {
                    s.spawn(move || {
                        super::get().unwrap().block_on(async move {
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                            i * 2
                        })
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(sums, [0, 2, 4, 6, 8, 10, 12, 14]);
    }
}
