//! Hostile schemas and inputs: the core's validator rejects what cannot end, bounds
//! depth, issue count and regex time, and never quotes the input.

use serde_json::{json, Value};
use toolwire::{
    SchemaOptions, SchemaValidator, MAX_COUNTED, MAX_DEPTH, MAX_ISSUES, MAX_LISTED_VALUES,
    MAX_PATH_TOKEN, STOPPED_AT_FIRST,
};

const SECRET: &str = "hunter2-SECRET";

fn compile_err(schema: Value) -> String {
    SchemaValidator::compile(&schema, &[])
        .map(|_| ())
        .expect_err("must not compile")
        .to_string()
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| json!([v]))
}

#[test]
fn schemas_whose_evaluation_never_ends_do_not_compile() {
    let cases = [
        json!({ "$ref": "#", "unevaluatedProperties": false }),
        json!({ "$ref": "#" }),
        json!({ "allOf": [{ "$ref": "#" }] }),
        json!({ "$ref": "#/$defs/a", "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } } }),
        json!({ "$dynamicAnchor": "x", "$dynamicRef": "#x" }),
        json!({ "$defs": { "n": { "$dynamicAnchor": "n", "anyOf": [{ "$dynamicRef": "#n" }] } }, "$ref": "#/$defs/n" }),
        json!({ "$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "not": { "$recursiveRef": "#" } }),
        json!({ "$schema": "http://json-schema.org/draft-07/schema#", "definitions": { "a": { "$ref": "#/definitions/b" }, "b": { "$ref": "#/definitions/a" } }, "$ref": "#/definitions/a" }),
        json!({ "$id": "https://example.com/root.json", "$ref": "a.json",
                "$defs": { "a": { "$id": "a.json", "$ref": "b.json" }, "b": { "$id": "b.json", "if": { "$ref": "a.json" } } } }),
    ];
    for schema in cases {
        let message = compile_err(schema.clone());
        assert!(message.contains("never end"), "{schema}: {message}");
    }
}

#[test]
fn a_cycle_through_a_given_resource_does_not_compile() {
    let remote = (
        "http://localhost:1234/loop.json".to_owned(),
        json!({ "allOf": [{ "$ref": "http://localhost:1234/loop.json" }] }),
    );
    let err = SchemaValidator::compile(
        &json!({ "$ref": "http://localhost:1234/loop.json" }),
        &[remote],
    )
    .unwrap_err();
    assert!(err.to_string().contains("never end"), "{err}");
}

#[test]
fn recursive_schemas_that_descend_into_the_input_still_work() {
    let tree = json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "children": { "type": "array", "items": { "$ref": "#" } } },
        "unevaluatedProperties": false
    });
    let v = SchemaValidator::compile(&tree, &[]).unwrap();
    let ok = json!({ "name": "a", "children": [{ "name": "b", "children": [] }] });
    assert!(v.validate(&ok).is_empty());
    let bad = json!({ "name": "a", "children": [{ "name": 1, "extra": true }] });
    let issues = v.validate(&bad);
    let paths: Vec<&str> = issues.iter().map(|i| i.path()).collect();
    assert!(paths.contains(&"/children/0/name"), "{paths:?}");
    assert!(paths.contains(&"/children/0/extra"), "{paths:?}");

    // as deep as the input may nest
    let mut deep = json!({ "name": "leaf" });
    for _ in 0..(MAX_DEPTH / 2 - 1) {
        deep = json!({ "children": [deep] });
    }
    assert!(v.validate(&deep).is_empty());
}

#[test]
fn long_and_wide_in_place_chains_do_not_compile() {
    let mut defs = serde_json::Map::new();
    for i in 0..200 {
        defs.insert(
            format!("d{i}"),
            json!({ "$ref": format!("#/$defs/d{}", i + 1) }),
        );
    }
    defs.insert("d200".into(), json!({ "type": "string" }));
    let message = compile_err(json!({ "$ref": "#/$defs/d0", "$defs": defs }));
    assert!(message.contains("chain"), "{message}");

    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/$defs/w{}", i + 1);
        defs.insert(
            format!("w{i}"),
            json!({ "allOf": [{ "$ref": next }, { "$ref": next }] }),
        );
    }
    defs.insert("w30".into(), json!(true));
    let message = compile_err(json!({ "$ref": "#/$defs/w0", "$defs": defs }));
    assert!(message.contains("subschemas"), "{message}");
}

