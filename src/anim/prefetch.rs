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
//! The blocks are named once ([`Blocks`]) and kept as a few runs of cache
//! lines ([`Ranges`]): the heap hands out a character's blocks one after
//! another, so some thirty arrays make two to four runs, and naming them
//! takes a dozen instructions. Until 2026-12-05 every update named each
//! array again, about 1,150 instructions of a built-in character's 13,250
//! (9 %; `guide::performance_history` has the times). Of a run the first two lines are loaded into the first-level
//! cache and the rest into the second (`prefetcht1`): a run is read from
//! its start. Capping a run at 32 lines, as each array was capped before
//! (see below), measured 1.06x slower on 10,000 RobotExpressive
//! characters and 1.09x on the built-in: the runs are longer than any one
//! array was.
//!
//! Before runs, of an array the first two lines went into the first-level cache
//! and the next 30 into the second. Until 2026-12-04 only the first two
//! lines were named: on a 2-core AMD EPYC VM, naming every line into the
//! first level made 10,000 RobotExpressive characters (13 KB each, world
//! matrices and palettes 4.7 and 2.8 KB) 7 % slower, 33.3 against 31.1 ns
//! per node. On a 2-core Intel Xeon (Sapphire Rapids) VM the stream
//! prefetcher left the built-in character's short arrays (1.5 KB world
//! matrices and palettes) waiting: with the next lines into the second
//! level, 10,000 of them update at 63.1 ns per joint against 69.2
//! (0.91x, and 0.91-0.93x in three runs), the LOD mix at 0.93x.
//! RobotExpressive's long arrays gained nothing (1.00-1.03x, its noise);
//! every line of them into the second level measured 1.05x, then.
//! Medians of seven to nine turns, `--nlerp`, one thread. A struct's own
//! lines ([`value`]) all go to the first level: its fields are read in any
//! order.

/// The cache line size assumed (x86-64 and most Arm cores).
const LINE: usize = 64;

/// Lines at the start of a run loaded into the first-level cache, and
/// lines of a run loaded at most (see the module documentation).
const RUN_NEAR_LINES: usize = 2;
const RUN_MOST_LINES: usize = 1024;

/// Starts loading every cache line `value` lies on (not what it points
/// to): its fields are read in any order.
#[inline(always)]
pub fn value<T>(value: &T) {
    let (first, end) = lines_of(std::ptr::from_ref(value) as usize, std::mem::size_of_val(value));
    load(first, end - first, usize::MAX);
}

/// The lines `bytes` bytes from address `start` lie on: (first, one past
/// the last), in line numbers (addresses divided by the line size).
#[inline(always)]
fn lines_of(start: usize, bytes: usize) -> (usize, usize) {
    match bytes {
        0 => (start / LINE, start / LINE),
        _ => (start / LINE, (start + bytes).div_ceil(LINE)),
    }
}

/// Starts loading `count` lines from line number `first`: the first `near`
/// into the first-level cache, the others into the second.
#[inline(always)]
fn load(first: usize, count: usize, near: usize) {
    for i in 0..count {
        let address = ((first + i) * LINE) as *const u8;
        match i < near {
            true => line::<FIRST_LEVEL>(address),
            false => line::<SECOND_LEVEL>(address),
        }
    }
}

/// Blocks one [`Blocks`] holds at most; more are left out (a hint only).
const MOST_BLOCKS: usize = 128;

/// The memory blocks a loop will read for one item (a character's heap
/// arrays, a boxed struct), named once so that they can become a few
/// [`Ranges`]. Fixed size: collecting never allocates.
#[derive(Debug, Clone)]
pub struct Blocks {
    /// (first byte, bytes) of each block named.
    found: [(usize, usize); MOST_BLOCKS],
    len: usize,
}

impl Default for Blocks {
    fn default() -> Self {
        Blocks { found: [(0, 0); MOST_BLOCKS], len: 0 }
    }
}

impl Blocks {
    /// The bytes of `items` (nothing when empty).
    pub fn slice<T>(&mut self, items: &[T]) {
        self.add(items.as_ptr() as usize, std::mem::size_of_val(items));
    }

    /// The bytes of `value` itself (not what it points to).
    pub fn value<T>(&mut self, value: &T) {
        self.add(std::ptr::from_ref(value) as usize, std::mem::size_of_val(value));
    }

    fn add(&mut self, start: usize, bytes: usize) {
        if bytes > 0 && self.len < MOST_BLOCKS {
            self.found[self.len] = (start, bytes);
            self.len += 1;
        }
    }

