//! Tool-call metrics aggregated in the core: counters, latency histograms, in-flight
//! and circuit-breaker gauges per tool, exported as a serializable
//! [`MetricsSnapshot`] or in the Prometheus text exposition format.
//!
//! One [`MetricsRecorder`] serves a whole runtime (it is `Send + Sync`). Tools are
//! interned: [`MetricsRecorder::register_tool`] gives each name a small [`u32`] id,
//! and the `*_by_id` methods and [`MetricsRecorder::record_batch`] take that id, so a
//! hot path (such as the Node.js binding) sends numbers instead of strings.
//!
//! # Histogram buckets
//!
//! Call durations go into fixed log-linear buckets, upper bounds inclusive
//! (`duration <= bound`), in milliseconds ([`BUCKET_BOUNDS_MS`]):
//!
//! `0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000,
//! 10000, 30000, 60000, +Inf`
//!
//! Prometheus exports them in seconds (`le="0.00005"` … `le="60"`, `le="+Inf"`).
//!
//! ```
//! use toolwire::metrics::{BreakerState, MetricsRecorder};
//! use toolwire::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
//!
//! let metrics = MetricsRecorder::new();
//! metrics.call_started("search");
//! metrics.record_result("search", &ToolResult::success(ToolOutput::text("hits")), 12.5).unwrap();
//! let failed = ToolResult::failed(ToolExecutionError::new(ToolErrorKind::Timeout, "slow"));
//! metrics.record_result("search", &failed, 30_000.0).unwrap();
//! metrics.set_breaker_state("search", BreakerState::Open);
//!
//! let snapshot = metrics.snapshot();
//! let search = &snapshot.tools[0];
//! assert_eq!(search.calls.success, 1);
//! assert_eq!(search.calls.error, 1);
//! assert_eq!(search.errors.get(ToolErrorKind::Timeout), 1);
//! assert_eq!(search.duration.count, 2);
//! assert_eq!(search.in_flight, 0);
//! assert_eq!(search.breaker, BreakerState::Open);
//!
//! let text = metrics.to_prometheus();
//! assert!(text.contains("toolwire_tool_calls_total{tool=\"search\",status=\"error\"} 1\n"));
//! assert!(text.contains("toolwire_tool_breaker_state{tool=\"search\"} 1\n"));
//! ```

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::{Mutex, MutexGuard};

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::{ToolErrorKind, ToolResult};

/// Upper bounds of the latency histogram buckets in milliseconds, inclusive. A last,
/// implicit `+Inf` bucket follows them.
///
/// ```
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS.len(), 19);
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS[0], 0.05);
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS[18], 60_000.0);
/// ```
pub const BUCKET_BOUNDS_MS: [f64; 19] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0,
    5000.0, 10000.0, 30000.0, 60000.0,
];

/// The `le` labels of the buckets in milliseconds (snapshot) and seconds
/// (Prometheus), written out so that no float formatting is involved.
const BUCKET_LABELS_MS: [&str; 20] = [
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "25", "50", "100", "250", "500", "1000",
    "2500", "5000", "10000", "30000", "60000", "+Inf",
];
const BUCKET_LABELS_S: [&str; 20] = [
    "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
    "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf",
];
const BUCKETS: usize = 20;

/// The settled status of a call, with its stable name and its numeric code in
/// [`MetricsRecorder::record_batch`].
///
/// ```
/// use toolwire::metrics::CallStatus;
/// assert_eq!(CallStatus::Denied.as_str(), "denied");
/// assert_eq!(CallStatus::Denied.code(), 2);
/// assert_eq!(CallStatus::from_code(2), Some(CallStatus::Denied));
/// assert_eq!("skipped".parse::<CallStatus>(), Ok(CallStatus::Skipped));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool completed (code 0).
    Success,
    /// The tool failed (code 1).
    Error,
    /// The call was refused (code 2).
    Denied,
    /// Runtime policy skipped the call (code 3).
    Skipped,
    /// The call waits for input, authorization or confirmation (code 4).
    Pending,
}

