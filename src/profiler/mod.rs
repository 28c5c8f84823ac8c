//! The profiler behind `vkskin bench`: the plan (every configuration to
//! measure, checked), the runner (measures each one through the renderer's
//! one frame path) and the report (results.json, the table, the SVG plots).
//! It measures through what `render` exposes and records no Vulkan of its
//! own; the command line only parses options into a [`SweepRequest`].
//! `baseline` compares a run with an earlier one; `cpu_scale` measures the
//! CPU side of crowds alone (`bench --cpu-only`).

pub mod baseline;
pub mod cpu_scale;
pub mod cpu_topology;
pub mod plan;
pub mod report;
pub mod runner;

pub use plan::{BenchConfig, BenchModel, BenchPlan, PlanError, SweepRequest};
pub use runner::{BenchRun, run_bench};
