//! The GPU frame budget (`DetailLimits::gpu_frame`): a crowd's GPU frame
//! kept within a time, by setting the next frames' triangle budget from
//! what the finished ones measured. A device's raster rate is not known
//! up front (an H200 drew 100,000 characters' full meshes at about 1.4
//! billion triangles a second; GPUs built for graphics draw several times
//! that), so a fixed `--max-triangles` is a guess; engines instead steer
//! a frame's cost by its measured GPU time (dynamic resolution scales the
//! render size; here the knob is the characters' detail, through the
//! triangle budget the draw order already fits every character's level
//! to).
//!
//! A frame's GPU time (its timestamps, first command to last) is taken as
//! `fixed + per_triangle * triangles`, the triangles its characters drew
//! in every pass together, and the next frame may draw what fits [`AIM`]
//! of the budget. The first measured frame puts all its time on the
//! triangles. When the last four measured frames drew counts that spread
//! (by a tenth or more), a least-squares line through them tells the
//! fixed part from the per-triangle one, so an overloaded crowd settles at
//! the aim in two steps; otherwise a change since the last line is put on
//! the triangles (a closer camera makes them dearer), and a frame cheaper
//! than the fixed part scales both.
//!
//! A GPU's time noise only adds: another process's work, a clock dip, a
//! driver thread preempted (lavapipe shares the CPU with everything
//! else). So each frame counts as the quickest of the recent ones that
//! drew as many triangles or more (fewer never cost more), and frames
//! whose fewest triangles took no less time than their most say nothing
//! of the triangles' cost: no line is taken. Slow coarse frames would
//! otherwise say that the triangles take no time, and with every
//! character back at its finest, no later frame would draw a count apart
//! to say otherwise.
//!
//! A line's fixed part is where it meets no triangles, so the noise of
//! frames whose counts are close together, far from none, is multiplied
//! there: for a second of measured frames (`LINE_KEPT`) after a line,
//! a new one is taken only through counts at least half as far apart
//! (`NARROWEST`). A crowd pushed from its finest levels to coarse ones
//! and then to its coarsest (on lavapipe: 55,968 triangles, then 35,200,
//! against 1.38 million) would otherwise have its 60 ms of fixed costs
//! read as none.
//!
//! Where the triangles take under a twentieth of the frame even at the
//! most drawn (a few characters filling a large target, the scenery, the
//! shadow maps' fill), there is no limit, rather than coarsening every
//! character for nothing. Where the fixed part alone is over the aim, the
//! frame is over either way: every character draws its coarsest when the
//! triangles take a quarter of the frame or more at the most drawn, else
//! there is no limit.
//!
//! "The triangles are not the cost" is looked at again while frames stay
//! over the budget: a line through frames slowed by other work, coarse
//! ones only just quicker than the finest, would otherwise hold for good,
//! as no later frame of a still view draws a count apart to say
//! otherwise. After a second of such frames (`LINE_KEPT`), one frame
//! draws half the most triangles drawn, and its time fits a new line.
//! Each look that finds the same doubles the wait, up to half a minute
//! (`LONGEST_WAIT`): a frame long for other reasons has its characters
//! coarsened for one frame in a long while, not every second.
//!
//! A smaller budget is taken at once after a frame over the budget or a
//! fresh line; otherwise the budget moves a fifth of the way ([`EASE`]) a
//! frame, so one frame's noise does not move characters between levels
//! (the draw order's hysteresis, 9 %, absorbs what is left) and one quick
//! frame does not bring back detail that the next slow one must drop.
//!
//! The fitted line is also what a user reads ([`GpuFrameBudget::cost`]):
//! its fixed part is what no coarsening removes, so a budget below it
//! asks for fewer characters or passes, not fewer triangles.

use crate::text::significant;
use std::time::Duration;

/// The share of the budget the next frame aims at: the rest absorbs a
/// frame's noise, which would otherwise put every other frame over.
pub const AIM: f64 = 0.9;

/// How far towards a new triangle budget the steering moves in one frame
/// (a smaller one is taken at once after a frame over the budget or a
/// fit of frames whose counts spread).
pub const EASE: f64 = 0.2;

