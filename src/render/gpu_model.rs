//! A model's static mesh data on the GPU: the streams compute skinning reads
//! (bind-pose vertices, influences, sparse morph deltas) and what the draw
//! pass needs besides the skinned output (indices, UVs), uploaded once.
//! Uploaded once, never rewritten: per-frame data lives in the skin pass's
//! slot buffers.
//!
//! Every stream concatenates all primitives of all meshes, in mesh order then
//! primitive order; `GpuPrimitive` says where each primitive's part starts.
//! A model drawn by several character instances is uploaded once and shared
//! (`Arc<GpuModel>`): instances differ only in their pose.

use super::detail_levels::{DETAIL_LEVELS, DetailLevels};
use super::layout::{Influence, MorphEntry, NO_MORPHS, PackedVertex, encode_direction, quantize_weights};
use super::skin_levels;
use crate::anim::{MeshPrimitive, MorphDeltas};
use crate::asset::Model;
use crate::gpu::barrier::Access;
use crate::gpu::{Buffer, GpuContext, GpuError, staging};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Every later reader of the uploaded streams: compute skinning (skin.comp
/// through uniform texel buffers, skin_storage.comp as storage), the
/// vertex-skinning shader (storage), draws (vertex attributes, indices) and
/// transfers (a skin pass concatenating models).
const STREAM_READS: &[Access] = &[
    Access::ComputeShaderStorageRead,
    Access::ComputeShaderUniformTexelRead,
    Access::VertexShaderStorageRead,
    Access::VertexBufferRead,
    Access::IndexBufferRead,
    Access::TransferRead,
];

/// Where one mesh primitive lives in the model's GPU streams.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPrimitive {
    /// Index into `Model::meshes` (the glTF mesh index).
    pub mesh: usize,
    /// Index into that mesh's `primitives`.
    pub primitive: usize,
    /// glTF primitive index within the mesh (`Mesh::primitive_indices`).
    pub gltf_primitive: usize,
    /// First `PackedVertex` (and first UV) of the primitive.
    pub source_offset: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// First `Influence` of set 0; set `s` starts at `+ s * vertex_count`.
    pub influence_offset: u32,
    /// Influence sets (4 joints each): 0 for an unskinned primitive.
    pub influence_sets: u32,
    /// Largest joint index the influences use (0 when unskinned).
    pub max_joint: u32,
    /// First of `vertex_count + 1` entries in `morph_ranges`, or `NO_MORPHS`.
    pub morph_offset: u32,
    /// Morph targets of the primitive (the mesh's target count).
    pub target_count: u32,
    /// Per detail level, `(first index, index count)` of its triangle list
    /// in `indices` (primitive-local indices, 0..vertex_count); level 0 is
    /// the full mesh, and a coarser level that could not simplify further
    /// repeats the one above (see `render::detail_levels`).
    pub levels: [(u32, u32); DETAIL_LEVELS],
    /// Offset of the table of vertices each coarser level draws in the
    /// model's `skin_levels` (`render::skin_levels`), or `NO_SKIN_LEVELS`.
    pub skin_levels: u32,
    /// Per detail level, the first word in `GpuModel::level_maps` of the
    /// map from a vertex to its place in the level's skinned output
    /// (`skin_levels::append_maps`), or `NO_LEVEL_MAP` (level 0, or no table).
    pub level_maps: [u32; DETAIL_LEVELS],
    /// Material index into `Model::materials`.
    pub material: Option<usize>,
    /// Whether the primitive has normals (else the streams hold zeros).
    pub has_normals: bool,
    /// Whether it has tangents (else zeros).
    pub has_tangents: bool,
    /// Whether it has texture coordinates (else zeros).
    pub has_uvs: bool,
}

/// Element counts of each stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamCounts {
    /// `PackedVertex` (and UV) count.
    pub sources: u32,
    /// `Influence` count.
    pub influences: u32,
    /// `morph_ranges` entry count (u32 each).
    pub morph_ranges: u32,
    /// `MorphEntry` count.
    pub morph_entries: u32,
    /// Index count (u32 each).
    pub indices: u32,
}

