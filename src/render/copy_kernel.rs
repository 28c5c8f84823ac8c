//! A copy kernel (shaders/copy.comp) over a given number of bytes between
//! two device-local buffers, timed with GPU timestamps: the practical
//! bandwidth ceiling the benchmark holds the skin pass against (skin
//! efficiency = copy time / skin time over the same bytes moved). A
//! measurement only: it never touches the skinning buffers.

use crate::gpu::error::VkResultExt;
use crate::gpu::pipeline::ComputePipeline;
use crate::gpu::{Buffer, GpuContext, GpuError, immediate};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::time::Instant;

/// Threads per workgroup (`local_size_x` in copy.comp).
pub const WORKGROUP_SIZE: u32 = 256;

/// The copy pipeline, its two buffers and a timestamp query pool.
pub struct CopyKernel {
    /// The pipeline; `None` until `build` made it.
    compute: Option<ComputePipeline>,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    queries: vk::QueryPool,
    source: Buffer,
    destination: Buffer,
    /// 16-byte elements copied per run.
    elements: u32,
    /// Requested elements / copied elements (> 1 when the request exceeded
    /// what one storage buffer may hold; times are scaled by it).
    scale: f64,
}

impl CopyKernel {
    /// A kernel that moves `bytes` in all: it reads `bytes / 2` and writes
    /// as many (rounded up to 16-byte elements), the same traffic as a
    /// pass that reads and writes `bytes` together. Needs timestamp support.
    pub fn new(ctx: &GpuContext, bytes: u64) -> Result<Self, GpuError> {
        if !ctx.features.timestamps {
            return Err(GpuError::new("the copy kernel needs timestamp queries, which this queue lacks"));
        }
        let requested = (bytes / 2).div_ceil(16).max(1);
        // One storage buffer holds at most maxStorageBufferRange bytes: a
        // larger request copies that much and scales its time linearly (a
        // copy of gigabytes runs at a steady bandwidth).
        let limit = u64::from(ctx.properties.limits.max_storage_buffer_range) / 16;
        let elements = requested.min(limit).min(u64::from(u32::MAX));
        let scale = requested as f64 / elements as f64;
        let size = elements * 16;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let source = Buffer::new(ctx, "copy kernel source", size, usage, MemoryLocation::GpuOnly)?;
        let destination =
            match Buffer::new(ctx, "copy kernel destination", size, usage, MemoryLocation::GpuOnly) {
                Ok(b) => b,
                Err(e) => {
                    source.destroy(ctx);
                    return Err(e);
                }
            };
        let mut kernel = CopyKernel {
            compute: None,
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            queries: vk::QueryPool::null(),
            source,
            destination,
            elements: elements as u32,
            scale,
        };
        match kernel.build(ctx) {
            Ok(()) => Ok(kernel),
            Err(e) => {
                kernel.destroy(ctx);
                Err(e)
            }
        }
    }

