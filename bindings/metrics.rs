//! Tool-call metrics and call records. The aggregation, the batch format and the
//! record format live in `toolwire::metrics` and `toolwire::record`.

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolwire::metrics::{BreakerState, MetricsRecorder};
use toolwire::record::CallRecord;
use toolwire::ToolResult;

fn invalid_arg(err: impl ToString) -> Error {
    Error::new(Status::InvalidArg, err.to_string())
}

/// One runtime's tool-call metrics (create one per ToolManager, not per call).
///
/// Tool names are interned once with `registerTool`; settled calls are then sent in
/// batches of 4 numbers per record: `[toolId, statusCode, errorKindCode, durationMs]`,
/// statusCode 0 success, 1 error, 2 denied, 3 skipped, 4 pending, -1 for a
/// call-started record (increments the in-flight gauge), or -2 for a started count
/// (adds durationMs, a whole number of calls started, to the in-flight gauge);
/// errorKindCode -1 for none, else an index into `coreTables().errorKinds`.
#[napi]
pub struct BindingMetrics {
    inner: MetricsRecorder,
}

#[napi]
impl BindingMetrics {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        BindingMetrics {
            inner: MetricsRecorder::new(),
        }
    }

    /// Interns a tool name; the same name always gets the same id.
    #[napi]
    pub fn register_tool(&self, name: String) -> u32 {
        self.inner.register_tool(&name)
    }

    /// Records a batch of call records in order; a malformed batch throws and records
    /// nothing. Returns the number of records.
    #[napi]
    pub fn record_batch(&self, batch: &[f64]) -> Result<u32> {
        self.inner
            .record_batch(batch)
            .map(|n| n as u32)
            .map_err(invalid_arg)
    }

    /// Sets a tool's circuit-breaker state: 0 closed, 1 open, 2 half-open.
    #[napi]
    pub fn set_breaker_state(&self, tool_id: u32, state: u32) -> Result<()> {
        let state = BreakerState::from_code(state)
            .ok_or_else(|| invalid_arg(format!("unknown breaker state {state}")))?;
        self.inner
            .set_breaker_state_by_id(tool_id, state)
            .map_err(invalid_arg)
    }

    /// The metrics snapshot as JSON text.
    #[napi]
    pub fn snapshot_json(&self) -> String {
        serde_json::to_string(&self.inner.snapshot()).expect("a snapshot always serializes")
    }

    /// The metrics in the Prometheus text exposition format.
    #[napi]
    pub fn prometheus(&self) -> String {
        self.inner.to_prometheus()
    }
}

/// The JSON record of one settled call, from a wire result document and integer
/// unix-millisecond timestamps, naming the caller's `subject` when given (the
/// reference for `test/vectors/records`).
#[napi]
#[allow(clippy::too_many_arguments)] // one per record input, as in the TypeScript `callRecord`
pub fn call_record_json(
    call_id: String,
    tool: String,
    result_json: String,
    started_at_ms: i64,
    ended_at_ms: i64,
    attempt: u32,
    undo_available: bool,
    subject: Option<String>,
) -> Result<String> {
    let result = ToolResult::from_json(&result_json).map_err(invalid_arg)?;
    CallRecord::from_result(
        call_id,
        tool,
        &result,
        started_at_ms,
        ended_at_ms,
        attempt,
        undo_available,
    )
    .map(|record| match subject {
        Some(subject) => record.with_subject(subject),
        None => record,
    })
    .map(|record| record.to_json())
    .map_err(invalid_arg)
}
