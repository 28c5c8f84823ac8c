//! The frame loop shared by headless rendering and (later) the window:
//! per frame, begin the slot (wait its fence) -> hand back the pixels that
//! slot rendered last time -> the caller's pose -> compute skinning -> draw
//! into the slot's target -> (optionally) copy it to the slot's readback
//! buffer -> submit.

use super::camera::Camera;
use super::gpu_model::GpuModel;
use super::layout::{BoneMatrix, NO_MORPHS, SkinRecord};
use super::mesh_pass::{
    DrawItem, FrameParams, FrameUniforms, MeshMaterials, MeshPass, SkinBindings, VertexPath,
};
use super::skin_pass::{CharacterId, OUTPUT_STRIDE, SkinInput, SkinPass};
use super::target::{CLEAR_COLOR, SlotTargets, choose_samples};
use super::textures::Textures;
use crate::asset::Model;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, GpuContext, GpuError};
use crate::scene::Evaluator;
use ash::vk;
use gpu_allocator::MemoryLocation;
use nalgebra::Matrix4;
use std::sync::Arc;

/// Receives a finished frame: `(frame number, RGBA8 sRGB pixels, rows top to bottom)`.
pub type PixelSink<'a> = dyn FnMut(u64, &[u8]) -> Result<(), String> + 'a;

/// How frames are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderSettings {
    /// Target size in pixels.
    pub extent: vk::Extent2D,
    /// Draw triangle edges only.
    pub wireframe: bool,
    /// Pre-skinned (compute) vertices, or skinning in the vertex shader.
    pub path: VertexPath,
    /// 4x MSAA when the device supports it; one sample otherwise.
    pub msaa: bool,
}

/// One model drawn as one character into per-slot offscreen targets.
pub struct Renderer {
    ring: FrameRing,
    skin: SkinPass,
    gpu_model: Arc<GpuModel>,
    model: Arc<Model>,
    mesh: MeshPass,
    textures: Textures,
    materials: MeshMaterials,
    targets: SlotTargets,
    vertex_skinning: Option<VertexSkinInputs>,
    /// One per drawn primitive; the vertex buffer handle is filled in per frame.
    draws: Vec<DrawItem>,
    settings: RenderSettings,
    /// Frame number whose pixels each slot's readback buffer holds, not yet handed out.
    pending: [Option<u64>; FRAMES_IN_FLIGHT],
    frames: u64,
    /// Things worth telling the user (textures that did not load, ...).
    pub warnings: Vec<String>,
}

impl Renderer {
    /// Uploads `model` and builds the passes and targets.
    pub fn new(ctx: &GpuContext, model: Arc<Model>, settings: RenderSettings) -> Result<Self, GpuError> {
        if settings.extent.width == 0 || settings.extent.height == 0 {
            return Err(GpuError::new("the target size must be at least 1x1"));
        }
        let limit = ctx.properties.limits.max_image_dimension2_d;
        if settings.extent.width > limit || settings.extent.height > limit {
            return Err(GpuError::new(format!(
                "the target size exceeds the device's limit of {limit} pixels"
            )));
        }
        if settings.wireframe && !ctx.features.fill_mode_non_solid {
            return Err(GpuError::new(
                "wireframe drawing is not supported by this device (fillModeNonSolid)",
            ));
        }
        // Built step by step; on error, what was made so far is freed (the
        // GPU has nothing pending: only one-shot uploads ran, and they waited).
        let mut ring = Some(FrameRing::new(ctx)?);
        let mut parts = Parts::default();
        let result = (|| {
            let gpu_model = Arc::new(GpuModel::upload(ctx, &model)?);
            parts.gpu_model = Some(gpu_model.clone());
            let mut skin = SkinPass::new(ctx)?;
            let character =
                skin.add_character(ctx, ring.as_mut().expect("ring"), gpu_model.clone(), model.clone());
            let character = match character {
                Ok(c) => c,
                Err(e) => {
                    skin.destroy(ctx);
                    return Err(e);
                }
            };
            parts.skin = Some(skin);
            let samples = if settings.msaa { choose_samples(ctx) } else { vk::SampleCountFlags::TYPE_1 };
            parts.mesh = Some(MeshPass::new(ctx, samples)?);
            let mut warnings = Vec::new();
            parts.textures = Some(Textures::load(ctx, &model, &mut warnings)?);
            parts.materials = Some(MeshMaterials::new(
                ctx,
                parts.mesh.as_ref().expect("mesh"),
                &model.materials,
                parts.textures.as_ref().expect("textures"),
            )?);
            parts.targets = Some(SlotTargets::new(ctx, settings.extent, samples)?);
            let skin = parts.skin.as_ref().expect("skin");
            if settings.path == VertexPath::VertexSkinning {
                parts.vertex_skinning = Some(VertexSkinInputs::new(ctx, &model, &gpu_model)?);
            }
            let draws = draw_items(skin, character, &gpu_model);
            Ok((warnings, draws))
        })();
        let (warnings, draws) = match result {
            Ok(r) => r,
            Err(e) => {
                parts.destroy(ctx);
                if let Some(r) = ring.take() {
                    r.destroy(ctx);
                }
                return Err(e);
            }
        };
        Ok(Renderer {
            ring: ring.take().expect("ring"),
            skin: parts.skin.take().expect("skin"),
            gpu_model: parts.gpu_model.take().expect("gpu model"),
            model,
            mesh: parts.mesh.take().expect("mesh"),
            textures: parts.textures.take().expect("textures"),
            materials: parts.materials.take().expect("materials"),
            targets: parts.targets.take().expect("targets"),
            vertex_skinning: parts.vertex_skinning.take(),
            draws,
            settings,
            pending: [None; FRAMES_IN_FLIGHT],
            frames: 0,
            warnings,
        })
    }

