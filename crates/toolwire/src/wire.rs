//! The versioned JSON wire format of a [`ToolResult`].
//!
//! ```json
//! {"v":1,"status":"error","output":{"text":"too slow"},
//!  "error":{"kind":"timeout","message":"too slow","retryable":true}}
//! ```
//!
//! Exactly one of `error`, `refusal`, `skipReason` and `pending` appears, as `status`
//! requires (none for `success`). Unknown fields are rejected. See `schema/tool-result.v1.json`.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::result::State;
use crate::{PendingRequest, ToolExecutionError, ToolOutput, ToolResult};

/// The wire format version this build writes and reads.
///
/// ```
/// assert_eq!(toolwire::WIRE_VERSION, 1);
/// ```
pub const WIRE_VERSION: u64 = 1;

/// The deepest nesting of arrays and objects a JSON value inside a result may have:
/// `output.structured`, `error.details`, `refusal.details`, `metadata` (the object itself
/// counts as one level) and each `pending.changes[].before` / `after`. A scalar has depth
/// 0, `[]` and `{}` depth 1, `[[1]]` depth 2.
///
/// A document with a deeper value is rejected, so every result either language writes
/// stays well inside the parser's nesting limit and reads back. The Node.js package
/// reads this number from the core and refuses such values when a result is made (a
/// tool that returns one fails with "The tool returned a value JSON cannot carry.").
///
/// ```
/// let mut deep = serde_json::json!(1);
/// for _ in 0..toolwire::MAX_VALUE_DEPTH {
///     deep = serde_json::json!([deep]);
/// }
/// let doc = |v: &serde_json::Value| format!(r#"{{"v":1,"status":"success","output":{{"text":"","structured":{v}}}}}"#);
/// assert!(toolwire::ToolResult::from_json(&doc(&deep)).is_ok());
/// let err = toolwire::ToolResult::from_json(&doc(&serde_json::json!([deep]))).unwrap_err();
/// assert!(err.to_string().contains("nested deeper than 100 levels"));
/// ```
pub const MAX_VALUE_DEPTH: usize = 100;

/// Whether `value` nests arrays and objects deeper than `max` levels (without recursion).
pub(crate) fn deeper_than(value: &Value, max: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        // a container here is level `depth + 1`
        match value {
            Value::Array(_) | Value::Object(_) if depth >= max => return true,
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|child| (child, depth + 1))),
            _ => {}
        }
    }
    false
}

fn check_depth(field: &str, value: Option<&Value>) -> Result<(), WireError> {
    match value {
        Some(value) if deeper_than(value, MAX_VALUE_DEPTH) => Err(WireError::new(format!(
            "{field} is nested deeper than {MAX_VALUE_DEPTH} levels"
        ))),
        _ => Ok(()),
    }
}

/// Why a document is not a valid [`ToolResult`].
///
/// ```
/// let err = toolwire::ToolResult::from_json(r#"{"v":1,"status":"error","output":{"text":""}}"#).unwrap_err();
/// assert!(err.to_string().contains("status \"error\" requires the \"error\" field"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError(String);

impl WireError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        WireError(message.into())
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed tool result: {}", self.0)
    }
}

impl std::error::Error for WireError {}

/// Deserializes a present optional field as `Some`: a JSON `null` is a value for
/// `Value` fields and a type error for the others, never a silent "absent".
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

impl ToolResult {
    /// Parses and validates a wire document.
    ///
    /// ```
    /// let r = toolwire::ToolResult::from_json(r#"{"v":1,"status":"success","output":{"text":"hi"}}"#).unwrap();
    /// assert!(r.is_success());
    /// assert!(toolwire::ToolResult::from_json(r#"{"v":1,"status":"done","output":{"text":"hi"}}"#).is_err());
    /// ```
    pub fn from_json(text: &str) -> Result<Self, WireError> {
        serde_json::from_str(text).map_err(|err| {
            let message = err.to_string();
            match message.strip_prefix("malformed tool result: ") {
                Some(inner) => WireError::new(inner),
                None => WireError::new(message),
            }
        })
    }

