//! Building the few messages Warden writes itself.
//!
//! Parameters and results are passed as JSON text and inserted verbatim, so that
//! forwarding code never has to decode them.

use crate::codes::ErrorCode;
use crate::splice::json_string;

/// A request: `{"jsonrpc":"2.0","id":ID,"method":M,"params":P}`. `id` and
/// `params` are JSON text.
pub fn request(id: &str, method: &str, params: Option<&str>) -> String {
    call(Some(id), method, params)
}

/// A notification: `{"jsonrpc":"2.0","method":M,"params":P}`.
pub fn notification(method: &str, params: Option<&str>) -> String {
    call(None, method, params)
}

/// A request (with an id) or a notification (without).
fn call(id: Option<&str>, method: &str, params: Option<&str>) -> String {
    let mut out = String::with_capacity(48 + method.len() + params.map_or(0, str::len));
    out.push_str(r#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        out.push_str(r#""id":"#);
        out.push_str(id);
        out.push(',');
    }
    out.push_str(r#""method":"#);
    out.push_str(&json_string(method));
    if let Some(params) = params {
        out.push_str(r#","params":"#);
        out.push_str(params);
    }
    out.push('}');
    out
}

/// A success response carrying `result` (JSON text) for request `id` (JSON text).
pub fn result_response(id: &str, result: &str) -> String {
    let mut out = String::with_capacity(36 + id.len() + result.len());
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id);
    out.push_str(r#","result":"#);
    out.push_str(result);
    out.push('}');
    out
}

/// An error response. `id` is JSON text, or `None` when the request's id could
/// not be read (it is then sent as `null`, as JSON-RPC requires); `data` is JSON
/// text.
pub fn error_response(id: Option<&str>, code: ErrorCode, message: &str, data: Option<&str>) -> String {
    let mut out = String::with_capacity(64 + message.len());
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(id.unwrap_or("null"));
    out.push_str(r#","error":{"code":"#);
    out.push_str(&code.code().to_string());
    out.push_str(r#","message":"#);
    out.push_str(&json_string(message));
    if let Some(data) = data {
        out.push_str(r#","data":"#);
        out.push_str(data);
    }
    out.push_str("}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_messages_are_valid_json() {
        for text in [
            request("7", "tools/list", None),
            request("\"a\"", "tools/call", Some(r#"{"name":"x"}"#)),
            notification("notifications/initialized", None),
            result_response("1", "{}"),
            error_response(None, ErrorCode::ParseError, "bad \"json\"\n", Some(r#"{"at":3}"#)),
        ] {
            let value: serde_json::Value = serde_json::from_str(&text).expect(&text);
            assert_eq!(value["jsonrpc"], "2.0");
        }
        let err: serde_json::Value =
            serde_json::from_str(&error_response(Some("5"), ErrorCode::MethodNotFound, "no", None)).unwrap();
        assert_eq!(err["error"]["code"], -32601);
        assert_eq!(err["id"], 5);
    }
}
