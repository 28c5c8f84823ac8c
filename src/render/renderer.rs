//! The renderer: a crowd of one model (`RenderSettings::characters`
//! characters; one compute dispatch skins them all, and each primitive is
//! one instanced draw for all of them) plus optional static scenery, with
//! everything its frames need: the frame ring, the skin and mesh passes,
//! textures, shadow maps, per-slot instance buffers and, when it draws
//! offscreen, the per-slot targets. How a frame is recorded is `frame`;
//! where it ends is its `FrameOutput` (window, offscreen, readback, timing).
//! It never poses characters: poses come in as `FramePoses`.

use super::detail_levels::DETAIL_LEVELS;
use super::draw_order::{DetailBudget, DrawOrder, LevelLimit, OverBudget, Seen};
use super::frame::FrameQueries;
use super::frame_settings::{DrawDetail, FrameSettings, PaletteUpload, PassSetup, SkinningPlacement};
use super::gpu_frame_budget::GpuFrameBudget;
use super::gpu_model::GpuModel;
use super::heat_map::HeatMap;
use super::mesh_pass::{DrawItem, MeshMaterials, MeshPass};
use super::offscreen::OffscreenTargets;
use super::readback::Readback;
use super::shadow::{CASCADES, ShadowMaps};
use super::skin_levels::{self, NO_LEVEL_MAP};
use super::skin_pass::VertexSkinning;
use super::skin_pass::{CharacterId, SkinPass};
use super::target::{COLOR_FORMAT, SlotTargets, choose_samples};
use super::textures::Textures;
use crate::anim::framing::grow_bounds;
use crate::anim::{PoseProgram, Sight, SkinInput, SkinnedPose};
use crate::asset::Model;
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FRAMES_IN_FLIGHT, FrameRing, GpuContext, GpuError};
use ash::vk;
use gpu_allocator::MemoryLocation;
use nalgebra::Matrix4;
use std::sync::Arc;
use std::time::Duration;

/// Most characters one scene may have (every command's limit).
pub const MAX_CHARACTERS: u32 = 100_000;

/// Most draw passes a frame has (four shadow cascades + main).
pub const MAX_PASSES: usize = 1 + CASCADES;

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
    /// The most a frame's characters may cost at the camera's levels.
    pub limits: DetailLimits,
}

/// The most a frame may cost at the camera's detail levels
/// (`DrawDetail::Auto`): past any, every character draws coarser, within
/// one larger pixel error (`draw_order::DetailBudget`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetailLimits {
    /// Vertices skinned, the scenery's included. `None`: what the device's
    /// memory holds (`crowd_fit::default_vertex_budget`).
    pub skinned_vertices: Option<u64>,
    /// Triangles the characters draw, every pass together (the main
    /// pass, a depth prepass, the shadow cascades; the scenery's not
    /// counted). `None`: no limit.
    pub triangles: Option<u64>,
    /// The most GPU time a frame may take: each frame's triangle budget
    /// is set from the GPU times that finished frames measured
    /// (`render::gpu_frame_budget`; frames without timestamps measure
    /// nothing). `None`: no limit.
    pub gpu_frame: Option<Duration>,
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
            limits: DetailLimits::default(),
        }
    }

    /// [`new`](Self::new) at `width` x `height` pixels.
    pub fn sized(width: u32, height: u32) -> Self {
        Self::new(vk::Extent2D { width, height })
    }

    /// Settings for a window's renderer (its swapchain sets the size).
    pub fn for_window() -> Self {
        Self::new(vk::Extent2D { width: 1, height: 1 })
    }
}

