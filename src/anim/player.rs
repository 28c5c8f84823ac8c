//! Clip playback: time, speed, looping and event reporting.
//!
//! Time only: the player never samples a clip or touches a pose; a character
//! asks it where playback is.
//!
//! Looping time follows three.js `AnimationAction` with `LoopRepeat`: time
//! wraps as `t - d * floor(t / d)`, so `t == d` maps to 0.
//!
//! Events fire exactly once each time playback crosses their time. Moving
//! forward from `t0` to `t1` crosses the events in `(t0, t1]`; moving backward
//! crosses `[t1, t0)`. Looping, the loop point is one instant: forward, an
//! event at 0 counts as being at `duration` (it fires when the loop wraps, once
//! per loop); backward, an event at `duration` counts as being at 0. Events are
//! delivered in the order playback meets them. Events outside `[0, duration]`
//! never fire.

use super::clip::ClipEvent;

/// Most whole loops replayed by one `advance`; a huge step fires each event at
/// most this many extra times instead of hanging.
pub const MAX_REPLAYED_LOOPS: u32 = 64;

/// Playback state of one clip on one character.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipPlayer {
    duration: f32,
    time: f32,
    speed: f32,
    looping: bool,
}

impl ClipPlayer {
    /// A looping player at time 0 and speed 1. A negative or non-finite
    /// duration is treated as 0 (time then stays 0).
    pub fn new(duration: f32) -> Self {
        let duration = if duration.is_finite() && duration > 0.0 { duration } else { 0.0 };
        ClipPlayer { duration, time: 0.0, speed: 1.0, looping: true }
    }

    /// Current time on the clip's timeline, in `[0, duration]` (`[0, duration)` while looping).
    pub fn time(&self) -> f32 {
        self.time
    }

    /// Clip duration in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Playback rate: negative plays backwards, zero pauses.
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Sets the playback rate; NaN and infinities are ignored.
    pub fn set_speed(&mut self, s: f32) {
        if s.is_finite() {
            self.speed = s;
        }
    }

    /// Whether time wraps at the ends (otherwise it clamps).
    pub fn looping(&self) -> bool {
        self.looping
    }

    /// Turns looping on or off; turning it on wraps a time sitting at `duration` to 0.
    pub fn set_looping(&mut self, on: bool) {
        self.looping = on;
        if on {
            self.time = Self::wrap_time(self.duration, self.time);
        }
    }

    /// Jumps to `t` (wrapped when looping, clamped otherwise) without firing
    /// events. NaN is ignored.
    pub fn set_time(&mut self, t: f32) {
        if t.is_nan() {
            return;
        }
        self.time =
            if self.looping { Self::wrap_time(self.duration, t) } else { t.clamp(0.0, self.duration) };
    }

    /// `t - duration * floor(t / duration)`, in `[0, duration)`; 0 when the
    /// duration is not positive or `t` is not finite.
    pub fn wrap_time(duration: f32, t: f32) -> f32 {
        wrap(duration, t).1
    }

    /// Moves time by `dt * speed` and calls `on_event` for every event crossed,
    /// in playback order. `events` must be sorted by time (as a clip's are).
    /// Zero or non-finite steps do nothing.
    pub fn advance(&mut self, dt: f32, events: &[ClipEvent], mut on_event: impl FnMut(&ClipEvent)) {
        let delta = dt * self.speed;
        let d = self.duration;
        if delta == 0.0 || !delta.is_finite() || d <= 0.0 {
            return;
        }
        let t0 = self.time;
        let u = t0 + delta;
        if !self.looping {
            let t1 = u.clamp(0.0, d);
            if delta > 0.0 {
                fire_forward(events, t0, t1, &mut on_event);
            } else {
                fire_backward(events, t1, t0, &mut on_event);
            }
            self.time = t1;
            return;
        }
        if !u.is_finite() {
            return;
        }
        // Unwrapped, playback crosses (t0, u] or [u, t0); `wraps` counts the
        // loop points inside. The loop point is both 0 and d: arriving on it
        // fires the events at 0 and at d together.
        let (wraps, t1) = wrap(d, u);
        let full = (wraps.abs() - 1.0).clamp(0.0, MAX_REPLAYED_LOOPS as f32) as u32;
        if delta > 0.0 {
            if wraps == 0.0 {
                fire_forward(events, t0, t1, &mut on_event);
            } else {
                fire_forward(events, t0, d, &mut on_event);
                fire_at_zero(events, &mut on_event);
                for _ in 0..full {
                    fire_forward(events, 0.0, d, &mut on_event);
                    fire_at_zero(events, &mut on_event);
                }
                fire_forward(events, 0.0, t1, &mut on_event);
            }
        } else {
            if wraps == 0.0 {
                fire_backward(events, t1, t0, &mut on_event);
            } else {
                fire_backward(events, 0.0, t0, &mut on_event);
                // Starting on the loop point is not crossing it.
                if t0 > 0.0 {
                    fire_at_end(events, d, &mut on_event);
                }
                for _ in 0..full {
                    fire_backward(events, 0.0, d, &mut on_event);
                    fire_at_end(events, d, &mut on_event);
                }
                fire_backward(events, t1, d, &mut on_event);
            }
            if t1 == 0.0 {
                fire_at_end(events, d, &mut on_event);
            }
        }
        self.time = t1;
    }
}

