//! Detail levels: coarser triangle lists of each primitive, for characters
//! so far away that the full mesh's triangles shrink below a pixel.
//!
//! A crowd of 100,000 framed whole puts every character a few pixels tall,
//! yet each still draws thousands of triangles: hardware rasterisers then
//! spend their time on triangles that cover no sample (the lod guide
//! page, "Detail levels"). Level `k` keeps about `4^-k` of the triangles,
//! simplified by meshoptimizer's edge collapser (the `meshopt` crate) from
//! the full list in the rest pose in scene space, weighing normals and the
//! vertices' positions in poses sampled from the clips besides the rest
//! positions, so each level's error is a distance in scene units: the draw
//! order (`render::draw_order`) projects it to pixels per character and
//! picks the coarsest level within half a pixel. A flat-shaded primitive,
//! whose every edge is a seam, is simplified with its coincident vertices
//! welded (`welded`). The last level, for characters a few pixels tall,
//! may collapse across seams (`ACROSS_SEAMS_FROM`): 100,000 built-in
//! characters framed whole at 1280x720 draw it almost all, 88 triangles
//! each where level 3 has 264.
//!
//! Built once per upload, on the host: about 11 ms for the built-in
//! character (9,524 triangles) on one core of a Zen 5 EPYC, memory
//! proportional to the largest primitive's vertices (15 floats each,
//! twice).
//!
//! Only the index lists change: every level reads the same skinned vertices
//! (of which the skin pass skins only those a character's level uses,
//! `render::skin_levels`), so the palettes and the GPU pose do not know
//! about levels.

use crate::anim::sampling::sample_joint;
use crate::anim::{BoneMatrix, MeshInstance, MeshPrimitive, SkinnedPose, Transform, skeleton_to_model};
use crate::asset::Model;
use nalgebra::Matrix4;

mod welded;

/// Levels per primitive, level 0 being the full mesh.
pub const DETAIL_LEVELS: usize = 5;

/// Each level's triangle budget is the previous one's divided by this.
const REDUCTION: usize = 4;

/// The most level `k` may depart from the full mesh, as a share of the
/// primitive's extent: the simplifier stops short of its triangle budget
/// rather than pass it. Without it one primitive that cannot lose triangles
/// gracefully (a few-triangle prop) would set a huge error for the model's
/// whole level, and the level would never be drawn.
const ERROR_CAP: [f32; DETAIL_LEVELS] = [0.0, 0.005, 0.02, 0.08, 0.2];

/// From this level on the simplifier may collapse across attribute seams
/// (texture and normal discontinuities). A character drawn there is a few
/// pixels tall, so a seam's two sides share a pixel anyway; kept, the seams
/// stop a textured mesh far above its budget (CesiumMan's level 3 keeps
/// 644 of its 4,672 triangles where the budget is 73, and 600 at level 4;
/// across its seams, 16).
const ACROSS_SEAMS_FROM: usize = 4;

/// Primitives below this many triangles keep their full list at every
/// level: there is nothing worth removing.
const MIN_TRIANGLES: usize = 16;

/// Animation poses the simplifier also measures each level in, sampled
/// from the model's clips (the rest pose again when it has none).
const POSES: usize = 3;

/// Per-vertex attributes the simplifier weighs besides the rest position:
/// the normal (3), then the vertex's position in each sampled pose (3 each).
const ATTRIBUTES: usize = 3 + 3 * POSES;

/// What a unit of normal deviation costs, in units of the primitive's
/// extent: a normal turned by 0.1 counts as a 2.5 % shift of the surface,
/// so a level that flattens the shading is drawn only where that is tiny.
const NORMAL_WEIGHT: f32 = 0.25;

/// A model's detail levels: per primitive, the coarser index lists; per
/// level, the largest error any primitive's list makes.
#[derive(Debug, Clone, Default)]
pub struct DetailLevels {
    /// Per primitive of the model (mesh-major, as `GpuModel::primitives`),
    /// the primitive-local index lists of levels 1.. (level 0 is the
    /// primitive's own); empty lists mean "the level above's".
    pub primitives: Vec<[Vec<u32>; DETAIL_LEVELS - 1]>,
    /// The largest distance, in the rest pose's scene units, by which any
    /// level-`k` surface departs from the full mesh, its normals and its
    /// skinning counted as above (0 at level 0; never decreasing with `k`).
    pub error: [f32; DETAIL_LEVELS],
    /// A sphere around the rest pose and the sampled poses in scene space:
    /// `[x, y, z, radius]`.
    pub bounds: [f32; 4],
}

