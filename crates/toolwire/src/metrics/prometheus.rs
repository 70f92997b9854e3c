//! The Prometheus text exposition format.

use std::fmt::{self, Write as _};

use super::buckets::BUCKET_LABELS_S;
use super::{CallStatus, MetricsRecorder};
use crate::ToolErrorKind;

impl MetricsRecorder {
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
                    status.status_name()
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
