//! How skin.comp reads its set 0: the texel-or-storage choice per device
//! ([`PaletteReads`]), the descriptor type and texel format of each binding,
//! and the texel views the texel bindings need (made, replaced and retired
//! with their buffers). It never lays anything out, owns no buffer and
//! records no command.

use crate::gpu::error::VkResultExt;
use crate::gpu::frame::Retired;
use crate::gpu::{Buffer, FrameRing, GpuContext, GpuError};
use ash::vk;

/// The texel format skin.comp reads the palette in: one RGBA32F texel per
/// row of a `BoneMatrix`, four per matrix.
pub(super) const PALETTE_TEXEL_FORMAT: vk::Format = vk::Format::R32G32B32A32_SFLOAT;

/// Palette texels that hold any scene the other buffers allow in practice
/// (33.5 million matrices: a million characters of 33 joints).
pub const AMPLE_PALETTE_TEXELS: u64 = 1 << 27;

/// How skin.comp reads the palette (binding 5) and, with it, the sources,
/// influences, records and the characters to skin (bindings 0, 1, 6, 8). The
/// bytes are the same either way (DESIGN.md's `BoneMatrix`, layout.rs);
/// only the descriptors differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaletteReads {
    /// Uniform texel buffers (`TEXEL_FORMATS`: RGBA32F for the palette, one
    /// texel per matrix row; skin.comp): llvmpipe gathers texels, where
    /// every storage-buffer load is a loop over its SIMD lanes. Limited to
    /// `maxTexelBufferElements / 4` matrices (and `/ 3` source vertices).
    Texels,
    /// By pointer, as the vertex path reads it (skin_storage.comp; the
    /// palette's device address in the push constants), and the other
    /// bindings as storage buffers: as many matrices as one buffer holds.
    Storage,
}

impl PaletteReads {
    /// Texels where the device's texel limit holds every palette its
    /// storage-buffer range can, or at least [`AMPLE_PALETTE_TEXELS`]
    /// (lavapipe, NVIDIA, AMD and Intel report 2^27 or more); else storage.
    /// Vulkan only guarantees 65,536 texels (16,384 matrices), which would
    /// cap scenes far below what the storage path allows.
    pub fn for_device(limits: &vk::PhysicalDeviceLimits) -> Self {
        let storage_rows = u64::from(limits.max_storage_buffer_range) / 16;
        if u64::from(limits.max_texel_buffer_elements) >= storage_rows.min(AMPLE_PALETTE_TEXELS) {
            PaletteReads::Texels
        } else {
            PaletteReads::Storage
        }
    }

    /// The shader reading this way.
    pub(super) fn spirv(self) -> (&'static str, &'static [u8]) {
        match self {
            PaletteReads::Texels => ("skin.comp", crate::spirv!("skin.comp")),
            PaletteReads::Storage => ("skin_storage.comp", crate::spirv!("skin_storage.comp")),
        }
    }

    /// Its set 0: storage buffers, or uniform texel buffers where skin.comp
    /// reads them so (`TEXEL_BINDINGS`); `None` where a binding is not in
    /// the set: the palette (binding 5) when read by pointer.
    pub(super) fn bindings(self) -> [Option<vk::DescriptorType>; 9] {
        let mut types = [Some(vk::DescriptorType::STORAGE_BUFFER); 9];
        match self {
            PaletteReads::Texels => {
                for binding in TEXEL_BINDINGS {
                    types[binding] = Some(vk::DescriptorType::UNIFORM_TEXEL_BUFFER);
                }
            }
            PaletteReads::Storage => types[PALETTE_BINDING] = None,
        }
        types
    }
}

/// The palette's place in set 0 (when read as texels).
pub(super) const PALETTE_BINDING: usize = 5;
/// The output's binding in set 0 (one window of it per dispatch).
pub(super) const OUTPUT_BINDING: usize = 7;

/// The bindings of set 0 that skin.comp reads through uniform texel
/// buffers: sources, influences, palette, records, characters to skin. The
/// morph bindings stay storage buffers (not measured as texels): scenes
/// without morph targets skip their code (`MORPH_TARGETS`), and in scenes
/// with them llvmpipe would run texel fetches, which ignore the lane mask,
/// for the morph-free vertices too.
pub(super) const TEXEL_BINDINGS: [usize; 5] = [0, 1, 5, 6, 8];

/// The texel format of each binding of skin.comp's set 0 that is a texel
/// buffer (`TEXEL_BINDINGS`; shaders/common.glsl, skin_main.glsl): the bytes
/// of the storage layout as whole texels. Every one of them is a format
/// Vulkan requires uniform texel buffer support for.
pub(super) const TEXEL_FORMATS: [vk::Format; 9] = [
    vk::Format::R32G32_UINT,       // sources: three per PackedVertex (24 bytes)
    vk::Format::R32G32B32A32_UINT, // influences: one per PackedInfluence
    vk::Format::UNDEFINED,         // morph ranges: storage
    vk::Format::UNDEFINED,         // morph entries: storage
    vk::Format::UNDEFINED,         // morph weights: storage
    PALETTE_TEXEL_FORMAT,          // palette: four per BoneMatrix
    vk::Format::R32G32B32A32_UINT, // records: two per SkinRecord
    vk::Format::UNDEFINED,         // output: storage
    vk::Format::R32_UINT,          // characters to skin
];

/// Bytes of one texel of `format` (one of `TEXEL_FORMATS`).
pub(super) fn texel_bytes(format: vk::Format) -> u64 {
    match format {
        vk::Format::R32_UINT => 4,
        vk::Format::R32G32_UINT => 8,
        _ => 16,
    }
}