/// A model's device-local mesh streams. Destroy with `destroy` once no
/// submitted work uses them.
#[derive(Debug)]
pub struct GpuModel {
    /// `PackedVertex` per vertex (binding 0 of skinning). Usage: storage,
    /// vertex, transfer src/dst.
    pub sources: Buffer,
    /// `Influence` per vertex per set (binding 1). Usage: storage, vertex, transfer.
    pub influences: Buffer,
    /// Per morphed primitive, `vertex_count + 1` u32 bounds into
    /// `morph_entries` (binding 2): vertex v's entries are `[r[v], r[v + 1])`.
    pub morph_ranges: Buffer,
    /// Non-zero morph deltas, vertex-major (binding 3).
    pub morph_entries: Buffer,
    /// `[f32; 2]` texture coordinates per source vertex (zeros when absent),
    /// indexed like `sources`. Usage: vertex, storage, transfer.
    pub uvs: Buffer,
    /// u32 triangle-list indices, primitive-local. Usage: index, storage, transfer.
    pub indices: Buffer,
    /// Per primitive and coarser level, the u32 place of each vertex in the
    /// level's skinned output (`GpuPrimitive::level_maps`), read by pointer
    /// by the draws of pre-skinned vertices. Usage: storage, device address, transfer.
    pub level_maps: Buffer,
    /// `level_maps`' device address.
    pub level_maps_address: vk::DeviceAddress,
    /// Every primitive of every mesh, mesh-major.
    pub primitives: Vec<GpuPrimitive>,
    /// Per mesh, the index of its first entry in `primitives`.
    pub mesh_first_primitive: Vec<usize>,
    /// Element counts of the streams.
    pub counts: StreamCounts,
    /// A host copy of `morph_ranges`, so a skin pass that concatenates several
    /// models can rebase the entry indices.
    pub morph_ranges_host: Vec<u32>,
    /// The tables of vertices each primitive's coarser levels draw
    /// (`render::skin_levels`), for the skin pass to skin only those.
    pub skin_levels: Vec<u32>,
    /// The largest scene-space error of each detail level (`DetailLevels::error`).
    pub detail_error: [f32; DETAIL_LEVELS],
    /// A sphere around the rest and sampled poses, `[x, y, z, radius]`
    /// (`DetailLevels::bounds`).
    pub bounds: [f32; 4],
}

/// The host-side streams before upload.
#[derive(Default)]
struct Streams {
    sources: Vec<PackedVertex>,
    influences: Vec<Influence>,
    morph_ranges: Vec<u32>,
    morph_entries: Vec<MorphEntry>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
    level_maps: Vec<u32>,
    /// Host only: `GpuModel::skin_levels`.
    skin_levels: Vec<u32>,
    primitives: Vec<GpuPrimitive>,
    mesh_first_primitive: Vec<usize>,
}

fn to_u32(n: usize, what: &str) -> Result<u32, GpuError> {
    u32::try_from(n).map_err(|_| GpuError::new(format!("{what}: {n} does not fit the 32-bit GPU offsets")))
}

impl Streams {
    /// The seven streams' bytes, in `stream_specs` (and `GpuModel` field) order.
    fn bytes(&self) -> [&[u8]; STREAMS] {
        [
            bytemuck::cast_slice(&self.sources),
            bytemuck::cast_slice(&self.influences),
            bytemuck::cast_slice(&self.morph_ranges),
            bytemuck::cast_slice(&self.morph_entries),
            bytemuck::cast_slice(&self.uvs),
            bytemuck::cast_slice(&self.indices),
            bytemuck::cast_slice(&self.level_maps),
        ]
    }

    /// Their element counts (each fits u32: `add_primitive` checked the offsets).
    fn counts(&self) -> StreamCounts {
        StreamCounts {
            sources: self.sources.len() as u32,
            influences: self.influences.len() as u32,
            morph_ranges: self.morph_ranges.len() as u32,
            morph_entries: self.morph_entries.len() as u32,
            indices: self.indices.len() as u32,
        }
    }

    /// The streams of `model`, with `detail`'s coarser index lists after
    /// each primitive's own (`DetailLevels::default()`: none, every level
    /// the full list).
    fn build(model: &Model, detail: &DetailLevels) -> Result<Self, GpuError> {
        let mut s = Streams::default();
        let mut coarser = detail.primitives.iter();
        for (m, mesh) in model.meshes.iter().enumerate() {
            s.mesh_first_primitive.push(s.primitives.len());
            for (p, prim) in mesh.primitives.iter().enumerate() {
                let gltf_primitive = mesh.primitive_indices.get(p).copied().unwrap_or(p);
                let levels = coarser.next().map_or(&[] as &[Vec<u32>], |l| &l[..]);
                s.add_primitive(m, p, gltf_primitive, prim, levels)
                    .map_err(|e| GpuError::new(format!("{}: mesh {m} primitive {p}: {e}", model.file)))?;
            }
        }
        Ok(s)
    }

