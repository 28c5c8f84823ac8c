//! The interactive viewer (`vkskin view`): a winit 0.30 application that
//! owns the window, the event loop, the animation and the egui controls.
//! Each redraw is one frame of `render::window_frame`: begin (resize, wait
//! for the next frame slot) -> pose (animation system) -> egui -> draw
//! (skinning, scene passes, bones, controls; submit and present). It
//! records no Vulkan and creates no GPU context itself: the window's frame
//! (`render::window_frame`) opens the device that presents to it.
//!
//! Without a display (no DISPLAY/WAYLAND_DISPLAY, no event loop or window,
//! no device that can present) it prints one line saying so and renders the
//! model headless to an animated PNG instead (`app::fallback`).

use super::fallback::fallback;
use super::heap_trim::HeapTrim;
use super::scene::{Gpu, Scene, ViewerPoses, build_scene, follow_controls};
use super::scripted::{MemorySample, Schedule, Script, resident_bytes};
use super::state::{AnimationMode, DebugView, EventLog, FrameTimings, ViewerState};
use super::ui;
use super::window::WindowInput;
use crate::anim::SkinInput;
use crate::anim::planar_scene;
use crate::asset::{self, Model, planar_rig};
use crate::character::Crowd;
use crate::character::controller::{FoundController, find_controller};
use crate::render::camera::Camera;
use crate::render::image_out;
use crate::render::renderer::{DetailLimits, Renderer};
use crate::render::trace;
use crate::render::window_frame::{BoneOverlay, Drawn, OpenError, WindowFrame, WindowScene};
use crate::render::{FrameSettings, GpuContext, GpuError, GpuOptions};
use crate::world::Level;
use anyhow::{anyhow, bail};
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
    /// How frames are skinned, uploaded and drawn at start (the controls
    /// switch them).
    pub frame: FrameSettings,
    /// The most a frame may cost at the camera's detail levels at start
    /// (`--max-skinned-vertices`, `--max-triangles`, `--gpu-frame-budget`;
    /// the controls change them).
    pub limits: DetailLimits,
    /// Scripted actions (clip switches, reloads, memory samples).
    pub schedule: Schedule,
    /// Show the built-in planar rig (`--planar`): the driven character plays
    /// its clips (quaternions) beside copies posed by blending joint angles.
    pub planar: bool,
}

/// Pause between redraws while the window is minimised.
const MINIMISED_NAP: std::time::Duration = std::time::Duration::from_millis(20);
/// How often the window title (model, FPS) is refreshed, seconds.
const TITLE_PERIOD: f64 = 0.5;

