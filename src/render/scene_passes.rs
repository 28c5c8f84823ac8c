//! The scene's draw passes of a frame: the shadow cascades of the key
//! light (5-pass frames) or a depth prepass (2), then the main pass, which
//! stays open for the output's overlays until `end_scene` (the MSAA resolve
//! into the image happens there). Each pass is timestamped. Records into
//! the slot `Renderer::draw_frame` began; knows nothing of where the frame ends.

use super::camera::Camera;
use super::detail_levels::DETAIL_LEVELS;
use super::draw_order::Seen;
use super::frame_settings::PassSetup;
use super::frame_settings::SkinningPlacement;
use super::frame_uniforms::FrameUniforms;
use super::mesh_pass::{BoundFrame, DrawStage, FrameParams, MeshPass};
use super::renderer::{MAX_PASSES, Renderer, Scenery};
use super::shadow::{CASCADES, Cascades, cascades};
use super::target::{CLEAR_COLOR, RenderTarget, ScreenTarget};
use crate::gpu::{GpuContext, GpuError};
use ash::vk;

/// Where a frame's scene is drawn: a slot's offscreen target, or an
/// acquired window image with the window's attachments.
#[derive(Clone, Copy)]
pub(crate) enum SceneTarget<'a> {
    Offscreen(&'a RenderTarget),
    Window { target: &'a ScreenTarget, image: vk::Image, view: vk::ImageView },
}

impl SceneTarget<'_> {
    /// Records the transitions into attachment layouts.
    pub(super) fn begin_barriers(&self, ctx: &GpuContext, cmd: vk::CommandBuffer) {
        match *self {
            SceneTarget::Offscreen(t) => t.begin_barriers(ctx, cmd),
            SceneTarget::Window { target, image, .. } => target.begin_barriers(ctx, cmd, image),
        }
    }

    /// Its height in pixels (what a detail level's error is measured in).
    pub(super) fn height(&self) -> u32 {
        match *self {
            SceneTarget::Offscreen(t) => t.extent.height,
            SceneTarget::Window { target, .. } => target.extent.height,
        }
    }

    /// Begins the rendering of `stage`, clearing to the background.
    pub(super) fn begin_stage(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, stage: DrawStage) {
        match *self {
            SceneTarget::Offscreen(t) => t.begin_stage(ctx, cmd, CLEAR_COLOR, stage),
            SceneTarget::Window { target, view, .. } => {
                target.begin_stage(ctx, cmd, view, CLEAR_COLOR, stage)
            }
        }
    }
}

/// The debug-utils region of each shadow cascade (captures read passes by name).
const CASCADE_REGIONS: [&std::ffi::CStr; CASCADES] =
    [c"shadow cascade 0", c"shadow cascade 1", c"shadow cascade 2", c"shadow cascade 3"];

impl Renderer {
    /// Records the scene's draw passes into `target` after its layout
    /// transitions: the shadow cascades (5 passes) or the depth prepass (2),
    /// then begins the main pass (cleared to the background) and draws the
    /// characters and scenery when `show_mesh`, seen by `camera`. Rendering
    /// stays open for overlays (bones) until `end_scene`; on an error it is
    /// closed here.
    pub(super) fn record_scene(
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
        let slot = self.ring.current();
        let (index, cmd) = (slot.index, slot.command_buffer);
        // The levels were chosen for this camera before the skinning
        // (`record_skinning`). This slot's fence has signalled (draw_frame
        // waited): the GPU no longer reads its draw order.
        let order = self.draw_order.order();
        self.draw_orders[index].write(0, bytemuck::cast_slice(order))?;
        if let Some(sections) = self.draw_order.cascade_order() {
            self.draw_orders[index]
                .write(std::mem::size_of_val(order) as u64, bytemuck::cast_slice(sections))?;
        }
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
            ctx.begin_region(cmd, c"depth prepass");
            target.begin_stage(ctx, cmd, DrawStage::DepthPrepass);
            let drawn = self.draw_scene(ctx, &uniforms, DrawStage::DepthPrepass);
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            self.end_pass(ctx);
            ctx.end_region(cmd);
            drawn?;
        }
        let stage = if prepass { DrawStage::AfterPrepass } else { DrawStage::Main };
        // Closed by end_scene, after the output's overlays in the pass.
        ctx.begin_region(cmd, c"main pass");
        target.begin_stage(ctx, cmd, stage);
        if !show_mesh {
            self.open_pass(ctx, c"main pass");
            return Ok(());
        }
        if let Err(e) = self.draw_scene(ctx, &uniforms, stage) {
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            ctx.end_region(cmd);
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
            ctx.begin_region(cmd, CASCADE_REGIONS[k]);
            self.shadows.begin_cascade(ctx, cmd, index, k);
            let drawn = self.draw_scene(ctx, &uniforms.seen_by(view_proj), DrawStage::Shadow(k));
            // SAFETY: rendering was begun above on this recording command buffer.
            unsafe { ctx.device.cmd_end_rendering(cmd) };
            self.end_pass(ctx);
            ctx.end_region(cmd);
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
        let name = match stage {
            DrawStage::Shadow(k) => CASCADE_REGIONS[k],
            DrawStage::DepthPrepass => c"depth prepass",
            DrawStage::Main | DrawStage::AfterPrepass => c"main pass",
        };
        self.open_pass(ctx, name);
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
            draw_order: self.draw_orders[index].raw,
            output_places: self.skin.output_places_address(index),
            stage,
            shadow_maps: (self.shadows.sampled_view(index, shadowed), self.shadows.sampler),
        };
        let heat = if colour { self.heat.buffer_for(self.heat_joint) } else { None };
        let bound = self.mesh.begin_with_heat(ctx, slot, &params, heat)?;
        let cmd = slot.command_buffer;
        // The cascades see characters out of the camera's view too, each
        // those that reach its box.
        let seen = match stage {
            DrawStage::Shadow(k) => Seen::ByCascade(k),
            DrawStage::DepthPrepass | DrawStage::Main | DrawStage::AfterPrepass => Seen::ByCamera,
        };
        for item in &self.draws {
            // Every item's run is one of the order's (`draw_items`).
            if let Some(instances) = self.draw_order.run_levels(item.run as usize, seen) {
                self.mesh.draw(ctx, cmd, &bound, &self.materials, item, instances);
            }
        }
        draw_scenery(&self.mesh, self.scenery.as_ref(), ctx, cmd, &bound);
        Ok(())
    }

    /// Opens a draw pass: the timestamp before it (closed by `end_pass`).
    fn open_pass(&mut self, ctx: &GpuContext, name: &'static std::ffi::CStr) {
        let slot = self.ring.current();
        let queries = &mut self.queries[slot.index];
        if queries.pass_count < MAX_PASSES {
            queries.pass_names[queries.pass_count] = name;
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
    pub(super) fn end_scene(&mut self, ctx: &GpuContext) {
        let cmd = self.ring.current().command_buffer;
        // SAFETY: rendering was begun by begin_scene on this command buffer.
        unsafe { ctx.device.cmd_end_rendering(cmd) };
        self.end_pass(ctx);
        ctx.end_region(cmd);
    }
}

/// Records the scenery's draws (inside rendering, after the characters'):
/// its instance-buffer entry is the identity (the scenery is in world
/// space), it draws its full mesh (its own draw-order entry, the
/// identity), and it has no heat map (another model's vertices).
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
        let mut instances = [(item.first_character + 1, 0); DETAIL_LEVELS];
        instances[0] = (item.first_character, 1);
        mesh.draw(ctx, cmd, &bound, &s.materials, item, &instances);
    }
}