impl DetailLevels {
    /// Simplifies every primitive of `model` drawn by some instance, in the
    /// rest pose (the skeleton's own transforms: the pose animations move
    /// from, at the scale they draw), measuring each level's error in a few
    /// poses of its clips too: a straight limb may lose its rings in the
    /// rest pose for free, but not once it bends. A primitive that cannot
    /// be simplified safely (no drawing instance, non-finite data, too few
    /// triangles) keeps its full list at every level.
    pub fn build(model: &Model) -> DetailLevels {
        let poses = ModelPoses::new(model);
        let mut levels = DetailLevels::default();
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        let mut vertices = PlacedVertices::default();
        for (m, mesh) in model.meshes.iter().enumerate() {
            let instance = model.instances.iter().find(|i| i.mesh == m);
            for prim in &mesh.primitives {
                let simplified = match (instance, &poses) {
                    (Some(instance), Some(poses)) if poses.place(instance, prim, &mut vertices) => {
                        // Every pose's vertices: the bounds hold the animation.
                        let posed =
                            vertices.attributes.chunks_exact(ATTRIBUTES).flat_map(|a| a[3..].chunks_exact(3));
                        for p in vertices.positions.iter().map(|p| &p[..]).chain(posed) {
                            for c in 0..3 {
                                lo[c] = lo[c].min(p[c]);
                                hi[c] = hi[c].max(p[c]);
                            }
                        }
                        let (indices, positions, attributes) =
                            (&prim.indices, &vertices.positions, &vertices.attributes);
                        let own = simplify_primitive(indices, positions, attributes);
                        // Most edges seams (flat shading): the first level
                        // keeps more than half the triangles, or nothing
                        // is gained at all. Weld the copies, if that does better.
                        let kept = |l: &[Vec<u32>]| if l[0].is_empty() { indices.len() } else { l[0].len() };
                        match own {
                            Some((lists, errors)) if kept(&lists) * 2 > indices.len() => {
                                let uvs = prim.uvs.as_deref();
                                let welded = welded::simplify_welded(indices, positions, attributes, uvs);
                                welded.filter(|(w, _)| kept(w) < kept(&lists)).or(Some((lists, errors)))
                            }
                            own => own,
                        }
                    }
                    _ => None,
                };
                let (lists, error) = simplified.unwrap_or_default();
                // Each primitive's errors never decrease with the level,
                // so neither do their maxima.
                for (e, k) in levels.error.iter_mut().zip(error) {
                    *e = e.max(k);
                }
                levels.primitives.push(lists);
            }
        }
        if lo[0] <= hi[0] {
            let centre: [f32; 3] = std::array::from_fn(|c| 0.5 * (lo[c] + hi[c]));
            let half: [f32; 3] = std::array::from_fn(|c| 0.5 * (hi[c] - lo[c]));
            let radius = (half[0] * half[0] + half[1] * half[1] + half[2] * half[2]).sqrt();
            levels.bounds = [centre[0], centre[1], centre[2], radius];
        }
        levels
    }
}

/// One primitive's vertices: rest positions, and per vertex the
/// `ATTRIBUTES` floats (rest normal, position in each sampled pose).
#[derive(Default)]
struct PlacedVertices {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    posed: Vec<[f32; 3]>,
    attributes: Vec<f32>,
}

/// One pose of the model's skeleton, ready to skin with.
struct Posed {
    world: Vec<Matrix4<f32>>,
    palettes: Vec<BoneMatrix>,
}

impl Posed {
    /// The pose of `locals`; `None` when its palettes cannot be computed.
    fn new(model: &Model, locals: &[Transform]) -> Option<Posed> {
        let mut world = vec![Matrix4::identity(); model.skeleton.len()];
        skeleton_to_model(&model.skeleton, locals, &Matrix4::identity(), &mut world).ok()?;
        let mut palettes = vec![BoneMatrix::IDENTITY; model.palette_len()];
        model.write_palettes(&world, &mut palettes).ok()?;
        Some(Posed { world, palettes })
    }

    /// Skins `prim` as `instance` places it, the way the CPU reference does.
    fn skin(
        &self,
        model: &Model,
        instance: &MeshInstance,
        prim: &MeshPrimitive,
        positions: &mut [[f32; 3]],
        normals: Option<&mut [[f32; 3]]>,
    ) -> bool {
        let pose = SkinnedPose {
            palettes: &self.palettes,
            palette_ranges: model.palette_ranges(),
            world: &self.world,
            world_joints: None,
            morph_weights: &model.rest_morph_weights,
        };
        pose.skin_primitive(instance, prim, positions, normals).is_ok()
    }
}

