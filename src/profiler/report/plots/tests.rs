//! What each plot shows and that it is written: series, marks, notes,
//! colours, file names (the plots module's tests).

use super::svg::{si, spread};
use super::*;
use crate::profiler::report::test_data::{entry, scratch};
use crate::profiler::report::{BenchHeader, Stat};

const DEVICE: &str = "llvmpipe (LLVM 15.0.6, 256 bits) & <co>";

fn results(entries: Vec<BenchEntry>) -> BenchResults {
    BenchResults { header: BenchHeader::new(DEVICE, "Mesa 22.3.6", true, "vkskin bench --quick"), entries }
}

fn host_timed(entries: Vec<BenchEntry>) -> BenchResults {
    let mut results = results(entries);
    results.header.gpu_timing = GpuTiming::HostTimed;
    results
}

/// The quick sweep's shape: 2 counts, 2 pass counts, both skinning
/// paths, every upload mode, dirty also paused.
fn quick_sweep() -> Vec<BenchEntry> {
    let mut entries = Vec::new();
    for characters in [1, 16] {
        for skinning in ["compute", "vertex"] {
            for (upload, paused) in [("inplace", false), ("staged", false), ("dirty", false), ("dirty", true)]
            {
                for passes in [1, 2] {
                    entries.push(entry(characters, passes, skinning, upload, paused));
                }
            }
        }
    }
    entries
}

fn crossover(passes: u32, characters: Option<u32>) -> Crossover {
    Crossover {
        model: "built-in".into(),
        passes,
        compute: "compute".into(),
        vertex: "vertex".into(),
        upload: "inplace".into(),
        characters,
        below: characters.map(|n| n / 2),
        measured: (1, 1000),
        compute_us: 100.0 + f64::from(characters.unwrap_or(1000)),
        vertex_us: 110.0 + f64::from(characters.unwrap_or(1000)),
    }
}

/// Parses `svg` as XML and returns its text content (titles, labels,
/// legend): every plot must be well-formed SVG.
fn svg_text(svg: &str) -> String {
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
    assert!(svg.trim_end().ends_with("</svg>"));
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants().filter_map(|n| n.text()).collect::<Vec<_>>().join("\n")
}

fn file_text(path: &Path) -> String {
    svg_text(&std::fs::read_to_string(path).unwrap())
}

fn series<'a>(plot: &'a Plot, label: &str) -> &'a Series {
    plot.series.iter().find(|s| s.label == label).unwrap_or_else(|| panic!("no {label} in {plot:?}"))
}

fn entries_of(results: &BenchResults) -> Vec<&BenchEntry> {
    results.entries.iter().collect()
}

#[test]
fn a_quick_sweep_writes_three_well_formed_svgs_titled_with_the_model_and_device() {
    let dir = scratch("plots_quick");
    std::fs::create_dir_all(&dir).unwrap();
    let plots = write_plots(&dir, &draw_plots(&results(quick_sweep()), &[]));
    assert!(plots.skipped.is_empty() && plots.failed.is_empty(), "{plots:?}");
    let names: Vec<_> = plots.written.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
    assert_eq!(names, [FRAME_TIME_PLOT, UPLOAD_PLOT, THROUGHPUT_PLOT]);
    for path in &plots.written {
        let text = file_text(path);
        assert!(
            text.contains(&format!("built-in on {DEVICE}")),
            "{}: no model and device in\n{text}",
            path.display()
        );
        assert!(text.contains("characters (log)"), "{}", path.display());
        assert!(text.contains("GPU figures: GPU timestamps."), "{}: no clock in\n{text}", path.display());
    }
    let frame = file_text(&dir.join(FRAME_TIME_PLOT));
    for label in
        ["compute, 1 pass", "compute, 2 passes", "vertex, 1 pass", "vertex, 2 passes", "GPU timestamps, log"]
    {
        assert!(frame.contains(label), "{label} missing:\n{frame}");
    }
    let upload = file_text(&dir.join(UPLOAD_PLOT));
    for label in ["staged: GPU copy", "dirty (paused): CPU palette write", "µs"] {
        assert!(upload.contains(label), "{label} missing:\n{upload}");
    }
    let throughput = file_text(&dir.join(THROUGHPUT_PLOT));
    assert!(throughput.contains("compute skin pass") && throughput.contains("copy kernel"), "{throughput}");
    assert!(!throughput.contains("vertex skin pass"), "vertex skinning has no skin pass time");
}

