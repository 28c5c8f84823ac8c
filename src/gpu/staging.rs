//! Filling device-local buffers at setup (models, pose programs): the bytes
//! go through one host-visible staging buffer and one submission the host
//! waits for, then a barrier makes the copies visible to their readers.
//! Setup work, never per frame.

use super::barrier::{self, Access};
use super::{Buffer, GpuContext, GpuError, immediate};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Byte offset of each section in the staging buffer, 16-byte aligned, and
/// the buffer's size.
fn layout_sections(sizes: &[u64]) -> (Vec<u64>, u64) {
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut end = 0u64;
    for &s in sizes {
        offsets.push(end);
        end = (end + s).next_multiple_of(16);
    }
    (offsets, end.max(16))
}

/// Copies each of `data` to the start of the matching buffer of `targets`
/// (each at least as large, with TRANSFER_DST usage) through one staging
/// buffer named `label` and one submission, waiting for it. The copies are
/// made visible to `readers`: the barrier orders them before every later
/// command on the queue, later submissions included, so no per-frame
/// barrier is needed.
pub fn copy_through_staging(
    ctx: &GpuContext,
    label: &str,
    targets: &[Buffer],
    data: &[&[u8]],
    readers: &[Access],
) -> Result<(), GpuError> {
    let sizes: Vec<u64> = data.iter().map(|b| b.len() as u64).collect();
    let (offsets, total) = layout_sections(&sizes);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC;
    let mut staging = Buffer::new(ctx, label, total, usage, MemoryLocation::CpuToGpu)?;
    let written = data.iter().zip(&offsets).try_for_each(|(bytes, &off)| staging.write(off, bytes));
    let copied = written.and_then(|_| {
        immediate::submit_and_wait(ctx, |cmd| {
            for ((buffer, bytes), &off) in targets.iter().zip(data).zip(&offsets) {
                if bytes.is_empty() {
                    continue;
                }
                let region = vk::BufferCopy { src_offset: off, dst_offset: 0, size: bytes.len() as u64 };
                // SAFETY: both buffers are live, the region lies inside both, cmd is recording.
                unsafe { ctx.device.cmd_copy_buffer(cmd, staging.raw, buffer.raw, &[region]) };
            }
            barrier::record_global(ctx, cmd, &[Access::CopyWrite], readers);
        })
    });
    // The submission has completed (or failed and the queue idled).
    staging.destroy(ctx);
    copied
}

#[cfg(test)]
mod tests {
    use super::layout_sections;

    #[test]
    fn sections_are_16_byte_aligned_and_never_empty() {
        assert_eq!(layout_sections(&[3, 16, 0, 17]), (vec![0, 16, 32, 32], 64));
        assert_eq!(layout_sections(&[]), (vec![], 16));
    }
}
