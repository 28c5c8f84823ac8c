//! The interactive viewer: window, input, camera and on-screen controls,
//! driving the animation system and the renderer.

pub mod state;
