//! Evaluation-rate level of detail: characters far away or small on screen
//! evaluate their pose every 2nd, 4th or 8th update instead of every update.
//! Only the pose work is skipped (sampling, blending, hierarchy, palettes);
//! playback, the state machine, events and root motion run every update.
//! A character no pass draws is not evaluated at all until it is seen
//! again. It chooses a rate; it never skips anything itself (see
//! `Character::update`).

use crate::anim::Sight;

/// How often a character's pose is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvaluationRate {
    /// Every update.
    #[default]
    EveryFrame,
    /// Every 2nd update.
    Every2nd,
    /// Every 4th update.
    Every4th,
    /// Every 8th update (a character a few dozen pixels tall).
    Every8th,
    /// Not while no pass draws it (outside the view, its shadow too);
    /// evaluated on the update it is seen again (a rate that rises
    /// evaluates at once, `Character::set_evaluation_rate`).
    Unseen,
}

/// Screen heights (pixels) below which a character drops to the next rate:
/// under 160 px every 2nd update, under 64 px every 4th, under 32 px every
/// 8th. A character 160 px tall moves a few pixels per frame at walking
/// pace; at 60 Hz, updating it at 30 Hz does not show, and one 32 px tall
/// moves about a pixel per frame.
const EVERY_2ND_BELOW_PX: f32 = 160.0;
const EVERY_4TH_BELOW_PX: f32 = 64.0;
const EVERY_8TH_BELOW_PX: f32 = 32.0;

impl EvaluationRate {
    /// Updates per evaluation: 1, 2, 4 or 8 (`u32::MAX` unseen: never).
    pub fn period(self) -> u32 {
        match self {
            EvaluationRate::EveryFrame => 1,
            EvaluationRate::Every2nd => 2,
            EvaluationRate::Every4th => 4,
            EvaluationRate::Every8th => 8,
            EvaluationRate::Unseen => u32::MAX,
        }
    }

    /// Whether update number `frame` (counted per character, offset by its
    /// index so a crowd spreads its evaluations) evaluates.
    pub fn is_due(self, frame: u32) -> bool {
        self != EvaluationRate::Unseen && frame.is_multiple_of(self.period())
    }

    /// Whether this rate evaluates more often than `other` does.
    pub fn is_faster_than(self, other: EvaluationRate) -> bool {
        self.period() < other.period()
    }

    /// The policy for a character seen as `sight` foresees: by the pixels
    /// it spans, unseen when no pass draws it.
    pub fn for_sight(sight: Sight) -> Self {
        match sight {
            Sight::Drawn { pixels } => Self::for_screen_height(pixels),
            Sight::Unseen => EvaluationRate::Unseen,
        }
    }

    /// The policy: the rate for a character `pixels` tall on screen.
    pub fn for_screen_height(pixels: f32) -> Self {
        if pixels.is_nan() || pixels >= EVERY_2ND_BELOW_PX {
            EvaluationRate::EveryFrame
        } else if pixels >= EVERY_4TH_BELOW_PX {
            EvaluationRate::Every2nd
        } else if pixels >= EVERY_8TH_BELOW_PX {
            EvaluationRate::Every4th
        } else {
            EvaluationRate::Every8th
        }
    }

    /// The policy by distance: a character `height` tall (scene units)
    /// `distance` from a perspective camera with vertical field of view
    /// `fov_y` (radians) over a viewport `viewport_height` pixels tall.
    pub fn for_distance(distance: f32, height: f32, fov_y: f32, viewport_height: f32) -> Self {
        Self::for_screen_height(screen_height(distance, height, fov_y, viewport_height))
    }
}

/// Pixels a thing `height` tall covers at `distance` (perspective, vertical
/// field of view `fov_y`, viewport `viewport_height` pixels): `height /
/// (2 distance tan(fov_y / 2))` of the viewport. Infinite at distance 0.
pub fn screen_height(distance: f32, height: f32, fov_y: f32, viewport_height: f32) -> f32 {
    let visible = 2.0 * distance.max(0.0) * (fov_y / 2.0).tan();
    if visible > 0.0 { height / visible * viewport_height } else { f32::INFINITY }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_falls_with_screen_size() {
        assert_eq!(EvaluationRate::for_screen_height(1000.0), EvaluationRate::EveryFrame);
        assert_eq!(EvaluationRate::for_screen_height(160.0), EvaluationRate::EveryFrame);
        assert_eq!(EvaluationRate::for_screen_height(159.0), EvaluationRate::Every2nd);
        assert_eq!(EvaluationRate::for_screen_height(64.0), EvaluationRate::Every2nd);
        assert_eq!(EvaluationRate::for_screen_height(40.0), EvaluationRate::Every4th);
        assert_eq!(EvaluationRate::for_screen_height(32.0), EvaluationRate::Every4th);
        assert_eq!(EvaluationRate::for_screen_height(10.0), EvaluationRate::Every8th);
        assert_eq!(EvaluationRate::for_screen_height(f32::NAN), EvaluationRate::EveryFrame);
    }

    #[test]
    fn distance_policy_uses_the_projected_height() {
        // A 1.8 m character 5 m away, 60 degrees field of view, 1080 px:
        // 1.8 / (2 * 5 * tan 30) * 1080 = 336.7 px.
        let px = screen_height(5.0, 1.8, 60f32.to_radians(), 1080.0);
        assert!((px - 336.7).abs() < 0.1, "{px}");
        let at = |d: f32| EvaluationRate::for_distance(d, 1.8, 60f32.to_radians(), 1080.0);
        assert_eq!(at(0.0), EvaluationRate::EveryFrame);
        assert_eq!(at(5.0), EvaluationRate::EveryFrame);
        assert_eq!(at(15.0), EvaluationRate::Every2nd);
        assert_eq!(at(40.0), EvaluationRate::Every4th);
        assert_eq!(at(80.0), EvaluationRate::Every8th);
    }

    #[test]
    fn due_frames_follow_the_period() {
        let due = |r: EvaluationRate| (0..8).filter(|&f| r.is_due(f)).collect::<Vec<_>>();
        assert_eq!(due(EvaluationRate::EveryFrame), (0..8).collect::<Vec<_>>());
        assert_eq!(due(EvaluationRate::Every2nd), vec![0, 2, 4, 6]);
        assert_eq!(due(EvaluationRate::Every4th), vec![0, 4]);
        assert_eq!(due(EvaluationRate::Every8th), vec![0]);
        assert!(due(EvaluationRate::Unseen).is_empty());
        assert!(!EvaluationRate::Unseen.is_due(u32::MAX));
    }

    #[test]
    fn sight_chooses_the_rate() {
        let drawn = |pixels| EvaluationRate::for_sight(Sight::Drawn { pixels });
        assert_eq!(drawn(f32::INFINITY), EvaluationRate::EveryFrame);
        assert_eq!(drawn(100.0), EvaluationRate::Every2nd);
        assert_eq!(drawn(0.0), EvaluationRate::Every8th);
        assert_eq!(EvaluationRate::for_sight(Sight::Unseen), EvaluationRate::Unseen);
        // Rising: from unseen to any drawn rate, and from a longer period.
        assert!(EvaluationRate::Every8th.is_faster_than(EvaluationRate::Unseen));
        assert!(EvaluationRate::EveryFrame.is_faster_than(EvaluationRate::Every2nd));
        assert!(!EvaluationRate::Every4th.is_faster_than(EvaluationRate::Every4th));
        assert!(!EvaluationRate::Unseen.is_faster_than(EvaluationRate::Every8th));
    }
}
