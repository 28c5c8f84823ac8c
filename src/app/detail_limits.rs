//! The viewer's controls for a frame's detail limits (the vertex, the
//! triangle and the GPU frame budget: `render::renderer::DetailLimits`),
//! and the timing row that names the limits that acted.

use crate::render::draw_order::OverBudget;
use crate::render::renderer::DetailLimits;
use egui::Ui;
use std::time::Duration;

/// A checkbox and a slider for each limit; unticked, no limit (the
/// vertex budget's default: what the device holds).
pub(super) fn controls(ui: &mut Ui, limits: &mut DetailLimits) {
    budget(ui, &VERTEX_BUDGET, &mut limits.skinned_vertices);
    budget(ui, &TRIANGLE_BUDGET, &mut limits.triangles);
    gpu_frame_budget(ui, &mut limits.gpu_frame);
}

/// The timing row of a frame whose levels a detail limit coarsened,
/// naming the limits that did.
pub(super) fn over_budget_label(over: OverBudget) -> String {
    let named = [(over.vertices, "vertices"), (over.triangles, "triangles"), (over.gpu_frame, "GPU frame")];
    let names: Vec<&str> = named.iter().filter(|(over, _)| *over).map(|&(_, name)| name).collect();
    format!("over budget ({})", names.join(", "))
}

/// One of a frame's detail limits as a checkbox (off: the default) and a
/// slider.
struct BudgetControl {
    label: &'static str,
    hover: &'static str,
    /// Where the slider starts when the box is ticked.
    start: u64,
}

const VERTEX_BUDGET: BudgetControl = BudgetControl {
    label: "Vertex budget",
    hover: "The most vertices a frame's characters skin: past it every character draws coarser, \
            within one larger pixel error",
    start: 1_000_000,
};

const TRIANGLE_BUDGET: BudgetControl = BudgetControl {
    label: "Triangle budget",
    hover: "The most triangles the characters draw in a frame, every pass together: past it every character draws \
            coarser, within one larger pixel error",
    start: 10_000_000,
};

fn budget(ui: &mut Ui, control: &BudgetControl, most: &mut Option<u64>) {
    ui.horizontal(|ui| {
        let mut capped = most.is_some();
        ui.checkbox(&mut capped, control.label).on_hover_text(control.hover);
        *most = match (capped, *most) {
            (false, _) => None,
            (true, Some(n)) => Some(n),
            (true, None) => Some(control.start),
        };
        if let Some(n) = most.as_mut() {
            ui.add(egui::Slider::new(n, 1_000..=100_000_000).logarithmic(true));
        }
    });
}

/// The GPU frame budget: off or a number of milliseconds (60 Hz's when
/// ticked).
fn gpu_frame_budget(ui: &mut Ui, budget: &mut Option<Duration>) {
    ui.horizontal(|ui| {
        let mut capped = budget.is_some();
        ui.checkbox(&mut capped, "GPU frame budget").on_hover_text(
            "The most GPU time a frame may take: each frame's triangle budget follows the GPU times finished \
             frames measured, so the characters draw as finely as the time allows",
        );
        let mut ms = budget.map_or(1e3 / 60.0, |b| b.as_secs_f64() * 1e3);
        let moved = capped
            && ui.add(egui::Slider::new(&mut ms, 1.0..=1000.0).logarithmic(true).suffix(" ms")).changed();
        // Kept as given (the command line's) until the slider moves.
        *budget = match (capped, *budget) {
            (true, Some(kept)) if !moved => Some(kept),
            (true, _) => Some(Duration::from_secs_f64(ms / 1e3)),
            (false, _) => None,
        };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_over_budget_row_names_the_limits_that_acted() {
        let over =
            |vertices, triangles, gpu_frame| over_budget_label(OverBudget { vertices, triangles, gpu_frame });
        assert_eq!(over(true, false, false), "over budget (vertices)");
        assert_eq!(over(false, true, false), "over budget (triangles)");
        assert_eq!(over(true, true, false), "over budget (vertices, triangles)");
        assert_eq!(over(false, false, true), "over budget (GPU frame)");
        assert_eq!(over(true, true, true), "over budget (vertices, triangles, GPU frame)");
    }
}
