//! Finding a model's controller: `--controller FILE` when given, else a
//! controller file next to the model (`<model stem>.ron`), else, for the
//! built-in character, its own controller (`assets/default_character.ron`,
//! built into the binary). Only chooses and loads: it never parses or
//! checks a controller itself.

use super::Controller;
use super::error::ControllerError;
use crate::anim::Rig;
use std::path::{Path, PathBuf};

/// The built-in character's controller text.
pub const DEFAULT_CONTROLLER: &str = include_str!("../../../assets/default_character.ron");

/// A controller and a description of where it came from.
pub type FoundController = (Controller, String);

/// The controller file that sits next to `model` (`walker.glb` -> `walker.ron`).
pub fn sidecar_path(model: &Path) -> PathBuf {
    model.with_extension("ron")
}

/// The controller for a model loaded from `model_path` (`None`: the built-in
/// character): `explicit`, else the sidecar file when it exists, else the
/// built-in controller for the built-in character, else `None`; a file is
/// read within `max_memory` (`--max-memory`, see `Controller::load`). Returns it
/// with a description of where it came from; the error prints as one line
/// naming the controller file (or `built-in controller`).
pub fn find_controller(
    rig: &Rig,
    model_path: Option<&Path>,
    explicit: Option<&Path>,
    max_memory: u64,
) -> Result<Option<FoundController>, ControllerError> {
    if let Some(path) = explicit {
        return Controller::load(path, rig, max_memory).map(|c| Some((c, path.display().to_string())));
    }
    match model_path {
        Some(model) => {
            let sidecar = sidecar_path(model);
            // Whatever exists is read, so a sidecar that is a FIFO or a
            // folder is reported (by the reader, which never blocks on it)
            // rather than silently skipped.
            if sidecar.exists() {
                Controller::load(&sidecar, rig, max_memory).map(|c| Some((c, sidecar.display().to_string())))
            } else {
                Ok(None)
            }
        }
        None => Controller::from_text(DEFAULT_CONTROLLER, rig)
            .map(|c| Some((c, "the built-in controller".to_string())))
            .map_err(|e| ControllerError::BuiltIn(Box::new(e))),
    }
}
