//! No GPU: the layout of `test_model` (one skinned triangle with two
//! morph targets, a skin of two joints) and of the built-in character.

use super::*;
use crate::render::gpu_model::{GpuPrimitive, ModelStreams};
use crate::render::skin_levels::NO_SKIN_LEVELS;
use crate::test_model::test_model;

fn default_character() -> Model {
    crate::asset::load_default_character().expect("the built-in character")
}

/// `model`'s stream table, built on the host.
fn streams(model: &Model) -> ModelStreams {
    ModelStreams::build(model).expect("streams")
}

/// A layout of one character of each of `models`, in order, each model added once.
fn layout_of(models: &[&Model]) -> SkinLayout {
    let mut layout = SkinLayout::default();
    for model in models {
        let s = streams(model);
        let m = layout.add_model(s.table()).unwrap();
        layout.add_character(m, s.table(), model).unwrap();
    }
    layout
}

#[test]
fn one_character_of_the_test_model() {
    let model = test_model();
    let layout = layout_of(&[&model]);
    let record = SkinRecord {
        source_offset: 0,
        vertex_count: 3,
        output_offset: 0,
        palette_offset: 0,
        influence_offset: 0,
        influence_sets: 1,
        morph_offset: 0,
        weight_offset: 0,
    };
    assert_eq!(layout.records(), &[record]);
    let output =
        PrimitiveOutput { instance: 0, gpu_primitive: 0, output_offset: 0, vertex_count: 3, record: 0 };
    let c = &layout.characters()[0];
    assert_eq!(
        (c.palette_range, &c.skin_bases[..], &c.rigid[..], c.weight_base),
        ((0, 2), &[0][..], &[][..], 0)
    );
    assert_eq!(c.outputs, [output]);
    // Read: 3 sources (24 bytes) and influence sets (16), 4 morph range
    // bounds, 6 morph entries (48: two targets move every vertex), the
    // record (32), 2 palette entries (64) and 2 weights; written: 3
    // skinned vertices (24, packed as the sources are).
    let read = 3 * (24 + 16) + 4 * 4 + 6 * 48 + 32 + 2 * 64 + 2 * 4;
    assert_eq!(c.traffic, (read, 3 * 24));
    let run = SkinRun {
        first_character: 0,
        characters: 1,
        first_record: 0,
        records_per_character: 1,
        level_vertices: [3; DETAIL_LEVELS],
        starts: 0,
    };
    assert_eq!((layout.total_vertices(), layout.runs(), layout.morph_targets()), (3, &[run][..], true));
    assert_eq!(layout.run_starts(), &[0; DETAIL_LEVELS]);
    // The record (32 bytes), its level table (4; none: the model has no
    // detail levels) and its start at each level (4 each), in whole 16-byte
    // texels; a word for the frame's character to skin, and for its
    // output's place.
    let records = 32 + 4 + 4 * DETAIL_LEVELS as u64;
    assert_eq!(records, 56);
    let sizes = SlotSizes {
        palette: 128,
        weights: 8,
        records: records.next_multiple_of(16),
        work: 4,
        places: 8 * u64::from(MAX_OUTPUT_WINDOWS) + 4,
    };
    assert_eq!(layout.slot_sizes(), sizes);
    assert_eq!(layout.record_tables(), &[NO_SKIN_LEVELS]);
    assert_eq!(layout.stream_bytes(), [3 * 24, 3 * 16, 4 * 4, 6 * 48]);
}

