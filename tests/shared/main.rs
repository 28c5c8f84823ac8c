//! Tests on the CPU that read the shared glTF models and anchors in `../shared`
//! (absent: each says so, and fails under `VKSKIN_NO_SKIP`).
//!
//! One module per topic, named `<layer>_<topic>` (see `tests/README.md`).

#[path = "../common/mod.rs"]
mod common;

mod anim_anchor;
mod anim_compression;
mod anim_framing;
mod anim_pose_eval;
mod asset_conformance;
mod asset_fuzz_import;
mod asset_import_models;
mod asset_malformed;
mod character_compressed_clips;
mod character_pose_rebuild;
mod character_robot_controller;
mod render_detail_levels;
