//! What the on-screen controls change and what they show: the contract
//! between the UI (`app::ui`), the mapping onto the character (`app::animation`) and
//! the viewer loop (`app::viewer`).

use crate::character::{ParameterId, ParameterValue};
use crate::render::FrameSettings;
use crate::render::detail_levels::DETAIL_LEVELS;
use crate::render::draw_order::OverBudget;
use crate::render::gpu_frame_budget::FrameCost;
use crate::render::renderer::DetailLimits;
use crate::render::window_frame::Drawn;
use crate::world::Authority;
use std::collections::VecDeque;
use std::path::PathBuf;

/// What drives the character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnimationMode {
    /// The model's controller (state machine), driven by its parameters.
    #[default]
    Controller,
    /// Clip A, optionally blended with clip B (no state machine).
    Clips,
}

/// Debug views of the skinned mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebugView {
    /// The animated, lit mesh.
    #[default]
    Shaded,
    /// The skeleton at its bind pose (palette = identity where rest = bind).
    BindPose,
    /// Every palette entry the identity: the mesh as authored, whatever the
    /// pose (the first check when vertices explode).
    IdentityPalette,
    /// The selected joint's skin weight per vertex, as colour.
    WeightHeatMap,
}

/// Settings the user controls. The UI writes them; the animation system and
/// the viewer read them every frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewerState {
    /// Controller or manual clips (the latter when the model has no controller).
    pub mode: AnimationMode,
    /// Parameter changes asked for by the controls since the last frame.
    pub parameter_changes: Vec<(ParameterId, ParameterValue)>,
    /// The crowd behind the driven character takes those changes too.
    pub crowd_follows: bool,
    /// Playback runs.
    pub playing: bool,
    /// Clips loop (else they clamp at their ends).
    pub looping: bool,
    /// Playback speed; negative plays backwards, 0 pauses.
    pub speed: f32,
    /// The main clip in `AnimationMode::Clips` (None: rest pose).
    pub clip_a: Option<usize>,
    /// A second clip blended over `clip_a`.
    pub clip_b: Option<usize>,
    /// Weight of `clip_b` in [0, 1].
    pub blend: f32,
    /// Keep both clips at the same normalised phase (walk/run of different lengths).
    pub sync_phase: bool,
    /// Scrub request from the timeline: jump `clip_a` to this time (seconds).
    pub scrub_to: Option<f32>,
    /// Step request: move by this many 1/30 s frames (negative: back).
    pub step_frames: i32,
    /// Draw the mesh.
    pub show_mesh: bool,
    /// Draw the bones over the mesh.
    pub show_bones: bool,
    /// Wireframe instead of filled triangles.
    pub wireframe: bool,
    /// Compute or vertex-shader skinning, the influence blend (a change
    /// rebuilds the renderer), the palette upload and the draw passes.
    pub frame: FrameSettings,
    /// The most a frame may cost at the camera's detail levels
    /// (`Renderer::set_detail_limits`).
    pub detail_limits: DetailLimits,
    /// Debug view.
    pub debug_view: DebugView,
    /// Selected skeleton joint (highlighted bone; heat-map joint).
    pub selected_joint: Option<usize>,
    /// Morph weights come from `morph_weights` instead of the clip.
    pub morph_override: bool,
    /// Manual morph weights (flat, as `Pose::morph_weights`).
    pub morph_weights: Vec<f32>,
    /// Wait for vertical sync when presenting.
    pub vsync: bool,
    /// A model file to load (drag and drop, or the UI).
    pub load_request: Option<PathBuf>,
    /// In a level: who moves the character (the T key or the controls toggle it).
    pub authority: Authority,
    /// In a level: movement keys held (W/A/S/D or the arrows; Shift runs).
    pub keys: MoveKeys,
    /// In a level: the jump key was pressed (Space); consumed by the next frame.
    pub jump: bool,
    /// In a level: a point the nearer hand reaches for, in the character's
    /// own frame (metres to its right, up from its feet, ahead); `None`:
    /// the hands reach for the level's rails when near one.
    pub reach: Option<[f32; 3]>,
    /// The camera's forward direction on the ground (x, z): keys move the
    /// character relative to the view.
    pub camera_forward: [f32; 2],
}

/// Movement keys held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveKeys {
    /// W or Up.
    pub forward: bool,
    /// S or Down.
    pub back: bool,
    /// A or Left.
    pub left: bool,
    /// D or Right.
    pub right: bool,
    /// Shift: run instead of walk.
    pub run: bool,
}

