//! The default character's joints: names, parents and bind positions.
//!
//! Constants and their layout only: nothing here poses or animates a joint.
//!
//! Every joint's bind rotation is the identity, so local axes equal the
//! character's axes in the bind pose (+X its left, +Y up, +Z forward): a
//! rotation about X swings a limb forwards or backwards, which keeps the clip
//! code readable. The bind pose is an A-pose (arms slightly away from the body), mouth closed.

use nalgebra::Vector3;

/// The joints, in node order: parents before children, depth first (the
/// order an importer lists them in, so node and joint indices agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum J {
    Root,
    Hips,
    Spine,
    Chest,
    Neck,
    Head,
    Jaw,
    ShoulderL,
    UpperArmL,
    LowerArmL,
    HandL,
    ShoulderR,
    UpperArmR,
    LowerArmR,
    HandR,
    UpperLegL,
    LowerLegL,
    FootL,
    ToesL,
    UpperLegR,
    LowerLegR,
    FootR,
    ToesR,
}

/// Number of joints.
pub const JOINT_COUNT: usize = 23;

/// Every joint in node order.
pub const JOINTS: [J; JOINT_COUNT] = [
    J::Root,
    J::Hips,
    J::Spine,
    J::Chest,
    J::Neck,
    J::Head,
    J::Jaw,
    J::ShoulderL,
    J::UpperArmL,
    J::LowerArmL,
    J::HandL,
    J::ShoulderR,
    J::UpperArmR,
    J::LowerArmR,
    J::HandR,
    J::UpperLegL,
    J::LowerLegL,
    J::FootL,
    J::ToesL,
    J::UpperLegR,
    J::LowerLegR,
    J::FootR,
    J::ToesR,
];

/// Distance of the hip, knee and ankle joints from the body's centre line.
pub const LEG_X: f32 = 0.095;
/// Ankle (foot joint) height above the ground in the bind pose.
pub const ANKLE_Y: f32 = 0.09;
/// Ball of the foot (toes joint) relative to the ankle.
pub const BALL: [f32; 3] = [0.0, -0.06, 0.13];
/// Bottom of the heel relative to the ankle.
pub const HEEL: [f32; 3] = [0.0, -ANKLE_Y, -0.06];
/// The jaw's hinge in the bind pose.
pub const JAW: [f32; 3] = [0.0, 1.665, 0.01];

impl J {
    /// Node index.
    pub fn index(self) -> usize {
        self as usize
    }

    /// glTF node name.
    pub fn name(self) -> &'static str {
        match self {
            J::Root => "Root",
            J::Hips => "Hips",
            J::Spine => "Spine",
            J::Chest => "Chest",
            J::Neck => "Neck",
            J::Head => "Head",
            J::ShoulderL => "Shoulder.L",
            J::UpperArmL => "UpperArm.L",
            J::LowerArmL => "LowerArm.L",
            J::HandL => "Hand.L",
            J::ShoulderR => "Shoulder.R",
            J::UpperArmR => "UpperArm.R",
            J::LowerArmR => "LowerArm.R",
            J::HandR => "Hand.R",
            J::UpperLegL => "UpperLeg.L",
            J::LowerLegL => "LowerLeg.L",
            J::FootL => "Foot.L",
            J::ToesL => "Toes.L",
            J::UpperLegR => "UpperLeg.R",
            J::LowerLegR => "LowerLeg.R",
            J::FootR => "Foot.R",
            J::ToesR => "Toes.R",
            J::Jaw => "Jaw",
        }
    }

    /// Parent joint (`None` for the root).
    pub fn parent(self) -> Option<J> {
        Some(match self {
            J::Root => return None,
            J::Hips => J::Root,
            J::Spine => J::Hips,
            J::Chest => J::Spine,
            J::Neck => J::Chest,
            J::Head => J::Neck,
            J::ShoulderL | J::ShoulderR => J::Chest,
            J::UpperArmL => J::ShoulderL,
            J::LowerArmL => J::UpperArmL,
            J::HandL => J::LowerArmL,
            J::UpperArmR => J::ShoulderR,
            J::LowerArmR => J::UpperArmR,
            J::HandR => J::LowerArmR,
            J::UpperLegL | J::UpperLegR => J::Hips,
            J::LowerLegL => J::UpperLegL,
            J::FootL => J::LowerLegL,
            J::ToesL => J::FootL,
            J::LowerLegR => J::UpperLegR,
            J::FootR => J::LowerLegR,
            J::ToesR => J::FootR,
            J::Jaw => J::Head,
        })
    }

    /// Bind position in model space (metres; feet on y = 0, facing +Z).
    pub fn bind_position(self) -> Vector3<f32> {
        let [x, y, z] = match self {
            J::Root => [0.0, 0.0, 0.0],
            J::Hips => [0.0, 1.0, 0.0],
            J::Spine => [0.0, 1.1, 0.0],
            J::Chest => [0.0, 1.26, 0.0],
            J::Neck => [0.0, 1.5, 0.0],
            J::Head => [0.0, 1.6, 0.01],
            J::ShoulderL => [0.04, 1.44, 0.0],
            J::UpperArmL => [0.18, 1.43, 0.0],
            J::LowerArmL => [0.235, 1.15, -0.01],
            J::HandL => [0.27, 0.9, 0.01],
            J::ShoulderR => [-0.04, 1.44, 0.0],
            J::UpperArmR => [-0.18, 1.43, 0.0],
            J::LowerArmR => [-0.235, 1.15, -0.01],
            J::HandR => [-0.27, 0.9, 0.01],
            J::UpperLegL => [LEG_X, 0.95, 0.0],
            J::LowerLegL => [LEG_X, 0.52, 0.0],
            J::FootL => [LEG_X, ANKLE_Y, 0.0],
            J::ToesL => [LEG_X, ANKLE_Y + BALL[1], BALL[2]],
            J::UpperLegR => [-LEG_X, 0.95, 0.0],
            J::LowerLegR => [-LEG_X, 0.52, 0.0],
            J::FootR => [-LEG_X, ANKLE_Y, 0.0],
            J::ToesR => [-LEG_X, ANKLE_Y + BALL[1], BALL[2]],
            // The hinge below the ears: a rotation about +X drops the chin.
            J::Jaw => JAW,
        };
        Vector3::new(x, y, z)
    }

    /// Bind translation relative to the parent.
    pub fn bind_local(self) -> Vector3<f32> {
        match self.parent() {
            Some(p) => self.bind_position() - p.bind_position(),
            None => self.bind_position(),
        }
    }

    /// The joint's children, in node order.
    pub fn children(self) -> Vec<J> {
        JOINTS.iter().copied().filter(|c| c.parent() == Some(self)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joints_are_listed_depth_first() {
        // What an importer's depth-first walk from the root gives.
        let mut order = Vec::new();
        let mut stack = vec![J::Root];
        while let Some(j) = stack.pop() {
            order.push(j);
            stack.extend(j.children().iter().rev());
        }
        assert_eq!(order, JOINTS);
    }

    #[test]
    fn parents_come_first_and_indices_match() {
        for (i, j) in JOINTS.iter().enumerate() {
            assert_eq!(j.index(), i);
            if let Some(p) = j.parent() {
                assert!(p.index() < i, "{}", j.name());
            }
        }
    }
}
