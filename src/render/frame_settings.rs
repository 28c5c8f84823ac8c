//! The vocabulary of a frame, defined once: where vertices are skinned
//! ([`SkinningPlacement`]), how their influences blend and, for dual
//! quaternions, where each matrix is split ([`InfluenceBlend`]), how bone
//! palettes reach the GPU ([`PaletteUpload`]), which draw passes run
//! ([`PassSetup`]) and which detail levels they draw ([`DrawDetail`]);
//! [`FrameSettings`] holds one of each. It holds no GPU
//! object.
//!
//! Every command (`view`, `render`, `bench`, `dump`) and the renderer speak
//! these types. Each is a [`Choice`]: a fixed list of named values, whose
//! names are the command line's and results.json's; the command line
//! parses them through one generic mapping (`cli::values`), so a new value
//! is added here and where it takes effect, nowhere else.

pub use crate::anim::SkinningMethod;

/// A fixed set of named values: the command line's and the reports' names.
pub trait Choice: Copy + PartialEq + 'static {
    /// Every value, the default first, in the order reports list them.
    const ALL: &'static [Self];
    /// The name on the command line and in results.json.
    fn name(self) -> &'static str;
    /// One line for `--help`.
    fn help(self) -> &'static str;
    /// The value named `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// Where vertices are skinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SkinningPlacement {
    /// A compute pass skins every character once per frame into a shared
    /// buffer that every draw pass reads.
    #[default]
    Compute,
    /// The vertex shader of every draw pass skins (the comparison path).
    Vertex,
}

impl Choice for SkinningPlacement {
    const ALL: &'static [Self] = &[SkinningPlacement::Compute, SkinningPlacement::Vertex];
    fn name(self) -> &'static str {
        match self {
            SkinningPlacement::Compute => "compute",
            SkinningPlacement::Vertex => "vertex",
        }
    }
    fn help(self) -> &'static str {
        match self {
            SkinningPlacement::Compute => "a compute pass, once per frame; the draw passes read its output",
            SkinningPlacement::Vertex => "the vertex shader of every draw pass",
        }
    }
}

impl Choice for SkinningMethod {
    const ALL: &'static [Self] = &SkinningMethod::ALL;
    fn name(self) -> &'static str {
        SkinningMethod::name(self)
    }
    fn help(self) -> &'static str {
        match self {
            SkinningMethod::Linear => "linear blend skinning (matrices averaged)",
            SkinningMethod::DualQuaternion => {
                "dual-quaternion skinning (rotations blended without the candy-wrapper collapse)"
            }
        }
    }
}

/// Where dual-quaternion skinning splits each skinning matrix
/// (`anim::dual_quat::SkinDualQuat`). Linear blend skinning ignores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DqsSplit {
    /// The palette holds matrices (DESIGN.md's `BoneMatrix`); the shader
    /// splits each influence's matrix (a polar decomposition) for every
    /// vertex it skins.
    #[default]
    Shader,
    /// The CPU splits each skin joint once per uploaded palette and writes
    /// `layout::PaletteDualQuat` entries (same 64-byte stride) instead of
    /// matrices; the shader only blends them. Unskinned nodes' entries stay
    /// matrices.
    Cpu,
}

impl DqsSplit {
    /// Both places, the default first.
    pub const ALL: [DqsSplit; 2] = [DqsSplit::Shader, DqsSplit::Cpu];
}

impl Choice for DqsSplit {
    const ALL: &'static [Self] = &DqsSplit::ALL;
    fn name(self) -> &'static str {
        match self {
            DqsSplit::Shader => "shader",
            DqsSplit::Cpu => "cpu",
        }
    }
    fn help(self) -> &'static str {
        match self {
            DqsSplit::Shader => "in the shader, per influence of every vertex (the palette holds matrices)",
            DqsSplit::Cpu => "on the CPU, once per joint and frame (the palette holds dual quaternions)",
        }
    }
}

