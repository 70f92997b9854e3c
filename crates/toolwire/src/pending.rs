//! Suspensions: a call that waits for something out of band.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::wire::{deeper_than, present, WireError};

/// The deepest nesting a pending request's `schema` may have (the object itself is level 1).
///
/// ```
/// assert_eq!(toolwire::MAX_PENDING_SCHEMA_DEPTH, 32);
/// ```
pub const MAX_PENDING_SCHEMA_DEPTH: usize = 32;

/// The most bytes a pending request's `schema` may take as compact JSON (UTF-8).
///
/// ```
/// assert_eq!(toolwire::MAX_PENDING_SCHEMA_BYTES, 65_536);
/// ```
pub const MAX_PENDING_SCHEMA_BYTES: usize = 65_536;

/// What a pending call waits for.
///
/// ```
/// assert_eq!(toolwire::PendingKind::Authorization.as_str(), "authorization");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingKind {
    /// An answer from the user, such as a choice.
    Input,
    /// A login or a grant, usually at a URL.
    Authorization,
    /// The user's approval before the tool runs.
    Confirmation,
}

impl PendingKind {
    /// The stable name used on the wire.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingKind::Input.as_str(), "input");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            PendingKind::Input => "input",
            PendingKind::Authorization => "authorization",
            PendingKind::Confirmation => "confirmation",
        }
    }
}

/// One field a call would write or wrote: `before` and `after` are absent for "no value".
///
/// ```
/// use serde_json::json;
/// let change = toolwire::FieldChange::new("/theme").with_before(json!("light")).with_after(json!("dark"));
/// assert_eq!(change.path(), "/theme");
/// assert_eq!(change.before(), Some(&json!("light")));
/// let added = toolwire::FieldChange::new("/new").with_after(json!(null));
/// assert_eq!(added.before(), None);
/// assert_eq!(added.after(), Some(&json!(null)));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldChange {
    path: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    before: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    after: Option<Value>,
}

impl FieldChange {
    /// A change at `path` with no before and no after value yet.
    ///
    /// ```
    /// assert_eq!(toolwire::FieldChange::new("/a").after(), None);
    /// ```
    pub fn new(path: impl Into<String>) -> Self {
        FieldChange {
            path: path.into(),
            before: None,
            after: None,
        }
    }

    /// The same change with the value before it.
    ///
    /// ```
    /// let c = toolwire::FieldChange::new("/a").with_before(serde_json::json!(1));
    /// assert_eq!(c.before(), Some(&serde_json::json!(1)));
    /// ```
    pub fn with_before(mut self, value: Value) -> Self {
        self.before = Some(value);
        self
    }

    /// The same change with the value after it.
    ///
    /// ```
    /// let c = toolwire::FieldChange::new("/a").with_after(serde_json::json!(2));
    /// assert_eq!(c.after(), Some(&serde_json::json!(2)));
    /// ```
    pub fn with_after(mut self, value: Value) -> Self {
        self.after = Some(value);
        self
    }

    /// The JSON Pointer of the field.
    ///
    /// ```
    /// assert_eq!(toolwire::FieldChange::new("/a").path(), "/a");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The value before the change; `None` means the field had no value.
    ///
    /// ```
    /// assert_eq!(toolwire::FieldChange::new("/a").before(), None);
    /// ```
    pub fn before(&self) -> Option<&Value> {
        self.before.as_ref()
    }

    /// The value after the change; `None` means the field has no value.
    ///
    /// ```
    /// assert_eq!(toolwire::FieldChange::new("/a").after(), None);
    /// ```
    pub fn after(&self) -> Option<&Value> {
        self.after.as_ref()
    }
}