#[test]
fn depth_is_bounded_for_schemas_and_inputs() {
    let deep_schema = (0..1_000).fold(json!({}), |v, _| json!({ "not": v }));
    let message = compile_err(deep_schema);
    assert!(message.contains("levels"), "{message}");

    let v = SchemaValidator::compile(&json!({ "type": "array" }), &[]).unwrap();
    assert!(v.validate(&nested(MAX_DEPTH - 1)).is_empty());
    let issues = v.validate(&nested(MAX_DEPTH + 1));
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].path(), "");
    assert!(issues[0].message().contains("levels"));
}

#[test]
fn validation_runs_where_the_stack_has_room() {
    // a thread with a small stack: validation moves to a fresh one instead of overflowing
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let tree = json!({ "anyOf": [{ "type": "integer" }, { "type": "array", "items": { "allOf": [{ "$ref": "#" }] } }] });
            let v = SchemaValidator::compile(&tree, &[]).unwrap();
            let ok = v.validate(&nested(MAX_DEPTH - 1)).is_empty();
            let bad = (0..MAX_DEPTH - 1).fold(json!("x"), |v, _| json!([v]));
            (ok, v.validate(&bad).len())
        })
        .unwrap();
    let (ok, issues) = handle.join().unwrap();
    assert!(ok);
    assert!(issues > 0);
}

#[test]
fn issue_messages_never_quote_the_input() {
    let cases = [
        json!({ "minLength": 40 }),
        json!({ "maxLength": 3 }),
        json!({ "pattern": "^[0-9]+$" }),
        json!({ "enum": ["a", "b"] }),
        json!({ "const": "a" }),
        json!({ "type": "integer" }),
        json!({ "not": { "type": "string" } }),
        json!({ "format": "email", "$schema": "https://json-schema.org/draft/2020-12/schema", "$vocabulary": {} }),
        json!({ "anyOf": [{ "type": "integer" }, { "minLength": 99 }] }),
        json!({ "oneOf": [{ "type": "string" }, { "minLength": 1 }] }),
        json!({ "contentMediaType": "application/json" }),
        json!({ "contentEncoding": "base64" }),
        json!({ "$ref": "#/$defs/s", "$defs": { "s": { "minLength": 99 } }, "unevaluatedProperties": false }),
        json!(false),
    ];
    for schema in cases {
        let v = SchemaValidator::compile(&schema, &[]).unwrap();
        for instance in [
            json!(SECRET),
            json!([SECRET, SECRET]),
            json!({ "k": SECRET }),
        ] {
            for issue in v.validate(&instance) {
                assert!(!issue.message().contains("hunter2"), "{schema}: {issue:?}");
            }
        }
    }
    let objects = [
        json!({ "propertyNames": { "maxLength": 2 } }),
        json!({ "additionalProperties": false }),
        json!({ "uniqueItems": true }),
        json!({ "contains": { "type": "integer" } }),
        json!({ "items": { "minLength": 99 } }),
        json!({ "prefixItems": [{ "type": "integer" }], "unevaluatedItems": false }),
        json!({ "dependentRequired": { "a": ["b"] } }),
    ];
    for schema in objects {
        let v = SchemaValidator::compile(&schema, &[]).unwrap();
        for instance in [json!({ SECRET: SECRET, "a": 1 }), json!([SECRET, SECRET])] {
            for issue in v.validate(&instance) {
                assert!(!issue.message().contains("hunter2"), "{schema}: {issue:?}");
            }
        }
    }
}

#[test]
fn keys_that_are_not_allowed_or_required_get_their_own_path() {
    let v = SchemaValidator::compile(&json!({ "required": ["a/b"], "additionalProperties": false, "properties": { "a/b": true } }), &[]).unwrap();
    let issues = v.validate(&json!({ "x": 1, "y~": 2 }));
    let found: Vec<(&str, &str)> = issues.iter().map(|i| (i.path(), i.message())).collect();
    assert!(found.contains(&("/a~1b", "is required")), "{found:?}");
    assert!(found.contains(&("/x", "is not allowed")), "{found:?}");
    assert!(found.contains(&("/y~0", "is not allowed")), "{found:?}");
}

