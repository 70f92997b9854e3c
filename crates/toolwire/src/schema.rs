//! JSON Schema validation of tool inputs (draft 2020-12 by default, draft-07 when
//! `$schema` says so), compiled once. Schemas are never fetched: a `$ref` must resolve
//! inside the schema or to a resource given at compile time.
//!
//! Schemas and inputs may be hostile, so:
//! - a schema nesting deeper than [`MAX_DEPTH`] levels, or whose evaluation cannot end
//!   (references that loop without descending into the input), does not compile;
//! - an input nesting deeper than [`MAX_DEPTH`] levels is one issue, not a deep descent;
//! - `pattern` and `patternProperties` run on a linear-time regex engine; a pattern it
//!   cannot run (lookaround, backreferences) does not compile;
//! - an issue message never quotes the input, only what the schema says, and an object key
//!   in an issue's path is clipped to [`MAX_PATH_TOKEN`] characters;
//! - at most [`MAX_ISSUES`] issues are listed, then one that says how many more there were;
//!   counting stops after [`MAX_COUNTED`] more, and the count then says "at least"; an
//!   input of more than [`MAX_LISTED_VALUES`] values (fewer for a big schema) is checked
//!   up to its first issue only, and says there may be more;
//! - compiling and validating run where the stack has room for them.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

#[path = "schema_shape.rs"]
mod shape;

/// The deepest JSON nesting of a schema, or of an input, that is read (`{}` nests 1 level).
///
/// ```
/// let deep = (0..200).fold(serde_json::json!(1), |v, _| serde_json::json!([v]));
/// let v = toolwire::SchemaValidator::compile(&serde_json::json!({}), &[]).unwrap();
/// assert!(v.validate(&deep)[0].message().contains("levels"));
/// assert!(toolwire::MAX_DEPTH < 128);
/// ```
pub const MAX_DEPTH: usize = shape::MAX_DEPTH;

/// How many issues [`SchemaValidator::validate`] lists before one that counts the rest.
///
/// ```
/// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"items": {"type": "string"}}), &[]).unwrap();
/// let issues = v.validate(&serde_json::json!(vec![0; 1000]));
/// assert_eq!(issues.len(), toolwire::MAX_ISSUES + 1);
/// assert!(issues[toolwire::MAX_ISSUES].message().contains("900 more"));
/// ```
pub const MAX_ISSUES: usize = 100;

/// How many issues beyond the [`MAX_ISSUES`] listed are counted before validation stops:
/// the last issue then says "at least" that many more.
///
/// ```
/// // 5,000 items, each failing three keywords
/// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"items": {"minimum": 5, "maximum": 1, "multipleOf": 2}}), &[]).unwrap();
/// let issues = v.validate(&serde_json::json!(vec![3; 5_000]));
/// assert_eq!(issues.len(), toolwire::MAX_ISSUES + 1);
/// assert_eq!(issues[toolwire::MAX_ISSUES].message(), "at least 10000 more issues not listed");
/// ```
pub const MAX_COUNTED: usize = 10_000;

/// Every issue is collected only for an input of at most this many values (every value at
/// every level counts), or `MAX_LISTED_VALUES * 100 / n` for a schema of `n > 100` values.
/// A bigger input is checked up to its first issue: the validator collects the errors of
/// a keyword such as `items` all at once, so an invalid input of a million items would
/// otherwise build a million errors. The last issue then says [`STOPPED_AT_FIRST`].
///
/// ```
/// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"items": {"type": "string"}}), &[]).unwrap();
/// let issues = v.validate(&serde_json::json!(vec![0; 1_000_000]));
/// assert_eq!(issues.len(), 2);
/// assert_eq!(issues[0].path(), "/0");
/// assert_eq!(issues[1].message(), toolwire::STOPPED_AT_FIRST);
/// ```
pub const MAX_LISTED_VALUES: usize = 10_000;

/// The message of the last issue when checking stopped at the first issue.
///
/// ```
/// assert!(toolwire::STOPPED_AT_FIRST.contains("may be more"));
/// ```
pub const STOPPED_AT_FIRST: &str = "checking stopped at the first issue; there may be more";

/// The most characters (Unicode scalar values) of an object key that an issue's path
/// quotes. A longer key is cut to its first `MAX_PATH_TOKEN` characters followed by `…`
/// (then escaped as a JSON Pointer token), so a path names the key without carrying it.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"properties": {"a": {}}, "additionalProperties": false});
/// let v = toolwire::SchemaValidator::compile(&schema, &[]).unwrap();
/// let key = "k".repeat(10_000);
/// let issues = v.validate(&json!({ key: 1 }));
/// assert_eq!(issues[0].path(), format!("/{}…", "k".repeat(toolwire::MAX_PATH_TOKEN)));
/// ```
pub const MAX_PATH_TOKEN: usize = 64;

