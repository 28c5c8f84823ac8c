//! Skins: each one's joints (skeleton indices, each node once) and inverse
//! bind matrices, charged to the memory budget; and the check that no joint
//! which influences vertices has a singular inverse bind matrix.
//!
//! It reads skins and checks them against meshes already read; it never
//! changes a mesh's weights.

use crate::anim::{MeshInstance, Skin};
use crate::asset::accessor::Reader;
use crate::asset::error::{AssetError, invalid};
use crate::asset::limits::{Budget, MAX_SKIN_JOINTS};
use crate::asset::model::Mesh;
use crate::asset::validate;
use crate::text::label;
use gltf::json;
use nalgebra::Matrix4;
use std::collections::HashMap;

/// Bytes charged per skin joint: its inverse bind matrix, index and palette
/// entry (CPU and GPU copies).
const BYTES_PER_SKIN_JOINT: u64 = 256;

pub(super) fn build_skins(
    root: &json::Root,
    reader: Reader,
    joint_of_node: &[u32],
    budget: &Budget,
    warnings: &mut Vec<String>,
) -> Result<Vec<Skin>, AssetError> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (s, skin) in root.skins.iter().enumerate() {
        let what = label("skin", s, skin.name.as_deref());
        if skin.joints.is_empty() {
            return Err(invalid!("{what}: has no joints"));
        }
        if skin.joints.len() > MAX_SKIN_JOINTS {
            return Err(invalid!(
                "{what}: {} joints, more than a palette holds ({MAX_SKIN_JOINTS}: JOINTS_n name at most that many)",
                skin.joints.len()
            ));
        }
        // Many skins may list the same nodes: each has its own matrices and palette.
        let n = skin.joints.len() as u64;
        budget.charge(n * BYTES_PER_SKIN_JOINT, || format!("{what} ({n} joints)"))?;
        let mut joints = Vec::with_capacity(skin.joints.len());
        let mut first_use = std::collections::HashMap::with_capacity(skin.joints.len());
        for (i, node) in skin.joints.iter().enumerate() {
            let j = joint_of_node.get(node.value()).ok_or_else(|| {
                invalid!(
                    "{what}: joint {i} is node {}, which does not exist ({} nodes)",
                    node.value(),
                    joint_of_node.len()
                )
            })?;
            if let Some(first) = first_use.insert(*j, i) {
                return Err(invalid!("{what}: joint {i} is node {}, already joint {first}", node.value()));
            }
            joints.push(*j);
        }
        let inverse_binds = match skin.inverse_bind_matrices {
            None => vec![Matrix4::identity(); joints.len()],
            Some(a) => {
                let mats = reader
                    .read_mat4(a.value())
                    .map_err(|e| e.context(format!("{what} inverseBindMatrices")))?;
                if mats.len() < joints.len() {
                    return Err(invalid!(
                        "{what}: {} inverse bind matrices for {} joints",
                        mats.len(),
                        joints.len()
                    ));
                }
                if mats.len() > joints.len() {
                    warnings.push(format!(
                        "{what}: {} inverse bind matrices for {} joints; the extra ones are ignored",
                        mats.len(),
                        joints.len()
                    ));
                }
                validate::check_finite("inverse bind matrix", &mats).map_err(|e| e.context(what.clone()))?;
                mats.iter().take(joints.len()).map(|m| Matrix4::from_column_slice(m)).collect()
            }
        };
        skins.push(Skin { name: skin.name.clone().unwrap_or_default(), joints, inverse_binds });
    }
    Ok(skins)
}

/// A singular inverse bind matrix is an error for a joint that influences
/// vertices (they would collapse or explode) and a warning for any other.
pub(super) fn check_inverse_binds(
    root: &json::Root,
    skins: &[Skin],
    meshes: &[Mesh],
    instances: &[MeshInstance],
    node_of_joint: &[usize],
    warnings: &mut Vec<String>,
) -> Result<(), AssetError> {
    for (s, skin) in skins.iter().enumerate() {
        let singular: Vec<usize> =
            (0..skin.joints.len()).filter(|&i| validate::is_singular(&skin.inverse_binds[i])).collect();
        if singular.is_empty() {
            continue;
        }
        // Skin joints that carry weight in a mesh drawn with this skin: (joint,
        // mesh). Each mesh once, however many nodes draw it.
        let drawn: std::collections::BTreeSet<usize> =
            instances.iter().filter(|i| i.skin == Some(s)).map(|i| i.mesh).collect();
        let mut influencing: HashMap<usize, usize> = HashMap::new();
        for mesh in drawn {
            for p in &meshes[mesh].primitives {
                let Some(inf) = &p.influences else { continue };
                for (&j, &w) in inf.joints.iter().zip(&inf.weights) {
                    if w > 0.0 {
                        influencing.entry(j as usize).or_insert(mesh);
                    }
                }
            }
        }
        let what = label("skin", s, root.skins[s].name.as_deref());
        for i in singular {
            let node = node_of_joint[skin.joints[i] as usize];
            match influencing.get(&i) {
                Some(&m) => {
                    return Err(invalid!(
                        "{what}: inverse bind matrix {i} (joint node {node}) is singular, and the joint influences vertices of mesh {m}"
                    ));
                }
                None => warnings.push(format!(
                    "{what}: inverse bind matrix {i} (joint node {node}) is singular; the joint influences no vertex"
                )),
            }
        }
    }
    Ok(())
}
