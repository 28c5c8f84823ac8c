//! The draw order's CPU cost per frame (`render::draw_order`): placing
//! every character's sphere by its world matrix, then choosing each one's
//! detail level, culling those out of view and sorting the order by
//! level, for 100,000 built-in
//! characters on the grid `render --characters` lays out, framed whole at
//! 1280x720 as `bench` frames them. The baseline, measured in the same
//! run, is `--detail full`: the same place and sort, no level projected
//! and nothing culled. Beside them, the foresight a crowd is posed by
//! (`Renderer::foresee`): the same placing, then each character's sight
//! (culled, or its size in pixels).
//! Reported as nanoseconds per character and the ratio.
//!
//! Run: `cargo bench --bench draw_order` (no shared files needed).

use criterion::{BenchmarkId, Criterion, Throughput};
use nalgebra::Matrix4;
use vkskin::anim::Sight;
use vkskin::asset::load_default_character;
use vkskin::character::crowd::grid_position;
use vkskin::render::DrawDetail;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::detail_levels::DetailLevels;
use vkskin::render::draw_order::{DrawOrder, LevelView};

/// Characters placed and sorted per frame.
const CHARACTERS: usize = 100_000;
/// Spacing of the grid (`render --characters`).
const SPACING: f32 = 1.5;
/// Characters per output window: a run of the draw order each.
const WINDOW: usize = 18_000;

fn main() {
    let model = load_default_character().expect("built-in character");
    let levels = DetailLevels::build(&model);
    let worlds: Vec<Matrix4<f32>> =
        (0..CHARACTERS).map(|c| Matrix4::new_translation(&grid_position(c, CHARACTERS, SPACING))).collect();
    let half = SPACING * ((CHARACTERS as f32).sqrt() - 1.0) * 0.5 + 1.0;
    let camera = Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], 1280.0 / 720.0, DEFAULT_FOV_Y);
    let view = LevelView::new(&camera, 720);
    let runs: Vec<(u32, u32)> = (0..CHARACTERS)
        .step_by(WINDOW)
        .map(|first| (first as u32, WINDOW.min(CHARACTERS - first) as u32))
        .collect();
    let mut order = DrawOrder::new(CHARACTERS as u32, 1, &runs);

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("draw_order");
    group.throughput(Throughput::Elements(CHARACTERS as u64));
    for detail in [DrawDetail::Full, DrawDetail::Auto] {
        group.bench_function(BenchmarkId::new("place+choose", format!("{detail:?}")), |b| {
            b.iter(|| {
                for (c, world) in worlds.iter().enumerate() {
                    order.place(c, world, levels.bounds);
                }
                order.choose(&view, &levels.error, detail);
                std::hint::black_box(order.order()[0])
            })
        });
    }
    let mut sight = vec![Sight::Unseen; CHARACTERS];
    group.bench_function(BenchmarkId::new("place+foresee", "Auto"), |b| {
        b.iter(|| {
            for (c, world) in worlds.iter().enumerate() {
                order.place(c, world, levels.bounds);
            }
            order.foresee(&view, DrawDetail::Auto, &mut sight);
            std::hint::black_box(sight[0])
        })
    });
    group.finish();
    order.choose(&view, &levels.error, DrawDetail::Auto);
    println!(
        "characters per level at 1280x720, the crowd framed whole: {:?}, {} culled",
        order.counts(),
        order.culled()
    );
    criterion.final_summary();
}
