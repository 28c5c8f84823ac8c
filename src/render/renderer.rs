//! The frame loop shared by headless rendering and (later) the window:
//! per frame, begin the slot (wait its fence) -> hand back the pixels that
//! slot rendered last time -> the caller's pose -> compute skinning -> draw
//! into the slot's target -> (optionally) copy it to the slot's readback
//! buffer -> submit.

use super::camera::Camera;
use super::gpu_model::GpuModel;
use super::heat_map::HeatMap;
use super::mesh_pass::{
    BoundFrame, DrawItem, FrameParams, FrameUniforms, MeshMaterials, MeshPass, SkinBindings, VertexPath,
};
use super::skin_pass::{CharacterId, OUTPUT_STRIDE, SkinInput, SkinPass, SkinStats};
use super::target::{CLEAR_COLOR, COLOR_FORMAT, ScreenTarget, SlotTargets, choose_samples};
use super::textures::Textures;
use crate::anim::{SkinnedPose, SkinningMethod};
use crate::asset::Model;
use crate::gpu::frame::Retired;
use crate::gpu::{FRAMES_IN_FLIGHT, FrameRing, FrameSlot, GpuContext, GpuError};
use ash::vk;
use nalgebra::Matrix4;
use std::sync::Arc;

/// Receives a finished frame: `(frame number, RGBA8 sRGB pixels, rows top to bottom)`.
pub type PixelSink<'a> = dyn FnMut(u64, &[u8]) -> Result<(), String> + 'a;

/// GPU time of one frame's passes, in microseconds (from timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuTimes {
    /// The skinning dispatch (0 on the vertex-skinning path).
    pub skin_us: f64,
    /// Drawing the scene (clear, mesh, overlays in the scene pass, resolve).
    pub draw_us: f64,
}

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
    /// How influences are blended, on either path.
    pub skinning: SkinningMethod,
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
    /// Offscreen targets with readback (headless); `None` for a window,
    /// which draws into swapchain images through a `ScreenTarget`.
    targets: Option<SlotTargets>,
    /// Per slot: timestamp queries of its last screen frame (skin before/after, draw before/after).
    queries: [[Option<u32>; 4]; FRAMES_IN_FLIGHT],
    /// Set-0 bindings of this screen frame (vertex-skinning path).
    screen_skin: Option<SkinBindings>,
    /// The weight heat map's stream (screen frames).
    heat: HeatMap,
    /// Joint whose weights colour the mesh; `None` shades normally.
    heat_joint: Option<usize>,
    /// One per drawn primitive; the vertex buffer handle is filled in per frame.
    draws: Vec<DrawItem>,
    /// Static scenery (a level) drawn with the character, in world space.
    scenery: Option<Scenery>,
    settings: RenderSettings,
    /// Frame number whose pixels each slot's readback buffer holds, not yet handed out.
    pending: [Option<u64>; FRAMES_IN_FLIGHT],
    frames: u64,
    /// Things worth telling the user (textures that did not load, ...).
    pub warnings: Vec<String>,
}

impl Renderer {
    /// Uploads `model` and builds the passes and offscreen targets.
    pub fn new(ctx: &GpuContext, model: Arc<Model>, settings: RenderSettings) -> Result<Self, GpuError> {
        Self::build(ctx, model, settings, COLOR_FORMAT, true)
    }

    /// Uploads `model` and builds the passes for drawing into colour images
    /// of `color_format` (a swapchain's) with the `begin_screen_frame` family
    /// of calls; no offscreen target (`settings.extent` is not used).
    pub fn new_for_screen(
        ctx: &GpuContext,
        model: Arc<Model>,
        settings: RenderSettings,
        color_format: vk::Format,
    ) -> Result<Self, GpuError> {
        Self::build(ctx, model, settings, color_format, false)
    }

