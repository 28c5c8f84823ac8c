//! One track at a time: how many bits its values need and which keys can go,
//! within a tolerance in object-space units (the track's share of the
//! clip's error bound, converted with the error metric's scales).
//!
//! It never sees the other tracks or measures the clip's error in object
//! space (see `compress`).

use super::Property;
use super::hermite::Cubic;
use super::interpolation::{coefficient, corrected_ratio};
use super::quantize::{MAX_BITS, Range, from_smallest_three, smallest_three};

/// A value: translation or scale in x, y, z (w unused), a quaternion as
/// x, y, z, w (nalgebra's `coords` order), or a morph weight in x (y, z
/// and w 0).
pub type Value = [f64; 4];

/// What key reduction works from: the candidate keys and the exact track
/// sampled on the clip's error grid.
#[derive(Debug, Clone)]
pub struct TrackInput {
    /// Skeleton joint.
    pub joint: usize,
    /// Which property.
    pub property: Property,
    /// STEP keys (hold the previous key) rather than linear ones.
    pub step: bool,
    /// Candidate keys: index in the clip's time table, time, exact value.
    pub keys: Vec<(u32, f64, Value)>,
    /// The exact track on the error grid (sorted times), clamped outside its keys.
    pub grid: Vec<(f64, Value)>,
    /// The joint's rest value of this property.
    pub rest: Value,
    /// Object-space movement per unit of local error (see `local_error`).
    pub error_scale: f64,
    /// Rotations: the runtime corrects nlerp's ratio to follow slerp.
    pub corrected: bool,
    /// Linear and STEP tracks: where reduction would keep at least this
    /// share of the keys, all are kept (see
    /// [`CompressionSettings::keep_all_keys_from`](super::CompressionSettings::keep_all_keys_from)).
    pub keep_all_keys_from: f64,
    /// CUBICSPLINE tracks, stored as Hermite keys: each candidate key's
    /// in-tangent, value and out-tangent as the clip has them (empty for
    /// other tracks).
    pub spline: Vec<[Value; 3]>,
}

/// A track as it is stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Encoded {
    /// Equal to the rest value within the tolerance: not stored at all.
    Rest,
    /// One value for the whole clip (unit quaternion for rotations).
    Constant([f32; 4]),
    /// Quantized keys.
    Packed(Packed),
    /// Quantized Hermite keys (CUBICSPLINE tracks).
    Cubic(Cubic),
}

/// Quantized keys of one track.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    /// Bits of each component: as many as its range needs with the step
    /// all three share (0 for a component that stays within a step).
    pub bits: [u32; 3],
    /// Rotations: the component left out (0..4); 3 (unused) otherwise.
    pub dropped: usize,
    /// Range of each stored component, all with the same step.
    pub ranges: [Range; 3],
    /// Kept keys: time-table index and the quantized components.
    pub keys: Vec<(u32, [u32; 3])>,
}

/// How far apart two values of `property` are, in the property's own units
/// (translation, scale and weight: Euclidean; rotation: the angle in radians).
pub fn local_error(property: Property, a: &Value, b: &Value) -> f64 {
    match property {
        Property::Translation | Property::Scale | Property::Weight => {
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        }
        Property::Rotation => {
            // For unit quaternions at 4D angle phi the chord is 2 sin(phi / 2)
            // and the rotation angle 2 phi; accurate for tiny angles, unlike acos.
            let (a, b) = (normalized(a), normalized(b));
            let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let sign = if dot < 0.0 { -1.0 } else { 1.0 };
            let chord = a.iter().zip(&b).map(|(x, y)| (x - sign * y).powi(2)).sum::<f64>().sqrt();
            4.0 * (chord / 2.0).min(1.0).asin()
        }
    }
}

pub(super) fn normalized(q: &Value) -> Value {
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    if n > 0.0 { q.map(|c| c / n) } else { [0.0, 0.0, 0.0, 1.0] }
}

/// Interpolates two stored values as the runtime sampler does: lerp, or a
/// normalised lerp on the short arc for rotations, its ratio `corrected`
/// to follow slerp or not (see [`interpolation`](super::interpolation)).
pub fn interpolate(property: Property, a: &Value, b: &Value, s: f64, corrected: bool) -> Value {
    // `from_fn`, not `[0, 1, 2, 3].map`: the compiler stopped inlining the
    // latter here once (its `try_map`), and the compressor, which calls this
    // on every grid point, took half as long again on morph weights.
    let lerp = |b: &Value, u: f64| std::array::from_fn(|i| a[i] + (b[i] - a[i]) * u);
    if property != Property::Rotation {
        return lerp(b, s);
    }
    let dot = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let b = if dot < 0.0 { b.map(|c| -c) } else { *b };
    let u = if corrected { corrected_ratio(s, coefficient(dot.abs())) } else { s };
    normalized(&lerp(&b, u))
}