#[test]
fn the_frame_time_series_are_the_sweeps_lines_from_the_chosen_clock() {
    let stamped = results(quick_sweep());
    let plot = frame_time_plot(&entries_of(&stamped), GpuTiming::Timestamps, &[]);
    let labels: Vec<&str> = plot.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["compute, 1 pass", "compute, 2 passes", "vertex, 1 pass", "vertex, 2 passes"]);
    // inplace held fixed: one point per character count, sorted.
    let e = |c: u32| entry(c, 2, "compute", "inplace", false);
    assert_eq!(plot.series[1].points, [(1.0, e(1).gpu_us.frame.median), (16.0, e(16).gpu_us.frame.median)]);
    assert!(plot.y_label.contains("GPU timestamps"), "{}", plot.y_label);

    let walled = host_timed(quick_sweep());
    let plot = frame_time_plot(&entries_of(&walled), GpuTiming::HostTimed, &[]);
    let wall = |c: u32| e(c).frame_wall_us.unwrap().median;
    assert_eq!(series(&plot, "compute, 2 passes").points, [(1.0, wall(1)), (16.0, wall(16))]);
    assert!(plot.y_label.contains("host-timed"), "{}", plot.y_label);
    assert!(plot.notes.iter().any(|n| n.contains("do not bracket the work")), "{:?}", plot.notes);
}

/// lavapipe's failure: timestamps that do not bracket the dispatch
/// make 1,000 Foxes' skin pass look like 9 µs (2e11 vertices per
/// second on a 2-core CPU). Host-timed, the plot shows what the
/// dispatch took.
#[test]
fn throughput_comes_from_the_chosen_clock_and_stays_within_reach() {
    let mut fox = entry(1000, 1, "compute", "inplace", false);
    fox.vertices = 1728;
    fox.gpu_us.skin = Stat { median: 9.0, p95: 11.0 };
    fox.copy_kernel_us = Some(Stat { median: 7.0, p95: 8.0 });
    fox.skin_wall_us = Some(Stat { median: 24_000.0, p95: 26_000.0 });
    fox.copy_kernel_wall_us = Some(Stat { median: 9_000.0, p95: 9_500.0 });
    let vertices = 1728.0 * 1000.0;

    let walled = host_timed(vec![fox.clone()]);
    let plot = throughput_plot(&entries_of(&walled), GpuTiming::HostTimed);
    let skin = series(&plot, "compute skin pass").points[0].1;
    assert!((skin - vertices / 24_000e-6).abs() < 1e-3, "{skin}");
    let copy = series(&plot, "copy kernel over the compute pass's bytes").points[0].1;
    assert!((copy - vertices / 9_000e-6).abs() < 1e-3, "{copy}");
    let highest = plot.series.iter().flat_map(|s| &s.points).map(|p| p.1).fold(0.0, f64::max);
    assert!(highest < 1e9, "a 2-core CPU does not skin {highest} vertices per second");
    assert!(plot.y_label.contains("host-timed"));

    // The same entry under timestamps (a file from a device whose
    // timestamps bracket the work) plots the timestamped figure.
    let stamped = results(vec![fox]);
    let plot = throughput_plot(&entries_of(&stamped), GpuTiming::Timestamps);
    assert!((series(&plot, "compute skin pass").points[0].1 - vertices / 9e-6).abs() < 1.0);
}

#[test]
fn the_upload_plot_reads_the_chosen_clock() {
    let walled = host_timed(quick_sweep());
    let plot = upload_plot(&entries_of(&walled), GpuTiming::HostTimed);
    let staged = entry(16, 1, "compute", "staged", false);
    let points = &series(&plot, "staged: GPU copy").points;
    assert_eq!(points[1], (16.0, staged.staged_copy_wall_us.unwrap().median));
    assert!(plot.series.iter().all(|s| s.label != "inplace: GPU copy"), "inplace copies nothing");
    assert!(plot.series.iter().all(|s| s.label != "dirty (paused): GPU copy"), "paused dirty copies nothing");
}

#[test]
fn host_timed_results_without_host_timed_figures_skip_the_plot_rather_than_show_timestamps() {
    let mut old = entry(1, 1, "compute", "inplace", false);
    old.frame_wall_us = None;
    old.skin_wall_us = None;
    old.copy_kernel_wall_us = None;
    let drawn = draw_plots(&host_timed(vec![old]), &[]);
    assert_eq!(drawn[0].content, PlotContent::Empty("no entry has a frame time"));
    assert_eq!(drawn[2].content, PlotContent::Empty("no entry has a timed skin pass"));
}

