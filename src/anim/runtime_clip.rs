//! The runtime clip layout, made for sampling: a clip validated once
//! against a skeleton and rearranged as ozz-animation arranges its runtime
//! animations.
//!
//! Immutable once built: sampling never changes it, and nothing here samples
//! (see [`clip_sampling`](super::clip_sampling)).
//!
//! - Joints are grouped four to a SIMD block (structure of arrays): lane `l`
//!   of block `b` is joint `4 b + l`, for translations, rotations and scales
//!   alike. Joints without a track (and the padding lanes of the last block)
//!   hold their rest value.
//! - STEP and LINEAR keys are stored as block states: every state a block
//!   of four lanes passes through in playback (a state starts wherever one
//!   of its lanes crosses a key), each holding what sampling needs for the
//!   four lanes' current intervals (both keys, the times, slerp's
//!   constants) in the SIMD layout the job reads, one after the other in
//!   time order. A per-character
//!   [`ClipCursor`](super::clip_sampling::ClipCursor) keeps one index per
//!   block and moves it on as playback crosses keys: a character keeps four
//!   bytes per animated block, and sampling reads the shared states in
//!   place, warm in cache across a crowd. (ozz-animation and an earlier
//!   layout kept every lane's current keys in the cursor, 272 bytes per
//!   rotation block per character: the crowd's largest state by far.) A
//!   baked clip's lanes cross keys together, so it has as many states as
//!   keys; a thinned clip's lanes cross at their own times, up to four
//!   states per key.
//! - CUBICSPLINE keys are block states too: a cubic lane's interval holds
//!   its two keys' values and, beside the states (`CubicLanes`), the
//!   start key's out-tangent and the end key's in-tangent, so that a
//!   spline costs a block the Hermite basis, not a key search per track
//!   (a clip of cubic tracks sampled track by track took twice as long).
//!   The block states reproduce [`SampleJob`](super::SampleJob)'s results
//!   bit for bit (by slerp); morph weights are sampled track by track with
//!   its scalar code.
//!
//! Everything the per-frame job would otherwise check on every call (joint
//! indices, key counts, key times) is checked here, once.

use super::clip::{Clip, Interpolation, JointTracks, Track};
use super::job::JobError;
use super::math::{SlerpKeys, keep_or, slerp_keys};
use super::sampling::check_clip;
use super::transform::Transform;
use crate::text::display_name;
use nalgebra::{Quaternion, UnitQuaternion};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Joints per SIMD block.
pub const LANES: usize = 4;

/// The three joint properties, in the order lanes are numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Property {
    Translation = 0,
    Rotation = 1,
    Scale = 2,
}

/// One interval of a lane, between two keys of its track (or a rest or
/// constant lane's only one): what a block state holds for the lane.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Interval {
    /// Values at the interval's start and end keys (xyz or quaternion ijkw).
    a: [f32; 4],
    b: [f32; 4],
    /// Key times of `a` and `b`, and `1 / (t1 - t0)`.
    t0: f32,
    t1: f32,
    inv: f32,
    /// At or before this time the lane holds `a`: the track's first key
    /// time in its first interval, +inf for STEP tracks and rest lanes,
    /// -inf in later intervals.
    first: f32,
    /// At or after this time the lane holds `b`: the track's last key time
    /// (+inf for rest lanes).
    last: f32,
    /// Slerp's constants for `a` to `b` (rotations; zero otherwise).
    slerp: SlerpConstants,
    /// A CUBICSPLINE lane's tangents: the out-tangent of `a`'s key and the
    /// in-tangent of `b`'s (zero for the others).
    tangents: [[f32; 4]; 2],
    /// Whether the lane is a CUBICSPLINE track's.
    cubic: bool,
}

/// A lane at the start of its track, while the layout is built.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LaneStart {
    /// Its first interval.
    first: Interval,
    /// Holding any key of the track gives the key itself (as stored when
    /// unit to an exporter's rounding; see `RuntimeClip::keys_kept`).
    kept: bool,
}

/// Four lanes of a translation or scale property in one of their states:
/// each lane's interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(16))]
pub(crate) struct VectorBlock {
    /// Component-major: `a[c][lane]`.
    pub a: [[f32; LANES]; 3],
    pub b: [[f32; LANES]; 3],
    pub times: Times,
}

