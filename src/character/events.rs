//! Events as an update reports them: plain data, no behaviour (playback
//! fires them, see `playback`).

/// One event that playback crossed during an update.
///
/// Which clips report events while several play: only the dominant state
/// (the heaviest; the crossfade's target on a tie) reports, and within it a
/// sync group reports through its leader only (its heaviest clip, so a
/// footstep carried by two synced clips fires once), while a clip outside
/// any sync group reports when its weight in the state is above zero.
/// Each report is one crossing of the clip's playback: forward, backward,
/// across the loop point, or several loops in one long step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FiredEvent {
    /// Index of the character in its `AnimationSystem`.
    pub character: u32,
    /// Clip index in the rig.
    pub clip: u32,
    /// Index into that clip's `events`.
    pub event: u32,
    /// The event's time on the clip's timeline, seconds.
    pub clip_time: f32,
}
