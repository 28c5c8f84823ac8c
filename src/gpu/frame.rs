//! Frame slots: per-frame command buffer, fence, descriptor pool, timestamp
//! queries and deferred destruction, used round-robin. It never knows what a
//! frame records.
//!
//! Invariant: a slot's resources (and anything retired into it) are touched
//! again only after `begin_frame` has waited for that slot's fence, so
//! nothing the GPU may still read is reset, rewritten or freed early.

use super::buffer::Buffer;
use super::context::GpuContext;
use super::error::{GpuError, VkResultExt};
use super::image::Image;
use ash::vk;

/// Frames the CPU may record ahead of the GPU.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// Timestamp queries available per frame.
pub const TIMESTAMPS_PER_FRAME: u32 = 16;

/// Something to destroy once the frame that last used it has finished.
pub enum Retired {
    /// A buffer.
    Buffer(Buffer),
    /// An image.
    Image(Image),
    /// Any other destruction (pipelines, layouts, ...).
    Other(Box<dyn FnOnce(&GpuContext) + Send>),
}

/// Takes what a submitted frame may still use, to destroy it once that
/// frame has finished: the ring between frames (`FrameRing::retire`), or
/// the slot being recorded (`FrameSlot::retire`).
pub trait Retire {
    /// Destroys `resource` once every frame that may use it has finished.
    fn retire(&mut self, resource: Retired);
}

impl Retire for FrameRing {
    fn retire(&mut self, resource: Retired) {
        FrameRing::retire(self, resource);
    }
}

impl Retire for FrameSlot {
    fn retire(&mut self, resource: Retired) {
        FrameSlot::retire(self, resource);
    }
}

impl Retired {
    fn release(self, ctx: &GpuContext) {
        match self {
            Retired::Buffer(b) => b.destroy(ctx),
            Retired::Image(i) => i.destroy(ctx),
            Retired::Other(f) => f(ctx),
        }
    }
}

/// One frame's worth of per-frame Vulkan objects.
pub struct FrameSlot {
    /// Position in the ring (0..FRAMES_IN_FLIGHT).
    pub index: usize,
    /// The command buffer recorded this frame.
    pub command_buffer: vk::CommandBuffer,
    /// Descriptor sets for this frame are allocated here; reset after the fence.
    pub descriptor_pool: vk::DescriptorPool,
    command_pool: vk::CommandPool,
    fence: vk::Fence,
    query_pool: Option<vk::QueryPool>,
    timestamps_written: u32,
    /// Raw timestamps of the previous use of this slot, read after its fence.
    last_timestamps: [u64; TIMESTAMPS_PER_FRAME as usize],
    last_timestamp_count: u32,
    /// The ring's number of the frame last submitted from this slot
    /// (what a frame trace's `wait` span names).
    frame: u64,
    submitted: bool,
    retired: Vec<Retired>,
}

impl FrameSlot {
    fn new(ctx: &GpuContext, index: usize) -> Result<Self, GpuError> {
        // Start from null handles so that a failure half-way destroys what
        // was made (destroying a null handle is a no-op in Vulkan).
        let mut slot = FrameSlot {
            index,
            command_buffer: vk::CommandBuffer::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            command_pool: vk::CommandPool::null(),
            fence: vk::Fence::null(),
            query_pool: None,
            timestamps_written: 0,
            last_timestamps: [0; TIMESTAMPS_PER_FRAME as usize],
            last_timestamp_count: 0,
            frame: 0,
            submitted: false,
            retired: Vec::new(),
        };
        match slot.create_objects(ctx) {
            Ok(()) => Ok(slot),
            Err(e) => {
                slot.destroy(ctx);
                Err(e)
            }
        }
    }

