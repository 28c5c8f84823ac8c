//! Copies of the planar rig side by side, posed each frame two ways: by
//! blending joint angles linearly (the handbook's planar browser rig) and
//! by sampling the rig's clips, whose rotation keys are the same poses as
//! quaternions (slerp, what every native clip uses). One row turns every
//! joint about one axis, where the two must coincide; the other turns them
//! in 3D from Euler angles, where the angle lerp departs from slerp.
//!
//! A `FrameSource`, so `render` and `view` draw it through the one frame
//! path. It poses and measures; it never knows the file the rig came from
//! (`asset::planar_rig` describes it as a [`PlanarMotion`]), the GPU or
//! the renderer. Sized once in `new`: posing a frame never allocates.

use super::frame_poses::{FramePoses, FrameSource, PoseError, SkinInput};
use super::planar::{self, Departure, EulerAngles};
use super::{
    BoneMatrix, JobError, LocalToModelJob, Rig, RotationBlend, SampleJob, SamplingCursor, SkinnedPose,
    Transform,
};
use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;

/// Times sampled from pose A to pose B when measuring the departures.
pub const MEASURE_SAMPLES: u32 = 1000;

/// Where each copy stands, as printed.
pub const LAYOUT: &str = "left: joint angles blended linearly, right: the same poses as quaternions (slerp); \
                          top: rotations about one axis, bottom: 3D rotations from Euler angles";

/// What the scene needs to know of its rig: the chain's joints, the two
/// poses both ways (angles and Euler angles), the clips that hold the same
/// poses as quaternion keys, and how far apart the copies stand.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanarMotion {
    /// Skeleton joints of the chain, root first.
    pub joints: Vec<u32>,
    /// Pose A as angles about +z, radians, one per chain joint.
    pub planar_a: Vec<f32>,
    /// Pose B as angles about +z, radians.
    pub planar_b: Vec<f32>,
    /// Pose A of the 3D row, one per chain joint.
    pub euler_a: Vec<EulerAngles>,
    /// Pose B of the 3D row.
    pub euler_b: Vec<EulerAngles>,
    /// Clip whose linear rotation keys are pose A, B, A of the planar row
    /// at 0, `half_period` and twice that.
    pub planar_clip: usize,
    /// The same for the 3D row.
    pub euler_clip: usize,
    /// Seconds from pose A to pose B (the motion loops A -> B -> A).
    pub half_period: f64,
    /// Distance between the lerp and the quaternion column (x) and
    /// between the rows (y).
    pub spacing: [f32; 2],
    /// Every copy turned by this angle (radians) about +y, and the columns
    /// laid out along the turned x axis: turned to face a camera looking
    /// from that side, the two copies of a row stand at the same depth, so
    /// equal poses look equal (0: the plane of the arm faces +z).
    pub facing_yaw: f32,
    /// The 3D row turned by this much more about +y (radians): its
    /// departures lie mostly out of the arm's plane, which a camera facing
    /// that plane sees edge on.
    pub euler_row_yaw: f32,
}

impl PlanarMotion {
    /// At `time` seconds: the blend parameter from pose A (0) to B (1),
    /// and the clips' time (keys A, B, A at 0, h and 2h, looping).
    pub fn blend_at(&self, time: f64) -> (f32, f64) {
        let h = self.half_period;
        let clip_time = time.rem_euclid(2.0 * h);
        let t = if clip_time <= h { clip_time / h } else { (2.0 * h - clip_time) / h };
        (t as f32, clip_time)
    }
}

/// One way of posing the rig, and the copy that shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanarCopy {
    /// Planar row: joint angles blended linearly.
    AngleLerp,
    /// Planar row: the planar clip sampled (slerp).
    AngleSlerp,
    /// 3D row: Euler angles blended linearly.
    EulerLerp,
    /// 3D row: the 3D clip sampled (slerp).
    EulerSlerp,
}

impl PlanarCopy {
    /// Every copy, in drawing order.
    pub const ALL: [PlanarCopy; 4] =
        [PlanarCopy::AngleLerp, PlanarCopy::AngleSlerp, PlanarCopy::EulerLerp, PlanarCopy::EulerSlerp];

    /// Where it stands, in units of `PlanarMotion::spacing`: lerps in the
    /// left column, quaternions at x = 0; the planar row on top, at y = 0.
    pub fn cell(self) -> (f32, f32) {
        match self {
            PlanarCopy::AngleLerp => (-1.0, 0.0),
            PlanarCopy::AngleSlerp => (0.0, 0.0),
            PlanarCopy::EulerLerp => (-1.0, -1.0),
            PlanarCopy::EulerSlerp => (0.0, -1.0),
        }
    }

