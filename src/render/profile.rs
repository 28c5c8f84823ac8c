//! Frame-by-frame measurement of a crowd through the renderer's one frame
//! path (what `vkskin bench` runs): per frame the CPU pose update and
//! palette write times, the palette bytes, and the GPU timestamps of the
//! upload copy, the skin dispatch and each draw pass; and, timed by the host,
//! whole frames, the skin dispatch and the staged copy in isolated
//! submissions. It measures through the frames every command draws, never
//! a path of its own.

use super::camera::{Camera, DEFAULT_FOV_Y};
use super::copy_kernel::median;
use super::error::RenderError;
use super::frame::{FrameContents, FrameEnd, FrameInput, FrameOutput, GpuTimes};
use super::frame_settings::{DrawDetail, FrameSettings, InfluenceBlend, PaletteUpload, SkinningPlacement};
use super::gpu_frame_budget::FrameCost;
use super::offscreen::OffscreenTargets;
use super::renderer::{DetailLimits, RenderSettings, Renderer};
use super::scene_passes::SceneTarget;
use crate::anim::frame_poses::FrameSource;
use crate::anim::framing::Bounds;
use crate::asset::Model;
use crate::gpu::{FRAMES_IN_FLIGHT, FrameRing, GpuContext, GpuError};
use ash::vk;
use std::sync::Arc;
use std::time::Instant;

/// Frame rate the crowd is advanced at (each frame is 1/60 s of animation).
pub const PROFILE_FPS: f64 = 60.0;

/// One measured frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameSample {
    /// CPU time of the crowd's pose update, in microseconds.
    pub cpu_pose_us: f64,
    /// CPU time writing palettes and morph weights, in microseconds.
    pub cpu_palette_write_us: f64,
    /// Palette bytes written (and, staged, copied) this frame.
    pub palette_bytes: u64,
    /// Playback bytes written for the characters posed on the GPU.
    pub playback_bytes: u64,
    /// Triangles the characters drew per pass, at their detail levels.
    pub triangles: u64,
    /// Triangles the characters drew into the shadow cascades together
    /// (`Renderer::shadow_triangles`; 0 on frames without them).
    pub shadow_triangles: u64,
    /// Vertices the skin dispatch skinned (`Renderer::skinned_vertices`).
    pub skinned_vertices: u64,
    /// Characters the crowd posed (`FrameSource::posed`).
    pub posed_characters: u64,
    /// The most pixels by which the characters' levels departed from their
    /// full meshes (`Renderer::detail_pixel_error`).
    pub pixel_error: f32,
    /// The frame's GPU phases.
    pub gpu: GpuTimes,
}

/// The renderer drawing a crowd of one model offscreen, and where it is in
/// the crowd's frames. The crowd (any `FrameSource` of `characters` poses)
/// is the caller's, handed to each measurement.
pub struct ProfileScene {
    renderer: Renderer,
    camera: Camera,
    /// The model's file, for messages.
    file: String,
    /// Frames rendered so far (the crowd's frame counter).
    frame: u32,
}

impl ProfileScene {
    /// A renderer for `characters` characters of `model`, skinned with
    /// `blend`, drawn at `extent` (width, height) without MSAA (the
    /// benchmark measures skinning and geometry, not resolve bandwidth), the
    /// camera framing `bounds` (the crowd's, world space).
    pub fn new(
        ctx: &GpuContext,
        model: Arc<Model>,
        characters: u32,
        blend: InfluenceBlend,
        extent: (u32, u32),
        bounds: Bounds,
    ) -> Result<Self, RenderError> {
        let extent = vk::Extent2D { width: extent.0, height: extent.1 };
        let aspect = extent.width as f32 / extent.height.max(1) as f32;
        let camera = Camera::frame_box(bounds.0, bounds.1, aspect, DEFAULT_FOV_Y);
        let mut settings = RenderSettings::new(extent);
        settings.msaa = false;
        settings.characters = characters;
        settings.frame.blend = blend;
        let file = model.file.clone();
        let renderer = Renderer::new(ctx, model, settings)?;
        Ok(ProfileScene { renderer, camera, file, frame: 0 })
    }

