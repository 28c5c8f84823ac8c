//! `repr(C)` mirrors of the GLSL structs in shaders/common.glsl, with size
//! asserts: change both sides together. Never change one side alone.

use bytemuck::{Pod, Zeroable};

pub use crate::anim::BoneMatrix;
use crate::anim::MeshPrimitive;

/// A vertex as the GPU stores it (`PackedVertex`): the bind-pose source
/// stream and the skin pass's output alike, 24 bytes instead of 48.
/// Positions stay f32; normals and tangents are octahedral directions in
/// two snorm16 (about 3e-5 rad).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct PackedVertex {
    /// xyz.
    pub position: [f32; 3],
    /// `encode_direction` of the normal.
    pub normal: u32,
    /// `encode_direction` of the tangent's xyz.
    pub tangent: u32,
    /// The tangent's w (bitangent sign).
    pub handedness: f32,
}

impl PackedVertex {
    /// The vertex unpacked as the shaders unpack it (`decode_direction`).
    pub fn unpack(&self) -> SkinnedVertex {
        let [x, y, z] = self.position;
        let n = decode_direction(self.normal);
        let t = decode_direction(self.tangent);
        SkinnedVertex {
            position: [x, y, z, 1.0],
            normal: [n[0], n[1], n[2], 0.0],
            tangent: [t[0], t[1], t[2], self.handedness],
        }
    }
}

/// One influence set of one vertex, packed (`PackedInfluence`): palette-
/// relative joints as u16 and weights as unorm16 that sum to exactly
/// 65535 (`quantize_weights`), 16 bytes instead of 32.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct Influence {
    /// Palette-relative joint indices.
    pub joints: [u16; 4],
    /// Weights times 65535.
    pub weights: [u16; 4],
}

/// `encode_direction` of the zero vector (a primitive without normals or
/// tangents): two snorm16 of -32768, which `encode_direction` never makes.
pub const ZERO_DIRECTION: u32 = 0x8000_8000;

/// A direction as two snorm16 octahedral coordinates (x in the low half):
/// the unit vector's projection on the octahedron |x|+|y|+|z| = 1, its lower
/// half folded over. The zero (or a non-finite) vector gives `ZERO_DIRECTION`.
pub fn encode_direction(v: [f32; 3]) -> u32 {
    let l1 = v[0].abs() + v[1].abs() + v[2].abs();
    if !(l1 > 0.0 && l1.is_finite()) {
        return ZERO_DIRECTION;
    }
    let (mut x, mut y) = (v[0] / l1, v[1] / l1);
    if v[2] < 0.0 {
        let sign = |a: f32| if a >= 0.0 { 1.0 } else { -1.0 };
        (x, y) = ((1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y));
    }
    let snorm = |a: f32| ((a.clamp(-1.0, 1.0) * 32767.0).round() as i16) as u16 as u32;
    snorm(x) | (snorm(y) << 16)
}

/// The unit direction (or zero) `encode_direction` stored: the shaders'
/// `decode_direction`, for tests.
pub fn decode_direction(bits: u32) -> [f32; 3] {
    if bits == ZERO_DIRECTION {
        return [0.0; 3];
    }
    let unorm = |h: u32| (f32::from(h as u16 as i16) / 32767.0).max(-1.0);
    let (x, y) = (unorm(bits & 0xffff), unorm(bits >> 16));
    let z = 1.0 - x.abs() - y.abs();
    let (x, y) = if z < 0.0 {
        let sign = |a: f32| if a >= 0.0 { 1.0 } else { -1.0 };
        ((1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y))
    } else {
        (x, y)
    };
    let l = (x * x + y * y + z * z).sqrt();
    [x / l, y / l, z / l]
}

/// Weights (each 0..=1) as unorm16 whose sum is the rounded sum of the
/// weights times 65535: each is rounded down, then the units lost go to the
/// largest remainders, so weights that sum to one still do exactly.
pub fn quantize_weights(w: [f32; 4]) -> [u16; 4] {
    let scaled = w.map(|x| f64::from(x.clamp(0.0, 1.0)) * 65535.0);
    let mut q = scaled.map(|x| x.floor());
    let target = scaled.iter().sum::<f64>().round().min(65535.0);
    let mut order = [0, 1, 2, 3];
    order.sort_by(|&a, &b| (scaled[b] - q[b]).total_cmp(&(scaled[a] - q[a])));
    let mut missing = (target - q.iter().sum::<f64>()).max(0.0) as usize;
    for &i in order.iter().cycle().take(8) {
        if missing == 0 {
            break;
        }
        if q[i] < 65535.0 && scaled[i] > 0.0 {
            q[i] += 1.0;
            missing -= 1;
        }
    }
    q.map(|x| x as u16)
}

