//! Levels: static boxes (floor, walls, a ramp, a staircase) that the physics
//! world collides with and the renderer draws, plus named spawn points.
//! Metres, y up; characters face +z at their spawn.

use super::error::WorldError;
use nalgebra::{UnitQuaternion, Vector3};

/// What a box is made of (its colour when drawn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The ground.
    Floor,
    /// Walls.
    Wall,
    /// Stair steps.
    Step,
    /// Ramps.
    Ramp,
    /// Rails (and their posts).
    Rail,
}

impl Surface {
    /// Linear RGBA base colour.
    pub fn color(self) -> [f32; 4] {
        match self {
            Surface::Floor => [0.45, 0.47, 0.5, 1.0],
            Surface::Wall => [0.62, 0.45, 0.36, 1.0],
            Surface::Step => [0.55, 0.58, 0.42, 1.0],
            Surface::Ramp => [0.4, 0.5, 0.62, 1.0],
            Surface::Rail => [0.2, 0.22, 0.26, 1.0],
        }
    }
}

/// A solid box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelBox {
    /// Centre.
    pub center: Vector3<f32>,
    /// Half its size along its own axes.
    pub half_extents: Vector3<f32>,
    /// Its orientation.
    pub rotation: UnitQuaternion<f32>,
    /// What it is.
    pub surface: Surface,
}

/// A rail a hand can reach for: the line along its top, world space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rail {
    /// One end.
    pub from: Vector3<f32>,
    /// The other end.
    pub to: Vector3<f32>,
}

impl Rail {
    /// The point of the rail nearest to `p`.
    pub fn nearest(&self, p: &Vector3<f32>) -> Vector3<f32> {
        let along = self.to - self.from;
        let length2 = along.norm_squared();
        let t = if length2 > 0.0 { ((p - self.from).dot(&along) / length2).clamp(0.0, 1.0) } else { 0.0 };
        self.from + along * t
    }
}

/// A level: boxes, rails and spawn points.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Name (`--level NAME`).
    pub name: &'static str,
    /// The solid boxes.
    pub boxes: Vec<LevelBox>,
    /// Named places to start, on the ground, facing +z.
    pub spawns: Vec<(&'static str, Vector3<f32>)>,
    /// Rails hands reach for (each also drawn and solid: a box in `boxes`).
    pub rails: Vec<Rail>,
}

/// Rise of one stair step of the demo level, metres.
pub const STEP_RISE: f32 = 0.15;
/// Depth of one stair step, metres.
pub const STEP_RUN: f32 = 0.35;
/// Height of the demo level's low obstacle, metres: above the capsule's
/// step height (a walk stops at it), below what a jump's feet clear.
pub const OBSTACLE_HEIGHT: f32 = 0.3;
/// Height of the demo level's rail (its top), metres.
pub const RAIL_HEIGHT: f32 = 1.05;
/// Where the rail runs along the open lane, x, metres (the lane's centre at
/// 0, the character's left hand at about +0.25).
pub const RAIL_X: f32 = 0.45;
/// Where the obstacle's near face is on its lane, z, metres.
pub const OBSTACLE_Z: f32 = 2.0;
/// The obstacle's depth along its lane, metres.
pub const OBSTACLE_DEPTH: f32 = 0.5;

impl Level {
    /// The level called `name` ("demo").
    pub fn named(name: &str) -> Result<Level, WorldError> {
        match name {
            "demo" => Ok(Level::demo()),
            _ => Err(WorldError::UnknownLevel(name.to_string())),
        }
    }

    /// A floor under a model whose skinned bounds over every clip are
    /// `lo..hi` (model units, y up), for `characters` characters (a crowd
    /// stands on a grid behind the first): its top at the lowest point the
    /// model reaches, reaching well past the model on every side. What the
    /// viewer draws outside a level, so that shadows have somewhere to fall.
    pub fn ground(lo: [f32; 3], hi: [f32; 3], characters: u32) -> Level {
        let size = (hi[0] - lo[0]).max(hi[2] - lo[2]).max(hi[1] - lo[1]).max(1e-3);
        let crowd = (characters.max(1) as f32).sqrt();
        let half = size * (6.0 + 2.5 * (crowd - 1.0));
        let thickness = size * 0.02;
        let center = Vector3::new((lo[0] + hi[0]) / 2.0, lo[1] - thickness, (lo[2] + hi[2]) / 2.0);
        let floor = LevelBox {
            center,
            half_extents: Vector3::new(half, thickness, half),
            rotation: UnitQuaternion::identity(),
            surface: Surface::Floor,
        };
        Level { name: "ground", boxes: vec![floor], spawns: Vec::new(), rails: Vec::new() }
    }