    /// Sets the most a frame's characters may cost at their levels,
    /// between frames.
    pub fn set_detail_limits(&mut self, limits: DetailLimits) {
        self.renderer.set_detail_limits(limits);
    }

    /// Chooses how the next frames are skinned, uploaded and drawn (the
    /// influence blend is the scene's own: its pipelines are built for it).
    pub fn configure(&mut self, frame: &FrameSettings) {
        self.renderer.set_placement(frame.placement);
        self.renderer.set_upload(frame.upload);
        self.renderer.set_passes(frame.passes);
        self.renderer.set_detail(frame.detail);
    }

    /// Renders `warmup` frames of `crowd`, then measures `frames` frames
    /// and returns them in order. GPU times are read when a frame's slot
    /// comes round again, so a few more frames are rendered at the end; the
    /// renderer waits for all of them before returning.
    pub fn measure(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        warmup: u32,
        frames: u32,
    ) -> Result<Vec<FrameSample>, RenderError> {
        let total = warmup + frames + FRAMES_IN_FLIGHT as u32;
        let mut samples = vec![FrameSample::default(); frames as usize];
        let mut gpu_seen = 0;
        let mut ignore = |_: u64, _: &[u8]| Ok(());
        for i in 0..total {
            let started = Instant::now();
            self.pose_next(crowd)?;
            let pose_us = started.elapsed().as_secs_f64() * 1e6;
            let report = self.renderer.render_frame(ctx, &*crowd, &self.camera, false, &mut ignore)?;
            self.frame += 1;
            if let Some(k) = i.checked_sub(warmup).filter(|&k| k < frames) {
                let sample = &mut samples[k as usize];
                sample.cpu_pose_us = pose_us;
                sample.cpu_palette_write_us = report.skin.write_ns as f64 / 1000.0;
                sample.palette_bytes = report.skin.palette_bytes_written;
                sample.playback_bytes = report.skin.playback_bytes_written;
                sample.triangles = self.renderer.triangles_per_pass();
                sample.shadow_triangles = self.renderer.shadow_triangles();
                sample.skinned_vertices = self.renderer.skinned_vertices();
                sample.posed_characters = crowd.posed() as u64;
                sample.pixel_error = self.renderer.detail_pixel_error();
            }
            // The GPU times of frame i - FRAMES_IN_FLIGHT (the slot's last use).
            let done = i.checked_sub(FRAMES_IN_FLIGHT as u32 + warmup).filter(|&k| k < frames);
            if let (Some(k), Some(gpu)) = (done, report.previous_gpu) {
                samples[k as usize].gpu = gpu;
                gpu_seen += 1;
            }
        }
        self.renderer.wait_all(ctx)?;
        if gpu_seen < frames {
            return Err(RenderError::Gpu(GpuError::new(format!(
                "GPU timestamps were missing for {} of {frames} frames (does the queue support timestamps?)",
                frames - gpu_seen
            ))));
        }
        Ok(samples)
    }

    /// Poses the crowd's next frame as the scene's camera will see it
    /// (`Renderer::pose_foreseen`).
    fn pose_next(&mut self, crowd: &mut dyn FrameSource) -> Result<(), RenderError> {
        let (frame, camera) = (self.frame, self.camera);
        self.renderer
            .pose_foreseen(crowd, frame, &camera)
            .map_err(|source| RenderError::Pose { file: self.file.clone(), source })
    }

    /// Times whole frames by the host, `runs` times, as configured: each run
    /// advances the crowd one frame (untimed, as `measure` does), then
    /// submits the frame (upload, skinning, every draw pass, no timestamps)
    /// and waits for it; its wall time from submit to fence, minus the
    /// fastest of as many empty frames interleaved with them (microseconds).
    /// The fastest, not the median: a whole frame's work dwarfs the
    /// submission's own cost, and on a loaded machine one preempted empty
    /// frame in a short run would otherwise erase that work (a median of 2
    /// is their mean).
    /// The frame time on devices whose timestamps do not bracket the work.
    pub fn measure_frame_wall(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        runs: u32,
    ) -> Result<Vec<f64>, RenderError> {
        self.renderer.set_timestamps(false);
        let timed = self.timed_scene_runs(ctx, crowd, runs);
        self.renderer.set_timestamps(true);
        timed
    }