    /// Serializes to the canonical wire document: compact, fields in a fixed order.
    ///
    /// ```
    /// let r = toolwire::ToolResult::skipped("dry run");
    /// assert_eq!(
    ///     r.to_json(),
    ///     r#"{"v":1,"status":"skipped","output":{"text":"Skipped: dry run"},"skipReason":"dry run"}"#
    /// );
    /// ```
    pub fn to_json(&self) -> String {
        to_js_json(self)
    }
}

/// JSON text of `value` with every number written as JavaScript's `JSON.stringify`
/// writes it (ECMAScript `Number::toString`, the number form of RFC 8785): `1e-7`,
/// `0.000001`, `1e+21`, `1` for `1.0`, and an integer beyond ±2^53 as the double nearest
/// to it. The Node.js package serializes with `JSON.stringify`, so this is what makes
/// the two languages write the same bytes.
///
/// ```
/// let text = toolwire::to_js_json(&serde_json::json!([1.0, 1e-6, 1e-7, 1e21, 9007199254740993u64]));
/// assert_eq!(text, "[1,0.000001,1e-7,1e+21,9007199254740992]");
/// // exactly halfway between two shortest forms: the even one, as JavaScript writes it
/// assert_eq!(toolwire::to_js_json(&217462534417106.625), "217462534417106.62");
/// ```
pub fn to_js_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsNumbers);
    value
        .serialize(&mut ser)
        .expect("toolwire values always serialize");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's compact formatter with JavaScript's number forms.
struct JsNumbers;

/// The largest integer a double holds exactly (2^53).
const EXACT: u64 = 1 << 53;

impl serde_json::ser::Formatter for JsNumbers {
    fn write_i64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: i64) -> std::io::Result<()> {
        if v.unsigned_abs() <= EXACT {
            write!(w, "{v}")
        } else {
            w.write_all(js_number(v as f64).as_bytes())
        }
    }

    fn write_u64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: u64) -> std::io::Result<()> {
        if v <= EXACT {
            write!(w, "{v}")
        } else {
            w.write_all(js_number(v as f64).as_bytes())
        }
    }

    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        w.write_all(js_number(v).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        w.write_all(js_number(f64::from(v)).as_bytes())
    }
}

/// The shortest digits that read back as `v` (> 0) and the decimal exponent of the first,
/// chosen as ECMAScript chooses: the closest to `v`, and of two equally close the even one.
fn shortest_digits(v: f64) -> (String, i64) {
    let (mut digits, exp) = split_sci(&format!("{v:e}"));
    // two shortest candidates can only both read back as `v` at 16 or 17 digits
    if digits.len() >= 16 {
        if let Some(even) = even_of_tie(v, &digits, exp) {
            digits = even;
        }
    }
    (digits, exp)
}

fn split_sci(sci: &str) -> (String, i64) {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let digits = mantissa.chars().filter(|c| *c != '.').collect();
    (
        digits,
        exp.parse().expect("{:e} writes an integer exponent"),
    )
}

/// When `v` lies exactly halfway between two `digits.len()`-digit candidates that both
/// read back as `v`, the even one (Rust rounds such a tie up, ECMAScript to even).
fn even_of_tie(v: f64, digits: &str, exp: i64) -> Option<String> {
    let k = digits.len();
    // every digit of `v` (a double has at most 767 significant decimal digits)
    let (exact, exact_exp) = split_sci(&format!("{v:.780e}"));
    if exact_exp != exp {
        return None;
    }
    let (low, rest) = exact.split_at(k);
    if !rest.starts_with('5') || !rest[1..].bytes().all(|b| b == b'0') {
        return None;
    }
    let high = increment(low)?;
    let even = if low.as_bytes()[k - 1] % 2 == 0 {
        low.to_owned()
    } else {
        high
    };
    let reads_back = format!("{}.{}e{exp}", &even[..1], &even[1..]).parse::<f64>() == Ok(v);
    (even != digits && reads_back).then_some(even)
}

