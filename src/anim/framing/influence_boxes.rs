//! Bounds of skinned vertices without skinning them, for framing.
//!
//! Linear blend skinning moves a vertex to a convex blend of where each of
//! its joints alone would move it (its weights are non-negative and sum to
//! 1). So if every joint's bind-space box of the vertices it moves, moved
//! by that joint, lies inside a box, every vertex does too, whatever its
//! weights. Framing a crowd needs only the vertices that may reach outside
//! the box grown so far: the rest cannot change it, and are never skinned.
//!
//! Built once per rig: for each primitive, a box per joint over the whole
//! primitive (to pass a character's primitive at a glance) and, for runs
//! of [`RUN`] vertices, a box per joint of the run (to skin only the runs
//! that may reach outside). Morph targets widen the boxes by their
//! weighted deltas' boxes. Each moved box is widened by a margin that
//! covers the rounding of the exact path and weights that sum to 1 only
//! nearly, so what is skipped is inside in the exact path's bits too.
//! Whatever the boxes cannot vouch for (weights that are not a convex
//! blend, data the skinning job would reject) is skinned exactly, by the
//! arithmetic of [`SkinningJob`](crate::anim::SkinningJob).

use super::{Bounds, grow, grow_point, union};
use crate::anim::job::JobError;
use crate::anim::mesh::{Influences, MeshInstance, MeshPrimitive, MorphDeltas};
use crate::anim::pose::SkinnedPose;
use crate::anim::rig::Rig;
use crate::anim::skeleton::BoneMatrix;
use crate::anim::skinning::{Affine, SkinTransform, SkinningJob, SkinningMethod};
use nalgebra::Matrix4;
use std::ops::Range;

/// Vertices bounded together: few enough that a run reaching outside
/// skins few vertices that could not, enough that its boxes cost much
/// less than skinning it.
const RUN: usize = 64;

/// How far a vertex's weights may sum from 1 and still be bounded (the
/// margin grows with it); beyond, the vertex is skinned exactly.
const SLACK_LIMIT: f32 = 0.01;

/// The margin for rounding, relative to the magnitudes a moved point is
/// summed from (f32 sums of a few dozen products err by well under 1e-5).
const ROUNDING: f32 = 1e-4;

/// A box in bind space: centre and half extent.
#[derive(Debug, Clone, Copy)]
struct BindBox {
    centre: [f32; 3],
    half: [f32; 3],
}

impl BindBox {
    fn of((lo, hi): Bounds) -> Self {
        BindBox {
            centre: std::array::from_fn(|k| 0.5 * (lo[k] + hi[k])),
            half: std::array::from_fn(|k| 0.5 * (hi[k] - lo[k])),
        }
    }

    /// This box with `offset` (a box of displacements) added.
    fn offset(&self, offset: &BindBox) -> Self {
        BindBox {
            centre: std::array::from_fn(|k| self.centre[k] + offset.centre[k]),
            half: std::array::from_fn(|k| self.half[k] + offset.half[k]),
        }
    }
}

/// A joint and the bind box of the vertices it moves (joint 0 for a
/// primitive moved by one matrix).
#[derive(Debug, Clone, Copy)]
struct JointBox {
    joint: u16,
    bind: BindBox,
}

/// Grows the box of `joint` in `boxes` by `p`.
fn add_point(boxes: &mut Vec<(u16, Bounds)>, joint: u16, p: [f32; 3]) {
    match boxes.iter_mut().find(|(j, _)| *j == joint) {
        Some((_, b)) => grow(b, p),
        None => boxes.push((joint, (p, p))),
    }
}

fn joint_boxes(boxes: &[(u16, Bounds)]) -> impl Iterator<Item = JointBox> + '_ {
    boxes.iter().map(|&(joint, b)| JointBox { joint, bind: BindBox::of(b) })
}

/// One morph target's position deltas over a run of vertices.
#[derive(Debug, Clone)]
struct RunDeltas {
    /// Their box, 0 included (unlisted vertices stay put).
    bounds: Bounds,
    /// Where they lie in the target's list (dense: the vertex indices).
    listed: Range<usize>,
}

