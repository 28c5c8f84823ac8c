//! Root motion: the travel of a clip's root joint on the ground (x and z of
//! its translation) and its turn about the up axis (y), taken out of the
//! pose so that the entity, not the pose, moves (the root stays over the
//! entity's origin; nothing moves twice).
//!
//! A clip's root moves along `P(t)` within a cycle and jumps back at the
//! loop point. Over unwrapped clip time `u` it goes `U(u) = P(u mod d) +
//! floor(u / d) * D`, with `D = P(d) - P(0)` the travel of one cycle, so the
//! displacement of a step from clip time `t0` to `t1`, `travel` seconds
//! unwrapped, is `P(t1) - P(t0) + k * D` with `k` the loop points crossed:
//! continuous across the loop point, backwards when playing backwards,
//! several cycles in one long step. A clip that does not loop holds its
//! ends. While several clips play, each one's displacement is weighted by
//! its weight in the pose (blend spaces and crossfades alike).
//!
//! A step ends at the clip time the pose is sampled at, so the next step
//! starts where this one ended: the steps' sum telescopes to the root's
//! travel between the first and the last pose, and the sample that ended
//! one step starts the next (see [`RootTrail`]).
//!
//! It measures and removes root motion; it never moves an entity (the world
//! layer does, with what `Character::root_motion` reports).

use crate::anim::sampling::{sample_rotation, sample_vector};
use crate::anim::{Clip, JointTracks, RotationBlend, Transform};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// What one update moved the root by, in the root's parent's space.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootMotion {
    /// Travel on the ground (y is 0).
    pub translation: Vector3<f32>,
    /// Turn about the up axis, radians (counter-clockwise seen from above).
    pub yaw: f32,
}

impl RootMotion {
    /// Adds `other` weighted by `w`.
    pub fn add_weighted(&mut self, other: &RootMotion, w: f32) {
        self.translation += other.translation * w;
        self.yaw += other.yaw * w;
    }
}

/// Key hints of a clip's root translation and rotation tracks: one
/// character's, kept from one update to the next so that each sample finds
/// its keys near the last one's instead of searching (results never
/// depend on them).
pub type RootKeyHints = [u32; 2];

/// One clip node's root-motion state between updates: its key hints, and
/// where the root was at the clip time the last step ended at, the time
/// the next step starts from. Only hints: a step that starts anywhere else
/// samples its start, and a sample at a time is the same whoever takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootTrail {
    hints: RootKeyHints,
    /// Clip time of `sample` (NaN: none yet; it equals no time).
    time: f64,
    sample: RootSample,
}

impl Default for RootTrail {
    fn default() -> Self {
        RootTrail {
            hints: RootKeyHints::default(),
            time: f64::NAN,
            sample: RootSample { ground: [0.0; 2], twist: [1.0, 0.0] },
        }
    }
}

impl RootTrail {
    /// The root at clip time `t`: the sample kept if it was taken there.
    fn at(&mut self, tracks: &JointTracks, t: f64, rest: &Transform) -> RootSample {
        if t == self.time { self.sample } else { at(tracks, t, rest, &mut self.hints) }
    }

    /// The root at clip time `t`, kept for the next step.
    fn keep(&mut self, tracks: &JointTracks, t: f64, rest: &Transform) -> RootSample {
        self.sample = self.at(tracks, t, rest);
        self.time = t;
        self.sample
    }
}

/// One clip node's step in an update: the clip time it started from, how
/// far it played (signed clip seconds, loops unwrapped) and the clip time
/// it ended at (where its pose is sampled: within the clip).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeafStep {
    /// Clip time at the start, seconds.
    pub from: f64,
    /// Clip seconds played, signed, loops unwrapped.
    pub travel: f64,
    /// Clip time at the end, seconds (within the clip).
    pub to: f64,
}

/// A clip's root track and its travel per cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipRootMotion {
    /// Index of the root joint's tracks in the clip, if it has any.
    track: Option<usize>,
    /// Travel of one cycle, `P(d) - P(0)`.
    cycle: RootMotion,
}

impl ClipRootMotion {
    /// The root motion of `clip` for joint `joint` (rest transform `rest`).
    pub fn new(clip: &Clip, joint: u32, rest: &Transform) -> Self {
        let track = clip.joint_tracks.iter().position(|t| t.joint == joint);
        let mut motion = ClipRootMotion { track, cycle: RootMotion::default() };
        if let Some(tracks) = motion.tracks(clip) {
            let trail = &mut RootTrail::default();
            let (start, end) =
                (trail.at(tracks, 0.0, rest), trail.at(tracks, f64::from(clip.duration), rest));
            motion.cycle = difference(&start, &end);
        }
        motion
    }