#[test]
fn issues_are_capped_and_the_rest_counted_up_to_a_bound() {
    let v = SchemaValidator::compile(
        &json!({ "type": "array", "items": { "type": "string" } }),
        &[],
    )
    .unwrap();
    // below the bound: the exact count
    let issues = v.validate(&json!(vec![0; 5_000]));
    assert_eq!(issues.len(), MAX_ISSUES + 1);
    assert_eq!(issues[MAX_ISSUES].message(), "4900 more issues not listed");
    assert_eq!(issues[MAX_ISSUES].path(), "");
    // beyond the counting bound: counting stops, and the count says so
    let v = SchemaValidator::compile(
        &json!({ "items": { "minimum": 5, "maximum": 1, "multipleOf": 2 } }),
        &[],
    )
    .unwrap();
    let issues = v.validate(&json!(vec![3; MAX_LISTED_VALUES - 1]));
    assert_eq!(issues.len(), MAX_ISSUES + 1);
    assert_eq!(
        issues[MAX_ISSUES].message(),
        format!("at least {MAX_COUNTED} more issues not listed")
    );
}

#[test]
fn a_big_invalid_input_is_checked_up_to_its_first_issue() {
    for schema in [
        json!({ "type": "array", "items": { "type": "string" } }),
        json!({ "type": "array", "items": { "type": "string" }, "unevaluatedItems": false }),
    ] {
        let v = SchemaValidator::compile(&schema, &[]).unwrap();
        for len in [MAX_LISTED_VALUES, 1_000_000] {
            let issues = v.validate(&json!(vec![0; len]));
            let found: Vec<(&str, &str)> = issues.iter().map(|i| (i.path(), i.message())).collect();
            assert_eq!(
                found,
                [("/0", "must be string"), ("", STOPPED_AT_FIRST)],
                "{schema}"
            );
        }
        assert!(v.validate(&json!(vec!["s"; 1_000_000])).is_empty());
    }
    // a big schema lowers the bound: 4,006 values list every issue for at most 249
    let defs: serde_json::Map<String, Value> = (0..2_000)
        .map(|i| (format!("d{i}"), json!({ "type": "string" })))
        .collect();
    let v = SchemaValidator::compile(
        &json!({ "type": "array", "items": { "type": "string" }, "$defs": defs }),
        &[],
    )
    .unwrap();
    assert_eq!(
        v.validate(&json!(vec![0; 300]))[1].message(),
        STOPPED_AT_FIRST
    );
    assert_eq!(v.validate(&json!(vec![0; 200])).len(), MAX_ISSUES + 1);
}

#[test]
fn unexpected_keys_are_listed_up_to_the_cap() {
    let keys = |n: usize| -> Value {
        Value::Object((0..n).map(|i| (format!("k{i}"), json!(1))).collect())
    };
    for schema in [
        json!({ "type": "object", "properties": { "a": {} }, "additionalProperties": false }),
        json!({ "type": "object", "unevaluatedProperties": false }),
    ] {
        let v = SchemaValidator::compile(&schema, &[]).unwrap();
        // one error names every key: listed up to the cap, the rest counted
        let issues = v.validate(&keys(5_000));
        assert_eq!(issues.len(), MAX_ISSUES + 1, "{schema}");
        assert!(issues[..MAX_ISSUES]
            .iter()
            .all(|i| i.message() == "is not allowed" && i.path().starts_with("/k")));
        assert_eq!(issues[MAX_ISSUES].message(), "4900 more issues not listed");
        // a big input: checked up to its first error (which may name one key, or all)
        let issues = v.validate(&keys(200_000));
        assert!(issues.len() <= MAX_ISSUES + 1, "{schema}");
        assert_eq!(issues[0].message(), "is not allowed");
        assert_eq!(issues.last().unwrap().message(), STOPPED_AT_FIRST);
    }
}

