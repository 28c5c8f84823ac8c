//! The fast (nlerp) path of [`SampleClipJob`](super::SampleClipJob), eight
//! joints per operation: two blocks of four side by side, each lane in its
//! own interval (the layout stays in blocks of four: a cursor state and a
//! key crossing touch one block). Its loop and vector interpolation serve
//! the exact path too (`slerp8`, through [`Path8`]).
//!
//! The same code is compiled twice, for AVX2 and portable
//! (`clip_sampling::sample_blocks`), and the CPU picks one at run time
//! ([`Simd`](crate::anim::lanes8::Simd)); both give the same bits.
//! The normalisation multiplies by one over the square root, computed
//! exactly (an IEEE division), instead of ozz's reciprocal-square-root
//! estimate: nearly as cheap per lane at this width, and the same result
//! on every CPU.

use super::{FastTime, hermite8};
use crate::anim::joint_groups::{GROUP, ROTATION, SCALE, group_mut, store_components};
use crate::anim::lanes8::Lanes8;
use crate::anim::runtime_clip::{LANES, RotationBlock, RuntimeClip, Times, VectorBlock};
use crate::anim::transform::Transform;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::ops::Range;

/// What the blocks read: the clip and the state of each of its blocks.
pub(super) struct Blocks<'a> {
    pub clip: &'a RuntimeClip,
    /// The cursor's state (see `ClipCursor`).
    pub state: &'a [u32],
    /// Where its rotation, translation and scale parts start.
    pub rotations_at: usize,
    pub vectors_at: [usize; 2],
}

/// The time as the lanes compare and interpolate it.
struct Time8<F> {
    nearest: F,
    down: F,
    up: F,
}

/// How a path of the eight-lane sampler interpolates: where time falls in
/// the lanes' intervals (its ratios, held lanes), and a pair of blocks'
/// rotations. (Trait methods, not closures: a closure would not be
/// compiled for AVX2 with the function around it.)
pub(super) trait Path8<F: Lanes8> {
    /// The ratio in each lane's interval, the lanes that hold their start
    /// key and those that hold their end key.
    fn ratios(&self, times: [&Times; 2]) -> (F, F, F);
    /// The rotations of blocks `pair`.
    fn rotation(&self, blocks: &Blocks, pair: [usize; 2]) -> [F; 4];
}

impl<F: Lanes8> Path8<F> for Time8<F> {
    #[inline(always)]
    fn ratios(&self, times: [&Times; 2]) -> (F, F, F) {
        ratios(times, self)
    }
    #[inline(always)]
    fn rotation(&self, blocks: &Blocks, pair: [usize; 2]) -> [F; 4] {
        rotation(blocks, pair, self)
    }
}

/// Blocks `range` at `time` into `output` by nlerp.
#[inline(always)]
pub(super) fn sample_pairs<F: Lanes8>(
    blocks: &Blocks,
    time: &FastTime,
    range: Range<usize>,
    output: &mut [Transform],
) {
    let t = Time8 { nearest: F::splat(time.nearest), down: F::splat(time.down), up: F::splat(time.up) };
    sample_path(blocks, &t, range, output);
}

/// Blocks `range` into `output`, two at a time, as path `path` interpolates.
#[inline(always)]
pub(super) fn sample_path<F: Lanes8, P: Path8<F>>(
    blocks: &Blocks,
    path: &P,
    range: Range<usize>,
    output: &mut [Transform],
) {
    let mut b = range.start;
    while b < range.end {
        // The last block alone rides in both halves.
        let pair = [b, (b + 1).min(range.end - 1)];
        let clip = blocks.clip;
        let r = if clip.rotation_held[pair[0]] && clip.rotation_held[pair[1]] {
            // Every lane holds its start key: what `rotation` gives them,
            // without its arithmetic.
            join4(&rotation_state(blocks, pair[0]).a, &rotation_state(blocks, pair[1]).a)
        } else {
            path.rotation(blocks, pair)
        };
        let (tr, sc) = (vector(blocks, 0, pair, path), vector(blocks, 1, pair, path));
        let end = ((b + 2).min(range.end) * LANES).min(output.len());
        let joints = &mut output[b * LANES..end];
        if joints.len() == GROUP {
            // Two whole blocks: transposed back into eight joints' floats.
            let (floats, zero) = (group_mut(joints), F::splat(0.0));
            store_components(floats, 0, [tr[0], tr[1], tr[2], r[0]], 4);
            store_components(floats, ROTATION + 1, [r[1], r[2], r[3], sc[0]], 4);
            store_components(floats, SCALE + 1, [sc[1], sc[2], zero, zero], 2);
            b += 2;
            continue;
        }
        let tr = each!(0, 1, 2; |c| tr[c].to_array());
        let r = each!(0, 1, 2, 3; |c| r[c].to_array());
        let sc = each!(0, 1, 2; |c| sc[c].to_array());
        for (l, o) in joints.iter_mut().enumerate() {
            *o = Transform {
                translation: Vector3::new(tr[0][l], tr[1][l], tr[2][l]),
                rotation: UnitQuaternion::new_unchecked(Quaternion::new(r[3][l], r[0][l], r[1][l], r[2][l])),
                scale: Vector3::new(sc[0][l], sc[1][l], sc[2][l]),
            };
        }
        b += 2;
    }
}

