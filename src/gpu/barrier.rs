//! Pipeline barriers from named accesses: each [`Access`] is one way this
//! codebase touches memory (a compute shader's storage writes, a copy's
//! reads, a colour attachment's writes, presentation...) and maps to its
//! synchronization2 stage mask, access mask and, for images, layout. A
//! barrier is then said as "these accesses before -> these after"
//! ([`global`], [`buffer`], [`ImageBarrier`]) and recorded with [`record`]
//! (or the one-barrier shorthands), instead of stage and access literals
//! at every call site. Modelled on the vk-sync crate's `AccessType` and
//! kajiya's `barrier.rs`, restricted to the accesses vkskin has. It never
//! decides which barrier a pass needs: each pass says why, next to its call.
//!
//! The rules, one place for all passes:
//! - First scope: the stages of every previous access; its access scope is
//!   the previous *writes* only (reads have nothing to make available).
//! - Second scope: the stages of every next access; its access scope is
//!   every next access, but only when there is something to make visible
//!   (a previous write, or an image layout transition, which writes);
//!   otherwise the barrier is an execution dependency alone (write after
//!   read).
//! - An image goes from the layout of its previous accesses (UNDEFINED when
//!   its contents are discarded, or after [`Access::Nothing`]) to the layout
//!   of its next ones; no queue family ownership transfer.

use super::context::GpuContext;
use ash::vk;

type Stage = vk::PipelineStageFlags2;
type Mask = vk::AccessFlags2;
type Layout = vk::ImageLayout;

/// One kind of access to a buffer or image, as a barrier names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// No access: a new resource, or one whose earlier contents and uses do
    /// not matter (no stage, no access; an image's layout is UNDEFINED).
    Nothing,
    /// Storage-buffer writes by a compute shader.
    ComputeShaderWrite,
    /// Storage-buffer reads by a compute shader.
    ComputeShaderStorageRead,
    /// Uniform texel buffer reads by a compute shader (sampled reads).
    ComputeShaderUniformTexelRead,
    /// Storage-buffer reads by a vertex shader.
    VertexShaderStorageRead,
    /// Vertex buffer reads by vertex input.
    VertexBufferRead,
    /// Index buffer reads.
    IndexBufferRead,
    /// Reads by any transfer command (the whole transfer stage).
    TransferRead,
    /// Reads by a copy command (`vkCmdCopy*`): the copy stage alone. An
    /// image is read in TRANSFER_SRC_OPTIMAL.
    CopyRead,
    /// Writes by a copy command; an image is written in TRANSFER_DST_OPTIMAL.
    CopyWrite,
    /// Writes by a clear command (`vkCmdClear*Image`), in TRANSFER_DST_OPTIMAL.
    ClearWrite,
    /// Host reads of mapped memory after a fence wait.
    HostRead,
    /// Colour attachment writes (clears, draws, resolves), in
    /// COLOR_ATTACHMENT_OPTIMAL.
    ColorAttachmentWrite,
    /// Colour attachment reads and writes (loads, blending, draws), in
    /// COLOR_ATTACHMENT_OPTIMAL.
    ColorAttachmentReadWrite,
    /// Depth attachment writes by the fragment tests (clears, depth
    /// writes), in DEPTH_ATTACHMENT_OPTIMAL.
    DepthAttachmentWrite,
    /// Depth attachment reads by the fragment tests (loads, depth tests) of
    /// a rendering whose depth attachment is in DEPTH_ATTACHMENT_OPTIMAL.
    DepthAttachmentRead,
    /// Depth attachment reads and writes by the fragment tests, in
    /// DEPTH_ATTACHMENT_OPTIMAL.
    DepthAttachmentReadWrite,
    /// Sampled reads (textures, shadow maps) by a fragment shader, in
    /// SHADER_READ_ONLY_OPTIMAL.
    FragmentShaderSampledRead,
    /// A swapchain image handed over by the presentation engine: the acquire
    /// semaphore is waited at COLOR_ATTACHMENT_OUTPUT, so a barrier from
    /// this stage chains after the wait. No memory access (the semaphore
    /// covers the engine's reads); the image comes in PRESENT_SRC_KHR.
    SwapchainAcquire,
    /// Presentation: the image in PRESENT_SRC_KHR. No stage, no access: the
    /// semaphore the present waits on orders it and `vkQueuePresentKHR`
    /// makes available writes visible.
    Present,
}

