//! `DIR/results.json`: written pretty-printed, read back for re-plotting.
//! The file also carries the verdicts (a top-level `verdicts` object,
//! computed from the entries as written), for readers that compare them;
//! reading ignores it, so a file without it reads the same.

use super::{BenchResults, ReportError, Verdicts};
use crate::atomic_file;
use std::path::{Path, PathBuf};

/// The results file's name inside the output folder.
pub const RESULTS_FILE: &str = "results.json";

/// Writes `results` to `dir/results.json` (creating `dir` when needed;
/// atomically, so a killed run leaves the previous file whole) and returns
/// the file's path.
pub fn write_json(dir: &Path, results: &BenchResults) -> Result<PathBuf, ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Folder { path: dir.to_path_buf(), source })?;
    let path = dir.join(RESULTS_FILE);
    /// The file's top level: the results, then their verdicts.
    #[derive(serde::Serialize)]
    struct Written<'a> {
        #[serde(flatten)]
        results: &'a BenchResults,
        verdicts: Verdicts,
    }
    let written = Written { results, verdicts: Verdicts::from_results(results) };
    let mut text = serde_json::to_string_pretty(&written)
        .map_err(|source| ReportError::Encode { path: path.clone(), source })?;
    text.push('\n');
    atomic_file::write(&path, text.as_bytes())?;
    Ok(path)
}

