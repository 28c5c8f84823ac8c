//! Local-to-model and palettes for up to eight poses of one rig at once,
//! one pose per SIMD lane: what a crowd's characters of one rig do at the
//! end of each evaluation, done for eight of them together.
//!
//! One pose alone (`skeleton_to_model_in_place`, `PaletteJob`) runs the
//! four rows of one joint per operation and converts four joints'
//! rotations per operation; down a chain each joint waits on its parent's
//! product, and the eight floats of a 256-bit register hold half a matrix
//! column at best. Across poses every lane is independent: each element
//! of a joint's matrix is one operation for eight characters, and no
//! element ever moves between lanes except where the poses are read and
//! written (four-by-four transposes within each half of a register).
//!
//! Each lane does the single-pose path's IEEE operations in the same order
//! (`(p0 l0 + p1 l1) + p2 l2 + p3 0`, no fused multiply-add), so every
//! matrix is bit for bit what that path gives (tested), whichever lane and
//! batch a pose lands in.
//!
//! Poses may keep the model matrices of a few joints only (a crowd's
//! characters: see `PoseOutput`); the batch then keeps the rest in its
//! own lanes, and reports what changed by comparing the palettes and
//! those few matrices.

use super::super::joint_groups::{FLOATS, four};
use super::super::lanes8::{Lanes8, Portable, Simd};
use super::super::rig::Rig;
use super::super::skeleton::{BoneMatrix, NO_PARENT};
use super::super::transform::{Transform, trs_columns};
use crate::anim::job::{JobError, check_len};
use nalgebra::Matrix4;

/// Poses per batch: one per lane.
pub const LANES: usize = 8;

/// One pose of a batch: its local transforms in, its model matrices and
/// palettes out. The default is empty (a placeholder in a fixed array).
#[derive(Debug, Default)]
pub struct BatchedPose<'a> {
    /// Local transform of each skeleton joint.
    pub locals: &'a [Transform],
    /// Model matrix of each joint, compared with what it replaces; or of
    /// those of `world_joints` in its order, the palettes then compared too.
    pub world: &'a mut [Matrix4<f32>],
    /// The joints `world` holds when not every one, ascending (the same in
    /// every pose of a batch).
    pub world_joints: Option<&'a [u32]>,
    /// The rig's palettes (`Rig::palette_len` entries).
    pub palettes: &'a mut [BoneMatrix],
}

/// Eight lanes of one float, aligned as one register.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Lanes([f32; LANES]);

/// A joint's model matrix in every lane: element `c * 4 + r` is row `r`
/// of column `c` (nalgebra's order).
type LaneMatrix = [Lanes; 16];

/// The batch's model matrices in lanes, kept for the children and the
/// palettes, and the outputs of lanes past the poses (written, then
/// ignored: every lane stores without a branch). Grows to the largest rig
/// batched, then is reused.
#[derive(Debug, Default)]
pub struct BatchScratch {
    world: Vec<LaneMatrix>,
    spare_world: Vec<Matrix4<f32>>,
    spare_palettes: Vec<BoneMatrix>,
}

/// Writes each pose's model matrices (`world[j] = world[parent] *
/// local[j]`, the roots under the identity) and palettes, as
/// `skeleton_to_model_in_place` and `Rig::write_palettes` would, one pose
/// per lane. Returns, per pose, whether any bit of its model matrices
/// changed (where it keeps only a few, any bit of those or of its
/// palettes). Never allocates once `scratch` has grown.
pub fn model_and_palettes(
    rig: &Rig,
    poses: &mut [BatchedPose],
    scratch: &mut BatchScratch,
) -> Result<[bool; LANES], JobError> {
    model_and_palettes_with(Simd::detect(), rig, poses, scratch)
}

