//! The verdict on device memory: what a crowd of one model held on the GPU
//! while it was measured (`BenchEntry::device_bytes`: every allocation of
//! its scene, skinned output, palettes, records and render targets alike),
//! and what each character past the smallest crowd added, and so about
//! how many the device's heap holds. A crowd is limited by the device's
//! memory (the output above all), so this is how a user sees how large a
//! crowd the device holds, before `render` refuses one that does not fit.

use super::numbers::grouped;
use super::results::{BenchEntry, model_name};
use crate::text::human_bytes;
use serde::{Deserialize, Serialize};

/// Device memory, one model: the most any of its configurations held at
/// the largest and the smallest character counts measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryVerdict {
    /// The model's label.
    pub model: String,
    /// The largest character count measured...
    pub characters: u32,
    /// ...and the bytes its scene held.
    pub device_bytes: u64,
    /// The smallest count measured, where it is smaller, and the bytes
    /// each character past it added: the difference of the two scenes'
    /// bytes over the difference of their counts (what is fixed, the
    /// render targets and pipelines, drops out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_character: Option<(u32, f64)>,
    /// The device's largest device-local heap (the header's
    /// `device_local_bytes`) and about how many characters it holds: what
    /// the smallest scene held besides its characters, then as many more
    /// as fit at `per_character` each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fits: Option<(u64, u64)>,
}

/// One verdict per model whose entries say what their scenes held (files
/// from before `device_bytes` give none), on a device whose largest
/// device-local heap is `heap` bytes (where the file says).
pub fn memory(entries: &[BenchEntry], heap: Option<u64>) -> Vec<MemoryVerdict> {
    let mut models: Vec<&str> = Vec::new();
    for e in entries.iter().filter(|e| e.device_bytes.is_some()) {
        if !models.contains(&e.model.as_str()) {
            models.push(&e.model);
        }
    }
    let most_at = |model: &str, characters: u32| {
        let held = entries.iter().filter(|e| e.model == model && e.characters == characters);
        held.filter_map(|e| e.device_bytes).max().unwrap_or(0)
    };
    models
        .into_iter()
        .map(|model| {
            // The model has an entry with the figure, so the counts are not empty.
            let counts = entries.iter().filter(|e| e.model == model && e.device_bytes.is_some());
            let (smallest, largest) =
                counts.fold((u32::MAX, 0), |(lo, hi), e| (lo.min(e.characters), hi.max(e.characters)));
            let (device_bytes, smallest_bytes) = (most_at(model, largest), most_at(model, smallest));
            let per_character = (smallest < largest).then(|| {
                let added = device_bytes.saturating_sub(smallest_bytes) as f64;
                (smallest, added / f64::from(largest - smallest))
            });
            let fits = per_character.filter(|&(_, each)| each > 0.0).zip(heap).map(|((from, each), heap)| {
                let fixed = smallest_bytes as f64 - f64::from(from) * each;
                (heap, ((heap as f64 - fixed) / each).max(0.0).floor() as u64)
            });
            MemoryVerdict { model: model.to_string(), characters: largest, device_bytes, per_character, fits }
        })
        .collect()
}

impl MemoryVerdict {
    /// The verdict's line before the table.
    pub fn line(&self) -> String {
        let mut line = format!(
            "memory: {}: {} characters held {} of device memory",
            model_name(&self.model),
            grouped(u64::from(self.characters)),
            human_bytes(self.device_bytes)
        );
        if let Some((from, each)) = self.per_character {
            line += &format!(
                "; each character past {} added {}",
                grouped(u64::from(from)),
                human_bytes(each.round() as u64)
            );
        }
        if let Some((heap, fits)) = self.fits {
            line +=
                &format!("; the device's {} heap holds about {} of them", human_bytes(heap), grouped(fits));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;

    /// The largest scene's bytes (the most of its configurations), and
    /// what each character past the smallest count added; entries without
    /// the figure count for nothing, and one count gives no slope.
    #[test]
    fn memory_is_the_largest_scene_and_the_bytes_each_character_adds() {
        let held = |characters: u32, skinning: &str, bytes: Option<u64>| {
            let mut e = entry(characters, 1, skinning, "inplace", false);
            e.device_bytes = bytes;
            e
        };
        let entries = vec![
            held(10, "compute", Some(40_000_000)),
            held(1_000, "compute", Some(157_000_000)),
            held(1_000, "vertex", Some(41_000_000)),
            held(5_000, "compute", None),
        ];
        let v = memory(&entries, None);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].characters, v[0].device_bytes), (1_000, 157_000_000));
        let (from, each) = v[0].per_character.unwrap();
        assert_eq!(from, 10);
        assert!((each - 117_000_000.0 / 990.0).abs() < 1e-6, "{each}");
        assert_eq!(
            v[0].line(),
            format!(
                "memory: {}: 1,000 characters held 149.7 MiB of device memory; each character past 10 \
                 added 115.4 KiB",
                model_name(&entries[0].model)
            )
        );
        let one = memory(&entries[..1], Some(1 << 30));
        assert_eq!(one[0].per_character, None);
        assert!(one[0].line().ends_with("10 characters held 38.1 MiB of device memory"), "{}", one[0].line());
        assert_eq!(one[0].fits, None, "no slope, no estimate");
        assert!(memory(&entries[3..], None).is_empty(), "no figure, no verdict");
        // 2 GiB: 40 MB less the 10 characters' share is fixed, the rest
        // goes at 117 MB per 990 characters.
        let on_device = memory(&entries, Some(2 << 30));
        let each = 117_000_000.0 / 990.0;
        let fixed = 40_000_000.0 - 10.0 * each;
        let fits = ((f64::from(2u32 << 30) - fixed) / each).floor() as u64;
        assert_eq!(on_device[0].fits, Some((2 << 30, fits)));
        assert!(
            on_device[0]
                .line()
                .ends_with(&format!("; the device's 2.0 GiB heap holds about {} of them", grouped(fits)))
        );
    }
}
