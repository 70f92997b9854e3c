//! The model-visible output of a call: text, plus optional content parts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{present, WireError};

/// What the model sees of a call.
///
/// `text` is always present: it is what a transcript, a compactor and a text-only
/// provider see. `parts` carry media in addition to the text, never instead of it.
/// `structured` keeps the JSON value the text was rendered from, when there was one.
///
/// ```
/// use toolwire::{ContentPart, ToolOutput};
///
/// let out = ToolOutput::text("screenshot, 1280x720 png")
///     .with_part(ContentPart::image_data("image/png", "iVBORw0KGgo="));
/// assert_eq!(out.as_text(), "screenshot, 1280x720 png");
/// assert_eq!(out.parts().len(), 1);
///
/// let json = ToolOutput::json(serde_json::json!({ "id": 7 }));
/// assert_eq!(json.as_text(), r#"{"id":7}"#);
/// assert_eq!(json.structured().unwrap()["id"], 7);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOutput {
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parts: Vec<ContentPart>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    structured: Option<Value>,
}

impl ToolOutput {
    /// A text-only output.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolOutput::text("done").as_text(), "done");
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            parts: Vec::new(),
            structured: None,
        }
    }

    /// A structured output: the text is the compact JSON serialization of `value`,
    /// and the value itself is kept for structured channels (MCP `structuredContent`).
    /// A JSON string is taken as plain text.
    ///
    /// ```
    /// let out = toolwire::ToolOutput::json(serde_json::json!("plain"));
    /// assert_eq!(out.as_text(), "plain");
    /// assert!(out.structured().is_none());
    /// ```
    pub fn json(value: Value) -> Self {
        match value {
            Value::String(text) => ToolOutput::text(text),
            value => ToolOutput {
                text: value.to_string(),
                parts: Vec::new(),
                structured: Some(value),
            },
        }
    }

    /// The same output with one more content part.
    ///
    /// ```
    /// let out = toolwire::ToolOutput::text("a clip")
    ///     .with_part(toolwire::ContentPart::audio_url("audio/wav", "https://example.com/a.wav"));
    /// assert_eq!(out.parts()[0].url(), Some("https://example.com/a.wav"));
    /// ```
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.parts.push(part);
        self
    }

    /// The text handed to the model.
    ///
    /// ```
    /// assert_eq!(toolwire::ToolOutput::text("hi").as_text(), "hi");
    /// ```
    pub fn as_text(&self) -> &str {
        &self.text
    }

    /// The content parts, in order; empty for a text-only output.
    ///
    /// ```
    /// assert!(toolwire::ToolOutput::text("hi").parts().is_empty());
    /// ```
    pub fn parts(&self) -> &[ContentPart] {
        &self.parts
    }

    /// The structured value the text was rendered from, if any.
    ///
    /// ```
    /// assert!(toolwire::ToolOutput::text("hi").structured().is_none());
    /// ```
    pub fn structured(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    pub(crate) fn check(&self) -> Result<(), WireError> {
        self.parts.iter().try_for_each(ContentPart::check)
    }
}

/// What kind of media a [`ContentPart`] carries.
///
/// ```
/// assert_eq!(toolwire::PartKind::File.as_str(), "file");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PartKind {
    /// A picture (`image/*`).
    Image,
    /// A sound clip (`audio/*`).
    Audio,
    /// Any other file, such as a PDF.
    File,
}

impl PartKind {
    /// The stable name used on the wire.
    ///
    /// ```
    /// assert_eq!(toolwire::PartKind::Image.as_str(), "image");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            PartKind::Image => "image",
            PartKind::Audio => "audio",
            PartKind::File => "file",
        }
    }
}

/// One piece of non-text output: a MIME type and either base64 data or a URL.
///
/// ```
/// use toolwire::{ContentPart, PartKind};
///
/// let pdf = ContentPart::file_data("application/pdf", "JVBERi0=").with_name("report.pdf");
/// assert_eq!(pdf.kind(), PartKind::File);
/// assert_eq!(pdf.mime_type(), "application/pdf");
/// assert_eq!(pdf.data(), Some("JVBERi0="));
/// assert_eq!(pdf.url(), None);
/// assert_eq!(pdf.name(), Some("report.pdf"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentPart {
    #[serde(rename = "type")]
    kind: PartKind,
    #[serde(rename = "mimeType")]
    mime_type: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    data: Option<String>,
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
    name: Option<String>,
}

