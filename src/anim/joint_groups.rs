//! A pose's joints eight at a time as one flat run of floats: the view
//! the eight-lane jobs (`blending::two_nlerp`, `layering::additive8`) load
//! and store through. `Transform` is `repr(C)`, ten floats with no
//! padding, so eight joints are eighty floats.

use super::lanes8::Lanes8;
use super::transform::Transform;
use std::mem::{offset_of, size_of};

/// Floats per joint: translation, rotation, scale.
pub(crate) const FLOATS: usize = 10;
/// Where the rotation's `x` sits among them.
pub(crate) const ROTATION: usize = 3;
/// Where the scale's `x` sits among them.
pub(crate) const SCALE: usize = 7;
/// Joints per group: two blocks of four, one per half of eight lanes.
pub(crate) const GROUP: usize = 8;
/// The floats of a group.
pub(crate) type Group = [f32; GROUP * FLOATS];

// The flat view relies on this layout.
const _: () = assert!(size_of::<Transform>() == FLOATS * size_of::<f32>());
const _: () = assert!(offset_of!(Transform, rotation) == ROTATION * size_of::<f32>());
const _: () = assert!(offset_of!(Transform, scale) == SCALE * size_of::<f32>());

/// A group's floats.
#[inline(always)]
pub(crate) fn group(joints: &[Transform]) -> &Group {
    assert_eq!(joints.len(), GROUP);
    // SAFETY: `Transform` is `repr(C)`, ten `f32`s with no padding (asserted
    // above), so eight of them are `GROUP * FLOATS` initialised, aligned floats.
    unsafe { &*joints.as_ptr().cast::<Group>() }
}

/// A group's floats, to write.
#[inline(always)]
pub(crate) fn group_mut(joints: &mut [Transform]) -> &mut Group {
    assert_eq!(joints.len(), GROUP);
    // SAFETY: as in `group`; and every bit pattern is a valid `f32`, so
    // any floats written leave valid `Transform`s.
    unsafe { &mut *joints.as_mut_ptr().cast::<Group>() }
}

/// Floats `at..at + 4`.
#[inline(always)]
pub(crate) fn four(s: &[f32], at: usize) -> &[f32; 4] {
    s[at..at + 4].try_into().expect("four floats")
}

/// Floats `at..at + 4` of each joint of a group as four lanes of one
/// component each: joint j in the low half, joint j + 4 in the high.
/// (Functions, not closures, here and in the jobs: a closure is not
/// compiled for AVX2 with the function around it.)
#[inline(always)]
pub(crate) fn components<L: Lanes8>(s: &Group, at: usize) -> [L; 4] {
    L::transpose_halves([row(s, 0, at), row(s, 1, at), row(s, 2, at), row(s, 3, at)])
}

/// Floats `at..at + 4` of joint `j` in the low half, of joint `j + 4` in the high.
#[inline(always)]
fn row<L: Lanes8>(s: &Group, j: usize, at: usize) -> L {
    L::join(four(s, j * FLOATS + at), four(s, (j + 4) * FLOATS + at))
}

/// `components` back: the lanes transposed, the first `len` floats of
/// each joint's four written to its floats `at..at + len`.
#[inline(always)]
pub(crate) fn store_components<L: Lanes8>(s: &mut Group, at: usize, components: [L; 4], len: usize) {
    for (j, row) in L::transpose_halves(components).into_iter().enumerate() {
        let row = row.to_array();
        let (low, high) = (j * FLOATS + at, (j + 4) * FLOATS + at);
        s[low..low + len].copy_from_slice(&row[..len]);
        s[high..high + len].copy_from_slice(&row[4..4 + len]);
    }
}
