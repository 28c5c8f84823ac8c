//! The one frame sequence, whatever the frame ends in (a window's
//! swapchain image, an offscreen image read back, the skinned vertices read
//! back, or nothing but a timing): wait for the frame slot (its fence) ->
//! the output hands out what that slot produced last time and claims its
//! image -> begin the slot's command buffer (its first timestamp) -> the
//! characters' placements, palette upload (staged copies) and skinning ->
//! the draw passes (shadow cascades or a depth prepass, then the main pass)
//! with the output's overlays inside it -> the output's last commands
//! (copies, overlay pass, layout transitions) -> submit with the slot's
//! fence -> the output's after-submit step (present, wait, read). It must
//! stay the only frame sequence: every ending (window, offscreen, readback,
//! timing) is a `FrameOutput` of this one.
//!
//! Once the command buffer has begun, the frame is always submitted, even
//! after a recording error, so the ring (and a window's signalled acquire
//! semaphore) stays consistent; the error is returned after.
//!
//! GPU timestamps bracket each phase; [`GpuTimes`] reports them once the
//! slot's fence has signalled, with the frame that reuses the slot. While a
//! frame trace records (`render::trace`), `record` and `submit` are CPU
//! spans and each phase's timestamps become a GPU span on the host clock.

use super::camera::Camera;
use super::chunked;
use super::draw_order::LevelView;
use super::error::RenderError;
use super::frame_settings::{DrawDetail, SkinningPlacement};
use super::renderer::{MAX_PASSES, Renderer, Scenery};
use super::scene_passes::SceneTarget;
use super::skin_levels::SkinLevels;
use super::skin_pass::{CharacterId, SkinPass, SkinStats};
use super::trace::{self, GpuClock};
use crate::anim::{FramePoses, PosePlayback, PoseProgram, SkinInput};
use crate::gpu::{FrameRing, FrameSlot, GpuContext, GpuError};
use ash::vk;
use nalgebra::Matrix4;
use std::sync::Arc;

/// GPU time of one frame's phases, in microseconds (from timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuTimes {
    /// The staged palette copy (0 in `PaletteUpload::InPlace` or when nothing changed).
    pub upload_us: f64,
    /// The skinning dispatch (0 on the vertex-skinning path).
    pub skin_us: f64,
    /// The GPU pose dispatch (0 when the CPU poses).
    pub pose_us: f64,
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

/// What a frame did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameReport {
    /// The frame's number.
    pub frame: u64,
    /// Its skinning upload and dispatch.
    pub skin: SkinStats,
    /// GPU times of the earlier frame that used the same slot (finished).
    pub previous_gpu: Option<GpuTimes>,
}

/// What a frame records.
#[derive(Clone, Copy)]
pub enum FrameContents<'a> {
    /// Skinning, then the draw passes seen by `camera` (`show_mesh` off:
    /// the main pass is cleared but draws nothing, for overlays alone).
    Scene {
        /// The view.
        camera: &'a Camera,
        /// Draw the characters and the scenery.
        show_mesh: bool,
    },
    /// Skinning alone (its upload, copies and dispatch): every vertex,
    /// to read the vertices back; or, `seen_by` a camera, what a scene
    /// seen by it would skin (its detail levels), to time the skinning by
    /// the host.
    Skinning {
        /// The camera whose scene's skinning this is.
        seen_by: Option<&'a Camera>,
    },
    /// Nothing but the frame's own commands (the empty frame host timings
    /// are compared with).
    Nothing,
}

/// One frame's input: every character's pose and placement, and what to record.
#[derive(Clone, Copy)]
pub struct FrameInput<'a> {
    /// Every character's pose and placement (as many as the scene has).
    pub poses: &'a dyn FramePoses,
    /// What to record.
    pub contents: FrameContents<'a>,
}

/// What an output's last commands may read: the slot's skinned vertices.
pub(crate) struct FrameEnd<'a> {
    /// The slot's command buffer, recording, outside rendering.
    pub cmd: vk::CommandBuffer,
    /// The slot's index.
    pub slot: usize,
    /// The skin pass: its output buffers (written this frame on the
    /// compute path, made visible to transfer reads by its barrier),
    /// `SkinPass::output_copies`.
    pub skin: &'a SkinPass,
}

