//! The draw order's unit tests: levels, culling, shadows, the sort and its pieces on a pool.

use super::*;
use crate::render::shadow::cascades;
use nalgebra::{Point3, Vector3};

const ERROR: [f32; DETAIL_LEVELS] = [0.0, 0.01, 0.04, 0.16, 0.64];

/// A camera at the origin looking down -Z on a 1000-pixel-tall target
/// (90 degrees: one unit at depth d spans 500 / d pixels).
fn view() -> LevelView {
    let camera = Camera {
        eye: Point3::origin(),
        target: Point3::new(0.0, 0.0, -1.0),
        up: Vector3::y(),
        fov_y: std::f32::consts::FRAC_PI_2,
        aspect: 1.0,
        near: 0.1,
        far: 1000.0,
        lens_shift: 0.0,
    };
    LevelView::new(&camera, 1000)
}

/// The depth of a unit sphere's centre from which an error `e` is drawn.
fn reach(e: f32) -> f32 {
    e * 500.0 / PIXEL_ERROR + BOUNDS_MARGIN
}

fn at(z: f32) -> Matrix4<f32> {
    Matrix4::new_translation(&Vector3::new(0.0, 0.0, -z))
}

#[test]
fn a_level_is_drawn_once_its_error_is_under_a_pixel() {
    assert!((view().pixels_per_unit - 500.0).abs() < 1e-3);
    let mut order = DrawOrder::new(6, 0, &[(0, 6)]);
    // A sphere of radius 1 (BOUNDS_MARGIN with the margin). Level k's error e
    // is within PIXEL_ERROR from a nearest depth of 500 e / PIXEL_ERROR.
    let depths =
        [1.0, reach(0.01) + 0.1, reach(0.04) + 0.1, reach(0.16) + 0.1, reach(0.01) - 0.1, reach(0.64) + 0.1];
    for (c, &z) in depths.iter().enumerate() {
        order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
    }
    order.choose(&view(), &ERROR, DrawDetail::Auto);
    assert_eq!(order.buckets, [0, 2, 4, 6, 0, 8], "every level, all in view");
    assert_eq!(order.counts(), [2, 1, 1, 1, 1]);
    // Sorted by level, stable within one: 0, 4 | 1 | 2 | 3 | 5.
    assert_eq!(order.order(), [0, 4, 1, 2, 3, 5]);
    assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 2), (2, 1), (3, 1), (4, 1), (5, 1)]));
    assert_eq!(order.run_levels(0, Seen::ByLight), order.run_levels(0, Seen::ByCamera));
    order.choose(&view(), &ERROR, DrawDetail::Full);
    assert_eq!(order.order(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 6), (6, 0), (6, 0), (6, 0), (6, 0)]));
}

#[test]
fn a_larger_character_keeps_its_detail_longer() {
    let mut order = DrawOrder::new(2, 0, &[(0, 2)]);
    let z = reach(0.01) + 0.1;
    order.place(0, &at(z), [0.0, 0.0, 0.0, 1.0]);
    // Twice the size: twice the error, and a sphere reaching closer.
    order.place(1, &(at(z) * Matrix4::new_scaling(2.0)), [0.0, 0.0, 0.0, 1.0]);
    order.choose(&view(), &ERROR, DrawDetail::Auto);
    assert_eq!(order.buckets, [2, 0]);
}

#[test]
fn runs_sort_apart_and_extra_entries_stay_identity() {
    let mut order = DrawOrder::new(4, 1, &[(0, 2), (2, 2)]);
    for (c, z) in [1000.0, 1.0, 1000.0, 1.0].into_iter().enumerate() {
        order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
    }
    order.choose(&view(), &ERROR, DrawDetail::Auto);
    assert_eq!(order.order(), [1, 0, 3, 2, 4]);
    assert_eq!(order.run_levels(1, Seen::ByCamera), Some(&[(2, 1), (3, 0), (3, 0), (3, 0), (3, 1)]));
    assert_eq!(order.run_levels(2, Seen::ByCamera), None);
}

/// What the skin pass skins of a run: per level, its characters that
/// any pass draws (culled ones the shadows draw after the visible), the
/// hidden in none.
#[test]
fn a_run_s_drawn_levels_leave_out_the_hidden() {
    let mut order = DrawOrder::new(6, 1, &[(0, 2), (2, 4)]);
    order.set_buckets(&[0, 2 * 3, 2 * 3 + 1, HIDDEN, 2, 2 * 3]);
    assert_eq!(order.order(), [0, 1, 4, 5, 2, 3, 6]);
    assert_eq!(order.drawn_levels(0, 2), Some(&[(0, 1), (1, 0), (1, 0), (1, 1), (2, 0)]));
    assert_eq!(order.drawn_levels(2, 4), Some(&[(2, 0), (2, 1), (3, 0), (3, 2), (5, 0)]));
    assert_eq!(order.run_levels(1, Seen::ByCamera), Some(&[(2, 0), (2, 1), (3, 0), (3, 1), (5, 0)]));
    assert_eq!((order.drawn_levels(2, 3), order.drawn_levels(6, 1)), (None, None));
    assert_eq!((order.hidden(), order.culled_levels()), (1, [0, 0, 0, 1, 0]));
}

