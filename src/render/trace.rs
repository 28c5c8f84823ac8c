//! Frame traces (`--trace FILE.json`): a timeline of the frames in the
//! Chrome trace-event format (chrome://tracing, Perfetto).
//!
//! CPU spans are `tracing` spans in the frame path (`pose`, `foresee`,
//! `palette write`, `record`, `submit`, `wait`, and a `configuration`
//! around a renderer's frames; a crowd's pool threads record theirs
//! through `pool_trace`); GPU spans are `tracing` events of target
//! `vkskin::gpu` that the renderer emits once a frame's timestamps are read
//! back, already placed on the host clock (`now_ns`, CLOCK_MONOTONIC).
//! A [`TraceRecorder`] installs the layer that collects both on the current
//! thread while it lives. Without one no subscriber exists: every span and
//! event is a disabled callsite, and nothing is recorded or allocated.

use crate::atomic_file::{self, OutputError};
use serde::Serialize;
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The target of the GPU span events (`gpu_span`).
pub(crate) const GPU_TARGET: &str = "vkskin::gpu";

/// Events a trace keeps at most (about 100 bytes each in the file): a
/// long bench or viewer session stops recording there rather than write
/// a file no viewer opens; the trace says how many were dropped.
const MAX_EVENTS: usize = 400_000;

/// The trace's process ids: the program's threads, and the GPU's track.
const CPU_PID: u32 = 1;
const GPU_PID: u32 = 2;

/// How GPU timestamps were placed on the host clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GpuClock {
    /// VK_EXT_calibrated_timestamps: the device clock and CLOCK_MONOTONIC
    /// sampled together when the frame was read back.
    Calibrated,
    /// The frame's first timestamp put at the start of its submission
    /// (the GPU cannot start earlier; it may start later).
    SubmitAligned,
}

impl GpuClock {
    fn describe(self) -> &'static str {
        match self {
            GpuClock::Calibrated => "calibrated (VK_EXT_calibrated_timestamps, CLOCK_MONOTONIC)",
            GpuClock::SubmitAligned => "aligned at submit (no VK_EXT_calibrated_timestamps)",
        }
    }
}

/// The host clock of every trace timestamp, in nanoseconds: CLOCK_MONOTONIC,
/// the time domain VK_EXT_calibrated_timestamps pairs the GPU clock with.
pub(crate) fn now_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Whether a trace is being recorded on this thread (the renderer then
/// reads the clocks that GPU spans need).
pub fn enabled() -> bool {
    tracing::enabled!(target: GPU_TARGET, tracing::Level::TRACE)
}

/// Set by the SIGINT handler [`catch_interrupt`] installs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    // SAFETY: signal() is async-signal-safe; a second Ctrl-C ends the process as usual.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

/// Makes the next Ctrl-C (SIGINT) set [`interrupted`] instead of ending
/// the process, so that a program with an event loop (the viewer) can stop
/// and let its trace be written. Only for programs that poll `interrupted`.
pub fn catch_interrupt() {
    // SAFETY: the handler only stores an atomic and calls signal(), both
    // async-signal-safe.
    unsafe { libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t) };
}

/// Whether Ctrl-C was pressed since [`catch_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Records the GPU span `phase` of frame `frame`: `start_ns` on the host
/// clock, lasting `dur_ns`, placed as `clock` says.
pub(crate) fn gpu_span(phase: &str, frame: u64, start_ns: u64, dur_ns: u64, clock: GpuClock) {
    let calibrated = clock == GpuClock::Calibrated;
    tracing::event!(target: GPU_TARGET, tracing::Level::TRACE, phase, frame, start_ns, dur_ns, calibrated);
}