/// Four lanes of rotations in one of their states: each lane's interval and
/// slerp's constants for it (what holding a key gives and slerp's
/// normalised, flipped keys are recomputed each frame from these, exactly).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(16))]
pub(crate) struct RotationBlock {
    /// Component-major, quaternion components `i, j, k, w`.
    pub a: [[f32; LANES]; 4],
    pub b: [[f32; LANES]; 4],
    /// Slerp's sine of the angle: > 0 for an arc, 0 for a chord (keys too
    /// close, lerp and normalise), -1 for identical keys (hold `a`).
    pub sin: [f32; LANES],
    pub angle: [f32; LANES],
    /// All bits set where slerp normalises the keys first / flips `b`.
    pub unit: [f32; LANES],
    pub flip: [f32; LANES],
    pub times: Times,
}

/// Key times of four lanes' intervals (see `Interval`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C, align(16))]
pub(crate) struct Times {
    pub t0: [f32; LANES],
    pub t1: [f32; LANES],
    /// `1 / (t1 - t0)`, for the fast path's ratios.
    pub inv: [f32; LANES],
    pub first: [f32; LANES],
    pub last: [f32; LANES],
}

/// Slerp's constants for one interval of a rotation track, computed when
/// the clip is built (they depend only on the two keys), so that crossing a
/// key costs a copy, not an `atan2`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct SlerpConstants {
    /// The sine of the angle: > 0 for an arc, 0 for a chord (keys too close:
    /// lerp and normalise), -1 for identical keys (hold the start key).
    pub sin: f32,
    /// The angle, radians.
    pub angle: f32,
    /// All bits set where slerp normalises the keys first / flips the end key.
    pub unit: f32,
    pub flip: f32,
}

impl SlerpConstants {
    /// The constants of slerping from `a` to `b` (quaternions `[i, j, k, w]`),
    /// exactly as scalar sampling computes them.
    pub(crate) fn new(a: [f32; 4], b: [f32; 4]) -> Self {
        let q = |v: [f32; 4]| Quaternion::new(v[3], v[0], v[1], v[2]);
        let (a, b) = (q(a), q(b));
        let (sin, angle) = match SlerpKeys::new(a, b) {
            SlerpKeys::Same(_) => (-1.0, 0.0),
            SlerpKeys::Chord(..) => (0.0, 0.0),
            SlerpKeys::Arc { sin, angle, .. } => (sin, angle),
        };
        let (_, _, unit, flip) = slerp_keys(a, b);
        SlerpConstants { sin, angle, unit: mask(unit), flip: mask(flip) }
    }
}

/// The CUBICSPLINE lanes of one kind (rotations, or translations or
/// scales), `N` components: which lanes are cubic, and the Hermite
/// tangents of every state, beside the states. All empty when no lane of
/// the kind is cubic (the rule in files: sampling then reads none of it).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CubicLanes<const N: usize> {
    /// Per block, whether any lane is cubic.
    pub any: Vec<bool>,
    /// Per block, all bits set in the cubic lanes.
    pub lanes: Vec<[f32; LANES]>,
    /// Per state (the same index as the kind's states), each lane's
    /// `Interval::tangents`, component-major: `[0]` the start key's
    /// out-tangent, `[1]` the end key's in-tangent.
    pub tangents: Vec<[[[f32; LANES]; N]; 2]>,
}

impl<const N: usize> CubicLanes<N> {
    /// Blocks whose cubic lanes are `lanes` (masks), no tangents yet.
    fn with_lanes(lanes: Vec<[f32; LANES]>) -> Self {
        let any = lanes.iter().map(|m| m.iter().any(|m| m.to_bits() != 0)).collect();
        CubicLanes { any, lanes, tangents: Vec::new() }
    }
}