#[test]
fn characters_of_one_model_follow_each_other() {
    let model = default_character();
    let s = streams(&model);
    let mut layout = SkinLayout::default();
    let m = layout.add_model(s.table()).unwrap();
    assert_eq!(layout.add_character(m, s.table(), &model).unwrap(), 0);
    let one = layout.clone();
    assert_eq!(layout.add_character(m, s.table(), &model).unwrap(), 1);
    assert_eq!(layout.models().len(), 1, "one model, placed once");
    let (first, second) = (&layout.characters()[0], &layout.characters()[1]);
    let palette = first.palette_range.1 - first.palette_range.0;
    assert!(palette > 0);
    assert_eq!(second.palette_range, (first.palette_range.1, first.palette_range.1 + palette));
    assert_eq!(second.weight_base, model.rest_morph_weights.len() as u32);
    assert_eq!(second.traffic, first.traffic);
    let n = one.total_vertices();
    assert_eq!(layout.total_vertices(), 2 * n);
    let records = one.records().len();
    assert_eq!(layout.records().len(), 2 * records);
    for (a, b) in first.outputs.iter().zip(&second.outputs) {
        assert_eq!(b.output_offset, a.output_offset + n);
        assert_eq!(b.record == NO_RECORD, a.record == NO_RECORD);
        if a.record != NO_RECORD {
            assert_eq!(b.record, a.record + records as u32);
        }
    }
    for (a, b) in layout.records()[..records].iter().zip(&layout.records()[records..]) {
        // The same streams, the next outputs, palette and weights.
        assert_eq!(
            (b.source_offset, b.influence_offset, b.morph_offset),
            (a.source_offset, a.influence_offset, a.morph_offset)
        );
        assert_eq!(b.output_offset, a.output_offset + n);
        assert_eq!(b.palette_offset, a.palette_offset + palette);
        assert_eq!(b.weight_offset, a.weight_offset + second.weight_base);
    }
}

#[test]
fn runs_hold_alike_characters_in_one_window() {
    let (a, b) = (default_character(), test_model());
    let (sa, sb) = (streams(&a), streams(&b));
    let mut layout = SkinLayout::default();
    let (ma, mb) = (layout.add_model(sa.table()).unwrap(), layout.add_model(sb.table()).unwrap());
    layout.add_characters(ma, sa.table(), &a, 3).unwrap();
    layout.add_character(mb, sb.table(), &b).unwrap();
    layout.add_characters(ma, sa.table(), &a, 2).unwrap();
    let per = layout.characters()[0].outputs.iter().filter(|o| o.record != NO_RECORD).count() as u32;
    let runs: Vec<_> = layout
        .runs()
        .iter()
        .map(|r| (r.first_character, r.characters, r.first_record, r.records_per_character))
        .collect();
    assert_eq!(runs, [(0, 3, 0, per), (3, 1, 3 * per, 1), (4, 2, 3 * per + 1, per)]);
    // At level 0 a character's records start where the ones before end.
    let run = layout.runs()[0];
    let starts = &layout.run_starts()[run.level_starts(0) as usize..][..per as usize];
    let counts: Vec<u32> = layout.records()[..per as usize].iter().map(|r| r.vertex_count).collect();
    let expected: Vec<u32> = counts.iter().scan(0, |sum, n| Some(std::mem::replace(sum, *sum + n))).collect();
    assert_eq!(starts, expected);
    assert_eq!(run.level_vertices[0], counts.iter().sum::<u32>());
}

/// Every vertex a character's level draws, as `(record, vertex)`, read
/// from the records and level tables directly.
fn drawn_vertices(layout: &SkinLayout, character: usize, level: usize) -> Vec<(u32, u32)> {
    let words = layout.level_words();
    let mut drawn = Vec::new();
    for o in layout.characters()[character].outputs.iter().filter(|o| o.record != NO_RECORD) {
        let table = layout.record_tables()[o.record as usize];
        if level == 0 || table == NO_SKIN_LEVELS {
            drawn.extend((0..o.vertex_count).map(|v| (o.record, v)));
        } else {
            let t = table as usize;
            // A count and a start per coarser level.
            let (count, start) = (words[t + 2 * (level - 1)] as usize, words[t + 2 * level - 1] as usize);
            drawn.extend(words[t + start..t + start + count].iter().map(|&v| (o.record, v)));
        }
    }
    drawn
}

