//! `vkskin bench --quick --validation` writes `DIR/report.html` beside
//! results.json and the SVGs, and a real headless browser draws its plots:
//! each inline plot laid out, and its line colours (compute blue, vertex
//! vermillion, staged violet) on screen inside it. Skips without a Vulkan
//! device or a browser, unless VKSKIN_NO_SKIP is set.

use crate::common::browser::{self, assert_plots_drawn};
use std::process::Command;

#[test]
fn a_quick_bench_writes_a_report_page_that_draws_its_plots() {
    let out = std::env::temp_dir().join(format!("vkskin-bench-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let Some(browser) = browser::browser(&out) else { return };
    if crate::common::context().is_none() {
        return;
    }
    let run = Command::new(env!("CARGO_BIN_EXE_vkskin"))
        .args(["bench", "--quick", "--validation", "--out"])
        .arg(&out)
        .output()
        .expect("run vkskin bench");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "vkskin bench --quick failed: {stderr}");
    let page = out.join("report.html");
    assert!(stderr.contains(&format!("vkskin: wrote {}", page.display())), "{stderr}");
    let html = std::fs::read_to_string(&page).expect("report.html");
    assert!(!html.to_lowercase().contains("<script"), "the report needs no script");
    assert_plots_drawn(
        &browser,
        &page,
        // Upload: staged and dirty (animated, they copy the same palettes:
        // their lines may coincide).
        &[&[[0, 114, 178], [213, 94, 0]], &[[117, 112, 179], [166, 118, 29]], &[[0, 114, 178]]],
    );
    let _ = std::fs::remove_dir_all(&out);
}
