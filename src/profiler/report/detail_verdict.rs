//! The verdict on detail levels (`--detail full,auto`): what drawing and
//! skinning distant characters at coarser levels, and posing small or
//! unseen ones less often, saves at one scene, against every full mesh
//! posed every frame, so a user sees what `auto` buys on both sides.

use super::numbers::{grouped, measure};
use super::results::{BenchEntry, GpuTiming, model_name};
use super::verdicts::keep_best;
use serde::{Deserialize, Serialize};

/// Full meshes against detail levels, one model, at the largest character
/// count measured both ways with the same skinning, upload, passes and pose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetailVerdict {
    /// The model's label.
    pub model: String,
    /// Characters in the scene.
    pub characters: u32,
    /// Triangles per pass, full then auto.
    pub triangles: (u64, u64),
    /// Characters posed per frame, full then auto (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posed: Option<(u64, u64)>,
    /// The CPU pose update, full then auto (µs, median).
    #[serde(default)]
    pub cpu_pose_us: (f64, f64),
    /// Palette bytes written per frame, full then auto.
    #[serde(default)]
    pub palette_bytes: (u64, u64),
    /// Vertices skinned per frame, full then auto (compute skinning only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skinned_vertices: Option<(u64, u64)>,
    /// The skin pass, full then auto (µs, median; compute skinning only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skin_us: Option<(f64, f64)>,
    /// The frame, full then auto (µs, median), when both were timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_us: Option<(f64, f64)>,
}

/// One verdict per model measured both ways.
pub fn details(entries: &[BenchEntry], timing: GpuTiming) -> Vec<DetailVerdict> {
    let full = |e: &BenchEntry| e.detail.as_deref() == Some("full");
    let pairs = entries.iter().filter(|a| !full(a) && !a.paused).filter_map(|auto| {
        let twin =
            entries.iter().find(|f| full(f) && !f.paused && f.same_setup(auto) && f.pose == auto.pose)?;
        Some((twin, auto))
    });
    let mut found: Vec<DetailVerdict> = Vec::new();
    for (full, auto) in pairs {
        let both = |f: &dyn Fn(&BenchEntry) -> Option<f64>| f(full).zip(f(auto));
        let compute = auto.skinning.ends_with("compute");
        let verdict = DetailVerdict {
            model: auto.model.clone(),
            characters: auto.characters,
            triangles: (full.triangles.unwrap_or(0), auto.triangles.unwrap_or(0)),
            posed: full.posed_characters.zip(auto.posed_characters),
            cpu_pose_us: (full.cpu_pose_us.median, auto.cpu_pose_us.median),
            palette_bytes: (full.palette_bytes, auto.palette_bytes),
            skinned_vertices: compute.then(|| (full.skinned(), auto.skinned())),
            skin_us: both(&|e| e.figures(timing).skin.map(|f| f.stat.median)),
            frame_us: both(&|e| e.figures(timing).frame.map(|f| f.stat.median)),
        };
        keep_best(&mut found, verdict, |a, b| a.model == b.model, |new, old| new.characters > old.characters);
    }
    found
}

/// "a -> b unit (0.40x)".
fn change(full: f64, auto: f64, unit: &str) -> String {
    let ratio = if full > 0.0 { auto / full } else { 0.0 };
    format!("{} -> {}{unit} ({ratio:.2}x)", measure(full), measure(auto))
}

impl DetailVerdict {
    /// The verdict's line before the table.
    pub fn line(&self, clock: &str) -> String {
        let (full, auto) = self.triangles;
        let mut parts = vec![format!("triangles per pass {}", change(full as f64, auto as f64, ""))];
        if let Some((full, auto)) = self.skinned_vertices {
            parts.push(format!("vertices skinned {}", change(full as f64, auto as f64, "")));
        }
        if let Some((full, auto)) = self.skin_us {
            parts.push(format!("skin pass {}", change(full, auto, " µs")));
        }
        if let Some((full, auto)) = self.posed {
            parts.push(format!("characters posed {}", change(full as f64, auto as f64, "")));
        }
        let (full, auto) = self.cpu_pose_us;
        parts.push(format!("CPU pose {}", change(full, auto, " µs")));
        let (full, auto) = self.palette_bytes;
        if full > 0 {
            parts.push(format!("palette bytes {}", change(full as f64, auto as f64, "")));
        }
        if let Some((full, auto)) = self.frame_us {
            parts.push(format!("frame {}", change(full, auto, " µs")));
        }
        format!(
            "detail: {}, {} characters, full meshes -> levels: {} ({clock})",
            model_name(&self.model),
            grouped(u64::from(self.characters)),
            parts.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::Stat;
    use crate::profiler::report::test_data::entry;

    #[test]
    fn levels_are_held_against_full_meshes_at_the_largest_count() {
        let mut full = entry(1000, 1, "compute", "dirty", false);
        full.detail = Some("full".into());
        full.triangles = Some(9_500_000);
        let mut auto = entry(1000, 1, "compute", "dirty", false);
        auto.triangles = Some(3_700_000);
        auto.skinned_vertices = Some(auto.scene_vertices() * 2 / 5);
        full.cpu_pose_us = Stat { median: 800.0, p95: 900.0 };
        full.posed_characters = Some(1000);
        auto.posed_characters = Some(310);
        auto.cpu_pose_us = Stat { median: 200.0, p95: 250.0 };
        full.palette_bytes = 1_000_000;
        auto.palette_bytes = 150_000;
        auto.gpu_us.skin = Stat { median: full.gpu_us.skin.median / 2.0, p95: full.gpu_us.skin.p95 };
        let mut small = entry(10, 1, "compute", "dirty", false);
        small.detail = Some("full".into());
        let small_auto = entry(10, 1, "compute", "dirty", false);
        let entries = [small, small_auto, full.clone(), auto.clone()];
        let verdicts = details(&entries, GpuTiming::Timestamps);
        assert_eq!(verdicts.len(), 1, "one per model, at the largest count");
        let v = &verdicts[0];
        assert_eq!(v.characters, 1000);
        assert_eq!(v.triangles, (9_500_000, 3_700_000));
        let vertices = full.scene_vertices();
        assert_eq!(v.skinned_vertices, Some((vertices, vertices * 2 / 5)));
        let line = v.line("timestamps");
        assert!(line.contains("triangles per pass 9,500,000 -> 3,700,000 (0.39x)"), "{line}");
        assert!(line.contains("(0.40x)") && line.contains("skin pass"), "{line}");
        assert!(line.contains("CPU pose 800 -> 200 µs (0.25x)"), "{line}");
        assert!(line.contains("characters posed 1,000 -> 310 (0.31x)"), "{line}");
        assert!(line.contains("palette bytes 1,000,000 -> 150,000 (0.15x)"), "{line}");
        assert!(line.starts_with("detail: "), "{line}");
        // Without a full-detail twin, nothing to say.
        assert!(details(&entries[3..], GpuTiming::Timestamps).is_empty());
    }
}
