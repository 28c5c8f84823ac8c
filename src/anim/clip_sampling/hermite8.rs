//! The CUBICSPLINE lanes of the eight-lane sampler: the Hermite spline of
//! a pair of blocks' cubic lanes (see
//! [`CubicLanes`](crate::anim::runtime_clip::CubicLanes)), each lane the
//! scalar `math::hermite` operation for operation (so the exact path gives
//! `SampleJob`'s bits: tested), put in place of what the lanes' linear
//! arithmetic gave them. Held keys stay the callers' (a cubic lane holds
//! its keys' values as a linear one does). Only pairs with a cubic lane
//! pay for it.

use super::nlerp8::{Blocks, join3, join4, normalize_or};
use crate::anim::lanes8::Lanes8;
use crate::anim::runtime_clip::{CubicLanes, LANES, Times};

/// The Hermite basis at ratio `s` over an interval `td` seconds long, as
/// the scalar `math::hermite` forms it: the weights of the start value,
/// its out-tangent, the end value and its in-tangent.
#[inline(always)]
fn basis<F: Lanes8>(s: F, td: F) -> [F; 4] {
    let (two, three) = (F::splat(2.0), F::splat(3.0));
    let s2 = s * s;
    let s3 = s2 * s;
    [
        two * s3 - three * s2 + F::splat(1.0),
        td * (s3 - two * s2 + s),
        F::splat(-2.0) * s3 + three * s2,
        td * (s3 - s2),
    ]
}

/// One component of the spline, summed in the scalar order.
#[inline(always)]
fn spline<F: Lanes8>(a: F, out_a: F, b: F, in_b: F, h: &[F; 4]) -> F {
    a * h[0] + out_a * h[1] + b * h[2] + in_b * h[3]
}

/// Two blocks' times as the spline reads them: each lane's interval length.
#[inline(always)]
fn lengths<F: Lanes8>([x, y]: [&Times; 2]) -> F {
    F::join(&x.t1, &y.t1) - F::join(&x.t0, &y.t0)
}

/// Whether either block of `pair` has a cubic lane of `cubic`'s kind (a
/// clip without one answers from its length alone; one with any has an
/// entry per block).
#[inline(always)]
pub(super) fn in_pair<const N: usize>(cubic: &CubicLanes<N>, pair: [usize; 2]) -> bool {
    !cubic.any.is_empty() && (cubic.any[pair[0]] || cubic.any[pair[1]])
}

/// No tangents: a block without a track of the kind (its lanes are not cubic).
const NONE3: [[[f32; LANES]; 3]; 2] = [[[0.0; LANES]; 3]; 2];

/// `mid` (a pair of translation or scale blocks interpolated linearly at
/// ratio `s`) with its cubic lanes' splines in place. `states` names each
/// block's state (`None`: no track of the kind) and `ab` its keys' values.
#[inline(always)]
pub(super) fn vectors<F: Lanes8>(
    cubic: &CubicLanes<3>,
    pair: [usize; 2],
    states: [Option<usize>; 2],
    times: [&Times; 2],
    (a, b): ([F; 3], [F; 3]),
    s: F,
    mid: [F; 3],
) -> [F; 3] {
    let tangents = |state: Option<usize>| state.map_or(&NONE3, |i| &cubic.tangents[i]);
    let (x, y) = (tangents(states[0]), tangents(states[1]));
    let (out_a, in_b): ([F; 3], [F; 3]) = (join3(&x[0], &y[0]), join3(&x[1], &y[1]));
    let h = basis(s, lengths(times));
    let lanes = F::join(&cubic.lanes[pair[0]], &cubic.lanes[pair[1]]);
    each!(0, 1, 2; |c| lanes.select(spline(a[c], out_a[c], b[c], in_b[c], &h), mid[c]))
}

/// `mid` (a pair of rotation blocks interpolated as the path does at ratio
/// `s`) with its cubic lanes' splines in place, normalised as the scalar
/// code normalises them (`fallback` without usable length).
#[inline(always)]
pub(super) fn rotations<F: Lanes8>(
    blocks: &Blocks,
    pair: [usize; 2],
    times: [&Times; 2],
    (a, b): (&[F; 4], &[F; 4]),
    s: F,
    fallback: &[F; 4],
    mid: [F; 4],
) -> [F; 4] {
    let cubic = &blocks.clip.cubic_rotations;
    let state = |b: usize| &cubic.tangents[blocks.state[blocks.rotations_at + b] as usize];
    let (x, y) = (state(pair[0]), state(pair[1]));
    let (out_a, in_b): ([F; 4], [F; 4]) = (join4(&x[0], &y[0]), join4(&x[1], &y[1]));
    let h = basis(s, lengths(times));
    let q = each!(0, 1, 2, 3; |c| spline(a[c], out_a[c], b[c], in_b[c], &h));
    let q = normalize_or(q, fallback);
    let lanes = F::join(&cubic.lanes[pair[0]], &cubic.lanes[pair[1]]);
    each!(0, 1, 2, 3; |c| lanes.select(q[c], mid[c]))
}
