//! Command-line arguments (clap).

use super::checked;
use crate::anim::RotationBlend;
use crate::asset::LoadOptions;
use crate::asset::limits::parse_bytes;
use crate::formats::dump::Skinning;
use crate::render::frame_settings::{
    DqsSplit, DrawDetail, FrameSettings, InfluenceBlend, PaletteUpload, PassSetup, PoseEvaluation,
    SkinningMethod, SkinningMode, SkinningPlacement,
};
use crate::render::renderer::DetailLimits;
use clap::{Parser, Subcommand};
use std::time::Duration;

/// vkskin: look at, debug and profile skinned glTF characters.
///
/// Without a subcommand it opens the viewer: `vkskin Fox.glb --frames 90`
/// is `vkskin view Fox.glb --frames 90`, and `vkskin` alone shows the
/// built-in character.
#[derive(Debug, Parser)]
#[command(name = "vkskin", version, about)]
pub struct Cli {
    /// What to do; without a subcommand, `view`.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The viewer's options, when no subcommand is given.
    #[command(flatten)]
    pub view: ViewArgs,
    /// Limits on what a model file may make vkskin read and allocate
    /// (global: given before or after the subcommand).
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl Cli {
    /// The command to run: the subcommand, else `view` with the options
    /// given; viewer options before another subcommand are an error.
    pub fn into_command(self) -> Result<(Command, LoadOptions), String> {
        let options = self.limits.load_options();
        match self.command {
            None => Ok((Command::View(self.view), options)),
            Some(command) if self.view == ViewArgs::default() => Ok((command, options)),
            Some(_) => Err("viewer options (and a model) before a subcommand: put them after it, or leave the subcommand out to view".into()),
        }
    }
}

/// Limits on model files, for every command that reads one.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// The most memory one model file (with its buffers and images) may
    /// make vkskin allocate, e.g. 512M or 4G; a smaller file may use less
    /// (128 MiB plus 16 times its size).
    #[arg(long, global = true, value_name = "BYTES", default_value = "2G", value_parser = parse_bytes, allow_hyphen_values = true)]
    pub max_memory: u64,
    /// Let buffer and image URIs name files outside the model's folder
    /// (absolute paths, file: URIs, `..`); without it they are refused.
    #[arg(long, global = true)]
    pub allow_outside_uris: bool,
    /// Characters sample their clips compressed (bound 0.01 cm, see
    /// `inspect --compression`) instead of the exact keys.
    #[arg(long, global = true)]
    pub compressed_clips: bool,
    /// Characters interpolate LINEAR rotation keys by normalised lerp
    /// (ozz-animation's fast path: about a tenth faster per character
    /// update, within 0.0006 rad of slerp for keys 30 degrees apart)
    /// instead of slerp, as glTF specifies.
    #[arg(long, global = true)]
    pub nlerp: bool,
}

impl LimitArgs {
    /// The importer's options for these limits.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            max_memory: self.max_memory,
            allow_outside_uris: self.allow_outside_uris,
            compressed_clips: self.compressed_clips,
            rotation_blend: if self.nlerp { RotationBlend::Nlerp } else { RotationBlend::Slerp },
            ..LoadOptions::default()
        }
    }
}

/// The most a frame may cost at the camera's detail levels, for `render`
/// and `view`.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct DetailLimitArgs {
    /// The most vertices a frame skins at the camera's detail levels (at
    /// least 1; a level's scenery counted): past it every character draws
    /// a coarser level, the same pixel error for all. Default: what half
    /// the device's memory holds of skinned output.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub max_skinned_vertices: Option<u64>,
    /// The most triangles the characters draw in a frame at the camera's
    /// detail levels, every pass together (the main pass, a depth prepass
    /// and the shadow cascades; at least 1; the scenery not counted): past
    /// it every character draws a coarser level, the same pixel error for
    /// all, so a crowd's raster work stays within what the GPU draws in a
    /// frame. Default: no limit.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub max_triangles: Option<u64>,
    /// The most GPU time a frame may take, in milliseconds (1 to 60000;
    /// 16.7 for 60 Hz): each frame's triangle budget is set from the GPU
    /// time finished frames took (their timestamps), aiming at 90 % of it,
    /// so on any GPU the characters draw as finely as the time allows.
    /// Frames are measured from the third on. Default: no limit.
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = checked::frame_budget)]
    pub gpu_frame_budget: Option<Duration>,
}