/// Where a frame ends. The renderer records every frame the same way
/// (`Renderer::draw_frame`) and asks its output at each step.
pub(crate) trait FrameOutput {
    /// Once slot `slot`'s previous frame has finished (its fence waited):
    /// hands out what that frame produced and claims this frame's image.
    /// `false` drops the frame before anything is recorded (a swapchain
    /// that is out of date). By default nothing is handed out or claimed.
    fn begin(&mut self, ctx: &GpuContext, slot: usize) -> Result<bool, RenderError> {
        let _ = (ctx, slot);
        Ok(true)
    }

    /// Where the scene of slot `slot` is drawn (asked for scene frames only).
    fn target(&self, slot: usize) -> Result<SceneTarget<'_>, GpuError> {
        let _ = slot;
        Err(GpuError::new("this frame output has no image to draw into"))
    }

    /// Inside the main pass, after the scene's draws (overlays that test
    /// against the scene's depth: the bone lines).
    fn record_in_scene(
        &mut self,
        ctx: &GpuContext,
        slot: &mut FrameSlot,
        camera: &Camera,
    ) -> Result<(), GpuError> {
        let _ = (ctx, slot, camera);
        Ok(())
    }

    /// The frame's last commands, before the submission (copies out,
    /// overlay passes, layout transitions).
    fn record_end(&mut self, ctx: &GpuContext, end: &FrameEnd) -> Result<(), GpuError> {
        let _ = (ctx, end);
        Ok(())
    }

    /// The semaphores the submission of slot `slot` waits on and signals
    /// (a swapchain's acquire and render-finished semaphores).
    fn semaphores(
        &self,
        slot: usize,
    ) -> Option<(vk::SemaphoreSubmitInfo<'static>, vk::SemaphoreSubmitInfo<'static>)> {
        let _ = slot;
        None
    }

    /// After frame `frame` of slot `slot` was submitted (present, wait for
    /// the GPU, read back).
    fn submitted(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        slot: usize,
        frame: u64,
    ) -> Result<(), GpuError> {
        let _ = (ctx, ring, slot, frame);
        Ok(())
    }
}

/// Timestamp queries of one frame: `(before, after)` per phase.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FrameQueries {
    frame: (Option<u32>, Option<u32>),
    upload: Option<(u32, u32)>,
    skin: Option<(u32, u32)>,
    pose: Option<(u32, u32)>,
    pub(crate) passes: [(Option<u32>, Option<u32>); MAX_PASSES],
    /// Each pass's name (its debug-utils region's), for frame traces.
    pub(crate) pass_names: [&'static std::ffi::CStr; MAX_PASSES],
    pub(crate) pass_count: usize,
    /// The frame's number, and when its submission began on the trace's
    /// clock (set only while a trace records: GPU spans are aligned there
    /// when the device has no calibrated timestamps).
    number: u64,
    submit_ns: Option<u64>,
}

/// The characters of a frame followed by the scenery (static, at the origin).
struct WithScenery<'a> {
    poses: &'a dyn FramePoses,
    scenery: bool,
}

impl FramePoses for WithScenery<'_> {
    fn count(&self) -> usize {
        self.poses.count() + usize::from(self.scenery)
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        if c < self.poses.count() { self.poses.input(c) } else { Scenery::input() }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        if c < self.poses.count() { self.poses.world(c) } else { Matrix4::identity() }
    }
    fn playback(&self, c: usize) -> Option<PosePlayback<'_>> {
        if c < self.poses.count() { self.poses.playback(c) } else { None }
    }
    fn gpu_pose(&self) -> Option<(usize, &Arc<PoseProgram>)> {
        self.poses.gpu_pose()
    }
}

impl Renderer {
    /// Records and submits one frame of `input`, ending in `output` (see
    /// the module documentation). `None` when the output dropped the frame
    /// before it began.
    pub(crate) fn draw_frame(
        &mut self,
        ctx: &GpuContext,
        input: &FrameInput,
        output: &mut dyn FrameOutput,
    ) -> Result<Option<FrameReport>, RenderError> {
        let frame = self.frames;
        self.follow_gpu_pose(ctx, input.poses)?;
        let slot = self.ring.wait_next(ctx)?;
        if !output.begin(ctx, slot)? {
            return Ok(None);
        }
        // Frame traces: a frame nests in the span of its configuration.
        let configuration = self.configuration_span();
        let _configuration = configuration.enter();
        let previous_gpu = self.begin_frame(ctx)?;
        self.measure_gpu_frame(previous_gpu);
        let recorded = tracing::trace_span!("record", frame).in_scope(|| self.record(ctx, input, output));
        let semaphores = output.semaphores(slot);
        let (waits, signals) = match &semaphores {
            Some((wait, signal)) => (std::slice::from_ref(wait), std::slice::from_ref(signal)),
            None => (&[][..], &[][..]),
        };
        let submitted =
            tracing::trace_span!("submit", frame).in_scope(|| self.submit_frame(ctx, waits, signals));
        let skin = recorded?;
        submitted?;
        output.submitted(ctx, &mut self.ring, slot, frame)?;
        Ok(Some(FrameReport { frame, skin, previous_gpu }))
    }

