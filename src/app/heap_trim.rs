//! Giving freed heap pages back to the system after the viewer rebuilds
//! something big (a reloaded model, a renderer for another skinning method,
//! a resized swapchain).
//!
//! Why: glibc keeps freed memory in its arenas (one per thread that
//! allocated, and lavapipe's threads allocate) and returns it only from the
//! top of each heap. A rebuild frees tens of megabytes in the middle of
//! those heaps, so the process's resident size climbed in steps over a long
//! soak run while the bytes in use stayed flat (see the guide's testing
//! page). `malloc_trim` walks every arena and releases the free pages.

/// Frames to wait after a rebuild before trimming, so the frame slots'
/// deferred releases (which free the old resources) have run.
const SETTLE_FRAMES: u32 = 3;

/// A trim requested after a rebuild, run once the frames in flight are done.
#[derive(Debug, Default)]
pub struct HeapTrim {
    frames_left: Option<u32>,
}

impl HeapTrim {
    /// Something big was freed (or is about to be, by deferred release).
    pub fn request(&mut self) {
        self.frames_left = Some(SETTLE_FRAMES);
    }

    /// Called once per rendered frame; trims when a request has settled.
    pub fn after_frame(&mut self) {
        match self.frames_left {
            Some(0) => {
                self.frames_left = None;
                crate::heap::return_free_pages();
            }
            Some(n) => self.frames_left = Some(n - 1),
            None => {}
        }
    }

    /// Whether a trim is waiting.
    #[cfg(test)]
    fn pending(&self) -> bool {
        self.frames_left.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_once_after_the_frames_settle() {
        let mut trim = HeapTrim::default();
        trim.after_frame();
        assert!(!trim.pending());
        trim.request();
        for _ in 0..SETTLE_FRAMES {
            trim.after_frame();
            assert!(trim.pending());
        }
        trim.after_frame();
        assert!(!trim.pending());
    }
}
