//! vkskin: loads skinned glTF 2.0 characters, evaluates their poses on the CPU
//! and skins them (a CPU reference and a Vulkan compute pass).
//!
//! Dependencies flow downward only: `cli` and `app` use everything below;
//! `render` uses `gpu`, `asset` and `anim`; `asset` builds the `character`
//! layer's rigs from glTF; `character` uses `anim`; `anim` uses nalgebra alone.

pub mod anim;
pub mod app;
pub mod asset;
pub mod atomic_file;
pub mod character;
pub mod cli;
pub mod cpu_time;
pub mod formats;
pub mod gpu;
pub mod guide;
pub mod heap;
pub mod input_file;
pub mod pool_trace;
pub mod profiler;
pub mod render;
#[cfg(test)]
pub(crate) mod test_model;
pub mod testing;
pub mod text;
pub mod world;