/// `model_and_palettes` with the instructions `simd` names.
fn model_and_palettes_with(
    simd: Simd,
    rig: &Rig,
    poses: &mut [BatchedPose],
    scratch: &mut BatchScratch,
) -> Result<[bool; LANES], JobError> {
    let Some(last) = poses.last() else { return Ok([false; LANES]) };
    if poses.len() > LANES {
        return Err(JobError::new(format!("pose batch: {} poses, at most {LANES}", poses.len())));
    }
    let (joints, palette, world_joints) = (rig.skeleton.len(), rig.palette_len(), last.world_joints);
    let kept = world_joints.map_or(joints, <[u32]>::len);
    if let Some(list) = world_joints {
        let ascending = list.windows(2).all(|w| w[0] < w[1]);
        if !ascending || list.last().is_some_and(|&j| j as usize >= joints) {
            return Err(JobError::new(format!("pose batch: world joints {list:?} of {joints} joints")));
        }
    }
    for pose in poses.iter() {
        if pose.world_joints != world_joints {
            return Err(JobError::new("pose batch: poses keep different world matrices".to_string()));
        }
        check_len("pose batch: locals", pose.locals.len(), joints)?;
        check_len("pose batch: world", pose.world.len(), kept)?;
        check_len("pose batch: palettes", pose.palettes.len(), palette)?;
    }
    let spares = LANES - poses.len();
    let BatchScratch { world, spare_world, spare_palettes } = scratch;
    fit(world, joints, [Lanes::default(); 16]);
    fit(spare_world, spares * kept, Matrix4::zeros());
    fit(spare_palettes, spares * palette, BoneMatrix::IDENTITY);
    // Lanes past the poses read the last pose and write the spares.
    let last_locals = last.locals;
    let mut spare_world = spare_world[..spares * kept].chunks_mut(kept.max(1));
    let mut spare_palettes = spare_palettes[..spares * palette].chunks_mut(palette.max(1));
    let mut lanes: [BatchedPose; LANES] = std::array::from_fn(|_| BatchedPose::default());
    let mut given = poses.iter_mut();
    for lane in lanes.iter_mut() {
        *lane = match given.next() {
            Some(pose) => BatchedPose {
                locals: pose.locals,
                world: &mut *pose.world,
                world_joints,
                palettes: &mut *pose.palettes,
            },
            None => BatchedPose {
                locals: last_locals,
                world: spare_world.next().unwrap_or_default(),
                world_joints,
                palettes: spare_palettes.next().unwrap_or_default(),
            },
        };
    }
    let world = &mut world[..joints];
    let mut changed = match (simd, world_joints) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512F and VL, AVX2 and FMA.
        (Simd::Avx512, Some(kept)) if Simd::avx512_available() => unsafe {
            batch_avx512(rig, &mut lanes, world, kept)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA.
        (Simd::Avx2 | Simd::Avx512, None) if Simd::avx2_available() => unsafe {
            batch_avx2::<false>(rig, &mut lanes, world, &[])
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        (Simd::Avx2 | Simd::Avx512, Some(kept)) if Simd::avx2_available() => unsafe {
            batch_avx2::<true>(rig, &mut lanes, world, kept)
        },
        (_, None) => batch::<Portable, false>(rig, &mut lanes, world, &[]),
        (_, Some(kept)) => batch::<Portable, true>(rig, &mut lanes, world, kept),
    };
    // The spares compared a copy of the last pose.
    changed[poses.len()..].fill(false);
    Ok(changed)
}

/// `v` holding at least `len` values (the new ones `value`).
fn fit<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    if v.len() < len {
        v.resize(len, value);
    }
}

/// `batch` compiled for AVX2: one register per element.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn batch_avx2<const FEW_KEPT: bool>(
    rig: &Rig,
    lanes: &mut [BatchedPose; LANES],
    world: &mut [LaneMatrix],
    kept: &[u32],
) -> [bool; LANES] {
    batch::<super::super::lanes8::Avx2, FEW_KEPT>(rig, lanes, world, kept)
}

/// `batch_avx2` keeping a few model matrices (a crowd's characters) with
/// AVX-512's 32 registers: more of a parent's sixteen elements, a local's
/// twelve and their product stay in registers (of the AVX2 function's
/// 2,510 instructions 655 address the stack; of this one's 2,463, 397).
/// A batch of 8 built-in characters took 0.93-0.94x as long. Keeping
/// every model matrix it measured 1.01-1.03x, so that batch stays AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
fn batch_avx512(
    rig: &Rig,
    lanes: &mut [BatchedPose; LANES],
    world: &mut [LaneMatrix],
    kept: &[u32],
) -> [bool; LANES] {
    batch::<super::super::lanes8::Avx2, true>(rig, lanes, world, kept)
}

