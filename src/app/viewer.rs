//! The interactive viewer (`vkskin view`): a winit 0.30 application that
//! owns the window, the event loop, the animation and the egui controls.
//! Each redraw is one frame of `render::window_frame`: begin (resize, wait
//! for the next frame slot) -> pose (animation system) -> egui -> draw
//! (skinning, scene passes, bones, controls; submit and present).
//!
//! Without a display (no DISPLAY/WAYLAND_DISPLAY, no event loop or window,
//! no device that can present) it prints one line saying so and renders the
//! model headless to an animated PNG instead.

use super::animation::ViewerAnimation;
use super::orbit_camera::OrbitCamera;
use super::scripted::{MemorySample, Schedule, Script, resident_bytes};
use super::state::{AnimationMode, DebugView, EventLog, FrameTimings, SkinningMode, ViewerState};
use super::ui::{self, ModelInfo};
use super::window::WindowInput;
use crate::anim::SkinningMethod;
use crate::anim::frame_poses::{Bounds, FramePoses, SkinInput, grow_bounds};
use crate::asset::{self, Model};
use crate::character::controller::{FoundController, find_controller};
use crate::character::{Controller, Crowd, Timeline};
use crate::gpu::{GpuContext, GpuOptions};
use crate::render::headless::{self, HeadlessRequest};
use crate::render::image_out::{self, ApngWriter};
use crate::render::mesh_pass::VertexPath;
use crate::render::renderer::{RenderSettings, Renderer};
use crate::render::skinning::DqsSplit;
use crate::render::window_frame::{BoneOverlay, OpenError, WindowFrame, WindowScene};
use crate::world::{Level, scenery_model};
use anyhow::{anyhow, bail};
use nalgebra::Matrix4;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// What `vkskin view` was asked to do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewOptions {
    /// The model file; `None` shows the built-in character.
    pub model: Option<PathBuf>,
    /// Clip name or index to play first (default: "Walk", else clip 0);
    /// given, the viewer starts in the manual clip mode.
    pub clip: Option<String>,
    /// Controller file; default: the model's sidecar or built-in one.
    pub controller: Option<PathBuf>,
    /// A level to walk the character through (`demo`).
    pub level: Option<String>,
    /// Vulkan device: an index or part of its name.
    pub device: Option<String>,
    /// Khronos validation with synchronization validation; any message fails the run.
    pub validation: bool,
    /// Render this many frames, then exit (scripted runs).
    pub frames: Option<u64>,
    /// Write the last frame (as presented, controls included) to this PNG.
    pub screenshot: Option<PathBuf>,
    /// Ask the window to resize to (width, height) at frame K: `(K, width,
    /// height)` in frame order.
    pub resize_at: Vec<(u64, u32, u32)>,
    /// Initial window size (and the headless fallback's image size).
    pub size: (u32, u32),
    /// Limits on the model files loaded.
    pub load: crate::asset::LoadOptions,
    /// Characters in the scene (at least 1): the driven one and a crowd behind it.
    pub characters: u32,
    /// How joint influences are blended at start.
    pub skinning_method: SkinningMethod,
    /// Where dual-quaternion skinning splits the matrices, at start.
    pub dqs_split: DqsSplit,
    /// Draw passes at start (one of `PASS_SETUPS`).
    pub passes: u32,
    /// Scripted actions (clip switches, reloads, memory samples).
    pub schedule: Schedule,
}

/// Frames of the headless fallback without `--frames`: at most this many.
const FALLBACK_MAX_FRAMES: u32 = 90;
/// Frame rate of the headless fallback.
const FALLBACK_FPS: f32 = 30.0;
/// Pause between redraws while the window is minimised.
const MINIMISED_NAP: std::time::Duration = std::time::Duration::from_millis(20);
/// How often the window title (model, FPS) is refreshed, seconds.
const TITLE_PERIOD: f64 = 0.5;