/// The rest pose and `POSES` poses sampled from the clips.
struct ModelPoses<'a> {
    model: &'a Model,
    rest: Posed,
    sampled: Vec<Posed>,
}

impl<'a> ModelPoses<'a> {
    /// `None` when the rest pose's palettes cannot be computed (then no
    /// level is built).
    fn new(model: &'a Model) -> Option<Self> {
        let rest_locals = model.skeleton.rest();
        let rest = Posed::new(model, rest_locals)?;
        let mut sampled = Vec::with_capacity(POSES);
        let mut locals = rest_locals.to_vec();
        for p in 0..POSES {
            // Clips in turn, each at a different phase.
            let Some(clip) = model.clips.get(p % model.clips.len().max(1)) else { break };
            let time = f64::from(clip.duration) * (p as f64 + 0.5) / POSES as f64;
            locals.copy_from_slice(rest_locals);
            for tracks in &clip.joint_tracks {
                let j = tracks.joint as usize;
                if let Some(rest) = rest_locals.get(j) {
                    locals[j] = sample_joint(tracks, time, rest, model.rotation_blend());
                }
            }
            if let Some(posed) = Posed::new(model, &locals) {
                sampled.push(posed);
            }
        }
        Some(ModelPoses { model, rest, sampled })
    }

    /// Fills `out` with `prim` as `instance` places it; false when that
    /// fails or leaves a non-finite value.
    fn place(&self, instance: &MeshInstance, prim: &MeshPrimitive, out: &mut PlacedVertices) -> bool {
        let n = prim.vertex_count();
        for v in [&mut out.positions, &mut out.normals, &mut out.posed] {
            v.clear();
            v.resize(n, [0.0; 3]);
        }
        let normals = prim.normals.is_some().then_some(&mut out.normals[..]);
        if !self.rest.skin(self.model, instance, prim, &mut out.positions, normals) {
            return false;
        }
        out.attributes.clear();
        out.attributes.resize(n * ATTRIBUTES, 0.0);
        for (v, attributes) in out.attributes.chunks_exact_mut(ATTRIBUTES).enumerate() {
            attributes[..3].copy_from_slice(&out.normals[v]);
        }
        for p in 0..POSES {
            // Without clips (or with fewer poses), the rest pose again: no extra error.
            match self.sampled.get(p) {
                Some(pose) if !pose.skin(self.model, instance, prim, &mut out.posed, None) => return false,
                Some(_) => {}
                None => out.posed.copy_from_slice(&out.positions),
            }
            for (v, attributes) in out.attributes.chunks_exact_mut(ATTRIBUTES).enumerate() {
                attributes[3 + 3 * p..6 + 3 * p].copy_from_slice(&out.posed[v]);
            }
        }
        out.positions.iter().flatten().chain(&out.attributes).all(|c| c.is_finite())
    }
}

/// How level `k` is simplified: errors in scene units, and from
/// `ACROSS_SEAMS_FROM` on across attribute seams.
fn options(k: usize) -> meshopt::SimplifyOptions {
    let across_seams = if k >= ACROSS_SEAMS_FROM {
        meshopt::SimplifyOptions::Permissive
    } else {
        meshopt::SimplifyOptions::None
    };
    meshopt::SimplifyOptions::ErrorAbsolute | across_seams
}

