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
//!
//! # Layout
//!
//! - `buckets`: the histogram's fixed buckets;
//! - `snapshot`: what a recorder reports ([`MetricsSnapshot`] and its parts, [`BreakerState`]);
//! - `error`: [`MetricsError`];
//! - `recorder`: [`MetricsRecorder`] and its per-call methods;
//! - `batch`: [`MetricsRecorder::record_batch`], the numeric batch format;
//! - `prometheus`: [`MetricsRecorder::to_prometheus`].

mod batch;
mod buckets;
mod error;
mod prometheus;
mod recorder;
mod snapshot;

pub use buckets::BUCKET_BOUNDS_MS;
pub use error::MetricsError;
pub use recorder::MetricsRecorder;
pub use snapshot::{
    BreakerState, Bucket, ErrorCounts, Histogram, MetricsSnapshot, StatusCounts, ToolMetrics,
};

/// The settled status of a call is its result's [`Disposition`](crate::Disposition): one
/// type, counted by its telemetry name ([`Disposition::status_name`](crate::Disposition::status_name):
/// `success`, `error`, `denied`, `skipped`, `pending`) and sent in batches as its
/// [`code`](crate::Disposition::code).
///
/// ```
/// use toolwire::metrics::CallStatus;
/// use toolwire::{Disposition, ToolResult};
/// assert_eq!(CallStatus::Refused.status_name(), "denied");
/// assert_eq!(CallStatus::from_code(2), Some(Disposition::Refused));
/// assert_eq!(ToolResult::skipped("dry run").disposition(), CallStatus::Skipped);
/// ```
pub use crate::Disposition as CallStatus;
