//! The canonical result of one tool call.

use serde_json::{Map, Value};

use crate::{PendingRequest, ToolErrorKind, ToolExecutionError, ToolOutput};

/// The one disposition of a [`ToolResult`].
///
/// ```
/// use toolwire::{Disposition, ToolOutput, ToolResult};
/// assert_eq!(ToolResult::success(ToolOutput::text("ok")).disposition(), Disposition::Success);
/// assert_eq!(Disposition::Refused.as_str(), "refused");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Disposition {
    /// The tool completed.
    Success,
    /// The tool failed.
    Error,
    /// The call did not run, or the tool declined it.
    Refused,
    /// Runtime policy skipped the body.
    Skipped,
    /// The call waits for input, authorization or confirmation.
    Pending,
}

impl Disposition {
    /// Every disposition, in [`Self::code`] order.
    ///
    /// ```
    /// use toolwire::Disposition;
    /// assert_eq!(Disposition::ALL[2], Disposition::Refused);
    /// assert!(Disposition::ALL.iter().enumerate().all(|(i, d)| d.code() as usize == i));
    /// ```
    pub const ALL: [Disposition; 5] = [
        Disposition::Success,
        Disposition::Error,
        Disposition::Refused,
        Disposition::Skipped,
        Disposition::Pending,
    ];