/// The batch over checked lengths, every lane a pose (or a spare): every
/// joint's matrices, stored in the poses (with `FEW_KEPT`, those of the
/// joints `kept` only), then every palette from them, compared with what
/// they replace when `FEW_KEPT` until every lane has changed. (No
/// closures here and below: a closure is not compiled for AVX2 with the
/// function around it.)
#[inline(always)]
fn batch<L: Lanes8, const FEW_KEPT: bool>(
    rig: &Rig,
    lanes: &mut [BatchedPose; LANES],
    world: &mut [LaneMatrix],
    kept: &[u32],
) -> [bool; LANES] {
    let mut changed = [L::splat(0.0); 4];
    // Where the next kept joint's matrix goes.
    let mut slot = 0;
    for (j, &parent) in rig.skeleton.parents().iter().enumerate() {
        let local = local_rows::<L>(&joint_locals(lanes, j));
        let parent = match parent {
            NO_PARENT => &IDENTITY_LANES,
            p => &world[p as usize],
        };
        let model = product::<L>(&load_matrix(parent), &local);
        store_matrix(&model, &mut world[j]);
        if !FEW_KEPT {
            write::<L>(&mut joint_models(lanes, j), &model, &mut changed, true);
        } else if kept.get(slot) == Some(&(j as u32)) {
            write::<L>(&mut joint_models(lanes, slot), &model, &mut changed, true);
            slot += 1;
        }
    }
    // Once every lane has changed, comparing can change nothing more: an
    // animated crowd stops comparing after its first moving joints (the
    // comparisons loaded each old palette: 6 % of the built-in crowd's
    // batch instructions).
    let mut every_lane_changed = !FEW_KEPT;
    for (skin, range) in rig.palette_runs() {
        for (i, (&joint, inverse_bind)) in skin.joints.iter().zip(&skin.inverse_binds).enumerate() {
            let skin_matrix = palette_entry::<L>(&world[joint as usize], inverse_bind);
            let out = &mut palette_entries(lanes, range.start + i);
            if every_lane_changed {
                write::<L>(out, &skin_matrix, &mut changed, false);
            } else {
                write::<L>(out, &skin_matrix, &mut changed, true);
                every_lane_changed = lanes_changed(&changed) == [true; LANES];
            }
        }
    }
    lanes_changed(&changed)
}

/// Per lane, whether any bit of its matrices changed (`changed[k]`'s low
/// half for lane `k`, its high half for lane `k + 4`; see `write`).
#[inline(always)]
fn lanes_changed<L: Lanes8>(changed: &[L; 4]) -> [bool; LANES] {
    let mut any = [false; LANES];
    for (k, changed) in changed.iter().enumerate() {
        [any[k], any[k + 4]] = changed.any_bit_halves();
    }
    any
}

/// Joint `j`'s local transform in each lane, as floats.
#[inline(always)]
fn joint_locals<'a>(lanes: &[BatchedPose<'a>; LANES], j: usize) -> [&'a [f32; FLOATS]; LANES] {
    let at = |k: usize| transform_floats(&lanes[k].locals[j]);
    [at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)]
}

/// Model matrix `k` of each lane (joint `k`'s, or that of the `k`th joint kept), to write.
#[inline(always)]
fn joint_models<'a>(lanes: &'a mut [BatchedPose; LANES], k: usize) -> [&'a mut [f32; 16]; LANES] {
    let [a, b, c, d, e, f, g, h] = lanes.each_mut();
    let at =
        |lane: &'a mut BatchedPose| bytemuck::cast_mut::<[[f32; 4]; 4], [f32; 16]>(&mut lane.world[k].data.0);
    [at(a), at(b), at(c), at(d), at(e), at(f), at(g), at(h)]
}

