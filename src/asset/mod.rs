//! The only code that knows glTF: reading files, validating them and turning
//! them into `anim` data and mesh streams.
//!
//! It imports nothing from `character`, `render`, `gpu`, `world`, `app` or
//! `cli`: it makes data for them and never plays, draws or picks a controller
//! for a model.

pub mod accessor;
pub mod default_character;
pub mod error;
pub mod files;
pub mod glb_writer;
pub mod images;
pub mod import;
pub mod limits;
pub mod model;
pub mod planar_rig;
pub mod source;
pub mod twist_cylinder;
pub mod validate;

pub use default_character::{
    DEFAULT_CHARACTER_FILE, default_character_glb, load_default_character, load_default_character_with,
    load_or_default,
};
pub use error::{AssetError, ImportError};
pub use import::{load, load_with};
pub use limits::LoadOptions;
pub use model::{Material, Mesh, MeshInstance, Model};
