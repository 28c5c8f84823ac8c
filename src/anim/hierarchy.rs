//! Hierarchy: local transforms to model-space matrices, and model matrices to
//! the skinning palette.
//!
//! It never samples or blends: local transforms in, matrices out, in the
//! caller's buffers, without allocating.
//!
//! Column vectors throughout: `model[j] = model[parent[j]] * local[j]` and
//! `skin[i] = model[skin.joints[i]] * inverse_bind[i]`.

pub mod batch;

use super::job::{JobError, check_len};
use super::lanes8::Simd;
use super::skeleton::{BoneMatrix, NO_PARENT, Skeleton, Skin};
use super::transform::{Transform, trs_columns};
use nalgebra::Matrix4;
use wide::f32x4;

/// The rows above the bottom row (which is 0, 0, 0, 1) of
/// `to_matrix()` of four local transforms, with `Transform::to_matrix`'s
/// arithmetic, one joint per SIMD lane: the same operations in each lane,
/// so the same bits. As in ozz-animation, the conversion runs four joints
/// at a time; only the products down the hierarchy need the parent first.
/// Element `[c * 3 + r][k]` is row `r` of column `c` (3: the translation)
/// of joint `k`: left in lanes, where the product broadcasts each element
/// from memory, rather than shuffled joint by joint into matrices.
#[inline(always)]
fn local_rows4(locals: &[Transform]) -> [[f32; 4]; 12] {
    let lane =
        |f: fn(&Transform) -> f32| f32x4::from([f(&locals[0]), f(&locals[1]), f(&locals[2]), f(&locals[3])]);
    let (x, y, z, w) =
        (lane(|l| l.rotation.i), lane(|l| l.rotation.j), lane(|l| l.rotation.k), lane(|l| l.rotation.w));
    let (sx, sy, sz) = (lane(|l| l.scale.x), lane(|l| l.scale.y), lane(|l| l.scale.z));
    let (tx, ty, tz) = (lane(|l| l.translation.x), lane(|l| l.translation.y), lane(|l| l.translation.z));
    trs_columns([tx, ty, tz], [x, y, z, w], [sx, sy, sz], f32x4::ONE, f32x4::splat(2.0)).map(f32x4::to_array)
}

/// The four columns of `m`, one SIMD value each.
#[inline(always)]
fn columns(m: &Matrix4<f32>) -> [f32x4; 4] {
    let c = &m.data.0;
    [f32x4::from(c[0]), f32x4::from(c[1]), f32x4::from(c[2]), f32x4::from(c[3])]
}

/// Concatenates local transforms down the hierarchy into model space.
#[derive(Debug)]
pub struct LocalToModelJob<'a> {
    /// Parent of each joint (`NO_PARENT` for roots), always before the child.
    pub parents: &'a [u32],
    /// Local transform of each joint.
    pub locals: &'a [Transform],
    /// Matrix that roots are attached to (identity for model space).
    pub root: Matrix4<f32>,
    /// Model matrix of each joint.
    pub output: &'a mut [Matrix4<f32>],
}

impl LocalToModelJob<'_> {
    /// Checks lengths and that every parent comes before its child, which is
    /// what lets one forward pass read finished parents.
    pub fn validate(&self) -> Result<(), JobError> {
        check_len("local to model: locals", self.locals.len(), self.parents.len())?;
        check_len("local to model: output", self.output.len(), self.parents.len())?;
        for (j, &p) in self.parents.iter().enumerate() {
            if p != NO_PARENT && p as usize >= j {
                return Err(JobError::new(format!(
                    "local to model: joint {j} has parent {p}, which does not come before it"
                )));
            }
        }
        Ok(())
    }

    /// Validates, then computes every model matrix. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        concatenate(self.parents, self.locals, &self.root, self.output);
        Ok(())
    }
}