/// Two blocks' translations or scales, joined.
#[inline(always)]
pub(super) fn join3<F: Lanes8>(low: &[[f32; LANES]; 3], high: &[[f32; LANES]; 3]) -> [F; 3] {
    each!(0, 1, 2; |c| F::join(&low[c], &high[c]))
}

/// Two blocks' rotations, joined.
#[inline(always)]
pub(super) fn join4<F: Lanes8>(low: &[[f32; LANES]; 4], high: &[[f32; LANES]; 4]) -> [F; 4] {
    each!(0, 1, 2, 3; |c| F::join(&low[c], &high[c]))
}

/// Where time falls in the lanes' intervals: the ratio in f32 (the time
/// rounded to f32, times the interval's stored reciprocal width), and the
/// lanes that hold their start key and their end key.
#[inline(always)]
fn ratios<F: Lanes8>(times: [&Times; 2], t: &Time8<F>) -> (F, F, F) {
    let [x, y] = times;
    let s = (t.nearest - F::join(&x.t0, &y.t0)) * F::join(&x.inv, &y.inv);
    let outside = s.ge(F::splat(0.0)).and(s.le(F::splat(1.0))).not();
    let hold_a = t.up.le(F::join(&x.first, &y.first)).or(outside);
    (s, hold_a, t.down.ge(F::join(&x.last, &y.last)))
}

/// Translations (`v` 0) or scales (1) of a pair of blocks, at `path`'s
/// ratios (cubic lanes by their spline, see `hermite8`); blocks without a
/// track hold their rest values.
#[inline(always)]
fn vector<F: Lanes8, P: Path8<F>>(blocks: &Blocks, v: usize, pair: [usize; 2], path: &P) -> [F; 3] {
    let clip = blocks.clip;
    let state = |b: usize| {
        let slot = clip.vector_slot[v][b];
        (slot != u32::MAX).then(|| blocks.state[blocks.vectors_at[v] + slot as usize] as usize)
    };
    let rest = |b: usize| &clip.vector_rest[v][b];
    let states = [state(pair[0]), state(pair[1])];
    if states == [None, None] {
        return join3(rest(pair[0]), rest(pair[1]));
    }
    // A block without a track is held at its rest value: the same bits as
    // the value itself.
    let held = |b: usize| VectorBlock { a: *rest(b), b: *rest(b), times: HELD };
    let (hx, hy);
    let x = match states[0] {
        Some(i) => &clip.vector_states[v][i],
        None => {
            hx = held(pair[0]);
            &hx
        }
    };
    let y = match states[1] {
        Some(i) => &clip.vector_states[v][i],
        None => {
            hy = held(pair[1]);
            &hy
        }
    };
    let times = [&x.times, &y.times];
    let (s, hold_a, hold_b) = path.ratios(times);
    let (a, b) = (join3(&x.a, &y.a), join3(&x.b, &y.b));
    let one_minus = F::splat(1.0) - s;
    let mut mid = each!(0, 1, 2; |c| a[c] * one_minus + b[c] * s);
    let cubic = &clip.cubic_vectors[v];
    if hermite8::in_pair(cubic, pair) {
        mid = hermite8::vectors(cubic, pair, states, times, (a, b), s, mid);
    }
    each!(0, 1, 2; |c| hold_b.select(b[c], hold_a.select(a[c], mid[c])))
}

/// Times that hold the start key at every time (a track's only key).
const HELD: Times = Times {
    t0: [0.0; LANES],
    t1: [0.0; LANES],
    inv: [f32::INFINITY; LANES],
    first: [f32::INFINITY; LANES],
    last: [f32::INFINITY; LANES],
};

/// Quaternion dot product in nalgebra's order (see `clip_sampling::dot`).
#[inline(always)]
pub(super) fn dot<F: Lanes8>(a: &[F; 4], b: &[F; 4]) -> F {
    (a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3])
}

