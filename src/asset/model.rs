//! What an import produces: the shareable rig plus the glTF bookkeeping the
//! commands need (node indices, names, warnings).
//!
//! It never holds per-character state or GPU resources.

use super::limits::LoadOptions;
use crate::anim::Rig;
pub use crate::anim::{Mesh, MeshInstance};
use std::ops::Deref;
use std::sync::Arc;

/// A material's base colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Name, possibly empty.
    pub name: String,
    /// Linear RGBA base colour factor.
    pub base_color: [f32; 4],
    /// glTF image index of the base colour texture, when present.
    pub base_color_image: Option<usize>,
}

/// A validated, imported glTF file: the rig characters share, plus the
/// glTF bookkeeping the commands need (node indices, materials, warnings).
/// It dereferences to its [`Rig`], so `model.clips`, `model.skins`... read
/// the shared asset.
#[derive(Debug, Clone)]
pub struct Model {
    /// The file as the user named it (used in messages).
    pub file: String,
    /// Skeleton, skins, meshes, instances, clips and rest morph weights,
    /// shared by every character of this model.
    pub rig: Arc<Rig>,
    /// glTF node index of each skeleton joint.
    pub node_of_joint: Vec<usize>,
    /// Skeleton joint of each glTF node.
    pub joint_of_node: Vec<u32>,
    /// Materials in glTF order.
    pub materials: Vec<Material>,
    /// Things that were accepted but worth knowing (renormalised weights, ...).
    pub warnings: Vec<String>,
    /// The limits it was loaded with (its images are read within them too).
    pub load_options: LoadOptions,
    /// Bytes its import charged to the file's memory budget.
    pub memory_used: u64,
}

impl Deref for Model {
    type Target = Rig;
    fn deref(&self) -> &Rig {
        &self.rig
    }
}

impl Model {
    /// Sorted glTF node indices that are joints of any skin.
    pub fn skin_joint_nodes(&self) -> Vec<usize> {
        let mut nodes: Vec<usize> = self
            .skins
            .iter()
            .flat_map(|s| s.joints.iter().map(|&j| self.node_of_joint[j as usize]))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }
}
