//! A generated test model for dual-quaternion skinning: an open tube along
//! +y with two joints, "Root" at the bottom and "Twist" at mid-height,
//! weighted smoothly across the middle band (the middle ring half and half),
//! and a "Twist" clip that turns the second joint about the tube's axis by
//! 90 degrees per second (a full turn in 4 s).
//!
//! Generated in code, deterministically: it never reads a file.
//!
//! Twisting the second joint by 180 degrees collapses the middle ring to a
//! line under linear blend skinning (the "candy wrapper"); dual-quaternion
//! skinning keeps its area. `vkskin generate-twist-cylinder` (hidden) writes
//! the GLB; tests build it in memory with [`twist_cylinder`].

use super::error::ImportError;
use super::glb_writer::{
    self, AnimationData, ChannelData, ChannelValues, Document, MaterialData, MeshData, NodeData,
    PrimitiveData, SkinData,
};
use super::model::Model;
use std::ops::Range;

/// File name the model reports (and the default output of the CLI).
pub const TWIST_CYLINDER_FILE: &str = "twist_cylinder.glb";
/// Name of the clip that twists the second joint.
pub const TWIST_CLIP: &str = "Twist";
/// Tube length (the second joint sits at half of it).
pub const HEIGHT: f32 = 2.0;
/// Tube radius.
pub const RADIUS: f32 = 0.25;
/// Vertices per ring.
pub const SEGMENTS: usize = 32;
/// Rings from bottom (y = 0) to top (y = HEIGHT), evenly spaced.
pub const RINGS: usize = 33;
/// The ring at mid-height, weighted half and half.
pub const MIDDLE_RING: usize = RINGS / 2;
/// Height of the band over which the weight moves from the first joint to
/// the second (centred on the middle ring).
pub const BLEND_BAND: f32 = 1.0;
/// Twist of the clip per second, in degrees.
pub const DEGREES_PER_SECOND: f32 = 90.0;

/// Clip time at which the "Twist" clip has turned the second joint by `degrees` (0..=360).
pub fn twist_time(degrees: f32) -> f64 {
    f64::from(degrees / DEGREES_PER_SECOND)
}

/// Vertex indices of ring `ring` (counted from the bottom).
pub fn ring_vertices(ring: usize) -> Range<usize> {
    ring * SEGMENTS..(ring + 1) * SEGMENTS
}

/// The second joint's weight at height `y`: a smoothstep across the band.
pub fn twist_weight(y: f32) -> f32 {
    let x = ((y - (HEIGHT - BLEND_BAND) * 0.5) / BLEND_BAND).clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// The model's GLB bytes; the same on every run.
pub fn twist_cylinder_glb() -> Vec<u8> {
    glb_writer::write_glb(&document())
}

/// The model, imported from its generated GLB in memory.
pub fn twist_cylinder() -> Result<Model, ImportError> {
    super::import::load_from_bytes(TWIST_CYLINDER_FILE, &twist_cylinder_glb(), None)
}

/// Nodes: 0 Root, 1 Twist (child of Root), 2 the tube.
fn document() -> Document {
    let identity = [0.0, 0.0, 0.0, 1.0];
    let mid = HEIGHT * 0.5;
    let nodes = vec![
        NodeData { name: "Root".into(), rotation: identity, children: vec![1], ..Default::default() },
        NodeData {
            name: "Twist".into(),
            translation: [0.0, mid, 0.0],
            rotation: identity,
            ..Default::default()
        },
        NodeData {
            name: "Tube".into(),
            rotation: identity,
            mesh: Some(0),
            skin: Some(0),
            ..Default::default()
        },
    ];
    let translation = |y: f32| [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, y, 0.0, 1.0];
    let keys = 5;
    let times: Vec<f32> = (0..keys).map(|k| k as f32).collect();
    let rotations = times
        .iter()
        .map(|&t| {
            let half = (t * DEGREES_PER_SECOND).to_radians() * 0.5;
            [0.0, half.sin(), 0.0, half.cos()]
        })
        .collect();
    Document {
        generator: "vkskin twist cylinder".into(),
        nodes,
        scene_nodes: vec![0, 2],
        skins: vec![SkinData {
            name: "TwistRig".into(),
            joints: vec![0, 1],
            inverse_binds: vec![translation(0.0), translation(-mid)],
            skeleton: Some(0),
        }],
        meshes: vec![MeshData { name: "Tube".into(), primitives: vec![tube()], target_names: Vec::new() }],
        materials: vec![MaterialData {
            name: "Tube".into(),
            base_color: [0.8, 0.55, 0.3, 1.0],
            metallic: 0.0,
            roughness: 0.7,
        }],
        animations: vec![AnimationData {
            name: TWIST_CLIP.into(),
            channels: vec![ChannelData { node: 1, times, values: ChannelValues::Rotation(rotations) }],
            events: Vec::new(),
        }],
    }
}

/// The open tube: `RINGS` rings of `SEGMENTS` vertices with radial normals,
/// triangles wound counter-clockwise seen from outside.
fn tube() -> PrimitiveData {
    let mut p = PrimitiveData { material: Some(0), ..Default::default() };
    for ring in 0..RINGS {
        let y = HEIGHT * ring as f32 / (RINGS - 1) as f32;
        let w = twist_weight(y);
        for s in 0..SEGMENTS {
            let angle = std::f32::consts::TAU * s as f32 / SEGMENTS as f32;
            let (sin, cos) = angle.sin_cos();
            p.positions.push([RADIUS * cos, y, RADIUS * sin]);
            p.normals.push([cos, 0.0, sin]);
            p.joints.push([0, 1, 0, 0]);
            p.weights.push([1.0 - w, w, 0.0, 0.0]);
        }
    }
    for ring in 0..RINGS - 1 {
        for s in 0..SEGMENTS {
            let next = (s + 1) % SEGMENTS;
            let [a, b] = [ring * SEGMENTS + s, ring * SEGMENTS + next].map(|v| v as u32);
            let [c, d] = [b, a].map(|v| v + SEGMENTS as u32);
            p.indices.extend_from_slice(&[a, d, c, a, c, b]);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_with_two_joints_and_the_twist_clip() {
        let model = twist_cylinder().expect("imports");
        assert!(model.warnings.is_empty(), "{:?}", model.warnings);
        assert_eq!(model.skins[0].joints.len(), 2);
        assert!(model.find_clip(TWIST_CLIP).is_some());
        let prim = &model.meshes[0].primitives[0];
        assert_eq!(prim.vertex_count(), RINGS * SEGMENTS);
        // The middle ring is at mid-height, weighted half and half.
        let inf = prim.influences.as_ref().expect("skinned");
        for v in ring_vertices(MIDDLE_RING) {
            assert!((prim.positions[v][1] - HEIGHT * 0.5).abs() < 1e-6);
            let w = &inf.weights[v * inf.per_vertex..(v + 1) * inf.per_vertex];
            assert!((w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6, "{w:?}");
        }
        // Bottom and top rings follow one joint each.
        assert_eq!(twist_weight(0.0), 0.0);
        assert_eq!(twist_weight(HEIGHT), 1.0);
    }

    #[test]
    fn triangles_face_outward() {
        let prim = tube();
        for t in prim.indices.chunks(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| nalgebra::Vector3::from(prim.positions[i as usize]));
            let n = (b - a).cross(&(c - a));
            let centre = (a + b + c) / 3.0;
            assert!(n.x * centre.x + n.z * centre.z > 0.0, "triangle {t:?} faces inward");
        }
    }
}
