//! Tests that open a window: a display (Xvfb on CI, started by the tests) and a
//! Vulkan device that presents to it; they also read `../shared`.
//!
//! One module per topic, named `<layer>_<topic>` (see `tests/README.md`).

#[path = "../common/mod.rs"]
mod common;

mod app_viewer;