/// The measured frames a fit reads: the last four, so that a view left
/// behind stops bending the line within a few frames.
const FITTED: usize = 4;

/// The spread of the triangle counts (their standard deviation over
/// their mean) from which the frames are fitted anew.
const SPREAD: f64 = 0.1;

/// How much narrower a fresh line's counts may spread (largest less
/// smallest) than those of the line it replaces, within [`LINE_KEPT`]
/// measured frames of it: taking a line to no triangles multiplies its
/// frames' noise by how far they are from none over how far apart.
const NARROWEST: f64 = 0.5;

/// The measured frames (a second at 60 Hz) for which a line through
/// counts far apart is kept over narrower ones.
const LINE_KEPT: u32 = 60;

/// The least share of a frame the characters' triangles take, at the
/// most triangles measured, for the steering to limit them.
const SHARE: f64 = 0.05;

/// The share of the most triangles drawn that a frame looking again at
/// "the triangles are not the cost" draws: a count far from the others,
/// so that the frames' noise hardly tilts the line through them.
const SECOND_LOOK: f64 = 0.5;

/// The most measured frames (half a minute at 60 Hz) between two looks
/// again at "the triangles are not the cost" while frames stay over the
/// budget.
const LONGEST_WAIT: u32 = 32 * LINE_KEPT;

/// The least share for the steering to draw every character at its
/// coarsest where even no triangles would not keep the budget: the frame
/// is over either way, and coarsening all for a few percent of it would
/// trade much detail for little time.
const OVER_SHARE: f64 = 0.25;

/// Steers the triangle budget by measured GPU frame times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuFrameBudget {
    budget: Duration,
    /// The last measured frames (triangles, microseconds).
    recent: Recent,
    /// What a frame costs: `None` until a frame that drew triangles was
    /// measured.
    model: Option<FrameCost>,
    /// The last line taken (`model` was a fitted line once): how far
    /// apart its frames' counts were, and the frames measured since.
    line: Option<(f64, u32)>,
    /// The most triangles a measured frame drew. Kept, not forgotten: a
    /// crowd held at its coarsest would otherwise forget, after a while,
    /// that its full levels were what took the time, and flash back to
    /// them.
    most_drawn: f64,
    /// The last measured frame: its triangles and microseconds.
    last: Option<(u64, f64)>,
    /// The triangle budget for the next frame.
    triangles: Option<u64>,
    /// When the next frame over the budget with triangles that are not
    /// its cost draws fewer, to look again.
    look: SecondLook,
}

/// Frames over the budget with no limit, because the triangles were
/// found not to be the cost, since the last look again (or since they
/// were found to matter), and how many are waited for before the next.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SecondLook {
    waited: u32,
    wait: u32,
}

impl SecondLook {
    const FIRST: SecondLook = SecondLook { waited: 0, wait: LINE_KEPT };

    /// One more frame over the budget with no limit: whether it is time
    /// to look again (the next look then waits twice as long).
    fn due(&mut self) -> bool {
        self.waited += 1;
        if self.waited < self.wait {
            return false;
        }
        *self = SecondLook { waited: 0, wait: (2 * self.wait).min(LONGEST_WAIT) };
        true
    }
}

/// A frame's GPU time as `fixed_us + per_triangle_us * triangles`: what
/// the frame costs without the characters' triangles (skinning, the pose
/// pass, the passes' fill, the scenery), and what each triangle adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameCost {
    /// Microseconds a frame takes whatever the triangles.
    pub fixed_us: f64,
    /// Microseconds each triangle drawn adds (every pass counted).
    pub per_triangle_us: f64,
}

impl FrameCost {
    /// Whether the part no coarsening removes is alone over `budget`: a
    /// frame that keeps it needs fewer characters or passes, not fewer
    /// triangles.
    pub fn fixed_part_over(&self, budget: Duration) -> bool {
        self.fixed_us > budget.as_secs_f64() * 1e6
    }

    /// "2.00 ms + 0.71 ns a triangle".
    pub fn describe(&self) -> String {
        format!(
            "{} ms + {} ns a triangle",
            significant(self.fixed_us / 1e3),
            significant(self.per_triangle_us * 1e3)
        )
    }
}

