//! The additive layer, eight joints per operation, on AoS poses.
//!
//! Each pose's group of eight joints is a flat run of eighty floats; three
//! runs of four floats per joint (translation and rotation `x`, rotation,
//! rotation `w` and scale) are transposed into lanes of one component
//! (joints 0-3 and 4-7 side by side, as in `blending::two_nlerp`), worked
//! on, and transposed back. Every lane computes what the scalar
//! `additive_one` computes, operation for operation in nalgebra's order
//! (its quaternion product, `lerp` as `axpy`, `Unit::try_new`), so the
//! bits are the same on AVX2 and portable code (tested). A joint whose
//! weight is 0 is written back as it was.

use super::super::lanes8::{Lanes8, Portable, Simd};
use super::super::transform::Transform;
use super::MIN_ROTATION_NORM;
use crate::anim::joint_groups::{
    GROUP, Group, ROTATION, SCALE, components, four, group, group_mut, store_components,
};

/// Adds `layer`'s difference from `reference` onto `out`, joint `j` by
/// `weight * mask[j]` (see `LayerJob`), with the instructions `simd`
/// names. All four slices have the same length.
pub(super) fn apply(
    out: &mut [Transform],
    layer: &[Transform],
    reference: &[Transform],
    mask: &[f32],
    weight: f32,
    simd: Simd,
) {
    assert!(layer.len() == out.len() && reference.len() == out.len() && mask.len() == out.len());
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512F and VL, AVX2 and FMA.
        Simd::Avx512 if Simd::avx512_available() => unsafe {
            apply_avx512(out, layer, reference, mask, weight)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA.
        Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe {
            apply_avx2(out, layer, reference, mask, weight)
        },
        _ => apply_joints::<Portable>(out, layer, reference, mask, weight),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn apply_avx2(
    out: &mut [Transform],
    layer: &[Transform],
    reference: &[Transform],
    mask: &[f32],
    weight: f32,
) {
    apply_joints::<super::super::lanes8::Avx2>(out, layer, reference, mask, weight);
}

/// `apply_avx2` with AVX-512's registers (see `Simd::Avx512`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
fn apply_avx512(
    out: &mut [Transform],
    layer: &[Transform],
    reference: &[Transform],
    mask: &[f32],
    weight: f32,
) {
    apply_joints::<super::super::lanes8::Avx2>(out, layer, reference, mask, weight);
}

/// Groups of eight. The last few joints go in a group that ends with the
/// last joint and overlaps the one before, its lanes already done given
/// no weight (so written back as they were); fewer than eight joints in
/// all are padded to a group on the stack. A group with no weight
/// (masked out) is skipped.
#[inline(always)]
fn apply_joints<L: Lanes8>(
    out: &mut [Transform],
    layer: &[Transform],
    reference: &[Transform],
    mask: &[f32],
    weight: f32,
) {
    let n = out.len();
    if n == 0 {
        // Morph weights alone (joints posed on the GPU): no padded group.
        return;
    }
    if n < GROUP {
        let pad = |joints: &[Transform]| {
            let mut group = [Transform::IDENTITY; GROUP];
            group[..n].copy_from_slice(joints);
            group
        };
        let (mut po, pl, pr) = (pad(out), pad(layer), pad(reference));
        let mut pm = [0.0; GROUP];
        pm[..n].copy_from_slice(mask);
        apply_group::<L>(group_mut(&mut po), group(&pl), group(&pr), &pm, weight);
        out.copy_from_slice(&po[..n]);
        return;
    }
    for done in (0..n).step_by(GROUP) {
        let start = done.min(n - GROUP);
        let mut m: [f32; GROUP] = mask[start..start + GROUP].try_into().expect("a group's mask");
        m[..done - start].fill(0.0);
        if m.iter().all(|&m| weight * m <= 0.0) {
            continue;
        }
        let joints = start..start + GROUP;
        let (o, l, r) = (&mut out[joints.clone()], &layer[joints.clone()], &reference[joints]);
        apply_group::<L>(group_mut(o), group(l), group(r), &m, weight);
    }
}

/// Eight joints (see the module documentation).
#[inline(always)]
fn apply_group<L: Lanes8>(
    out: &mut Group,
    layer: &Group,
    reference: &Group,
    mask: &[f32; GROUP],
    weight: f32,
) {
    let (zero, one) = (L::splat(0.0), L::splat(1.0));
    let w = L::splat(weight) * L::join(four(mask, 0), four(mask, 4));
    let active = w.gt(zero);
    let full = w.ge(one);
    let [otx, oty, otz, orx] = components::<L>(out, 0);
    let [_, ory, orz, orw] = components::<L>(out, ROTATION);
    let [_, osx, osy, osz] = components::<L>(out, SCALE - 1);
    let [ltx, lty, ltz, lrx] = components::<L>(layer, 0);
    let [_, lry, lrz, lrw] = components::<L>(layer, ROTATION);
    let [_, lsx, lsy, lsz] = components::<L>(layer, SCALE - 1);
    let [rtx, rty, rtz, rrx] = components::<L>(reference, 0);
    let [_, rry, rrz, rrw] = components::<L>(reference, ROTATION);
    let [_, rsx, rsy, rsz] = components::<L>(reference, SCALE - 1);

    // out.translation + (layer - reference) * w
    let tx = otx + (ltx - rtx) * w;
    let ty = oty + (lty - rty) * w;
    let tz = otz + (ltz - rtz) * w;

    // dr = reference^-1 * layer (the conjugate's vector part negated).
    let [dx, dy, dz, dw] = product::<L>([-rrx, -rry, -rrz, rrw], [lrx, lry, lrz, lrw]);
    // Below full weight: the identity towards dr by w, on the short arc
    // (the identity's dot with dr, as nalgebra sums it), normalised, or the
    // identity where the sum has no length.
    let dot = (zero * dx + zero * dz) + (zero * dy + one * dw);
    let flip = dot.lt(zero);
    let (bx, by, bz, bw) =
        (flip.select(-dx, dx), flip.select(-dy, dy), flip.select(-dz, dz), flip.select(-dw, dw));
    let rest = one - w;
    let q = [zero * rest + bx * w, zero * rest + by * w, zero * rest + bz * w, one * rest + bw * w];
    let n2 = zero + ((q[0] * q[0] + q[2] * q[2]) + (q[1] * q[1] + q[3] * q[3]));
    let usable = n2.gt(L::splat(MIN_ROTATION_NORM * MIN_ROTATION_NORM));
    let n = n2.sqrt();
    let turn = [
        full.select(dx, usable.select(q[0] / n, zero)),
        full.select(dy, usable.select(q[1] / n, zero)),
        full.select(dz, usable.select(q[2] / n, zero)),
        full.select(dw, usable.select(q[3] / n, one)),
    ];
    let [rx, ry, rz, rw] = product::<L>([orx, ory, orz, orw], turn);

    // out.scale * lerp(1, layer / reference, w), a zero reference scale as 1.
    let sx = osx * scale_factor(lsx, rsx, w, full);
    let sy = osy * scale_factor(lsy, rsy, w, full);
    let sz = osz * scale_factor(lsz, rsz, w, full);

    // Joints without weight keep their floats.
    store(out, 0, active, [tx, ty, tz, rx], [otx, oty, otz, orx], 4);
    store(out, 4, active, [ry, rz, rw, sx], [ory, orz, orw, osx], 4);
    store(out, 8, active, [sy, sz, zero, zero], [osy, osz, zero, zero], 2);
}

/// `lerp(1, layer / reference, w)` of one scale component, as nalgebra's
/// `lerp` computes it (`axpy`: `w * d * 1 + (1 - w) * 1`, just `d` at
/// weight 1), a zero reference scale taken as 1.
#[inline(always)]
fn scale_factor<L: Lanes8>(layer: L, reference: L, w: L, full: L) -> L {
    let (zero, one) = (L::splat(0.0), L::splat(1.0));
    let is_zero = reference.le(zero).and(reference.ge(zero));
    let d = layer / is_zero.select(one, reference);
    full.select(d, w * d * one + (one - w) * one)
}

/// `a * b`, nalgebra's quaternion product term for term ([x, y, z, w]).
#[inline(always)]
fn product<L: Lanes8>([ax, ay, az, aw]: [L; 4], [bx, by, bz, bw]: [L; 4]) -> [L; 4] {
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Writes four components (`new` in the `active` lanes, `old` in the
/// others) back as floats `at..at + len` of each joint.
#[inline(always)]
fn store<L: Lanes8>(s: &mut Group, at: usize, active: L, new: [L; 4], old: [L; 4], len: usize) {
    let [a, b, c, d] = new;
    let [oa, ob, oc, od] = old;
    let kept = [active.select(a, oa), active.select(b, ob), active.select(c, oc), active.select(d, od)];
    store_components(s, at, kept, len);
}
