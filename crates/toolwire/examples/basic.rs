//! A Rust service dispatching a tool call and reporting it like the Node package.
//! Run: cargo run -p toolwire --example basic

use serde_json::json;
use toolwire::metrics::MetricsRecorder;
use toolwire::{SchemaValidator, ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};

fn echo(args: &serde_json::Value) -> Result<ToolOutput, ToolExecutionError> {
    let text = args["text"].as_str().unwrap_or_default();
    let n = args["n"].as_u64().unwrap_or(1) as usize;
    Ok(ToolOutput::json(json!({ "echoed": text.repeat(n) })))
}

fn main() {
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string" }, "n": { "type": "integer" } },
        "required": ["text", "n"],
        "additionalProperties": false
    });
    let validator = SchemaValidator::compile(&schema, &[]).expect("schema compiles");
    let metrics = MetricsRecorder::new();

    for args in [json!({ "text": "hi", "n": 2 }), json!({ "text": 1 })] {
        let issues = validator.validate(&args);
        let result = if issues.is_empty() {
            ToolResult::from(echo(&args))
        } else {
            let message = issues
                .iter()
                .map(|i| format!("{}: {}", i.path(), i.message()))
                .collect::<Vec<_>>()
                .join("; ");
            ToolResult::failed(ToolExecutionError::new(ToolErrorKind::InvalidArgs, message))
        };
        metrics
            .record_result("echo", &result, 0.2)
            .expect("valid tool name");
        println!("{} {}", result.status_name(), result.to_json());
    }
    print!("{}", metrics.to_prometheus());
}
