//! The interactive viewer: window, input, camera and on-screen controls,
//! driving the animation system and the renderer.

pub mod animation;
mod detail_limits;
mod fallback;
pub(crate) use fallback::{ground_under, ground_under_planar};
mod heap_trim;
pub mod orbit_camera;
mod scene;
pub mod scripted;
pub mod state;
pub mod ui;
pub mod viewer;
pub mod window;
