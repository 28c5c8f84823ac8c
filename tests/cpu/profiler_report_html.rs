//! `DIR/report.html` from synthetic results through the library's
//! `write_report`: one self-contained page (no script, no link, nothing to
//! fetch), names escaped, every entry in its table, and, rendered by a real
//! headless browser, its three plots laid out and drawn (each plot's line
//! colours found in the screenshot inside that plot's box). Skips without
//! a browser (see `tests/common/browser.rs`), unless VKSKIN_NO_SKIP is set.

use crate::common::browser::{self, assert_plots_drawn};
use serde_json::{Value, json};
use std::path::PathBuf;
use vkskin::profiler::report::{BenchResults, REPORT_FILE, write_report};

/// The skinning and upload colours the plots are documented to draw with.
const COMPUTE: [u8; 3] = [0, 114, 178];
const VERTEX: [u8; 3] = [213, 94, 0];
const STAGED: [u8; 3] = [117, 112, 179];

const DEVICE: &str = "llvmpipe <&> \"2 cores\"";

fn stat(median: f64) -> Value {
    json!({ "median": median, "p95": median * 1.2 })
}

/// One entry with timings that grow with the scene, vertex skinning paying
/// in every pass, every host-timed figure present.
fn entry(characters: u32, passes: u32, skinning: &str, upload: &str) -> Value {
    let scene = 2000.0 * f64::from(characters);
    let compute = skinning == "compute";
    let skin = if compute { 40.0 + scene * 0.01 } else { 0.0 };
    let draw = 30.0 + scene * if compute { 0.004 } else { 0.012 };
    let frame = skin + draw * f64::from(passes);
    let palette = u64::from(characters) * 40 * 64;
    let mut e = json!({
        "model": "built-in", "characters": characters, "vertices": 2000, "joints": 40, "passes": passes,
        "skinning": skinning, "upload": upload, "frames": 8, "cpu_pose_us": stat(3.0 * f64::from(characters)),
        "palette_bytes": palette,
        "gpu_us": { "upload": stat(0.0), "skin": stat(skin / 100.0), "passes": vec![stat(draw); passes as usize], "frame": stat(frame) },
        "copy_kernel_us": stat(1.0), "paused": false, "cpu_palette_write_us": stat(1.0 + palette as f64 * 1e-3),
        "skin_bytes": scene as u64 * 96, "copy_kernel_wall_us": stat(30.0 + scene * 0.006),
        "staged_copy_wall_us": stat(11.0 + palette as f64 * 2e-3), "buffer_copy_wall_us": stat(10.0 + palette as f64 * 2e-3),
        "frame_wall_us": stat(60.0 + frame * 1.5),
        "samples": { "frame_wall_us": [60.0, 61.5, 75.25] },
    });
    if compute {
        e["skin_wall_us"] = stat(skin);
    }
    e
}

fn results() -> BenchResults {
    let mut entries = Vec::new();
    for characters in [1, 16, 256] {
        for skinning in ["compute", "vertex"] {
            for upload in ["inplace", "staged"] {
                for passes in [1, 2] {
                    entries.push(entry(characters, passes, skinning, upload));
                }
            }
        }
    }
    let results = json!({
        "header": {
            "device": DEVICE, "driver": "Mesa 22.3.6", "date": "2026-12-02T04:00:00Z", "commit": "abc1234",
            "quick": true, "command": "vkskin bench --quick --out 'a&b'", "version": 2, "gpu_timing": "host-timed",
            "timestamp_check": { "bytes": 1048576, "one_copy_us": 60.0, "two_copies_us": 61.0 },
        },
        "entries": entries,
    });
    serde_json::from_value(results).expect("synthetic results read as results")
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkskin-report-html-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_synthetic_report_is_one_self_contained_page_that_draws_its_plots() {
    let dir = scratch("synthetic");
    let results = results();
    write_report(&dir, &results).expect("the report is written");
    let page = dir.join(REPORT_FILE);
    let html = std::fs::read_to_string(&page).expect("report.html");

    // Nothing to fetch or run: no script, image, stylesheet, frame or font
    // link; the only URL is the SVG namespace, which is a name, not a fetch.
    let lower = html.to_lowercase();
    for needle in
        ["<script", "<img", "<link", "<iframe", "<object", "src=", "href=", "url(", "@import", "@font-face"]
    {
        assert!(!lower.contains(needle), "report.html holds {needle}");
    }
    assert_eq!(lower.matches("http").count(), lower.matches("xmlns=\"http://www.w3.org/2000/svg\"").count());
    assert_eq!(html.matches("<svg").count(), 3, "the three plots inline");

    // Names are escaped, in the header and in the plots' titles.
    assert!(!html.contains("<&>"), "the device name is not escaped");
    assert!(html.contains("llvmpipe &lt;&amp;&gt; &quot;2 cores&quot;"));
    assert!(html.contains("<code>vkskin bench --quick --out &#39;a&amp;b&#39;</code>"));

    // The header says which clock the figures come from and why.
    assert!(html.contains("host-timed submissions"), "no clock in the header");
    assert!(html.contains("60.0 µs, over twice the bytes 61.0 µs (1.02x"), "no timestamp check");

    // Every entry is a row; every field is a column, the chosen clock's shaded.
    let body = html.split("<tbody>").nth(1).and_then(|b| b.split("</tbody>").next()).expect("a table body");
    assert_eq!(body.matches("<tr>").count(), results.entries.len());
    for column in [
        "<th class=\"n\">frame µs</th>",
        "<th class=\"chosen\">frame_wall_us</th>",
        "<th>gpu_us.frame</th>",
        "<th class=\"chosen\">samples.frame_wall_us</th>",
    ] {
        assert!(html.contains(column), "no column {column}");
    }
    assert!(html.contains("title=\"60.0 61.5 75.2\">3 samples</td>"), "the samples behind a figure");

    let Some(browser) = browser::browser(&dir) else { return };
    assert_plots_drawn(&browser, &page, &[&[COMPUTE, VERTEX], &[STAGED], &[COMPUTE]]);
    let _ = std::fs::remove_dir_all(&dir);
}
