//! Characters playing compressed clips (`Rig::compress_clips`, the
//! `--compressed-clips` load option): over whole clips of the shared models
//! and a crowd of built-in characters, every joint's virtual vertices stay
//! within the compression bound of where the same character playing the
//! exact clips puts them (object space, through the whole character layer;
//! two bounds more for each controller layer with weight), so do its morph
//! weights (within their tolerances), and the events fire identically.

use nalgebra::Matrix4;
use std::sync::Arc;
use vkskin::anim::compression::{CompressionSettings, ErrorMetric, rest_extent};
use vkskin::asset::{self, LoadOptions, Model};
use vkskin::character::{AnimationSystem, Character, CharacterId, Controller};

/// Shared models with different units, interpolations and depths.
const MODELS: [&str; 6] = [
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
    "InterpolationTest/InterpolationTest.glb",
    "RobotExpressive/RobotExpressive.glb",
    "Wizard/Wizard.glb",
    "RiggedFigure/RiggedFigure.glb",
];

fn compressed_options() -> LoadOptions {
    LoadOptions { compressed_clips: true, ..LoadOptions::default() }
}

/// Compares world matrices in object space with the compressor's metric.
struct Check {
    metric: ErrorMetric,
    bound: f64,
    /// f32 rounding of two world-matrix chains (the bound is measured in f64).
    slack: f64,
    expected: Vec<Matrix4<f64>>,
    actual: Vec<Matrix4<f64>>,
    errors: Vec<f64>,
    /// Each morph weight's tolerance (`Rig::morph_weight_tolerances`).
    weight_tolerances: Vec<f64>,
}

impl Check {
    fn new(model: &Model) -> Self {
        let settings = CompressionSettings::for_skeleton(&model.skeleton);
        let n = model.skeleton.len();
        Check {
            metric: ErrorMetric::new(&model.skeleton, settings.vertex_distance),
            bound: settings.error_bound,
            slack: 4e-6 * rest_extent(&model.skeleton).max(1.0),
            expected: vec![Matrix4::identity(); n],
            actual: vec![Matrix4::identity(); n],
            errors: vec![0.0; n],
            weight_tolerances: model.rig.morph_weight_tolerances(&settings),
        }
    }

    /// Largest virtual-vertex distance between the two characters' poses,
    /// and each morph weight's difference over its tolerance times the
    /// bound (within the bound exactly when within the tolerance).
    fn error(&mut self, exact: &Character, compressed: &Character) -> f64 {
        for (m, w) in self.expected.iter_mut().zip(exact.output().world()) {
            *m = w.cast();
        }
        for (m, w) in self.actual.iter_mut().zip(compressed.output().world()) {
            *m = w.cast();
        }
        self.metric.vertex_errors(&self.expected, &self.actual, &mut self.errors);
        let weights = exact.output().morph_weights().iter().zip(compressed.output().morph_weights());
        let weight_errors = weights
            .zip(&self.weight_tolerances)
            .map(|((a, b), tolerance)| f64::from((a - b).abs()) / tolerance * self.bound);
        self.errors.iter().copied().chain(weight_errors).fold(0.0, f64::max)
    }
}

fn events(c: &Character) -> Vec<(u32, u32, u32)> {
    c.events().iter().map(|e| (e.clip, e.event, e.clip_time.to_bits())).collect()
}

#[test]
fn shared_models_play_compressed_clips_within_the_bound() {
    for file in MODELS {
        let Some(path) = crate::common::shared_file(file, "compressed clips") else { continue };
        let exact = Arc::new(asset::load(&path).expect("imports"));
        let compressed = Arc::new(asset::load_with(&path, &compressed_options()).expect("imports"));
        assert!(!exact.samples_compressed_clips() && compressed.samples_compressed_clips());
        let mut check = Check::new(&exact);
        let mut worst = 0.0f64;
        for clip in 0..exact.clips.len() {
            let character = |model: &Arc<Model>| {
                let controller = Controller::single_clip(model, Some(clip), true).expect("controller");
                Character::new(model.rig.clone(), Arc::new(controller)).expect("character")
            };
            let (mut a, mut b) = (character(&exact), character(&compressed));
            // A little over one loop at 60 Hz: every interval, and the wrap.
            let frames = (exact.clips[clip].duration * 60.0 * 1.1).ceil() as usize + 2;
            for frame in 0..frames {
                a.update(1.0 / 60.0).expect("update");
                b.update(1.0 / 60.0).expect("update");
                let e = check.error(&a, &b);
                worst = worst.max(e);
                assert!(
                    e <= check.bound + check.slack,
                    "{file} clip {} frame {frame}: {e} > {} (+{})",
                    exact.clip_name(clip),
                    check.bound,
                    check.slack
                );
                assert_eq!(events(&a), events(&b), "{file} clip {clip} frame {frame}");
            }
        }
        eprintln!("{file}: largest error {worst:.3e} (bound {:.1e})", check.bound);
    }
}

#[test]
fn built_in_crowd_with_compressed_clips_fires_the_same_events() {
    let exact = crate::common::crowd::model();
    let compressed = Arc::new(asset::load_default_character_with(&compressed_options()).expect("built-in"));
    let system = |model: &Arc<Model>| -> AnimationSystem { crate::common::crowd::crowd(model, 24, 1) };
    let (mut a, mut b) = (system(&exact), system(&compressed));
    let mut check = Check::new(&exact);
    let (mut worst, mut worst_layered, mut fired) = (0.0f64, 0.0f64, 0usize);
    for frame in 0..600 {
        crate::common::crowd::drive(&mut a, frame);
        crate::common::crowd::drive(&mut b, frame);
        a.update(1.0 / 60.0).expect("update");
        b.update(1.0 / 60.0).expect("update");
        for i in 0..a.len() {
            let (ca, cb) = (a.character(CharacterId(i)), b.character(CharacterId(i)));
            assert_eq!(events(ca), events(cb), "character {i} frame {frame}");
            fired += ca.events().len();
            // Blends of compressed poses: each within the bound, their
            // normalised weighted sum within it to a few percent. A layer
            // (the built-in wave, breathing and face) adds errors: an
            // override layer puts its clip's joints under parents posed by
            // other clips (whose errors were bounded with other children:
            // a raised hand swings further on a chest's error), an
            // additive one adds the difference of two more compressed
            // samples (its clip's and its reference's). Two bounds more
            // for each layer with weight.
            let layers = ca.layer_weights().iter().filter(|&&w| w > 0.0).count();
            let allowed = (1.05 + 2.0 * layers as f64) * check.bound + check.slack;
            let e = check.error(ca, cb);
            if layers == 0 {
                worst = worst.max(e);
            } else {
                worst_layered = worst_layered.max(e);
            }
            assert!(e <= allowed, "character {i} frame {frame}: {e} ({layers} layers)");
        }
    }
    assert!(fired > 20, "the crowd fired {fired} events");
    eprintln!(
        "built-in crowd: {fired} events, largest error {worst:.3e}, {worst_layered:.3e} under layers (bound {:.1e})",
        check.bound
    );
}
