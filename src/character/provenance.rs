//! What produced a character's last evaluated pose: every clip sampled
//! (its time on the file's timeline, its weight within its layer, the
//! layer) and every layer laid over the state machine's pose (mode,
//! weight, mask, additive reference). Enough, with the model file, to
//! rebuild the local pose outside vkskin (the blend formula is in the
//! `controllers` guide page, "Rebuilding a pose"): `dump --controller`
//! and the `simulate --json` trace write it.
//!
//! Read-only views of the evaluation; nothing here allocates.

use super::character::Character;
use super::controller::{Layer, LayerReference};
use crate::anim::LayerMode;

/// One clip sampled for the last evaluated pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampledClip {
    /// Rig clip index (the glTF animation index for imported models).
    pub clip: u32,
    /// Sample time, seconds on the file's timeline (already wrapped or
    /// clamped as its player plays it).
    pub time: f64,
    /// Weight within its layer: for the base layer the crossfade's state
    /// weight times the blend tree's weight, for a controller layer the
    /// blend tree's weight. A layer's weights need not sum to one: the
    /// blend normalises them.
    pub weight: f32,
    /// 0 for the state machine's pose (the base), `i + 1` for controller
    /// layer `i`.
    pub layer: u32,
}

/// How a layer of the last evaluated pose combines with the pose below it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LayerKind<'a> {
    /// The state machine's pose: the start of the stack, weight 1, no mask.
    Base,
    /// A controller layer.
    Controller(&'a Layer),
}

/// One layer of the last evaluated pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvaluatedLayer<'a> {
    /// What it is.
    pub kind: LayerKind<'a>,
    /// Its weight in [0, 1] at the last evaluation (0: not applied).
    pub weight: f32,
}

impl<'a> EvaluatedLayer<'a> {
    /// `base`, `override` or `additive` (the trace's and dump's `mode`).
    pub fn mode_name(&self) -> &'static str {
        match self.kind {
            LayerKind::Base => "base",
            LayerKind::Controller(l) => match l.mode {
                LayerMode::Override => "override",
                LayerMode::Additive => "additive",
            },
        }
    }

    /// The controller layer's name (`None` for the base).
    pub fn name(&self) -> Option<&'a str> {
        match self.kind {
            LayerKind::Base => None,
            LayerKind::Controller(l) => Some(&l.name),
        }
    }

    /// Each skeleton joint's mask weight (`None`: every joint at 1).
    pub fn mask(&self) -> Option<&'a [f32]> {
        match self.kind {
            LayerKind::Controller(l) if l.mask.iter().any(|&w| w != 1.0) => Some(&l.mask),
            _ => None,
        }
    }

    /// Whether the layer sets morph weights: the base and additive layers
    /// always (an additive's clips without morph tracks add 0), an
    /// override layer only when one of its clips has a morph-weight track
    /// (else the weights below it stay as they are).
    pub fn sets_morphs(&self) -> bool {
        match self.kind {
            LayerKind::Controller(l) => l.mode == LayerMode::Additive || l.morphs,
            LayerKind::Base => true,
        }
    }

    /// The additive layer's reference (the clip and time its difference
    /// is taken from); `None` for base and override layers.
    pub fn reference(&self) -> Option<LayerReference> {
        match self.kind {
            LayerKind::Controller(l) if l.mode == LayerMode::Additive => Some(l.reference_source),
            _ => None,
        }
    }
}

impl Character {
    /// Every clip sampled for the last evaluated pose, in evaluation order
    /// (layer by layer, then clip node order: the first entry of a layer
    /// is the one its blend's hemisphere rule refers to). Clips without
    /// weight are left out.
    pub fn sampled_clips(&self) -> impl Iterator<Item = SampledClip> + '_ {
        let controller = self.controller();
        let machine = controller.machine_states;
        let evaluated = self.evaluation().evaluated_leaves();
        controller.leaves().iter().zip(evaluated).filter(|(_, (_, w))| *w > 0.0).map(
            move |(leaf, &(time, weight))| {
                let state = leaf.state as usize;
                let layer = if state < machine { 0 } else { (state - machine + 1) as u32 };
                SampledClip { clip: leaf.clip, time, weight, layer }
            },
        )
    }

    /// The base and every controller layer, in the order they apply, with
    /// their weights at the last evaluation.
    pub fn evaluated_layers(&self) -> impl Iterator<Item = EvaluatedLayer<'_>> + '_ {
        let base = EvaluatedLayer { kind: LayerKind::Base, weight: 1.0 };
        let layers = self.controller().layers().iter().zip(self.evaluation().evaluated_layer_weights());
        std::iter::once(base)
            .chain(layers.map(|(l, &weight)| EvaluatedLayer { kind: LayerKind::Controller(l), weight }))
    }
}
