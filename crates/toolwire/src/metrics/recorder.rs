//! The recorder: interned tools, their series, and the per-call recording methods.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard};

use super::buckets::{bucket_of, BUCKETS, BUCKET_LABELS_MS};
use super::error::check_duration;
use super::snapshot::kind_index;
use super::{
    BreakerState, Bucket, CallStatus, ErrorCounts, Histogram, MetricsError, MetricsSnapshot,
    StatusCounts, ToolMetrics,
};
use crate::{ToolErrorKind, ToolResult};

#[derive(Default)]
pub(super) struct Series {
    pub(super) statuses: [u64; 5],
    pub(super) errors: [u64; 9],
    /// Non-cumulative counts per bucket; the last is `+Inf`.
    buckets: [u64; BUCKETS],
    pub(super) sum_ms: f64,
    pub(super) in_flight: u64,
    pub(super) breaker: BreakerState,
}

impl Series {
    pub(super) fn record(
        &mut self,
        status: CallStatus,
        kind: Option<ToolErrorKind>,
        duration_ms: f64,
    ) {
        self.statuses[status.code() as usize] += 1;
        if let (CallStatus::Error, Some(kind)) = (status, kind) {
            self.errors[kind_index(kind)] += 1;
        }
        self.buckets[bucket_of(duration_ms)] += 1;
        self.sum_ms += duration_ms;
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    pub(super) fn count(&self) -> u64 {
        self.statuses.iter().sum()
    }

    pub(super) fn cumulative(&self) -> [u64; BUCKETS] {
        let mut total = 0;
        self.buckets.map(|n| {
            total += n;
            total
        })
    }
}

#[derive(Default)]
pub(super) struct Inner {
    ids: HashMap<String, u32>,
    pub(super) names: Vec<String>,
    pub(super) series: Vec<Series>,
}

impl Inner {
    fn intern(&mut self, tool: &str) -> u32 {
        if let Some(&id) = self.ids.get(tool) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 tools");
        self.ids.insert(tool.to_owned(), id);
        self.names.push(tool.to_owned());
        self.series.push(Series::default());
        id
    }

    pub(super) fn series(&mut self, id: u32) -> Result<&mut Series, MetricsError> {
        self.series
            .get_mut(id as usize)
            .ok_or(MetricsError::UnknownToolId(id))
    }

    /// Tool ids sorted by name.
    pub(super) fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        order
    }
}

/// Aggregates the metrics of a runtime's tool calls. `Send + Sync`: share one
/// recorder (for example in an `Arc`) across threads.
///
/// Every settled call ([`Self::record`], [`Self::record_result`],
/// [`Self::record_by_id`], a batch record) counts its status, counts its error kind
/// when its status is `error` (a kind given with another status is ignored), adds its
/// duration to the histogram, and decrements the in-flight gauge (which stays >= 0,
/// so recording without [`Self::call_started`] is fine).
///
/// ```
/// use std::sync::Arc;
/// let metrics = Arc::new(toolwire::metrics::MetricsRecorder::new());
/// let m = Arc::clone(&metrics);
/// std::thread::spawn(move || m.record("t", "success", None, 1.0).unwrap()).join().unwrap();
/// assert_eq!(metrics.snapshot().tools[0].calls.success, 1);
/// ```
#[derive(Default)]
pub struct MetricsRecorder {
    inner: Mutex<Inner>,
}

impl fmt::Debug for MetricsRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsRecorder")
            .field("tools", &self.lock().names)
            .finish()
    }
}

impl MetricsRecorder {
    /// An empty recorder.
    ///
    /// ```
    /// assert!(toolwire::metrics::MetricsRecorder::new().snapshot().tools.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        // The data stays consistent even if a holder panicked: every update is a
        // handful of integer additions done after validation.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Interns a tool name and returns its id for the `*_by_id` methods and batches.
    /// The same name always gets the same id; ids count up from 0. A registered tool
    /// appears in snapshots (with zero counts) from now on.
    ///
    /// ```
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// assert_eq!(m.register_tool("search"), 0);
    /// assert_eq!(m.register_tool("fetch"), 1);
    /// assert_eq!(m.register_tool("search"), 0);
    /// ```
    pub fn register_tool(&self, tool: &str) -> u32 {
        self.lock().intern(tool)
    }

    /// Records one settled call of `tool` by status name (`success`, `error`,
    /// `denied`, `skipped`, `pending`).
    ///
    /// ```
    /// use toolwire::ToolErrorKind;
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// m.record("search", "error", Some(ToolErrorKind::RateLimited), 80.0).unwrap();
    /// assert_eq!(m.snapshot().tools[0].errors.get(ToolErrorKind::RateLimited), 1);
    /// assert!(m.record("search", "ok", None, 1.0).is_err());
    /// ```
    pub fn record(
        &self,
        tool: &str,
        status_name: &str,
        error_kind: Option<ToolErrorKind>,
        duration_ms: f64,
    ) -> Result<(), MetricsError> {
        let status = CallStatus::from_status_name(status_name)
            .ok_or_else(|| MetricsError::UnknownStatus(status_name.to_owned()))?;
        let duration_ms = check_duration(duration_ms)?;
        let mut inner = self.lock();
        let id = inner.intern(tool);
        inner.series(id)?.record(status, error_kind, duration_ms);
        Ok(())
    }

