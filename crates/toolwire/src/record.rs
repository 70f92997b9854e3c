//! The event record of one settled tool call, serialized identically by the Rust
//! core and the Node.js package (shared vectors: `test/vectors/records`).
//!
//! # Format
//!
//! One JSON object, compact (no whitespace), fields in this order, snake_case names
//! (as in OpenTelemetry and structured-log conventions):
//!
//! | field | type | notes |
//! |---|---|---|
//! | `call_id` | string | |
//! | `tool` | string | |
//! | `status` | string | `success`, `error`, `denied`, `skipped` or `pending` ([`ToolResult::status_name`]) |
//! | `error_kind` | string | only when `status` is `error` |
//! | `refusal_code` | string | only when `status` is `denied` and the refusal has a code |
//! | `started_at` | string | RFC 3339 UTC, exactly 3 fractional digits |
//! | `ended_at` | string | same |
//! | `duration_ms` | integer | `ended - started` in whole milliseconds, 0 if negative |
//! | `attempt` | integer | 1 for the first attempt |
//! | `undo_available` | boolean | |
//! | `subject` | string | only when the caller is known: the principal's subject (an OAuth `sub`) |
//!
//! Absent optional fields are omitted, never `null`. Timestamps come from integer
//! unix milliseconds and are written exactly as JavaScript's
//! `new Date(ms).toISOString()` writes them (years outside 0000–9999 use the
//! extended `±YYYYYY` form). `duration_ms` is an integer, so it prints the same in
//! both languages (`5`, never `5.0`). Strings are escaped as by `JSON.stringify`.
//!
//! ```
//! use toolwire::record::CallRecord;
//! use toolwire::{ToolErrorKind, ToolExecutionError, ToolResult};
//!
//! let result = ToolResult::failed(ToolExecutionError::new(ToolErrorKind::Timeout, "slow"));
//! let record = CallRecord::from_result("call_1", "search", &result,
//!     1_795_000_000_000, 1_795_000_001_250, 1, false).unwrap();
//! assert_eq!(record.to_json(), concat!(
//!     r#"{"call_id":"call_1","tool":"search","status":"error","error_kind":"timeout","#,
//!     r#""started_at":"2026-11-18T11:06:40.000Z","ended_at":"2026-11-18T11:06:41.250Z","#,
//!     r#""duration_ms":1250,"attempt":1,"undo_available":false}"#));
//!
//! // A call made on behalf of a known caller names its subject last.
//! let record = record.with_subject("user-42");
//! assert!(record.to_json().ends_with(r#""undo_available":false,"subject":"user-42"}"#));
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{Disposition, ToolErrorKind, ToolResult};

/// (De)serializes a [`Disposition`] as its telemetry name.
mod status_name {
    use serde::{de, Deserialize, Deserializer, Serializer};

    use crate::Disposition;