/// The components stored for `value`.
fn stored(property: Property, value: &Value, dropped: usize) -> [f64; 3] {
    match property {
        Property::Rotation => smallest_three(normalized(value), dropped),
        _ => [value[0], value[1], value[2]],
    }
}

/// The value quantized components decode to (as the runtime sampler decodes them).
pub fn decode(property: Property, dropped: usize, ranges: &[Range; 3], q: [u32; 3]) -> Value {
    let c = [ranges[0].value(q[0]), ranges[1].value(q[1]), ranges[2].value(q[2])];
    match property {
        Property::Rotation => from_smallest_three(c, dropped).map(f64::from),
        _ => [f64::from(c[0]), f64::from(c[1]), f64::from(c[2]), 0.0],
    }
}

/// Encodes one track so that its object-space error (local error times
/// `error_scale`) stays within `tolerance` on the grid: a share of it for
/// quantization, the rest for the keys it removes (the share giving the
/// fewest bits wins).
pub fn encode(input: &TrackInput, tolerance: f64) -> Encoded {
    let property = input.property;
    let tol = tolerance / input.error_scale.max(1e-12);
    let within = |v: &Value| input.grid.iter().all(|(_, g)| local_error(property, g, v) <= tol);
    if within(&input.rest) {
        return Encoded::Rest;
    }
    let first = match property {
        Property::Rotation => normalized(&input.keys[0].2),
        _ => input.keys[0].2,
    };
    if within(&first) {
        return Encoded::Constant(first.map(|c| c as f32));
    }
    if !input.spline.is_empty() {
        return Encoded::Cubic(super::hermite::encode(input, tol));
    }
    // Rotations leave out the component that stays largest over the track,
    // so that rebuilding it from the unit length never divides small numbers.
    let dropped = if property == Property::Rotation {
        (0..4)
            .max_by(|&a, &b| {
                let smallest = |c: usize| {
                    input.keys.iter().map(|k| normalized(&k.2)[c].abs()).fold(f64::INFINITY, f64::min)
                };
                smallest(a).total_cmp(&smallest(b))
            })
            .unwrap_or(3)
    } else {
        3
    };
    let components: Vec<[f64; 3]> = input.keys.iter().map(|k| stored(property, &k.2, dropped)).collect();
    let (lo, hi) = component_bounds(&components);
    // One step for all three components, so that each is as precise as the
    // others (the error is their combined distance): the widest gets
    // `widest` bits and the others as few as their ranges need.
    let width = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max);
    let quantize = |widest: u32| {
        let step = Range::step_for(width, widest);
        let fitted = [0, 1, 2].map(|i| Range::fitted(lo[i], hi[i], step));
        let (ranges, bits) = (fitted.map(|f| f.0), fitted.map(|f| f.1));
        let q: Vec<[u32; 3]> =
            components.iter().map(|c| [0, 1, 2].map(|i| ranges[i].quantize(c[i], bits[i]))).collect();
        (bits, ranges, q)
    };
    // Fewer bits leave less of the tolerance to key reduction: try a few
    // splits and keep the smallest result.
    let packed = QUANTIZATION_SHARES.iter().map(|&share| {
        let (bits, ranges, q) = fewest_bits(quantize, |(_, ranges, q)| {
            let decoded = input.keys.iter().zip(q).map(|(k, &q)| (k, decode(property, dropped, ranges, q)));
            decoded.map(|(k, v)| local_error(property, &k.2, &v)).fold(0.0, f64::max) <= tol * share
        });
        let decoded: Vec<Value> = q.iter().map(|&q| decode(property, dropped, &ranges, q)).collect();
        let mut kept = reduce(input, tol, |i, k, t| {
            let (ta, tb) = (input.keys[i].1, input.keys[k].1);
            if input.step {
                if t < tb { decoded[i] } else { decoded[k] }
            } else {
                interpolate(property, &decoded[i], &decoded[k], (t - ta) / (tb - ta), input.corrected)
            }
        });
        let all = input.keys.len();
        if kept.len() as f64 >= input.keep_all_keys_from * all as f64 {
            kept = (0..all).collect();
        }
        Packed { bits, dropped, ranges, keys: kept.into_iter().map(|k| (input.keys[k].0, q[k])).collect() }
    });
    Encoded::Packed(packed.min_by_key(Packed::cost).expect("at least one share"))
}