/// A crowd of one model drawn into per-slot offscreen targets or a window.
pub struct Renderer {
    pub(super) ring: FrameRing,
    pub(super) skin: SkinPass,
    pub(super) gpu_model: Arc<GpuModel>,
    pub(super) model: Arc<Model>,
    pub(super) mesh: MeshPass,
    pub(super) textures: Textures,
    pub(super) materials: MeshMaterials,
    /// Offscreen targets with readback (headless); `None` for a window,
    /// which draws into swapchain images through a `ScreenTarget`.
    pub(super) offscreen: Option<OffscreenTargets>,
    /// The key light's cascaded shadow maps (5-pass frames).
    pub(super) shadows: ShadowMaps,
    /// Per slot: every character's world matrix (and the scenery's), read
    /// by the vertex shaders (set 1, binding 1); host-written after the
    /// slot's fence, before the submit.
    pub(super) instances: Vec<Buffer>,
    /// Per slot: the frame's draw order (`draw_order.order()`, set 1,
    /// binding 2); host-written like `instances`.
    pub(super) draw_orders: Vec<Buffer>,
    /// Which detail level each character draws this frame, and the
    /// instance order that groups them.
    pub(super) draw_order: DrawOrder,
    /// How each character will be seen by the next frame (`foresee`).
    pub(super) sight: Vec<Sight>,
    /// Whether the last frame's dispatch skinned the characters at their
    /// detail levels (`render::skin_levels`).
    pub(super) skinned_levels: bool,
    /// Per slot: timestamp queries of its last frame.
    pub(super) queries: [FrameQueries; FRAMES_IN_FLIGHT],
    /// Set-0 bindings of this screen frame (vertex-skinning path).
    pub(super) screen_skin: Option<VertexSkinning>,
    /// Steers the triangle budget by GPU frame times, while
    /// `DetailLimits::gpu_frame` is set.
    pub(super) gpu_frame_budget: Option<GpuFrameBudget>,
    /// Per slot: triangles its last frame's characters drew, every pass
    /// together, for the GPU frame budget to measure that frame by.
    pub(super) slot_triangles: [u64; FRAMES_IN_FLIGHT],
    /// Whether frames, the palette copy and the skin dispatch are bracketed
    /// by timestamps (the default; host-timed measurements turn them off,
    /// as each costs a flush on lavapipe).
    pub(super) timestamps: bool,
    /// The weight heat map's stream.
    pub(super) heat: HeatMap,
    /// Joint whose weights colour the mesh; `None` shades normally.
    pub(super) heat_joint: Option<usize>,
    /// One per drawn primitive, each for every character.
    pub(super) draws: Vec<DrawItem>,
    /// The most vertices a frame's characters and scenery skin where
    /// `DetailLimits::skinned_vertices` says nothing: what the
    /// device holds (`crowd_fit::default_vertex_budget`).
    pub(super) device_skinned_vertices: u64,
    /// Static scenery (a level) drawn with the characters, in world space.
    pub(super) scenery: Option<Scenery>,
    pub(super) settings: RenderSettings,
    /// Host-visible copy of the skinned vertices (`read_skinned`), made on first use.
    pub(super) readback: Option<Readback>,
    /// Frames submitted so far (the next frame's number).
    pub(super) frames: u64,
    /// While a frame trace records: the `configuration` span every frame
    /// enters, and the frame settings it names (a new span when they change).
    pub(super) trace_configuration: Option<(FrameSettings, tracing::Span)>,
    /// Things worth telling the user (textures that did not load, ...).
    pub warnings: Vec<String>,
}

impl Renderer {
    /// Uploads `model` and builds the passes and offscreen targets.
    pub fn new(ctx: &GpuContext, model: Arc<Model>, settings: RenderSettings) -> Result<Self, GpuError> {
        Self::build(ctx, model, settings, COLOR_FORMAT, true)
    }