/// Runs the viewer; falls back to a headless animated PNG without a display.
pub fn run(options: &ViewOptions) -> anyhow::Result<()> {
    let model = Arc::new(load_model(options.model.as_deref(), &options.load)?);
    for w in &model.warnings {
        eprintln!("vkskin: warning: {}: {w}", model.file);
    }
    let clip = initial_clip(&model, options.clip.as_deref())?;
    let controller = find_controller(&model, options.model.as_deref(), options.controller.as_deref())?;
    if let Some((_, source)) = &controller {
        eprintln!("vkskin: controller: {source}");
    }
    let has_display =
        ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display {
        return fallback(options, &model, clip, "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)");
    }
    let event_loop = match EventLoop::new() {
        Ok(e) => e,
        Err(e) => return fallback(options, &model, clip, &format!("cannot open the display ({e})")),
    };
    event_loop.set_control_flow(ControlFlow::Poll);
    let level = options.level.as_deref().map(Level::named).transpose()?;
    if level.is_some() && controller.is_none() {
        bail!("{}: --level needs a controller (--controller FILE)", model.file);
    }
    let mut app = Viewer::new(options.clone(), model.clone(), clip, controller);
    app.level = level;
    let ran = event_loop.run_app(&mut app);
    let validation = app.teardown();
    if let Some(reason) = app.fallback.take() {
        return fallback(options, &model, clip, &reason);
    }
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    ran.map_err(|e| anyhow!("event loop: {e}"))?;
    if !validation.is_empty() {
        bail!("{} validation message(s); the first: {}", validation.len(), validation[0]);
    }
    if app.frames_rendered == 0 {
        bail!("no frame was rendered");
    }
    Ok(())
}

/// Parses `--resize-at K:WxH` into `(K, W, H)`.
pub fn parse_resize_at(text: &str) -> Result<(u64, u32, u32), String> {
    let bad = || format!("bad --resize-at \"{text}\": expected FRAME:WIDTHxHEIGHT, e.g. 60:500x400");
    let (k, size) = text.split_once(':').ok_or_else(bad)?;
    let k: u64 = k.trim().parse().map_err(|_| bad())?;
    let (w, h) = size.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(bad());
    }
    Ok((k, w, h))
}

/// The model at `path`, or the built-in character.
fn load_model(path: Option<&Path>, load: &asset::LoadOptions) -> anyhow::Result<Model> {
    match path {
        Some(p) => Ok(asset::load_with(p, load)?),
        None => Ok(asset::load_default_character_with(load)?),
    }
}

/// `--clip` (name or index), else a clip named "Walk", else clip 0; `None` without clips.
fn initial_clip(model: &Model, key: Option<&str>) -> anyhow::Result<Option<usize>> {
    match key {
        Some(k) => model.find_clip(k).map(Some).ok_or_else(|| anyhow!("{}: no clip \"{k}\"", model.file)),
        None => Ok(model
            .clips
            .iter()
            .position(|c| c.name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case("walk")))
            .or((!model.clips.is_empty()).then_some(0))),
    }
}

/// A file-name-safe version of `text`.
fn file_part(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() { "model".into() } else { s }
}