impl DetailLimitArgs {
    /// The renderer's limits these arguments ask for.
    pub fn detail_limits(&self) -> DetailLimits {
        DetailLimits {
            skinned_vertices: self.max_skinned_vertices,
            triangles: self.max_triangles,
            gpu_frame: self.gpu_frame_budget,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the node tree, skins, clips, meshes, morph targets and warnings.
    Inspect {
        /// A .glb or .gltf file.
        #[arg(value_parser = checked::path)]
        model: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Instead of the file's contents: compress every clip (error bound
        /// 0.01 cm at virtual vertices 3 cm from each joint) and print, per
        /// clip, ACL's raw baseline, the file's keys and the compressed
        /// bytes, the ratios and the measured errors.
        #[arg(long)]
        compression: bool,
    },
    /// Write joint world matrices and skinned vertex positions as JSON: one
    /// clip at a time, or the frame a controller poses (`--controller`).
    Dump(DumpArgs),
    /// Render frames headless (no window): one frame to PNG, or `--frames N` to an animated PNG.
    Render(RenderArgs),
    /// Run a character's controller headless (no GPU) and print, per frame,
    /// its state, transition, clip weights and events.
    Simulate(SimulateArgs),
    /// Open the viewer window (without a display: render headless to an animated PNG).
    View(ViewArgs),
    /// Profile palette upload and skinning across character counts, skinning
    /// modes, upload modes and pass counts: a table, DIR/results.json and SVG plots.
    Bench(BenchArgs),
    /// Compare two bench result folders without running anything: per
    /// configuration and figure, the change in the median and a verdict
    /// (improved, regressed, within noise); writes NEW_DIR/comparison.json.
    Compare(CompareArgs),
    /// Write the built-in default character (generated by our own code) as a GLB.
    GenerateDefault {
        /// Output file.
        #[arg(long, default_value = "assets/default_character.glb", value_parser = checked::path)]
        out: String,
    },
    /// Write the dual-quaternion test model (a tube twisted by its second
    /// joint, generated by our own code) as a GLB.
    #[command(hide = true)]
    GenerateTwistCylinder {
        /// Output file.
        #[arg(long, default_value = "twist_cylinder.glb", value_parser = checked::path)]
        out: String,
    },
}

/// Arguments of `vkskin render`.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderArgs {
    /// A .glb or .gltf file; without one, the built-in character (with its
    /// built-in controller).
    #[arg(value_parser = checked::path)]
    pub model: Option<String>,
    /// Clip name or index; without it the rest pose is drawn (or the first
    /// clip with `--frames`). With a controller (`--controller`, or
    /// MODEL.ron next to the model) the controller chooses the clips: `--clip`
    /// then plays that one clip instead of the sidecar (and excludes `--controller`).
    #[arg(long)]
    pub clip: Option<String>,
    /// Time of the first frame in seconds on the file's timeline (default:
    /// the clip's start; any finite number). With a controller: seconds
    /// simulated from 0 s before the first frame, >= 0, and with --frames at
    /// most 100000 frames at --fps (about 55 min at 30 fps) in all.
    #[arg(long, allow_negative_numbers = true, value_parser = checked::time_f32)]
    pub time: Option<f32>,
    /// Image size, WIDTHxHEIGHT (each 1 to 16384).
    #[arg(long, default_value = "640x480", value_name = "WxH", allow_hyphen_values = true)]
    pub size: String,
    /// Number of frames, 1 to 10000: more than one writes an animated PNG
    /// (streamed to the file frame by frame).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::render_frames)]
    pub frames: Option<u32>,
    /// Frames per second of the animation (time step and playback rate), 1 to 1000.
    #[arg(long, default_value_t = 30.0, allow_negative_numbers = true, value_parser = checked::fps_f32)]
    pub fps: f32,
    /// Draw triangle edges only.
    #[arg(long)]
    pub wireframe: bool,
    /// Skin in the vertex shader instead of the compute pass (comparison path).
    #[arg(long)]
    pub vertex_skinning: bool,
    /// Characters of the model on a grid, each with its own animation state
    /// and a pseudo-random phase (one compute dispatch skins them all).
    /// 1 to 100000; the device's buffer limits may allow fewer, which is
    /// checked before any work.
    #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true, value_parser = checked::characters)]
    pub characters: u32,
    /// Draw passes: 1 (main), 2 (depth prepass + main) or 5 (four shadow
    /// cascades of the key light + main, with shadows; outside a level
    /// they fall on the viewer's ground).
    #[arg(long, value_enum, value_name = "1|2|5", default_value = "1")]
    pub passes: PassSetup,
    /// How palettes reach the GPU.
    #[arg(long, value_enum, value_name = "MODE", default_value = "dirty")]
    pub upload: PaletteUpload,
    /// Where a crowd's poses are evaluated (with --characters).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "cpu")]
    pub pose: PoseEvaluation,
    /// Detail levels: auto (distant characters draw simplified meshes,
    /// within half a pixel; those out of view only cast shadows) or full
    /// (every character its full mesh in every pass).
    #[arg(long, value_enum, value_name = "auto|full", default_value = "auto")]
    pub detail: DrawDetail,
    #[command(flatten)]
    pub limits: DetailLimitArgs,
    /// How each vertex's joint influences are blended, on either path.
    #[arg(long, value_enum, default_value = "linear")]
    pub skinning_method: SkinningMethod,
    /// With `--skinning-method dqs`: where each skinning matrix is split
    /// into a dual quaternion and a scale part.
    #[arg(long, value_enum, default_value = "shader")]
    pub dqs_split: DqsSplit,
    /// Drive the character with this controller file (RON) instead of one
    /// clip: frames are simulated from 0 s, `--time` skips ahead. Default:
    /// MODEL.ron next to the model, when there is one (as `view` and
    /// `simulate` find it).
    #[arg(long, value_name = "FILE", value_parser = checked::path)]
    pub controller: Option<String>,
    /// With a controller: set a parameter at a time, `T:NAME=VALUE`, or fire
    /// a trigger, `T:NAME` (repeatable; T at most the last frame's time);
    /// with --characters, on every character.
    #[arg(long = "set", value_name = "T:NAME[=VALUE]", allow_hyphen_values = true)]
    pub sets: Vec<String>,
    /// With a controller: put the character in a level (`demo`), moving
    /// through its physics world with its feet placed, the level drawn around it.
    #[arg(long, value_name = "NAME")]
    pub level: Option<String>,
    /// With --level: where to start (the demo level: open, stairs, ramp,
    /// wall) [default: open].
    #[arg(long, value_name = "NAME")]
    pub spawn: Option<String>,
    /// With --level: `animation` (root motion) or `movement` (the speed
    /// parameter, m/s, at most 50) moves it [default: animation].
    #[arg(long, value_name = "animation|movement")]
    pub authority: Option<String>,
    /// Vulkan device: an index or part of its name.
    #[arg(long, value_name = "NAME|INDEX")]
    pub device: Option<String>,
    /// Enable the Khronos validation layer (with synchronization validation); any message fails the command.
    #[arg(long)]
    pub validation: bool,
    /// Output PNG (or animated PNG) file.
    #[arg(long, value_parser = checked::path)]
    pub out: String,
    /// Draw the built-in planar rig instead of a model: its joint angles
    /// blended linearly beside the same motion as quaternions (slerp), in
    /// one plane and in 3D from Euler angles; prints how far they differ.
    #[arg(long)]
    pub planar: bool,
    /// A frame trace to write.
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// `--trace FILE.json`, the same on `render`, `view` and `bench`.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct TraceArgs {
    /// Write a frame trace (Chrome trace-event JSON: chrome://tracing,
    /// Perfetto): CPU spans (pose, palette write, record, submit, wait) and
    /// each frame's GPU phases on the same clock.
    #[arg(long, value_name = "FILE.json", value_parser = checked::path)]
    pub trace: Option<String>,
}

impl RenderArgs {
    /// The frame settings these arguments ask for.
    pub fn frame_settings(&self) -> FrameSettings {
        FrameSettings {
            placement: if self.vertex_skinning {
                SkinningPlacement::Vertex
            } else {
                SkinningPlacement::Compute
            },
            blend: InfluenceBlend { method: self.skinning_method, dqs_split: self.dqs_split },
            upload: self.upload,
            passes: self.passes,
            pose: self.pose,
            detail: self.detail,
        }
    }
}

/// Arguments of `vkskin view`.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct ViewArgs {
    /// A .glb or .gltf file; without it, the built-in character.
    #[arg(value_parser = checked::path)]
    pub model: Option<String>,
    /// Clip name or index to play first, in the manual clip mode (default:
    /// "Walk", else the first clip).
    #[arg(long)]
    pub clip: Option<String>,
    /// Controller file (RON); default: `<model>.ron` next to the model, or
    /// the built-in character's own. Without one, the manual clip mode.
    #[arg(long, value_name = "FILE", value_parser = checked::path)]
    pub controller: Option<String>,
    /// Walk the character through a level (`demo`): W/A/S/D or the arrows
    /// move it (Shift runs), Space jumps, T switches between movement and
    /// animation authority.
    #[arg(long, value_name = "NAME")]
    pub level: Option<String>,
    /// Vulkan device: an index or part of its name.
    #[arg(long, value_name = "NAME|INDEX")]
    pub device: Option<String>,
    /// Enable the Khronos validation layer (with synchronization validation); any message fails the run.
    #[arg(long)]
    pub validation: bool,
    /// Render N frames (at least 1), then exit (scripted runs, tests).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub frames: Option<u64>,
    /// Write the last frame, as shown (controls included), to this PNG.
    #[arg(long, value_name = "PATH", value_parser = checked::path)]
    pub screenshot: Option<String>,
    /// Ask the window to resize to WxH at frame K (repeatable, or several
    /// separated by commas).
    #[arg(long, value_name = "K:WxH", value_delimiter = ',', allow_hyphen_values = true)]
    pub resize_at: Vec<String>,
    /// Initial window size (and the image size of the headless fallback).
    #[arg(long, value_name = "WxH", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Characters in the scene (1 to 100000): the one the controls drive,
    /// and N - 1 more behind it on a grid, each with its own state and phase.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::characters)]
    pub characters: Option<u32>,
    /// How joint influences are blended at start (the controls switch it).
    #[arg(long, value_enum)]
    pub skinning_method: Option<SkinningMethod>,
    /// Where dual-quaternion skinning splits each skinning matrix, at start
    /// (the controls switch it).
    #[arg(long, value_enum)]
    pub dqs_split: Option<DqsSplit>,
    /// Draw passes at start: 1 (main), 2 (depth prepass + main) or 5 (four
    /// shadow cascades + main, with shadows); the controls switch it.
    #[arg(long, value_enum, value_name = "1|2|5")]
    pub passes: Option<PassSetup>,
    /// Where the crowd's poses are evaluated (with --characters above 1).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "cpu")]
    pub pose: PoseEvaluation,
    /// Detail levels at start: auto (distant characters draw simplified
    /// meshes, within half a pixel; those out of view only cast shadows) or
    /// full; the controls switch it.
    #[arg(long, value_enum, value_name = "auto|full")]
    pub detail: Option<DrawDetail>,
    #[command(flatten)]
    pub limits: DetailLimitArgs,
    /// Scripted runs: play the next clip every N frames.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub switch_clip_every: Option<u64>,
    /// Scripted runs: load the model file again every N frames.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub reload_every: Option<u64>,
    /// Scripted runs: switch between linear and dual-quaternion skinning every N frames.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub switch_method_every: Option<u64>,
    /// Scripted runs: switch between the controller (state machine) and the
    /// manual clip mode every N frames.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub switch_controller_every: Option<u64>,
    /// Scripted runs: every N frames, wait for the GPU to finish the frames
    /// submitted and print host RSS, heap and GPU allocator bytes
    /// (`vkskin: memory: frame K rss B heap B gpu-allocated B gpu-reserved B`).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub report_memory_every: Option<u64>,
    /// Show the built-in planar rig: joint angles blended linearly beside
    /// the same motion as quaternions (slerp), in one plane and in 3D.
    #[arg(long)]
    pub planar: bool,
    /// A frame trace to write.
    #[command(flatten)]
    pub trace: TraceArgs,
}

