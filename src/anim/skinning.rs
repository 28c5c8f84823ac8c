//! CPU reference skinning: morph targets, then linear blend skinning (or,
//! when asked, dual-quaternion skinning).
//!
//! It never touches the GPU, changes only the caller's output buffers, and
//! never allocates.
//!
//! This is the definition the GPU compute shader must match:
//!
//! 1. Morph: `p' = p + sum_t w_t * dp_t` (normals and tangent xyz likewise).
//! 2. Blend: `M = sum_i w_i * palette[joint_i]` over all `per_vertex`
//!    influences (matrices summed, not transformed points).
//! 3. `position = (M * (p', 1)).xyz`; `normal = normalize(sign(det A) *
//!    cofactor(A) * n')` with `A` the upper 3x3 of `M`; `tangent.xyz =
//!    normalize(A * t'.xyz)`, `tangent.w` unchanged. Zero-length vectors stay
//!    zero. The bottom row of `M` is ignored (palette matrices are affine).
//!
//! The cofactor matrix equals `det(A) * inverse(A)^T`: it maps normals
//! correctly under non-uniform scale without dividing by the determinant, and
//! the sign factor keeps normals facing outward under mirroring.
//!
//! [`SkinningMethod::DualQuaternion`] replaces steps 2 and 3 for palette
//! skinning with [`DqBlend`] (see
//! `anim::dual_quat`): `position = R * (S * p') + t`, `normal =
//! normalize(R * sign(det S) * cofactor(S) * n')`, `tangent.xyz =
//! normalize(R * S * t'.xyz)`. A rigid transform is the same for both methods.

use super::dual_quat::DqBlend;
use super::job::{JobError, check_len};
use super::mesh::{Influences, MeshPrimitive, MorphDeltas};
use super::skeleton::BoneMatrix;
use nalgebra::{Matrix4, Vector3};

/// How a vertex's influences are blended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SkinningMethod {
    /// Linear blend skinning: the weighted sum of the skinning matrices.
    #[default]
    Linear,
    /// Dual-quaternion skinning (`anim::dual_quat`): rotations blended as
    /// unit dual quaternions, scale/shear linearly and applied first.
    DualQuaternion,
}

impl SkinningMethod {
    /// Both methods, the default first.
    pub const ALL: [SkinningMethod; 2] = [SkinningMethod::Linear, SkinningMethod::DualQuaternion];

    /// Short name: `linear` or `dqs`.
    pub fn name(self) -> &'static str {
        match self {
            SkinningMethod::Linear => "linear",
            SkinningMethod::DualQuaternion => "dqs",
        }
    }
}

/// What moves the vertices.
#[derive(Debug, Clone, Copy)]
pub enum SkinTransform<'a> {
    /// Skinning palette indexed by the primitive's influence joints.
    Palette(&'a [BoneMatrix]),
    /// One matrix for every vertex (unskinned meshes attached to a node).
    Rigid(Matrix4<f32>),
}

/// Morphs and skins one primitive into output vertex streams.
#[derive(Debug)]
pub struct SkinningJob<'a> {
    /// Bind-pose streams, influences and morph targets.
    pub primitive: &'a MeshPrimitive,
    /// One weight per morph target; targets with weight exactly 0 are skipped.
    pub morph_weights: &'a [f32],
    /// Palette or rigid matrix.
    pub transform: SkinTransform<'a>,
    /// How palette influences are blended (a rigid matrix ignores it).
    pub method: SkinningMethod,
    /// Skinned positions, one per vertex.
    pub out_positions: &'a mut [[f32; 3]],
    /// Skinned normals; only allowed when the primitive has normals (may be
    /// `None` to skip them).
    pub out_normals: Option<&'a mut [[f32; 3]]>,
    /// Skinned tangents; only allowed when the primitive has tangents.
    pub out_tangents: Option<&'a mut [[f32; 4]]>,
}