/// Whether `ty` is the texel-buffer descriptor type (needs a view).
pub(super) fn is_texel(ty: Option<vk::DescriptorType>) -> bool {
    ty == Some(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
}

/// A view of `buffer`'s whole palette as RGBA32F texels (at most
/// `maxTexelBufferElements` of them; `check_ranges` keeps the palette within).
pub(super) fn palette_view(ctx: &GpuContext, buffer: &Buffer) -> Result<vk::BufferView, GpuError> {
    texel_view(ctx, buffer.raw, buffer.size, PALETTE_TEXEL_FORMAT)
}

/// A view of the first `size` bytes of `buffer` as `format` texels (whole
/// texels, at most `maxTexelBufferElements`; `check_ranges` keeps what the
/// shader reads within).
pub(super) fn texel_view(
    ctx: &GpuContext,
    buffer: vk::Buffer,
    size: u64,
    format: vk::Format,
) -> Result<vk::BufferView, GpuError> {
    let bytes = texel_bytes(format);
    let texels = (size / bytes).min(u64::from(ctx.properties.limits.max_texel_buffer_elements)).max(1);
    let info =
        vk::BufferViewCreateInfo::default().buffer(buffer).format(format).offset(0).range(texels * bytes);
    // SAFETY: a live buffer with UNIFORM_TEXEL_BUFFER usage; the range lies inside it.
    unsafe { ctx.device.create_buffer_view(&info, None) }.call("vkCreateBufferView")
}

/// Replaces `view` with a view of `buffer` (just regrown) as `format`
/// texels (see `swap_view`).
pub(super) fn replace_view(
    ctx: &GpuContext,
    ring: &mut FrameRing,
    view: &mut vk::BufferView,
    buffer: &Buffer,
    format: vk::Format,
) -> Result<(), GpuError> {
    swap_view(ring, view, texel_view(ctx, buffer.raw, buffer.size, format))
}

/// Puts `made` in `view`'s place, retiring the old view through `ring`: a
/// submitted frame may still use it. When the new view could not be made,
/// `view` is left null (`dispatch` then refuses) and the error returned.
pub(super) fn swap_view(
    ring: &mut FrameRing,
    view: &mut vk::BufferView,
    made: Result<vk::BufferView, GpuError>,
) -> Result<(), GpuError> {
    let old = std::mem::replace(view, *made.as_ref().unwrap_or(&vk::BufferView::null()));
    ring.retire(Retired::Other(Box::new(move |ctx: &GpuContext| {
        // SAFETY: retired views are destroyed after the frames that used
        // them; a null view is ignored.
        unsafe { ctx.device.destroy_buffer_view(old, None) }
    })));
    made.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::layout::{BoneMatrix, SkinRecord};
    use crate::render::skin_pass::plan::{INFLUENCE_BYTES, SOURCE_BYTES};

    fn limits(texels: u32, storage_range: u32) -> vk::PhysicalDeviceLimits {
        vk::PhysicalDeviceLimits {
            max_texel_buffer_elements: texels,
            max_storage_buffer_range: storage_range,
            ..Default::default()
        }
    }

    #[test]
    fn texel_formats_tile_the_shader_layouts() {
        // shaders/common.glsl and skin_main.glsl fetch these many texels per
        // element: a source three, an influence one, a matrix four (rows),
        // a record two, a character to skin one.
        let per_element = [
            (0, SOURCE_BYTES, 3),
            (1, INFLUENCE_BYTES, 1),
            (5, std::mem::size_of::<BoneMatrix>() as u64, 4),
            (6, std::mem::size_of::<SkinRecord>() as u64, 2),
            (8, 4, 1),
        ];
        assert_eq!(per_element.map(|(b, _, _)| b), TEXEL_BINDINGS);
        for (binding, bytes, texels) in per_element {
            assert_eq!(texel_bytes(TEXEL_FORMATS[binding]) * texels, bytes, "binding {binding}");
        }
        let types = PaletteReads::Texels.bindings();
        for (binding, ty) in types.iter().enumerate() {
            assert_eq!(is_texel(*ty), TEXEL_BINDINGS.contains(&binding), "binding {binding}");
            assert_eq!(TEXEL_FORMATS[binding] != vk::Format::UNDEFINED, is_texel(*ty), "binding {binding}");
        }
        let storage = PaletteReads::Storage.bindings();
        for (binding, ty) in storage.iter().enumerate() {
            let bound = binding != PALETTE_BINDING;
            assert_eq!(*ty, bound.then_some(vk::DescriptorType::STORAGE_BUFFER), "binding {binding}");
        }
        assert_eq!(types[OUTPUT_BINDING], Some(vk::DescriptorType::STORAGE_BUFFER));
    }

    #[test]
    fn texels_only_where_the_texel_limit_caps_no_real_scene() {
        // lavapipe, NVIDIA, Intel: 2^27 texels, 128 MiB to 4 GiB of storage range.
        assert_eq!(PaletteReads::for_device(&limits(1 << 27, 128 << 20)), PaletteReads::Texels);
        assert_eq!(PaletteReads::for_device(&limits(u32::MAX, u32::MAX)), PaletteReads::Texels);
        assert_eq!(PaletteReads::for_device(&limits(1 << 27, u32::MAX)), PaletteReads::Texels);
        // Vulkan's minimum texel limit against a 128 MiB range: storage.
        assert_eq!(PaletteReads::for_device(&limits(65_536, 128 << 20)), PaletteReads::Storage);
        assert_eq!(PaletteReads::for_device(&limits((1 << 27) - 1, u32::MAX)), PaletteReads::Storage);
    }
}