/// Renders the model headless to `vkskin-<model>-<clip>.png` in the current
/// directory after printing one line saying why; prints the path.
fn fallback(
    options: &ViewOptions,
    model: &Arc<Model>,
    clip: Option<usize>,
    reason: &str,
) -> anyhow::Result<()> {
    eprintln!("vkskin: {reason}: rendering headless to an animated PNG instead");
    let stem = Path::new(&model.file)
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    let clip_name = clip
        .map_or_else(|| "rest".to_string(), |c| model.clips[c].name.clone().unwrap_or_else(|| c.to_string()));
    let out = PathBuf::from(format!("vkskin-{}-{}.png", file_part(&stem), file_part(&clip_name)));
    let frames = match (options.frames, clip) {
        (Some(n), _) => n.clamp(1, 10_000) as u32,
        (None, Some(c)) => {
            ((model.clips[c].duration * FALLBACK_FPS).ceil() as u32).clamp(1, FALLBACK_MAX_FRAMES)
        }
        (None, None) => 1,
    };
    let (width, height) = options.size;
    let request = HeadlessRequest {
        frames,
        first_frame: 0,
        width,
        height,
        wireframe: false,
        vertex_skinning: false,
        msaa: true,
        passes: 1,
        upload: Default::default(),
        skinning: SkinningMethod::Linear,
        dqs_split: DqsSplit::Shader,
    };
    let start = clip.map_or(0.0, |c| model.clips[c].start());
    let controller = Arc::new(Controller::single_clip(model, clip, true)?);
    let mut timeline =
        Timeline::seeking(model.rig.clone(), controller, f64::from(start), f64::from(FALLBACK_FPS))?;
    let gpu =
        GpuOptions { validation: options.validation, device: options.device.clone(), ..Default::default() };
    let ctx = GpuContext::new(&gpu, &|_, _, _, _| true)?;
    let mut writer = ApngWriter::create(&out, width, height, frames, FALLBACK_FPS)?;
    // --screenshot still gets the last frame.
    let mut last = Vec::with_capacity(if options.screenshot.is_some() {
        width as usize * height as usize * 4
    } else {
        0
    });
    let result = headless::render(&ctx, model.clone(), &mut timeline, None, &request, &mut |_, rgba| {
        if options.screenshot.is_some() {
            last.clear();
            last.extend_from_slice(rgba);
        }
        writer.write_frame(rgba)
    })
    .and_then(|w| writer.finish().map(|_| w));
    let result = match (&options.screenshot, result) {
        (Some(path), Ok(w)) => image_out::write_png(path, width, height, &last).map(|_| w),
        (_, r) => r,
    };
    // Destroyed before the messages are read: leaks are reported then.
    let messages = ctx.finish();
    for w in result? {
        eprintln!("vkskin: warning: {w}");
    }
    if !messages.is_empty() {
        bail!("{} validation message(s); the first: {}", messages.len(), messages[0]);
    }
    println!("{}", out.display());
    Ok(())
}

/// Everything drawn for one model; replaced as a whole when another loads.
struct Scene {
    model: Arc<Model>,
    animation: ViewerAnimation,
    /// The other characters (`--characters N`: N - 1 of them), behind the driven one.
    crowd: Option<Crowd>,
    info: ModelInfo,
    camera: OrbitCamera,
    renderer: Renderer,
}

/// The device, the window's frame objects and the scene, destroyed in reverse order.
struct Gpu {
    ctx: GpuContext,
    window: Option<WindowFrame>,
    scene: Option<Scene>,
}

impl Gpu {
    /// Waits for the GPU, frees everything, the context last, and returns
    /// the validation messages (leak reports made while destroying included).
    fn destroy(mut self) -> Vec<String> {
        let _ = self.ctx.wait_idle();
        if let Some(s) = self.scene.take() {
            s.renderer.destroy(&self.ctx);
        }
        if let Some(w) = self.window.take() {
            w.destroy(&self.ctx);
        }
        self.ctx.finish()
    }
}

/// The winit application.
struct Viewer {
    options: ViewOptions,
    first_model: Option<(Arc<Model>, Option<FoundController>)>,
    state: ViewerState,
    log: EventLog,
    timings: FrameTimings,
    window: Option<Arc<Window>>,
    input: Option<WindowInput>,
    gpu: Option<Gpu>,
    /// Why the window could not be used (the run falls back to headless).
    fallback: Option<String>,
    /// A fatal error.
    error: Option<anyhow::Error>,
    frames_rendered: u64,
    redraws: u64,
    started: Instant,
    last_frame: Option<Instant>,
    last_title: f64,
    title: String,
    /// The window was closed with a screenshot still to take: one last frame takes it.
    closing: bool,
    /// The level the character walks through, if any.
    level: Option<Level>,
    /// Scripted actions of `options.schedule`.
    script: Script,
}