impl SkinningJob<'_> {
    /// Checks stream lengths, morph targets and weights, and (in one pass over
    /// the influences) that every joint index is inside the palette.
    pub fn validate(&self) -> Result<(), JobError> {
        let prim = self.primitive;
        let n = prim.vertex_count();
        check_len("skinning: out_positions", self.out_positions.len(), n)?;
        if let Some(src) = &prim.normals {
            check_len("skinning: primitive normals", src.len(), n)?;
        }
        if let Some(src) = &prim.tangents {
            check_len("skinning: primitive tangents", src.len(), n)?;
        }
        match (&self.out_normals, &prim.normals) {
            (Some(_), None) => {
                return Err(JobError::new("skinning: out_normals given, primitive has no normals"));
            }
            (Some(out), Some(_)) => check_len("skinning: out_normals", out.len(), n)?,
            _ => {}
        }
        match (&self.out_tangents, &prim.tangents) {
            (Some(_), None) => {
                return Err(JobError::new("skinning: out_tangents given, primitive has no tangents"));
            }
            (Some(out), Some(_)) => check_len("skinning: out_tangents", out.len(), n)?,
            _ => {}
        }
        check_len("skinning: morph_weights", self.morph_weights.len(), prim.morph_targets.len())?;
        for (t, (target, w)) in prim.morph_targets.iter().zip(self.morph_weights).enumerate() {
            if !w.is_finite() {
                return Err(JobError::new(format!("skinning: morph weight {t} is {w}")));
            }
            for (what, deltas) in [
                ("positions", &target.positions),
                ("normals", &target.normals),
                ("tangents", &target.tangents),
            ] {
                if let Some(d) = deltas {
                    check_deltas(d, n)
                        .map_err(|e| JobError::new(format!("skinning: morph target {t} {what}: {e}")))?;
                }
            }
        }
        if let Some(inf) = &prim.influences {
            if inf.per_vertex == 0 {
                return Err(JobError::new("skinning: influences with 0 per vertex"));
            }
            let expected = inf
                .per_vertex
                .checked_mul(n)
                .ok_or_else(|| JobError::new("skinning: influence count overflows"))?;
            check_len("skinning: influence joints", inf.joints.len(), expected)?;
            check_len("skinning: influence weights", inf.weights.len(), expected)?;
        }
        if let SkinTransform::Palette(palette) = self.transform {
            let Some(inf) = &prim.influences else {
                return Err(JobError::new("skinning: palette given for a primitive without influences"));
            };
            if palette.is_empty() && n > 0 {
                return Err(JobError::new("skinning: empty palette"));
            }
            // Checked whole first (a maximum and an `or` vectorise; a search
            // for the first bad element does not, and framing a crowd
            // checks every character's primitives every frame), searched
            // only when one fails: the same errors.
            let largest = inf.joints.iter().copied().max();
            if largest.is_some_and(|j| usize::from(j) >= palette.len()) {
                let i = inf.joints.iter().position(|&j| j as usize >= palette.len()).unwrap_or(0);
                return Err(JobError::new(format!(
                    "skinning: vertex {} influence joint {} outside the palette of {}",
                    i / inf.per_vertex,
                    inf.joints[i],
                    palette.len()
                )));
            }
            // `|`, not `||`: no early exit, so the loop vectorises.
            if inf.weights.iter().fold(false, |bad, w| bad | !w.is_finite()) {
                let i = inf.weights.iter().position(|w| !w.is_finite()).unwrap_or(0);
                return Err(JobError::new(format!(
                    "skinning: vertex {} has a non-finite weight",
                    i / inf.per_vertex
                )));
            }
        }
        Ok(())
    }

    /// Validates, then morphs and skins. Never allocates: morphs accumulate
    /// directly in the output buffers.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let prim = self.primitive;
        let positions = &mut *self.out_positions;
        let mut normals = self.out_normals.as_deref_mut();
        let mut tangents = self.out_tangents.as_deref_mut();

        positions.copy_from_slice(&prim.positions);
        if let (Some(out), Some(src)) = (normals.as_deref_mut(), &prim.normals) {
            out.copy_from_slice(src);
        }
        if let (Some(out), Some(src)) = (tangents.as_deref_mut(), &prim.tangents) {
            out.copy_from_slice(src);
        }
        for (target, &w) in prim.morph_targets.iter().zip(self.morph_weights) {
            if w == 0.0 {
                continue;
            }
            if let Some(d) = &target.positions {
                add_deltas(d, w, positions, |v| &mut v[..]);
            }
            if let (Some(d), Some(out)) = (&target.normals, normals.as_deref_mut()) {
                add_deltas(d, w, out, |v| &mut v[..]);
            }
            if let (Some(d), Some(out)) = (&target.tangents, tangents.as_deref_mut()) {
                add_deltas(d, w, out, |v| &mut v[..3]);
            }
        }

        match (self.transform, &prim.influences) {
            (SkinTransform::Rigid(m), _) => {
                let a = Affine::from_matrix(&m);
                for v in 0..positions.len() {
                    a.apply(v, positions, normals.as_deref_mut(), tangents.as_deref_mut());
                }
            }
            (SkinTransform::Palette(palette), Some(inf)) if self.method == SkinningMethod::DualQuaternion => {
                let k = inf.per_vertex;
                for v in 0..positions.len() {
                    let range = v * k..(v + 1) * k;
                    let b = DqBlend::of_influences(palette, &inf.joints[range.clone()], &inf.weights[range]);
                    apply_dq(&b, v, positions, normals.as_deref_mut(), tangents.as_deref_mut());
                }
            }
            (SkinTransform::Palette(palette), Some(inf)) => {
                for v in 0..positions.len() {
                    let a = Affine::blend(palette, inf, v);
                    a.apply(v, positions, normals.as_deref_mut(), tangents.as_deref_mut());
                }
            }
            // Rejected by validate.
            (SkinTransform::Palette(_), None) => {}
        }
        Ok(())
    }
}