/// Below this much free stack, compiling and validating move to a fresh stack (bounded
/// depths keep every schema that compiles, on every input, within it).
///
/// Debug builds have larger frames, so a larger red zone.
///
/// ```
/// assert!(toolwire::SCHEMA_RED_ZONE >= 4 << 20);
/// ```
pub const SCHEMA_RED_ZONE: usize = if cfg!(debug_assertions) {
    16 << 20
} else {
    4 << 20
};
const RED_ZONE: usize = SCHEMA_RED_ZONE;
/// The size of that fresh stack (reserved address space; only what is used is touched).
const STACK_SIZE: usize = 256 << 20;

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

/// How [`SchemaValidator::compile_with`] reads a schema. The default asserts no `format`.
///
/// ```
/// use serde_json::json;
/// use toolwire::{SchemaOptions, SchemaValidator};
/// let schema = json!({"type": "string", "format": "email"});
/// let lax = SchemaValidator::compile_with(&schema, &[], SchemaOptions::new()).unwrap();
/// assert!(lax.validate(&json!("not an email")).is_empty());
/// let strict = SchemaValidator::compile_with(&schema, &[], SchemaOptions::new().formats(true)).unwrap();
/// assert_eq!(strict.validate(&json!("not an email"))[0].message(), "must match format \"email\"");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemaOptions {
    formats: bool,
}

impl SchemaOptions {
    /// The defaults: `format` is an annotation, as JSON Schema 2020-12 says, in every draft.
    ///
    /// ```
    /// assert!(!toolwire::SchemaOptions::new().asserts_formats());
    /// ```
    pub const fn new() -> Self {
        SchemaOptions { formats: false }
    }

    /// Whether `format` (date-time, email, uri, ...) is asserted: a value that does not
    /// match its format is an issue. Unknown formats are ignored either way.
    ///
    /// ```
    /// assert!(toolwire::SchemaOptions::new().formats(true).asserts_formats());
    /// ```
    pub const fn formats(self, assert: bool) -> Self {
        SchemaOptions { formats: assert }
    }

    /// Whether these options assert `format`.
    ///
    /// ```
    /// assert!(!toolwire::SchemaOptions::default().asserts_formats());
    /// ```
    pub const fn asserts_formats(self) -> bool {
        self.formats
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
    /// The most input values for which every issue is collected.
    listed: usize,
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

const DEFAULT_BASE: &str = "json-schema:///";

/// Runs `f` on a stack with at least [`RED_ZONE`] free.
fn with_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, STACK_SIZE, f)
}

impl SchemaValidator {
    /// Compiles `schema` with the default [`SchemaOptions`]; `resources` are
    /// `(uri, schema)` pairs that `$ref`s may name. Without `$schema`, the schema is read
    /// as draft 2020-12.
    ///
    /// ```
    /// use serde_json::json;
    /// let remote = ("http://localhost:1234/int.json".to_owned(), json!({"type": "integer"}));
    /// let v = toolwire::SchemaValidator::compile(&json!({"$ref": "http://localhost:1234/int.json"}), &[remote]).unwrap();
    /// assert!(!v.validate(&json!("x")).is_empty());
    /// ```
    ///
    /// A schema whose evaluation would never end does not compile:
    ///
    /// ```
    /// use serde_json::json;
    /// let err = toolwire::SchemaValidator::compile(&json!({"$ref": "#", "unevaluatedProperties": false}), &[]).unwrap_err();
    /// assert!(err.to_string().contains("never end"));
    /// ```
    pub fn compile(
        schema: &Value,
        resources: &[(String, Value)],
    ) -> Result<Self, SchemaCompileError> {
        Self::compile_with(schema, resources, SchemaOptions::default())
    }

    /// Compiles `schema` as [`Self::compile`] does, read with `options`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwire::{SchemaOptions, SchemaValidator};
    /// let options = SchemaOptions::new().formats(true);
    /// let v = SchemaValidator::compile_with(&json!({"format": "date"}), &[], options).unwrap();
    /// assert!(v.validate(&json!("2026-12-01")).is_empty());
    /// assert_eq!(v.validate(&json!("yesterday")).len(), 1);
    /// ```
    pub fn compile_with(
        schema: &Value,
        resources: &[(String, Value)],
        options: SchemaOptions,
    ) -> Result<Self, SchemaCompileError> {
        if shape::depth_exceeds(schema, MAX_DEPTH) {
            return Err(SchemaCompileError(format!(
                "the schema nests deeper than {MAX_DEPTH} levels"
            )));
        }
        with_stack(|| Self::compile_checked(schema, resources, options))
    }

