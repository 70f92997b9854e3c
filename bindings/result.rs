//! The canonical result's wire codec and tables.

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolwire::{ContentPart, Disposition, PartKind, PendingKind, ToolErrorKind, ToolResult};

/// One error kind and its default retryability.
#[napi(object)]
pub struct BindingErrorKind {
    pub name: String,
    pub retryable: bool,
}

/// One disposition: its wire `status` and its telemetry `status_name`.
#[napi(object)]
pub struct BindingDisposition {
    pub status: String,
    pub status_name: String,
}

/// The core's tables, read once when the package loads.
#[napi(object)]
pub struct BindingCoreTables {
    pub wire_version: u32,
    pub dispositions: Vec<BindingDisposition>,
    pub error_kinds: Vec<BindingErrorKind>,
    pub pending_kinds: Vec<String>,
    /// The deepest nesting a JSON value inside a result may have (`toolwire::MAX_VALUE_DEPTH`).
    pub max_value_depth: u32,
    /// The deepest nesting of a pending request's schema (`toolwire::MAX_PENDING_SCHEMA_DEPTH`).
    pub max_pending_schema_depth: u32,
    /// The most bytes a pending request's schema takes as compact JSON (`toolwire::MAX_PENDING_SCHEMA_BYTES`).
    pub max_pending_schema_bytes: u32,
}

/// The core's wire version, dispositions, error kinds and pending kinds.
#[napi]
pub fn core_tables() -> BindingCoreTables {
    let dispositions = [
        Disposition::Success,
        Disposition::Error,
        Disposition::Refused,
        Disposition::Skipped,
        Disposition::Pending,
    ];
    BindingCoreTables {
        wire_version: toolwire::WIRE_VERSION as u32,
        dispositions: dispositions
            .into_iter()
            .map(|d| BindingDisposition {
                status: d.as_str().to_owned(),
                status_name: d.status_name().to_owned(),
            })
            .collect(),
        error_kinds: ToolErrorKind::ALL
            .into_iter()
            .map(|kind| BindingErrorKind {
                name: kind.as_str().to_owned(),
                retryable: kind.default_retryable(),
            })
            .collect(),
        pending_kinds: [
            PendingKind::Input,
            PendingKind::Authorization,
            PendingKind::Confirmation,
        ]
        .into_iter()
        .map(|kind| kind.as_str().to_owned())
        .collect(),
        max_value_depth: toolwire::MAX_VALUE_DEPTH as u32,
        max_pending_schema_depth: toolwire::MAX_PENDING_SCHEMA_DEPTH as u32,
        max_pending_schema_bytes: toolwire::MAX_PENDING_SCHEMA_BYTES as u32,
    }
}

/// Parses and validates a wire document and returns its canonical serialization.
/// A malformed document throws an error whose message says what is wrong.
#[napi]
pub fn canonicalize_result(text: String) -> Result<String> {
    ToolResult::from_json(&text)
        .map(|result| result.to_json())
        .map_err(|err| Error::new(Status::InvalidArg, err.to_string()))
}

/// Checks one content part as the core's wire decoder does (`ContentPart::check_fields`):
/// returns what is wrong, or `null` when the core accepts it.
#[napi]
pub fn check_content_part(
    kind: String,
    mime_type: String,
    data: Option<String>,
    url: Option<String>,
) -> Option<String> {
    let kind = match kind.as_str() {
        "image" => PartKind::Image,
        "audio" => PartKind::Audio,
        "file" => PartKind::File,
        other => {
            return Some(format!(
                "unknown content part type {other:?}; expected \"image\", \"audio\" or \"file\""
            ))
        }
    };
    ContentPart::check_fields(kind, &mime_type, data.as_deref(), url.as_deref())
        .err()
        .map(|err| err.to_string())
}
