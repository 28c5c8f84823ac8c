//! The skin pass at detail levels (`render::skin_levels`) on a real Vulkan
//! device, validation and synchronization validation on: a character at a
//! coarser level has exactly the vertices its level's triangles use skinned
//! (the same bits as a full skin of the same pose), one after the other at
//! the start of its output in the lists' order, and nothing past them is
//! touched; a character that no pass draws is not skinned at all, nor is
//! its palette uploaded; characters past the frame's levels skin whole.
//! The lists are recomputed here from `DetailLevels::build`, independently
//! of the tables the pass reads. Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use super::render_skinning::Rig;
use super::synthetic_models::{Synthetic, pose_synthetic, synthetic_model};
use crate::common::{assert_no_validation_messages, context};
use std::collections::BTreeSet;
use std::sync::Arc;
use vkskin::anim::SkinInput;
use vkskin::asset::{Model, load_default_character};
use vkskin::render::detail_levels::{DETAIL_LEVELS, DetailLevels};
use vkskin::render::draw_order::{DrawOrder, HIDDEN};
use vkskin::render::layout::SkinnedVertex;
use vkskin::render::skin_levels::SkinLevels;
use vkskin::render::skin_pass::CharacterId;

/// The vertices level `level` of primitive `p` draws (all at level 0), from
/// the simplifier's own lists (an empty list repeats the level above).
fn drawn_vertices(detail: &DetailLevels, model: &Model, p: usize, level: usize) -> BTreeSet<u32> {
    let prim = {
        let mut all = model.meshes.iter().flat_map(|m| &m.primitives);
        all.nth(p).expect("primitive")
    };
    let lists = &detail.primitives[p];
    let list = (1..=level).rev().map(|k| &lists[k - 1]).find(|l| !l.is_empty());
    list.unwrap_or(&prim.indices).iter().copied().collect()
}

#[test]
fn a_coarser_level_skins_exactly_the_vertices_it_draws() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let small = Arc::new(synthetic_model(0.0));
    let detail = DetailLevels::build(&model);
    let mut rig = Rig::new(&ctx);
    // Five built-in characters, then one of another model (its streams
    // and tables concatenated after theirs), past the frame's levels.
    let ids: Vec<CharacterId> = (0..5).map(|i| rig.add(&ctx, &model, i == 0)).collect();
    rig.add(&ctx, &small, true);
    assert!(rig.pass.gpu_model(ids[0]).skin_levels.len() > 1, "the built-in character has level tables");
    let models = [&model, &model, &model, &model, &model, &small];
    let mut poses: Vec<Synthetic> = models.iter().map(|m| Synthetic::new(m)).collect();
    let mut skin = |rig: &mut Rig, frame: u32, levels: Option<SkinLevels>| {
        for (m, p) in models.iter().zip(&mut poses) {
            pose_synthetic(m, p, frame);
        }
        let inputs: Vec<SkinInput> =
            poses.iter().map(|p| SkinInput { pose: p.view(), version: u64::from(frame) }).collect();
        rig.skin_at(&ctx, &inputs, levels)
    };
    // Pose B, then pose A, each whole: the output (one for both frame
    // slots) holds pose A.
    let (a, b) = (3, 17);
    let (whole_b, _) = skin(&mut rig, b, None);
    let (whole_a, _) = skin(&mut rig, a, None);
    assert_ne!(whole_a[0].position, whole_b[0].position, "the poses differ");
    // Pose B at levels 0, 2, 3, 1 and 4 (the third and fourth culled
    // from the camera, drawn by the shadows); the other model's character
    // past the levels. The five built-in characters are one run of the
    // draw order.
    let mut order = DrawOrder::new(5, 0, &[(0, 5)]);
    order.set_buckets(&[0, 2 * 2, 2 * 3 + 1, 2 + 1, 2 * 4]);
    let (at_levels, every_palette) = skin(&mut rig, b, Some(SkinLevels { order: &order }));
    // Pose A, character 0 drawn by no pass: it keeps what the last frame
    // skinned, and its palette is not uploaded.
    order.set_buckets(&[HIDDEN, 2 * 4, 0, 2 * 4, 2 * 4 + 1]);
    let (skipping, hidden_one) = skin(&mut rig, a, Some(SkinLevels { order: &order }));
    let entries = |c: usize| {
        let (start, end) = rig.pass.layout().characters()[c].palette_range;
        u64::from(end - start) * 64
    };
    let (palette, small_palette) = (entries(0), entries(5));
    assert_eq!(every_palette.palette_bytes_written, 5 * palette + small_palette, "every pose changed");
    assert_eq!(
        hidden_one.palette_bytes_written,
        4 * palette + small_palette,
        "the hidden character's palette ({palette} bytes) is not uploaded"
    );

    // Character `c`'s output in `out` after a frame that skinned it at
    // `level` (None: not at all) over `old`: each primitive's drawn
    // vertices in turn, as a full skin `new` has them in the primitive's
    // own order, then what `old` held. Returns how many were skinned.
    let check = |out: &[SkinnedVertex],
                 new: &[SkinnedVertex],
                 old: &[SkinnedVertex],
                 c: usize,
                 level: Option<usize>| {
        let outputs = rig.pass.outputs(CharacterId(c));
        let start = outputs[0].output_offset as usize;
        let mut want: Vec<(&SkinnedVertex, String)> = Vec::new();
        for o in outputs {
            let p = o.gpu_primitive;
            let drawn: Vec<u32> = match level {
                Some(level) if c < 5 => drawn_vertices(&detail, &model, p, level).into_iter().collect(),
                Some(_) => (0..o.vertex_count).collect(),
                None => Vec::new(),
            };
            let full = o.output_offset as usize;
            want.extend(
                drawn.iter().map(|&v| (&new[full + v as usize], format!("primitive {p} vertex {v}"))),
            );
        }
        let skinned = want.len();
        let full: usize = outputs.iter().map(|o| o.vertex_count as usize).sum();
        want.extend((skinned..full).map(|i| (&old[start + i], format!("untouched place {i}"))));
        for (i, (want, what)) in want.iter().enumerate() {
            assert_eq!(
                bytemuck::bytes_of(&out[start + i]),
                bytemuck::bytes_of(*want),
                "character {c}, output place {i}: {what} expected"
            );
        }
        skinned
    };
    let full: usize = rig.pass.outputs(ids[0]).iter().map(|o| o.vertex_count as usize).sum();
    let mut counts = [0usize; DETAIL_LEVELS];
    for (c, level) in [(0, 0), (1, 2), (2, 3), (3, 1), (4, 4)] {
        counts[level] = check(&at_levels, &whole_b, &whole_a, c, Some(level));
        let place = &rig.pass.layout().characters()[c];
        assert_eq!(
            place.level_vertices[level] as usize, counts[level],
            "character {c}: vertices at level {level}"
        );
    }
    assert_eq!(counts[0], full);
    assert!(
        counts[1] < full && counts.windows(2).skip(1).all(|w| w[1] < w[0]),
        "levels skin fewer: {counts:?}"
    );
    check(&at_levels, &whole_b, &whole_a, 5, Some(0));
    // Skipped: character 0 keeps the last frame's pose B; the others skin
    // pose A at their levels over what the last frame left.
    check(&skipping, &whole_a, &at_levels, 0, None);
    for (c, level) in [(1, 4), (2, 0), (3, 4), (4, 4), (5, 0)] {
        check(&skipping, &whole_a, &at_levels, c, Some(level));
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}