/// Source of unique clip ids (cursors remember the clip they follow).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A clip laid out for sampling on one skeleton (see the module
/// documentation). Immutable; shared by every character of the rig.
#[derive(Debug, Clone)]
pub struct RuntimeClip {
    id: u64,
    clip: Arc<Clip>,
    joints: usize,
    blocks: usize,
    rest_morph_weights: Vec<f32>,
    /// Every state of every rotation block, block after block, each
    /// block's in time order.
    pub(crate) rotation_states: Vec<RotationBlock>,
    /// The same for the translation (`[0]`) and scale (`[1]`) blocks with a track.
    pub(crate) vector_states: [Vec<VectorBlock>; 2],
    /// The time each state starts (a lane of it crossed a key), per kind in
    /// cursor order: translations, rotations, scales.
    pub(crate) block_starts: [Vec<f32>; 3],
    /// The range of states of every block a cursor keeps, per kind in
    /// cursor order: the translation blocks with a track, every rotation
    /// block, the scale blocks with a track.
    pub(crate) cursor_blocks: [Vec<[u32; 2]>; 3],
    /// Per block a cursor keeps (in its order), the first block whose
    /// states start at the same times and how many states later this
    /// block's begin: `[leader, offset]`, the block itself and 0 when no
    /// earlier one does.
    pub(crate) timelines: Vec<[u32; 2]>,
    /// Intervals after each lane's first (the keys crossed in playback).
    later_intervals: usize,
    /// The cubic rotation lanes and their tangents.
    pub(crate) cubic_rotations: CubicLanes<4>,
    /// The cubic translation (`[0]`) and scale (`[1]`) lanes and their tangents.
    pub(crate) cubic_vectors: [CubicLanes<3>; 2],
    /// Rest rotation of every lane, component-major per block (`[i, j, k, w][lane]`):
    /// what a rotation without usable length falls back to.
    pub(crate) fallback: Vec<[[f32; LANES]; 4]>,
    /// Whether holding any rotation key gives the key itself (every key
    /// unit to an exporter's rounding, as in every file seen so far); when
    /// not, sampling normalises held keys of the lanes in `rotation_tracked`.
    pub(crate) keys_kept: bool,
    /// Per block, all bits set in the lanes whose rotation is interpolated here.
    pub(crate) rotation_tracked: Vec<[f32; LANES]>,
    /// Per block, whether no lane's rotation is interpolated here: every
    /// lane holds its state's start key at every time (its rest rotation,
    /// or a cubic lane's placeholder), so sampling copies it, as both
    /// paths' arithmetic would give it. Most of a rig's nodes have no
    /// rotation track in a given clip (RobotExpressive's Walking turns 14
    /// of 74; leaf and mesh nodes never turn).
    pub(crate) rotation_held: Vec<bool>,
    /// Per block, for translations (`[0]`) and scales (`[1]`): its index
    /// among the blocks where some lane has a track of that kind, `u32::MAX`
    /// in blocks without one, which always give `vector_rest`: cursors keep
    /// no state for them, and sampling does not touch the cursor there.
    pub(crate) vector_slot: [Vec<u32>; 2],
    /// Rest translations and scales per block, component-major.
    pub(crate) vector_rest: [Vec<[[f32; LANES]; 3]>; 2],
}

impl RuntimeClip {
    /// Lays `clip` out for a skeleton whose rest pose is `rest` and a pose
    /// with `rest_morph_weights`. Checks what [`SampleJob::validate`](super::SampleJob::validate)
    /// checks, plus finite, strictly increasing key times.
    pub fn new(clip: Arc<Clip>, rest: &[Transform], rest_morph_weights: &[f32]) -> Result<Self, JobError> {
        let name = clip.name.as_deref().unwrap_or("unnamed");
        let job = format!("clip \"{}\"", display_name(name));
        check_clip(&job, &clip, rest.len(), rest_morph_weights.len())?;
        let joints = rest.len();
        let blocks = joints.div_ceil(LANES);
        let mut layout = Layout::at_rest(rest, blocks);
        let owners = track_owners(&job, &clip, layout.lanes)?;
        layout.add_tracks(&clip, rest, &owners);
        let keys_kept = layout.keys_kept();
        let rotation_tracked = layout.rotation_tracked(&owners);
        let vectors = layout.vector_blocks(&owners);
        let Layout { start, later, .. } = layout;
        let later_intervals = later.iter().map(Vec::len).sum();
        let mut intervals = Vec::with_capacity(start.len() + later_intervals);
        let mut lane_intervals = Vec::with_capacity(start.len());
        for (s, later) in start.iter().zip(&later) {
            let base = intervals.len() as u32;
            intervals.push(s.first);
            intervals.extend_from_slice(later);
            lane_intervals.push([base, intervals.len() as u32]);
        }
        let states = BlockStates::new(&intervals, &lane_intervals, &vectors.slot, blocks);
        if u32::try_from(states.rotations.len().max(states.vectors[0].len()).max(states.vectors[1].len()))
            .is_err()
        {
            return Err(JobError::new(format!("{job}: over 2^32 key intervals")));
        }
        Ok(RuntimeClip {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            clip,
            joints,
            blocks,
            rest_morph_weights: rest_morph_weights.to_vec(),
            rotation_states: states.rotations,
            vector_states: states.vectors,
            timelines: timelines(&states.starts, &states.ranges),
            block_starts: states.starts,
            cursor_blocks: states.ranges,
            later_intervals,
            cubic_rotations: states.cubic_rotations,
            cubic_vectors: states.cubic_vectors,
            fallback: rotation_fallback(rest, blocks),
            keys_kept,
            rotation_held: rotation_tracked
                .iter()
                .map(|lanes| lanes.iter().all(|m| m.to_bits() == 0))
                .collect(),
            rotation_tracked,
            vector_slot: vectors.slot,
            vector_rest: vectors.rest,
        })
    }