/// How influences are blended, on either placement: the method and, for
/// dual quaternions, where the matrices are split. What the skinning
/// shaders' specialization constants say (`skinning::constants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct InfluenceBlend {
    /// How influences are blended.
    pub method: SkinningMethod,
    /// Where DQS splits the matrices (only used with `DualQuaternion`).
    pub dqs_split: DqsSplit,
}

impl From<SkinningMethod> for InfluenceBlend {
    /// `method`, dual quaternions split in the shader.
    fn from(method: SkinningMethod) -> Self {
        InfluenceBlend { method, dqs_split: DqsSplit::Shader }
    }
}

impl InfluenceBlend {
    /// Whether skin joints' palette entries are `PaletteDualQuat`s rather
    /// than matrices.
    pub fn palette_holds_dual_quaternions(self) -> bool {
        self.method == SkinningMethod::DualQuaternion && self.dqs_split == DqsSplit::Cpu
    }

    /// `linear`, `dqs` or `dqs-cpu` (pipeline names, messages).
    pub fn name(self) -> &'static str {
        if self.palette_holds_dual_quaternions() { "dqs-cpu" } else { self.method.name() }
    }

    /// The split, for reports: `None` for linear blending (it has none).
    pub fn split(self) -> Option<DqsSplit> {
        (self.method == SkinningMethod::DualQuaternion).then_some(self.dqs_split)
    }
}

/// How bone palettes reach the GPU each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PaletteUpload {
    /// Every character's palette is written each frame straight into
    /// host-visible memory that the shaders read.
    InPlace,
    /// Every character's palette is written each frame into host-visible
    /// staging, then copied (`vkCmdCopyBuffer`, timestamped) into
    /// device-local memory that the shaders read.
    Staged,
    /// As `Staged`, but only characters whose pose version changed since
    /// the frame slot last held them are written and copied: paused
    /// characters cost no bytes.
    #[default]
    Dirty,
}

impl Choice for PaletteUpload {
    const ALL: &'static [Self] = &[PaletteUpload::InPlace, PaletteUpload::Staged, PaletteUpload::Dirty];
    fn name(self) -> &'static str {
        match self {
            PaletteUpload::InPlace => "inplace",
            PaletteUpload::Staged => "staged",
            PaletteUpload::Dirty => "dirty",
        }
    }
    fn help(self) -> &'static str {
        match self {
            PaletteUpload::InPlace => "written into host-visible memory the skin pass reads directly",
            PaletteUpload::Staged => {
                "written into host-visible staging memory, then copied into device-local memory"
            }
            PaletteUpload::Dirty => "only characters whose pose changed are written (and copied)",
        }
    }
}

impl PaletteUpload {
    /// Whether the shaders read a device-local copy (made each frame by a
    /// staged copy) rather than the host-written memory itself.
    pub fn staged(self) -> bool {
        self != PaletteUpload::InPlace
    }

    /// Whether characters whose pose did not change upload nothing: only
    /// then does pausing them change what a frame costs.
    pub fn skips_unchanged(self) -> bool {
        self == PaletteUpload::Dirty
    }
}

/// Where crowd characters' poses are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PoseEvaluation {
    /// The CPU samples, blends and accumulates every pose and uploads a
    /// palette per character (a matrix per joint).
    #[default]
    Cpu,
    /// A compute pass samples, blends and accumulates the crowd's poses
    /// into the palette (shaders/pose.comp); the CPU runs the controllers
    /// and uploads each character's playback (a few dozen bytes).
    Gpu,
}

impl Choice for PoseEvaluation {
    const ALL: &'static [Self] = &[PoseEvaluation::Cpu, PoseEvaluation::Gpu];
    fn name(self) -> &'static str {
        match self {
            PoseEvaluation::Cpu => "cpu",
            PoseEvaluation::Gpu => "gpu",
        }
    }
    fn help(self) -> &'static str {
        match self {
            PoseEvaluation::Cpu => "the CPU poses every character and uploads its palette",
            PoseEvaluation::Gpu => {
                "a compute pass poses the crowd from each character's playback (clips, times, weights)"
            }
        }
    }
}