/// `digits` plus one in the last place, or `None` when that needs another digit.
fn increment(digits: &str) -> Option<String> {
    let mut bytes = digits.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// ECMAScript `Number::toString(v)` for a finite `v` (`null` otherwise, as `JSON.stringify`).
fn js_number(v: f64) -> String {
    if !v.is_finite() {
        return "null".to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let (digits, exp) = shortest_digits(v.abs());
    let k = digits.len() as i64;
    let n = exp + 1;
    let mut out = String::with_capacity(k as usize + 8);
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    kind: crate::ToolErrorKind,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a Value>,
}

impl<'a> From<&'a ToolExecutionError> for ErrorBody<'a> {
    fn from(error: &'a ToolExecutionError) -> Self {
        ErrorBody {
            kind: error.kind(),
            message: error.message(),
            code: error.code(),
            retryable: error.is_retryable(),
            details: error.details(),
        }
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("v", &WIRE_VERSION)?;
        map.serialize_entry("status", self.disposition().as_str())?;
        map.serialize_entry("output", &self.output)?;
        match &self.state {
            State::Success => {}
            State::Failed(error) if error.is_refusal() => {
                map.serialize_entry("refusal", &ErrorBody::from(error))?
            }
            State::Failed(error) => map.serialize_entry("error", &ErrorBody::from(error))?,
            State::Skipped(reason) => map.serialize_entry("skipReason", reason)?,
            State::Pending(request) => map.serialize_entry("pending", request)?,
        }
        if self.untrusted {
            map.serialize_entry("untrusted", &true)?;
        }
        if let Some(metadata) = &self.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        map.end()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Document {
    v: u64,
    status: String,
    output: ToolOutput,
    #[serde(default, deserialize_with = "present")]
    error: Option<ToolExecutionError>,
    #[serde(default, deserialize_with = "present")]
    refusal: Option<ToolExecutionError>,
    #[serde(default, deserialize_with = "present")]
    skip_reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pending: Option<PendingRequest>,
    #[serde(default, deserialize_with = "present")]
    untrusted: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    metadata: Option<Map<String, Value>>,
}

impl TryFrom<Document> for ToolResult {
    type Error = WireError;

    fn try_from(doc: Document) -> Result<Self, WireError> {
        if doc.v != WIRE_VERSION {
            return Err(WireError::new(format!(
                "unsupported wire version {}; this build reads version {WIRE_VERSION}",
                doc.v
            )));
        }
        doc.output.check()?;
        check_depth("output.structured", doc.output.structured())?;
        for (field, error) in [("error", &doc.error), ("refusal", &doc.refusal)] {
            check_depth(
                &format!("{field}.details"),
                error.as_ref().and_then(ToolExecutionError::details),
            )?;
        }
        if let Some(metadata) = &doc.metadata {
            if metadata
                .values()
                .any(|v| deeper_than(v, MAX_VALUE_DEPTH - 1))
            {
                return Err(WireError::new(format!(
                    "metadata is nested deeper than {MAX_VALUE_DEPTH} levels"
                )));
            }
        }
        if let Some(pending) = &doc.pending {
            pending.check()?;
        }
        for change in doc
            .pending
            .iter()
            .flat_map(|p| p.changes().unwrap_or_default())
        {
            check_depth("a pending change's before", change.before())?;
            check_depth("a pending change's after", change.after())?;
        }
        let given: Vec<&str> = [
            ("error", doc.error.is_some()),
            ("refusal", doc.refusal.is_some()),
            ("skipReason", doc.skip_reason.is_some()),
            ("pending", doc.pending.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect();
        if given.len() > 1 {
            return Err(WireError::new(format!(
                "a result has exactly one disposition, but this one carries {}",
                given
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )));
        }
        let needs = |field: &str| {
            WireError::new(format!(
                "status {:?} requires the {field:?} field",
                doc.status
            ))
        };
        let unexpected =
            |field: &str| WireError::new(format!("status {:?} cannot carry {field:?}", doc.status));
        let state = match doc.status.as_str() {
            "success" => match given.first() {
                None => State::Success,
                Some(field) => return Err(unexpected(field)),
            },
            "error" => match (doc.error, given.first()) {
                (Some(error), _) if error.is_refusal() => {
                    return Err(WireError::new(
                        "an \"error\" object cannot set \"refusal\"; a refusal has status \"refused\"",
                    ))
                }
                (Some(error), _) => State::Failed(error),
                (None, Some(field)) => return Err(unexpected(field)),
                (None, None) => return Err(needs("error")),
            },
            "refused" => match (doc.refusal, given.first()) {
                (Some(refusal), _) if refusal.is_refusal() => {
                    return Err(WireError::new(
                        "a \"refusal\" object does not repeat \"refusal\": its place says it",
                    ))
                }
                (Some(refusal), _)
                    if refusal.kind() != crate::ToolErrorKind::PermissionDenied
                        || refusal.is_retryable() =>
                {
                    return Err(WireError::new(
                        "a refusal has kind \"permission_denied\" and is not retryable",
                    ))
                }
                (Some(mut refusal), _) => {
                    refusal.set_refusal(true);
                    State::Failed(refusal)
                }
                (None, Some(field)) => return Err(unexpected(field)),
                (None, None) => return Err(needs("refusal")),
            },
            "skipped" => match (doc.skip_reason, given.first()) {
                (Some(reason), _) => State::Skipped(reason),
                (None, Some(field)) => return Err(unexpected(field)),
                (None, None) => {
                    return Err(WireError::new("status \"skipped\" requires the \"skipReason\" field"))
                }
            },
            "pending" => match (doc.pending, given.first()) {
                (Some(request), _) => State::Pending(request),
                (None, Some(field)) => return Err(unexpected(field)),
                (None, None) => return Err(needs("pending")),
            },
            other => {
                return Err(WireError::new(format!(
                    "unknown status {other:?}; expected one of \"success\", \"error\", \"refused\", \"skipped\", \"pending\""
                )))
            }
        };
        Ok(ToolResult {
            state,
            output: doc.output,
            untrusted: doc.untrusted.unwrap_or(false),
            metadata: doc.metadata,
        })
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DocumentVisitor;
        impl<'de> de::Visitor<'de> for DocumentVisitor {
            type Value = Document;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tool result object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
                Document::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        // Only a JSON object is a document: never a positional array.
        let doc = deserializer.deserialize_map(DocumentVisitor)?;
        ToolResult::try_from(doc).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::MAX_VALUE_DEPTH;
    use crate::ToolResult;

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!(1), |v, i| {
            if i % 2 == 0 {
                json!([v])
            } else {
                json!({ "k": v })
            }
        })
    }

    #[test]
    fn a_number_reads_back_as_the_same_number() {
        // without serde_json's float_roundtrip this drifts by one ulp per round trip
        let text = r#"{"v":1,"status":"success","output":{"text":"","structured":7.724550086754665e-159}}"#;
        let once = ToolResult::from_json(text).unwrap().to_json();
        assert_eq!(once, text);
        assert_eq!(ToolResult::from_json(&once).unwrap().to_json(), text);
    }

    #[test]
    fn every_free_form_value_nests_at_most_max_value_depth() {
        let at = nested(MAX_VALUE_DEPTH);
        let over = nested(MAX_VALUE_DEPTH + 1);
        let docs = |v: &Value| {
            [
                json!({ "v": 1, "status": "success", "output": { "text": "", "structured": v } }),
                json!({ "v": 1, "status": "error", "output": { "text": "" },
                        "error": { "kind": "other", "message": "", "retryable": false, "details": v } }),
                json!({ "v": 1, "status": "refused", "output": { "text": "" },
                        "refusal": { "kind": "permission_denied", "message": "", "retryable": false, "details": v } }),
                json!({ "v": 1, "status": "pending", "output": { "text": "" },
                        "pending": { "id": "p", "kind": "confirmation", "changes": [{ "path": "/a", "before": v }] } }),
                json!({ "v": 1, "status": "pending", "output": { "text": "" },
                        "pending": { "id": "p", "kind": "confirmation", "changes": [{ "path": "/a", "after": v }] } }),
            ]
        };
        for doc in docs(&at) {
            assert!(ToolResult::from_json(&doc.to_string()).is_ok(), "{doc}");
        }
        for doc in docs(&over) {
            let err = ToolResult::from_json(&doc.to_string()).unwrap_err();
            assert!(
                err.to_string().contains("nested deeper than 100 levels"),
                "{err}"
            );
        }
        // metadata: the object itself is one level
        let meta = |v: &Value| {
            json!({ "v": 1, "status": "success", "output": { "text": "" }, "metadata": { "k": v } })
                .to_string()
        };
        assert!(ToolResult::from_json(&meta(&nested(MAX_VALUE_DEPTH - 1))).is_ok());
        assert!(ToolResult::from_json(&meta(&at)).is_err());
    }
}
