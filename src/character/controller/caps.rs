//! How large a controller file may be, checked while it is parsed (before
//! memory is spent on what it declares): its size, the number of each kind
//! of element, the length of its names and conditions, how deep its
//! brackets nest. The caps are generous for real controllers (the
//! controllers guide page lists them); past one, parsing stops with a
//! message naming the cap, e.g. `more than 10000 transitions (the most a
//! controller may have)`. The `serde(deserialize_with)` helpers here are
//! what `file` uses; nothing here knows rigs or compiles anything.

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// Largest controller file read, in bytes (never more than `--max-memory`).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most parameters.
pub const MAX_PARAMETERS: usize = 100_000;
/// Most states.
pub const MAX_STATES: usize = 1_000;
/// Most transitions.
pub const MAX_TRANSITIONS: usize = 10_000;
/// Most `when` entries of one transition.
pub const MAX_CONDITIONS: usize = 64;
/// Most layers.
pub const MAX_LAYERS: usize = 100;
/// Most mask entries of one layer.
pub const MAX_MASK_ENTRIES: usize = 4_096;
/// Most inputs of one blend (each has a clip node below it).
pub const MAX_BLEND_INPUTS: usize = super::MAX_CLIP_NODES;
/// Most points of one blend space (each has a clip node below it).
pub const MAX_BLEND_POINTS: usize = super::MAX_CLIP_NODES;
/// Deepest nesting of brackets (`(`, `[`, `{`) in the file: blend trees
/// nested [`super::MAX_DEPTH`] deep need about seven levels each, and a
/// little more still reaches the compiler, whose message names the depth.
pub const MAX_NESTING: usize = 256;
/// Longest name (parameter, state, layer, clip, joint), in bytes.
pub const MAX_NAME_BYTES: usize = 1_024;
/// Longest `when` entry, in bytes.
pub const MAX_CONDITION_BYTES: usize = 1_024;

/// A list read element by element, refused once it has more than `max`.
struct BoundedList<T> {
    max: usize,
    what: &'static str,
    whose: &'static str,
    element: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for BoundedList<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a list of at most {} {}", self.max, self.what)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        // The size hint comes from the file: never trusted for capacity.
        let mut out = Vec::new();
        while let Some(element) = seq.next_element()? {
            if out.len() == self.max {
                return Err(A::Error::custom(format_args!(
                    "more than {} {} (the most {} may have)",
                    self.max, self.what, self.whose
                )));
            }
            out.push(element);
        }
        Ok(out)
    }
}

fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
    max: usize,
    what: &'static str,
    whose: &'static str,
) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(BoundedList { max, what, whose, element: PhantomData })
}

/// One `deserialize_with` function per capped list.
macro_rules! capped_lists {
    ($($name:ident: $max:expr, $what:literal, $whose:literal;)*) => {$(
        #[doc = concat!("A list of at most `", stringify!($max), "` ", $what, ".")]
        pub(super) fn $name<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
            list(d, $max, $what, $whose)
        }
    )*};
}

capped_lists! {
    parameters: MAX_PARAMETERS, "parameters", "a controller";
    states: MAX_STATES, "states", "a controller";
    transitions: MAX_TRANSITIONS, "transitions", "a controller";
    layers: MAX_LAYERS, "layers", "a controller";
    mask: MAX_MASK_ENTRIES, "mask entries", "a layer";
    inputs: MAX_BLEND_INPUTS, "inputs", "a blend";
    points: MAX_BLEND_POINTS, "points", "a blend space";
}

/// `text` when it is at most `max` bytes long.
fn short<E: Error>(text: String, max: usize, what: &str) -> Result<String, E> {
    if text.len() > max {
        return Err(E::custom(format_args!(
            "a {what} of {} bytes (the longest a {what} may be is {max})",
            text.len()
        )));
    }
    Ok(text)
}

/// A name of at most [`MAX_NAME_BYTES`].
pub(super) fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    short(String::deserialize(d)?, MAX_NAME_BYTES, "name")
}

/// An optional name of at most [`MAX_NAME_BYTES`].
pub(super) fn optional_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d)?.map(|n| short(n, MAX_NAME_BYTES, "name")).transpose()
}

/// The `when` entries: at most [`MAX_CONDITIONS`], each at most
/// [`MAX_CONDITION_BYTES`].
pub(super) fn conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let entries: Vec<String> = list(d, MAX_CONDITIONS, "conditions", "a transition")?;
    entries.into_iter().map(|c| short(c, MAX_CONDITION_BYTES, "condition")).collect()
}