    fn create_objects(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let d = &ctx.device;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create infos on a live device; the objects are destroyed in `destroy`.
        unsafe {
            self.command_pool = d.create_command_pool(&pool_info, None).call("vkCreateCommandPool")?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.command_pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            self.command_buffer = d.allocate_command_buffers(&alloc).call("vkAllocateCommandBuffers")?[0];
            // Signalled, so the first wait on a never-submitted slot returns at once.
            self.fence = d
                .create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None)
                .call("vkCreateFence")?;
            let sizes = [
                // The skin pass takes a set per window of its output (at
                // most 64, `skin_pass::MAX_OUTPUT_WINDOWS`), each of up to 8
                // storage buffers or 5 texel buffers; the draws a few more.
                vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1024 },
                vk::DescriptorPoolSize { ty: vk::DescriptorType::UNIFORM_BUFFER, descriptor_count: 64 },
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
                    descriptor_count: 512,
                },
                vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                    descriptor_count: 256,
                },
            ];
            self.descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default().max_sets(512).pool_sizes(&sizes),
                    None,
                )
                .call("vkCreateDescriptorPool")?;
            if ctx.features.timestamps {
                let info = vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(TIMESTAMPS_PER_FRAME);
                self.query_pool = Some(d.create_query_pool(&info, None).call("vkCreateQueryPool")?);
            }
        }
        ctx.set_name(self.command_buffer, &format!("frame slot {} commands", self.index));
        ctx.set_name(self.fence, &format!("frame slot {} fence", self.index));
        Ok(())
    }

    /// Records a timestamp after `stage` completes; returns its query index,
    /// or `None` when timestamps are unsupported or this frame's are used up.
    pub fn write_timestamp(&mut self, ctx: &GpuContext, stage: vk::PipelineStageFlags2) -> Option<u32> {
        let pool = self.query_pool?;
        if self.timestamps_written >= TIMESTAMPS_PER_FRAME {
            return None;
        }
        let query = self.timestamps_written;
        // SAFETY: the command buffer is recording and the query was reset at frame start.
        unsafe { ctx.device.cmd_write_timestamp2(self.command_buffer, stage, pool, query) };
        self.timestamps_written += 1;
        Some(query)
    }

    /// Destroys `resource` once this slot's frame has finished. Call only
    /// while the slot is being recorded (between `FrameRing::begin_frame`
    /// and `end_frame`): its fence then signals after every frame submitted
    /// before it, as `FrameRing::retire` would.
    pub fn retire(&mut self, resource: Retired) {
        self.retired.push(resource);
    }

    /// Timestamps (in ticks) written by the previous frame that used this slot.
    pub fn previous_timestamps(&self) -> &[u64] {
        &self.last_timestamps[..self.last_timestamp_count as usize]
    }

    /// Waits for this slot's last submission, then reads its timestamps and
    /// releases what was retired into it.
    fn wait(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        if !self.submitted {
            return Ok(());
        }
        // A frame trace's CPU span (nothing is recorded without one).
        let span = tracing::trace_span!("wait", frame = self.frame).entered();
        ctx.wait_for_fence(self.fence)?;
        drop(span);
        self.submitted = false;
        self.last_timestamp_count = 0;
        if let Some(pool) = self.query_pool
            && self.timestamps_written > 0
        {
            let n = self.timestamps_written as usize;
            // SAFETY: the queries were written by the finished submission; no WAIT flag needed.
            let read = unsafe {
                ctx.device.get_query_pool_results(
                    pool,
                    0,
                    &mut self.last_timestamps[..n],
                    vk::QueryResultFlags::TYPE_64,
                )
            };
            if read.is_ok() {
                self.last_timestamp_count = n as u32;
            }
        }
        for r in self.retired.drain(..) {
            r.release(ctx);
        }
        Ok(())
    }

    fn destroy(mut self, ctx: &GpuContext) {
        for r in self.retired.drain(..) {
            r.release(ctx);
        }
        // SAFETY: the caller waited for the device to go idle.
        unsafe {
            if let Some(pool) = self.query_pool {
                ctx.device.destroy_query_pool(pool, None);
            }
            ctx.device.destroy_descriptor_pool(self.descriptor_pool, None);
            ctx.device.destroy_fence(self.fence, None);
            ctx.device.destroy_command_pool(self.command_pool, None);
        }
    }
}

/// The ring of frame slots.
pub struct FrameRing {
    slots: Vec<FrameSlot>,
    current: usize,
    recording: bool,
    frames_submitted: u64,
}

