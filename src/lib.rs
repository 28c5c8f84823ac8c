//! vkskin: loads skinned glTF 2.0 characters, evaluates their poses on the CPU
//! and skins them (CPU reference here, Vulkan compute later).
//!
//! Dependencies flow downward only: `cli` uses `scene`, `scene` uses `asset`
//! and `anim`, `asset` uses `anim`, `anim` uses nalgebra alone.

pub mod anim;
pub mod app;
pub mod asset;
pub mod cli;
pub mod gpu;
pub mod render;
pub mod scene;
