//! The error of the world layer: a level, a spawn, an authority or a joint
//! that does not exist, or a character that cannot be posed in the world.

use crate::anim::JobError;

/// What went wrong setting up or playing a character in a level. Prints as
/// one line; a pose error is kept as `source()`.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// No level has this name.
    #[error("no level \"{0}\" (levels: demo)")]
    UnknownLevel(String),
    /// The level has no spawn of this name.
    #[error("level \"{level}\" has no spawn \"{name}\" (spawns: {})", known.join(", "))]
    UnknownSpawn {
        /// The level.
        level: String,
        /// The spawn asked for.
        name: String,
        /// The level's spawns.
        known: Vec<String>,
    },
    /// An authority other than `animation` or `movement`.
    #[error("authority \"{0}\": expected animation or movement")]
    UnknownAuthority(String),
    /// Foot placement needs a joint the skeleton lacks.
    #[error("foot placement: no joint \"{0}\"")]
    MissingJoint(String),
    /// Arm reach needs a joint the skeleton lacks.
    #[error("arm reach: no joint \"{0}\"")]
    MissingArmJoint(String),
    /// Vertical root motion needs a joint the skeleton lacks.
    #[error("vertical root motion: no joint \"{0}\"")]
    MissingContact(String),
    /// Vertical root motion is measured at 1 to 4 contact joints.
    #[error("vertical root motion: {0} contact joints (1 to 4)")]
    ContactCount(usize),
    /// The frame rate is not a positive number.
    #[error("frame rate {0} is not a positive number")]
    BadFrameRate(f64),
    /// The character refused its rig, controller or update.
    #[error("{0}")]
    Pose(#[from] JobError),
}

/// For callers that still report `String` errors (the interactive viewer):
/// the one-line message.
impl From<WorldError> for String {
    fn from(error: WorldError) -> String {
        error.to_string()
    }
}
