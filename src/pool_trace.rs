//! A frame trace followed onto a thread pool's workers.
//!
//! `render::trace` records on the thread that starts it, and only there
//! (tests record traces side by side in one process). Work that a crowd's
//! pool runs for that thread (the update's tasks, the frame's chunks and
//! upload pieces) would otherwise leave no span, and a trace of a
//! 16-core frame would show one busy thread. Such work carries the
//! caller's trace to the worker that runs it: [`CallersTrace::here`] on the
//! calling thread, [`CallersTrace::run`] around each task. Without a
//! trace there is nothing to carry, and running costs a branch.

use tracing::Dispatch;

/// The trace recording on the thread that made it, if any.
#[derive(Clone, Default)]
pub struct CallersTrace(Option<Dispatch>);

impl CallersTrace {
    /// The calling thread's trace: `None` inside when nothing records
    /// trace-level spans here (no `--trace`).
    pub fn here() -> CallersTrace {
        let recording = tracing::enabled!(tracing::Level::TRACE);
        CallersTrace(recording.then(|| tracing::dispatcher::get_default(Dispatch::clone)))
    }

    /// Runs `work` with the trace recording its spans, on whichever
    /// thread calls this.
    pub fn run<R>(&self, work: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(dispatch) => tracing::dispatcher::with_default(dispatch, work),
            None => work(),
        }
    }

    /// The span `make` makes, entered under the trace on the calling
    /// thread until the result drops: around the tasks a worker runs in
    /// one go (rayon's `for_each_init`), where a span per task would be
    /// thousands a frame. Nothing is made without a trace.
    pub fn enter(&self, make: impl FnOnce() -> tracing::Span) -> Option<CarriedSpan> {
        let dispatch = self.0.as_ref()?;
        let carried = tracing::dispatcher::set_default(dispatch);
        Some(CarriedSpan { _span: make().entered(), _carried: carried })
    }
}

/// A span entered under a carried trace ([`CallersTrace::enter`]); it ends,
/// and the worker leaves the trace, when this drops.
pub struct CarriedSpan {
    // Fields drop in order: the span exits while the trace is still this
    // thread's.
    _span: tracing::span::EnteredSpan,
    _carried: tracing::dispatcher::DefaultGuard,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// Counts the spans made under it, whatever thread makes them.
    struct Counting(Arc<AtomicUsize>);

    impl Subscriber for Counting {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1 + self.0.fetch_add(1, Ordering::Relaxed) as u64)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    /// A span on another thread reaches the caller's trace only when the
    /// work carries it; with no trace, nothing is carried.
    #[test]
    fn work_on_another_thread_records_into_the_callers_trace() {
        let spans = Arc::new(AtomicUsize::new(0));
        let dispatch = Dispatch::new(Counting(spans.clone()));
        let (carried, bare) =
            tracing::dispatcher::with_default(&dispatch, || (CallersTrace::here(), CallersTrace::default()));
        assert!(carried.0.is_some());
        std::thread::scope(|s| {
            s.spawn(|| carried.run(|| drop(tracing::trace_span!("carried").entered())));
            s.spawn(|| bare.run(|| drop(tracing::trace_span!("not carried").entered())));
            s.spawn(|| assert!(carried.enter(|| tracing::trace_span!("entered")).is_some()));
            s.spawn(|| assert!(bare.enter(|| tracing::trace_span!("not made")).is_none()));
        });
        assert_eq!(spans.load(Ordering::Relaxed), 2);
        assert!(CallersTrace::here().0.is_none(), "no trace on this thread");
    }
}