    /// The source clip.
    pub fn clip(&self) -> &Arc<Clip> {
        &self.clip
    }

    /// Number of skeleton joints it samples.
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// Number of SIMD blocks (joints / 4, rounded up).
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Rest morph weights (the values of slots without a track).
    pub fn rest_morph_weights(&self) -> &[f32] {
        &self.rest_morph_weights
    }

    /// Number of keys playback crosses (STEP and LINEAR keys after each
    /// track's first two): the intervals after each lane's first.
    pub fn streamed_keys(&self) -> usize {
        self.later_intervals
    }

    /// Unique id of this layout (cursors compare it).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Blocks with a translation (`[0]`) or scale (`[1]`) track.
    pub(crate) fn vector_blocks(&self) -> [usize; 2] {
        [self.cursor_blocks[0].len(), self.cursor_blocks[2].len()]
    }
}

/// `RuntimeClip::timelines` of blocks whose states start at `starts`,
/// each its `ranges` of them, per kind in cursor order.
fn timelines(starts: &[Vec<f32>; 3], ranges: &[Vec<[u32; 2]>; 3]) -> Vec<[u32; 2]> {
    let mut first_with: std::collections::HashMap<Vec<u32>, [u32; 2]> = Default::default();
    let mut timelines = Vec::new();
    for (starts, ranges) in starts.iter().zip(ranges) {
        for &[start, end] in ranges {
            let at = timelines.len() as u32;
            let bits = starts[start as usize..end as usize].iter().map(|s| s.to_bits()).collect();
            let [leader, leader_start] = *first_with.entry(bits).or_insert([at, start]);
            timelines.push([leader, start.wrapping_sub(leader_start)]);
        }
    }
    timelines
}

/// Every block's states (see `RuntimeClip::rotation_states`), from every
/// lane's intervals (`property * lanes + joint`).
struct BlockStates {
    rotations: Vec<RotationBlock>,
    vectors: [Vec<VectorBlock>; 2],
    starts: [Vec<f32>; 3],
    ranges: [Vec<[u32; 2]>; 3],
    cubic_rotations: CubicLanes<4>,
    cubic_vectors: [CubicLanes<3>; 2],
}

