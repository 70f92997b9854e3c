//! Why a recording was rejected.

use std::fmt;

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

pub(super) fn check_duration(duration_ms: f64) -> Result<f64, MetricsError> {
    if duration_ms.is_finite() && duration_ms >= 0.0 {
        Ok(duration_ms)
    } else {
        Err(MetricsError::InvalidDuration(duration_ms))
    }
}