impl ViewArgs {
    /// The frame settings the viewer starts with (the controls switch them).
    pub fn frame_settings(&self) -> FrameSettings {
        FrameSettings {
            blend: InfluenceBlend {
                method: self.skinning_method.unwrap_or_default(),
                dqs_split: self.dqs_split.unwrap_or_default(),
            },
            passes: self.passes.unwrap_or_default(),
            pose: self.pose,
            detail: self.detail.unwrap_or_default(),
            ..FrameSettings::default()
        }
    }
}

/// Arguments of `vkskin simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// A .glb or .gltf file; without one, the built-in character (with its
    /// built-in controller).
    #[arg(value_parser = checked::path)]
    pub model: Option<String>,
    /// The controller, its script and where it runs.
    #[command(flatten)]
    pub run: ControllerRunArgs,
    /// Seconds to simulate (frames at 0, 1/fps, ... up to this), >= 0, at
    /// most 10000000 frames at --fps.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true, value_parser = checked::duration)]
    pub duration: f64,
    /// One JSON object per frame and line (the DESIGN.md trace format).
    #[arg(long)]
    pub json: bool,
}

/// A controller-driven run of one character, as `simulate` and
/// `dump --controller` share it: the controller, the script of parameter
/// changes, the update rate and, optionally, a level.
#[derive(Debug, Clone, clap::Args)]
pub struct ControllerRunArgs {
    /// Controller file (RON); default: `<model>.ron` next to the model (the
    /// built-in controller for the built-in character). Without one, clip 0
    /// plays on a loop.
    #[arg(long, value_name = "FILE", value_parser = checked::path)]
    pub controller: Option<String>,
    /// Set a parameter at a time, `T:NAME=VALUE` (float or bool, negative
    /// values included), or fire a trigger, `T:NAME` (repeatable). T is in
    /// seconds, from 0 to the last frame.
    #[arg(long = "set", value_name = "T:NAME[=VALUE]", allow_hyphen_values = true)]
    pub sets: Vec<String>,
    /// Updates per second, 1 to 1000.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true, value_parser = checked::fps)]
    pub fps: f64,
    /// Put the character in a level (`demo`): it moves through the physics
    /// world, and each frame reports its position, the root motion asked for
    /// and applied, and its feet.
    #[arg(long, value_name = "NAME")]
    pub level: Option<String>,
    /// With --level: who moves the character: `animation` (the clips' root
    /// motion) or `movement` (the `speed` parameter, m/s along its heading,
    /// at most 50; the playback follows) [default: animation].
    #[arg(long, value_name = "animation|movement")]
    pub authority: Option<String>,
    /// With --level: where to start (the demo level: open, stairs, ramp,
    /// wall) [default: open].
    #[arg(long, value_name = "NAME")]
    pub spawn: Option<String>,
    /// With --level: no foot IK.
    #[arg(long)]
    pub no_ik: bool,
}

