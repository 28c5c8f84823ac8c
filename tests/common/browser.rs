//! A real headless browser for the HTML report's tests: Debian's
//! `chromium-headless-shell` (installed by `.ci/deps`), or `chromium`, or
//! the one `VKSKIN_BROWSER` names. Without one, a test skips (and fails
//! under VKSKIN_NO_SKIP) saying what to install.
//!
//! [`assert_plots_drawn`] checks that a page draws its plots: the browser
//! lays out a copy of the page with a measuring script added (the report
//! itself has none) and reports each inline `<svg>`'s box; a screenshot of
//! the page itself must then show, inside each box, the colours of the
//! lines that plot draws.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Names a browser binary to use instead of looking for one.
pub const BROWSER_VAR: &str = "VKSKIN_BROWSER";

/// Browsers looked for on PATH, smallest first.
const CANDIDATES: [&str; 3] = ["chromium-headless-shell", "chromium", "chromium-browser"];

/// The window the page is laid out in, CSS pixels (the screenshot's pixels:
/// headless chromium draws at device scale 1).
pub const WINDOW: (u32, u32) = (1100, 4200);

/// A browser binary.
pub struct Browser {
    path: PathBuf,
    /// A fresh profile folder per run, under this test's own scratch folder.
    scratch: PathBuf,
}

/// The browser, or `None` after skipping with what to install.
pub fn browser(scratch: &Path) -> Option<Browser> {
    let named = std::env::var_os(BROWSER_VAR).map(PathBuf::from);
    let path = named.or_else(|| {
        let dirs: Vec<PathBuf> =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
        CANDIDATES.iter().flat_map(|name| dirs.iter().map(move |d| d.join(name))).find(|p| p.is_file())
    });
    match path {
        Some(path) => Some(Browser { path, scratch: scratch.to_path_buf() }),
        None => {
            super::skip(&format!(
                "no headless browser: none of {} is on PATH and {BROWSER_VAR} is not set \
                 (install Debian's chromium-headless-shell, e.g. with `bash .ci/deps`)",
                CANDIDATES.join(", ")
            ));
            None
        }
    }
}

/// An RGB image, rows top to bottom.
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<u8>,
}

impl Image {
    /// The pixel at (x, y).
    pub fn at(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// How many pixels inside `rect` are exactly `colour`.
    pub fn count(&self, rect: &Rect, colour: [u8; 3]) -> usize {
        let (x0, y0) = (rect.x.max(0.0) as usize, rect.y.max(0.0) as usize);
        let x1 = ((rect.x + rect.width) as usize).min(self.width);
        let y1 = ((rect.y + rect.height) as usize).min(self.height);
        (y0..y1).flat_map(|y| (x0..x1).map(move |x| (x, y))).filter(|&(x, y)| self.at(x, y) == colour).count()
    }
}

/// A box on the page, CSS pixels.
#[derive(Debug, Clone, Copy)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Browser {
    /// Runs the browser on `page` with `args`, killed after a minute
    /// (a hang fails the test, it is never waited for); its stdout.
    fn run(&self, page: &Path, args: &[String]) -> Vec<u8> {
        let profile = self.scratch.join(format!("profile-{}", args.len()));
        let _ = std::fs::remove_dir_all(&profile);
        let mut command = Command::new(&self.path);
        command
            .args([
                "--headless",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--disable-extensions",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
            .args(args)
            .arg(format!("file://{}", page.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Chromium's sandbox refuses to start as root (CI runs as root).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            command.arg("--no-sandbox");
        }
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = std::io::Read::read_to_end(&mut { stdout }, &mut out);
            out
        });
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the browser") {
                break status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} did not finish within a minute on {}", self.path.display(), page.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let out = reader.join().expect("the reader thread");
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        assert!(
            status.success(),
            "{} failed ({status}) on {}: {stderr}",
            self.path.display(),
            page.display()
        );
        out
    }

