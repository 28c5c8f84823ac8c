//! Frames that end in an offscreen image, optionally read back: each frame
//! slot's own colour target and readback buffer. A slot's pixels are handed
//! out when the slot comes round again (its fence has signalled) or in
//! `Renderer::finish`, in frame order. It never hands out a slot's pixels
//! before that slot's fence.

use super::camera::Camera;
use super::error::RenderError;
use super::frame::{FrameContents, FrameEnd, FrameInput, FrameOutput, FrameReport};
use super::renderer::Renderer;
use super::scene_passes::SceneTarget;
use super::target::SlotTargets;
use crate::anim::FramePoses;
use crate::gpu::{FRAMES_IN_FLIGHT, FrameRing, GpuContext, GpuError};

/// Receives a finished frame: `(frame number, RGBA8 sRGB pixels, rows top to bottom)`.
pub type PixelSink<'a> = dyn FnMut(u64, &[u8]) -> Result<(), RenderError> + 'a;

/// A renderer's offscreen targets and which frame's pixels each slot's
/// readback buffer holds, not yet handed out.
pub(crate) struct OffscreenTargets {
    targets: SlotTargets,
    pending: [Option<u64>; FRAMES_IN_FLIGHT],
}

impl OffscreenTargets {
    pub(crate) fn new(targets: SlotTargets) -> Self {
        OffscreenTargets { targets, pending: [None; FRAMES_IN_FLIGHT] }
    }

    pub(crate) fn destroy(self, ctx: &GpuContext) {
        self.targets.destroy(ctx);
    }

    /// Where slot `slot`'s scene is drawn (also for frames that end
    /// elsewhere than here: the profiler's host-timed whole frames).
    pub(crate) fn scene_target(&self, slot: usize) -> SceneTarget<'_> {
        SceneTarget::Offscreen(self.targets.get(slot))
    }
}

/// One offscreen frame: drawn into the slot's target, copied to its
/// readback buffer when `readback`, its pixels handed to `on_pixels` later.
struct ReadbackEnd<'a, 'b> {
    offscreen: &'a mut OffscreenTargets,
    readback: bool,
    on_pixels: &'a mut PixelSink<'b>,
}

impl FrameOutput for ReadbackEnd<'_, '_> {
    fn begin(&mut self, _: &GpuContext, slot: usize) -> Result<bool, RenderError> {
        // The slot's fence has signalled: its readback buffer is final, and
        // nothing rewrites it before this frame is submitted.
        if let Some(done) = self.offscreen.pending[slot].take() {
            (self.on_pixels)(done, self.offscreen.targets.get(slot).pixels()?)?;
        }
        Ok(true)
    }

    fn target(&self, slot: usize) -> Result<SceneTarget<'_>, GpuError> {
        Ok(self.offscreen.scene_target(slot))
    }

    fn record_end(&mut self, ctx: &GpuContext, end: &FrameEnd) -> Result<(), GpuError> {
        if self.readback {
            self.offscreen.targets.get(end.slot).record_readback(ctx, end.cmd);
        }
        Ok(())
    }

    fn submitted(
        &mut self,
        _: &GpuContext,
        _: &mut FrameRing,
        slot: usize,
        frame: u64,
    ) -> Result<(), GpuError> {
        if self.readback {
            self.offscreen.pending[slot] = Some(frame);
        }
        Ok(())
    }
}

impl Renderer {
    /// Records and submits one frame of `poses` (one per character; uploaded
    /// as the upload mode says), seen by `camera`, into the slot's offscreen
    /// target. When `readback` is set the frame's pixels are handed to
    /// `on_pixels` later: once the slot comes round again (after its fence)
    /// or in `finish`. Frames are handed out in order, as `(frame number,
    /// RGBA8 sRGB rows)`.
    pub fn render_frame(
        &mut self,
        ctx: &GpuContext,
        poses: &dyn FramePoses,
        camera: &Camera,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<FrameReport, RenderError> {
        let input = FrameInput { poses, contents: FrameContents::Scene { camera, show_mesh: true } };
        self.draw_offscreen(ctx, &input, readback, on_pixels)
    }

    /// `render_frame` for any contents (the profiler's skinning-only frames).
    pub(crate) fn draw_offscreen(
        &mut self,
        ctx: &GpuContext,
        input: &FrameInput,
        readback: bool,
        on_pixels: &mut PixelSink,
    ) -> Result<FrameReport, RenderError> {
        // Taken for the frame (the frame borrows the renderer), put back below.
        let Some(mut offscreen) = self.offscreen.take() else {
            return Err(GpuError::new("this renderer draws to a window, not to offscreen targets").into());
        };
        let mut end = ReadbackEnd { offscreen: &mut offscreen, readback, on_pixels };
        let drawn = self.draw_frame(ctx, input, &mut end);
        self.offscreen = Some(offscreen);
        drawn?.ok_or_else(|| GpuError::new("an offscreen frame was dropped (internal error)").into())
    }

    /// Waits for every submitted frame and hands out the pixels not yet handed out, in order.
    pub fn finish(&mut self, ctx: &GpuContext, on_pixels: &mut PixelSink) -> Result<(), RenderError> {
        self.ring.wait_all(ctx)?;
        // A window's renderer has nothing to hand out.
        let Some(offscreen) = self.offscreen.as_mut() else { return Ok(()) };
        loop {
            let next = (0..FRAMES_IN_FLIGHT).filter_map(|s| offscreen.pending[s].map(|f| (f, s))).min();
            let Some((frame, slot)) = next else { return Ok(()) };
            offscreen.pending[slot] = None;
            on_pixels(frame, offscreen.targets.get(slot).pixels()?)?;
        }
    }
}