    pub fn serialize<S: Serializer>(status: &Disposition, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(status.status_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Disposition, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Disposition::from_status_name(&name).ok_or_else(|| {
            de::Error::unknown_variant(&name, &["success", "error", "denied", "skipped", "pending"])
        })
    }
}

/// The largest distance from the epoch a JavaScript `Date` can hold, in milliseconds.
const MAX_UNIX_MS: i64 = 8_640_000_000_000_000;

/// The record of one settled tool call. See the [module documentation](self) for
/// the JSON format.
///
/// ```
/// use toolwire::record::CallRecord;
/// use toolwire::{ToolExecutionError, ToolResult};
///
/// let refused = ToolResult::failed(ToolExecutionError::refusal("not_allowed", "Owners only"));
/// let record = CallRecord::from_result("c2", "publish", &refused, 0, 7, 2, true).unwrap();
/// let json = record.to_json();
/// assert_eq!(json, concat!(
///     r#"{"call_id":"c2","tool":"publish","status":"denied","refusal_code":"not_allowed","#,
///     r#""started_at":"1970-01-01T00:00:00.000Z","ended_at":"1970-01-01T00:00:00.007Z","#,
///     r#""duration_ms":7,"attempt":2,"undo_available":true}"#));
/// assert_eq!(CallRecord::from_json(&json).unwrap(), record);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallRecord {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The settled disposition, written as its telemetry name
    /// ([`Disposition::status_name`]: `denied` for a refusal).
    #[serde(with = "status_name")]
    pub status: Disposition,
    /// The error kind, when `status` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ToolErrorKind>,
    /// The refusal's code, when `status` is `denied` and the refusal has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_code: Option<String>,
    /// When the call started: RFC 3339 UTC with milliseconds.
    pub started_at: String,
    /// When the call settled: RFC 3339 UTC with milliseconds.
    pub ended_at: String,
    /// `ended - started` in whole milliseconds (0 if the clock went backwards).
    pub duration_ms: u64,
    /// The attempt number, 1 for the first.
    pub attempt: u32,
    /// Whether the call can be undone.
    pub undo_available: bool,
    /// Who called: the principal's subject (an OAuth `sub`), when the caller is known.
    /// Omitted from the JSON when `None`, so a record without one keeps its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// Why a [`CallRecord`] could not be made.
///
/// ```
/// use toolwire::record::{CallRecord, RecordError};
/// let r = toolwire::ToolResult::skipped("off");
/// assert_eq!(CallRecord::from_result("c", "t", &r, 0, 0, 0, false), Err(RecordError::ZeroAttempt));
/// assert_eq!(CallRecord::from_result("c", "t", &r, i64::MAX, 0, 1, false).unwrap_err().to_string(),
///     "timestamp 9223372036854775807 ms is outside the range of a JavaScript Date");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// A timestamp more than 8.64e15 ms from the epoch.
    TimestampOutOfRange(i64),
    /// Attempts count from 1.
    ZeroAttempt,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::TimestampOutOfRange(ms) => write!(
                f,
                "timestamp {ms} ms is outside the range of a JavaScript Date"
            ),
            RecordError::ZeroAttempt => f.write_str("attempt must be at least 1"),
        }
    }
}

impl std::error::Error for RecordError {}

impl CallRecord {
    /// The record of a settled call: status, error kind and refusal code come from
    /// `result`; timestamps are integer unix milliseconds.
    ///
    /// ```
    /// use toolwire::record::CallRecord;
    /// use toolwire::{ToolOutput, ToolResult};
    /// let ok = ToolResult::success(ToolOutput::text("done"));
    /// let record = CallRecord::from_result("c1", "echo", &ok, 1_000, 900, 1, false).unwrap();
    /// assert_eq!(record.duration_ms, 0); // the clock went backwards
    /// assert_eq!(record.started_at, "1970-01-01T00:00:01.000Z");
    /// ```
    pub fn from_result(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        result: &ToolResult,
        started_unix_ms: i64,
        ended_unix_ms: i64,
        attempt: u32,
        undo_available: bool,
    ) -> Result<CallRecord, RecordError> {
        if attempt == 0 {
            return Err(RecordError::ZeroAttempt);
        }
        let started_at = format_timestamp(started_unix_ms)
            .ok_or(RecordError::TimestampOutOfRange(started_unix_ms))?;
        let ended_at = format_timestamp(ended_unix_ms)
            .ok_or(RecordError::TimestampOutOfRange(ended_unix_ms))?;
        Ok(CallRecord {
            call_id: call_id.into(),
            tool: tool.into(),
            status: result.disposition(),
            error_kind: result.error().map(|error| error.kind()),
            refusal_code: result
                .refusal()
                .and_then(|refusal| refusal.code())
                .map(str::to_owned),
            started_at,
            ended_at,
            // Both are within ±8.64e15, so the difference cannot overflow.
            duration_ms: u64::try_from(ended_unix_ms - started_unix_ms).unwrap_or(0),
            attempt,
            undo_available,
            subject: None,
        })
    }

