//! The character layer: the one chain from gameplay parameters to skinning
//! palettes, used by every command (viewer, `render`, `dump`, `simulate`,
//! benchmarks). Pure CPU: nalgebra, serde and rayon; no Vulkan, no glTF.
//!
//! - [`Rig`](crate::anim::Rig): the immutable asset characters share (skeleton, skins, clips,
//!   meshes), one `Arc` per model.
//! - [`Controller`]: a state machine whose states play blend trees (clips,
//!   N-way blends, 1D blend spaces with phase sync), checked against a rig
//!   and shared; written by users as RON ([`ControllerFile`]).
//! - [`Character`]: one character's parameters, active states, crossfade,
//!   clip players, cursors, pose buffers and evaluated output.
//! - [`AnimationSystem`]: any number of characters, updated in parallel.
//!
//! The layer sits below every command and the world: it must never import
//! `crate::asset`, `crate::render`, `crate::gpu`, `crate::world`,
//! `crate::app` or `crate::cli` (its tests build their rigs with
//! `crate::test_model`).

#[allow(clippy::module_inception)]
mod character;
mod clip_cursors;
pub mod controller;
pub mod crowd;
mod evaluation;
pub mod events;
pub mod foot_slide;
pub mod gpu_pose;
pub mod lod;
pub mod output;
pub mod parameters;
mod playback;
mod prefetch_plan;
pub mod provenance;
pub mod root_motion;
mod scratch;
pub mod script;
mod state_machine;
pub mod system;
pub mod timeline;

pub use character::Character;
pub use controller::{Controller, ControllerError, ControllerFile, ParameterId, ParameterKind};
pub use crowd::{Crowd, CrowdError};
pub use events::FiredEvent;
pub use lod::EvaluationRate;
pub use output::{DebugPose, PoseOutput};
pub use parameters::{ParameterError, ParameterValue, Parameters};
pub use provenance::{EvaluatedLayer, LayerKind, SampledClip};
pub use root_motion::RootMotion;
pub use script::{Script, ScriptError, SetProblem};
pub use system::{AnimationSystem, CharacterId, ThreadPoolError, UpdateError};
pub use timeline::Timeline;

#[cfg(test)]
mod tests;
