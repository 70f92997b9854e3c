//! The batch format: records of 4 numbers, decoded and applied under one lock.

use super::error::check_duration;
use super::{CallStatus, MetricsError, MetricsRecorder};
use crate::ToolErrorKind;

impl MetricsRecorder {
    /// Records a batch of calls under one lock. The batch is a flat list of records
    /// of 4 numbers each, `[toolId, statusCode, errorKindCode, durationMs]`:
    ///
    /// - `toolId`: an id from [`Self::register_tool`];
    /// - `statusCode`: `0` success, `1` error, `2` denied, `3` skipped, `4` pending
    ///   ([`CallStatus::code`], `2` for [`CallStatus::Refused`]) — or `-1` for a **started** record, which increments
    ///   the in-flight gauge and ignores the other two numbers, or `-2` for a **started count**, which
    ///   adds its last number (a whole number of calls started, `0` to `i32::MAX`) to the in-flight
    ///   gauge and ignores `errorKindCode`;
    /// - `errorKindCode`: `-1` for none, else an index into [`ToolErrorKind::ALL`]
    ///   (counted only with status `error`);
    /// - `durationMs`: a finite number of milliseconds >= 0 (the count, for a started count).
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
    ///     search, -2.0, -1.0, 3.0,    // 3 calls started
    /// ]).unwrap();
    /// assert_eq!(n, 4);
    /// let t = &m.snapshot().tools[0];
    /// assert_eq!((t.calls.success, t.calls.error, t.in_flight), (1, 1, 3));
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
                Op::Started(n) => series.in_flight += n,
                Op::Settled(status, kind, duration_ms) => series.record(status, kind, duration_ms),
            }
        }
        Ok(decoded.len())
    }
}

#[derive(Clone, Copy)]
enum Op {
    /// This many calls started.
    Started(u64),
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
        return Ok((id, Op::Started(1)));
    }
    if status == -2 {
        let count = small_int(duration_ms)
            .filter(|&n| n >= 0)
            .ok_or_else(|| format!("bad started count {duration_ms}"))?;
        return Ok((id, Op::Started(count as u64)));
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

#[cfg(test)]
mod tests {
    use super::*;

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
            vec![id, 0.0, -1.0, 1.0, id, -4.0, -1.0, 1.0],
            vec![f64::NAN, 0.0, -1.0, 1.0],
            vec![id, -2.0, -1.0, 1.0, id, -2.0, -1.0, -1.0],
            vec![id, -2.0, -1.0, 1.5],
            vec![id, -2.0, -1.0, f64::INFINITY],
            vec![id, -3.0, -1.0, 1.0],
        ] {
            assert!(m.record_batch(&bad).is_err(), "{bad:?}");
        }
        let t = &m.snapshot().tools[0];
        assert_eq!((t.duration.count, t.in_flight), (0, 0));
        let err = m.record_batch(&[id, 0.0, -1.0, 1.0, 3.0, 0.0, -1.0, 1.0]);
        assert_eq!(
            err.unwrap_err().to_string(),
            "invalid batch record 1: unknown tool id 3"
        );
    }

    #[test]
    fn a_started_count_is_that_many_started_records() {
        let counted = MetricsRecorder::new();
        let one_by_one = MetricsRecorder::new();
        let a = counted.register_tool("a") as f64;
        let b = counted.register_tool("b") as f64;
        one_by_one.register_tool("a");
        one_by_one.register_tool("b");
        counted
            .record_batch(&[a, -2.0, -1.0, 3.0, b, -2.0, -1.0, 0.0, a, 0.0, -1.0, 2.0])
            .unwrap();
        one_by_one
            .record_batch(&[
                a, -1.0, -1.0, 0.0, a, -1.0, -1.0, 0.0, a, -1.0, -1.0, 0.0, a, 0.0, -1.0, 2.0,
            ])
            .unwrap();
        assert_eq!(counted.snapshot(), one_by_one.snapshot());
        assert_eq!(counted.snapshot().tools[0].in_flight, 2);
        assert_eq!(counted.snapshot().tools[1].in_flight, 0);
    }
}
