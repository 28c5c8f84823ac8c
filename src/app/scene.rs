//! What the viewer draws for one model: the renderer, the driven
//! character's animation, the crowd behind it, the camera that frames them
//! and the model's description for the controls; built as a whole when a
//! model loads and replaced as a whole by the next one.

use super::animation::ViewerAnimation;
use super::orbit_camera::OrbitCamera;
use super::state::ViewerState;
use super::ui::ModelInfo;
use super::viewer::ViewOptions;
use crate::anim::frame_poses::{FramePoses, SkinInput};
use crate::anim::framing::{Bounds, grow_bounds, skinned_bounds};
use crate::anim::planar_scene::{PlanarCopy, PlanarMotion, PlanarScene};
use crate::anim::{PosePlayback, PoseProgram};
use crate::asset::Model;
use crate::character::controller::FoundController;
use crate::character::{Controller, Crowd, ParameterId, ParameterValue, Timeline};
use crate::render::renderer::{RenderSettings, Renderer};
use crate::render::session::GpuSession;
use crate::render::window_frame::WindowFrame;
use crate::render::{GpuContext, GpuError};
use crate::world::{Level, scenery_model};
use nalgebra::Matrix4;
use std::sync::Arc;

/// Everything drawn for one model; replaced as a whole when another loads.
pub(super) struct Scene {
    pub(super) model: Arc<Model>,
    pub(super) animation: ViewerAnimation,
    /// The other characters (`--characters N`: N - 1 of them), behind the driven one.
    pub(super) crowd: Option<Crowd>,
    /// `--planar`: the copies posed by blending angles (and the 3D row)
    /// beside the driven character, which plays the clips as quaternions.
    pub(super) planar: Option<PlanarScene>,
    pub(super) info: ModelInfo,
    pub(super) camera: OrbitCamera,
    pub(super) renderer: Renderer,
}

/// The device, the window's frame objects and the scene, destroyed in reverse order.
pub(super) struct Gpu {
    pub(super) ctx: GpuSession,
    pub(super) window: Option<WindowFrame>,
    pub(super) scene: Option<Scene>,
}

impl Gpu {
    /// Waits for the GPU, frees everything, the context last, and returns
    /// the validation messages (leak reports made while destroying included)
    /// as an error.
    pub(super) fn destroy(mut self) -> Result<(), GpuError> {
        let _ = self.ctx.wait_idle();
        if let Some(s) = self.scene.take() {
            s.renderer.destroy(&self.ctx);
        }
        if let Some(w) = self.window.take() {
            w.destroy(&self.ctx);
        }
        self.ctx.close()
    }
}

/// Samples per clip when framing a model.
const FRAMING_SAMPLES: u32 = 12;

/// Scene-space bounds of `model` over every clip (rest pose without clips),
/// from the CPU reference skinning; `None` when nothing is drawn.
pub(super) fn model_bounds(model: &Model) -> anyhow::Result<Option<Bounds>> {
    let clips: Vec<Option<usize>> =
        if model.clips.is_empty() { vec![None] } else { (0..model.clips.len()).map(Some).collect() };
    let mut scratch = Vec::new();
    let mut bounds = None;
    for clip in clips {
        let duration = clip.map_or(0.0, |c| model.clips[c].duration);
        let fps = if duration > 0.0 { f64::from(FRAMING_SAMPLES) / f64::from(duration) } else { 1.0 };
        let controller = Arc::new(Controller::single_clip(model, clip, true)?);
        let start = clip.map_or(0.0, |c| model.clips[c].start());
        let mut timeline = Timeline::seeking(model.rig.clone(), controller, f64::from(start), fps)?;
        for i in 0..FRAMING_SAMPLES {
            let character = timeline.frame(i)?;
            grow_bounds(model, &character.pose(), &Matrix4::identity(), &mut scratch, &mut bounds)?;
        }
    }
    Ok(bounds)
}