impl Default for ViewerState {
    fn default() -> Self {
        ViewerState {
            mode: AnimationMode::Controller,
            parameter_changes: Vec::new(),
            crowd_follows: true,
            playing: true,
            looping: true,
            speed: 1.0,
            clip_a: None,
            clip_b: None,
            blend: 0.0,
            sync_phase: true,
            scrub_to: None,
            step_frames: 0,
            show_mesh: true,
            show_bones: false,
            wireframe: false,
            frame: FrameSettings::default(),
            detail_limits: DetailLimits::default(),
            debug_view: DebugView::Shaded,
            selected_joint: None,
            morph_override: false,
            morph_weights: Vec::new(),
            vsync: true,
            load_request: None,
            authority: Authority::Movement,
            keys: MoveKeys::default(),
            jump: false,
            reach: None,
            camera_forward: [0.0, 1.0],
        }
    }
}

/// Per-frame measurements shown in the timing panel.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameTimings {
    /// CPU time of pose evaluation (sampling, blending, hierarchy, palettes), microseconds.
    pub cpu_pose_us: f64,
    /// Palette and morph-weight bytes written this frame.
    pub upload_bytes: u64,
    /// GPU time of palette upload, microseconds (0 when palettes are read in place).
    pub gpu_upload_us: f64,
    /// GPU time of the skinning dispatch, microseconds.
    pub gpu_skin_us: f64,
    /// GPU time of drawing, microseconds.
    pub gpu_draw_us: f64,
    /// GPU time of the whole frame, first command to last, microseconds.
    pub gpu_frame_us: f64,
    /// The triangles the GPU frame budget allows the next frame
    /// (`Renderer::gpu_frame_triangles`; `None` without one, or before a
    /// frame was measured).
    pub gpu_frame_triangles: Option<u64>,
    /// What the GPU frame budget measured a frame to cost, fixed and per
    /// triangle (`GpuFrameBudget::cost`; `None` until frames spread).
    pub gpu_frame_cost: Option<FrameCost>,
    /// Frames per second, smoothed.
    pub fps: f64,
    /// Characters in view at each detail level, and those culled (out of view).
    pub detail: ([u32; DETAIL_LEVELS], u32),
    /// Of the culled, those no pass draws (not even their shadows).
    pub hidden: u32,
    /// The pixel error the levels were chosen within: half a pixel, more
    /// where a detail limit (vertices, triangles, GPU frame time)
    /// coarsened them.
    pub pixel_error: f32,
    /// Which limits coarsened them (`Renderer::over_budget`).
    pub over_budget: OverBudget,
    /// Triangles the characters drew in the main pass.
    pub triangles: u64,
    /// Triangles they drew into the shadow cascades together (0 without
    /// shadows).
    pub shadow_triangles: u64,
    /// Vertices the skin dispatch skinned (0 on the vertex-skinning path).
    pub skinned_vertices: u64,
    /// Crowd characters posed this frame (`None` without a crowd): small
    /// ones are posed less often, unseen ones not at all.
    pub crowd_posed: Option<usize>,
}

impl FrameTimings {
    /// Takes a drawn frame's upload bytes and the GPU times of the earlier
    /// frame that used its slot (when it measured any).
    pub fn record_gpu(&mut self, drawn: &Drawn) {
        if let Some(t) = drawn.previous_gpu {
            self.gpu_skin_us = t.skin_us;
            self.gpu_draw_us = t.draw_us;
            self.gpu_frame_us = t.frame_us;
            self.gpu_upload_us = t.upload_us;
        }
        self.upload_bytes = drawn.skin.palette_bytes_written + drawn.skin.weight_bytes_written;
    }
}

/// One event as it fired.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// Wall-clock seconds since the viewer started.
    pub at: f64,
    /// Clip name (or index).
    pub clip: String,
    /// Clip time of the event.
    pub time: f32,
    /// Event name.
    pub name: String,
}

/// The most recent events, newest last; bounded so it never grows.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    entries: VecDeque<LoggedEvent>,
}

impl EventLog {
    /// Entries kept.
    pub const CAPACITY: usize = 64;

    /// Adds an event, dropping the oldest past `CAPACITY`.
    pub fn push(&mut self, event: LoggedEvent) {
        if self.entries.len() == Self::CAPACITY {
            self.entries.pop_front();
        }
        self.entries.push_back(event);
    }

    /// Entries, oldest first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &LoggedEvent> {
        self.entries.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
