//! The frame path shared by headless rendering, the window and the
//! benchmark: per frame, begin the slot (wait its fence) -> hand back the
//! pixels that slot rendered last time -> the characters' poses and world
//! placements -> palette upload (staged copies) -> compute skinning -> the
//! draw passes (an optional depth prepass, then the main pass) -> (optionally)
//! copy to the slot's readback buffer -> submit. GPU timestamps bracket each
//! phase; `GpuTimes` reports them once the slot's fence has signalled.
//!
//! A scene is `RenderSettings::characters` characters of one model (a
//! crowd; one compute dispatch skins them all, and each primitive is one
//! instanced draw for all of them) plus optional static scenery.

use super::camera::Camera;
use super::error::RenderError;
use super::frame_settings::{FrameSettings, PaletteUpload, PassSetup, SkinningPlacement};
use super::gpu_model::GpuModel;
use super::heat_map::HeatMap;
use super::mesh_pass::{
    BoundFrame, DrawItem, DrawStage, FrameParams, FrameUniforms, MeshMaterials, MeshPass, SkinBindings,
};
use super::shadow::{CASCADES, Cascades, ShadowMaps, cascades};
use super::skin_pass::{CharacterId, SkinPass, SkinStats};
use super::target::{CLEAR_COLOR, COLOR_FORMAT, RenderTarget, ScreenTarget, SlotTargets, choose_samples};
use super::textures::Textures;
use crate::anim::{FramePoses, SkinInput, SkinnedPose};
use crate::asset::Model;
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, FrameSlot, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;
use nalgebra::Matrix4;
use std::sync::Arc;

/// Receives a finished frame: `(frame number, RGBA8 sRGB pixels, rows top to bottom)`.
pub type PixelSink<'a> = dyn FnMut(u64, &[u8]) -> Result<(), RenderError> + 'a;

/// Most characters one scene may have (every command's limit).
pub const MAX_CHARACTERS: u32 = 100_000;

/// Most draw passes a frame has (four shadow cascades + main).
pub const MAX_PASSES: usize = 1 + CASCADES;

/// GPU time of one frame's phases, in microseconds (from timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuTimes {
    /// The staged palette copy (0 in `PaletteUpload::InPlace` or when nothing changed).
    pub upload_us: f64,
    /// The skinning dispatch (0 on the vertex-skinning path).
    pub skin_us: f64,
    /// Each draw pass, in order (depth prepass or shadow cascades, then
    /// main); `pass_count` are valid.
    pub passes_us: [f64; MAX_PASSES],
    /// Draw passes measured.
    pub pass_count: usize,
    /// All draw passes together (clear, mesh, overlays in the scene pass, resolve).
    pub draw_us: f64,
    /// The whole frame's GPU work, first command to last.
    pub frame_us: f64,
}

/// How frames are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderSettings {
    /// Target size in pixels.
    pub extent: vk::Extent2D,
    /// Draw triangle edges only.
    pub wireframe: bool,
    /// 4x MSAA when the device supports it; one sample otherwise.
    pub msaa: bool,
    /// Characters of the model in the scene (1 to [`MAX_CHARACTERS`]).
    pub characters: u32,
    /// How frames are skinned, uploaded and drawn.
    pub frame: FrameSettings,
}

impl RenderSettings {
    /// One character, the default frame settings, at `extent`.
    pub fn new(extent: vk::Extent2D) -> Self {
        RenderSettings {
            extent,
            wireframe: false,
            msaa: true,
            characters: 1,
            frame: FrameSettings::default(),
        }
    }

    /// Settings for a window's renderer (its swapchain sets the size).
    pub fn for_window() -> Self {
        Self::new(vk::Extent2D { width: 1, height: 1 })
    }
}

/// What `render_frame` did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameReport {
    /// The frame's number.
    pub frame: u64,
    /// Its skinning upload and dispatch.
    pub skin: SkinStats,
    /// GPU times of the earlier frame that used the same slot (finished).
    pub previous_gpu: Option<GpuTimes>,
}

