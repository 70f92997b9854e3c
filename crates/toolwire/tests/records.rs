//! Call-record vectors shared with the Node.js package: each file in
//! `test/vectors/records` holds an `input` (call id, tool, wire result, integer unix
//! millisecond timestamps, attempt, undo flag) and the exact `record` JSON text that
//! both languages must produce from it.

use std::fs;

use serde_json::Value;
use toolwire::record::CallRecord;
use toolwire::ToolResult;

mod common;
use common::vector_files;

fn field<'a>(input: &'a Value, name: &str) -> &'a Value {
    input
        .get(name)
        .unwrap_or_else(|| panic!("input has no {name:?}"))
}

fn record_of(input: &Value) -> CallRecord {
    let result = ToolResult::from_json(&field(input, "result").to_string())
        .expect("the input result is a valid wire document");
    let int = |name: &str| {
        field(input, name)
            .as_i64()
            .unwrap_or_else(|| panic!("{name} is an integer"))
    };
    CallRecord::from_result(
        field(input, "callId").as_str().expect("callId is a string"),
        field(input, "tool").as_str().expect("tool is a string"),
        &result,
        int("startedAtMs"),
        int("endedAtMs"),
        u32::try_from(int("attempt")).expect("attempt fits u32"),
        field(input, "undoAvailable")
            .as_bool()
            .expect("undoAvailable is a boolean"),
    )
    .expect("the input makes a record")
}

#[test]
fn records_match_the_vectors_byte_for_byte() {
    let files = vector_files("records");
    assert!(
        files.len() >= 6,
        "expected at least 6 vectors, found {}",
        files.len()
    );
    let mut statuses = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("{name}: {err}"));
        let vector: Value =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{name}: {err}"));
        let expected = vector["record"].as_str().expect("record is a string");
        let record = record_of(&vector["input"]);
        statuses.insert(record.status.status_name());
        let json = record.to_json();
        if json != expected {
            failures.push(format!("{name}:\n  expected {expected}\n       got {json}"));
        } else if CallRecord::from_json(expected).as_ref().ok() != Some(&record) {
            failures.push(format!(
                "{name}: parsing the record gives a different record"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        ["denied", "error", "pending", "skipped", "success"],
        "the vectors cover every status"
    );
}
