//! What an import produces: shareable assets plus the glTF bookkeeping the
//! commands need (node indices, names, warnings).

use crate::anim::{Clip, MeshPrimitive, Skeleton, Skin};
use std::sync::Arc;

/// A mesh: its primitives and the names of its morph targets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mesh {
    /// Name, possibly empty.
    pub name: String,
    /// Primitives in glTF order (only triangle lists are kept; see `Model::warnings`).
    pub primitives: Vec<MeshPrimitive>,
    /// glTF primitive index of each entry in `primitives`.
    pub primitive_indices: Vec<usize>,
    /// Morph target names (from `extras.targetNames`), empty when absent.
    pub target_names: Vec<String>,
    /// Number of morph targets (the same on every primitive).
    pub target_count: usize,
}

/// A node that draws a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshInstance {
    /// glTF node index.
    pub node: usize,
    /// Skeleton joint of that node (its world transform, for unskinned meshes).
    pub joint: u32,
    /// Index into `Model::meshes` (equal to the glTF mesh index).
    pub mesh: usize,
    /// Index into `Model::skins` when the node is skinned.
    pub skin: Option<usize>,
    /// First slot of this instance's morph weights in `Pose::morph_weights`.
    pub morph_offset: u32,
    /// Number of morph weights (the mesh's target count).
    pub morph_count: u32,
}

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

/// A validated, imported glTF file.
#[derive(Debug, Clone)]
pub struct Model {
    /// The file as the user named it (used in messages).
    pub file: String,
    /// Every node of the file as one hierarchy, parent before child.
    pub skeleton: Arc<Skeleton>,
    /// glTF node index of each skeleton joint.
    pub node_of_joint: Vec<usize>,
    /// Skeleton joint of each glTF node.
    pub joint_of_node: Vec<u32>,
    /// Skins in glTF order; their `joints` are skeleton indices.
    pub skins: Vec<Skin>,
    /// Meshes in glTF order.
    pub meshes: Vec<Arc<Mesh>>,
    /// Nodes that draw meshes, in glTF node order.
    pub instances: Vec<MeshInstance>,
    /// Clips in glTF order.
    pub clips: Vec<Arc<Clip>>,
    /// Materials in glTF order.
    pub materials: Vec<Material>,
    /// Default morph weights (node weights, else mesh weights, else zero),
    /// laid out as `Pose::morph_weights`.
    pub rest_morph_weights: Vec<f32>,
    /// Things that were accepted but worth knowing (renormalised weights, ...).
    pub warnings: Vec<String>,
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

    /// Index of the clip with this name, or with this index when `key` is a
    /// number, or `animation_N` for an unnamed clip N (three.js's name for it).
    pub fn find_clip(&self, key: &str) -> Option<usize> {
        let unnamed = |i: &usize| self.clips.get(*i).is_some_and(|c| c.name.is_none());
        self.clips
            .iter()
            .position(|c| c.name.as_deref() == Some(key))
            .or_else(|| key.parse::<usize>().ok().filter(|&i| i < self.clips.len()))
            .or_else(|| key.strip_prefix("animation_")?.parse::<usize>().ok().filter(unnamed))
    }
}
