//! Poses as bits, for tests that compare two paths bit for bit.

use crate::anim::Transform;

/// Every float of a pose (translation, rotation i j k w, scale; then the
/// morph weights) as bits, so that tests compare bit for bit (-0 and +0
/// differ, NaNs compare, as in `dump`).
pub fn pose_bits(pose: &[Transform], weights: &[f32]) -> Vec<u32> {
    let mut out = Vec::new();
    for t in pose {
        let floats = t.translation.iter().chain(t.rotation.coords.iter()).chain(t.scale.iter());
        out.extend(floats.map(|v| v.to_bits()));
    }
    out.extend(weights.iter().map(|v| v.to_bits()));
    out
}
