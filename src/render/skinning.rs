//! What the skinning shaders (skin.comp and mesh_skinned.vert) compute and
//! what the palette holds for them: the blend method and, for dual-quaternion
//! skinning, where each skinning matrix is split into a dual quaternion and a
//! scale part. Both shaders read the same constants, so the compute and the
//! vertex path always agree on the palette's contents.

use crate::anim::SkinningMethod;
use ash::vk;

/// Where dual-quaternion skinning splits each skinning matrix
/// (`anim::dual_quat::SkinDualQuat`). Linear blend skinning ignores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DqsSplit {
    /// The palette holds matrices (DESIGN.md's `BoneMatrix`); the shader
    /// splits each influence's matrix (a polar decomposition) for every
    /// vertex it skins.
    #[default]
    Shader,
    /// The CPU splits each skin joint once per uploaded palette and writes
    /// `layout::PaletteDualQuat` entries (same 64-byte stride) instead of
    /// matrices; the shader only blends them. Unskinned nodes' entries stay
    /// matrices.
    Cpu,
}

impl DqsSplit {
    /// Both places, the default first.
    pub const ALL: [DqsSplit; 2] = [DqsSplit::Shader, DqsSplit::Cpu];

    /// Short name: `shader` or `cpu`.
    pub fn name(self) -> &'static str {
        match self {
            DqsSplit::Shader => "shader",
            DqsSplit::Cpu => "cpu",
        }
    }

    /// The split named `name` (see [`name`](Self::name)).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The skinning shaders' configuration: their specialization constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ShaderSkinning {
    /// How influences are blended.
    pub method: SkinningMethod,
    /// Where DQS splits the matrices (only used with `DualQuaternion`).
    pub dqs_split: DqsSplit,
}

impl From<SkinningMethod> for ShaderSkinning {
    /// `method`, dual quaternions split in the shader.
    fn from(method: SkinningMethod) -> Self {
        ShaderSkinning { method, dqs_split: DqsSplit::Shader }
    }
}

/// Specialization constant values, in the layout of `SPECIALIZATION_ENTRIES`.
pub type SkinningConstants = [u8; 8];

/// `DUAL_QUATERNION` (constant_id 1) and `PALETTE_DUAL_QUATERNIONS`
/// (constant_id 2), two 32-bit VkBool32s.
pub(crate) const SPECIALIZATION_ENTRIES: [vk::SpecializationMapEntry; 2] = [
    vk::SpecializationMapEntry { constant_id: 1, offset: 0, size: 4 },
    vk::SpecializationMapEntry { constant_id: 2, offset: 4, size: 4 },
];

impl ShaderSkinning {
    /// Whether skin joints' palette entries are `PaletteDualQuat`s rather
    /// than matrices.
    pub fn palette_holds_dual_quaternions(self) -> bool {
        self.method == SkinningMethod::DualQuaternion && self.dqs_split == DqsSplit::Cpu
    }

    /// `linear`, `dqs` or `dqs-cpu` (pipeline names, messages).
    pub fn name(self) -> &'static str {
        if self.palette_holds_dual_quaternions() { "dqs-cpu" } else { self.method.name() }
    }

    /// The shaders' constant values, for [`specialization`].
    pub fn constants(self) -> SkinningConstants {
        let dual_quaternion = vk::Bool32::from(self.method == SkinningMethod::DualQuaternion);
        let palette = vk::Bool32::from(self.palette_holds_dual_quaternions());
        let mut values = [0u8; 8];
        values[..4].copy_from_slice(&dual_quaternion.to_ne_bytes());
        values[4..].copy_from_slice(&palette.to_ne_bytes());
        values
    }
}

/// Specialization info setting skin.comp's and mesh_skinned.vert's
/// constants to `values` (from [`ShaderSkinning::constants`]).
pub fn specialization(values: &SkinningConstants) -> vk::SpecializationInfo<'_> {
    vk::SpecializationInfo::default().map_entries(&SPECIALIZATION_ENTRIES).data(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dqs_with_the_cpu_split_changes_the_palette() {
        let holds = |method, dqs_split| ShaderSkinning { method, dqs_split }.palette_holds_dual_quaternions();
        assert!(!holds(SkinningMethod::Linear, DqsSplit::Shader));
        assert!(!holds(SkinningMethod::Linear, DqsSplit::Cpu));
        assert!(!holds(SkinningMethod::DualQuaternion, DqsSplit::Shader));
        assert!(holds(SkinningMethod::DualQuaternion, DqsSplit::Cpu));
    }

    #[test]
    fn constants_are_two_bools() {
        let c =
            ShaderSkinning { method: SkinningMethod::DualQuaternion, dqs_split: DqsSplit::Cpu }.constants();
        assert_eq!(c, [1u32.to_ne_bytes(), 1u32.to_ne_bytes()].concat().as_slice());
        assert_eq!(ShaderSkinning::from(SkinningMethod::DualQuaternion).constants()[4..], [0; 4]);
        assert_eq!(ShaderSkinning::default().constants(), [0; 8]);
    }

    #[test]
    fn names_round_trip() {
        for split in DqsSplit::ALL {
            assert_eq!(DqsSplit::from_name(split.name()), Some(split));
        }
        assert_eq!(DqsSplit::from_name("gpu"), None);
    }
}
