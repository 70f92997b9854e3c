//! What a [`MetricsRecorder`](super::MetricsRecorder) reports: per-tool counts, histograms and gauges.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::ToolErrorKind;

/// The state of a tool's circuit breaker, exported as a gauge: 0 closed, 1 open,
/// 2 half-open. Serialized as `"closed"`, `"open"` or `"half_open"`.
///
/// ```
/// use toolwire::metrics::BreakerState;
/// assert_eq!(BreakerState::HalfOpen.code(), 2);
/// assert_eq!(BreakerState::from_code(1), Some(BreakerState::Open));
/// assert_eq!(BreakerState::default(), BreakerState::Closed);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Calls flow (gauge 0).
    #[default]
    Closed,
    /// Calls are rejected (gauge 1).
    Open,
    /// Trial calls are let through (gauge 2).
    HalfOpen,
}

impl BreakerState {
    /// The gauge value: 0 closed, 1 open, 2 half-open.
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::BreakerState::Closed.code(), 0);
    /// ```
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The state of a gauge value, if it names one.
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::BreakerState::from_code(3), None);
    /// ```
    pub const fn from_code(code: u32) -> Option<BreakerState> {
        match code {
            0 => Some(BreakerState::Closed),
            1 => Some(BreakerState::Open),
            2 => Some(BreakerState::HalfOpen),
            _ => None,
        }
    }
}

/// Settled-call counts of one tool by status.
///
/// ```
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.record("t", "denied", None, 0.0).unwrap();
/// assert_eq!(m.snapshot().tools[0].calls.denied, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatusCounts {
    /// Calls that completed.
    pub success: u64,
    /// Calls that failed.
    pub error: u64,
    /// Calls that were refused.
    pub denied: u64,
    /// Calls that runtime policy skipped.
    pub skipped: u64,
    /// Calls that settled as pending.
    pub pending: u64,
}

/// Error counts of one tool by [`ToolErrorKind`]. Serialized as a JSON object with
/// every kind, in [`ToolErrorKind::ALL`] order.
///
/// ```
/// use toolwire::ToolErrorKind;
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.record("t", "error", Some(ToolErrorKind::Network), 3.0).unwrap();
/// let errors = &m.snapshot().tools[0].errors;
/// assert_eq!(errors.get(ToolErrorKind::Network), 1);
/// assert_eq!(errors.get(ToolErrorKind::Timeout), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorCounts(pub(super) [u64; 9]);

impl ErrorCounts {
    /// The count of errors of `kind`.
    ///
    /// ```
    /// let counts = toolwire::metrics::ErrorCounts::default();
    /// assert_eq!(counts.get(toolwire::ToolErrorKind::Other), 0);
    /// ```
    pub fn get(&self, kind: ToolErrorKind) -> u64 {
        self.0[kind_index(kind)]
    }

    /// Each kind with its count, in [`ToolErrorKind::ALL`] order.
    ///
    /// ```
    /// let counts = toolwire::metrics::ErrorCounts::default();
    /// assert_eq!(counts.iter().count(), 9);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (ToolErrorKind, u64)> + '_ {
        ToolErrorKind::ALL.into_iter().zip(self.0.iter().copied())
    }
}

impl Serialize for ErrorCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (kind, count) in self.iter() {
            map.serialize_entry(kind.as_str(), &count)?;
        }
        map.end()
    }
}

/// One histogram bucket: its inclusive upper bound in milliseconds as text
/// (`"0.05"` … `"60000"`, `"+Inf"`) and its cumulative count.
///
/// ```
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.record("t", "success", None, 0.3).unwrap();
/// let buckets = &m.snapshot().tools[0].duration.buckets;
/// assert_eq!((buckets[2].le, buckets[2].count), ("0.25", 0));
/// assert_eq!((buckets[3].le, buckets[3].count), ("0.5", 1));
/// assert_eq!((buckets[19].le, buckets[19].count), ("+Inf", 1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// The inclusive upper bound in milliseconds.
    pub le: &'static str,
    /// Calls that took at most `le` milliseconds.
    pub count: u64,
}

/// The latency histogram of one tool: cumulative buckets, sum and count.
///
/// ```
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.record("t", "success", None, 1.5).unwrap();
/// m.record("t", "error", None, 2.5).unwrap();
/// let h = &m.snapshot().tools[0].duration;
/// assert_eq!((h.count, h.sum_ms), (2, 4.0));
/// assert_eq!(h.buckets.len(), 20);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Histogram {
    /// 20 cumulative buckets, the last one `+Inf` (equal to `count`).
    pub buckets: Vec<Bucket>,
    /// The sum of all durations in milliseconds.
    pub sum_ms: f64,
    /// The number of durations recorded.
    pub count: u64,
}

/// The metrics of one tool at one moment.
///
/// ```
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.call_started("t");
/// let t = &m.snapshot().tools[0];
/// assert_eq!((t.tool.as_str(), t.in_flight), ("t", 1));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolMetrics {
    /// The tool name.
    pub tool: String,
    /// Settled calls by status.
    pub calls: StatusCounts,
    /// Errors (status `error`) by kind.
    pub errors: ErrorCounts,
    /// Durations of settled calls.
    pub duration: Histogram,
    /// Calls started and not yet settled.
    pub in_flight: u64,
    /// The circuit breaker's state.
    pub breaker: BreakerState,
}

/// Every registered tool's metrics, sorted by tool name.
///
/// ```
/// let m = toolwire::metrics::MetricsRecorder::new();
/// m.register_tool("b");
/// m.register_tool("a");
/// let json = serde_json::to_string(&m.snapshot()).unwrap();
/// assert!(json.starts_with(r#"{"tools":[{"tool":"a","calls":{"success":0,"#));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricsSnapshot {
    /// One entry per registered tool, sorted by name.
    pub tools: Vec<ToolMetrics>,
}

/// The index of `kind` in [`ToolErrorKind::ALL`].
pub(super) fn kind_index(kind: ToolErrorKind) -> usize {
    ToolErrorKind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is in ToolErrorKind::ALL")
}