    fn build(
        ctx: &GpuContext,
        model: Arc<Model>,
        settings: RenderSettings,
        color_format: vk::Format,
        offscreen: bool,
    ) -> Result<Self, GpuError> {
        if offscreen && (settings.extent.width == 0 || settings.extent.height == 0) {
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
            let mut skin = SkinPass::with_method(ctx, settings.skinning)?;
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
            parts.mesh = Some(MeshPass::with_method(ctx, samples, color_format, settings.skinning)?);
            let mut warnings = Vec::new();
            parts.textures = Some(Textures::load(ctx, &model, &mut warnings)?);
            parts.materials = Some(MeshMaterials::new(
                ctx,
                parts.mesh.as_ref().expect("mesh"),
                &model.materials,
                parts.textures.as_ref().expect("textures"),
            )?);
            if offscreen {
                parts.targets = Some(SlotTargets::new(ctx, settings.extent, samples)?);
            }
            let skin = parts.skin.as_ref().expect("skin");
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
            targets: parts.targets.take(),
            queries: [[None; 4]; FRAMES_IN_FLIGHT],
            screen_skin: None,
            heat: HeatMap::new(),
            heat_joint: None,
            draws,
            scenery: None,
            settings,
            pending: [None; FRAMES_IN_FLIGHT],
            frames: 0,
            warnings,
        })
    }

    /// Draws `scenery` (a static model in world space, e.g. a level) with
    /// every later frame. Call between frames, once.
    pub fn add_scenery(&mut self, ctx: &GpuContext, scenery: Arc<Model>) -> Result<(), GpuError> {
        if self.scenery.is_some() {
            return Err(GpuError::new("the renderer already has scenery"));
        }
        let gpu_model = Arc::new(GpuModel::upload(ctx, &scenery)?);
        let character = self.skin.add_character(ctx, &mut self.ring, gpu_model.clone(), scenery.clone());
        let character = match character {
            Ok(c) => c,
            Err(e) => {
                if let Ok(g) = Arc::try_unwrap(gpu_model) {
                    g.destroy(ctx);
                }
                return Err(e);
            }
        };
        let textures = Textures::load(ctx, &scenery, &mut self.warnings)?;
        let materials = MeshMaterials::new(ctx, &self.mesh, &scenery.materials, &textures);
        let materials = match materials {
            Ok(m) => m,
            Err(e) => {
                textures.destroy(ctx);
                return Err(e);
            }
        };
        let draws = draw_items(&self.skin, character, &gpu_model);
        self.scenery = Some(Scenery { model: scenery, gpu_model, textures, materials, draws });
        Ok(())
    }

    /// The skin-pass inputs of a frame: the character's, then the scenery's.
    fn inputs<'a>(&self, input: SkinInput<'a>) -> ([SkinInput<'a>; 2], usize) {
        match &self.scenery {
            Some(s) => ([input, s.input()], 2),
            None => ([input, input], 1),
        }
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

    /// Records and submits one frame of `input.pose` (uploaded when
    /// `input.version` differs from what the frame slot holds), placed by
    /// `world` (applied after skinning), seen by `camera`. When
    /// `readback` is set the frame's pixels are handed to `on_pixels` later:
    /// once the slot comes round again (after its fence) or in `finish`.
    /// Frames are handed out in order, as `(frame number, RGBA8 sRGB rows)`.
    pub fn render_frame(
        &mut self,
        ctx: &GpuContext,
        input: SkinInput,
        world: &Matrix4<f32>,
        camera: &Camera,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<u64, String> {
        let frame = self.frames;
        let (pair, count) = self.inputs(input);
        let Some(targets) = self.targets.as_ref() else {
            return Err("this renderer draws to a window, not to offscreen targets".into());
        };
        let slot = self.ring.begin_frame(ctx).map_err(|e| e.to_string())?;
        let index = slot.index;
        // begin_frame waited for this slot's fence: its readback buffer is
        // final, and nothing rewrites it before this frame is submitted.
        if let Some(done) = self.pending[index].take() {
            let handed = targets.get(index).pixels().map_err(|e| e.to_string());
            if let Err(e) = handed.and_then(|pixels| on_pixels(done, pixels)) {
                // Submit the empty command buffer so the ring stays usable.
                let _ = self.ring.end_frame(ctx, &[], &[]);
                return Err(e);
            }
        }
        let recorded = (|| {
            let inputs = &pair[..count];
            let skin_bindings = match self.settings.path {
                // The comparison path: no compute dispatch, the vertex shader
                // skins from the skin pass's own slot buffers (see
                // `vertex_skinning_inputs` for why no barrier is needed).
                VertexPath::VertexSkinning => Some(vertex_skinning_inputs(&mut self.skin, slot, inputs)?.0),
                VertexPath::PreSkinned => {
                    // Records the compute -> vertex input barrier after the dispatch.
                    self.skin.record(ctx, slot, inputs, false)?;
                    None
                }
            };
            let cmd = slot.command_buffer;
            let target = targets.get(index);
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
            draw_scenery(&self.mesh, self.scenery.as_ref(), ctx, cmd, &bound, output);
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

    /// Switches between compute and vertex-shader skinning (between frames).
    /// Both read the skin pass's per-slot buffers, so nothing is created.
    pub fn set_path(&mut self, path: VertexPath) {
        self.settings.path = path;
    }

    /// Draws triangle edges only (ignored where the device cannot).
    pub fn set_wireframe(&mut self, wireframe: bool) {
        self.settings.wireframe = wireframe && self.mesh.supports_wireframe();
    }

    /// Colours the mesh by the skin weights of skeleton joint `joint` (the
    /// weight heat map); `None` shades normally. Call between frames: a
    /// replaced stream is retired into the frame ring.
    pub fn set_heat_joint(&mut self, ctx: &GpuContext, joint: Option<usize>) -> Result<(), GpuError> {
        self.heat.update(ctx, &mut self.ring, &self.model, &self.gpu_model, joint)?;
        self.heat_joint = joint;
        Ok(())
    }

    /// Waits for the frame slot the next `begin_screen_frame` will use and
    /// returns its index: per-slot objects outside the renderer (a
    /// swapchain's acquire semaphore) are free again after this.
    pub fn wait_next_slot(&mut self, ctx: &GpuContext) -> Result<usize, GpuError> {
        self.ring.wait_next(ctx)
    }

    /// Begins a frame drawn into a window (after `wait_next_slot`): waits for
    /// the slot (already done), resets its pools and begins its command
    /// buffer. Returns the slot index and the GPU times its previous frame measured.
    pub fn begin_screen_frame(&mut self, ctx: &GpuContext) -> Result<(usize, Option<GpuTimes>), GpuError> {
        let period = ctx.timestamp_period_ns();
        let slot = self.ring.begin_frame(ctx)?;
        let ticks = slot.previous_timestamps();
        let queries = std::mem::take(&mut self.queries[slot.index]);
        let span = |a: Option<u32>, b: Option<u32>| -> Option<f64> {
            let (a, b) = (ticks.get(a? as usize)?, ticks.get(b? as usize)?);
            Some(b.saturating_sub(*a) as f64 * period / 1000.0)
        };
        let times = match (span(queries[0], queries[1]), span(queries[2], queries[3])) {
            (None, None) => None,
            (skin, draw) => Some(GpuTimes { skin_us: skin.unwrap_or(0.0), draw_us: draw.unwrap_or(0.0) }),
        };
        Ok((slot.index, times))
    }

    /// The slot being recorded, for passes recorded by the caller.
    pub fn slot(&mut self) -> &mut FrameSlot {
        self.ring.current()
    }

    /// Records this frame's skinning of `pose`: uploads its palettes and
    /// weights into the skin pass's slot buffers when `version` differs from
    /// what the slot holds, then (compute path) dispatches; the vertex path
    /// only uploads, and `begin_scene` binds those buffers.
    pub fn record_skinning(
        &mut self,
        ctx: &GpuContext,
        pose: SkinnedPose,
        version: u64,
    ) -> Result<SkinStats, GpuError> {
        let (pair, count) = self.inputs(SkinInput { pose, version });
        let inputs = &pair[..count];
        let slot = self.ring.current();
        let index = slot.index;
        match self.settings.path {
            VertexPath::VertexSkinning => {
                // No dispatch, so no skin timestamps (queries[index][0..2] stay None).
                let (bindings, stats) = vertex_skinning_inputs(&mut self.skin, slot, inputs)?;
                self.screen_skin = Some(bindings);
                Ok(stats)
            }
            VertexPath::PreSkinned => {
                self.screen_skin = None;
                let stats = self.skin.record(ctx, slot, inputs, true)?;
                if let Some((a, b)) = stats.timestamps {
                    self.queries[index][0] = Some(a);
                    self.queries[index][1] = Some(b);
                }
                Ok(stats)
            }
        }
    }

    /// Records the transitions of `target` and the acquired `image`, begins
    /// rendering into `view` (cleared to the background) and, when
    /// `show_mesh`, draws the character placed by `world`, seen through
    /// `view_proj` from `eye`.
    /// Rendering stays open for overlays (bones) until `end_scene`.
    #[allow(clippy::too_many_arguments)]
    pub fn begin_scene(
        &mut self,
        ctx: &GpuContext,
        target: &ScreenTarget,
        image: vk::Image,
        view: vk::ImageView,
        world: &Matrix4<f32>,
        view_proj: &Matrix4<f32>,
        eye: [f32; 3],
        show_mesh: bool,
    ) -> Result<(), GpuError> {
        if target.samples != self.mesh.samples || target.format != self.mesh.color_format {
            return Err(GpuError::new("screen target does not match the mesh pipelines"));
        }
        let slot = self.ring.current();
        let index = slot.index;
        let cmd = slot.command_buffer;
        self.queries[index][2] = slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE);
        target.begin_barriers(ctx, cmd, image);
        target.begin_rendering(ctx, cmd, view, CLEAR_COLOR);
        if !show_mesh {
            return Ok(());
        }
        let uniforms = FrameUniforms::new(view_proj, eye);
        let mut world_cols = [0.0f32; 16];
        world_cols.copy_from_slice(world.as_slice());
        let skin = match self.settings.path {
            VertexPath::VertexSkinning => Some(
                self.screen_skin.as_ref().ok_or_else(|| GpuError::new("record_skinning must run first"))?,
            ),
            VertexPath::PreSkinned => None,
        };
        let params = FrameParams {
            uniforms: &uniforms,
            path: self.settings.path,
            wireframe: self.settings.wireframe,
            skin,
            world: world_cols,
        };
        let heat = self.heat.buffer_for(self.heat_joint);
        let bound = match self.mesh.begin_with_heat(ctx, slot, &params, heat) {
            Ok(b) => b,
            Err(e) => {
                // SAFETY: rendering was begun above on this recording command buffer.
                unsafe { ctx.device.cmd_end_rendering(cmd) };
                return Err(e);
            }
        };
        let output = self.skin.output_buffer(index);
        for item in &self.draws {
            let mut item = *item;
            item.vertices.0 = output;
            self.mesh.draw(ctx, cmd, &bound, &self.materials, &self.model.materials, &item);
        }
        draw_scenery(&self.mesh, self.scenery.as_ref(), ctx, cmd, &bound, output);
        Ok(())
    }

    /// Ends the rendering begun by `begin_scene` (the MSAA resolve into the
    /// image happens here).
    pub fn end_scene(&mut self, ctx: &GpuContext) {
        let slot = self.ring.current();
        // SAFETY: rendering was begun by begin_scene on this command buffer.
        unsafe { ctx.device.cmd_end_rendering(slot.command_buffer) };
        self.queries[slot.index][3] = slot.write_timestamp(ctx, vk::PipelineStageFlags2::ALL_COMMANDS);
    }

    /// Submits the frame begun by `begin_screen_frame`, waiting on and
    /// signalling the given semaphores, with the slot's fence.
    pub fn end_screen_frame(
        &mut self,
        ctx: &GpuContext,
        waits: &[vk::SemaphoreSubmitInfo],
        signals: &[vk::SemaphoreSubmitInfo],
    ) -> Result<(), GpuError> {
        self.ring.end_frame(ctx, waits, signals)?;
        self.frames += 1;
        Ok(())
    }

    /// Destroys `resource` once every frame submitted so far has finished.
    pub fn retire(&mut self, resource: Retired) {
        self.ring.retire(resource);
    }

    /// Waits for every submitted frame.
    pub fn wait_all(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.ring.wait_all(ctx)
    }

    /// Waits for every submitted frame and hands out the pixels not yet handed out, in order.
    pub fn finish(&mut self, ctx: &GpuContext, on_pixels: &mut PixelSink) -> Result<(), String> {
        self.ring.wait_all(ctx).map_err(|e| e.to_string())?;
        loop {
            let next = (0..FRAMES_IN_FLIGHT).filter_map(|s| self.pending[s].map(|f| (f, s))).min();
            let Some((frame, slot)) = next else { return Ok(()) };
            self.pending[slot] = None;
            let targets = self.targets.as_ref().ok_or("no offscreen targets")?;
            on_pixels(frame, targets.get(slot).pixels().map_err(|e| e.to_string())?)?;
        }
    }

    /// Waits for the GPU and frees everything.
    pub fn destroy(self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        let Renderer { ring, skin, gpu_model, mesh, textures, materials, targets, heat, scenery, .. } = self;
        heat.destroy(ctx);
        ring.destroy(ctx);
        skin.destroy(ctx);
        // After the skin pass, which shares the scenery's buffers.
        if let Some(s) = scenery {
            s.destroy(ctx);
        }
        if let Ok(g) = Arc::try_unwrap(gpu_model) {
            g.destroy(ctx);
        }
        materials.destroy(ctx);
        mesh.destroy(ctx);
        textures.destroy(ctx);
        if let Some(t) = targets {
            t.destroy(ctx);
        }
    }
}

/// Static scenery: its own upload, materials and draws; one more character
/// of the skin pass whose pose never changes.
struct Scenery {
    model: Arc<Model>,
    gpu_model: Arc<GpuModel>,
    textures: Textures,
    materials: MeshMaterials,
    draws: Vec<DrawItem>,
}

/// The scenery's pose: its single node at the origin, no skins, no morphs.
const SCENERY_WORLD: [Matrix4<f32>; 1] =
    [Matrix4::new(1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)];

impl Scenery {
    /// Its skin-pass input: the same pose, so each frame slot uploads it once.
    fn input(&self) -> SkinInput<'static> {
        SkinInput {
            pose: SkinnedPose {
                palettes: &[],
                palette_offsets: &[0],
                world: &SCENERY_WORLD,
                morph_weights: &[],
            },
            version: 1,
        }
    }

    fn destroy(self, ctx: &GpuContext) {
        self.materials.destroy(ctx);
        self.textures.destroy(ctx);
        if let Ok(g) = Arc::try_unwrap(self.gpu_model) {
            g.destroy(ctx);
        }
    }
}

/// Records the scenery's draws (inside rendering, after the character's),
/// placed by the identity: the scenery is in world space.
fn draw_scenery(
    mesh: &MeshPass,
    scenery: Option<&Scenery>,
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    bound: &BoundFrame,
    output: vk::Buffer,
) {
    let Some(s) = scenery else { return };
    let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let bound = bound.with_world(identity);
    for item in &s.draws {
        let mut item = *item;
        item.vertices.0 = output;
        mesh.draw(ctx, cmd, &bound, &s.materials, &s.model.materials, &item);
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
    }
}

/// The draws of every primitive of `character` with vertices and indices;
/// each selects its skin record (vertex-skinning path) by the skin pass's
/// `PrimitiveOutput::record`.
fn draw_items(skin: &SkinPass, character: CharacterId, gpu: &GpuModel) -> Vec<DrawItem> {
    let mut draws = Vec::new();
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
                record: o.record,
            });
        }
    }
    draws
}

/// The vertex-skinning path's frame inputs: uploads `inputs` into `slot`'s
/// buffers of the skin pass (no dispatch) and returns them as set 0 of
/// shaders/common.glsl, with what the upload wrote.
///
/// No barrier is recorded, and none is needed: nothing on the GPU writes
/// these buffers (no compute dispatch on this path). The palettes, weights
/// and records are host writes to coherent memory made before this frame's
/// submit, which makes them visible to the vertex shader; they are per slot
/// and rewritten only after `begin_frame` waited for the slot's fence, so
/// no earlier frame still reads them. The static streams were made visible
/// to vertex shaders by their upload barriers.
fn vertex_skinning_inputs(
    skin: &mut SkinPass,
    slot: &FrameSlot,
    inputs: &[SkinInput],
) -> Result<(SkinBindings, SkinStats), GpuError> {
    let stats = skin.upload(slot, inputs)?;
    let bindings = skin
        .vertex_skinning_buffers(slot.index)
        .ok_or_else(|| GpuError::new("vertex skinning: no character registered"))?;
    Ok((bindings, stats))
}
