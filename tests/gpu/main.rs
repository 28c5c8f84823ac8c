//! Tests that need a Vulkan device (Mesa's lavapipe on CI) with the Khronos
//! validation layer and synchronization validation; many also read `../shared`.
//!
//! One module per topic, named `<layer>_<topic>` (see `tests/README.md`).

#[path = "../common/mod.rs"]
mod common;

mod character_controllers;
mod cli_baseline;
mod cli_bench;
mod cli_bench_report;
mod cli_dump_controller;
mod cli_faults;
mod cli_hostile_inputs;
mod cli_trace;
mod gpu_errors;
mod render_bone_lines;
mod render_copy_kernel;
mod render_crowd;
mod render_detail_levels;
mod render_dual_quaternion;
mod render_foresight;
mod render_gpu_pose;
mod render_headless;
mod render_heat_map;
mod render_palettes;
mod render_planar;
mod render_skin_levels;
mod render_skinning;
mod render_upload_pieces;
mod synthetic_models;
