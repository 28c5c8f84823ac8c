//! Hand-made test models for the GPU tests: a synthetic skinned model
//! (eight influences, sparse and dense morph targets, a rigid mesh), a wide
//! one (a large palette with little to skin), and their posing.

use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;
use vkskin::anim::Rig as CharacterRig;
use vkskin::anim::{
    Influences, MeshPrimitive, MorphDeltas, MorphTarget, NO_PARENT, Pose, Skeleton, Skin, SkinnedPose,
    Transform,
};
use vkskin::asset::{Mesh, MeshInstance, Model};
use vkskin::character::{DebugPose, PoseOutput};

/// A hand-made local pose and its evaluated output (the character layer's
/// last stage: local to model, palettes, version).
pub(crate) struct Synthetic {
    pose: Pose,
    output: PoseOutput,
}

impl Synthetic {
    pub(crate) fn new(model: &Model) -> Self {
        let pose =
            Pose { locals: model.skeleton.rest().to_vec(), morph_weights: model.rest_morph_weights.clone() };
        Synthetic { pose, output: PoseOutput::new(model) }
    }

    pub(crate) fn view(&self) -> SkinnedPose<'_> {
        self.output.view()
    }
}

/// A skeleton of a root and `n` children with distinct rest transforms.
pub(crate) fn skeleton(n: usize) -> Skeleton {
    let mut names = vec!["root".to_string()];
    let mut parents = vec![NO_PARENT];
    let mut rest = vec![Transform::IDENTITY];
    for j in 0..n {
        names.push(format!("bone{j}"));
        parents.push(if j == 0 { 0 } else { j as u32 });
        rest.push(Transform {
            translation: Vector3::new(0.1 * j as f32, 0.5, -0.2),
            rotation: UnitQuaternion::from_euler_angles(0.1 * j as f32, 0.2, 0.05),
            scale: Vector3::new(1.0, 1.0 + 0.05 * j as f32, 1.0),
        });
    }
    Skeleton::new(names, parents, rest).unwrap()
}

/// A hand-built model: skin with 8 joints; mesh 0 has 8 influences per
/// vertex (two sets), normals, and three morph targets (sparse positions,
/// dense positions, sparse normals); mesh 1 is unskinned, drawn rigidly by
/// joint 3, with one sparse morph target.
pub(crate) fn synthetic_model(seed: f32) -> Model {
    let joints = 8usize;
    let skeleton = Arc::new(skeleton(joints));
    let vertices = 37usize;
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut inf_joints = Vec::new();
    let mut inf_weights = Vec::new();
    for v in 0..vertices {
        let f = v as f32 + seed;
        positions.push([f.sin(), 0.1 * f, f.cos()]);
        let n = Vector3::new(f.cos(), 0.3, -f.sin()).normalize();
        normals.push([n.x, n.y, n.z]);
        let raw: Vec<f32> =
            (0..8).map(|k| ((v * 7 + k * 3) % 11) as f32 + if k == 5 { 0.0 } else { 1.0 }).collect();
        let sum: f32 = raw.iter().sum();
        for (k, w) in raw.iter().enumerate() {
            inf_joints.push(((v + k * 5) % joints) as u16);
            // One weight in the second set is zero for some vertices.
            inf_weights.push(if k == 6 && v % 3 == 0 { 0.0 } else { w / sum });
        }
        // Renormalise after zeroing (the importer's contract: weights sum to one).
        let start = inf_weights.len() - 8;
        let s: f32 = inf_weights[start..].iter().sum();
        inf_weights[start..].iter_mut().for_each(|w| *w /= s);
    }
    let sparse_idx: Vec<u32> = vec![0, 5, 6, 20, 36];
    let skinned = MeshPrimitive {
        positions: positions.clone(),
        normals: Some(normals.clone()),
        influences: Some(Influences { per_vertex: 8, joints: inf_joints, weights: inf_weights }),
        morph_targets: vec![
            MorphTarget {
                positions: Some(MorphDeltas::Sparse {
                    indices: sparse_idx.clone(),
                    deltas: sparse_idx.iter().map(|&i| [0.1 * i as f32, -0.2, 0.05]).collect(),
                }),
                normals: None,
                tangents: None,
            },
            MorphTarget {
                positions: Some(MorphDeltas::Dense(
                    (0..vertices).map(|v| [0.0, 0.01 * v as f32, 0.0]).collect(),
                )),
                normals: None,
                tangents: None,
            },
            MorphTarget {
                positions: None,
                normals: Some(MorphDeltas::Sparse { indices: vec![1, 6], deltas: vec![[0.3, 0.0, 0.1]; 2] }),
                tangents: None,
            },
        ],
        indices: (0..vertices as u32 - 1).flat_map(|i| [i, i + 1, 0]).collect(),
        ..Default::default()
    };
    let rigid = MeshPrimitive {
        positions: positions[..10].to_vec(),
        normals: Some(normals[..10].to_vec()),
        morph_targets: vec![MorphTarget {
            positions: Some(MorphDeltas::Sparse { indices: vec![2, 9], deltas: vec![[1.0, 2.0, 3.0]; 2] }),
            normals: None,
            tangents: None,
        }],
        indices: vec![0, 1, 2, 3, 4, 5],
        ..Default::default()
    };
    let mesh = |name: &str, p: MeshPrimitive, targets: usize| {
        Arc::new(Mesh {
            name: name.into(),
            primitives: vec![p],
            primitive_indices: vec![0],
            target_names: Vec::new(),
            target_count: targets,
        })
    };
    let world_of_rest: Vec<Matrix4<f32>> = {
        let mut w: Vec<Matrix4<f32>> = Vec::new();
        for (j, t) in skeleton.rest().iter().enumerate() {
            let p = skeleton.parents()[j];
            let local = t.to_matrix();
            w.push(if p == NO_PARENT { local } else { w[p as usize] * local });
        }
        w
    };
    let skin_joints: Vec<u32> = (1..=joints as u32).collect();
    let inverse_binds =
        skin_joints.iter().map(|&j| world_of_rest[j as usize].try_inverse().unwrap()).collect();
    let rig = CharacterRig::new(
        skeleton,
        vec![Skin { name: "skin".into(), joints: skin_joints, inverse_binds }],
        vec![mesh("skinned", skinned, 3), mesh("rigid", rigid, 1)],
        vec![
            MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 3 },
            MeshInstance { node: 3, joint: 3, mesh: 1, skin: None, morph_offset: 3, morph_count: 1 },
        ],
        Vec::new(),
        vec![0.0; 4],
    )
    .expect("synthetic rig");
    model_of(format!("synthetic {seed}"), rig)
}

