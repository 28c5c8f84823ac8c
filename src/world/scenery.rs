//! A level as a model the renderer draws like any other: one unskinned
//! mesh instance whose primitives are the level's boxes, one per surface
//! kind (flat-shaded, one material each), in world space.

use super::WorldError;
use super::level::{Level, Surface};
use crate::anim::Rig;
use crate::anim::{Mesh, MeshInstance, MeshPrimitive, Skeleton, Transform};
use crate::asset::{Material, Model};
use nalgebra::Vector3;
use std::sync::Arc;

/// The surfaces, in material order.
const SURFACES: [Surface; 5] = [Surface::Floor, Surface::Wall, Surface::Step, Surface::Ramp, Surface::Rail];

/// The level's boxes as a drawable model (file name "level:NAME").
pub fn scenery_model(level: &Level) -> Result<Model, WorldError> {
    let mut primitives = Vec::new();
    let mut materials = Vec::new();
    for (m, surface) in SURFACES.iter().enumerate() {
        let mut p = MeshPrimitive { normals: Some(Vec::new()), material: Some(m), ..Default::default() };
        for b in level.boxes.iter().filter(|b| b.surface == *surface) {
            push_box(&mut p, b.center, b.half_extents, &b.rotation);
        }
        if p.positions.is_empty() {
            continue;
        }
        primitives.push(p);
        materials.push(Material {
            name: format!("{surface:?}"),
            base_color: surface.color(),
            base_color_image: None,
        });
    }
    let count = primitives.len();
    let mesh = Mesh {
        name: level.name.to_string(),
        primitives,
        primitive_indices: (0..count).collect(),
        target_names: Vec::new(),
        target_count: 0,
    };
    let skeleton =
        Skeleton::new(vec![level.name.to_string()], vec![crate::anim::NO_PARENT], vec![Transform::IDENTITY])?;
    let instance = MeshInstance { node: 0, joint: 0, mesh: 0, skin: None, morph_offset: 0, morph_count: 0 };
    let rig = Rig::new(
        Arc::new(skeleton),
        Vec::new(),
        vec![Arc::new(mesh)],
        vec![instance],
        Vec::new(),
        Vec::new(),
    )?;
    Ok(Model {
        file: format!("level:{}", level.name),
        rig: Arc::new(rig),
        node_of_joint: vec![0],
        joint_of_node: vec![0],
        materials,
        warnings: Vec::new(),
        load_options: Default::default(),
        memory_used: 0,
    })
}

/// Appends a box's 6 faces (4 vertices each, flat normals, outward winding).
fn push_box(
    p: &mut MeshPrimitive,
    center: Vector3<f32>,
    half: Vector3<f32>,
    rotation: &nalgebra::UnitQuaternion<f32>,
) {
    let normals = p.normals.as_mut().expect("normals");
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut n = Vector3::zeros();
            n[axis] = sign;
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = p.positions.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut local = n.component_mul(&half);
                local[u] = a * half[u];
                local[v] = b * half[v];
                let world = center + rotation * local;
                p.positions.push([world.x, world.y, world.z]);
                let wn = rotation * n;
                normals.push([wn.x, wn.y, wn.z]);
            }
            // u x v = n for sign +1: counter-clockwise seen from outside.
            let quad = if sign > 0.0 { [0, 1, 2, 0, 2, 3] } else { [0, 2, 1, 0, 3, 2] };
            p.indices.extend(quad.iter().map(|i| base + i));
        }
    }
}