    fn add_primitive(
        &mut self,
        mesh: usize,
        primitive: usize,
        gltf_primitive: usize,
        prim: &MeshPrimitive,
        coarser: &[Vec<u32>],
    ) -> Result<(), GpuError> {
        let n = prim.vertex_count();
        let source_offset = to_u32(self.sources.len(), "source vertices")?;
        let vertex_count = to_u32(n, "vertices")?;
        for v in 0..n {
            let p = prim.positions[v];
            let normal = prim.normals.as_ref().and_then(|ns| ns.get(v)).copied().unwrap_or([0.0; 3]);
            let tangent = prim.tangents.as_ref().and_then(|ts| ts.get(v)).copied().unwrap_or([0.0; 4]);
            self.sources.push(PackedVertex {
                position: p,
                normal: encode_direction(normal),
                tangent: encode_direction([tangent[0], tangent[1], tangent[2]]),
                handedness: tangent[3],
            });
            self.uvs.push(prim.uvs.as_ref().and_then(|uv| uv.get(v)).copied().unwrap_or([0.0; 2]));
        }

        let influence_offset = to_u32(self.influences.len(), "influences")?;
        let (influence_sets, max_joint) = match &prim.influences {
            None => (0, 0),
            Some(inf) => {
                let k = inf.per_vertex;
                if k == 0 || inf.joints.len() != k * n || inf.weights.len() != k * n {
                    return Err(GpuError::new(format!(
                        "{k} influences per vertex, {} joints, {} weights for {n} vertices",
                        inf.joints.len(),
                        inf.weights.len()
                    )));
                }
                // Set s holds pairs 4s..4s+4 of every vertex (zero-weight padding
                // past per_vertex): "set 0 for all vertices, then set 1".
                let sets = k.div_ceil(4);
                for set in 0..sets {
                    for v in 0..n {
                        let (mut joints, mut weights) = ([0u16; 4], [0.0f32; 4]);
                        for c in 0..4 {
                            let i = set * 4 + c;
                            if i < k {
                                joints[c] = inf.joints[v * k + i];
                                weights[c] = inf.weights[v * k + i];
                            }
                        }
                        self.influences.push(Influence { joints, weights: quantize_weights(weights) });
                    }
                }
                let max_joint = inf.joints.iter().copied().max().unwrap_or(0);
                (to_u32(sets, "influence sets")?, u32::from(max_joint))
            }
        };

        let target_count = to_u32(prim.morph_targets.len(), "morph targets")?;
        let morph_offset = if prim.morph_targets.is_empty() {
            NO_MORPHS
        } else {
            let offset = to_u32(self.morph_ranges.len(), "morph ranges")?;
            self.add_morphs(prim)?;
            offset
        };

        if let Some(bad) = prim.indices.iter().find(|&&i| i as usize >= n) {
            return Err(GpuError::new(format!("index {bad} beyond {n} vertices")));
        }
        let mut levels = [(0, 0); DETAIL_LEVELS];
        levels[0] = (to_u32(self.indices.len(), "indices")?, to_u32(prim.indices.len(), "indices")?);
        self.indices.extend_from_slice(&prim.indices);
        for k in 1..DETAIL_LEVELS {
            // DetailLevels only simplifies valid lists, into the same vertices.
            levels[k] = match coarser.get(k - 1) {
                Some(list) if !list.is_empty() => {
                    let first = to_u32(self.indices.len(), "indices")?;
                    self.indices.extend_from_slice(list);
                    (first, to_u32(list.len(), "indices")?)
                }
                _ => levels[k - 1],
            };
        }
        let skin_levels =
            skin_levels::append_table(&mut self.skin_levels, vertex_count, &self.indices, &levels);
        let level_maps =
            skin_levels::append_maps(&mut self.level_maps, &self.skin_levels, skin_levels, vertex_count);
        to_u32(self.level_maps.len(), "level map words")?;
        self.primitives.push(GpuPrimitive {
            mesh,
            primitive,
            gltf_primitive,
            source_offset,
            vertex_count,
            influence_offset,
            influence_sets,
            max_joint,
            morph_offset,
            target_count,
            levels,
            skin_levels,
            level_maps,
            material: prim.material,
            has_normals: prim.normals.is_some(),
            has_tangents: prim.tangents.is_some(),
            has_uvs: prim.uvs.is_some(),
        });
        Ok(())
    }

