//! The shape checks every sampler makes on a clip: joint indices, morph
//! ranges, key counts and values per key. Each error names the job and the
//! track; nothing here samples a clip or changes one.

use crate::anim::clip::{Clip, Interpolation};
use crate::anim::job::JobError;

/// Checks that every track of `clip` animates one of `joints` joints or
/// writes inside `morph_slots` weights, and has at least one key and the
/// right number of values per key. `job` starts each error message.
pub(crate) fn check_clip(job: &str, clip: &Clip, joints: usize, morph_slots: usize) -> Result<(), JobError> {
    for (i, jt) in clip.joint_tracks.iter().enumerate() {
        if jt.joint as usize >= joints {
            return Err(JobError::new(format!(
                "{job}: joint track {i} animates joint {}, skeleton has {}",
                jt.joint, joints
            )));
        }
        let shapes = [
            jt.translation.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
            jt.rotation.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
            jt.scale.as_ref().map(|t| (t.times.len(), t.values.len(), t.values_per_key())),
        ];
        for (what, shape) in ["translation", "rotation", "scale"].iter().zip(shapes) {
            if let Some((times, values, per_key)) = shape {
                check_keys(&|| format!("{job}: joint track {i} {what}"), times, values, per_key)?;
            }
        }
    }
    for (m, mt) in clip.morph_tracks.iter().enumerate() {
        let end = mt.offset as u64 + mt.count as u64;
        if end > morph_slots as u64 {
            return Err(JobError::new(format!(
                "{job}: morph track {m} writes weights {}..{end}, only {} exist",
                mt.offset, morph_slots
            )));
        }
        let per_key = if mt.interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let what = || format!("{job}: morph track {m}");
        // Checked so that a huge count cannot overflow the expected length.
        let per_key = (mt.count as usize)
            .checked_mul(per_key)
            .ok_or_else(|| JobError::new(format!("{}: count too large", what())))?;
        check_keys(&what, mt.times.len(), mt.values.len(), per_key)?;
    }
    Ok(())
}

/// Checks that a track has at least one key and `per_key` values per key.
/// `what` names the track; it is only called (and allocates) on failure.
fn check_keys(
    what: &dyn Fn() -> String,
    times: usize,
    values: usize,
    per_key: usize,
) -> Result<(), JobError> {
    if times == 0 {
        return Err(JobError::new(format!("{}: no keys", what())));
    }
    match times.checked_mul(per_key) {
        Some(expected) if expected == values => Ok(()),
        Some(expected) => Err(JobError::new(format!(
            "{}: {values} values, expected {expected} ({per_key} per key)",
            what()
        ))),
        None => Err(JobError::new(format!("{}: too many values", what()))),
    }
}