    /// The name used as `status` on the wire.
    ///
    /// ```
    /// assert_eq!(toolwire::Disposition::Pending.as_str(), "pending");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Disposition::Success => "success",
            Disposition::Error => "error",
            Disposition::Refused => "refused",
            Disposition::Skipped => "skipped",
            Disposition::Pending => "pending",
        }
    }

    /// The stable telemetry name: `success`, `error`, `denied`, `skipped` or `pending`.
    ///
    /// ```
    /// assert_eq!(toolwire::Disposition::Refused.status_name(), "denied");
    /// ```
    pub const fn status_name(self) -> &'static str {
        match self {
            Disposition::Success => "success",
            Disposition::Error => "error",
            Disposition::Refused => "denied",
            Disposition::Skipped => "skipped",
            Disposition::Pending => "pending",
        }
    }

    /// The disposition a telemetry name ([`Self::status_name`]) stands for.
    ///
    /// ```
    /// use toolwire::Disposition;
    /// assert_eq!(Disposition::from_status_name("denied"), Some(Disposition::Refused));
    /// assert_eq!(Disposition::from_status_name("refused"), None);
    /// ```
    pub fn from_status_name(name: &str) -> Option<Disposition> {
        Disposition::ALL
            .into_iter()
            .find(|d| d.status_name() == name)
    }

    /// The numeric code in metrics batches ([`crate::metrics::MetricsRecorder::record_batch`]):
    /// 0 success, 1 error, 2 refused (`denied`), 3 skipped, 4 pending.
    ///
    /// ```
    /// assert_eq!(toolwire::Disposition::Pending.code(), 4);
    /// ```
    pub const fn code(self) -> u8 {
        match self {
            Disposition::Success => 0,
            Disposition::Error => 1,
            Disposition::Refused => 2,
            Disposition::Skipped => 3,
            Disposition::Pending => 4,
        }
    }

    /// The disposition of a numeric code, if it names one.
    ///
    /// ```
    /// use toolwire::Disposition;
    /// assert_eq!(Disposition::from_code(2), Some(Disposition::Refused));
    /// assert_eq!(Disposition::from_code(5), None);
    /// ```
    pub const fn from_code(code: u8) -> Option<Disposition> {
        match code {
            0 => Some(Disposition::Success),
            1 => Some(Disposition::Error),
            2 => Some(Disposition::Refused),
            3 => Some(Disposition::Skipped),
            4 => Some(Disposition::Pending),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum State {
    Success,
    /// An execution error or, when the error's refusal flag is set, a refusal.
    Failed(ToolExecutionError),
    Skipped(String),
    Pending(PendingRequest),
}

/// The single structured execution view used by dispatch, hooks and telemetry.
///
/// Each result has exactly one disposition. The tagged state is private, so tool
/// authors keep returning ordinary `Result` values while runtime callers use the
/// stable query methods.
///
/// ```
/// use toolwire::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
///
/// let ok = ToolResult::success(ToolOutput::text("42"));
/// assert!(ok.is_success());
/// assert_eq!(ok.status_name(), "success");
///
/// let failed = ToolResult::failed(ToolExecutionError::new(ToolErrorKind::Timeout, "too slow"));
/// assert!(failed.is_error_kind(ToolErrorKind::Timeout));
/// assert_eq!(failed.output().as_text(), "too slow");
///
/// let refused = ToolResult::failed(ToolExecutionError::refusal("not_allowed", "Owners only"));
/// assert!(refused.is_refused() && !refused.is_error());
/// assert!(!refused.is_error_kind(ToolErrorKind::PermissionDenied));
/// assert_eq!(refused.status_name(), "denied");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub(crate) state: State,
    pub(crate) output: ToolOutput,
    pub(crate) untrusted: bool,
    pub(crate) metadata: Option<Map<String, Value>>,
}

impl ToolResult {
    fn with_state(state: State, output: ToolOutput) -> Self {
        ToolResult {
            state,
            output,
            untrusted: false,
            metadata: None,
        }
    }

    /// Creates a successful canonical tool result.
    ///
    /// ```
    /// let r = toolwire::ToolResult::success(toolwire::ToolOutput::text("done"));
    /// assert_eq!(r.output().as_text(), "done");
    /// ```
    pub fn success(output: ToolOutput) -> Self {
        Self::with_state(State::Success, output)
    }

    /// Creates a failed or refused canonical tool result: an error whose refusal flag
    /// is set gives a refused result. The model-visible output is the error's message.
    ///
    /// ```
    /// use toolwire::{ToolExecutionError, ToolResult};
    /// assert!(ToolResult::failed(ToolExecutionError::refusal("no", "no")).is_refused());
    /// ```
    pub fn failed(error: ToolExecutionError) -> Self {
        let output = ToolOutput::text(error.message());
        Self::with_state(State::Failed(error), output)
    }

    /// Creates a result for a call skipped by runtime policy.
    ///
    /// ```
    /// let r = toolwire::ToolResult::skipped("dry run");
    /// assert!(r.is_skipped());
    /// assert_eq!(r.skip_reason(), Some("dry run"));
    /// assert_eq!(r.output().as_text(), "Skipped: dry run");
    /// ```
    pub fn skipped(reason: impl Into<String>) -> Self {
        let reason = reason.into();
        let output = ToolOutput::text(format!("Skipped: {reason}"));
        Self::with_state(State::Skipped(reason), output)
    }

    /// Creates a result for a call suspended until `request` is answered.
    ///
    /// ```
    /// use toolwire::{PendingKind, PendingRequest, ToolResult};
    /// let r = ToolResult::pending(PendingRequest::new(PendingKind::Input).with_prompt("Which env?"));
    /// assert!(r.is_pending());
    /// assert_eq!(r.pending_request().unwrap().prompt(), Some("Which env?"));
    /// assert_eq!(r.output().as_text(), "Waiting for input: Which env?");
    /// assert_eq!(r.status_name(), "pending");
    /// ```
    pub fn pending(request: PendingRequest) -> Self {
        let output = ToolOutput::text(request.describe());
        Self::with_state(State::Pending(request), output)
    }

    /// The same result with its model-visible output replaced, keeping its disposition:
    /// a success or a skip carries the new output; a failure or refusal keeps its error
    /// and presents the new output to the model.
    ///
    /// ```
    /// use toolwire::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
    /// let r = ToolResult::failed(ToolExecutionError::new(ToolErrorKind::NotFound, "missing"))
    ///     .with_output(ToolOutput::text("No such file: a.txt. Try list_dir."));
    /// assert!(r.is_error_kind(ToolErrorKind::NotFound));
    /// assert_eq!(r.output().as_text(), "No such file: a.txt. Try list_dir.");
    /// ```
    pub fn with_output(mut self, output: ToolOutput) -> Self {
        self.output = output;
        self
    }

    /// The same result marked as carrying untrusted content (data, not instructions).
    ///
    /// ```
    /// let r = toolwire::ToolResult::success(toolwire::ToolOutput::text("<html>")).with_untrusted(true);
    /// assert!(r.is_untrusted());
    /// ```
    pub fn with_untrusted(mut self, untrusted: bool) -> Self {
        self.untrusted = untrusted;
        self
    }

    /// The same result with app-only metadata. Metadata never reaches the model.
    ///
    /// ```
    /// let mut meta = serde_json::Map::new();
    /// meta.insert("count".into(), 2.into());
    /// let r = toolwire::ToolResult::success(toolwire::ToolOutput::text("2 hits")).with_metadata(meta);
    /// assert_eq!(r.metadata().unwrap()["count"], 2);
    /// ```
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Current model-visible output, including replacements made by [`Self::with_output`].
    ///
    /// ```
    /// assert_eq!(toolwire::ToolResult::skipped("off").output().as_text(), "Skipped: off");
    /// ```
    pub fn output(&self) -> &ToolOutput {
        &self.output
    }

    /// Structured execution error, if execution failed. Intentional refusals are
    /// available through [`Self::refusal`] instead.
    ///
    /// ```
    /// use toolwire::{ToolExecutionError, ToolResult};
    /// assert!(ToolResult::failed(ToolExecutionError::refusal("no", "no")).error().is_none());
    /// ```
    pub fn error(&self) -> Option<&ToolExecutionError> {
        match &self.state {
            State::Failed(error) if !error.is_refusal() => Some(error),
            _ => None,
        }
    }

    /// Structured refusal details, if the tool intentionally declined the call.
    /// This is mutually exclusive with [`Self::error`].
    ///
    /// ```
    /// use toolwire::{ToolExecutionError, ToolResult};
    /// let r = ToolResult::failed(ToolExecutionError::refusal("not_allowed", "Owners only"));
    /// assert_eq!(r.refusal().unwrap().code(), Some("not_allowed"));
    /// ```
    pub fn refusal(&self) -> Option<&ToolExecutionError> {
        match &self.state {
            State::Failed(error) if error.is_refusal() => Some(error),
            _ => None,
        }
    }

    /// The request a pending call waits on.
    ///
    /// ```
    /// assert!(toolwire::ToolResult::skipped("x").pending_request().is_none());
    /// ```
    pub fn pending_request(&self) -> Option<&PendingRequest> {
        match &self.state {
            State::Pending(request) => Some(request),
            _ => None,
        }
    }

    /// Why runtime policy skipped the call.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolResult::skipped("x").skip_reason(), Some("x"));
    /// ```
    pub fn skip_reason(&self) -> Option<&str> {
        match &self.state {
            State::Skipped(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether the content is untrusted (data, not instructions).
    ///
    /// ```
    /// assert!(!toolwire::ToolResult::skipped("x").is_untrusted());
    /// ```
    pub fn is_untrusted(&self) -> bool {
        self.untrusted
    }

    /// App-only metadata, if any.
    ///
    /// ```
    /// assert!(toolwire::ToolResult::skipped("x").metadata().is_none());
    /// ```
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        self.metadata.as_ref()
    }

    /// The one disposition of this result.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolResult::skipped("x").disposition(), toolwire::Disposition::Skipped);
    /// ```
    pub fn disposition(&self) -> Disposition {
        match &self.state {
            State::Success => Disposition::Success,
            State::Failed(error) if error.is_refusal() => Disposition::Refused,
            State::Failed(_) => Disposition::Error,
            State::Skipped(_) => Disposition::Skipped,
            State::Pending(_) => Disposition::Pending,
        }
    }

    /// Whether the tool completed successfully.
    ///
    /// ```
    /// assert!(toolwire::ToolResult::success(toolwire::ToolOutput::text("")).is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self.state, State::Success)
    }

    /// Whether execution failed. An intentional refusal is not an execution error;
    /// inspect [`Self::is_refused`] instead.
    ///
    /// ```
    /// use toolwire::{ToolErrorKind, ToolExecutionError, ToolResult};
    /// assert!(ToolResult::failed(ToolExecutionError::new(ToolErrorKind::Other, "x")).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.error().is_some()
    }

    /// Whether the framework skipped execution before the tool body ran.
    ///
    /// ```
    /// assert!(toolwire::ToolResult::skipped("x").is_skipped());
    /// ```
    pub fn is_skipped(&self) -> bool {
        matches!(self.state, State::Skipped(_))
    }

    /// Whether a tool refused execution.
    ///
    /// ```
    /// use toolwire::{ToolExecutionError, ToolResult};
    /// assert!(ToolResult::failed(ToolExecutionError::refusal("no", "no")).is_refused());
    /// ```
    pub fn is_refused(&self) -> bool {
        self.refusal().is_some()
    }

    /// Whether the call is suspended, waiting on a [`PendingRequest`].
    ///
    /// ```
    /// assert!(!toolwire::ToolResult::skipped("x").is_pending());
    /// ```
    pub fn is_pending(&self) -> bool {
        matches!(self.state, State::Pending(_))
    }

    /// Whether this is an error of exactly `kind`. A refusal does not match, even
    /// though its envelope uses the normalized [`ToolErrorKind::PermissionDenied`] kind.
    ///
    /// ```
    /// use toolwire::{ToolErrorKind, ToolExecutionError, ToolResult};
    /// let r = ToolResult::failed(ToolExecutionError::new(ToolErrorKind::PermissionDenied, "no token"));
    /// assert!(r.is_error_kind(ToolErrorKind::PermissionDenied));
    /// ```
    pub fn is_error_kind(&self, kind: ToolErrorKind) -> bool {
        self.error().is_some_and(|error| error.kind() == kind)
    }

    /// Converts success or skipped dispositions to `Ok(output)` and errors or refusals
    /// to `Err(error)`. A pending call has no answer yet: it becomes an `other` error
    /// with code `pending`.
    ///
    /// ```
    /// use toolwire::{PendingRequest, ToolOutput, ToolResult};
    /// assert_eq!(ToolResult::success(ToolOutput::text("a")).into_result().unwrap().as_text(), "a");
    /// let err = ToolResult::pending(PendingRequest::authorization("https://e.com")).into_result().unwrap_err();
    /// assert_eq!(err.code(), Some("pending"));
    /// ```
    pub fn into_result(self) -> Result<ToolOutput, ToolExecutionError> {
        match self.state {
            State::Success | State::Skipped(_) => Ok(self.output),
            State::Failed(error) => Err(error),
            State::Pending(request) => Err(ToolExecutionError::new(
                ToolErrorKind::Other,
                request.describe(),
            )
            .with_code("pending")),
        }
    }

    /// Stable telemetry disposition: `success`, `error`, `denied`, `skipped` or `pending`.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolResult::skipped("x").status_name(), "skipped");
    /// ```
    pub fn status_name(&self) -> &'static str {
        self.disposition().status_name()
    }
}

impl From<Result<ToolOutput, ToolExecutionError>> for ToolResult {
    /// Tool authors return ordinary `Result`s; this makes the canonical result of one.
    ///
    /// ```
    /// use toolwire::{ToolOutput, ToolResult};
    /// let r: ToolResult = Ok(ToolOutput::text("hi")).into();
    /// assert!(r.is_success());
    /// ```
    fn from(result: Result<ToolOutput, ToolExecutionError>) -> Self {
        match result {
            Ok(output) => ToolResult::success(output),
            Err(error) => ToolResult::failed(error),
        }
    }
}