impl BlockStates {
    fn new(
        intervals: &[Interval],
        lane_intervals: &[[u32; 2]],
        vector_slot: &[Vec<u32>; 2],
        blocks: usize,
    ) -> Self {
        let lanes = blocks * LANES;
        // Per kind, each block's lanes as cubic masks (none: no tangents kept).
        let cubic_masks = |property: usize| -> Vec<[f32; LANES]> {
            let cubic = |j: usize| intervals[lane_intervals[property * lanes + j][0] as usize].cubic;
            let masks: Vec<[f32; LANES]> =
                (0..blocks).map(|b| std::array::from_fn(|l| mask(cubic(b * LANES + l)))).collect();
            if masks.iter().flatten().any(|m| m.to_bits() != 0) { masks } else { Vec::new() }
        };
        let mut states = BlockStates {
            rotations: Vec::new(),
            vectors: [Vec::new(), Vec::new()],
            starts: [Vec::new(), Vec::new(), Vec::new()],
            ranges: [Vec::new(), Vec::new(), Vec::new()],
            cubic_rotations: CubicLanes::with_lanes(cubic_masks(1)),
            cubic_vectors: [CubicLanes::with_lanes(cubic_masks(0)), CubicLanes::with_lanes(cubic_masks(2))],
        };
        for (kind, property) in [(0, 0), (1, 1), (2, 2)] {
            for b in 0..blocks {
                if kind != 1 && vector_slot[kind / 2][b] == u32::MAX {
                    continue;
                }
                let block_lanes: [[u32; 2]; LANES] =
                    std::array::from_fn(|l| lane_intervals[property * lanes + b * LANES + l]);
                let base = states.starts[kind].len() as u32;
                let starts = &mut states.starts[kind];
                let (rotations, vectors) = (&mut states.rotations, &mut states.vectors);
                let (cubic_rotations, cubic_vectors) =
                    (&mut states.cubic_rotations, &mut states.cubic_vectors);
                each_state(intervals, block_lanes, |start, lanes| {
                    starts.push(start);
                    if kind == 1 {
                        rotations.push(rotation_state(lanes));
                        if !cubic_rotations.any.is_empty() {
                            cubic_rotations.tangents.push(state_tangents(&lanes));
                        }
                    } else {
                        vectors[kind / 2].push(vector_state(lanes));
                        let cubic = &mut cubic_vectors[kind / 2];
                        if !cubic.any.is_empty() {
                            cubic.tangents.push(state_tangents(&lanes));
                        }
                    }
                });
                let end = states.starts[kind].len() as u32;
                states.ranges[kind].push([base, end]);
            }
        }
        states
    }
}

/// Calls `emit` with each state of four lanes, in time order: its start
/// (-inf for the first) and each lane's interval. A state starts wherever
/// some lane's next interval starts; between two starts no lane crosses a
/// key, so each lane's interval is the last one that started, as a lane's
/// own cursor would have it.
fn each_state(
    intervals: &[Interval],
    lanes: [[u32; 2]; LANES],
    mut emit: impl FnMut(f32, [&Interval; LANES]),
) {
    let mut at = lanes.map(|[start, _]| start as usize);
    let mut start = f32::NEG_INFINITY;
    loop {
        emit(start, at.map(|i| &intervals[i]));
        let next = (0..LANES)
            .filter(|&l| at[l] + 1 < lanes[l][1] as usize)
            .map(|l| intervals[at[l] + 1].t0)
            .min_by(f32::total_cmp);
        let Some(next) = next else { return };
        for l in 0..LANES {
            while at[l] + 1 < lanes[l][1] as usize && intervals[at[l] + 1].t0 <= next {
                at[l] += 1;
            }
        }
        start = next;
    }
}

fn state_times(lanes: &[&Interval; LANES]) -> Times {
    Times {
        t0: lanes.map(|iv| iv.t0),
        t1: lanes.map(|iv| iv.t1),
        inv: lanes.map(|iv| iv.inv),
        first: lanes.map(|iv| iv.first),
        last: lanes.map(|iv| iv.last),
    }
}

fn rotation_state(lanes: [&Interval; LANES]) -> RotationBlock {
    RotationBlock {
        a: std::array::from_fn(|c| lanes.map(|iv| iv.a[c])),
        b: std::array::from_fn(|c| lanes.map(|iv| iv.b[c])),
        sin: lanes.map(|iv| iv.slerp.sin),
        angle: lanes.map(|iv| iv.slerp.angle),
        unit: lanes.map(|iv| iv.slerp.unit),
        flip: lanes.map(|iv| iv.slerp.flip),
        times: state_times(&lanes),
    }
}

/// Four lanes' tangents (see `CubicLanes::tangents`), `N` components.
fn state_tangents<const N: usize>(lanes: &[&Interval; LANES]) -> [[[f32; LANES]; N]; 2] {
    std::array::from_fn(|k| std::array::from_fn(|c| lanes.map(|iv| iv.tangents[k][c])))
}

/// All bits set for `true`, none for `false` (a lane mask).
fn mask(on: bool) -> f32 {
    if on { f32::from_bits(u32::MAX) } else { 0.0 }
}

