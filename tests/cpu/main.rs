//! Tests that need nothing but the source tree: generated data and the built-in
//! character (no GPU, no display, no `../shared`).
//!
//! One module per topic, named `<layer>_<topic>` (see `tests/README.md`).

#[path = "../common/mod.rs"]
mod common;

mod anim_runtime_clip;
mod anim_simd_inline;
mod architecture;
mod asset_default_character;
mod character_fuzz_controller;
mod character_layers;
mod character_lod;
mod character_pose_rebuild;
mod character_root_motion;
mod cli_baseline;
mod cli_bench_cpu_only;
mod cli_controller_input;
mod cli_faults;
mod cli_formats;
mod cli_values;
mod profiler_report_html;
mod world_jump;
mod world_levels;
mod world_reach;
mod world_speed_limit;
