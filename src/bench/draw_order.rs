//! The draw order's CPU cost per frame (`render::draw_order`): placing
//! every character's sphere by its world matrix, then choosing each one's
//! detail level, culling those out of view and sorting the order by
//! level, for 100,000 built-in
//! characters on the grid `render --characters` lays out, framed whole at
//! 1280x720 as `bench` frames them. The baseline, measured in the same
//! run, is `--detail full`: the same place and sort, no level projected
//! and nothing culled. `AutoShadows` chooses for a frame with the key
//! light's shadow cascades (`--passes 5`): the shadow test per character,
//! and each cascade's own casters sorted out (`draw_order::cascades`).
//! `AutoOverBudget` chooses within a vertex budget halfway from what the
//! levels within half a pixel skin to what the coarsest ones do
//! (`draw_order::DetailBudget`), frame after frame: the last frame's
//! pixel error checked and kept, then the sort. `AutoOverBudgetSearch`
//! takes turns between that budget and none (frames within their
//! budget forget the last error), so that every other frame searches
//! for its pixel error anew: a searching frame costs about twice its
//! time less `Auto`'s. `AutoShadowsOverTriangles` chooses the shadowed
//! frame within a triangle budget of every pass together, halfway from
//! what its levels within half a pixel draw (the last error kept, as in
//! `AutoOverBudget`). Beside them, the foresight a crowd is posed by
//! (`Renderer::foresee`): the same placing, then each character's sight
//! (culled, or its size in pixels).
//! Reported as nanoseconds per character and the ratio.
//!
//! Each runs on one thread, then (`/threads-N`) on a pool of every core,
//! as a crowd's frame runs it on the threads posing the crowd
//! (`render::chunked`).
//!
//! Run: `cargo bench --bench draw_order` (no shared files needed).

use criterion::{BenchmarkId, Criterion, Throughput};
use nalgebra::Matrix4;
use std::sync::Arc;
use vkskin::anim::framing::Bounds;
use vkskin::anim::{FramePoses, Sight, SkinInput, SkinnedPose};
use vkskin::asset::load_default_character;
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Controller, Crowd};
use vkskin::render::DrawDetail;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::detail_levels::DETAIL_LEVELS;
use vkskin::render::detail_levels::DetailLevels;
use vkskin::render::draw_order::{DetailBudget, DrawOrder, LevelLimit, LevelView, Seen};
use vkskin::render::frame_uniforms::FrameUniforms;
use vkskin::render::gpu_model::ModelStreams;
use vkskin::render::shadow::{CASCADES, cascades};
use vkskin::render::skin_pass::SkinLayout;

/// Characters placed and sorted per frame.
const CHARACTERS: usize = 100_000;

/// Characters at their places, with nothing to skin: placing reads only
/// their world matrices.
struct Places(Vec<Matrix4<f32>>);

impl FramePoses for Places {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn input(&self, _: usize) -> SkinInput<'_> {
        let pose = SkinnedPose {
            palettes: &[],
            palette_ranges: &[],
            world: &[],
            world_joints: None,
            morph_weights: &[],
        };
        SkinInput { pose, version: 0 }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        self.0[c]
    }
    fn worlds(&self) -> Option<&[Matrix4<f32>]> {
        Some(&self.0)
    }
}

/// Vertices one character skins and triangles it draws in a pass at each
/// level, as the skin pass lays it out and the draws index it (what the
/// renderer's `DetailBudget` counts).
fn level_costs(model: &vkskin::asset::Model) -> ([u64; DETAIL_LEVELS], [u64; DETAIL_LEVELS]) {
    let streams = ModelStreams::build_with_levels(model).expect("the built-in character's streams");
    let table = streams.table();
    let mut layout = SkinLayout::default();
    let index = layout.add_model(table).expect("a model");
    layout.add_character(index, table, model).expect("a character");
    let vertices = layout.characters()[0].level_vertices.map(u64::from);
    let mut triangles = [0; DETAIL_LEVELS];
    for p in table.primitives {
        for (sum, &(_, indices)) in triangles.iter_mut().zip(&p.levels) {
            *sum += u64::from(indices / 3);
        }
    }
    (vertices, triangles)
}

/// The crowd's places and the bounds of its first frame, on the grid
/// `render --characters` and `bench` lay it out on (`Crowd::on_grid`: the
/// character's own footprint apart).
fn grid(model: &vkskin::asset::Model) -> (Vec<Matrix4<f32>>, Bounds) {
    let controller = Controller::from_text(DEFAULT_CONTROLLER, model).expect("the built-in controller");
    let (crowd, bounds) = Crowd::on_grid(model.rig.clone(), Arc::new(controller), CHARACTERS, 30.0, 1, false)
        .expect("a crowd")
        .expect("the built-in character draws");
    (crowd.worlds().to_vec(), bounds)
}