/// Each component's smallest and largest value over `keys`.
pub(super) fn component_bounds<const N: usize>(keys: &[[f64; N]]) -> ([f64; N], [f64; N]) {
    let mut lo = [f64::INFINITY; N];
    let mut hi = [f64::NEG_INFINITY; N];
    for k in keys {
        for c in 0..N {
            lo[c] = lo[c].min(k[c]);
            hi[c] = hi[c].max(k[c]);
        }
    }
    (lo, hi)
}

/// `quantize(widest)` for the fewest bits of the widest component (3 to
/// [`MAX_BITS`]) whose result `fits`; with `MAX_BITS` when none does.
pub(super) fn fewest_bits<T>(quantize: impl Fn(u32) -> T, fits: impl Fn(&T) -> bool) -> T {
    (3..MAX_BITS).map(&quantize).find(|q| fits(q)).unwrap_or_else(|| quantize(MAX_BITS))
}

/// Whether `value_at(t)` stays within `tol` of `input`'s exact track at
/// every grid point from `ta` to `tb`.
pub(super) fn fits_between(
    input: &TrackInput,
    ta: f64,
    tb: f64,
    tol: f64,
    value_at: impl Fn(f64) -> Value,
) -> bool {
    let from = input.grid.partition_point(|g| g.0 < ta);
    input.grid[from..]
        .iter()
        .take_while(|g| g.0 <= tb)
        .all(|(t, exact)| local_error(input.property, exact, &value_at(*t)) <= tol)
}

/// Shares of a track's tolerance tried for quantization (the rest goes to
/// key reduction).
pub(super) const QUANTIZATION_SHARES: [f64; 4] = [0.2, 0.4, 0.6, 0.8];

impl Packed {
    /// Approximate stored bits (a time index of about 8 bits per key).
    fn cost(&self) -> usize {
        self.keys.len() * (8 + self.key_bits() as usize)
    }

    /// Bits of one key's components.
    pub fn key_bits(&self) -> u32 {
        self.bits.iter().sum()
    }
}

