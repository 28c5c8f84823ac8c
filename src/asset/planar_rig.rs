//! The handbook's planar rig, generated: a three-segment arm ("Shoulder",
//! "Elbow", "Wrist") lying along +x, a tapered box tube whose vertices near
//! each inner joint are weighted between the two adjacent bones (two
//! weights, a smoothstep across a band), and two clips that loop pose A ->
//! B -> A: "Planar" turns every joint about +z (the plane of the arm),
//! "Euler3D" turns them in 3D, each pose given as Euler angles.
//!
//! Generated in code, deterministically, and imported from its GLB in
//! memory, so `render` and `view` treat it like any model; it never reads
//! a file. [`planar_motion`] describes the same poses as angles for
//! `anim::planar_scene`, which poses copies of it both ways.

use super::error::ImportError;
use super::glb_writer::{
    self, AnimationData, ChannelData, ChannelValues, Document, MaterialData, MeshData, NodeData,
    PrimitiveData, SkinData,
};
use super::model::Model;
use crate::anim::JobError;
use crate::anim::planar::{EulerAngles, band_weight, planar_rotation};
use crate::anim::planar_scene::PlanarMotion;

/// File name the model reports.
pub const PLANAR_RIG_FILE: &str = "planar_rig.glb";
/// The clip turning every joint about +z.
pub const PLANAR_CLIP: &str = "Planar";
/// The clip turning the joints in 3D.
pub const EULER_CLIP: &str = "Euler3D";
/// The chain's joints, root first.
pub const JOINT_NAMES: [&str; 3] = ["Shoulder", "Elbow", "Wrist"];
/// Segment lengths: shoulder to elbow, elbow to wrist, wrist to the tip.
pub const LENGTHS: [f32; 3] = [1.0, 0.8, 0.6];
/// Width of the band over which a vertex's weight moves from one bone to
/// the next, centred on the inner joint.
pub const BLEND_BAND: f32 = 0.3;
/// Seconds from pose A to pose B.
pub const HALF_PERIOD: f32 = 1.0;
/// Planar pose A, degrees about +z per joint.
pub const PLANAR_A_DEGREES: [f32; 3] = [-15.0, 10.0, 5.0];
/// Planar pose B (every joint less than 180 degrees from pose A, so slerp
/// turns the same way as the angles).
pub const PLANAR_B_DEGREES: [f32; 3] = [70.0, 60.0, 50.0];
/// 3D pose B, (roll, pitch, yaw) degrees per joint; pose A is no rotation.
/// The shoulder's is a 120-degree turn about (1, 1, 1), where the Euler
/// lerp departs from slerp by asin(1/3) = 19.47 degrees half way.
pub const EULER_B_DEGREES: [[f32; 3]; 3] = [[90.0, 0.0, 90.0], [0.0, 60.0, 60.0], [45.0, 45.0, 0.0]];
/// Distance between the lerp column and the quaternion column, and
/// between the planar and the 3D row: the arm reaches 2.4 each way.
pub const SPACING: [f32; 2] = [4.4, 3.2];
/// The copies' turn about +y, degrees: the headless camera
/// (`render::camera`) looks from 30 degrees towards +x, so turned by as
/// much the arms face it and both columns stand at the same depth.
pub const FACING_YAW_DEGREES: f32 = 30.0;
/// The 3D row's further turn about +y, degrees: the shoulder's departure
/// half way is out of the arm's plane (towards -z), which the camera would
/// see edge on; turned by 50 degrees, it shows sideways.
pub const EULER_ROW_YAW_DEGREES: f32 = 50.0;
/// Rings of the tube from the shoulder (x = 0) to the tip.
const RINGS: usize = 49;
/// Half the tube's height (y) at the shoulder and at the tip, and half its
/// thickness (z): flat enough that a twist shows.
const HALF_HEIGHT: [f32; 2] = [0.16, 0.08];
const HALF_THICKNESS: f32 = 0.06;

/// x of each joint at rest (the shoulder at the origin).
pub fn joint_x() -> [f32; 3] {
    [0.0, LENGTHS[0], LENGTHS[0] + LENGTHS[1]]
}