    fn build(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let compute = ComputePipeline::new(ctx, "copy.comp", crate::spirv!("copy.comp"), 2, 4, None)?;
        let set_layout = self.compute.insert(compute).set_layout;
        let d = &ctx.device;
        // SAFETY: valid create infos on a live device; everything made here is
        // destroyed by `destroy`.
        unsafe {
            let sizes =
                [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 2 }];
            self.pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes),
                    None,
                )
                .call("vkCreateDescriptorPool")?;
            let layouts = [set_layout];
            let alloc =
                vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.pool).set_layouts(&layouts);
            self.set = d.allocate_descriptor_sets(&alloc).call("vkAllocateDescriptorSets")?[0];
            let infos = [self.source.raw, self.destination.raw].map(|buffer| vk::DescriptorBufferInfo {
                buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            });
            let writes: [vk::WriteDescriptorSet; 2] = std::array::from_fn(|i| {
                vk::WriteDescriptorSet::default()
                    .dst_set(self.set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(std::slice::from_ref(&infos[i]))
            });
            d.update_descriptor_sets(&writes, &[]);
            let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2);
            self.queries = d.create_query_pool(&info, None).call("vkCreateQueryPool")?;
        }
        Ok(())
    }

    /// Bytes moved per run (read plus written), as requested.
    pub fn bytes_moved(&self) -> u64 {
        (f64::from(self.elements) * 32.0 * self.scale) as u64
    }

    /// Runs the copy `runs` times, each in its own submission (waited), and
    /// returns each run's GPU time in microseconds (scaled to the requested
    /// bytes, see `new`).
    pub fn measure(&self, ctx: &GpuContext, runs: usize) -> Result<Vec<f64>, GpuError> {
        let compute = self.pipeline()?;
        let period = ctx.timestamp_period_ns();
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            immediate::submit_and_wait(ctx, |cmd| self.record(ctx, cmd, compute, true))?;
            let mut ticks = [0u64; 2];
            // SAFETY: both queries were written by the waited submission.
            unsafe {
                ctx.device.get_query_pool_results(
                    self.queries,
                    0,
                    &mut ticks,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )
            }
            .call("vkGetQueryPoolResults")?;
            times.push(ticks[1].saturating_sub(ticks[0]) as f64 * period / 1000.0 * self.scale);
        }
        Ok(times)
    }

    /// Runs the copy `runs` times timed by the host instead: each run is the
    /// wall time of its submission and wait minus the median of as many
    /// empty submissions interleaved with them (microseconds, scaled as
    /// `measure`). For drivers whose timestamps do not bracket compute work
    /// (lavapipe); compare with `ProfileScene::measure_skin_wall`.
    pub fn measure_wall(&self, ctx: &GpuContext, runs: usize) -> Result<Vec<f64>, GpuError> {
        let compute = self.pipeline()?;
        let mut empty = Vec::with_capacity(runs);
        let mut copies = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            immediate::submit_and_wait(ctx, |_| ())?;
            empty.push(started.elapsed().as_secs_f64() * 1e6);
            let started = Instant::now();
            immediate::submit_and_wait(ctx, |cmd| self.record(ctx, cmd, compute, false))?;
            copies.push(started.elapsed().as_secs_f64() * 1e6);
        }
        let overhead = median(&mut empty);
        Ok(copies.into_iter().map(|t| (t - overhead) * self.scale).collect())
    }

    fn pipeline(&self) -> Result<&ComputePipeline, GpuError> {
        self.compute.as_ref().ok_or_else(|| GpuError::new("copy kernel: not built"))
    }

    /// Records one copy (between two timestamps when `timestamps`).
    fn record(&self, ctx: &GpuContext, cmd: vk::CommandBuffer, compute: &ComputePipeline, timestamps: bool) {
        let (groups_x, groups_y) = ComputePipeline::grid(ctx, self.elements.div_ceil(WORKGROUP_SIZE));
        let d = &ctx.device;
        // SAFETY: cmd is recording; every object is live until this
        // submission has been waited for. Each run waits for the previous
        // one, so the destination's writes never race.
        unsafe {
            if timestamps {
                d.cmd_reset_query_pool(cmd, self.queries, 0, 2);
            }
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, compute.pipeline);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                compute.layout,
                0,
                &[self.set],
                &[],
            );
            d.cmd_push_constants(
                cmd,
                compute.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &self.elements.to_ne_bytes(),
            );
            if timestamps {
                d.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::TOP_OF_PIPE, self.queries, 0);
            }
            d.cmd_dispatch(cmd, groups_x, groups_y, 1);
            if timestamps {
                d.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::COMPUTE_SHADER, self.queries, 1);
            }
        }
    }

    /// Frees everything; nothing is pending (every run was waited for).
    pub fn destroy(self, ctx: &GpuContext) {
        // SAFETY: no submission uses these objects any more; null handles are ignored.
        unsafe {
            let d = &ctx.device;
            d.destroy_query_pool(self.queries, None);
            d.destroy_descriptor_pool(self.pool, None);
        }
        if let Some(c) = self.compute {
            c.destroy(ctx);
        }
        self.source.destroy(ctx);
        self.destination.destroy(ctx);
    }
}

/// Whether this device's timestamps bracket compute work: the copy kernel
/// over `bytes` and over twice as many, timestamped, `runs` times each,
/// interleaved (after one untimed run of each, first touch). Returns the
/// medians, microseconds: (one copy, the copy of twice the bytes). Where
/// the timestamps bracket the dispatch the second is about twice the
/// first; lavapipe's see almost nothing of it, and both are about equal.
pub fn timestamp_check(ctx: &GpuContext, bytes: u64, runs: usize) -> Result<(f64, f64), GpuError> {
    let one = CopyKernel::new(ctx, bytes)?;
    let two = match CopyKernel::new(ctx, 2 * bytes) {
        Ok(k) => k,
        Err(e) => {
            one.destroy(ctx);
            return Err(e);
        }
    };
    let (mut ones, mut twos) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let timed = (0..=runs).try_for_each(|i| {
        let (a, b) = (one.measure(ctx, 1)?, two.measure(ctx, 1)?);
        if i > 0 {
            ones.extend(a);
            twos.extend(b);
        }
        Ok::<_, GpuError>(())
    });
    one.destroy(ctx);
    two.destroy(ctx);
    timed?;
    Ok((median(&mut ones), median(&mut twos)))
}

