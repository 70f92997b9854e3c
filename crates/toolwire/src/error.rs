//! The structured error of a failed or refused call.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::present;
use crate::ToolErrorKind;

/// A failed or refused tool call, described for the model and the application.
///
/// `message` is public-safe: it is what the model reads. `details` are for the
/// application only and never reach the model or a provider's wire.
///
/// ```
/// use toolwire::{ToolErrorKind, ToolExecutionError};
///
/// let err = ToolExecutionError::new(ToolErrorKind::Timeout, "the search took too long")
///     .with_code("search_timeout");
/// assert_eq!(err.kind(), ToolErrorKind::Timeout);
/// assert!(err.is_retryable()); // the kind's default
/// assert!(!err.is_refusal());
///
/// let no = ToolExecutionError::refusal("not_allowed", "Only owners can publish");
/// assert!(no.is_refusal());
/// assert_eq!(no.kind(), ToolErrorKind::PermissionDenied);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolExecutionError {
    kind: ToolErrorKind,
    message: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    code: Option<String>,
    retryable: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    refusal: bool,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    details: Option<Box<Value>>,
}

impl ToolExecutionError {
    /// An execution error of `kind` with a public-safe message; retryable by the kind's default.
    ///
    /// ```
    /// let err = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::NotFound, "no such file");
    /// assert_eq!(err.message(), "no such file");
    /// ```
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolExecutionError {
            kind,
            message: message.into(),
            code: None,
            retryable: kind.default_retryable(),
            refusal: false,
            details: None,
        }
    }

    /// An intentional refusal: the call did not run, or the tool declined it.
    /// Refusals use the normalized kind `permission_denied` and are never retryable.
    ///
    /// ```
    /// let no = toolwire::ToolExecutionError::refusal("unknown_tool", "No tool named x");
    /// assert_eq!(no.code(), Some("unknown_tool"));
    /// assert!(!no.is_retryable());
    /// ```
    pub fn refusal(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolExecutionError {
            kind: ToolErrorKind::PermissionDenied,
            message: message.into(),
            code: Some(code.into()),
            retryable: false,
            refusal: true,
            details: None,
        }
    }

    /// The same error with a machine-readable code.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Other, "x").with_code("c");
    /// assert_eq!(e.code(), Some("c"));
    /// ```
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The same error with an explicit retryability.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Other, "x").with_retryable(true);
    /// assert!(e.is_retryable());
    /// ```
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The same error with app-only details. Details never reach the model.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Provider, "upstream failed")
    ///     .with_details(serde_json::json!({ "status": 502 }));
    /// assert_eq!(e.details().unwrap()["status"], 502);
    /// ```
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The kind of failure.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Network, "offline");
    /// assert_eq!(e.kind().as_str(), "network");
    /// ```
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The public-safe message the model reads.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Other, "failed");
    /// assert_eq!(e.message(), "failed");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The machine-readable code, if any (refusals always have one).
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Other, "failed");
    /// assert_eq!(e.code(), None);
    /// ```
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// Whether trying again may succeed.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::RateLimited, "slow down");
    /// assert!(e.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// Whether this is an intentional refusal rather than an execution failure.
    ///
    /// ```
    /// assert!(toolwire::ToolExecutionError::refusal("no", "no").is_refusal());
    /// ```
    pub fn is_refusal(&self) -> bool {
        self.refusal
    }

    /// App-only details, if any.
    ///
    /// ```
    /// let e = toolwire::ToolExecutionError::new(toolwire::ToolErrorKind::Other, "failed");
    /// assert!(e.details().is_none());
    /// ```
    pub fn details(&self) -> Option<&Value> {
        self.details.as_deref()
    }

    pub(crate) fn set_refusal(&mut self, refusal: bool) {
        self.refusal = refusal;
    }
}

impl fmt::Display for ToolExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolExecutionError {}