    /// The same record, naming who called: `subject` is the principal's subject
    /// (an OAuth `sub`), written after `undo_available`.
    ///
    /// ```
    /// use toolwire::record::CallRecord;
    /// let r = toolwire::ToolResult::skipped("dry run");
    /// let record = CallRecord::from_result("c", "t", &r, 0, 0, 1, false)
    ///     .unwrap()
    ///     .with_subject("ann \"é\"");
    /// assert_eq!(record.subject.as_deref(), Some("ann \"é\""));
    /// let json = record.to_json();
    /// assert!(json.ends_with(r#""undo_available":false,"subject":"ann \"é\""}"#));
    /// assert_eq!(CallRecord::from_json(&json).unwrap(), record);
    /// ```
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> CallRecord {
        self.subject = Some(subject.into());
        self
    }

    /// The record as compact JSON, fields in the documented order.
    ///
    /// ```
    /// use toolwire::record::CallRecord;
    /// let r = toolwire::ToolResult::skipped("dry run");
    /// let json = CallRecord::from_result("c", "t", &r, 0, 0, 1, false).unwrap().to_json();
    /// assert!(json.starts_with(r#"{"call_id":"c","tool":"t","status":"skipped","started_at":"#));
    /// ```
    pub fn to_json(&self) -> String {
        crate::to_js_json(self)
    }

    /// Parses a record's JSON. Unknown fields are rejected.
    ///
    /// ```
    /// use toolwire::record::CallRecord;
    /// assert!(CallRecord::from_json(r#"{"call_id":"c"}"#).is_err());
    /// ```
    pub fn from_json(text: &str) -> Result<CallRecord, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// Formats integer unix milliseconds as RFC 3339 UTC with exactly 3 fractional
/// digits, exactly as JavaScript's `new Date(ms).toISOString()` does. `None` beyond
/// ±8.64e15 ms, where a JavaScript `Date` is invalid.
///
/// ```
/// use toolwire::record::format_timestamp;
/// assert_eq!(format_timestamp(0).unwrap(), "1970-01-01T00:00:00.000Z");
/// assert_eq!(format_timestamp(1_795_000_000_123).unwrap(), "2026-11-18T11:06:40.123Z");
/// assert_eq!(format_timestamp(-1).unwrap(), "1969-12-31T23:59:59.999Z");
/// assert_eq!(format_timestamp(951_782_400_000).unwrap(), "2000-02-29T00:00:00.000Z");
/// assert_eq!(format_timestamp(253_402_300_800_000).unwrap(), "+010000-01-01T00:00:00.000Z");
/// assert_eq!(format_timestamp(-62_198_755_200_000).unwrap(), "-000001-01-01T00:00:00.000Z");
/// assert_eq!(format_timestamp(8_640_000_000_000_001), None);
/// ```
pub fn format_timestamp(unix_ms: i64) -> Option<String> {
    if !(-MAX_UNIX_MS..=MAX_UNIX_MS).contains(&unix_ms) {
        return None;
    }
    let days = unix_ms.div_euclid(86_400_000);
    let ms_of_day = unix_ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (second, milli) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs())
    };
    Some(format!(
        "{year}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z"
    ))
}

/// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March-based
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days since the epoch of a civil date, counted naively, to check
    /// `civil_from_days` on every day of a wide range.
    #[test]
    fn civil_from_days_walks_the_calendar() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        // Walk forward from 1600-01-01 (day -135140) through 2400.
        let (mut y, mut m, mut d) = (1600_i64, 1_u32, 1_u32);
        for days in -135_140..=157_000 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            d += 1;
            if d > month_len(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn extremes_format_like_javascript() {
        assert_eq!(
            format_timestamp(MAX_UNIX_MS).unwrap(),
            "+275760-09-13T00:00:00.000Z"
        );
        assert_eq!(
            format_timestamp(-MAX_UNIX_MS).unwrap(),
            "-271821-04-20T00:00:00.000Z"
        );
        assert_eq!(
            format_timestamp(253_402_300_799_999).unwrap(),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            format_timestamp(-62_167_219_200_000).unwrap(),
            "0000-01-01T00:00:00.000Z"
        );
    }
}