#[test]
fn broken_or_near_placements_draw_the_full_mesh() {
    let mut order = DrawOrder::new(3, 0, &[(0, 3)]);
    order.place(0, &Matrix4::from_element(f32::NAN), [0.0, 0.0, 0.0, 1.0]);
    // Behind the camera: its sphere's nearest depth is the near plane.
    order.place(1, &at(-50.0), [0.0, 0.0, 0.0, 1.0]);
    order.place(2, &at(1000.0), [0.0, 0.0, 0.0, f32::INFINITY]);
    order.choose(&view(), &ERROR, DrawDetail::Auto);
    // The one behind is culled from the camera's passes (and, without
    // shadows, drawn by none), not the others.
    assert_eq!(order.buckets, [0, HIDDEN, 0]);
}

/// Characters at their places, with nothing to skin; their world
/// matrices in a slice or (`in_slice` false) only one by one.
struct Places {
    worlds: Vec<Matrix4<f32>>,
    in_slice: bool,
}

impl FramePoses for Places {
    fn count(&self) -> usize {
        self.worlds.len()
    }
    fn input(&self, _: usize) -> crate::anim::SkinInput<'_> {
        let pose = crate::anim::SkinnedPose {
            palettes: &[],
            palette_ranges: &[],
            world: &[],
            world_joints: None,
            morph_weights: &[],
        };
        crate::anim::SkinInput { pose, version: 0 }
    }
    fn world(&self, c: usize) -> Matrix4<f32> {
        self.worlds[c]
    }
    fn worlds(&self) -> Option<&[Matrix4<f32>]> {
        self.in_slice.then_some(&self.worlds[..])
    }
}

/// Placed, chosen, sorted and foreseen in chunks on a pool of threads,
/// a crowd gets what one thread gives it, whether its places are read
/// from a slice or one by one.
#[test]
fn chunks_on_a_pool_order_as_one_thread_does() {
    let n = 3 * chunked::CHUNK + 5;
    let grid = (n as f32).sqrt().ceil() as usize;
    let mut worlds: Vec<Matrix4<f32>> = (0..n)
        .map(|c| {
            at(5.0 + 3.0 * (c / grid) as f32)
                * Matrix4::new_translation(&Vector3::x().scale((c % grid) as f32 - 40.0))
        })
        .collect();
    worlds[7] = Matrix4::from_element(f32::NAN);
    let runs = [(0, 4000), (4000, n as u32 - 4000)];
    let view = view().with_shadows([0.3, 1.0, 0.2]).with_receivers_above(-1.0).with_cascades(&slabs([
        (0.0, 20.0),
        (15.0, 50.0),
        (45.0, 100.0),
        (90.0, 1000.0),
    ]));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut results = Vec::new();
    // Per run: the buckets, pixel error and vertices over a budget of
    // half the vertices the levels within half a pixel skin.
    let mut budgeted = Vec::new();
    for (threads, in_slice) in [(1, true), (2, true), (2, false)] {
        let poses = Places { worlds: worlds.clone(), in_slice };
        let mut order = DrawOrder::new(n as u32, 1, &runs);
        let mut sight = vec![Sight::Unseen; n];
        let mut frame = || {
            order.place_poses(&poses, n, [0.0, 0.9, 0.0, 1.0]);
            order.choose(&view, &ERROR, DrawDetail::Auto);
            let half = DetailBudget::vertices(skinned(&order) / 2, VERTICES);
            order.choose_within(&view, &ERROR, DrawDetail::Auto, Some(&half));
            let over = (order.buckets.clone(), order.pixel_error(), skinned(&order), half.vertices.most);
            order.choose(&view, &ERROR, DrawDetail::Auto);
            order.foresee(&view, DrawDetail::Auto, &mut sight);
            over
        };
        budgeted.push(if threads == 1 { frame() } else { pool.install(frame) });
        results.push((order.spheres, order.buckets, (order.order, order.cascade_order), order.runs, sight));
    }
    let (_, buckets, ..) = &results[0];
    let levels = |l: u8| buckets.iter().filter(|&&b| b == l).count();
    // Every level seen, some culled but shadowed, some hidden.
    let taken: Vec<usize> = [0, 1, 2, 3, 4, 6, HIDDEN].map(levels).into();
    assert!(taken.iter().all(|&n| n > 0), "buckets taken: {taken:?}");
    // Each run's entries: its characters by slot, in order within one
    // (the sort is stable across its pieces).
    let (order, _) = &results[0].2;
    let reached: Vec<u32> = (0..CASCADES)
        .map(|k| results[0].3.iter().flat_map(|r| r.cascades[k]).map(|(_, n)| n).sum())
        .collect();
    assert!(reached.iter().all(|&n| n > 0), "characters per cascade: {reached:?}");
    for (first, count) in runs {
        let entries = &order[first as usize..(first + count) as usize];
        let key = |&c: &u32| (slot(buckets[c as usize]), c);
        assert!(entries.windows(2).all(|w| key(&w[0]) < key(&w[1])), "run at {first}: sorted");
        assert!(entries.iter().all(|&c| (first..first + count).contains(&c)), "run at {first}: its own");
    }
    assert_eq!(order[n], n as u32, "the extra entry stays identity");
    let (_, pixel_error, vertices, most) = &budgeted[0];
    assert!(*pixel_error > PIXEL_ERROR && vertices <= most, "{pixel_error} px: {vertices} of {most}");
    assert!(budgeted.iter().all(|b| b == &budgeted[0]), "the same over budget on a pool");
    // Debug's text: the broken placement's NaNs compare equal.
    let same = |a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| format!("{a:?}") == format!("{b:?}");
    for (i, result) in results.iter().enumerate().skip(1) {
        assert!(same(&result.0, &results[0].0), "{i}: spheres");
        assert_eq!((&result.1, &result.2), (&results[0].1, &results[0].2), "{i}: buckets and order");
        assert!(same(&result.3, &results[0].3) && same(&result.4, &results[0].4), "{i}: runs and sight");
    }
}

