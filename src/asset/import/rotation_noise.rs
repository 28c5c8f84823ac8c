//! Exporter noise in rotations, read as zero: components so much smaller
//! than their quaternion's largest that they turn nothing, and whose
//! products are subnormal floats (see [`without_noise`]).

/// A rotation's components (a quaternion's, or a cubic rotation key's
/// tangent's), those far smaller than the largest (below 2^-40 of it)
/// read as zero, with their sign. Exporters leave such noise where a
/// component is zero (Fox's Run has components of 1e-22 in two joints'
/// keys, RobotExpressive and Wizard have them too): it turns nothing
/// visibly, but the product of two is a subnormal float, which x86 cores
/// compute in microcode, tens of times slower than a normal multiply, and
/// every interpolation and normalisation multiplies components. Reading
/// it as zero made Fox's Run sample 2.2 times faster compressed and 3.1
/// times uncompressed, and a crowd of RobotExpressive update 1.6 times
/// faster. 2^-40 of a unit quaternion's largest component is below
/// 1e-12, five orders of magnitude under f32's rounding of that component.
pub(super) fn without_noise(q: [f32; 4]) -> [f32; 4] {
    let largest = q.iter().fold(0.0f32, |m, c| m.max(c.abs()));
    q.map(|c| if c.abs() < largest * NOISE { 0.0f32.copysign(c) } else { c })
}

/// Below this fraction of a quaternion's largest component, a component
/// is noise (see [`without_noise`]): 2^-40.
const NOISE: f32 = 1.0 / (1u64 << 40) as f32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_far_below_the_largest_read_as_zero_with_their_sign() {
        let half = std::f32::consts::FRAC_1_SQRT_2;
        let q = [-4.45e-23, half, 1.9e-22, half];
        assert_eq!(without_noise(q).map(f32::to_bits), [-0.0, half, 0.0, half].map(f32::to_bits));
        // Small, but not noise: kept as they are.
        let q = [1e-6, 0.6, -3e-9, 0.8];
        assert_eq!(without_noise(q), q);
        // Relative to the largest: a tiny quaternion keeps its components
        // (it is normalised later, or refused when it has no length).
        let q = [3e-20, 0.0, 1e-20, 0.0];
        assert_eq!(without_noise(q), q);
        assert_eq!(without_noise([0.0; 4]), [0.0; 4]);
    }
}