    /// Checks only the shape of `schema`: that it nests at most [`MAX_DEPTH`] levels and
    /// that its evaluation ends (no reference loops back without descending into the
    /// input, no chain of more than 64 schemas applied in place). For validators other
    /// than this one, that run the same schema.
    ///
    /// ```
    /// use serde_json::json;
    /// let tree = json!({"properties": {"children": {"items": {"$ref": "#"}}}});
    /// assert!(toolwire::SchemaValidator::check(&tree, &[]).is_ok());
    /// let cycle = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
    /// assert!(toolwire::SchemaValidator::check(&cycle, &[]).is_err());
    /// ```
    pub fn check(schema: &Value, resources: &[(String, Value)]) -> Result<(), SchemaCompileError> {
        if shape::depth_exceeds(schema, MAX_DEPTH) {
            return Err(SchemaCompileError(format!(
                "the schema nests deeper than {MAX_DEPTH} levels"
            )));
        }
        with_stack(|| {
            let known = known_resources(resources);
            check_shape(schema, draft_of(schema), &known)
        })
    }

    fn compile_checked(
        schema: &Value,
        resources: &[(String, Value)],
        schema_options: SchemaOptions,
    ) -> Result<Self, SchemaCompileError> {
        let draft = draft_of(schema);
        let known = known_resources(resources);
        check_shape(schema, draft, &known)?;
        let registry = jsonschema::Registry::new()
            .extend(known.iter().copied())
            .and_then(jsonschema::RegistryBuilder::prepare)
            .map_err(|err| SchemaCompileError(err.to_string()))?;
        let mut options = jsonschema::options()
            .with_registry(&registry)
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .should_validate_formats(schema_options.formats);
        if let Some(draft) = draft {
            options = options.with_draft(draft);
        }
        options
            .build(schema)
            .map(|inner| SchemaValidator {
                inner,
                listed: MAX_LISTED_VALUES * 100 / count_values(schema).max(100),
            })
            .map_err(|err| SchemaCompileError(compile_message(&err)))
    }

    /// Every violation of the schema by `instance`; empty when it is valid. At most
    /// [`MAX_ISSUES`] are listed, then one at the root that says how many more there
    /// were: `"N more issues not listed"`, or, once [`MAX_COUNTED`] more were counted and
    /// validation stopped, `"at least N more issues not listed"`. Messages say what is
    /// wrong, never what the value was; paths clip long keys ([`MAX_PATH_TOKEN`]).
    ///
    /// ```
    /// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"minimum": 5}), &[]).unwrap();
    /// assert!(v.validate(&serde_json::json!(7)).is_empty());
    /// let v = toolwire::SchemaValidator::compile(&serde_json::json!({"minLength": 40}), &[]).unwrap();
    /// let issues = v.validate(&serde_json::json!("hunter2-SECRET"));
    /// assert!(!issues[0].message().contains("hunter2"));
    /// ```
    pub fn validate(&self, instance: &Value) -> Vec<Issue> {
        if shape::depth_exceeds(instance, MAX_DEPTH) {
            return vec![Issue {
                path: String::new(),
                message: format!("nests deeper than {MAX_DEPTH} levels"),
            }];
        }
        with_stack(|| {
            if self.inner.is_valid(instance) {
                return Vec::new();
            }
            let mut issues = Vec::new();
            if count_values(instance) > self.listed {
                if let Err(err) = self.inner.validate(instance) {
                    push_issues(&err, &mut issues);
                }
                issues.push(Issue {
                    path: String::new(),
                    message: STOPPED_AT_FIRST.to_owned(),
                });
                return issues;
            }
            let mut more = 0usize;
            let mut stopped = false;
            for err in self.inner.iter_errors(instance) {
                more += push_issues(&err, &mut issues);
                if more >= MAX_COUNTED {
                    stopped = true;
                    break;
                }
            }
            if more > 0 {
                let at_least = if stopped { "at least " } else { "" };
                issues.push(Issue {
                    path: String::new(),
                    message: format!("{at_least}{more} more issues not listed"),
                });
            }
            issues
        })
    }
}