/// Reads a results file written by [`write_json`].
pub fn read_json(path: &Path) -> Result<BenchResults, ReportError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ReportError::Read { path: path.into(), source })?;
    serde_json::from_str(&text).map_err(|source| {
        // A CPU-only file parses as JSON but not as these results: say so.
        let kind = serde_json::from_str::<serde_json::Value>(&text).ok().map(|v| v["header"]["kind"].clone());
        if kind.is_some_and(|k| k == crate::profiler::cpu_scale::CPU_ONLY_KIND) {
            ReportError::CpuOnly { path: path.into() }
        } else {
            ReportError::NotResults { path: path.into(), source }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::BenchHeader;
    use crate::profiler::report::test_data::{entry, scratch};
    use serde_json::Value;

    fn results() -> BenchResults {
        let header =
            BenchHeader::new("llvmpipe & <friends>", "Mesa 22.3.6", true, "vkskin bench --quick --out d");
        let entries = vec![entry(1, 1, "compute", "inplace", false), entry(16, 2, "vertex", "dirty", true)];
        BenchResults { header, entries }
    }

    #[test]
    fn results_survive_a_round_trip_through_the_file() {
        let dir = scratch("round_trip");
        let written = results();
        let path = write_json(&dir.join("nested"), &written).unwrap();
        assert_eq!(path, dir.join("nested").join("results.json"));
        assert_eq!(read_json(&path).unwrap(), written);
    }

    #[test]
    fn field_names_are_the_contracts() {
        let dir = scratch("field_names");
        let path = write_json(&dir, &results()).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
            k.sort();
            k
        };
        let sorted = |names: &[&str]| -> Vec<String> {
            let mut k: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            k.sort();
            k
        };
        assert_eq!(keys(&value), sorted(&["header", "entries", "verdicts"]));
        assert_eq!(keys(&value["verdicts"]), sorted(&["timing", "crossovers", "uploads", "skin", "cpu"]));
        let verdicts: Verdicts = serde_json::from_value(value["verdicts"].clone()).unwrap();
        assert_eq!(verdicts, Verdicts::from_results(&results()), "the verdicts of the entries written");
        assert_eq!(
            keys(&value["header"]),
            sorted(&["device", "driver", "date", "commit", "quick", "command", "version", "gpu_timing"])
        );
        let entries = value["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        let e = &entries[1];
        assert_eq!(
            keys(e),
            sorted(&[
                // The issue's fields...
                "model",
                "characters",
                "vertices",
                "joints",
                "passes",
                "skinning",
                "upload",
                "frames",
                "cpu_pose_us",
                "palette_bytes",
                "gpu_us",
                "copy_kernel_us",
                // ...and the additions.
                "paused",
                "cpu_palette_write_us",
                "skin_bytes",
                "copy_kernel_wall_us",
                "staged_copy_wall_us",
                "buffer_copy_wall_us",
                "frame_wall_us",
            ])
        );
        assert_eq!(keys(&e["gpu_us"]), sorted(&["upload", "skin", "passes", "frame"]));
        for stat in
            [&e["cpu_pose_us"], &e["cpu_palette_write_us"], &e["copy_kernel_us"], &e["gpu_us"]["frame"]]
        {
            assert_eq!(keys(stat), sorted(&["median", "p95"]));
        }
        assert_eq!(e["gpu_us"]["passes"].as_array().unwrap().len(), 2);
        assert_eq!(keys(&e["gpu_us"]["passes"][0]), sorted(&["median", "p95"]));
        assert_eq!(e["skinning"], "vertex");
        assert_eq!(e["upload"], "dirty");
        assert_eq!(e["characters"], 16);
        assert_eq!(e["palette_bytes"], 0);
        assert_eq!(value["header"]["device"], "llvmpipe & <friends>");
        assert!(e.get("dqs_split").is_none(), "LBS entries have no split");
    }

    #[test]
    fn dual_quaternion_entries_say_where_the_matrices_were_split() {
        let dir = scratch("dqs_split");
        let mut cpu = entry(10, 1, "dqs-compute", "inplace", false);
        cpu.dqs_split = Some("cpu".into());
        let header = BenchHeader::new("d", "v", false, "c");
        let entries = vec![entry(10, 1, "dqs-compute", "inplace", false), cpu];
        let path = write_json(&dir, &BenchResults { header, entries }).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let splits: Vec<&str> =
            value["entries"].as_array().unwrap().iter().map(|e| e["dqs_split"].as_str().unwrap()).collect();
        assert_eq!(splits, ["shader", "cpu"]);
        let labels: Vec<String> =
            read_json(&path).unwrap().entries.iter().map(|e| e.skinning_label()).collect();
        assert_eq!(labels, ["dqs-compute", "dqs-compute, cpu split"]);
    }

    #[test]
    fn a_header_written_as_git_commit_still_reads() {
        let text = r#"{"header":{"device":"d","driver":"v","date":"2026-01-01T00:00:00Z","git_commit":"abc1234","quick":false,"command":"c"},"entries":[]}"#;
        let dir = scratch("alias");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("r.json"), text).unwrap();
        let read = read_json(&dir.join("r.json")).unwrap();
        assert_eq!(read.header.git_commit, "abc1234");
        assert!(!read.header.incomplete, "a file from before the marker reads as complete");
    }

    #[test]
    fn a_version_one_file_reads_as_timestamps_without_samples() {
        let text = r#"{"header":{"device":"d","driver":"v","date":"2026-01-01T00:00:00Z","commit":"abc1234","quick":false,"command":"c"},"entries":[]}"#;
        let dir = scratch("version_one");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("r.json"), text).unwrap();
        let read = read_json(&dir.join("r.json")).unwrap();
        assert_eq!(
            (read.header.version, read.header.gpu_timing),
            (1, crate::profiler::report::GpuTiming::Timestamps)
        );
        let mut e = entry(1, 1, "compute", "inplace", false);
        e.samples.gpu_frame_us = vec![1.0, 2.0];
        let header = BenchHeader::new("d", "v", false, "c");
        assert_eq!(header.version, crate::profiler::report::RESULTS_VERSION);
        let results = BenchResults { header, entries: vec![e] };
        let path = write_json(&dir, &results).unwrap();
        assert_eq!(read_json(&path).unwrap(), results, "samples survive the round trip");
    }

    #[test]
    fn an_incomplete_run_says_so_in_its_header() {
        let dir = scratch("incomplete");
        let mut cut = results();
        cut.header.incomplete = true;
        let path = write_json(&dir, &cut).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["header"]["incomplete"], true);
        assert_eq!(read_json(&path).unwrap(), cut);
    }

    #[test]
    fn a_file_that_is_not_results_names_itself() {
        let dir = scratch("not_results");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.json");
        std::fs::write(&path, r#"{"header":{}}"#).unwrap();
        let error = read_json(&path).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{}: not bench results: missing field", path.display())),
            "{error}"
        );
    }
}