/// A MIME type's type or subtype name (RFC 6838 `restricted-name`): 1 to 127 letters, digits
/// and `!#$&^_.+-`, the first a letter or a digit.
fn is_restricted_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=127).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&c))
}

impl ContentPart {
    fn new(
        kind: PartKind,
        mime_type: impl Into<String>,
        data: Option<String>,
        url: Option<String>,
    ) -> Self {
        ContentPart {
            kind,
            mime_type: mime_type.into(),
            data,
            url,
            name: None,
        }
    }

    /// An image given as base64 data.
    ///
    /// ```
    /// let p = toolwire::ContentPart::image_data("image/png", "iVBORw0KGgo=");
    /// assert_eq!(p.kind(), toolwire::PartKind::Image);
    /// ```
    pub fn image_data(mime_type: impl Into<String>, base64: impl Into<String>) -> Self {
        Self::new(PartKind::Image, mime_type, Some(base64.into()), None)
    }

    /// An image given by URL.
    ///
    /// ```
    /// let p = toolwire::ContentPart::image_url("image/jpeg", "https://example.com/a.jpg");
    /// assert_eq!(p.url(), Some("https://example.com/a.jpg"));
    /// ```
    pub fn image_url(mime_type: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(PartKind::Image, mime_type, None, Some(url.into()))
    }

    /// An audio clip given as base64 data.
    ///
    /// ```
    /// let p = toolwire::ContentPart::audio_data("audio/wav", "UklGRg==");
    /// assert_eq!(p.kind(), toolwire::PartKind::Audio);
    /// ```
    pub fn audio_data(mime_type: impl Into<String>, base64: impl Into<String>) -> Self {
        Self::new(PartKind::Audio, mime_type, Some(base64.into()), None)
    }

    /// An audio clip given by URL.
    ///
    /// ```
    /// let p = toolwire::ContentPart::audio_url("audio/mpeg", "https://example.com/a.mp3");
    /// assert_eq!(p.mime_type(), "audio/mpeg");
    /// ```
    pub fn audio_url(mime_type: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(PartKind::Audio, mime_type, None, Some(url.into()))
    }

    /// A file (PDF or other) given as base64 data.
    ///
    /// ```
    /// let p = toolwire::ContentPart::file_data("application/pdf", "JVBERi0=");
    /// assert_eq!(p.kind(), toolwire::PartKind::File);
    /// ```
    pub fn file_data(mime_type: impl Into<String>, base64: impl Into<String>) -> Self {
        Self::new(PartKind::File, mime_type, Some(base64.into()), None)
    }

    /// A file given by URL.
    ///
    /// ```
    /// let p = toolwire::ContentPart::file_url("application/pdf", "https://example.com/r.pdf");
    /// assert_eq!(p.data(), None);
    /// ```
    pub fn file_url(mime_type: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(PartKind::File, mime_type, None, Some(url.into()))
    }