/// The threads of one dispatch per run and level, as skin_main.glsl maps
/// them (`SkinRun::skinned_by`), skin exactly the vertices each
/// character's level draws, each once; characters at no level (hidden)
/// get no thread.
#[test]
fn a_batch_s_threads_skin_each_vertex_its_level_draws_once() {
    let (a, b) = (default_character(), test_model());
    let (sa, sb) = (ModelStreams::build_with_levels(&a).unwrap(), streams(&b));
    // The test model's primitive with a table: levels 1 to 4 draw
    // vertices [2], [0, 2], [2] and [2].
    let mut primitives = sb.table().primitives.to_vec();
    primitives[0].skin_levels = 0;
    let words = [1, 8, 2, 9, 1, 11, 1, 12, 2, 0, 2, 2, 2];
    let tb = StreamTable { primitives: &primitives, skin_levels: &words, ..sb.table() };
    let mut layout = SkinLayout::default();
    let (ma, mb) = (layout.add_model(sa.table()).unwrap(), layout.add_model(tb).unwrap());
    layout.add_characters(ma, sa.table(), &a, 5).unwrap();
    layout.add_characters(mb, tb, &b, 4).unwrap();
    let full = layout.characters()[0].level_vertices;
    assert!(
        full[DETAIL_LEVELS - 1] < full[0],
        "the built-in character's coarsest level skins fewer vertices: {full:?}"
    );
    let characters = layout.characters().len();
    // Levels per character (None: hidden), in several mixes.
    for mix in 0..6usize {
        let level_of = |c: usize| match (c * 7 + mix * 3) % (DETAIL_LEVELS + 1) {
            DETAIL_LEVELS => None,
            k => Some(k.min(DETAIL_LEVELS - 1)),
        };
        let mut skinned = Vec::new();
        for run in layout.runs() {
            for level in 0..DETAIL_LEVELS {
                let listed: Vec<u32> = (0..run.characters)
                    .filter(|&i| level_of((run.first_character + i) as usize) == Some(level))
                    .collect();
                let groups = run.groups_per_character(level);
                for &i in &listed {
                    for t in 0..groups * WORKGROUP_SIZE {
                        let (rs, rl, lw) =
                            (layout.run_starts(), layout.record_tables(), layout.level_words());
                        if let Some(hit) = run.skinned_by(level, i, t, rs, rl, lw) {
                            skinned.push(hit);
                        }
                    }
                }
            }
        }
        let mut expected: Vec<(u32, u32)> = (0..characters)
            .filter_map(|c| level_of(c).map(|k| drawn_vertices(&layout, c, k)))
            .flatten()
            .collect();
        expected.sort_unstable();
        let count = skinned.len();
        skinned.sort_unstable();
        skinned.dedup();
        assert_eq!(skinned.len(), count, "mix {mix}: a vertex skinned twice");
        assert_eq!(skinned, expected, "mix {mix}");
    }
}

#[test]
fn a_second_model_is_placed_after_the_first() {
    let (a, b) = (test_model(), default_character());
    let (sa, sb) = (streams(&a), streams(&b));
    let layout = layout_of(&[&a, &b]);
    let (ca, cb) = (sa.table().counts, sb.table().counts);
    let second = layout.models()[1];
    assert_eq!(
        (second.sources, second.influences, second.morph_ranges, second.morph_entries),
        (ca.sources, ca.influences, ca.morph_ranges, ca.morph_entries)
    );
    // The second character's records index the concatenation.
    let first_records = layout_of(&[&a]).records().len();
    let own = layout_of(&[&b]);
    for (own, placed) in own.records().iter().zip(&layout.records()[first_records..]) {
        assert_eq!(placed.source_offset, own.source_offset + ca.sources);
        assert_eq!(placed.influence_offset, own.influence_offset + ca.influences);
        let morphs =
            if own.morph_offset == NO_MORPHS { NO_MORPHS } else { own.morph_offset + ca.morph_ranges };
        assert_eq!(placed.morph_offset, morphs);
        assert_eq!(placed.output_offset, own.output_offset + 3);
        assert_eq!(placed.palette_offset, own.palette_offset + 2);
        assert_eq!(placed.weight_offset, own.weight_offset + 2);
    }
    let bytes = layout.stream_bytes();
    assert_eq!(bytes[SOURCES], u64::from(ca.sources + cb.sources) * SOURCE_BYTES);
    assert_eq!(bytes[MORPH_ENTRIES], u64::from(ca.morph_entries + cb.morph_entries) * MORPH_ENTRY_BYTES);
    // Every non-empty stream of each model is copied whole to its place.
    let copies: Vec<StreamCopy> = layout.stream_copies().collect();
    let expected_a = [
        (SOURCES, 3 * SOURCE_BYTES),
        (INFLUENCES, 3 * INFLUENCE_BYTES),
        (MORPH_ENTRIES, 6 * MORPH_ENTRY_BYTES),
    ];
    for (copy, (stream, size)) in copies.iter().zip(expected_a) {
        assert_eq!(*copy, StreamCopy { model: 0, stream, dst_offset: 0, size });
    }
    let of_b: Vec<_> = copies.iter().filter(|c| c.model == 1).collect();
    assert!(of_b.iter().any(|c| c.stream == SOURCES && c.dst_offset == 3 * SOURCE_BYTES));
    for c in &of_b {
        let element = [SOURCE_BYTES, INFLUENCE_BYTES, 4, MORPH_ENTRY_BYTES][c.stream];
        assert_eq!(c.dst_offset % element, 0);
        assert!(c.dst_offset + c.size <= bytes[c.stream]);
    }
    // Morph ranges move past the first model's entries.
    let ranges = layout.rebased_morph_ranges([sa.table().morph_ranges, sb.table().morph_ranges]);
    assert_eq!(ranges.len() as u64 * 4, bytes[MORPH_RANGES]);
    assert_eq!(&ranges[..4], sa.table().morph_ranges);
    let rebased: Vec<u32> = sb.table().morph_ranges.iter().map(|r| r + ca.morph_entries).collect();
    assert_eq!(&ranges[4..], &rebased[..]);
}