impl Viewer {
    fn new(
        options: ViewOptions,
        model: Arc<Model>,
        clip: Option<usize>,
        controller: Option<FoundController>,
    ) -> Self {
        // --clip asks for the manual clip mode.
        let mode = if options.clip.is_some() { AnimationMode::Clips } else { AnimationMode::Controller };
        let script = Script::new(options.schedule, options.model.as_deref());
        let state = ViewerState {
            clip_a: clip,
            mode,
            method: options.skinning_method,
            dqs_split: options.dqs_split,
            passes: options.passes,
            ..Default::default()
        };
        Viewer {
            options,
            first_model: Some((model, controller)),
            state,
            log: EventLog::default(),
            timings: FrameTimings::default(),
            window: None,
            input: None,
            gpu: None,
            fallback: None,
            error: None,
            frames_rendered: 0,
            redraws: 0,
            started: Instant::now(),
            last_frame: None,
            last_title: -1.0,
            title: String::with_capacity(128),
            closing: false,
            level: None,
            script,
        }
    }

    /// Frees the GPU objects (then the window); returns the validation messages.
    fn teardown(&mut self) -> Vec<String> {
        let messages = self.gpu.take().map(Gpu::destroy).unwrap_or_default();
        self.input = None;
        self.window = None;
        messages
    }

    /// Creates the window and everything Vulkan; a failure that means "no
    /// usable display or presenting device" sets `fallback`.
    fn start(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        let (w, h) = self.options.size;
        let attributes =
            Window::default_attributes().with_title("vkskin").with_inner_size(PhysicalSize::new(w, h));
        let window = match event_loop.create_window(attributes) {
            Ok(w) => Arc::new(w),
            Err(e) => {
                self.fallback = Some(format!("cannot create a window ({e})"));
                return Ok(());
            }
        };
        self.window = Some(window.clone());
        let options = GpuOptions {
            validation: self.options.validation,
            device: self.options.device.clone(),
            announce_device: true,
            ..Default::default()
        };
        let size = window.inner_size();
        // SAFETY: the window outlives the frame objects: teardown destroys
        // the GPU objects before dropping the window.
        let opened =
            unsafe { WindowFrame::open(options, &*window, (size.width, size.height), self.state.vsync) };
        let (ctx, frame) = match opened {
            Ok(o) => o,
            Err(OpenError::Unusable(reason)) => {
                self.fallback = Some(reason);
                return Ok(());
            }
            Err(OpenError::Failed(e)) => return Err(e.into()),
        };
        let (mut frame, mut gpu) = (frame, Gpu { ctx, window: None, scene: None });
        let characters = self.options.characters;
        let built = self.first_model.take().ok_or_else(|| anyhow!("started twice")).and_then(
            |(model, controller)| {
                let level = self.level.as_ref();
                build_scene(&gpu.ctx, model, controller, level, &mut self.state, &frame, characters)
            },
        );
        let max_texture = gpu.ctx.properties.limits.max_image_dimension2_d as usize;
        let built = match built {
            Ok(scene) => {
                frame.show_bones_of(&scene.model);
                gpu.scene = Some(scene);
                Ok(())
            }
            Err(e) => Err(e),
        };
        gpu.window = Some(frame);
        self.gpu = Some(gpu);
        built?;
        self.input = Some(WindowInput::new(&window, max_texture));
        Ok(())
    }

    /// Loads `path` and replaces the scene once the GPU is idle; a model that
    /// fails to load leaves the current one in place (the error is printed).
    fn load(&mut self, path: PathBuf) -> anyhow::Result<()> {
        let Some(gpu) = self.gpu.as_mut() else { return Ok(()) };
        let model = match asset::load_with(&path, &self.options.load) {
            Ok(m) => Arc::new(m),
            Err(e) => {
                eprintln!("vkskin: {e}");
                return Ok(());
            }
        };
        let frame = gpu.window.as_mut().ok_or_else(|| anyhow!("no window"))?;
        // Build the new scene first: if that fails (no clip, a bad
        // controller file next to it, GPU limits), the current model stays,
        // as for a file that fails to import.
        let (vsync, method, dqs_split, passes) =
            (self.state.vsync, self.state.method, self.state.dqs_split, self.state.passes);
        let mut state = ViewerState { vsync, method, dqs_split, passes, ..Default::default() };
        let characters = self.options.characters;
        let built = initial_clip(&model, None).and_then(|clip| {
            state.clip_a = clip;
            let controller = find_controller(&model, Some(&path), None)?;
            let level = self.level.as_ref();
            build_scene(&gpu.ctx, model, controller, level, &mut state, frame, characters)
        });
        let scene = match built {
            Ok(built) => built,
            Err(e) => {
                eprintln!("vkskin: {}: {e}", path.display());
                return Ok(());
            }
        };
        // The old scene's buffers may still be read by frames in flight:
        // its destroy waits for the device before freeing (a load is rare;
        // the new renderer has its own frame slots).
        if let Some(old) = gpu.scene.take() {
            old.renderer.destroy(&gpu.ctx);
        }
        frame.show_bones_of(&scene.model);
        // Texture frees deferred into the old slots: the device is idle now.
        frame.release_overlay_slots()?;
        for w in &scene.model.warnings {
            eprintln!("vkskin: warning: {}: {w}", scene.model.file);
        }
        self.state = state;
        self.log = EventLog::default();
        gpu.scene = Some(scene);
        self.last_title = -1.0;
        Ok(())
    }