    /// A screenshot of `page` in a [`WINDOW`]-sized window.
    pub fn screenshot(&self, page: &Path) -> Image {
        let png_path = self.scratch.join("screenshot.png");
        let _ = std::fs::remove_file(&png_path);
        self.run(page, &[format!("--screenshot={}", png_path.display())]);
        let file = std::fs::File::open(&png_path).unwrap_or_else(|e| panic!("{}: {e}", png_path.display()));
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("the screenshot is a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
        let info = reader.next_frame(&mut buf).expect("the screenshot decodes");
        let channels = info.color_type.samples();
        assert!(channels >= 3, "a colour screenshot, not {:?}", info.color_type);
        let rgb = buf[..info.buffer_size()].chunks_exact(channels).flat_map(|p| [p[0], p[1], p[2]]).collect();
        Image { width: info.width as usize, height: info.height as usize, rgb }
    }

    /// The box of every `<svg>` on `page` once laid out, in document order:
    /// measured by a script in a copy of the page (the page itself has none).
    pub fn svg_boxes(&self, page: &Path) -> Vec<Rect> {
        let html = std::fs::read_to_string(page).expect("the page");
        let measuring = html.replacen(
            "</body>",
            "<script>document.body.insertAdjacentHTML('beforeend', '<pre id=\"boxes\">' + \
             Array.from(document.querySelectorAll('svg')).map(s => { const r = s.getBoundingClientRect(); \
             return [r.left, r.top + window.scrollY, r.width, r.height].join(','); }).join(';') + '</pre>');</script></body>",
            1,
        );
        let copy = self.scratch.join("measuring.html");
        std::fs::write(&copy, measuring).expect("write the measuring copy");
        let dom = String::from_utf8_lossy(&self.run(&copy, &["--dump-dom".to_string()])).into_owned();
        // The last: the script's own text holds the tag too.
        let boxes = dom
            .rsplit("<pre id=\"boxes\">")
            .next()
            .filter(|_| dom.matches("<pre id=\"boxes\">").count() >= 2)
            .and_then(|rest| rest.split("</pre>").next())
            .unwrap_or_else(|| panic!("the measuring script did not run: {dom}"));
        boxes
            .split(';')
            .filter(|b| !b.is_empty())
            .map(|b| {
                let v: Vec<f64> = b.split(',').map(|n| n.parse().expect("a number")).collect();
                Rect { x: v[0], y: v[1], width: v[2], height: v[3] }
            })
            .collect()
    }
}

/// Renders `page` and checks it draws its plots: as many inline `<svg>` as
/// `colours` has entries, each laid out at a plot's size inside the window,
/// and each showing, in its box, every colour its entry lists (at least
/// its legend entry: 20 pixels), and 100 pixels per listed colour in all
/// (their lines and dots). Not 100 of each: measured series may coincide,
/// and then the one drawn last covers the other's lines.
pub fn assert_plots_drawn(browser: &Browser, page: &Path, colours: &[&[[u8; 3]]]) {
    let boxes = browser.svg_boxes(page);
    assert_eq!(boxes.len(), colours.len(), "inline plots on the page: {boxes:?}");
    let image = browser.screenshot(page);
    assert_eq!((image.width, image.height), (WINDOW.0 as usize, WINDOW.1 as usize));
    for (i, (rect, wanted)) in boxes.iter().zip(colours).enumerate() {
        assert!(rect.width > 600.0 && rect.height > 350.0, "plot {i} is laid out at {rect:?}");
        assert!(rect.y + rect.height <= f64::from(WINDOW.1), "plot {i} at {rect:?} is below the window");
        let mut all = 0;
        for &colour in *wanted {
            let n = image.count(rect, colour);
            assert!(n >= 20, "plot {i} at {rect:?} shows {n} pixels of {colour:?}");
            all += n;
        }
        assert!(all >= 100 * wanted.len(), "plot {i} at {rect:?} shows {all} pixels of {wanted:?}");
    }
}