    /// Vertex-major sparse morph entries: for each vertex, one `MorphEntry`
    /// per target that moves any of its attributes, in target order (the
    /// CPU reference's summation order), then the vertex's range bound.
    fn add_morphs(&mut self, prim: &MeshPrimitive) -> Result<(), GpuError> {
        let n = prim.vertex_count();
        // (vertex, target, attribute, delta) for every non-zero delta.
        let mut deltas: Vec<(u32, u32, u8, [f32; 3])> = Vec::new();
        for (t, target) in prim.morph_targets.iter().enumerate() {
            let t = to_u32(t, "morph targets")?;
            for (attribute, stream) in
                [&target.positions, &target.normals, &target.tangents].iter().enumerate()
            {
                if let Some(stream) = stream {
                    collect_deltas(stream, n, t, attribute as u8, &mut deltas)?;
                }
            }
        }
        // Stable: a (vertex, target) pair keeps its attributes together.
        deltas.sort_by_key(|&(v, t, _, _)| (v, t));
        let mut next = 0usize;
        for v in 0..n as u32 {
            self.morph_ranges.push(to_u32(self.morph_entries.len(), "morph entries")?);
            while next < deltas.len() && deltas[next].0 == v {
                let target = deltas[next].1;
                let mut entry = MorphEntry {
                    position: [0.0, 0.0, 0.0, f32::from_bits(target)],
                    normal: [0.0; 4],
                    tangent: [0.0; 4],
                };
                while next < deltas.len() && deltas[next].0 == v && deltas[next].1 == target {
                    let (_, _, attribute, d) = deltas[next];
                    let slot = match attribute {
                        0 => &mut entry.position,
                        1 => &mut entry.normal,
                        _ => &mut entry.tangent,
                    };
                    for c in 0..3 {
                        slot[c] += d[c];
                    }
                    next += 1;
                }
                self.morph_entries.push(entry);
            }
        }
        self.morph_ranges.push(to_u32(self.morph_entries.len(), "morph entries")?);
        Ok(())
    }
}

/// Appends every non-zero delta of `stream` (checked against `n` vertices).
fn collect_deltas(
    stream: &MorphDeltas,
    n: usize,
    target: u32,
    attribute: u8,
    out: &mut Vec<(u32, u32, u8, [f32; 3])>,
) -> Result<(), GpuError> {
    if let MorphDeltas::Sparse { indices, deltas } = stream
        && indices.len() != deltas.len()
    {
        return Err(GpuError::new(format!(
            "morph target {target}: {} sparse indices, {} deltas",
            indices.len(),
            deltas.len()
        )));
    }
    if stream.vertex_bound() > n {
        return Err(GpuError::new(format!("morph target {target} touches vertices beyond {n}")));
    }
    stream.for_each(|v, d| {
        if d != [0.0; 3] {
            out.push((v as u32, target, attribute, d));
        }
    });
    Ok(())
}

/// A model's streams built on the host, before upload: what `GpuModel`
/// holds on the device but the detail levels' index lists, and the
/// `StreamTable` of where each primitive lies in them (for planning without
/// a device, e.g. `skin_pass::SkinLayout`, which reads no index).
pub struct ModelStreams(Streams);

impl ModelStreams {
    /// Builds the streams of every mesh of `model` (no device), without
    /// simplifying anything: every detail level is the full mesh.
    pub fn build(model: &Model) -> Result<Self, GpuError> {
        Streams::build(model, &DetailLevels::default()).map(ModelStreams)
    }

    /// The same with its detail levels (`DetailLevels::build`), as
    /// `GpuModel::upload` builds them: the skin level tables filled in.
    pub fn build_with_levels(model: &Model) -> Result<Self, GpuError> {
        Streams::build(model, &DetailLevels::build(model)).map(ModelStreams)
    }

    /// Where each primitive lies in them.
    pub fn table(&self) -> StreamTable<'_> {
        let s = &self.0;
        StreamTable {
            primitives: &s.primitives,
            mesh_first_primitive: &s.mesh_first_primitive,
            counts: s.counts(),
            morph_ranges: &s.morph_ranges,
            skin_levels: &s.skin_levels,
        }
    }
}

