//! Passes built on `gpu`: compute skinning, mesh drawing, offscreen targets
//! and headless output. Knows the GPU layouts of skinning data
//! (`layout`, mirrored in shaders/common.glsl). It must never use
//! `crate::character`, `crate::world`, `crate::app`, `crate::cli` or
//! `crate::profiler`: they build on it (poses come in as `anim::FramePoses`),
//! not it on them.

pub mod bone_lines;
pub mod camera;
pub mod chunked;
pub mod copy_kernel;
pub mod crowd_fit;
pub mod detail_levels;
pub mod draw_order;
pub mod egui_pass;
pub mod error;
pub mod foresight;
pub mod frame;
pub mod frame_settings;
pub mod frame_uniforms;
pub mod gpu_frame_budget;
pub mod gpu_model;
pub mod headless;
pub mod heat_map;
pub mod image_out;
pub mod layout;
pub mod mesh_pass;
pub mod offscreen;
pub mod profile;
pub mod readback;
pub mod renderer;
pub mod scene_passes;
pub mod session;
pub mod shadow;
pub mod skin_levels;
pub mod skin_pass;
pub mod skinning;
pub mod target;
pub mod textures;
pub mod trace;
pub mod window_frame;

pub use crate::gpu::{GpuContext, GpuError, GpuOptions};
pub use error::RenderError;
pub use frame_settings::{
    Choice, DqsSplit, DrawDetail, FrameSettings, InfluenceBlend, PaletteUpload, PassSetup, PoseEvaluation,
    SkinningMethod, SkinningMode, SkinningPlacement,
};
pub use session::{GpuSession, with_gpu};