/// Timestamp queries of one frame: `(before, after)` per phase.
#[derive(Debug, Clone, Copy, Default)]
struct FrameQueries {
    frame: (Option<u32>, Option<u32>),
    upload: Option<(u32, u32)>,
    skin: Option<(u32, u32)>,
    passes: [(Option<u32>, Option<u32>); MAX_PASSES],
    pass_count: usize,
}

/// The characters of a frame followed by the scenery (static, at the origin).
struct WithScenery<'a, P: ?Sized> {
    poses: &'a P,
    scenery: bool,
}

impl<P: FramePoses + ?Sized> FramePoses for WithScenery<'_, P> {
    fn count(&self) -> usize {
        self.poses.count() + usize::from(self.scenery)
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        if c < self.poses.count() { self.poses.input(c) } else { Scenery::input() }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        if c < self.poses.count() { self.poses.world(c) } else { Matrix4::identity() }
    }
}

/// Where a frame's scene is drawn: a slot's offscreen target, or an
/// acquired window image with the window's attachments.
#[derive(Clone, Copy)]
pub(crate) enum SceneTarget<'a> {
    Offscreen(&'a RenderTarget),
    Window { target: &'a ScreenTarget, image: vk::Image, view: vk::ImageView },
}

impl SceneTarget<'_> {
    /// Records the transitions into attachment layouts.
    fn begin_barriers(&self, ctx: &GpuContext, cmd: vk::CommandBuffer) {
        match *self {
            SceneTarget::Offscreen(t) => t.begin_barriers(ctx, cmd),
            SceneTarget::Window { target, image, .. } => target.begin_barriers(ctx, cmd, image),
        }
    }

    /// Begins the rendering of `stage`, clearing to the background.
    fn begin_stage(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, stage: DrawStage) {
        match *self {
            SceneTarget::Offscreen(t) => t.begin_stage(ctx, cmd, CLEAR_COLOR, stage),
            SceneTarget::Window { target, view, .. } => {
                target.begin_stage(ctx, cmd, view, CLEAR_COLOR, stage)
            }
        }
    }
}

