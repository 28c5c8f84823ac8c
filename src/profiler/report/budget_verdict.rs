//! The verdict on a GPU frame budget (`--gpu-frame-budget`): what each
//! model's largest crowd drew within it, and whether its frames kept it,
//! so a user reads what fits on this GPU at that frame rate, and what to
//! change when it does not.

use super::Stat;
use super::numbers::{grouped, measure};
use super::results::{BenchEntry, GpuFrameCost, GpuTiming, model_name};
use super::verdicts::keep_best;
use crate::render::gpu_frame_budget::FrameCost;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One model and pass count at its largest character count drawn at
/// detail levels: the configuration that drew the finest within the
/// budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetVerdict {
    /// The model's label.
    pub model: String,
    /// Characters in the scene.
    pub characters: u32,
    /// Draw passes.
    pub passes: u32,
    /// The configuration: skinning, upload and where the poses were evaluated.
    pub configuration: String,
    /// The GPU frame budget, milliseconds.
    pub budget_ms: f64,
    /// Triangles the characters drew in the main pass (median frame).
    pub triangles: u64,
    /// The pixel error their levels were drawn within (`None`: half a
    /// pixel, not coarsened; infinite: every character at its coarsest).
    pub pixel_error: Option<f32>,
    /// The frame on the run's clock (µs).
    pub frame_us: Stat,
    /// What the steering measured a frame to cost (the entry's
    /// `gpu_frame_cost`), when its frames spread enough to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<GpuFrameCost>,
}

/// One verdict per model and pass count, when the run had a GPU frame
/// budget (`budget_ms`).
pub fn budgets(entries: &[BenchEntry], timing: GpuTiming, budget_ms: Option<f64>) -> Vec<BudgetVerdict> {
    let Some(budget_ms) = budget_ms else { return Vec::new() };
    let steered = entries.iter().filter(|e| e.detail.as_deref() != Some("full") && !e.paused);
    let mut found: Vec<BudgetVerdict> = Vec::new();
    for e in steered {
        let (Some(frame), Some(triangles)) = (e.figures(timing).frame, e.triangles) else { continue };
        let verdict = BudgetVerdict {
            model: e.model.clone(),
            characters: e.characters,
            passes: e.passes,
            configuration: configuration(e),
            budget_ms,
            triangles,
            pixel_error: e.pixel_error,
            frame_us: frame.stat,
            cost: e.gpu_frame_cost,
        };
        let same = |a: &BudgetVerdict, b: &BudgetVerdict| a.model == b.model && a.passes == b.passes;
        keep_best(&mut found, verdict, same, |new, old| new.characters > old.characters || finer(new, old));
    }
    found
}

/// Whether `a` drew its crowd finer than `b` did the same crowd (a
/// smaller pixel error; at the same, the shorter frame).
fn finer(a: &BudgetVerdict, b: &BudgetVerdict) -> bool {
    let error = |v: &BudgetVerdict| v.pixel_error.unwrap_or(0.5);
    a.characters == b.characters
        && (error(a) < error(b) || (error(a) == error(b) && a.frame_us.median < b.frame_us.median))
}

/// "compute skinning, inplace upload, GPU pose".
fn configuration(e: &BenchEntry) -> String {
    let pose = if e.gpu_posed() { "GPU" } else { "CPU" };
    format!("{} skinning, {} upload, {pose} pose", e.skinning, e.upload)
}

impl BudgetVerdict {
    /// Whether the median frame kept the budget.
    pub fn kept(&self) -> bool {
        self.frame_us.median <= self.budget_ms * 1e3
    }

