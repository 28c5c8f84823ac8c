//! A small hand-built model for unit tests (no file, no GPU).

use crate::anim::Rig;
use crate::anim::{
    Clip, ClipEvent, Influences, Interpolation, JointTracks, Mesh, MeshInstance, MeshPrimitive, MorphDeltas,
    MorphTarget, MorphWeightTrack, NO_PARENT, Skeleton, Skin, Track, Transform,
};
use crate::asset::Model;
use nalgebra::{Matrix4, UnitQuaternion, Vector3};
use std::sync::Arc;

fn translate(x: f32, y: f32) -> Transform {
    Transform { translation: Vector3::new(x, y, 0.0), ..Transform::IDENTITY }
}

/// A clip moving joint 1 along x from 0 to `duration` metres over `duration`
/// seconds (1 m/s), turning it 1 radian about z, and ramping morph weights.
pub fn slide(name: &str, duration: f32, events: &[(f32, &str)]) -> Arc<Clip> {
    Arc::new(Clip {
        name: Some(name.into()),
        duration,
        joint_tracks: vec![JointTracks {
            joint: 1,
            translation: Some(Track {
                times: vec![0.0, duration],
                values: vec![Vector3::new(0.0, 1.0, 0.0), Vector3::new(duration, 1.0, 0.0)],
                interpolation: Interpolation::Linear,
            }),
            rotation: Some(Track {
                times: vec![0.0, duration],
                values: vec![
                    UnitQuaternion::identity().into_inner(),
                    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 1.0).into_inner(),
                ],
                interpolation: Interpolation::Linear,
            }),
            scale: None,
        }],
        morph_tracks: vec![MorphWeightTrack {
            offset: 0,
            count: 2,
            times: vec![0.0, duration],
            values: vec![0.0, 0.0, 1.0, 0.5],
            interpolation: Interpolation::Linear,
        }],
        events: events.iter().map(|&(time, n)| ClipEvent { time, name: n.into() }).collect(),
    })
}

/// Nodes: 0 = armature (not a joint), 1 = hip, 2 = spine, 3 = prop under
/// the spine (not a joint), 4 = the mesh node. One skin over joints
/// [1, 2], one skinned triangle with two morph targets; clips "Walk"
/// (1 s, events at 0.25 and 0.75) and "Run" (0.5 s, event at 0.1).
pub fn test_model() -> Model {
    model_with_clips(vec![
        slide("Walk", 1.0, &[(0.25, "left"), (0.75, "right")]),
        slide("Run", 0.5, &[(0.1, "step")]),
    ])
}

/// `test_model` with other clips.
pub fn model_with_clips(clips: Vec<Arc<Clip>>) -> Model {
    let names = ["armature", "hip", "spine", "prop", "mesh"].map(String::from).to_vec();
    let parents = vec![NO_PARENT, 0, 1, 2, NO_PARENT];
    let rest = vec![
        translate(0.0, 0.5),
        translate(0.0, 1.0),
        translate(0.0, 1.0),
        translate(0.3, 0.0),
        Transform::IDENTITY,
    ];
    let skeleton = Skeleton::new(names, parents, rest).unwrap();
    // Inverse binds of the rest pose: hip at y = 1.5, spine at y = 2.5.
    let ib = |y: f32| Matrix4::new_translation(&Vector3::new(0.0, -y, 0.0));
    let skin = Skin { name: "skin".into(), joints: vec![1, 2], inverse_binds: vec![ib(1.5), ib(2.5)] };
    let primitive = MeshPrimitive {
        positions: vec![[0.0, 1.5, 0.0], [0.0, 2.5, 0.0], [0.5, 2.0, 0.0]],
        influences: Some(Influences {
            per_vertex: 4,
            joints: vec![0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0],
            weights: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0],
        }),
        morph_targets: vec![
            MorphTarget {
                positions: Some(MorphDeltas::Dense(vec![[0.1, 0.0, 0.0]; 3])),
                normals: None,
                tangents: None,
            },
            MorphTarget {
                positions: Some(MorphDeltas::Dense(vec![[0.0, 0.1, 0.0]; 3])),
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
        target_names: vec!["smile".into(), "blink".into()],
        target_count: 2,
    };
    let instance =
        MeshInstance { node: 4, joint: 4, mesh: 0, skin: Some(0), morph_offset: 0, morph_count: 2 };
    let rig =
        Rig::new(Arc::new(skeleton), vec![skin], vec![Arc::new(mesh)], vec![instance], clips, vec![0.0, 0.0])
            .expect("test rig");
    Model {
        file: "test.gltf".into(),
        rig: Arc::new(rig),
        node_of_joint: (0..5).collect(),
        joint_of_node: (0..5).collect(),
        materials: Vec::new(),
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    }
}