/// [`ClipPlayer::wrap_time`] in f64, for sampling a time a user typed: a
/// decimal time such as 1.7 must compare with a key stored as f32(1.7) =
/// 1.70000005 as it does in f64 implementations (three.js), i.e. fall just
/// before the key rather than on it.
pub fn wrap_clip_time(duration: f32, t: f64) -> f64 {
    let d = f64::from(duration);
    if !(d > 0.0 && d.is_finite() && t.is_finite()) {
        return 0.0;
    }
    let r = t - d * (t / d).floor();
    if (0.0..d).contains(&r) { r } else { 0.0 }
}

/// `(floor(t / d), t - d * floor(t / d))` with the remainder forced into
/// `[0, d)` (rounding can land it on `d`, which is the next loop's 0).
fn wrap(d: f32, t: f32) -> (f32, f32) {
    if !(d > 0.0 && d.is_finite() && t.is_finite()) {
        return (0.0, 0.0);
    }
    let n = (t / d).floor();
    let r = t - d * n;
    if r >= d {
        (n + 1.0, 0.0)
    } else if r < 0.0 {
        (n, 0.0)
    } else {
        (n, r)
    }
}

/// Events in `(a, b]`, ascending.
fn fire_forward(events: &[ClipEvent], a: f32, b: f32, f: &mut impl FnMut(&ClipEvent)) {
    let start = events.partition_point(|e| e.time <= a);
    let end = events.partition_point(|e| e.time <= b);
    // `get` rather than indexing: unsorted input must not panic.
    events.get(start..end).unwrap_or_default().iter().for_each(f);
}

/// Events in `[a, b)`, descending.
fn fire_backward(events: &[ClipEvent], a: f32, b: f32, f: &mut impl FnMut(&ClipEvent)) {
    let start = events.partition_point(|e| e.time < a);
    let end = events.partition_point(|e| e.time < b);
    events.get(start..end).unwrap_or_default().iter().rev().for_each(f);
}

/// Forward looping reaches `duration`, which is also time 0: events at 0 fire here.
fn fire_at_zero(events: &[ClipEvent], f: &mut impl FnMut(&ClipEvent)) {
    let start = events.partition_point(|e| e.time < 0.0);
    let end = events.partition_point(|e| e.time <= 0.0);
    events.get(start..end).unwrap_or_default().iter().for_each(f);
}