fn main() {
    let model = load_default_character().expect("built-in character");
    let levels = DetailLevels::build(&model);
    let (worlds, (lo, hi)) = grid(&model);
    let camera = Camera::frame_box(lo, hi, 1280.0 / 720.0, DEFAULT_FOV_Y);
    let view = LevelView::new(&camera, 720);
    // The crowd is one run, as the renderer's.
    let runs = [(0, CHARACTERS as u32)];
    let mut order = DrawOrder::new(CHARACTERS as u32, 1, &runs);
    // With the key light's shadows (`--passes 5`): each cascade draws the
    // characters whose spheres reach its box.
    let key = FrameUniforms::key_light();
    let lit = view.with_shadows(key.into()).with_cascades(&cascades(&camera, key));

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(cores).build().expect("a thread pool");
    // One thread: this one, in no pool, runs every chunk in order.
    let on = |threads: usize, work: &mut (dyn FnMut() + Send)| match threads {
        1 => work(),
        _ => pool.install(work),
    };
    let poses = Places(worlds);

    // Halfway from what the levels within half a pixel skin to the coarsest's.
    let (per_level, triangles) = level_costs(&model);
    order.place_poses(&poses, CHARACTERS, levels.bounds);
    order.choose(&view, &levels.error, DrawDetail::Auto);
    let skinned: u64 = order.counts().iter().zip(&per_level).map(|(&n, &v)| u64::from(n) * v).sum();
    let coarsest = CHARACTERS as u64 * per_level[DETAIL_LEVELS - 1];
    let budget = DetailBudget::vertices((skinned + coarsest) / 2, per_level);
    let unlimited = DetailBudget::vertices(u64::MAX, per_level);
    // With the shadows, a triangle budget of every pass together, halfway
    // from what the levels within half a pixel draw to the coarsest's.
    order.choose(&lit, &levels.error, DrawDetail::Auto);
    let per_pass = |counts: &[(u32, u32); DETAIL_LEVELS]| -> u64 {
        counts.iter().zip(&triangles).map(|(&(_, n), &t)| u64::from(n) * t).sum()
    };
    let passes =
        [Seen::ByCamera, Seen::ByCascade(0), Seen::ByCascade(1), Seen::ByCascade(2), Seen::ByCascade(3)];
    let frame_triangles = |order: &DrawOrder| -> u64 {
        passes.iter().filter_map(|&seen| order.run_levels(0, seen)).map(per_pass).sum()
    };
    let drawn = frame_triangles(&order);
    let triangles_within = |most| DetailBudget {
        triangles: LevelLimit { most, per_level: triangles },
        cascades: true,
        ..unlimited
    };
    order.choose_within(&lit, &levels.error, DrawDetail::Auto, Some(&triangles_within(0)));
    let triangle_budget = triangles_within((drawn + frame_triangles(&order)) / 2);

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("draw_order");
    group.throughput(Throughput::Elements(CHARACTERS as u64));
    let mut sight = vec![Sight::Unseen; CHARACTERS];
    for threads in [1, cores].into_iter().take(if cores > 1 { 2 } else { 1 }) {
        let suffix = if threads == 1 { String::new() } else { format!("/threads-{threads}") };
        // Per choice, the budgets its frames take turns with.
        let turns = [budget, unlimited];
        let choices = [
            ("Full", view, DrawDetail::Full, &turns[..0]),
            ("Auto", view, DrawDetail::Auto, &turns[..0]),
            ("AutoShadows", lit, DrawDetail::Auto, &turns[..0]),
            ("AutoOverBudget", view, DrawDetail::Auto, &turns[..1]),
            ("AutoOverBudgetSearch", view, DrawDetail::Auto, &turns[..]),
            ("AutoShadowsOverTriangles", lit, DrawDetail::Auto, std::slice::from_ref(&triangle_budget)),
        ];
        for (name, view, detail, budgets) in choices {
            let mut frame = 0;
            group.bench_function(BenchmarkId::new("place+choose", format!("{name}{suffix}")), |b| {
                b.iter(|| {
                    frame += 1;
                    let budget = (!budgets.is_empty()).then(|| &budgets[frame % budgets.len()]);
                    on(threads, &mut || {
                        order.place_poses(&poses, CHARACTERS, levels.bounds);
                        order.choose_within(&view, &levels.error, detail, budget);
                    });
                    std::hint::black_box(order.order()[0])
                })
            });
        }
        group.bench_function(BenchmarkId::new("place+foresee", format!("Auto{suffix}")), |b| {
            b.iter(|| {
                on(threads, &mut || {
                    order.place_and_foresee(&poses, levels.bounds, &view, DrawDetail::Auto, &mut sight)
                });
                std::hint::black_box(sight[0])
            })
        });
    }
    group.finish();
    order.choose(&view, &levels.error, DrawDetail::Auto);
    println!(
        "characters per level at 1280x720, the crowd framed whole: {:?}, {} culled",
        order.counts(),
        order.culled()
    );
    order.choose_within(&view, &levels.error, DrawDetail::Auto, Some(&budget));
    println!(
        "within a budget of {} vertices (of {skinned}): {:?}, within {} pixels",
        budget.vertices.most,
        order.counts(),
        order.pixel_error()
    );
    order.choose_within(&lit, &levels.error, DrawDetail::Auto, Some(&triangle_budget));
    println!(
        "with shadows, within a budget of {} triangles, every pass (of {drawn}): {:?}, within {} pixels",
        triangle_budget.triangles.most,
        order.counts(),
        order.pixel_error()
    );
    order.choose(&lit, &levels.error, DrawDetail::Auto);
    let per_cascade: Vec<u32> = (0..CASCADES)
        .map(|k| {
            (0..runs.len()).flat_map(|r| order.run_levels(r, Seen::ByCascade(k))).flatten().map(|l| l.1).sum()
        })
        .collect();
    println!(
        "characters per shadow cascade, the same view: {per_cascade:?} (of {CHARACTERS} in each before)"
    );
    criterion.final_summary();
}
