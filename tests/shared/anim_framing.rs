//! Framing (`anim::framing::skinned_bounds`) skins only what may reach
//! outside the box grown so far, and finds the box that skinning every
//! vertex finds, to the bit: on crowds of the built-in character and of
//! every shared model with a clip, placed turned, scaled and mirrored.

use crate::common::{crowd, find_models, shared_assets};
use nalgebra::{Matrix4, Vector3};
use std::sync::Arc;
use vkskin::anim::framing::{Bounds, grow_bounds, skinned_bounds};
use vkskin::anim::{FramePoses, FrameSource, PoseError, Rig, SkinInput};
use vkskin::asset::Model;
use vkskin::character::{Controller, Crowd};

/// A crowd whose characters are placed again: character `c` by
/// `places[c % len]` after its place on the grid.
struct Placed {
    crowd: Crowd,
    places: Vec<Matrix4<f32>>,
}

impl FramePoses for Placed {
    fn count(&self) -> usize {
        self.crowd.count()
    }
    fn input(&self, c: usize) -> SkinInput<'_> {
        self.crowd.input(c)
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        self.places[c % self.places.len()] * self.crowd.world(c)
    }
}

impl FrameSource for Placed {
    fn restart(&mut self) -> Result<(), PoseError> {
        FrameSource::restart(&mut self.crowd)
    }
    fn frame(&mut self, i: u32) -> Result<(), PoseError> {
        FrameSource::frame(&mut self.crowd, i)
    }
}

/// Placements: as on the grid, turned, scaled unevenly, mirrored, and far
/// from the origin (where the last sums round coarsely).
fn places() -> Vec<Matrix4<f32>> {
    let turned = Matrix4::from_euler_angles(0.3, 1.1, -0.4);
    let scaled = Matrix4::new_nonuniform_scaling(&Vector3::new(2.0, 0.5, 1.25));
    let mirrored = Matrix4::new_nonuniform_scaling(&Vector3::new(-1.0, 1.0, 1.0));
    let far = Matrix4::new_translation(&Vector3::new(2500.0, -40.0, 900.0));
    vec![Matrix4::identity(), turned, scaled * turned, mirrored, far * turned]
}

/// The bounds of every vertex of every character over frames
/// `first..first + frames`, each skinned whole and in order.
fn every_vertex(rig: &Rig, source: &mut dyn FrameSource, first: u32, frames: u32) -> Option<Bounds> {
    let (mut bounds, mut scratch) = (None, Vec::new());
    for i in first..first + frames {
        source.frame(i).unwrap();
        for c in 0..source.count() {
            grow_bounds(rig, &source.input(c).pose, &source.world(c), &mut scratch, &mut bounds).unwrap();
        }
    }
    bounds
}

/// Frames `count` characters of `model` driven by `controller`, `spacing`
/// apart on the grid and then placed by `places`, over five frames, as
/// every vertex would; returns the share of vertices skinned.
fn frames_exactly(
    model: &Arc<Model>,
    controller: &Arc<Controller>,
    (count, spacing): (usize, f32),
    places: Vec<Matrix4<f32>>,
) -> f64 {
    let placed = || Placed {
        crowd: Crowd::new(model.rig.clone(), controller.clone(), count, spacing, 7.0, 1).unwrap(),
        places: places.clone(),
    };
    let framing = skinned_bounds(&model.rig, &mut placed(), 2, 5).unwrap();
    let expected = every_vertex(&model.rig, &mut placed(), 2, 5);
    assert_eq!(framing.bounds, expected, "{}: the box of every vertex", model.file);
    assert!(framing.skinned <= framing.vertices, "{framing:?}");
    framing.skinned as f64 / framing.vertices as f64
}

/// A grid of built-in characters under their own controller (morphs,
/// layers, root motion) frames to the exact box while skinning few of its
/// vertices: only the characters and runs at its edges (feet on the
/// ground, mostly) can move them.
#[test]
fn a_crowd_frames_to_the_box_of_every_vertex_skinning_a_few() {
    let model = crowd::model();
    let controller = crowd::controller(&model);
    let share = frames_exactly(&model, &controller, (400, 1.5), vec![Matrix4::identity()]);
    assert!(share < 0.25, "skinned {:.0} % of the vertices", share * 100.0);
    let placed = frames_exactly(&model, &controller, (60, 1.5), places());
    assert!(placed < 1.0, "skinned every vertex of the placed crowd");
}

/// Every shared model with a clip (skinned, rigid and morphed meshes;
/// sparse and dense targets), each clip, placed five ways: the same box
/// as skinning every vertex. The characters stand in one place, each at
/// its own moment of the clip, so the box's sides are close calls among
/// them.
#[test]
fn every_shared_model_frames_to_the_box_of_every_vertex() {
    let Some(dir) = shared_assets("framing over the shared models") else { return };
    let mut framed = Vec::new();
    for path in find_models(&dir) {
        let model = Arc::new(vkskin::asset::load(&path).unwrap());
        for clip in 0..model.clips.len() {
            let controller = Arc::new(Controller::single_clip(&model, Some(clip), true).unwrap());
            for place in places() {
                frames_exactly(&model, &controller, (12, 0.0), vec![place]);
            }
        }
        if !model.clips.is_empty() {
            framed.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    for expected in ["Fox.glb", "CesiumMan.glb", "RobotExpressive.glb", "MorphStressTest.gltf", "Wizard.glb"]
    {
        assert!(framed.iter().any(|f| f == expected), "{expected} not framed: {framed:?}");
    }
}
