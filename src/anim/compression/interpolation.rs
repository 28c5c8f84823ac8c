//! How the runtime interpolates between two stored rotation keys: nlerp on
//! the short arc, with the ratio optionally corrected so that it follows
//! slerp (Zeux Kapoulkine's "Approximating slerp", 2015, with our own fit).
//!
//! Pure functions of two keys and a ratio: nothing here reads a clip, a
//! cursor or a bit stream.
//!
//! Nlerp with ratio `u` moves along the same great arc as slerp, but at an
//! uneven speed: slower near the keys, faster in the middle. Between keys a
//! 4D angle `phi` apart it reaches the angle `atan2(u sin phi, 1 - u + u cos phi)`,
//! not `s phi`. Feeding it `u = s + s (s - 1/2) (s - 1) k`, with `k` a
//! function of `cos phi` (the keys' dot product), cancels most of that: the
//! rotation error between keys 30° apart drops from 5.8e-4 rad to 1.1e-6,
//! between keys 90° apart from 1.6e-2 to 2.2e-4. `k` depends only on the two
//! keys; the sampler computes it four tracks per SIMD operation, with the
//! dot product nlerp needs anyway for the short arc.
//!
//! Slerped tracks (glTF LINEAR rotations) are stored with the correction, so
//! that their own keys, not keys resampled for nlerp, reproduce them within
//! the bound; tracks whose exact curve is nlerp (ozz's clips) without it.

/// `k = x (C0 + x (C1 + x C2))` with `x = 1 - cos phi`: least squares on the
/// best `k` of each angle up to 180°, weighted towards small angles.
pub(crate) const C: [f64; 3] = [0.667_653_79, 0.166_302_55, 0.101_676_11];

/// The correction coefficient for keys whose dot product (on the short arc,
/// so not negative) is `dot`.
pub fn coefficient(dot: f64) -> f64 {
    let x = 1.0 - dot.clamp(0.0, 1.0);
    x * (C[0] + x * (C[1] + x * C[2]))
}

/// The nlerp ratio that follows slerp at ratio `s`, for coefficient `k`
/// (0: plain nlerp, `s` itself).
pub fn corrected_ratio(s: f64, k: f64) -> f64 {
    s + s * (s - 0.5) * (s - 1.0) * k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The angle nlerp reaches at ratio `u` between keys `phi` apart.
    fn nlerp_angle(phi: f64, u: f64) -> f64 {
        (u * phi.sin()).atan2(1.0 - u + u * phi.cos())
    }

    #[test]
    fn corrected_nlerp_follows_slerp() {
        // Rotation angles between the keys (degrees) and the largest
        // rotation error allowed (radians): about the fit's, with margin.
        for (degrees, bound) in [(10.0, 5e-8), (30.0, 2e-6), (60.0, 4e-5), (90.0, 3e-4), (180.0, 1e-2)] {
            let phi = f64::to_radians(degrees) / 2.0;
            let k = coefficient(phi.cos());
            let (mut plain, mut corrected) = (0.0f64, 0.0f64);
            for i in 0..=1000 {
                let s = f64::from(i) / 1000.0;
                plain = plain.max(2.0 * (nlerp_angle(phi, s) - s * phi).abs());
                corrected = corrected.max(2.0 * (nlerp_angle(phi, corrected_ratio(s, k)) - s * phi).abs());
            }
            assert!(corrected <= bound, "{degrees}°: {corrected} rad");
            // And it is a correction: far below plain nlerp's error.
            assert!(corrected * 10.0 < plain, "{degrees}°: {corrected} vs {plain}");
        }
        // Identical keys need none; the ends and the middle stay put.
        assert_eq!(coefficient(1.0), 0.0);
        for s in [0.0, 0.5, 1.0] {
            assert_eq!(corrected_ratio(s, 0.7), s);
        }
    }
}