/// `prim` as the GPU's streams hold it (`gpu_model`): its normals and
/// tangents through `encode_direction` and back, each influence set's
/// weights through `quantize_weights`. Skinned on the CPU it gives what the
/// GPU computes, up to rounding in the arithmetic, so tests can hold the
/// GPU's arithmetic to a bound that the storage's error does not set: a
/// blend of joints turned far apart is near singular and magnifies an
/// octahedral normal's 3e-5 rad a hundredfold.
pub fn as_stored(prim: &MeshPrimitive) -> MeshPrimitive {
    let directions = |v: &[[f32; 3]]| v.iter().map(|&d| decode_direction(encode_direction(d))).collect();
    let mut stored = prim.clone();
    stored.normals = prim.normals.as_deref().map(directions);
    if let Some(tangents) = &mut stored.tangents {
        for t in tangents.iter_mut() {
            let [x, y, z] = decode_direction(encode_direction([t[0], t[1], t[2]]));
            *t = [x, y, z, t[3]];
        }
    }
    if let Some(inf) = &mut stored.influences {
        let k = inf.per_vertex;
        for vertex in inf.weights.chunks_mut(k.max(1)) {
            for set in vertex.chunks_mut(4) {
                let mut weights = [0.0; 4];
                weights[..set.len()].copy_from_slice(set);
                let quantized = quantize_weights(weights);
                for (w, q) in set.iter_mut().zip(quantized) {
                    *w = f32::from(q) / 65535.0;
                }
            }
        }
    }
    stored
}

/// A skin joint's palette entry when the CPU splits matrices for
/// dual-quaternion skinning (`skinning::DqsSplit::Cpu`; `dq_from_palette` in
/// shaders/dqs.glsl): `anim::dual_quat::SkinDualQuat`'s parts in the 64 bytes
/// of a `BoneMatrix`. The translation is stored rather than the dual part
/// (the shader rebuilds `dual = (t, 0) * real / 2`, as it does for a matrix),
/// which leaves room for the whole scale/shear matrix.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct PaletteDualQuat {
    /// Unit rotation quaternion, (x, y, z, w).
    pub real: [f32; 4],
    /// Translation, applied after the rotation.
    pub translation: [f32; 3],
    /// Scale/shear (column-vector 3x3), column-major; applied first.
    pub scale: [f32; 9],
}

impl PaletteDualQuat {
    /// `skin` split as `SkinDualQuat::from_bone` splits it.
    pub fn from_bone(skin: &BoneMatrix) -> Self {
        let m = skin.to_matrix();
        let split = crate::anim::dual_quat::SkinDualQuat::from_matrix(&m);
        let q = split.rigid.rotation();
        // The matrix's own translation: `rigid.translation()` would rebuild
        // it from the dual part, with rounding.
        let t = m.fixed_view::<3, 1>(0, 3);
        let mut scale = [0.0; 9];
        scale.copy_from_slice(split.scale.as_slice());
        PaletteDualQuat { real: [q.i, q.j, q.k, q.w], translation: [t.x, t.y, t.z], scale }
    }
}

/// One non-zero morph delta of one vertex (`MorphEntry`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct MorphEntry {
    /// xyz delta; w = target index as f32 bits.
    pub position: [f32; 4],
    /// xyz delta.
    pub normal: [f32; 4],
    /// xyz delta.
    pub tangent: [f32; 4],
}

/// A skinned vertex read back from the skin pass's output (stored as a
/// [`PackedVertex`], unpacked by [`PackedVertex::unpack`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct SkinnedVertex {
    /// xyz, w = 1.
    pub position: [f32; 4],
    /// xyz unit normal.
    pub normal: [f32; 4],
    /// xyz unit tangent, w = handedness.
    pub tangent: [f32; 4],
}