#[test]
fn rolling_back_restores_the_layout() {
    let (a, b) = (test_model(), default_character());
    let mut layout = layout_of(&[&a]);
    let before = layout.clone();
    let mark = layout.mark();
    let s = streams(&b);
    let m = layout.add_model(s.table()).unwrap();
    layout.add_character(m, s.table(), &b).unwrap();
    layout.add_character(0, streams(&a).table(), &a).unwrap();
    assert_ne!(layout, before);
    layout.roll_back(mark);
    assert_eq!(layout, before);
}

#[test]
fn a_primitive_without_joints_moves_with_one_rigid_entry() {
    let model = test_model();
    let s = streams(&model);
    let mut primitives = s.table().primitives.to_vec();
    primitives[0].influence_sets = 0;
    let table = StreamTable { primitives: &primitives, ..s.table() };
    let mut layout = SkinLayout::default();
    let m = layout.add_model(table).unwrap();
    layout.add_character(m, table, &model).unwrap();
    let c = &layout.characters()[0];
    // The skin's two joints, then the node's entry (instance joint 4).
    assert_eq!((c.palette_range, &c.rigid[..]), ((0, 3), &[(4, 2)][..]));
    let r = layout.records()[0];
    assert_eq!((r.palette_offset, r.influence_sets), (2, 0));
}

#[test]
fn records_find_their_model_s_level_tables_and_runs_their_characters() {
    let model = test_model();
    let s = streams(&model);
    // The test model's one primitive (3 vertices) with a table: levels 1
    // to 4 draw vertices [2], [0, 2], [2] and [2] (`render::skin_levels`).
    let mut primitives = s.table().primitives.to_vec();
    primitives[0].skin_levels = 0;
    let words = [1, 8, 2, 9, 1, 11, 1, 12, 2, 0, 2, 2, 2];
    let table = StreamTable { primitives: &primitives, skin_levels: &words, ..s.table() };
    let mut layout = layout_of(&[&model]);
    let mark = layout.mark();
    // The same table twice: the second model's starts past the first's.
    let first = layout.add_model(table).unwrap();
    let second = layout.add_model(table).unwrap();
    assert_eq!((layout.models()[first].skin_levels, layout.models()[second].skin_levels), (0, 13));
    layout.add_character(second, table, &model).unwrap();
    layout.add_character(first, table, &model).unwrap();
    // The plain model's character has no table; each character is a run
    // of one, its record the run's first.
    assert_eq!(layout.record_tables(), &[NO_SKIN_LEVELS, 13, 0]);
    let runs: Vec<_> =
        layout.runs().iter().map(|r| (r.first_character, r.characters, r.first_record)).collect();
    assert_eq!(runs, [(0, 1, 0), (1, 1, 1), (2, 1, 2)]);
    assert_eq!(layout.level_words().len(), 26);
    assert_eq!(layout.characters()[1].level_vertices, [3, 1, 2, 1, 1]);
    assert_eq!(layout.characters()[0].level_vertices, [3; DETAIL_LEVELS]);
    // Records (8 words each), their tables' offsets (1 each), the tables,
    // and the starts of three runs of one record (a word per level each).
    let words = layout.record_buffer_words();
    assert_eq!((words.record_tables, words.level_words, words.run_starts, words.end), (24, 27, 53, 68));
    assert_eq!(layout.slot_sizes().records, 68 * 4);
    layout.roll_back(mark);
    assert_eq!((layout.record_tables(), layout.level_words()), (&[NO_SKIN_LEVELS][..], &[][..]));
}

