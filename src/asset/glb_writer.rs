//! A small writer of glTF 2.0 binary files (GLB) from plain data: nodes with
//! TRS, skins, meshes with skinning attributes and morph targets, base-colour
//! materials and LINEAR animations.
//!
//! It writes what it is given and never reads a file; nothing in the output
//! depends on time, hashing or map order.
//!
//! The output is deterministic: the JSON chunk is serialised from structs (field
//! order fixed, independent of serde_json's map features), floats go through
//! their shortest `f32` spelling, and nothing depends on time or hashing.

use serde::Serialize;

/// One node: a local TRS transform and what it holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeData {
    /// Node name.
    pub name: String,
    /// Local translation.
    pub translation: [f32; 3],
    /// Local rotation as a unit quaternion `[x, y, z, w]`.
    pub rotation: [f32; 4],
    /// Children node indices.
    pub children: Vec<usize>,
    /// Mesh drawn by this node.
    pub mesh: Option<usize>,
    /// Skin of that mesh.
    pub skin: Option<usize>,
}

/// A skin: joint nodes and their inverse bind matrices (column-major).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkinData {
    /// Skin name.
    pub name: String,
    /// Joint node indices.
    pub joints: Vec<usize>,
    /// One column-major matrix per joint.
    pub inverse_binds: Vec<[f32; 16]>,
    /// The common root node of the joints.
    pub skeleton: Option<usize>,
}

/// One morph target of a primitive: position and normal deltas, one per vertex.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TargetData {
    /// Position deltas.
    pub positions: Vec<[f32; 3]>,
    /// Normal deltas (empty: none written).
    pub normals: Vec<[f32; 3]>,
}

/// One triangle-list primitive.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrimitiveData {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Four skin joint indices per vertex.
    pub joints: Vec<[u16; 4]>,
    /// Four skin weights per vertex.
    pub weights: Vec<[f32; 4]>,
    /// Triangle-list indices.
    pub indices: Vec<u32>,
    /// Material index.
    pub material: Option<usize>,
    /// Morph targets, as many as the mesh has target names.
    pub targets: Vec<TargetData>,
}

/// A mesh: primitives sharing morph targets (named in `extras.targetNames`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshData {
    /// Mesh name.
    pub name: String,
    /// Primitives.
    pub primitives: Vec<PrimitiveData>,
    /// Morph target names.
    pub target_names: Vec<String>,
}

/// A metallic-roughness material with a constant base colour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MaterialData {
    /// Material name.
    pub name: String,
    /// Linear RGBA base colour.
    pub base_color: [f32; 4],
    /// Metallic factor.
    pub metallic: f32,
    /// Roughness factor.
    pub roughness: f32,
}

/// The values an animation channel sets, one entry per key.
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelValues {
    /// Node translations.
    Translation(Vec<[f32; 3]>),
    /// Node rotations `[x, y, z, w]`.
    Rotation(Vec<[f32; 4]>),
    /// Morph weights: `count` per key, flattened.
    Weights(Vec<f32>),
}

/// One LINEAR channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelData {
    /// Target node.
    pub node: usize,
    /// Key times (channels with equal times share one accessor).
    pub times: Vec<f32>,
    /// Key values.
    pub values: ChannelValues,
}

/// A named moment of an animation, written to `extras.vkskin_events`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventData {
    /// Seconds on the animation's timeline.
    pub time: f32,
    /// Event name.
    pub name: String,
}

/// An animation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnimationData {
    /// Animation name.
    pub name: String,
    /// Channels.
    pub channels: Vec<ChannelData>,
    /// Events (written only when not empty).
    pub events: Vec<EventData>,
}