/// What a suspended call waits for; `id` is the correlation key for resuming it.
///
/// ```
/// use toolwire::{PendingKind, PendingRequest};
///
/// let req = PendingRequest::new(PendingKind::Input).with_prompt("Which environment?");
/// assert_eq!(req.kind(), PendingKind::Input);
/// assert_eq!(req.prompt(), Some("Which environment?"));
/// assert!(!req.id().is_empty()); // generated
///
/// let login = PendingRequest::authorization("https://example.com/login").with_id("req-1");
/// assert_eq!(login.id(), "req-1");
/// assert_eq!(login.url(), Some("https://example.com/login"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingRequest {
    id: String,
    kind: PendingKind,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    prompt: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    url: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    summary: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    changes: Option<Vec<FieldChange>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    schema: Option<Map<String, Value>>,
}

/// Counts the bytes written to it, keeping none.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `schema` may be the schema of a pending request of `kind`: only an `input`
/// request carries one, nested at most [`MAX_PENDING_SCHEMA_DEPTH`] levels and at most
/// [`MAX_PENDING_SCHEMA_BYTES`] bytes as compact JSON.
fn check_schema(kind: PendingKind, schema: &Map<String, Value>) -> Result<(), WireError> {
    if kind != PendingKind::Input {
        return Err(WireError::new(format!(
            "a pending request schema is only for kind \"input\", not {:?}",
            kind.as_str()
        )));
    }
    if schema
        .values()
        .any(|v| deeper_than(v, MAX_PENDING_SCHEMA_DEPTH - 1))
    {
        return Err(WireError::new(format!(
            "a pending request schema is nested deeper than {MAX_PENDING_SCHEMA_DEPTH} levels"
        )));
    }
    let mut count = ByteCount(0);
    // writing a map of JSON values to a sink that never fails cannot fail
    let _ = serde_json::to_writer(&mut count, schema);
    if count.0 > MAX_PENDING_SCHEMA_BYTES {
        return Err(WireError::new(format!(
            "a pending request schema is longer than {MAX_PENDING_SCHEMA_BYTES} bytes as JSON"
        )));
    }
    Ok(())
}

impl PendingRequest {
    /// A request of `kind` with a freshly generated id (a UUID v4).
    ///
    /// ```
    /// let a = toolwire::PendingRequest::new(toolwire::PendingKind::Input);
    /// let b = toolwire::PendingRequest::new(toolwire::PendingKind::Input);
    /// assert_ne!(a.id(), b.id());
    /// ```
    pub fn new(kind: PendingKind) -> Self {
        PendingRequest {
            id: uuid::Uuid::new_v4().to_string(),
            kind,
            prompt: None,
            url: None,
            summary: None,
            changes: None,
            schema: None,
        }
    }

    /// An authorization request: the user must log in at `url`.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::authorization("https://example.com/login");
    /// assert_eq!(r.kind(), toolwire::PendingKind::Authorization);
    /// ```
    pub fn authorization(url: impl Into<String>) -> Self {
        PendingRequest::new(PendingKind::Authorization).with_url(url)
    }

    /// A confirmation request: the user must approve what `summary` describes.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::confirmation("Delete notes.txt");
    /// assert_eq!(r.summary(), Some("Delete notes.txt"));
    /// ```
    pub fn confirmation(summary: impl Into<String>) -> Self {
        PendingRequest::new(PendingKind::Confirmation).with_summary(summary)
    }

