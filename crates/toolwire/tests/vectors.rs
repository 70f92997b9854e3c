//! Conformance vectors shared with the Node.js package: `test/vectors/valid` holds
//! canonical documents that must round-trip byte for byte, `test/vectors/invalid`
//! holds documents that must be rejected with the message listed in `expected.json`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use toolwire::ToolResult;

mod common;
use common::{vector_files, vectors_dir};

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn valid_vectors_round_trip_byte_for_byte() {
    let files = vector_files("valid");
    assert!(
        files.len() >= 25,
        "expected at least 25 valid vectors, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = file_name(path);
        let text =
            fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {name}: {err}"));
        match ToolResult::from_json(&text) {
            Ok(result) => {
                let again = result.to_json();
                if again != text {
                    failures.push(format!("{name}: to_json() differs from the file"));
                } else if ToolResult::from_json(&again).as_ref() != Ok(&result) {
                    failures.push(format!("{name}: re-parsing gives a different result"));
                }
            }
            Err(err) => failures.push(format!("{name}: rejected: {err}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn one_mib_vector_has_one_mib_of_text() {
    let path = vectors_dir("valid").join("success-1mib.json");
    let text = fs::read_to_string(path).expect("success-1mib.json");
    let result = ToolResult::from_json(&text).expect("a valid document");
    assert_eq!(result.output().as_text().len(), 1 << 20);
}

#[test]
fn invalid_vectors_are_rejected_with_the_expected_message() {
    let expected_path = vectors_dir("invalid").join("expected.json");
    let expected_text = fs::read_to_string(&expected_path).expect("invalid/expected.json");
    let expected: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&expected_text).expect("expected.json is a JSON object");

    let files = vector_files("invalid");
    assert!(
        files.len() >= 12,
        "expected at least 12 invalid vectors, found {}",
        files.len()
    );
    let on_disk: BTreeSet<String> = files.iter().map(|path| file_name(path)).collect();
    let listed: BTreeSet<String> = expected.keys().cloned().collect();
    let unlisted: Vec<_> = on_disk.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&on_disk).collect();
    assert!(
        unlisted.is_empty(),
        "not listed in expected.json: {unlisted:?}"
    );
    assert!(
        missing.is_empty(),
        "listed in expected.json but absent: {missing:?}"
    );

    let mut failures = Vec::new();
    for path in &files {
        let name = file_name(path);
        let needle = expected[&name]
            .as_str()
            .unwrap_or_else(|| panic!("expected.json: {name} must map to a string"));
        let text =
            fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {name}: {err}"));
        match ToolResult::from_json(&text) {
            Ok(result) => failures.push(format!("{name}: accepted as {}", result.to_json())),
            Err(err) => {
                let message = err.to_string();
                if !message.starts_with("malformed tool result: ") {
                    failures.push(format!("{name}: message lacks the prefix: {message}"));
                } else if !message.contains(needle) {
                    failures.push(format!("{name}: {message:?} does not contain {needle:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_pending_input_schema_is_read_kept_in_the_model_view_and_written_back() {
    let path = vectors_dir("valid").join("pending-input-schema.json");
    let text = fs::read_to_string(path).expect("pending-input-schema.json");
    let result = ToolResult::from_json(&text).expect("a valid document");
    let request = result.pending_request().expect("a pending result");
    let schema = request.schema().expect("the schema is kept");
    assert_eq!(schema["required"], serde_json::json!(["env"]));
    let view = result.to_model();
    assert_eq!(
        view.metadata.expect("metadata")["pending"]["schema"],
        serde_json::Value::Object(schema.clone())
    );
    // the same request made with the builder writes the same bytes
    let built = toolwire::PendingRequest::new(toolwire::PendingKind::Input)
        .with_id("req-input-schema")
        .with_prompt("Which environment?")
        .with_schema(schema.clone())
        .expect("an input request takes a schema");
    assert_eq!(ToolResult::pending(built).to_json(), text);
}
