//! The two-layer nlerp blend, eight joints per operation, on AoS poses.
//!
//! An earlier try gathered all ten components of each joint into lanes and
//! scattered them back, and lost to the scalar loop (performance history).
//! This one leaves translations and scales where they are: a pose is a flat
//! run of floats, and `(0 + x wa) + y wb` is the same sum for every float of
//! it, so eight floats go per operation with no shuffling. Only the
//! rotations, which need a hemisphere check and a normalisation per joint,
//! are transposed to lanes of one component (joints 0-3 and 4-7 of a group
//! side by side) and back. Every float is the scalar path's sum in the
//! scalar path's order (nalgebra's pairwise `dot`), so the bits are the
//! same on AVX2 and portable code (tested against `blend_layer_by_layer`).

use super::super::lanes8::{Lanes8, Portable, Simd};
use super::super::transform::Transform;
use super::normalize_fast_or;
use crate::anim::joint_groups::{
    FLOATS, GROUP, Group, ROTATION, components, four, group, group_mut, store_components,
};
use nalgebra::{Quaternion, Vector3};

/// `out = a * wa + b * wb` joint by joint, `b`'s rotation flipped into
/// `a`'s hemisphere, rotations normalised (the rest's where the sum has no
/// usable length), with the instructions `simd` names. All four slices have
/// the same length.
pub(super) fn blend(
    out: &mut [Transform],
    rest: &[Transform],
    (a, wa): (&[Transform], f32),
    (b, wb): (&[Transform], f32),
    simd: Simd,
) {
    assert!(rest.len() == out.len() && a.len() == out.len() && b.len() == out.len());
    match simd {
        // Checked again here (a cached flag), as in the sampler.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA. (Compiled with AVX-512's
        // registers too, this blend measured 1.12-1.16x slower.)
        Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe {
            blend_avx2(out, rest, (a, wa), (b, wb))
        },
        _ => blend_joints::<Portable>(out, rest, (a, wa), (b, wb)),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn blend_avx2(out: &mut [Transform], rest: &[Transform], a: (&[Transform], f32), b: (&[Transform], f32)) {
    blend_joints::<super::super::lanes8::Avx2>(out, rest, a, b);
}

/// Groups of eight, then the last few joints one at a time.
#[inline(always)]
fn blend_joints<L: Lanes8>(
    out: &mut [Transform],
    rest: &[Transform],
    (a, wa): (&[Transform], f32),
    (b, wb): (&[Transform], f32),
) {
    let grouped = out.len() / GROUP * GROUP;
    let groups = out[..grouped].chunks_exact_mut(GROUP).zip(rest.chunks_exact(GROUP));
    for ((out, rest), (x, y)) in groups.zip(a.chunks_exact(GROUP).zip(b.chunks_exact(GROUP))) {
        let usable = blend_group::<L>(group_mut(out), group(x), group(y), wa, wb);
        if !usable {
            // A zero, NaN or infinite rotation sum (rare): redo the group
            // one joint at a time, which takes the rest's where it must.
            for ((o, r), (x, y)) in out.iter_mut().zip(rest).zip(x.iter().zip(y)) {
                *o = blend_one(x, y, r, wa, wb);
            }
        }
    }
    let tail = out[grouped..].iter_mut().zip(&rest[grouped..]);
    for ((o, r), (x, y)) in tail.zip(a[grouped..].iter().zip(&b[grouped..])) {
        *o = blend_one(x, y, r, wa, wb);
    }
}

/// One joint, the scalar way.
#[inline(always)]
fn blend_one(x: &Transform, y: &Transform, rest: &Transform, wa: f32, wb: f32) -> Transform {
    let (qa, qb) = (x.rotation.into_inner(), y.rotation.into_inner());
    let r = Quaternion::new(0.0, 0.0, 0.0, 0.0) + qa * wa;
    let r = r + if qb.dot(&qa) < 0.0 { qb * -wb } else { qb * wb };
    Transform {
        translation: Vector3::zeros() + x.translation * wa + y.translation * wb,
        rotation: normalize_fast_or(r, rest.rotation),
        scale: Vector3::zeros() + x.scale * wa + y.scale * wb,
    }
}

/// Eight joints; false when a rotation sum had no usable length (zero, NaN
/// or infinite), which this leaves for the caller to redo.
#[inline(always)]
fn blend_group<L: Lanes8>(out: &mut Group, x: &Group, y: &Group, wa: f32, wb: f32) -> bool {
    let (wa, wb) = (L::splat(wa), L::splat(wb));
    // Every float, rotations included (overwritten below).
    for at in (0..GROUP * FLOATS).step_by(8) {
        let sum = (L::splat(0.0) + load::<L>(x, at) * wa) + load::<L>(y, at) * wb;
        out[at..at + 8].copy_from_slice(&sum.to_array());
    }
    let ([ax, ay, az, aw], [bx, by, bz, bw]) = (components::<L>(x, ROTATION), components::<L>(y, ROTATION));
    let dot = (bx * ax + bz * az) + (by * ay + bw * aw);
    let wb = dot.lt(L::splat(0.0)).select(-wb, wb);
    let zero = L::splat(0.0);
    let (rx, ry, rz) = ((zero + ax * wa) + bx * wb, (zero + ay * wa) + by * wb, (zero + az * wa) + bz * wb);
    let rw = (zero + aw * wa) + bw * wb;
    store_normalised(out, [rx, ry, rz, rw])
}

/// Stores the rotation sums `r` of a group's eight joints normalised;
/// false when one had no usable length (zero, NaN or infinite).
#[inline(always)]
pub(super) fn store_normalised<L: Lanes8>(out: &mut Group, [rx, ry, rz, rw]: [L; 4]) -> bool {
    let n2 = L::splat(0.0) + ((rx * rx + rz * rz) + (ry * ry + rw * rw));
    let usable = n2.gt(L::splat(f32::MIN_POSITIVE)).and(n2.lt(L::splat(f32::INFINITY)));
    let inverse = L::splat(1.0) / n2.sqrt();
    store_components(out, ROTATION, [rx * inverse, ry * inverse, rz * inverse, rw * inverse], 4);
    usable.all()
}

/// Floats `at..at + 8`. (Functions, not closures: a closure is not
/// compiled for AVX2 with the function around it.)
#[inline(always)]
pub(super) fn load<L: Lanes8>(s: &Group, at: usize) -> L {
    L::join(four(s, at), four(s, at + 4))
}