#[test]
fn colours_follow_the_mode_and_dashes_the_pass_count_whatever_the_order() {
    let forward = results(quick_sweep());
    let mut backward = quick_sweep();
    backward.reverse();
    let backward = results(backward);
    let [a, b] = [&forward, &backward].map(|r| frame_time_plot(&entries_of(r), GpuTiming::Timestamps, &[]));
    for s in &a.series {
        let other = series(&b, &s.label);
        assert_eq!((s.colour, s.dash), (other.colour, other.dash), "{}", s.label);
    }
    assert_eq!(series(&a, "compute, 1 pass").colour, RGBColor(0, 114, 178));
    assert_eq!(series(&a, "vertex, 2 passes").colour, RGBColor(213, 94, 0));
    assert_eq!(series(&a, "vertex, 1 pass").dash, 0);
    assert_eq!(series(&a, "compute, 2 passes").dash, 1);

    // 2 passes only: the throughput plot's skin line is dashed as on the frame-time plot.
    let two: Vec<BenchEntry> = quick_sweep().into_iter().filter(|e| e.passes == 2).collect();
    let two = results(two);
    let throughput = throughput_plot(&entries_of(&two), GpuTiming::Timestamps);
    let skin = series(&throughput, "compute skin pass");
    assert_eq!((skin.colour, skin.dash), (RGBColor(0, 114, 178), 1));

    // No colour means two things in one report.
    let upload: Vec<RGBColor> =
        ["inplace", "staged", "dirty", "dirty (paused)"].into_iter().map(upload_colour).collect();
    let skinning: Vec<RGBColor> =
        ["compute", "vertex", "dqs-compute", "dqs-vertex", "dqs-compute, cpu split", "dqs-vertex, cpu split"]
            .into_iter()
            .map(skinning_colour)
            .collect();
    let all: Vec<RGBColor> = upload.iter().chain(&skinning).copied().chain([BLACK]).collect();
    for (i, c) in all.iter().enumerate() {
        assert!(!all[i + 1..].contains(c), "{c:?} twice");
    }
}

#[test]
fn a_crossover_is_marked_and_labelled_on_the_frame_time_plot() {
    let mut entries = Vec::new();
    for characters in [1, 10, 100, 1000] {
        for skinning in ["compute", "vertex"] {
            for passes in [1, 2] {
                entries.push(entry(characters, passes, skinning, "inplace", false));
            }
        }
    }
    let results = results(entries);
    let crossovers = [crossover(2, Some(24)), crossover(1, None)];
    let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &crossovers);
    assert_eq!(plot.marks.len(), 1, "{:?}", plot.marks);
    let mark = &plot.marks[0];
    assert_eq!(mark.x, 24.0);
    assert_eq!(mark.point, Some(124.0));
    assert_eq!(mark.label, "compute < vertex from 24, 2 passes");
    assert_eq!((mark.colour, mark.dash), (skinning_colour("compute"), pass_dash(2)));
    assert!(
        plot.notes.iter().any(|n| n.contains("compute never below vertex in 1-1000 characters, 1 pass")),
        "{:?}",
        plot.notes
    );

    let drawn = draw_plots(&results, &crossovers);
    let PlotContent::Svg(svg) = &drawn[0].content else { panic!("{:?}", drawn[0].content) };
    let text = svg_text(svg);
    assert!(text.contains("compute < vertex from 24, 2 passes"), "{text}");
    assert!(text.contains("no crossover: compute never below vertex"), "{text}");
    // The line is in compute's colour, as the label.
    assert!(svg.contains("#0072B2"), "no compute-coloured mark");

    // Another model's crossover is not marked here.
    let mut elsewhere = crossover(2, Some(24));
    elsewhere.model = "Fox.glb".into();
    assert!(frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[elsewhere]).marks.is_empty());
}

#[test]
fn the_frame_time_plot_shows_the_upload_mode_its_crossovers_were_found_with() {
    let results = results(quick_sweep());
    let mut staged = crossover(1, Some(16));
    staged.upload = "staged".into();
    let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[staged]);
    assert!(plot.notes[0].contains("upload staged."), "{:?}", plot.notes);
    assert_eq!(plot.marks.len(), 1);
    let staged_16 = entry(16, 1, "compute", "staged", false).gpu_us.frame.median;
    assert_eq!(series(&plot, "compute, 1 pass").points[1], (16.0, staged_16));
}

#[test]
fn refinement_entries_are_points_on_the_lines() {
    let mut entries =
        vec![entry(1, 1, "compute", "inplace", false), entry(100, 1, "compute", "inplace", false)];
    let mut refined = entry(24, 1, "compute", "inplace", false);
    refined.refinement = true;
    entries.push(refined);
    let results = results(entries);
    let plot = frame_time_plot(&entries_of(&results), GpuTiming::Timestamps, &[]);
    let xs: Vec<f64> = plot.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, [1.0, 24.0, 100.0]);
}