/// One built-in character alone, at each coarser level: its level's
/// vertices are the full skin's bits, one after the other. Its record
/// buffer's words (2,867) end inside a texel of skin.comp's RGBA32UI view;
/// before the layout rounded them up to whole texels, the view left the
/// last three run starts out and read them as 0, and level 4 skinned 58
/// of its 71 vertices from the wrong primitives.
#[test]
fn a_lone_character_skins_each_level_exactly() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let detail = DetailLevels::build(&model);
    let mut rig = Rig::new(&ctx);
    let id = rig.add(&ctx, &model, true);
    let mut pose = Synthetic::new(&model);
    pose_synthetic(&model, &mut pose, 5);
    let inputs = [SkinInput { pose: pose.view(), version: 5 }];
    let (whole, _) = rig.skin_at(&ctx, &inputs, None);
    assert_eq!(rig.pass.layout().record_buffer_words().end % 4, 0, "whole texels");
    for level in 1..DETAIL_LEVELS {
        let mut order = DrawOrder::new(1, 0, &[(0, 1)]);
        order.set_buckets(&[2 * level as u8]);
        let (out, _) = rig.skin_at(&ctx, &inputs, Some(SkinLevels { order: &order }));
        let outputs = rig.pass.outputs(id);
        let start = outputs[0].output_offset as usize;
        let mut place = start;
        for o in outputs {
            for v in drawn_vertices(&detail, &model, o.gpu_primitive, level) {
                let want = &whole[o.output_offset as usize + v as usize];
                assert_eq!(
                    bytemuck::bytes_of(&out[place]),
                    bytemuck::bytes_of(want),
                    "level {level}, primitive {} vertex {v}",
                    o.gpu_primitive
                );
                place += 1;
            }
        }
        assert_eq!(place - start, rig.pass.layout().characters()[0].level_vertices[level] as usize);
    }
    rig.destroy(&ctx);
    assert_no_validation_messages(&ctx);
}