/// The last [`FITTED`] measured frames, for a least-squares line through
/// their (triangles, microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Recent {
    frames: [(f64, f64); FITTED],
    count: usize,
}

impl Recent {
    fn add(&mut self, x: f64, y: f64) {
        self.frames[self.count % FITTED] = (x, y);
        self.count += 1;
    }

    /// The line through the frames when their triangle counts spread
    /// enough to tell the fixed cost from the per-triangle one, and the
    /// fewest took less time than the most. Noise only adds, and fewer
    /// triangles never cost more: each frame counts as the quickest of
    /// those that drew as many triangles or more. The line, and how far
    /// apart its frames' counts are.
    fn fit(&self) -> Option<(FrameCost, f64)> {
        let measured = &self.frames[..self.count.min(FITTED)];
        let mut quickest = [(0.0, 0.0); FITTED];
        for (frame, &(x, _)) in quickest.iter_mut().zip(measured) {
            let as_many = measured.iter().filter(|f| f.0 >= x).map(|f| f.1);
            *frame = (x, as_many.fold(f64::INFINITY, f64::min));
        }
        let frames = &quickest[..measured.len()];
        let fewest = frames.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
        let most = frames.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
        if fewest.1 >= most.1 {
            return None;
        }
        let n = frames.len() as f64;
        let mean_x = frames.iter().map(|f| f.0).sum::<f64>() / n;
        let mean_y = frames.iter().map(|f| f.1).sum::<f64>() / n;
        let variance = frames.iter().map(|f| (f.0 - mean_x).powi(2)).sum::<f64>() / n;
        if variance <= (SPREAD * mean_x).powi(2) {
            return None;
        }
        let covariance = frames.iter().map(|f| (f.0 - mean_x) * (f.1 - mean_y)).sum::<f64>() / n;
        // Positive: the quickest times rise with the triangles, and the
        // fewest took less than the most.
        let per_triangle_us = covariance / variance;
        let fixed_us = mean_y - per_triangle_us * mean_x;
        let line = if fixed_us >= 0.0 {
            FrameCost { fixed_us, per_triangle_us }
        } else {
            FrameCost { fixed_us: 0.0, per_triangle_us: mean_y / mean_x }
        };
        Some((line, most.0 - fewest.0))
    }
}

impl GpuFrameBudget {
    /// Keeps frames within `budget` of GPU time.
    pub fn new(budget: Duration) -> GpuFrameBudget {
        GpuFrameBudget {
            budget,
            recent: Recent::default(),
            model: None,
            line: None,
            most_drawn: 0.0,
            last: None,
            triangles: None,
            look: SecondLook::FIRST,
        }
    }

    /// The GPU time a frame may take.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Keeps frames within `budget` from now on, with what the frames so
    /// far measured: a smaller triangle budget at once, a larger one
    /// approached as any is. The same budget changes nothing (the viewer
    /// sets its limits every frame).
    pub fn set_budget(&mut self, budget: Duration) {
        if budget == self.budget {
            return;
        }
        self.budget = budget;
        self.triangles = self.model.map(|model| self.steer(model, self.triangles, true));
    }

    /// The frame's work changed (another skinning, upload or pass setup):
    /// the frames measured so far no longer lie on the next frames' line.
    /// The next line is fitted through the frames measured from now on
    /// (the renderer leaves out those in flight, recorded before the
    /// change), the current cost steering until then; the triangle budget
    /// stays.
    pub fn forget_frames(&mut self) {
        self.recent = Recent::default();
        self.line = None;
        self.look = SecondLook::FIRST;
    }

