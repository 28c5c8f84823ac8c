//! Every field of the results' entries, flattened into table columns for
//! the HTML report: read from each entry's JSON form, so a field added to
//! [`BenchEntry`] shows without this file knowing it, each column labelled
//! with its path in results.json (`gpu_us.frame`) and the clock it was
//! measured with.

use super::BenchEntry;
use super::numbers::number;
use serde_json::Value;

/// The clock a field was measured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clock {
    /// GPU timestamp queries.
    Timestamps,
    /// Isolated submissions timed by the host.
    HostTimed,
    /// The CPU's own work, timed on the CPU.
    Cpu,
    /// Not a timing (counts, bytes, names).
    None,
}

impl Clock {
    /// The clock of the field at `key`, by the contract's names: `*wall_us`
    /// host-timed, `gpu_us.*` and `copy_kernel_us` timestamps, `cpu_*` CPU.
    fn of(key: &str) -> Clock {
        if key.contains("wall_us") {
            Clock::HostTimed
        } else if key.starts_with("gpu_us") || key == "copy_kernel_us" || key.starts_with("samples.gpu_") {
            Clock::Timestamps
        } else if key.starts_with("cpu_") || key.starts_with("samples.cpu_") {
            Clock::Cpu
        } else {
            Clock::None
        }
    }

    /// How the report's table names it.
    pub(super) fn label(self) -> &'static str {
        match self {
            Clock::Timestamps => "timestamps",
            Clock::HostTimed => "host-timed",
            Clock::Cpu => "CPU",
            Clock::None => "",
        }
    }
}

/// One column: a field's path in results.json and its clock.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    /// `characters`, `gpu_us.frame`, `gpu_us.passes[1]`, `samples.frame_wall_us`.
    pub key: String,
    /// The clock it was measured with.
    pub clock: Clock,
}

/// One entry's value of one field, as text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cell {
    /// Shown in the table: a timing as `median/p95`, samples as their count.
    pub text: String,
    /// Right-aligned (a number).
    pub numeric: bool,
    /// The whole value where the text is a summary (the samples themselves).
    pub detail: Option<String>,
}

/// The fields of `entries` (the union, in the order they first appear) and
/// each entry's cell per field (`None` where that entry has no such field).
pub(super) fn fields(entries: &[BenchEntry]) -> (Vec<Field>, Vec<Vec<Option<Cell>>>) {
    let mut keys: Vec<String> = Vec::new();
    let flat: Vec<Vec<(String, Cell)>> = entries
        .iter()
        .map(|e| {
            let mut cells = Vec::new();
            // An entry is plain data: serialising it cannot fail.
            let value = serde_json::to_value(e).unwrap_or(Value::Null);
            flatten("", &value, &mut cells);
            for (key, _) in &cells {
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
            cells
        })
        .collect();
    let rows = flat
        .into_iter()
        .map(|cells| {
            keys.iter().map(|k| cells.iter().find(|(key, _)| key == k).map(|(_, c)| c.clone())).collect()
        })
        .collect();
    let fields = keys.into_iter().map(|key| Field { clock: Clock::of(&key), key }).collect();
    (fields, rows)
}

/// Appends the leaves of `value` under `prefix` to `out`: a timing
/// (`{"median", "p95"}`) is one leaf, objects and arrays of objects are
/// walked, an array of numbers (samples) is one leaf.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Cell)>) {
    let plain = |text: String, numeric: bool| Cell { text, numeric, detail: None };
    match value {
        Value::Object(map) if is_stat(map) => {
            let (m, p) =
                (map["median"].as_f64().unwrap_or(f64::NAN), map["p95"].as_f64().unwrap_or(f64::NAN));
            out.push((prefix.to_string(), plain(format!("{}/{}", number(m), number(p)), true)));
        }
        Value::Object(map) => {
            for (key, v) in map {
                let key = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                flatten(&key, v, out);
            }
        }
        Value::Array(items) if items.iter().all(Value::is_number) => {
            let samples: Vec<String> = items.iter().filter_map(Value::as_f64).map(number).collect();
            let text = format!("{} samples", samples.len());
            out.push((prefix.to_string(), Cell { text, numeric: true, detail: Some(samples.join(" ")) }));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Number(n) => {
            let text = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => u.to_string(),
                (_, Some(i), _) => i.to_string(),
                (_, _, Some(f)) => number(f),
                _ => n.to_string(),
            };
            out.push((prefix.to_string(), plain(text, true)));
        }
        Value::String(s) => out.push((prefix.to_string(), plain(s.clone(), false))),
        Value::Bool(b) => out.push((prefix.to_string(), plain(b.to_string(), false))),
        Value::Null => out.push((prefix.to_string(), plain("-".to_string(), false))),
    }
}