    /// Rebuilds the scene's renderer when the controls switched the
    /// skinning method (its pipelines are specialised per method); the
    /// animation, crowd and camera stay. A renderer that cannot be built
    /// leaves the old one (the error is printed).
    fn switch_method(&mut self) -> anyhow::Result<()> {
        let Some(gpu) = self.gpu.as_mut() else { return Ok(()) };
        let (Some(scene), Some(frame)) = (gpu.scene.as_mut(), gpu.window.as_mut()) else { return Ok(()) };
        let mut settings = *scene.renderer.settings();
        let old = (settings.skinning, settings.dqs_split);
        if old == (self.state.method, self.state.dqs_split) {
            return Ok(());
        }
        (settings.skinning, settings.dqs_split) = (self.state.method, self.state.dqs_split);
        let ctx = &gpu.ctx;
        let built = Renderer::new_for_screen(ctx, scene.model.clone(), settings, frame.color_format());
        let built = built.and_then(|mut renderer| {
            if let Some(scenery) = scene.renderer.scenery().cloned()
                && let Err(e) = renderer.add_scenery(ctx, scenery)
            {
                renderer.destroy(ctx);
                return Err(e);
            }
            // Said when the scene was built.
            renderer.warnings.clear();
            Ok(renderer)
        });
        match built {
            Ok(renderer) => {
                // The old renderer's destroy waits for its frames in flight.
                std::mem::replace(&mut scene.renderer, renderer).destroy(ctx);
                frame.release_overlay_slots()?;
            }
            Err(e) => {
                eprintln!("vkskin: cannot switch to {:?} skinning: {e}", self.state.method);
                (self.state.method, self.state.dqs_split) = old;
            }
        }
        Ok(())
    }

    /// One frame. Returns Ok without rendering when minimised or when the
    /// swapchain was out of date.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        self.redraws += 1;
        let clips = self.gpu.as_ref().and_then(|g| g.scene.as_ref()).map_or(0, |s| s.model.clips.len());
        if self.script.step(self.frames_rendered, clips, &mut self.state).report_memory
            && let Some(gpu) = &self.gpu
        {
            let report = gpu.ctx.allocator().generate_report();
            let sample = MemorySample {
                frame: self.frames_rendered,
                rss_bytes: resident_bytes(),
                gpu_allocated_bytes: report.total_allocated_bytes,
                gpu_reserved_bytes: report.total_capacity_bytes,
            };
            eprintln!("{}", sample.line());
        }
        if let Some(path) = self.state.load_request.take() {
            self.load(path)?;
        }
        self.switch_method()?;
        if let (Some(&(k, w, h)), Some(window)) = (self.options.resize_at.first(), &self.window)
            && self.frames_rendered >= k
        {
            // Asked once; X11 applies it asynchronously (a Resized event follows).
            self.options.resize_at.remove(0);
            let _ = window.request_inner_size(PhysicalSize::new(w, h));
        }
        let (Some(window), Some(gpu), Some(input)) =
            (self.window.clone(), self.gpu.as_mut(), self.input.as_mut())
        else {
            return Ok(());
        };
        let size = window.inner_size();
        let ctx = &gpu.ctx;
        let frame = gpu.window.as_mut().ok_or_else(|| anyhow!("no window"))?;
        let scene = gpu.scene.as_mut().ok_or_else(|| anyhow!("no scene"))?;
        let begun = frame.begin(ctx, &mut scene.renderer, (size.width, size.height), self.state.vsync);
        let Some(slot) = begun? else {
            // Minimised: render nothing, recreate nothing (and do not spin).
            if self.closing {
                event_loop.exit();
            }
            std::thread::sleep(MINIMISED_NAP);
            return Ok(());
        };