    /// Its world matrix for `motion`'s spacing and facing.
    pub fn world(self, motion: &PlanarMotion) -> Matrix4<f32> {
        let (x, y) = self.cell();
        let yaw = |angle: f32| UnitQuaternion::from_axis_angle(&Vector3::y_axis(), angle);
        let at = yaw(motion.facing_yaw) * Vector3::new(x * motion.spacing[0], y * motion.spacing[1], 0.0);
        let extra = if y < 0.0 { motion.euler_row_yaw } else { 0.0 };
        Matrix4::new_translation(&at) * yaw(motion.facing_yaw + extra).to_homogeneous()
    }
}

/// The largest differences between the lerp and the slerp of each row
/// over one blend from pose A to pose B.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanarErrors {
    /// Planar row: angle lerp against the sampled clip.
    pub planar: Departure,
    /// 3D row: Euler-angle lerp against the sampled clip.
    pub euler: Departure,
    /// The chain joint (skeleton index) where the 3D row departs most.
    pub euler_joint: u32,
}

/// One copy's buffers, sized for the rig.
struct CopyPose {
    kind: PlanarCopy,
    world: Matrix4<f32>,
    locals: Vec<Transform>,
    morph_weights: Vec<f32>,
    models: Vec<Matrix4<f32>>,
    palettes: Vec<BoneMatrix>,
    cursor: SamplingCursor,
    version: u64,
}

/// Copies of the planar rig posed at one time each frame.
pub struct PlanarScene {
    rig: Arc<Rig>,
    motion: PlanarMotion,
    copies: Vec<CopyPose>,
    /// Time of frame 0, seconds, and frames per second.
    start: f64,
    fps: f64,
    /// The blended angles of the current frame.
    angles: Vec<f32>,
    /// The time last posed (a new time bumps the versions).
    posed: Option<f64>,
}

impl PlanarScene {
    /// `copies` of `rig` posed by `motion`, frame `i` at `start + i / fps`
    /// seconds. Checks that the motion fits the rig.
    pub fn new(
        rig: Arc<Rig>,
        motion: PlanarMotion,
        copies: &[PlanarCopy],
        start: f64,
        fps: f64,
    ) -> Result<Self, JobError> {
        check_motion(&rig, &motion)?;
        if !(start.is_finite() && fps.is_finite() && fps > 0.0) {
            return Err(JobError::new(format!("planar scene: bad start {start} s or fps {fps}")));
        }
        let joints = rig.skeleton.len();
        let copies = copies
            .iter()
            .map(|&kind| {
                let clip = match kind {
                    PlanarCopy::EulerLerp | PlanarCopy::EulerSlerp => motion.euler_clip,
                    _ => motion.planar_clip,
                };
                CopyPose {
                    kind,
                    world: kind.world(&motion),
                    locals: rig.skeleton.rest().to_vec(),
                    morph_weights: rig.rest_morph_weights.clone(),
                    models: vec![Matrix4::identity(); joints],
                    palettes: vec![BoneMatrix::IDENTITY; rig.palette_len()],
                    cursor: SamplingCursor::new(&rig.clips[clip]),
                    version: 0,
                }
            })
            .collect();
        let angles = vec![0.0; motion.joints.len()];
        Ok(PlanarScene { rig, motion, copies, start, fps, angles, posed: None })
    }

    /// The motion it poses.
    pub fn motion(&self) -> &PlanarMotion {
        &self.motion
    }

    /// Which way copy `c` is posed.
    pub fn copy(&self, c: usize) -> Option<PlanarCopy> {
        self.copies.get(c).map(|p| p.kind)
    }

    /// Local transforms of copy `c` as last posed.
    pub fn locals(&self, c: usize) -> &[Transform] {
        self.copies.get(c).map_or(&[], |p| &p.locals)
    }

    /// Poses every copy at `time` seconds (the clips' time loops; any finite
    /// time). Never allocates.
    pub fn pose_at(&mut self, time: f64) -> Result<(), JobError> {
        if !time.is_finite() {
            return Err(JobError::new(format!("planar scene: time {time} is not finite")));
        }
        let (t, clip_time) = self.motion.blend_at(time);
        let changed = self.posed != Some(time);
        self.posed = Some(time);
        let (rig, motion) = (&*self.rig, &self.motion);
        for copy in &mut self.copies {
            match copy.kind {
                PlanarCopy::AngleLerp => {
                    planar::lerp_angles(&motion.planar_a, &motion.planar_b, t, &mut self.angles);
                    for (&j, &angle) in motion.joints.iter().zip(&self.angles) {
                        copy.locals[j as usize].rotation = planar::planar_rotation(angle);
                    }
                }
                PlanarCopy::EulerLerp => {
                    for ((&j, a), b) in motion.joints.iter().zip(&motion.euler_a).zip(&motion.euler_b) {
                        copy.locals[j as usize].rotation = a.lerp(b, t).rotation();
                    }
                }
                PlanarCopy::AngleSlerp | PlanarCopy::EulerSlerp => {
                    let clip = if copy.kind == PlanarCopy::AngleSlerp {
                        motion.planar_clip
                    } else {
                        motion.euler_clip
                    };
                    SampleJob {
                        clip: &rig.clips[clip],
                        time: clip_time,
                        rest: rig.skeleton.rest(),
                        rest_morph_weights: &rig.rest_morph_weights,
                        rotation_blend: RotationBlend::Slerp,
                        cursor: &mut copy.cursor,
                        output: &mut copy.locals,
                        morph_output: &mut copy.morph_weights,
                    }
                    .run()?;
                }
            }
            LocalToModelJob {
                parents: rig.skeleton.parents(),
                locals: &copy.locals,
                root: Matrix4::identity(),
                output: &mut copy.models,
            }
            .run()?;
            rig.write_palettes(&copy.models, &mut copy.palettes)?;
            if changed {
                copy.version += 1;
            }
        }
        Ok(())
    }
}

