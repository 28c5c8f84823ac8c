//! The draw pass's per-frame uniforms: camera and lights, and the shadow
//! cascades the main pass samples (`Frame` in shaders/mesh_common.glsl).

use super::shadow::{CASCADES, Cascades, SHADOW_SIZE};
use bytemuck::{Pod, Zeroable};

/// Per-frame uniforms (set 1, binding 0; `Frame` in shaders/mesh_common.glsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct FrameUniforms {
    /// World to Vulkan clip space, column-major.
    pub view_proj: [f32; 16],
    /// Eye position (xyz).
    pub camera_pos: [f32; 4],
    /// Unit direction towards the key light; w = wrap amount.
    pub key_dir: [f32; 4],
    /// Key light colour.
    pub key_color: [f32; 4],
    /// Unit direction towards the fill light.
    pub fill_dir: [f32; 4],
    /// Fill light colour.
    pub fill_color: [f32; 4],
    /// Ambient colour.
    pub ambient: [f32; 4],
    /// World -> light clip space of each shadow cascade.
    pub cascade_view_proj: [[f32; 16]; CASCADES],
    /// View depth where each cascade ends.
    pub cascade_far: [f32; 4],
    /// xyz: the camera's unit forward direction.
    pub camera_forward: [f32; 4],
    /// x: 1 = sample the shadow maps; y: depth bias; z: one texel in uv.
    pub shadow: [f32; 4],
}

impl FrameUniforms {
    /// The default key light's direction, towards the light (unit length).
    pub fn key_light() -> nalgebra::Vector3<f32> {
        nalgebra::Vector3::new(-0.45, 0.75, 0.6).normalize()
    }

    /// The default lights (key from the upper left front, cooler fill from
    /// the right, ambient) for a camera `view_proj` at `eye`.
    pub fn new(view_proj: &nalgebra::Matrix4<f32>, eye: [f32; 3]) -> Self {
        let key = Self::key_light();
        let fill = nalgebra::Vector3::new(0.7, 0.15, 0.45).normalize();
        let mut m = [0.0; 16];
        m.copy_from_slice(view_proj.as_slice());
        FrameUniforms {
            view_proj: m,
            camera_pos: [eye[0], eye[1], eye[2], 1.0],
            key_dir: [key.x, key.y, key.z, 0.25],
            key_color: [1.0, 0.96, 0.9, 0.0],
            fill_dir: [fill.x, fill.y, fill.z, 0.0],
            fill_color: [0.3, 0.34, 0.42, 0.0],
            ambient: [0.18, 0.18, 0.2, 0.0],
            cascade_view_proj: [[0.0; 16]; CASCADES],
            cascade_far: [0.0; 4],
            camera_forward: [0.0; 4],
            shadow: [0.0; 4],
        }
    }

    /// Unit direction towards the key light.
    pub fn to_key_light(&self) -> nalgebra::Vector3<f32> {
        nalgebra::Vector3::new(self.key_dir[0], self.key_dir[1], self.key_dir[2])
    }

    /// Turns on the key light's shadows from `cascades`, for a camera looking along `forward`.
    pub fn with_shadows(mut self, cascades: &Cascades, forward: nalgebra::Vector3<f32>) -> Self {
        for (dst, m) in self.cascade_view_proj.iter_mut().zip(&cascades.view_proj) {
            dst.copy_from_slice(m.as_slice());
        }
        self.cascade_far = cascades.far;
        self.camera_forward = [forward.x, forward.y, forward.z, 0.0];
        self.shadow = [1.0, 0.0015, 1.0 / SHADOW_SIZE as f32, 0.0];
        self
    }

    /// The same lights seen through `view_proj` (a shadow cascade's light projection).
    pub fn seen_by(mut self, view_proj: &nalgebra::Matrix4<f32>) -> Self {
        self.view_proj.copy_from_slice(view_proj.as_slice());
        self
    }
}

const _: () = assert!(std::mem::size_of::<FrameUniforms>() == 464);