/// Greedy key reduction: from each kept key, the farthest next key such that
/// the track between the two, as `between(i, k, t)` gives it at time `t`
/// from candidate keys `i` and `k` alone, stays within `tol` of the exact
/// track at every grid point between them. First and last keys always
/// stay (they clamp).
pub(super) fn reduce(
    input: &TrackInput,
    tol: f64,
    between: impl Fn(usize, usize, f64) -> Value,
) -> Vec<usize> {
    let n = input.keys.len();
    let fits =
        |i: usize, k: usize| fits_between(input, input.keys[i].1, input.keys[k].1, tol, |t| between(i, k, t));
    let mut kept = vec![0];
    let mut i = 0;
    while i + 1 < n {
        let mut k = i + 1;
        while k + 1 < n && fits(i, k + 1) {
            k += 1;
        }
        kept.push(k);
        i = k;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(property: Property, keys: Vec<(f64, Value)>, step: bool) -> TrackInput {
        let mut grid = Vec::new();
        for w in keys.windows(2) {
            grid.push(w[0]);
            let mid = (w[0].0 + w[1].0) / 2.0;
            let s = if step { 0.0 } else { 0.5 };
            grid.push((mid, interpolate(property, &w[0].1, &w[1].1, s, false)));
        }
        grid.push(*keys.last().unwrap());
        TrackInput {
            joint: 0,
            property,
            step,
            keys: keys.iter().enumerate().map(|(i, (t, v))| (i as u32, *t, *v)).collect(),
            grid,
            rest: [0.0, 0.0, 0.0, 0.0],
            error_scale: 1.0,
            corrected: false,
            keep_all_keys_from: 1.0,
            spline: Vec::new(),
        }
    }

    #[test]
    fn collinear_keys_reduce_to_the_ends() {
        let keys: Vec<(f64, Value)> =
            (0..=10).map(|i| (f64::from(i) * 0.1, [f64::from(i), -2.0 * f64::from(i), 0.5, 0.0])).collect();
        let Encoded::Packed(p) = encode(&input(Property::Translation, keys, false), 1e-3) else { panic!() };
        assert_eq!(p.keys.iter().map(|k| k.0).collect::<Vec<_>>(), vec![0, 10]);
    }

    #[test]
    fn a_corner_is_kept() {
        let keys: Vec<(f64, Value)> =
            (0..=10).map(|i| (f64::from(i), [f64::from(5 - (i - 5i32).abs()), 0.0, 0.0, 0.0])).collect();
        let Encoded::Packed(p) = encode(&input(Property::Translation, keys, false), 1e-3) else { panic!() };
        assert_eq!(p.keys.iter().map(|k| k.0).collect::<Vec<_>>(), vec![0, 5, 10]);
    }

    #[test]
    fn a_track_that_would_drop_few_keys_keeps_them_all() {
        // Eleven keys on a line with a corner at 5: reduction keeps 0, 5
        // and 10, three of eleven (0.273); from a share of 0.27 down the
        // track keeps all eleven.
        let keys: Vec<(f64, Value)> =
            (0..=10).map(|i| (f64::from(i), [f64::from(5 - (i - 5i32).abs()), 0.0, 0.0, 0.0])).collect();
        let kept = |share: f64| {
            let mut inp = input(Property::Translation, keys.clone(), false);
            inp.keep_all_keys_from = share;
            let Encoded::Packed(p) = encode(&inp, 1e-3) else { panic!() };
            p.keys.iter().map(|k| k.0).collect::<Vec<_>>()
        };
        assert_eq!(kept(1.0), vec![0, 5, 10]);
        assert_eq!(kept(0.28), vec![0, 5, 10]);
        assert_eq!(kept(0.27), (0..=10).collect::<Vec<_>>());
    }

    #[test]
    fn step_tracks_keep_every_change() {
        let keys: Vec<(f64, Value)> = [0.0, 0.0, 1.0, 1.0, 3.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| (i as f64, [x, 0.0, 0.0, 0.0]))
            .collect();
        let Encoded::Packed(p) = encode(&input(Property::Translation, keys, true), 1e-3) else { panic!() };
        assert_eq!(p.keys.iter().map(|k| k.0).collect::<Vec<_>>(), vec![0, 2, 4]);
    }

    #[test]
    fn rest_and_constant_tracks() {
        let keys = vec![(0.0, [0.0, 0.0, 0.0, 0.0]), (1.0, [1e-5, 0.0, 0.0, 0.0])];
        assert_eq!(encode(&input(Property::Translation, keys, false), 1e-4), Encoded::Rest);
        let keys = vec![(0.0, [2.0, 0.0, 0.0, 0.0]), (1.0, [2.0, 1e-5, 0.0, 0.0])];
        assert_eq!(
            encode(&input(Property::Translation, keys, false), 1e-4),
            Encoded::Constant([2.0, 0.0, 0.0, 0.0])
        );
    }

    #[test]
    fn quantized_rotation_keys_stay_within_their_share_of_the_tolerance() {
        let keys: Vec<(f64, Value)> = (0..20)
            .map(|i| {
                let a = f64::from(i) * 0.15;
                (f64::from(i), [0.3 * (a / 2.0).sin(), (a / 2.0).sin() * 0.9, 0.0, (a / 2.0).cos()])
            })
            .collect();
        let tol = 1e-4;
        let inp = input(Property::Rotation, keys, false);
        let Encoded::Packed(p) = encode(&inp, tol) else { panic!() };
        for (t, q) in &p.keys {
            let exact = inp.keys[*t as usize].2;
            let got = decode(Property::Rotation, p.dropped, &p.ranges, *q);
            let largest_share = QUANTIZATION_SHARES.iter().copied().fold(0.0, f64::max);
            assert!(local_error(Property::Rotation, &exact, &got) <= tol * largest_share);
        }
        // w is rebuilt. y, spanning about 0.9, needs some 15 bits for 1e-4
        // rad, not 24; x, spanning a third of that, one or two fewer; z,
        // which stays 0, none.
        assert_eq!(p.dropped, 3);
        assert!((12..=17).contains(&p.bits[1]), "{:?}", p.bits);
        assert!((1..=2).contains(&(p.bits[1] - p.bits[0])), "{:?}", p.bits);
        assert_eq!(p.bits[2], 0, "{:?}", p.bits);
    }
}
