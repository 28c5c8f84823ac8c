//! The verdict on posing a crowd on the GPU (`--pose cpu,gpu`): both sides
//! of the trade at one scene, CPU pose and upload against the GPU pose
//! pass, so a user sees what moving the pose to the GPU buys and costs.

use super::numbers::{grouped, measure};
use super::results::{BenchEntry, GpuTiming, model_name};
use super::verdicts::keep_best;
use serde::{Deserialize, Serialize};

/// CPU-posed against GPU-posed, one model, at the largest character count
/// measured both ways with the same skinning, upload and passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuPoseVerdict {
    /// The model's label.
    pub model: String,
    /// Characters in the scene.
    pub characters: u32,
    /// The CPU pose update, all characters, CPU-posed then GPU-posed (µs, median).
    pub cpu_pose_us: (f64, f64),
    /// The recording thread's writes, all characters, CPU-posed (palettes)
    /// then GPU-posed (playback state) (µs, median).
    #[serde(default)]
    pub cpu_write_us: (f64, f64),
    /// Bytes uploaded per character per frame: the palette (CPU-posed),
    /// then the playback state (GPU-posed).
    pub upload_bytes_per_character: (f64, f64),
    /// What the pose pass adds on the GPU (µs): its timestamps, or, on a
    /// host-timed device, the GPU-posed skinning submission less the
    /// CPU-posed one; `None` when lost in the noise.
    pub pose_pass_us: Option<f64>,
    /// Threads the crowd posed and wrote on (the header's `pose_threads`).
    #[serde(default)]
    pub threads: Option<u32>,
}

/// One verdict per model measured both ways.
pub fn gpu_poses(entries: &[BenchEntry], timing: GpuTiming, threads: Option<u32>) -> Vec<GpuPoseVerdict> {
    let mut found: Vec<GpuPoseVerdict> = Vec::new();
    let pairs = entries.iter().filter(|g| g.gpu_posed() && !g.paused).filter_map(|g| {
        let c = entries.iter().find(|c| !c.gpu_posed() && !c.paused && c.same_setup(g))?;
        Some((c, g))
    });
    for (cpu, gpu) in pairs {
        let n = f64::from(gpu.characters);
        let verdict = GpuPoseVerdict {
            model: gpu.model.clone(),
            characters: gpu.characters,
            cpu_pose_us: (cpu.cpu_pose_us.median, gpu.cpu_pose_us.median),
            cpu_write_us: (cpu.cpu_palette_write_us.median, gpu.cpu_palette_write_us.median),
            upload_bytes_per_character: (
                cpu.palette_bytes as f64 / n,
                (gpu.palette_bytes + gpu.playback_bytes.unwrap_or(0)) as f64 / n,
            ),
            pose_pass_us: pose_pass_us(cpu, gpu, timing),
            threads,
        };
        keep_best(&mut found, verdict, |a, b| a.model == b.model, |new, old| new.characters > old.characters);
    }
    found
}

/// What the GPU pose adds on the GPU, on `timing`'s clock.
fn pose_pass_us(cpu: &BenchEntry, gpu: &BenchEntry, timing: GpuTiming) -> Option<f64> {
    match timing {
        GpuTiming::Timestamps => gpu.gpu_pose_us.map(|s| s.median),
        GpuTiming::HostTimed => {
            let skin = |e: &BenchEntry| e.figures(timing).skin.map(|f| f.stat.median);
            Some(skin(gpu)? - skin(cpu)?)
        }
    }
    .filter(|&us| us > 0.0)
}

impl GpuPoseVerdict {
    /// The verdict's line before the table.
    pub fn line(&self, clock: &str) -> String {
        let (cpu, gpu) = self.cpu_pose_us;
        let (palette_write, playback_write) = self.cpu_write_us;
        let (palette, playback) = self.upload_bytes_per_character;
        let pass = self
            .pose_pass_us
            .map_or_else(|| "lost in the noise".to_string(), |us| format!("{} µs", measure(us)));
        format!(
            "GPU pose: {}, {} characters{}: CPU pose {} -> {} µs ({:.1}x less), write {} -> {} µs, \
             upload {} -> {} B per character per frame, the pose pass {pass} on the GPU ({clock})",
            model_name(&self.model),
            grouped(u64::from(self.characters)),
            super::verdicts::on_threads(self.threads),
            measure(cpu),
            measure(gpu),
            if gpu > 0.0 { cpu / gpu } else { 0.0 },
            measure(palette_write),
            measure(playback_write),
            grouped(palette.round() as u64),
            grouped(playback.round() as u64),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::Stat;
    use crate::profiler::report::test_data::entry;

    #[test]
    fn the_trade_pairs_each_gpu_posed_entry_with_its_cpu_twin() {
        let cpu = entry(1000, 1, "compute", "dirty", false);
        let mut gpu = cpu.clone();
        gpu.pose = Some("gpu".into());
        gpu.cpu_pose_us = Stat { median: 500.0, p95: 600.0 };
        gpu.palette_bytes = 0;
        gpu.playback_bytes = Some(48_000);
        gpu.gpu_pose_us = Some(Stat { median: 80.0, p95: 90.0 });
        gpu.cpu_palette_write_us = Stat { median: 30.0, p95: 31.0 };
        let smaller = entry(10, 1, "compute", "dirty", false);
        let mut smaller_gpu = smaller.clone();
        smaller_gpu.pose = Some("gpu".into());
        let entries = [smaller, smaller_gpu, cpu.clone(), gpu];
        let verdicts = gpu_poses(&entries, GpuTiming::Timestamps, Some(2));
        assert_eq!(verdicts.len(), 1, "one per model, at the largest count");
        let v = &verdicts[0];
        assert_eq!(v.characters, 1000);
        assert_eq!(v.cpu_pose_us, (3000.0, 500.0));
        assert_eq!(v.upload_bytes_per_character, (40.0 * 64.0, 48.0));
        assert_eq!(v.pose_pass_us, Some(80.0));
        assert_eq!(v.cpu_write_us, (cpu.cpu_palette_write_us.median, 30.0));
        let line = v.line("timestamps");
        assert!(
            line.contains("1,000 characters on 2 threads: CPU pose 3,000 -> 500 µs (6.0x less)"),
            "{line}"
        );
        assert!(line.contains(&format!(
            "write {} -> {} µs",
            measure(v.cpu_write_us.0),
            measure(v.cpu_write_us.1)
        )));
        assert!(line.contains("upload 2,560 -> 48 B"), "{line}");
        // Without a CPU-posed twin, nothing to say.
        assert!(gpu_poses(&entries[3..], GpuTiming::Timestamps, Some(1)).is_empty());
        assert!(
            gpu_poses(&entries, GpuTiming::Timestamps, Some(1))[0]
                .line("timestamps")
                .contains("1,000 characters: CPU")
        );
    }
}
