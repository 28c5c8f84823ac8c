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
        /// Output file, `-` for standard output.
        #[arg(long, default_value = "-")]
        out: String,
    },
}