/// The smallest of `bytes`, 4 x `bytes`, 16 x `bytes`, ... (at most
/// `max_bytes`) whose copy takes at least `min_us` microseconds by the host
/// clock (`CopyKernel::measure_wall`, median of three): work that long
/// stands well above a submission's overhead. A GPU copies 16 MiB in a few
/// microseconds, about what timing it costs. The time is net of empty
/// submissions, so a copy lost in their noise can come out below zero.
pub fn bytes_taking(ctx: &GpuContext, bytes: u64, max_bytes: u64, min_us: f64) -> Result<u64, GpuError> {
    let mut bytes = bytes.max(1);
    while bytes < max_bytes {
        let kernel = CopyKernel::new(ctx, bytes)?;
        let wall = kernel.measure_wall(ctx, 3);
        kernel.destroy(ctx);
        if median(&mut wall?) >= min_us {
            break;
        }
        bytes = bytes.saturating_mul(4).min(max_bytes);
    }
    Ok(bytes)
}

/// Times a plain `vkCmdCopyBuffer` of `bytes` (one region, from a
/// host-visible buffer into a device-local one, the memory the staged
/// palette copy reads and writes) by the host, `runs` times, as
/// `CopyKernel::measure_wall` times the kernel: each run's submission and
/// wait minus the median of as many empty submissions interleaved with
/// them, in microseconds. Before each run the host rewrites the source, as
/// it rewrites the staging palettes before each frame (untimed). The
/// reference for the staged palette copy
/// (`ProfileScene::measure_staged_copy_wall`): issue 8 asks that it cost at
/// most 1.2 times this over the same bytes, so the ratio is what the staged
/// path adds (regions, barrier, the frame) to the copy itself. Empty when
/// `bytes` is 0.
pub fn measure_buffer_copy_wall(ctx: &GpuContext, bytes: u64, runs: usize) -> Result<Vec<f64>, GpuError> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let usage = vk::BufferUsageFlags::TRANSFER_SRC;
    let mut source = Buffer::new(ctx, "buffer copy source", bytes, usage, MemoryLocation::CpuToGpu)?;
    let destination = match Buffer::new(
        ctx,
        "buffer copy destination",
        bytes,
        vk::BufferUsageFlags::TRANSFER_DST,
        MemoryLocation::GpuOnly,
    ) {
        Ok(b) => b,
        Err(e) => {
            source.destroy(ctx);
            return Err(e);
        }
    };
    let region = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes };
    let mut empty = Vec::with_capacity(runs);
    let mut copies = Vec::with_capacity(runs);
    // One untimed run first (first touch of the buffers), as the kernel's.
    let timed = (0..=runs).try_for_each(|i| {
        let started = Instant::now();
        immediate::submit_and_wait(ctx, |_| ())?;
        let empty_us = started.elapsed().as_secs_f64() * 1e6;
        // The previous copy was waited for: the host may rewrite its source
        // (HOST_COHERENT; the submission below makes the writes visible).
        if let Some(mapped) = source.mapped_mut() {
            mapped.fill(i as u8);
        }
        let started = Instant::now();
        // SAFETY: both buffers are live until destroyed below, after every
        // submission was waited for; the region lies inside both. Each run
        // waits for the previous one, so the writes never race.
        immediate::submit_and_wait(ctx, |cmd| unsafe {
            ctx.device.cmd_copy_buffer(cmd, source.raw, destination.raw, &[region])
        })?;
        if i > 0 {
            empty.push(empty_us);
            copies.push(started.elapsed().as_secs_f64() * 1e6);
        }
        Ok::<_, GpuError>(())
    });
    source.destroy(ctx);
    destination.destroy(ctx);
    timed?;
    let overhead = median(&mut empty);
    Ok(copies.into_iter().map(|t| t - overhead).collect())
}

/// The median of `values` (sorted in place; 0 when empty).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => 0.5 * (values[n / 2 - 1] + values[n / 2]),
    }
}