/// A small deterministic generator: each call of the closure returns a
/// number uniform in `lo..hi`.
fn uniform(seed: u64) -> impl FnMut(f32, f32) -> f32 {
    let mut state = seed;
    move |lo, hi| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        lo + (hi - lo) * ((state >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// A camera at `eye` looking somewhere level to `down` steeply down, its
/// field of view and far plane (up to `far`) drawn from `next`.
fn random_camera(next: &mut impl FnMut(f32, f32) -> f32, eye: Point3<f32>, down: f32, far: f32) -> Camera {
    Camera {
        eye,
        target: eye + Vector3::new(next(-1.0, 1.0), next(-down, 0.1), next(-1.0, 1.0)),
        up: Vector3::y(),
        fov_y: next(0.4, 1.2),
        aspect: 16.0 / 9.0,
        near: 0.1,
        far: next(30.0, far),
        lens_shift: 0.0,
    }
}

/// What the foresight calls unseen is exactly what the frame then
/// draws in no pass, for any placement, camera, light and ground (a
/// drawn character left unposed would show a stale pose).
#[test]
fn foresight_calls_unseen_exactly_what_no_pass_draws() {
    let mut next = uniform(0x2545_f491_4f6c_dd1d);
    let n = 300;
    let mut order = DrawOrder::new(n, 0, &[(0, n)]);
    let mut sight = vec![Sight::Unseen; n as usize];
    let (mut unseen, mut drawn) = (0, 0);
    for round in 0..40 {
        for c in 0..n as usize {
            let at = Vector3::new(next(-60.0, 60.0), next(-2.0, 2.0), next(-60.0, 60.0));
            order.place(c, &Matrix4::new_translation(&at), [0.0, 0.9, 0.0, next(0.5, 2.0)]);
        }
        let eye = Point3::new(next(-20.0, 20.0), next(0.5, 10.0), next(-20.0, 20.0));
        let camera = random_camera(&mut next, eye, 0.6, 200.0);
        let mut view = LevelView::new(&camera, 720);
        if round % 2 == 1 {
            let light = [next(-1.0, 1.0), next(0.2, 1.0), next(-1.0, 1.0)];
            view = view.with_shadows(light).with_receivers_above(next(-10.0, 0.0));
            if round % 4 == 3 {
                view = view.with_cascades(&cascades(&camera, Vector3::from(light).normalize()));
            }
        }
        order.choose(&view, &ERROR, DrawDetail::Auto);
        order.foresee(&view, DrawDetail::Auto, &mut sight);
        for (c, (s, &bucket)) in sight.iter().zip(order.buckets()).enumerate() {
            assert_eq!(
                *s == Sight::Unseen,
                bucket == HIDDEN,
                "round {round}, character {c}: {s:?}, {bucket}"
            );
            if let Sight::Drawn { pixels } = s {
                assert!(*pixels > 0.0, "{pixels}");
            }
        }
        unseen += order.hidden();
        drawn += n - order.hidden();
        order.foresee(&view, DrawDetail::Full, &mut sight);
        assert!(sight.iter().all(|s| *s == Sight::Drawn { pixels: f32::INFINITY }));
    }
    // Both kinds, many times over.
    assert!(unseen > 1000 && drawn > 1000, "{unseen} unseen, {drawn} drawn");
}

#[test]
fn characters_out_of_view_are_drawn_for_the_light_alone() {
    let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
    // In view; far to the left (the view is 90 degrees wide); just
    // outside the right edge but reaching in; behind the far plane.
    let beside = |x: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, -10.0));
    order.place(0, &at(10.0), [0.0, 0.0, 0.0, 1.0]);
    order.place(1, &beside(-30.0), [0.0, 0.0, 0.0, 1.0]);
    order.place(2, &beside(10.5), [0.0, 0.0, 0.0, 1.0]);
    order.place(3, &at(1002.0), [0.0, 0.0, 0.0, 1.0]);
    // A light low on the left: the shadows fall right and a little
    // down, into the view, onto ground far below.
    let low_left = [-1.0, 0.25, 0.0];
    let lit = view().with_shadows(low_left).with_receivers_above(-40.0);
    order.choose(&lit, &ERROR, DrawDetail::Full);
    assert_eq!((order.buckets.as_slice(), order.culled()), ([0, 0, 0, 0].as_slice(), 0), "no culling");
    // Levels too coarse to draw anywhere: level 0 and culling alone.
    // The one behind the far plane casts its shadow behind it too.
    order.choose(&lit, &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets, [0, 1, 0, HIDDEN]);
    assert_eq!((order.counts(), order.culled(), order.hidden()), ([2, 0, 0, 0, 0], 2, 1));
    // Visible first, then the culled ones of the same level, the hidden last.
    assert_eq!(order.order(), [0, 2, 1, 3]);
    assert_eq!(order.run_levels(0, Seen::ByCamera), Some(&[(0, 2), (3, 0), (3, 0), (3, 0), (3, 0)]));
    assert_eq!(order.run_levels(0, Seen::ByLight), Some(&[(0, 3), (3, 0), (3, 0), (3, 0), (3, 0)]));
    // With nothing below the characters to fall on, the left one's
    // shadow lands within a few units of it, far from the view.
    order.choose(&view().with_shadows(low_left), &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
    // The shadow must travel about 19 units along the light to reach
    // the view's left plane (pushed out by the radius, 1.25), dropping
    // 4.6: ground 2 units below stops it short, 5 below lets it in.
    let onto = |floor| view().with_shadows(low_left).with_receivers_above(floor);
    order.choose(&onto(-2.0), &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets[1], HIDDEN);
    order.choose(&onto(-5.0), &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets[1], 1);
    // A light high on the left throws that shadow steeply down: at the
    // characters' depth it crosses the left plane 10 units below the
    // bottom one and the bottom plane 10 units left of the left one,
    // so it passes under the view's corner (each plane alone would
    // let it in).
    let steep = view().with_shadows([-1.0, 1.0, 0.0]).with_receivers_above(-40.0);
    order.choose(&steep, &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets[1], HIDDEN);
    // A light up and to the right throws the left one's shadow away
    // from the view; without shadows no pass draws either.
    order.choose(&view().with_shadows([1.0, 1.0, 0.0]), &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
    order.choose(&view(), &[0.0, 1e6, 1e6, 1e6, 1e6], DrawDetail::Auto);
    assert_eq!(order.buckets, [0, HIDDEN, 0, HIDDEN]);
    assert_eq!(order.run_levels(0, Seen::ByLight), Some(&[(0, 2), (2, 0), (2, 0), (2, 0), (2, 0)]));
}

/// Cascades whose boxes are slabs of depth (`-z` from `near` to `far`),
/// 20,000 units wide and tall: orthographic projections looking down -z.
fn slabs(depths: [(f32, f32); CASCADES]) -> Cascades {
    let view_proj = depths.map(|(near, far)| {
        #[rustfmt::skip]
        let m = Matrix4::new(
            1e-4, 0.0, 0.0, 0.0,
            0.0, 1e-4, 0.0, 0.0,
            0.0, 0.0, -1.0 / (far - near), -near / (far - near),
            0.0, 0.0, 0.0, 1.0,
        );
        m
    });
    Cascades { view_proj, far: depths.map(|d| d.1) }
}

#[test]
fn each_cascade_draws_the_characters_that_reach_its_box() {
    let mut order = DrawOrder::new(7, 1, &[(0, 3), (3, 4)]);
    // Unit spheres in view at depths 5, 9.5 (across the first two
    // cascades' overlap), 20, 50 and 400; one to the left out of view
    // whose shadow falls into it, at the third cascade's depths; one the
    // same past every cascade's depths.
    let beside = |x: f32, z: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, -z));
    let worlds =
        [at(5.0), at(9.5), at(20.0), at(50.0), at(400.0), beside(-60.0, 50.0), beside(-800.0, 700.0)];
    for (c, world) in worlds.iter().enumerate() {
        order.place(c, world, [0.0, 0.0, 0.0, 1.0]);
    }
    let mut view = view()
        .with_shadows([-1.0, 0.25, 0.0])
        .with_receivers_above(-40.0)
        .with_cascades(&slabs([(0.0, 10.0), (9.0, 30.0), (30.0, 100.0), (100.0, 500.0)]));
    assert!(view.cascades.is_some(), "orthographic, along one light's axes");
    order.choose(&view, &ERROR, DrawDetail::Auto);
    assert_eq!(order.buckets[..5], [0, 0, 2, 4, 6], "levels in view");
    assert_eq!((order.buckets[5], order.buckets[6]), (5, HIDDEN), "culled: cast into a cascade, or none");
    let sections = order.cascade_order().expect("each cascade its own").to_vec();
    let entries = order.order().len() as u32;
    // Cascade k's instances of run r, per level, as characters.
    let drawn = |k: usize, r: usize| -> Vec<Vec<u32>> {
        let levels = order.run_levels(r, Seen::ByCascade(k)).unwrap();
        levels.iter().map(|&(first, count)| sections[range_of(first - entries, count)].to_vec()).collect()
    };
    let none: Vec<Vec<u32>> = vec![vec![]; DETAIL_LEVELS];
    let with = |pairs: &[(usize, u32)]| {
        let mut levels = none.clone();
        pairs.iter().for_each(|&(level, c)| levels[level].push(c));
        levels
    };
    assert_eq!(drawn(0, 0), with(&[(0, 0), (0, 1)]));
    assert_eq!(drawn(1, 0), with(&[(0, 1), (1, 2)]));
    assert_eq!((drawn(2, 0), drawn(3, 0)), (none.clone(), none.clone()));
    assert_eq!((drawn(0, 1), drawn(1, 1)), (none.clone(), none.clone()));
    assert_eq!(drawn(2, 1), with(&[(2, 3), (2, 5)]));
    assert_eq!(drawn(3, 1), with(&[(3, 4)]));
    // Sections apart: cascade k's run r starts at its characters' place.
    assert_eq!(order.run_levels(1, Seen::ByCascade(2)).unwrap()[0].0, entries + 2 * 7 + 3);
    // Without the boxes (or at full detail), every drawn character goes
    // into every cascade: the ByLight ranges of the order.
    view.cascades = None;
    order.choose(&view, &ERROR, DrawDetail::Auto);
    assert_eq!(order.cascade_order(), None);
    assert_eq!(order.buckets[6], 9, "the shadow may fall into the view");
    assert_eq!(order.run_levels(1, Seen::ByCascade(0)), order.run_levels(1, Seen::ByLight));
}

fn range_of(first: u32, count: u32) -> std::ops::Range<usize> {
    first as usize..(first + count) as usize
}

/// The boxes tested along the light's shared axes keep every sphere the
/// cascades' own planes keep, and add only spheres within a hair of a
/// box; projections of other shapes fall back to every cascade.
#[test]
fn cascade_boxes_agree_with_each_cascade_s_planes() {
    let mut next = uniform(0x9e37_79b9_7f4a_7c15);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..50 {
        let eye = Point3::new(next(-50.0, 50.0), next(1.0, 40.0), next(-50.0, 50.0));
        let camera = random_camera(&mut next, eye, 0.8, 800.0);
        let light = Vector3::new(next(-1.0, 1.0), next(0.1, 1.0), next(-1.0, 1.0)).normalize();
        let cascades = cascades(&camera, light);
        let boxes = CascadeBoxes::new(&cascades).expect("one light's orthographic boxes");
        let planes = cascades.view_proj.map(|m| frustum_planes(&m));
        for _ in 0..200 {
            let centre = [next(-300.0, 300.0), next(-20.0, 60.0), next(-300.0, 300.0)];
            let sphere = PlacedSphere { centre, radius: next(0.1, 5.0), scale: 1.0 };
            let mask = boxes.reached(&sphere);
            for (k, planes) in planes.iter().enumerate() {
                let by_planes = reaches(planes, &sphere);
                let by_box = mask >> k & 1 == 1;
                if by_planes {
                    assert!(by_box, "cascade {k} keeps {sphere:?}");
                    inside += 1;
                } else {
                    outside += 1;
                    // Outside by more than a hair: the box leaves it out too.
                    let margin = PlacedSphere { radius: sphere.radius + 1e-2, ..sphere };
                    assert!(!by_box || reaches(planes, &margin), "cascade {k} adds {sphere:?}");
                }
            }
        }
    }
    assert!(inside > 1000 && outside > 1000, "{inside} inside, {outside} outside");
    let broken = PlacedSphere { centre: [f32::NAN; 3], radius: 1.0, scale: 1.0 };
    let boxes = CascadeBoxes::new(&slabs([(0.0, 1.0); CASCADES])).unwrap();
    assert_eq!(boxes.reached(&broken), EVERY_CASCADE, "a broken sphere reaches every cascade");
    // A perspective projection is no box.
    let mut perspective = slabs([(0.0, 1.0); CASCADES]);
    perspective.view_proj[2][(3, 2)] = -1.0;
    assert_eq!(CascadeBoxes::new(&perspective), None);
}

/// A caster stays in every cascade whose slice of the view its shadow
/// sweep reaches (points along the sweep, within the radius of the view's
/// sides and of the slice's depths, found by walking it), and the slices
/// leave many box hits out: the far cascades' boxes reach far past their slices.
#[test]
fn cascade_slices_keep_every_caster_whose_shadow_reaches_them() {
    let mut next = uniform(0x5851_f42d_4c95_7f2d);
    let (mut kept, mut left_out) = (0, 0);
    for _ in 0..40 {
        let eye = Point3::new(next(-50.0, 50.0), next(1.0, 40.0), next(-50.0, 50.0));
        let camera = random_camera(&mut next, eye, 0.8, 400.0);
        let light = [next(-1.0, 1.0), next(0.1, 1.0), next(-1.0, 1.0)];
        let cascades = cascades(&camera, Vector3::from(light).normalize());
        let view = LevelView::new(&camera, 720).with_shadows(light).with_cascades(&cascades);
        let boxes = view.cascades.expect("boxes");
        let floor = next(-10.0, 0.0);
        let slice = |k: usize| {
            let lo = if k == 0 { view.near } else { cascades.far[k - 1] };
            let hi = if k + 1 == CASCADES { view.far } else { cascades.far[k] };
            (lo, hi)
        };
        for _ in 0..300 {
            let centre = [next(-300.0, 300.0), next(floor, 40.0), next(-300.0, 300.0)];
            let sphere = PlacedSphere { centre, radius: next(0.1, 5.0), scale: 1.0 };
            let mask = view.cascades_reached(&sphere, floor);
            assert_eq!(mask & !boxes.reached(&sphere), 0, "only box hits: {sphere:?}");
            let (c, end) = view.sweep(&sphere, floor).expect("shadows");
            let r = sphere.radius;
            for k in 0..CASCADES {
                let (lo, hi) = slice(k);
                let walked = (0..=400).map(|i| i as f32 / 400.0).any(|t| {
                    let p: [f32; 3] = std::array::from_fn(|i| c[i] + t * (end[i] - c[i]));
                    let sides = view.planes[..4]
                        .iter()
                        .all(|q| q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] + r >= 0.0);
                    let depth: f32 = (0..3).map(|i| view.forward[i] * (p[i] - view.eye[i])).sum();
                    sides && depth >= lo - r && depth <= hi + r
                });
                let in_box = boxes.reached(&sphere) >> k & 1 == 1;
                if walked && in_box {
                    assert!(mask >> k & 1 == 1, "cascade {k} keeps {sphere:?}");
                    kept += 1;
                } else if in_box && mask >> k & 1 == 0 {
                    left_out += 1;
                }
            }
        }
    }
    assert!(kept > 500 && left_out > 500, "{kept} kept, {left_out} left out");
}