/// One primitive of one instance to skin (`SkinRecord`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct SkinRecord {
    /// First source vertex.
    pub source_offset: u32,
    /// Vertex count.
    pub vertex_count: u32,
    /// First output vertex in the layout's numbering
    /// (`PrimitiveOutput::output_offset`); records are sorted by it. A
    /// frame places the output afresh (`SkinPass::write_batches`).
    pub output_offset: u32,
    /// First palette entry.
    pub palette_offset: u32,
    /// First influence of set 0.
    pub influence_offset: u32,
    /// 0 (rigid), 1 or 2.
    pub influence_sets: u32,
    /// First morph range entry, or `NO_MORPHS`.
    pub morph_offset: u32,
    /// First morph weight.
    pub weight_offset: u32,
}

/// `SkinRecord::morph_offset` of a primitive without morph targets.
pub const NO_MORPHS: u32 = u32::MAX;

const _: () = {
    assert!(std::mem::size_of::<BoneMatrix>() == 64);
    assert!(std::mem::size_of::<PaletteDualQuat>() == 64);
    assert!(std::mem::size_of::<PackedVertex>() == 24);
    assert!(std::mem::size_of::<Influence>() == 16);
    assert!(std::mem::size_of::<MorphEntry>() == 48);
    assert!(std::mem::size_of::<SkinRecord>() == 32);
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry holds `SkinDualQuat`'s parts, and rebuilding the matrix
    /// from them as the shader does (`dq_from_palette`: the dual part from
    /// the translation) gives the matrix back: rigid, scaled, sheared,
    /// mirrored, and collapsed joints.
    #[test]
    fn dual_quaternion_entries_rebuild_their_matrix() {
        use crate::anim::dual_quat::SkinDualQuat;
        use nalgebra::{Matrix3, Matrix4, Rotation3, Vector3};
        let rotation =
            Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(Vector3::new(0.3f32, -0.8, 0.5)), 2.7);
        let linear = [
            *rotation.matrix(),
            rotation.matrix() * Matrix3::from_diagonal(&Vector3::new(2.0, 0.5, 1.5)),
            Matrix3::new(1.0, 0.4, 0.0, 0.0, 1.0, 0.0, 0.2, 0.0, 0.7) * rotation.matrix(),
            -rotation.matrix(),
            Matrix3::zeros(),
        ];
        for a in linear {
            let mut m = a.to_homogeneous();
            m.fixed_view_mut::<3, 1>(0, 3).copy_from(&Vector3::new(0.25, -3.0, 7.5));
            let entry = PaletteDualQuat::from_bone(&BoneMatrix::from_matrix(&m));
            let split = SkinDualQuat::from_matrix(&m);
            let q = split.rigid.rotation();
            assert_eq!(entry.real, [q.i, q.j, q.k, q.w]);
            assert_eq!(entry.scale, split.scale.as_slice());
            assert_eq!(entry.translation, [0.25, -3.0, 7.5]);
            let scale = Matrix3::from_column_slice(&entry.scale);
            let mut rebuilt: Matrix4<f32> = (q.to_rotation_matrix().matrix() * scale).to_homogeneous();
            rebuilt.fixed_view_mut::<3, 1>(0, 3).copy_from(&Vector3::from(entry.translation));
            let error = (rebuilt - m).abs().max();
            assert!(error < 2e-5, "{m}: rebuilt with error {error}");
        }
    }

    #[test]
    fn directions_round_trip_within_1e_4() {
        let mut worst = 0.0f32;
        for i in 0..2000 {
            // A spiral over the whole sphere, both hemispheres and the poles.
            let t = i as f32 / 1999.0;
            let z = 1.0 - 2.0 * t;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let a = i as f32 * 2.399_963;
            let v = [r * a.cos(), r * a.sin(), z];
            let d = decode_direction(encode_direction(v));
            let err = (0..3).map(|k| (d[k] - v[k]).powi(2)).sum::<f32>().sqrt();
            worst = worst.max(err);
        }
        assert!(worst < 1e-4, "octahedral error {worst}");
        for axis in [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [0.0, 0.0, 1.0]] {
            assert_eq!(decode_direction(encode_direction(axis)), axis);
        }
        assert_eq!(encode_direction([0.0; 3]), ZERO_DIRECTION);
        assert_eq!(decode_direction(ZERO_DIRECTION), [0.0; 3]);
        assert_eq!(encode_direction([f32::NAN, 0.0, 1.0]), ZERO_DIRECTION);
    }

    /// A packed vertex unpacks as the shaders unpack it: the position as
    /// stored (w = 1), the directions decoded (normal w = 0), the tangent's
    /// handedness as stored; a zero direction stays zero.
    #[test]
    fn a_packed_vertex_unpacks_as_the_shaders_do() {
        let tangent = [0.6, 0.0, -0.8];
        let packed = PackedVertex {
            position: [1.5, -2.0, 1e-3],
            normal: ZERO_DIRECTION,
            tangent: encode_direction(tangent),
            handedness: -1.0,
        };
        let v = packed.unpack();
        assert_eq!(v.position, [1.5, -2.0, 1e-3, 1.0]);
        assert_eq!(v.normal, [0.0; 4]);
        let t = decode_direction(packed.tangent);
        assert_eq!(v.tangent, [t[0], t[1], t[2], -1.0]);
        assert!((0..3).all(|k| (t[k] - tangent[k]).abs() < 1e-4), "{t:?}");
    }

    /// Five influences per vertex are two sets, the second of one weight,
    /// each quantized on its own; directions are decoded as the shaders do
    /// and a tangent keeps its handedness.
    #[test]
    fn a_primitive_as_stored_holds_what_the_streams_hold() {
        use crate::anim::Influences;
        let weights = vec![0.3, 0.2, 0.1, 0.1, 0.3, 1.0, 0.0, 0.0, 0.0, 0.0];
        let prim = MeshPrimitive {
            positions: vec![[0.5, 1.0, -2.0]; 2],
            normals: Some(vec![[0.6, 0.0, 0.8], [0.0, -0.28, 0.96]]),
            tangents: Some(vec![[0.0, 0.8, 0.6, -1.0], [1.0, 0.0, 0.0, 1.0]]),
            influences: Some(Influences { per_vertex: 5, joints: vec![0; 10], weights: weights.clone() }),
            ..Default::default()
        };
        let stored = as_stored(&prim);
        assert_eq!(stored.positions, prim.positions);
        let normals = stored.normals.unwrap();
        for (s, n) in normals.iter().zip(prim.normals.as_ref().unwrap()) {
            assert_eq!(*s, decode_direction(encode_direction(*n)));
        }
        let tangents = stored.tangents.unwrap();
        assert_eq!(tangents[0][..3], decode_direction(encode_direction([0.0, 0.8, 0.6])));
        assert_eq!((tangents[0][3], tangents[1][3]), (-1.0, 1.0));
        let unorm = |q: [u16; 4]| q.map(|x| f32::from(x) / 65535.0);
        let first = unorm(quantize_weights([0.3, 0.2, 0.1, 0.1]));
        let second = unorm(quantize_weights([0.3, 0.0, 0.0, 0.0]));
        let stored_weights = stored.influences.unwrap().weights;
        assert_eq!(stored_weights[..4], first);
        assert_eq!(stored_weights[4], second[0]);
        assert_eq!(stored_weights[5..], [1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_ne!(stored_weights, weights, "0.3 is not a multiple of 1/65535");
    }

    #[test]
    fn quantized_weights_keep_their_sum() {
        let cases = [
            [1.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.0, 0.0],
            [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0],
            [0.1, 0.2, 0.3, 0.4],
            [0.7, 0.2, 0.05, 0.05],
            [0.25, 0.25, 0.25, 0.25],
        ];
        for w in cases {
            let q = quantize_weights(w);
            assert_eq!(q.iter().map(|&x| u32::from(x)).sum::<u32>(), 65535, "{w:?} -> {q:?}");
            for k in 0..4 {
                assert!((f32::from(q[k]) / 65535.0 - w[k]).abs() <= 1.0 / 65535.0, "{w:?} -> {q:?}");
                assert_eq!(q[k] == 0, w[k] == 0.0, "{w:?} -> {q:?}: zero weights stay zero");
            }
        }
        // A second set of a vertex with eight influences: its part of the sum.
        let q = quantize_weights([0.05, 0.05, 0.0, 0.0]);
        assert_eq!(u32::from(q[0]) + u32::from(q[1]), (0.1f64 * 65535.0).round() as u32);
    }
}