    /// A finished frame took `gpu_us` microseconds on the GPU and its
    /// characters drew `triangles`. A frame that drew none, or whose
    /// time is not a positive number, says nothing about their cost.
    pub fn measured(&mut self, gpu_us: f64, triangles: u64) {
        if triangles == 0 || !(gpu_us > 0.0 && gpu_us.is_finite()) {
            return;
        }
        let drawn = triangles as f64;
        self.recent.add(drawn, gpu_us);
        self.most_drawn = self.most_drawn.max(drawn);
        self.last = Some((triangles, gpu_us));
        if let Some((_, age)) = &mut self.line {
            *age += 1;
        }
        let fitted = self.recent.fit().filter(|&(_, apart)| match self.line {
            Some((before, age)) => apart >= NARROWEST * before || age >= LINE_KEPT,
            None => true,
        });
        if let Some((_, apart)) = fitted {
            self.line = Some((apart, 0));
        }
        let fitted = fitted.map(|(line, _)| line);
        let model = match (fitted, self.model) {
            (Some(fitted), _) => fitted,
            // Too little spread to fit: the change since the model is put
            // on the triangles (the knob), until frames that spread show
            // otherwise; a frame cheaper than the fixed cost scales both.
            (None, Some(model)) if gpu_us > model.fixed_us => {
                FrameCost { per_triangle_us: (gpu_us - model.fixed_us) / drawn, ..model }
            }
            (None, Some(model)) => {
                let scale = gpu_us / (model.fixed_us + model.per_triangle_us * drawn);
                FrameCost { fixed_us: model.fixed_us * scale, per_triangle_us: model.per_triangle_us * scale }
            }
            // The first frame: all of it per triangle.
            (None, None) => FrameCost { fixed_us: 0.0, per_triangle_us: gpu_us / drawn },
        };
        self.model = Some(model);
        // A frame over the budget, or a line through frames that spread,
        // is news to act on at once; one frame's change otherwise may be
        // its noise.
        let over = gpu_us > self.budget.as_secs_f64() * 1e6;
        let mut triangles = self.steer(model, self.triangles, fitted.is_some() || over);
        // Over the budget with triangles found not to be its cost: once
        // in a while, a frame that draws fewer tells whether they are.
        if self.triangles_matter_under(model) {
            self.look = SecondLook::FIRST;
        } else if over && self.look.due() {
            triangles = (SECOND_LOOK * self.most_drawn).max(1.0) as u64;
        }
        self.triangles = Some(triangles);
    }

    /// The next frame's triangle budget under `model`, from the last one:
    /// none where the triangles are not what takes the time, the fewest
    /// where even none would not fit, else what fits [`AIM`] of the
    /// budget, approached by [`EASE`] of the way (taken at once when
    /// smaller and the measurement `decisive`).
    fn steer(&self, model: FrameCost, last: Option<u64>, decisive: bool) -> u64 {
        if !self.triangles_matter_under(model) {
            return u64::MAX;
        }
        let aim_us = self.aim_us();
        if model.fixed_us >= aim_us {
            return 1;
        }
        // `as` saturates: a tiny cost gives u64::MAX, no limit.
        let fits = ((aim_us - model.fixed_us) / model.per_triangle_us).max(1.0);
        match last {
            Some(last) if last != u64::MAX && !(decisive && fits < last as f64) => {
                (last as f64 + EASE * (fits - last as f64)).max(1.0) as u64
            }
            _ => fits as u64,
        }
    }

    /// Whether, under `model`, the triangles take enough of the frame
    /// (at the most drawn) to limit: [`SHARE`], or [`OVER_SHARE`] where
    /// the fixed part alone is over the aim.
    fn triangles_matter_under(&self, model: FrameCost) -> bool {
        let triangles_us = model.per_triangle_us * self.most_drawn;
        let least = if model.fixed_us >= self.aim_us() { OVER_SHARE } else { SHARE };
        triangles_us > least * (model.fixed_us + triangles_us)
    }

    /// The time the next frame aims at, microseconds.
    fn aim_us(&self) -> f64 {
        AIM * self.budget.as_secs_f64() * 1e6
    }

    /// The most triangles the next frame's characters may draw, every pass
    /// together (at least 1; `u64::MAX` where the triangles are not what
    /// takes the time); `None` until a frame has been measured.
    pub fn triangles(&self) -> Option<u64> {
        self.triangles
    }