/// What an [`Access`] is in synchronization2 terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessInfo {
    /// The pipeline stages that access.
    pub stage: vk::PipelineStageFlags2,
    /// The memory accesses.
    pub access: vk::AccessFlags2,
    /// The layout an image must be in for it; `None` for buffer-only accesses.
    pub layout: Option<vk::ImageLayout>,
}

const fn info(stage: Stage, access: Mask, layout: Option<Layout>) -> AccessInfo {
    AccessInfo { stage, access, layout }
}

/// Fragment tests, early and late: where depth attachments are accessed.
const FRAGMENT_TESTS: Stage =
    Stage::from_raw(Stage::EARLY_FRAGMENT_TESTS.as_raw() | Stage::LATE_FRAGMENT_TESTS.as_raw());

impl Access {
    /// Its stage, access and layout.
    pub const fn info(self) -> AccessInfo {
        match self {
            Access::Nothing => info(Stage::NONE, Mask::NONE, Some(Layout::UNDEFINED)),
            Access::ComputeShaderWrite => info(Stage::COMPUTE_SHADER, Mask::SHADER_STORAGE_WRITE, None),
            Access::ComputeShaderStorageRead => info(Stage::COMPUTE_SHADER, Mask::SHADER_STORAGE_READ, None),
            Access::ComputeShaderUniformTexelRead => {
                info(Stage::COMPUTE_SHADER, Mask::SHADER_SAMPLED_READ, None)
            }
            Access::VertexShaderStorageRead => info(Stage::VERTEX_SHADER, Mask::SHADER_STORAGE_READ, None),
            Access::VertexBufferRead => {
                info(Stage::VERTEX_ATTRIBUTE_INPUT, Mask::VERTEX_ATTRIBUTE_READ, None)
            }
            Access::IndexBufferRead => info(Stage::INDEX_INPUT, Mask::INDEX_READ, None),
            Access::TransferRead => {
                info(Stage::ALL_TRANSFER, Mask::TRANSFER_READ, Some(Layout::TRANSFER_SRC_OPTIMAL))
            }
            Access::CopyRead => info(Stage::COPY, Mask::TRANSFER_READ, Some(Layout::TRANSFER_SRC_OPTIMAL)),
            Access::CopyWrite => info(Stage::COPY, Mask::TRANSFER_WRITE, Some(Layout::TRANSFER_DST_OPTIMAL)),
            Access::ClearWrite => {
                info(Stage::CLEAR, Mask::TRANSFER_WRITE, Some(Layout::TRANSFER_DST_OPTIMAL))
            }
            Access::HostRead => info(Stage::HOST, Mask::HOST_READ, None),
            Access::ColorAttachmentWrite => info(
                Stage::COLOR_ATTACHMENT_OUTPUT,
                Mask::COLOR_ATTACHMENT_WRITE,
                Some(Layout::COLOR_ATTACHMENT_OPTIMAL),
            ),
            Access::ColorAttachmentReadWrite => info(
                Stage::COLOR_ATTACHMENT_OUTPUT,
                Mask::from_raw(Mask::COLOR_ATTACHMENT_READ.as_raw() | Mask::COLOR_ATTACHMENT_WRITE.as_raw()),
                Some(Layout::COLOR_ATTACHMENT_OPTIMAL),
            ),
            Access::DepthAttachmentWrite => info(
                FRAGMENT_TESTS,
                Mask::DEPTH_STENCIL_ATTACHMENT_WRITE,
                Some(Layout::DEPTH_ATTACHMENT_OPTIMAL),
            ),
            Access::DepthAttachmentRead => info(
                FRAGMENT_TESTS,
                Mask::DEPTH_STENCIL_ATTACHMENT_READ,
                Some(Layout::DEPTH_ATTACHMENT_OPTIMAL),
            ),
            Access::DepthAttachmentReadWrite => info(
                FRAGMENT_TESTS,
                Mask::from_raw(
                    Mask::DEPTH_STENCIL_ATTACHMENT_READ.as_raw()
                        | Mask::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
                ),
                Some(Layout::DEPTH_ATTACHMENT_OPTIMAL),
            ),
            Access::FragmentShaderSampledRead => info(
                Stage::FRAGMENT_SHADER,
                Mask::SHADER_SAMPLED_READ,
                Some(Layout::SHADER_READ_ONLY_OPTIMAL),
            ),
            Access::SwapchainAcquire => {
                info(Stage::COLOR_ATTACHMENT_OUTPUT, Mask::NONE, Some(Layout::PRESENT_SRC_KHR))
            }
            Access::Present => info(Stage::NONE, Mask::NONE, Some(Layout::PRESENT_SRC_KHR)),
        }
    }