fn vector_state(lanes: [&Interval; LANES]) -> VectorBlock {
    VectorBlock {
        a: std::array::from_fn(|c| lanes.map(|iv| iv.a[c])),
        b: std::array::from_fn(|c| lanes.map(|iv| iv.b[c])),
        times: state_times(&lanes),
    }
}

/// The joint track (its index) and property that write a lane, if any.
type Owner = Option<(u32, Property)>;

/// The lane each joint track's translation, rotation and scale writes
/// (`property * lanes + joint`), after checking their key times and those
/// of the morph tracks. A later entry for the same joint and property
/// wins, as in SampleJob.
fn track_owners(job: &str, clip: &Clip, lanes: usize) -> Result<Vec<Owner>, JobError> {
    let mut owner: Vec<Owner> = vec![None; 3 * lanes];
    for (i, jt) in clip.joint_tracks.iter().enumerate() {
        let j = jt.joint as usize;
        let what = |p: &str| format!("{job}: joint track {i} {p}");
        if let Some(t) = &jt.translation {
            check_times(&what("translation"), &t.times)?;
            owner[j] = Some((i as u32, Property::Translation));
        }
        if let Some(t) = &jt.rotation {
            check_times(&what("rotation"), &t.times)?;
            owner[lanes + j] = Some((i as u32, Property::Rotation));
        }
        if let Some(t) = &jt.scale {
            check_times(&what("scale"), &t.times)?;
            owner[2 * lanes + j] = Some((i as u32, Property::Scale));
        }
    }
    for (m, mt) in clip.morph_tracks.iter().enumerate() {
        check_times(&format!("{job}: morph track {m}"), &mt.times)?;
    }
    Ok(owner)
}

/// Joint `j`'s rest transform; identity for the padding lanes past the last joint.
fn rest_at(rest: &[Transform], j: usize) -> Transform {
    rest.get(j).copied().unwrap_or(Transform::IDENTITY)
}

/// Rest rotation of every lane, component-major per block (see
/// `RuntimeClip::fallback`).
fn rotation_fallback(rest: &[Transform], blocks: usize) -> Vec<[[f32; LANES]; 4]> {
    let mut fallback = vec![[[0.0; LANES]; 4]; blocks];
    for j in 0..blocks * LANES {
        let q = rest_at(rest, j).rotation.into_inner().coords;
        for (c, v) in q.iter().enumerate() {
            fallback[j / LANES][c][j % LANES] = *v;
        }
    }
    fallback
}

/// A clip's lanes while they are laid out: where each starts, the keys
/// crossed after that, and which lanes hold one exact value.
struct Layout {
    /// Lanes per property (`blocks * LANES`).
    lanes: usize,
    /// Start state of every lane, `property * lanes + joint`.
    start: Vec<LaneStart>,
    /// Every lane's intervals after its first, in time order.
    later: Vec<Vec<Interval>>,
    /// Lanes whose track always gives one value exactly, kept out of the
    /// intervals and of the animated blocks.
    constant: Vec<bool>,
}

impl Layout {
    /// Every lane of `blocks` blocks holding its rest value.
    fn at_rest(rest: &[Transform], blocks: usize) -> Self {
        let lanes = blocks * LANES;
        let mut start = Vec::with_capacity(3 * lanes);
        for property in [Property::Translation, Property::Rotation, Property::Scale] {
            start.extend((0..lanes).map(|j| rest_lane(property, &rest_at(rest, j))));
        }
        let later = vec![Vec::new(); 3 * lanes];
        Layout { lanes, start, later, constant: vec![false; 3 * lanes] }
    }

    /// Lays out the track that writes each lane (see [`track_owners`]), in
    /// lane order.
    fn add_tracks(&mut self, clip: &Clip, rest: &[Transform], owners: &[Owner]) {
        for (slot, owner) in owners.iter().enumerate() {
            let Some((track, property)) = *owner else { continue };
            let fallback = rest_at(rest, slot % self.lanes).rotation;
            self.add_track(slot, &clip.joint_tracks[track as usize], property, fallback);
        }
    }