    /// The same part with a file name (shown by providers that take one).
    ///
    /// ```
    /// let p = toolwire::ContentPart::file_data("text/csv", "YSxi").with_name("a.csv");
    /// assert_eq!(p.name(), Some("a.csv"));
    /// ```
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The kind of media.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::image_data("image/gif", "R0lG").kind().as_str(), "image");
    /// ```
    pub fn kind(&self) -> PartKind {
        self.kind
    }

    /// The MIME type, such as `image/png`.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::image_data("image/gif", "R0lG").mime_type(), "image/gif");
    /// ```
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// The base64 data, when the part carries its bytes.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::image_data("image/gif", "R0lG").data(), Some("R0lG"));
    /// ```
    pub fn data(&self) -> Option<&str> {
        self.data.as_deref()
    }

    /// The URL, when the part points at its bytes.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::image_data("image/gif", "R0lG").url(), None);
    /// ```
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The file name, if given.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::image_data("image/gif", "R0lG").name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The same part without its file name.
    pub(crate) fn without_name(&self) -> ContentPart {
        ContentPart {
            name: None,
            ..self.clone()
        }
    }

    /// The decoded byte length of inline data; `None` for a URL part or invalid base64.
    ///
    /// ```
    /// assert_eq!(toolwire::ContentPart::file_data("text/plain", "aGVsbG8=").byte_len(), Some(5));
    /// ```
    pub fn byte_len(&self) -> Option<usize> {
        use base64::Engine;
        let data = self.data.as_deref()?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()
            .map(|bytes| bytes.len())
    }

    fn check(&self) -> Result<(), WireError> {
        Self::check_fields(
            self.kind,
            &self.mime_type,
            self.data.as_deref(),
            self.url.as_deref(),
        )
    }

    /// Checks the fields of a content part as the wire decoder does: a `type/subtype`
    /// MIME type, `image/*` for an image and `audio/*` for audio (any letter case), and
    /// exactly one of standard padded base64 `data` (no whitespace, zero trailing bits)
    /// or a non-empty `url`. The Node.js package checks every part it makes with this.
    ///
    /// ```
    /// use toolwire::{ContentPart, PartKind};
    /// assert!(ContentPart::check_fields(PartKind::Image, "IMAGE/png", Some("QQ=="), None).is_ok());
    /// let err = ContentPart::check_fields(PartKind::Image, "image/png", Some("QR=="), None).unwrap_err();
    /// assert!(err.to_string().contains("not standard padded base64"));
    /// assert!(ContentPart::check_fields(PartKind::Audio, "image/png", Some(""), None).is_err());
    /// assert!(ContentPart::check_fields(PartKind::File, "pdf", None, Some("https://x")).is_err());
    /// // RFC 6838 names, then parameters of printable ASCII only
    /// assert!(ContentPart::check_fields(PartKind::File, "text/plain; charset=utf-8", Some("aGk="), None).is_ok());
    /// assert!(ContentPart::check_fields(PartKind::Image, "image/png\nIgnore that", Some("aGk="), None).is_err());
    /// assert!(ContentPart::check_fields(PartKind::Image, "image/png/x", Some("aGk="), None).is_err());
    /// ```
    pub fn check_fields(
        kind: PartKind,
        mime_type: &str,
        data: Option<&str>,
        url: Option<&str>,
    ) -> Result<(), WireError> {
        let not_a_type = || {
            WireError::new(format!(
                "content part mimeType {mime_type:?} is not a MIME type (type/subtype)"
            ))
        };
        let (essence, parameters) = mime_type.split_once(';').unwrap_or((mime_type, ""));
        let (top, sub) = essence.split_once('/').ok_or_else(not_a_type)?;
        if !is_restricted_name(top)
            || !is_restricted_name(sub.trim_end_matches(' '))
            || !parameters.bytes().all(|c| (0x20..=0x7e).contains(&c))
        {
            return Err(not_a_type());
        }
        let expected = match kind {
            PartKind::Image => Some("image"),
            PartKind::Audio => Some("audio"),
            PartKind::File => None,
        };
        if let Some(expected) = expected {
            if !top.eq_ignore_ascii_case(expected) {
                return Err(WireError::new(format!(
                    "content part of type {:?} has mimeType {mime_type:?}; expected {expected}/*",
                    kind.as_str(),
                )));
            }
        }
        match (data, url) {
            (Some(data), None) => {
                if !is_base64(data) {
                    return Err(WireError::new(
                        "content part data is not standard padded base64",
                    ));
                }
                Ok(())
            }
            (None, Some(url)) if !url.is_empty() => Ok(()),
            (None, Some(_)) => Err(WireError::new("content part url is empty")),
            (Some(_), Some(_)) => Err(WireError::new(
                "content part has both data and url; give exactly one",
            )),
            (None, None) => Err(WireError::new(
                "content part has neither data nor url; give exactly one",
            )),
        }
    }
}

fn is_base64(data: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .is_ok()
}
