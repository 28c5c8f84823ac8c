//! A frame's upload split into pieces of characters, written on the
//! threads that pose the crowd (`render::chunked`).
//!
//! Reading each character's pose, playback and morph weights from where
//! its update left them is a few cache misses per character: at 100,000
//! characters, milliseconds in order on one thread. The upload instead
//! cuts the characters into pieces of `chunked::CHUNK`, and halves the
//! range (a [`Span`]) until one piece is left, splitting every buffer
//! it writes at the first character of the second half: its palette
//! entries, morph weights and GPU-pose playback slot, and its entries in
//! the per-character version arrays. A character's writes all lie within
//! its own span, so the halves run at once, in safe code, with nothing
//! allocated (rayon's `join` within the pool). What must come out in
//! character order (the queued palette copies, the GPU pose's records)
//! each piece keeps in its own [`UploadPiece`], and `upload` joins them
//! in order afterwards.

use super::SkinStats;
use super::plan::{CharacterPlace, PALETTE_ENTRY_BYTES};
use crate::gpu::GpuError;
use crate::render::chunked::CHUNK;
use ash::vk;

/// Bytes of a mapped buffer from byte `base` on, written by absolute offset.
pub(super) struct Window<'a> {
    bytes: &'a mut [u8],
    base: u64,
    /// What the buffer holds, for messages.
    what: &'static str,
}

impl<'a> Window<'a> {
    /// `bytes`, the buffer's own from byte `base`.
    pub(super) fn new(bytes: &'a mut [u8], base: u64, what: &'static str) -> Window<'a> {
        Window { bytes, base, what }
    }

    /// Copies `data` to the buffer's byte `offset`, which must lie in the window.
    pub(super) fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), GpuError> {
        let at = offset.checked_sub(self.base).and_then(|a| usize::try_from(a).ok());
        let range =
            at.and_then(|a| Some(a..a.checked_add(data.len())?)).filter(|r| r.end <= self.bytes.len());
        let range = range.ok_or_else(|| {
            GpuError::new(format!(
                "skin pass: {} bytes at {offset} lie outside the {} bytes {}..{} a character's piece owns",
                data.len(),
                self.what,
                self.base,
                self.base + self.bytes.len() as u64
            ))
        })?;
        self.bytes[range].copy_from_slice(data);
        Ok(())
    }

    /// Whether the buffer's byte `offset` lies in the window (or just past it).
    fn holds(&self, offset: u64) -> bool {
        offset >= self.base && offset - self.base <= self.bytes.len() as u64
    }

    /// The window cut at the buffer's byte `offset` (which it `holds`).
    fn split_at(self, offset: u64) -> (Window<'a>, Window<'a>) {
        let (what, base) = (self.what, self.base);
        let (low, high) = self.bytes.split_at_mut((offset - base) as usize);
        (Window { bytes: low, base, what }, Window { bytes: high, base: offset, what })
    }
}

/// What one piece of characters' upload leaves for `upload` to join, in
/// character order. Its lists hold a piece's worth from when characters
/// are added, so a frame allocates nothing.
#[derive(Default)]
pub(super) struct UploadPiece {
    /// What its characters wrote.
    pub(super) stats: SkinStats,
    /// Its characters posed on the GPU: their pose records, in order.
    pub(super) records: Vec<[u32; 4]>,
    /// Its staged palette copies (adjacent ranges merged).
    pub(super) copies: Vec<vk::BufferCopy>,
    /// Its characters whose staged palette awaits those copies.
    pub(super) pending: Vec<u32>,
    /// The first of its characters that could not be written, and why
    /// (the characters after it in the piece are left as they were).
    pub(super) error: Option<GpuError>,
}

impl UploadPiece {
    /// An empty piece with room for a piece's characters.
    pub(super) fn with_capacity() -> UploadPiece {
        UploadPiece {
            records: Vec::with_capacity(CHUNK),
            copies: Vec::with_capacity(CHUNK),
            pending: Vec::with_capacity(CHUNK),
            ..UploadPiece::default()
        }
    }

