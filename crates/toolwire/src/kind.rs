//! The kind of a failed tool call.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a tool call failed, as a stable snake_case name.
///
/// Each kind has a default retryability, used when an error does not say otherwise.
///
/// ```
/// use toolwire::ToolErrorKind;
///
/// assert_eq!(ToolErrorKind::RateLimited.as_str(), "rate_limited");
/// assert!(ToolErrorKind::Timeout.default_retryable());
/// assert!(!ToolErrorKind::InvalidArgs.default_retryable());
/// assert_eq!("not_found".parse::<ToolErrorKind>(), Ok(ToolErrorKind::NotFound));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The input failed validation, or the tool reported issues with it.
    InvalidArgs,
    /// The call ran past its deadline.
    Timeout,
    /// The call was stopped by an operator, an aborted signal or a policy.
    Cancelled,
    /// Something the tool needed does not exist.
    NotFound,
    /// The caller may not do this. Refusals are normalized to this kind.
    PermissionDenied,
    /// An upstream quota was exhausted.
    RateLimited,
    /// An upstream provider failed.
    Provider,
    /// The network failed.
    Network,
    /// Any other failure.
    Other,
}

impl ToolErrorKind {
    /// Every kind, in a stable order (the order of the wire format's enum).
    ///
    /// ```
    /// assert_eq!(toolwire::ToolErrorKind::ALL.len(), 9);
    /// ```
    pub const ALL: [ToolErrorKind; 9] = [
        ToolErrorKind::InvalidArgs,
        ToolErrorKind::Timeout,
        ToolErrorKind::Cancelled,
        ToolErrorKind::NotFound,
        ToolErrorKind::PermissionDenied,
        ToolErrorKind::RateLimited,
        ToolErrorKind::Provider,
        ToolErrorKind::Network,
        ToolErrorKind::Other,
    ];

    /// The stable snake_case name used on the wire and in telemetry.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolErrorKind::InvalidArgs.as_str(), "invalid_args");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::InvalidArgs => "invalid_args",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::Cancelled => "cancelled",
            ToolErrorKind::NotFound => "not_found",
            ToolErrorKind::PermissionDenied => "permission_denied",
            ToolErrorKind::RateLimited => "rate_limited",
            ToolErrorKind::Provider => "provider",
            ToolErrorKind::Network => "network",
            ToolErrorKind::Other => "other",
        }
    }

    /// Whether an error of this kind is worth retrying when the error does not say.
    ///
    /// Transient kinds (`timeout`, `rate_limited`, `provider`, `network`) are retryable;
    /// the rest would fail the same way again.
    ///
    /// ```
    /// use toolwire::ToolErrorKind;
    /// assert!(ToolErrorKind::Network.default_retryable());
    /// assert!(!ToolErrorKind::Cancelled.default_retryable());
    /// ```
    pub const fn default_retryable(self) -> bool {
        matches!(
            self,
            ToolErrorKind::Timeout
                | ToolErrorKind::RateLimited
                | ToolErrorKind::Provider
                | ToolErrorKind::Network
        )
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string names no [`ToolErrorKind`].
///
/// ```
/// let err = "boom".parse::<toolwire::ToolErrorKind>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown tool error kind \"boom\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownErrorKind(pub String);

impl fmt::Display for UnknownErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tool error kind {:?}", self.0)
    }
}

impl std::error::Error for UnknownErrorKind {}

impl FromStr for ToolErrorKind {
    type Err = UnknownErrorKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolErrorKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownErrorKind(s.to_owned()))
    }
}