    /// Whether the characters' triangles take enough of the frames'
    /// time for the budget to steer them (`None` until measured): a
    /// frame that is long for other reasons (its size, the scenery, the
    /// passes' fill) is left unlimited.
    pub fn triangles_matter(&self) -> Option<bool> {
        self.model.map(|model| self.triangles_matter_under(model))
    }

    /// What a frame costs on this GPU, once measured frames drew counts
    /// far enough apart to tell the fixed part from the triangles' (`None`
    /// before: a crowd whose levels never moved); kept up to date with
    /// each frame since.
    pub fn cost(&self) -> Option<FrameCost> {
        self.model.filter(|_| self.line.is_some())
    }

    /// The last measured frame's GPU time, microseconds.
    pub fn last_frame_us(&self) -> Option<f64> {
        self.last.map(|(_, us)| us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU whose frame takes `fixed_us` plus `per_triangle_us` a
    /// triangle, drawing a crowd of `full` triangles at its finest levels
    /// and `coarsest` at its coarsest (between them, the budget's worth).
    struct Gpu {
        fixed_us: f64,
        per_triangle_us: f64,
        full: u64,
        coarsest: u64,
    }

    impl Gpu {
        /// Runs `frames` frames under `steer`, measured two frames late
        /// (the frame ring's latency), each frame's time scaled by
        /// `noise(frame)`; the triangles each frame drew.
        fn run_noisy(
            &self,
            steer: &mut GpuFrameBudget,
            frames: usize,
            noise: impl Fn(usize) -> f64,
        ) -> Vec<u64> {
            let mut drawn: Vec<u64> = Vec::new();
            for frame in 0..frames {
                if frame >= 2 {
                    let triangles = drawn[frame - 2];
                    steer.measured(self.time_us(triangles) * noise(frame - 2), triangles);
                }
                let most = steer.triangles().unwrap_or(u64::MAX);
                drawn.push(most.clamp(self.coarsest, self.full));
            }
            drawn
        }

        fn run(&self, steer: &mut GpuFrameBudget, frames: usize) -> Vec<u64> {
            self.run_noisy(steer, frames, |_| 1.0)
        }

        fn time_us(&self, triangles: u64) -> f64 {
            self.fixed_us + self.per_triangle_us * triangles as f64
        }
    }

    const MS_16: Duration = Duration::from_micros(16_667);
    const AIM_US: f64 = AIM * 16_667.0;

    /// 100,000 built-in characters framed whole: 26 M triangles at
    /// 1.4 G/s, 18.6 ms of raster, plus 2 ms of the rest.
    const CROWD: Gpu =
        Gpu { fixed_us: 2000.0, per_triangle_us: 1.0 / 1400.0, full: 26_000_000, coarsest: 8_800_000 };

    #[test]
    fn an_overloaded_frame_settles_at_the_aim_within_a_few_frames() {
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = CROWD.run(&mut steer, 12);
        assert_eq!(drawn[..2], [CROWD.full; 2], "nothing measured yet: no limit");
        // The first measured frame puts all its time on the triangles
        // (within the budget from above); the second, with two counts to
        // fit a line through, finds the fixed part.
        for &triangles in &drawn[2..] {
            assert!(CROWD.time_us(triangles) < 16_667.0, "{triangles}: {} us", CROWD.time_us(triangles));
        }
        for &triangles in &drawn[4..] {
            let us = CROWD.time_us(triangles);
            assert!((us - AIM_US).abs() < 0.001 * AIM_US, "{drawn:?}: {us} us, aimed at {AIM_US}");
        }
        assert_eq!(steer.triangles_matter(), Some(true));
        assert!((steer.last_frame_us().unwrap() - AIM_US).abs() < 1.0);
        // The line through the frames is the GPU's own cost.
        let cost = steer.cost().expect("frames that spread were fitted");
        assert!((cost.fixed_us - CROWD.fixed_us).abs() < 1.0, "{cost:?}");
        assert!((cost.per_triangle_us / CROWD.per_triangle_us - 1.0).abs() < 1e-6, "{cost:?}");
        assert_eq!(cost.describe(), "2.00 ms + 0.71 ns a triangle");
        // Other work: the old frames are forgotten, the budget kept, and
        // a new line found once the new frames spread.
        let before = steer.triangles();
        steer.forget_frames();
        assert_eq!((steer.cost(), steer.triangles()), (None, before));
        let dearer = Gpu { fixed_us: 5000.0, ..CROWD };
        dearer.run(&mut steer, 12);
        let cost = steer.cost().expect("fitted again");
        assert!((cost.fixed_us - dearer.fixed_us).abs() < 1.0, "{cost:?}");
    }

    #[test]
    fn a_frame_within_the_budget_keeps_every_level() {
        let gpu = Gpu { fixed_us: 1000.0, per_triangle_us: 1e-4, full: 1_000_000, coarsest: 100_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 10);
        assert!(drawn.iter().all(|&t| t == gpu.full), "{drawn:?}");
        assert!(steer.triangles().unwrap() > gpu.full);
        assert_eq!(steer.cost(), None, "one count drawn throughout: the fixed part is not known");
    }

    #[test]
    fn a_heavier_view_sheds_detail_at_once_and_recovers_gradually() {
        let light = Gpu { fixed_us: 1000.0, per_triangle_us: 1e-3, full: 100_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        light.run(&mut steer, 30);
        let settled = steer.triangles().unwrap();
        assert!((light.time_us(settled) - AIM_US).abs() < 0.001 * AIM_US, "{settled}");
        // Three times the cost a triangle (a closer camera: larger
        // triangles), the count unchanged: put on the triangles.
        steer.measured(light.fixed_us + 3e-3 * settled as f64, settled);
        let shed = steer.triangles().unwrap();
        assert!(shed.abs_diff(settled / 3) < settled / 100, "{settled} -> {shed}");
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
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 1e-3, full: 10_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 10);
        assert!(drawn[4..].iter().all(|&t| t == gpu.coarsest), "{drawn:?}");
        assert_eq!((steer.triangles(), steer.triangles_matter()), (Some(1), Some(true)));
    }

    /// A crowd held at its coarsest by fixed costs over the aim, whose
    /// coarsest levels cost next to nothing: it stays there, frame after
    /// frame, rather than flash back to its full levels once their cost
    /// is long past.
    #[test]
    fn a_crowd_held_at_its_coarsest_stays_there() {
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 1e-4, full: 100_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 1000);
        assert!(drawn[4..].iter().all(|&t| t == gpu.coarsest), "{:?}", &drawn[..8]);
    }

    /// Fixed costs over the aim and triangles that take a tenth of the
    /// frame at their most: over the budget either way, the levels are
    /// left as they are rather than all coarsened for a tenth.
    #[test]
    fn a_frame_over_the_budget_anyway_is_not_coarsened_for_a_little() {
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 2.2e-4, full: 10_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 30);
        assert!(drawn[6..].iter().all(|&t| t == gpu.full), "{drawn:?}");
        assert_eq!(steer.triangles_matter(), Some(false));
    }