    /// Lane `slot` from `property` of joint track `jt`: one exact value, or
    /// a start state and later intervals.
    fn add_track(
        &mut self,
        slot: usize,
        jt: &JointTracks,
        property: Property,
        fallback: UnitQuaternion<f32>,
    ) {
        let vector = match property {
            Property::Translation => jt.translation.as_ref(),
            Property::Scale => jt.scale.as_ref(),
            Property::Rotation => None,
        };
        if let Some(v) = vector.and_then(exact_constant) {
            let first = &mut self.start[slot].first;
            (first.a, first.b) = (v, v);
            self.constant[slot] = true;
            return;
        }
        let later = &mut self.later[slot];
        let lane = match property {
            Property::Translation => jt.translation.as_ref().map(|t| vector_lane(t, later)),
            Property::Scale => jt.scale.as_ref().map(|t| vector_lane(t, later)),
            Property::Rotation => jt.rotation.as_ref().map(|t| rotation_lane(t, fallback, later)),
        };
        if let Some(lane) = lane {
            self.start[slot] = lane;
        }
    }

    /// Whether holding any key gives the key itself (see `RuntimeClip::keys_kept`).
    fn keys_kept(&self) -> bool {
        self.start.iter().all(|s| s.kept)
    }

    /// Per block, all bits set in the lanes with a rotation track.
    fn rotation_tracked(&self, owners: &[Owner]) -> Vec<[f32; LANES]> {
        let lanes = self.lanes;
        let mut rotation_tracked = vec![[0.0f32; LANES]; lanes / LANES];
        for j in 0..lanes {
            if owners[lanes + j].is_some() {
                rotation_tracked[j / LANES][j % LANES] = f32::from_bits(u32::MAX);
            }
        }
        rotation_tracked
    }

    /// The translation and scale blocks: which are animated, and every
    /// block's start values (see `RuntimeClip::vector_slot` and `vector_rest`).
    fn vector_blocks(&self, owners: &[Owner]) -> VectorBlocks {
        let (lanes, blocks) = (self.lanes, self.lanes / LANES);
        let mut vector_animated = [vec![false; blocks], vec![false; blocks]];
        let mut vector_rest = [vec![[[0.0; LANES]; 3]; blocks], vec![[[0.0; LANES]; 3]; blocks]];
        for (v, property) in [(0, 0), (1, 2)] {
            for j in 0..lanes {
                let slot = property * lanes + j;
                vector_animated[v][j / LANES] |= owners[slot].is_some() && !self.constant[slot];
                for (c, value) in self.start[property * lanes + j].first.a.iter().take(3).enumerate() {
                    vector_rest[v][j / LANES][c][j % LANES] = *value;
                }
            }
        }
        let slots = |animated: &[bool]| {
            let mut next = 0u32;
            let slot = |&on: &bool| {
                if !on {
                    return u32::MAX;
                }
                next += 1;
                next - 1
            };
            animated.iter().map(slot).collect::<Vec<u32>>()
        };
        VectorBlocks { slot: [slots(&vector_animated[0]), slots(&vector_animated[1])], rest: vector_rest }
    }
}

/// `RuntimeClip::vector_slot` and `vector_rest`, for translations (`[0]`)
/// and scales (`[1]`).
struct VectorBlocks {
    slot: [Vec<u32>; 2],
    rest: [Vec<[[f32; LANES]; 3]>; 2],
}

/// The lane of a joint without a track for `property`: holds the rest value.
fn rest_lane(property: Property, rest: &Transform) -> LaneStart {
    let v = match property {
        Property::Translation => pad(rest.translation.into()),
        Property::Scale => pad(rest.scale.into()),
        Property::Rotation => rest.rotation.into_inner().coords.into(),
    };
    let slerp = if property == Property::Rotation { SlerpConstants::new(v, v) } else { Default::default() };
    let first = Interval {
        a: v,
        b: v,
        t0: 0.0,
        t1: 0.0,
        // 1 / (t1 - t0), as for a track's only key.
        inv: f32::INFINITY,
        first: f32::INFINITY,
        last: f32::INFINITY,
        slerp,
        tangents: [[0.0; 4]; 2],
        cubic: false,
    };
    LaneStart { first, kept: true }
}

fn pad(v: [f32; 3]) -> [f32; 4] {
    [v[0], v[1], v[2], 0.0]
}

