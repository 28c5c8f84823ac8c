//! Timing several ways of doing the same work on a loaded machine: the ways
//! take turns in short runs (so that load changes hit them alike), each run
//! timed by the thread's CPU time (time spent descheduled does not count),
//! and the median run of each way is reported.

use std::time::Duration;

/// CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given, nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Median CPU nanoseconds per call of `call(way)` for each way in
/// `0..ways`, over `rounds` turns of `calls` calls each.
pub fn median_ns(ways: usize, rounds: usize, calls: usize, mut call: impl FnMut(usize)) -> Vec<f64> {
    let mut runs = vec![Vec::with_capacity(rounds); ways];
    for _ in 0..rounds {
        for (way, runs) in runs.iter_mut().enumerate() {
            let start = thread_cpu_time();
            for _ in 0..calls {
                call(way);
            }
            runs.push((thread_cpu_time() - start).as_nanos() as f64 / calls as f64);
        }
    }
    runs.into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r[r.len() / 2]
        })
        .collect()
}