/// A model of `joints` joints, all children of the root, and one primitive
/// of 8 vertices whose influences reach across the whole skin (its first,
/// middle and last joints): a large palette per character with little to
/// skin.
pub(crate) fn wide_model(joints: usize) -> Model {
    let mut names = vec!["root".to_string()];
    let mut parents = vec![NO_PARENT];
    let mut rest = vec![Transform::IDENTITY];
    for j in 0..joints {
        names.push(format!("bone{j}"));
        parents.push(0);
        let f = j as f32 / joints as f32;
        rest.push(Transform {
            translation: Vector3::new(f, 0.5 - f, 0.2),
            rotation: UnitQuaternion::from_euler_angles(f, 0.2, -f),
            scale: Vector3::new(1.0, 1.0 + 0.2 * f, 1.0),
        });
    }
    let skeleton = Arc::new(Skeleton::new(names, parents, rest).unwrap());
    let vertices = 8usize;
    let mut inf_joints = Vec::new();
    for v in 0..vertices {
        let spread = [v, joints / 3 + v, 2 * joints / 3 + v, joints - 1 - v];
        inf_joints.extend(spread.map(|j| j as u16));
    }
    let primitive = MeshPrimitive {
        positions: (0..vertices).map(|v| [v as f32 * 0.1, 1.0, -(v as f32) * 0.05]).collect(),
        influences: Some(Influences {
            per_vertex: 4,
            joints: inf_joints,
            weights: (0..vertices).flat_map(|_| [0.4, 0.3, 0.2, 0.1]).collect(),
        }),
        indices: (0..vertices as u32 - 2).flat_map(|i| [i, i + 1, i + 2]).collect(),
        ..Default::default()
    };
    let mesh = Arc::new(Mesh {
        name: "wide".into(),
        primitives: vec![primitive],
        primitive_indices: vec![0],
        target_names: Vec::new(),
        target_count: 0,
    });
    let skin_joints: Vec<u32> = (1..=joints as u32).collect();
    // Flat: each joint's world rest matrix is its local one.
    let inverse_binds =
        skin_joints.iter().map(|&j| skeleton.rest()[j as usize].to_matrix().try_inverse().unwrap()).collect();
    let rig = CharacterRig::new(
        skeleton,
        vec![Skin { name: "skin".into(), joints: skin_joints, inverse_binds }],
        vec![mesh],
        vec![MeshInstance { node: 0, joint: 0, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 0 }],
        Vec::new(),
        Vec::new(),
    )
    .expect("wide rig");
    model_of(format!("wide {joints}"), rig)
}

/// `rig` as a model named `file` whose nodes are its joints, in order.
fn model_of(file: String, rig: CharacterRig) -> Model {
    let joint_count = rig.skeleton.len();
    Model {
        file,
        rig: Arc::new(rig),
        node_of_joint: (0..joint_count).collect(),
        joint_of_node: (0..joint_count as u32).collect(),
        materials: Vec::new(),
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    }
}

/// Poses the synthetic model for frame `frame` (every joint rotates).
pub(crate) fn pose_synthetic(model: &Model, synthetic: &mut Synthetic, frame: u32) {
    let t = frame as f32 * 0.05;
    {
        let pose = &mut synthetic.pose;
        for (j, local) in pose.locals.iter_mut().enumerate() {
            let rest = model.skeleton.rest()[j];
            local.rotation =
                rest.rotation * UnitQuaternion::from_euler_angles(0.3 * (t + j as f32).sin(), t, 0.1);
            local.translation = rest.translation + Vector3::new(0.0, 0.1 * t.cos(), 0.0);
        }
        for (k, w) in pose.morph_weights.iter_mut().enumerate() {
            *w = 0.5 + 0.5 * (t + k as f32).sin();
        }
    }
    let Synthetic { pose, output } = synthetic;
    output.update(model, &pose.locals, &pose.morph_weights, DebugPose::Animated).unwrap();
}