/// Checks that a morph delta stream only touches existing vertices; the
/// error is built only on failure.
fn check_deltas(d: &MorphDeltas, n: usize) -> Result<(), String> {
    if let MorphDeltas::Sparse { indices, deltas } = d {
        if deltas.len() != indices.len() {
            return Err(format!("{} sparse indices but {} deltas", indices.len(), deltas.len()));
        }
        if indices.iter().any(|&i| i as usize >= n) {
            return Err(format!("sparse index beyond {n} vertices"));
        }
    } else if d.vertex_bound() > n {
        return Err(format!("{} deltas for {n} vertices", d.vertex_bound()));
    }
    Ok(())
}

/// `out[i].xyz += w * delta` for every stored delta; `xyz` picks the three
/// components of an output element.
fn add_deltas<T>(d: &MorphDeltas, w: f32, out: &mut [T], xyz: impl Fn(&mut T) -> &mut [f32]) {
    d.for_each(|i, delta| {
        // `get_mut`: validate checked the indices, but run must never panic.
        if let Some(v) = out.get_mut(i) {
            for (o, d) in xyz(v).iter_mut().zip(delta) {
                *o += w * d;
            }
        }
    });
}

/// Upper three rows of a column-vector matrix, column-major: `m[c * 3 + r]`:
/// what moves one vertex. Framing (`anim::framing`) moves single vertices
/// with it to get the bits `run` writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Affine {
    m: [f32; 12],
}

impl Affine {
    /// The upper three rows of `m`.
    pub(crate) fn from_matrix(m: &Matrix4<f32>) -> Self {
        let s = m.as_slice();
        let mut a = [0.0; 12];
        for c in 0..4 {
            a[c * 3..c * 3 + 3].copy_from_slice(&s[c * 4..c * 4 + 3]);
        }
        Affine { m: a }
    }

    /// Vertex `v`'s linear blend of `palette` by `influences`: the weighted
    /// sum of its joints' matrices, in influence order, zero weights left
    /// out (their joints may be anything the palette holds).
    #[inline]
    pub(crate) fn blend(palette: &[BoneMatrix], influences: &Influences, v: usize) -> Self {
        let k = influences.per_vertex;
        let mut a = Affine { m: [0.0; 12] };
        let range = v * k..(v + 1) * k;
        for (&j, &w) in influences.joints[range.clone()].iter().zip(&influences.weights[range]) {
            if w != 0.0 {
                a.add_scaled(&palette[j as usize], w);
            }
        }
        a
    }

    /// `p` moved by the matrix.
    #[inline]
    pub(crate) fn transform_point(&self, p: [f32; 3]) -> [f32; 3] {
        let m = &self.m;
        [
            m[0] * p[0] + m[3] * p[1] + m[6] * p[2] + m[9],
            m[1] * p[0] + m[4] * p[1] + m[7] * p[2] + m[10],
            m[2] * p[0] + m[5] * p[1] + m[8] * p[2] + m[11],
        ]
    }

    /// `self += w * b` on the upper three rows.
    #[inline]
    fn add_scaled(&mut self, b: &BoneMatrix, w: f32) {
        for c in 0..4 {
            for r in 0..3 {
                self.m[c * 3 + r] += w * b.skin[c * 4 + r];
            }
        }
    }