    fn timed_scene_runs(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        runs: u32,
    ) -> Result<Vec<f64>, RenderError> {
        let (mut empty, mut frames) = (Vec::with_capacity(runs as usize), Vec::with_capacity(runs as usize));
        for _ in 0..runs {
            self.pose_next(crowd)?;
            self.frame += 1;
            frames.push(self.timed_frame(ctx, &*crowd, Recorded::Scene)?.0);
            empty.push(self.timed_frame(ctx, &*crowd, Recorded::Nothing)?.0);
        }
        // Scheduling noise only adds time: the floor is the submission's cost.
        let overhead = empty.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(frames.into_iter().map(|t| t - overhead).collect())
    }

    /// Times the skin dispatch by the host, `runs` times: each run is a
    /// frame holding the dispatch alone (the crowd paused, dirty upload: no
    /// palette bytes move once every slot holds the poses), its wall time
    /// from submit to fence minus the median of as many frames without the
    /// dispatch, interleaved with them (microseconds). For drivers whose
    /// timestamps do not bracket compute work (lavapipe); compare with
    /// `CopyKernel::measure_wall`. The dispatch skins what the camera's
    /// scene draws at `detail` (`Full`: every vertex, the copy kernel's
    /// bytes). `crowd` must be paused (its poses and their versions stay
    /// as they are).
    pub fn measure_skin_wall(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        runs: u32,
        detail: DrawDetail,
    ) -> Result<Vec<f64>, RenderError> {
        self.renderer.set_detail(detail);
        Ok(self.timed_skinning(ctx, crowd, runs, SkinningPlacement::Compute, PaletteUpload::Dirty)?.0)
    }

    /// Times the staged palette copy by the host, `runs` times, as
    /// `measure_skin_wall` times the dispatch: each run is a frame holding
    /// only the copies `PaletteUpload::Staged` records (every character's
    /// palette, host-visible staging to device-local, the regions merged
    /// as the skin pass merges them, and their barrier); the palette writes
    /// happen before the submission and are not counted. Returns the
    /// microseconds of each run and the bytes each copied. Compare with
    /// `copy_kernel::measure_buffer_copy_wall` over those bytes.
    /// `crowd` must be paused, as for `measure_skin_wall`.
    pub fn measure_staged_copy_wall(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        runs: u32,
    ) -> Result<(Vec<f64>, u64), RenderError> {
        // The vertex path uploads and copies but dispatches nothing.
        self.timed_skinning(ctx, crowd, runs, SkinningPlacement::Vertex, PaletteUpload::Staged)
    }

    /// With the crowd paused and posed, skinning by `path` with `upload`:
    /// `runs` frames that record only `record_skinning` (after
    /// FRAMES_IN_FLIGHT untimed ones), each minus the median of as many
    /// empty frames interleaved with them (microseconds), and the palette
    /// bytes the last one wrote. Without timestamps (the frame's, the
    /// copy's, the dispatch's): on lavapipe each one after work is a flush
    /// that costs more than a small copy, and the copy kernel's and the
    /// plain buffer copy's host-timed runs have none either.
    fn timed_skinning(
        &mut self,
        ctx: &GpuContext,
        crowd: &mut dyn FrameSource,
        runs: u32,
        placement: SkinningPlacement,
        upload: PaletteUpload,
    ) -> Result<(Vec<f64>, u64), RenderError> {
        self.renderer.set_placement(placement);
        self.renderer.set_upload(upload);
        self.pose_next(crowd)?;
        self.renderer.set_timestamps(false);
        let timed = self.timed_runs(ctx, &*crowd, runs);
        self.renderer.set_timestamps(true);
        timed
    }

