//! Foot sliding, measured: how far a planted foot slides, for a blend of
//! two locomotion clips with and without phase sync. Foot sliding is what
//! phase mismatch looks like.
//!
//! The measure adapts the foot-skating measure of motion-synthesis papers
//! (e.g. Zhang et al. 2018, "Mode-adaptive neural networks for quadruped
//! motion control"): a foot's horizontal speed, weighted by how planted it
//! should be. How planted a foot is in one clip is `2 - 2^(h / H)` while its
//! height `h` above its lowest point in that clip is under `H` (1 on the
//! ground, 0 at `H`), with `H` 3 % of the rest-pose leg (foot to hip, two
//! joints up). In the blend, the foot should be as planted as the clips
//! say, each evaluated alone at its own time, weighted by the blend: that
//! is where sliding shows, since a blend of a planted and a swinging foot
//! neither stays nor lifts.
//!
//! Feet are followed relative to the motion root (the topmost skin joint),
//! so a clip's own root travel (and its jump back at the loop point) does
//! not count. A planted foot then moves at one constant velocity relative
//! to the root, the ground's: backwards at the walking speed whether the
//! clip moves its root or walks in place. That velocity `g` is the median
//! horizontal step of the feet while they should be planted (weight over
//! one half), and the slide is `sum w |d - g|` over feet and frames, `d` a
//! foot's horizontal step in the blend in one frame and `w` its weight.
//! Reported per cycle of the blend
//! (durations averaged by weight), in centimetres of scene units taken as
//! metres (glTF's unit), and as a share of the ground covered per cycle
//! (free of the model's scale).
//!
//! A measurement for benchmarks and tests: it plays characters of its own
//! and never touches the caller's.

use super::character::Character;
use super::controller::{Controller, ControllerError};
use super::parameters::{ParameterError, ParameterValue};
use crate::anim::JobError;
use crate::anim::NO_PARENT;
use crate::anim::Rig;
use nalgebra::Vector3;
use std::sync::Arc;

/// Why the slide could not be measured. One line; a pose error is kept.
#[derive(Debug, thiserror::Error)]
pub enum FootSlideError {
    /// No skin: nothing says which joint is the motion root.
    #[error("the model has no skin")]
    NoSkin,
    /// A foot has no leg above it, so "planted" has no height scale.
    #[error("the feet have no leg above them")]
    NoLeg,
    /// Neither foot is ever on the ground in the blend.
    #[error("no foot is ever planted")]
    NeverPlanted,
    /// The clips were refused (the controller's message).
    #[error(transparent)]
    Controller(#[from] ControllerError),
    /// The blend parameter was refused.
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// A character could not be built or posed.
    #[error(transparent)]
    Pose(#[from] JobError),
}

/// Updates per second of the measurement.
const RATE_HZ: f64 = 240.0;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootSlideSetup {
    /// The first clip (weight `1 - blend`).
    pub a: usize,
    /// The second clip (weight `blend`).
    pub b: usize,
    /// Weight of `b`, in [0, 1].
    pub blend: f32,
    /// Keep both clips at one normalised phase.
    pub sync: bool,
    /// Skeleton joints of the left and right foot.
    pub feet: [usize; 2],
    /// Seconds to play (after one cycle of settling).
    pub seconds: f64,
}

/// The result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootSlide {
    /// Slide of the planted feet per cycle, centimetres (scene units as metres).
    pub cm_per_cycle: f64,
    /// The same as a share of the ground covered in a cycle (0.05 = 5 %).
    pub share_of_stride: f64,
    /// Cycles measured.
    pub cycles: f64,
    /// The ground's speed under the character as the planted feet show it,
    /// scene units per second.
    pub ground_speed: f64,
}

/// The motion root: the first skin joint whose parent is in no skin.
pub fn motion_root(rig: &Rig) -> Option<usize> {
    let parents = rig.skeleton.parents();
    let in_skin = |j: u32| rig.skins.iter().any(|s| s.joints.contains(&j));
    rig.skins
        .iter()
        .flat_map(|s| s.joints.iter().copied())
        .find(|&j| parents[j as usize] == NO_PARENT || !in_skin(parents[j as usize]))
        .map(|j| j as usize)
}

/// Rest-pose distance from joint `foot` to its grandparent (the hip for a
/// foot under a shin under a thigh), scene units.
fn leg_length(rig: &Rig, foot: usize) -> f64 {
    let parents = rig.skeleton.parents();
    let mut world = vec![nalgebra::Matrix4::<f64>::identity(); parents.len()];
    for (j, local) in rig.skeleton.rest().iter().enumerate() {
        let parent = parents[j];
        let base = if parent == NO_PARENT { nalgebra::Matrix4::identity() } else { world[parent as usize] };
        world[j] = base * local.to_matrix_f64();
    }
    let up = |j: usize| parents.get(j).copied().filter(|&p| p != NO_PARENT).map(|p| p as usize);
    let Some(hip) = up(foot).and_then(up) else { return 0.0 };
    (world[foot].column(3).xyz() - world[hip].column(3).xyz()).norm()
}

/// One clip alone, to ask where its feet are at a given time.
struct Source {
    character: Character,
    /// Lowest height of each foot over the clip.
    lowest: [f64; 2],
}

impl Source {
    fn new(rig: &Arc<Rig>, clip: usize, feet: [usize; 2]) -> Result<Self, FootSlideError> {
        let controller = Controller::single_clip(rig, Some(clip), true)?;
        let mut character = Character::new(rig.clone(), Arc::new(controller))?;
        let duration = f64::from(rig.clips[clip].duration);
        let mut lowest = [f64::INFINITY; 2];
        for i in 0..(duration * RATE_HZ).ceil().max(1.0) as usize {
            character.seek(i as f64 / RATE_HZ);
            character.update(0.0)?;
            for (low, h) in lowest.iter_mut().zip(heights(&character, feet)) {
                *low = low.min(h);
            }
        }
        Ok(Source { character, lowest })
    }