    fn tracks<'a>(&self, clip: &'a Clip) -> Option<&'a JointTracks> {
        self.track.and_then(|t| clip.joint_tracks.get(t))
    }

    /// Travel of one cycle.
    pub fn cycle(&self) -> RootMotion {
        self.cycle
    }

    /// The root's displacement over a clip node's `step` (see the module
    /// documentation), starting from the sample `trail` kept when the step
    /// starts where the last one ended, and keeping its end's.
    pub fn displacement(
        &self,
        clip: &Clip,
        rest: &Transform,
        step: LeafStep,
        looping: bool,
        trail: &mut RootTrail,
    ) -> RootMotion {
        let Some(tracks) = self.tracks(clip) else { return RootMotion::default() };
        let d = f64::from(clip.duration);
        let LeafStep { from, travel, to } = step;
        if travel == 0.0 || !travel.is_finite() || d <= 0.0 {
            return RootMotion::default();
        }
        let (from, to) = (from.clamp(0.0, d), to.clamp(0.0, d));
        let within = difference(&trail.at(tracks, from, rest), &trail.keep(tracks, to, rest));
        if !looping {
            return within;
        }
        // Whole cycles between the wrapped ends and the unwrapped travel:
        // their difference is a multiple of the duration, give or take
        // rounding far below half of it.
        let cycles = ((from + travel - to) / d).round() as f32;
        RootMotion {
            translation: within.translation + self.cycle.translation * cycles,
            yaw: within.yaw + self.cycle.yaw * cycles,
        }
    }
}

/// Where the root is at one clip time: its ground position (x and z) and
/// its turn about the up axis (see [`twist`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RootSample {
    ground: [f32; 2],
    twist: [f32; 2],
}

/// The root's ground position and turn at clip time `t` (its translation
/// and rotation sampled as `sample_joint` does; its scale plays no part).
fn at(tracks: &JointTracks, t: f64, rest: &Transform, hints: &mut RootKeyHints) -> RootSample {
    let translation = match &tracks.translation {
        Some(track) => sample_vector(track, t, &mut hints[0]),
        None => rest.translation,
    };
    let rotation = match &tracks.rotation {
        Some(track) => sample_rotation(track, t, RotationBlend::Slerp, rest.rotation, &mut hints[1]),
        None => rest.rotation,
    };
    RootSample { ground: ground(&translation), twist: twist(&rotation) }
}

/// `to - from`, the turn taken the short way round.
fn difference(from: &RootSample, to: &RootSample) -> RootMotion {
    let translation = Vector3::new(to.ground[0] - from.ground[0], 0.0, to.ground[1] - from.ground[1]);
    if to.twist == from.twist {
        // Held still, or no rotation track: exactly no turn.
        return RootMotion { translation, yaw: 0.0 };
    }
    let [w, y] = turn_between(&from.twist, &to.twist);
    RootMotion { translation, yaw: 2.0 * y.atan2(w) }
}

/// The translation's part on the ground plane, x and z.
fn ground(t: &Vector3<f32>) -> [f32; 2] {
    [t.x, t.z]
}

/// The turn about the up axis (y) that `q` holds, as the unit complex
/// number `[cos, sin]` of half its angle: `q`'s w and y parts scaled to
/// unit length (the twist of a swing-twist split). `[1, 0]` when `q` holds
/// none (a half turn about a level axis). Composing and undoing turns this
/// way takes products, not the angles' `atan2`, `sin` and `cos`.
fn twist(q: &UnitQuaternion<f32>) -> [f32; 2] {
    let (w, y) = (q.w, q.j);
    // Scaled first so that tiny parts do not square to zero.
    let largest = w.abs().max(y.abs());
    if largest == 0.0 || largest.is_nan() {
        return [1.0, 0.0];
    }
    let (w, y) = (w / largest, y / largest);
    let length = (w * w + y * y).sqrt();
    [w / length, y / length]
}

/// The turn from twist `from` to twist `to` (`to` times `from`'s inverse),
/// taken the short way round: its half angle's cosine is not negative, so
/// its angle lies in [-pi, pi].
fn turn_between(from: &[f32; 2], to: &[f32; 2]) -> [f32; 2] {
    let w = to[0] * from[0] + to[1] * from[1];
    let y = to[1] * from[0] - to[0] * from[1];
    if w < 0.0 { [-w, -y] } else { [w, y] }
}

