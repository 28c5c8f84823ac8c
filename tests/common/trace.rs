//! Checks of a frame trace (`--trace FILE.json`) shared by the command-line
//! and viewer tests: the file is Chrome trace-event JSON whose complete
//! events all have a start and a duration, the GPU clock is stated, and
//! every GPU span lies inside its frame's CPU window, from the start of its
//! submission to the end of the wait for its fence.

use serde_json::Value;
use std::path::Path;

/// Clock conversion and rounding (microseconds printed to 3 decimals).
const SLACK_US: f64 = 5.0;

/// A complete ("X") event.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub pid: u64,
    pub tid: u64,
    pub ts: f64,
    pub dur: f64,
    pub frame: Option<u64>,
}

impl Span {
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }

    /// Whether `inner` lies within this span's time (up to rounding).
    pub fn holds(&self, inner: &Span) -> bool {
        inner.ts >= self.ts - SLACK_US && inner.end() <= self.end() + SLACK_US
    }
}

/// What a checked trace holds.
pub struct Trace {
    pub spans: Vec<Span>,
    /// `otherData.gpu_clock`.
    pub gpu_clock: String,
}

impl Trace {
    /// The GPU's spans (pid 2, the track named "GPU").
    pub fn gpu(&self) -> impl Iterator<Item = &Span> {
        self.spans.iter().filter(|s| s.pid == 2)
    }

    /// How many CPU spans are named `name`.
    pub fn cpu_count(&self, name: &str) -> usize {
        self.spans.iter().filter(|s| s.pid == 1 && s.name == name).count()
    }
}

/// Reads and checks the trace at `path` (panics, naming the problem):
/// JSON with `traceEvents`; each X event with a name, numeric `ts` and
/// `dur >= 0`; the GPU track named; `otherData.gpu_clock` stating the
/// placement; CPU spans `names` present; and every GPU span inside the
/// window of the latest submission of its frame number that began before it.
pub fn check(path: &Path, names: &[&str]) -> Trace {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).expect("the trace is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents is an array");
    let mut spans = Vec::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        if ph == "M" {
            continue;
        }
        assert_eq!(ph, "X", "only complete events and metadata: {e}");
        let (ts, dur) = (e["ts"].as_f64(), e["dur"].as_f64());
        let (Some(ts), Some(dur)) = (ts, dur) else { panic!("an X event without numeric ts and dur: {e}") };
        assert!(ts.is_finite() && dur.is_finite() && dur >= 0.0, "bad ts/dur: {e}");
        spans.push(Span {
            name: e["name"].as_str().expect("a name").to_string(),
            pid: e["pid"].as_u64().expect("a pid"),
            tid: e["tid"].as_u64().expect("a tid"),
            ts,
            dur,
            frame: e["args"]["frame"].as_u64(),
        });
    }
    let gpu_named =
        events.iter().any(|e| e["name"] == "process_name" && e["pid"] == 2 && e["args"]["name"] == "GPU");
    assert!(gpu_named, "no process named GPU");
    let gpu_clock = doc["otherData"]["gpu_clock"].as_str().expect("otherData.gpu_clock").to_string();
    assert!(
        gpu_clock.starts_with("calibrated") || gpu_clock.starts_with("aligned at submit"),
        "GPU clock not stated: {gpu_clock}"
    );
    let trace = Trace { spans, gpu_clock };
    for name in names {
        assert!(trace.cpu_count(name) > 0, "no CPU span named {name:?}");
    }
    let cpu = |name: &'static str, frame: u64| {
        trace.spans.iter().filter(move |s| s.pid == 1 && s.name == name && s.frame == Some(frame))
    };
    let mut checked = 0;
    for g in trace.gpu() {
        let frame = g.frame.unwrap_or_else(|| panic!("GPU span without a frame: {g:?}"));
        // Frame numbers start again with each renderer (a bench
        // configuration): the submission is the latest one before the span.
        let submit = cpu("submit", frame)
            .filter(|s| s.ts <= g.ts + SLACK_US)
            .max_by(|a, b| a.ts.total_cmp(&b.ts))
            .unwrap_or_else(|| panic!("no submit of frame {frame} before GPU span {g:?}"));
        let wait = cpu("wait", frame)
            .filter(|w| w.ts >= submit.ts)
            .min_by(|a, b| a.ts.total_cmp(&b.ts))
            .unwrap_or_else(|| panic!("no wait for frame {frame} after its submit {submit:?}"));
        assert!(
            g.ts >= submit.ts - SLACK_US && g.end() <= wait.end() + SLACK_US,
            "GPU span {g:?} outside its frame's window {} .. {} ({})",
            submit.ts,
            wait.end(),
            trace.gpu_clock
        );
        checked += 1;
    }
    assert!(checked > 0, "no GPU spans");
    trace
}
