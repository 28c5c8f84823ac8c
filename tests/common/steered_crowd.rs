//! A small crowd under a GPU frame budget, for the tests that watch what
//! the budget measures (the `gpu` tests and `trace_recorder`).

use ash::vk;
use std::sync::Arc;
use std::time::Duration;
use vkskin::asset::load_default_character;
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd};
use vkskin::gpu::GpuContext;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::renderer::{RenderSettings, Renderer};

/// Four built-in characters on a 1.5 m grid, a 320 x 240 renderer under a
/// GPU frame budget of a minute (every frame measured, none coarsened),
/// and a camera framing the four whole.
pub fn four_under_a_minutes_budget(ctx: &GpuContext) -> (Renderer, Crowd, Camera) {
    let model = Arc::new(load_default_character().expect("built-in character"));
    let mut settings = RenderSettings::new(vk::Extent2D { width: 320, height: 240 });
    settings.characters = 4;
    settings.limits.gpu_frame = Some(Duration::from_secs(60));
    let renderer = Renderer::new(ctx, model.clone(), settings).expect("renderer");
    let controller = Controller::from_text(DEFAULT_CONTROLLER, &model).expect("controller");
    let crowd = Crowd::new(model.rig.clone(), Arc::new(controller), 4, 1.5, 30.0, 1).expect("crowd");
    let camera = Camera::frame_box([-1.25, 0.0, -1.25], [1.25, 2.0, 1.25], 320.0 / 240.0, DEFAULT_FOV_Y);
    (renderer, crowd, camera)
}
