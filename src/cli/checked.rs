//! Command-line values checked where they enter: clap value parsers for
//! paths (never empty) and numbers (finite, within the range each flag
//! documents), and the one-line message a refused value becomes
//! (`vkskin: --fps: takes 1 to 1000 (updates per second), not -1`).
//! Checks that need several flags at once live with their command.

use std::ops::RangeInclusive;

/// Updates (and frames) per second that `simulate` and `render` take.
pub const FPS: RangeInclusive<f64> = 1.0..=1000.0;

/// A path flag's value (or MODEL): anything but the empty string.
pub fn path(text: &str) -> Result<String, String> {
    if text.is_empty() { Err("the path is empty".into()) } else { Ok(text.to_string()) }
}

/// A finite number of seconds, negative ones included.
pub fn time(text: &str) -> Result<f64, String> {
    number(text, "a finite number of seconds")
}

/// `time`, as the f32 the clip timeline takes (finite as an f32 too).
pub fn time_f32(text: &str) -> Result<f32, String> {
    let x = time(text)?;
    let single = x as f32;
    if single.is_finite() { Ok(single) } else { Err(format!("takes a finite number of seconds, not {text}")) }
}

/// A finite number of seconds >= 0.
pub fn duration(text: &str) -> Result<f64, String> {
    let x = number(text, "a finite number of seconds >= 0")?;
    if x >= 0.0 { Ok(x) } else { Err(format!("takes a finite number of seconds >= 0, not {text}")) }
}

/// Updates per second, within [`FPS`].
pub fn fps(text: &str) -> Result<f64, String> {
    let range = || format!("takes {} to {} (per second), not {text}", FPS.start(), FPS.end());
    let x = number(text, "a number").map_err(|_| range())?;
    if FPS.contains(&x) { Ok(x) } else { Err(range()) }
}

/// [`fps`] as an f32 (the renderer's playback rate).
pub fn fps_f32(text: &str) -> Result<f32, String> {
    fps(text).map(|x| x as f32)
}

/// What `--gpu-frame-budget` takes, in milliseconds: a 1000 Hz frame's to
/// a minute's.
pub const FRAME_BUDGET_MS: RangeInclusive<f64> = 1.0..=60_000.0;

/// A GPU frame budget in milliseconds, within [`FRAME_BUDGET_MS`].
pub fn frame_budget(text: &str) -> Result<std::time::Duration, String> {
    let (lo, hi) = (FRAME_BUDGET_MS.start(), FRAME_BUDGET_MS.end());
    let range = || format!("takes {lo} to {hi} (milliseconds), not {}", crate::text::display_name(text));
    let ms = number(text, "a number").map_err(|_| range())?;
    if FRAME_BUDGET_MS.contains(&ms) {
        Ok(std::time::Duration::from_secs_f64(ms / 1e3))
    } else {
        Err(range())
    }
}

/// A whole number in `range`, the message saying the range.
pub fn count_in<T>(text: &str, range: RangeInclusive<T>) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let refused = || format!("takes a whole number from {} to {}, not {text}", range.start(), range.end());
    let n: T = text.trim().parse().map_err(|_| refused())?;
    if range.contains(&n) { Ok(n) } else { Err(refused()) }
}

/// A whole number >= 1 (frame counts, periods of scripted runs, budgets).
pub fn at_least_one(text: &str) -> Result<u64, String> {
    count_in(text, 1..=u64::MAX).map_err(|_| format!("takes a whole number of at least 1, not {text}"))
}

/// `bench --threads`: 1 to the profiler's `MAX_THREADS`.
pub fn threads(text: &str) -> Result<usize, String> {
    count_in(text, 1..=crate::profiler::cpu_scale::MAX_THREADS)
}

/// A character count: 1 to `renderer::MAX_CHARACTERS`.
pub fn characters(text: &str) -> Result<u32, String> {
    count_in(text, 1..=crate::render::renderer::MAX_CHARACTERS)
}

/// `render --frames`: 1 to [`super::render::MAX_FRAMES`].
pub fn render_frames(text: &str) -> Result<u32, String> {
    count_in(text, 1..=super::render::MAX_FRAMES)
}

/// `bench --frames`: 1 to the profiler's `MAX_FRAMES`.
pub fn bench_frames(text: &str) -> Result<u32, String> {
    count_in(text, 1..=crate::profiler::plan::MAX_FRAMES)
}

/// A number for a message: as written at everyday sizes, in exponent form
/// from 1e9 on (`1e308`, not 309 digits).
pub fn show(x: f64) -> String {
    if x.abs() < 1e9 { x.to_string() } else { format!("{x:e}") }
}

/// A finite number, else `takes WHAT, not TEXT`.
fn number(text: &str, what: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("takes {what}, not {}", crate::text::display_name(text))),
    }
}

/// The one line for a value one of these parsers refused
/// (`--controller: the path is empty`, `MODEL: the path is empty`), or
/// `None` for what clap reports itself (unknown flags, help, version).
pub fn refused_value(error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let ContextValue::String(arg) = error.get(ContextKind::InvalidArg)? else { return None };
    // `--controller <FILE>` is named `--controller`; `<MODEL>`, `[MODEL]`
    // and `[MODELS]...` by their value names.
    let flag = arg.split(' ').next().unwrap_or(arg).trim_matches(['<', '>', '[', ']', '.']);
    let why = std::error::Error::source(error).map_or_else(|| "bad value".to_string(), |e| e.to_string());
    Some(format!("{flag}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_numbers() {
        assert_eq!(path("").unwrap_err(), "the path is empty");
        assert_eq!(path("a.glb").unwrap(), "a.glb");
        assert_eq!(time("-1.5"), Ok(-1.5));
        assert!(time("inf").is_err() && time("NaN").is_err() && time("1e400").is_err());
        assert!(time_f32("1e300").is_err());
        assert_eq!(duration("0"), Ok(0.0));
        assert_eq!(duration("-1").unwrap_err(), "takes a finite number of seconds >= 0, not -1");
        assert_eq!(fps("30"), Ok(30.0));
        for bad in ["0", "-1", "0.5", "1001", "inf", "x"] {
            assert!(fps(bad).unwrap_err().starts_with("takes 1 to 1000"), "{bad}");
        }
        assert_eq!(count_in::<u32>("-1", 1..=9).unwrap_err(), "takes a whole number from 1 to 9, not -1");
        assert_eq!(at_least_one("0").unwrap_err(), "takes a whole number of at least 1, not 0");
        assert_eq!(at_least_one("x").unwrap_err(), "takes a whole number of at least 1, not x");
        assert!(characters("100001").is_err() && characters("100000").is_ok());
        assert_eq!(
            (show(1e308), show(2.5), show(3000000001.0)),
            ("1e308".into(), "2.5".into(), "3.000000001e9".into())
        );
    }
}