/// How far each row's lerp departs from its sampled clip over one blend
/// from pose A to pose B, at `samples + 1` evenly spaced times, joint by
/// joint. Allocates its own copies: call it once, not per frame.
pub fn measure(rig: &Arc<Rig>, motion: &PlanarMotion, samples: u32) -> Result<PlanarErrors, JobError> {
    let mut scene = PlanarScene::new(rig.clone(), motion.clone(), &PlanarCopy::ALL, 0.0, 1.0)?;
    let samples = samples.max(1);
    let mut errors = PlanarErrors {
        planar: Departure::default(),
        euler: Departure::default(),
        euler_joint: motion.joints[0],
    };
    for i in 0..=samples {
        let time = motion.half_period * f64::from(i) / f64::from(samples);
        scene.pose_at(time)?;
        let (t, _) = motion.blend_at(time);
        for &j in &motion.joints {
            // Copies in `PlanarCopy::ALL` order: lerp, slerp of each row.
            let rotation = |c: usize| scene.copies[c].locals[j as usize].rotation;
            let planar = Departure { radians: planar::angle_between(rotation(0), rotation(1)), at: t };
            errors.planar = errors.planar.max(planar);
            let euler = Departure { radians: planar::angle_between(rotation(2), rotation(3)), at: t };
            if euler.radians > errors.euler.radians {
                errors.euler = euler;
                errors.euler_joint = j;
            }
        }
    }
    Ok(errors)
}

impl PlanarErrors {
    /// One line for the user; `names` are the skeleton's joint names.
    pub fn line(&self, names: &[String]) -> String {
        let joint = names.get(self.euler_joint as usize).map_or("?", String::as_str);
        format!(
            "angle lerp vs quaternion slerp, rotations about one axis: largest joint difference {:.1e} rad; \
             Euler-angle lerp vs slerp, 3D rotations: {:.2} degrees ({}, at t = {:.2} from pose A to B)",
            self.planar.radians,
            self.euler.radians.to_degrees(),
            crate::text::display_name(joint),
            self.euler.at
        )
    }
}

/// The chain's joints exist, every pose has one value per joint, the
/// clips exist, and the timing and spacing are finite.
fn check_motion(rig: &Rig, motion: &PlanarMotion) -> Result<(), JobError> {
    let n = motion.joints.len();
    if n == 0 {
        return Err(JobError::new("planar motion: no joints"));
    }
    if let Some(&j) = motion.joints.iter().find(|&&j| j as usize >= rig.skeleton.len()) {
        return Err(JobError::new(format!("planar motion: joint {j} outside the skeleton")));
    }
    let lengths = [motion.planar_a.len(), motion.planar_b.len(), motion.euler_a.len(), motion.euler_b.len()];
    if lengths.iter().any(|&l| l != n) {
        return Err(JobError::new(format!("planar motion: poses of {lengths:?} values for {n} joints")));
    }
    for clip in [motion.planar_clip, motion.euler_clip] {
        if clip >= rig.clips.len() {
            return Err(JobError::new(format!("planar motion: no clip {clip}")));
        }
    }
    let finite =
        motion.spacing.iter().chain([&motion.facing_yaw, &motion.euler_row_yaw]).all(|v| v.is_finite());
    if !(motion.half_period.is_finite() && motion.half_period > 0.0 && finite) {
        return Err(JobError::new("planar motion: bad half period, spacing or turn"));
    }
    Ok(())
}

impl FramePoses for PlanarScene {
    fn count(&self) -> usize {
        self.copies.len()
    }

    fn input(&self, c: usize) -> SkinInput<'_> {
        let copy = &self.copies[c];
        SkinInput {
            pose: SkinnedPose {
                palettes: &copy.palettes,
                palette_ranges: self.rig.palette_ranges(),
                world: &copy.models,
                world_joints: None,
                morph_weights: &copy.morph_weights,
            },
            version: copy.version,
        }
    }

    fn world(&self, c: usize) -> Matrix4<f32> {
        self.copies[c].world
    }
}

impl FrameSource for PlanarScene {
    fn restart(&mut self) -> Result<(), PoseError> {
        for copy in &mut self.copies {
            copy.cursor.reset();
        }
        Ok(())
    }

    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        Ok(self.pose_at(self.start + f64::from(i) / self.fps)?)
    }
}