    /// Whether it writes memory (its accesses then join a barrier's first
    /// access scope, to be made available).
    pub const fn is_write(self) -> bool {
        matches!(
            self,
            Access::ComputeShaderWrite
                | Access::CopyWrite
                | Access::ClearWrite
                | Access::ColorAttachmentWrite
                | Access::ColorAttachmentReadWrite
                | Access::DepthAttachmentWrite
                | Access::DepthAttachmentReadWrite
        )
    }
}

/// The four masks of a barrier from `previous` to `next`; `transition`
/// when it also changes an image's layout (see the module's rules).
fn masks(previous: &[Access], next: &[Access], transition: bool) -> (Stage, Mask, Stage, Mask) {
    let mut src = (Stage::NONE, Mask::NONE);
    for a in previous {
        let i = a.info();
        src.0 |= i.stage;
        if a.is_write() {
            src.1 |= i.access;
        }
    }
    let mut dst = (Stage::NONE, Mask::NONE);
    let make_visible = src.1 != Mask::NONE || transition;
    for a in next {
        let i = a.info();
        dst.0 |= i.stage;
        if make_visible {
            dst.1 |= i.access;
        }
    }
    (src.0, src.1, dst.0, dst.1)
}

/// A global memory barrier from `previous` to `next` accesses (of any
/// resource on the queue).
pub fn global(previous: &[Access], next: &[Access]) -> vk::MemoryBarrier2<'static> {
    let (src_stage, src_access, dst_stage, dst_access) = masks(previous, next, false);
    vk::MemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
}

/// A barrier on the whole of `buffer` from `previous` to `next` accesses.
pub fn buffer(buffer: vk::Buffer, previous: &[Access], next: &[Access]) -> vk::BufferMemoryBarrier2<'static> {
    let (src_stage, src_access, dst_stage, dst_access) = masks(previous, next, false);
    vk::BufferMemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
        .buffer(buffer)
        .offset(0)
        .size(vk::WHOLE_SIZE)
}

/// A barrier on part of an image from `previous` to `next` accesses, with
/// the layout transition between them.
#[derive(Debug, Clone, Copy)]
pub struct ImageBarrier<'a> {
    /// The image.
    pub image: vk::Image,
    /// The part of it.
    pub range: vk::ImageSubresourceRange,
    /// How it was accessed before; their layout is the old layout.
    pub previous: &'a [Access],
    /// How it is accessed after; their layout is the new layout.
    pub next: &'a [Access],
    /// Whether its contents may be thrown away (old layout UNDEFINED, so no
    /// need to keep them through the transition): it is cleared or
    /// overwritten next.
    pub discard_contents: bool,
}

impl<'a> ImageBarrier<'a> {
    /// A barrier keeping the contents of `range` of `image`.
    pub fn new(
        image: vk::Image,
        range: vk::ImageSubresourceRange,
        previous: &'a [Access],
        next: &'a [Access],
    ) -> Self {
        ImageBarrier { image, range, previous, next, discard_contents: false }
    }

    /// The same, throwing the contents away (old layout UNDEFINED).
    pub fn discarding_contents(self) -> Self {
        ImageBarrier { discard_contents: true, ..self }
    }

    /// The `VkImageMemoryBarrier2` (no queue family ownership transfer).
    pub fn to_vk(&self) -> vk::ImageMemoryBarrier2<'static> {
        let old_layout = if self.discard_contents { Layout::UNDEFINED } else { layout_of(self.previous) };
        let new_layout = layout_of(self.next);
        let (src_stage, src_access, dst_stage, dst_access) =
            masks(self.previous, self.next, old_layout != new_layout);
        vk::ImageMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .old_layout(old_layout)
            .new_layout(new_layout)
            .image(self.image)
            .subresource_range(self.range)
    }
}

/// The one layout `accesses` share (UNDEFINED for none, as for
/// [`Access::Nothing`]). Accesses of differing layouts, or buffer-only ones,
/// cannot describe an image's state: a programming error, caught in debug
/// builds (release falls back to GENERAL, valid for every access).
fn layout_of(accesses: &[Access]) -> Layout {
    let mut layouts = accesses.iter().map(|a| a.info().layout);
    let Some(first) = layouts.next() else {
        return Layout::UNDEFINED;
    };
    debug_assert!(
        first.is_some() && layouts.all(|l| l == first),
        "image accesses {accesses:?} do not share one image layout"
    );
    first.unwrap_or(Layout::GENERAL)
}