/// Runs the viewer; falls back to a headless animated PNG without a display.
pub fn run(options: &ViewOptions) -> anyhow::Result<()> {
    let model = if options.planar {
        Arc::new(planar_rig::planar_rig()?)
    } else {
        Arc::new(load_model(options.model.as_deref(), &options.load)?)
    };
    for w in &model.warnings {
        eprintln!("vkskin: warning: {}: {w}", model.file);
    }
    let clip = initial_clip(&model, options.clip.as_deref())?;
    let controller = if options.planar {
        // The planar rig plays its clips; it has no controller.
        let motion = planar_rig::planar_motion(&model)?;
        let errors = planar_scene::measure(&model.rig, &motion, planar_scene::MEASURE_SAMPLES)?;
        eprintln!("vkskin: planar: {}", errors.line(model.skeleton.names()));
        eprintln!("vkskin: planar: {}", planar_scene::LAYOUT);
        None
    } else {
        find_controller(
            &model,
            options.model.as_deref(),
            options.controller.as_deref(),
            model.load_options.max_memory,
        )?
    };
    if let Some((_, source)) = &controller {
        eprintln!("vkskin: controller: {source}");
    }
    let level = options.level.as_deref().map(Level::named).transpose()?;
    if level.is_some() && controller.is_none() {
        bail!("{}: --level needs a controller (--controller FILE)", model.file);
    }
    let has_display =
        ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    let headless =
        |reason: &str| fallback(options, &model, clip, controller.as_ref(), level.as_ref(), reason);
    if !has_display {
        return headless("no display (neither DISPLAY nor WAYLAND_DISPLAY is set)");
    }
    let event_loop = match EventLoop::new() {
        Ok(e) => e,
        Err(e) => return headless(&format!("cannot open the display ({e})")),
    };
    event_loop.set_control_flow(ControlFlow::Poll);
    if trace::enabled() {
        // Ctrl-C closes the window, so the frame trace is still written.
        trace::catch_interrupt();
    }
    let mut app = Viewer::new(options.clone(), model.clone(), clip, controller.clone());
    app.level = level.clone();
    let ran = event_loop.run_app(&mut app);
    let validation = app.teardown();
    if let Some(reason) = app.fallback.take() {
        return headless(&reason);
    }
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    ran.map_err(|e| anyhow!("event loop: {e}"))?;
    validation?;
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
    Ok(asset::load_or_default(path, load)?)
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
    /// The last drawn frame's camera (world to clip space), for the gizmos.
    last_view_proj: Option<nalgebra::Matrix4<f32>>,
    last_title: f64,
    title: String,
    /// The window was closed with a screenshot still to take: one last frame takes it.
    closing: bool,
    /// The level the character walks through, if any.
    level: Option<Level>,
    /// Scripted actions of `options.schedule`.
    script: Script,
    /// Freed pages handed back to the system after rebuilds.
    heap_trim: HeapTrim,
    /// The window size of the last rendered frame (a change is a rebuild).
    drawn_size: (u32, u32),
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
            frame: options.frame,
            detail_limits: options.limits,
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
            heap_trim: HeapTrim::default(),
            drawn_size: (0, 0),
            started: Instant::now(),
            last_frame: None,
            last_view_proj: None,
            last_title: -1.0,
            title: String::with_capacity(128),
            closing: false,
            level: None,
            script,
        }
    }

    /// Frees the GPU objects (then the window); validation messages are the error.
    fn teardown(&mut self) -> Result<(), GpuError> {
        let closed = self.gpu.take().map_or(Ok(()), Gpu::destroy);
        self.input = None;
        self.window = None;
        closed
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
        let (options, planar) = (&self.options, self.options.planar);
        let built = self.first_model.take().ok_or_else(|| anyhow!("started twice")).and_then(
            |(model, controller)| {
                let level = self.level.as_ref();
                let planar = planar.then(|| planar_rig::planar_motion(&model)).transpose()?;
                build_scene(&gpu.ctx, model, controller, level, &mut self.state, &frame, options, planar)
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
        let (vsync, frame_settings) = (self.state.vsync, self.state.frame);
        let detail_limits = self.state.detail_limits;
        let mut state = ViewerState { vsync, frame: frame_settings, detail_limits, ..Default::default() };
        let options = &self.options;
        let built = initial_clip(&model, None).and_then(|clip| {
            state.clip_a = clip;
            let controller = find_controller(&model, Some(&path), None, model.load_options.max_memory)?;
            let level = self.level.as_ref();
            build_scene(&gpu.ctx, model, controller, level, &mut state, frame, options, None)
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
        self.heap_trim.request();
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
        let old = settings.frame.blend;
        if old == self.state.frame.blend {
            return Ok(());
        }
        settings.frame.blend = self.state.frame.blend;
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
                self.heap_trim.request();
            }
            Err(e) => {
                eprintln!("vkskin: cannot switch to {:?} skinning: {e}", self.state.frame.blend.method);
                self.state.frame.blend = old;
            }
        }
        Ok(())
    }

    /// One frame: the scripted actions and requests (memory report, load,
    /// method switch, resize), then begin (resize, wait for the next frame
    /// slot) -> pose -> controls -> draw -> the frame's bookkeeping. Returns
    /// Ok without rendering when minimised or when the swapchain was out of date.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        self.redraws += 1;
        self.between_frames()?;
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
        let now = Instant::now();
        let dt = self.last_frame.map_or(0.0, |t| now.duration_since(t).as_secs_f32()).min(0.25);
        self.last_frame = Some(now);
        let clock = now.duration_since(self.started).as_secs_f64();

        // Controls first: what they change (parameters, passes, detail,
        // the room they leave for the view) applies to this frame's poses,
        // so the crowd is foreseen with the camera and passes that draw it.
        // They show the poses and timings of the frame before.
        let raw = input.egui.take_egui_input(&window);
        let egui_ctx = input.egui_ctx().clone();
        let (state, info, anim, timings, log) =
            (&mut self.state, &scene.info, &scene.animation, &self.timings, &self.log);
        let view_proj = self.last_view_proj;
        let output = egui_ctx.run_ui(raw, |ui| {
            ui::draw(ui.ctx(), state, info, anim, timings, log);
            if let Some(view_proj) = &view_proj {
                ui::reach_gizmo(ui.ctx(), anim, view_proj);
            }
        });
        input.egui.handle_platform_output(&window, output.platform_output);
        let primitives = egui_ctx.tessellate(output.shapes, output.pixels_per_point);
        let (textures, scale) = (output.textures_delta, output.pixels_per_point);
        frame.prepare_overlay(ctx, &mut scene.renderer, slot, textures, primitives, scale)?;
        apply_display(ctx, scene, &self.state)?;
        // Centre the view in the part of the window the controls leave free.
        let width = frame.size().0 as f32;
        let shift = lens_shift(free_span(&egui_ctx, width), width);

        // Poses, the crowd's as this frame will see it.
        let next = NextFrame { aspect: frame.aspect(), height: frame.size().1, lens_shift: shift };
        pose(scene, &mut self.state, &mut self.log, &mut self.timings, dt, clock, next)?;

        // Draw, with the camera the crowd was foreseen by (a level's
        // camera follows the character in `pose`).
        let mut camera = scene.camera.camera(frame.aspect());
        camera.lens_shift = shift;
        // The gizmos of the next frame's controls are drawn with this camera.
        self.last_view_proj = Some(camera.view_proj());
        let last = self.closing || self.options.frames.is_some_and(|n| self.frames_rendered + 1 >= n);
        let screenshot = last && self.options.screenshot.is_some();
        let Some(drawn) = draw(ctx, frame, scene, &self.state, &camera, screenshot)? else {
            // No image (the swapchain is out of date): the next redraw recreates it.
            return Ok(());
        };
        self.frames_rendered += 1;
        if self.drawn_size != (size.width, size.height) {
            // A new swapchain (its old images go by deferred release).
            self.drawn_size = (size.width, size.height);
            self.heap_trim.request();
        }
        self.heap_trim.after_frame();
        self.timings.record_gpu(&drawn);
        self.timings.detail = scene.renderer.detail_counts();
        self.timings.hidden = scene.renderer.hidden_characters();
        self.timings.pixel_error = scene.renderer.detail_pixel_error();
        self.timings.over_budget = scene.renderer.over_budget();
        self.timings.gpu_frame_triangles = scene.renderer.gpu_frame_triangles();
        self.timings.gpu_frame_cost = scene.renderer.gpu_frame_steering().and_then(|s| s.cost());
        self.timings.triangles = scene.renderer.triangles_per_pass();
        self.timings.shadow_triangles = scene.renderer.shadow_triangles();
        self.timings.skinned_vertices = scene.renderer.skinned_vertices();
        if let (Some(shot), Some(path)) = (&drawn.screenshot, &self.options.screenshot) {
            image_out::write_png(path, shot.width, shot.height, &shot.rgba)?;
            eprintln!("vkskin: wrote {} ({}x{})", path.display(), shot.width, shot.height);
        }
        let file = scene.model.file.clone();
        self.update_title(&window, &file, clock);
        self.end_if_done(event_loop)
    }

    /// Between frames: what the script asks for (a memory report, a clip or
    /// method switch, a reload), a model the controls asked to load, a
    /// skinning method switch, and the next scripted window resize.
    fn between_frames(&mut self) -> anyhow::Result<()> {
        let clips = self.gpu.as_ref().and_then(|g| g.scene.as_ref()).map_or(0, |s| s.model.clips.len());
        if self.script.step(self.frames_rendered, clips, &mut self.state).report_memory
            && let Some(gpu) = &self.gpu
        {
            // Nothing in flight first: the driver's work on the frames
            // submitted allocates and frees while it runs (on lavapipe on
            // its own threads, from the same heap), and a sample taken
            // meanwhile counted it or not by timing: the crowd soak on a
            // loaded CI machine read 235 MB of heap at a frame where
            // quieter runs read 204.
            gpu.ctx.wait_idle()?;
            let memory = gpu.ctx.memory_use();
            let sample = MemorySample {
                frame: self.frames_rendered,
                rss_bytes: resident_bytes(),
                heap_bytes: crate::heap::in_use_bytes(),
                gpu_allocated_bytes: memory.allocated_bytes,
                gpu_reserved_bytes: memory.reserved_bytes,
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
        Ok(())
    }

    /// The window title (model, FPS), refreshed every `TITLE_PERIOD` seconds.
    fn update_title(&mut self, window: &Window, file: &str, clock: f64) {
        if clock - self.last_title < TITLE_PERIOD {
            return;
        }
        self.last_title = clock;
        use std::fmt::Write;
        self.title.clear();
        let name =
            Path::new(file).file_name().map_or(std::borrow::Cow::Borrowed(""), |n| n.to_string_lossy());
        let _ = write!(self.title, "vkskin - {name} - {:.0} fps", self.timings.fps);
        window.set_title(&self.title);
    }

    /// Ends the run after the last frame of `--frames` (or the closing
    /// frame); a run that cannot render its frames fails instead of spinning.
    fn end_if_done(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
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

/// What the crowd's foresight needs of the frame drawn next: its target's
/// aspect and height, and the camera's lens shift.
#[derive(Debug, Clone, Copy)]
struct NextFrame {
    aspect: f32,
    height: u32,
    lens_shift: f32,
}

/// Advances the scene by `dt` seconds: the driven character (and, in a
/// level, the camera following it), the crowd (as the `next` frame's
/// camera will see it: small and unseen characters are evaluated less
/// often), and the frame-rate and pose timings.
fn pose(
    scene: &mut Scene,
    state: &mut ViewerState,
    log: &mut EventLog,
    timings: &mut FrameTimings,
    dt: f32,
    clock: f64,
    next: NextFrame,
) -> anyhow::Result<()> {
    let forward = scene.camera.ground_forward();
    state.camera_forward = [forward.x, forward.z];
    if let Some(crowd) = scene.crowd.as_mut().filter(|_| state.crowd_follows) {
        follow_controls(crowd, scene.animation.character().controller(), &state.parameter_changes);
    }
    scene.animation.update(dt, state, log, clock)?;
    if scene.animation.in_level() {
        // The camera follows the character (its chest), gently.
        let at = scene.animation.transform().column(3).xyz() + nalgebra::Vector3::y() * 1.0;
        let follow = 1.0 - (-dt.max(0.0) / 0.15).exp();
        scene.camera.target += (at - scene.camera.target.coords) * follow;
    }
    if let Some(crowd) = scene.crowd.as_mut() {
        let mut camera = scene.camera.camera(next.aspect);
        camera.lens_shift = next.lens_shift;
        let sight = scene.renderer.foresee(&*crowd, &camera, next.height);
        crowd.foresee(sight);
        crowd.update(dt)?;
    }
    if let Some(planar) = scene.planar.as_mut() {
        // The copies follow the driven character's clip time (speed,
        // pause and scrubbing included).
        let time = scene.animation.character().playhead().map_or(0.0, |(_, t, _)| t);
        planar.pose_at(time)?;
    }
    // The driven character's and the crowd's update.
    let crowd_us = scene.crowd.as_ref().map_or(0.0, |c| c.last_update().as_secs_f64() * 1e6);
    timings.cpu_pose_us = scene.animation.cpu_pose_us() + crowd_us;
    timings.crowd_posed = scene.crowd.as_ref().map(Crowd::posed);
    if dt > 0.0 {
        let fps = 1.0 / dt as f64;
        timings.fps = if timings.fps > 0.0 { timings.fps * 0.9 + fps * 0.1 } else { fps };
    }
    Ok(())
}

/// What the controls set that the renderer applies between frames: the
/// skinning placement, wireframe, passes, detail levels, the detail
/// limits and the weight heat map.
fn apply_display(ctx: &GpuContext, scene: &mut Scene, state: &ViewerState) -> anyhow::Result<()> {
    scene.renderer.set_placement(state.frame.placement);
    scene.renderer.set_wireframe(state.wireframe);
    scene.renderer.set_passes(state.frame.passes);
    scene.renderer.set_detail(state.frame.detail);
    scene.renderer.set_detail_limits(state.detail_limits);
    let heat_joint = match state.debug_view {
        DebugView::WeightHeatMap => state.selected_joint,
        _ => None,
    };
    scene.renderer.set_heat_joint(ctx, heat_joint)?;
    Ok(())
}

/// Draws the scene (the driven character, then the crowd) seen by
/// `camera`, with the bones when shown, into the window; `None` when the
/// swapchain was out of date.
fn draw(
    ctx: &GpuContext,
    frame: &mut WindowFrame,
    scene: &mut Scene,
    state: &ViewerState,
    camera: &Camera,
    screenshot: bool,
) -> anyhow::Result<Option<Drawn>> {
    let world = scene.animation.transform();
    let character = scene.animation.character();
    let driven = SkinInput { pose: character.pose(), version: character.version() };
    let poses =
        ViewerPoses { driven: (driven, world), crowd: scene.crowd.as_ref(), planar: scene.planar.as_ref() };
    let bones = state.show_bones.then(|| BoneOverlay {
        world,
        joints: character.output().world(),
        parents: scene.model.skeleton.parents(),
        selected: state.selected_joint,
    });
    let request = WindowScene { poses: &poses, camera, show_mesh: state.show_mesh, bones, screenshot };
    Ok(frame.draw(ctx, &mut scene.renderer, &request)?)
}

/// The camera's lens shift (`Camera::lens_shift`) that moves the image
/// centre to the middle of `span` (pixels) in a window `width` wide.
fn lens_shift(span: (f32, f32), width: f32) -> f32 {
    if width > 0.0 { ((span.0 + span.1) * 0.5 - width * 0.5) / (width * 0.5) } else { 0.0 }
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

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if trace::interrupted() {
            event_loop.exit();
        }
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
}