    /// How planted each foot is at `time` (1 on the ground, 0 from `threshold` up).
    fn planted(&mut self, time: f64, feet: [usize; 2], threshold: f64) -> Result<[f64; 2], FootSlideError> {
        self.character.seek(time);
        self.character.update(0.0)?;
        let h = heights(&self.character, feet);
        Ok([0, 1].map(|f| {
            let x = (h[f] - self.lowest[f]) / threshold;
            if x < 1.0 { 2.0 - 2f64.powf(x.max(0.0)) } else { 0.0 }
        }))
    }
}

fn heights(character: &Character, feet: [usize; 2]) -> [f64; 2] {
    let world = character.output().world();
    feet.map(|f| f64::from(world[f][(1, 3)]))
}

/// Plays `setup` and measures the slide (see the module documentation).
pub fn measure(rig: &Arc<Rig>, setup: &FootSlideSetup) -> Result<FootSlide, FootSlideError> {
    let root = motion_root(rig).ok_or(FootSlideError::NoSkin)?;
    let feet = setup.feet;
    let threshold = 0.03 * leg_length(rig, feet[0]).max(leg_length(rig, feet[1]));
    if threshold.is_nan() || threshold <= 0.0 {
        return Err(FootSlideError::NoLeg);
    }
    let controller = Controller::clip_blend(rig, Some(setup.a), Some(setup.b), setup.sync, true)?;
    let mut blend = Character::new(rig.clone(), Arc::new(controller))?;
    blend.set_named("blend", ParameterValue::Float(setup.blend))?;
    let mut sources = [Source::new(rig, setup.a, feet)?, Source::new(rig, setup.b, feet)?];
    let (da, db) = (rig.clips[setup.a].duration, rig.clips[setup.b].duration);
    let cycle = f64::from(da + (db - da) * setup.blend.clamp(0.0, 1.0));
    let dt = 1.0 / RATE_HZ;
    let settle = (cycle * RATE_HZ).ceil() as usize;
    let frames = (setup.seconds * RATE_HZ).ceil() as usize;
    // Per foot and frame: horizontal step in the blend, and how planted it should be.
    let mut steps: Vec<(Vector3<f64>, f64)> = Vec::with_capacity(2 * frames);
    let mut previous: Option<[Vector3<f64>; 2]> = None;
    for frame in 0..settle + frames {
        blend.update(dt as f32)?;
        let world = blend.output().world();
        let position = |j: usize| world[j].column(3).xyz().cast::<f64>();
        let now = feet.map(|f| position(f) - position(root));
        if let Some(before) = previous
            && frame >= settle
        {
            let mut planted = [0.0; 2];
            for (l, source) in sources.iter_mut().enumerate() {
                let w = f64::from(blend.leaf_weights()[l]);
                if w > 0.0 {
                    let p = source.planted(blend.leaf_time(l), feet, threshold)?;
                    planted = [planted[0] + w * p[0], planted[1] + w * p[1]];
                }
            }
            for f in 0..2 {
                let d = now[f] - before[f];
                steps.push((Vector3::new(d.x, 0.0, d.z), planted[f]));
            }
        }
        previous = Some(now);
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    };
    let grounded = || steps.iter().filter(|s| s.1 > 0.5);
    let (Some(gx), Some(gz)) =
        (median(grounded().map(|s| s.0.x).collect()), median(grounded().map(|s| s.0.z).collect()))
    else {
        return Err(FootSlideError::NeverPlanted);
    };
    let ground = Vector3::new(gx, 0.0, gz);
    let slide: f64 = steps.iter().map(|s| s.1 * (s.0 - ground).norm()).sum();
    let cycles = setup.seconds / cycle;
    let ground_speed = ground.norm() * RATE_HZ;
    let per_cycle = slide / cycles;
    Ok(FootSlide {
        cm_per_cycle: per_cycle * 100.0,
        share_of_stride: per_cycle / (ground_speed * cycle).max(f64::EPSILON),
        cycles,
        ground_speed,
    })
}
