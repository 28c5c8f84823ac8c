//! Buffers with their memory, named for validation messages. It never tracks
//! GPU use: freeing a buffer only after the GPU is done with it (a wait, or
//! `FrameRing::retire`) is the caller's part.

use super::context::GpuContext;
use super::error::GpuError;
use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};

/// A buffer and its memory. Destroy it with `destroy` (or hand it to a frame
/// slot's deferred list) once no submitted work can still use it.
#[derive(Debug)]
pub struct Buffer {
    /// The Vulkan handle.
    pub raw: vk::Buffer,
    /// Size in bytes.
    pub size: u64,
    allocation: Option<Allocation>,
}

impl Buffer {
    /// Creates a buffer of `size` bytes (at least 4) in `location`;
    /// `CpuToGpu` and `GpuToCpu` buffers are persistently mapped.
    pub fn new(
        ctx: &GpuContext,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<Self, GpuError> {
        let size = size.max(4);
        let info =
            vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { ctx.device.create_buffer(&info, None) }.map_err(|result| GpuError::Creation {
            what: name.to_string(),
            bytes: size,
            call: "vkCreateBuffer",
            result,
        })?;
        // SAFETY: raw was just created on this device.
        let requirements = unsafe { ctx.device.get_buffer_memory_requirements(raw) };
        let allocation = ctx.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused.
                unsafe { ctx.device.destroy_buffer(raw, None) };
                return Err(GpuError::allocation(name, requirements.size, e));
            }
        };
        // SAFETY: memory and offset come from an allocation that satisfies the requirements.
        if let Err(e) =
            unsafe { ctx.device.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) }
        {
            let _ = ctx.allocator().free(allocation);
            // SAFETY: the buffer is unused.
            unsafe { ctx.device.destroy_buffer(raw, None) };
            return Err(GpuError::vk("vkBindBufferMemory", e));
        }
        ctx.set_name(raw, name);
        Ok(Buffer { raw, size, allocation: Some(allocation) })
    }

    /// Its device address, for shaders that reach it by pointer
    /// (`GL_EXT_buffer_reference`); it must have been made with
    /// `SHADER_DEVICE_ADDRESS` usage.
    pub fn device_address(&self, ctx: &GpuContext) -> vk::DeviceAddress {
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        // SAFETY: the buffer is live and bound to memory (allocated with the
        // device-address flag: the allocator is made with buffer_device_address).
        unsafe { ctx.device.get_buffer_device_address(&info) }
    }

    /// The mapped bytes of a host-visible buffer.
    pub fn mapped(&self) -> Option<&[u8]> {
        self.allocation.as_ref()?.mapped_slice()
    }

    /// The mapped bytes of a host-visible buffer, for writing.
    pub fn mapped_mut(&mut self) -> Option<&mut [u8]> {
        self.allocation.as_mut()?.mapped_slice_mut()
    }

    /// The first `len` elements of a host-visible buffer's mapping, as `T`,
    /// for writing in place (in parallel: split the slice).
    pub fn mapped_elements<T: bytemuck::Pod>(&mut self, len: usize) -> Result<&mut [T], GpuError> {
        let size = self.size;
        let mapped =
            self.mapped_mut().ok_or_else(|| GpuError::new("write to a buffer that is not host-visible"))?;
        let bytes = len.checked_mul(std::mem::size_of::<T>()).filter(|&b| b <= mapped.len());
        let bytes = bytes.ok_or_else(|| {
            GpuError::new(format!("{len} elements of {} bytes into {size}", std::mem::size_of::<T>()))
        })?;
        bytemuck::try_cast_slice_mut(&mut mapped[..bytes])
            .map_err(|e| GpuError::new(format!("buffer mapping as elements: {e}")))
    }

    /// Copies `bytes` into a host-visible buffer at `offset`.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), GpuError> {
        let size = self.size;
        let mapped =
            self.mapped_mut().ok_or_else(|| GpuError::new("write to a buffer that is not host-visible"))?;
        let start = usize::try_from(offset).map_err(|_| GpuError::new("offset too large"))?;
        let end = start.checked_add(bytes.len()).filter(|&e| e <= mapped.len());
        let end = end.ok_or_else(|| {
            GpuError::new(format!("write of {} bytes at {offset} into {size}", bytes.len()))
        })?;
        mapped[start..end].copy_from_slice(bytes);
        Ok(())
    }

    /// Frees the buffer now; the caller guarantees no pending GPU use.
    pub fn destroy(mut self, ctx: &GpuContext) {
        if ctx.is_stalled() {
            // The GPU may still use it (a wait timed out): leaked, not freed.
            return;
        }
        if let Some(allocation) = self.allocation.take() {
            let _ = ctx.allocator().free(allocation);
        }
        // SAFETY: the caller guarantees the GPU no longer uses the buffer.
        unsafe { ctx.device.destroy_buffer(self.raw, None) };
    }
}
