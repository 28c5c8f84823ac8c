//! The default character's clips: Idle, Walk, Run and Jump for its states,
//! and Wave (the right arm, played once), Breathing (the torso) and Talk (the
//! jaw and the face's morph targets) for its controller's layers.
//!
//! Functions of time only: no randomness, and no platform maths (see `math`).
//!
//! Each clip is a function from time to a local pose, sampled at `FPS` into
//! LINEAR keys. Feet are placed first (planted feet stay still in the world
//! while the root moves on) and the legs reach them by two-bone IK, so the
//! footstep events sit exactly where a foot touches down.

use super::math::{DetMath, axis_angle, rotation_between};
use super::mesh::{TARGET_COUNT, Target};
use super::skeleton::{ANKLE_Y, BALL, HEEL, J, JOINT_COUNT, JOINTS, LEG_X};
use crate::asset::glb_writer::{AnimationData, ChannelData, ChannelValues, EventData};
use nalgebra::{UnitQuaternion, Vector3};
use std::f32::consts::{PI, TAU};

type V3 = Vector3<f32>;
type Q = UnitQuaternion<f32>;

/// Keys per second of every clip.
const FPS: f32 = 30.0;

/// The local transforms a clip animates: every joint's rotation, the hips'
/// translation offset from its bind position and the root's translation.
#[derive(Debug, Clone)]
pub struct LocalPose {
    /// Local rotation of each joint, in node order.
    pub rotations: [Q; JOINT_COUNT],
    /// Hips translation relative to its bind translation.
    pub hips_offset: V3,
    /// Root translation.
    pub root: V3,
}

impl Default for LocalPose {
    fn default() -> Self {
        LocalPose { rotations: [Q::identity(); JOINT_COUNT], hips_offset: V3::zeros(), root: V3::zeros() }
    }
}

impl LocalPose {
    fn set(&mut self, j: J, q: Q) {
        self.rotations[j.index()] = q;
    }

    fn get(&self, j: J) -> Q {
        self.rotations[j.index()]
    }

    /// Hips position and rotation in root space.
    fn hips(&self) -> (V3, Q) {
        (J::Hips.bind_local() + self.hips_offset, self.get(J::Hips))
    }
}