/// Takes root motion out of a root joint's local transform: its ground
/// position and its yaw become the rest pose's, so the visual root stays
/// over the entity's origin and faces the entity's way.
pub fn remove(local: &mut Transform, rest: &Transform) {
    local.translation.x = rest.translation.x;
    local.translation.z = rest.translation.z;
    let [w, y] = turn_between(&twist(&local.rotation), &twist(&rest.rotation));
    let undo = UnitQuaternion::new_unchecked(Quaternion::new(w, 0.0, y, 0.0));
    local.rotation = undo * local.rotation;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Interpolation, Track};
    use std::f32::consts::PI;

    /// The angle of `q`'s turn about the up axis, in (-pi, pi], from the
    /// angles themselves (what `twist` avoids).
    fn yaw_of(q: &UnitQuaternion<f32>) -> f32 {
        let a = 2.0 * q.j.atan2(q.w);
        if a > PI {
            a - 2.0 * PI
        } else if a <= -PI {
            a + 2.0 * PI
        } else {
            a
        }
    }

    /// A root walking +z at 1 m/s while turning 0.5 rad per second, over 2 s.
    fn walk() -> Clip {
        let times = vec![0.0, 1.0, 2.0];
        Clip {
            name: Some("walk".into()),
            duration: 2.0,
            joint_tracks: vec![JointTracks {
                joint: 0,
                translation: Some(Track {
                    times: times.clone(),
                    values: vec![
                        Vector3::new(0.0, 1.0, 0.0),
                        Vector3::new(0.0, 1.1, 1.0),
                        Vector3::new(0.0, 1.0, 2.0),
                    ],
                    interpolation: Interpolation::Linear,
                }),
                rotation: Some(Track {
                    times,
                    values: [0.0f32, 0.5, 1.0]
                        .map(|a| UnitQuaternion::from_axis_angle(&Vector3::y_axis(), a).into_inner())
                        .to_vec(),
                    interpolation: Interpolation::Linear,
                }),
                scale: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn displacement_is_continuous_across_loops_and_reversible() {
        let clip = walk();
        let rest = Transform::IDENTITY;
        let m = ClipRootMotion::new(&clip, 0, &rest);
        assert!((m.cycle().translation - Vector3::new(0.0, 0.0, 2.0)).norm() < 1e-6);
        assert!((m.cycle().yaw - 1.0).abs() < 1e-6);
        let step = |from: f64, travel: f64, to: f64| LeafStep { from, travel, to };
        let trail = |hints| RootTrail { hints, ..RootTrail::default() };
        // 1.5 s -> 6.5 s (0.5 s on the clip): 5 s at 1 m/s, across the loop
        // point twice.
        let d = m.displacement(&clip, &rest, step(1.5, 5.0, 0.5), true, &mut trail([0; 2]));
        assert!((d.translation - Vector3::new(0.0, 0.0, 5.0)).norm() < 1e-5, "{d:?}");
        assert!((d.yaw - 2.5).abs() < 1e-5, "{d:?}");
        // Backwards: the opposite (hints far off find their keys).
        let back = m.displacement(&clip, &rest, step(0.5, -5.0, 1.5), true, &mut trail([7; 2]));
        assert!((back.translation + Vector3::new(0.0, 0.0, 5.0)).norm() < 1e-5, "{back:?}");
        // Ending on the loop point, as the clip's end or as its start.
        for to in [0.0, 2.0] {
            let whole = m.displacement(&clip, &rest, step(1.0, 1.0, to), true, &mut trail([0; 2]));
            assert!((whole.translation - Vector3::new(0.0, 0.0, 1.0)).norm() < 1e-5, "{to}: {whole:?}");
        }
        // Not looping: holds at the end.
        let held = m.displacement(&clip, &rest, step(1.5, 5.0, 2.0), false, &mut trail([1; 2]));
        assert!((held.translation - Vector3::new(0.0, 0.0, 0.5)).norm() < 1e-5, "{held:?}");
        // No track for that joint: nothing.
        let other = ClipRootMotion::new(&clip, 3, &rest);
        let none = other.displacement(&clip, &rest, step(0.0, 1.0, 1.0), true, &mut trail([0; 2]));
        assert_eq!(none, RootMotion::default());
    }

    /// Steps that each start where the last ended reuse its end sample:
    /// the same bits as each step sampled afresh, and together the travel
    /// between the first start and the last end.
    #[test]
    fn a_trail_changes_no_step_and_steps_telescope() {
        let clip = walk();
        let rest = Transform::IDENTITY;
        let m = ClipRootMotion::new(&clip, 0, &rest);
        let (mut kept, mut time, mut sum) = (RootTrail::default(), 0.25, Vector3::zeros());
        // 0.37 s steps: 40 of them cross the loop point seven times.
        for _ in 0..40 {
            let to = (time + 0.37) % 2.0;
            let step = LeafStep { from: time, travel: 0.37, to };
            let fresh = m.displacement(&clip, &rest, step, true, &mut RootTrail::default());
            // A trail kept at another time is not used.
            let stale = &mut RootTrail { time: to + 0.5, ..kept };
            assert_eq!(m.displacement(&clip, &rest, step, true, stale), fresh);
            assert_eq!(m.displacement(&clip, &rest, step, true, &mut kept), fresh);
            assert_eq!(kept.time, to);
            sum += fresh.translation;
            time = to;
        }
        assert!((sum - Vector3::new(0.0, 0.0, 40.0 * 0.37)).norm() < 1e-4, "{sum:?}");
    }

    #[test]
    fn removal_keeps_height_and_everything_but_yaw() {
        let rest = Transform { translation: Vector3::new(0.1, 0.0, 0.2), ..Transform::IDENTITY };
        let tilt = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.3);
        let mut local = Transform {
            translation: Vector3::new(3.0, 0.9, -4.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 1.2) * tilt,
            scale: Vector3::repeat(1.0),
        };
        remove(&mut local, &rest);
        assert_eq!(local.translation, Vector3::new(0.1, 0.9, 0.2));
        assert!(local.rotation.angle_to(&tilt) < 1e-5);
        assert!(yaw_of(&local.rotation).abs() < 1e-6);
    }

    /// Any rotation (not normalised: `UnitQuaternion::new_normalize` does it),
    /// half turns about level axes and tiny twists included.
    fn rotation() -> impl proptest::strategy::Strategy<Value = UnitQuaternion<f32>> {
        use proptest::prelude::*;
        let part = prop_oneof![-1.0f32..1.0, Just(0.0), -1e-20f32..1e-20];
        (part.clone(), -1.0f32..1.0, part, -1.0f32..1.0).prop_filter_map("zero", |(w, x, y, z)| {
            let q = Quaternion::new(w, x, y, z);
            (q.norm() > 1e-3).then(|| UnitQuaternion::new_normalize(q))
        })
    }

    proptest::proptest! {
        // Failures are not saved: the crate's top level holds no seed files.
        #![proptest_config(proptest::prelude::ProptestConfig {
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Turns composed as products give what the angles give: removal
        /// as `from_axis_angle(y, -(yaw(local) - yaw(rest)))`, differences
        /// as the yaws' difference brought into (-pi, pi].
        #[test]
        fn twists_agree_with_angles(local in rotation(), rest in rotation()) {
            let by_angle = |q: &UnitQuaternion<f32>| {
                if q.j == 0.0 && q.w == 0.0 { 0.0 } else { yaw_of(q) }
            };
            let yaw = by_angle(&local) - by_angle(&rest);
            let expected = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -yaw) * local;
            let rest = Transform { rotation: rest, ..Transform::IDENTITY };
            let mut removed = Transform { rotation: local, ..Transform::IDENTITY };
            remove(&mut removed, &rest);
            let (a, b) = (removed.rotation.coords, expected.coords);
            proptest::prop_assert!((a - b).norm().min((a + b).norm()) < 1e-5, "{a:?} {b:?}");
            proptest::prop_assert!((removed.rotation.norm() - 1.0).abs() < 1e-6);

            let sample = |q: &UnitQuaternion<f32>| RootSample { ground: [0.0; 2], twist: twist(q) };
            let turn = difference(&sample(&rest.rotation), &sample(&local)).yaw;
            let wrapped = (yaw + PI).rem_euclid(2.0 * PI) - PI;
            let apart = (turn - wrapped).abs();
            proptest::prop_assert!(apart.min(2.0 * PI - apart) < 1e-5, "{turn} {wrapped}");
            proptest::prop_assert!((-PI..=PI).contains(&turn));
        }
    }
}