/// One complete ("X") event.
struct Span {
    name: String,
    tid: u64,
    pid: u32,
    start_ns: u64,
    dur_ns: u64,
    frame: Option<u64>,
    /// The span's other fields (a configuration's settings), as text.
    extra: Vec<(&'static str, String)>,
}

#[derive(Default)]
struct TraceData {
    spans: Vec<Span>,
    dropped: u64,
    clock: Option<GpuClock>,
    /// Threads seen: (trace id, name).
    threads: Vec<(u64, String)>,
}

impl TraceData {
    fn push(&mut self, span: Span) {
        if self.spans.len() < MAX_EVENTS {
            self.spans.push(span);
        } else {
            self.dropped += 1;
        }
    }
}

/// Records a trace while it lives (on the thread that started it); `write`
/// ends it and writes the file.
pub struct TraceRecorder {
    data: Arc<Mutex<TraceData>>,
    origin_ns: u64,
    guard: Option<tracing::subscriber::DefaultGuard>,
}

impl TraceRecorder {
    /// Starts recording the frame path's spans on this thread.
    pub fn start() -> Self {
        let data = Arc::new(Mutex::new(TraceData::default()));
        let collector = Collector { data: Arc::clone(&data) };
        let subscriber = tracing_subscriber::registry().with(collector);
        let guard = tracing::subscriber::set_default(subscriber);
        TraceRecorder { data, origin_ns: now_ns(), guard: Some(guard) }
    }

    /// Stops recording and writes the trace to `path` atomically.
    pub fn write(mut self, path: &Path) -> Result<(), OutputError> {
        // Spans still open (a renderer not yet destroyed) end here, closed.
        self.guard.take();
        let data = lock(&self.data);
        let json = chrome_json(&data, self.origin_ns);
        atomic_file::write(path, json.as_bytes())
    }
}

fn lock(data: &Mutex<TraceData>) -> MutexGuard<'_, TraceData> {
    // A panic while recording leaves a usable list of spans.
    data.lock().unwrap_or_else(|p| p.into_inner())
}

/// The trace-event document: thread names, then every span, with the GPU
/// clock and the dropped count in `otherData`.
fn chrome_json(data: &TraceData, origin_ns: u64) -> String {
    #[derive(Serialize)]
    struct Entry<'a> {
        name: &'a str,
        ph: &'static str,
        pid: u32,
        tid: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        ts: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        dur: Option<f64>,
        args: serde_json::Map<String, serde_json::Value>,
    }
    let us = |ns: u64| (ns as i128 - origin_ns as i128) as f64 / 1000.0;
    let mut events = Vec::with_capacity(data.spans.len() + data.threads.len() + 2);
    let named = |name: &'static str, pid, tid, value: &str| Entry {
        name,
        ph: "M",
        pid,
        tid,
        ts: None,
        dur: None,
        args: std::iter::once(("name".to_string(), value.into())).collect(),
    };
    events.push(named("process_name", CPU_PID, 0, "vkskin (CPU)"));
    events.push(named("process_name", GPU_PID, 0, "GPU"));
    events.push(named("thread_name", GPU_PID, 0, "queue (timestamps)"));
    for (tid, name) in &data.threads {
        events.push(named("thread_name", CPU_PID, *tid, name));
    }
    for s in &data.spans {
        let mut args = serde_json::Map::new();
        if let Some(frame) = s.frame {
            args.insert("frame".into(), frame.into());
        }
        for (key, value) in &s.extra {
            args.insert(key.to_string(), value.as_str().into());
        }
        events.push(Entry {
            name: &s.name,
            ph: "X",
            pid: s.pid,
            tid: s.tid,
            ts: Some(us(s.start_ns)),
            dur: Some(s.dur_ns as f64 / 1000.0),
            args,
        });
    }
    let document = serde_json::json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "gpu_clock": data.clock.map(GpuClock::describe).unwrap_or("no GPU spans"),
            "clock": "CLOCK_MONOTONIC, microseconds from the start of the trace",
            "dropped_events": data.dropped,
        },
    });
    document.to_string()
}

/// A small number per thread for the trace's `tid` (Rust's thread ids have
/// no stable integer form).
fn thread_tid() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TID: Cell<u64> = const { Cell::new(0) });
    TID.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// When a span ran: its first entry to its last exit, on the thread that
/// entered it (a `configuration` span is entered once per frame).
struct SpanTimes {
    first: u64,
    last: u64,
    tid: u64,
    fields: Fields,
}