/// Uploads `model`, frames it (its skinned bounds over every clip) and sets
/// up its character: driven by `controller` when given, else by the clips
/// `state` chooses, and the crowd `options` ask for; with `planar`, the
/// planar rig's other copies beside it.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_scene(
    ctx: &GpuContext,
    model: Arc<Model>,
    controller: Option<FoundController>,
    level: Option<&Level>,
    state: &mut ViewerState,
    window: &WindowFrame,
    options: &ViewOptions,
    planar: Option<PlanarMotion>,
) -> anyhow::Result<Scene> {
    let characters = options.characters;
    let mut bounds = model_bounds(&model)?;
    let mut planar = planar.map(|motion| planar_beside(&model, motion, &mut bounds)).transpose()?;
    let (lo, hi) = bounds.unwrap_or(([-1.0; 3], [1.0; 3]));
    let camera = OrbitCamera::framing(lo, hi, window.aspect());
    let mut settings = RenderSettings::for_window();
    // Before a character of the crowd is posed (`render::crowd_fit`).
    let (fit, detail) = (characters.max(1), settings.frame.detail);
    crate::render::crowd_fit::check_crowd_fits(&model, fit, detail, &ctx.buffer_limits)?;
    let crowd_controller = controller.as_ref().map(|(c, _)| Arc::new(c.clone()));
    let mut animation = ViewerAnimation::new(model.clone(), controller, state)?;
    // The renderer follows the crowd onto the GPU (`FramePoses::gpu_pose`).
    let gpu = state.frame.pose == crate::render::PoseEvaluation::Gpu;
    let crowd = crowd_behind(&model, crowd_controller, characters, gpu)?;
    settings.characters = characters.max(1) + planar.as_ref().map_or(0, |p| p.count() as u32);
    settings.frame = state.frame;
    settings.limits = state.detail_limits;
    let mut renderer = Renderer::new_for_screen(ctx, model.clone(), settings, window.color_format())?;
    let scenery = match level {
        Some(level) => animation.enter_level(level, state).and_then(|_| Ok(scenery_model(level)?)),
        // Outside a level, a floor under the model: shadows need somewhere to fall.
        None => scenery_model(&Level::ground(lo, hi, characters)).map_err(anyhow::Error::from),
    };
    let added = scenery.and_then(|s| Ok(renderer.add_scenery(ctx, Arc::new(s))?));
    if let Err(e) = added {
        renderer.destroy(ctx);
        return Err(e);
    }
    for w in std::mem::take(&mut renderer.warnings) {
        eprintln!("vkskin: warning: {w}");
    }
    let info = ModelInfo::new(&model, ctx.features.fill_mode_non_solid);
    if let Some(p) = planar.as_mut() {
        p.pose_at(0.0)?;
    }
    Ok(Scene { animation, crowd, planar, info, camera, renderer, model })
}

/// Frames sampled over the planar rig's loop when framing its copies.
const PLANAR_FRAMING_FPS: f64 = 12.0;

/// The planar rig's copies other than the quaternion one of the planar row
/// (the driven character is that one, at the origin), with `bounds` grown
/// by theirs over a loop.
fn planar_beside(
    model: &Model,
    motion: PlanarMotion,
    bounds: &mut Option<Bounds>,
) -> anyhow::Result<PlanarScene> {
    // The driven character stands unturned at the origin: so do the
    // copies (the orbit camera turns around them all).
    let motion = PlanarMotion { facing_yaw: 0.0, ..motion };
    let copies = [PlanarCopy::AngleLerp, PlanarCopy::EulerLerp, PlanarCopy::EulerSlerp];
    let frames = (2.0 * motion.half_period * PLANAR_FRAMING_FPS).ceil() as u32;
    let mut scene = PlanarScene::new(model.rig.clone(), motion, &copies, 0.0, PLANAR_FRAMING_FPS)?;
    let theirs = skinned_bounds(model, &mut scene, 0, frames)
        .map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?
        .bounds;
    if let Some((lo, hi)) = theirs {
        let (blo, bhi) = bounds.get_or_insert((lo, hi));
        for k in 0..3 {
            blo[k] = blo[k].min(lo[k]);
            bhi[k] = bhi[k].max(hi[k]);
        }
    }
    Ok(scene)
}

/// `characters - 1` characters of `model` playing `controller` (else its
/// first clip), each from its own phase, on a grid behind the origin (-z)
/// where the driven character stands, posed on the GPU when `pose_on_gpu`;
/// `None` for one character.
fn crowd_behind(
    model: &Model,
    controller: Option<Arc<Controller>>,
    characters: u32,
    pose_on_gpu: bool,
) -> anyhow::Result<Option<Crowd>> {
    if characters <= 1 {
        return Ok(None);
    }
    let controller = match controller {
        Some(c) => c,
        None => Arc::new(Controller::single_clip(model, (!model.clips.is_empty()).then_some(0), true)?),
    };
    let grid = Crowd::on_grid(model.rig.clone(), controller, characters as usize - 1, 60.0, 0, pose_on_gpu)
        .map_err(|e| anyhow::anyhow!("{}: {e}", model.file))?;
    let (mut crowd, (lo, hi)) =
        grid.ok_or_else(|| anyhow::anyhow!("{}: nothing to draw (no mesh instances)", model.file))?;
    // The grid's front row a little behind the driven character.
    crowd.shift(&nalgebra::Vector3::new(
        0.0,
        0.0,
        -hi[2] - (hi[2] - lo[2]) / (characters as f32).sqrt().max(1.0),
    ));
    Ok(Some(crowd))
}