        // Pose.
        let now = Instant::now();
        let dt = self.last_frame.map_or(0.0, |t| now.duration_since(t).as_secs_f32()).min(0.25);
        self.last_frame = Some(now);
        let clock = now.duration_since(self.started).as_secs_f64();
        let forward = scene.camera.ground_forward();
        self.state.camera_forward = [forward.x, forward.z];
        scene.animation.update(dt, &mut self.state, &mut self.log, clock)?;
        if let Some(crowd) = scene.crowd.as_mut() {
            crowd.update(dt)?;
        }
        if scene.animation.in_level() {
            // The camera follows the character (its chest), gently.
            let at = scene.animation.transform().column(3).xyz() + nalgebra::Vector3::y() * 1.0;
            let follow = 1.0 - (-dt.max(0.0) / 0.15).exp();
            scene.camera.target += (at - scene.camera.target.coords) * follow;
        }
        self.timings.cpu_pose_us = scene.animation.cpu_pose_us();
        if dt > 0.0 {
            let fps = 1.0 / dt as f64;
            self.timings.fps = if self.timings.fps > 0.0 { self.timings.fps * 0.9 + fps * 0.1 } else { fps };
        }

        // Controls.
        let raw = input.egui.take_egui_input(&window);
        let egui_ctx = input.egui_ctx().clone();
        let (state, info, anim, timings, log) =
            (&mut self.state, &scene.info, &scene.animation, &self.timings, &self.log);
        let output = egui_ctx.run_ui(raw, |ui| ui::draw(ui.ctx(), state, info, anim, timings, log));
        input.egui.handle_platform_output(&window, output.platform_output);
        let primitives = egui_ctx.tessellate(output.shapes, output.pixels_per_point);
        frame.prepare_overlay(
            ctx,
            &mut scene.renderer,
            slot,
            output.textures_delta,
            primitives,
            output.pixels_per_point,
        )?;
        let path = match self.state.skinning {
            SkinningMode::Compute => VertexPath::PreSkinned,
            SkinningMode::Vertex => VertexPath::VertexSkinning,
        };
        scene.renderer.set_path(path);
        scene.renderer.set_wireframe(self.state.wireframe);
        scene.renderer.set_passes(self.state.passes)?;
        let heat_joint = match self.state.debug_view {
            DebugView::WeightHeatMap => self.state.selected_joint,
            _ => None,
        };
        scene.renderer.set_heat_joint(ctx, heat_joint)?;

