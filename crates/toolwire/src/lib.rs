//! # toolwire
//!
//! The canonical result of an LLM tool call. Every call ends in exactly one
//! [`ToolResult`] whose [`Disposition`] is success, error (with a [`ToolErrorKind`]),
//! refused, skipped or pending. The result shows its model-visible [`ToolOutput`],
//! answers stable queries, and serializes to a versioned JSON wire format that the
//! Node.js package produces byte for byte. What a model reads of it
//! ([`ToolResult::to_model`]) and each provider's tool-result message ([`adapters`]) are
//! the same JSON the Node.js package renders.
//!
//! ```
//! use toolwire::{ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult};
//!
//! fn lookup(key: &str) -> Result<ToolOutput, ToolExecutionError> {
//!     match key {
//!         "region" => Ok(ToolOutput::text("eu-west-1")),
//!         _ => Err(ToolExecutionError::new(ToolErrorKind::NotFound, format!("No such key: {key}"))),
//!     }
//! }
//!
//! let result = ToolResult::from(lookup("nope"));
//! assert!(result.is_error_kind(ToolErrorKind::NotFound));
//! assert_eq!(result.status_name(), "error");
//! let json = result.to_json();
//! assert_eq!(ToolResult::from_json(&json).unwrap(), result);
//! ```

#![deny(missing_docs)]

pub mod adapters;
mod error;
mod kind;
pub mod metrics;
pub mod model;
mod output;
mod pending;
pub mod record;
mod result;
mod schema;
mod wire;

pub use error::ToolExecutionError;
pub use kind::{ToolErrorKind, UnknownErrorKind};
pub use model::ModelView;
pub use output::{ContentPart, PartKind, ToolOutput};
pub use pending::{
    FieldChange, PendingKind, PendingRequest, MAX_PENDING_SCHEMA_BYTES, MAX_PENDING_SCHEMA_DEPTH,
};
pub use result::{Disposition, ToolResult};
pub use schema::{
    Issue, SchemaCompileError, SchemaOptions, SchemaValidator, MAX_COUNTED, MAX_DEPTH, MAX_ISSUES,
    MAX_LISTED_VALUES, MAX_PATH_TOKEN, SCHEMA_RED_ZONE, STOPPED_AT_FIRST,
};
pub use wire::{to_js_json, WireError, MAX_VALUE_DEPTH, WIRE_VERSION};
