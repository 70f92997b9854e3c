//! JSON Schema validation of tool inputs (draft 2020-12 by default, draft-07 when
//! `$schema` says so), compiled once. Schemas are never fetched: a `$ref` must resolve
//! inside the schema or to a resource given at compile time.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// One validation failure: a JSON Pointer into the instance and a message.
///
/// ```
/// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"type": "integer"}), &[]).unwrap();
/// let issues = v.validate(&serde_json::json!("x"));
/// assert_eq!(issues[0].path(), "");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Issue {
    path: String,
    message: String,
}

impl Issue {
    /// The JSON Pointer of the failing value (`""` for the root).
    ///
    /// ```
    /// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"properties": {"n": {"type": "integer"}}}), &[]).unwrap();
    /// assert_eq!(v.validate(&serde_json::json!({"n": "x"}))[0].path(), "/n");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong, in words.
    ///
    /// ```
    /// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"type": "integer"}), &[]).unwrap();
    /// assert!(v.validate(&serde_json::json!("x"))[0].message().contains("integer"));
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A schema that does not compile, or a `$ref` that does not resolve.
///
/// ```
/// let err = toolwire::SchemaValidator::compile(&serde_json::json!({"$ref": "https://example.com/x.json"}), &[]).unwrap_err();
/// assert!(err.to_string().contains("example.com"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaCompileError(String);

impl fmt::Display for SchemaCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaCompileError {}

/// A compiled JSON Schema.
///
/// ```
/// use serde_json::json;
/// let schema = json!({
///     "type": "object",
///     "properties": { "text": { "type": "string" }, "n": { "type": "integer" } },
///     "required": ["text", "n"],
///     "additionalProperties": false
/// });
/// let v = toolwire::SchemaValidator::compile(&schema, &[]).unwrap();
/// assert!(v.validate(&json!({"text": "hi", "n": 3})).is_empty());
/// assert_eq!(v.validate(&json!({"text": 1})).len(), 2);
/// ```
pub struct SchemaValidator {
    inner: jsonschema::Validator,
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator").finish_non_exhaustive()
    }
}

const DRAFT7: [&str; 2] = [
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
];

const KNOWN_DRAFTS: [&str; 5] = [
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

impl SchemaValidator {
    /// Compiles `schema`; `resources` are `(uri, schema)` pairs that `$ref`s may name.
    /// Without `$schema`, the schema is read as draft 2020-12.
    ///
    /// ```
    /// use serde_json::json;
    /// let remote = ("http://localhost:1234/int.json".to_owned(), json!({"type": "integer"}));
    /// let v = toolwire::SchemaValidator::compile(&json!({"$ref": "http://localhost:1234/int.json"}), &[remote]).unwrap();
    /// assert!(!v.validate(&json!("x")).is_empty());
    /// ```
    pub fn compile(
        schema: &Value,
        resources: &[(String, Value)],
    ) -> Result<Self, SchemaCompileError> {
        let mut options = jsonschema::options();
        let declared = schema.get("$schema").and_then(Value::as_str);
        match declared {
            None => options = options.with_draft(jsonschema::Draft::Draft202012),
            Some(uri) if DRAFT7.contains(&uri) => {
                options = options.with_draft(jsonschema::Draft::Draft7)
            }
            Some(_) => {}
        }
        for (uri, contents) in resources {
            // A resource whose `$schema` names no draft this validator knows is left out:
            // reading it would need its meta-schema, and nothing is ever fetched.
            let known = match contents.get("$schema").and_then(Value::as_str) {
                None => true,
                Some(uri) => KNOWN_DRAFTS.contains(&uri.trim_end_matches('#')),
            };
            if let (true, Ok(resource)) =
                (known, jsonschema::Resource::from_contents(contents.clone()))
            {
                options = options.with_resource(uri.clone(), resource);
            }
        }
        options
            .build(schema)
            .map(|inner| SchemaValidator { inner })
            .map_err(|err| SchemaCompileError(err.to_string()))
    }

    /// Every violation of the schema by `instance`; empty when it is valid.
    ///
    /// ```
    /// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"minimum": 5}), &[]).unwrap();
    /// assert!(v.validate(&serde_json::json!(7)).is_empty());
    /// ```
    pub fn validate(&self, instance: &Value) -> Vec<Issue> {
        if self.inner.is_valid(instance) {
            return Vec::new();
        }
        self.inner
            .iter_errors(instance)
            .map(|err| Issue {
                path: err.instance_path.to_string(),
                message: err.to_string(),
            })
            .collect()
    }
}