/// Everything one GLB holds; the single scene lists `scene_nodes`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    /// `asset.generator`.
    pub generator: String,
    /// Nodes.
    pub nodes: Vec<NodeData>,
    /// Root nodes of the scene.
    pub scene_nodes: Vec<usize>,
    /// Skins.
    pub skins: Vec<SkinData>,
    /// Meshes.
    pub meshes: Vec<MeshData>,
    /// Materials.
    pub materials: Vec<MaterialData>,
    /// Animations.
    pub animations: Vec<AnimationData>,
}

// ---------------------------------------------------------------------------
// JSON schema subset (field order is the output order).

#[derive(Serialize)]
struct Root {
    asset: Asset,
    scene: usize,
    scenes: Vec<Scene>,
    nodes: Vec<Node>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skins: Vec<Skin>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    meshes: Vec<Mesh>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    materials: Vec<Material>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    animations: Vec<Animation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    accessors: Vec<Accessor>,
    #[serde(rename = "bufferViews", skip_serializing_if = "Vec::is_empty")]
    buffer_views: Vec<BufferView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    buffers: Vec<Buffer>,
}

#[derive(Serialize)]
struct Asset {
    version: &'static str,
    generator: String,
}

#[derive(Serialize)]
struct Scene {
    nodes: Vec<usize>,
}

#[derive(Serialize)]
struct Node {
    name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    children: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mesh: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skin: Option<usize>,
    translation: Vec<f64>,
    rotation: Vec<f64>,
}

#[derive(Serialize)]
struct Skin {
    name: String,
    #[serde(rename = "inverseBindMatrices")]
    inverse_bind_matrices: usize,
    joints: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skeleton: Option<usize>,
}

#[derive(Serialize)]
struct Attributes {
    #[serde(rename = "POSITION")]
    position: usize,
    #[serde(rename = "NORMAL", skip_serializing_if = "Option::is_none")]
    normal: Option<usize>,
    #[serde(rename = "JOINTS_0", skip_serializing_if = "Option::is_none")]
    joints: Option<usize>,
    #[serde(rename = "WEIGHTS_0", skip_serializing_if = "Option::is_none")]
    weights: Option<usize>,
}

#[derive(Serialize)]
struct Target {
    #[serde(rename = "POSITION")]
    position: usize,
    #[serde(rename = "NORMAL", skip_serializing_if = "Option::is_none")]
    normal: Option<usize>,
}

#[derive(Serialize)]
struct Primitive {
    attributes: Attributes,
    indices: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    material: Option<usize>,
    mode: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    targets: Vec<Target>,
}

#[derive(Serialize)]
struct MeshExtras {
    #[serde(rename = "targetNames")]
    target_names: Vec<String>,
}

#[derive(Serialize)]
struct Mesh {
    name: String,
    primitives: Vec<Primitive>,
    #[serde(skip_serializing_if = "Option::is_none")]
    weights: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extras: Option<MeshExtras>,
}

#[derive(Serialize)]
struct Pbr {
    #[serde(rename = "baseColorFactor")]
    base_color_factor: Vec<f64>,
    #[serde(rename = "metallicFactor")]
    metallic_factor: f64,
    #[serde(rename = "roughnessFactor")]
    roughness_factor: f64,
}

#[derive(Serialize)]
struct Material {
    name: String,
    #[serde(rename = "pbrMetallicRoughness")]
    pbr: Pbr,
}

#[derive(Serialize)]
struct ChannelTarget {
    node: usize,
    path: &'static str,
}

#[derive(Serialize)]
struct Channel {
    sampler: usize,
    target: ChannelTarget,
}

#[derive(Serialize)]
struct Sampler {
    input: usize,
    interpolation: &'static str,
    output: usize,
}

#[derive(Serialize)]
struct EventExtras {
    vkskin_events: Vec<Event>,
}

#[derive(Serialize)]
struct Event {
    time: f64,
    name: String,
}

#[derive(Serialize)]
struct Animation {
    name: String,
    channels: Vec<Channel>,
    samplers: Vec<Sampler>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extras: Option<EventExtras>,
}