/// Arguments of `vkskin dump`.
#[derive(Debug, Clone, clap::Args)]
pub struct DumpArgs {
    /// A .glb or .gltf file; without one, the built-in character.
    #[arg(value_parser = checked::path)]
    pub model: Option<String>,
    /// Clip name or index; without it (and without --controller) the rest
    /// pose is dumped.
    #[arg(long, conflicts_with = "controller")]
    pub clip: Option<String>,
    /// Time in seconds. With --clip: on the file's timeline (wrapped as a
    /// looping player does); any finite number, negative ones included.
    /// With --controller: seconds into the simulation (>= 0; frames every
    /// 1/fps, a time between frames ends with one shorter update; in a
    /// level, a frame's time).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true, value_parser = checked::time)]
    pub time: f64,
    /// With `--controller FILE`: dump the frame that controller poses (as
    /// `simulate` runs it, same frames and changes) instead of one clip,
    /// with the `clips` and `layers` that produced it.
    #[command(flatten)]
    pub run: ControllerRunArgs,
    /// Where vertices are skinned.
    #[arg(long, value_enum, default_value = "cpu")]
    pub skinning: Skinning,
    /// Vulkan device for `--skinning gpu`: an index or part of its name.
    #[arg(long, value_name = "NAME|INDEX")]
    pub device: Option<String>,
    /// Enable the Khronos validation layer (with synchronization
    /// validation) for `--skinning gpu`; any message fails the command.
    #[arg(long)]
    pub validation: bool,
    /// Output file, `-` for standard output.
    #[arg(long, default_value = "-", value_parser = checked::path)]
    pub out: String,
}