/// A run of vertices and the boxes that bound it.
#[derive(Debug, Clone)]
struct Run {
    vertices: Range<usize>,
    /// Its joints' boxes in `PrimitiveBoxes::pairs`.
    pairs: Range<usize>,
    /// Its box in `PrimitiveBoxes::rigid_pairs` (moved by one matrix).
    rigid: usize,
    /// One per morph target, in `PrimitiveBoxes::run_deltas`.
    deltas: Range<usize>,
    /// The largest distance of a vertex's weights' sum from 1; `None`
    /// when some vertex cannot be bounded (a negative weight, a sum
    /// beyond [`SLACK_LIMIT`] of 1, a position that is not finite): the
    /// run is then skinned whenever its primitive may reach outside.
    slack: Option<f32>,
    /// Every position is finite (all that one matrix needs).
    finite: bool,
}

/// The boxes of one mesh primitive.
#[derive(Debug, Clone, Default)]
struct PrimitiveBoxes {
    /// The streams pass the skinning job's checks that do not depend on
    /// the pose; if not, the exact path runs and reports the error.
    sound: bool,
    /// The largest influence joint (zero weights included, as the job
    /// checks them): a palette must be longer.
    largest_joint: usize,
    /// One box per joint over the whole primitive, as skinned.
    joints: Vec<JointBox>,
    /// The whole primitive's box, moved by one matrix.
    whole: Vec<JointBox>,
    /// The largest slack of any run (`None` if one is unbounded).
    slack: Option<f32>,
    /// Every position is finite.
    finite: bool,
    /// Per morph target, the box of its position deltas (0 included).
    morphs: Vec<Bounds>,
    runs: Vec<Run>,
    pairs: Vec<JointBox>,
    rigid_pairs: Vec<JointBox>,
    run_deltas: Vec<RunDeltas>,
}

impl PrimitiveBoxes {
    fn of(prim: &MeshPrimitive) -> Self {
        let n = prim.vertex_count();
        // The job's checks but those of a palette and of morph weights
        // (made per character in `mover`), then the weights' own, and
        // sparse deltas in order (runs find theirs by search).
        let sound = SkinningJob {
            primitive: prim,
            morph_weights: &vec![0.0; prim.morph_targets.len()],
            transform: SkinTransform::Rigid(Matrix4::identity()),
            method: SkinningMethod::Linear,
            out_positions: &mut vec![[0.0; 3]; n],
            out_normals: None,
            out_tangents: None,
        }
        .validate()
        .is_ok();
        let influences = prim.influences.as_ref();
        let in_order = prim.morph_targets.iter().all(|t| match &t.positions {
            Some(MorphDeltas::Sparse { indices, .. }) => indices.windows(2).all(|w| w[0] < w[1]),
            _ => true,
        });
        if !sound || !in_order || influences.is_some_and(|inf| !inf.weights.iter().all(|w| w.is_finite())) {
            return PrimitiveBoxes::default();
        }
        let largest_joint = influences.and_then(|inf| inf.joints.iter().max()).map_or(0, |&j| usize::from(j));
        let mut boxes = PrimitiveBoxes {
            sound: true,
            largest_joint,
            slack: Some(0.0),
            finite: true,
            ..Default::default()
        };
        let (mut all_joints, mut all_whole) = (Vec::new(), Vec::new());
        let mut run_joints = Vec::new();
        for start in (0..n).step_by(RUN) {
            let vertices = start..(start + RUN).min(n);
            let (mut whole, mut slack, mut finite) = (Vec::new(), Some(0.0f32), true);
            run_joints.clear();
            for v in vertices.clone() {
                let p = prim.positions[v];
                add_point(&mut whole, 0, p);
                add_point(&mut all_whole, 0, p);
                finite &= p.iter().all(|x| x.is_finite());
                let mut convex = finite;
                if let Some(inf) = influences {
                    let k = inf.per_vertex;
                    let mut sum = 0.0;
                    for (&j, &w) in
                        inf.joints[v * k..(v + 1) * k].iter().zip(&inf.weights[v * k..(v + 1) * k])
                    {
                        if w != 0.0 {
                            add_point(&mut run_joints, j, p);
                            add_point(&mut all_joints, j, p);
                        }
                        convex &= w >= 0.0;
                        sum += w;
                    }
                    convex &= (sum - 1.0).abs() <= SLACK_LIMIT;
                    slack = slack.map(|s| s.max((sum - 1.0).abs()));
                }
                slack = slack.filter(|_| convex);
            }
            let deltas = boxes.run_deltas.len()..boxes.run_deltas.len() + prim.morph_targets.len();
            boxes
                .run_deltas
                .extend(prim.morph_targets.iter().map(|t| run_deltas(t.positions.as_ref(), &vertices)));
            let pairs = boxes.pairs.len()..boxes.pairs.len() + run_joints.len();
            boxes.pairs.extend(joint_boxes(&run_joints));
            boxes.rigid_pairs.extend(joint_boxes(&whole));
            boxes.slack = boxes.slack.zip(slack).map(|(a, b)| a.max(b));
            boxes.finite &= finite;
            let rigid = boxes.rigid_pairs.len() - 1;
            boxes.runs.push(Run { vertices, pairs, rigid, deltas, slack, finite });
        }
        boxes.joints = joint_boxes(&all_joints).collect();
        boxes.whole = joint_boxes(&all_whole).collect();
        boxes.morphs = (0..prim.morph_targets.len())
            .map(|t| {
                let runs = boxes.runs.iter().map(|r| &boxes.run_deltas[r.deltas.start + t].bounds);
                runs.fold(Bounds::default(), |mut all, (lo, hi)| {
                    grow(&mut all, *lo);
                    grow(&mut all, *hi);
                    all
                })
            })
            .collect();
        boxes
    }
}