/// Lanes whose squared length can be divided by.
#[inline(always)]
pub(super) fn usable<F: Lanes8>(n2: F) -> F {
    n2.gt(F::splat(f32::MIN_POSITIVE)).and(n2.lt(F::splat(f32::INFINITY)))
}

/// Rotations of a pair of blocks by normalised lerp on the short arc
/// (eight wide); cubic lanes by their spline (`hermite8`).
#[inline(always)]
fn rotation<F: Lanes8>(blocks: &Blocks, pair: [usize; 2], t: &Time8<F>) -> [F; 4] {
    let clip = blocks.clip;
    let (x, y) = (rotation_state(blocks, pair[0]), rotation_state(blocks, pair[1]));
    let fallback = join4(&clip.fallback[pair[0]], &clip.fallback[pair[1]]);
    let (s, hold_a, hold_b) = ratios([&x.times, &y.times], t);
    let (a, b): ([F; 4], [F; 4]) = (join4(&x.a, &y.a), join4(&x.b, &y.b));
    let flip = dot(&a, &b).lt(F::splat(0.0));
    let one_minus = F::splat(1.0) - s;
    let q: [F; 4] = each!(0, 1, 2, 3; |c| a[c] * one_minus + flip.select(-b[c], b[c]) * s);
    let mut q = scale_to_unit_or(q, &fallback);
    if hermite8::in_pair(&clip.cubic_rotations, pair) {
        q = hermite8::rotations(blocks, pair, [&x.times, &y.times], (&a, &b), s, &fallback, q);
    }
    let tracked = F::join(&clip.rotation_tracked[pair[0]], &clip.rotation_tracked[pair[1]]);
    let (ka, kb) =
        (held_key(a, clip.keys_kept, tracked, &fallback), held_key(b, clip.keys_kept, tracked, &fallback));
    each!(0, 1, 2, 3; |c| hold_b.select(kb[c], hold_a.select(ka[c], q[c])))
}

/// Block `b`'s rotations in the state the cursor left them.
#[inline(always)]
pub(super) fn rotation_state<'a>(blocks: &Blocks<'a>, b: usize) -> &'a RotationBlock {
    &blocks.clip.rotation_states[blocks.state[blocks.rotations_at + b] as usize]
}

/// `q / |q|`, or `fallback` where that cannot be divided (scalar `normalize_or`).
#[inline(always)]
pub(super) fn normalize_or<F: Lanes8>(q: [F; 4], fallback: &[F; 4]) -> [F; 4] {
    let n2 = dot(&q, &q);
    let (n, ok) = (n2.sqrt(), usable(n2));
    each!(0, 1, 2, 3; |c| ok.select(q[c] / n, fallback[c]))
}

/// `q` times the reciprocal of its length, or `fallback` where that cannot
/// be divided: one division per lane where `normalize_or` takes four
/// (perf had the four as the sampler's hottest instructions; one clip's
/// sample 1 to 2.5 % faster), within an ulp or two of it, and still the
/// same bits on every CPU (IEEE square root and division, no estimate).
#[inline(always)]
fn scale_to_unit_or<F: Lanes8>(q: [F; 4], fallback: &[F; 4]) -> [F; 4] {
    let n2 = dot(&q, &q);
    let (inverse, ok) = (F::splat(1.0) / n2.sqrt(), usable(n2));
    each!(0, 1, 2, 3; |c| ok.select(q[c] * inverse, fallback[c]))
}

/// `q` where it is unit to an exporter's rounding, else normalised (scalar
/// `keep_or`), in the lanes `used` (set bits); the others are anything.
/// Lanes nobody reads (a slerp's held lanes, whose weights are 0) do not
/// make the others pay for a square root and four divisions.
#[inline(always)]
pub(super) fn keep_or<F: Lanes8>(q: [F; 4], fallback: &[F; 4], used: F) -> [F; 4] {
    let near = (dot(&q, &q) - F::splat(1.0)).abs().le(F::splat(2e-3));
    if near.or(used.not()).all() {
        return q;
    }
    let normalized = normalize_or(q, fallback);
    each!(0, 1, 2, 3; |c| near.select(q[c], normalized[c]))
}

/// Key `k` as holding it gives: as stored when unit to an exporter's
/// rounding (or every key is kept), else normalised (`keep_or`), in the
/// lanes with a track; the others hold their rest rotation as it is.
#[inline(always)]
pub(super) fn held_key<F: Lanes8>(k: [F; 4], kept: bool, tracked: F, fallback: &[F; 4]) -> [F; 4] {
    if kept {
        return k;
    }
    let held = keep_or(k, fallback, tracked);
    each!(0, 1, 2, 3; |c| tracked.select(held[c], k[c]))
}