impl CallStatus {
    /// Every status, in code order.
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::CallStatus::ALL[4].as_str(), "pending");
    /// ```
    pub const ALL: [CallStatus; 5] = [
        CallStatus::Success,
        CallStatus::Error,
        CallStatus::Denied,
        CallStatus::Skipped,
        CallStatus::Pending,
    ];

    /// The stable telemetry name, equal to [`ToolResult::status_name`].
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::CallStatus::Success.as_str(), "success");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "success",
            CallStatus::Error => "error",
            CallStatus::Denied => "denied",
            CallStatus::Skipped => "skipped",
            CallStatus::Pending => "pending",
        }
    }

    /// The numeric code used in batches: 0 success, 1 error, 2 denied, 3 skipped, 4 pending.
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::CallStatus::Pending.code(), 4);
    /// ```
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The status of a numeric code, if it names one.
    ///
    /// ```
    /// assert_eq!(toolwire::metrics::CallStatus::from_code(5), None);
    /// ```
    pub const fn from_code(code: u8) -> Option<CallStatus> {
        match code {
            0 => Some(CallStatus::Success),
            1 => Some(CallStatus::Error),
            2 => Some(CallStatus::Denied),
            3 => Some(CallStatus::Skipped),
            4 => Some(CallStatus::Pending),
            _ => None,
        }
    }

    /// The status of a settled result.
    ///
    /// ```
    /// use toolwire::metrics::CallStatus;
    /// let r = toolwire::ToolResult::skipped("dry run");
    /// assert_eq!(CallStatus::of(&r), CallStatus::Skipped);
    /// ```
    pub fn of(result: &ToolResult) -> CallStatus {
        if result.is_success() {
            CallStatus::Success
        } else if result.is_error() {
            CallStatus::Error
        } else if result.is_refused() {
            CallStatus::Denied
        } else if result.is_skipped() {
            CallStatus::Skipped
        } else {
            CallStatus::Pending
        }
    }
}

impl std::str::FromStr for CallStatus {
    type Err = MetricsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| MetricsError::UnknownStatus(s.to_owned()))
    }
}

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

/// Why a recording was rejected. A rejected call or batch changes nothing.
///
/// ```
/// use toolwire::metrics::{MetricsError, MetricsRecorder};
/// let m = MetricsRecorder::new();
/// assert_eq!(m.record("t", "refused", None, 1.0), Err(MetricsError::UnknownStatus("refused".into())));
/// assert_eq!(m.record("t", "success", None, -1.0).unwrap_err().to_string(),
///     "duration must be a finite number of milliseconds >= 0, got -1");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MetricsError {
    /// A status name other than `success`, `error`, `denied`, `skipped`, `pending`.
    UnknownStatus(String),
    /// A tool id that [`MetricsRecorder::register_tool`] did not return.
    UnknownToolId(u32),
    /// A negative, NaN or infinite duration.
    InvalidDuration(f64),
    /// A malformed batch record: its index and what is wrong.
    InvalidBatch {
        /// The index of the record (not of the number) in the batch.
        record: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricsError::UnknownStatus(name) => write!(f, "unknown call status {name:?}"),
            MetricsError::UnknownToolId(id) => write!(f, "unknown tool id {id}"),
            MetricsError::InvalidDuration(ms) => write!(
                f,
                "duration must be a finite number of milliseconds >= 0, got {ms}"
            ),
            MetricsError::InvalidBatch { record, reason } => {
                write!(f, "invalid batch record {record}: {reason}")
            }
        }
    }
}

impl std::error::Error for MetricsError {}

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
pub struct ErrorCounts([u64; 9]);

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

#[derive(Default)]
struct Series {
    statuses: [u64; 5],
    errors: [u64; 9],
    /// Non-cumulative counts per bucket; the last is `+Inf`.
    buckets: [u64; BUCKETS],
    sum_ms: f64,
    in_flight: u64,
    breaker: BreakerState,
}

impl Series {
    fn record(&mut self, status: CallStatus, kind: Option<ToolErrorKind>, duration_ms: f64) {
        self.statuses[status.code() as usize] += 1;
        if let (CallStatus::Error, Some(kind)) = (status, kind) {
            self.errors[kind_index(kind)] += 1;
        }
        let bucket = BUCKET_BOUNDS_MS
            .iter()
            .position(|&bound| duration_ms <= bound)
            .unwrap_or(BUCKETS - 1);
        self.buckets[bucket] += 1;
        self.sum_ms += duration_ms;
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn count(&self) -> u64 {
        self.statuses.iter().sum()
    }

    fn cumulative(&self) -> [u64; BUCKETS] {
        let mut total = 0;
        self.buckets.map(|n| {
            total += n;
            total
        })
    }
}

#[derive(Default)]
struct Inner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    series: Vec<Series>,
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

    fn series(&mut self, id: u32) -> Result<&mut Series, MetricsError> {
        self.series
            .get_mut(id as usize)
            .ok_or(MetricsError::UnknownToolId(id))
    }