#[test]
fn a_refused_character_leaves_the_layout_unchanged() {
    let model = test_model();
    let s = streams(&model);
    let mut layout = layout_of(&[&model]);
    let before = layout.clone();
    let refuse = |primitives: &[GpuPrimitive], mesh_first_primitive: &[usize], layout: &mut SkinLayout| {
        let table = StreamTable { primitives, mesh_first_primitive, ..s.table() };
        layout.add_character(0, table, &model).unwrap_err().to_string()
    };
    let mut beyond_the_skin = s.table().primitives.to_vec();
    beyond_the_skin[0].max_joint = 2;
    let e = refuse(&beyond_the_skin, s.table().mesh_first_primitive, &mut layout);
    assert!(e.contains("joint 2 outside skin 0 of 2 joints"), "{e}");
    let mut more_targets = s.table().primitives.to_vec();
    more_targets[0].target_count = 3;
    let e = refuse(&more_targets, s.table().mesh_first_primitive, &mut layout);
    assert!(e.contains("3 morph targets but 2 weights"), "{e}");
    let e = refuse(s.table().primitives, &[], &mut layout);
    assert!(e.contains("no mesh"), "{e}");
    assert_eq!(layout, before);
}

#[test]
fn the_device_limits_bound_every_buffer() {
    let layout = layout_of(&[&test_model()]);
    let limits = |storage: u32, texels: u32| vk::PhysicalDeviceLimits {
        max_storage_buffer_range: storage,
        max_texel_buffer_elements: texels,
        ..Default::default()
    };
    let big = 1 << 30;
    assert!(layout.check_ranges(&limits(1 << 27, 1 << 27), big, PaletteReads::Texels).is_ok());
    // The morph entries (288 bytes) are the first stream over 200 bytes.
    let e = layout.check_ranges(&limits(200, 1 << 27), big, PaletteReads::Storage).unwrap_err().to_string();
    assert!(e.contains("morph entries need 288 bytes"), "{e}");
    // Read as texels, the sources are 9 (8 bytes each); as storage, no texel limit.
    let e = layout.check_ranges(&limits(1 << 27, 8), big, PaletteReads::Texels).unwrap_err().to_string();
    assert!(e.contains("source vertices need 9 texels"), "{e}");
    assert!(layout.check_ranges(&limits(1 << 27, 8), big, PaletteReads::Storage).is_ok());
}

