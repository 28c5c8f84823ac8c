//! The only code that knows glTF: reading files, validating them and turning
//! them into `anim` data and mesh streams.

pub mod accessor;
pub mod error;
pub mod images;
pub mod import;
pub mod model;
pub mod source;
pub mod validate;

pub use error::ImportError;
pub use import::load;
pub use model::{Material, Mesh, MeshInstance, Model};