/// [`LocalToModelJob`] over a [`Skeleton`], whose parents were checked when
/// it was built: only the lengths are checked per call.
pub fn skeleton_to_model(
    skeleton: &Skeleton,
    locals: &[Transform],
    root: &Matrix4<f32>,
    output: &mut [Matrix4<f32>],
) -> Result<(), JobError> {
    check_len("local to model: locals", locals.len(), skeleton.len())?;
    check_len("local to model: output", output.len(), skeleton.len())?;
    concatenate(skeleton.parents(), locals, root, output);
    Ok(())
}

/// [`skeleton_to_model`] over the matrices of the last call, replacing
/// them: whether any changed (bit for bit). A character's output is
/// computed in place this way, and uploaded only when it changed.
pub fn skeleton_to_model_in_place(
    skeleton: &Skeleton,
    locals: &[Transform],
    root: &Matrix4<f32>,
    output: &mut [Matrix4<f32>],
) -> Result<bool, JobError> {
    check_len("local to model: locals", locals.len(), skeleton.len())?;
    check_len("local to model: output", output.len(), skeleton.len())?;
    Ok(concatenate_with::<true>(skeleton.parents(), locals, root, output, Simd::detect()))
}

/// Every model matrix, parents before children (the caller checked the
/// order and the lengths).
///
/// The local matrices are affine, so each product is the parent's
/// columns times the local's upper three rows: a 4x3 product, one SIMD
/// column (four rows) per operation. The sums run in nalgebra's order,
/// so the matrices are bit for bit `parent * local.to_matrix()`.
fn concatenate(parents: &[u32], locals: &[Transform], root: &Matrix4<f32>, output: &mut [Matrix4<f32>]) {
    concatenate_with::<false>(parents, locals, root, output, Simd::detect());
}

/// `concatenate` with the instructions `simd` names; with `COMPARE`,
/// whether any bit of `output` changed.
fn concatenate_with<const COMPARE: bool>(
    parents: &[u32],
    locals: &[Transform],
    root: &Matrix4<f32>,
    output: &mut [Matrix4<f32>],
    simd: Simd,
) -> bool {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and FMA.
        Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe {
            concatenate_avx2::<COMPARE>(parents, locals, root, output)
        },
        _ => concatenate_joints::<COMPARE>(parents, locals, root, output),
    }
}

/// `concatenate_joints` compiled for AVX2: the same four-lane operations
/// (no fused multiply-add is formed), in three-operand form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn concatenate_avx2<const COMPARE: bool>(
    parents: &[u32],
    locals: &[Transform],
    root: &Matrix4<f32>,
    output: &mut [Matrix4<f32>],
) -> bool {
    concatenate_joints::<COMPARE>(parents, locals, root, output)
}

/// With `COMPARE`, each matrix is compared bit for bit with the one it
/// replaces, as it is stored (whether any changed is returned): one pass
/// over the output instead of a copy and a comparison after it.
#[inline(always)]
fn concatenate_joints<const COMPARE: bool>(
    parents: &[u32],
    locals: &[Transform],
    root: &Matrix4<f32>,
    output: &mut [Matrix4<f32>],
) -> bool {
    let root = columns(root);
    // The previous joint's matrix stays in registers: in a chain it is
    // the parent, and reading it back from memory would lengthen the
    // dependency from one joint to the next.
    let mut previous = root;
    let mut block = [[0.0; 4]; 12];
    let mut difference = f32x4::ZERO;
    for (j, (&p, local)) in parents.iter().zip(locals).enumerate() {
        let [p0, p1, p2, p3] = if p == NO_PARENT {
            root
        } else if p as usize + 1 == j {
            previous
        } else {
            columns(&output[p as usize])
        };
        if j % 4 == 0 {
            let rest = &locals[j..];
            block = if rest.len() >= 4 {
                local_rows4(rest)
            } else {
                // The last joints: the other lanes repeat this one.
                let mut four = [*local; 4];
                four[..rest.len()].copy_from_slice(rest);
                local_rows4(&four)
            };
        }
        let k = j % 4;
        let l = |i: usize| f32x4::splat(block[i][k]);
        // `p3 * 0` is kept: it is what the full product adds (a signed
        // zero, or NaN for an infinite parent).
        let p3_zero = p3 * f32x4::ZERO;
        previous = [
            p0 * l(0) + p1 * l(1) + p2 * l(2) + p3_zero,
            p0 * l(3) + p1 * l(4) + p2 * l(5) + p3_zero,
            p0 * l(6) + p1 * l(7) + p2 * l(8) + p3_zero,
            p0 * l(9) + p1 * l(10) + p2 * l(11) + p3,
        ];
        if COMPARE {
            let old = columns(&output[j]);
            for (new, old) in previous.iter().zip(old) {
                difference |= *new ^ old;
            }
        }
        output[j].data.0 = previous.map(f32x4::to_array);
    }
    COMPARE && difference.to_array().iter().any(|d| d.to_bits() != 0)
}