/// How many values `value` holds, itself included, at every level.
fn count_values(value: &Value) -> usize {
    let is_container = |v: &&Value| v.is_array() || v.is_object();
    let mut count = 1;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => {
                count += items.len();
                stack.extend(items.iter().filter(is_container));
            }
            Value::Object(map) => {
                count += map.len();
                stack.extend(map.values().filter(is_container));
            }
            _ => {}
        }
    }
    count
}

/// The draft `schema` is read as: 2020-12 without `$schema`, draft-07 when it says so,
/// else what the compiler detects.
fn draft_of(schema: &Value) -> Option<jsonschema::Draft> {
    match schema.get("$schema").and_then(Value::as_str) {
        None => Some(jsonschema::Draft::Draft202012),
        Some(uri) if DRAFT7.contains(&uri) => Some(jsonschema::Draft::Draft7),
        Some(_) => None,
    }
}

/// The resources a schema may name. One whose `$schema` names no draft this validator
/// knows is left out: reading it would need its meta-schema, and nothing is ever fetched.
fn known_resources(resources: &[(String, Value)]) -> Vec<(&str, &Value)> {
    resources
        .iter()
        .filter(
            |(_, contents)| match contents.get("$schema").and_then(Value::as_str) {
                None => true,
                Some(uri) => KNOWN_DRAFTS.contains(&uri.trim_end_matches('#')),
            },
        )
        .filter(|(_, contents)| !shape::depth_exceeds(contents, MAX_DEPTH))
        .filter(|(uri, _)| referencing::uri::from_str(uri.trim_end_matches('#')).is_ok())
        .map(|(uri, contents)| (uri.as_str(), contents))
        .collect()
}

/// Checks the shape of `schema` (see the `shape` module) against a registry like the one
/// the compiler builds.
fn check_shape(
    schema: &Value,
    draft: Option<jsonschema::Draft>,
    resources: &[(&str, &Value)],
) -> Result<(), SchemaCompileError> {
    let draft = draft.unwrap_or_default().detect(schema);
    let id = schema
        .get(draft.id_keyword())
        .and_then(Value::as_str)
        .filter(|id| !id.starts_with('#'));
    let Ok(base) = referencing::uri::from_str(id.unwrap_or(DEFAULT_BASE)) else {
        return Ok(()); // the compiler reports it
    };
    let registry = referencing::Registry::new()
        .draft(draft)
        .retrieve_known_draft_meta_schemas(false)
        .extend(resources.iter().copied())
        .and_then(|builder| builder.add(base.as_str(), draft.create_resource_ref(schema)))
        .and_then(referencing::RegistryBuilder::prepare);
    let Ok(registry) = registry else {
        return Ok(()); // the compiler reports it
    };
    shape::check_evaluation(schema, draft, &registry, base)
        .map_err(|why| SchemaCompileError(format!("the schema is not usable: {why}")))
}

/// A compile error's message: what the schema says is wrong (never an instance value, as
/// there is none yet).
fn compile_message(err: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match err.kind() {
        K::Pattern { pattern } => format!(
            "pattern \"{pattern}\" cannot run on the linear-time regex engine (lookaround and backreferences are not supported)"
        ),
        K::Format { format } if format == "regex" => {
            "a pattern cannot run on the linear-time regex engine (lookaround and backreferences are not supported), or is not a regex".to_owned()
        }
        _ => err.to_string(),
    }
}

/// An object key as a JSON Pointer token: clipped to [`MAX_PATH_TOKEN`] characters
/// (then `…`), then escaped.
fn pointer_token(key: &str) -> String {
    let clipped = match key.char_indices().nth(MAX_PATH_TOKEN) {
        Some((end, _)) => format!("{}…", &key[..end]),
        None => key.to_owned(),
    };
    clipped.replace('~', "~0").replace('/', "~1")
}

/// A JSON Pointer from the validator with every token clipped as [`pointer_token`] does.
fn clipped_path(pointer: &str) -> String {
    // a token of at most MAX_PATH_TOKEN bytes has at most that many characters
    if pointer
        .split('/')
        .all(|token| token.len() <= MAX_PATH_TOKEN)
    {
        return pointer.to_owned();
    }
    let mut out = String::with_capacity(pointer.len().min(1024));
    for token in pointer.split('/').skip(1) {
        out.push('/');
        if token.len() <= MAX_PATH_TOKEN {
            out.push_str(token);
        } else {
            out.push_str(&pointer_token(&token.replace("~1", "/").replace("~0", "~")));
        }
    }
    out
}

