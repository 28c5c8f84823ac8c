//! The GPU frame budget (`DetailLimits::gpu_frame`): a crowd's GPU frame
//! kept within a time, by setting the next frames' triangle budget from
//! what the finished ones measured. A device's raster rate is not known up
//! front (an H200 drew 100,000 characters' full meshes at about 1.4
//! billion triangles a second; GPUs built for graphics draw several times
//! that), so a fixed `--max-triangles` is a guess; engines instead steer a frame's cost by its measured GPU time
//! (dynamic resolution scales the render size; here the knob is the
//! characters' detail, through the triangle budget the draw order already
//! fits every character's level to).
//!
//! Each finished frame's GPU time (its timestamps, first command to last)
//! over the triangles its characters drew, every pass together, gives a
//! cost per triangle; the next frame may draw [`AIM`] of the budget's
//! worth. Costs that do not grow with triangles (the skinning's share
//! that does not, the clear, the scenery, overlays) are counted in that
//! cost, so it is off by their share: coming down from an overloaded
//! frame the budget errs high, coming up from a light one low, and each
//! frame corrects it (with time `fixed + b * triangles`, the distance to
//! the aim shrinks by the factor `fixed / (AIM * budget)` a frame). A
//! frame slower
//! per triangle than the estimate takes over at once, so an overloaded
//! GPU sheds detail in the next frame; a faster one moves it a fifth of
//! the way ([`EASE`]), so one quick frame does not bring back detail that
//! the next slow one must drop again. The draw order's hysteresis (a
//! frame keeps the last frame's pixel error while it fits and is within
//! 9 % of the least that does) keeps small changes of the budget from
//! moving any character between levels.

use std::time::Duration;

/// The share of the budget the next frame aims at: the rest absorbs a
/// frame's noise, which would otherwise put every other frame over.
pub const AIM: f64 = 0.9;

/// How far towards a cheaper measured cost per triangle the estimate
/// moves in one frame.
pub const EASE: f64 = 0.2;

/// Steers the triangle budget by measured GPU frame times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuFrameBudget {
    budget: Duration,
    /// Estimated GPU microseconds per triangle the characters draw;
    /// `None` until a frame that drew some was measured.
    cost_us: Option<f64>,
}

impl GpuFrameBudget {
    /// Keeps frames within `budget` of GPU time.
    pub fn new(budget: Duration) -> GpuFrameBudget {
        GpuFrameBudget { budget, cost_us: None }
    }

    /// The GPU time a frame may take.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Keeps frames within `budget` from now on, with the cost per
    /// triangle measured so far.
    pub fn set_budget(&mut self, budget: Duration) {
        self.budget = budget;
    }

    /// A finished frame took `gpu_us` microseconds on the GPU and its
    /// characters drew `triangles`. A frame that drew none, or whose
    /// time is not a positive number, says nothing about their cost.
    pub fn measured(&mut self, gpu_us: f64, triangles: u64) {
        if triangles == 0 || !(gpu_us > 0.0 && gpu_us.is_finite()) {
            return;
        }
        let cost = gpu_us / triangles as f64;
        self.cost_us = Some(match self.cost_us {
            Some(estimate) if cost < estimate => estimate + EASE * (cost - estimate),
            _ => cost,
        });
    }

