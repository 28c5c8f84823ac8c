//! `DIR/report.html`: the whole report in one self-contained page (inline
//! CSS, the plots' SVG inlined, no script, font or link to fetch), readable
//! offline and in any browser: the header (device, driver, commit, date,
//! command, the clock the GPU figures come from and the timestamp check
//! that chose it), the verdicts, the plots, and every field of every entry
//! in one table (the printed table's columns first, then each field of
//! results.json labelled with its clock).

use super::fields::{self, Clock};
use super::plots::{DrawnPlot, PlotContent};
use super::verdicts::Verdicts;
use super::{BenchResults, GpuTiming, numbers, table};
use crate::atomic_file::{self, OutputError};
use crate::text::human_bytes;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The report page's name inside the output folder.
pub const REPORT_FILE: &str = "report.html";

/// Writes [`report_html`] to `dir/report.html` (atomically, as every
/// output) and returns its path.
pub fn write_html(
    dir: &Path,
    results: &BenchResults,
    verdicts: &Verdicts,
    plots: &[DrawnPlot],
) -> Result<PathBuf, OutputError> {
    let path = dir.join(REPORT_FILE);
    atomic_file::write(&path, report_html(results, verdicts, plots).as_bytes())?;
    Ok(path)
}

/// The report page of `results`, with its `verdicts` and `plots` (those
/// without an SVG say why in their place).
pub fn report_html(results: &BenchResults, verdicts: &Verdicts, plots: &[DrawnPlot]) -> String {
    let h = &results.header;
    let models = models(plots, results);
    let mut page = String::with_capacity(64 * 1024);
    let title = format!("vkskin bench: {} on {}", models.join(", "), h.device);
    // Writing into a String cannot fail.
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(&title)
    );
    header(&mut page, results, &models);
    verdict_section(&mut page, verdicts);
    plot_section(&mut page, plots);
    table_section(&mut page, results);
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

/// The models, as the plots name them (the order they ran), or from the
/// entries when nothing was plotted.
fn models(plots: &[DrawnPlot], results: &BenchResults) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    let names = plots.iter().map(|p| &p.model).chain(results.entries.iter().map(|e| &e.model));
    for name in names {
        if !models.contains(name) {
            models.push(name.clone());
        }
    }
    models
}

fn header(page: &mut String, results: &BenchResults, models: &[String]) {
    let h = &results.header;
    let sweep = format!(
        "{}, {} configuration{}",
        if h.quick { "quick" } else { "full" },
        results.entries.len(),
        if results.entries.len() == 1 { "" } else { "s" }
    );
    let check = match &h.timestamp_check {
        Some(c) => format!(
            "the copy kernel over {} took {} µs, over twice the bytes {} µs ({:.2}x; at least {:.1}x means \
             the timestamps bracket the work): {}",
            human_bytes(c.bytes),
            numbers::number(c.one_copy_us),
            numbers::number(c.two_copies_us),
            c.two_copies_us / c.one_copy_us,
            super::TimestampCheck::MIN_RATIO,
            if c.brackets_work() { "they do" } else { "they do not" }
        ),
        None => "not measured (results from before the check)".to_string(),
    };
    let rows = [
        ("device", h.device.clone(), false),
        ("driver", h.driver.clone(), false),
        ("commit", h.git_commit.clone(), true),
        ("date", h.date.clone(), false),
        ("command", h.command.clone(), true),
        ("models", models.join(", "), false),
        ("sweep", sweep, false),
        ("GPU figures from", h.gpu_timing.describe().to_string(), false),
        ("timestamp check", check, false),
        ("results format", format!("version {}", h.version), false),
    ];
    let _ = write!(
        page,
        "<header>\n<h1>vkskin bench</h1>\n<p class=\"subtitle\">{} on {}</p>\n<dl>\n",
        escape(&models.join(", ")),
        escape(&h.device)
    );
    for (name, value, code) in rows {
        let value = if code { format!("<code>{}</code>", escape(&value)) } else { escape(&value) };
        let _ = writeln!(page, "<dt>{name}</dt><dd>{value}</dd>");
    }
    page.push_str("</dl>\n</header>\n");
    if h.incomplete {
        page.push_str(
            "<p class=\"warning\">This run stopped early (the GPU device was lost): the report holds \
             the configurations completed before.</p>\n",
        );
    }
}