/// Vertices one character skins at each level, for the budget tests.
const VERTICES: [u64; DETAIL_LEVELS] = [1000, 300, 100, 30, 10];

/// Vertices the characters some pass draws skin at their chosen levels.
fn skinned(order: &DrawOrder) -> u64 {
    let (seen, culled) = (order.counts(), order.culled_levels());
    (0..DETAIL_LEVELS).map(|k| u64::from(seen[k] + culled[k]) * VERTICES[k]).sum()
}

/// A unit sphere's character at depth `z` draws level `k` within `m`
/// pixels from `m = ERROR[k] * 500 / (z - BOUNDS_MARGIN)`: over a budget,
/// the least such `m` (within 1.1 %) at which the drawn characters fit.
#[test]
fn over_a_vertex_budget_every_character_draws_within_a_larger_pixel_error() {
    let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
    // Levels 0, 2 and 3 at half a pixel; one behind the camera, which no
    // pass draws and which skins nothing.
    let depths = [reach(0.01) - 0.1, reach(0.04) + 5.0, -50.0, reach(0.16) + 0.1];
    for (c, &z) in depths.iter().enumerate() {
        order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
    }
    let threshold = |k: usize, c: usize| ERROR[k] * 500.0 / (depths[c] - BOUNDS_MARGIN);
    let mut choose = |most: u64, detail| {
        let budget = DetailBudget::vertices(most, VERTICES);
        order.choose_within(&view(), &ERROR, detail, Some(&budget));
        (order.buckets.clone(), order.pixel_error(), skinned(&order))
    };
    // Within the budget: half a pixel.
    assert_eq!(choose(1130, DrawDetail::Auto), (vec![0, 4, HIDDEN, 6], PIXEL_ERROR, 1130));
    // One vertex less: the nearest one steps down a level first.
    let (buckets, m, vertices) = choose(1129, DrawDetail::Auto);
    assert_eq!((buckets, vertices), (vec![2, 4, HIDDEN, 6], 430));
    assert!(m >= threshold(1, 0) && m <= threshold(1, 0) * 1.011, "{m} against {}", threshold(1, 0));
    // Under 430, the next threshold is the second's level 3 (1.78
    // pixels), before the fourth's level 4 (2.00) and the first's level 2 (2.02).
    let (buckets, m, vertices) = choose(429, DrawDetail::Auto);
    assert_eq!((buckets, vertices), (vec![2, 6, HIDDEN, 6], 360));
    assert!(m >= threshold(3, 1) && m <= threshold(3, 1) * 1.011, "{m} against {}", threshold(3, 1));
    // Not even the coarsest levels fit: all draw those.
    assert_eq!(choose(29, DrawDetail::Auto), (vec![8, 8, HIDDEN, 8], f32::INFINITY, 30));
    // Full detail is every full mesh, whatever the budget.
    assert_eq!(choose(29, DrawDetail::Full), (vec![0; 4], PIXEL_ERROR, 4000));
    // Without a budget, half a pixel.
    order.choose(&view(), &ERROR, DrawDetail::Auto);
    assert_eq!((order.buckets.as_slice(), order.pixel_error()), ([0, 4, HIDDEN, 6].as_slice(), PIXEL_ERROR));
}