    /// Transforms vertex `v` of the streams in place.
    #[inline]
    fn apply(
        &self,
        v: usize,
        positions: &mut [[f32; 3]],
        normals: Option<&mut [[f32; 3]]>,
        tangents: Option<&mut [[f32; 4]]>,
    ) {
        let m = &self.m;
        let c0 = [m[0], m[1], m[2]];
        let c1 = [m[3], m[4], m[5]];
        let c2 = [m[6], m[7], m[8]];
        positions[v] = self.transform_point(positions[v]);
        if let Some(normals) = normals {
            // Columns of the cofactor matrix are the cross products of A's columns.
            let k0 = cross(c1, c2);
            let k1 = cross(c2, c0);
            let k2 = cross(c0, c1);
            let det = c0[0] * k0[0] + c0[1] * k0[1] + c0[2] * k0[2];
            let sign = if det < 0.0 { -1.0 } else { 1.0 };
            let n = normals[v];
            let (x, y, z) = (sign * n[0], sign * n[1], sign * n[2]);
            normals[v] = normalize([
                k0[0] * x + k1[0] * y + k2[0] * z,
                k0[1] * x + k1[1] * y + k2[1] * z,
                k0[2] * x + k1[2] * y + k2[2] * z,
            ]);
        }
        if let Some(tangents) = tangents {
            let t = tangents[v];
            let r = normalize([
                c0[0] * t[0] + c1[0] * t[1] + c2[0] * t[2],
                c0[1] * t[0] + c1[1] * t[1] + c2[1] * t[2],
                c0[2] * t[0] + c1[2] * t[1] + c2[2] * t[2],
            ]);
            tangents[v] = [r[0], r[1], r[2], t[3]];
        }
    }
}

/// Transforms vertex `v` of the streams in place by a DQS blend.
#[inline]
fn apply_dq(
    b: &DqBlend,
    v: usize,
    positions: &mut [[f32; 3]],
    normals: Option<&mut [[f32; 3]]>,
    tangents: Option<&mut [[f32; 4]]>,
) {
    positions[v] = b.transform_point(&Vector3::from(positions[v])).into();
    if let Some(normals) = normals {
        normals[v] = normalize(b.transform_normal(&Vector3::from(normals[v])).into());
    }
    if let Some(tangents) = tangents {
        let t = tangents[v];
        let r = normalize(b.transform_vector(&Vector3::new(t[0], t[1], t[2])).into());
        tangents[v] = [r[0], r[1], r[2], t[3]];
    }
}