/// Which draw passes a frame runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PassSetup {
    /// The main pass alone.
    #[default]
    Main,
    /// A depth prepass, then the main pass (depth-equal, no overdraw).
    DepthPrepass,
    /// Four shadow cascades of the key light, then the main pass, which
    /// samples them.
    ShadowCascades,
}

impl Choice for PassSetup {
    const ALL: &'static [Self] = &[PassSetup::Main, PassSetup::DepthPrepass, PassSetup::ShadowCascades];
    fn name(self) -> &'static str {
        match self {
            PassSetup::Main => "1",
            PassSetup::DepthPrepass => "2",
            PassSetup::ShadowCascades => "5",
        }
    }
    fn help(self) -> &'static str {
        match self {
            PassSetup::Main => "the main pass",
            PassSetup::DepthPrepass => "a depth prepass + the main pass",
            PassSetup::ShadowCascades => "4 shadow cascades of the key light + the main pass, with shadows",
        }
    }
}

impl PassSetup {
    /// Draw passes per frame: 1, 2 or 5.
    pub fn count(self) -> u32 {
        match self {
            PassSetup::Main => 1,
            PassSetup::DepthPrepass => 2,
            PassSetup::ShadowCascades => 1 + super::shadow::CASCADES as u32,
        }
    }

    /// The setup with `count` passes.
    pub fn from_count(count: u32) -> Option<Self> {
        <Self as Choice>::ALL.iter().copied().find(|p| p.count() == count)
    }
}

/// Which detail level each character draws (see `render::detail_levels`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DrawDetail {
    /// Per character and frame, the coarsest level whose error projects to
    /// within half a pixel; characters out of the camera's view drawn into
    /// the shadow cascades alone.
    #[default]
    Auto,
    /// Every character draws its full mesh in every pass.
    Full,
}

impl Choice for DrawDetail {
    const ALL: &'static [Self] = &[DrawDetail::Auto, DrawDetail::Full];
    fn name(self) -> &'static str {
        match self {
            DrawDetail::Auto => "auto",
            DrawDetail::Full => "full",
        }
    }
    fn help(self) -> &'static str {
        match self {
            DrawDetail::Auto => {
                "distant characters draw simplified meshes within half a pixel; those out of view are culled"
            }
            DrawDetail::Full => "every character draws its full mesh in every pass",
        }
    }
}

/// Where and how vertices are skinned, as the benchmark's modes name them
/// (`compute`, `vertex`, `dqs-compute`, `dqs-vertex`; results.json's
/// `skinning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SkinningMode {
    /// Compute pass or vertex shader.
    pub placement: SkinningPlacement,
    /// Linear or dual-quaternion blending.
    pub method: SkinningMethod,
}

impl SkinningMode {
    /// Linear blending in the compute pass.
    pub const COMPUTE: SkinningMode =
        SkinningMode { placement: SkinningPlacement::Compute, method: SkinningMethod::Linear };
    /// Linear blending in the vertex shader.
    pub const VERTEX: SkinningMode =
        SkinningMode { placement: SkinningPlacement::Vertex, method: SkinningMethod::Linear };
    /// Dual quaternions in the compute pass.
    pub const DQS_COMPUTE: SkinningMode =
        SkinningMode { placement: SkinningPlacement::Compute, method: SkinningMethod::DualQuaternion };
    /// Dual quaternions in the vertex shader.
    pub const DQS_VERTEX: SkinningMode =
        SkinningMode { placement: SkinningPlacement::Vertex, method: SkinningMethod::DualQuaternion };
}