fn limit(value: &Value) -> String {
    value.to_string()
}

/// Adds the issues one validation error stands for to `issues`, up to [`MAX_ISSUES`] in
/// all, and returns how many it stands for beyond those. Object keywords that name several
/// keys give one issue per key, at that key's path.
fn push_issues(err: &jsonschema::ValidationError<'_>, issues: &mut Vec<Issue>) -> usize {
    let room = MAX_ISSUES.saturating_sub(issues.len());
    let keys = match err.kind() {
        jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
        | jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            unexpected.as_slice()
        }
        _ => {
            if room == 0 {
                return 1;
            }
            issues.push(issue_of(err));
            return 0;
        }
    };
    let path = clipped_path(err.instance_path().as_str());
    issues.extend(keys.iter().take(room).map(|key| Issue {
        path: format!("{path}/{}", pointer_token(key)),
        message: "is not allowed".to_owned(),
    }));
    keys.len().saturating_sub(room)
}

/// The issue one validation error (other than a list of unexpected keys) stands for.
fn issue_of(err: &jsonschema::ValidationError<'_>) -> Issue {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let path = clipped_path(err.instance_path().as_str());
    let one = |message: String| Issue {
        path: path.clone(),
        message,
    };
    match err.kind() {
        K::AdditionalItems { limit } => one(format!("must NOT have more than {limit} items")),
        K::AdditionalProperties { .. } | K::UnevaluatedProperties { .. } => {
            one("is not allowed".to_owned())
        }
        K::UnevaluatedItems { .. } => {
            one("must NOT have items beyond those the schema evaluates".to_owned())
        }
        K::AnyOf { .. } => one("must match a schema in anyOf".to_owned()),
        K::OneOfNotValid { .. } => one("must match exactly one schema in oneOf".to_owned()),
        K::OneOfMultipleValid { .. } => {
            one("must match exactly one schema in oneOf, but matches more than one".to_owned())
        }
        K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } => {
            one("could not be checked against a pattern".to_owned())
        }
        K::Constant { .. } => one("must be equal to the constant".to_owned()),
        K::Enum { .. } => one("must be equal to one of the allowed values".to_owned()),
        K::Contains => one("must contain an item that matches the contains schema".to_owned()),
        K::ContentEncoding { content_encoding } => {
            one(format!("must be encoded as {content_encoding}"))
        }
        K::ContentMediaType { content_media_type } => {
            one(format!("must be of media type {content_media_type}"))
        }
        K::Custom { keyword, .. } => one(format!("fails {keyword}")),
        K::ExclusiveMaximum { limit: l } => one(format!("must be < {}", limit(l))),
        K::ExclusiveMinimum { limit: l } => one(format!("must be > {}", limit(l))),
        K::Maximum { limit: l } => one(format!("must be <= {}", limit(l))),
        K::Minimum { limit: l } => one(format!("must be >= {}", limit(l))),
        K::FalseSchema => one("is not allowed (the schema is false)".to_owned()),
        K::Format { format } => one(format!("must match format \"{format}\"")),
        K::FromUtf8 { .. } => one("must decode to valid UTF-8".to_owned()),
        K::MaxItems { limit } => one(format!("must NOT have more than {limit} items")),
        K::MinItems { limit } => one(format!("must NOT have fewer than {limit} items")),
        K::MaxLength { limit } => one(format!("must NOT have more than {limit} characters")),
        K::MinLength { limit } => one(format!("must NOT have fewer than {limit} characters")),
        K::MaxProperties { limit } => one(format!("must NOT have more than {limit} properties")),
        K::MinProperties { limit } => one(format!("must NOT have fewer than {limit} properties")),
        K::MultipleOf { multiple_of } => one(format!("must be a multiple of {multiple_of}")),
        K::Not { .. } => one("must NOT be valid against the schema in not".to_owned()),
        K::Pattern { pattern } => one(format!("must match pattern \"{pattern}\"")),
        K::PropertyNames { .. } => one("has a property name that is not valid".to_owned()),
        K::Required { property } => match property.as_str() {
            Some(key) => Issue {
                path: format!("{path}/{}", pointer_token(key)),
                message: "is required".to_owned(),
            },
            None => one("is missing a required property".to_owned()),
        },
        K::Type { kind } => {
            let names: Vec<String> = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
            };
            one(format!("must be {}", names.join(" or ")))
        }
        K::UniqueItems => one("must NOT have duplicate items".to_owned()),
        K::Referencing(_) => one("could not be checked: a reference does not resolve".to_owned()),
    }
}