    /// The settings frames are drawn with.
    pub fn settings(&self) -> &RenderSettings {
        &self.settings
    }

    /// Samples per pixel of the targets (4 when the device supports 4x MSAA).
    pub fn samples(&self) -> vk::SampleCountFlags {
        self.mesh.samples
    }

    /// The model being drawn.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// Records and submits one frame of `pose`, placed by `world` (applied
    /// after skinning), seen by `camera`. When
    /// `readback` is set the frame's pixels are handed to `on_pixels` later:
    /// once the slot comes round again (after its fence) or in `finish`.
    /// Frames are handed out in order, as `(frame number, RGBA8 sRGB rows)`.
    pub fn render_frame(
        &mut self,
        ctx: &GpuContext,
        pose: &Evaluator,
        world: &Matrix4<f32>,
        camera: &Camera,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<u64, String> {
        let frame = self.frames;
        let slot = self.ring.begin_frame(ctx).map_err(|e| e.to_string())?;
        let index = slot.index;
        // begin_frame waited for this slot's fence: its readback buffer is
        // final, and nothing rewrites it before this frame is submitted.
        if let Some(done) = self.pending[index].take() {
            let handed = self.targets.get(index).pixels().map_err(|e| e.to_string());
            if let Err(e) = handed.and_then(|pixels| on_pixels(done, pixels)) {
                // Submit the empty command buffer so the ring stays usable.
                let _ = self.ring.end_frame(ctx, &[], &[]);
                return Err(e);
            }
        }
        let recorded = (|| {
            let skin_bindings = match &mut self.vertex_skinning {
                // The comparison path: no compute dispatch, the vertex shader skins.
                Some(v) => Some(v.write(index, pose, &self.gpu_model)?),
                None => {
                    // The pose changes every frame here: a fresh version each time.
                    let inputs = [SkinInput { pose, version: frame }];
                    self.skin.record(ctx, slot, &inputs, false)?;
                    None
                }
            };
            let cmd = slot.command_buffer;
            let target = self.targets.get(index);
            target.begin_barriers(ctx, cmd);
            target.begin_rendering(ctx, cmd, CLEAR_COLOR);
            let eye = [camera.eye.x, camera.eye.y, camera.eye.z];
            let uniforms = FrameUniforms::new(&camera.view_proj(), eye);
            let mut world_cols = [0.0f32; 16];
            world_cols.copy_from_slice(world.as_slice());
            let params = FrameParams {
                uniforms: &uniforms,
                path: self.settings.path,
                wireframe: self.settings.wireframe,
                skin: skin_bindings.as_ref(),
                world: world_cols,
            };
            let bound = self.mesh.begin(ctx, slot, &params);
            let bound = match bound {
                Ok(b) => b,
                Err(e) => {
                    target.end_rendering(ctx, cmd);
                    return Err(e);
                }
            };
            let output = self.skin.output_buffer(index);
            for item in &self.draws {
                let mut item = *item;
                item.vertices.0 = output;
                self.mesh.draw(ctx, cmd, &bound, &self.materials, &self.model.materials, &item);
            }
            target.end_rendering(ctx, cmd);
            if readback {
                target.record_readback(ctx, cmd);
            }
            Ok(())
        })();
        // The command buffer is ended and submitted even after a recording
        // error, so the ring stays consistent; the error is reported after.
        let submitted = self.ring.end_frame(ctx, &[], &[]);
        recorded.map_err(|e| e.to_string())?;
        submitted.map_err(|e| e.to_string())?;
        if readback {
            self.pending[index] = Some(frame);
        }
        self.frames += 1;
        Ok(frame)
    }

    /// Waits for every submitted frame and hands out the pixels not yet handed out, in order.
    pub fn finish(&mut self, ctx: &GpuContext, on_pixels: &mut PixelSink) -> Result<(), String> {
        self.ring.wait_all(ctx).map_err(|e| e.to_string())?;
        loop {
            let next = (0..FRAMES_IN_FLIGHT).filter_map(|s| self.pending[s].map(|f| (f, s))).min();
            let Some((frame, slot)) = next else { return Ok(()) };
            self.pending[slot] = None;
            on_pixels(frame, self.targets.get(slot).pixels().map_err(|e| e.to_string())?)?;
        }
    }

    /// Waits for the GPU and frees everything.
    pub fn destroy(self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        let Renderer { ring, skin, gpu_model, mesh, textures, materials, targets, vertex_skinning, .. } =
            self;
        ring.destroy(ctx);
        skin.destroy(ctx);
        if let Ok(g) = Arc::try_unwrap(gpu_model) {
            g.destroy(ctx);
        }
        materials.destroy(ctx);
        mesh.destroy(ctx);
        textures.destroy(ctx);
        targets.destroy(ctx);
        if let Some(v) = vertex_skinning {
            v.destroy(ctx);
        }
    }
}

/// What `Renderer::new` has built so far (freed together on error).
#[derive(Default)]
struct Parts {
    gpu_model: Option<Arc<GpuModel>>,
    skin: Option<SkinPass>,
    mesh: Option<MeshPass>,
    textures: Option<Textures>,
    materials: Option<MeshMaterials>,
    targets: Option<SlotTargets>,
    vertex_skinning: Option<VertexSkinInputs>,
}

impl Parts {
    fn destroy(&mut self, ctx: &GpuContext) {
        if let Some(s) = self.skin.take() {
            s.destroy(ctx);
        }
        if let Some(g) = self.gpu_model.take().and_then(|g| Arc::try_unwrap(g).ok()) {
            g.destroy(ctx);
        }
        if let Some(m) = self.materials.take() {
            m.destroy(ctx);
        }
        if let Some(m) = self.mesh.take() {
            m.destroy(ctx);
        }
        if let Some(t) = self.textures.take() {
            t.destroy(ctx);
        }
        if let Some(t) = self.targets.take() {
            t.destroy(ctx);
        }
        if let Some(v) = self.vertex_skinning.take() {
            v.destroy(ctx);
        }
    }
}

/// The draws of every primitive of `character` with vertices and indices.
/// Record indices follow the skin pass's rule: one record per output with
/// vertices, in output order.
fn draw_items(skin: &SkinPass, character: CharacterId, gpu: &GpuModel) -> Vec<DrawItem> {
    let mut draws = Vec::new();
    let mut record = 0u32;
    for o in skin.outputs(character) {
        if o.vertex_count == 0 {
            continue;
        }
        let p = &gpu.primitives[o.gpu_primitive];
        if p.index_count > 0 {
            draws.push(DrawItem {
                vertices: (vk::Buffer::null(), u64::from(o.output_offset) * OUTPUT_STRIDE),
                uvs: (gpu.uvs.raw, u64::from(p.source_offset) * 8),
                indices: gpu.indices.raw,
                first_index: p.first_index,
                index_count: p.index_count,
                material: p.material,
                record,
            });
        }
        record += 1;
    }
    draws
}

/// Inputs of vertex-shader skinning (set 0 of shaders/common.glsl) for one
/// character: records (static) and per-slot palettes and morph weights,
/// laid out as the skin pass lays out a single character (skins' joints in
/// order, then one entry per unskinned instance).
struct VertexSkinInputs {
    records: Buffer,
    palettes: Vec<Buffer>,
    weights: Vec<Buffer>,
    skin_bases: Vec<u32>,
    /// (skeleton joint, palette index) of each unskinned instance.
    rigid: Vec<(u32, u32)>,
}

impl VertexSkinInputs {
    fn new(ctx: &GpuContext, model: &Model, gpu: &GpuModel) -> Result<Self, GpuError> {
        let mut skin_bases = Vec::with_capacity(model.skins.len());
        let mut palette = 0u32;
        for s in &model.skins {
            skin_bases.push(palette);
            palette += s.joints.len() as u32;
        }
        let mut rigid = Vec::new();
        let mut records = Vec::new();
        for instance in &model.instances {
            let palette_offset = match instance.skin.and_then(|s| skin_bases.get(s).copied()) {
                Some(base) => base,
                None => {
                    rigid.push((instance.joint, palette));
                    palette += 1;
                    palette - 1
                }
            };
            for p in gpu.mesh_primitives(instance.mesh) {
                if p.vertex_count == 0 {
                    continue;
                }
                let influence_sets = if instance.skin.is_some() { p.influence_sets } else { 0 };
                records.push(SkinRecord {
                    source_offset: p.source_offset,
                    vertex_count: p.vertex_count,
                    output_offset: 0,
                    palette_offset,
                    influence_offset: p.influence_offset,
                    influence_sets,
                    morph_offset: p.morph_offset,
                    weight_offset: if p.morph_offset == NO_MORPHS { 0 } else { instance.morph_offset },
                });
            }
        }
        let host = MemoryLocation::CpuToGpu;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let bytes: &[u8] = bytemuck::cast_slice(&records);
        let mut out = VertexSkinInputs {
            records: Buffer::new(ctx, "vertex skinning records", bytes.len() as u64, usage, host)?,
            palettes: Vec::with_capacity(FRAMES_IN_FLIGHT),
            weights: Vec::with_capacity(FRAMES_IN_FLIGHT),
            skin_bases,
            rigid,
        };
        let result = (|| {
            // Written once before any submission reads it; never rewritten.
            out.records.write(0, bytes)?;
            for i in 0..FRAMES_IN_FLIGHT {
                let size = u64::from(palette.max(1)) * 64;
                out.palettes.push(Buffer::new(
                    ctx,
                    &format!("vertex skinning palette {i}"),
                    size,
                    usage,
                    host,
                )?);
                let size = (model.rest_morph_weights.len().max(1) * 4) as u64;
                out.weights.push(Buffer::new(
                    ctx,
                    &format!("vertex skinning weights {i}"),
                    size,
                    usage,
                    host,
                )?);
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(out),
            Err(e) => {
                out.destroy(ctx);
                Err(e)
            }
        }
    }

    /// Writes slot `slot`'s palette and weights for `pose` (the slot's fence
    /// has signalled, so the GPU no longer reads them; host writes before the
    /// submit are visible to it) and returns the set-0 bindings.
    fn write(&mut self, slot: usize, pose: &Evaluator, gpu: &GpuModel) -> Result<SkinBindings, GpuError> {
        for (s, &base) in self.skin_bases.iter().enumerate() {
            self.palettes[slot].write(u64::from(base) * 64, bytemuck::cast_slice(pose.palette(s)))?;
        }
        for &(joint, index) in &self.rigid {
            let m = pose.world().get(joint as usize).ok_or_else(|| GpuError::new("joint out of range"))?;
            self.palettes[slot]
                .write(u64::from(index) * 64, bytemuck::bytes_of(&BoneMatrix::from_matrix(m)))?;
        }
        self.weights[slot].write(0, bytemuck::cast_slice(&pose.pose().morph_weights))?;
        let whole =
            |buffer: vk::Buffer| vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        Ok([
            whole(gpu.sources.raw),
            whole(gpu.influences.raw),
            whole(gpu.morph_ranges.raw),
            whole(gpu.morph_entries.raw),
            whole(self.weights[slot].raw),
            whole(self.palettes[slot].raw),
            whole(self.records.raw),
        ])
    }

    fn destroy(self, ctx: &GpuContext) {
        self.records.destroy(ctx);
        self.palettes.into_iter().chain(self.weights).for_each(|b| b.destroy(ctx));
    }
}