/// A crowd of one model drawn into per-slot offscreen targets or a window.
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
    /// The key light's cascaded shadow maps (5-pass frames).
    shadows: ShadowMaps,
    /// Per slot: every character's world matrix (and the scenery's), read
    /// by the vertex shaders (set 1, binding 1); host-written after the
    /// slot's fence, before the submit.
    instances: Vec<Buffer>,
    /// Per slot: timestamp queries of its last frame.
    queries: [FrameQueries; FRAMES_IN_FLIGHT],
    /// Set-0 bindings of this screen frame (vertex-skinning path).
    screen_skin: Option<SkinBindings>,
    /// Whether frames, the palette copy and the skin dispatch are bracketed
    /// by timestamps (the default; host-timed measurements turn them off,
    /// as each costs a flush on lavapipe).
    timestamps: bool,
    /// The weight heat map's stream.
    heat: HeatMap,
    /// Joint whose weights colour the mesh; `None` shades normally.
    heat_joint: Option<usize>,
    /// One per drawn primitive, each for every character.
    draws: Vec<DrawItem>,
    /// Static scenery (a level) drawn with the characters, in world space.
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
    /// of `color_format` (a swapchain's) with the `begin_frame` family
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
        if settings.characters == 0 {
            return Err(GpuError::new("a scene needs at least one character"));
        }
        if settings.characters > MAX_CHARACTERS {
            return Err(GpuError::new(format!("a scene has at most {MAX_CHARACTERS} characters")));
        }
        // Built step by step; on error, what was made so far is freed (the
        // GPU has nothing pending: only one-shot uploads ran, and they waited).
        let mut ring = Some(FrameRing::new(ctx)?);
        let mut parts = Parts::default();
        let result = (|| {
            let gpu_model = Arc::new(GpuModel::upload(ctx, &model)?);
            parts.gpu_model = Some(gpu_model.clone());
            let blend = settings.frame.blend;
            parts.skin = Some(SkinPass::with_method(ctx, blend)?);
            let skin = parts.skin.as_mut().expect("skin");
            skin.set_upload_mode(settings.frame.upload);
            for _ in 0..settings.characters {
                skin.add_character(ctx, ring.as_mut().expect("ring"), gpu_model.clone(), model.clone())?;
            }
            let samples = if settings.msaa { choose_samples(ctx) } else { vk::SampleCountFlags::TYPE_1 };
            parts.mesh = Some(MeshPass::with_method(ctx, samples, color_format, blend)?);
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
            for i in 0..FRAMES_IN_FLIGHT {
                parts.instances.push(instance_buffer(ctx, i, settings.characters as u64 + 1)?);
            }
            parts.shadows = Some(ShadowMaps::new(ctx)?);
            let skin = parts.skin.as_ref().expect("skin");
            let draws = draw_items(skin, CharacterId(0), settings.characters, &gpu_model)?;
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
            instances: std::mem::take(&mut parts.instances),
            shadows: parts.shadows.take().expect("shadows"),
            queries: [FrameQueries::default(); FRAMES_IN_FLIGHT],
            screen_skin: None,
            timestamps: true,
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
        let draws = draw_items(&self.skin, character, 1, &gpu_model)?;
        self.scenery = Some(Scenery { model: scenery, gpu_model, textures, materials, draws });
        Ok(())
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

    /// The static scenery drawn with the characters, if any.
    pub fn scenery(&self) -> Option<&Arc<Model>> {
        self.scenery.as_ref().map(|s| &s.model)
    }

    /// Output vertices the skin pass produces per frame (every character and the scenery).
    pub fn skinned_vertices(&self) -> u64 {
        u64::from(self.skin.total_vertices())
    }

    /// Records and submits one frame of `poses` (one per character; uploaded
    /// as the upload mode says), seen by `camera`. When `readback` is set
    /// the frame's pixels are handed to `on_pixels` later: once the slot
    /// comes round again (after its fence) or in `finish`. Frames are
    /// handed out in order, as `(frame number, RGBA8 sRGB rows)`.
    pub fn render_frame<P: FramePoses + ?Sized>(
        &mut self,
        ctx: &GpuContext,
        poses: &P,
        camera: &Camera,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<FrameReport, RenderError> {
        let frame = self.frames;
        // Taken for the frame (the draws borrow the renderer), put back below.
        let Some(targets) = self.targets.take() else {
            return Err(GpuError::new("this renderer draws to a window, not to offscreen targets").into());
        };
        let report = self.render_offscreen(ctx, &targets, poses, camera, readback, on_pixels);
        self.targets = Some(targets);
        let (skin, previous_gpu) = report?;
        Ok(FrameReport { frame, skin, previous_gpu })
    }

    /// `render_frame`'s body, with the targets taken out of the renderer.
    fn render_offscreen<P: FramePoses + ?Sized>(
        &mut self,
        ctx: &GpuContext,
        targets: &SlotTargets,
        poses: &P,
        camera: &Camera,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<(SkinStats, Option<GpuTimes>), RenderError> {
        let frame = self.frames;
        let (index, previous_gpu) = self.begin_frame(ctx)?;
        // begin_frame waited for this slot's fence: its readback buffer is
        // final, and nothing rewrites it before this frame is submitted.
        if let Some(done) = self.pending[index].take() {
            let handed = targets.get(index).pixels().map_err(RenderError::from);
            if let Err(e) = handed.and_then(|pixels| on_pixels(done, pixels)) {
                // Submit the (nearly) empty command buffer so the ring stays usable.
                let _ = self.submit_frame(ctx, &[], &[]);
                return Err(e);
            }
        }
        let recorded = (|| -> Result<_, GpuError> {
            let skin = self.record_skinning(ctx, poses)?;
            let target = targets.get(index);
            self.record_scene(ctx, SceneTarget::Offscreen(target), camera, true)?;
            self.end_scene(ctx);
            if readback {
                target.record_readback(ctx, self.ring.current().command_buffer);
            }
            Ok(skin)
        })();
        // The command buffer is ended and submitted even after a recording
        // error, so the ring stays consistent; the error is reported after.
        let submitted = self.submit_frame(ctx, &[], &[]);
        let skin = recorded?;
        submitted?;
        if readback {
            self.pending[index] = Some(frame);
        }
        Ok((skin, previous_gpu))
    }

    /// Switches between compute and vertex-shader skinning (between frames).
    /// Both read the skin pass's per-slot buffers, so nothing is created.
    pub fn set_placement(&mut self, placement: SkinningPlacement) {
        self.settings.frame.placement = placement;
    }

    /// Sets the draw passes, between frames.
    pub fn set_passes(&mut self, passes: PassSetup) {
        self.settings.frame.passes = passes;
    }

    /// Bytes the skinning dispatch reads and writes per frame (see `SkinPass::frame_traffic`).
    pub fn skin_traffic(&self) -> (u64, u64) {
        self.skin.frame_traffic()
    }

    /// Switches the palette upload mode (between frames).
    pub fn set_upload(&mut self, upload: PaletteUpload) {
        self.settings.frame.upload = upload;
        self.skin.set_upload_mode(upload);
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

    /// Waits for the frame slot the next `begin_frame` will use and
    /// returns its index: per-slot objects outside the renderer (a
    /// swapchain's acquire semaphore) are free again after this.
    pub(crate) fn wait_next_slot(&mut self, ctx: &GpuContext) -> Result<usize, GpuError> {
        self.ring.wait_next(ctx)
    }

    /// Begins a frame (after `wait_next_slot` for a window): waits for the
    /// slot, resets its pools, begins its command buffer and its first
    /// timestamp. Returns the slot index and the GPU times its previous
    /// frame measured.
    pub(crate) fn begin_frame(&mut self, ctx: &GpuContext) -> Result<(usize, Option<GpuTimes>), GpuError> {
        let period = ctx.timestamp_period_ns();
        let slot = self.ring.begin_frame(ctx)?;
        let queries = std::mem::take(&mut self.queries[slot.index]);
        let times = gpu_times(&queries, slot.previous_timestamps(), period);
        let index = slot.index;
        if self.timestamps {
            self.queries[index].frame.0 = slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE);
        }
        Ok((index, times))
    }

    /// The slot being recorded, for passes recorded by the caller.
    pub(crate) fn slot(&mut self) -> &mut FrameSlot {
        self.ring.current()
    }

    /// Whether frames write their timestamps: the frame's bracket, and in
    /// `record_skinning` the palette copy's and the skin dispatch's (on
    /// unless turned off). Frames without them have no `GpuTimes`. The
    /// host-timed runs turn them off: on lavapipe each timestamp after work
    /// is a flush that costs more than a small copy.
    pub(crate) fn set_timestamps(&mut self, on: bool) {
        self.timestamps = on;
    }

    /// Records this frame's skinning of `poses` (one per character, with
    /// their world placements): writes the placements, uploads the palettes
    /// and weights that the upload mode says into the skin pass's slot
    /// buffers (with the staged copy), then (compute path) dispatches; the
    /// vertex path only uploads, and the draws bind those buffers.
    pub fn record_skinning<P: FramePoses + ?Sized>(
        &mut self,
        ctx: &GpuContext,
        poses: &P,
    ) -> Result<SkinStats, GpuError> {
        let characters = self.settings.characters as usize;
        if poses.count() != characters {
            return Err(GpuError::new(format!(
                "{} poses for a scene of {characters} characters",
                poses.count()
            )));
        }
        let inputs = WithScenery { poses, scenery: self.scenery.is_some() };
        let slot = self.ring.current();
        let index = slot.index;
        // This slot's fence has signalled (begin_frame waited): the GPU no
        // longer reads its instance buffer, and host writes before the
        // submit are visible to the vertex shaders.
        let instances = &mut self.instances[index];
        for c in 0..inputs.count() {
            let world = inputs.world(c);
            instances.write(c as u64 * 64, bytemuck::cast_slice(world.as_slice()))?;
        }
        let queries = &mut self.queries[index];
        match self.settings.frame.placement {
            SkinningPlacement::Vertex => {
                // No dispatch, so no skin timestamps.
                let mut stats = self.skin.upload(slot, &inputs)?;
                self.skin.record_copies(ctx, slot, self.timestamps, &mut stats);
                queries.upload = stats.copy_timestamps;
                self.screen_skin = Some(
                    self.skin
                        .vertex_skinning_buffers(index)
                        .ok_or_else(|| GpuError::new("vertex skinning: no character registered"))?,
                );
                Ok(stats)
            }
            SkinningPlacement::Compute => {
                self.screen_skin = None;
                let stats = self.skin.record(ctx, slot, &inputs, self.timestamps)?;
                queries.upload = stats.copy_timestamps;
                queries.skin = stats.timestamps;
                Ok(stats)
            }
        }
    }

    /// Records the scene's draw passes into `target` after its layout
    /// transitions: the shadow cascades (5 passes) or the depth prepass (2),
    /// then begins the main pass (cleared to the background) and draws the
    /// characters and scenery when `show_mesh`, seen by `camera`. Rendering
    /// stays open for overlays (bones) until `end_scene`; on an error it is
    /// closed here.
    pub(crate) fn record_scene(
        &mut self,
        ctx: &GpuContext,
        target: SceneTarget,
        camera: &Camera,
        show_mesh: bool,
    ) -> Result<(), GpuError> {
        if let SceneTarget::Window { target, .. } = target
            && (target.samples != self.mesh.samples || target.format != self.mesh.color_format)
        {
            return Err(GpuError::new("screen target does not match the mesh pipelines"));
        }
        let cmd = self.ring.current().command_buffer;
        target.begin_barriers(ctx, cmd);
        let eye = [camera.eye.x, camera.eye.y, camera.eye.z];
        let mut uniforms = FrameUniforms::new(&camera.view_proj(), eye);
        if show_mesh && self.settings.frame.passes == PassSetup::ShadowCascades {
            let cascades = cascades(camera, uniforms.to_key_light());
            self.draw_shadows(ctx, &uniforms, &cascades)?;
            uniforms = uniforms.with_shadows(&cascades, (camera.target - camera.eye).normalize());
        }
        let prepass = show_mesh && self.settings.frame.passes == PassSetup::DepthPrepass;
        if prepass {
            target.begin_stage(ctx, cmd, DrawStage::DepthPrepass);
            let drawn = self.draw_scene(ctx, &uniforms, DrawStage::DepthPrepass);
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            self.end_pass(ctx);
            drawn?;
        }
        let stage = if prepass { DrawStage::AfterPrepass } else { DrawStage::Main };
        target.begin_stage(ctx, cmd, stage);
        if !show_mesh {
            self.open_pass(ctx);
            return Ok(());
        }
        if let Err(e) = self.draw_scene(ctx, &uniforms, stage) {
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            return Err(e);
        }
        Ok(())
    }

    /// Records the shadow cascades of this frame (each a depth-only pass
    /// seen from the key light, timestamped) into the slot's shadow maps,
    /// which end ready for the main pass to sample.
    fn draw_shadows(
        &mut self,
        ctx: &GpuContext,
        uniforms: &FrameUniforms,
        cascades: &Cascades,
    ) -> Result<(), GpuError> {
        let slot = self.ring.current();
        let (index, cmd) = (slot.index, slot.command_buffer);
        self.shadows.begin(ctx, cmd, index);
        for (k, view_proj) in cascades.view_proj.iter().enumerate() {
            self.shadows.begin_cascade(ctx, cmd, index, k);
            let drawn = self.draw_scene(ctx, &uniforms.seen_by(view_proj), DrawStage::Shadow(k));
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            self.end_pass(ctx);
            drawn?;
        }
        self.shadows.end(ctx, cmd, index);
        Ok(())
    }

    /// Opens a pass (its timestamp; closed by `end_pass`), binds the frame
    /// and records every draw of the scene for `stage` (inside rendering).
    fn draw_scene(
        &mut self,
        ctx: &GpuContext,
        uniforms: &FrameUniforms,
        stage: DrawStage,
    ) -> Result<(), GpuError> {
        self.open_pass(ctx);
        let slot = self.ring.current();
        let index = slot.index;
        let skin = match self.settings.frame.placement {
            SkinningPlacement::Vertex => Some(
                self.screen_skin.as_ref().ok_or_else(|| GpuError::new("record_skinning must run first"))?,
            ),
            SkinningPlacement::Compute => None,
        };
        let colour = matches!(stage, DrawStage::Main | DrawStage::AfterPrepass);
        // The main pass samples this slot's shadow maps on 5-pass frames;
        // every other pass binds the stand-in (the maps may be attachments then).
        let shadowed = colour && self.settings.frame.passes == PassSetup::ShadowCascades;
        let params = FrameParams {
            uniforms,
            path: self.settings.frame.placement,
            wireframe: self.settings.wireframe && colour,
            skin,
            instances: self.instances[index].raw,
            skinned: self.skin.output_buffer(index),
            stage,
            shadow_maps: (self.shadows.sampled_view(index, shadowed), self.shadows.sampler),
        };
        let heat = if colour { self.heat.buffer_for(self.heat_joint) } else { None };
        let bound = self.mesh.begin_with_heat(ctx, slot, &params, heat)?;
        let cmd = slot.command_buffer;
        for item in &self.draws {
            self.mesh.draw(ctx, cmd, &bound, &self.materials, &self.model.materials, item);
        }
        draw_scenery(&self.mesh, self.scenery.as_ref(), ctx, cmd, &bound);
        Ok(())
    }

    /// Opens a draw pass: the timestamp before it (closed by `end_pass`).
    fn open_pass(&mut self, ctx: &GpuContext) {
        let slot = self.ring.current();
        let queries = &mut self.queries[slot.index];
        if queries.pass_count < MAX_PASSES {
            queries.passes[queries.pass_count].0 =
                slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE);
        }
    }

    /// Closes the pass `draw_scene` opened (its timestamp).
    fn end_pass(&mut self, ctx: &GpuContext) {
        let slot = self.ring.current();
        let queries = &mut self.queries[slot.index];
        if queries.pass_count < MAX_PASSES {
            let after = slot.write_timestamp(ctx, vk::PipelineStageFlags2::ALL_COMMANDS);
            queries.passes[queries.pass_count].1 = after;
            queries.pass_count += 1;
        }
    }

    /// Ends the main pass begun by `record_scene` (the MSAA resolve into
    /// the image happens here).
    pub fn end_scene(&mut self, ctx: &GpuContext) {
        let cmd = self.ring.current().command_buffer;
        // SAFETY: rendering was begun by begin_scene on this command buffer.
        unsafe { ctx.device.cmd_end_rendering(cmd) };
        self.end_pass(ctx);
    }

    /// Submits the frame begun by `begin_frame`, waiting on and
    /// signalling the given semaphores, with the slot's fence.
    pub(crate) fn submit_frame(
        &mut self,
        ctx: &GpuContext,
        waits: &[vk::SemaphoreSubmitInfo],
        signals: &[vk::SemaphoreSubmitInfo],
    ) -> Result<(), GpuError> {
        let slot = self.ring.current();
        if self.timestamps {
            self.queries[slot.index].frame.1 =
                slot.write_timestamp(ctx, vk::PipelineStageFlags2::ALL_COMMANDS);
        }
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
    pub fn finish(&mut self, ctx: &GpuContext, on_pixels: &mut PixelSink) -> Result<(), RenderError> {
        self.ring.wait_all(ctx)?;
        loop {
            let next = (0..FRAMES_IN_FLIGHT).filter_map(|s| self.pending[s].map(|f| (f, s))).min();
            let Some((frame, slot)) = next else { return Ok(()) };
            self.pending[slot] = None;
            let targets = self.targets.as_ref().ok_or_else(|| GpuError::new("no offscreen targets"))?;
            on_pixels(frame, targets.get(slot).pixels()?)?;
        }
    }

    /// Waits for the GPU and frees everything.
    pub fn destroy(self, ctx: &GpuContext) {
        let _ = ctx.wait_idle();
        if ctx.is_stalled() {
            // A wait for the GPU ran out: work may still run on these
            // objects, so they are leaked rather than freed under it.
            std::mem::forget(self);
            return;
        }
        let Renderer {
            ring,
            skin,
            gpu_model,
            mesh,
            textures,
            materials,
            targets,
            heat,
            scenery,
            instances,
            shadows,
            ..
        } = self;
        shadows.destroy(ctx);
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
        instances.into_iter().for_each(|b| b.destroy(ctx));
    }
}

/// The GPU times of a finished frame from its queries and its slot's
/// timestamps (ticks of `period` ns); `None` when it measured nothing.
fn gpu_times(queries: &FrameQueries, ticks: &[u64], period: f64) -> Option<GpuTimes> {
    let span = |a: Option<u32>, b: Option<u32>| -> Option<f64> {
        let (a, b) = (ticks.get(a? as usize)?, ticks.get(b? as usize)?);
        Some(b.saturating_sub(*a) as f64 * period / 1000.0)
    };
    let pair = |p: Option<(u32, u32)>| span(p.map(|p| p.0), p.map(|p| p.1));
    let frame = span(queries.frame.0, queries.frame.1)?;
    let mut times = GpuTimes {
        upload_us: pair(queries.upload).unwrap_or(0.0),
        skin_us: pair(queries.skin).unwrap_or(0.0),
        frame_us: frame,
        pass_count: queries.pass_count,
        ..GpuTimes::default()
    };
    for (k, (a, b)) in queries.passes.iter().take(queries.pass_count).enumerate() {
        times.passes_us[k] = span(*a, *b).unwrap_or(0.0);
        times.draw_us += times.passes_us[k];
    }
    Some(times)
}

/// One slot's instance buffer: `count` column-major world matrices.
fn instance_buffer(ctx: &GpuContext, slot: usize, count: u64) -> Result<Buffer, GpuError> {
    Buffer::new(
        ctx,
        &format!("instances slot {slot}"),
        count * 64,
        vk::BufferUsageFlags::STORAGE_BUFFER,
        MemoryLocation::CpuToGpu,
    )
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
    fn input() -> SkinInput<'static> {
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

/// Records the scenery's draws (inside rendering, after the characters'):
/// its instance-buffer entry is the identity (the scenery is in world
/// space), and it has no heat map (another model's vertices).
fn draw_scenery(
    mesh: &MeshPass,
    scenery: Option<&Scenery>,
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    bound: &BoundFrame,
) {
    let Some(s) = scenery else { return };
    let bound = bound.without_heat();
    for item in &s.draws {
        mesh.draw(ctx, cmd, &bound, &s.materials, &s.model.materials, item);
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
    instances: Vec<Buffer>,
    shadows: Option<ShadowMaps>,
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
        self.instances.drain(..).for_each(|b| b.destroy(ctx));
        if let Some(s) = self.shadows.take() {
            s.destroy(ctx);
        }
    }
}

/// The draws of every primitive (with vertices and indices) of `count`
/// characters of one model registered one after the other from `first`:
/// one instanced draw each. Their layouts repeat at fixed strides (the skin
/// pass lays characters out one after another), which is checked here.
fn draw_items(
    skin: &SkinPass,
    first: CharacterId,
    count: u32,
    gpu: &GpuModel,
) -> Result<Vec<DrawItem>, GpuError> {
    let outputs = skin.outputs(first);
    let last = skin.outputs(CharacterId(first.0 + count as usize - 1));
    let vertices: u32 = outputs.iter().map(|o| o.vertex_count).sum();
    let records = outputs.iter().filter(|o| o.vertex_count > 0).count() as u32;
    let steps = count - 1;
    let mut draws = Vec::new();
    for (o, l) in outputs.iter().zip(last) {
        let repeats = l.output_offset == o.output_offset + steps * vertices
            && (o.vertex_count == 0 || l.record == o.record + steps * records);
        if !repeats || outputs.len() != last.len() {
            return Err(GpuError::new("the characters' skinning layouts do not repeat (internal error)"));
        }
        if o.vertex_count == 0 {
            continue;
        }
        let p = &gpu.primitives[o.gpu_primitive];
        if p.index_count > 0 {
            draws.push(DrawItem {
                output_offset: o.output_offset,
                vertices_per_character: vertices,
                first_character: first.0 as u32,
                characters: count,
                uvs: (gpu.uvs.raw, u64::from(p.source_offset) * 8),
                indices: gpu.indices.raw,
                first_index: p.first_index,
                index_count: p.index_count,
                material: p.material,
                record: o.record,
                records_per_character: records,
            });
        }
    }
    Ok(draws)
}
