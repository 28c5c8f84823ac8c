//! CPU time of the calling thread, and timing several ways of doing the
//! same work on a loaded machine: the ways take turns in short runs (so
//! that load changes hit them alike), each run timed by the thread's CPU
//! time (time spent descheduled does not count), and the median run of each
//! way is reported. `inspect --compression` and the benchmarks time with it.

use std::time::Duration;

/// CPU time of the calling thread (zero where the platform cannot say).
pub fn thread() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given, nothing else.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
    #[cfg(not(unix))]
    Duration::ZERO
}

/// Median CPU nanoseconds per call of `call(way)` for each way in
/// `0..ways`, over `rounds` turns of `calls` calls each.
pub fn median_ns_taking_turns(
    ways: usize,
    rounds: usize,
    calls: usize,
    mut call: impl FnMut(usize),
) -> Vec<f64> {
    let mut runs = vec![Vec::with_capacity(rounds); ways];
    for _ in 0..rounds {
        for (way, runs) in runs.iter_mut().enumerate() {
            let start = thread();
            for _ in 0..calls {
                call(way);
            }
            runs.push((thread() - start).as_nanos() as f64 / calls.max(1) as f64);
        }
    }
    runs.into_iter()
        .map(|mut r| {
            r.sort_by(f64::total_cmp);
            r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_gets_its_turns_and_a_median() {
        let mut calls = [0usize; 3];
        let ns = median_ns_taking_turns(3, 5, 4, |w| calls[w] += 1);
        assert_eq!(calls, [20, 20, 20]);
        assert_eq!(ns.len(), 3);
        assert!(ns.iter().all(|t| t.is_finite() && *t >= 0.0), "{ns:?}");
        assert!(median_ns_taking_turns(2, 0, 4, |_| ()).iter().all(|t| t.is_nan()));
    }
}
