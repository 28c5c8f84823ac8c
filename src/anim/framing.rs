//! CPU framing: the world-space bounds of every skinned vertex of a frame
//! source over some frames (CPU reference skinning), which the camera of a
//! headless render frames.
//!
//! A crowd is not skinned whole: `influence_boxes` bounds each of its
//! characters' primitives and runs of vertices by their joints' boxes, and
//! only what may reach outside the box grown so far is skinned. The box is
//! the same, to the bit, as skinning every vertex.

mod influence_boxes;

use super::frame_poses::{FramePoses, FrameSource, PoseError};
use super::job::JobError;
use super::mesh::{MeshInstance, MeshPrimitive};
use super::pose::SkinnedPose;
use super::rig::Rig;
use influence_boxes::{InfluenceBoxes, Placement};
use nalgebra::{Matrix4, Point3};
use rayon::prelude::*;

/// An axis-aligned box: (min, max).
pub type Bounds = ([f32; 3], [f32; 3]);

/// What framing found, and what it took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Framing {
    /// World-space bounds of every drawn vertex; `None` when nothing is
    /// drawn.
    pub bounds: Option<Bounds>,
    /// Vertices skinned to find them.
    pub skinned: u64,
    /// Vertices the frames hold: each frame's characters times the
    /// rig's vertices.
    pub vertices: u64,
}

/// Every vertex of every mesh instance of `rig`.
fn rig_vertices(rig: &Rig) -> usize {
    let prims = rig.instances.iter().flat_map(|i| &rig.meshes[i.mesh].primitives);
    prims.map(MeshPrimitive::vertex_count).sum()
}