    /// Tool ids sorted by name.
    fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        order
    }
}

fn kind_index(kind: ToolErrorKind) -> usize {
    ToolErrorKind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is in ToolErrorKind::ALL")
}

fn check_duration(duration_ms: f64) -> Result<f64, MetricsError> {
    if duration_ms.is_finite() && duration_ms >= 0.0 {
        Ok(duration_ms)
    } else {
        Err(MetricsError::InvalidDuration(duration_ms))
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

    fn lock(&self) -> MutexGuard<'_, Inner> {
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
        let status: CallStatus = status_name.parse()?;
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
            .record(CallStatus::of(result), kind, duration_ms);
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

    /// Records a batch of calls under one lock. The batch is a flat list of records
    /// of 4 numbers each, `[toolId, statusCode, errorKindCode, durationMs]`:
    ///
    /// - `toolId`: an id from [`Self::register_tool`];
    /// - `statusCode`: `0` success, `1` error, `2` denied, `3` skipped, `4` pending
    ///   ([`CallStatus::code`]) — or `-1` for a **started** record, which increments
    ///   the in-flight gauge and ignores the other two numbers;
    /// - `errorKindCode`: `-1` for none, else an index into [`ToolErrorKind::ALL`]
    ///   (counted only with status `error`);
    /// - `durationMs`: a finite number of milliseconds >= 0.
    ///
    /// Records apply in order. The whole batch is validated first: if any record is
    /// malformed, nothing is recorded. Returns the number of records.
    ///
    /// ```
    /// use toolwire::ToolErrorKind;
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// let search = m.register_tool("search") as f64;
    /// let timeout = 1.0; // ToolErrorKind::ALL[1]
    /// assert_eq!(ToolErrorKind::ALL[1], ToolErrorKind::Timeout);
    /// let n = m.record_batch(&[
    ///     search, -1.0, -1.0, 0.0,    // started
    ///     search, 0.0, -1.0, 4.2,     // success in 4.2 ms
    ///     search, 1.0, timeout, 30000.0,
    /// ]).unwrap();
    /// assert_eq!(n, 3);
    /// let t = &m.snapshot().tools[0];
    /// assert_eq!((t.calls.success, t.calls.error, t.in_flight), (1, 1, 0));
    /// assert_eq!(t.errors.get(ToolErrorKind::Timeout), 1);
    /// assert!(m.record_batch(&[search, 9.0, -1.0, 1.0]).is_err());
    /// ```
    pub fn record_batch(&self, batch: &[f64]) -> Result<usize, MetricsError> {
        if batch.len() % 4 != 0 {
            return Err(MetricsError::InvalidBatch {
                record: batch.len() / 4,
                reason: format!("the batch has {} numbers, not a multiple of 4", batch.len()),
            });
        }
        let mut inner = self.lock();
        let tools = inner.series.len();
        let mut decoded = Vec::with_capacity(batch.len() / 4);
        for (index, record) in batch.chunks_exact(4).enumerate() {
            decoded.push(
                decode(record, tools).map_err(|reason| MetricsError::InvalidBatch {
                    record: index,
                    reason,
                })?,
            );
        }
        for &(id, op) in &decoded {
            let series = &mut inner.series[id];
            match op {
                Op::Started => series.in_flight += 1,
                Op::Settled(status, kind, duration_ms) => series.record(status, kind, duration_ms),
            }
        }
        Ok(decoded.len())
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

    /// The metrics in the Prometheus text exposition format (version 0.0.4):
    ///
    /// - `toolwire_tool_calls_total{tool,status}` counter, every status;
    /// - `toolwire_tool_errors_total{tool,kind}` counter, every kind;
    /// - `toolwire_tool_call_duration_seconds{tool}` histogram (`_bucket{le}`
    ///   cumulative up to `le="+Inf"`, `_sum` and `_count`, in seconds);
    /// - `toolwire_tool_calls_in_flight{tool}` gauge;
    /// - `toolwire_tool_breaker_state{tool}` gauge (0 closed, 1 open, 2 half-open).
    ///
    /// Each family has one `# HELP` and one `# TYPE` line, even with no tools. Tools
    /// are sorted by name; label values escape `\`, `"` and newlines.
    ///
    /// ```
    /// let m = toolwire::metrics::MetricsRecorder::new();
    /// m.record("say \"hi\"", "success", None, 1500.0).unwrap();
    /// let text = m.to_prometheus();
    /// assert!(text.contains("# TYPE toolwire_tool_call_duration_seconds histogram\n"));
    /// assert!(text.contains("toolwire_tool_call_duration_seconds_bucket{tool=\"say \\\"hi\\\"\",le=\"1\"} 0\n"));
    /// assert!(text.contains("toolwire_tool_call_duration_seconds_bucket{tool=\"say \\\"hi\\\"\",le=\"2.5\"} 1\n"));
    /// assert!(text.contains("toolwire_tool_call_duration_seconds_sum{tool=\"say \\\"hi\\\"\"} 1.5\n"));
    /// ```
    pub fn to_prometheus(&self) -> String {
        let inner = self.lock();
        let order = inner.sorted();
        let labels: Vec<String> = order.iter().map(|&id| escape(&inner.names[id])).collect();
        let rows = || {
            order
                .iter()
                .zip(&labels)
                .map(|(&id, l)| (&inner.series[id], l))
        };
        let mut out = String::with_capacity(256 + order.len() * 3072);

        family(
            &mut out,
            "toolwire_tool_calls_total",
            "Settled tool calls by tool and status.",
            "counter",
        );
        for (s, tool) in rows() {
            for status in CallStatus::ALL {
                let n = s.statuses[status.code() as usize];
                let _ = writeln!(
                    out,
                    "toolwire_tool_calls_total{{tool=\"{tool}\",status=\"{}\"}} {n}",
                    status.as_str()
                );
            }
        }

        family(
            &mut out,
            "toolwire_tool_errors_total",
            "Failed tool calls by tool and error kind.",
            "counter",
        );
        for (s, tool) in rows() {
            for (i, kind) in ToolErrorKind::ALL.into_iter().enumerate() {
                let _ = writeln!(
                    out,
                    "toolwire_tool_errors_total{{tool=\"{tool}\",kind=\"{kind}\"}} {}",
                    s.errors[i]
                );
            }
        }

        family(
            &mut out,
            "toolwire_tool_call_duration_seconds",
            "Duration of settled tool calls in seconds.",
            "histogram",
        );
        for (s, tool) in rows() {
            for (le, n) in BUCKET_LABELS_S.iter().zip(s.cumulative()) {
                let _ = writeln!(
                    out,
                    "toolwire_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{le}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "toolwire_tool_call_duration_seconds_sum{{tool=\"{tool}\"}} {}",
                PromFloat(s.sum_ms / 1000.0)
            );
            let _ = writeln!(
                out,
                "toolwire_tool_call_duration_seconds_count{{tool=\"{tool}\"}} {}",
                s.count()
            );
        }

        family(
            &mut out,
            "toolwire_tool_calls_in_flight",
            "Tool calls started and not yet settled.",
            "gauge",
        );
        for (s, tool) in rows() {
            let _ = writeln!(
                out,
                "toolwire_tool_calls_in_flight{{tool=\"{tool}\"}} {}",
                s.in_flight
            );
        }

        family(
            &mut out,
            "toolwire_tool_breaker_state",
            "Circuit breaker state per tool: 0 closed, 1 open, 2 half-open.",
            "gauge",
        );
        for (s, tool) in rows() {
            let _ = writeln!(
                out,
                "toolwire_tool_breaker_state{{tool=\"{tool}\"}} {}",
                s.breaker.code()
            );
        }
        out
    }
}

#[derive(Clone, Copy)]
enum Op {
    Started,
    Settled(CallStatus, Option<ToolErrorKind>, f64),
}

/// Decodes one batch record, or says what is wrong with it.
fn decode(record: &[f64], tools: usize) -> Result<(usize, Op), String> {
    let &[tool, status, kind, duration_ms] = record else {
        unreachable!("chunks_exact(4)")
    };
    let id = small_int(tool)
        .filter(|&id| id >= 0 && (id as usize) < tools)
        .ok_or_else(|| format!("unknown tool id {tool}"))? as usize;
    let status = small_int(status).ok_or_else(|| format!("bad status code {status}"))?;
    if status == -1 {
        return Ok((id, Op::Started));
    }
    let status = u8::try_from(status)
        .ok()
        .and_then(CallStatus::from_code)
        .ok_or_else(|| format!("bad status code {status}"))?;
    let kind = match small_int(kind) {
        Some(-1) => None,
        Some(k) if k >= 0 && (k as usize) < ToolErrorKind::ALL.len() => {
            Some(ToolErrorKind::ALL[k as usize])
        }
        _ => return Err(format!("bad error kind code {kind}")),
    };
    let duration_ms = check_duration(duration_ms).map_err(|err| err.to_string())?;
    Ok((id, Op::Settled(status, kind, duration_ms)))
}

/// `x` as an integer, if it is one in `i32` range.
fn small_int(x: f64) -> Option<i64> {
    (x.fract() == 0.0 && x >= i32::MIN as f64 && x <= i32::MAX as f64).then_some(x as i64)
}

fn family(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value with `\`, `"` and line feeds escaped.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value as Prometheus parses it: Rust's shortest round-trip decimal, and
/// `+Inf` for an overflowed sum.
struct PromFloat(f64);

impl fmt::Display for PromFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_infinite() {
            f.write_str("+Inf")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_tables_agree() {
        for (i, bound) in BUCKET_BOUNDS_MS.iter().enumerate() {
            assert_eq!(BUCKET_LABELS_MS[i].parse::<f64>().unwrap(), *bound);
            let seconds: f64 = BUCKET_LABELS_S[i].parse().unwrap();
            assert!((seconds * 1000.0 - bound).abs() < 1e-9 * bound);
        }
    }

    #[test]
    fn bucket_bounds_are_inclusive() {
        let m = MetricsRecorder::new();
        for ms in [0.0, 0.05, 0.050001, 60000.0, 60000.5, 1e12] {
            m.record("t", "success", None, ms).unwrap();
        }
        let counts: Vec<u64> = m.snapshot().tools[0]
            .duration
            .buckets
            .iter()
            .map(|b| b.count)
            .collect();
        assert_eq!(counts[0], 2);
        assert_eq!(counts[1], 3);
        assert_eq!(counts[18], 4);
        assert_eq!(counts[19], 6);
    }

    #[test]
    fn a_bad_batch_records_nothing() {
        let m = MetricsRecorder::new();
        let id = m.register_tool("t") as f64;
        for bad in [
            vec![id, 0.0, -1.0],
            vec![id, 0.0, -1.0, 1.0, 5.0, 0.0, -1.0, 1.0],
            vec![id, 0.0, -1.0, 1.0, id, 0.5, -1.0, 1.0],
            vec![id, 0.0, -1.0, 1.0, id, 1.0, 9.0, 1.0],
            vec![id, 0.0, -1.0, 1.0, id, 1.0, -1.0, f64::NAN],
            vec![id, 0.0, -1.0, 1.0, id, -2.0, -1.0, 1.0],
            vec![f64::NAN, 0.0, -1.0, 1.0],
        ] {
            assert!(m.record_batch(&bad).is_err(), "{bad:?}");
        }
        let t = &m.snapshot().tools[0];
        assert_eq!(t.duration.count, 0);
        let err = m.record_batch(&[id, 0.0, -1.0, 1.0, 3.0, 0.0, -1.0, 1.0]);
        assert_eq!(
            err.unwrap_err().to_string(),
            "invalid batch record 1: unknown tool id 3"
        );
    }

    #[test]
    fn in_flight_never_goes_negative() {
        let m = MetricsRecorder::new();
        m.record("t", "success", None, 1.0).unwrap();
        m.call_started("t");
        assert_eq!(m.snapshot().tools[0].in_flight, 1);
    }

    #[test]
    fn prometheus_output_is_well_formed() {
        let m = MetricsRecorder::new();
        assert_eq!(m.to_prometheus().lines().count(), 10);
        m.record("b\\x\ny", "error", Some(ToolErrorKind::Other), 0.1)
            .unwrap();
        m.record("a", "success", None, 2.0).unwrap();
        let text = m.to_prometheus();
        assert!(text.ends_with('\n'));
        assert!(text.contains("toolwire_tool_calls_in_flight{tool=\"b\\\\x\\ny\"} 0\n"));
        for family in [
            "toolwire_tool_calls_total",
            "toolwire_tool_errors_total",
            "toolwire_tool_call_duration_seconds",
            "toolwire_tool_calls_in_flight",
            "toolwire_tool_breaker_state",
        ] {
            assert_eq!(text.matches(&format!("# HELP {family} ")).count(), 1);
            assert_eq!(text.matches(&format!("# TYPE {family} ")).count(), 1);
        }
        let a = text.find("{tool=\"a\",status=\"success\"} 1").unwrap();
        let b = text
            .find("{tool=\"b\\\\x\\ny\",status=\"error\"} 1")
            .unwrap();
        assert!(a < b);
        assert!(text.contains("toolwire_tool_call_duration_seconds_sum{tool=\"a\"} 0.002\n"));
    }
}
