//! The node walk: every node as a joint of one skeleton (parents before
//! children, rest transforms from TRS or a decomposed matrix), and the
//! nodes that draw meshes as instances with their skin and morph weights.
//!
//! It reads node properties only; meshes, skins and clips are read elsewhere.

use crate::anim::{MeshInstance, NO_PARENT, Skeleton, Transform};
use crate::asset::error::{AssetError, invalid};
use crate::asset::limits::Budget;
use crate::asset::model::Mesh;
use crate::asset::validate;
use crate::text::label;
use gltf::json;
use nalgebra::{Matrix3, Matrix4, Quaternion, Rotation3, UnitQuaternion, Vector3};

/// Bytes charged per morph weight of an instance (rest weights and the
/// copies a pose and the skinning keep).
const BYTES_PER_MORPH_WEIGHT: u64 = 16;

pub(super) fn build_skeleton(
    root: &json::Root,
    warnings: &mut Vec<String>,
) -> Result<(Skeleton, Vec<usize>, Vec<u32>), AssetError> {
    let children: Vec<Vec<usize>> = root
        .nodes
        .iter()
        .map(|n| n.children.as_ref().map_or_else(Vec::new, |c| c.iter().map(|i| i.value()).collect()))
        .collect();
    let order = validate::node_order(&children)?;
    for (i, scene) in root.scenes.iter().enumerate() {
        let nodes: Vec<usize> = scene.nodes.iter().map(|n| n.value()).collect();
        validate::check_scene_roots(&nodes, &order.parent)
            .map_err(|e| e.context(label("scene", i, scene.name.as_deref())))?;
    }
    let mut joint_of_node = vec![NO_PARENT; root.nodes.len()];
    for (j, &n) in order.order.iter().enumerate() {
        joint_of_node[n] = j as u32;
    }
    let mut names = Vec::with_capacity(order.order.len());
    let mut parents = Vec::with_capacity(order.order.len());
    let mut rest = Vec::with_capacity(order.order.len());
    for &n in &order.order {
        let node = &root.nodes[n];
        let what = label("node", n, node.name.as_deref());
        names.push(node.name.clone().unwrap_or_default());
        parents.push(order.parent[n].map_or(NO_PARENT, |p| joint_of_node[p]));
        rest.push(rest_transform(node, &what, warnings)?);
    }
    let skeleton = Skeleton::new(names, parents, rest)?;
    Ok((skeleton, order.order, joint_of_node))
}

/// A node's local transform: its TRS, or its matrix split into TRS.
fn rest_transform(
    node: &json::Node,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Transform, AssetError> {
    if let Some(m) = node.matrix {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(invalid!("{what}: matrix is not finite"));
        }
        return Ok(decompose(&Matrix4::from_column_slice(&m), what, warnings));
    }
    let translation = node.translation.unwrap_or([0.0; 3]);
    let scale = node.scale.unwrap_or([1.0; 3]);
    let [x, y, z, w] = node.rotation.as_ref().map_or([0.0, 0.0, 0.0, 1.0], |r| super::without_noise(r.0));
    if [translation, scale].iter().flatten().any(|v| !v.is_finite()) {
        return Err(invalid!("{what}: translation or scale is not finite"));
    }
    let q = Quaternion::new(w, x, y, z);
    if !q.coords.iter().all(|c| c.is_finite()) || q.norm_squared() <= f32::MIN_POSITIVE {
        return Err(invalid!("{what}: rotation {:?} is zero or not finite", [x, y, z, w]));
    }
    Ok(Transform {
        translation: Vector3::from(translation),
        // As stored when unit to the exporter's rounding (as viewers use
        // it; see anim::math::slerp), normalised when further off.
        rotation: if (q.norm_squared() - 1.0).abs() <= 2e-3 {
            UnitQuaternion::new_unchecked(q)
        } else {
            UnitQuaternion::from_quaternion(q)
        },
        scale: Vector3::from(scale),
    })
}

/// Splits a finite affine matrix into translation, rotation and scale (a
/// negative determinant becomes a negative z scale). A zero-scale axis leaves
/// no rotation to recover: the rotation is then taken as identity.
fn decompose(m: &Matrix4<f32>, what: &str, warnings: &mut Vec<String>) -> Transform {
    let translation = Vector3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
    let mut basis: Matrix3<f32> = m.fixed_view::<3, 3>(0, 0).into_owned();
    let mut scale = Vector3::new(basis.column(0).norm(), basis.column(1).norm(), basis.column(2).norm());
    if basis.determinant() < 0.0 {
        scale.z = -scale.z;
    }
    let rotation = if scale.iter().all(|s| s.abs() > 1e-12) {
        for c in 0..3 {
            let s = scale[c];
            basis.column_mut(c).unscale_mut(s);
        }
        let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(basis));
        let q = UnitQuaternion::from_quaternion(q.into_inner());
        let [x, y, z, w] = super::without_noise([q.i, q.j, q.k, q.w]);
        UnitQuaternion::new_unchecked(Quaternion::new(w, x, y, z))
    } else {
        warnings.push(format!("{what}: matrix has a zero scale; its rotation is taken as identity"));
        UnitQuaternion::identity()
    };
    if m[(3, 0)] != 0.0 || m[(3, 1)] != 0.0 || m[(3, 2)] != 0.0 || m[(3, 3)] != 1.0 {
        warnings.push(format!("{what}: matrix is not affine; its last row is ignored"));
    }
    Transform { translation, rotation, scale }
}