/// Where each primitive of a model lies in its streams, and their element
/// counts: plain data, the same for a `GpuModel` (`GpuModel::table`) as for
/// `ModelStreams` of its model but for the index lists (a `GpuModel` holds
/// its detail levels' too).
#[derive(Debug, Clone, Copy)]
pub struct StreamTable<'a> {
    /// Every primitive of every mesh, mesh-major.
    pub primitives: &'a [GpuPrimitive],
    /// Per mesh, the index of its first entry in `primitives`.
    pub mesh_first_primitive: &'a [usize],
    /// Element counts of the streams.
    pub counts: StreamCounts,
    /// The morph ranges stream (u32 bounds into the morph entries).
    pub morph_ranges: &'a [u32],
    /// The primitives' skin level tables (`GpuModel::skin_levels`).
    pub skin_levels: &'a [u32],
}

impl<'a> StreamTable<'a> {
    /// The primitives of mesh `mesh`, in `Mesh::primitives` order.
    pub fn mesh_primitives(&self, mesh: usize) -> &'a [GpuPrimitive] {
        let Some(&first) = self.mesh_first_primitive.get(mesh) else { return &[] };
        let end = self.mesh_first_primitive.get(mesh + 1).copied().unwrap_or(self.primitives.len());
        &self.primitives[first..end]
    }
}

/// How many streams a model has (`Streams::bytes`).
const STREAMS: usize = 7;

