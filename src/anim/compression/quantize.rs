//! Quantized key values: a bit stream of fixed-width fields, values
//! range-reduced per track (`min + q * step`, `q` an unsigned integer of
//! `bits` bits), and rotations in "smallest three" form (one component left
//! out and rebuilt from the unit length).
//!
//! Bits and values only: nothing here decides how many bits or which keys a
//! track keeps (see `reduce`).

/// Widest field a track may use per component (f32 has a 24-bit significand:
/// more bits cannot help).
pub const MAX_BITS: u32 = 24;

/// Appends fixed-width unsigned fields, least significant bit first.
#[derive(Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    bits: u64,
}

impl BitWriter {
    /// Bits written so far.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Appends the low `width` bits of `value` (`width` at most 32).
    pub fn push(&mut self, value: u32, width: u32) {
        debug_assert!(width <= 32 && (width == 32 || value >> width == 0));
        for i in 0..width {
            let byte = (self.bits >> 3) as usize;
            if byte == self.bytes.len() {
                self.bytes.push(0);
            }
            self.bytes[byte] |= (((value >> i) & 1) as u8) << (self.bits & 7);
            self.bits += 1;
        }
    }

    /// The stream, padded with 8 zero bytes so that `read_bits` may always
    /// load a whole `u64`.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.extend_from_slice(&[0; 8]);
        self.bytes.shrink_to_fit();
        self.bytes
    }
}

/// Reads `width` (at most 32) bits at bit offset `bit` of a stream made by
/// [`BitWriter::finish`]: one unaligned little-endian load and a shift.
#[inline(always)]
pub fn read_bits(stream: &[u8], bit: u64, width: u32) -> u32 {
    (load_bits(stream, bit) & ((1u64 << width) - 1)) as u32
}

/// Reads fields of at most 32 bits one after another from a stream made
/// by [`BitWriter::finish`], as [`read_bits`] reads each, loading a `u64`
/// only when the bits left in the last one run out (a cubic rotation
/// key's twelve components take two or three loads, not twelve).
pub struct BitReader<'a> {
    stream: &'a [u8],
    /// Bit offset of the next field.
    bit: u64,
    /// The loaded bits from there on, `left` of them valid.
    word: u64,
    left: u32,
}

impl<'a> BitReader<'a> {
    /// Fields from bit offset `bit` on.
    pub fn new(stream: &'a [u8], bit: u64) -> Self {
        BitReader { stream, bit, word: 0, left: 0 }
    }

    /// The next `width` (at most 32) bits.
    #[inline(always)]
    pub fn read(&mut self, width: u32) -> u32 {
        if width > self.left {
            self.word = load_bits(self.stream, self.bit);
            self.left = 57;
        }
        let field = (self.word & ((1u64 << width) - 1)) as u32;
        self.word >>= width;
        self.left -= width;
        self.bit += u64::from(width);
        field
    }
}

/// The 57 or more bits that start at bit offset `bit` (0 past the end).
#[inline(always)]
pub fn load_bits(stream: &[u8], bit: u64) -> u64 {
    let byte = (bit >> 3) as usize;
    match stream.get(byte..byte + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]) >> (bit & 7),
        _ => 0,
    }
}

/// Range reduction of one component: `value = min + q * step`, `q` in
/// `0..2^bits`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Smallest value.
    pub min: f32,
    /// Value of one quantization step: a bfloat16 (the high 16 bits of
    /// an f32, see [`Range::step_bits`]), so that a track header stores it
    /// in two bytes. Rounded up: a step under 0.8 % coarser, and the
    /// range still covers `lo..=hi`.
    pub step: f32,
}

impl Range {
    /// The step, rounded up to a bfloat16, that covers a range `width` wide
    /// with `bits`-bit integers.
    pub fn step_for(width: f64, bits: u32) -> f32 {
        bfloat16_up((width.max(0.0) / ((1u64 << bits) - 1) as f64) as f32)
    }

    /// The fewest bits, with `step` (a bfloat16, see [`Range::step_for`])
    /// between levels, that cover `lo..=hi` with an error of at most half a
    /// step, and that range. A component spanning at most one step needs
    /// none: its middle is within half a step of every value.
    pub fn fitted(lo: f64, hi: f64, step: f32) -> (Range, u32) {
        let width = hi - lo;
        if step <= 0.0 || width <= f64::from(step) {
            return (Range { min: ((lo + hi) / 2.0) as f32, step }, 0);
        }
        let min = lo as f32;
        let mut bits = 1;
        while bits < MAX_BITS && f64::from(min) + f64::from(step) * (((1u64 << bits) - 1) as f64) < hi {
            bits += 1;
        }
        (Range { min, step }, bits)
    }

    /// The step's bfloat16 bits.
    pub fn step_bits(&self) -> u16 {
        (self.step.to_bits() >> 16) as u16
    }

    /// The step stored as [`Range::step_bits`].
    #[inline(always)]
    pub fn step_from_bits(bits: u16) -> f32 {
        f32::from_bits(u32::from(bits) << 16)
    }

    /// The integer nearest to `value` (clamped to the range).
    pub fn quantize(&self, value: f64, bits: u32) -> u32 {
        let max = ((1u64 << bits) - 1) as f64;
        if self.step <= 0.0 || bits == 0 {
            return 0;
        }
        ((value - f64::from(self.min)) / f64::from(self.step)).round().clamp(0.0, max) as u32
    }

