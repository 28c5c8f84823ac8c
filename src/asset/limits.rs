//! How much a file may make vkskin allocate, and the other limits an
//! import enforces, so that a small hostile file cannot exhaust memory.
//!
//! Limits and accounting only: nothing here reads a file or makes the
//! allocations it charges for.
//!
//! Every large allocation an import makes for what a file declares (buffers,
//! accessor data, decoded images) is charged to the file's [`Budget`] before
//! it is made. A file may use `min(--max-memory, BASE_ALLOWANCE +
//! BYTES_PER_FILE_BYTE x its bytes)`: its bytes are the model file plus the
//! external buffers it reads, so a large file of real data loads, while a
//! 2 KB file declaring a 2^26-element matrix accessor (8 GiB) is refused
//! with one line naming the accessor and the size.

use super::error::AssetError;
use crate::anim::RotationBlend;
use std::cell::Cell;

/// Default of `--max-memory`: the most any file may make vkskin allocate.
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

/// Bytes every file may use, however small (decoded data is larger than
/// its encoding: quantized vertices, compressed images).
pub const BASE_ALLOWANCE: u64 = 128 << 20;

/// Bytes a file may use for each byte it has (model file and external
/// buffers): float data read through f64 takes 2x its size, 8-bit
/// quantized data 8x, an accessor read twice twice that.
pub const BYTES_PER_FILE_BYTE: u64 = 16;

/// Largest image width or height accepted when the device's
/// `maxImageDimension2D` is not known (16384 is what desktop GPUs offer;
/// the renderer may pass the device's own limit).
pub const MAX_IMAGE_DIMENSION: u32 = 16384;

/// Most joints a skin may have: a vertex names its joints with JOINTS_n,
/// at most UNSIGNED_SHORT, so a palette (one 64-byte matrix per joint in the
/// skin pass) never needs more than 65536 entries.
pub const MAX_SKIN_JOINTS: usize = 1 << 16;

/// What an import may read and allocate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// The most bytes one file may make vkskin allocate (`--max-memory`).
    pub max_memory: u64,
    /// Let buffer and image URIs name files outside the model's folder
    /// (absolute paths, `file:` URIs, `..`): `--allow-outside-uris`.
    pub allow_outside_uris: bool,
    /// Largest image width or height decoded.
    pub max_image_dimension: u32,
    /// Compress every clip when the rig is built (error bound 0.01 cm, see
    /// `Rig::compress_clips`), so that characters sample the compressed
    /// clips: `--compressed-clips`.
    pub compressed_clips: bool,
    /// How characters interpolate LINEAR rotation keys: slerp, exactly as
    /// glTF says (the default), or nlerp, ozz-animation's fast path for
    /// crowds (`--nlerp`); see `Rig::rotation_blend`.
    pub rotation_blend: RotationBlend,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_memory: DEFAULT_MAX_MEMORY,
            allow_outside_uris: false,
            max_image_dimension: MAX_IMAGE_DIMENSION,
            compressed_clips: false,
            rotation_blend: RotationBlend::Slerp,
        }
    }
}

impl LoadOptions {
    /// A file of `size` bytes may be read whole only within `max_memory`.
    pub fn check_file_size(&self, size: u64) -> Result<(), AssetError> {
        if size <= self.max_memory {
            return Ok(());
        }
        Err(AssetError::OverBudget {
            what: "the file".into(),
            asked: size,
            allowed: self.max_memory,
            max_memory: self.max_memory,
        })
    }
}

/// The memory one file may still use. Charges only grow: what was read
/// stays in the model.
#[derive(Debug)]
pub struct Budget {
    max_memory: u64,
    /// Bytes of real data seen (file and external buffers).
    backing: Cell<u64>,
    allowed: Cell<u64>,
    used: Cell<u64>,
}

impl Budget {
    /// The budget of a file of `file_bytes` bytes.
    pub fn new(options: &LoadOptions, file_bytes: u64) -> Self {
        let budget = Budget {
            max_memory: options.max_memory,
            backing: Cell::new(0),
            allowed: Cell::new(0),
            used: Cell::new(0),
        };
        budget.add_backing(file_bytes);
        budget
    }

    /// An unlimited budget (for data built in memory by our own code).
    pub fn unlimited() -> Self {
        Budget {
            max_memory: u64::MAX,
            backing: Cell::new(0),
            allowed: Cell::new(u64::MAX),
            used: Cell::new(0),
        }
    }

    /// `bytes` more of real data (an external buffer) raise the allowance.
    pub fn add_backing(&self, bytes: u64) {
        self.backing.set(self.backing.get().saturating_add(bytes));
        let allowed = BASE_ALLOWANCE
            .saturating_add(self.backing.get().saturating_mul(BYTES_PER_FILE_BYTE))
            .min(self.max_memory);
        self.allowed.set(allowed.max(self.allowed.get()));
    }

    /// Bytes still available.
    pub fn remaining(&self) -> u64 {
        self.allowed.get().saturating_sub(self.used.get())
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// Whether `bytes` fit, without charging them; the error names `what()`.
    pub fn check(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), AssetError> {
        if bytes <= self.remaining() {
            Ok(())
        } else {
            Err(AssetError::OverBudget {
                what: what(),
                asked: bytes,
                allowed: self.remaining(),
                max_memory: self.max_memory,
            })
        }
    }

    /// Charges `bytes` (each factor of a product; an overflow is over budget).
    pub fn charge(&self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), AssetError> {
        self.check(bytes, what)?;
        self.used.set(self.used.get() + bytes);
        Ok(())
    }
}

/// Parses a `--max-memory` value: bytes, or a number with a unit (`K`,
/// `M`, `G`, `T`, powers of 1024, optionally followed by `iB` or `B`).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let bad = || format!("bad byte count \"{text}\": expected e.g. 2G, 512M or 1048576");
    let t = text.trim();
    let digits = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_uppercase();
    let unit = unit.trim_end_matches("IB").trim_end_matches('B');
    let scale: u64 = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = number * scale as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(bad());
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowance_grows_with_the_data_up_to_the_cap() {
        let options = LoadOptions::default();
        let b = Budget::new(&options, 1000);
        assert_eq!(b.remaining(), BASE_ALLOWANCE + 16_000);
        b.add_backing(1000);
        assert_eq!(b.remaining(), BASE_ALLOWANCE + 32_000);
        b.charge(32_000, || "x".into()).unwrap();
        assert_eq!(b.remaining(), BASE_ALLOWANCE);
        let e = b.charge(BASE_ALLOWANCE + 1, || "accessor 3".into()).unwrap_err();
        assert!(e.to_string().starts_with("accessor 3 needs 128.0 MiB (134217729 bytes)"), "{e}");
        let big = Budget::new(&options, 1 << 40);
        assert_eq!(big.remaining(), DEFAULT_MAX_MEMORY);
        let small = Budget::new(&LoadOptions { max_memory: 1000, ..options }, 10);
        assert_eq!(small.remaining(), 1000);
        assert!(small.check(1001, || "y".into()).is_err());
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5k"), Ok(1536));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        for bad in ["", "G", "-1", "0", "2X", "1e99G"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