/// Builds the skinning palette of one skin from model matrices.
#[derive(Debug)]
pub struct PaletteJob<'a> {
    /// The skin: joint list and inverse bind matrices.
    pub skin: &'a Skin,
    /// Model matrix of every skeleton joint.
    pub models: &'a [Matrix4<f32>],
    /// One entry per skin joint.
    pub output: &'a mut [BoneMatrix],
}

impl PaletteJob<'_> {
    /// Checks lengths and that every skin joint exists in `models`.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.skin.joints.len();
        check_len("palette: inverse_binds", self.skin.inverse_binds.len(), n)?;
        check_len("palette: output", self.output.len(), n)?;
        // The largest joint first (a vectorised pass); the first one out
        // of range only to name it.
        let models = self.models.len();
        if self.skin.joints.iter().copied().max().is_some_and(|j| j as usize >= models)
            && let Some((i, j)) = self.skin.joints.iter().enumerate().find(|&(_, &j)| j as usize >= models)
        {
            return Err(JobError::new(format!(
                "palette: skin joint {i} is skeleton joint {j}, only {models} model matrices"
            )));
        }
        Ok(())
    }

    /// Validates, then writes `models[joints[i]] * inverse_binds[i]`, one
    /// SIMD column per operation, bit for bit nalgebra's product. Never allocates.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(Simd::detect())
    }

    /// `run` with the instructions `simd` names.
    fn run_with(&mut self, simd: Simd) -> Result<(), JobError> {
        self.validate()?;
        let (joints, inverse_binds) = (&self.skin.joints[..], &self.skin.inverse_binds[..]);
        match simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has AVX2 and FMA.
            Simd::Avx2 | Simd::Avx512 if Simd::avx2_available() => unsafe {
                palette_avx2(self.models, joints, inverse_binds, self.output)
            },
            _ => palette(self.models, joints, inverse_binds, self.output),
        }
        Ok(())
    }
}

/// `palette` in 256-bit operations: two columns of a product per
/// operation, each lane the same multiplies and adds in the same order
/// as `column` (no fused multiply-add), so the same bits. The model
/// matrix's columns are loaded into both halves; each pair of inverse
/// bind columns is loaded once, and lane-permuted to give the element of
/// each half that a term multiplies.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn palette_avx2(
    models: &[Matrix4<f32>],
    joints: &[u32],
    inverse_binds: &[Matrix4<f32>],
    output: &mut [BoneMatrix],
) {
    use std::arch::x86_64::{
        __m128, __m256, _mm256_add_ps, _mm256_broadcast_ps, _mm256_loadu_ps, _mm256_mul_ps,
        _mm256_permutevar8x32_ps, _mm256_setr_epi32, _mm256_storeu_ps,
    };
    // Term `k` of both columns of a pair: element k of the low column in
    // the low half, of the high column in the high half.
    let term = [0, 1, 2, 3].map(|k| _mm256_setr_epi32(k, k, k, k, k + 4, k + 4, k + 4, k + 4));
    for ((out, &j), ib) in output.iter_mut().zip(joints).zip(inverse_binds) {
        let model = &models[j as usize].data.0;
        // SAFETY: each load reads 4 or 8 floats within a 16-float matrix,
        // each store 8 within a 16-float palette entry.
        unsafe {
            let m = model.each_ref().map(|c| _mm256_broadcast_ps(&*c.as_ptr().cast::<__m128>()));
            let columns = ib.data.0.as_ptr().cast::<f32>();
            let pair = |cols: __m256| {
                let t = |k: usize| _mm256_mul_ps(m[k], _mm256_permutevar8x32_ps(cols, term[k]));
                _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(t(0), t(1)), t(2)), t(3))
            };
            let skin = out.skin.as_mut_ptr();
            _mm256_storeu_ps(skin, pair(_mm256_loadu_ps(columns)));
            _mm256_storeu_ps(skin.add(8), pair(_mm256_loadu_ps(columns.add(8))));
        }
    }
}