/// A target's position deltas over `vertices`: their box with 0 in it,
/// and where they are listed. A delta that is not finite makes its vertex
/// so: the box is then unbounded, and the run always skinned when it
/// morphs.
fn run_deltas(deltas: Option<&MorphDeltas>, vertices: &Range<usize>) -> RunDeltas {
    let (mut bounds, mut listed) = (([0.0f32; 3], [0.0f32; 3]), 0..0);
    let mut finite = true;
    let mut add = |d: &[f32; 3]| {
        finite &= d.iter().all(|x| x.is_finite());
        grow(&mut bounds, *d);
    };
    match deltas {
        Some(MorphDeltas::Dense(d)) => {
            listed = vertices.start.min(d.len())..vertices.end.min(d.len());
            d[listed.clone()].iter().for_each(&mut add);
        }
        Some(MorphDeltas::Sparse { indices, deltas }) => {
            let first = indices.partition_point(|&i| (i as usize) < vertices.start);
            let end = indices.partition_point(|&i| (i as usize) < vertices.end);
            listed = first..end;
            deltas[listed.clone()].iter().for_each(&mut add);
        }
        None => {}
    }
    if !finite {
        bounds = ([f32::NEG_INFINITY; 3], [f32::INFINITY; 3]);
    }
    RunDeltas { bounds, listed }
}

/// The boxes of every primitive of a rig (`[mesh][primitive]`).
#[derive(Debug, Clone)]
pub(super) struct InfluenceBoxes {
    meshes: Vec<Vec<PrimitiveBoxes>>,
}

/// What moves one primitive of one character: its palette (or one
/// matrix), its morph weights, and the placement.
struct Mover<'a> {
    matrices: Matrices<'a>,
    weights: &'a [f32],
    /// The box of the whole primitive's morph displacements, when a
    /// target with position deltas has a weight.
    morph: Option<BindBox>,
    world: &'a Placement,
}

enum Matrices<'a> {
    Palette(&'a [BoneMatrix], &'a Influences),
    Rigid(Affine, [f32; 16]),
}

/// An affine world matrix with what the margins need.
pub(super) struct Placement {
    pub(super) matrix: Matrix4<f32>,
    linear: [[f32; 3]; 3],
    translation: [f32; 3],
    /// The largest |translation| component: the exact path's last sums
    /// round at its scale.
    reach: f32,
}