/// Palette entry `i` in each lane, to write.
#[inline(always)]
fn palette_entries<'a>(lanes: &'a mut [BatchedPose; LANES], i: usize) -> [&'a mut [f32; 16]; LANES] {
    let [a, b, c, d, e, f, g, h] = lanes.each_mut();
    let at = |lane: &'a mut BatchedPose| &mut lane.palettes[i].skin;
    [at(a), at(b), at(c), at(d), at(e), at(f), at(g), at(h)]
}

/// A matrix in lanes, loaded (every index a constant: the sixteen values
/// stay in registers rather than in an array on the stack).
#[inline(always)]
fn load_matrix<L: Lanes8>(m: &LaneMatrix) -> [L; 16] {
    [
        lane(m, 0),
        lane(m, 1),
        lane(m, 2),
        lane(m, 3),
        lane(m, 4),
        lane(m, 5),
        lane(m, 6),
        lane(m, 7),
        lane(m, 8),
        lane(m, 9),
        lane(m, 10),
        lane(m, 11),
        lane(m, 12),
        lane(m, 13),
        lane(m, 14),
        lane(m, 15),
    ]
}

/// `m` into `out`.
#[inline(always)]
fn store_matrix<L: Lanes8>(m: &[L; 16], out: &mut LaneMatrix) {
    for (m, out) in m.iter().zip(out) {
        m.store(&mut out.0);
    }
}

/// Element `e` of a matrix in lanes.
#[inline(always)]
fn lane<L: Lanes8>(m: &LaneMatrix, e: usize) -> L {
    L::load(&m[e].0)
}

/// The identity in every lane (what roots hang from).
const IDENTITY_LANES: LaneMatrix = {
    let mut m = [Lanes([0.0; LANES]); 16];
    m[0] = Lanes([1.0; LANES]);
    m[5] = Lanes([1.0; LANES]);
    m[10] = Lanes([1.0; LANES]);
    m[15] = Lanes([1.0; LANES]);
    m
};

/// A joint's local matrix above its bottom row from its floats in each
/// lane: `[c * 3 + r]` is row `r` of column `c` (3: the translation),
/// with `Transform::to_matrix`'s arithmetic.
#[inline(always)]
fn local_rows<L: Lanes8>(floats: &[&[f32; FLOATS]; LANES]) -> [L; 12] {
    // Floats 0-3, 4-7 and 6-9 of each pose (the last for scale y and z),
    // one component per row.
    let [tx, ty, tz, x] = components::<L>(floats, 0);
    let [y, z, w, sx] = components::<L>(floats, 4);
    let [_, _, sy, sz] = components::<L>(floats, 6);
    trs_columns([tx, ty, tz], [x, y, z, w], [sx, sy, sz], L::splat(1.0), L::splat(2.0))
}

/// Floats `at..at + 4` of every pose, one per row: poses 0-3 in the low
/// halves, 4-7 in the high (each half one 4x4 transpose, so no value
/// crosses halves: half the shuffles of an 8x8 transpose).
#[inline(always)]
fn components<L: Lanes8>(floats: &[&[f32; FLOATS]; LANES], at: usize) -> [L; 4] {
    L::transpose_halves([
        L::join(four(floats[0], at), four(floats[4], at)),
        L::join(four(floats[1], at), four(floats[5], at)),
        L::join(four(floats[2], at), four(floats[6], at)),
        L::join(four(floats[3], at), four(floats[7], at)),
    ])
}

/// A transform's ten floats (see `joint_groups`).
#[inline(always)]
fn transform_floats(t: &Transform) -> &[f32; FLOATS] {
    // SAFETY: `Transform` is `repr(C)`, ten `f32`s with no padding
    // (asserted in `joint_groups`).
    unsafe { &*(t as *const Transform).cast::<[f32; FLOATS]>() }
}

