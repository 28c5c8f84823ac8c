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
//! Of an array the first two lines are loaded into the first-level cache
//! and the next 30 into the second (`prefetcht1`): the update reads each
//! array in order from its start, and past 2 KB the hardware's stream
//! prefetcher has long picked it up. Until 2026-12-04 only the first two
//! lines were named: on a 2-core AMD EPYC VM, naming every line into the
//! first level made 10,000 RobotExpressive characters (13 KB each, world
//! matrices and palettes 4.7 and 2.8 KB) 7 % slower, 33.3 against 31.1 ns
//! per node. On a 2-core Intel Xeon (Sapphire Rapids) VM the stream
//! prefetcher left the built-in character's short arrays (1.5 KB world
//! matrices and palettes) waiting: with the next lines into the second
//! level, 10,000 of them update at 63.1 ns per joint against 69.2
//! (0.91x, and 0.91-0.93x in three runs), the LOD mix at 0.93x.
//! RobotExpressive's long arrays gain nothing (1.00-1.03x, its noise);
//! every line of them into the second level measured 1.05x, the
//! prefetches then waiting on each other, hence the cap. 1,000 built-in
//! characters, whose state stays in the last-level cache, pay 1.03-1.08x.
//! Medians of seven to nine turns, `--nlerp`, one thread. A struct's own
//! lines ([`value`]) all go to the first level: its fields are read in any
//! order.

/// The cache line size assumed (x86-64 and most Arm cores).
const LINE: usize = 64;

/// Lines at the start of an array loaded into the first-level cache, and
/// lines in all loaded (see the module documentation).
const ARRAY_LINES: usize = 2;
const ARRAY_MOST_LINES: usize = 32;

/// Starts loading the cache lines `items` lies on: the first into the
/// first-level cache, the rest into the second (an array is read in order
/// from its start).
#[inline(always)]
pub fn slice<T>(items: &[T]) {
    lines(items, ARRAY_LINES, ARRAY_MOST_LINES);
}

/// Starts loading every cache line `value` lies on (not what it points
/// to): its fields are read in any order.
#[inline(always)]
pub fn value<T>(value: &T) {
    lines(std::slice::from_ref(value), usize::MAX, usize::MAX);
}

/// Starts loading the first `most` cache lines of `items`: the first
/// `near` into the first-level cache, the others into the second.
#[inline(always)]
fn lines<T>(items: &[T], near: usize, most: usize) {
    let bytes = std::mem::size_of_val(items);
    if bytes == 0 {
        return;
    }
    // From the line holding the first byte to the one holding the last.
    let start = items.as_ptr().cast::<u8>();
    let misalignment = start as usize % LINE;
    let first = start.wrapping_sub(misalignment);
    let count = (misalignment + bytes).div_ceil(LINE).min(most);
    for i in 0..count.min(near) {
        line::<FIRST_LEVEL>(first.wrapping_add(i * LINE));
    }
    for i in near..count {
        line::<SECOND_LEVEL>(first.wrapping_add(i * LINE));
    }
}

/// The `line` hints: into the first-level cache (and those below), or
/// into the second-level cache (and below).
const FIRST_LEVEL: i32 = 0;
const SECOND_LEVEL: i32 = 1;

#[inline(always)]
fn line<const LEVEL: i32>(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address, and SSE (which
    // has it) is part of x86-64.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
        match LEVEL {
            FIRST_LEVEL => _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()),
            _ => _mm_prefetch::<_MM_HINT_T1>(address.cast::<i8>()),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_and_alignment_is_a_hint_only() {
        let data: Vec<u8> = (0..=255).cycle().take(4096).collect();
        for start in 0..70 {
            // Within the first-level lines, past them, past the cap.
            for len in [0, 1, 63, 64, 65, 130, 2047, 2048, 2049, 4000] {
                slice(&data[start..start + len]);
            }
        }
        value(&data);
        slice::<u64>(&[]);
        assert_eq!(data[200], 200);
    }
}
