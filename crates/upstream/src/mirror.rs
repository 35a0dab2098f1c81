//! The HTTP headers of 2026-07-28 that mirror a request's body, so that
//! intermediaries can route without parsing it: `Mcp-Param-{Name}` for each
//! tool argument whose schema property is annotated `x-mcp-header`, and the
//! encoding every mirrored value uses.

use std::borrow::Cow;

use serde_json::Value;

/// A header value as 2026-07-28 writes it: as it is when it is plain
/// visible ASCII without surrounding spaces, else Base64 between
/// `=?base64?` and `?=` (as is a plain value that looks like that form).
pub fn header_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|byte| (0x20..=0x7e).contains(&byte))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        use base64::Engine;
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

/// A header value in the clear: decoded from `=?base64?…?=`, else as it is
/// (borrowed: most values are plain).
pub fn decode_header_value(value: &str) -> Option<Cow<'_, str>> {
    match value.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) {
        Some(encoded) => {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok().map(Cow::Owned)
        }
        None => Some(Cow::Borrowed(value)),
    }
}

/// The `Mcp-Param-{Name}` headers (name, value in the clear) a call with
/// `arguments` (JSON text) needs, from the tool's `input_schema` (JSON text):
/// one per annotated property whose value is a string, a number or a
/// boolean. Absent and null values get no header.
pub fn param_headers(input_schema: &str, arguments: Option<&str>) -> Vec<(String, String)> {
    let (Ok(schema), Some(Ok(arguments))) =
        (serde_json::from_str::<Value>(input_schema), arguments.map(serde_json::from_str::<Value>))
    else {
        return Vec::new();
    };
    let mut headers = Vec::new();
    collect(&schema, &arguments, &mut headers);
    headers
}

fn collect(schema: &Value, value: &Value, headers: &mut Vec<(String, String)>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        let Some(value) = value.get(name) else { continue };
        if let Some(header) = property.get("x-mcp-header").and_then(Value::as_str) {
            let text = match value {
                Value::String(text) => Some(text.clone()),
                Value::Number(number) => Some(number.to_string()),
                Value::Bool(flag) => Some(flag.to_string()),
                _ => None,
            };
            if let Some(text) = text {
                headers.push((format!("mcp-param-{}", header.to_ascii_lowercase()), text));
            }
        }
        collect(property, value, headers);
    }
}

/// Whether `header` (in the clear) carries `body` as a header may: equal
/// text, or equal numbers however written (`42.0` and `42`).
pub fn same_value(header: &str, body: &str) -> bool {
    header == body || matches!((header.parse::<f64>(), body.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
}

/// The tools of a `tools/list` result (JSON text) whose input schemas
/// annotate headers: `(name, inputSchema as JSON text)`.
pub fn annotated_tools(result: &str) -> Vec<(String, String)> {
    if !result.contains("x-mcp-header") {
        return Vec::new();
    }
    let Ok(result) = serde_json::from_str::<Value>(result) else { return Vec::new() };
    let Some(tools) = result.get("tools").and_then(Value::as_array) else { return Vec::new() };
    tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            let schema = tool.get("inputSchema")?;
            let text = schema.to_string();
            text.contains("x-mcp-header").then(|| (name.to_owned(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"},"limit":{"type":"integer","x-mcp-header":"Limit"},"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}"#;

    #[test]
    fn annotated_arguments_become_headers() {
        let headers =
            param_headers(SCHEMA, Some(r#"{"region":"us-west1","query":"x","limit":42,"opts":{"dry":true}}"#));
        assert_eq!(
            headers,
            vec![
                ("mcp-param-limit".to_owned(), "42".to_owned()),
                ("mcp-param-dry".to_owned(), "true".to_owned()),
                ("mcp-param-region".to_owned(), "us-west1".to_owned()),
            ]
        );
        assert!(param_headers(SCHEMA, Some(r#"{"region":null}"#)).is_empty());
        assert!(same_value("42.0", "42") && !same_value("42", "43"));
    }

    #[test]
    fn values_are_encoded_when_they_must_be() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(), Some("Hello, 世界"));
        let tools = annotated_tools(&format!(
            r#"{{"tools":[{{"name":"q","inputSchema":{SCHEMA}}},{{"name":"p","inputSchema":{{}}}}]}}"#
        ));
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].0, "q");
    }
}