    fn timed_runs(
        &mut self,
        ctx: &GpuContext,
        crowd: &dyn FrameSource,
        runs: u32,
    ) -> Result<(Vec<f64>, u64), RenderError> {
        let (mut empty, mut recorded) =
            (Vec::with_capacity(runs as usize), Vec::with_capacity(runs as usize));
        let mut bytes = 0;
        let warmup = FRAMES_IN_FLIGHT as u32;
        for i in 0..warmup + runs {
            for record in [false, true] {
                let contents = if record { Recorded::SkinningOnly } else { Recorded::Nothing };
                let (wall, written) = self.timed_frame(ctx, crowd, contents)?;
                if i >= warmup {
                    if record { &mut recorded } else { &mut empty }.push(wall);
                }
                bytes = if record { written } else { bytes };
            }
        }
        let overhead = median(&mut empty);
        Ok((recorded.into_iter().map(|t| t - overhead).collect(), bytes))
    }

    /// One frame holding `recorded`: the wall time of its submit and wait,
    /// microseconds, and the palette bytes it wrote.
    fn timed_frame(
        &mut self,
        ctx: &GpuContext,
        crowd: &dyn FrameSource,
        recorded: Recorded,
    ) -> Result<(f64, u64), RenderError> {
        let contents = match recorded {
            Recorded::Scene => FrameContents::Scene { camera: &self.camera, show_mesh: true },
            Recorded::SkinningOnly => FrameContents::Skinning { seen_by: Some(&self.camera) },
            Recorded::Nothing => FrameContents::Nothing,
        };
        // Taken for the frame (the frame borrows the renderer), put back below.
        let offscreen = self.renderer.offscreen.take();
        let mut timed = TimedSubmission { target: offscreen.as_ref(), ..TimedSubmission::default() };
        let drawn = self.renderer.draw_frame(ctx, &FrameInput { poses: crowd, contents }, &mut timed);
        let wall_us = timed.wall_us;
        self.renderer.offscreen = offscreen;
        let bytes = drawn?.map_or(0, |r| r.skin.palette_bytes_written);
        Ok((wall_us, bytes))
    }

    /// Bytes the skin pass reads and writes per frame.
    pub fn skin_traffic(&self) -> (u64, u64) {
        self.renderer.skin_traffic()
    }

    /// What the GPU frame budget measured this configuration's frames to
    /// cost, once their triangle counts spread (`GpuFrameBudget::cost`).
    pub fn gpu_frame_cost(&self) -> Option<FrameCost> {
        self.renderer.gpu_frame_steering().and_then(|steer| steer.cost())
    }

    /// Frees the GPU objects.
    pub fn destroy(self, ctx: &GpuContext) {
        self.renderer.destroy(ctx);
    }
}

/// What a host-timed frame records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recorded {
    /// The whole frame: skinning and every draw pass.
    Scene,
    /// The skinning alone (upload, copies, dispatch) of the scene the
    /// camera sees, at its detail levels when the detail is `Auto`.
    SkinningOnly,
    /// Nothing but the frame's own commands.
    Nothing,
}

/// A frame that ends by timing its submission by the host: from just
/// before the submit until every frame's fence has signalled. Scene frames
/// draw into the renderer's offscreen targets (`target`).
#[derive(Default)]
struct TimedSubmission<'a> {
    target: Option<&'a OffscreenTargets>,
    started: Option<Instant>,
    wall_us: f64,
}

impl FrameOutput for TimedSubmission<'_> {
    fn target(&self, slot: usize) -> Result<SceneTarget<'_>, GpuError> {
        let targets = self.target.ok_or_else(|| GpuError::new("a host-timed frame without a target"))?;
        Ok(targets.scene_target(slot))
    }

    fn record_end(&mut self, _: &GpuContext, _: &FrameEnd) -> Result<(), GpuError> {
        // The last step before the submission.
        self.started = Some(Instant::now());
        Ok(())
    }

    fn submitted(
        &mut self,
        ctx: &GpuContext,
        ring: &mut FrameRing,
        _: usize,
        _: u64,
    ) -> Result<(), GpuError> {
        ring.wait_all(ctx)?;
        self.wall_us = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e6);
        Ok(())
    }
}