#[test]
fn long_keys_are_clipped_in_issue_paths() {
    let key = format!(
        "{}/~{}",
        "é".repeat(MAX_PATH_TOKEN - 2),
        "x".repeat(1_000_000)
    );
    let clipped = format!("/{}~1~0…", "é".repeat(MAX_PATH_TOKEN - 2));
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": { "a": { "type": "object", "additionalProperties": { "type": "string" } } },
        "required": [key.clone()],
    });
    let v = SchemaValidator::compile(&schema, &[]).unwrap();
    let input = json!({ key.clone(): 1, "a": { key.clone(): 2 } });
    let paths: Vec<String> = v
        .validate(&input)
        .iter()
        .map(|i| i.path().to_owned())
        .collect();
    // not allowed at the root, and a nested type error whose path the validator built
    assert!(paths.contains(&clipped), "{paths:?}");
    assert!(paths.contains(&format!("/a{clipped}")), "{paths:?}");
    assert!(paths.iter().all(|p| p.chars().count() < 200), "{paths:?}");
    // a required key the schema names is clipped the same way
    let missing = v.validate(&json!({}));
    assert_eq!(missing[0].path(), clipped);
    // a key of exactly MAX_PATH_TOKEN characters is quoted whole
    let exact = "k".repeat(MAX_PATH_TOKEN);
    let v = SchemaValidator::compile(
        &json!({ "properties": { "a": {} }, "additionalProperties": false }),
        &[],
    )
    .unwrap();
    assert_eq!(
        v.validate(&json!({ exact.clone(): 1 }))[0].path(),
        format!("/{exact}")
    );
}

#[test]
fn formats_are_asserted_only_when_asked() {
    let schema = json!({
        "type": "object",
        "properties": { "when": { "format": "date-time" }, "to": { "format": "email" } },
        "unevaluatedProperties": false,
    });
    let input = json!({ "when": "tomorrow", "to": "nobody" });
    let lax = SchemaValidator::compile(&schema, &[]).unwrap();
    assert!(lax.validate(&input).is_empty());
    let strict =
        SchemaValidator::compile_with(&schema, &[], SchemaOptions::new().formats(true)).unwrap();
    let issues = strict.validate(&input);
    let found: Vec<(&str, &str)> = issues.iter().map(|i| (i.path(), i.message())).collect();
    assert!(
        found.contains(&("/when", "must match format \"date-time\"")),
        "{found:?}"
    );
    assert!(
        found.contains(&("/to", "must match format \"email\"")),
        "{found:?}"
    );
    assert!(strict
        .validate(&json!({ "when": "2026-12-01T10:00:00Z", "to": "a@example.com" }))
        .is_empty());
    // draft-07 as well: the flag decides, not the draft
    let draft7 = json!({ "$schema": "http://json-schema.org/draft-07/schema#", "format": "email" });
    assert!(SchemaValidator::compile(&draft7, &[])
        .unwrap()
        .validate(&json!("nobody"))
        .is_empty());
}

#[test]
fn patterns_run_in_linear_time_and_backtracking_features_do_not_compile() {
    let v = SchemaValidator::compile(&json!({ "pattern": "^(a+)+$" }), &[]).unwrap();
    let input = format!("{}!", "a".repeat(5_000));
    assert_eq!(v.validate(&json!(input)).len(), 1);
    assert!(v.validate(&json!("aaaa")).is_empty());
    let v = SchemaValidator::compile(
        &json!({ "patternProperties": { "^(a|aa)+$": { "type": "integer" } } }),
        &[],
    )
    .unwrap();
    assert_eq!(v.validate(&json!({ "a".repeat(5_000): "x" })).len(), 1);
    for pattern in ["^(?=a)a+$", "(a)\\1", "(?<!x)y"] {
        let message = compile_err(json!({ "pattern": pattern }));
        assert!(message.contains("linear-time"), "{pattern}: {message}");
        let message = compile_err(json!({ "patternProperties": { pattern: true } }));
        assert!(message.contains("linear-time"), "{pattern}: {message}");
    }
}