impl Choice for SkinningMode {
    const ALL: &'static [Self] =
        &[SkinningMode::COMPUTE, SkinningMode::VERTEX, SkinningMode::DQS_COMPUTE, SkinningMode::DQS_VERTEX];
    fn name(self) -> &'static str {
        match (self.method, self.placement) {
            (SkinningMethod::Linear, SkinningPlacement::Compute) => "compute",
            (SkinningMethod::Linear, SkinningPlacement::Vertex) => "vertex",
            (SkinningMethod::DualQuaternion, SkinningPlacement::Compute) => "dqs-compute",
            (SkinningMethod::DualQuaternion, SkinningPlacement::Vertex) => "dqs-vertex",
        }
    }
    fn help(self) -> &'static str {
        match (self.method, self.placement) {
            (SkinningMethod::Linear, SkinningPlacement::Compute) => {
                "linear blend skinning in the compute pass, once per frame; every draw pass reads the result"
            }
            (SkinningMethod::Linear, SkinningPlacement::Vertex) => {
                "linear blend skinning in the vertex shader of every draw pass"
            }
            (SkinningMethod::DualQuaternion, SkinningPlacement::Compute) => {
                "dual-quaternion skinning in the compute pass"
            }
            (SkinningMethod::DualQuaternion, SkinningPlacement::Vertex) => {
                "dual-quaternion skinning in the vertex shader of every draw pass"
            }
        }
    }
}

/// How a frame is skinned, uploaded and drawn: one of each choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FrameSettings {
    /// Compute pass or vertex shader.
    pub placement: SkinningPlacement,
    /// How influences are blended (and where dual quaternions split).
    pub blend: InfluenceBlend,
    /// How palettes reach the GPU.
    pub upload: PaletteUpload,
    /// Which draw passes run.
    pub passes: PassSetup,
    /// Where the crowd's poses are evaluated.
    pub pose: PoseEvaluation,
    /// Which detail level characters draw.
    pub detail: DrawDetail,
}

impl FrameSettings {
    /// The benchmark's name for the placement and method together.
    pub fn mode(&self) -> SkinningMode {
        SkinningMode { placement: self.placement, method: self.blend.method }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_round_trip<T: Choice + std::fmt::Debug>() {
        for &value in T::ALL {
            assert_eq!(T::from_name(value.name()), Some(value));
            assert!(!value.help().is_empty());
        }
        assert_eq!(T::from_name("no such value"), None);
    }

    #[test]
    fn every_choice_is_found_by_its_name() {
        names_round_trip::<SkinningPlacement>();
        names_round_trip::<SkinningMethod>();
        names_round_trip::<DqsSplit>();
        names_round_trip::<PaletteUpload>();
        names_round_trip::<PassSetup>();
        names_round_trip::<DrawDetail>();
        names_round_trip::<SkinningMode>();
    }

    #[test]
    fn pass_setups_are_1_2_and_5() {
        let counts: Vec<u32> = <PassSetup as Choice>::ALL.iter().map(|p| p.count()).collect();
        assert_eq!(counts, [1, 2, 5]);
        assert_eq!(PassSetup::from_count(5), Some(PassSetup::ShadowCascades));
        assert_eq!(PassSetup::from_count(3), None);
    }

    #[test]
    fn only_dqs_with_the_cpu_split_changes_the_palette() {
        let holds = |method, dqs_split| InfluenceBlend { method, dqs_split }.palette_holds_dual_quaternions();
        assert!(!holds(SkinningMethod::Linear, DqsSplit::Shader));
        assert!(!holds(SkinningMethod::Linear, DqsSplit::Cpu));
        assert!(!holds(SkinningMethod::DualQuaternion, DqsSplit::Shader));
        assert!(holds(SkinningMethod::DualQuaternion, DqsSplit::Cpu));
    }

    #[test]
    fn modes_combine_placement_and_method() {
        let settings = FrameSettings {
            placement: SkinningPlacement::Vertex,
            blend: InfluenceBlend { method: SkinningMethod::DualQuaternion, dqs_split: DqsSplit::Cpu },
            ..FrameSettings::default()
        };
        assert_eq!(settings.mode().name(), "dqs-vertex");
        assert_eq!(settings.blend.split(), Some(DqsSplit::Cpu));
        assert_eq!(FrameSettings::default().blend.split(), None);
        assert_eq!(FrameSettings::default().upload, PaletteUpload::Dirty);
    }
}