fn rx(a: f32) -> Q {
    axis_angle(V3::x(), a)
}
fn ry(a: f32) -> Q {
    axis_angle(V3::y(), a)
}
fn rz(a: f32) -> Q {
    axis_angle(V3::z(), a)
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Fractional part in [0, 1).
fn frac(x: f32) -> f32 {
    x - x.floor()
}

/// Cubic Hermite interpolation through `(time, value, slope)` keys, clamped
/// outside them.
fn hermite(keys: &[(f32, f32, f32)], t: f32) -> f32 {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else { return 0.0 };
    if t <= first.0 {
        return first.1;
    }
    for w in keys.windows(2) {
        let ((t0, v0, m0), (t1, v1, m1)) = (w[0], w[1]);
        if t <= t1 {
            let h = t1 - t0;
            let s = if h > 0.0 { (t - t0) / h } else { 1.0 };
            let (s2, s3) = (s * s, s * s * s);
            return (2.0 * s3 - 3.0 * s2 + 1.0) * v0
                + (s3 - 2.0 * s2 + s) * h * m0
                + (-2.0 * s3 + 3.0 * s2) * v1
                + (s3 - s2) * h * m1;
        }
    }
    last.1
}

/// Hermite keys with zero slope (smooth ease in and out at every key).
fn eased(keys: &[(f32, f32)], t: f32) -> f32 {
    let k: Vec<(f32, f32, f32)> = keys.iter().map(|&(t, v)| (t, v, 0.0)).collect();
    hermite(&k, t)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

impl Side {
    fn sign(self) -> f32 {
        if self == Side::Left { 1.0 } else { -1.0 }
    }
    fn pick(self, left: J, right: J) -> J {
        if self == Side::Left { left } else { right }
    }
}

/// Where a foot is: the ankle in root space, the foot's pitch (positive: heel
/// up, toes down) and the toes' bend relative to the foot.
#[derive(Debug, Clone, Copy)]
struct FootState {
    ankle: V3,
    pitch: f32,
    toes: f32,
}

/// The ankle of a foot whose flat position has its ankle at `(x, ANKLE_Y, z)`,
/// pitched about the heel (toes up) or the ball (heel up) so that pivot stays
/// on the ground.
fn pivoted_ankle(x: f32, z: f32, pitch: f32) -> V3 {
    let heel = V3::from(HEEL);
    let ball = V3::from(BALL);
    let flat = V3::new(x, ANKLE_Y, z);
    if pitch < 0.0 { flat + heel + rx(pitch) * -heel } else { flat + ball + rx(pitch) * -ball }
}

/// Two-bone IK: poses the leg on `side` so its ankle reaches `ankle` (root
/// space) with the foot pitched by `pitch` and the toes bent by `toes`.
fn solve_leg(pose: &mut LocalPose, side: Side, foot: &FootState) {
    let (upper, lower, ankle_j, toes_j) = match side {
        Side::Left => (J::UpperLegL, J::LowerLegL, J::FootL, J::ToesL),
        Side::Right => (J::UpperLegR, J::LowerLegR, J::FootR, J::ToesR),
    };
    let (hips_t, hips_r) = pose.hips();
    let hip = hips_t + hips_r * upper.bind_local();
    let d = hips_r.inverse() * (foot.ankle - hip);
    let l1 = lower.bind_local().norm();
    let l2 = ankle_j.bind_local().norm();
    // Never fully straight: a locked knee has no defined bend direction.
    let dist = d.norm().clamp((l1 - l2).abs() + 1e-3, (l1 + l2) * 0.9995);
    let cos_knee = ((dist * dist - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).clamp(-1.0, 1.0);
    // The knee rotation from its cosine by half-angle formulas (no acos: see `math`).
    let sin_knee = (1.0 - cos_knee * cos_knee).max(0.0).sqrt();
    let knee_q = Q::new_normalize(nalgebra::Quaternion::new(
        ((1.0 + cos_knee) * 0.5).max(0.0).sqrt(),
        ((1.0 - cos_knee) * 0.5).max(0.0).sqrt(),
        0.0,
        0.0,
    ));
    // The leg's ankle direction in the thigh's frame with this knee bend (knee bends backwards).
    let c = V3::new(0.0, -l1 - l2 * cos_knee, -l2 * sin_knee);
    let thigh = rotation_between(&c, &d);
    pose.set(upper, thigh);
    pose.set(lower, knee_q);
    let leg_world = hips_r * thigh * knee_q;
    pose.set(ankle_j, leg_world.inverse() * rx(foot.pitch));
    pose.set(toes_j, rx(foot.toes));
}

/// The highest hips offset (y) for which both feet can still be reached.
fn reachable_hips_y(pose: &LocalPose, feet: &[(Side, FootState); 2]) -> f32 {
    let (hips_t, hips_r) = pose.hips();
    let mut best = f32::INFINITY;
    for (side, foot) in feet {
        let upper = side.pick(J::UpperLegL, J::UpperLegR);
        let reach = (J::LowerLegL.bind_local().norm() + J::FootL.bind_local().norm()) * 0.985;
        let hip = hips_t + hips_r * upper.bind_local();
        let horizontal = (hip.x - foot.ankle.x).powi(2) + (hip.z - foot.ankle.z).powi(2);
        let vertical = (reach * reach - horizontal).max(0.0).sqrt();
        best = best.min(foot.ankle.y + vertical - (hip.y - pose.hips_offset.y));
    }
    best
}

// ---------------------------------------------------------------------------
// Locomotion

/// A walking or running gait.
#[derive(Debug, Clone, Copy)]
struct Gait {
    /// Cycle length in seconds.
    period: f32,
    /// Forward speed (m/s).
    speed: f32,
    /// Fraction of the cycle a foot is on the ground.
    duty: f32,
    /// Where under the hips the stance is centred (z).
    center: f32,
    /// Foot pitch at touch-down (negative: toes up, landing on the heel).
    strike_pitch: f32,
    /// Foot pitch at lift-off.
    toe_off_pitch: f32,
    /// Fraction of the stance after which the heel rises.
    heel_rise: f32,
    /// Extra height of the ankle at mid-swing.
    lift: f32,
    /// Where in the swing (0..1) the ankle is highest.
    lift_peak: f32,
    /// Phase (fraction of the cycle) of the left foot's touch-down.
    left_strike: f32,
}

impl Gait {
    /// The foot of a leg at phase `p` (0 = touch-down).
    fn foot(&self, p: f32, x: f32) -> FootState {
        let travel = self.speed * self.period * self.duty;
        let front = self.center + travel * 0.5;
        let stance = |u: f32| {
            let z = front - travel * u;
            let pitch = if u < 0.2 {
                self.strike_pitch * (1.0 - smoothstep(u / 0.2))
            } else if u < self.heel_rise {
                0.0
            } else {
                self.toe_off_pitch * ((u - self.heel_rise) / (1.0 - self.heel_rise)).powi(2)
            };
            FootState { ankle: pivoted_ankle(x, z, pitch), pitch, toes: -pitch.max(0.0) }
        };
        if p < self.duty {
            return stance(p / self.duty);
        }
        let u = (p - self.duty) / (1.0 - self.duty);
        let (a, b) = (stance(1.0), stance(0.0));
        let e = smoothstep(u);
        // A lift curve peaking at `lift_peak`, zero at both ends.
        let k = u.dpowf(0.5f32.dln() / self.lift_peak.dln());
        let lift = self.lift * (PI * k).dsin();
        let ankle = V3::new(
            x,
            a.ankle.y + (b.ankle.y - a.ankle.y) * u + lift,
            a.ankle.z + (b.ankle.z - a.ankle.z) * e,
        );
        let pitch = a.pitch + (b.pitch - a.pitch) * smoothstep(u * 1.3);
        FootState { ankle, pitch, toes: a.toes * (1.0 - smoothstep(u * 3.0)) }
    }

    /// Left and right leg phases at time `t`.
    fn phases(&self, t: f32) -> (f32, f32) {
        let phi = t / self.period;
        (frac(phi - self.left_strike), frac(phi - self.left_strike - 0.5))
    }

    fn events(&self) -> Vec<EventData> {
        let mut events = vec![
            EventData { time: self.left_strike * self.period, name: "footstep_left".into() },
            EventData { time: frac(self.left_strike + 0.5) * self.period, name: "footstep_right".into() },
        ];
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        events
    }
}

/// Upper-body style of a gait.
#[derive(Debug, Clone, Copy)]
struct Style {
    hips_drop: f32,
    bob: f32,
    sway: f32,
    pelvis_yaw: f32,
    pelvis_roll: f32,
    lean: f32,
    arm_swing: f32,
    arm_bias: f32,
    arm_out: f32,
    elbow: f32,
    elbow_swing: f32,
    /// Run: the hips are lowest at mid-stance (walk: highest).
    bounce: bool,
}

fn locomotion(g: &Gait, st: &Style, t: f32) -> LocalPose {
    let mut pose = LocalPose { root: V3::new(0.0, 0.0, g.speed * t), ..Default::default() };
    let (pl, pr) = g.phases(t);
    let left = 2.0 * PI * pl;
    // Pelvis: yaws the swinging leg's hip forward, rolls down on the swing side, sways over the stance foot.
    let mid = TAU * (pl - g.duty * 0.5);
    let yaw = -st.pelvis_yaw * left.dcos();
    let roll = st.pelvis_roll * mid.dcos();
    pose.set(J::Hips, ry(yaw) * rz(roll) * rx(st.lean * 0.3));
    pose.hips_offset.x = st.sway * mid.dcos();
    let bob = (2.0 * mid).dcos();
    let desired = -st.hips_drop + if st.bounce { -st.bob * bob } else { st.bob * bob };

    let feet = [(Side::Left, g.foot(pl, LEG_X)), (Side::Right, g.foot(pr, -LEG_X))];
    pose.hips_offset.y = desired;
    pose.hips_offset.y = desired.min(reachable_hips_y(&pose, &feet));
    for (side, foot) in &feet {
        solve_leg(&mut pose, *side, foot);
    }

    // Torso counter-rotates the pelvis and keeps the shoulders level.
    pose.set(J::Spine, ry(-yaw * 0.6) * rz(-roll * 0.6) * rx(st.lean * 0.4));
    pose.set(J::Chest, ry(-yaw * 0.7) * rz(-roll * 0.4) * rx(st.lean * 0.5));
    pose.set(J::Neck, rx(-st.lean * 0.25));
    pose.set(J::Head, ry(0.2 * yaw) * rx(-st.lean * 0.3 + 0.03 * bob));

    for side in [Side::Left, Side::Right] {
        let phase = if side == Side::Left { pl } else { pr };
        // The arm swings back while the same side's leg swings forward.
        let swing = st.arm_swing * (TAU * phase).dcos() + st.arm_bias;
        let forward = (-(TAU * phase).dcos()).max(0.0);
        let s = side.sign();
        pose.set(side.pick(J::UpperArmL, J::UpperArmR), rx(swing) * rz(s * st.arm_out));
        pose.set(side.pick(J::LowerArmL, J::LowerArmR), rx(-(st.elbow + st.elbow_swing * forward)));
        pose.set(side.pick(J::HandL, J::HandR), rx(-0.15) * ry(-s * 0.2));
        pose.set(side.pick(J::ShoulderL, J::ShoulderR), ry(s * 0.08 * (TAU * phase).dcos()));
    }
    pose
}

const WALK: Gait = Gait {
    period: 1.1,
    speed: 1.3,
    duty: 0.6,
    center: -0.07,
    strike_pitch: -0.25,
    toe_off_pitch: 0.75,
    heel_rise: 0.45,
    lift: 0.06,
    lift_peak: 0.4,
    left_strike: 0.1,
};

const WALK_STYLE: Style = Style {
    hips_drop: 0.02,
    bob: 0.018,
    sway: 0.022,
    pelvis_yaw: 0.1,
    pelvis_roll: 0.05,
    lean: 0.05,
    arm_swing: 0.35,
    arm_bias: 0.02,
    arm_out: 0.05,
    elbow: 0.25,
    elbow_swing: 0.35,
    bounce: false,
};

const RUN: Gait = Gait {
    period: 0.7,
    speed: 3.4,
    duty: 0.36,
    center: -0.04,
    strike_pitch: -0.08,
    toe_off_pitch: 0.8,
    heel_rise: 0.3,
    lift: 0.3,
    lift_peak: 0.38,
    left_strike: 0.1,
};

const RUN_STYLE: Style = Style {
    hips_drop: 0.05,
    bob: 0.03,
    sway: 0.012,
    pelvis_yaw: 0.14,
    pelvis_roll: 0.05,
    lean: 0.3,
    arm_swing: 0.6,
    arm_bias: -0.05,
    arm_out: 0.12,
    elbow: 1.35,
    elbow_swing: 0.25,
    bounce: true,
};

// ---------------------------------------------------------------------------
// Idle and jump

const IDLE_PERIOD: f32 = 3.0;

/// Breathing, 0..1, one breath per idle loop.
fn breath(t: f32) -> f32 {
    0.5 - 0.5 * (TAU * t / IDLE_PERIOD).dcos()
}

fn standing_feet() -> [(Side, FootState); 2] {
    let foot = |x: f32| FootState { ankle: V3::new(x, ANKLE_Y, 0.0), pitch: 0.0, toes: 0.0 };
    [(Side::Left, foot(LEG_X)), (Side::Right, foot(-LEG_X))]
}

fn idle(t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    let w = TAU * t / IDLE_PERIOD;
    let b = breath(t);
    // Weight shifts from foot to foot once per loop; the feet stay planted (IK).
    pose.hips_offset = V3::new(0.018 * w.dsin(), -0.006 - 0.003 * b, 0.0);
    pose.set(J::Hips, rz(0.025 * w.dsin()) * ry(0.03 * (w + 0.5).dsin()));
    for (side, foot) in &standing_feet() {
        solve_leg(&mut pose, *side, foot);
    }
    pose.set(J::Spine, rz(-0.02 * w.dsin()) * rx(0.01));
    pose.set(J::Chest, rz(-0.012 * w.dsin()) * rx(-0.025 * b));
    pose.set(J::Neck, rx(0.01 * b));
    pose.set(J::Head, ry(0.12 * (w + 1.0).dsin()) * rx(0.04 * (2.0 * w).dsin() + 0.02));
    for side in [Side::Left, Side::Right] {
        let s = side.sign();
        let sway = 0.04 * (w + s).dsin();
        pose.set(side.pick(J::ShoulderL, J::ShoulderR), rz(s * 0.03 * b));
        pose.set(side.pick(J::UpperArmL, J::UpperArmR), rx(sway) * rz(-s * (0.04 + 0.02 * b)));
        pose.set(side.pick(J::LowerArmL, J::LowerArmR), rx(-0.18 - 0.04 * (w + s).dcos()));
        pose.set(side.pick(J::HandL, J::HandR), rx(-0.1) * ry(-s * 0.3));
    }
    pose
}

const JUMP_DURATION: f32 = 1.2;
const TAKEOFF: f32 = 0.5;
const LANDING: f32 = 0.92;
const GRAVITY: f32 = 9.81;

/// Hips height offset during the jump: eased keys on the ground, a ballistic
/// arc in the air (matching the take-off and landing speeds).
fn jump_hips_y(t: f32) -> f32 {
    let flight = LANDING - TAKEOFF;
    let (y0, y1) = (0.03, 0.02);
    let v0 = (y1 - y0 + 0.5 * GRAVITY * flight * flight) / flight;
    let v1 = v0 - GRAVITY * flight;
    if (TAKEOFF..=LANDING).contains(&t) {
        let s = t - TAKEOFF;
        return y0 + v0 * s - 0.5 * GRAVITY * s * s;
    }
    hermite(
        &[
            (0.0, -0.015, 0.0),
            (0.1, -0.03, 0.0),
            (0.36, -0.25, 0.0),
            (TAKEOFF, y0, v0),
            (LANDING, y1, v1),
            (1.03, -0.2, 0.0),
            (JUMP_DURATION, -0.015, 0.0),
        ],
        t,
    )
}

fn jump(t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    let crouch =
        eased(&[(0.0, 0.0), (0.36, 1.0), (TAKEOFF, 0.0), (LANDING, 0.0), (1.03, 0.8), (1.2, 0.0)], t);
    let lean = eased(&[(0.0, 0.0), (0.36, 0.45), (TAKEOFF, 0.0), (0.72, 0.15), (1.03, 0.35), (1.2, 0.0)], t);
    pose.hips_offset = V3::new(0.0, jump_hips_y(t), -0.09 * crouch);
    pose.set(J::Hips, rx(lean * 0.5));

    // On the ground the feet stay put (heels rising into the take-off); in
    // the air the legs tuck up under the body.
    let pitch = eased(
        &[(0.0, 0.0), (0.32, 0.0), (TAKEOFF, 0.75), (0.7, 0.35), (0.86, 0.45), (0.97, 0.0), (1.2, 0.0)],
        t,
    );
    let tuck = eased(&[(0.0, 0.0), (TAKEOFF, 0.0), (0.7, 1.0), (0.86, 0.1), (1.2, 0.0)], t);
    let mut feet = standing_feet();
    let (hips_t, hips_r) = pose.hips();
    for (side, foot) in feet.iter_mut() {
        let hip = hips_t + hips_r * side.pick(J::UpperLegL, J::UpperLegR).bind_local();
        let ground = pivoted_ankle(foot.ankle.x, 0.0, pitch);
        let reach = 0.85 - 0.3 * tuck;
        let air = hip.y - reach;
        let height = ground.y.max(air);
        let on_ground = 1.0 - smoothstep((height - ground.y) / 0.04);
        foot.ankle = V3::new(foot.ankle.x, height, ground.z * on_ground + 0.02 * tuck);
        foot.pitch = pitch;
        foot.toes = -pitch * on_ground;
    }
    for (side, foot) in &feet {
        solve_leg(&mut pose, *side, foot);
    }

    pose.set(J::Spine, rx(lean * 0.4));
    pose.set(J::Chest, rx(lean * 0.3));
    pose.set(J::Neck, rx(-lean * 0.4));
    pose.set(J::Head, rx(-lean * 0.4));
    let arm = eased(
        &[(0.0, 0.0), (0.36, 0.85), (0.62, -2.0), (0.8, -1.4), (LANDING, -0.5), (1.05, 0.35), (1.2, 0.0)],
        t,
    );
    let elbow = eased(&[(0.0, 0.18), (0.36, 0.3), (0.62, 0.25), (0.8, 0.6), (1.05, 0.4), (1.2, 0.18)], t);
    let out = eased(&[(0.0, 0.0), (0.62, 0.25), (1.0, 0.1), (1.2, 0.0)], t);
    for side in [Side::Left, Side::Right] {
        let s = side.sign();
        pose.set(side.pick(J::UpperArmL, J::UpperArmR), rx(arm) * rz(s * (out - 0.03)));
        pose.set(side.pick(J::LowerArmL, J::LowerArmR), rx(-elbow));
        pose.set(side.pick(J::HandL, J::HandR), rx(-0.1) * ry(-s * 0.3));
        // Raised arms lift the shoulders too, which spares the sleeve a hard fold.
        pose.set(side.pick(J::ShoulderL, J::ShoulderR), rz(s * 0.25 * smoothstep((-arm - 0.8) / 1.2)));
    }
    pose
}

// ---------------------------------------------------------------------------
// Layer clips: a wave, breathing and talking

const WAVE_DURATION: f32 = 2.4;

/// The right arm rises sideways until the upper arm is nearly level and
/// the forearm nearly upright, waves the forearm and hand three times, and comes
/// back down to the idle arm; every other joint stays in its bind pose (the
/// controller's wave layer masks them out).
fn wave(t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    let s = Side::Right.sign();
    let raise = eased(&[(0.0, 0.0), (0.5, 1.0), (1.85, 1.0), (WAVE_DURATION, 0.0)], t);
    let waving =
        eased(&[(0.0, 0.0), (0.45, 0.0), (0.6, 1.0), (1.7, 1.0), (1.85, 0.0), (WAVE_DURATION, 0.0)], t);
    // Three side-to-side swings between 0.45 s and 1.85 s.
    let swing = waving * (TAU * 3.0 * (t - 0.45) / 1.4).dsin();
    // Outward swing of the upper arm: from the idle arm's (slightly in) to
    // nearly level; forward a little; the elbow bends the forearm upright.
    let out = -0.04 + 1.34 * raise;
    pose.set(J::ShoulderR, rz(s * 0.15 * raise));
    pose.set(J::UpperArmR, rx(-0.3 * raise) * rz(s * out));
    pose.set(J::LowerArmR, rz(s * (1.55 * raise + 0.35 * swing)) * rx(-0.18 * (1.0 - raise)));
    pose.set(J::HandR, rz(s * 0.25 * swing) * rx(-0.1) * ry(-s * 0.3));
    pose
}

const BREATH_PERIOD: f32 = 3.2;

/// One breath, 0 (out) .. 1 (in), starting breathed out.
fn breathing_amount(t: f32) -> f32 {
    0.5 - 0.5 * (TAU * t / BREATH_PERIOD).dcos()
}

/// The chest lifts and the shoulders rise with each breath; starting
/// breathed out, so the clip's first key is the rest (its additive layer's
/// reference).
fn breathing(t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    let b = breathing_amount(t);
    pose.set(J::Spine, rx(0.01 * b));
    pose.set(J::Chest, rx(-0.035 * b));
    pose.set(J::Neck, rx(0.02 * b));
    for side in [Side::Left, Side::Right] {
        pose.set(side.pick(J::ShoulderL, J::ShoulderR), rz(side.sign() * 0.04 * b));
    }
    pose
}

const TALK_DURATION: f32 = 2.4;
/// Talking stops here; the rest of the loop is a pause.
const TALK_PAUSE: f32 = 1.9;
/// Widest jaw opening, radians.
const JAW_OPEN: f32 = 0.22;

/// How far the mouth is open: seven syllables of varied strength, then a
/// pause; closed at the start and the end.
fn mouth_open(t: f32) -> f32 {
    if !(0.0..TALK_PAUSE).contains(&t) {
        return 0.0;
    }
    let syllables = 0.5 - 0.5 * (TAU * 7.0 * t / TALK_PAUSE).dcos();
    let stress = 0.65 + 0.35 * (TAU * 1.3 * t).dsin();
    syllables * stress
}

/// The face's morph weights while talking: mouth open, a smile that comes
/// and goes, one blink.
fn talk_weights(t: f32) -> [f32; TARGET_COUNT] {
    let mut w = [0.0; TARGET_COUNT];
    w[Target::MouthOpen as usize] = mouth_open(t);
    w[Target::Smile as usize] =
        eased(&[(0.0, 0.0), (0.5, 0.6), (1.5, 0.7), (2.2, 0.0), (TALK_DURATION, 0.0)], t);
    w[Target::Blink as usize] =
        eased(&[(0.0, 0.0), (1.18, 0.0), (1.26, 1.0), (1.36, 0.0), (TALK_DURATION, 0.0)], t);
    w
}

/// The jaw opens with the mouth; the head nods a little. Neutral (the
/// bind pose) at the first key: the face layer's reference.
fn talk(t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    pose.set(J::Jaw, rx(JAW_OPEN * mouth_open(t)));
    let nod = TAU * t / TALK_DURATION;
    pose.set(J::Head, rx(0.04 * nod.dsin()) * ry(0.03 * (2.0 * nod).dsin()));
    pose
}

// ---------------------------------------------------------------------------
// Sampling into glTF channels

/// Which extra channels a clip has.
struct Sampled<'a> {
    name: &'a str,
    duration: f32,
    /// Loops: the last key repeats the first (root translation excepted).
    looping: bool,
    root_motion: bool,
    pose: &'a dyn Fn(f32) -> LocalPose,
    /// Weights of the body's morph targets over time.
    morph: Option<&'a dyn Fn(f32) -> [f32; TARGET_COUNT]>,
    events: Vec<EventData>,
}

fn sample(clip: Sampled, body_node: usize) -> AnimationData {
    let intervals = (clip.duration * FPS).round().max(1.0) as usize;
    let mut times: Vec<f32> = (0..=intervals).map(|i| clip.duration * i as f32 / intervals as f32).collect();
    // A key at each event, so the pose there (a foot touching down) is exact, not interpolated.
    for e in &clip.events {
        if times.iter().all(|&t| (t - e.time).abs() > 1e-3) {
            times.push(e.time);
        }
    }
    times.sort_by(f32::total_cmp);
    let mut poses: Vec<LocalPose> = times.iter().map(|&t| (clip.pose)(t)).collect();
    if clip.looping
        && let Some(first) = poses.first().cloned()
        && let Some(last) = poses.last_mut()
    {
        last.rotations = first.rotations;
        last.hips_offset = first.hips_offset;
    }
    let mut channels = Vec::new();
    if clip.root_motion {
        channels.push(ChannelData {
            node: J::Root.index(),
            times: times.clone(),
            values: ChannelValues::Translation(poses.iter().map(|p| p.root.into()).collect()),
        });
    }
    channels.push(ChannelData {
        node: J::Hips.index(),
        times: times.clone(),
        values: ChannelValues::Translation(
            poses.iter().map(|p| (J::Hips.bind_local() + p.hips_offset).into()).collect(),
        ),
    });
    for j in JOINTS.iter().filter(|&&j| j != J::Root) {
        let values = poses
            .iter()
            .map(|p| {
                // One hemisphere (w >= 0): every rotation here is under 180 degrees.
                let q = p.get(*j).into_inner();
                let q = if q.w < 0.0 { -q } else { q };
                [q.i, q.j, q.k, q.w]
            })
            .collect();
        channels.push(ChannelData {
            node: j.index(),
            times: times.clone(),
            values: ChannelValues::Rotation(values),
        });
    }
    if let Some(morph) = clip.morph {
        let mut keys: Vec<[f32; TARGET_COUNT]> = times.iter().map(|&t| morph(t)).collect();
        if clip.looping
            && let Some(&first) = keys.first()
            && let Some(last) = keys.last_mut()
        {
            *last = first;
        }
        let weights = keys.into_iter().flatten().collect();
        channels.push(ChannelData { node: body_node, times, values: ChannelValues::Weights(weights) });
    }
    AnimationData { name: clip.name.to_string(), channels, events: clip.events }
}

/// The clips (the states' four, then the layers' three, so that the first
/// four keep their indices); `body_node` is the node drawing the mesh (for
/// the morph weights).
pub fn clips(body_node: usize) -> Vec<AnimationData> {
    let walk = |t| locomotion(&WALK, &WALK_STYLE, t);
    let run = |t| locomotion(&RUN, &RUN_STYLE, t);
    let idle_breath = |t| {
        let mut w = [0.0; TARGET_COUNT];
        w[Target::Breathe as usize] = breath(t);
        w
    };
    let breathing_breath = |t| {
        let mut w = [0.0; TARGET_COUNT];
        w[Target::Breathe as usize] = breathing_amount(t);
        w
    };
    vec![
        sample(
            Sampled {
                name: "Idle",
                duration: IDLE_PERIOD,
                looping: true,
                root_motion: false,
                pose: &idle,
                morph: Some(&idle_breath),
                events: Vec::new(),
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Walk",
                duration: WALK.period,
                looping: true,
                root_motion: true,
                pose: &walk,
                morph: None,
                events: WALK.events(),
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Run",
                duration: RUN.period,
                looping: true,
                root_motion: true,
                pose: &run,
                morph: None,
                events: RUN.events(),
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Jump",
                duration: JUMP_DURATION,
                looping: false,
                root_motion: false,
                pose: &jump,
                morph: None,
                events: vec![
                    EventData { time: TAKEOFF, name: "jump_takeoff".into() },
                    EventData { time: LANDING, name: "jump_land".into() },
                ],
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Wave",
                duration: WAVE_DURATION,
                looping: false,
                root_motion: false,
                pose: &wave,
                morph: None,
                events: Vec::new(),
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Breathing",
                duration: BREATH_PERIOD,
                looping: true,
                root_motion: false,
                pose: &breathing,
                morph: Some(&breathing_breath),
                events: Vec::new(),
            },
            body_node,
        ),
        sample(
            Sampled {
                name: "Talk",
                duration: TALK_DURATION,
                looping: true,
                root_motion: false,
                pose: &talk,
                morph: Some(&talk_weights),
                events: Vec::new(),
            },
            body_node,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leg_ik_reaches_a_reachable_ankle() {
        let mut pose = LocalPose::default();
        let target = V3::new(LEG_X, 0.2, 0.25);
        solve_leg(&mut pose, Side::Left, &FootState { ankle: target, pitch: 0.0, toes: 0.0 });
        let (ht, hr) = pose.hips();
        let thigh = hr * pose.get(J::UpperLegL);
        let knee = ht + hr * J::UpperLegL.bind_local() + thigh * J::LowerLegL.bind_local();
        let ankle = knee + thigh * pose.get(J::LowerLegL) * J::FootL.bind_local();
        assert!((ankle - target).norm() < 1e-4, "{ankle}");
        // The knee bends forwards.
        assert!(knee.z > ht.z);
    }

    #[test]
    fn planted_feet_hold_still_in_the_world() {
        for g in [WALK, RUN] {
            let dt = 0.01;
            let p = 0.25 * g.duty;
            let a = g.foot(p, LEG_X).ankle;
            let b = g.foot(p + dt / g.period, LEG_X).ankle + V3::new(0.0, 0.0, g.speed * dt);
            assert!((a - b).norm() < 1e-4, "{a} {b}");
        }
    }
}