    /// Emptied for a new frame (its room kept).
    pub(super) fn clear(&mut self) {
        self.stats = SkinStats::default();
        self.records.clear();
        self.copies.clear();
        self.pending.clear();
        self.error = None;
    }
}

/// What a range of characters may write: theirs alone of every buffer and
/// per-character array the upload writes.
pub(super) struct Span<'a> {
    /// Its first character.
    pub(super) first: usize,
    /// Their palette entries (the slot's host palette: read in place, or
    /// staged for the device palette).
    pub(super) palette: Window<'a>,
    /// Their morph weights.
    pub(super) weights: Window<'a>,
    /// Their GPU-pose playback slots (empty without a pose program).
    pub(super) playback: Window<'a>,
    /// Per character, from `first`: the versions of the slot's weights,
    /// of its staging and of the device palette (`SlotBuffers::held`,
    /// `SlotBuffers::staged`, `DevicePalette::held`).
    pub(super) held: &'a mut [Option<u64>],
    pub(super) staged: &'a mut [Option<u64>],
    pub(super) device_held: &'a mut [Option<u64>],
    /// Its pieces, one per `CHUNK` characters from `first`.
    pub(super) pieces: &'a mut [UploadPiece],
}

impl<'a> Span<'a> {
    /// How many characters it holds.
    pub(super) fn len(&self) -> usize {
        self.held.len()
    }

    /// Where the span's middle piece (it has two or more) starts: its
    /// first character, and that character's first byte in the palette,
    /// the morph weights and the playback slots (given its place and the
    /// playback slot's size). Fails when the layout's places are not in
    /// character order.
    pub(super) fn middle(&self, places: &[CharacterPlace], playback_slot: u64) -> Result<Middle, GpuError> {
        let split = self.pieces.len() / 2 * CHUNK;
        let place = &places[self.first + split];
        let middle = Middle {
            split,
            palette: u64::from(place.palette_range.0) * PALETTE_ENTRY_BYTES,
            weights: u64::from(place.weight_base) * 4,
            playback: self.playback.base + split as u64 * playback_slot,
        };
        let empty_playback = self.playback.bytes.is_empty();
        if !self.palette.holds(middle.palette)
            || !self.weights.holds(middle.weights)
            || !(empty_playback || self.playback.holds(middle.playback))
        {
            return Err(GpuError::new(format!(
                "skin pass: character {}'s palette entries or morph weights lie before an earlier character's",
                self.first + split
            )));
        }
        Ok(middle)
    }

    /// The span cut in two at its `middle`.
    pub(super) fn halve(self, middle: Middle) -> (Span<'a>, Span<'a>) {
        let split = middle.split;
        let (palette, palette_high) = self.palette.split_at(middle.palette);
        let (weights, weights_high) = self.weights.split_at(middle.weights);
        let (playback, playback_high) = match self.playback.bytes.is_empty() {
            true => (Window::new(&mut [], 0, "pose state"), self.playback),
            false => self.playback.split_at(middle.playback),
        };
        let (held, held_high) = self.held.split_at_mut(split);
        let (staged, staged_high) = self.staged.split_at_mut(split);
        let (device_held, device_held_high) = self.device_held.split_at_mut(split);
        let (pieces, pieces_high) = self.pieces.split_at_mut(split / CHUNK);
        let low = Span { first: self.first, palette, weights, playback, held, staged, device_held, pieces };
        let high = Span {
            first: self.first + split,
            palette: palette_high,
            weights: weights_high,
            playback: playback_high,
            held: held_high,
            staged: staged_high,
            device_held: device_held_high,
            pieces: pieces_high,
        };
        (low, high)
    }
}

/// Where a span is cut in two (`Span::middle`): characters before the
/// cut, and the byte of each window at which the second half starts.
pub(super) struct Middle {
    split: usize,
    palette: u64,
    weights: u64,
    playback: u64,
}