impl Placement {
    /// `world` when it is affine (as placements are); else `None`, and
    /// the character is skinned exactly.
    pub(super) fn of(world: &Matrix4<f32>) -> Option<Self> {
        let affine = super::is_affine(world);
        let translation = [world[(0, 3)], world[(1, 3)], world[(2, 3)]];
        affine.then(|| Placement {
            matrix: *world,
            linear: std::array::from_fn(|r| std::array::from_fn(|c| world[(r, c)])),
            translation,
            reach: translation.iter().fold(0.0f32, |m, t| m.max(t.abs())),
        })
    }
}

/// The rows of a column-major 4x4 array's upper 3x4: linear part and
/// translation.
fn rows(m: &[f32; 16]) -> ([[f32; 3]; 3], [f32; 3]) {
    (std::array::from_fn(|r| std::array::from_fn(|c| m[c * 4 + r])), [m[12], m[13], m[14]])
}

/// `a * v`.
fn apply(a: &[[f32; 3]; 3], v: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|r| a[r][0] * v[0] + a[r][1] * v[1] + a[r][2] * v[2])
}

/// `|a| * v`: the half extent of a box of half extent `v` moved by `a`.
fn apply_abs(a: &[[f32; 3]; 3], v: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|r| a[r][0].abs() * v[0] + a[r][1].abs() * v[1] + a[r][2].abs() * v[2])
}

/// The box of `sum_t w_t * deltas_t` over the targets with a weight, or
/// `None` when none has one.
fn displacement<'b>(weights: &[f32], deltas: impl Iterator<Item = &'b Bounds>) -> Option<BindBox> {
    let mut sum: Option<Bounds> = None;
    for (&w, (lo, hi)) in weights.iter().zip(deltas) {
        if w != 0.0 {
            let (slo, shi) = sum.get_or_insert(([0.0; 3], [0.0; 3]));
            for k in 0..3 {
                let (a, b) = (w * lo[k], w * hi[k]);
                slo[k] += a.min(b);
                shi[k] += a.max(b);
            }
        }
    }
    sum.map(BindBox::of)
}

impl Mover<'_> {
    /// The world box (lo, hi) that `joint` moves `bind` displaced by
    /// `morph` into, widened by the margins; `slack` is how far the
    /// weights may sum from 1.
    fn moved(&self, joint: u16, bind: &BindBox, morph: Option<&BindBox>, slack: f32) -> Bounds {
        let m = match &self.matrices {
            Matrices::Palette(p, _) => &p[usize::from(joint)].skin,
            Matrices::Rigid(_, m) => m,
        };
        let bind = morph.map_or(*bind, |o| bind.offset(o));
        let (a, t) = rows(m);
        let mut centre = apply(&a, bind.centre);
        let mut half = apply_abs(&a, bind.half);
        // The sizes the skinned point is summed from.
        let magnitude = apply_abs(&a, std::array::from_fn(|k| bind.centre[k].abs() + bind.half[k]));
        let magnitude = (0..3).fold(0.0f32, |m, k| m.max(magnitude[k] + t[k].abs()));
        for k in 0..3 {
            centre[k] += t[k];
            half[k] += (slack + ROUNDING) * magnitude;
        }
        let world = self.world;
        let reach = apply_abs(&world.linear, std::array::from_fn(|k| centre[k].abs() + half[k]));
        let reach = (0..3).fold(world.reach, |m, k| m.max(reach[k]));
        let centre = apply(&world.linear, centre);
        let half = apply_abs(&world.linear, half);
        let margin = 0.1 * ROUNDING * reach;
        (
            std::array::from_fn(|k| centre[k] + world.translation[k] - half[k] - margin),
            std::array::from_fn(|k| centre[k] + world.translation[k] + half[k] + margin),
        )
    }

    /// How far the weights may sum from 1 (`weighted`, of a palette), or
    /// 0 for one matrix, which reads no weights; `None` when unbounded.
    fn slack(&self, weighted: Option<f32>, finite: bool) -> Option<f32> {
        match self.matrices {
            Matrices::Palette(..) => weighted,
            Matrices::Rigid(..) => finite.then_some(0.0),
        }
    }

    /// Whether every box of `pairs` moves inside `within`.
    fn inside(
        &self,
        pairs: &[JointBox],
        morph: Option<&BindBox>,
        slack: Option<f32>,
        within: &Bounds,
    ) -> bool {
        let Some(slack) = slack else { return false };
        pairs.iter().all(|b| {
            let (lo, hi) = self.moved(b.joint, &b.bind, morph, slack);
            // Not when either holds a NaN.
            (0..3).all(|k| within.0[k] <= lo[k] && hi[k] <= within.1[k])
        })
    }

    /// Vertex `v` at `p` (its morphed bind position) skinned as the job
    /// skins it.
    fn skinned(&self, v: usize, p: [f32; 3]) -> [f32; 3] {
        match &self.matrices {
            Matrices::Palette(palette, influences) => {
                Affine::blend(palette, influences, v).transform_point(p)
            }
            Matrices::Rigid(a, _) => a.transform_point(p),
        }
    }

    /// The bind positions of `run`'s vertices morphed into `out`, as the
    /// job morphs them: each target with a weight in order, `p += w * d`.
    fn morph_run(&self, prim: &MeshPrimitive, run: &Run, deltas: &[RunDeltas], out: &mut [[f32; 3]]) {
        let start = run.vertices.start;
        out.copy_from_slice(&prim.positions[run.vertices.clone()]);
        let add = |o: &mut [f32; 3], w: f32, d: &[f32; 3]| {
            for (o, d) in o.iter_mut().zip(d) {
                *o += w * d;
            }
        };
        for ((target, &w), listed) in prim.morph_targets.iter().zip(self.weights).zip(deltas) {
            match (&target.positions, w != 0.0) {
                (Some(MorphDeltas::Dense(d)), true) => {
                    for i in listed.listed.clone() {
                        add(&mut out[i - start], w, &d[i]);
                    }
                }
                (Some(MorphDeltas::Sparse { indices, deltas }), true) => {
                    for i in listed.listed.clone() {
                        add(&mut out[indices[i] as usize - start], w, &deltas[i]);
                    }
                }
                _ => {}
            }
        }
    }
}

