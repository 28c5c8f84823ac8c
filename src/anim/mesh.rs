//! Mesh streams: what one drawable primitive holds for skinning, the meshes
//! made of them and the nodes that draw them.
//!
//! Plain data, immutable once imported: nothing here skins, draws or uploads
//! a mesh.

/// Morph-target deltas for one attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum MorphDeltas {
    /// One delta per vertex.
    Dense(Vec<[f32; 3]>),
    /// Only the vertices that move: `indices` strictly increase, one delta each.
    Sparse {
        /// Vertex indices.
        indices: Vec<u32>,
        /// Delta of each listed vertex.
        deltas: Vec<[f32; 3]>,
    },
}

impl MorphDeltas {
    /// Stores `dense` sparsely when fewer than half the deltas are non-zero.
    pub fn compact(dense: Vec<[f32; 3]>) -> Self {
        let moving = dense.iter().filter(|d| **d != [0.0; 3]).count();
        if moving * 2 >= dense.len() {
            return MorphDeltas::Dense(dense);
        }
        let mut indices = Vec::with_capacity(moving);
        let mut deltas = Vec::with_capacity(moving);
        for (i, d) in dense.iter().enumerate() {
            if *d != [0.0; 3] {
                indices.push(i as u32);
                deltas.push(*d);
            }
        }
        MorphDeltas::Sparse { indices, deltas }
    }

    /// Calls `f(vertex, delta)` for every stored delta.
    pub fn for_each(&self, mut f: impl FnMut(usize, [f32; 3])) {
        match self {
            MorphDeltas::Dense(d) => d.iter().enumerate().for_each(|(i, v)| f(i, *v)),
            MorphDeltas::Sparse { indices, deltas } => {
                indices.iter().zip(deltas).for_each(|(i, v)| f(*i as usize, *v))
            }
        }
    }

    /// Largest vertex index this touches plus one (0 when empty).
    pub fn vertex_bound(&self) -> usize {
        match self {
            MorphDeltas::Dense(d) => d.len(),
            MorphDeltas::Sparse { indices, .. } => indices.last().map_or(0, |i| *i as usize + 1),
        }
    }

    /// Expands to one delta per vertex.
    pub fn to_dense(&self, vertices: usize) -> Vec<[f32; 3]> {
        let mut out = vec![[0.0; 3]; vertices];
        self.for_each(|i, d| {
            if let Some(o) = out.get_mut(i) {
                *o = d;
            }
        });
        out
    }
}

/// One morph target of a primitive.
#[derive(Debug, Clone, PartialEq)]
pub struct MorphTarget {
    /// Position deltas, if the target moves positions.
    pub positions: Option<MorphDeltas>,
    /// Normal deltas.
    pub normals: Option<MorphDeltas>,
    /// Tangent (xyz) deltas.
    pub tangents: Option<MorphDeltas>,
}

/// Joint influences: `per_vertex` (4 or 8) joint/weight pairs per vertex.
/// Joint indices refer to the skin's joint list; weights are non-negative and
/// sum to one (the importer renormalises).
#[derive(Debug, Clone, PartialEq)]
pub struct Influences {
    /// Pairs per vertex: 4, or 8 with a second joint/weight set.
    pub per_vertex: usize,
    /// Skin joint indices, `per_vertex` per vertex.
    pub joints: Vec<u16>,
    /// Weights, `per_vertex` per vertex.
    pub weights: Vec<f32>,
}

/// Vertex streams of one triangle-list primitive, in glTF accessor order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshPrimitive {
    /// Bind-pose positions.
    pub positions: Vec<[f32; 3]>,
    /// Bind-pose normals, when present.
    pub normals: Option<Vec<[f32; 3]>>,
    /// Bind-pose tangents (w = handedness), when present.
    pub tangents: Option<Vec<[f32; 4]>>,
    /// First texture coordinate set, when present.
    pub uvs: Option<Vec<[f32; 2]>>,
    /// Joint influences, when the primitive is skinned.
    pub influences: Option<Influences>,
    /// Morph targets.
    pub morph_targets: Vec<MorphTarget>,
    /// Triangle-list indices (generated 0..n for non-indexed primitives).
    pub indices: Vec<u32>,
    /// Material index into the model's materials, if any.
    pub material: Option<usize>,
}

impl MeshPrimitive {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// A mesh: its primitives and the names of its morph targets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mesh {
    /// Name, possibly empty.
    pub name: String,
    /// Primitives in file order (only triangle lists are kept).
    pub primitives: Vec<MeshPrimitive>,
    /// The file's primitive index of each entry in `primitives`.
    pub primitive_indices: Vec<usize>,
    /// Morph target names, empty when the file names none.
    pub target_names: Vec<String>,
    /// Number of morph targets (the same on every primitive).
    pub target_count: usize,
}

/// A node that draws a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshInstance {
    /// The file's node index.
    pub node: usize,
    /// Skeleton joint of that node (its world transform, for unskinned meshes).
    pub joint: u32,
    /// Index into the rig's meshes.
    pub mesh: usize,
    /// Index into the rig's skins when the node is skinned.
    pub skin: Option<usize>,
    /// First slot of this instance's morph weights in `Pose::morph_weights`.
    pub morph_offset: u32,
    /// Number of morph weights (the mesh's target count).
    pub morph_count: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_keeps_mostly_zero_deltas_sparse() {
        let mut dense = vec![[0.0; 3]; 10];
        dense[3] = [1.0, 0.0, 0.0];
        dense[7] = [0.0, 2.0, 0.0];
        let c = MorphDeltas::compact(dense.clone());
        assert!(matches!(&c, MorphDeltas::Sparse { indices, .. } if indices == &[3, 7]));
        assert_eq!(c.to_dense(10), dense);
        assert!(matches!(MorphDeltas::compact(vec![[1.0; 3]; 4]), MorphDeltas::Dense(_)));
    }
}