    /// A frame long for other reasons than the characters' triangles (a
    /// few close characters filling a large target) is not coarsened for
    /// nothing: one steered frame shows that fewer triangles saved almost
    /// no time, and the levels come back.
    #[test]
    fn a_frame_the_triangles_do_not_make_long_is_left_alone() {
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 1e-6, full: 10_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 30);
        assert!(drawn[2] < gpu.full, "the first measured frame is all triangles: {drawn:?}");
        assert!(drawn[6..].iter().all(|&t| t == gpu.full), "{drawn:?}");
        assert_eq!((steer.triangles(), steer.triangles_matter()), (Some(u64::MAX), Some(false)));
    }

    /// lavapipe's frames of a 12 x 12 crowd (`tests/gpu`): 446,157
    /// triangles at their finest, 8,184 at their coarsest, 5 ms of the
    /// rest; under a budget of 1 ms, every character draws its coarsest.
    const LAVAPIPE: Gpu = Gpu { fixed_us: 5000.0, per_triangle_us: 0.13, full: 446_157, coarsest: 8184 };
    const MS_1: Duration = Duration::from_millis(1);

    /// One coarse frame slowed twentyfold (the CPU lavapipe draws on
    /// taken by another process), or both of the first coarse ones slower
    /// than the finest: the line is not taken, the crowd stays at its
    /// coarsest, and a line through frames without the noise is found.
    #[test]
    fn slow_coarse_frames_do_not_lift_the_limit() {
        // Frames 2 and 3 are the first coarse ones (measured two late).
        let noises: [&dyn Fn(usize) -> f64; 2] =
            [&|k| if k == 2 { 20.0 } else { 1.0 }, &|k| if k == 2 || k == 3 { 15.0 } else { 1.0 }];
        for (case, noise) in noises.into_iter().enumerate() {
            let mut steer = GpuFrameBudget::new(MS_1);
            let drawn = LAVAPIPE.run_noisy(&mut steer, 20, noise);
            assert!(drawn[2..].iter().all(|&t| t == LAVAPIPE.coarsest), "case {case}: {drawn:?}");
            assert_eq!((steer.triangles(), steer.triangles_matter()), (Some(1), Some(true)), "case {case}");
            let cost = steer.cost().expect("fitted once the noise left");
            assert!((cost.fixed_us / LAVAPIPE.fixed_us - 1.0).abs() < 0.01, "case {case}: {cost:?}");
        }
    }

    /// Coarse frames slowed to just under the finest ones' time (the CPU
    /// lavapipe draws on taken by another process): their line says that
    /// the triangles are not the cost, and every character draws its
    /// finest, each frame over the budget. A second later one frame draws
    /// half the triangles, and its time puts the cost back on them.
    #[test]
    fn a_flat_line_through_slowed_frames_is_looked_at_again() {
        let slowed = 0.98 * LAVAPIPE.time_us(LAVAPIPE.full) / LAVAPIPE.time_us(LAVAPIPE.coarsest);
        let mut steer = GpuFrameBudget::new(MS_1);
        // Frames 2 and 3 are the first coarse ones (measured two late).
        let drawn = LAVAPIPE.run_noisy(&mut steer, 100, |k| if k == 2 || k == 3 { slowed } else { 1.0 });
        assert_eq!(drawn[2..4], [LAVAPIPE.coarsest; 2], "{drawn:?}");
        assert!(drawn[6..60].iter().all(|&t| t == LAVAPIPE.full), "the slowed frames' line: {drawn:?}");
        let look = drawn.iter().position(|&t| t == LAVAPIPE.full / 2).expect("a look again");
        assert!((60..70).contains(&look), "{look}: {drawn:?}");
        assert!(drawn[look + 2..].iter().all(|&t| t == LAVAPIPE.coarsest), "{drawn:?}");
        assert_eq!((steer.triangles(), steer.triangles_matter()), (Some(1), Some(true)));
        let cost = steer.cost().expect("fitted through the look");
        assert!((cost.fixed_us / LAVAPIPE.fixed_us - 1.0).abs() < 0.01, "{cost:?}");
    }

    /// Triangles that really are not the cost, frames over the budget for
    /// 100 seconds: each look again draws fewer for one frame, and waits
    /// twice as long as the last before the next, up to half a minute.
    #[test]
    fn looks_again_at_a_frame_the_triangles_do_not_make_long_grow_rare() {
        let gpu = Gpu { fixed_us: 20_000.0, per_triangle_us: 1e-6, full: 10_000_000, coarsest: 1_000_000 };
        let mut steer = GpuFrameBudget::new(MS_16);
        let drawn = gpu.run(&mut steer, 6000);
        let looks: Vec<usize> = (6..drawn.len()).filter(|&k| drawn[k] < gpu.full).collect();
        assert!(looks.iter().all(|&k| drawn[k] == gpu.full / 2), "{looks:?}");
        let waits: Vec<usize> = looks.windows(2).map(|k| k[1] - k[0]).collect();
        assert_eq!(waits, [120, 240, 480, 960, 1920, 1920], "after the first at {looks:?}");
        assert_eq!((steer.triangles(), steer.triangles_matter()), (Some(u64::MAX), Some(false)));
    }

    /// A render on lavapipe (400 built-in characters at 640x360, 2 cores):
    /// full levels, then two counts close together at the coarse end,
    /// whose line alone would go through no fixed part. The line through
    /// the full and coarse frames, about 60 ms of llvmpipe's own costs, is
    /// kept: over a budget of 40 ms either way, every character at its
    /// coarsest.
    #[test]
    fn a_line_through_counts_close_together_does_not_replace_a_wider_one() {
        let mut steer = GpuFrameBudget::new(Duration::from_millis(40));
        let frames =
            [(885_666.0, 1_381_808), (765_241.0, 1_381_808), (92_200.0, 55_968), (110_723.0, 55_968)]
                .into_iter()
                .chain([65_393.0, 62_725.0, 64_080.0, 65_497.0, 63_440.0, 63_212.0].map(|us| (us, 35_200)));
        for (k, (us, triangles)) in frames.enumerate() {
            steer.measured(us, triangles);
            let cost = steer.cost();
            if k >= 2 {
                assert_eq!(steer.triangles(), Some(1), "frame {k}: {cost:?}");
                let fixed_us = cost.expect("full and coarse frames fitted").fixed_us;
                assert!(fixed_us > 50_000.0 && fixed_us < 65_000.0, "frame {k}: {cost:?}");
            }
        }
    }

    /// Frames that vary by up to 5 % either way (50 runs of pseudo-random
    /// noise): once settled, the budget moves less than the draw order's
    /// hysteresis (9 %) from frame to frame, and every frame keeps the
    /// budget.
    #[test]
    fn noisy_frames_keep_the_budget_and_move_it_little() {
        for seed in 1..=50_u32 {
            let mut state = seed;
            let noise: Vec<f64> = (0..200)
                .map(|_| {
                    state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    0.95 + 0.1 * f64::from(state >> 8) / f64::from(1_u32 << 24)
                })
                .collect();
            let mut steer = GpuFrameBudget::new(MS_16);
            let drawn = CROWD.run_noisy(&mut steer, 200, |k| noise[k]);
            for (k, pair) in drawn[20..].windows(2).enumerate() {
                let change = pair[1] as f64 / pair[0] as f64 - 1.0;
                assert!(change.abs() < 0.09, "seed {seed}, frame {}: {pair:?}", k + 20);
            }
            // From the first fitted frame on (the first measured one's
            // time is all put on the triangles: 15.4 ms here, before noise).
            for (k, &triangles) in drawn.iter().enumerate().skip(4) {
                let us = CROWD.time_us(triangles) * noise[k];
                assert!(us < 16_667.0, "seed {seed}, frame {k}: {us} us");
            }
        }
    }

    #[test]
    fn frames_without_triangles_or_a_time_say_nothing() {
        let mut steer = GpuFrameBudget::new(MS_16);
        for (us, triangles) in [(5000.0, 0), (0.0, 10), (-1.0, 10), (f64::NAN, 10), (f64::INFINITY, 10)] {
            steer.measured(us, triangles);
            assert_eq!(steer.triangles(), None, "{us} us, {triangles} triangles");
        }
        assert_eq!((steer.triangles_matter(), steer.last_frame_us()), (None, None));
        steer.measured(1e-300, 1);
        assert_eq!(steer.triangles(), Some(u64::MAX), "a tiny cost is no limit");
        assert_eq!(steer.budget(), MS_16);
    }

    #[test]
    fn a_new_budget_keeps_what_was_measured() {
        let mut steer = GpuFrameBudget::new(MS_16);
        CROWD.run(&mut steer, 12);
        let settled = steer.triangles().unwrap();
        // The same budget again (the viewer sets it every frame): nothing moves.
        steer.set_budget(MS_16);
        assert_eq!(steer.triangles(), Some(settled));
        // A smaller one at once, from what was measured.
        steer.set_budget(Duration::from_micros(8_333));
        let most = steer.triangles().unwrap();
        let us = CROWD.time_us(most);
        assert!((us - AIM * 8_333.0).abs() < 0.001 * us, "{most}: {us} us");
        // A larger one a fifth of the way a frame.
        steer.set_budget(MS_16);
        let eased = steer.triangles().unwrap();
        assert!(eased > most && eased < settled, "{most} -> {eased}, settled {settled}");
    }
}
