//! Foresight: before a frame's poses are evaluated, how the renderer will
//! see each character (`anim::Sight`): drawn, spanning so many pixels, or
//! drawn by no pass. A crowd evaluates small characters less often and
//! unseen ones not at all (`character::EvaluationRate::for_sight`).
//!
//! It uses what the frame itself uses: the characters' places, the
//! spheres around their poses, and the frame's view with its shadow
//! cascades (`draw_order`). Seen from the same camera at the same places, a
//! character foreseen unseen is one the frame then draws in no pass, so
//! its pose is never shown; one coming into view is posed before the frame
//! that first draws it. A source whose places move with its poses (root
//! motion) is not foreseen (it evaluates every pose; see `FrameSource::foresee`).

use super::camera::Camera;
use super::draw_order::LevelView;
use super::frame_settings::PassSetup;
use super::frame_uniforms::FrameUniforms;
use super::renderer::Renderer;
use super::shadow::cascades;
use crate::anim::Sight;
use crate::anim::frame_poses::{FramePoses, FrameSource, PoseError};

impl Renderer {
    /// How each character of `poses` (at its current place) will be seen
    /// by the next frame drawn with `camera` on a target `height` pixels
    /// tall, with the renderer's current settings: at full detail
    /// (`DrawDetail::Full`) every character is drawn, at any size.
    /// Characters past the renderer's count are left out. Allocates once.
    pub fn foresee(&mut self, poses: &dyn FramePoses, camera: &Camera, height: u32) -> &[Sight] {
        // A frame trace's CPU span (`render::trace`; nothing without one).
        let _span = tracing::trace_span!("foresee").entered();
        let count = poses.count().min(self.settings.characters as usize);
        self.sight.resize(count, Sight::Unseen);
        let view = self.level_view(camera, height);
        let (bounds, detail) = (self.gpu_model.bounds, self.settings.frame.detail);
        self.draw_order.place_and_foresee(poses, bounds, &view, detail, &mut self.sight);
        &self.sight
    }

    /// Poses frame `i` of `source` for an offscreen frame drawn with
    /// `camera` next: tells the source how it will be seen (`foresee`),
    /// then poses it.
    pub fn pose_foreseen(
        &mut self,
        source: &mut dyn FrameSource,
        i: u32,
        camera: &Camera,
    ) -> Result<(), PoseError> {
        let sight = self.foresee(source, camera, self.settings.extent.height);
        source.foresee(sight);
        source.frame(i)
    }

    /// The view a frame drawn with `camera` on a target `height` pixels
    /// tall chooses levels, culls and foresees by: with the key light's
    /// shadows when it draws the shadow cascades, falling on the characters
    /// and the scenery, and the cascades' boxes (the cascades
    /// `record_scene` draws: the same camera and light).
    pub(super) fn level_view(&self, camera: &Camera, height: u32) -> LevelView {
        let view = LevelView::new(camera, height);
        let scenery = self.scenery.as_ref().map_or(f32::INFINITY, |s| s.lowest);
        match self.settings.frame.passes {
            PassSetup::ShadowCascades => {
                let key_light = FrameUniforms::key_light();
                view.with_shadows(key_light.into())
                    .with_receivers_above(scenery)
                    .with_cascades(&cascades(camera, key_light))
            }
            PassSetup::Main | PassSetup::DepthPrepass => view,
        }
    }
}
