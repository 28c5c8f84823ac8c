//! What the skinning shaders (skin.comp and mesh_skinned.vert) are told of
//! the influence blend: their specialization constants. Both shaders read
//! the same constants, so the compute and the vertex path always agree on
//! the palette's contents. It holds no GPU object.

use super::frame_settings::{InfluenceBlend, SkinningMethod};
use ash::vk;

/// Specialization constant values, in the layout of `SPECIALIZATION_ENTRIES`.
pub type SkinningConstants = [u8; 8];

/// `DUAL_QUATERNION` (constant_id 1) and `PALETTE_DUAL_QUATERNIONS`
/// (constant_id 2), two 32-bit VkBool32s.
pub(crate) const SPECIALIZATION_ENTRIES: [vk::SpecializationMapEntry; 2] = [
    vk::SpecializationMapEntry { constant_id: 1, offset: 0, size: 4 },
    vk::SpecializationMapEntry { constant_id: 2, offset: 4, size: 4 },
];

/// The shaders' constant values for `blend`, for [`specialization`].
pub fn constants(blend: InfluenceBlend) -> SkinningConstants {
    let dual_quaternion = vk::Bool32::from(blend.method == SkinningMethod::DualQuaternion);
    let palette = vk::Bool32::from(blend.palette_holds_dual_quaternions());
    let mut values = [0u8; 8];
    values[..4].copy_from_slice(&dual_quaternion.to_ne_bytes());
    values[4..].copy_from_slice(&palette.to_ne_bytes());
    values
}

/// Specialization info setting skin.comp's and mesh_skinned.vert's
/// constants to `values` (from [`constants`]).
pub fn specialization(values: &SkinningConstants) -> vk::SpecializationInfo<'_> {
    vk::SpecializationInfo::default().map_entries(&SPECIALIZATION_ENTRIES).data(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::frame_settings::DqsSplit;

    #[test]
    fn constants_are_two_bools() {
        let c =
            constants(InfluenceBlend { method: SkinningMethod::DualQuaternion, dqs_split: DqsSplit::Cpu });
        assert_eq!(c, [1u32.to_ne_bytes(), 1u32.to_ne_bytes()].concat().as_slice());
        assert_eq!(constants(InfluenceBlend::from(SkinningMethod::DualQuaternion))[4..], [0; 4]);
        assert_eq!(constants(InfluenceBlend::default()), [0; 8]);
    }
}
