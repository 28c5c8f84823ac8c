//! The per-character key cursor of the reference sampler and the lookup
//! of the key interval a time falls in.
//!
//! The cursor is only a hint: a lookup's result never depends on it, and a
//! stale one never makes it panic. Nothing here allocates but the cursor.

use crate::anim::clip::Clip;

/// Per-character lookup state for one clip: the last key interval used by
/// each track slot (see [`Clip::cursor_slots`] for the slot order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SamplingCursor {
    pub(super) keys: Vec<u32>,
}

impl SamplingCursor {
    /// A cursor with one slot per track of `clip`, all at the first key.
    pub fn new(clip: &Clip) -> Self {
        SamplingCursor { keys: vec![0; clip.cursor_slots()] }
    }

    /// Forgets the cached intervals (e.g. after switching characters' clips).
    pub fn reset(&mut self) {
        self.keys.fill(0);
    }

    /// Number of track slots.
    pub fn slots(&self) -> usize {
        self.keys.len()
    }
}

/// Where a time falls on a track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Span {
    /// Exactly the value of key `k` (clamped, single key, or degenerate interval).
    Key(usize),
    /// Between keys `k` and `k + 1`: `s` in [0, 1), `td` the interval length.
    Between { k: usize, s: f32, td: f32 },
}

/// Finds the interval of `times` containing `t`, starting from the cached
/// interval `cached` and updating it.
///
/// Forward playback usually stays in the cached interval or moves one or two
/// keys on, so those are checked before a binary search. Never panics, even
/// for unsorted times or a stale cursor.
pub(super) fn locate(times: &[f32], t: f64, cached: &mut u32) -> Span {
    let n = times.len();
    // Keys are f32; the time is f64 so that a decimal time compares with
    // them as in f64 implementations (see player::wrap_clip_time).
    let at = |i: usize| f64::from(times[i]);
    if n == 0 {
        return Span::Key(0);
    }
    if n == 1 || t <= at(0) {
        *cached = 0;
        return Span::Key(0);
    }
    if t >= at(n - 1) {
        *cached = (n - 2) as u32;
        return Span::Key(n - 1);
    }
    // Here n >= 2 and first < t < last.
    let c = *cached as usize;
    let k = if c + 1 < n && at(c) <= t {
        if t < at(c + 1) {
            c
        } else if c + 2 < n && t < at(c + 2) {
            c + 1
        } else if c + 3 < n && t < at(c + 3) {
            c + 2
        } else {
            search(times, t)
        }
    } else {
        search(times, t)
    };
    *cached = k as u32;
    let td = times[k + 1] - times[k];
    let s = ((t - at(k)) / f64::from(td)) as f32;
    // Guards against unsorted or duplicate key times: hold the key instead of
    // producing NaN or extrapolating.
    if td > 0.0 && (0.0..=1.0).contains(&s) { Span::Between { k, s, td } } else { Span::Key(k) }
}

/// Binary search for the last key at or before `t`, kept inside `0..n-1`.
fn search(times: &[f32], t: f64) -> usize {
    times.partition_point(|&x| f64::from(x) <= t).saturating_sub(1).min(times.len().saturating_sub(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_forward_is_cached() {
        let times = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let mut c = 0;
        assert_eq!(locate(&times, 0.5, &mut c), Span::Between { k: 0, s: 0.5, td: 1.0 });
        assert_eq!(locate(&times, 1.5, &mut c), Span::Between { k: 1, s: 0.5, td: 1.0 });
        assert_eq!(c, 1);
        assert_eq!(locate(&times, 3.5, &mut c), Span::Between { k: 3, s: 0.5, td: 1.0 });
        assert_eq!(locate(&times, 0.25, &mut c), Span::Between { k: 0, s: 0.25, td: 1.0 });
        assert_eq!(locate(&times, 5.0, &mut c), Span::Key(5));
        assert_eq!(c, 4);
    }
}