pub(super) fn build_instances(
    root: &json::Root,
    meshes: &[Mesh],
    joint_of_node: &[u32],
    budget: &Budget,
    warnings: &mut Vec<String>,
) -> Result<(Vec<MeshInstance>, Vec<f32>), AssetError> {
    let mut instances = Vec::new();
    let mut rest = Vec::new();
    for (n, node) in root.nodes.iter().enumerate() {
        let Some(m) = node.mesh.map(|m| m.value()) else { continue };
        let what = label("node", n, node.name.as_deref());
        let mesh = meshes
            .get(m)
            .ok_or_else(|| invalid!("{what}: mesh {m} does not exist ({} meshes)", meshes.len()))?;
        let json_mesh = &root.meshes[m];
        let mesh_what = label("mesh", m, json_mesh.name.as_deref());
        let has_joints = mesh.primitives.iter().any(|p| p.influences.is_some());
        let skin = match node.skin.map(|s| s.value()) {
            Some(s) if s >= root.skins.len() => return Err(invalid!("{what}: skin {s} does not exist")),
            Some(_) if !has_joints => {
                warnings.push(format!(
                    "{what}: has a skin but {mesh_what} has no JOINTS_0/WEIGHTS_0; drawn unskinned"
                ));
                None
            }
            None if has_joints => {
                warnings.push(format!(
                    "{what}: {mesh_what} has skin weights but the node has no skin; drawn unskinned"
                ));
                None
            }
            s => s,
        };
        let count = mesh.target_count;
        // Each instance has its own morph weights (here and in every pose):
        // a mesh of many targets drawn by many nodes must not exhaust memory.
        budget.charge((count as u64).saturating_mul(BYTES_PER_MORPH_WEIGHT), || {
            format!("{what}: {count} morph weights of {mesh_what}")
        })?;
        let weights = match (&node.weights, &json_mesh.weights) {
            (Some(w), _) => Some((w, "node weights")),
            (None, Some(w)) => Some((w, "mesh weights")),
            (None, None) => None,
        };
        match weights {
            Some((w, source)) => {
                if w.len() != count {
                    return Err(invalid!(
                        "{what}: {} {source} for {count} morph targets of {mesh_what}",
                        w.len()
                    ));
                }
                if let Some(i) = validate::first_non_finite(w) {
                    return Err(invalid!("{what}: {source} {i} is not finite"));
                }
                rest.extend_from_slice(w);
            }
            None => rest.extend(std::iter::repeat_n(0.0, count)),
        }
        let offset = u32::try_from(rest.len() - count).map_err(|_| invalid!("too many morph weights"))?;
        instances.push(MeshInstance {
            node: n,
            joint: joint_of_node[n],
            mesh: m,
            skin,
            morph_offset: offset,
            morph_count: count as u32,
        });
    }
    Ok((instances, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decomposes_rotation_scale_translation() {
        let t = Transform {
            translation: Vector3::new(1.0, 2.0, 3.0),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 2.5),
            scale: Vector3::new(2.0, 0.5, 3.0),
        };
        let mut w = Vec::new();
        let d = decompose(&t.to_matrix(), "node 0", &mut w);
        assert!(w.is_empty());
        assert!((d.to_matrix() - t.to_matrix()).norm() < 1e-5, "{d:?}");
        // A mirrored matrix keeps its handedness in a negative z scale.
        let mirror = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 1.0, -1.0));
        let d = decompose(&mirror, "node 0", &mut w);
        assert!((d.to_matrix() - mirror).norm() < 1e-6);
        // A rotation by 180 degrees (trace -1) is recovered too.
        let flip = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f32::consts::PI).to_homogeneous();
        assert!((decompose(&flip, "node 0", &mut w).to_matrix() - flip).norm() < 1e-5);
        let zero = Matrix4::new_nonuniform_scaling(&Vector3::new(0.0, 1.0, 1.0));
        assert!(decompose(&zero, "node 0", &mut w).is_finite());
        assert_eq!(w.len(), 1);
    }
}
