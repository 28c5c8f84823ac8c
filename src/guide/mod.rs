//! Guide: the reference pages, read with `cargo doc --open`.
//!
//! The README says what vkskin is and how to start; these pages say how
//! each part works and how to use it. `../shared/DESIGN.md` holds the
//! contracts (command line, dump, simulate and bench formats, matrix
//! convention). Each page is a markdown file in `src/guide/`, documenting
//! an empty module:
//!
//! - [commands]: every subcommand and option, errors, limits on input files;
//! - [controllers]: the controller file (state machines, blend trees,
//!   transitions, layers, events);
//! - [levels]: the demo level, root motion and foot placement;
//! - [pose_rebuild]: rebuilding a pose from `simulate` and `dump --controller`
//!   output (the blend formula);
//! - [dual_quaternions]: dual-quaternion skinning and where it splits the
//!   matrices;
//! - [layout]: the GPU layout of the skinning data and how the shaders read it;
//! - [profiling]: the benchmarks, `vkskin bench` and its report, how a frame
//!   and a pose are built;
//! - [compression]: track compression, its error bound and its runtime;
//! - [lod]: evaluation-rate LOD, memory per character and detail levels
//!   (simplified meshes for distant characters);
//! - [gpu_pose]: posing crowds on the GPU (`--pose gpu`): what goes up,
//!   what the pass computes, how it is checked;
//! - [planar]: the planar rig (`--planar`): joint-angle lerp against
//!   quaternion slerp, Euler angles, two-weight skinning;
//! - [testing]: the tests, long runs and test data;
//! - [performance_history]: what was tried and measured, and when;
//! - [architecture]: the layers of the crate and their rules.

#[doc = include_str!("architecture.md")]
pub mod architecture {}

#[doc = include_str!("commands.md")]
pub mod commands {}

#[doc = include_str!("compression.md")]
pub mod compression {}

#[doc = include_str!("controllers.md")]
pub mod controllers {}

#[doc = include_str!("dual_quaternions.md")]
pub mod dual_quaternions {}

#[doc = include_str!("layout.md")]
pub mod layout {}

#[doc = include_str!("gpu_pose.md")]
pub mod gpu_pose {}

#[doc = include_str!("pose_rebuild.md")]
pub mod pose_rebuild {}

#[doc = include_str!("levels.md")]
pub mod levels {}

#[doc = include_str!("lod.md")]
pub mod lod {}

#[doc = include_str!("performance_history.md")]
pub mod performance_history {}

#[doc = include_str!("planar.md")]
pub mod planar {}

#[doc = include_str!("profiling.md")]
pub mod profiling {}

#[doc = include_str!("testing.md")]
pub mod testing {}