impl FrameRing {
    /// Creates `FRAMES_IN_FLIGHT` slots.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let mut slots = Vec::with_capacity(FRAMES_IN_FLIGHT);
        for i in 0..FRAMES_IN_FLIGHT {
            match FrameSlot::new(ctx, i) {
                Ok(s) => slots.push(s),
                Err(e) => {
                    slots.into_iter().for_each(|s| s.destroy(ctx));
                    return Err(e);
                }
            }
        }
        Ok(FrameRing { slots, current: 0, recording: false, frames_submitted: 0 })
    }

    /// Waits for the next slot's previous frame, recycles its pools and
    /// begins its command buffer. Returns the slot to record into.
    pub fn begin_frame(&mut self, ctx: &GpuContext) -> Result<&mut FrameSlot, GpuError> {
        if self.recording {
            return Err(GpuError::new("begin_frame called twice without end_frame"));
        }
        let slot = &mut self.slots[self.current];
        slot.wait(ctx)?;
        // SAFETY: the slot's fence has signalled (or it never submitted), so its
        // command buffer and descriptor sets are no longer in use.
        unsafe {
            ctx.device
                .reset_descriptor_pool(slot.descriptor_pool, vk::DescriptorPoolResetFlags::empty())
                .call("vkResetDescriptorPool")?;
            ctx.device
                .reset_command_pool(slot.command_pool, vk::CommandPoolResetFlags::empty())
                .call("vkResetCommandPool")?;
            let begin =
                vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            ctx.device.begin_command_buffer(slot.command_buffer, &begin).call("vkBeginCommandBuffer")?;
            if let Some(pool) = slot.query_pool {
                ctx.device.cmd_reset_query_pool(slot.command_buffer, pool, 0, TIMESTAMPS_PER_FRAME);
            }
        }
        slot.timestamps_written = 0;
        self.recording = true;
        Ok(slot)
    }

    /// Waits for the slot that the next `begin_frame` will use (its fence),
    /// releasing what was retired into it, without beginning a frame; returns
    /// its index. Per-slot objects kept outside the ring (a swapchain's
    /// acquire semaphore) may be reused after this returns.
    pub fn wait_next(&mut self, ctx: &GpuContext) -> Result<usize, GpuError> {
        if self.recording {
            return Err(GpuError::new("wait_next called while a frame is being recorded"));
        }
        let slot = &mut self.slots[self.current];
        slot.wait(ctx)?;
        Ok(slot.index)
    }

    /// The slot being recorded (or the last one, between frames).
    pub fn current(&mut self) -> &mut FrameSlot {
        &mut self.slots[self.current]
    }

    /// Ends and submits the current slot's commands with its fence, waiting
    /// on and signalling the given semaphores, and moves to the next slot.
    pub fn end_frame(
        &mut self,
        ctx: &GpuContext,
        waits: &[vk::SemaphoreSubmitInfo],
        signals: &[vk::SemaphoreSubmitInfo],
    ) -> Result<(), GpuError> {
        if !self.recording {
            return Err(GpuError::new("end_frame without begin_frame"));
        }
        self.recording = false;
        let slot = &mut self.slots[self.current];
        ctx.close_open_regions(slot.command_buffer);
        let buffers = [vk::CommandBufferSubmitInfo::default().command_buffer(slot.command_buffer)];
        let submit = vk::SubmitInfo2::default()
            .wait_semaphore_infos(waits)
            .command_buffer_infos(&buffers)
            .signal_semaphore_infos(signals);
        // SAFETY: the command buffer is recording; the fence is signalled and
        // unused until this submit (reset only now, so an error path earlier
        // never leaves an unsignalled fence that nothing will signal).
        unsafe {
            ctx.device.end_command_buffer(slot.command_buffer).call("vkEndCommandBuffer")?;
            ctx.device.reset_fences(&[slot.fence]).call("vkResetFences")?;
        }
        ctx.submit(&[submit], slot.fence)?;
        slot.submitted = true;
        slot.frame = self.frames_submitted;
        self.frames_submitted += 1;
        self.current = (self.current + 1) % self.slots.len();
        Ok(())
    }

    /// Destroys `resource` once every frame submitted so far (and the one
    /// being recorded) has finished. It goes into the most recently begun
    /// slot: a fence signal covers all earlier submissions on the queue.
    pub fn retire(&mut self, resource: Retired) {
        let newest = if self.recording {
            self.current
        } else {
            (self.current + FRAMES_IN_FLIGHT - 1) % FRAMES_IN_FLIGHT
        };
        self.slots[newest].retired.push(resource);
    }

    /// Slot `index` (0..FRAMES_IN_FLIGHT).
    pub fn slot(&self, index: usize) -> &FrameSlot {
        &self.slots[index]
    }

    /// Frames submitted so far.
    pub fn frames_submitted(&self) -> u64 {
        self.frames_submitted
    }

    /// Waits for every slot's last frame (e.g. before reading results back).
    pub fn wait_all(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        for slot in &mut self.slots {
            slot.wait(ctx)?;
        }
        Ok(())
    }

    /// Waits for the GPU and destroys every slot (leaks them when a wait
    /// timed out: their command buffers may still run).
    pub fn destroy(self, ctx: &GpuContext) {
        if ctx.wait_idle().is_err() && ctx.is_stalled() {
            return;
        }
        self.slots.into_iter().for_each(|s| s.destroy(ctx));
    }
}
