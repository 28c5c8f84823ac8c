//! One CUBICSPLINE track stored as Hermite keys: each kept key's
//! in-tangent, value and out-tangent quantized, and keys removed where the
//! spline through the kept keys' own tangents stays within the tolerance.
//! The runtime evaluates the same spline, so a cubic clip keeps about as
//! many keys as it came with, rather than a linear key every few
//! milliseconds of resampled curve.
//!
//! Offline only, one track at a time, like `reduce` (whose tolerance,
//! error measure and key reduction it shares); the sampler's side is
//! [`spline`].

use super::Property;
use super::clip::CUBIC_COMPONENTS;
use super::quantize::Range;
use super::reduce::{
    QUANTIZATION_SHARES, TrackInput, Value, component_bounds, fewest_bits, fits_between, normalized, reduce,
};

/// Quantized Hermite keys of one track.
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    /// Components of a value or tangent: 4 (rotation), 3 or 1 (weight).
    pub width: usize,
    /// Bits of each component: in-tangent, value, out-tangent, `width` each.
    pub bits: [u32; CUBIC_COMPONENTS],
    /// Range of each component: values share one step, tangents another.
    pub ranges: [Range; CUBIC_COMPONENTS],
    /// Kept keys: time-table index and the quantized components.
    pub keys: Vec<(u32, [u32; CUBIC_COMPONENTS])>,
}

impl Cubic {
    /// Bits of one key's components.
    pub fn key_bits(&self) -> u32 {
        self.bits.iter().sum()
    }

    /// Approximate stored bits (a time index of about 8 bits per key).
    fn cost(&self) -> usize {
        self.keys.len() * (8 + self.key_bits() as usize)
    }
}

/// Components of a value or tangent of `property`.
pub fn width(property: Property) -> usize {
    match property {
        Property::Rotation => 4,
        Property::Translation | Property::Scale => 3,
        Property::Weight => 1,
    }
}

/// The largest share of an interval's length a tangent is weighted by in
/// the spline: `s^3 - 2 s^2 + s` peaks at 4/27 (s = 1/3). A tangent step
/// of the value step over this times the longest interval moves the
/// spline no further than the value step does.
const TANGENT_WEIGHT: f64 = 4.0 / 27.0;

/// The spline of a `property` track between a key (value `v0`, out-tangent
/// `b0`) and the next (in-tangent `a1`, value `v1`) `td` seconds later, at
/// ratio `s`: glTF's CUBICSPLINE, a rotation normalised after it.
pub fn spline(property: Property, v0: &Value, b0: &Value, a1: &Value, v1: &Value, s: f64, td: f64) -> Value {
    let (s2, s3) = (s * s, s * s * s);
    let (h00, h10, h01, h11) =
        (2.0 * s3 - 3.0 * s2 + 1.0, td * (s3 - 2.0 * s2 + s), -2.0 * s3 + 3.0 * s2, td * (s3 - s2));
    let v: Value = std::array::from_fn(|c| v0[c] * h00 + b0[c] * h10 + v1[c] * h01 + a1[c] * h11);
    if property == Property::Rotation { normalized(&v) } else { v }
}

/// Encodes a CUBICSPLINE track (not at rest, not constant) within `tol`,
/// in the property's own units (see `reduce::local_error`): a share of it
/// for quantization, the rest for the keys it removes (the share giving
/// the fewest bits wins).
pub(super) fn encode(input: &TrackInput, tol: f64) -> Cubic {
    let property = input.property;
    let width = width(property);
    let components: Vec<[f64; CUBIC_COMPONENTS]> = input
        .spline
        .iter()
        .map(|key| std::array::from_fn(|c| if c < 3 * width { key[c / width][c % width] } else { 0.0 }))
        .collect();
    let (lo, hi) = component_bounds(&components);
    let longest = input.keys.windows(2).map(|w| w[1].1 - w[0].1).fold(0.0, f64::max);
    let value_width = (width..2 * width).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
    let tangent_width = (0..width).chain(2 * width..3 * width).map(|c| hi[c] - lo[c]).fold(0.0, f64::max);
    // Values share one step; tangents another, scaled to move the spline
    // as far (see `TANGENT_WEIGHT`).
    let quantize = |widest: u32| {
        let value_step = Range::step_for(value_width, widest);
        let tangent_step = if longest > 0.0 {
            Range::step_for(f64::from(value_step) / (TANGENT_WEIGHT * longest), 1)
        } else {
            Range::step_for(tangent_width, widest)
        };
        let mut ranges = [Range { min: 0.0, step: 0.0 }; CUBIC_COMPONENTS];
        let mut bits = [0; CUBIC_COMPONENTS];
        for c in 0..3 * width {
            let step = if c / width == 1 { value_step } else { tangent_step };
            (ranges[c], bits[c]) = Range::fitted(lo[c], hi[c], step);
        }
        let q: Vec<[u32; CUBIC_COMPONENTS]> =
            components.iter().map(|k| std::array::from_fn(|c| ranges[c].quantize(k[c], bits[c]))).collect();
        let decoded = decode_all(width, &ranges, &q);
        (bits, ranges, q, decoded)
    };
    // As for linear tracks, a few splits of the tolerance, the smallest kept.
    let cubic = QUANTIZATION_SHARES.iter().map(|&share| {
        let (bits, ranges, q, decoded) = fewest_bits(quantize, |(_, _, _, decoded)| {
            let interval = |(i, w): (usize, &[(u32, f64, Value)])| {
                fits_between(input, w[0].1, w[1].1, tol * share, |t| between(input, decoded, i, i + 1, t))
            };
            input.keys.windows(2).enumerate().all(interval)
        });
        let kept = reduce(input, tol, |i, k, t| between(input, &decoded, i, k, t));
        Cubic { width, bits, ranges, keys: kept.into_iter().map(|k| (input.keys[k].0, q[k])).collect() }
    });
    cubic.min_by_key(Cubic::cost).expect("at least one share")
}