/// The streams' names and usages, in `Streams::bytes` order. Storage
/// buffers for the vertex path and skin_storage.comp, uniform texel buffers
/// for skin.comp; transfers for the upload and a skin pass's concatenation;
/// the level maps by pointer.
fn stream_specs() -> [(&'static str, vk::BufferUsageFlags); STREAMS] {
    let transfer = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
    let storage =
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER | transfer;
    [
        ("source vertices", storage | vk::BufferUsageFlags::VERTEX_BUFFER),
        ("influences", storage | vk::BufferUsageFlags::VERTEX_BUFFER),
        ("morph ranges", storage),
        ("morph entries", storage),
        ("uvs", storage | vk::BufferUsageFlags::VERTEX_BUFFER),
        ("indices", storage | vk::BufferUsageFlags::INDEX_BUFFER),
        ("level maps", storage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS),
    ]
}

/// Device-local buffers for `bytes` (`Streams::bytes`), named after `file`;
/// on failure the ones already made are freed.
fn create_stream_buffers(
    ctx: &GpuContext,
    file: &str,
    bytes: &[&[u8]; STREAMS],
) -> Result<Vec<Buffer>, GpuError> {
    let mut buffers: Vec<Buffer> = Vec::with_capacity(STREAMS);
    for ((name, usage), data) in stream_specs().iter().zip(bytes) {
        let name = format!("{file}: {name}");
        // At least 16 bytes: skin.comp views the streams as texels
        // of up to 16 bytes, and a view holds at least one, even of
        // an empty stream (which no record then reads).
        let size = (data.len() as u64).max(16);
        match Buffer::new(ctx, &name, size, *usage, MemoryLocation::GpuOnly) {
            Ok(b) => buffers.push(b),
            Err(e) => {
                buffers.into_iter().for_each(|b| b.destroy(ctx));
                return Err(e);
            }
        }
    }
    Ok(buffers)
}

impl GpuModel {
    /// Builds the streams of every mesh of `model`, with its detail levels
    /// (`DetailLevels::build`), and uploads them through one staging
    /// buffer, waiting for the copy (setup work, not per frame).
    pub fn upload(ctx: &GpuContext, model: &Model) -> Result<GpuModel, GpuError> {
        let detail = DetailLevels::build(model);
        let s = Streams::build(model, &detail)?;
        let bytes = s.bytes();
        let buffers = create_stream_buffers(ctx, &model.file, &bytes)?;
        // The copies must be visible to every later reader on this queue:
        // compute skinning (storage reads), vertex-shader skinning and
        // draws (vertex attributes, indices), and transfers (a skin pass
        // concatenating models).
        if let Err(e) =
            staging::copy_through_staging(ctx, "model upload staging", &buffers, &bytes, STREAM_READS)
        {
            buffers.into_iter().for_each(|b| b.destroy(ctx));
            return Err(e);
        }
        let counts = s.counts();
        let mut it = buffers.into_iter();
        let mut next = || it.next().expect("a buffer per stream");
        let (sources, influences, morph_ranges, morph_entries) = (next(), next(), next(), next());
        let (uvs, indices, level_maps) = (next(), next(), next());
        let level_maps_address = level_maps.device_address(ctx);
        Ok(GpuModel {
            sources,
            influences,
            morph_ranges,
            morph_entries,
            uvs,
            indices,
            level_maps,
            level_maps_address,
            primitives: s.primitives,
            mesh_first_primitive: s.mesh_first_primitive,
            counts,
            morph_ranges_host: s.morph_ranges,
            skin_levels: s.skin_levels,
            detail_error: detail.error,
            bounds: detail.bounds,
        })
    }

    /// Where each primitive lies in the streams (see `StreamTable`).
    pub fn table(&self) -> StreamTable<'_> {
        StreamTable {
            primitives: &self.primitives,
            mesh_first_primitive: &self.mesh_first_primitive,
            counts: self.counts,
            morph_ranges: &self.morph_ranges_host,
            skin_levels: &self.skin_levels,
        }
    }

    /// The primitive `primitive` (index into `Mesh::primitives`) of mesh `mesh`.
    pub fn primitive(&self, mesh: usize, primitive: usize) -> Option<&GpuPrimitive> {
        let first = *self.mesh_first_primitive.get(mesh)?;
        let end = self.mesh_first_primitive.get(mesh + 1).copied().unwrap_or(self.primitives.len());
        self.primitives[first..end].get(primitive)
    }

    /// The primitives of mesh `mesh`, in `Mesh::primitives` order.
    pub fn mesh_primitives(&self, mesh: usize) -> &[GpuPrimitive] {
        self.table().mesh_primitives(mesh)
    }

    /// Frees the buffers; the caller guarantees no pending GPU use (e.g.
    /// after `FrameRing::wait_all`, or through `FrameRing::retire`).
    pub fn destroy(self, ctx: &GpuContext) {
        let streams = [self.sources, self.influences, self.morph_ranges, self.morph_entries];
        for b in streams.into_iter().chain([self.uvs, self.indices, self.level_maps]) {
            b.destroy(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Influences, MorphTarget};

    #[test]
    fn morph_entries_are_vertex_major_and_sparse() {
        let prim = MeshPrimitive {
            positions: vec![[0.0; 3]; 3],
            indices: vec![0, 1, 2],
            morph_targets: vec![
                MorphTarget {
                    positions: Some(MorphDeltas::Dense(vec![[1.0, 0.0, 0.0], [0.0; 3], [2.0, 0.0, 0.0]])),
                    normals: Some(MorphDeltas::Sparse { indices: vec![2], deltas: vec![[0.0, 1.0, 0.0]] }),
                    tangents: None,
                },
                MorphTarget {
                    positions: Some(MorphDeltas::Sparse { indices: vec![0], deltas: vec![[0.0, 0.0, 3.0]] }),
                    normals: None,
                    tangents: None,
                },
            ],
            ..Default::default()
        };
        let mut s = Streams::default();
        s.add_primitive(0, 0, 0, &prim, &[]).unwrap();
        // Vertex 0: targets 0 and 1; vertex 1: nothing; vertex 2: target 0 (position + normal).
        assert_eq!(s.morph_ranges, vec![0, 2, 2, 3]);
        assert_eq!(s.morph_entries[0].position, [1.0, 0.0, 0.0, f32::from_bits(0)]);
        assert_eq!(s.morph_entries[1].position, [0.0, 0.0, 3.0, f32::from_bits(1)]);
        assert_eq!(s.morph_entries[2].position[0], 2.0);
        assert_eq!(s.morph_entries[2].normal, [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(s.primitives[0].morph_offset, 0);
    }

    #[test]
    fn eight_influences_make_two_sets() {
        let prim = MeshPrimitive {
            positions: vec![[0.0; 3]; 2],
            indices: vec![0, 1, 1],
            influences: Some(Influences {
                per_vertex: 8,
                joints: (0..16).collect(),
                weights: vec![0.125; 16],
            }),
            ..Default::default()
        };
        let mut s = Streams::default();
        s.add_primitive(0, 0, 0, &prim, &[]).unwrap();
        assert_eq!(s.primitives[0].influence_sets, 2);
        assert_eq!(s.primitives[0].max_joint, 15);
        // Set 0 of both vertices, then set 1 of both.
        let joints: Vec<[u16; 4]> = s.influences.iter().map(|i| i.joints).collect();
        assert_eq!(joints, vec![[0, 1, 2, 3], [8, 9, 10, 11], [4, 5, 6, 7], [12, 13, 14, 15]]);
        // Each set carries half of the weight (8 x 0.125), in unorm16.
        let sums: Vec<u32> =
            s.influences.iter().map(|i| i.weights.iter().map(|&w| u32::from(w)).sum()).collect();
        assert!(sums.iter().all(|&w| w.abs_diff(32768) <= 1), "{sums:?}");
    }
}