fn verdict_section(page: &mut String, verdicts: &Verdicts) {
    page.push_str("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n");
    let lines = verdicts.lines();
    if lines.is_empty() {
        page.push_str("<p class=\"note\">No verdicts: the sweep did not measure what they rest on.</p>\n");
    } else {
        page.push_str("<ul>\n");
        for line in &lines {
            let _ = writeln!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("</section>\n");
}

fn plot_section(page: &mut String, plots: &[DrawnPlot]) {
    page.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n");
    if plots.is_empty() {
        page.push_str("<p class=\"note\">Nothing to plot: no entries.</p>\n");
    }
    for plot in plots {
        match &plot.content {
            PlotContent::Svg(svg) => {
                // plotters escapes the text it writes; an XML declaration has no place inside HTML.
                let svg = match svg.find("<svg") {
                    Some(start) => &svg[start..],
                    None => svg.as_str(),
                };
                let _ = write!(
                    page,
                    "<figure>\n{svg}<figcaption><code>{}</code></figcaption>\n</figure>\n",
                    escape(&plot.file)
                );
            }
            PlotContent::Empty(reason) => {
                let _ = writeln!(
                    page,
                    "<p class=\"note\">{}: not drawn, {}.</p>",
                    escape(&plot.title),
                    escape(reason)
                );
            }
            PlotContent::Failed(e) => {
                let _ = writeln!(
                    page,
                    "<p class=\"warning\">{}: could not be drawn ({}).</p>",
                    escape(&plot.title),
                    escape(e)
                );
            }
        }
    }
    page.push_str("</section>\n");
}

fn table_section(page: &mut String, results: &BenchResults) {
    let timing = results.header.gpu_timing;
    let chosen = match timing {
        GpuTiming::Timestamps => Clock::Timestamps,
        GpuTiming::HostTimed => Clock::HostTimed,
    };
    let (titles, printed) = table::columns(results);
    let (fields, cells) = fields::fields(&results.entries);
    let _ = write!(
        page,
        "<section id=\"table\">\n<h2>Every measurement</h2>\n<p class=\"note\">One row per configuration. \
         First the columns <code>vkskin bench</code> prints, then every field of <code>results.json</code> \
         by its name there, with the clock it was measured by; the {} columns, which the plots and \
         verdicts read, are shaded. Timings are median/p95 in µs; hover over a sample count for the samples.</p>\n\
         <div class=\"scroll\">\n<table>\n<thead>\n<tr><th colspan=\"{}\" class=\"group\">as printed</th>\
         <th colspan=\"{}\" class=\"group\">every field of results.json</th></tr>\n<tr>",
        chosen.label(),
        titles.len(),
        fields.len()
    );
    for (title, numeric) in &titles {
        let _ = write!(page, "<th{}>{}</th>", if *numeric { " class=\"n\"" } else { "" }, escape(title));
    }
    for field in &fields {
        let _ = write!(page, "<th{}>{}</th>", shade(field.clock, chosen, ""), escape(&field.key));
    }
    page.push_str("</tr>\n<tr class=\"clock\">");
    for _ in &titles {
        page.push_str("<th></th>");
    }
    for field in &fields {
        let _ = write!(page, "<th{}>{}</th>", shade(field.clock, chosen, ""), field.clock.label());
    }
    page.push_str("</tr>\n</thead>\n<tbody>\n");
    for (row, entry_cells) in printed.iter().zip(&cells) {
        page.push_str("<tr>");
        for (cell, (_, numeric)) in row.iter().zip(&titles) {
            let _ = write!(page, "<td{}>{}</td>", if *numeric { " class=\"n\"" } else { "" }, escape(cell));
        }
        for (cell, field) in entry_cells.iter().zip(&fields) {
            match cell {
                Some(c) => {
                    let class = shade(field.clock, chosen, if c.numeric { "n" } else { "" });
                    let detail =
                        c.detail.as_ref().map(|d| format!(" title=\"{}\"", escape(d))).unwrap_or_default();
                    let _ = write!(page, "<td{class}{detail}>{}</td>", escape(&c.text));
                }
                None => {
                    let _ = write!(page, "<td{}>–</td>", shade(field.clock, chosen, "n"));
                }
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

/// The class attribute of a cell: `extra`, plus `chosen` in the clock the report reads.
fn shade(clock: Clock, chosen: Clock, extra: &str) -> String {
    let classes: Vec<&str> =
        [extra, if clock == chosen { "chosen" } else { "" }].into_iter().filter(|c| !c.is_empty()).collect();
    if classes.is_empty() { String::new() } else { format!(" class=\"{}\"", classes.join(" ")) }
}

/// `text` safe inside HTML text and quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's style: light, quiet, the plots at their drawn width where
/// the window allows, the table scrolling sideways inside its frame.
const STYLE: &str = "
:root { color-scheme: light; }
body { margin: 0; background: #fafaf8; color: #1f2328;
  font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 28px 24px 64px; }
h1 { font-size: 26px; margin: 0; }
.subtitle { margin: 0 0 16px; color: #57606a; font-size: 17px; }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid #d8dee4; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 0; }
dt { color: #57606a; }
dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: 'DejaVu Sans Mono', ui-monospace, monospace; font-size: 13px; }
ul { padding-left: 22px; }
li { margin: 3px 0; }
.note { color: #57606a; font-size: 14px; }
.warning { background: #fff4e0; border-left: 4px solid #e69f00; padding: 8px 12px; }
figure { margin: 0 0 24px; padding: 8px; background: #fff; border: 1px solid #d8dee4; border-radius: 6px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { margin-top: 4px; color: #57606a; font-size: 13px; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid #d8dee4; border-radius: 6px; }
table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums; white-space: nowrap; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eaeef2; text-align: left; }
th { font-weight: 600; background: #f6f8fa; position: sticky; top: 0; }
th.group { text-align: left; color: #57606a; font-weight: 500; border-left: 1px solid #d8dee4; }
tr.clock th { color: #57606a; font-weight: 400; font-size: 11.5px; }
.n { text-align: right; }
tbody tr:nth-child(even) td { background: #fafbfc; }
th.chosen, td.chosen, tbody tr:nth-child(even) td.chosen { background: #eaf3fb; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::report::test_data::entry;
    use crate::profiler::report::{BenchHeader, draw_plots};

    fn page(entries: Vec<crate::profiler::report::BenchEntry>, incomplete: bool) -> String {
        let mut header = BenchHeader::new("gpu <&> \"x\"", "Mesa", true, "vkskin bench --out 'a b'");
        header.incomplete = incomplete;
        let results = BenchResults { header, entries };
        let verdicts = Verdicts::from_results(&results);
        report_html(&results, &verdicts, &draw_plots(&results, &verdicts.crossovers))
    }

    #[test]
    fn the_page_holds_header_verdicts_plots_and_table_in_that_order() {
        let html = page(
            vec![entry(1, 1, "compute", "inplace", false), entry(16, 1, "vertex", "staged", false)],
            false,
        );
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
        assert!(at("<header>") < at("id=\"verdicts\"") && at("id=\"verdicts\"") < at("id=\"plots\""));
        assert!(at("id=\"plots\"") < at("<svg") && at("<svg") < at("id=\"table\""));
        assert!(html.contains("<title>vkskin bench: built-in on gpu &lt;&amp;&gt; &quot;x&quot;</title>"));
        assert!(html.contains("<dt>GPU figures from</dt><dd>GPU timestamps</dd>"));
        assert!(!html.contains("<?xml"), "an XML declaration inside HTML");
        assert!(!html.contains("class=\"warning\""), "a complete run has no warning");
    }

    #[test]
    fn a_plot_without_data_says_why_in_its_place() {
        let html = page(vec![entry(1, 1, "vertex", "inplace", false)], false);
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("not drawn, no entry has a timed skin pass."), "{html}");
    }

    #[test]
    fn an_incomplete_run_says_so() {
        assert!(page(vec![entry(1, 1, "compute", "inplace", false)], true).contains("stopped early"));
    }

    #[test]
    fn text_is_escaped_for_html() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(escape("µs ✓"), "µs ✓");
    }
}