    /// Records one settled call from its result: its status, and its error kind when
    /// it failed (a refusal counts as `denied` without a kind).
    ///
    /// ```
    /// use toolwire::{ToolExecutionError, ToolResult};
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// m.record_result("publish", &ToolResult::failed(ToolExecutionError::refusal("no", "no")), 0.2).unwrap();
    /// let t = &m.snapshot().tools[0];
    /// assert_eq!(t.calls.denied, 1);
    /// assert!(t.errors.iter().all(|(_, n)| n == 0));
    /// ```
    pub fn record_result(
        &self,
        tool: &str,
        result: &ToolResult,
        duration_ms: f64,
    ) -> Result<(), MetricsError> {
        let duration_ms = check_duration(duration_ms)?;
        let kind = result.error().map(|error| error.kind());
        let mut inner = self.lock();
        let id = inner.intern(tool);
        inner
            .series(id)?
            .record(result.disposition(), kind, duration_ms);
        Ok(())
    }

    /// Records one settled call of a registered tool.
    ///
    /// ```
    /// use toolwire::metrics::{CallStatus, MetricsRecorder};
    /// let m = MetricsRecorder::new();
    /// let id = m.register_tool("search");
    /// m.record_by_id(id, CallStatus::Skipped, None, 0.0).unwrap();
    /// assert_eq!(m.snapshot().tools[0].calls.skipped, 1);
    /// assert!(m.record_by_id(7, CallStatus::Success, None, 0.0).is_err());
    /// ```
    pub fn record_by_id(
        &self,
        tool_id: u32,
        status: CallStatus,
        error_kind: Option<ToolErrorKind>,
        duration_ms: f64,
    ) -> Result<(), MetricsError> {
        let duration_ms = check_duration(duration_ms)?;
        self.lock()
            .series(tool_id)?
            .record(status, error_kind, duration_ms);
        Ok(())
    }

    /// Marks a call of `tool` as started: the in-flight gauge goes up until the call
    /// is recorded.
    ///
    /// ```
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// m.call_started("t");
    /// m.call_started("t");
    /// m.record("t", "success", None, 1.0).unwrap();
    /// assert_eq!(m.snapshot().tools[0].in_flight, 1);
    /// ```
    pub fn call_started(&self, tool: &str) {
        let mut inner = self.lock();
        let id = inner.intern(tool) as usize;
        inner.series[id].in_flight += 1;
    }

    /// Marks a call of a registered tool as started.
    ///
    /// ```
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// let id = m.register_tool("t");
    /// m.call_started_by_id(id).unwrap();
    /// assert_eq!(m.snapshot().tools[0].in_flight, 1);
    /// ```
    pub fn call_started_by_id(&self, tool_id: u32) -> Result<(), MetricsError> {
        self.lock().series(tool_id)?.in_flight += 1;
        Ok(())
    }

    /// Sets the state of a tool's circuit breaker.
    ///
    /// ```
    /// use toolwire::metrics::{BreakerState, MetricsRecorder};
    /// let m = MetricsRecorder::new();
    /// m.set_breaker_state("t", BreakerState::HalfOpen);
    /// assert_eq!(m.snapshot().tools[0].breaker, BreakerState::HalfOpen);
    /// ```
    pub fn set_breaker_state(&self, tool: &str, state: BreakerState) {
        let mut inner = self.lock();
        let id = inner.intern(tool) as usize;
        inner.series[id].breaker = state;
    }

    /// Sets the state of a registered tool's circuit breaker.
    ///
    /// ```
    /// use toolwire::metrics::{BreakerState, MetricsRecorder};
    /// let m = MetricsRecorder::new();
    /// let id = m.register_tool("t");
    /// m.set_breaker_state_by_id(id, BreakerState::Open).unwrap();
    /// assert_eq!(m.snapshot().tools[0].breaker, BreakerState::Open);
    /// ```
    pub fn set_breaker_state_by_id(
        &self,
        tool_id: u32,
        state: BreakerState,
    ) -> Result<(), MetricsError> {
        self.lock().series(tool_id)?.breaker = state;
        Ok(())
    }

    /// A copy of every registered tool's metrics, sorted by tool name.
    ///
    /// ```
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// m.record("b", "success", None, 1.0).unwrap();
    /// m.record("a", "pending", None, 1.0).unwrap();
    /// let names: Vec<_> = m.snapshot().tools.into_iter().map(|t| t.tool).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// ```
    pub fn snapshot(&self) -> MetricsSnapshot {
        let inner = self.lock();
        let tools = inner
            .sorted()
            .into_iter()
            .map(|id| {
                let s = &inner.series[id];
                let [success, error, denied, skipped, pending] = s.statuses;
                ToolMetrics {
                    tool: inner.names[id].clone(),
                    calls: StatusCounts {
                        success,
                        error,
                        denied,
                        skipped,
                        pending,
                    },
                    errors: ErrorCounts(s.errors),
                    duration: Histogram {
                        buckets: BUCKET_LABELS_MS
                            .iter()
                            .zip(s.cumulative())
                            .map(|(&le, count)| Bucket { le, count })
                            .collect(),
                        sum_ms: s.sum_ms,
                        count: s.count(),
                    },
                    in_flight: s.in_flight,
                    breaker: s.breaker,
                }
            })
            .collect();
        MetricsSnapshot { tools }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_never_goes_negative() {
        let m = MetricsRecorder::new();
        m.record("t", "success", None, 1.0).unwrap();
        m.call_started("t");
        assert_eq!(m.snapshot().tools[0].in_flight, 1);
    }
}