#[derive(Serialize)]
struct Accessor {
    #[serde(rename = "bufferView")]
    buffer_view: usize,
    #[serde(rename = "componentType")]
    component_type: u32,
    count: usize,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<Vec<f64>>,
}

#[derive(Serialize)]
struct BufferView {
    buffer: usize,
    #[serde(rename = "byteOffset")]
    byte_offset: usize,
    #[serde(rename = "byteLength")]
    byte_length: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<u32>,
}

#[derive(Serialize)]
struct Buffer {
    #[serde(rename = "byteLength")]
    byte_length: usize,
}

// ---------------------------------------------------------------------------

const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const TRIANGLES: u32 = 4;

/// An `f32` as the `f64` with the same shortest decimal spelling, so the JSON
/// says `0.1`, not `0.10000000149011612`, and reads back as the same `f32`.
fn num(v: f32) -> f64 {
    if !v.is_finite() {
        return 0.0;
    }
    v.to_string().parse::<f64>().unwrap_or(f64::from(v))
}

fn nums(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| num(x)).collect()
}

/// Accumulates the binary chunk and the accessors/views describing it.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<BufferView>,
    accessors: Vec<Accessor>,
}

impl Bin {
    /// Appends `data` as a new 4-byte aligned view and returns the view index.
    fn view(&mut self, data: &[u8], target: Option<u32>) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.views.push(BufferView { buffer: 0, byte_offset: offset, byte_length: data.len(), target });
        self.views.len() - 1
    }

    fn accessor(&mut self, accessor: Accessor) -> usize {
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// A FLOAT accessor of `N`-component elements; `bounds` adds min/max.
    fn floats<const N: usize>(
        &mut self,
        data: &[[f32; N]],
        kind: &'static str,
        target: Option<u32>,
        bounds: bool,
    ) -> usize {
        let flat: Vec<f32> = data.iter().flatten().copied().collect();
        let view = self.view(bytemuck::cast_slice(&flat), target);
        let (min, max) = if bounds {
            let mut lo = [f32::INFINITY; N];
            let mut hi = [f32::NEG_INFINITY; N];
            for e in data {
                for k in 0..N {
                    lo[k] = lo[k].min(e[k]);
                    hi[k] = hi[k].max(e[k]);
                }
            }
            if data.is_empty() {
                (lo, hi) = ([0.0; N], [0.0; N]);
            }
            (Some(nums(&lo)), Some(nums(&hi)))
        } else {
            (None, None)
        };
        self.accessor(Accessor {
            buffer_view: view,
            component_type: FLOAT,
            count: data.len(),
            kind,
            min,
            max,
        })
    }
}

/// Serialises `doc` as a GLB file.
pub fn write_glb(doc: &Document) -> Vec<u8> {
    let mut bin = Bin::default();

    let nodes = doc
        .nodes
        .iter()
        .map(|n| Node {
            name: n.name.clone(),
            children: n.children.clone(),
            mesh: n.mesh,
            skin: n.skin,
            translation: nums(&n.translation),
            rotation: nums(&n.rotation),
        })
        .collect();

    let skins = doc
        .skins
        .iter()
        .map(|s| Skin {
            name: s.name.clone(),
            inverse_bind_matrices: bin.floats(&s.inverse_binds, "MAT4", None, false),
            joints: s.joints.clone(),
            skeleton: s.skeleton,
        })
        .collect();

    let meshes = doc.meshes.iter().map(|m| write_mesh(&mut bin, m)).collect();

    let materials = doc
        .materials
        .iter()
        .map(|m| Material {
            name: m.name.clone(),
            pbr: Pbr {
                base_color_factor: nums(&m.base_color),
                metallic_factor: num(m.metallic),
                roughness_factor: num(m.roughness),
            },
        })
        .collect();

    let animations = doc.animations.iter().map(|a| write_animation(&mut bin, a)).collect();

    while !bin.bytes.len().is_multiple_of(4) {
        bin.bytes.push(0);
    }
    let has_bin = !bin.bytes.is_empty();
    let root = Root {
        asset: Asset { version: "2.0", generator: doc.generator.clone() },
        scene: 0,
        scenes: vec![Scene { nodes: doc.scene_nodes.clone() }],
        nodes,
        skins,
        meshes,
        materials,
        animations,
        accessors: std::mem::take(&mut bin.accessors),
        buffer_views: std::mem::take(&mut bin.views),
        buffers: if has_bin { vec![Buffer { byte_length: bin.bytes.len() }] } else { Vec::new() },
    };
    // Serialising these plain structs cannot fail (no maps with non-string keys).
    let json = serde_json::to_vec(&root).unwrap_or_default();
    glb_container(&json, has_bin.then_some(bin.bytes.as_slice()))
}