/// Grows `bounds` by every finite vertex of `pose` placed by `world` (CPU
/// reference skinning of every mesh instance of `rig`); `scratch` holds one
/// primitive's positions (grown once when too short).
pub fn grow_bounds(
    rig: &Rig,
    pose: &SkinnedPose,
    world: &Matrix4<f32>,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<(), JobError> {
    for instance in &rig.instances {
        for prim in &rig.meshes[instance.mesh].primitives {
            grow_primitive(pose, instance, prim, world, scratch, bounds)?;
        }
    }
    Ok(())
}

/// Grows `bounds` by every finite vertex of one primitive (skinned whole).
fn grow_primitive(
    pose: &SkinnedPose,
    instance: &MeshInstance,
    prim: &MeshPrimitive,
    world: &Matrix4<f32>,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<(), JobError> {
    scratch.resize(prim.vertex_count(), [0.0; 3]);
    pose.skin_primitive(instance, prim, scratch, None)?;
    let affine = is_affine(world);
    for &p in scratch.iter() {
        grow_point(bounds, p, world, affine);
    }
    Ok(())
}

/// Grows `bounds` by skinned point `p` placed by `world`, when finite.
/// An affine `world` (last row 0 0 0 1, as placements are) divides by
/// exactly 1 in `transform_point`: the division is left out, the same
/// products and sums kept (the same bits).
#[inline]
fn grow_point(bounds: &mut Option<Bounds>, p: [f32; 3], world: &Matrix4<f32>, affine: bool) {
    if !p.iter().all(|v| v.is_finite()) {
        return;
    }
    let p = Point3::from(p);
    let q = if affine {
        world.fixed_view::<3, 3>(0, 0) * p.coords + world.fixed_view::<3, 1>(0, 3)
    } else {
        world.transform_point(&p).coords
    };
    let p = [q.x, q.y, q.z];
    grow(bounds.get_or_insert((p, p)), p);
}

/// Whether `world`'s last row is 0 0 0 1 (as placements' are).
fn is_affine(world: &Matrix4<f32>) -> bool {
    (0..3).all(|k| world[(3, k)] == 0.0) && world[(3, 3)] == 1.0
}

/// Grows `bounds` to hold `p`.
fn grow((lo, hi): &mut Bounds, p: [f32; 3]) {
    for k in 0..3 {
        lo[k] = lo[k].min(p[k]);
        hi[k] = hi[k].max(p[k]);
    }
}

/// The smallest box holding both (either may be empty).
fn union(a: Option<Bounds>, b: Option<Bounds>) -> Option<Bounds> {
    match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => {
            Some((std::array::from_fn(|k| alo[k].min(blo[k])), std::array::from_fn(|k| ahi[k].max(bhi[k]))))
        }
        (a, b) => a.or(b),
    }
}

/// Characters per task when framing on a pool: a few hundred microseconds
/// of skinning for the built-in character.
const FRAMING_CHUNK: usize = 8;

/// `fold` over characters `0..count` from `init()`, merged by `merge`: in
/// chunks on the rayon pool this thread works in (a crowd's, whose threads
/// pose it), else in order.
fn fold_characters<T: Send>(
    count: usize,
    init: impl Fn() -> T + Sync + Send,
    fold: impl Fn(T, usize) -> Result<T, JobError> + Sync + Send,
    merge: impl Fn(T, T) -> T + Sync + Send,
) -> Result<T, JobError> {
    let pooled = rayon::current_num_threads() > 1 && rayon::current_thread_index().is_some();
    if !pooled || count <= FRAMING_CHUNK {
        return (0..count).try_fold(init(), fold);
    }
    (0..count)
        .into_par_iter()
        .with_min_len(FRAMING_CHUNK)
        .try_fold(&init, &fold)
        .try_reduce(&init, |a, b| Ok(merge(a, b)))
}

/// The characters whose bounds by their joints reach furthest on each of a
/// box's six sides (fewer when some coincide).
fn outermost(rig: &Rig, boxes: &InfluenceBoxes, poses: &dyn FramePoses) -> Result<Vec<usize>, JobError> {
    type Sides = [Option<(f32, usize)>; 6];
    let furthest = |a: Option<(f32, usize)>, b: Option<(f32, usize)>| match (a, b) {
        (Some(x), Some(y)) => Some(if (y.0, x.1) > (x.0, y.1) { y } else { x }),
        (a, b) => a.or(b),
    };
    let sides = fold_characters(
        poses.count(),
        || [None; 6],
        |mut sides: Sides, c| {
            let world = Placement::of(&poses.world(c));
            let character = world.and_then(|w| boxes.character_box(rig, &poses.input(c).pose, &w));
            if let Some((lo, hi)) = character {
                for k in 0..3 {
                    sides[k] = furthest(sides[k], Some((-lo[k], c)));
                    sides[k + 3] = furthest(sides[k + 3], Some((hi[k], c)));
                }
            }
            Ok(sides)
        },
        |a, b| std::array::from_fn(|s| furthest(a[s], b[s])),
    )?;
    let mut chosen: Vec<usize> = sides.iter().flatten().map(|&(_, c)| c).collect();
    chosen.sort_unstable();
    chosen.dedup();
    Ok(chosen)
}

/// Grows `bounds` by every character of `poses` (`grow_bounds`): first,
/// when `bounds` is empty, the outermost characters, skinned whole, then
/// the rest, skinning only what may reach outside the box so far
/// (`InfluenceBoxes::grow_within`). A box's corners are minima and
/// maxima, so the order changes nothing; each task skins into its own
/// scratch. Returns the vertices skinned.
fn grow_by_every(
    rig: &Rig,
    boxes: &InfluenceBoxes,
    poses: &dyn FramePoses,
    scratch: &mut Vec<[f32; 3]>,
    bounds: &mut Option<Bounds>,
) -> Result<usize, JobError> {
    // Later frames start from the earlier frames' box, nearly the final
    // one already (the outermost characters cost a pass of their own).
    let seeds = if bounds.is_none() { outermost(rig, boxes, poses)? } else { Vec::new() };
    for &c in &seeds {
        grow_bounds(rig, &poses.input(c).pose, &poses.world(c), scratch, bounds)?;
    }
    let seeded = *bounds;
    let (_, grown, skinned) = fold_characters(
        poses.count(),
        || (Vec::new(), seeded, 0),
        |(mut scratch, mut grown, mut skinned), c| {
            if seeds.binary_search(&c).is_err() {
                let (pose, world) = (poses.input(c).pose, poses.world(c));
                skinned += match Placement::of(&world) {
                    Some(w) => boxes.grow_within(rig, &pose, &w, &mut scratch, &mut grown)?,
                    None => {
                        grow_bounds(rig, &pose, &world, &mut scratch, &mut grown)?;
                        rig_vertices(rig)
                    }
                };
            }
            Ok((scratch, grown, skinned))
        },
        |a, b| (a.0, union(a.1, b.1), a.2 + b.2),
    )?;
    *bounds = grown;
    Ok(skinned + seeds.len() * rig_vertices(rig))
}

/// World-space bounds of every drawn vertex of `rig` over frames
/// `first..first + frames` of `source` (in [`Framing::bounds`]).
/// Characters posed on the GPU are posed on the CPU meanwhile (see
/// [`FrameSource::pose_on_cpu_for_framing`]); restart the source before
/// drawing. A crowd's characters are framed on the threads that pose it.
pub fn skinned_bounds(
    rig: &Rig,
    source: &mut dyn FrameSource,
    first: u32,
    frames: u32,
) -> Result<Framing, PoseError> {
    source.pose_on_cpu_for_framing(true)?;
    let boxes = InfluenceBoxes::of(rig);
    let mut scratch = Vec::new();
    let mut framing = Framing { bounds: None, skinned: 0, vertices: 0 };
    let grown = (|| {
        for i in first..first.saturating_add(frames.max(1)) {
            source.frame(i)?;
            let skinned = grow_by_every(rig, &boxes, &*source, &mut scratch, &mut framing.bounds)?;
            framing.skinned += skinned as u64;
            framing.vertices += (source.count() * rig_vertices(rig)) as u64;
        }
        Ok::<_, PoseError>(())
    })();
    let restored = source.pose_on_cpu_for_framing(false);
    grown.and(restored).map(|_| framing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::frame_poses::SkinInput;
    use crate::anim::mesh::{Influences, Mesh, MorphDeltas, MorphTarget};
    use crate::anim::skeleton::{BoneMatrix, NO_PARENT, Skeleton, Skin};
    use crate::anim::transform::Transform;
    use crate::testing::lcg::Lcg;
    use nalgebra::{UnitQuaternion, Vector3};
    use std::sync::Arc;

    /// A rig of two joints skinning 300 random vertices (two influences
    /// each, weights summing to `sum`, the second negative where
    /// `negative`), with a dense and a sparse morph target, and the same
    /// mesh again unskinned on a third joint.
    fn rig(sum: f32, negative: bool) -> Rig {
        let names = ["root", "a", "b"].map(String::from).to_vec();
        let skeleton = Skeleton::new(names, vec![NO_PARENT, 0, 0], vec![Transform::IDENTITY; 3]).unwrap();
        let skin =
            Skin { name: "skin".into(), joints: vec![1, 2], inverse_binds: vec![Matrix4::identity(); 2] };
        let mut noise = Lcg(7);
        let n = 300;
        // Along x in vertex order, as meshes keep neighbours near.
        let along = |i: usize| 2.0 * i as f32 / n as f32 - 1.0;
        let positions: Vec<[f32; 3]> = (0..n)
            .map(|i| {
                [
                    along(i) + 0.05 * noise.between(-1.0, 1.0),
                    noise.between(-1.0, 1.0) + 1.0,
                    0.3 * noise.between(-1.0, 1.0),
                ]
            })
            .collect();
        let (mut joints, mut weights) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let w = 0.5 + 0.5 * noise.between(-1.0, 1.0);
            let second = if negative { -0.2 } else { (1.0 - w) * sum };
            joints.extend([0, 1, 0, 0]);
            weights.extend([w * sum, second, 0.0, 0.0]);
        }
        let sparse: Vec<u32> = (0..n as u32).step_by(7).collect();
        let primitive = MeshPrimitive {
            positions,
            influences: Some(Influences { per_vertex: 4, joints, weights }),
            morph_targets: vec![
                MorphTarget {
                    positions: Some(MorphDeltas::Dense(
                        (0..n).map(|_| [0.1 * noise.between(-1.0, 1.0), 0.0, 0.0]).collect(),
                    )),
                    normals: None,
                    tangents: None,
                },
                MorphTarget {
                    positions: Some(MorphDeltas::Sparse {
                        deltas: sparse.iter().map(|_| [0.0, 0.2 * noise.between(-1.0, 1.0), 0.1]).collect(),
                        indices: sparse,
                    }),
                    normals: None,
                    tangents: None,
                },
            ],
            indices: vec![0, 1, 2],
            ..Default::default()
        };
        let mesh = Mesh {
            name: "body".into(),
            primitives: vec![primitive],
            primitive_indices: vec![0],
            target_names: Vec::new(),
            target_count: 2,
        };
        let instances = vec![
            MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 2 },
            MeshInstance { node: 2, joint: 2, mesh: 0, skin: None, morph_offset: 2, morph_count: 2 },
        ];
        Rig::new(Arc::new(skeleton), vec![skin], vec![Arc::new(mesh)], instances, Vec::new(), vec![0.0; 4])
            .unwrap()
    }

    /// Characters in one place, each with its own random joints and morph
    /// weights: the box's sides are close calls among them.
    struct Characters {
        palettes: Vec<[BoneMatrix; 2]>,
        worlds: Vec<[Matrix4<f32>; 3]>,
        weights: Vec<[f32; 4]>,
        ranges: Vec<[u32; 2]>,
        place: Matrix4<f32>,
    }

    impl Characters {
        /// Joints turned by up to `turn` radians (and morphed, unless 0).
        fn new(count: usize, seed: u64, turn: f32, place: Matrix4<f32>) -> Self {
            let mut noise = Lcg(seed);
            let matrix = |noise: &mut Lcg| {
                let axis = Vector3::new(
                    noise.between(-1.0, 1.0),
                    noise.between(-1.0, 1.0),
                    noise.between(-1.0, 1.0) + 1.5,
                );
                let turn =
                    UnitQuaternion::from_scaled_axis(axis.normalize() * noise.between(-1.0, 1.0) * turn);
                let shift = Vector3::new(
                    0.1 * noise.between(-1.0, 1.0),
                    0.1 * noise.between(-1.0, 1.0),
                    0.1 * noise.between(-1.0, 1.0),
                );
                Matrix4::new_translation(&shift) * turn.to_homogeneous()
            };
            let mut c = Characters {
                palettes: Vec::new(),
                worlds: Vec::new(),
                weights: Vec::new(),
                ranges: vec![[0, 2]],
                place,
            };
            for _ in 0..count {
                let (a, b, rigid) = (matrix(&mut noise), matrix(&mut noise), matrix(&mut noise));
                c.palettes.push([BoneMatrix::from_matrix(&a), BoneMatrix::from_matrix(&b)]);
                c.worlds.push([Matrix4::identity(), a, rigid]);
                // Unturned, unmorphed: nothing loosens the boxes.
                let morphed = turn > 0.0;
                c.weights.push(std::array::from_fn(|_| {
                    if morphed && noise.between(-1.0, 1.0) > 0.0 { noise.between(-1.0, 1.0) } else { 0.0 }
                }));
            }
            c
        }
    }

    impl FramePoses for Characters {
        fn count(&self) -> usize {
            self.palettes.len()
        }
        fn input(&self, c: usize) -> SkinInput<'_> {
            let pose = SkinnedPose {
                palettes: &self.palettes[c],
                palette_ranges: &self.ranges,
                world: &self.worlds[c],
                world_joints: None,
                morph_weights: &self.weights[c],
            };
            SkinInput { pose, version: 0 }
        }
        fn world(&self, _: usize) -> Matrix4<f32> {
            self.place
        }
    }

    /// Framed by the boxes, and every vertex skinned whole: the same box.
    fn frames_exactly(rig: &Rig, characters: &Characters) -> usize {
        let (mut framed, mut exact, mut scratch) = (None, None, Vec::new());
        let skinned =
            grow_by_every(rig, &InfluenceBoxes::of(rig), characters, &mut scratch, &mut framed).unwrap();
        for c in 0..characters.count() {
            grow_bounds(rig, &characters.input(c).pose, &characters.world(c), &mut scratch, &mut exact)
                .unwrap();
        }
        assert_eq!(framed, exact);
        skinned
    }

    /// Weights that sum to 1 only nearly widen the boxes by their slack;
    /// weights beyond it, or negative, are skinned, runs and all; morphs
    /// (dense and sparse) and a rigid instance are bounded too. Placed
    /// turned and scaled, or far away, with joints turned or only moved
    /// (the boxes then as tight as they get): the same box as every
    /// vertex.
    #[test]
    fn the_boxes_frame_as_every_vertex_whatever_the_weights() {
        let far = Matrix4::new_translation(&Vector3::new(900.0, 20.0, -3000.0));
        let turned = Matrix4::from_euler_angles(0.2, 2.0, 0.1) * Matrix4::new_scaling(1.7);
        let total = 2 * 300 * 60;
        for (sum, negative) in [(1.0, false), (1.009, false), (0.992, false), (1.05, false), (1.0, true)] {
            let rig = rig(sum, negative);
            for (seed, turn, place) in [
                (1, 0.6, Matrix4::identity()),
                (2, 0.6, turned),
                (3, 0.6, far * turned),
                (4, 0.0, Matrix4::identity()),
            ] {
                let skinned = frames_exactly(&rig, &Characters::new(60, seed, turn, place));
                let bounded = (sum - 1.0f32).abs() <= 0.01 && !negative;
                // Unbounded weights: the skinned instance whole, the rigid one pruned.
                // Unbounded weights: the skinned instance whole, the
                // rigid one (which reads no weights) bounded.
                // Unbounded weights: the skinned instance whole, the
                // rigid one (which reads no weights) still bounded.
                let expected = if bounded { 0..total / 2 } else { total / 2..total };
                assert!(expected.contains(&skinned), "{sum} {negative}: {skinned} of {total}");
            }
        }
    }

    /// What the skinning job rejects is skinned by it, and its error
    /// comes out as before.
    #[test]
    fn a_joint_outside_the_palette_is_the_jobs_error() {
        let rig = rig(1.0, false);
        let mut characters = Characters::new(3, 5, 0.6, Matrix4::identity());
        characters.ranges = vec![[0, 1]];
        let (mut bounds, mut scratch) = (None, Vec::new());
        let err = grow_by_every(&rig, &InfluenceBoxes::of(&rig), &characters, &mut scratch, &mut bounds);
        assert!(err.unwrap_err().to_string().contains("outside the palette"));
    }
}