#[test]
fn the_worst_shape_that_compiles_fits_in_the_red_zone() {
    // the longest in-place chain that compiles, applied again at every input level
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        defs.insert(
            format!("c{i}"),
            json!({ "allOf": [{ "$ref": format!("#/$defs/c{}", i + 1) }] }),
        );
    }
    defs.insert("c30".into(), json!({ "anyOf": [{ "type": "integer" }, { "type": "array", "items": { "$ref": "#/$defs/c0" } }] }));
    let schema = json!({ "$ref": "#/$defs/c0", "$defs": defs });
    // a stack just above the red zone: validation stays on it, so it must be enough
    let handle = std::thread::Builder::new()
        .stack_size(toolwire::SCHEMA_RED_ZONE + 256 * 1024)
        .spawn(move || {
            let v = SchemaValidator::compile(&schema, &[]).unwrap();
            let deep = nested(MAX_DEPTH - 1);
            let bad = (0..MAX_DEPTH - 1).fold(json!("x"), |v, _| json!([v]));
            (v.validate(&deep).len(), v.validate(&bad).len())
        })
        .unwrap();
    let (ok, bad) = handle.join().unwrap();
    assert_eq!(ok, 0);
    assert!(bad > 0);
}

#[test]
fn recursion_that_multiplies_at_every_level_does_not_compile() {
    let cases = [
        json!({ "allOf": [{ "$ref": "#/$defs/t" }, { "$ref": "#/$defs/t" }], "$defs": { "t": { "type": "array", "items": { "$ref": "#" } } } }),
        json!({ "anyOf": [{ "items": { "$ref": "#" } }, { "items": { "$ref": "#" } }] }),
        json!({ "properties": { "a": { "$ref": "#" } }, "additionalProperties": false, "allOf": [{ "properties": { "a": { "$ref": "#" } } }] }),
        json!({ "items": { "$ref": "#" }, "contains": { "$ref": "#" } }),
    ];
    for schema in cases {
        let message = compile_err(schema.clone());
        assert!(message.contains("multiply"), "{schema}: {message}");
    }
    // one schema per child, however many children: fine
    for schema in [
        json!({ "properties": { "left": { "$ref": "#" }, "right": { "$ref": "#" } } }),
        json!({ "prefixItems": [{ "$ref": "#" }, { "$ref": "#" }] }),
        json!({ "anyOf": [{ "type": "string" }, { "type": "array", "items": { "$ref": "#" } }, { "type": "object", "additionalProperties": { "$ref": "#" } }] }),
        json!({ "allOf": [{ "$ref": "#/$defs/t" }, { "$ref": "#/$defs/t" }], "$defs": { "t": { "type": "array", "items": { "$ref": "#/$defs/t" } } } }),
    ] {
        assert!(SchemaValidator::compile(&schema, &[]).is_ok(), "{schema}");
    }
}

/// `$defs` d0 … d(len-1), each applying the next one twice to item 0 (`prefixItems` and `contains`).
fn doubling_chain(len: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..len {
        let next = json!({ "$ref": format!("#/$defs/d{}", i + 1) });
        let def = if i + 1 == len {
            json!({ "type": "string" })
        } else {
            json!({ "prefixItems": [next.clone()], "contains": next })
        };
        defs.insert(format!("d{i}"), def);
    }
    json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs })
}

#[test]
fn chains_that_apply_a_subschema_twice_at_every_link_do_not_compile() {
    // 2^24 ways to the last link: a validator that does not memoize ran out of memory
    let message = compile_err(doubling_chain(24));
    assert!(message.contains("reached in"), "{message}");
    let twice = |i: usize| json!({ "allOf": [{ "$ref": format!("#/$defs/a{i}") }, { "$ref": format!("#/$defs/a{i}") }] });
    let mut defs = serde_json::Map::new();
    for i in 0..20 {
        defs.insert(format!("a{i}"), twice(i + 1));
    }
    defs.insert("a20".into(), json!({ "type": "integer" }));
    let in_place = json!({ "$ref": "#/$defs/a0", "$defs": defs });
    assert!(SchemaValidator::compile(&in_place, &[]).is_err());
    // a short chain, and one subschema shared by many properties, are fine
    assert!(SchemaValidator::compile(&doubling_chain(8), &[]).is_ok());
    let shared: serde_json::Map<String, Value> = (0..500)
        .map(|i| (format!("p{i}"), json!({ "$ref": "#/$defs/s" })))
        .collect();
    let wide = json!({ "properties": shared, "$defs": { "s": { "type": "object", "properties": { "a": { "$ref": "#/$defs/t" }, "b": { "$ref": "#/$defs/t" } } }, "t": { "type": "string" } } });
    assert!(SchemaValidator::compile(&wide, &[]).is_ok());
}