impl InfluenceBoxes {
    /// The boxes of every primitive of `rig`.
    pub(super) fn of(rig: &Rig) -> Self {
        let meshes =
            rig.meshes.iter().map(|m| m.primitives.iter().map(PrimitiveBoxes::of).collect()).collect();
        InfluenceBoxes { meshes }
    }

    /// How `pose` moves `prim` of `instance`, or `None` where the exact
    /// path must decide (it reports what the skinning job rejects).
    fn mover<'a>(
        boxes: &PrimitiveBoxes,
        pose: &SkinnedPose<'a>,
        instance: &MeshInstance,
        prim: &'a MeshPrimitive,
        world: &'a Placement,
    ) -> Option<Mover<'a>> {
        if !boxes.sound {
            return None;
        }
        let matrices = match (instance.skin, &prim.influences) {
            (Some(skin), Some(influences)) => {
                let palette = pose.palette(skin);
                (palette.len() > boxes.largest_joint).then_some(Matrices::Palette(palette, influences))?
            }
            _ => {
                let m = pose.joint_world(instance.joint)?;
                let mut skin = [0.0; 16];
                skin.copy_from_slice(m.as_slice());
                Matrices::Rigid(Affine::from_matrix(m), skin)
            }
        };
        let weights = pose.instance_morph_weights(instance);
        if weights.len() != prim.morph_targets.len() || !weights.iter().all(|w| w.is_finite()) {
            return None;
        }
        let morph = displacement(weights, boxes.morphs.iter());
        Some(Mover { matrices, weights, morph, world })
    }

    /// The boxes that bound the whole primitive for `mover`.
    fn whole<'b>(boxes: &'b PrimitiveBoxes, mover: &Mover) -> &'b [JointBox] {
        match mover.matrices {
            Matrices::Palette(..) => &boxes.joints,
            Matrices::Rigid(..) => &boxes.whole,
        }
    }

    /// A box around every vertex of the character, or `None` where the
    /// boxes cannot vouch for some primitive.
    pub(super) fn character_box(&self, rig: &Rig, pose: &SkinnedPose, world: &Placement) -> Option<Bounds> {
        let mut bounds: Option<Bounds> = None;
        for instance in &rig.instances {
            for (prim, boxes) in rig.meshes[instance.mesh].primitives.iter().zip(&self.meshes[instance.mesh])
            {
                let mover = Self::mover(boxes, pose, instance, prim, world)?;
                let slack = mover.slack(boxes.slack, boxes.finite)?;
                for b in Self::whole(boxes, &mover) {
                    let moved = mover.moved(b.joint, &b.bind, mover.morph.as_ref(), slack);
                    bounds = union(bounds, Some(moved));
                }
            }
        }
        bounds.filter(|(lo, hi)| lo.iter().chain(hi).all(|x| x.is_finite()))
    }

    /// Grows `bounds` as `grow_bounds` would, skinning only the runs of
    /// vertices that may reach outside it: every vertex skipped lies
    /// inside in the exact path's bits too, so the box comes out the
    /// same. `scratch` holds a primitive's (or a run's) positions.
    /// Returns how many vertices it skinned.
    pub(super) fn grow_within(
        &self,
        rig: &Rig,
        pose: &SkinnedPose,
        world: &Placement,
        scratch: &mut Vec<[f32; 3]>,
        bounds: &mut Option<Bounds>,
    ) -> Result<usize, JobError> {
        let mut skinned = 0;
        for instance in &rig.instances {
            for (prim, boxes) in rig.meshes[instance.mesh].primitives.iter().zip(&self.meshes[instance.mesh])
            {
                let mover = Self::mover(boxes, pose, instance, prim, world);
                let (Some(mover), Some(within)) = (mover, *bounds) else {
                    super::grow_primitive(pose, instance, prim, &world.matrix, scratch, bounds)?;
                    skinned += prim.vertex_count();
                    continue;
                };
                let slack = mover.slack(boxes.slack, boxes.finite);
                if mover.inside(Self::whole(boxes, &mover), mover.morph.as_ref(), slack, &within) {
                    continue;
                }
                for run in &boxes.runs {
                    let pairs = match mover.matrices {
                        Matrices::Palette(..) => &boxes.pairs[run.pairs.clone()],
                        Matrices::Rigid(..) => std::slice::from_ref(&boxes.rigid_pairs[run.rigid]),
                    };
                    let deltas = &boxes.run_deltas[run.deltas.clone()];
                    let morph = displacement(mover.weights, deltas.iter().map(|d| &d.bounds));
                    // Against the box as grown by the runs before.
                    let slack = mover.slack(run.slack, run.finite);
                    if bounds.is_some_and(|b| mover.inside(pairs, morph.as_ref(), slack, &b)) {
                        continue;
                    }
                    skinned += run.vertices.len();
                    scratch.resize(run.vertices.len(), [0.0; 3]);
                    mover.morph_run(prim, run, deltas, scratch);
                    for (v, &p) in run.vertices.clone().zip(scratch.iter()) {
                        grow_point(bounds, mover.skinned(v, p), &world.matrix, true);
                    }
                }
            }
        }
        Ok(skinned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::mesh::MorphTarget;
    use crate::testing::lcg::Lcg;
    use nalgebra::{Quaternion, UnitQuaternion, Vector3};

    /// 10 to the power of a value in [lo, hi).
    fn magnitude(noise: &mut Lcg, lo: f32, hi: f32) -> f32 {
        10f32.powf(noise.between(lo, hi))
    }

    /// A random affine matrix: a rotation, a scale per axis between 0.1
    /// and 10, and a translation of up to `reach` (to a random power of 10
    /// below it).
    fn affine(noise: &mut Lcg, reach: f32) -> Matrix4<f32> {
        let mut q = || noise.between(-1.0, 1.0);
        let rotation = UnitQuaternion::from_quaternion(Quaternion::new(q(), q(), q(), q() + 0.01));
        let scale = Vector3::from_fn(|_, _| magnitude(noise, -1.0, 1.0));
        let top = reach.log10();
        let translation =
            Vector3::from_fn(|_, _| noise.between(-1.0, 1.0) * magnitude(noise, top - 5.0, top));
        Matrix4::new_translation(&translation)
            * rotation.to_homogeneous()
            * Matrix4::new_nonuniform_scaling(&scale)
    }

    /// The corner of a box (centre `c`, half extent `h`) on the sides
    /// that corner index `i`'s bits pick.
    fn corner(c: [f32; 3], h: [f32; 3], i: usize) -> [f32; 3] {
        std::array::from_fn(|k| if i >> k & 1 == 1 { c[k] + h[k] } else { c[k] - h[k] })
    }

    /// The exact path's points reach the sides of their boxes, moved by
    /// random joints and placements at every scale (vertices on the
    /// corners, each moved by one joint alone, with a morph displacement
    /// on the same side): the margins hold every one, so a vertex that
    /// framing skips never lies outside in the exact path's bits.
    #[test]
    fn moved_boxes_hold_the_exact_path_s_points_to_the_bit() {
        let mut noise = Lcg(23);
        for trial in 0..4000 {
            let size = magnitude(&mut noise, -2.0, 2.0);
            let centre: [f32; 3] = std::array::from_fn(|_| noise.between(-1.0, 1.0) * size);
            let half: [f32; 3] = std::array::from_fn(|_| magnitude(&mut noise, -3.0, 0.0) * size);
            let morphed = trial % 2 == 1;
            let delta_half: [f32; 3] = std::array::from_fn(|_| magnitude(&mut noise, -3.0, -1.0) * size);
            let delta_centre: [f32; 3] = std::array::from_fn(|k| noise.between(-1.0, 1.0) * delta_half[k]);
            // Eight corners moved by joint 0 alone, by joint 1 alone, by both.
            let blend = noise.unit();
            let mut weights = Vec::new();
            for w in [[1.0, 0.0], [0.0, 1.0], [blend, 1.0 - blend]] {
                for _ in 0..8 {
                    weights.extend([w[0], w[1], 0.0, 0.0]);
                }
            }
            let prim = MeshPrimitive {
                positions: (0..24).map(|v| corner(centre, half, v % 8)).collect(),
                influences: Some(Influences { per_vertex: 4, joints: [0, 1, 0, 0].repeat(24), weights }),
                morph_targets: vec![MorphTarget {
                    positions: Some(MorphDeltas::Dense(
                        (0..24).map(|v| corner(delta_centre, delta_half, v % 8)).collect(),
                    )),
                    normals: None,
                    tangents: None,
                }],
                ..Default::default()
            };
            let boxes = PrimitiveBoxes::of(&prim);
            let reach = magnitude(&mut noise, 0.0, 4.0);
            let palette = [(); 2].map(|_| {
                let mut skin = [0.0; 16];
                skin.copy_from_slice(affine(&mut noise, size * 10.0).as_slice());
                BoneMatrix { skin }
            });
            // Mostly moved only, as a crowd's grid places characters (a
            // turn widens the world box past the sides of the points).
            let mut world = affine(&mut noise, reach);
            if trial % 4 != 0 {
                world.fixed_view_mut::<3, 3>(0, 0).fill_with_identity();
            }
            let world = Placement::of(&world).expect("affine");
            let morph_weights = [if morphed { noise.between(-1.0, 1.0) } else { 0.0 }];
            let mover = Mover {
                matrices: Matrices::Palette(&palette, prim.influences.as_ref().unwrap()),
                weights: &morph_weights,
                morph: displacement(&morph_weights, boxes.morphs.iter()),
                world: &world,
            };
            let slack = mover.slack(boxes.slack, boxes.finite).expect("weights that sum to 1");
            let moved =
                boxes.joints.iter().map(|b| mover.moved(b.joint, &b.bind, mover.morph.as_ref(), slack));
            let (lo, hi) = moved.map(Some).reduce(union).flatten().expect("two joints");
            let run = &boxes.runs[0];
            let mut bind = vec![[0.0; 3]; 24];
            mover.morph_run(&prim, run, &boxes.run_deltas[run.deltas.clone()], &mut bind);
            for (v, &p) in bind.iter().enumerate() {
                let mut exact = None;
                grow_point(&mut exact, mover.skinned(v, p), &world.matrix, true);
                let (q, _) = exact.expect("a finite point");
                assert!(
                    (0..3).all(|k| lo[k] <= q[k] && q[k] <= hi[k]),
                    "trial {trial}, vertex {v}: {q:?} outside {lo:?}..{hi:?}"
                );
            }
        }
    }
}