    /// The same request with a caller-chosen id.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::new(toolwire::PendingKind::Input).with_id("x");
    /// assert_eq!(r.id(), "x");
    /// ```
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// The same request with a question for the user.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::new(toolwire::PendingKind::Input).with_prompt("Which?");
    /// assert_eq!(r.prompt(), Some("Which?"));
    /// ```
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// The same request with a URL to visit.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::new(toolwire::PendingKind::Input).with_url("https://e.com");
    /// assert_eq!(r.url(), Some("https://e.com"));
    /// ```
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// The same request with a human summary of what waits.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::new(toolwire::PendingKind::Confirmation).with_summary("Pay 5 EUR");
    /// assert_eq!(r.summary(), Some("Pay 5 EUR"));
    /// ```
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// The same request with the changes the call would make.
    ///
    /// ```
    /// let r = toolwire::PendingRequest::confirmation("Rename")
    ///     .with_changes(vec![toolwire::FieldChange::new("/name").with_after(serde_json::json!("b"))]);
    /// assert_eq!(r.changes().unwrap().len(), 1);
    /// ```
    pub fn with_changes(mut self, changes: Vec<FieldChange>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// The same request with a JSON Schema for the input it waits for (a client may show it
    /// as a form, and `resume` checks the answer against it). Only an `input` request carries
    /// one; the schema nests at most [`MAX_PENDING_SCHEMA_DEPTH`] levels and takes at most
    /// [`MAX_PENDING_SCHEMA_BYTES`] bytes as compact JSON. A document breaking these rules is
    /// rejected when read, so this refuses to make one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwire::{PendingKind, PendingRequest, ToolResult};
    ///
    /// let schema = json!({ "type": "object", "properties": { "env": { "type": "string" } } });
    /// let ask = PendingRequest::new(PendingKind::Input)
    ///     .with_id("ask-1")
    ///     .with_schema(schema.as_object().unwrap().clone())
    ///     .unwrap();
    /// assert_eq!(ask.schema().unwrap()["type"], json!("object"));
    ///
    /// let text = ToolResult::pending(ask).to_json();
    /// assert!(text.contains(r#""schema":{"type":"object""#));
    /// let back = ToolResult::from_json(&text).unwrap();
    /// assert_eq!(back.pending_request().unwrap().schema().unwrap()["type"], json!("object"));
    ///
    /// // only an input request carries a schema
    /// let err = PendingRequest::confirmation("Pay").with_schema(serde_json::Map::new()).unwrap_err();
    /// assert!(err.to_string().contains("only for kind \"input\""));
    /// ```
    pub fn with_schema(mut self, schema: Map<String, Value>) -> Result<Self, WireError> {
        check_schema(self.kind, &schema)?;
        self.schema = Some(schema);
        Ok(self)
    }

    /// Checks the rules a read document must keep that serde does not (its schema's).
    pub(crate) fn check(&self) -> Result<(), WireError> {
        match &self.schema {
            Some(schema) => check_schema(self.kind, schema),
            None => Ok(()),
        }
    }

    /// The correlation id.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingRequest::confirmation("x").with_id("c1").id(), "c1");
    /// ```
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the call waits for.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingRequest::confirmation("x").kind().as_str(), "confirmation");
    /// ```
    pub fn kind(&self) -> PendingKind {
        self.kind
    }

    /// The question for the user, if any.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingRequest::confirmation("x").prompt(), None);
    /// ```
    pub fn prompt(&self) -> Option<&str> {
        self.prompt.as_deref()
    }

    /// The URL to visit, if any.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingRequest::confirmation("x").url(), None);
    /// ```
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The human summary, if any.
    ///
    /// ```
    /// assert_eq!(toolwire::PendingRequest::confirmation("x").summary(), Some("x"));
    /// ```
    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
    }

    /// The changes the call would make, when known.
    ///
    /// ```
    /// assert!(toolwire::PendingRequest::confirmation("x").changes().is_none());
    /// ```
    pub fn changes(&self) -> Option<&[FieldChange]> {
        self.changes.as_deref()
    }

    /// The JSON Schema of the input the call waits for, when given.
    ///
    /// ```
    /// assert!(toolwire::PendingRequest::new(toolwire::PendingKind::Input).schema().is_none());
    /// ```
    pub fn schema(&self) -> Option<&Map<String, Value>> {
        self.schema.as_ref()
    }

    /// A one-line description for the model's text output.
    pub(crate) fn describe(&self) -> String {
        // The URL stays out of model-visible text: it may carry state tokens.
        let detail = self.summary.as_deref().or(self.prompt.as_deref());
        match detail {
            Some(detail) => format!("Waiting for {}: {detail}", self.kind.as_str()),
            None => format!("Waiting for {}", self.kind.as_str()),
        }
    }
}