/// Whether `map` is a [`Stat`](super::Stat): exactly a numeric median and p95.
fn is_stat(map: &serde_json::Map<String, Value>) -> bool {
    map.len() == 2
        && map.get("median").is_some_and(Value::is_number)
        && map.get("p95").is_some_and(Value::is_number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;

    /// The leaves of `value` as results.json has them, counted independently:
    /// every number, string and bool, with a `{median, p95}` pair one leaf
    /// and an array of numbers one leaf.
    fn leaves(value: &Value) -> usize {
        match value {
            Value::Object(map) if map.keys().eq(["median", "p95"].iter()) => 1,
            Value::Object(map) => map.values().map(leaves).sum(),
            Value::Array(items) if items.iter().all(Value::is_number) => 1,
            Value::Array(items) => items.iter().map(leaves).sum(),
            _ => 1,
        }
    }

    #[test]
    fn every_field_of_every_entry_is_a_column() {
        let mut walled = entry(16, 2, "dqs-compute", "staged", false);
        walled.samples.frame_wall_us = vec![61.0, 62.5, 70.25];
        let entries = vec![entry(1, 1, "vertex", "inplace", false), walled];
        let (fields, rows) = fields(&entries);
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        let second = serde_json::to_value(&entries[1]).unwrap();
        assert_eq!(rows[1].iter().flatten().count(), leaves(&second), "{keys:?}");
        for key in ["model", "characters", "gpu_us.frame", "gpu_us.passes[1]", "frame_wall_us", "dqs_split"] {
            assert!(keys.contains(&key), "{key} missing from {keys:?}");
        }
        let column = |key: &str| keys.iter().position(|k| *k == key).unwrap();
        // One pass in the first entry: no second pass, no dqs split, no samples.
        assert_eq!(rows[0][column("gpu_us.passes[1]")], None);
        assert_eq!(rows[0][column("dqs_split")], None);
        let samples = rows[1][column("samples.frame_wall_us")].as_ref().unwrap();
        assert_eq!(samples.text, "3 samples");
        assert_eq!(samples.detail.as_deref(), Some("61.0 62.5 70.2"));
        // 16 characters, compute-side skin 5 + 32,000 * 0.002 = 69 us, p95 86.25.
        assert_eq!(rows[1][column("gpu_us.skin")].as_ref().unwrap().text, "69.0/86.2");
        assert_eq!(rows[1][column("characters")].as_ref().unwrap().text, "16");
        assert_eq!(rows[1][column("skinning")].as_ref().unwrap().text, "dqs-compute");
    }

    #[test]
    fn each_timing_names_its_clock() {
        let (fields, _) = fields(&[entry(1, 1, "compute", "staged", false)]);
        let clock = |key: &str| fields.iter().find(|f| f.key == key).unwrap().clock;
        assert_eq!(clock("gpu_us.frame"), Clock::Timestamps);
        assert_eq!(clock("gpu_us.passes[0]"), Clock::Timestamps);
        assert_eq!(clock("copy_kernel_us"), Clock::Timestamps);
        assert_eq!(clock("copy_kernel_wall_us"), Clock::HostTimed);
        assert_eq!(clock("frame_wall_us"), Clock::HostTimed);
        assert_eq!(clock("cpu_pose_us"), Clock::Cpu);
        assert_eq!(clock("palette_bytes"), Clock::None);
        assert_eq!(Clock::of("samples.skin_wall_us"), Clock::HostTimed);
        assert_eq!(Clock::of("samples.gpu_frame_us"), Clock::Timestamps);
    }
}