/// `output[i] = models[joints[i]] * inverse_binds[i]` (validated).
#[inline(always)]
fn palette(
    models: &[Matrix4<f32>],
    joints: &[u32],
    inverse_binds: &[Matrix4<f32>],
    output: &mut [BoneMatrix],
) {
    for ((out, &j), ib) in output.iter_mut().zip(joints).zip(inverse_binds) {
        let m = columns(&models[j as usize]);
        let c = &ib.data.0;
        out.skin[0..4].copy_from_slice(&column(&m, &c[0]));
        out.skin[4..8].copy_from_slice(&column(&m, &c[1]));
        out.skin[8..12].copy_from_slice(&column(&m, &c[2]));
        out.skin[12..16].copy_from_slice(&column(&m, &c[3]));
    }
}

/// Column `c` of a product whose left side has columns `m`, in nalgebra's order.
#[inline(always)]
fn column([m0, m1, m2, m3]: &[f32x4; 4], c: &[f32; 4]) -> [f32; 4] {
    (*m0 * c[0] + *m1 * c[1] + *m2 * c[2] + *m3 * c[3]).to_array()
}

/// Model matrices of every joint computed in f64 from `locals`: reference
/// output (`dump`: scaled rigs drift by 1e-4 through f32 chains), not the
/// per-frame path. Allocates. A parent that does not come before its child
/// is treated as a root.
pub fn local_to_model_f64(parents: &[u32], locals: &[Transform]) -> Vec<Matrix4<f64>> {
    let mut world: Vec<Matrix4<f64>> = Vec::with_capacity(parents.len());
    for (local, &parent) in locals.iter().zip(parents) {
        let base = world.get(parent as usize).copied().unwrap_or_else(Matrix4::identity);
        world.push(base * local.to_matrix_f64());
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, UnitQuaternion, Vector3};
    use std::f32::consts::FRAC_PI_2;

    fn run_l2m(
        parents: &[u32],
        locals: &[Transform],
        root: Matrix4<f32>,
    ) -> Result<Vec<Matrix4<f32>>, JobError> {
        let mut out = vec![Matrix4::zeros(); parents.len()];
        LocalToModelJob { parents, locals, root, output: &mut out }.run()?;
        Ok(out)
    }

    #[test]
    fn rejects_bad_parent_order_and_lengths() {
        let l = [Transform::IDENTITY; 3];
        let id = Matrix4::identity();
        assert!(run_l2m(&[NO_PARENT, 0, 1], &l, id).is_ok());
        assert!(run_l2m(&[NO_PARENT, 0, 2], &l, id).is_err()); // self-parent
        assert!(run_l2m(&[NO_PARENT, 2, 0], &l, id).is_err()); // child first
        assert!(run_l2m(&[NO_PARENT, 0], &l, id).is_err());
        let mut out = vec![Matrix4::zeros(); 2];
        assert!(
            LocalToModelJob { parents: &[NO_PARENT, 0, 1], locals: &l, root: id, output: &mut out }
                .run()
                .is_err()
        );
    }

    #[test]
    fn three_joint_chain() {
        // Root translated by (1,0,0) and rotated 90 degrees about z; child moved
        // (2,0,0) in root space and scaled by 2; grandchild moved (1,0,0).
        let root = Transform {
            translation: Vector3::new(1.0, 0.0, 0.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), FRAC_PI_2),
            scale: Vector3::repeat(1.0),
        };
        let child = Transform {
            translation: Vector3::new(2.0, 0.0, 0.0),
            scale: Vector3::repeat(2.0),
            ..Transform::IDENTITY
        };
        let grandchild = Transform { translation: Vector3::new(1.0, 0.0, 0.0), ..Transform::IDENTITY };
        let world = Matrix4::new_translation(&Vector3::new(0.0, 0.0, 10.0));
        let m = run_l2m(&[NO_PARENT, 0, 1], &[root, child, grandchild], world).unwrap();
        let origin = |m: &Matrix4<f32>| m.transform_point(&Point3::origin());
        // Root origin: (1,0,10). Child: root * (2,0,0) = (1,2,10). Grandchild:
        // child scale 2 doubles its offset: (1,0,0) -> (2,0,0) -> rotated (0,2,0) -> (1,4,10).
        assert!((origin(&m[0]) - Point3::new(1.0, 0.0, 10.0)).norm() < 1e-5);
        assert!((origin(&m[1]) - Point3::new(1.0, 2.0, 10.0)).norm() < 1e-5);
        assert!((origin(&m[2]) - Point3::new(1.0, 4.0, 10.0)).norm() < 1e-5);
        assert!((m[2] - world * root.to_matrix() * child.to_matrix() * grandchild.to_matrix()).norm() < 1e-5);
    }

    fn skin(joints: Vec<u32>, ibs: Vec<Matrix4<f32>>) -> Skin {
        Skin { name: String::new(), joints, inverse_binds: ibs }
    }

    #[test]
    fn palette_rejects_bad_input() {
        let models = [Matrix4::identity(); 2];
        let mut out = [BoneMatrix::IDENTITY; 2];
        let ok = skin(vec![1, 0], vec![Matrix4::identity(); 2]);
        assert!(PaletteJob { skin: &ok, models: &models, output: &mut out }.run().is_ok());
        let bad_joint = skin(vec![1, 2], vec![Matrix4::identity(); 2]);
        assert!(PaletteJob { skin: &bad_joint, models: &models, output: &mut out }.run().is_err());
        let bad_ib = skin(vec![1, 0], vec![Matrix4::identity(); 1]);
        assert!(PaletteJob { skin: &bad_ib, models: &models, output: &mut out }.run().is_err());
        assert!(PaletteJob { skin: &ok, models: &models, output: &mut out[..1] }.run().is_err());
    }

    #[test]
    fn palette_is_model_times_inverse_bind() {
        let models = [
            Matrix4::new_translation(&Vector3::new(1.0, 2.0, 3.0)),
            Matrix4::new_nonuniform_scaling(&Vector3::new(2.0, 3.0, 4.0)),
        ];
        let ib = Matrix4::new_translation(&Vector3::new(0.0, -1.0, 0.0));
        let s = skin(vec![1, 0], vec![ib, ib]);
        let mut out = [BoneMatrix::IDENTITY; 2];
        PaletteJob { skin: &s, models: &models, output: &mut out }.run().unwrap();
        assert_eq!(out[0].to_matrix(), models[1] * ib);
        assert_eq!(out[1].to_matrix(), models[0] * ib);
        // Point (0,1,0) in bind space: ib moves it to the origin, joint 0's model
        // translation moves it to (1,2,3).
        let p = out[1].to_matrix().transform_point(&Point3::new(0.0, 1.0, 0.0));
        assert_eq!(p, Point3::new(1.0, 2.0, 3.0));
    }

    use crate::testing::lcg::Lcg;

    /// The next test value, in [-2, 2).
    fn next(rng: &mut Lcg) -> f32 {
        rng.between(-2.0, 2.0)
    }

    fn bits(m: &Matrix4<f32>) -> Vec<u32> {
        m.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn simd_products_are_bit_for_bit_nalgebra() {
        // Random transforms (zeros and negative zeros included, which a
        // reordered sum would turn into +0) under a root with a projective
        // bottom row, and random inverse binds.
        let mut rng = Lcg(3);
        // 42: ten blocks of four joints, and a last block of two.
        let n: usize = 42;
        let parents: Vec<u32> = (0..n)
            .map(|j| {
                if j == 0 { NO_PARENT } else { ((next(&mut rng).abs() * j as f32 / 2.0) as usize % j) as u32 }
            })
            .collect();
        let mut v = |zero: bool| if zero && next(&mut rng) > 1.0 { -0.0 } else { next(&mut rng) };
        let locals: Vec<Transform> = (0..n)
            .map(|j| Transform {
                translation: Vector3::new(v(j % 3 == 0), v(true), 0.0),
                rotation: UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
                    v(false),
                    v(true),
                    v(false),
                    v(j % 5 == 0),
                )),
                scale: Vector3::new(v(false), v(false), v(false)),
            })
            .collect();
        let mut root = Matrix4::from_fn(|_, _| next(&mut rng));
        root[(3, 1)] = -0.0;
        let models = run_l2m(&parents, &locals, root).unwrap();
        // Compiled for AVX2 (where the CPU has it) and portable: the same bits.
        for simd in [Simd::Avx2, Simd::Portable] {
            let mut again = vec![Matrix4::zeros(); n];
            concatenate_with::<false>(&parents, &locals, &root, &mut again, simd);
            assert_eq!(
                again.iter().map(bits).collect::<Vec<_>>(),
                models.iter().map(bits).collect::<Vec<_>>()
            );
        }
        let mut expected: Vec<Matrix4<f32>> = Vec::new();
        for (j, &p) in parents.iter().enumerate() {
            let parent = if p == NO_PARENT { root } else { expected[p as usize] };
            expected.push(parent * locals[j].to_matrix());
        }
        for (j, (m, e)) in models.iter().zip(&expected).enumerate() {
            assert_eq!(bits(m), bits(e), "joint {j}");
        }
        // Over a skeleton (its order checked once, when it was built): the same.
        let names = (0..n).map(|j| format!("j{j}")).collect();
        let skeleton = Skeleton::new(names, parents.clone(), locals.clone()).unwrap();
        let mut over_skeleton = vec![Matrix4::zeros(); n];
        skeleton_to_model(&skeleton, &locals, &root, &mut over_skeleton).unwrap();
        assert_eq!(over_skeleton, models);
        // In place over the last result: the same bits, and whether any changed.
        let mut in_place = vec![Matrix4::zeros(); n];
        assert!(skeleton_to_model_in_place(&skeleton, &locals, &root, &mut in_place).unwrap());
        assert_eq!(
            in_place.iter().map(bits).collect::<Vec<_>>(),
            models.iter().map(bits).collect::<Vec<_>>()
        );
        let mut moved = locals.clone();
        moved[n - 1].translation.y += 0.5;
        for simd in [Simd::Avx2, Simd::Portable] {
            assert!(!concatenate_with::<true>(&parents, &locals, &root, &mut in_place, simd), "{simd:?}");
            assert!(concatenate_with::<true>(&parents, &moved, &root, &mut in_place, simd), "{simd:?}");
            assert!(concatenate_with::<true>(&parents, &locals, &root, &mut in_place, simd), "{simd:?}");
        }
        assert!(skeleton_to_model_in_place(&skeleton, &locals[1..], &root, &mut in_place).is_err());
        assert!(skeleton_to_model(&skeleton, &locals[1..], &root, &mut over_skeleton).is_err());
        assert!(skeleton_to_model(&skeleton, &locals, &root, &mut over_skeleton[1..]).is_err());
        let ibs: Vec<Matrix4<f32>> = (0..n).map(|_| Matrix4::from_fn(|_, _| next(&mut rng))).collect();
        let s = skin((0..n as u32).rev().collect(), ibs.clone());
        let mut out = vec![BoneMatrix::IDENTITY; n];
        for simd in [Simd::Avx2, Simd::Portable] {
            PaletteJob { skin: &s, models: &models, output: &mut out }.run_with(simd).unwrap();
            for (i, o) in out.iter().enumerate() {
                assert_eq!(bits(&o.to_matrix()), bits(&(models[n - 1 - i] * ibs[i])), "palette {i} {simd:?}");
            }
        }
    }
}
