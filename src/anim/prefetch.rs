//! Asking the CPU to start loading memory that a loop reads soon.
//!
//! A large crowd's update waits on memory as well as arithmetic: 900
//! built-in characters, whose state stays in cache, update at about 95 ns
//! per joint, 10,000 at 120-145, each character's state (a few kilobytes in
//! a few dozen small heap blocks) out of cache when its turn comes. The stream prefetchers
//! cannot guess the next character's blocks, but the loop can: it names
//! them one character ahead, and their loads overlap the current
//! character's arithmetic (as ozz's and ACL's samplers prefetch the next
//! keys). A hint only: results never depend on it, and it does nothing
//! where the target has no prefetch instruction.
//!
//! Of an array only the first two lines are named: the update reads each
//! array in order, and the hardware's stream prefetcher follows it from
//! there. Naming every line took the line-fill buffers from the blocks it
//! cannot guess: 10,000 RobotExpressive characters (13 KB each, world
//! matrices and palettes 4.7 and 2.8 KB) updated at 33.3 ns per node with
//! every line named and at 31.1 with two, the built-in character at 73.1
//! and 70.0 per joint (one, four or eight lines: within a few percent of
//! two). A struct's own lines ([`value`]) are all named: its fields are
//! read in any order.

/// The cache line size assumed (x86-64 and most Arm cores).
const LINE: usize = 64;

/// Lines of an array named (see the module documentation).
const ARRAY_LINES: usize = 2;

/// Starts loading the first cache lines `items` lies on (the hardware
/// follows an array read in order from there).
#[inline(always)]
pub fn slice<T>(items: &[T]) {
    lines(items, ARRAY_LINES);
}

/// Starts loading every cache line `value` lies on (not what it points
/// to): its fields are read in any order.
#[inline(always)]
pub fn value<T>(value: &T) {
    lines(std::slice::from_ref(value), usize::MAX);
}

/// Starts loading at most `most` cache lines of `items`, from its first.
#[inline(always)]
fn lines<T>(items: &[T], most: usize) {
    let bytes = std::mem::size_of_val(items);
    if bytes == 0 {
        return;
    }
    // From the line holding the first byte to the one holding the last.
    let start = items.as_ptr().cast::<u8>();
    let misalignment = start as usize % LINE;
    let first = start.wrapping_sub(misalignment);
    for i in 0..(misalignment + bytes).div_ceil(LINE).min(most) {
        line(first.wrapping_add(i * LINE));
    }
}

#[inline(always)]
fn line(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address, and SSE (which
    // has it) is part of x86-64.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_and_alignment_is_a_hint_only() {
        let data: Vec<u8> = (0..=255).collect();
        for start in 0..70 {
            for len in [0, 1, 63, 64, 65, 130] {
                slice(&data[start..start + len]);
            }
        }
        value(&data);
        slice::<u64>(&[]);
        assert_eq!(data[200], 200);
    }
}