    /// The verdict's line before the table.
    pub fn line(&self, clock: &str) -> String {
        let within = match self.pixel_error {
            None => "within half a pixel (not coarsened)".to_string(),
            Some(px) if px.is_finite() => format!("within {px:.2} px"),
            Some(_) => "every character at its coarsest level".to_string(),
        };
        let frame = format!(
            "frame {} ms, p95 {} ms ({clock})",
            measure(self.frame_us.median / 1e3),
            measure(self.frame_us.p95 / 1e3)
        );
        let cost = self.cost.map(FrameCost::from);
        let costs = cost.map(|c| format!(", its frames cost {}", c.describe())).unwrap_or_default();
        let outcome = match (self.kept(), self.pixel_error) {
            (true, _) => "kept".to_string(),
            (false, _)
                if cost.is_some_and(|c| c.fixed_part_over(Duration::from_secs_f64(self.budget_ms / 1e3))) =>
            {
                "over it before the characters' triangles (skinning, posing, the passes' fill): fewer \
                 characters or passes fit, or a larger budget"
                    .to_string()
            }
            (false, Some(px)) if px.is_infinite() => {
                "over it even at the coarsest levels: fewer characters or passes fit, or a larger budget"
                    .to_string()
            }
            (false, None) => "over it, not for the characters' triangles (left at their levels): the target \
                              size, the passes or the scenery take the time"
                .to_string(),
            (false, _) => {
                "over it: the frames vary more than the 10 % the steering leaves them, or had not settled"
                    .to_string()
            }
        };
        format!(
            "budget: {}, {} characters, {} pass{}, GPU frame budget {} ms: {} drew {} triangles a pass {within}, \
             {frame}{costs}: {outcome}",
            model_name(&self.model),
            grouped(u64::from(self.characters)),
            self.passes,
            if self.passes == 1 { "" } else { "es" },
            measure(self.budget_ms),
            self.configuration,
            grouped(self.triangles),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;

    /// A steered entry: `characters` drawn within `pixel_error`, the GPU
    /// frame taking `frame_ms`.
    fn steered(characters: u32, upload: &str, pixel_error: Option<f32>, frame_ms: f64) -> BenchEntry {
        let mut e = entry(characters, 1, "compute", upload, false);
        e.triangles = Some(u64::from(characters) * 100);
        e.pixel_error = pixel_error;
        e.gpu_us.frame = Stat { median: frame_ms * 1e3, p95: frame_ms * 1.1e3 };
        e
    }

    #[test]
    fn the_largest_crowd_and_its_finest_configuration_are_named() {
        let entries = [
            steered(1000, "inplace", None, 3.0),
            steered(100_000, "staged", Some(1.4), 15.8),
            steered(100_000, "inplace", Some(0.92), 15.1),
        ];
        assert!(budgets(&entries, GpuTiming::Timestamps, None).is_empty(), "no budget, no verdict");
        let verdicts = budgets(&entries, GpuTiming::Timestamps, Some(16.7));
        assert_eq!(verdicts.len(), 1, "{verdicts:?}");
        let v = &verdicts[0];
        assert_eq!((v.characters, v.pixel_error, v.kept()), (100_000, Some(0.92), true));
        assert_eq!(
            v.line("timestamps"),
            "budget: built-in, 100,000 characters, 1 pass, GPU frame budget 16.7 ms: compute skinning, \
             inplace upload, CPU pose drew 10,000,000 triangles a pass within 0.92 px, frame 15.1 ms, p95 \
             16.6 ms (timestamps): kept"
        );
        // With the cost the steering measured, the line says it.
        let mut measured = entries[2].clone();
        measured.gpu_frame_cost = Some(GpuFrameCost { fixed_us: 2000.0, per_triangle_ns: 0.714 });
        let line = budgets(&[measured], GpuTiming::Timestamps, Some(16.7))[0].line("timestamps");
        assert!(line.ends_with("(timestamps), its frames cost 2.00 ms + 0.71 ns a triangle: kept"), "{line}");
    }

    #[test]
    fn a_budget_not_kept_says_what_would_fit() {
        let coarsest = budgets(
            &[steered(100_000, "inplace", Some(f32::INFINITY), 21.0)],
            GpuTiming::Timestamps,
            Some(16.7),
        );
        let line = coarsest[0].line("timestamps");
        assert!(!coarsest[0].kept());
        assert!(line.contains("every character at its coarsest level"), "{line}");
        assert!(
            line.ends_with("at the coarsest levels: fewer characters or passes fit, or a larger budget"),
            "{line}"
        );
        let noisy =
            budgets(&[steered(100_000, "inplace", Some(0.8), 17.5)], GpuTiming::Timestamps, Some(16.7));
        assert!(
            noisy[0].line("timestamps").ends_with("the 10 % the steering leaves them, or had not settled")
        );
        let elsewhere = budgets(&[steered(10, "inplace", None, 20.0)], GpuTiming::Timestamps, Some(16.7));
        assert!(
            elsewhere[0]
                .line("timestamps")
                .ends_with("the target size, the passes or the scenery take the time")
        );
        // Measured fixed costs over the budget: the triangles are not the answer.
        let mut fixed = steered(100_000, "inplace", Some(f32::INFINITY), 21.0);
        fixed.gpu_frame_cost = Some(GpuFrameCost { fixed_us: 18_000.0, per_triangle_ns: 0.5 });
        let line = budgets(&[fixed], GpuTiming::Timestamps, Some(16.7))[0].line("timestamps");
        assert!(
            line.ends_with(
                "its frames cost 18.0 ms + 0.50 ns a triangle: over it before the characters' triangles \
                 (skinning, posing, the passes' fill): fewer characters or passes fit, or a larger budget"
            ),
            "{line}"
        );
        let free = budgets(&[steered(10, "inplace", None, 0.5)], GpuTiming::Timestamps, Some(16.7));
        assert!(free[0].line("timestamps").contains("within half a pixel (not coarsened)"));
        // Full detail is not steered: no verdict from it.
        let mut full = steered(10, "inplace", None, 0.5);
        full.detail = Some("full".into());
        assert!(budgets(&[full], GpuTiming::Timestamps, Some(16.7)).is_empty());
    }
}