        // Draw.
        let mut camera = scene.camera.camera(frame.aspect());
        // Centre the view in the part of the window the controls leave free.
        let width = frame.size().0 as f32;
        camera.lens_shift = lens_shift(free_span(&egui_ctx, width), width);
        let world = scene.animation.transform();
        let character = scene.animation.character();
        let driven = SkinInput { pose: character.pose(), version: character.version() };
        let poses = ViewerPoses { driven: (driven, world), crowd: scene.crowd.as_ref() };
        let bones = self.state.show_bones.then(|| BoneOverlay {
            world,
            joints: character.output().world(),
            parents: scene.model.skeleton.parents(),
            selected: self.state.selected_joint,
        });
        let last = self.closing || self.options.frames.is_some_and(|n| self.frames_rendered + 1 >= n);
        let request = WindowScene {
            slot,
            poses: &poses,
            camera: &camera,
            show_mesh: self.state.show_mesh,
            bones,
            screenshot: last && self.options.screenshot.is_some(),
        };
        let Some(drawn) = frame.draw(ctx, &mut scene.renderer, &request)? else {
            // No image (the swapchain is out of date): the next redraw recreates it.
            return Ok(());
        };
        self.frames_rendered += 1;
        if let Some(t) = drawn.previous_gpu {
            self.timings.gpu_skin_us = t.skin_us;
            self.timings.gpu_draw_us = t.draw_us;
            self.timings.gpu_upload_us = t.upload_us;
        }
        self.timings.upload_bytes = drawn.skin.palette_bytes_written + drawn.skin.weight_bytes_written;
        if let (Some(shot), Some(path)) = (&drawn.screenshot, &self.options.screenshot) {
            image_out::write_png(path, shot.width, shot.height, &shot.rgba)?;
            eprintln!("vkskin: wrote {} ({}x{})", path.display(), shot.width, shot.height);
        }
        if clock - self.last_title >= TITLE_PERIOD {
            self.last_title = clock;
            use std::fmt::Write;
            self.title.clear();
            let name = Path::new(&scene.model.file)
                .file_name()
                .map_or(std::borrow::Cow::Borrowed(""), |n| n.to_string_lossy());
            let _ = write!(self.title, "vkskin - {name} - {:.0} fps", self.timings.fps);
            window.set_title(&self.title);
        }
        if self.closing || self.options.frames.is_some_and(|n| self.frames_rendered >= n) {
            event_loop.exit();
        } else if let Some(n) = self.options.frames
            && self.redraws > n * 20 + 600
        {
            bail!("only {} of {n} frames rendered after {} attempts", self.frames_rendered, self.redraws);
        }
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, error: anyhow::Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
        event_loop.exit();
    }
}

/// The horizontal span `(left, right)` in pixels of a window `width` wide
/// that egui's windows leave free: left of them when they sit at the right
/// (and leave at least a quarter of the width), else the whole width.
fn free_span(egui_ctx: &egui::Context, width: f32) -> (f32, f32) {
    let ppp = egui_ctx.pixels_per_point();
    let left = egui_ctx.memory(|m| {
        m.layer_ids()
            .filter(|l| l.order == egui::Order::Middle && m.areas().is_visible(l))
            .filter_map(|l| m.area_rect(l.id))
            .map(|r| r.min.x * ppp)
            .fold(f32::INFINITY, f32::min)
    });
    if left.is_finite() && left >= width * 0.25 && left < width { (0.0, left) } else { (0.0, width) }
}

/// The camera's lens shift (`Camera::lens_shift`) that moves the image
/// centre to the middle of `span` (pixels) in a window `width` wide.
fn lens_shift(span: (f32, f32), width: f32) -> f32 {
    if width > 0.0 { ((span.0 + span.1) * 0.5 - width * 0.5) / (width * 0.5) } else { 0.0 }
}

/// Samples per clip when framing a model.
const FRAMING_SAMPLES: u32 = 12;

