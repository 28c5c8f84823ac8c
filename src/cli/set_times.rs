//! `--set` values against the run they script: a change timed after the
//! last frame would never apply, so it is an error; a speed faster than
//! the mover allows is clamped by the world, so it is a warning. Checked
//! once the `--set` values parsed (`character::Script`) and the run's
//! length is known, before any frame is simulated.

use super::checked::show;
use crate::character::{Controller, ParameterValue, Script};
use crate::text::display_name;
use crate::world::{Authority, MAX_SPEED};

/// Script changes apply at the first frame at or after their time, less
/// this (the `Script`'s own allowance for float drift).
const DRIFT: f64 = 1e-6;

/// Fails on the first of `sets` (each already parsed by `Script`) timed
/// after `last_time`, the time of `last` (the last frame, in words).
pub fn check_within(sets: &[String], last_time: f64, last: &str) -> anyhow::Result<()> {
    for arg in sets {
        let time = arg.split_once(':').and_then(|(t, _)| t.trim().parse::<f64>().ok());
        if let Some(time) = time.filter(|&t| t > last_time + DRIFT) {
            anyhow::bail!(
                "--set {}: time {} s is after {last} ({} s): it would never apply",
                display_name(arg),
                show(time),
                show(last_time)
            );
        }
    }
    Ok(())
}

/// With movement authority, one warning for the first `--set` of the
/// `speed` parameter faster than the mover's [`MAX_SPEED`].
pub fn warn_fast_speeds(sets: &[String], controller: &Controller, authority: Authority) {
    let Some(speed) = controller.parameter("speed") else { return };
    if authority != Authority::Movement {
        return;
    }
    let too_fast = sets.iter().find(|arg| {
        let Ok(one) = Script::parse(std::slice::from_ref(*arg), controller) else { return false };
        one.sets().iter().any(|s| {
            s.parameter == speed && matches!(s.value, ParameterValue::Float(v) if v.abs() > MAX_SPEED)
        })
    });
    if let Some(arg) = too_fast {
        eprintln!(
            "vkskin: warning: --set {}: faster than the mover's {MAX_SPEED} m/s: it moves at {MAX_SPEED} m/s",
            display_name(arg)
        );
    }
}