/// Over the budget frame after frame, the last frame's pixel error stays
/// while it fits and is within 9 % of the least that does (no flicker at
/// a level's threshold); past either, the least is found again.
#[test]
fn over_a_vertex_budget_the_last_frame_s_pixel_error_stays_near_the_least() {
    let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
    let budget = DetailBudget::vertices(429, VERTICES);
    // As above; the second character's level 3 is the threshold, at 80 /
    // its nearest depth pixels.
    let mut frame = |nearest: f32| {
        let depths = [reach(0.01) - 0.1, nearest + BOUNDS_MARGIN, -50.0, reach(0.16) + 0.1];
        for (c, &z) in depths.iter().enumerate() {
            order.place(c, &at(z), [0.0, 0.0, 0.0, 1.0]);
        }
        order.choose_within(&view(), &ERROR, DrawDetail::Auto, Some(&budget));
        assert_eq!((order.buckets.as_slice(), skinned(&order)), ([2, 6, HIDDEN, 6].as_slice(), 360));
        order.pixel_error()
    };
    let least = |nearest: f32| ERROR[3] * 500.0 / nearest;
    let first = frame(45.0);
    assert!(first >= least(45.0) && first <= least(45.0) * 1.011, "{first}");
    // 1 % farther: the least drops 1 %, the error stays.
    assert_eq!(frame(45.45), first);
    // 20 % farther: found again.
    let farther = frame(54.0);
    assert!(farther >= least(54.0) && farther <= least(54.0) * 1.011, "{farther}");
    // Back nearer than at first: the last error no longer fits.
    let nearer = frame(42.75);
    assert!(nearer >= least(42.75) && nearer <= least(42.75) * 1.011, "{nearer}");
}

