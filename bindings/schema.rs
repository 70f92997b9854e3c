//! JSON Schema validation in the core, for schemas that need its full draft support.

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolwire::{SchemaOptions, SchemaValidator};

/// One validation failure.
#[napi(object)]
pub struct BindingIssue {
    pub path: String,
    pub message: String,
}

/// A schema compiled by the core (one per tool, made at registration).
#[napi]
pub struct BindingSchema {
    inner: SchemaValidator,
}

#[napi]
impl BindingSchema {
    /// Compiles a schema given as JSON text; `resources_json` is an object of URI → schema;
    /// `formats` asserts `format` (default: an annotation only).
    /// Throws when the schema does not compile or a `$ref` does not resolve.
    #[napi(factory)]
    pub fn compile(
        schema_json: String,
        resources_json: String,
        formats: Option<bool>,
    ) -> Result<Self> {
        let schema: serde_json::Value = serde_json::from_str(&schema_json)
            .map_err(|err| Error::new(Status::InvalidArg, format!("schema is not JSON: {err}")))?;
        let resources: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&resources_json).map_err(|err| {
                Error::new(
                    Status::InvalidArg,
                    format!("resources are not a JSON object: {err}"),
                )
            })?;
        let resources: Vec<(String, serde_json::Value)> = resources.into_iter().collect();
        let options = SchemaOptions::new().formats(formats.unwrap_or(false));
        SchemaValidator::compile_with(&schema, &resources, options)
            .map(|inner| BindingSchema { inner })
            .map_err(|err| Error::new(Status::InvalidArg, err.to_string()))
    }

    /// Checks only the shape of a schema given as JSON text (depth, and that its evaluation
    /// ends), for schemas another validator runs. Returns what is wrong, or `null`.
    #[napi]
    pub fn check(schema_json: String, resources_json: String) -> Option<String> {
        let schema: serde_json::Value = match serde_json::from_str(&schema_json) {
            Ok(schema) => schema,
            Err(err) => return Some(format!("the schema is not JSON: {err}")),
        };
        let resources: Vec<(String, serde_json::Value)> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&resources_json)
                .map(|map| map.into_iter().collect())
                .unwrap_or_default();
        SchemaValidator::check(&schema, &resources)
            .err()
            .map(|err| err.to_string())
    }

    /// Validates JSON text; returns the issues, or `null` when it is valid.
    #[napi]
    pub fn validate_json(&self, text: String) -> Option<Vec<BindingIssue>> {
        let issues = match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) => self.inner.validate(&value),
            Err(err) => {
                // never quote the text: the position says enough
                return Some(vec![BindingIssue {
                    path: String::new(),
                    message: format!(
                        "is not valid JSON (line {}, column {})",
                        err.line(),
                        err.column()
                    ),
                }]);
            }
        };
        if issues.is_empty() {
            return None;
        }
        Some(
            issues
                .into_iter()
                .map(|issue| BindingIssue {
                    path: issue.path().to_owned(),
                    message: issue.message().to_owned(),
                })
                .collect(),
        )
    }
}
