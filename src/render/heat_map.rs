//! The weight heat map's vertex stream: for one skeleton joint, each vertex's
//! skin weight of that joint, one f32 per `GpuModel` source vertex (the UV
//! stream's layout, which `MeshPass::begin_with_heat` relies on). It never
//! rewrites a buffer a frame in flight may read.
//!
//! Computed on the CPU and uploaded only when the joint or the model
//! changes; a replaced buffer is retired into the frame ring, since frames in
//! flight may still read it.

use super::gpu_model::GpuModel;
use crate::asset::Model;
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Fills `out` (resized to the source vertex count of `gpu`) with each
/// vertex's weight of skeleton joint `joint`: the sum of the weights of its
/// influences whose skin joint is `joint`, over the sum of all its weights
/// (as skinning renormalises). A mesh drawn by several skinned instances
/// uses the first one's skin; unskinned meshes get 1 on the joint that
/// carries them and 0 elsewhere.
pub fn joint_weights(model: &Model, gpu: &GpuModel, joint: usize, out: &mut Vec<f32>) {
    out.clear();
    out.resize(gpu.counts.sources as usize, 0.0);
    for (mesh_index, mesh) in model.meshes.iter().enumerate() {
        let Some(instance) = model.instances.iter().find(|i| i.mesh == mesh_index) else { continue };
        let skin = instance.skin.and_then(|s| model.skins.get(s));
        for g in gpu.mesh_primitives(mesh_index) {
            let Some(primitive) = mesh.primitives.get(g.primitive) else { continue };
            let start = g.source_offset as usize;
            let Some(dst) = out.get_mut(start..start + g.vertex_count as usize) else { continue };
            match (skin, &primitive.influences) {
                (Some(skin), Some(inf)) if inf.per_vertex > 0 => {
                    let vertices =
                        inf.joints.chunks_exact(inf.per_vertex).zip(inf.weights.chunks_exact(inf.per_vertex));
                    for (w_out, (joints, weights)) in dst.iter_mut().zip(vertices) {
                        let (mut mine, mut total) = (0.0f32, 0.0f32);
                        for (&sj, &w) in joints.iter().zip(weights) {
                            total += w;
                            if skin.joints.get(sj as usize).is_some_and(|&j| j as usize == joint) {
                                mine += w;
                            }
                        }
                        *w_out = if total > 0.0 { mine / total } else { 0.0 };
                    }
                }
                _ => dst.fill(if instance.joint as usize == joint { 1.0 } else { 0.0 }),
            }
        }
    }
}

/// The heat stream of the selected joint, on the GPU.
#[derive(Default)]
pub struct HeatMap {
    buffer: Option<Buffer>,
    /// Joint the buffer shows.
    joint: Option<usize>,
    scratch: Vec<f32>,
}

impl HeatMap {
    /// An empty heat map (no buffer until `update` gets a joint).
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the stream show `joint` of `model` (drawn from `gpu`). Does
    /// nothing when it already does; otherwise builds a new buffer and
    /// retires the old one into `ring` (frames in flight may read it).
    /// `None` keeps the current buffer (it is simply not used).
    pub fn update(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        model: &Model,
        gpu: &GpuModel,
        joint: Option<usize>,
    ) -> Result<(), GpuError> {
        let Some(joint) = joint.filter(|&j| j < model.skeleton.len()) else { return Ok(()) };
        if self.joint == Some(joint) && self.buffer.is_some() {
            return Ok(());
        }
        joint_weights(model, gpu, joint, &mut self.scratch);
        let bytes: &[u8] = bytemuck::cast_slice(&self.scratch);
        let mut buffer = Buffer::new(
            ctx,
            "heat map weights",
            bytes.len() as u64,
            vk::BufferUsageFlags::VERTEX_BUFFER,
            MemoryLocation::CpuToGpu,
        )?;
        // A fresh buffer: no submission reads it yet.
        if let Err(e) = buffer.write(0, bytes) {
            buffer.destroy(ctx);
            return Err(e);
        }
        if let Some(old) = self.buffer.replace(buffer) {
            ring.retire(Retired::Buffer(old));
        }
        self.joint = Some(joint);
        Ok(())
    }

    /// Forgets the stream (call when the model changes), retiring the buffer into `ring`.
    pub fn reset(&mut self, ring: &mut FrameRing) {
        if let Some(old) = self.buffer.take() {
            ring.retire(Retired::Buffer(old));
        }
        self.joint = None;
    }

    /// The buffer for `MeshPass::begin_with_heat`, when it shows `joint`.
    pub fn buffer_for(&self, joint: Option<usize>) -> Option<vk::Buffer> {
        self.buffer.as_ref().filter(|_| joint.is_some() && self.joint == joint).map(|b| b.raw)
    }

    /// Frees the buffer; the caller guarantees no pending GPU use.
    pub fn destroy(self, ctx: &GpuContext) {
        if let Some(b) = self.buffer {
            b.destroy(ctx);
        }
    }
}
