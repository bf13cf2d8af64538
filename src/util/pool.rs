//! Bounded parallelism for work that mostly waits on the network: `f` of every item on
//! at most `workers` threads, the results in the items' order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of each of `items`, at most `workers` at once; each thread takes the next item
/// when it is done with one, so a slow item holds up one worker, not the rest.
pub fn ordered<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { return };
            let r = f(item);
            done.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((i, r));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..workers.clamp(1, items.len().max(1)) {
            scope.spawn(work);
        }
        work();
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::ordered;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_keep_the_items_order_and_at_most_workers_run_at_once() {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let items: Vec<u64> = (0..40).collect();
        let out = ordered(&items, 4, |&n| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(40 - n));
            running.fetch_sub(1, Ordering::SeqCst);
            n * 2
        });
        assert_eq!(out, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!((2..=4).contains(&most), "{most} at once");
    }

    #[test]
    fn no_items_and_one_worker() {
        assert!(ordered(&[] as &[u8], 8, |_| 1).is_empty());
        assert_eq!(ordered(&[1, 2, 3], 0, |n| n + 1), vec![2, 3, 4]);
    }
}