    /// Poses on the GPU what `poses` says is posed there (`FramePoses::gpu_pose`),
    /// with its program: set up when it changes (rarely: a crowd switched),
    /// a pointer comparison otherwise.
    fn follow_gpu_pose(&mut self, ctx: &GpuContext, poses: &dyn FramePoses) -> Result<(), GpuError> {
        let wanted = poses.gpu_pose();
        let current = self.skin.pose_program();
        let same = match (wanted, current) {
            (Some((_, w)), Some(c)) => Arc::ptr_eq(w, c),
            (None, None) => true,
            _ => false,
        };
        if same {
            return Ok(());
        }
        let like = wanted.map_or(0, |(first, _)| first);
        self.set_pose_program(ctx, wanted.map(|(_, p)| p.clone()), CharacterId(like))
    }

    /// The frame trace's span of the current settings (a new one when they
    /// changed: the old one ends, covering its frames); disabled, and
    /// free, when no trace records.
    fn configuration_span(&mut self) -> tracing::Span {
        if !trace::enabled() {
            return tracing::Span::none();
        }
        let frame = self.settings.frame;
        match &self.trace_configuration {
            Some((settings, span)) if *settings == frame => span.clone(),
            _ => {
                let characters = self.settings.characters;
                let span = tracing::trace_span!("configuration", characters, settings = ?frame);
                self.trace_configuration = Some((frame, span.clone()));
                span
            }
        }
    }

    /// The frame's commands, into the begun slot.
    fn record(
        &mut self,
        ctx: &GpuContext,
        input: &FrameInput,
        output: &mut dyn FrameOutput,
    ) -> Result<SkinStats, GpuError> {
        let index = self.ring.current().index;
        // Every pass of a scene draws the levels chosen for its camera (the
        // shadow cascades too: a caster's detail follows what is seen), and
        // the skinning skins what they draw.
        let camera = match input.contents {
            FrameContents::Scene { camera, .. } | FrameContents::Skinning { seen_by: Some(camera) } => {
                Some(camera)
            }
            FrameContents::Nothing | FrameContents::Skinning { seen_by: None } => None,
        };
        let view = match camera {
            Some(camera) => Some(self.level_view(camera, output.target(index)?.height())),
            None => None,
        };
        let skin = match input.contents {
            FrameContents::Nothing => SkinStats::default(),
            FrameContents::Skinning { .. } | FrameContents::Scene { .. } => {
                let cmd = self.ring.current().command_buffer;
                ctx.begin_region(cmd, c"skinning");
                let skinned = self.record_skinning(ctx, input.poses, view.as_ref());
                ctx.end_region(cmd);
                skinned?
            }
        };
        // What the GPU frame budget will measure this frame by (counted
        // only while one steers).
        self.slot_triangles[index] = match input.contents {
            FrameContents::Scene { show_mesh: true, .. } if self.gpu_frame_budget.is_some() => {
                self.frame_triangles()
            }
            _ => 0,
        };
        if let FrameContents::Scene { camera, show_mesh } = input.contents {
            self.record_scene(ctx, output.target(index)?, camera, show_mesh)?;
            let in_scene = output.record_in_scene(ctx, self.ring.current(), camera);
            self.end_scene(ctx);
            in_scene?;
        }
        let end = FrameEnd { cmd: self.ring.current().command_buffer, slot: index, skin: &self.skin };
        output.record_end(ctx, &end)?;
        Ok(skin)
    }