/// The fields the trace keeps: `frame`, any other field of a span as
/// text (a configuration's settings) and, for GPU events, their phase
/// and placement.
#[derive(Default)]
struct Fields {
    frame: Option<u64>,
    extra: Vec<(&'static str, String)>,
    phase: Option<String>,
    start_ns: u64,
    dur_ns: u64,
    calibrated: bool,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "frame" => self.frame = Some(value),
            "start_ns" => self.start_ns = value,
            "dur_ns" => self.dur_ns = value,
            name => self.extra.push((name, value.to_string())),
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "calibrated" {
            self.calibrated = value;
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "phase" => self.phase = Some(value.to_string()),
            name => self.extra.push((name, value.to_string())),
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.extra.push((field.name(), format!("{value:?}")));
    }
}

/// The layer that turns spans and GPU events into the trace's events.
struct Collector {
    data: Arc<Mutex<TraceData>>,
}

impl Collector {
    fn note_thread(&self, tid: u64) {
        let mut data = lock(&self.data);
        if !data.threads.iter().any(|(t, _)| *t == tid) {
            let name = std::thread::current().name().unwrap_or("thread").to_string();
            data.threads.push((tid, name));
        }
    }
}

impl<S> Layer<S> for Collector
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanTimes { first: 0, last: 0, tid: 0, fields });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(times) = span.extensions_mut().get_mut::<SpanTimes>()
        {
            values.record(&mut times.fields);
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let now = now_ns();
        if let Some(span) = ctx.span(id)
            && let Some(times) = span.extensions_mut().get_mut::<SpanTimes>()
            && times.first == 0
        {
            let tid = thread_tid();
            times.first = now;
            times.tid = tid;
            self.note_thread(tid);
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let now = now_ns();
        if let Some(span) = ctx.span(id)
            && let Some(times) = span.extensions_mut().get_mut::<SpanTimes>()
        {
            times.last = now;
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(times) = span.extensions_mut().remove::<SpanTimes>() else { return };
        if times.first == 0 || times.last < times.first {
            return; // never entered
        }
        lock(&self.data).push(Span {
            name: span.name().to_string(),
            tid: times.tid,
            pid: CPU_PID,
            start_ns: times.first,
            dur_ns: times.last - times.first,
            frame: times.fields.frame,
            extra: times.fields.extra,
        });
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != GPU_TARGET {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let Some(phase) = fields.phase else { return };
        let mut data = lock(&self.data);
        data.clock = Some(if fields.calibrated { GpuClock::Calibrated } else { GpuClock::SubmitAligned });
        data.push(Span {
            name: phase,
            tid: 0,
            pid: GPU_PID,
            start_ns: fields.start_ns,
            dur_ns: fields.dur_ns,
            frame: fields.frame,
            extra: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn spans_and_gpu_events_become_complete_events() {
        assert!(!enabled(), "nothing records before a recorder starts");
        let dir = tempfile::tempdir().expect("scratch folder");
        let path = dir.path().join("trace.json");
        let recorder = TraceRecorder::start();
        assert!(enabled());
        let start = now_ns();
        tracing::trace_span!("submit", frame = 7u64).in_scope(|| std::hint::black_box(0));
        gpu_span("skin", 7, start + 4_000, 2_500, GpuClock::SubmitAligned);
        recorder.write(&path).expect("trace written");
        assert!(!enabled(), "nothing records once it is written");

        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
        let events = doc["traceEvents"].as_array().expect("traceEvents");
        let find = |name: &str| events.iter().find(|e| e["name"] == name && e["ph"] == "X").expect(name);
        let (submit, skin) = (find("submit"), find("skin"));
        assert_eq!((submit["pid"].as_u64(), submit["args"]["frame"].as_u64()), (Some(1), Some(7)));
        assert!(submit["dur"].as_f64().expect("dur") >= 0.0);
        // The GPU span keeps its placement: 2.5 us long, 4 us after `start`
        // (the trace's origin is at or before `start`, the submit span began
        // after it, so no earlier than the GPU span's start minus 4 us).
        assert_eq!((skin["pid"].as_u64(), skin["args"]["frame"].as_u64()), (Some(2), Some(7)));
        assert_eq!(skin["dur"].as_f64(), Some(2.5));
        let (skin_ts, submit_ts) = (skin["ts"].as_f64().expect("ts"), submit["ts"].as_f64().expect("ts"));
        assert!(
            skin_ts >= 4.0 && submit_ts >= skin_ts - 4.001,
            "skin at {skin_ts} us, submit at {submit_ts} us"
        );
        assert!(events.iter().any(|e| e["name"] == "thread_name" && e["pid"] == 1));
        assert_eq!(doc["otherData"]["gpu_clock"], GpuClock::SubmitAligned.describe());
        assert_eq!(doc["otherData"]["dropped_events"], 0);
    }
}