/// A GLB file (glTF 2.0 binary container) holding `json` and, when given, a
/// BIN chunk: the header, the JSON chunk padded with spaces and the BIN
/// chunk padded with zeros to 4 bytes, as the spec asks.
pub fn glb_container(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let padded = |len: usize| len.next_multiple_of(4);
    let (json_len, bin_len) = (padded(json.len()), bin.map(|b| padded(b.len())));
    let total = 12 + 8 + json_len + bin_len.map_or(0, |n| 8 + n);
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.resize(20 + json_len, b' ');
    if let (Some(bin), Some(bin_len)) = (bin, bin_len) {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}

fn write_mesh(bin: &mut Bin, m: &MeshData) -> Mesh {
    let primitives = m
        .primitives
        .iter()
        .map(|p| {
            let position = bin.floats(&p.positions, "VEC3", Some(ARRAY_BUFFER), true);
            let normal =
                (!p.normals.is_empty()).then(|| bin.floats(&p.normals, "VEC3", Some(ARRAY_BUFFER), false));
            let joints = (!p.joints.is_empty()).then(|| {
                // Joints paired with a zero weight are written as 0, as the
                // glTF validator expects (ACCESSOR_JOINTS_USED_ZERO_WEIGHT).
                let flat: Vec<u16> = p
                    .joints
                    .iter()
                    .zip(p.weights.iter().chain(std::iter::repeat(&[1.0; 4])))
                    .flat_map(|(j, w)| {
                        std::array::from_fn::<u16, 4, _>(|k| if w[k] == 0.0 { 0 } else { j[k] })
                    })
                    .collect();
                let view = bin.view(bytemuck::cast_slice(&flat), Some(ARRAY_BUFFER));
                bin.accessor(Accessor {
                    buffer_view: view,
                    component_type: UNSIGNED_SHORT,
                    count: p.joints.len(),
                    kind: "VEC4",
                    min: None,
                    max: None,
                })
            });
            let weights =
                (!p.weights.is_empty()).then(|| bin.floats(&p.weights, "VEC4", Some(ARRAY_BUFFER), false));
            let indices = if p.positions.len() <= usize::from(u16::MAX) {
                let small: Vec<u16> = p.indices.iter().map(|&i| i as u16).collect();
                let view = bin.view(bytemuck::cast_slice(&small), Some(ELEMENT_ARRAY_BUFFER));
                (view, UNSIGNED_SHORT)
            } else {
                (bin.view(bytemuck::cast_slice(&p.indices), Some(ELEMENT_ARRAY_BUFFER)), UNSIGNED_INT)
            };
            let indices = bin.accessor(Accessor {
                buffer_view: indices.0,
                component_type: indices.1,
                count: p.indices.len(),
                kind: "SCALAR",
                min: None,
                max: None,
            });
            let targets = p
                .targets
                .iter()
                .map(|t| Target {
                    // Morph POSITION accessors need min/max like any POSITION.
                    position: bin.floats(&t.positions, "VEC3", Some(ARRAY_BUFFER), true),
                    normal: (!t.normals.is_empty())
                        .then(|| bin.floats(&t.normals, "VEC3", Some(ARRAY_BUFFER), false)),
                })
                .collect();
            Primitive {
                attributes: Attributes { position, normal, joints, weights },
                indices,
                material: p.material,
                mode: TRIANGLES,
                targets,
            }
        })
        .collect();
    let targets = m.target_names.len();
    Mesh {
        name: m.name.clone(),
        primitives,
        weights: (targets > 0).then(|| vec![0.0; targets]),
        extras: (targets > 0).then(|| MeshExtras { target_names: m.target_names.clone() }),
    }
}

fn write_animation(bin: &mut Bin, a: &AnimationData) -> Animation {
    // Channels with identical key times share one input accessor.
    let mut inputs: Vec<(&[f32], usize)> = Vec::new();
    let mut channels = Vec::with_capacity(a.channels.len());
    let mut samplers = Vec::with_capacity(a.channels.len());
    for c in &a.channels {
        let input = match inputs.iter().find(|(t, _)| *t == c.times.as_slice()) {
            Some(&(_, i)) => i,
            None => {
                let scalars: Vec<[f32; 1]> = c.times.iter().map(|&t| [t]).collect();
                let i = bin.floats(&scalars, "SCALAR", None, true);
                inputs.push((&c.times, i));
                i
            }
        };
        let (output, path) = match &c.values {
            ChannelValues::Translation(v) => (bin.floats(v, "VEC3", None, false), "translation"),
            ChannelValues::Rotation(v) => (bin.floats(v, "VEC4", None, false), "rotation"),
            ChannelValues::Weights(v) => {
                let scalars: Vec<[f32; 1]> = v.iter().map(|&w| [w]).collect();
                (bin.floats(&scalars, "SCALAR", None, false), "weights")
            }
        };
        samplers.push(Sampler { input, interpolation: "LINEAR", output });
        channels.push(Channel { sampler: samplers.len() - 1, target: ChannelTarget { node: c.node, path } });
    }
    let extras = (!a.events.is_empty()).then(|| EventExtras {
        vkskin_events: a.events.iter().map(|e| Event { time: num(e.time), name: e.name.clone() }).collect(),
    });
    Animation { name: a.name.clone(), channels, samplers, extras }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_short_spelling() {
        assert_eq!(num(0.1), 0.1);
        assert_eq!(num(1.0), 1.0);
        assert_eq!(num(f32::NAN), 0.0);
        assert_eq!(num(0.1) as f32, 0.1f32);
    }

    #[test]
    fn chunks_are_padded_and_the_header_counts_them() {
        let doc = Document {
            generator: "test".into(),
            nodes: vec![NodeData { name: "n".into(), rotation: [0.0, 0.0, 0.0, 1.0], ..Default::default() }],
            scene_nodes: vec![0],
            ..Default::default()
        };
        let glb = write_glb(&doc);
        assert_eq!(&glb[..4], b"glTF");
        assert_eq!(u32::from_le_bytes([glb[8], glb[9], glb[10], glb[11]]) as usize, glb.len());
        assert!(glb.len().is_multiple_of(4));
        let json_len = u32::from_le_bytes([glb[12], glb[13], glb[14], glb[15]]) as usize;
        assert_eq!(20 + json_len, glb.len());
        assert_eq!(glb, write_glb(&doc));
    }

    #[test]
    fn a_bin_chunk_is_padded_with_zeros_and_gltf_reads_both_chunks() {
        let glb = glb_container(br#"{"asset":{"version":"2.0"}}"#, Some(&[1, 2, 3, 4, 5]));
        assert!(glb.len().is_multiple_of(4));
        assert_eq!(u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize, glb.len());
        let parsed = gltf::Glb::from_slice(&glb).expect("a valid GLB");
        assert_eq!(parsed.json.len(), 28, "27 bytes of JSON and one space");
        assert_eq!(parsed.bin.as_deref(), Some(&[1u8, 2, 3, 4, 5, 0, 0, 0][..]));
    }
}