/// Hands the controls' parameter `changes` (of `driven`, the driven
/// character's controller) to every character of `crowd`, by name: a
/// crowd of another controller takes those it has.
pub(super) fn follow_controls(
    crowd: &mut Crowd,
    driven: &Controller,
    changes: &[(ParameterId, ParameterValue)],
) {
    for &(id, value) in changes {
        let name = driven.parameters().get(id.0 as usize).map(|p| p.name.as_str());
        if let Some(id) = name.and_then(|name| crowd.controller().parameter(name)) {
            // A value the crowd's parameter does not take is left out.
            let _ = crowd.set_on_every(id, value);
        }
    }
}

/// A frame of the viewer's scene: the driven character, then the crowd,
/// then the planar rig's other copies.
pub(super) struct ViewerPoses<'a> {
    pub(super) driven: (SkinInput<'a>, Matrix4<f32>),
    pub(super) crowd: Option<&'a Crowd>,
    pub(super) planar: Option<&'a PlanarScene>,
}

/// Who draws character `c` of a viewer frame.
enum Slot<'a> {
    Driven,
    Crowd(&'a Crowd, usize),
    Planar(&'a PlanarScene, usize),
}

impl ViewerPoses<'_> {
    fn which(&self, c: usize) -> Slot<'_> {
        let crowd = self.crowd.map_or(0, Crowd::len);
        match (self.crowd, self.planar) {
            (Some(k), _) if (1..=crowd).contains(&c) => Slot::Crowd(k, c - 1),
            (_, Some(p)) if c > crowd && c - 1 - crowd < p.count() => Slot::Planar(p, c - 1 - crowd),
            _ => Slot::Driven,
        }
    }
}

impl FramePoses for ViewerPoses<'_> {
    fn count(&self) -> usize {
        1 + self.crowd.map_or(0, Crowd::len) + self.planar.map_or(0, |p| p.count())
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        match self.which(c) {
            Slot::Driven => self.driven.0,
            Slot::Crowd(crowd, i) => crowd.input(i),
            Slot::Planar(planar, i) => planar.input(i),
        }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        match self.which(c) {
            Slot::Driven => self.driven.1,
            Slot::Crowd(crowd, i) => crowd.world(i),
            Slot::Planar(planar, i) => planar.world(i),
        }
    }
    fn playback(&self, c: usize) -> Option<PosePlayback<'_>> {
        match self.which(c) {
            Slot::Crowd(crowd, i) => crowd.playback(i),
            _ => None,
        }
    }
    fn gpu_pose(&self) -> Option<(usize, &Arc<PoseProgram>)> {
        // The crowd follows the driven character.
        self.crowd?.gpu_pose().map(|(first, program)| (first + 1, program))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::character::controller::DEFAULT_CONTROLLER;

    /// The controls' changes reach every character of a crowd by name,
    /// triggers included; a crowd of a controller without them takes none.
    #[test]
    fn a_crowd_follows_the_controls_by_name() {
        let model = crate::asset::load_default_character().unwrap();
        let driven = Controller::from_text(DEFAULT_CONTROLLER, &model).unwrap();
        let (speed, jump) = (driven.parameter("speed").unwrap(), driven.parameter("jump").unwrap());
        let changes = [(speed, ParameterValue::Float(2.5)), (jump, ParameterValue::Trigger)];
        let mut crowd = Crowd::new(model.rig.clone(), Arc::new(driven.clone()), 5, 2.0, 30.0, 1).unwrap();
        follow_controls(&mut crowd, &driven, &changes);
        crowd.frame(0).unwrap();
        for c in crowd.characters() {
            assert_eq!(c.parameters().get(speed), Some(2.5));
        }
        crowd.frame(6).unwrap();
        assert!(
            crowd.characters().iter().all(|c| c.state_name() == Some("Jump")),
            "the trigger fired on each"
        );
        // One clip, no parameters: nothing to follow, and nothing fails.
        let clip = Arc::new(Controller::single_clip(&model, Some(0), true).unwrap());
        let mut other = Crowd::new(model.rig.clone(), clip, 3, 2.0, 30.0, 1).unwrap();
        follow_controls(&mut other, &driven, &changes);
        other.frame(1).unwrap();
    }
}