    /// The demo level: four lanes side by side, each starting at a spawn on
    /// the line z = 0 and going +z. "open" (x = 0): 14 m of flat floor.
    /// "stairs" (x = 4): from z = 2, 8 steps of 0.15 m up (0.35 m deep) to a
    /// landing 1.2 m high. "ramp" (x = -4): from z = 2, 1 m up over 6 m
    /// (9.5 degrees) to a landing. "wall" (x = 8): a wall across the lane at
    /// z = 4. "obstacle" (x = -8): a low block across the lane, 30 cm high
    /// and 50 cm deep, from z = 2. A rail (its top 1.05 m up) along the
    /// left of the open lane, at x = 0.45 from z = 3 to 7, within reach of
    /// the left hand walking by. A wall all around.
    pub fn demo() -> Level {
        let mut boxes = Vec::new();
        let cuboid = |center: [f32; 3], half: [f32; 3], surface| LevelBox {
            center: Vector3::from(center),
            half_extents: Vector3::from(half),
            rotation: UnitQuaternion::identity(),
            surface,
        };
        // Floor: top at y = 0, x in [-12, 12], z in [-4, 16].
        boxes.push(cuboid([0.0, -0.5, 6.0], [12.0, 0.5, 10.0], Surface::Floor));
        // Walls around.
        for (center, half) in [
            ([0.0, 1.0, -4.15], [12.3, 1.0, 0.15]),
            ([0.0, 1.0, 16.15], [12.3, 1.0, 0.15]),
            ([-12.15, 1.0, 6.0], [0.15, 1.0, 10.0]),
            ([12.15, 1.0, 6.0], [0.15, 1.0, 10.0]),
        ] {
            boxes.push(cuboid(center, half, Surface::Wall));
        }
        // Stairs at x = 4: step k rises to (k + 1) * rise, each a full-height block.
        let (x, half_width) = (4.0, 0.8);
        for k in 0..8 {
            let top = (k + 1) as f32 * STEP_RISE;
            let z = 2.0 + (k as f32 + 0.5) * STEP_RUN;
            boxes.push(cuboid([x, top * 0.5, z], [half_width, top * 0.5, STEP_RUN * 0.5], Surface::Step));
        }
        let landing = 8.0 * STEP_RISE;
        let landing_start = 2.0 + 8.0 * STEP_RUN;
        boxes.push(cuboid(
            [x, landing * 0.5, landing_start + 2.0],
            [half_width, landing * 0.5, 2.0],
            Surface::Step,
        ));
        // Ramp at x = -4: a slab tilted about x, rising 1 m over 6 m of run.
        let (rise, run) = (1.0f32, 6.0f32);
        let angle = (rise / run).atan();
        let length = (rise * rise + run * run).sqrt();
        let thickness = 0.2;
        // The slab's top face runs from (z = 2, y = 0) to (z = 8, y = 1).
        let normal = Vector3::new(0.0, angle.cos(), -angle.sin());
        let mid_top = Vector3::new(-4.0, rise * 0.5, 2.0 + run * 0.5);
        boxes.push(LevelBox {
            center: mid_top - normal * (thickness * 0.5),
            half_extents: Vector3::new(half_width, thickness * 0.5, length * 0.5),
            rotation: UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -angle),
            surface: Surface::Ramp,
        });
        boxes.push(cuboid([-4.0, rise * 0.5, 8.0 + 2.0], [half_width, rise * 0.5, 2.0], Surface::Ramp));
        // A wall across the lane at x = 8.
        boxes.push(cuboid([8.0, 1.0, 4.0], [1.0, 1.0, 0.15], Surface::Wall));
        // The low obstacle across the lane at x = -8.
        boxes.push(cuboid(
            [-8.0, OBSTACLE_HEIGHT * 0.5, OBSTACLE_Z + OBSTACLE_DEPTH * 0.5],
            [half_width, OBSTACLE_HEIGHT * 0.5, OBSTACLE_DEPTH * 0.5],
            Surface::Wall,
        ));
        // The rail along the open lane, on posts at its ends.
        let rail =
            Rail { from: Vector3::new(RAIL_X, RAIL_HEIGHT, 3.0), to: Vector3::new(RAIL_X, RAIL_HEIGHT, 7.0) };
        let bar = 0.02;
        boxes.push(cuboid([RAIL_X, RAIL_HEIGHT - bar, 5.0], [bar, bar, 2.0], Surface::Rail));
        for z in [3.0, 7.0] {
            boxes.push(cuboid([RAIL_X, RAIL_HEIGHT * 0.5, z], [bar, RAIL_HEIGHT * 0.5, bar], Surface::Rail));
        }
        Level {
            name: "demo",
            rails: vec![rail],
            boxes,
            spawns: vec![
                ("open", Vector3::new(0.0, 0.0, 0.0)),
                ("stairs", Vector3::new(4.0, 0.0, 0.0)),
                ("ramp", Vector3::new(-4.0, 0.0, 0.0)),
                ("wall", Vector3::new(8.0, 0.0, 0.0)),
                ("obstacle", Vector3::new(-8.0, 0.0, 0.0)),
            ],
        }
    }

    /// The spawn point called `name`.
    pub fn spawn(&self, name: &str) -> Result<Vector3<f32>, WorldError> {
        self.spawns.iter().find(|(n, _)| *n == name).map(|(_, p)| *p).ok_or_else(|| {
            WorldError::UnknownSpawn {
                level: self.name.to_string(),
                name: name.to_string(),
                known: self.spawns.iter().map(|(n, _)| n.to_string()).collect(),
            }
        })
    }
}