/// Records one `vkCmdPipelineBarrier2` holding `global`, `buffers` and
/// `images` barriers (built with [`global`], [`buffer`] and
/// [`ImageBarrier::to_vk`]). `cmd` must be recording, outside a rendering
/// when an image changes layout, and every buffer and image live.
pub fn record(
    ctx: &GpuContext,
    cmd: vk::CommandBuffer,
    global: &[vk::MemoryBarrier2],
    buffers: &[vk::BufferMemoryBarrier2],
    images: &[vk::ImageMemoryBarrier2],
) {
    let dependency = vk::DependencyInfo::default()
        .memory_barriers(global)
        .buffer_memory_barriers(buffers)
        .image_memory_barriers(images);
    // SAFETY: the caller's contract above; synchronization2 is enabled on
    // every device `GpuContext` creates.
    unsafe { ctx.device.cmd_pipeline_barrier2(cmd, &dependency) };
}

/// Records a global memory barrier from `previous` to `next` (see [`record`]).
pub fn record_global(ctx: &GpuContext, cmd: vk::CommandBuffer, previous: &[Access], next: &[Access]) {
    record(ctx, cmd, &[global(previous, next)], &[], &[]);
}

/// Records one image barrier (see [`record`]).
pub fn record_image(ctx: &GpuContext, cmd: vk::CommandBuffer, barrier: ImageBarrier) {
    record(ctx, cmd, &[], &[], &[barrier.to_vk()]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test per access: its stage, access mask and layout.
    macro_rules! maps_to {
        ($($test:ident: $access:ident => ($stage:expr, $mask:expr, $layout:expr);)*) => {$(
            #[test]
            fn $test() {
                let expected = AccessInfo { stage: $stage, access: $mask, layout: $layout };
                assert_eq!(Access::$access.info(), expected);
            }
        )*};
    }

    const FRAGMENT_TESTS_BITS: Stage = Stage::from_raw(0x100 | 0x200);

    maps_to! {
        nothing: Nothing => (Stage::NONE, Mask::NONE, Some(Layout::UNDEFINED));
        compute_shader_write: ComputeShaderWrite =>
            (Stage::COMPUTE_SHADER, Mask::SHADER_STORAGE_WRITE, None);
        compute_shader_storage_read: ComputeShaderStorageRead =>
            (Stage::COMPUTE_SHADER, Mask::SHADER_STORAGE_READ, None);
        compute_shader_uniform_texel_read: ComputeShaderUniformTexelRead =>
            (Stage::COMPUTE_SHADER, Mask::SHADER_SAMPLED_READ, None);
        vertex_shader_storage_read: VertexShaderStorageRead =>
            (Stage::VERTEX_SHADER, Mask::SHADER_STORAGE_READ, None);
        vertex_buffer_read: VertexBufferRead =>
            (Stage::VERTEX_ATTRIBUTE_INPUT, Mask::VERTEX_ATTRIBUTE_READ, None);
        index_buffer_read: IndexBufferRead => (Stage::INDEX_INPUT, Mask::INDEX_READ, None);
        transfer_read: TransferRead =>
            (Stage::TRANSFER, Mask::TRANSFER_READ, Some(Layout::TRANSFER_SRC_OPTIMAL));
        copy_read: CopyRead => (Stage::COPY, Mask::TRANSFER_READ, Some(Layout::TRANSFER_SRC_OPTIMAL));
        copy_write: CopyWrite => (Stage::COPY, Mask::TRANSFER_WRITE, Some(Layout::TRANSFER_DST_OPTIMAL));
        clear_write: ClearWrite => (Stage::CLEAR, Mask::TRANSFER_WRITE, Some(Layout::TRANSFER_DST_OPTIMAL));
        host_read: HostRead => (Stage::HOST, Mask::HOST_READ, None);
        color_attachment_write: ColorAttachmentWrite =>
            (Stage::COLOR_ATTACHMENT_OUTPUT, Mask::COLOR_ATTACHMENT_WRITE, Some(Layout::COLOR_ATTACHMENT_OPTIMAL));
        color_attachment_read_write: ColorAttachmentReadWrite => (
            Stage::COLOR_ATTACHMENT_OUTPUT,
            Mask::COLOR_ATTACHMENT_READ | Mask::COLOR_ATTACHMENT_WRITE,
            Some(Layout::COLOR_ATTACHMENT_OPTIMAL)
        );
        depth_attachment_write: DepthAttachmentWrite =>
            (FRAGMENT_TESTS_BITS, Mask::DEPTH_STENCIL_ATTACHMENT_WRITE, Some(Layout::DEPTH_ATTACHMENT_OPTIMAL));
        depth_attachment_read: DepthAttachmentRead =>
            (FRAGMENT_TESTS_BITS, Mask::DEPTH_STENCIL_ATTACHMENT_READ, Some(Layout::DEPTH_ATTACHMENT_OPTIMAL));
        depth_attachment_read_write: DepthAttachmentReadWrite => (
            Stage::EARLY_FRAGMENT_TESTS | Stage::LATE_FRAGMENT_TESTS,
            Mask::DEPTH_STENCIL_ATTACHMENT_READ | Mask::DEPTH_STENCIL_ATTACHMENT_WRITE,
            Some(Layout::DEPTH_ATTACHMENT_OPTIMAL)
        );
        fragment_shader_sampled_read: FragmentShaderSampledRead =>
            (Stage::FRAGMENT_SHADER, Mask::SHADER_SAMPLED_READ, Some(Layout::SHADER_READ_ONLY_OPTIMAL));
        swapchain_acquire: SwapchainAcquire =>
            (Stage::COLOR_ATTACHMENT_OUTPUT, Mask::NONE, Some(Layout::PRESENT_SRC_KHR));
        present: Present => (Stage::NONE, Mask::NONE, Some(Layout::PRESENT_SRC_KHR));
    }

    #[test]
    fn fragment_tests_are_both_test_stages() {
        assert_eq!(FRAGMENT_TESTS, Stage::EARLY_FRAGMENT_TESTS | Stage::LATE_FRAGMENT_TESTS);
        assert_eq!(FRAGMENT_TESTS_BITS, FRAGMENT_TESTS);
    }

    #[test]
    fn writers_are_the_accesses_with_write_bits() {
        let all = [
            Access::Nothing,
            Access::ComputeShaderWrite,
            Access::ComputeShaderStorageRead,
            Access::ComputeShaderUniformTexelRead,
            Access::VertexShaderStorageRead,
            Access::VertexBufferRead,
            Access::IndexBufferRead,
            Access::TransferRead,
            Access::CopyRead,
            Access::CopyWrite,
            Access::ClearWrite,
            Access::HostRead,
            Access::ColorAttachmentWrite,
            Access::ColorAttachmentReadWrite,
            Access::DepthAttachmentWrite,
            Access::DepthAttachmentRead,
            Access::DepthAttachmentReadWrite,
            Access::FragmentShaderSampledRead,
            Access::SwapchainAcquire,
            Access::Present,
        ];
        let writes = Mask::SHADER_STORAGE_WRITE
            | Mask::TRANSFER_WRITE
            | Mask::COLOR_ATTACHMENT_WRITE
            | Mask::DEPTH_STENCIL_ATTACHMENT_WRITE;
        for a in all {
            assert_eq!(a.is_write(), a.info().access.intersects(writes), "{a:?}");
        }
    }

    #[test]
    fn reads_make_nothing_available_and_so_nothing_visible() {
        // Write after read: an execution dependency alone.
        let b = global(&[Access::VertexBufferRead, Access::CopyRead], &[Access::ComputeShaderWrite]);
        assert_eq!(b.src_stage_mask, Stage::VERTEX_ATTRIBUTE_INPUT | Stage::COPY);
        assert_eq!((b.src_access_mask, b.dst_access_mask), (Mask::NONE, Mask::NONE));
        assert_eq!(b.dst_stage_mask, Stage::COMPUTE_SHADER);
        // Only the writes of the previous accesses are made available.
        let b = global(&[Access::ColorAttachmentWrite, Access::CopyRead], &[Access::HostRead]);
        assert_eq!(b.src_access_mask, Mask::COLOR_ATTACHMENT_WRITE);
        assert_eq!(b.dst_access_mask, Mask::HOST_READ);
    }

    #[test]
    fn a_layout_transition_makes_the_next_accesses_visible() {
        let range = vk::ImageSubresourceRange::default();
        let after_read =
            ImageBarrier::new(vk::Image::null(), range, &[Access::CopyRead], &[Access::ColorAttachmentWrite]);
        let b = after_read.to_vk();
        assert_eq!(b.src_access_mask, Mask::NONE);
        assert_eq!(b.dst_access_mask, Mask::COLOR_ATTACHMENT_WRITE);
        assert_eq!(
            (b.old_layout, b.new_layout),
            (Layout::TRANSFER_SRC_OPTIMAL, Layout::COLOR_ATTACHMENT_OPTIMAL)
        );
        let b = after_read.discarding_contents().to_vk();
        assert_eq!((b.old_layout, b.new_layout), (Layout::UNDEFINED, Layout::COLOR_ATTACHMENT_OPTIMAL));
        // No transition, no previous write: execution only.
        let b = ImageBarrier::new(
            vk::Image::null(),
            range,
            &[Access::FragmentShaderSampledRead],
            &[Access::FragmentShaderSampledRead],
        )
        .to_vk();
        assert_eq!((b.src_access_mask, b.dst_access_mask), (Mask::NONE, Mask::NONE));
        // Nothing before: no stage, UNDEFINED; no ownership transfer.
        let b = ImageBarrier::new(vk::Image::null(), range, &[Access::Nothing], &[Access::CopyWrite]).to_vk();
        assert_eq!((b.src_stage_mask, b.old_layout), (Stage::NONE, Layout::UNDEFINED));
        assert_eq!(b.src_queue_family_index, b.dst_queue_family_index);
    }

    #[test]
    fn buffer_barriers_cover_the_whole_buffer() {
        let b = buffer(vk::Buffer::null(), &[Access::CopyWrite], &[Access::HostRead]);
        assert_eq!((b.offset, b.size), (0, vk::WHOLE_SIZE));
        assert_eq!(b.src_queue_family_index, b.dst_queue_family_index);
    }

    // The barriers the passes record (as of the move to this module), with
    // the stage, access and layout bits each had as a hand-written literal:
    // the access pairs must keep giving exactly those.

    /// (src stage, src access, dst stage, dst access).
    type Expected = (Stage, Mask, Stage, Mask);
    const FRAG_TESTS: Stage = FRAGMENT_TESTS_BITS;

    #[test]
    fn the_passes_global_barriers_keep_their_bits() {
        use Access::*;
        let frag_tests = FRAG_TESTS;
        let skinning_reads =
            [ComputeShaderUniformTexelRead, ComputeShaderStorageRead, VertexShaderStorageRead];
        let shader_reads = Mask::SHADER_STORAGE_READ | Mask::SHADER_SAMPLED_READ;
        let globals: [(&str, &[Access], &[Access], Expected); 6] = [
            (
                "skin_pass dispatch",
                &[ComputeShaderWrite],
                &[VertexBufferRead, VertexShaderStorageRead, TransferRead],
                (
                    Stage::COMPUTE_SHADER,
                    Mask::SHADER_STORAGE_WRITE,
                    Stage::VERTEX_ATTRIBUTE_INPUT | Stage::VERTEX_SHADER | Stage::TRANSFER,
                    Mask::VERTEX_ATTRIBUTE_READ | Mask::SHADER_STORAGE_READ | Mask::TRANSFER_READ,
                ),
            ),
            (
                "skin_pass concatenated streams",
                &[CopyWrite],
                &skinning_reads,
                (
                    Stage::COPY,
                    Mask::TRANSFER_WRITE,
                    Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER,
                    shader_reads,
                ),
            ),
            (
                "skin_pass palette copies",
                &[CopyWrite],
                &skinning_reads,
                (
                    Stage::COPY,
                    Mask::TRANSFER_WRITE,
                    Stage::COMPUTE_SHADER | Stage::VERTEX_SHADER,
                    shader_reads,
                ),
            ),
            (
                "gpu_model upload",
                &[CopyWrite],
                &[
                    ComputeShaderStorageRead,
                    ComputeShaderUniformTexelRead,
                    VertexShaderStorageRead,
                    VertexBufferRead,
                    IndexBufferRead,
                    TransferRead,
                ],
                (
                    Stage::COPY,
                    Mask::TRANSFER_WRITE,
                    Stage::COMPUTE_SHADER
                        | Stage::VERTEX_SHADER
                        | Stage::VERTEX_ATTRIBUTE_INPUT
                        | Stage::INDEX_INPUT
                        | Stage::TRANSFER,
                    shader_reads | Mask::VERTEX_ATTRIBUTE_READ | Mask::INDEX_READ | Mask::TRANSFER_READ,
                ),
            ),
            (
                "readback skinned vertices",
                &[CopyWrite],
                &[HostRead],
                (Stage::COPY, Mask::TRANSFER_WRITE, Stage::HOST, Mask::HOST_READ),
            ),
            (
                "target after depth prepass",
                &[DepthAttachmentWrite],
                &[DepthAttachmentRead],
                (
                    frag_tests,
                    Mask::DEPTH_STENCIL_ATTACHMENT_WRITE,
                    frag_tests,
                    Mask::DEPTH_STENCIL_ATTACHMENT_READ,
                ),
            ),
        ];
        for (site, previous, next, expected) in globals {
            let b = global(previous, next);
            assert_eq!(
                (b.src_stage_mask, b.src_access_mask, b.dst_stage_mask, b.dst_access_mask),
                expected,
                "{site}"
            );
        }
    }

    #[test]
    fn the_passes_buffer_barriers_keep_their_bits() {
        use Access::*;
        let copy_to_copy = (Stage::COPY, Mask::TRANSFER_WRITE, Stage::COPY, Mask::TRANSFER_WRITE);
        let copy_to_host = (Stage::COPY, Mask::TRANSFER_WRITE, Stage::HOST, Mask::HOST_READ);
        for (site, previous, next, expected) in [
            ("readback buffer before the copy", CopyWrite, CopyWrite, copy_to_copy),
            ("readback buffer to the host", CopyWrite, HostRead, copy_to_host),
        ] {
            let b = buffer(vk::Buffer::null(), &[previous], &[next]);
            assert_eq!(
                (b.src_stage_mask, b.src_access_mask, b.dst_stage_mask, b.dst_access_mask),
                expected,
                "{site}"
            );
        }
    }

    /// Site, previous, next, discard, masks, (old, new) layouts.
    type ImageCase = (&'static str, &'static [Access], &'static [Access], bool, Expected, (Layout, Layout));

    /// Long: a table of the 15 image barriers, one entry each.
    #[test]
    fn the_passes_image_barriers_keep_their_bits() {
        use Access::*;
        use Layout as L;
        let frag_tests = FRAG_TESTS;
        let color_rw = Mask::COLOR_ATTACHMENT_WRITE | Mask::COLOR_ATTACHMENT_READ;
        let depth_rw = Mask::DEPTH_STENCIL_ATTACHMENT_WRITE | Mask::DEPTH_STENCIL_ATTACHMENT_READ;
        let images: [ImageCase; 15] = [
            (
                "render target colour",
                &[ColorAttachmentWrite, CopyRead],
                &[ColorAttachmentReadWrite],
                true,
                (
                    Stage::COLOR_ATTACHMENT_OUTPUT | Stage::COPY,
                    Mask::COLOR_ATTACHMENT_WRITE,
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    color_rw,
                ),
                (L::UNDEFINED, L::COLOR_ATTACHMENT_OPTIMAL),
            ),
            (
                "render target resolve",
                &[CopyRead],
                &[ColorAttachmentWrite],
                true,
                (Stage::COPY, Mask::NONE, Stage::COLOR_ATTACHMENT_OUTPUT, Mask::COLOR_ATTACHMENT_WRITE),
                (L::UNDEFINED, L::COLOR_ATTACHMENT_OPTIMAL),
            ),
            (
                "depth attachment",
                &[DepthAttachmentWrite],
                &[DepthAttachmentReadWrite],
                true,
                (frag_tests, Mask::DEPTH_STENCIL_ATTACHMENT_WRITE, frag_tests, depth_rw),
                (L::UNDEFINED, L::DEPTH_ATTACHMENT_OPTIMAL),
            ),
            (
                "screen swapchain image",
                &[SwapchainAcquire],
                &[ColorAttachmentReadWrite],
                true,
                (Stage::COLOR_ATTACHMENT_OUTPUT, Mask::NONE, Stage::COLOR_ATTACHMENT_OUTPUT, color_rw),
                (L::UNDEFINED, L::COLOR_ATTACHMENT_OPTIMAL),
            ),
            (
                "screen msaa colour",
                &[ColorAttachmentWrite],
                &[ColorAttachmentReadWrite],
                true,
                (
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    Mask::COLOR_ATTACHMENT_WRITE,
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    color_rw,
                ),
                (L::UNDEFINED, L::COLOR_ATTACHMENT_OPTIMAL),
            ),
            (
                "colour readback: to transfer source",
                &[ColorAttachmentWrite],
                &[CopyRead],
                false,
                (
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    Mask::COLOR_ATTACHMENT_WRITE,
                    Stage::COPY,
                    Mask::TRANSFER_READ,
                ),
                (L::COLOR_ATTACHMENT_OPTIMAL, L::TRANSFER_SRC_OPTIMAL),
            ),
            (
                "colour readback: to present",
                &[CopyRead],
                &[Present],
                false,
                (Stage::COPY, Mask::NONE, Stage::NONE, Mask::NONE),
                (L::TRANSFER_SRC_OPTIMAL, L::PRESENT_SRC_KHR),
            ),
            (
                "window scene to overlay",
                &[ColorAttachmentWrite],
                &[ColorAttachmentReadWrite],
                false,
                (
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    Mask::COLOR_ATTACHMENT_WRITE,
                    Stage::COLOR_ATTACHMENT_OUTPUT,
                    color_rw,
                ),
                (L::COLOR_ATTACHMENT_OPTIMAL, L::COLOR_ATTACHMENT_OPTIMAL),
            ),
            (
                "window to present",
                &[ColorAttachmentWrite],
                &[Present],
                false,
                (Stage::COLOR_ATTACHMENT_OUTPUT, Mask::COLOR_ATTACHMENT_WRITE, Stage::NONE, Mask::NONE),
                (L::COLOR_ATTACHMENT_OPTIMAL, L::PRESENT_SRC_KHR),
            ),
            (
                "shadow stand-in: to clear",
                &[Nothing],
                &[ClearWrite],
                false,
                (Stage::NONE, Mask::NONE, Stage::CLEAR, Mask::TRANSFER_WRITE),
                (L::UNDEFINED, L::TRANSFER_DST_OPTIMAL),
            ),
            (
                "shadow stand-in: to sampled",
                &[ClearWrite],
                &[FragmentShaderSampledRead],
                false,
                (Stage::CLEAR, Mask::TRANSFER_WRITE, Stage::FRAGMENT_SHADER, Mask::SHADER_SAMPLED_READ),
                (L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL),
            ),
            (
                "shadow maps: begin",
                &[FragmentShaderSampledRead],
                &[DepthAttachmentReadWrite],
                true,
                (Stage::FRAGMENT_SHADER, Mask::NONE, frag_tests, depth_rw),
                (L::UNDEFINED, L::DEPTH_ATTACHMENT_OPTIMAL),
            ),
            (
                "shadow maps: end",
                &[DepthAttachmentWrite],
                &[FragmentShaderSampledRead],
                false,
                (
                    frag_tests,
                    Mask::DEPTH_STENCIL_ATTACHMENT_WRITE,
                    Stage::FRAGMENT_SHADER,
                    Mask::SHADER_SAMPLED_READ,
                ),
                (L::DEPTH_ATTACHMENT_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL),
            ),
            (
                "textures: to copy destination",
                &[Nothing],
                &[CopyWrite],
                false,
                (Stage::NONE, Mask::NONE, Stage::COPY, Mask::TRANSFER_WRITE),
                (L::UNDEFINED, L::TRANSFER_DST_OPTIMAL),
            ),
            (
                "textures: to sampled",
                &[CopyWrite],
                &[FragmentShaderSampledRead],
                false,
                (Stage::COPY, Mask::TRANSFER_WRITE, Stage::FRAGMENT_SHADER, Mask::SHADER_SAMPLED_READ),
                (L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL),
            ),
        ];
        let range = vk::ImageSubresourceRange::default();
        for (site, previous, next, discard, expected, layouts) in images {
            let mut barrier = ImageBarrier::new(vk::Image::null(), range, previous, next);
            if discard {
                barrier = barrier.discarding_contents();
            }
            let b = barrier.to_vk();
            assert_eq!(
                (b.src_stage_mask, b.src_access_mask, b.dst_stage_mask, b.dst_access_mask),
                expected,
                "{site}"
            );
            assert_eq!((b.old_layout, b.new_layout), layouts, "{site}");
            assert_eq!((b.src_queue_family_index, b.dst_queue_family_index), (0, 0), "{site}");
        }
    }
}
