//! Call-record vectors shared with the Node.js package: each file in
//! `test/vectors/records` holds an `input` (call id, tool, wire result, integer unix
//! millisecond timestamps, attempt, undo flag, and an optional `subject`) and the
//! exact `record` JSON text that both languages must produce from it.

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
    let record = CallRecord::from_result(
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
    .expect("the input makes a record");
    match input.get("subject") {
        None => record,
        Some(subject) => record.with_subject(subject.as_str().expect("subject is a string")),
    }
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
    let mut subjects = 0;
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("{name}: {err}"));
        let vector: Value =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{name}: {err}"));
        let expected = vector["record"].as_str().expect("record is a string");
        let record = record_of(&vector["input"]);
        statuses.insert(record.status.status_name());
        subjects += usize::from(record.subject.is_some());
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
    assert!(subjects >= 2, "expected at least 2 vectors with a subject");
}

#[test]
fn a_record_without_a_subject_has_no_subject_field() {
    let result = ToolResult::skipped("off");
    let record = CallRecord::from_result("c", "t", &result, 0, 0, 1, false).unwrap();
    assert!(!record.to_json().contains("subject"));
    let named = record.clone().with_subject("");
    assert!(named
        .to_json()
        .ends_with(r#""undo_available":false,"subject":""}"#));
    assert_ne!(CallRecord::from_json(&named.to_json()).unwrap(), record);
}

#[test]
fn a_subject_that_is_not_a_string_is_refused() {
    let base = CallRecord::from_result("c", "t", &ToolResult::skipped("off"), 0, 0, 1, false)
        .unwrap()
        .to_json();
    let with = |value: &str| format!("{},\"subject\":{value}}}", &base[..base.len() - 1]);
    assert!(CallRecord::from_json(&with("null"))
        .unwrap()
        .subject
        .is_none());
    assert!(CallRecord::from_json(&with("7")).is_err());
    assert_eq!(
        CallRecord::from_json(&with("\"s\""))
            .unwrap()
            .subject
            .as_deref(),
        Some("s")
    );
}