/// Each key's in-tangent, value and out-tangent as the runtime decodes them.
fn decode_all(
    width: usize,
    ranges: &[Range; CUBIC_COMPONENTS],
    q: &[[u32; CUBIC_COMPONENTS]],
) -> Vec<[Value; 3]> {
    q.iter()
        .map(|k| {
            std::array::from_fn(|part| {
                std::array::from_fn(|c| {
                    if c < width {
                        f64::from(ranges[part * width + c].value(k[part * width + c]))
                    } else {
                        0.0
                    }
                })
            })
        })
        .collect()
}

/// The spline from candidate key `i` to `k` of `decoded` at time `t`
/// (clamped to the two keys' times).
fn between(input: &TrackInput, decoded: &[[Value; 3]], i: usize, k: usize, t: f64) -> Value {
    let (ta, tb) = (input.keys[i].1, input.keys[k].1);
    let td = tb - ta;
    let s = if td > 0.0 { ((t - ta) / td).clamp(0.0, 1.0) } else { 0.0 };
    let ([_, v0, b0], [a1, v1, _]) = (decoded[i], decoded[k]);
    spline(input.property, &v0, &b0, &a1, &v1, s, td)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::compression::reduce::local_error;

    /// A one-dimensional cubic track: keys at `times` with values `v` and
    /// tangents `d` (in and out alike), its exact spline on a grid of 16
    /// points per interval.
    fn input(times: &[f64], v: &[f64], d: &[f64]) -> TrackInput {
        let value = |x: f64| [x, 0.0, 0.0, 0.0];
        let spline: Vec<[Value; 3]> =
            v.iter().zip(d).map(|(&v, &d)| [value(d), value(v), value(d)]).collect();
        let mut grid = Vec::new();
        for i in 0..times.len() - 1 {
            let td = times[i + 1] - times[i];
            for g in 0..16 {
                let s = f64::from(g) / 16.0;
                let [_, v0, b0] = spline[i];
                let [a1, v1, _] = spline[i + 1];
                grid.push((
                    times[i] + s * td,
                    super::spline(Property::Translation, &v0, &b0, &a1, &v1, s, td),
                ));
            }
        }
        grid.push((*times.last().unwrap(), value(*v.last().unwrap())));
        TrackInput {
            joint: 0,
            property: Property::Translation,
            step: false,
            keys: times.iter().zip(v).enumerate().map(|(i, (&t, &v))| (i as u32, t, value(v))).collect(),
            grid,
            rest: [0.0; 4],
            error_scale: 1.0,
            corrected: false,
            keep_all_keys_from: 1.0,
            spline,
        }
    }

    #[test]
    fn hermite_keys_reproduce_the_spline_within_the_tolerance() {
        let times = [0.0, 0.5, 1.0, 1.5, 2.0];
        let inp = input(&times, &[0.0, 1.0, -0.5, 2.0, 0.0], &[3.0, -1.0, 2.0, 0.5, -4.0]);
        let tol = 1e-3;
        let cubic = encode(&inp, tol);
        assert_eq!((cubic.width, cubic.keys.len()), (3, 5));
        // x alone moves: y and z of each part take no bits.
        assert!((0..9).filter(|c| c % 3 != 0).all(|c| cubic.bits[c] == 0), "{:?}", cubic.bits);
        assert!((0..9).filter(|c| c % 3 == 0).all(|c| cubic.bits[c] > 0), "{:?}", cubic.bits);
        let decoded = decode_all(3, &cubic.ranges, &cubic.keys.iter().map(|k| k.1).collect::<Vec<_>>());
        for (i, w) in cubic.keys.windows(2).enumerate() {
            let (ta, tb) = (times[w[0].0 as usize], times[w[1].0 as usize]);
            for (t, exact) in inp.grid.iter().filter(|g| g.0 >= ta && g.0 <= tb) {
                let got = between(&inp, &decoded, i, i + 1, *t);
                assert!(
                    local_error(Property::Translation, exact, &got) <= tol,
                    "at {t}: {got:?} vs {exact:?}"
                );
            }
        }
    }

    #[test]
    fn keys_on_one_cubic_go() {
        // x = t^3 on 0..2: one cubic, whatever the keys in between; the
        // tangents (3 t^2) of the ends alone give it back.
        let times: Vec<f64> = (0..=8).map(|i| f64::from(i) * 0.25).collect();
        let v: Vec<f64> = times.iter().map(|t| t * t * t).collect();
        let d: Vec<f64> = times.iter().map(|t| 3.0 * t * t).collect();
        let cubic = encode(&input(&times, &v, &d), 1e-3);
        assert_eq!(cubic.keys.iter().map(|k| k.0).collect::<Vec<_>>(), vec![0, 8]);
    }
}