/// `parent * local` with the local's bottom row 0, 0, 0, 1: each element
/// the sum the single-pose path forms, in its order. `p3 * 0` is kept as
/// the full product adds it (a signed zero, or NaN for an infinite
/// parent); the translation column adds `p3`.
#[inline(always)]
fn product<L: Lanes8>(p: &[L; 16], l: &[L; 12]) -> [L; 16] {
    let zero = L::splat(0.0);
    let z = [p[12] * zero, p[13] * zero, p[14] * zero, p[15] * zero];
    [
        times::<L, 0, 0>(p, l, z[0]),
        times::<L, 0, 1>(p, l, z[1]),
        times::<L, 0, 2>(p, l, z[2]),
        times::<L, 0, 3>(p, l, z[3]),
        times::<L, 1, 0>(p, l, z[0]),
        times::<L, 1, 1>(p, l, z[1]),
        times::<L, 1, 2>(p, l, z[2]),
        times::<L, 1, 3>(p, l, z[3]),
        times::<L, 2, 0>(p, l, z[0]),
        times::<L, 2, 1>(p, l, z[1]),
        times::<L, 2, 2>(p, l, z[2]),
        times::<L, 2, 3>(p, l, z[3]),
        times::<L, 3, 0>(p, l, p[12]),
        times::<L, 3, 1>(p, l, p[13]),
        times::<L, 3, 2>(p, l, p[14]),
        times::<L, 3, 3>(p, l, p[15]),
    ]
}

/// Row `R` of column `C` of `parent * local`, `last` the fourth term.
#[inline(always)]
fn times<L: Lanes8, const C: usize, const R: usize>(p: &[L; 16], l: &[L; 12], last: L) -> L {
    p[R] * l[C * 3] + p[4 + R] * l[C * 3 + 1] + p[8 + R] * l[C * 3 + 2] + last
}

/// `model * inverse_bind`, each element summed as `PaletteJob` sums it.
#[inline(always)]
fn palette_entry<L: Lanes8>(model: &LaneMatrix, inverse_bind: &Matrix4<f32>) -> [L; 16] {
    let m = load_matrix::<L>(model);
    let b = &inverse_bind.data.0;
    [
        by::<L, 0>(&m, &b[0]),
        by::<L, 1>(&m, &b[0]),
        by::<L, 2>(&m, &b[0]),
        by::<L, 3>(&m, &b[0]),
        by::<L, 0>(&m, &b[1]),
        by::<L, 1>(&m, &b[1]),
        by::<L, 2>(&m, &b[1]),
        by::<L, 3>(&m, &b[1]),
        by::<L, 0>(&m, &b[2]),
        by::<L, 1>(&m, &b[2]),
        by::<L, 2>(&m, &b[2]),
        by::<L, 3>(&m, &b[2]),
        by::<L, 0>(&m, &b[3]),
        by::<L, 1>(&m, &b[3]),
        by::<L, 2>(&m, &b[3]),
        by::<L, 3>(&m, &b[3]),
    ]
}

/// Row `R` of `model` times the column `b`.
#[inline(always)]
fn by<L: Lanes8, const R: usize>(m: &[L; 16], b: &[f32; 4]) -> L {
    m[R] * L::splat(b[0]) + m[4 + R] * L::splat(b[1]) + m[8 + R] * L::splat(b[2]) + m[12 + R] * L::splat(b[3])
}

/// Stores a matrix (a joint's model matrix, a palette entry) in each
/// lane, noting in `changed` the bits that differ from the one it
/// replaces when `compared`: `changed[k]` for lane `k` in its low half,
/// lane `k + 4` in its high. (Each column and lane named by a constant:
/// indexed in a loop, the sixteen values would go through an array on the
/// stack.)
#[inline(always)]
fn write<L: Lanes8>(out: &mut [&mut [f32; 16]; LANES], m: &[L; 16], changed: &mut [L; 4], compared: bool) {
    column::<L, 0>(out, m, changed, compared);
    column::<L, 1>(out, m, changed, compared);
    column::<L, 2>(out, m, changed, compared);
    column::<L, 3>(out, m, changed, compared);
}

