//! The model view and the wire adapters as the core renders them, and the tables the
//! renderers share (image formats, the untrusted-content delimiter). The core is the
//! specification of these renderings (docs/wire-format.md); the TypeScript renderers are
//! held to it by the shared vectors and the differential test.

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolwire::{adapters, model, ToolResult};

fn invalid_arg(err: impl ToString) -> Error {
    Error::new(Status::InvalidArg, err.to_string())
}

fn parse(result_json: &str) -> Result<ToolResult> {
    ToolResult::from_json(result_json).map_err(invalid_arg)
}

/// The tables every renderer reads, from the core.
#[napi(object)]
pub struct BindingRenderTables {
    /// Image formats OpenAI (Chat and Responses) and Anthropic accept.
    pub web_image_types: Vec<String>,
    /// MIME types Gemini documents for multimodal function responses.
    pub gemini_function_response_mime_types: Vec<String>,
    /// The opening tag of the untrusted-content delimiter.
    pub untrusted_open: String,
    /// The closing tag of the untrusted-content delimiter.
    pub untrusted_close: String,
    /// The one-line note that precedes untrusted content.
    pub untrusted_note: String,
    /// The `_meta` key set on untrusted MCP results.
    pub mcp_untrusted_meta_key: String,
}

/// The renderers' shared tables.
#[napi]
pub fn render_tables() -> BindingRenderTables {
    BindingRenderTables {
        web_image_types: adapters::WEB_IMAGES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        gemini_function_response_mime_types: adapters::GEMINI_FUNCTION_RESPONSE_MIME_TYPES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        untrusted_open: model::UNTRUSTED_OPEN.to_owned(),
        untrusted_close: model::UNTRUSTED_CLOSE.to_owned(),
        untrusted_note: model::UNTRUSTED_NOTE.to_owned(),
        mcp_untrusted_meta_key: adapters::MCP_UNTRUSTED_META_KEY.to_owned(),
    }
}

/// The model view (`{ output, isError, parts?, metadata? }`) of a wire document, as JSON text.
/// A malformed document throws.
#[napi]
pub fn model_view_json(result_json: String) -> Result<String> {
    Ok(toolwire::to_js_json(&parse(&result_json)?.to_model()))
}

/// One provider's tool-result message of a wire document, as JSON text. `wire` is one of
/// `openai_chat`, `openai_responses`, `anthropic`, `gemini`, `mcp`; `id` is the call id
/// (the Gemini id may be absent), `name` the tool name (Gemini only).
#[napi]
pub fn render_wire_json(
    wire: String,
    result_json: String,
    id: Option<String>,
    name: Option<String>,
) -> Result<String> {
    let result = parse(&result_json)?;
    let id_or_empty = id.as_deref().unwrap_or_default();
    let value = match wire.as_str() {
        "openai_chat" => serde_json::Value::Array(adapters::to_openai_chat(&result, id_or_empty)),
        "openai_responses" => adapters::to_openai_responses(&result, id_or_empty),
        "anthropic" => adapters::to_anthropic(&result, id_or_empty),
        "gemini" => {
            adapters::to_gemini(&result, name.as_deref().unwrap_or_default(), id.as_deref())
        }
        "mcp" => adapters::to_mcp(&result),
        other => return Err(invalid_arg(format!("unknown wire {other:?}"))),
    };
    Ok(toolwire::to_js_json(&value))
}