    /// The value of integer `q`.
    #[inline(always)]
    pub fn value(&self, q: u32) -> f32 {
        self.min + q as f32 * self.step
    }
}

/// The smallest bfloat16 at or above `x` (finite, not negative), as an f32.
fn bfloat16_up(x: f32) -> f32 {
    let bits = x.to_bits();
    if bits & 0xffff == 0 { x } else { f32::from_bits((bits & 0xffff_0000) + 0x1_0000) }
}

/// Rebuilds the left-out component of a unit quaternion from the other three.
#[inline(always)]
pub fn rebuild_component(a: f32, b: f32, c: f32) -> f32 {
    (1.0 - a * a - b * b - c * c).max(0.0).sqrt()
}

/// The three components a rotation key keeps when `dropped` (0..4, the
/// order of nalgebra's `coords`: x, y, z, w) is left out, with the sign
/// chosen so that the dropped one is not negative (`q` and `-q` are the
/// same rotation).
pub fn smallest_three(q: [f64; 4], dropped: usize) -> [f64; 3] {
    let sign = if q[dropped] < 0.0 { -1.0 } else { 1.0 };
    let mut out = [0.0; 3];
    let mut n = 0;
    for (i, c) in q.iter().enumerate() {
        if i != dropped {
            out[n] = c * sign;
            n += 1;
        }
    }
    out
}

/// The quaternion (x, y, z, w) from its kept components and the dropped index.
#[inline(always)]
pub fn from_smallest_three(kept: [f32; 3], dropped: usize) -> [f32; 4] {
    let rebuilt = rebuild_component(kept[0], kept[1], kept[2]);
    match dropped {
        0 => [rebuilt, kept[0], kept[1], kept[2]],
        1 => [kept[0], rebuilt, kept[1], kept[2]],
        2 => [kept[0], kept[1], rebuilt, kept[2]],
        _ => [kept[0], kept[1], kept[2], rebuilt],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields of every width written one after another read back alone
    /// at their offsets (`read_bits`) and in a run from any of them
    /// (`BitReader`, reloading as its bits run out).
    #[test]
    fn bits_round_trip_at_any_offset() {
        let mut w = BitWriter::default();
        let widths = (0..=32).chain((0..=32).rev()).chain([7, 0, 32, 1, 32, 3]);
        let fields: Vec<(u32, u32)> =
            widths.map(|width| (((1u64 << width) - 1) as u32 / 3 + width, width)).collect();
        let fields: Vec<(u32, u32)> =
            fields.into_iter().map(|(v, width)| (v & ((1u64 << width) - 1) as u32, width)).collect();
        for &(v, width) in &fields {
            w.push(v, width);
        }
        let total = w.bits();
        let stream = w.finish();
        let mut bit = 0;
        let mut starts = Vec::new();
        for &(v, width) in &fields {
            assert_eq!(read_bits(&stream, bit, width), v, "width {width}");
            starts.push(bit);
            bit += u64::from(width);
        }
        assert_eq!(bit, total);
        for (first, &start) in starts.iter().enumerate() {
            let mut reader = BitReader::new(&stream, start);
            for (i, &(v, width)) in fields.iter().enumerate().skip(first) {
                assert_eq!(reader.read(width), v, "field {i} (width {width}) read on from field {first}");
            }
        }
    }

    #[test]
    fn range_error_is_half_a_step() {
        let bits = 10;
        let step = Range::step_for(5.0, bits);
        // The step is a bfloat16 under 0.8 % (2^-7) over the exact one.
        let exact = 5.0 / 1023.0;
        assert!(f64::from(step) >= exact && f64::from(step) < exact * (1.0 + 1.0 / 128.0), "{step}");
        let (r, fitted) = Range::fitted(-2.0, 3.0, step);
        assert_eq!(fitted, bits);
        assert_eq!(Range::step_from_bits(r.step_bits()), r.step);
        for i in 0..=1000 {
            let v = -2.0 + 5.0 * f64::from(i) / 1000.0;
            let back = f64::from(r.value(r.quantize(v, bits)));
            assert!((back - v).abs() <= f64::from(step) / 2.0 + 1e-6, "{v} -> {back}");
        }
        // The low end is exact; the range covers the high one.
        assert_eq!(r.quantize(-2.0, bits), 0);
        assert!(f64::from(r.value(1023)) >= 3.0);
        // A narrower component with the same step needs fewer bits; one
        // within a step none, its middle within half a step of both ends.
        assert_eq!(Range::fitted(0.0, 5.0 / 16.0, step).1, 7);
        let (middle, none) = Range::fitted(1.0, 1.0 + f64::from(step), step);
        assert_eq!(none, 0);
        assert_eq!(middle.quantize(1.0, 0), 0);
        assert!((f64::from(middle.value(0)) - 1.0 - f64::from(step) / 2.0).abs() < 1e-6);
    }

    #[test]
    fn smallest_three_round_trips_either_sign() {
        let q = [0.1f64, -0.7, 0.2, 0.6];
        let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        let q = q.map(|c| c / n);
        for dropped in 0..4 {
            for sign in [1.0, -1.0] {
                let kept = smallest_three(q.map(|c| c * sign), dropped).map(|c| c as f32);
                let back = from_smallest_three(kept, dropped);
                // Same rotation: equal up to the sign of the whole quaternion.
                let dot: f64 = back.iter().zip(&q).map(|(a, b)| f64::from(*a) * b).sum();
                assert!((dot.abs() - 1.0).abs() < 1e-6, "dropped {dropped}: {back:?}");
            }
        }
    }
}