    /// The cache lines of the blocks as at most [`RANGES`] runs: blocks
    /// on neighbouring lines (the heap hands out consecutive blocks one
    /// after another) merge into one run; past `RANGES` runs the shortest
    /// are left out.
    pub fn ranges(&self) -> Ranges {
        // In place on a copy: building ranges never allocates either.
        let mut runs = self.found;
        let runs = &mut runs[..self.len];
        for (start, bytes) in runs.iter_mut() {
            (*start, *bytes) = lines_of(*start, *bytes);
        }
        runs.sort_unstable();
        let mut len = 0usize;
        for i in 0..runs.len() {
            let (first, end) = runs[i];
            match len.checked_sub(1).map(|last| &mut runs[last]) {
                // Touching, overlapping, or one line apart: one run (at
                // most one line loaded in vain).
                Some(run) if first <= run.1 + 1 => run.1 = run.1.max(end),
                _ => {
                    runs[len] = (first, end);
                    len += 1;
                }
            }
        }
        let runs = &mut runs[..len];
        if runs.len() > RANGES {
            runs.sort_unstable_by_key(|&(first, end)| std::cmp::Reverse(end - first));
            runs[..RANGES].sort_unstable();
        }
        let mut ranges = Ranges::default();
        for (i, &(first, end)) in runs.iter().take(RANGES).enumerate() {
            ranges.first_lines[i] = first;
            ranges.lines[i] = u16::try_from(end - first).unwrap_or(u16::MAX);
            ranges.len += 1;
        }
        ranges
    }
}

/// Runs of cache lines one [`Ranges`] holds at most.
pub const RANGES: usize = 4;

/// A few runs of cache lines to start loading together (see [`Blocks`]):
/// a dozen instructions for what took one call per array.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ranges {
    /// Each run's first line (its address divided by the line size).
    first_lines: [usize; RANGES],
    lines: [u16; RANGES],
    len: u8,
}

impl Ranges {
    /// Starts loading every run: its first lines into the first-level
    /// cache, the rest into the second (a run is read from its start).
    /// Every run's first lines are asked for before any run's rest: the
    /// core keeps only so many loads in flight, and a character's update
    /// reads the starts of its runs first. On a Zen 3 VM, 10,000 built-in
    /// characters updated 0.97x the time, RobotExpressive 0.97x (nine and
    /// seven turns, `--nlerp`, one thread).
    #[inline]
    pub fn prefetch(&self) {
        let runs = || self.first_lines.iter().zip(&self.lines).take(usize::from(self.len));
        for (&first, &lines) in runs() {
            load(first, usize::from(lines).min(RUN_NEAR_LINES), RUN_NEAR_LINES);
        }
        for (&first, &lines) in runs() {
            let lines = usize::from(lines).min(RUN_MOST_LINES);
            load(first + RUN_NEAR_LINES, lines.saturating_sub(RUN_NEAR_LINES), 0);
        }
    }

    /// Cache lines in all the runs.
    pub fn line_count(&self) -> usize {
        self.lines.iter().take(usize::from(self.len)).map(|&l| usize::from(l)).sum()
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

    /// (first line, lines) of each run.
    fn runs(ranges: &Ranges) -> Vec<(usize, u16)> {
        ranges.first_lines.iter().copied().zip(ranges.lines).take(usize::from(ranges.len)).collect()
    }

    #[test]
    fn blocks_on_neighbouring_lines_make_one_run() {
        let data = vec![0u8; 64 * 64];
        let line0 = data.as_ptr() as usize / LINE + 1;
        let at = |line: usize, offset: usize, len: usize| {
            let start = (line0 + line) * LINE + offset - data.as_ptr() as usize;
            &data[start..start + len]
        };
        let mut blocks = Blocks::default();
        // Named out of order: lines 0-1, 1, 2 and 4 touch or lie one
        // line apart; 7 and 10-11 lie two lines or more from the others.
        blocks.slice(at(10, 0, 100));
        blocks.slice(at(1, 8, 56));
        blocks.slice(at(0, 40, 30));
        blocks.slice(at(4, 0, 10));
        blocks.slice(at(2, 0, 64));
        blocks.slice(at(7, 0, 1));
        blocks.slice::<u64>(&[]);
        let ranges = blocks.ranges();
        assert_eq!(runs(&ranges), [(line0, 5), (line0 + 7, 1), (line0 + 10, 2)]);
        assert_eq!(ranges.line_count(), 8);
        ranges.prefetch();
        value(&data);
    }

    #[test]
    fn past_the_most_runs_the_shortest_are_left_out() {
        let data = vec![0u8; 64 * 64];
        let line0 = data.as_ptr() as usize / LINE + 1;
        let mut blocks = Blocks::default();
        // Runs of 1, 5, 2, 4, 3 lines, three lines apart.
        let mut line = line0;
        let mut expected = Vec::new();
        for lines in [1, 5, 2, 4, 3] {
            let start = line * LINE - data.as_ptr() as usize;
            blocks.slice(&data[start..start + lines * LINE]);
            expected.push((line, lines as u16));
            line += lines + 3;
        }
        expected.remove(0);
        assert_eq!(RANGES, 4);
        assert_eq!(runs(&blocks.ranges()), expected);
    }

    #[test]
    fn blocks_past_the_most_are_left_out_not_an_error() {
        let data = vec![0u32; 4 * MOST_BLOCKS + 4];
        let mut blocks = Blocks::default();
        for chunk in data.chunks(2) {
            blocks.slice(chunk);
        }
        // The blocks named first, in one run.
        let ranges = blocks.ranges();
        assert_eq!(ranges.len, 1);
        let bytes = MOST_BLOCKS * 8;
        let first = data.as_ptr() as usize;
        assert_eq!(usize::from(ranges.lines[0]), (first + bytes).div_ceil(LINE) - first / LINE);
    }
}
