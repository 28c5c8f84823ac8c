//! Pure CPU animation: data model (skeleton, clips, mesh streams) and the jobs
//! that evaluate it (sampling, blending, hierarchy, palette, skinning).
//!
//! It imports nothing from `asset`, `character`, `render`, `gpu`, `world`,
//! `app` or `cli` (names go through `crate::text`): those layers build on it,
//! never the reverse.
//!
//! Nothing here knows glTF or Vulkan. Assets (skeleton, clips, meshes) are
//! immutable and shared through `Arc`; per-character state (player time,
//! sampling cursors, pose buffers) lives in separate values owned by the caller.
//! Every job takes plain input and output slices, checks them with
//! `validate()` and computes with `run()`, which never allocates.

pub mod blending;
pub mod clip;
pub mod clip_sampling;
pub mod compression;
pub mod dual_quat;
pub mod frame_poses;
pub mod framing;
pub mod gpu_pose;
pub mod hierarchy;
pub mod ik;
pub mod job;
pub(crate) mod joint_groups;
pub mod lanes8;
pub mod layering;
pub mod math;
pub mod mesh;
pub mod planar;
pub mod planar_scene;
pub mod player;
pub mod pose;
pub mod prefetch;
pub mod rig;
pub mod runtime_clip;
pub mod sampling;
pub mod sine;
pub mod skeleton;
pub mod skinning;
pub mod transform;

pub use clip::{Clip, ClipEvent, Interpolation, JointTracks, MorphWeightTrack, Track};
pub use frame_poses::{FramePoses, FrameSource, PoseError, Sight, SkinInput};
pub use framing::Bounds;
pub use gpu_pose::{PlaybackEntry, PoseLayerSetup, PosePlayback, PoseProgram};
pub use job::JobError;
pub use mesh::{Influences, Mesh, MeshInstance, MeshPrimitive, MorphDeltas, MorphTarget};
pub use pose::{Pose, SkinnedPose};
pub use rig::Rig;
pub use runtime_clip::RuntimeClip;
pub use skeleton::{BoneMatrix, NO_PARENT, Skeleton, Skin};
pub use transform::Transform;

// The jobs.
pub use blending::{BlendJob, BlendLayer, BlendTwoJob};
pub use clip_sampling::{ClipCursor, SampleClipJob};
pub use hierarchy::{LocalToModelJob, PaletteJob, skeleton_to_model, skeleton_to_model_in_place};
pub use ik::{IkSolution, TwoBoneIkJob};
pub use layering::{LayerJob, LayerMode};
pub use player::ClipPlayer;
pub use sampling::{RotationBlend, SampleJob, SamplingCursor, sample_morph_weights};
pub use skinning::{SkinTransform, SkinningJob, SkinningMethod};
