//! The model view and the wire adapters against `test/vectors/adapters/`, written by the
//! Node.js package: for every vector, the Rust rendering must be the same bytes.

use std::fs;

use serde::Deserialize;
use toolwire::{adapters, ToolResult};

mod common;
use common::{vector_files, vectors_dir};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Options {
    tool_call_id: String,
    tool_use_id: String,
    name: String,
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    input: String,
    options: Options,
    model: String,
    openai_chat: String,
    openai_responses: String,
    anthropic: String,
    gemini: String,
    mcp: String,
}

#[test]
fn every_adapter_gives_the_bytes_node_gives() {
    let files = vector_files("adapters");
    assert!(
        files.len() >= 25,
        "expected at least 25 adapter vectors, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let vector: Vector = serde_json::from_str(&fs::read_to_string(path).unwrap())
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let doc = fs::read_to_string(vectors_dir("valid").join(&vector.input)).unwrap();
        let result =
            ToolResult::from_json(&doc).unwrap_or_else(|err| panic!("{}: {err}", vector.input));
        let o = &vector.options;
        let rendered = [
            (
                "model",
                serde_json::to_string(&result.to_model()).unwrap(),
                &vector.model,
            ),
            (
                "openai_chat",
                serde_json::to_string(&adapters::to_openai_chat(&result, &o.tool_call_id)).unwrap(),
                &vector.openai_chat,
            ),
            (
                "openai_responses",
                adapters::to_openai_responses(&result, &o.tool_call_id).to_string(),
                &vector.openai_responses,
            ),
            (
                "anthropic",
                adapters::to_anthropic(&result, &o.tool_use_id).to_string(),
                &vector.anthropic,
            ),
            (
                "gemini",
                adapters::to_gemini(&result, &o.name, o.id.as_deref()).to_string(),
                &vector.gemini,
            ),
            ("mcp", adapters::to_mcp(&result).to_string(), &vector.mcp),
        ];
        for (wire, actual, expected) in rendered {
            if &actual != expected {
                failures.push(format!(
                    "{} {wire}:\n  rust: {actual}\n  node: {expected}",
                    vector.input
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
