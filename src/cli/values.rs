//! The one mapping from the frame vocabulary (`render::frame_settings`, and
//! `dump`'s skinning choice) to clap: every `Choice` parses as a value
//! enum, its names and help lines taken from the type itself. A new value
//! of a choice needs nothing here.

use crate::formats::dump::Skinning;
use crate::render::frame_settings::{
    Choice, DqsSplit, DrawDetail, PaletteUpload, PassSetup, PoseEvaluation, SkinningMethod, SkinningMode,
    SkinningPlacement,
};
use clap::ValueEnum;
use clap::builder::PossibleValue;

/// `impl ValueEnum` for choices (clap's trait is not implementable for
/// every `Choice` at once: the orphan rule wants each type named).
macro_rules! value_enum {
    ($($choice:ty),* $(,)?) => {$(
        impl ValueEnum for $choice {
            fn value_variants<'a>() -> &'a [Self] {
                <$choice as Choice>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(Choice::name(*self)).help(Choice::help(*self)))
            }
        }
    )*};
}

value_enum!(
    SkinningPlacement,
    SkinningMethod,
    DqsSplit,
    PaletteUpload,
    PassSetup,
    PoseEvaluation,
    DrawDetail,
    SkinningMode,
    Skinning
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_takes_the_choice_names() {
        assert_eq!(PaletteUpload::from_str("inplace", false), Ok(PaletteUpload::InPlace));
        assert_eq!(PassSetup::from_str("5", false), Ok(PassSetup::ShadowCascades));
        assert_eq!(SkinningMode::from_str("dqs-vertex", false), Ok(SkinningMode::DQS_VERTEX));
        assert_eq!(SkinningMethod::from_str("dqs", false), Ok(SkinningMethod::DualQuaternion));
        assert_eq!(DqsSplit::from_str("cpu", false), Ok(DqsSplit::Cpu));
        assert_eq!(SkinningPlacement::from_str("vertex", false), Ok(SkinningPlacement::Vertex));
        assert!(PassSetup::from_str("3", false).is_err());
        assert_eq!(PoseEvaluation::from_str("gpu", false), Ok(PoseEvaluation::Gpu));
    }
}