/// The two skin joints (indices into `JOINT_NAMES`) and the weight on the
/// second for a vertex at `x` along the arm at rest: the inner joint
/// nearest to it and its band.
pub fn two_weights(x: f32) -> ([u16; 2], f32) {
    let [_, elbow, wrist] = joint_x();
    if x < (elbow + wrist) * 0.5 {
        ([0, 1], band_weight(x - elbow, BLEND_BAND))
    } else {
        ([1, 2], band_weight(x - wrist, BLEND_BAND))
    }
}

/// The model's GLB bytes; the same on every run.
pub fn planar_rig_glb() -> Vec<u8> {
    glb_writer::write_glb(&document())
}

/// The model, imported from its generated GLB in memory.
pub fn planar_rig() -> Result<Model, ImportError> {
    super::import::load_from_bytes(PLANAR_RIG_FILE, &planar_rig_glb(), None)
}

/// The rig's motion as `anim::planar_scene` needs it, found by joint and
/// clip names in `model` (the planar rig).
pub fn planar_motion(model: &Model) -> Result<PlanarMotion, JobError> {
    let joints = JOINT_NAMES
        .iter()
        .map(|name| {
            model.skeleton.find(name).map(|j| j as u32).ok_or_else(|| {
                JobError::new(format!("{}: no joint \"{name}\": not the planar rig", model.file))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let clip = |name: &str| {
        model
            .find_clip(name)
            .ok_or_else(|| JobError::new(format!("{}: no clip \"{name}\": not the planar rig", model.file)))
    };
    let radians = |d: [f32; 3]| d.map(f32::to_radians).to_vec();
    Ok(PlanarMotion {
        joints,
        planar_a: radians(PLANAR_A_DEGREES),
        planar_b: radians(PLANAR_B_DEGREES),
        euler_a: vec![EulerAngles::default(); 3],
        euler_b: EULER_B_DEGREES.iter().map(|&[r, p, y]| EulerAngles::degrees(r, p, y)).collect(),
        planar_clip: clip(PLANAR_CLIP)?,
        euler_clip: clip(EULER_CLIP)?,
        half_period: f64::from(HALF_PERIOD),
        spacing: SPACING,
        facing_yaw: FACING_YAW_DEGREES.to_radians(),
        euler_row_yaw: EULER_ROW_YAW_DEGREES.to_radians(),
    })
}

/// A glTF rotation `[x, y, z, w]`.
fn xyzw(q: nalgebra::UnitQuaternion<f32>) -> [f32; 4] {
    [q.i, q.j, q.k, q.w]
}

/// Nodes: 0 Shoulder, 1 Elbow, 2 Wrist (a chain along +x), 3 the arm mesh.
fn document() -> Document {
    let identity = [0.0, 0.0, 0.0, 1.0];
    let x = joint_x();
    let joint = |j: usize| NodeData {
        name: JOINT_NAMES[j].into(),
        translation: [if j == 0 { 0.0 } else { LENGTHS[j - 1] }, 0.0, 0.0],
        rotation: identity,
        children: if j + 1 < JOINT_NAMES.len() { vec![j + 1] } else { Vec::new() },
        ..Default::default()
    };
    let mut nodes: Vec<NodeData> = (0..3).map(joint).collect();
    nodes.push(NodeData {
        name: "Arm".into(),
        rotation: identity,
        mesh: Some(0),
        skin: Some(0),
        ..Default::default()
    });
    let translation =
        |tx: f32| [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, tx, 0.0, 0.0, 1.0];
    let times = vec![0.0, HALF_PERIOD, 2.0 * HALF_PERIOD];
    // Keys A, B, A for every joint, from each pose's rotation of joint j.
    let clip = |name: &str, pose: &dyn Fn(usize, bool) -> [f32; 4]| AnimationData {
        name: name.into(),
        channels: (0..3)
            .map(|j| ChannelData {
                node: j,
                times: times.clone(),
                values: ChannelValues::Rotation(vec![pose(j, false), pose(j, true), pose(j, false)]),
            })
            .collect(),
        events: Vec::new(),
    };
    let planar = |j: usize, b: bool| {
        let degrees = if b { PLANAR_B_DEGREES[j] } else { PLANAR_A_DEGREES[j] };
        xyzw(planar_rotation(degrees.to_radians()))
    };
    let euler = |j: usize, b: bool| {
        let [r, p, y] = if b { EULER_B_DEGREES[j] } else { [0.0; 3] };
        xyzw(EulerAngles::degrees(r, p, y).rotation())
    };
    Document {
        generator: "vkskin planar rig".into(),
        nodes,
        scene_nodes: vec![0, 3],
        skins: vec![SkinData {
            name: "PlanarArm".into(),
            joints: vec![0, 1, 2],
            inverse_binds: x.iter().map(|&x| translation(-x)).collect(),
            skeleton: Some(0),
        }],
        meshes: vec![MeshData { name: "Arm".into(), primitives: vec![arm()], target_names: Vec::new() }],
        materials: vec![MaterialData {
            name: "Arm".into(),
            base_color: [0.35, 0.6, 0.85, 1.0],
            metallic: 0.0,
            roughness: 0.6,
        }],
        animations: vec![clip(PLANAR_CLIP, &planar), clip(EULER_CLIP, &euler)],
    }
}

/// The arm: `RINGS` rings of a tapered box tube along +x, each of its four
/// faces with its own vertices (flat normals), closed by a cap at each
/// end; triangles wound counter-clockwise seen from outside.
fn arm() -> PrimitiveData {
    let mut p = PrimitiveData { material: Some(0), ..Default::default() };
    let length: f32 = LENGTHS.iter().sum();
    // Corners (y sign, z sign) going round the x axis, and each face's
    // normal: the face from corner f to corner f + 1.
    let corners = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
    let normals = [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]];
    let corner = |x: f32, c: usize| {
        let along = x / length;
        let h = HALF_HEIGHT[0] + (HALF_HEIGHT[1] - HALF_HEIGHT[0]) * along;
        let (sy, sz) = corners[c % 4];
        [x, sy * h, sz * HALF_THICKNESS]
    };
    let vertex = |p: &mut PrimitiveData, position: [f32; 3], normal: [f32; 3]| {
        let (joints, w) = two_weights(position[0]);
        p.positions.push(position);
        p.normals.push(normal);
        p.joints.push([joints[0], joints[1], 0, 0]);
        p.weights.push([1.0 - w, w, 0.0, 0.0]);
        (p.positions.len() - 1) as u32
    };
    for ring in 0..RINGS {
        let x = length * ring as f32 / (RINGS - 1) as f32;
        for (f, &n) in normals.iter().enumerate() {
            vertex(&mut p, corner(x, f), n);
            vertex(&mut p, corner(x, f + 1), n);
        }
    }
    let per_ring = 8u32;
    for ring in 0..RINGS as u32 - 1 {
        for f in 0..4u32 {
            let a = ring * per_ring + 2 * f;
            let (b, c, d) = (a + 1, a + 1 + per_ring, a + per_ring);
            p.indices.extend_from_slice(&[a, b, c, a, c, d]);
        }
    }
    for (x, normal) in [(0.0, [-1.0, 0.0, 0.0]), (length, [1.0, 0.0, 0.0])] {
        let v: Vec<u32> = (0..4).map(|c| vertex(&mut p, corner(x, c), normal)).collect();
        if x == 0.0 {
            p.indices.extend_from_slice(&[v[0], v[2], v[1], v[0], v[3], v[2]]);
        } else {
            p.indices.extend_from_slice(&[v[0], v[1], v[2], v[0], v[2], v[3]]);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::frame_poses::{FramePoses, FrameSource};
    use crate::anim::planar::{self, chain_points, skin_two_weight};
    use crate::anim::planar_scene::{PlanarCopy, PlanarScene, measure};
    use nalgebra::Vector3;
    use std::sync::Arc;

    fn rig_and_motion() -> (Model, PlanarMotion) {
        let model = planar_rig().expect("the planar rig imports");
        let motion = planar_motion(&model).expect("its motion");
        (model, motion)
    }

    fn scene(copies: &[PlanarCopy]) -> (Model, PlanarScene) {
        let (model, motion) = rig_and_motion();
        let scene = PlanarScene::new(model.rig.clone(), motion, copies, 0.0, 30.0).expect("scene");
        (model, scene)
    }

    /// Copy `c`'s only primitive skinned on the CPU (reference skinning), in
    /// model space (before the copy's world offset).
    fn skinned(model: &Model, scene: &PlanarScene, c: usize) -> Vec<[f32; 3]> {
        let instance = &model.instances[0];
        let prim = &model.meshes[instance.mesh].primitives[0];
        let mut out = vec![[0.0; 3]; prim.vertex_count()];
        scene.input(c).pose.skin_primitive(instance, prim, &mut out, None).expect("skins");
        out
    }

    fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
        (Vector3::from(a) - Vector3::from(b)).norm()
    }

    #[test]
    fn imports_with_three_joints_two_clips_and_two_weights_per_vertex() {
        let (model, motion) = rig_and_motion();
        assert!(model.warnings.is_empty(), "{:?}", model.warnings);
        assert_eq!(model.skins[0].joints.len(), 3);
        assert_eq!((motion.planar_clip, motion.euler_clip), (0, 1), "Planar plays first in the viewer");
        let prim = &model.meshes[0].primitives[0];
        let inf = prim.influences.as_ref().expect("skinned");
        for v in 0..prim.vertex_count() {
            let w = &inf.weights[v * inf.per_vertex..(v + 1) * inf.per_vertex];
            let j = &inf.joints[v * inf.per_vertex..(v + 1) * inf.per_vertex];
            assert!(w[2..].iter().all(|&w| w == 0.0), "vertex {v}: more than two weights: {w:?}");
            assert!((w[0] + w[1] - 1.0).abs() < 1e-6, "vertex {v}: {w:?}");
            // The import keeps a joint only where its weight is not zero.
            if w[0] > 0.0 && w[1] > 0.0 {
                assert_eq!(j[1], j[0] + 1, "vertex {v}: two adjacent bones");
            }
        }
        // Half and half at each inner joint, one bone away from them.
        assert_eq!(two_weights(LENGTHS[0]), ([0, 1], 0.5));
        assert_eq!(two_weights(LENGTHS[0] + LENGTHS[1]), ([1, 2], 0.5));
        assert_eq!(two_weights(0.2), ([0, 1], 0.0));
        assert_eq!(two_weights(2.4), ([1, 2], 1.0));
    }

    #[test]
    fn triangles_face_their_normals() {
        let prim = arm();
        for t in prim.indices.chunks(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vector3::from(prim.positions[i as usize]));
            let n = (b - a).cross(&(c - a));
            assert!(n.dot(&Vector3::from(prim.normals[t[0] as usize])) > 0.0, "triangle {t:?}");
        }
    }

    /// The angle-lerped copy and the clip sampled with slerp coincide:
    /// joint rotations within 1e-6 rad, skinned vertices within 1e-5, at
    /// every frame of two loops; the 3D row's copies part by centimetres.
    #[test]
    fn the_planar_copies_coincide_and_the_euler_copies_do_not() {
        let (model, mut scene) = scene(&PlanarCopy::ALL);
        let joints = scene.motion().joints.clone();
        let mut euler_apart = 0.0f32;
        for i in 0..120 {
            scene.frame(i).unwrap();
            for &j in &joints {
                let (a, b) = (scene.locals(0)[j as usize].rotation, scene.locals(1)[j as usize].rotation);
                assert!(planar::angle_between(a, b) < 1e-6, "frame {i} joint {j}");
            }
            let (lerped, slerped) = (skinned(&model, &scene, 0), skinned(&model, &scene, 1));
            let worst = lerped.iter().zip(&slerped).map(|(&a, &b)| distance(a, b)).fold(0.0, f32::max);
            assert!(worst < 1e-5, "frame {i}: planar copies {worst} apart");
            let (lerped, slerped) = (skinned(&model, &scene, 2), skinned(&model, &scene, 3));
            let apart = lerped.iter().zip(&slerped).map(|(&a, &b)| distance(a, b)).fold(0.0, f32::max);
            euler_apart = euler_apart.max(apart);
        }
        // Half way the shoulder alone is 19.5 degrees off: the tip, 2.4
        // from it, moves by about 2.4 * 2 sin(9.7 degrees) = 0.81.
        assert!(euler_apart > 0.5, "the Euler copies stay within {euler_apart}");
    }

    #[test]
    fn measured_errors_are_rounding_in_the_plane_and_degrees_in_3d() {
        let (model, motion) = rig_and_motion();
        let errors = measure(&model.rig, &motion, 200).unwrap();
        assert!(errors.planar.radians < 1e-6, "{errors:?}");
        let expected = (1.0f64 / 3.0).asin();
        assert!((errors.euler.radians - expected).abs() < 1e-5, "{errors:?}");
        assert_eq!(errors.euler.at, 0.5);
        assert_eq!(model.skeleton.names()[errors.euler_joint as usize], "Shoulder");
        let line = errors.line(model.skeleton.names());
        assert!(line.contains("19.47 degrees (Shoulder, at t = 0.50"), "{line}");
    }

    /// The angle-lerped copy's joints stand where planar forward kinematics
    /// of the blended angles puts them.
    #[test]
    fn joints_follow_the_blended_angles() {
        let (_, mut scene) = scene(&[PlanarCopy::AngleLerp]);
        let motion = scene.motion().clone();
        for time in [0.0, 0.3, 0.5, 1.0, 1.7] {
            scene.pose_at(time).unwrap();
            let (t, _) = motion.blend_at(time);
            let mut angles = [0.0; 3];
            planar::lerp_angles(&motion.planar_a, &motion.planar_b, t, &mut angles);
            let mut points = [[0.0; 2]; 4];
            chain_points(&LENGTHS, &angles, &mut points);
            let world = scene.input(0).pose.world;
            for (k, &j) in motion.joints.iter().enumerate() {
                let at = world[j as usize].column(3);
                assert!((at.x - points[k][0]).abs() < 1e-5 && (at.y - points[k][1]).abs() < 1e-5, "t={t}");
                assert!(at.z.abs() < 1e-6);
            }
        }
    }

    /// The reference skinning of the rig's mesh is the two-weight rule.
    #[test]
    fn reference_skinning_is_the_two_weight_rule() {
        let (model, mut scene) = scene(&[PlanarCopy::AngleLerp, PlanarCopy::EulerLerp]);
        scene.pose_at(0.37).unwrap();
        let prim = &model.meshes[0].primitives[0];
        let inf = prim.influences.as_ref().unwrap();
        for c in 0..2 {
            let out = skinned(&model, &scene, c);
            let palette = scene.input(c).pose.palette(0);
            for (v, &p) in prim.positions.iter().enumerate() {
                let (joints, w) = two_weights(p[0]);
                let stored = &inf.joints[v * inf.per_vertex..v * inf.per_vertex + 2];
                let weights = &inf.weights[v * inf.per_vertex..v * inf.per_vertex + 2];
                for k in 0..2 {
                    assert!(weights[k] == 0.0 || stored[k] == joints[k], "vertex {v}: {stored:?}");
                }
                let [a, b] = joints.map(|j| palette[j as usize].to_matrix());
                let expected = skin_two_weight(p, &a, &b, w);
                assert!(distance(out[v], expected) < 1e-5, "copy {c} vertex {v}");
            }
        }
    }

    /// The four copies never overlap: over a whole loop each one's skinned
    /// box stays apart from the others (the image shows them side by side).
    #[test]
    fn the_copies_stand_apart() {
        let (model, mut scene) = scene(&PlanarCopy::ALL);
        let mut boxes = [([f32::MAX; 3], [f32::MIN; 3]); 4];
        for i in 0..60 {
            scene.frame(i).unwrap();
            for (c, (lo, hi)) in boxes.iter_mut().enumerate() {
                // In the copies' own frame: turned back by their facing.
                let back =
                    nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), -scene.motion().facing_yaw);
                let world = back.to_homogeneous() * scene.world(c);
                for p in skinned(&model, &scene, c) {
                    let q = world.transform_point(&p.into());
                    for k in 0..3 {
                        lo[k] = lo[k].min(q[k]);
                        hi[k] = hi[k].max(q[k]);
                    }
                }
            }
        }
        for a in 0..4 {
            for b in a + 1..4 {
                let (la, ha) = boxes[a];
                let (lb, hb) = boxes[b];
                let overlap = (0..2).all(|k| la[k] < hb[k] && lb[k] < ha[k]);
                assert!(!overlap, "copies {a} and {b} overlap: {:?} {:?}", boxes[a], boxes[b]);
            }
        }
    }

    #[test]
    fn a_rig_without_the_chain_is_refused() {
        let other = super::super::twist_cylinder::twist_cylinder().unwrap();
        let error = planar_motion(&other).unwrap_err().to_string();
        assert!(error.contains("not the planar rig"), "{error}");
        let (model, mut motion) = rig_and_motion();
        motion.planar_b.pop();
        assert!(PlanarScene::new(Arc::clone(&model.rig), motion, &PlanarCopy::ALL, 0.0, 30.0).is_err());
    }
}