    /// Uploads `model` and builds the passes for drawing into colour images
    /// of `color_format` (a swapchain's, through a window's frame output);
    /// no offscreen target (`settings.extent` is not used).
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
        // Before uploading or allocating anything.
        let detail = settings.frame.detail;
        super::crowd_fit::check_crowd_fits(&model, settings.characters, detail, &ctx.buffer_limits)?;
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
            if settings.characters > 0 {
                let ring = ring.as_mut().expect("ring");
                skin.add_characters(ctx, ring, gpu_model.clone(), model.clone(), settings.characters)?;
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
            // One more entry each for the scenery; the draw order's, then
            // a section per shadow cascade (`DrawOrder::cascade_order`).
            let entries = settings.characters as u64 + 1;
            let order_entries = entries + CASCADES as u64 * u64::from(settings.characters);
            for i in 0..FRAMES_IN_FLIGHT {
                parts.instances.push(instance_buffer(ctx, i, entries)?);
                parts.draw_orders.push(Buffer::new(
                    ctx,
                    &format!("draw order slot {i}"),
                    order_entries * 4,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                    MemoryLocation::CpuToGpu,
                )?);
            }
            parts.shadows = Some(ShadowMaps::new(ctx)?);
            let skin = parts.skin.as_ref().expect("skin");
            let draws = draw_items(skin, CharacterId(0), settings.characters, &gpu_model)?;
            // The crowd is the order's one run, which the items name (run 0).
            let crowd = [(0, settings.characters)];
            Ok((warnings, draws, DrawOrder::new(settings.characters, 1, &crowd)))
        })();
        let (warnings, draws, draw_order) = match result {
            Ok(r) => r,
            Err(e) => {
                parts.destroy(ctx);
                if let Some(r) = ring.take() {
                    r.destroy(ctx);
                }
                return Err(e);
            }
        };
        let places = parts.skin.as_ref().map(|s| s.layout().characters());
        let full = places.and_then(|p| p.first()).map_or(0, |p| u64::from(p.level_vertices[0]));
        let device_skinned_vertices = super::crowd_fit::default_vertex_budget(&ctx.buffer_limits, full);
        Ok(Renderer {
            ring: ring.take().expect("ring"),
            skin: parts.skin.take().expect("skin"),
            gpu_model: parts.gpu_model.take().expect("gpu model"),
            model,
            mesh: parts.mesh.take().expect("mesh"),
            textures: parts.textures.take().expect("textures"),
            materials: parts.materials.take().expect("materials"),
            offscreen: parts.targets.take().map(OffscreenTargets::new),
            instances: std::mem::take(&mut parts.instances),
            draw_orders: std::mem::take(&mut parts.draw_orders),
            draw_order,
            sight: Vec::new(),
            skinned_levels: false,
            shadows: parts.shadows.take().expect("shadows"),
            queries: [FrameQueries::default(); FRAMES_IN_FLIGHT],
            gpu_frame_budget: settings.limits.gpu_frame.map(GpuFrameBudget::new),
            slot_triangles: [0; FRAMES_IN_FLIGHT],
            screen_skin: None,
            timestamps: true,
            heat: HeatMap::new(),
            heat_joint: None,
            draws,
            device_skinned_vertices,
            scenery: None,
            settings,
            readback: None,
            frames: 0,
            trace_configuration: None,
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
        // Its lowest vertex (a ground's bounding sphere reaches far below it).
        let mut bounds = None;
        let grown = grow_bounds(
            &scenery.rig,
            &Scenery::input().pose,
            &Matrix4::identity(),
            &mut Vec::new(),
            &mut bounds,
        );
        let lowest = match (grown, bounds) {
            (Ok(()), Some((lo, _))) => lo[1],
            (Ok(()), None) => f32::INFINITY,
            (Err(_), _) => f32::NEG_INFINITY,
        };
        self.scenery = Some(Scenery { model: scenery, gpu_model, textures, materials, draws, lowest });
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

    /// Where character `character`'s primitives land in the skin pass's output.
    pub fn outputs(&self, character: CharacterId) -> &[super::skin_pass::PrimitiveOutput] {
        self.skin.outputs(character)
    }

    /// The skin pass, to read its layout (outputs, models, method).
    pub fn skin_pass(&self) -> &SkinPass {
        &self.skin
    }

    /// Vertices the last frame's skin dispatch skinned: every vertex of
    /// every character and of the scenery, or where it skinned the
    /// characters at their detail levels, what their levels draw (and
    /// nothing of a character no pass draws) and the whole scenery;
    /// 0 on the vertex-skinning path (no dispatch).
    pub fn skinned_vertices(&self) -> u64 {
        if self.settings.frame.placement == SkinningPlacement::Vertex {
            return 0;
        }
        let (per_level, scenery) = self.level_vertices();
        let characters = u64::from(self.settings.characters);
        if !self.skinned_levels {
            return characters * per_level[0] + scenery;
        }
        // Those the camera sees and those only the shadow cascades draw.
        let (seen, culled) = (self.draw_order.counts(), self.draw_order.culled_levels());
        let mut skinned = scenery;
        for k in 0..DETAIL_LEVELS {
            skinned += u64::from(seen[k] + culled[k]) * per_level[k];
        }
        skinned
    }

    /// Vertices one character of the crowd skins at each level, and those
    /// of the scenery (skinned whole).
    fn level_vertices(&self) -> ([u64; DETAIL_LEVELS], u64) {
        let places = self.skin.layout().characters();
        let characters = (self.settings.characters as usize).min(places.len());
        let scenery = places[characters..].iter().map(|p| u64::from(p.level_vertices[0])).sum();
        // Every character is of the one model.
        let per_level = places.first().map_or([0; DETAIL_LEVELS], |p| p.level_vertices.map(u64::from));
        (per_level, scenery)
    }

    /// Triangles one character of the crowd draws in one pass at each level.
    fn level_triangles(&self) -> [u64; DETAIL_LEVELS] {
        let characters = self.settings.characters;
        let mut per_level = [0; DETAIL_LEVELS];
        for item in self.draws.iter().filter(|item| item.first_character < characters) {
            for (sum, &(_, indices)) in per_level.iter_mut().zip(&item.levels) {
                *sum += u64::from(indices / 3);
            }
        }
        per_level
    }

    /// What a frame's characters may cost: the renderer's most vertices,
    /// less the scenery's, and its most triangles, every pass together,
    /// given and as the GPU frame budget allows.
    pub(super) fn detail_budget(&self) -> DetailBudget {
        let (per_level, scenery) = self.level_vertices();
        let given = self.settings.limits.triangles;
        let gpu_frame = self.gpu_frame_budget.and_then(|steer| steer.triangles());
        let triangles = match (given, gpu_frame) {
            (None, None) => LevelLimit::NONE,
            _ => LevelLimit { most: given.unwrap_or(u64::MAX), per_level: self.level_triangles() },
        };
        let passes = self.settings.frame.passes;
        DetailBudget {
            triangles,
            gpu_frame_triangles: gpu_frame.unwrap_or(u64::MAX),
            camera_passes: self.camera_passes(),
            cascades: passes == PassSetup::ShadowCascades,
            ..DetailBudget::vertices(self.max_skinned_vertices().saturating_sub(scenery), per_level)
        }
    }

    /// The most vertices a frame's characters and scenery skin
    /// (`DetailLimits::skinned_vertices`, or the device's default).
    pub fn max_skinned_vertices(&self) -> u64 {
        self.settings.limits.skinned_vertices.unwrap_or(self.device_skinned_vertices)
    }

    /// The most a frame may cost at the camera's levels.
    pub fn detail_limits(&self) -> DetailLimits {
        self.settings.limits
    }

    /// Sets the most a frame may cost at the camera's levels, between
    /// frames. A changed GPU frame budget keeps the cost per triangle
    /// measured so far.
    pub fn set_detail_limits(&mut self, limits: DetailLimits) {
        self.settings.limits = limits;
        self.gpu_frame_budget = match (self.gpu_frame_budget, limits.gpu_frame) {
            (Some(mut steer), Some(budget)) => {
                steer.set_budget(budget);
                Some(steer)
            }
            (_, budget) => budget.map(GpuFrameBudget::new),
        };
    }

    /// The triangle budget the GPU frame budget sets for the next frame
    /// (`None` without one, or before a frame has been measured;
    /// `u64::MAX` where the triangles are not what takes the time).
    pub fn gpu_frame_triangles(&self) -> Option<u64> {
        self.gpu_frame_budget.and_then(|steer| steer.triangles())
    }

    /// The GPU frame budget's steering, while `DetailLimits::gpu_frame`
    /// is set: what it measured and concluded.
    pub fn gpu_frame_steering(&self) -> Option<&GpuFrameBudget> {
        self.gpu_frame_budget.as_ref()
    }

    /// A finished frame that used the current slot took `times` on the
    /// GPU: the GPU frame budget learns from it (with the triangles that
    /// frame drew, which the slot kept).
    pub(super) fn measure_gpu_frame(&mut self, times: Option<super::frame::GpuTimes>) {
        if let (Some(steer), Some(times)) = (&mut self.gpu_frame_budget, times) {
            steer.measured(times.frame_us, self.slot_triangles[self.ring.current().index]);
        }
    }

    /// The most pixels by which the last recorded frame's levels departed
    /// from the full meshes: `draw_order::PIXEL_ERROR`, or more where the
    /// detail limits (`RenderSettings::limits`) made every character
    /// coarser.
    pub fn detail_pixel_error(&self) -> f32 {
        self.draw_order.pixel_error()
    }

    /// Which detail limits the last recorded frame's levels within half a
    /// pixel were over (the reason for a larger `detail_pixel_error`).
    pub fn over_budget(&self) -> OverBudget {
        self.draw_order.over_budget()
    }

    /// Poses on the GPU, with `program`, the characters whose poses carry
    /// its playback (`FramePoses::playback`), laid out like character
    /// `like` (the first of the crowd); `None`: the CPU poses them all.
    /// Waits for the GPU first (the old pose objects are freed).
    pub fn set_pose_program(
        &mut self,
        ctx: &GpuContext,
        program: Option<Arc<PoseProgram>>,
        like: CharacterId,
    ) -> Result<(), GpuError> {
        self.ring.wait_all(ctx)?;
        self.skin.set_pose_program(ctx, &mut self.ring, program, like)
    }

    /// Switches between compute and vertex-shader skinning (between frames).
    /// Both read the skin pass's per-slot buffers, so nothing is created.
    pub fn set_placement(&mut self, placement: SkinningPlacement) {
        self.frame_work_changes(self.settings.frame.placement != placement);
        self.settings.frame.placement = placement;
    }

    /// Where a setter `changed` the frame's work, the GPU frame budget
    /// fits its cost through the frames recorded from now on: those in
    /// flight, recorded before, count no triangles, so it skips them.
    fn frame_work_changes(&mut self, changed: bool) {
        if let (true, Some(steer)) = (changed, &mut self.gpu_frame_budget) {
            steer.forget_frames();
            self.slot_triangles = [0; FRAMES_IN_FLIGHT];
        }
    }

    /// Sets which detail levels characters draw, between frames (the levels
    /// were built with the model: nothing is created).
    pub fn set_detail(&mut self, detail: DrawDetail) {
        self.settings.frame.detail = detail;
    }

    /// Characters the camera saw at each detail level in the last recorded
    /// frame, and those culled from its passes (outside its view).
    pub fn detail_counts(&self) -> ([u32; DETAIL_LEVELS], u32) {
        (self.draw_order.counts(), self.draw_order.culled())
    }

    /// Of those culled, how many no pass drew in the last recorded frame
    /// (nor were they skinned): their shadows could not reach the view, or
    /// the frame had no shadow pass.
    pub fn hidden_characters(&self) -> u32 {
        self.draw_order.hidden()
    }

    /// Triangles the last recorded frame's characters drew in its main
    /// pass, at their levels (the scenery not counted).
    pub fn triangles_per_pass(&self) -> u64 {
        self.triangles(Seen::ByCamera)
    }

    /// Triangles the last recorded frame's characters drew in its shadow
    /// cascades together, at their levels (the scenery not counted); 0 when
    /// the frame draws no cascades.
    pub fn shadow_triangles(&self) -> u64 {
        if self.settings.frame.passes != PassSetup::ShadowCascades {
            return 0;
        }
        (0..CASCADES).map(|k| self.triangles(Seen::ByCascade(k))).sum()
    }

    /// Triangles the last recorded frame's characters drew, every pass
    /// together: the camera's (twice with a depth prepass) and the shadow
    /// cascades' (the scenery not counted).
    pub fn frame_triangles(&self) -> u64 {
        u64::from(self.camera_passes()) * self.triangles_per_pass() + self.shadow_triangles()
    }

    /// The passes that draw what the camera sees: the main pass, and a
    /// depth prepass before it.
    fn camera_passes(&self) -> u32 {
        if self.settings.frame.passes == PassSetup::DepthPrepass { 2 } else { 1 }
    }

    /// Triangles the characters drew in the passes `seen`.
    fn triangles(&self, seen: Seen) -> u64 {
        let mut triangles = 0;
        for item in &self.draws {
            if let Some(instances) = self.draw_order.run_levels(item.run as usize, seen) {
                for (&(_, indices), &(_, count)) in item.levels.iter().zip(instances) {
                    triangles += u64::from(indices / 3) * u64::from(count);
                }
            }
        }
        triangles
    }

    /// Sets the draw passes, between frames.
    pub fn set_passes(&mut self, passes: PassSetup) {
        self.frame_work_changes(self.settings.frame.passes != passes);
        self.settings.frame.passes = passes;
    }

    /// Bytes the skinning dispatch reads and writes per frame (see `SkinPass::frame_traffic`).
    pub fn skin_traffic(&self) -> (u64, u64) {
        self.skin.frame_traffic()
    }

    /// Switches the palette upload mode (between frames).
    pub fn set_upload(&mut self, upload: PaletteUpload) {
        self.frame_work_changes(self.settings.frame.upload != upload);
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

    /// Destroys `resource` once every frame submitted so far has finished.
    pub fn retire(&mut self, resource: Retired) {
        self.ring.retire(resource);
    }

    /// Waits for every submitted frame.
    pub fn wait_all(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.wait_all_frames(ctx)
    }

    /// Waits for the GPU and frees everything.
    pub fn destroy(mut self, ctx: &GpuContext) {
        if super::trace::enabled() {
            // The last frames' GPU spans, which no later frame reads.
            let _ = self.wait_all_frames(ctx);
        }
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
            offscreen,
            readback,
            heat,
            scenery,
            instances,
            draw_orders,
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
        if let Some(t) = offscreen {
            t.destroy(ctx);
        }
        if let Some(r) = readback {
            r.buffer.destroy(ctx);
        }
        instances.into_iter().chain(draw_orders).for_each(|b| b.destroy(ctx));
    }
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
pub(super) struct Scenery {
    pub(super) model: Arc<Model>,
    gpu_model: Arc<GpuModel>,
    textures: Textures,
    pub(super) materials: MeshMaterials,
    pub(super) draws: Vec<DrawItem>,
    /// The height of its lowest vertex: no shadow falls on it below this
    /// (infinite without vertices; minus infinity if it could not be placed).
    pub(super) lowest: f32,
}

/// The scenery's pose: its single node at the origin, no skins, no morphs.
const SCENERY_WORLD: [Matrix4<f32>; 1] =
    [Matrix4::new(1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)];

impl Scenery {
    /// Its skin-pass input: the same pose, so each frame slot uploads it once.
    pub(super) fn input() -> SkinInput<'static> {
        SkinInput {
            pose: SkinnedPose {
                palettes: &[],
                palette_ranges: &[],
                world: &SCENERY_WORLD,
                world_joints: None,
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
    draw_orders: Vec<Buffer>,
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
        self.instances.drain(..).chain(self.draw_orders.drain(..)).for_each(|b| b.destroy(ctx));
        if let Some(s) = self.shadows.take() {
            s.destroy(ctx);
        }
    }
}

/// The draws of every primitive (with vertices and indices) of `count`
/// characters of one model registered one after the other from `first`:
/// one instanced draw per primitive. Their records repeat at fixed
/// strides (the skin pass lays characters out one after another), which
/// is checked here; their skinned vertices lie where each frame placed
/// them (`SkinPass::output_places_address`). The items name the
/// characters as the draw order's first run (`DrawItem::run` 0), which the
/// order sorts by level.
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
    // Where each primitive's vertices start in a character's output, per
    // level: its records' skinned vertices one after the other.
    let mut level_starts = [0u32; DETAIL_LEVELS];
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
        let starts = level_starts;
        for (level, start) in level_starts.iter_mut().enumerate() {
            *start += skin_levels::skinned_vertices(&gpu.skin_levels, p.skin_levels, o.vertex_count, level);
        }
        if p.levels[0].1 > 0 {
            let level_maps = p.level_maps.map(|first| match first {
                NO_LEVEL_MAP => 0,
                first => gpu.level_maps_address + u64::from(first) * 4,
            });
            draws.push(DrawItem {
                level_offsets: starts,
                level_maps,
                first_character: first.0 as u32,
                characters: count,
                run: 0,
                uvs: (gpu.uvs.raw, u64::from(p.source_offset) * 8),
                indices: gpu.indices.raw,
                levels: p.levels,
                material: p.material,
                record: o.record,
                records_per_character: records,
            });
        }
    }
    Ok(draws)
}