/// A character only the shadow cascades draw is skinned too: it counts
/// against the budget and keeps drawing for the light alone.
#[test]
fn a_vertex_budget_counts_the_characters_drawn_for_the_light() {
    let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
    let beside = |x: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, -10.0));
    for (c, world) in [at(10.0), beside(-30.0), beside(10.5), at(1002.0)].iter().enumerate() {
        order.place(c, world, [0.0, 0.0, 0.0, 1.0]);
    }
    let lit = view().with_shadows([-1.0, 0.25, 0.0]).with_receivers_above(-40.0);
    order.choose(&lit, &ERROR, DrawDetail::Auto);
    assert_eq!((order.buckets.as_slice(), skinned(&order)), ([0, 1, 0, HIDDEN].as_slice(), 3000));
    let budget = DetailBudget::vertices(2999, VERTICES);
    order.choose_within(&lit, &ERROR, DrawDetail::Auto, Some(&budget));
    assert!(skinned(&order) <= 2999 && order.pixel_error() > PIXEL_ERROR);
    assert_eq!((order.buckets[1] % 2, order.buckets[3]), (1, HIDDEN), "{:?}", order.buckets);
    let none = DetailBudget::vertices(0, VERTICES);
    order.choose_within(&lit, &ERROR, DrawDetail::Auto, Some(&none));
    assert_eq!(
        (order.buckets.as_slice(), order.culled_levels()),
        ([8, 9, 8, HIDDEN].as_slice(), [0, 0, 0, 0, 1])
    );
}