#[test]
fn a_full_sweep_draws_a_line_per_skinning_mode_and_pass_count() {
    let dir = scratch("plots_full");
    std::fs::create_dir_all(&dir).unwrap();
    let mut entries = Vec::new();
    for characters in [1, 10, 100, 1000] {
        for skinning in ["compute", "vertex", "dqs-compute", "dqs-vertex"] {
            for passes in [1, 2, 5] {
                for (upload, paused) in [("inplace", false), ("staged", false), ("dirty", true)] {
                    entries.push(entry(characters, passes, skinning, upload, paused));
                }
            }
        }
    }
    let results = results(entries);
    let all = entries_of(&results);
    let frame = frame_time_plot(&all, GpuTiming::Timestamps, &[]);
    assert_eq!(frame.series.len(), 12);
    assert_eq!(series(&frame, "dqs-vertex, 5 passes").dash, 2);
    let throughput = throughput_plot(&all, GpuTiming::Timestamps);
    let labels: Vec<&str> = throughput.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        ["compute skin pass", "copy kernel over the compute pass's bytes", "dqs-compute skin pass"]
    );
    assert!(throughput.series.iter().all(|s| s.points.len() == 4));
    let plots = write_plots(&dir, &draw_plots(&results, &[]));
    assert_eq!(plots.written.len(), 3);
    for path in &plots.written {
        file_text(path);
    }
}

#[test]
fn a_single_point_still_plots() {
    let dir = scratch("plots_single");
    std::fs::create_dir_all(&dir).unwrap();
    let plots = write_plots(&dir, &draw_plots(&results(vec![entry(1, 1, "compute", "staged", false)]), &[]));
    assert_eq!(plots.written.len(), 3, "{:?}", plots.skipped);
    for path in &plots.written {
        file_text(path);
    }
}

#[test]
fn an_empty_plot_is_skipped_with_a_note_and_its_stale_file_removed() {
    let dir = scratch("plots_missing");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(THROUGHPUT_PLOT), "stale").unwrap();
    // Vertex skinning only: no skin pass, so no throughput plot.
    let plots = write_plots(&dir, &draw_plots(&results(vec![entry(1, 1, "vertex", "inplace", false)]), &[]));
    assert_eq!(plots.written.len(), 2);
    assert_eq!(plots.skipped, [format!("{THROUGHPUT_PLOT}: skipped, no entry has a timed skin pass")]);
    assert!(!dir.join(THROUGHPUT_PLOT).exists());

    assert!(draw_plots(&results(Vec::new()), &[]).is_empty(), "no model, no plot");
}

#[test]
fn several_models_get_a_set_of_plots_each() {
    let mut fox = entry(1, 1, "compute", "inplace", false);
    fox.model = "../shared/assets/Fox/glTF-Binary/Fox.glb".into();
    let mut other_fox = fox.clone();
    other_fox.model = "elsewhere/Fox.glb".into();
    let results = results(vec![entry(1, 1, "compute", "inplace", false), fox, other_fox]);
    let drawn = draw_plots(&results, &[]);
    let files: Vec<&str> = drawn.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(
        files,
        [
            FRAME_TIME_PLOT,
            UPLOAD_PLOT,
            THROUGHPUT_PLOT,
            "frame_time_vs_characters-Fox.svg",
            "upload_vs_characters-Fox.svg",
            "skin_throughput-Fox.svg",
            "frame_time_vs_characters-Fox-2.svg",
            "upload_vs_characters-Fox-2.svg",
            "skin_throughput-Fox-2.svg",
        ]
    );
    assert_eq!(drawn[3].title, format!("Frame time vs characters: Fox.glb on {DEVICE}"));
    let PlotContent::Svg(svg) = &drawn[3].content else { panic!() };
    let text = svg_text(svg);
    assert!(text.contains("compute, 1 pass") && !text.contains("built-in"), "{text}");
}

#[test]
fn model_names_become_safe_file_stems() {
    let mut taken = Vec::new();
    assert_eq!(unique_slug("a/b/My Model.v2.gltf", &mut taken), "My_Model_v2");
    assert_eq!(unique_slug("<&>", &mut taken), "___");
    assert_eq!(unique_slug("dir/", &mut taken), "dir");
    assert_eq!(unique_slug(".glb", &mut taken), "model");
}

#[test]
fn axis_labels_are_short() {
    assert_eq!(si(1.0), "1");
    assert_eq!(si(16.0), "16");
    assert_eq!(si(1500.0), "1.5k");
    assert_eq!(si(2.0e6), "2M");
    assert_eq!(si(3.25e9), "3.2G");
    assert_eq!(si(0.05), "0.05");
}

#[test]
fn ranges_hold_a_single_value_and_no_value() {
    assert_eq!(spread([10.0].into_iter()), (10.0, 12.5));
    assert_eq!(spread([16.0, 1.0].into_iter()), (1.0, 20.0));
    assert_eq!(spread([3.3e5, 9e5].into_iter()), (1e5, 1.125e6));
    assert_eq!(spread(std::iter::empty()), (1.0, 10.0));
}