/// Column `C` of `write`.
#[inline(always)]
fn column<L: Lanes8, const C: usize>(
    out: &mut [&mut [f32; 16]; LANES],
    m: &[L; 16],
    changed: &mut [L; 4],
    compared: bool,
) {
    let rows = L::transpose_halves([m[C * 4], m[C * 4 + 1], m[C * 4 + 2], m[C * 4 + 3]]);
    store_column::<L, C, 0>(out, rows[0], changed, compared);
    store_column::<L, C, 1>(out, rows[1], changed, compared);
    store_column::<L, C, 2>(out, rows[2], changed, compared);
    store_column::<L, C, 3>(out, rows[3], changed, compared);
}

/// Stores column `C` of lane `K`'s matrix (`new`'s low half) and lane `K +
/// 4`'s (its high half), noting what changed when `compared`.
#[inline(always)]
fn store_column<L: Lanes8, const C: usize, const K: usize>(
    out: &mut [&mut [f32; 16]; LANES],
    new: L,
    changed: &mut [L; 4],
    compared: bool,
) {
    if compared {
        let old = L::join(four(out[K], C * 4), four(out[K + 4], C * 4));
        changed[K] = changed[K].or(new.xor(old));
    }
    new.store_low(&mut out[K][C * 4..]);
    new.store_high(&mut out[K + 4][C * 4..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::skeleton_to_model_in_place;

    /// `count` poses of the built-in character's rig, each joint moved off
    /// its rest by a different amount (rotations not normalised, one
    /// translation a negative zero, one scale negative).
    fn poses(rig: &Rig, count: usize, seed: u32) -> Vec<Vec<Transform>> {
        let mut n = seed;
        let mut next = || {
            n = n.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (n >> 8) as f32 / (1 << 24) as f32 - 0.5
        };
        (0..count)
            .map(|_| {
                let mut locals = rig.skeleton.rest().to_vec();
                for t in &mut locals {
                    t.translation += nalgebra::Vector3::new(next(), next(), next());
                    let q =
                        t.rotation.into_inner() + nalgebra::Quaternion::new(next(), next(), next(), next());
                    t.rotation = nalgebra::UnitQuaternion::new_unchecked(q);
                    t.scale.x += next() * 0.2;
                }
                locals[1].translation.x = -0.0;
                locals[2].scale.y = -1.5;
                locals
            })
            .collect()
    }

    /// What one pose alone gives: model matrices and palettes.
    fn alone(rig: &Rig, locals: &[Transform]) -> (Vec<Matrix4<f32>>, Vec<BoneMatrix>) {
        let mut world = vec![Matrix4::zeros(); rig.skeleton.len()];
        skeleton_to_model_in_place(&rig.skeleton, locals, &Matrix4::identity(), &mut world).unwrap();
        let mut palettes = vec![BoneMatrix::IDENTITY; rig.palette_len()];
        rig.write_palettes(&world, &mut palettes).unwrap();
        (world, palettes)
    }

    fn bits<T: bytemuck::Pod>(v: &[T]) -> Vec<u32> {
        bytemuck::cast_slice::<T, u32>(v).to_vec()
    }

    #[test]
    fn every_lane_gives_the_single_pose_bits() {
        let model = crate::asset::load_default_character().unwrap();
        let rig = &model.rig;
        let simds = Simd::available();
        let joints = rig.skeleton.len();
        let skins: Vec<u32> = rig.palette_runs().flat_map(|(skin, _)| skin.joints.iter().copied()).collect();
        let skinned = *skins.iter().max().unwrap() as usize;
        let unskinned = (0..joints).find(|j| !skins.contains(&(*j as u32))).expect("a joint no skin uses");
        // Every model matrix kept, a few (the one no skin uses among them), none.
        let mut few = [1, unskinned as u32, skinned as u32 - 1];
        few.sort();
        for (simd, kept) in
            simds.into_iter().flat_map(|simd| [(simd, None), (simd, Some(&few[..])), (simd, Some(&[][..]))])
        {
            let count_kept = kept.map_or(joints, <[u32]>::len);
            for count in 1..=LANES {
                let locals = poses(rig, count, count as u32);
                let mut outputs: Vec<_> = locals
                    .iter()
                    .map(|_| {
                        (vec![Matrix4::zeros(); count_kept], vec![BoneMatrix::IDENTITY; rig.palette_len()])
                    })
                    .collect();
                let mut scratch = BatchScratch::default();
                let mut run = |outputs: &mut Vec<(Vec<Matrix4<f32>>, Vec<BoneMatrix>)>,
                               locals: &[Vec<Transform>]| {
                    let mut batch: Vec<BatchedPose> = outputs
                        .iter_mut()
                        .zip(locals)
                        .map(|((world, palettes), locals)| BatchedPose {
                            locals,
                            world,
                            world_joints: kept,
                            palettes,
                        })
                        .collect();
                    model_and_palettes_with(simd, rig, &mut batch, &mut scratch).unwrap()
                };
                let case = format!("{simd:?}, {count} poses, model matrices kept: {kept:?}");
                let changed = run(&mut outputs, &locals);
                assert_eq!(changed[..count], vec![true; count][..], "{case}: first run");
                assert!(changed[count..].iter().all(|c| !c));
                for (k, ((world, palettes), locals)) in outputs.iter().zip(&locals).enumerate() {
                    let (w, p) = alone(rig, locals);
                    let w: Vec<Matrix4<f32>> = match kept {
                        None => w,
                        Some(kept) => kept.iter().map(|&j| w[j as usize]).collect(),
                    };
                    let w: Vec<f32> = w.iter().flat_map(|m| m.iter().copied()).collect();
                    let world: Vec<f32> = world.iter().flat_map(|m| m.iter().copied()).collect();
                    assert_eq!(bits(&world), bits(&w), "{case}: model matrices of lane {k}");
                    assert_eq!(bits(palettes), bits(&p), "{case}: palettes of lane {k}");
                }
                // The same poses again: nothing changed; a skinned joint
                // past the kept matrices moved in one pose: that lane.
                assert_eq!(run(&mut outputs, &locals), [false; LANES], "{case}: again");
                let mut moved = locals.clone();
                moved[count - 1][skinned].translation.y += 0.25;
                let changed = run(&mut outputs, &moved);
                let expected: Vec<bool> = (0..LANES).map(|k| k == count - 1).collect();
                assert_eq!(changed[..], expected[..], "{case}: one moved");
                // A joint that no skin uses (nor any below it), moved: a
                // change only where its matrix is kept.
                moved[count - 1][unskinned].translation.y += 0.25;
                let changed = run(&mut outputs, &moved);
                let expected: Vec<bool> = (0..LANES).map(|k| k == count - 1 && kept != Some(&[])).collect();
                assert_eq!(changed[..], expected[..], "{case}: a joint no skin uses moved");
            }
        }
    }

    #[test]
    fn a_batch_of_the_wrong_size_is_an_error() {
        let model = crate::asset::load_default_character().unwrap();
        let rig = &model.rig;
        let joints = rig.skeleton.len();
        let locals = rig.skeleton.rest().to_vec();
        let mut palettes = vec![vec![BoneMatrix::IDENTITY; rig.palette_len()]; 2];
        // Too few matrices, poses keeping different ones, joints past the
        // skeleton's or out of order.
        let (all, two, past, unordered) =
            (None, Some(&[1, 2][..]), Some(&[1, joints as u32][..]), Some(&[2, 1][..]));
        let cases = [
            ([(all, joints), (all, joints - 1)], "pose batch: world"),
            ([(all, joints), (two, 2)], "different world matrices"),
            ([(past, 2), (past, 2)], "world joints"),
            ([(unordered, 2), (unordered, 2)], "world joints"),
        ];
        for (kept, expected) in cases {
            let mut world = kept.map(|(_, n)| vec![Matrix4::zeros(); n]);
            let mut batch: Vec<BatchedPose> = world
                .iter_mut()
                .zip(&mut palettes)
                .zip(kept)
                .map(|((world, palettes), (world_joints, _))| BatchedPose {
                    locals: &locals,
                    world,
                    world_joints,
                    palettes,
                })
                .collect();
            let error = model_and_palettes(rig, &mut batch, &mut BatchScratch::default()).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
    }
}