/// Triangles one character draws in a pass at each level, for the
/// triangle budget tests.
const TRIANGLES: [u64; DETAIL_LEVELS] = [2000, 500, 120, 30, 8];

/// A budget of `vertices` skinned and `triangles` drawn in a frame of
/// one main pass without shadow cascades.
fn both(vertices: u64, triangles: u64) -> DetailBudget {
    DetailBudget {
        triangles: LevelLimit { most: triangles, per_level: TRIANGLES },
        ..DetailBudget::vertices(vertices, VERTICES)
    }
}

/// As in the light's test: the camera sees 0 and 2, 1 casts a shadow into
/// the view, 3 is hidden; each character's buckets, pixel error, the
/// limits over, and what it skins and draws, chosen within `budget`.
fn choose_lit(budget: DetailBudget) -> (Vec<u8>, f32, OverBudget, u64) {
    let beside = |x: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, -10.0));
    let lit = view().with_shadows([-1.0, 0.25, 0.0]).with_receivers_above(-40.0);
    let mut order = DrawOrder::new(4, 0, &[(0, 4)]);
    for (c, world) in [at(10.0), beside(-30.0), beside(10.5), at(1002.0)].iter().enumerate() {
        order.place(c, world, [0.0, 0.0, 0.0, 1.0]);
    }
    order.choose_within(&lit, &ERROR, DrawDetail::Auto, Some(&budget));
    (order.buckets.clone(), order.pixel_error(), order.over_budget(), skinned(&order))
}

