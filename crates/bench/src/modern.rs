//! Requests in MCP 2026-07-28: the envelope in `params._meta`, and the
//! headers that mirror the body.

use hyper::header::HeaderValue;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The revision.
pub const VERSION: &str = "2026-07-28";

/// Headers to add to a request.
pub type Headers = Vec<(&'static str, HeaderValue)>;

/// `params` with the envelope, and the `Mcp-Method` / `Mcp-Name` headers.
pub fn envelope(method: &str, params: &RawValue) -> anyhow::Result<(Box<RawValue>, Headers)> {
    let mut params: Map<String, Value> = serde_json::from_str(params.get())?;
    let mut headers = vec![("mcp-method", HeaderValue::from_str(method)?)];
    if let Some(name) = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str) {
        headers.push(("mcp-name", HeaderValue::from_str(name)?));
    }
    params.insert(
        "_meta".to_owned(),
        json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "warden-bench", "version": env!("CARGO_PKG_VERSION")},
        }),
    );
    Ok((serde_json::value::to_raw_value(&params)?, headers))
}