    /// The most triangles the next frame's characters may draw, every pass
    /// together (at least 1); `None` until a frame has been measured.
    pub fn triangles(&self) -> Option<u64> {
        let budget_us = self.budget.as_secs_f64() * 1e6;
        // `as` saturates: a tiny cost gives u64::MAX, no limit.
        self.cost_us.map(|cost| ((AIM * budget_us / cost) as u64).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU whose frame takes `fixed_us` plus `per_triangle_us` a
    /// triangle, drawing a crowd of `full` triangles at its finest levels
    /// (it draws the budget's worth when that is less).
    struct Gpu {
        fixed_us: f64,
        per_triangle_us: f64,
        full: u64,
    }

    impl Gpu {
        /// Runs `frames` frames under `steer`, measured two frames late
        /// (the frame ring's latency); the triangles each frame drew.
        fn run(&self, steer: &mut GpuFrameBudget, frames: usize) -> Vec<u64> {
            let mut drawn: Vec<u64> = Vec::new();
            for frame in 0..frames {
                if frame >= 2 {
                    let triangles = drawn[frame - 2];
                    steer.measured(self.time_us(triangles), triangles);
                }
                drawn.push(steer.triangles().map_or(self.full, |most| most.min(self.full)));
            }
            drawn
        }

        fn time_us(&self, triangles: u64) -> f64 {
            self.fixed_us + self.per_triangle_us * triangles as f64
        }
    }

    const MS_16: Duration = Duration::from_micros(16_667);

    #[test]
    fn an_overloaded_frame_settles_just_under_the_budget() {
        // 26 M triangles at 1.4 G/s: 18.6 ms of raster plus 2 ms of the rest.
        let gpu = Gpu { fixed_us: 2000.0, per_triangle_us: 1.0 / 1400.0, full: 26_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 30);
        assert_eq!(drawn[0], gpu.full, "nothing measured yet: no limit");
        let aim_us = AIM * 16_667.0;
        // From above, the fixed 2 ms spread over more triangles makes the
        // estimate low, so the frames come down to the aim from above:
        // the third frame, the first measured one's, is within the budget.
        for &triangles in &drawn[2..] {
            assert!(gpu.time_us(triangles) < 16_667.0, "{triangles}: {} us", gpu.time_us(triangles));
        }
        let last = gpu.time_us(drawn[29]);
        assert!((last - aim_us).abs() < 0.01 * aim_us, "settled at {last} us, aimed at {aim_us}");
    }

    #[test]
    fn a_frame_within_the_budget_keeps_every_level() {
        let gpu = Gpu { fixed_us: 1000.0, per_triangle_us: 1e-4, full: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 10);
        assert!(drawn.iter().all(|&t| t == gpu.full), "{drawn:?}");
        assert!(steer.triangles().unwrap() > gpu.full);
    }

    #[test]
    fn a_heavier_view_sheds_detail_at_once_and_recovers_gradually() {
        let light = Gpu { fixed_us: 1000.0, per_triangle_us: 1e-3, full: 100_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        light.run(&mut steer, 30);
        let settled = steer.triangles().unwrap();
        // Three times the cost a triangle (a closer camera: larger triangles).
        steer.measured(light.fixed_us + 3e-3 * settled as f64, settled);
        let shed = steer.triangles().unwrap();
        assert!(shed < settled / 2 && shed > settled / 4, "{settled} -> {shed}");
        // Back to the light cost: a fifth of the way a frame, not at once.
        steer.measured(light.time_us(shed), shed);
        let back = steer.triangles().unwrap();
        assert!(back > shed && back < settled / 2, "{shed} -> {back} (settled {settled})");
        light.run(&mut steer, 60);
        let again = steer.triangles().unwrap();
        assert!(again.abs_diff(settled) < settled / 100, "{again} against {settled}");
    }

    #[test]
    fn fixed_costs_over_the_budget_leave_the_coarsest() {
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 1e-3, full: 10_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 40);
        // A quarter less every second frame, towards none: every
        // character at its coarsest level.
        assert!(drawn[39] < gpu.full / 100, "{:?}", &drawn[30..]);
        assert!(steer.triangles().unwrap() >= 1);
    }

    #[test]
    fn frames_without_triangles_or_a_time_say_nothing() {
        let mut steer = GpuFrameBudget::new(MS_16);
        for (us, triangles) in [(5000.0, 0), (0.0, 10), (-1.0, 10), (f64::NAN, 10), (f64::INFINITY, 10)] {
            steer.measured(us, triangles);
            assert_eq!(steer.triangles(), None, "{us} us, {triangles} triangles");
        }
        steer.measured(1e-300, 1);
        assert_eq!(steer.triangles(), Some(u64::MAX), "a tiny cost is no limit");
        assert_eq!(steer.budget(), MS_16);
    }
}