/// Levels 1.. of one triangle list over `positions` (with `attributes`,
/// `ATTRIBUTES` per vertex, as `PlacedVertices` has them), with each
/// level's error in `positions`' units; `None` when the list is not a
/// valid triangle list over them (meshoptimizer asserts on those) or too small.
fn simplify_primitive(
    indices: &[u32],
    positions: &[[f32; 3]],
    attributes: &[f32],
) -> Option<([Vec<u32>; DETAIL_LEVELS - 1], [f32; DETAIL_LEVELS])> {
    let n = positions.len();
    let valid = indices.len().is_multiple_of(3) && indices.iter().all(|&i| (i as usize) < n);
    if !valid || indices.len() / 3 < MIN_TRIANGLES || attributes.len() != n * ATTRIBUTES {
        return None;
    }
    let bytes: &[u8] = bytemuck::cast_slice(positions);
    let vertices = meshopt::VertexDataAdapter::new(bytes, 12, 0).ok()?;
    // meshoptimizer measures attribute deviations in units of the
    // primitive's extent (it rescales positions to a unit box, and reports
    // the error scaled back): the posed positions, distances, are divided
    // by the extent to count at face value, as the rest positions do.
    let extent = meshopt::simplify_scale(&vertices);
    let mut scaled = attributes.to_vec();
    if extent > 0.0 {
        for v in scaled.chunks_exact_mut(ATTRIBUTES) {
            v[3..].iter_mut().for_each(|c| *c /= extent);
        }
    }
    let mut weights = [1.0; ATTRIBUTES];
    weights[..3].fill(NORMAL_WEIGHT);
    // No vertex is locked, but meshoptimizer reads one flag per vertex.
    let unlocked = vec![false; n];
    let mut lists: [Vec<u32>; DETAIL_LEVELS - 1] = Default::default();
    let mut errors = [0.0f32; DETAIL_LEVELS];
    let mut previous = indices.len();
    for k in 1..DETAIL_LEVELS {
        let target = (indices.len() / 3 / REDUCTION.pow(k as u32)).max(1) * 3;
        // The triangle budget or the error cap, whichever comes first.
        let mut error = 0.0;
        let list = meshopt::simplify_with_attributes_and_locks(
            indices,
            &vertices,
            &scaled,
            &weights,
            ATTRIBUTES * std::mem::size_of::<f32>(),
            &unlocked,
            target,
            ERROR_CAP[k] * extent,
            options(k),
            Some(&mut error),
        );
        if list.is_empty() || list.len() >= previous {
            // Nothing left or nothing gained: this and coarser levels draw
            // the level above (an empty list says so).
            break;
        }
        errors[k] = error.max(errors[k - 1]);
        previous = list.len();
        lists[k - 1] = list;
    }
    // A level that kept the list above inherits its error.
    for k in 1..DETAIL_LEVELS {
        if lists[k - 1].is_empty() {
            errors[k] = errors[k - 1];
        }
    }
    Some((lists, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed unit sphere: `rings - 1` rings of `segments` vertices
    /// between two pole vertices (0 and 1), every vertex shared.
    pub(super) fn sphere(rings: u32, segments: u32) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut positions = vec![[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]];
        for r in 1..rings {
            let theta = std::f32::consts::PI * r as f32 / rings as f32;
            for s in 0..segments {
                let phi = std::f32::consts::TAU * s as f32 / segments as f32;
                positions.push([theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()]);
            }
        }
        let ring = |r: u32, s: u32| 2 + (r - 1) * segments + s % segments;
        let mut indices = Vec::new();
        for s in 0..segments {
            indices.extend_from_slice(&[0, ring(1, s), ring(1, s + 1)]);
            indices.extend_from_slice(&[1, ring(rings - 1, s + 1), ring(rings - 1, s)]);
        }
        for r in 1..rings - 1 {
            for s in 0..segments {
                let (a, b) = (ring(r, s), ring(r, s + 1));
                let (c, d) = (ring(r + 1, s), ring(r + 1, s + 1));
                indices.extend_from_slice(&[a, c, b, b, c, d]);
            }
        }
        (positions, indices)
    }

    /// Attributes of vertices with these normals, posed by `pose` (vertex
    /// index, rest position) in every sampled pose.
    pub(super) fn attributes(
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        pose: impl Fn(usize, [f32; 3]) -> [f32; 3],
    ) -> Vec<f32> {
        let mut out = Vec::new();
        for (v, (p, n)) in positions.iter().zip(normals).enumerate() {
            out.extend_from_slice(n);
            for _ in 0..POSES {
                out.extend_from_slice(&pose(v, *p));
            }
        }
        out
    }

    #[test]
    fn each_level_has_fewer_triangles_and_a_larger_error() {
        let (positions, indices) = sphere(32, 64);
        // A unit sphere's normals are its positions; one joint moves it all.
        let attributes = attributes(&positions, &positions, |_, p| p);
        let (lists, errors) = simplify_primitive(&indices, &positions, &attributes).expect("levels");
        let mut previous = indices.len();
        for (k, list) in lists.iter().enumerate() {
            assert!(!list.is_empty(), "level {}", k + 1);
            assert!(list.len() < previous, "level {}: {} of {previous}", k + 1, list.len());
            assert_eq!(list.len() % 3, 0);
            assert!(list.iter().all(|&i| (i as usize) < positions.len()));
            previous = list.len();
        }
        assert_eq!(errors[0], 0.0);
        assert!(errors.windows(2).all(|e| e[0] <= e[1]), "{errors:?}");
        // A unit sphere cannot be approximated by 1/64 of its triangles
        // without some error, nor does any level lose the whole radius.
        assert!(errors[3] > 1e-3 && errors[3] < 1.0, "{errors:?}");
        // Level 1 keeps about a quarter of the triangles.
        let ratio = lists[0].len() as f32 / indices.len() as f32;
        assert!((0.15..=0.35).contains(&ratio), "{ratio}");
    }

    #[test]
    fn invalid_or_tiny_lists_get_no_levels() {
        let (positions, mut indices) = sphere(8, 8);
        let a = attributes(&positions, &positions, |_, p| p);
        assert!(simplify_primitive(&indices, &positions, &a).is_some());
        let mut out_of_range = indices.clone();
        out_of_range[5] = positions.len() as u32;
        assert!(simplify_primitive(&out_of_range, &positions, &a).is_none());
        assert!(simplify_primitive(&indices, &positions, &a[1..]).is_none());
        indices.pop();
        assert!(simplify_primitive(&indices, &positions, &a).is_none());
        assert!(simplify_primitive(&[0, 1, 2], &positions, &a).is_none());
        assert!(simplify_primitive(&[], &[], &[]).is_none());
    }

    #[test]
    fn a_straight_limb_keeps_the_rings_it_bends_with() {
        // A tube 2 units long along y, 16 rings of 16 vertices. Straight, its
        // rings could merge along it for free; bent (a sampled pose: a
        // smooth arc, as blended weights bend a limb), they cannot.
        let (rings, segments) = (16u32, 16u32);
        let mut positions = Vec::new();
        let mut normals = Vec::new();
        for r in 0..rings {
            let y = 2.0 * r as f32 / (rings - 1) as f32;
            for s in 0..segments {
                let phi = std::f32::consts::TAU * s as f32 / segments as f32;
                positions.push([0.2 * phi.cos(), y, 0.2 * phi.sin()]);
                normals.push([phi.cos(), 0.0, phi.sin()]);
            }
        }
        let mut indices = Vec::new();
        for r in 0..rings - 1 {
            for s in 0..segments {
                let (a, b) = (r * segments + s, r * segments + (s + 1) % segments);
                indices.extend_from_slice(&[a, a + segments, b, b, a + segments, b + segments]);
            }
        }
        let straight = attributes(&positions, &normals, |_, p| p);
        // Bent by 90 degrees along a quarter circle of radius 4 / pi.
        let bend = |_, p: [f32; 3]| {
            let (radius, angle) = (4.0 / std::f32::consts::PI, p[1] / (4.0 / std::f32::consts::PI));
            [(radius + p[0]) * angle.cos() - radius, (radius + p[0]) * angle.sin(), p[2]]
        };
        let bent = attributes(&positions, &normals, bend);
        let (_, straight_errors) = simplify_primitive(&indices, &positions, &straight).expect("levels");
        let (_, bent_errors) = simplify_primitive(&indices, &positions, &bent).expect("levels");
        // A quarter of the triangles: the straight tube drops rings for
        // free, the bent one cannot follow its arc as the full tube does.
        assert!(bent_errors[1] > 0.005, "{bent_errors:?}");
        assert!(bent_errors[1] > 10.0 * straight_errors[1], "{bent_errors:?} against {straight_errors:?}");
    }

    #[test]
    fn the_built_in_character_gets_levels_in_scene_units() {
        let model = crate::asset::default_character::load_default_character().expect("built-in character");
        let levels = DetailLevels::build(&model);
        assert_eq!(levels.primitives.len(), model.meshes.iter().map(|m| m.primitives.len()).sum::<usize>());
        assert!(levels.error[DETAIL_LEVELS - 1] > 0.0, "some primitive has a coarser list");
        // About 1.8 m tall: a sphere of a metre or so, errors of millimetres
        // to centimetres.
        assert!((0.5..2.0).contains(&levels.bounds[3]), "{:?}", levels.bounds);
        assert!(levels.error[1] > 0.0 && levels.error[3] < 0.5, "{:?}", levels.error);
        // Triangles drawn at each level (an empty list draws the one above).
        let primitives = model.meshes.iter().flat_map(|m| &m.primitives);
        let mut triangles = [0; DETAIL_LEVELS];
        for (prim, coarser) in primitives.zip(&levels.primitives) {
            let mut above = &prim.indices;
            triangles[0] += above.len() / 3;
            for (k, list) in coarser.iter().enumerate() {
                above = if list.is_empty() { above } else { list };
                triangles[k + 1] += above.len() / 3;
            }
        }
        eprintln!("built-in: triangles {triangles:?}, errors {:?}", levels.error);
        assert!(triangles[3] * 8 < triangles[0], "{triangles:?}");
    }
}
