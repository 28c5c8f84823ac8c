//! Passes built on `gpu`: compute skinning, mesh drawing, offscreen targets
//! and headless output. Knows the GPU layouts of skinning data
//! (`layout`, mirrored in shaders/common.glsl).

pub mod layout;
