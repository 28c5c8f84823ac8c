//! Vertical root motion: how far the animated pose lifts the character off
//! the ground. It is measured, not authored: the height of the lowest of the
//! feet's contact points (heels and toes) above where that point is when the
//! character stands, less a small dead band. A jump clip whose legs tuck up
//! under the body lifts the character by as much as its feet clear; a walk
//! (one foot always down) or a crouch (feet flat) lifts it by nothing.
//!
//! The actor asks the physics world for the change of the lift each update
//! (the capsule rises and falls with the feet, and a ceiling or an obstacle
//! stops it) and draws the pose that much lower, so the drawn feet stay at
//! the capsule's bottom. It reads the pose; it never changes it, and it never
//! allocates after `new`.

use super::error::WorldError;
use crate::anim::{NO_PARENT, Rig, Transform};
use nalgebra::Matrix4;

/// Contact heights within this much of standing count as on the ground,
/// metres: a run's short flight or a foot rolling over its toes does not
/// lift the capsule, a jump (its feet a good 30 cm up) does.
pub const LIFT_DEAD_BAND: f32 = 0.02;

/// The most contact points measured.
const MAX_POINTS: usize = 4;

/// The contact points of a character's feet and their standing heights.
#[derive(Debug, Clone)]
pub struct Lift {
    /// Joints whose origins touch the ground when standing.
    joints: [usize; MAX_POINTS],
    /// Their heights above the model's ground in the rest pose.
    standing: [f32; MAX_POINTS],
    count: usize,
}

impl Lift {
    /// For the joints named `contacts` (one to four: ankles, toes).
    pub fn new(rig: &Rig, contacts: &[&str]) -> Result<Self, WorldError> {
        if contacts.is_empty() || contacts.len() > MAX_POINTS {
            return Err(WorldError::ContactCount(contacts.len()));
        }
        let parents = rig.skeleton.parents();
        let rest = rig.skeleton.rest();
        let mut lift = Lift { joints: [0; MAX_POINTS], standing: [0.0; MAX_POINTS], count: contacts.len() };
        for (i, name) in contacts.iter().enumerate() {
            let j = rig.skeleton.find(name).ok_or_else(|| WorldError::MissingContact(name.to_string()))?;
            lift.joints[i] = j;
            lift.standing[i] = height(parents, rest, j);
        }
        Ok(lift)
    }

    /// The built-in character's heels and toes (Foot and Toes, .L and .R);
    /// other humanoids named the same way work too.
    pub fn humanoid(rig: &Rig) -> Result<Self, WorldError> {
        Self::new(rig, &["Foot.L", "Toes.L", "Foot.R", "Toes.R"])
    }

    /// How far the pose `locals` lifts the character: 0 while a contact
    /// point is within the dead band of standing, metres.
    pub fn measure(&self, parents: &[u32], locals: &[Transform]) -> f32 {
        let lowest = (0..self.count)
            .map(|i| height(parents, locals, self.joints[i]) - self.standing[i])
            .fold(f32::INFINITY, f32::min);
        if lowest.is_finite() { (lowest - LIFT_DEAD_BAND).max(0.0) } else { 0.0 }
    }
}

/// Height of joint `j`'s origin in model space: its chain of locals, joint
/// to root, without a buffer (a handful of joints).
fn height(parents: &[u32], locals: &[Transform], j: usize) -> f32 {
    let mut m: Matrix4<f32> = locals.get(j).map_or(Matrix4::identity(), Transform::to_matrix);
    let mut p = parents.get(j).copied().unwrap_or(NO_PARENT);
    // A chain longer than the skeleton would be a cycle: stop there.
    let mut guard = parents.len();
    while p != NO_PARENT && guard > 0 {
        m = locals.get(p as usize).map_or(Matrix4::identity(), Transform::to_matrix) * m;
        p = parents.get(p as usize).copied().unwrap_or(NO_PARENT);
        guard -= 1;
    }
    m[(1, 3)]
}