/// Arguments of `vkskin bench`. Lists take commas (`--characters 1,10,100`);
/// an option not given takes the sweep's default (`--quick`: a small one).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// .glb or .gltf files; without any, the built-in character.
    #[arg(value_parser = checked::path)]
    pub models: Vec<String>,
    /// Character counts, each 1 to 100000 [default: 1,10,100,1000; --quick: 1,16].
    #[arg(long, value_delimiter = ',', value_name = "N,...", allow_negative_numbers = true, value_parser = checked::characters)]
    pub characters: Vec<u32>,
    /// Draw passes per frame: 1 (main), 2 (depth prepass + main), 5 (4
    /// shadow cascades + main) [default: 1,2,5; --quick: 1,2].
    #[arg(long, value_delimiter = ',', value_enum, value_name = "P,...")]
    pub passes: Vec<PassSetup>,
    /// Skinning modes [default: all; --quick: compute,vertex].
    #[arg(long, value_delimiter = ',', value_enum, value_name = "MODE,...")]
    pub skinning: Vec<SkinningMode>,
    /// Palette upload modes; dirty is measured animated and paused [default: all].
    #[arg(long, value_delimiter = ',', value_enum, value_name = "MODE,...")]
    pub upload: Vec<PaletteUpload>,
    /// Where the crowd's poses are evaluated: cpu (a palette uploaded per
    /// character), gpu (a compute pass poses from each character's
    /// playback) [default: cpu].
    #[arg(long, value_delimiter = ',', value_enum, value_name = "WHERE,...")]
    pub pose: Vec<PoseEvaluation>,
    /// Detail levels: auto (distant characters draw simplified meshes,
    /// those out of view only cast shadows), full (every character its
    /// full mesh in every pass) [default: auto].
    #[arg(long, value_delimiter = ',', value_enum, value_name = "auto|full,...")]
    pub detail: Vec<DrawDetail>,
    /// The most triangles the characters draw in a frame at their detail
    /// levels, every pass together (at least 1): past it every character
    /// draws coarser, within one larger pixel error (recorded per entry as
    /// `pixel_error`). Default: no limit.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::at_least_one)]
    pub max_triangles: Option<u64>,
    /// The most GPU time a frame may take, in milliseconds (1 to 60000;
    /// 16.7 for 60 Hz): each frame's triangle budget is set from the GPU
    /// time finished frames took, aiming at 90 % of it (recorded per entry
    /// as `triangles` and `pixel_error`: what this GPU draws in that time).
    /// Each configuration warms up over 20 frames to settle. Default: no
    /// limit.
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = checked::frame_budget)]
    pub gpu_frame_budget: Option<Duration>,
    /// Where the dqs modes split each skinning matrix: shader (per
    /// influence of every vertex), cpu (once per joint and frame, in the
    /// palette write). Default: both.
    #[arg(long, value_delimiter = ',', value_enum, value_name = "WHERE,...")]
    pub dqs_split: Vec<DqsSplit>,
    /// Timed frames per configuration, after a warm-up, 1 to 1000000
    /// [default: 100; --quick: 8].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = checked::bench_frames)]
    pub frames: Option<u32>,
    /// A small sweep that finishes in under a minute on lavapipe (what CI runs).
    #[arg(long)]
    pub quick: bool,
    /// Measure only the CPU side of a crowd frame, no GPU at all: every
    /// character's update (controller, sampling, blend, events, root
    /// motion, local-to-model, palette) at --characters (default
    /// 1000,10000,100000; --quick: 1000,10000), on one thread and on every
    /// core, all evaluated each frame and under the default LOD mix; per
    /// frame time, ns per joint, characters per core per 60 Hz frame and
    /// heap per character, into DIR/results.json (`kind: "cpu-only"`).
    /// With `--pose gpu` (or `cpu,gpu`): the CPU side of a GPU-posed crowd
    /// (controllers, events, root motion, each character's playback).
    #[arg(long, conflicts_with_all = [
        "passes", "skinning", "upload", "dqs_split", "detail", "max_triangles", "gpu_frame_budget", "device",
        "validation", "baseline",
    ])]
    pub cpu_only: bool,
    /// With --cpu-only: the controller (RON) every model's crowd plays,
    /// instead of each model's own (e.g. assets/controllers/robot_expressive.ron).
    #[arg(long, value_name = "FILE", requires = "cpu_only", value_parser = checked::path)]
    pub controller: Option<String>,
    /// The threads a crowd updates on, each count 1 to 1024. With
    /// --cpu-only, the counts to time [default: 1 and every core]; one
    /// thread is always timed too, and each other count's efficiency line
    /// compares with it. Otherwise one count [default: 1]: the threads
    /// each crowd poses on, which also record the frame's per-character
    /// work (draw order, palette or playback writes) from 2,048 characters
    /// up; `pose` figures are then per frame on that many threads.
    #[arg(long, value_delimiter = ',', value_name = "N,...", allow_negative_numbers = true, value_parser = checked::threads)]
    pub threads: Vec<usize>,
    /// Output folder for results.json and the SVG plots (created when needed).
    #[arg(long, value_name = "DIR", value_parser = checked::path)]
    pub out: String,
    /// Vulkan device: an index or part of its name.
    #[arg(long, value_name = "NAME|INDEX")]
    pub device: Option<String>,
    /// Enable the Khronos validation layer (with synchronization validation); any message fails the run.
    #[arg(long)]
    pub validation: bool,
    /// After the run, compare it with an earlier one, OLD_DIR/results.json
    /// (checked before measuring), as `vkskin compare OLD_DIR DIR` does.
    #[arg(long, value_name = "OLD_DIR", value_parser = checked::path)]
    pub baseline: Option<String>,
    /// With --baseline: exit with status 1 when a figure regressed (the
    /// report is still printed and written).
    #[arg(long, requires = "baseline")]
    pub fail_on_regression: bool,
    /// A frame trace to write.
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Arguments of `vkskin compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// The baseline: a folder holding a bench's results.json.
    #[arg(value_name = "OLD_DIR", value_parser = checked::path)]
    pub old: String,
    /// The run compared with it (comparison.json is written there).
    #[arg(value_name = "NEW_DIR", value_parser = checked::path)]
    pub new: String,
    /// Exit with status 1 when a figure regressed (the report is still
    /// printed and written).
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Command, LoadOptions), String> {
        let cli = Cli::try_parse_from(std::iter::once("vkskin").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        cli.into_command()
    }

    fn view_of(args: &[&str]) -> ViewArgs {
        match parse(args) {
            Ok((Command::View(v), _)) => v,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn viewer_options_without_view() {
        assert_eq!(view_of(&[]), ViewArgs::default());
        let v = view_of(&["--frames", "90"]);
        assert_eq!(v.frames, Some(90));
        let v = view_of(&[
            "Fox.glb",
            "--frames",
            "3",
            "--resize-at",
            "10:100x80,20:50x40",
            "--resize-at",
            "5:9x9",
        ]);
        assert_eq!(v.model.as_deref(), Some("Fox.glb"));
        assert_eq!(v.resize_at, ["10:100x80", "20:50x40", "5:9x9"]);
        assert_eq!(view_of(&["view", "Fox.glb", "--frames", "3"]), view_of(&["Fox.glb", "--frames", "3"]));
    }

    #[test]
    fn subcommands_and_global_limits() {
        let (command, options) = parse(&["--max-memory", "512M", "inspect", "a.glb"]).unwrap();
        assert!(
            matches!(command, Command::Inspect { ref model, json: false, compression: false } if model == "a.glb")
        );
        assert_eq!(options.max_memory, 512 << 20);
        assert!(!options.allow_outside_uris);
        let (_, options) = parse(&["dump", "a.glb", "--allow-outside-uris", "--max-memory", "1G"]).unwrap();
        assert_eq!((options.max_memory, options.allow_outside_uris), (1 << 30, true));
        assert_eq!(parse(&["inspect", "a.glb"]).unwrap().1, LoadOptions::default());
        assert!(parse(&["simulate", "a.glb", "--compressed-clips"]).unwrap().1.compressed_clips);
        assert_eq!(
            parse(&["bench", "--out", "o", "--nlerp"]).unwrap().1.rotation_blend,
            RotationBlend::Nlerp
        );
        assert_eq!(parse(&["bench", "--out", "o"]).unwrap().1.rotation_blend, RotationBlend::Slerp);
        assert!(parse(&["--frames", "3", "inspect", "a.glb"]).is_err());
        assert!(parse(&["inspect", "a.glb", "--frames", "3"]).is_err());
        assert!(parse(&["--max-memory", "lots", "inspect", "a.glb"]).is_err());
    }
}
