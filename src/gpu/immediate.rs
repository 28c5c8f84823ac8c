//! One-shot command submission for setup work (uploads, readbacks): record,
//! submit, wait. Not for per-frame use.

use super::context::GpuContext;
use super::error::{GpuError, VkResultExt};
use ash::vk;

/// Records `record` into a fresh command buffer, submits it and waits for it.
pub fn submit_and_wait(ctx: &GpuContext, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), GpuError> {
    let d = &ctx.device;
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(ctx.queue_family)
        .flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: objects are created, used once and destroyed here after the fence.
    unsafe {
        let pool = d.create_command_pool(&pool_info, None).call("vkCreateCommandPool")?;
        let result = (|| {
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cmd = d.allocate_command_buffers(&alloc).call("vkAllocateCommandBuffers")?[0];
            let begin =
                vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(cmd, &begin).call("vkBeginCommandBuffer")?;
            record(cmd);
            d.end_command_buffer(cmd).call("vkEndCommandBuffer")?;
            let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).call("vkCreateFence")?;
            let buffers = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            let submit = vk::SubmitInfo2::default().command_buffer_infos(&buffers);
            let waited = ctx.submit(&[submit], fence).and_then(|_| ctx.wait_for_fence(fence));
            match &waited {
                // The submission may still run: the fence and the pool are
                // leaked rather than freed under it.
                Err(e) if e.is_timeout() => return waited,
                // It may still be pending: wait for the queue before freeing.
                Err(_) => {
                    let _ = ctx.wait_idle();
                }
                Ok(()) => {}
            }
            d.destroy_fence(fence, None);
            waited
        })();
        if result.as_ref().is_err_and(GpuError::is_timeout) {
            return result;
        }
        d.destroy_command_pool(pool, None);
        result
    }
}
