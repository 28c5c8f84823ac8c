//! `repr(C)` mirrors of the GLSL structs in shaders/common.glsl, with size
//! asserts: change both sides together.

use bytemuck::{Pod, Zeroable};

pub use crate::anim::BoneMatrix;

/// Bind-pose vertex (`SourceVertex`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct SourceVertex {
    /// xyz, w = 1.
    pub position: [f32; 4],
    /// xyz, w = 0.
    pub normal: [f32; 4],
    /// xyz, w = handedness.
    pub tangent: [f32; 4],
}

/// One influence set of one vertex (`Influence`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct Influence {
    /// Palette-relative joint indices.
    pub joints: [u32; 4],
    /// Weights.
    pub weights: [f32; 4],
}

/// One non-zero morph delta of one vertex (`MorphEntry`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct MorphEntry {
    /// xyz delta; w = target index as f32 bits.
    pub position: [f32; 4],
    /// xyz delta.
    pub normal: [f32; 4],
    /// xyz delta.
    pub tangent: [f32; 4],
}

/// Skinned output vertex (`SkinnedVertex`); also the draw pass's vertex format.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct SkinnedVertex {
    /// xyz, w = 1.
    pub position: [f32; 4],
    /// xyz unit normal.
    pub normal: [f32; 4],
    /// xyz unit tangent, w = handedness.
    pub tangent: [f32; 4],
}

/// One primitive of one instance to skin (`SkinRecord`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct SkinRecord {
    /// First source vertex.
    pub source_offset: u32,
    /// Vertex count.
    pub vertex_count: u32,
    /// First output vertex; records are sorted by it.
    pub output_offset: u32,
    /// First palette entry.
    pub palette_offset: u32,
    /// First influence of set 0.
    pub influence_offset: u32,
    /// 0 (rigid), 1 or 2.
    pub influence_sets: u32,
    /// First morph range entry, or `NO_MORPHS`.
    pub morph_offset: u32,
    /// First morph weight.
    pub weight_offset: u32,
}

/// `SkinRecord::morph_offset` of a primitive without morph targets.
pub const NO_MORPHS: u32 = u32::MAX;

const _: () = {
    assert!(std::mem::size_of::<BoneMatrix>() == 64);
    assert!(std::mem::size_of::<SourceVertex>() == 48);
    assert!(std::mem::size_of::<Influence>() == 32);
    assert!(std::mem::size_of::<MorphEntry>() == 48);
    assert!(std::mem::size_of::<SkinnedVertex>() == 48);
    assert!(std::mem::size_of::<SkinRecord>() == 32);
};
