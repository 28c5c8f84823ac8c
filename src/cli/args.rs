//! Command-line arguments (clap).

use clap::{Parser, Subcommand, ValueEnum};

/// vkskin: look at, debug and profile skinned glTF characters.
#[derive(Debug, Parser)]
#[command(name = "vkskin", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where skinned vertices are computed for `dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Skinning {
    /// The CPU reference skinning.
    Cpu,
    /// The Vulkan compute skinning pass (read back from the GPU).
    Gpu,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the node tree, skins, clips, meshes, morph targets and warnings.
    Inspect {
        /// A .glb or .gltf file.
        model: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write joint world matrices and skinned vertex positions as JSON.
    Dump {
        /// A .glb or .gltf file.
        model: String,
        /// Clip name or index; without it the rest pose is dumped.
        #[arg(long)]
        clip: Option<String>,
        /// Time in seconds on the file's timeline (wrapped as a looping player does).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        time: f32,
        /// Where vertices are skinned.
        #[arg(long, value_enum, default_value_t = Skinning::Cpu)]
        skinning: Skinning,
        /// Vulkan device for `--skinning gpu`: an index or part of its name.
        #[arg(long, value_name = "NAME|INDEX")]
        device: Option<String>,
        /// Enable the Khronos validation layer (with synchronization
        /// validation) for `--skinning gpu`; any message fails the command.
        #[arg(long)]
        validation: bool,
        /// Output file, `-` for standard output.
        #[arg(long, default_value = "-")]
        out: String,
    },
    /// Render frames headless (no window): one frame to PNG, or `--frames N` to an animated PNG.
    Render(RenderArgs),
}

/// Arguments of `vkskin render`.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderArgs {
    /// A .glb or .gltf file.
    pub model: String,
    /// Clip name or index; without it the rest pose is drawn (or the first clip with `--frames`).
    #[arg(long)]
    pub clip: Option<String>,
    /// Time of the first frame in seconds on the file's timeline (default: the clip's start).
    #[arg(long, allow_negative_numbers = true)]
    pub time: Option<f32>,
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    pub size: String,
    /// Number of frames: more than one writes an animated PNG.
    #[arg(long)]
    pub frames: Option<u32>,
    /// Frames per second of the animation (time step and playback rate).
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Draw triangle edges only.
    #[arg(long)]
    pub wireframe: bool,
    /// Skin in the vertex shader instead of the compute pass (comparison path).
    #[arg(long)]
    pub vertex_skinning: bool,
    /// Vulkan device: an index or part of its name.
    #[arg(long, value_name = "NAME|INDEX")]
    pub device: Option<String>,
    /// Enable the Khronos validation layer (with synchronization validation); any message fails the command.
    #[arg(long)]
    pub validation: bool,
    /// Output PNG (or animated PNG) file.
    #[arg(long)]
    pub out: String,
}
