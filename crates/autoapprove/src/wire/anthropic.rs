//! The Anthropic Messages API: forced tool use, the answer in a `tool_use`
//! content block.

use serde_json::{Value, json};

use super::{MAX_TOKENS, TOOL_DESCRIPTION, TOOL_NAME, Verdict, schema, shown, verdict};

pub(super) fn body(model: &str, system: &str, user: &str) -> Value {
    json!({
        "model": model,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "system": system,
        "messages": [{ "role": "user", "content": user }],
        "tools": [{ "name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": schema() }],
        "tool_choice": { "type": "tool", "name": TOOL_NAME },
    })
}

/// Exactly one `tool_use` block, for `record_decision`, in an answer that
/// was not cut off.
pub(super) fn parse(answer: &Value) -> Result<Verdict, String> {
    if answer.get("stop_reason").and_then(Value::as_str) == Some("max_tokens") {
        return Err("the answer was cut off at max_tokens".into());
    }
    let Some(content) = answer.get("content").and_then(Value::as_array) else {
        return Err("the answer has no content array".into());
    };
    let mut uses = content.iter().filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"));
    let (Some(call), None) = (uses.next(), uses.next()) else {
        return Err(format!("the answer does not call {TOOL_NAME} exactly once"));
    };
    match call.get("name").and_then(Value::as_str) {
        Some(TOOL_NAME) => {}
        Some(other) => return Err(format!("the answer calls {:?}, not {TOOL_NAME}", shown(other))),
        None => return Err("the answer's tool call has no name".into()),
    }
    verdict(call.get("input").unwrap_or(&Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assessment::Decision;

    fn tool_use(input: Value) -> Value {
        json!({"type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": input})
    }

    #[test]
    fn reads_the_one_tool_use_block() {
        let answer = json!({
            "content": [{"type": "text", "text": "Thinking."}, tool_use(json!({"decision": "approve", "reasoning": "asked"}))],
            "stop_reason": "tool_use",
        });
        assert_eq!(parse(&answer), Ok(Verdict { decision: Decision::Approve, reasoning: "asked".into() }));
    }

    #[test]
    fn anything_else_is_no_verdict() {
        let good = json!({"decision": "approve", "reasoning": "asked"});
        for bad in [
            json!({"content": [{"type": "text", "text": "approve"}]}),
            json!({"content": []}),
            json!({"content": "approve"}),
            json!({}),
            json!({"content": [tool_use(good.clone()), tool_use(good.clone())]}),
            json!({"content": [{"type": "tool_use", "name": "other", "input": good.clone()}]}),
            json!({"content": [{"type": "tool_use", "input": good.clone()}]}),
            json!({"content": [{"type": "tool_use", "name": TOOL_NAME}]}),
            json!({"content": [tool_use(good.clone())], "stop_reason": "max_tokens"}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }
}
