//! The world characters move in: levels, the physics world (rapier3d) that
//! resolves their movement, and actors (a character, its mover, its
//! authority over movement, its foot placement).

pub mod actor;
pub mod error;
pub mod foot_placement;
pub mod level;
pub mod lift;
pub mod physics;
pub mod reach;
pub mod run;
pub mod scenery;

pub use actor::{Actor, Authority, MAX_SPEED};
pub use error::WorldError;
pub use foot_placement::{FootPlacement, FootReport, Leg};
pub use level::{Level, LevelBox, Rail, Surface};
pub use lift::Lift;
pub use physics::{CapsuleShape, GroundHit, Moved, PhysicsWorld};
pub use reach::{ArmReach, HandReport};
pub use run::ActorRun;
pub use scenery::scenery_model;