/// Triangles `buckets` draw in a frame of `camera_passes` passes for what
/// the camera sees and, with `cascades`, each character into all four
/// cascades (the view has no cascade boxes: every cascade draws every
/// drawn character).
fn drawn(buckets: &[u8], camera_passes: u64, cascades: bool) -> u64 {
    let each = |&b: &u8| {
        let passes = if b % 2 == 0 { camera_passes } else { 0 } + if cascades { 4 } else { 0 };
        if b == HIDDEN { 0 } else { TRIANGLES[usize::from(b / 2)] * passes }
    };
    buckets.iter().map(each).sum()
}

/// A triangle budget counts every pass a character is drawn in: the
/// camera's (twice with a depth prepass) and each shadow cascade's, so a
/// character drawn for the light alone counts only where the frame draws
/// the cascades. Over it the characters draw coarser, as over a vertex
/// budget, and with both limits the error is the one that fits both: the
/// larger of each alone's.
#[test]
fn a_triangle_budget_counts_each_pass_and_holds_with_the_vertex_budget() {
    let none = OverBudget::default();
    let triangles_only = OverBudget { triangles: true, ..OverBudget::default() };
    // One main pass: 2 x 2,000 (the light's character draws nothing).
    // A depth prepass: twice that. Cascades: 2,000 x (1 + 4) for each the
    // camera sees, 2,000 x 4 for the light's.
    let frames = [(1, false, 4_000), (2, false, 8_000), (1, true, 28_000)];
    for (camera_passes, cascades, full) in frames {
        let budget =
            |most| DetailBudget { camera_passes: camera_passes as u32, cascades, ..both(u64::MAX, most) };
        let (buckets, m, over, _) = choose_lit(budget(full));
        assert_eq!((buckets.as_slice(), m, over), ([0, 1, 0, HIDDEN].as_slice(), PIXEL_ERROR, none));
        assert_eq!(drawn(&buckets, camera_passes, cascades), full);
        // One triangle less: coarser, the shadow's character still the light's.
        let (buckets, m, over, _) = choose_lit(budget(full - 1));
        assert!(m > PIXEL_ERROR && drawn(&buckets, camera_passes, cascades) < full, "{m}: {buckets:?}");
        assert_eq!((buckets[1] % 2, buckets[3], over), (1, HIDDEN, triangles_only));
    }
    // A vertex budget alone that asks less coarsening than a tight
    // triangle one, and the two together.
    let (buckets, tight, ..) = choose_lit(both(u64::MAX, 999));
    let (_, by_vertices, _, vertices) = choose_lit(both(2999, u64::MAX));
    assert!(
        drawn(&buckets, 1, false) <= 999 && vertices <= 2999 && tight > by_vertices,
        "{tight} {by_vertices}"
    );
    let (buckets, m, over, vertices) = choose_lit(both(2999, 999));
    assert_eq!((m, over), (tight, OverBudget { vertices: true, triangles: true, gpu_frame: false }));
    assert!(drawn(&buckets, 1, false) <= 999 && vertices <= 2999);
    // Not even the coarsest levels draw one triangle: named as the one
    // limit the coarsest are over.
    let (buckets, m, over, _) = choose_lit(both(u64::MAX, 1));
    assert_eq!((buckets.as_slice(), m, over), ([8, 9, 8, HIDDEN].as_slice(), f32::INFINITY, triangles_only));
}