/// Scene-space bounds of `model` over every clip (rest pose without clips),
/// from the CPU reference skinning; `None` when nothing is drawn.
fn model_bounds(model: &Model) -> anyhow::Result<Option<Bounds>> {
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
/// `state` chooses.
#[allow(clippy::too_many_arguments)]
fn build_scene(
    ctx: &GpuContext,
    model: Arc<Model>,
    controller: Option<FoundController>,
    level: Option<&Level>,
    state: &mut ViewerState,
    window: &WindowFrame,
    characters: u32,
) -> anyhow::Result<Scene> {
    let bounds = model_bounds(&model)?;
    let (lo, hi) = bounds.unwrap_or(([-1.0; 3], [1.0; 3]));
    let camera = OrbitCamera::framing(lo, hi, window.aspect());
    let mut settings = RenderSettings::for_window();
    let crowd_controller = controller.as_ref().map(|(c, _)| Arc::new(c.clone()));
    let mut animation = ViewerAnimation::new(model.clone(), controller, state)?;
    let crowd = crowd_behind(&model, crowd_controller, characters)?;
    settings.characters = characters.max(1);
    settings.skinning = state.method;
    settings.dqs_split = state.dqs_split;
    settings.passes = state.passes;
    let mut renderer = Renderer::new_for_screen(ctx, model.clone(), settings, window.color_format())?;
    if let Some(level) = level {
        let entered = animation.enter_level(level, state).and_then(|_| Ok(scenery_model(level)?));
        let scenery = match entered {
            Ok(s) => s,
            Err(e) => {
                renderer.destroy(ctx);
                return Err(e);
            }
        };
        if let Err(e) = renderer.add_scenery(ctx, Arc::new(scenery)) {
            renderer.destroy(ctx);
            return Err(e.into());
        }
    }
    for w in std::mem::take(&mut renderer.warnings) {
        eprintln!("vkskin: warning: {w}");
    }
    let info = ModelInfo::new(&model, ctx.features.fill_mode_non_solid);
    Ok(Scene { animation, crowd, info, camera, renderer, model })
}

/// `characters - 1` characters of `model` playing `controller` (else its
/// first clip), each from its own phase, on a grid behind the origin (-z)
/// where the driven character stands; `None` for one character.
fn crowd_behind(
    model: &Model,
    controller: Option<Arc<Controller>>,
    characters: u32,
) -> anyhow::Result<Option<Crowd>> {
    if characters <= 1 {
        return Ok(None);
    }
    let controller = match controller {
        Some(c) => c,
        None => Arc::new(Controller::single_clip(model, (!model.clips.is_empty()).then_some(0), true)?),
    };
    let grid = Crowd::on_grid(model.rig.clone(), controller, characters as usize - 1, 60.0, 0)
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

/// A frame of the viewer's scene: the driven character, then the crowd.
struct ViewerPoses<'a> {
    driven: (SkinInput<'a>, Matrix4<f32>),
    crowd: Option<&'a Crowd>,
}

impl FramePoses for ViewerPoses<'_> {
    fn count(&self) -> usize {
        1 + self.crowd.map_or(0, Crowd::len)
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        match (c, self.crowd) {
            (0, _) | (_, None) => self.driven.0,
            (c, Some(crowd)) => crowd.input(c - 1),
        }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        match (c, self.crowd) {
            (0, _) | (_, None) => self.driven.1,
            (c, Some(crowd)) => crowd.world(c - 1),
        }
    }
}

impl ApplicationHandler for Viewer {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() || self.fallback.is_some() || self.error.is_some() {
            return;
        }
        if let Err(e) = self.start(event_loop) {
            self.fail(event_loop, e);
        } else if self.fallback.is_some() {
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(window) = self.window.clone() else { return };
        if let Some(input) = self.input.as_mut() {
            let camera = self.gpu.as_mut().and_then(|g| g.scene.as_mut()).map(|s| &mut s.camera);
            if let Some(message) = input.on_event(&window, &event, camera, &mut self.state) {
                eprintln!("vkskin: {message}");
            }
        }
        match event {
            // Without --frames, the screenshot is the frame shown when the window closes.
            WindowEvent::CloseRequested if self.options.screenshot.is_some() && self.frames_rendered > 0 => {
                self.closing = true;
            }
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => {
                if let Some(frame) = self.gpu.as_mut().and_then(|g| g.window.as_mut()) {
                    frame.invalidate();
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(event_loop) {
                    self.fail(event_loop, e);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(w) = &self.window {
            w.request_redraw();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_at() {
        assert_eq!(parse_resize_at("60:500x400"), Ok((60, 500, 400)));
        for bad in ["60", "x:1x1", "1:0x5", "1:5", ""] {
            assert!(parse_resize_at(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lens_shift_centres_the_free_span() {
        // The image centre moves to the middle of the left 400 of 1000 pixels: ndc x -0.6.
        assert!((lens_shift((0.0, 400.0), 1000.0) - (-0.6)).abs() < 1e-6);
        assert_eq!(lens_shift((0.0, 1000.0), 1000.0), 0.0);
    }

    #[test]
    fn file_parts() {
        assert_eq!(file_part("Cesium Man"), "Cesium_Man");
        assert_eq!(file_part("walk-2"), "walk-2");
        assert_eq!(file_part(""), "model");
    }
}
