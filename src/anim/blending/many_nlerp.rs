//! The nlerp blend of one layer or of three and more, eight joints per
//! operation, on AoS poses, as `two_nlerp` blends two (whose straight
//! pass is faster for the common case than this loop over layers).
//!
//! Translations and scales stay where they are: a pose is a flat run of
//! floats, and `((0 + x0 w0) + x1 w1) + ...` is the same sum for every
//! float of it, so eight floats go per operation with no shuffling, the
//! first layer and then each next one added onto the sum so far. Only the
//! rotations, which need a hemisphere check against the first layer and a
//! normalisation per joint, are transposed to lanes of one component
//! (joints 0-3 and 4-7 of a group side by side) and back. Every float is the scalar path's sum in the scalar path's
//! order (nalgebra's pairwise `dot`), so the bits are the same on AVX2 and
//! portable code (tested against `blend_layer_by_layer`).

use super::super::lanes8::{Lanes8, Portable, Simd};
use super::super::transform::Transform;
use super::two_nlerp::{load, store_normalised};
use super::{BlendLayer, normalize_fast_or};
use crate::anim::joint_groups::{FLOATS, GROUP, Group, ROTATION, components, group, group_mut};
use nalgebra::{Quaternion, Vector3};

/// `out` = the layers with weight (each `weight / total`) summed joint by
/// joint in layer order, each rotation flipped into the first such layer's
/// hemisphere, rotations normalised (the rest's where the sum has no
/// usable length), with the instructions `simd` names. Every layer's
/// `locals` is as long as `out` and `rest`, and at least one layer has
/// weight (the caller checked both).
pub(super) fn blend(
    out: &mut [Transform],
    rest: &[Transform],
    layers: &[BlendLayer],
    total: f32,
    simd: Simd,
) {
    assert!(rest.len() == out.len() && layers.iter().all(|l| l.locals.len() == out.len()));
    let mut with_weight = layers.iter().enumerate().filter(|(_, l)| l.weight > 0.0);
    let (_, first) = with_weight.next().expect("a blend with no layer with weight");
    let later = with_weight.next().map_or(&[][..], |(i, _)| &layers[i..]);
    let lead = Lead { first: (first.locals, first.weight / total), later };
    match simd {
        // Checked again here (a cached flag), as in the sampler.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512F and VL, AVX2 and FMA.
        Simd::Avx512 if Simd::avx512_available() => unsafe { blend_avx512(out, rest, &lead, total) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA.
        Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe { blend_avx2(out, rest, &lead, total) },
        _ => blend_joints::<Portable>(out, rest, &lead, total),
    }
}

/// The layers with weight as the groups of eight read them: the first
/// (the hemisphere reference) with its weight divided by the total once,
/// and the layers from the second with weight on.
struct Lead<'a> {
    first: (&'a [Transform], f32),
    /// Weights still to divide; some may have none.
    later: &'a [BlendLayer<'a>],
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn blend_avx2(out: &mut [Transform], rest: &[Transform], lead: &Lead, total: f32) {
    blend_joints::<super::super::lanes8::Avx2>(out, rest, lead, total);
}

/// `blend_avx2` with AVX-512's registers (see `Simd::Avx512`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
fn blend_avx512(out: &mut [Transform], rest: &[Transform], lead: &Lead, total: f32) {
    blend_joints::<super::super::lanes8::Avx2>(out, rest, lead, total);
}

/// Groups of eight, then the last few joints one at a time.
#[inline(always)]
fn blend_joints<L: Lanes8>(out: &mut [Transform], rest: &[Transform], lead: &Lead, total: f32) {
    let grouped = out.len() / GROUP * GROUP;
    let groups = out[..grouped].chunks_exact_mut(GROUP).zip(rest.chunks_exact(GROUP));
    for (g, (out, rest)) in groups.enumerate() {
        let start = g * GROUP;
        let usable = blend_group::<L>(group_mut(out), lead, total, start);
        if !usable {
            // A zero, NaN or infinite rotation sum (rare): redo the group
            // one joint at a time, which takes the rest's where it must.
            for (j, (o, r)) in out.iter_mut().zip(rest).enumerate() {
                *o = blend_one(lead, total, start + j, r);
            }
        }
    }
    for (j, (o, r)) in out[grouped..].iter_mut().zip(&rest[grouped..]).enumerate() {
        *o = blend_one(lead, total, grouped + j, r);
    }
}

/// One joint, the scalar way.
#[inline(always)]
fn blend_one(lead: &Lead, total: f32, j: usize, rest: &Transform) -> Transform {
    let (x, w) = (&lead.first.0[j], lead.first.1);
    let reference = x.rotation.into_inner();
    let mut translation = Vector3::zeros() + x.translation * w;
    let mut scale = Vector3::zeros() + x.scale * w;
    let mut r = Quaternion::new(0.0, 0.0, 0.0, 0.0) + reference * w;
    for (x, w) in lead.later.iter().filter(|l| l.weight > 0.0).map(|l| (&l.locals[j], l.weight / total)) {
        translation += x.translation * w;
        scale += x.scale * w;
        let q = x.rotation.into_inner();
        r += if q.dot(&reference) < 0.0 { q * -w } else { q * w };
    }
    Transform { translation, rotation: normalize_fast_or(r, rest.rotation), scale }
}

/// Eight joints from joint `start`; false when a rotation sum had no
/// usable length (zero, NaN or infinite), which this leaves for the caller
/// to redo.
#[inline(always)]
fn blend_group<L: Lanes8>(out: &mut Group, lead: &Lead, total: f32, start: usize) -> bool {
    let zero = L::splat(0.0);
    let joints = start..start + GROUP;
    let (first, w) = (group(&lead.first.0[joints.clone()]), L::splat(lead.first.1));
    let a = components::<L>(first, ROTATION);
    let mut r = [zero + a[0] * w, zero + a[1] * w, zero + a[2] * w, zero + a[3] * w];
    // Every float, rotations included (overwritten below).
    for at in (0..GROUP * FLOATS).step_by(8) {
        let sum = zero + load::<L>(first, at) * w;
        out[at..at + 8].copy_from_slice(&sum.to_array());
    }
    for layer in lead.later.iter().filter(|l| l.weight > 0.0) {
        let (x, w) = (group(&layer.locals[joints.clone()]), L::splat(layer.weight / total));
        for at in (0..GROUP * FLOATS).step_by(8) {
            let sum = load::<L>(out, at) + load::<L>(x, at) * w;
            out[at..at + 8].copy_from_slice(&sum.to_array());
        }
        r = add_rotation(r, &a, components::<L>(x, ROTATION), w);
    }
    store_normalised(out, r)
}

/// `r + q w`, `q` flipped into `a`'s hemisphere first (nalgebra's
/// pairwise `dot`).
#[inline(always)]
fn add_rotation<L: Lanes8>(r: [L; 4], a: &[L; 4], q: [L; 4], w: L) -> [L; 4] {
    let dot = (q[0] * a[0] + q[2] * a[2]) + (q[1] * a[1] + q[3] * a[3]);
    let w = dot.lt(L::splat(0.0)).select(-w, w);
    [r[0] + q[0] * w, r[1] + q[1] * w, r[2] + q[2] * w, r[3] + q[3] * w]
}