#[test]
fn no_binding_range_caps_a_crowds_palettes_and_output() {
    let model = test_model();
    let s = streams(&model);
    let mut layout = SkinLayout::default();
    let m = layout.add_model(s.table()).unwrap();
    for _ in 0..100 {
        layout.add_character(m, s.table(), &model).unwrap();
    }
    let limits = |storage: u64| vk::PhysicalDeviceLimits {
        max_storage_buffer_range: storage as u32,
        max_texel_buffer_elements: 1 << 27,
        ..Default::default()
    };
    // The largest buffer bound whole caps the storage range; the palette
    // is larger (texels or a pointer) and passes.
    let slot = layout.slot_sizes();
    let bound = layout.stream_bytes().into_iter().chain([slot.weights, slot.records, slot.work]);
    let range = bound.max().unwrap();
    let bound = range;
    assert!(slot.palette > range, "{slot:?} against {range}");
    let big = 1 << 40;
    for reads in [PaletteReads::Storage, PaletteReads::Texels] {
        assert!(layout.check_ranges(&limits(range), big, reads).is_ok());
        let e = layout.check_ranges(&limits(bound - 1), big, reads).unwrap_err().to_string();
        assert!(e.contains(&format!("need {bound} bytes, more than the device's maxStorageBufferRange")));
    }
    // What caps the palette is the largest buffer.
    let e = layout.check_ranges(&limits(range), slot.palette - 1, PaletteReads::Storage);
    let e = e.unwrap_err().to_string();
    assert!(e.contains(&format!("palette need {} bytes", slot.palette)), "{e}");
    assert!(e.contains(&format!("largest buffer ({} bytes)", slot.palette - 1)), "{e}");
}

#[test]
fn output_windows_are_whole_workgroups_within_the_buffer() {
    let group = u64::from(WORKGROUP_SIZE) * OUTPUT_STRIDE;
    // 128 MiB (lavapipe's range) holds 5,592,384 vertices (87,381
    // workgroups); NVIDIA's 4 GiB - 2 MiB largest buffer would hold
    // 178,869,568, more than an `OutputPlaces` entry names: 2^26.
    assert_eq!(OutputWindows::capacity(128 << 20).unwrap(), 5_592_384);
    assert_eq!(OutputWindows::capacity(4_292_870_144).unwrap(), MAX_WINDOW_VERTICES);
    assert_eq!(OutputPlaces::locate(OutputPlaces::entry(63, MAX_WINDOW_VERTICES - 1)), (63, (1 << 26) - 1));
    assert_eq!(OutputWindows::capacity(group).unwrap(), WORKGROUP_SIZE);
    assert_eq!(OutputWindows::capacity(2 * group - 1).unwrap(), WORKGROUP_SIZE);
    let e = OutputWindows::capacity(group - 1).unwrap_err().to_string();
    assert!(e.contains("less than one workgroup"), "{e}");
    // Windows fill in order; the last holds the rest.
    let w = OutputWindows { count: 3, vertices: 128, total: 300 };
    assert_eq!((w.used(0), w.used(1), w.used(2), w.used(3)), (128, 128, 44, 0));
    assert_eq!(w.bytes(2), 44 * OUTPUT_STRIDE);
}

#[test]
fn a_character_fits_one_output_window() {
    let model = default_character();
    let s = streams(&model);
    let one = layout_of(&[&model]).total_vertices();
    // Windows of two and a half characters: the layout numbers the
    // characters end to end (each frame places them in windows,
    // `SkinPass::write_batches`), one run of all seven.
    let window = (one * 5 / 2).div_ceil(WORKGROUP_SIZE) * WORKGROUP_SIZE;
    let mut layout = SkinLayout::with_window_vertices(window);
    let m = layout.add_model(s.table()).unwrap();
    for _ in 0..7 {
        layout.add_character(m, s.table(), &model).unwrap();
    }
    assert_eq!((layout.window_vertices(), layout.total_vertices()), (window, 7 * one));
    for (c, place) in layout.characters().iter().enumerate() {
        assert_eq!(place.outputs[0].output_offset, c as u32 * one, "character {c}");
    }
    for (r, o) in layout.records().iter().zip(layout.characters().iter().flat_map(|c| &c.outputs)) {
        assert_eq!(r.output_offset, o.output_offset);
    }
    let runs: Vec<_> = layout.runs().iter().map(|r| (r.first_character, r.characters)).collect();
    assert_eq!(runs, [(0, 7)]);
    // A window smaller than one character holds none.
    let mut small = SkinLayout::with_window_vertices(one / 2);
    let m = small.add_model(s.table()).unwrap();
    let e = small.add_character(m, s.table(), &model).unwrap_err().to_string();
    assert!(
        e.contains("one character's skinned output") && e.contains("larger than one output buffer"),
        "{e}"
    );
}