/// The value a translation or scale track gives at every time, bit for
/// bit, when that is certain without sampling it: STEP or LINEAR keys all
/// equal, each component 0 or 1 (interpolating such keys, `a (1 - s) + a s`,
/// gives `a` exactly for every ratio in [0, 1]; for other values it may
/// round differently). The scale tracks exporters write for unscaled joints
/// are such tracks.
fn exact_constant(track: &Track<nalgebra::Vector3<f32>>) -> Option<[f32; 4]> {
    let first = *track.values.first()?;
    let exact = |c: f32| c == 0.0 || c == 1.0;
    let same =
        |v: &nalgebra::Vector3<f32>| v.iter().zip(first.iter()).all(|(a, b)| a.to_bits() == b.to_bits());
    (track.interpolation != Interpolation::CubicSpline
        && first.iter().all(|&c| exact(c))
        && track.values.iter().all(same))
    .then(|| pad(first.into()))
}

/// Start lane of a translation or scale track, its later intervals pushed
/// to `later`.
fn vector_lane(track: &Track<nalgebra::Vector3<f32>>, later: &mut Vec<Interval>) -> LaneStart {
    let values: Vec<[f32; 4]> = track.values.iter().map(|v| pad((*v).into())).collect();
    lane(track.interpolation, &track.times, &values, None, later)
}

/// Start lane of a rotation track (see `vector_lane`); `fallback` is what
/// a key without usable length holds (see `lane`).
fn rotation_lane(
    track: &Track<Quaternion<f32>>,
    fallback: UnitQuaternion<f32>,
    later: &mut Vec<Interval>,
) -> LaneStart {
    let values: Vec<[f32; 4]> = track.values.iter().map(|q| q.coords.into()).collect();
    lane(track.interpolation, &track.times, &values, Some(fallback), later)
}

/// A lane from its track's `values` as stored (a value per key; for
/// CUBICSPLINE an in-tangent, a value and an out-tangent per key). For a
/// rotation (`fallback`), what holding a key gives is checked here, once:
/// the key as stored when unit to an exporter's rounding, else normalised
/// (`fallback` without usable length), which sampling then recomputes.
fn lane(
    interpolation: Interpolation,
    times: &[f32],
    values: &[[f32; 4]],
    fallback: Option<UnitQuaternion<f32>>,
    later: &mut Vec<Interval>,
) -> LaneStart {
    let (step, cubic) = (interpolation == Interpolation::Step, interpolation == Interpolation::CubicSpline);
    let n = times.len();
    let second = 1.min(n - 1);
    let value = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
    // Key `k`'s in-tangent (side 0) or out-tangent (side 1).
    let tangent = |k: usize, side: usize| if cubic { values[3 * k + 2 * side] } else { [0.0; 4] };
    let slerp = |a: usize, b: usize| match fallback {
        Some(_) if !cubic => SlerpConstants::new(value(a), value(b)),
        _ => SlerpConstants::default(),
    };
    let interval = |a: usize, b: usize, first: f32| Interval {
        a: value(a),
        b: value(b),
        t0: times[a],
        t1: times[b],
        inv: 1.0 / (times[b] - times[a]),
        first,
        last: times[n - 1],
        slerp: slerp(a, b),
        tangents: [tangent(a, 1), tangent(b, 0)],
        cubic,
    };
    // Past its first interval a lane never holds its start key for being
    // before the first key: `first` is -inf (+inf for STEP: always held).
    let first_later = if step { f32::INFINITY } else { f32::NEG_INFINITY };
    later.extend((2..n).map(|k| interval(k - 1, k, first_later)));
    let kept = fallback.is_none_or(|fallback| {
        (0..n).all(|k| {
            let key = Quaternion::from(nalgebra::Vector4::from(value(k)));
            let held: [f32; 4] = keep_or(key, fallback).into_inner().coords.into();
            held.map(f32::to_bits) == value(k).map(f32::to_bits)
        })
    });
    LaneStart { first: interval(0, second, if step { f32::INFINITY } else { times[0] }), kept }
}

/// Key times must be finite and strictly increasing (the importer checks
/// the same; a clip built in code is checked here).
fn check_times(what: &str, times: &[f32]) -> Result<(), JobError> {
    if let Some(k) = times.iter().position(|t| !t.is_finite()) {
        return Err(JobError::new(format!("{what}: key {k} time is {}", times[k])));
    }
    if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(JobError::new(format!(
            "{what}: key times not increasing at key {} ({} after {})",
            k + 1,
            times[k + 1],
            times[k]
        )));
    }
    Ok(())
}
