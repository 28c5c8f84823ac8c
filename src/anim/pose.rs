//! A character's pose: the per-character buffers jobs read and write.

use super::transform::Transform;

/// Local transforms of every skeleton joint plus the flat morph-weight array
/// (all mesh instances' targets, one run per instance).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pose {
    /// Local (parent-relative) transform per joint.
    pub locals: Vec<Transform>,
    /// Morph-target weights.
    pub morph_weights: Vec<f32>,
}

impl Pose {
    /// A pose of the given sizes, at identity and zero weights.
    pub fn new(joints: usize, morph_weights: usize) -> Self {
        Pose { locals: vec![Transform::IDENTITY; joints], morph_weights: vec![0.0; morph_weights] }
    }
}