#[inline]
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Unit vector, or zero for a zero-length (or non-finite) vector: never NaN
/// from a degenerate normal.
#[inline]
fn normalize(v: [f32; 3]) -> [f32; 3] {
    let len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if len2 > f32::MIN_POSITIVE && len2.is_finite() {
        let inv = 1.0 / len2.sqrt();
        [v[0] * inv, v[1] * inv, v[2] * inv]
    } else {
        [0.0; 3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::mesh::{Influences, MorphTarget};
    use nalgebra::Vector3;

    fn near(a: [f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    fn prim(positions: Vec<[f32; 3]>) -> MeshPrimitive {
        MeshPrimitive { positions, ..Default::default() }
    }

    fn skinned(positions: Vec<[f32; 3]>, joints: Vec<u16>, weights: Vec<f32>) -> MeshPrimitive {
        MeshPrimitive { influences: Some(Influences { per_vertex: 4, joints, weights }), ..prim(positions) }
    }

    fn translate(x: f32, y: f32, z: f32) -> BoneMatrix {
        BoneMatrix::from_matrix(&Matrix4::new_translation(&Vector3::new(x, y, z)))
    }

    /// Runs the job on `p` with every stream the primitive has.
    fn skin(p: &MeshPrimitive, weights: &[f32], t: SkinTransform) -> Result<Vec<[f32; 3]>, JobError> {
        let mut pos = vec![[0.0; 3]; p.vertex_count()];
        SkinningJob {
            primitive: p,
            morph_weights: weights,
            transform: t,
            method: SkinningMethod::Linear,
            out_positions: &mut pos,
            out_normals: None,
            out_tangents: None,
        }
        .run()?;
        Ok(pos)
    }

    type Streams = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);

    fn skin_all(p: &MeshPrimitive, t: SkinTransform) -> Streams {
        let n = p.vertex_count();
        let (mut pos, mut nrm, mut tan) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
        SkinningJob {
            primitive: p,
            morph_weights: &vec![0.0; p.morph_targets.len()],
            transform: t,
            method: SkinningMethod::Linear,
            out_positions: &mut pos,
            out_normals: Some(&mut nrm),
            out_tangents: Some(&mut tan),
        }
        .run()
        .unwrap();
        (pos, nrm, tan)
    }

    #[test]
    fn rejects_bad_lengths_and_indices() {
        let palette = [translate(0.0, 0.0, 0.0); 2];
        let ok = skinned(vec![[0.0; 3]], vec![0, 1, 0, 0], vec![0.5, 0.5, 0.0, 0.0]);
        assert!(skin(&ok, &[], SkinTransform::Palette(&palette)).is_ok());
        // Joint outside the palette, empty palette.
        let bad = skinned(vec![[0.0; 3]], vec![0, 2, 0, 0], vec![0.5, 0.5, 0.0, 0.0]);
        assert!(skin(&bad, &[], SkinTransform::Palette(&palette)).unwrap_err().0.contains("palette"));
        assert!(skin(&ok, &[], SkinTransform::Palette(&[])).is_err());
        // Influence stream lengths.
        let short = skinned(vec![[0.0; 3]], vec![0, 1, 0], vec![0.5, 0.5, 0.0, 0.0]);
        assert!(skin(&short, &[], SkinTransform::Palette(&palette)).is_err());
        let short = skinned(vec![[0.0; 3]], vec![0, 1, 0, 0], vec![0.5, 0.5]);
        assert!(skin(&short, &[], SkinTransform::Palette(&palette)).is_err());
        let nan = skinned(vec![[0.0; 3]], vec![0, 1, 0, 0], vec![f32::NAN, 0.5, 0.0, 0.0]);
        assert!(skin(&nan, &[], SkinTransform::Palette(&palette)).is_err());
        // The first bad vertex is named, however many follow.
        let joints = [[0, 1, 0, 0], [0, 1, 0, 0], [0, 7, 0, 0], [9, 0, 0, 0]].concat();
        let weights =
            [[1.0, 0.0, 0.0, 0.0], [0.5, f32::INFINITY, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [f32::NAN; 4]];
        let later = skinned(vec![[0.0; 3]; 4], joints.clone(), weights.concat());
        let error = skin(&later, &[], SkinTransform::Palette(&palette)).unwrap_err().0;
        assert_eq!(error, "skinning: vertex 2 influence joint 7 outside the palette of 2");
        let in_range =
            skinned(vec![[0.0; 3]; 4], joints.iter().map(|&j| j.min(1)).collect(), weights.concat());
        let error = skin(&in_range, &[], SkinTransform::Palette(&palette)).unwrap_err().0;
        assert_eq!(error, "skinning: vertex 1 has a non-finite weight");
        // Palette for an unskinned primitive.
        assert!(skin(&prim(vec![[0.0; 3]]), &[], SkinTransform::Palette(&palette)).is_err());
        // Morph weights: count and NaN.
        assert!(skin(&ok, &[0.0], SkinTransform::Palette(&palette)).is_err());
        let mut morphed = ok.clone();
        morphed.morph_targets.push(MorphTarget {
            positions: Some(MorphDeltas::Dense(vec![[1.0; 3]])),
            normals: None,
            tangents: None,
        });
        assert!(skin(&morphed, &[0.5], SkinTransform::Palette(&palette)).is_ok());
        assert!(skin(&morphed, &[f32::NAN], SkinTransform::Palette(&palette)).is_err());
        assert!(skin(&morphed, &[], SkinTransform::Palette(&palette)).is_err());
        // Morph deltas beyond the vertices.
        morphed.morph_targets[0].positions = Some(MorphDeltas::Dense(vec![[1.0; 3]; 2]));
        assert!(skin(&morphed, &[0.5], SkinTransform::Palette(&palette)).is_err());
        morphed.morph_targets[0].positions =
            Some(MorphDeltas::Sparse { indices: vec![1], deltas: vec![[1.0; 3]] });
        assert!(skin(&morphed, &[0.5], SkinTransform::Palette(&palette)).is_err());
        morphed.morph_targets[0].positions = Some(MorphDeltas::Sparse { indices: vec![0], deltas: vec![] });
        assert!(skin(&morphed, &[0.5], SkinTransform::Palette(&palette)).is_err());
    }

    #[test]
    fn rejects_bad_output_streams() {
        let p = prim(vec![[0.0; 3]; 2]);
        let rigid = SkinTransform::Rigid(Matrix4::identity());
        let mut pos = vec![[0.0; 3]; 1];
        let job = |pos: &mut [[f32; 3]], nrm: Option<&mut [[f32; 3]]>, tan: Option<&mut [[f32; 4]]>| {
            SkinningJob {
                primitive: &p,
                morph_weights: &[],
                transform: rigid,
                method: SkinningMethod::Linear,
                out_positions: pos,
                out_normals: nrm,
                out_tangents: tan,
            }
            .validate()
        };
        assert!(job(&mut pos, None, None).is_err());
        let mut pos = vec![[0.0; 3]; 2];
        assert!(job(&mut pos, None, None).is_ok());
        // Outputs for streams the primitive lacks.
        assert!(job(&mut pos, Some(&mut [[0.0; 3]; 2]), None).is_err());
        assert!(job(&mut pos, None, Some(&mut [[0.0; 4]; 2])).is_err());
        // Wrong output lengths for streams it has.
        let p = MeshPrimitive {
            normals: Some(vec![[0.0; 3]; 2]),
            tangents: Some(vec![[0.0; 4]; 2]),
            ..p.clone()
        };
        let job = |nrm: &mut [[f32; 3]], tan: &mut [[f32; 4]]| {
            SkinningJob {
                primitive: &p,
                morph_weights: &[],
                transform: rigid,
                method: SkinningMethod::Linear,
                out_positions: &mut [[0.0; 3]; 2],
                out_normals: Some(nrm),
                out_tangents: Some(tan),
            }
            .validate()
        };
        assert!(job(&mut [[0.0; 3]; 2], &mut [[0.0; 4]; 2]).is_ok());
        assert!(job(&mut [[0.0; 3]; 1], &mut [[0.0; 4]; 2]).is_err());
        assert!(job(&mut [[0.0; 3]; 2], &mut [[0.0; 4]; 3]).is_err());
        // Source stream length mismatch.
        let bad = MeshPrimitive { normals: Some(vec![[0.0; 3]; 1]), ..prim(vec![[0.0; 3]; 2]) };
        assert!(skin(&bad, &[], rigid).is_err());
    }

    #[test]
    fn two_influences_by_hand() {
        // Joint 0 translates by (2,0,0); joint 1 rotates 90 degrees about z and
        // translates by (0,0,4). Vertex (1,0,0), weights 0.25 / 0.75:
        // M = 0.25*T + 0.75*R: 0.25*(3,0,0) + 0.75*(0,1,4) = (0.75, 0.75, 3).
        let r = Matrix4::new_translation(&Vector3::new(0.0, 0.0, 4.0))
            * Matrix4::from_axis_angle(&Vector3::z_axis(), std::f32::consts::FRAC_PI_2);
        let palette = [translate(2.0, 0.0, 0.0), BoneMatrix::from_matrix(&r)];
        let p = skinned(vec![[1.0, 0.0, 0.0]], vec![0, 1, 0, 0], vec![0.25, 0.75, 0.0, 0.0]);
        let out = skin(&p, &[], SkinTransform::Palette(&palette)).unwrap();
        assert!(near(out[0], [0.75, 0.75, 3.0]), "{:?}", out[0]);
    }

    #[test]
    fn eight_influences_use_all_sets() {
        let palette: Vec<BoneMatrix> = (0..8).map(|i| translate(i as f32, 0.0, 0.0)).collect();
        let p = MeshPrimitive {
            influences: Some(Influences {
                per_vertex: 8,
                joints: (0..8).collect(),
                weights: vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5],
            }),
            ..prim(vec![[0.0; 3]])
        };
        let out = skin(&p, &[], SkinTransform::Palette(&palette)).unwrap();
        assert!(near(out[0], [6.5, 0.0, 0.0]), "{:?}", out[0]);
    }

    #[test]
    fn morph_then_skin_and_sparse_equals_dense() {
        let n = 6;
        let base: Vec<[f32; 3]> = (0..n).map(|i| [i as f32, 1.0, 0.0]).collect();
        let mut d1 = vec![[0.0; 3]; n];
        d1[1] = [0.0, 0.0, 1.0];
        d1[4] = [1.0, 2.0, 3.0];
        let d2: Vec<[f32; 3]> = (0..n).map(|i| [0.0, i as f32, 0.0]).collect();
        let make = |sparse: bool| {
            let pack = |d: &Vec<[f32; 3]>| {
                if sparse { MorphDeltas::compact(d.clone()) } else { MorphDeltas::Dense(d.clone()) }
            };
            MeshPrimitive {
                normals: Some(vec![[0.0, 0.0, 1.0]; n]),
                morph_targets: vec![
                    MorphTarget { positions: Some(pack(&d1)), normals: Some(pack(&d1)), tangents: None },
                    MorphTarget { positions: Some(pack(&d2)), normals: None, tangents: None },
                    // Weight 0: skipped, its (huge) deltas must not show.
                    MorphTarget {
                        positions: Some(MorphDeltas::Dense(vec![[1e9; 3]; n])),
                        normals: None,
                        tangents: None,
                    },
                ],
                ..prim(base.clone())
            }
        };
        let sparse = make(true);
        assert!(matches!(sparse.morph_targets[0].positions, Some(MorphDeltas::Sparse { .. })));
        // Turned, scaled and moved: morphing after skinning (or skinning the
        // deltas as points) gives other positions and normals than the
        // definition, morph first, then skin.
        let m = Matrix4::new_translation(&Vector3::new(0.0, 0.0, 10.0))
            * Matrix4::from_axis_angle(&Vector3::z_axis(), std::f32::consts::FRAC_PI_2)
            * Matrix4::new_scaling(2.0);
        let w = [0.5, 2.0, 0.0];
        let run = |p: &MeshPrimitive| {
            let (mut pos, mut nrm) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
            SkinningJob {
                primitive: p,
                morph_weights: &w,
                transform: SkinTransform::Rigid(m),
                method: SkinningMethod::Linear,
                out_positions: &mut pos,
                out_normals: Some(&mut nrm),
                out_tangents: None,
            }
            .run()
            .unwrap();
            (pos, nrm)
        };
        let (ps, ns) = run(&sparse);
        let (pd, nd) = run(&make(false));
        assert_eq!(ps, pd);
        assert_eq!(ns, nd);
        // Vertex 4: (4,1,0) + 0.5*(1,2,3) + 2*(0,4,0) = (4.5, 10, 1.5); then
        // scaled by 2 (9, 20, 3), turned 90 degrees about z (-20, 9, 3) and
        // moved +10 in z.
        assert!(near(ps[4], [-20.0, 9.0, 13.0]), "{:?}", ps[4]);
        // Its normal: (0,0,1) + 0.5*(1,2,3) = (0.5,1,2.5), turned (-1,0.5,2.5), normalised.
        let len = (0.25f32 + 1.0 + 6.25).sqrt();
        assert!(near(ns[4], [-1.0 / len, 0.5 / len, 2.5 / len]), "{:?}", ns[4]);
    }

    #[test]
    fn rigid_transform_moves_all_vertices() {
        let m = Matrix4::new_translation(&Vector3::new(1.0, 2.0, 3.0))
            * Matrix4::from_axis_angle(&Vector3::x_axis(), std::f32::consts::FRAC_PI_2);
        let p = MeshPrimitive {
            normals: Some(vec![[0.0, 1.0, 0.0]; 2]),
            tangents: Some(vec![[0.0, 0.0, 2.0, -1.0]; 2]),
            ..prim(vec![[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
        };
        let (pos, nrm, tan) = skin_all(&p, SkinTransform::Rigid(m));
        // 90 degrees about x maps y to z.
        assert!(near(pos[0], [1.0, 2.0, 4.0]));
        assert!(near(pos[1], [2.0, 2.0, 3.0]));
        assert!(near(nrm[0], [0.0, 0.0, 1.0]));
        assert!(near([tan[1][0], tan[1][1], tan[1][2]], [0.0, -1.0, 0.0]));
        assert_eq!(tan[1][3], -1.0);
        // Rigid also ignores influences when a primitive has them.
        let s = skinned(vec![[0.0; 3]], vec![9, 9, 9, 9], vec![1.0, 0.0, 0.0, 0.0]);
        assert!(near(skin(&s, &[], SkinTransform::Rigid(m)).unwrap()[0], [1.0, 2.0, 3.0]));
    }

    #[test]
    fn non_uniform_scale_keeps_normal_perpendicular() {
        // A tilted plane through the origin spanned by e1, e2; its normal n.
        let e1 = Vector3::new(1.0, 1.0, 0.0);
        let e2 = Vector3::new(0.0, 1.0, 1.0);
        let n = e1.cross(&e2).normalize();
        let m = Matrix4::from_axis_angle(&Vector3::y_axis(), 0.7)
            * Matrix4::new_nonuniform_scaling(&Vector3::new(3.0, 0.5, 1.5));
        let m3 = m.fixed_view::<3, 3>(0, 0).into_owned();
        let p = MeshPrimitive {
            normals: Some(vec![[n.x, n.y, n.z]]),
            tangents: Some(vec![[e1.x, e1.y, e1.z, 1.0]]),
            ..prim(vec![[0.0; 3]])
        };
        let (_, nrm, tan) = skin_all(&p, SkinTransform::Rigid(m));
        let out = Vector3::from(nrm[0]);
        assert!((out.norm() - 1.0).abs() < 1e-5);
        assert!(out.dot(&(m3 * e1)).abs() < 1e-5);
        assert!(out.dot(&(m3 * e2)).abs() < 1e-5);
        // Same side as the naively transformed normal.
        assert!(out.dot(&(m3 * n)) > 0.0);
        assert!(near([tan[0][0], tan[0][1], tan[0][2]], (m3 * e1).normalize().into()));
        // Skinned with a blend of two such matrices, the normal is perpendicular
        // to the surface transformed by the blended matrix.
        let m2 = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 4.0, 0.25));
        let palette = [BoneMatrix::from_matrix(&m), BoneMatrix::from_matrix(&m2)];
        let s = MeshPrimitive {
            influences: Some(Influences {
                per_vertex: 4,
                joints: vec![0, 1, 0, 0],
                weights: vec![0.3, 0.7, 0.0, 0.0],
            }),
            ..p.clone()
        };
        let (_, nrm, _) = skin_all(&s, SkinTransform::Palette(&palette));
        let blended = (m * 0.3 + m2 * 0.7).fixed_view::<3, 3>(0, 0).into_owned();
        let out = Vector3::from(nrm[0]);
        assert!(out.dot(&(blended * e1)).abs() < 1e-5);
        assert!(out.dot(&(blended * e2)).abs() < 1e-5);
    }

    #[test]
    fn general_matrix_matches_nalgebra() {
        // Every entry of the matrix and of each vector non-zero, so each
        // product in the hand-written transforms counts.
        let axis = nalgebra::Unit::new_normalize(Vector3::new(0.3, -0.8, 0.5));
        let m = Matrix4::new_translation(&Vector3::new(0.4, -1.2, 2.5))
            * Matrix4::from_axis_angle(&axis, 1.1)
            * Matrix4::new_nonuniform_scaling(&Vector3::new(1.7, 0.6, 2.2));
        let a = m.fixed_view::<3, 3>(0, 0).into_owned();
        let (p, n, t) =
            (Vector3::new(0.7, -0.3, 1.9), Vector3::new(-0.2, 0.9, 0.4), Vector3::new(0.8, 0.5, -0.6));
        let prim = MeshPrimitive {
            normals: Some(vec![n.into()]),
            tangents: Some(vec![[t.x, t.y, t.z, -1.0]]),
            ..prim(vec![p.into()])
        };
        let (pos, nrm, tan) = skin_all(&prim, SkinTransform::Rigid(m));
        assert!(near(pos[0], (a * p + m.fixed_view::<3, 1>(0, 3)).into()), "{:?}", pos[0]);
        let normal = (a.try_inverse().unwrap().transpose() * n).normalize();
        assert!(near(nrm[0], normal.into()), "{:?} vs {normal:?}", nrm[0]);
        assert!(near([tan[0][0], tan[0][1], tan[0][2]], (a * t).normalize().into()), "{:?}", tan[0]);
        assert_eq!(tan[0][3], -1.0);
    }

    #[test]
    fn mirrored_matrix_keeps_orientation() {
        // Mirror in x: the plane x = 1 with outward normal +x becomes x = -1
        // with outward normal -x, which is what inverse-transpose gives.
        let m = Matrix4::new_nonuniform_scaling(&Vector3::new(-2.0, 1.0, 1.0));
        let p = MeshPrimitive {
            normals: Some(vec![[1.0, 0.0, 0.0]]),
            tangents: Some(vec![[0.0, 1.0, 0.0, 1.0]]),
            ..prim(vec![[1.0, 0.0, 0.0]])
        };
        let (pos, nrm, _) = skin_all(&p, SkinTransform::Rigid(m));
        assert!(near(pos[0], [-2.0, 0.0, 0.0]));
        assert!(near(nrm[0], [-1.0, 0.0, 0.0]), "{:?}", nrm[0]);
    }

    #[test]
    fn zero_normals_stay_zero() {
        let p = MeshPrimitive {
            normals: Some(vec![[0.0; 3], [0.0, 0.0, 1.0]]),
            tangents: Some(vec![[0.0; 4], [1.0, 0.0, 0.0, 1.0]]),
            ..prim(vec![[0.0; 3]; 2])
        };
        // A singular matrix flattening z: the second normal collapses as well.
        let m = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 1.0, 0.0));
        let (_, nrm, tan) = skin_all(&p, SkinTransform::Rigid(m));
        assert_eq!(nrm[0], [0.0; 3]);
        assert_eq!(tan[0], [0.0; 4]);
        assert!(nrm[1].iter().chain(tan[1].iter()).all(|v| v.is_finite()));
    }

    #[test]
    fn empty_primitive_is_fine() {
        assert!(skin(&skinned(vec![], vec![], vec![]), &[], SkinTransform::Palette(&[])).unwrap().is_empty());
    }
}