    /// Begins the next slot's frame (its fence waited by `draw_frame`):
    /// resets its pools, begins its command buffer and its first timestamp.
    /// Returns the GPU times its previous frame measured.
    fn begin_frame(&mut self, ctx: &GpuContext) -> Result<Option<GpuTimes>, GpuError> {
        let period = ctx.timestamp_period_ns();
        let slot = self.ring.begin_frame(ctx)?;
        let queries = std::mem::take(&mut self.queries[slot.index]);
        let times = gpu_times(&queries, slot.previous_timestamps(), period);
        trace_gpu_spans(ctx, &queries, slot.previous_timestamps());
        if self.timestamps {
            self.queries[slot.index].frame.0 =
                slot.write_timestamp(ctx, vk::PipelineStageFlags2::TOP_OF_PIPE);
        }
        Ok(times)
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
    /// their world placements): writes the placements, chooses the
    /// characters' detail levels for `view` (a scene's camera), uploads the
    /// palettes and weights that the upload mode says into the skin pass's
    /// slot buffers (with the staged copy), then (compute path) dispatches,
    /// skinning of each character what its level draws; the vertex path
    /// only uploads, and the draws bind those buffers. Without a view (a
    /// frame that only skins, e.g. to read the vertices back) every vertex
    /// is skinned.
    fn record_skinning(
        &mut self,
        ctx: &GpuContext,
        poses: &dyn FramePoses,
        view: Option<&LevelView>,
    ) -> Result<SkinStats, GpuError> {
        let characters = self.settings.characters as usize;
        if poses.count() != characters {
            return Err(GpuError::new(format!(
                "{} poses for a scene of {characters} characters",
                poses.count()
            )));
        }
        let inputs = WithScenery { poses, scenery: self.scenery.is_some() };
        let budget = self.detail_budget();
        let slot = self.ring.current();
        let index = slot.index;
        // This slot's fence has signalled (draw_frame waited): the GPU no
        // longer reads its instance buffer, and host writes before the
        // submit are visible to the vertex shaders.
        let instances = self.instances[index].mapped_elements::<[f32; 16]>(inputs.count())?;
        // The characters' in place where the source keeps them in a slice.
        let worlds = poses.worlds().filter(|w| w.len() == poses.count()).unwrap_or(&[]);
        chunked::for_each_chunk(instances, |first, instances| {
            for (c, instance) in (first..).zip(instances) {
                match worlds.get(c) {
                    Some(world) => instance.copy_from_slice(world.as_slice()),
                    None => instance.copy_from_slice(inputs.world(c).as_slice()),
                }
            }
        });
        self.draw_order.place_poses(poses, poses.count(), self.gpu_model.bounds);
        let detail = self.settings.frame.detail;
        if let Some(view) = view {
            self.draw_order.choose_within(view, &self.gpu_model.detail_error, detail, Some(&budget));
        }
        // Full detail draws every full mesh: every vertex is skinned.
        let levels =
            (view.is_some() && detail == DrawDetail::Auto).then_some(SkinLevels { order: &self.draw_order });
        let queries = &mut self.queries[index];
        match self.settings.frame.placement {
            SkinningPlacement::Vertex => {
                // No dispatch, so no skin timestamps.
                self.skinned_levels = false;
                let mut stats = self.skin.upload(slot, &inputs, levels)?;
                self.skin.record_copies(ctx, slot, self.timestamps, &mut stats);
                self.skin.leave_output_unused(ctx, slot)?;
                queries.upload = stats.copy_timestamps;
                queries.pose = stats.pose_timestamps;
                self.screen_skin = Some(
                    self.skin
                        .vertex_skinning_buffers(ctx, index)
                        .ok_or_else(|| GpuError::new("vertex skinning: no character registered"))?,
                );
                Ok(stats)
            }
            SkinningPlacement::Compute => {
                self.screen_skin = None;
                self.skinned_levels = levels.is_some();
                let stats = self.skin.record(ctx, slot, &inputs, levels, self.timestamps)?;
                queries.upload = stats.copy_timestamps;
                queries.pose = stats.pose_timestamps;
                queries.skin = stats.timestamps;
                Ok(stats)
            }
        }
    }

    /// Submits the begun frame, waiting on and signalling the given
    /// semaphores, with the slot's fence (and the frame's last timestamp).
    fn submit_frame(
        &mut self,
        ctx: &GpuContext,
        waits: &[vk::SemaphoreSubmitInfo],
        signals: &[vk::SemaphoreSubmitInfo],
    ) -> Result<(), GpuError> {
        let slot = self.ring.current();
        let queries = &mut self.queries[slot.index];
        queries.number = self.frames;
        queries.submit_ns = trace::enabled().then(trace::now_ns);
        if self.timestamps {
            queries.frame.1 = slot.write_timestamp(ctx, vk::PipelineStageFlags2::ALL_COMMANDS);
        }
        self.ring.end_frame(ctx, waits, signals)?;
        self.frames += 1;
        Ok(())
    }

    /// Waits for the frame slot the next frame will use and returns its
    /// index: per-slot objects outside the renderer (a swapchain's acquire
    /// semaphore, overlay textures) are free again after this.
    pub(crate) fn wait_next_slot(&mut self, ctx: &GpuContext) -> Result<usize, GpuError> {
        self.ring.wait_next(ctx)
    }

    /// Waits for every submitted frame and hands each slot's last frame's
    /// GPU spans to a frame trace now, since no later frame may come round
    /// to the slot (the end of a run). Each slot keeps its queries, marked
    /// traced: a later frame that does come round (after the viewer's
    /// overlay waited, say) still reads their times for the timings and
    /// the GPU frame budget.
    pub(crate) fn wait_all_frames(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.ring.wait_all(ctx)?;
        if trace::enabled() {
            for (k, queries) in self.queries.iter_mut().enumerate() {
                trace_gpu_spans(ctx, queries, self.ring.slot(k).previous_timestamps());
                // Traced: `trace_gpu_spans` skips frames without a submit time.
                queries.submit_ns = None;
            }
        }
        Ok(())
    }
}

/// Hands a finished frame's phases to a frame trace as GPU spans on the
/// host clock (nothing unless a trace records and the frame was
/// timestamped while it did): by the device's calibrated timestamps where
/// it has them, else with the frame's first timestamp at its submission.
fn trace_gpu_spans(ctx: &GpuContext, queries: &FrameQueries, ticks: &[u64]) {
    let Some(submit_ns) = queries.submit_ns else { return };
    let tick = |q: Option<u32>| q.and_then(|q| ticks.get(q as usize).copied());
    let Some(first) = tick(queries.frame.0) else { return };
    let period = ctx.timestamp_period_ns();
    let (anchor, clock) = match ctx.calibrated_timestamps() {
        Some(pair) => (pair, GpuClock::Calibrated),
        None => ((first, submit_ns), GpuClock::SubmitAligned),
    };
    let host = |t: u64| host_ns(t, anchor, period);
    let span = |name: &str, a: Option<u32>, b: Option<u32>| {
        if let (Some(a), Some(b)) = (tick(a), tick(b)) {
            let dur = (b.saturating_sub(a) as f64 * period) as u64;
            trace::gpu_span(name, queries.number, host(a), dur, clock);
        }
    };
    span("GPU frame", queries.frame.0, queries.frame.1);
    let pair = |p: Option<(u32, u32)>| (p.map(|p| p.0), p.map(|p| p.1));
    let (a, b) = pair(queries.upload);
    span("palette upload", a, b);
    let (a, b) = pair(queries.pose);
    span("pose (GPU)", a, b);
    let (a, b) = pair(queries.skin);
    span("skin", a, b);
    for k in 0..queries.pass_count {
        let name = queries.pass_names[k].to_str().unwrap_or("pass");
        span(name, queries.passes[k].0, queries.passes[k].1);
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
        pose_us: pair(queries.pose).unwrap_or(0.0),
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

/// The host time (ns) of GPU tick `t`, from one `(tick, host ns)` pair
/// taken together and the tick period in ns (ticks may lie before the pair).
fn host_ns(t: u64, (anchor_tick, anchor_ns): (u64, u64), period: f64) -> u64 {
    (anchor_ns as f64 + (t as f64 - anchor_tick as f64) * period).max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::host_ns;

    #[test]
    fn gpu_ticks_land_on_the_host_clock_either_side_of_the_anchor() {
        // 2.5 ns per tick, tick 1000 taken at 5 ms.
        let anchor = (1_000, 5_000_000);
        assert_eq!(host_ns(1_000, anchor, 2.5), 5_000_000);
        assert_eq!(host_ns(1_400, anchor, 2.5), 5_001_000);
        assert_eq!(host_ns(600, anchor, 2.5), 4_999_000);
        // lavapipe's 1 ns ticks on CLOCK_MONOTONIC: an identity shift.
        assert_eq!(host_ns(123_456_789, (100, 200), 1.0), 123_456_889);
    }
}