/// Backward looping reaches 0, which is also `duration`: events at `d` fire here.
fn fire_at_end(events: &[ClipEvent], d: f32, f: &mut impl FnMut(&ClipEvent)) {
    let start = events.partition_point(|e| e.time < d);
    let end = events.partition_point(|e| e.time <= d);
    events.get(start..end).unwrap_or_default().iter().rev().for_each(f);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(times: &[f32]) -> Vec<ClipEvent> {
        times.iter().map(|&t| ClipEvent { time: t, name: format!("{t}") }).collect()
    }

    /// Advances and returns the names of the fired events.
    fn step(p: &mut ClipPlayer, dt: f32, ev: &[ClipEvent]) -> Vec<String> {
        let mut fired = Vec::new();
        p.advance(dt, ev, |e| fired.push(e.name.clone()));
        fired
    }

    #[test]
    fn defaults_and_setters() {
        let mut p = ClipPlayer::new(2.0);
        assert_eq!((p.time(), p.duration(), p.speed(), p.looping()), (0.0, 2.0, 1.0, true));
        p.set_speed(-0.5);
        p.set_speed(f32::NAN);
        p.set_speed(f32::INFINITY);
        assert_eq!(p.speed(), -0.5);
        p.set_time(f32::NAN);
        assert_eq!(p.time(), 0.0);
        assert_eq!(ClipPlayer::new(f32::NAN).duration(), 0.0);
        assert_eq!(ClipPlayer::new(-1.0).duration(), 0.0);
    }

    #[test]
    fn decimal_time_at_a_rounded_up_duration_stays_in_the_clip() {
        // f32(1.7) = 1.70000005: the typed time 1.7 lies just before the end,
        // as in f64 implementations, and is not wrapped to the first key.
        let d = 1.7f32;
        assert!((wrap_clip_time(d, 1.7) - 1.7).abs() < 1e-12);
        assert!((wrap_clip_time(d, 3.4) - (3.4 - f64::from(d))).abs() < 1e-12);
        assert_eq!(wrap_clip_time(d, f64::from(d)), 0.0);
        assert_eq!(wrap_clip_time(0.0, 1.0), 0.0);
        assert_eq!(wrap_clip_time(d, f64::NAN), 0.0);
    }

    #[test]
    fn wrap_time_matches_three_js() {
        assert_eq!(ClipPlayer::wrap_time(1.0, 1.0), 0.0);
        assert_eq!(ClipPlayer::wrap_time(1.0, 2.25), 0.25);
        assert_eq!(ClipPlayer::wrap_time(1.0, -0.25), 0.75);
        assert_eq!(ClipPlayer::wrap_time(2.0, -4.0), 0.0);
        assert_eq!(ClipPlayer::wrap_time(0.0, 3.0), 0.0);
        assert_eq!(ClipPlayer::wrap_time(-1.0, 3.0), 0.0);
        // Rounding would give exactly d; it maps to 0 instead.
        assert_eq!(ClipPlayer::wrap_time(1.0, -1e-9), 0.0);
        assert_eq!(ClipPlayer::wrap_time(1.0, f32::INFINITY), 0.0);
    }

    #[test]
    fn set_time_wraps_or_clamps_and_never_fires() {
        let mut p = ClipPlayer::new(1.0);
        p.set_time(1.5);
        assert_eq!(p.time(), 0.5);
        p.set_looping(false);
        p.set_time(1.5);
        assert_eq!(p.time(), 1.0);
        p.set_time(-2.0);
        assert_eq!(p.time(), 0.0);
        // set_time has no event parameter; the next advance starts from the new time.
        let ev = events(&[0.1, 0.5]);
        p.set_time(0.4);
        assert_eq!(step(&mut p, 0.2, &ev), vec!["0.5"]);
    }

    #[test]
    fn fires_exactly_once_when_crossed() {
        let ev = events(&[0.25, 0.5]);
        let mut p = ClipPlayer::new(1.0);
        assert!(step(&mut p, 0.2, &ev).is_empty());
        assert_eq!(step(&mut p, 0.05, &ev), vec!["0.25"]); // lands exactly on it
        assert!(step(&mut p, 0.1, &ev).is_empty()); // (0.25, 0.35]: not again
        assert_eq!(step(&mut p, 0.3, &ev), vec!["0.5"]);
    }

    #[test]
    fn zero_step_and_resampling_fire_nothing() {
        let ev = events(&[0.0, 0.5]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.5);
        assert!(step(&mut p, 0.0, &ev).is_empty());
        p.set_speed(0.0);
        assert!(step(&mut p, 0.3, &ev).is_empty());
        assert_eq!(p.time(), 0.5);
        // Resampling the same time repeatedly: no events.
        p.set_speed(1.0);
        for _ in 0..3 {
            p.set_time(0.5);
            assert!(step(&mut p, 0.0, &ev).is_empty());
        }
        assert!(step(&mut p, f32::NAN, &ev).is_empty());
        assert_eq!(p.time(), 0.5);
    }

    #[test]
    fn forward_across_loop_boundary() {
        let ev = events(&[0.0, 0.05, 0.5, 0.95, 1.0]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.9);
        // (0.9, 1.0] then the loop point (events at 1.0 and 0), then (0, 0.1].
        assert_eq!(step(&mut p, 0.2, &ev), vec!["0.95", "1", "0", "0.05"]);
        assert!((p.time() - 0.1).abs() < 1e-6);
    }

    #[test]
    fn event_at_zero_fires_once_per_loop() {
        let ev = events(&[0.0]);
        let mut p = ClipPlayer::new(1.0);
        let mut count = 0;
        // Ten loops in steps of 0.25 (exact in binary), landing on 0 each loop.
        for _ in 0..40 {
            count += step(&mut p, 0.25, &ev).len();
        }
        assert_eq!(count, 10);
        assert_eq!(p.time(), 0.0);
    }

    #[test]
    fn several_loops_in_one_step() {
        let ev = events(&[0.25, 0.75]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.5);
        // 0.5 -> 3.0 (wraps to 0): 0.75 | 0.25 0.75 | 0.25 0.75.
        assert_eq!(step(&mut p, 2.5, &ev), vec!["0.75", "0.25", "0.75", "0.25", "0.75"]);
        assert_eq!(p.time(), 0.0);
    }

    #[test]
    fn huge_step_is_capped() {
        let ev = events(&[0.5]);
        let mut p = ClipPlayer::new(1.0);
        let fired = step(&mut p, 1e9, &ev);
        // First partial loop, at most MAX_REPLAYED_LOOPS whole loops, last partial loop.
        assert!(fired.len() <= MAX_REPLAYED_LOOPS as usize + 2, "{}", fired.len());
        assert!(fired.len() >= MAX_REPLAYED_LOOPS as usize);
        assert!(p.time() >= 0.0 && p.time() < 1.0);
        // Overflowing steps do nothing.
        p.set_speed(1e30);
        let t = p.time();
        assert!(step(&mut p, 1e30, &ev).is_empty());
        assert_eq!(p.time(), t);
    }

    #[test]
    fn backwards_fires_in_reverse_order() {
        let ev = events(&[0.2, 0.4, 0.6]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.7);
        p.set_speed(-1.0);
        // [0.2, 0.7) descending; 0.2 fires on arrival.
        assert_eq!(step(&mut p, 0.5, &ev), vec!["0.6", "0.4", "0.2"]);
        assert!(step(&mut p, 0.1, &ev).is_empty());
        // Reversing on top of an event does not refire it.
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.3);
        assert_eq!(step(&mut p, 0.1, &ev), vec!["0.4"]);
        p.set_speed(-1.0);
        assert!(step(&mut p, 0.05, &ev).is_empty());
        p.set_speed(1.0);
        assert_eq!(step(&mut p, 0.05, &ev), vec!["0.4"]);
    }

    #[test]
    fn backwards_across_loop_boundary() {
        let ev = events(&[0.0, 0.05, 0.5, 0.95, 1.0]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.1);
        p.set_speed(-1.0);
        // [0, 0.1) descending (0.05, then the loop point: 0 and 1.0), then [0.9, 1.0).
        assert_eq!(step(&mut p, 0.2, &ev), vec!["0.05", "0", "1", "0.95"]);
        assert!((p.time() - 0.9).abs() < 1e-6);
        // Several loops backwards.
        let ev = events(&[0.25, 0.75]);
        p.set_time(0.5);
        assert_eq!(step(&mut p, 2.0, &ev), vec!["0.25", "0.75", "0.25", "0.75"]);
        assert!((p.time() - 0.5).abs() < 1e-6);
    }

    #[test]
    fn loop_point_fires_on_arrival_and_not_on_reversal() {
        let ev = events(&[0.0, 0.5, 1.0]);
        // Backward arrival exactly on 0 fires the events at 0 and at d together...
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.25);
        p.set_speed(-1.0);
        assert_eq!(step(&mut p, 0.25, &ev), vec!["0", "1"]);
        // ...and moving on backwards does not fire them again.
        assert!(step(&mut p, 0.25, &ev).is_empty());
        assert!((p.time() - 0.75).abs() < 1e-6);
        // Forward arrival on the loop point, then reversal: nothing refires.
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.75);
        assert_eq!(step(&mut p, 0.25, &ev), vec!["1", "0"]);
        assert_eq!(p.time(), 0.0);
        p.set_speed(-1.0);
        assert!(step(&mut p, 0.25, &ev).is_empty());
        // Landing exactly on the loop point after whole backward loops.
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.75);
        p.set_speed(-1.0);
        assert_eq!(step(&mut p, 1.75, &ev), vec!["0.5", "0", "1", "0.5", "0", "1"]);
        assert_eq!(p.time(), 0.0);
    }

    #[test]
    fn event_at_end_fires_once_per_loop_backwards() {
        let ev = events(&[1.0]);
        let mut p = ClipPlayer::new(1.0);
        p.set_speed(-1.0);
        let mut count = 0;
        for _ in 0..40 {
            count += step(&mut p, 0.25, &ev).len();
        }
        assert_eq!(count, 10);
    }

    #[test]
    fn clamped_playback_stops_and_fires_end_once() {
        let ev = events(&[0.0, 0.5, 1.0]);
        let mut p = ClipPlayer::new(1.0);
        p.set_looping(false);
        assert_eq!(step(&mut p, 0.7, &ev), vec!["0.5"]);
        assert_eq!(step(&mut p, 5.0, &ev), vec!["1"]);
        assert_eq!(p.time(), 1.0);
        assert!(step(&mut p, 1.0, &ev).is_empty());
        assert_eq!(p.time(), 1.0);
        // And backwards to the start: the event at 0 fires once on arrival.
        p.set_speed(-1.0);
        assert_eq!(step(&mut p, 3.0, &ev), vec!["0.5", "0"]);
        assert_eq!(p.time(), 0.0);
        assert!(step(&mut p, 1.0, &ev).is_empty());
    }

    #[test]
    fn zero_duration_never_moves() {
        let ev = events(&[0.0]);
        let mut p = ClipPlayer::new(0.0);
        assert!(step(&mut p, 1.0, &ev).is_empty());
        assert_eq!(p.time(), 0.0);
    }

    #[test]
    fn events_outside_the_clip_never_fire() {
        let ev = events(&[-1.0, -0.01, 0.5, 1.01, 7.0]);
        let mut fired = Vec::new();
        let mut p = ClipPlayer::new(1.0);
        for (dt, speed) in [(0.3, 1.0), (2.9, 1.0), (0.4, -1.0), (3.7, -1.0), (0.25, 2.0)] {
            p.set_speed(speed);
            fired.extend(step(&mut p, dt, &ev));
        }
        p.set_looping(false);
        for (dt, speed) in [(9.0, 1.0), (9.0, -1.0)] {
            p.set_speed(speed);
            fired.extend(step(&mut p, dt, &ev));
        }
        assert!(!fired.is_empty() && fired.iter().all(|e| e == "0.5"), "{fired:?}");
    }

    #[test]
    fn event_at_zero_fires_in_every_loop_of_a_long_step() {
        let ev = events(&[0.0, 0.5]);
        let mut p = ClipPlayer::new(1.0);
        p.set_time(0.25);
        // 0.25 -> 3.25: three loop points, each also time 0.
        assert_eq!(step(&mut p, 3.0, &ev), vec!["0.5", "0", "0.5", "0", "0.5", "0"]);
        // Backwards over three loop points: each is time 1.0 = 0.
        let ev = events(&[0.5, 1.0]);
        p.set_speed(-1.0);
        assert_eq!(step(&mut p, 3.0, &ev), vec!["1", "0.5", "1", "0.5", "1", "0.5"]);
    }

    #[test]
    fn unsorted_events_do_not_panic() {
        let ev = events(&[0.9, 0.1, f32::NAN, 0.5, -1.0, 7.0]);
        let mut p = ClipPlayer::new(1.0);
        for dt in [0.3, 0.3, 0.7, -2.5, 100.0] {
            step(&mut p, dt, &ev);
        }
    }
}
