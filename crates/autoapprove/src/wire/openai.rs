//! The OpenAI-compatible chat completions API: a forced function call, its
//! arguments a JSON string in `choices[0].message.tool_calls[0]`.

use serde_json::{Value, json};

use super::{MAX_TOKENS, TOOL_DESCRIPTION, TOOL_NAME, Verdict, object, schema, shown, verdict};

pub(super) fn body(model: &str, system: &str, user: &str) -> Value {
    json!({
        "model": model,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "messages": [
            { "role": "system", "content": system },
            { "role": "user", "content": user },
        ],
        "tools": [{
            "type": "function",
            "function": { "name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": schema() },
        }],
        "tool_choice": { "type": "function", "function": { "name": TOOL_NAME } },
    })
}

/// Exactly one call of `record_decision` in the first choice, which was not
/// cut off, with arguments that are a JSON string.
pub(super) fn parse(answer: &Value) -> Result<Verdict, String> {
    let Some(choice) = answer.get("choices").and_then(|choices| choices.get(0)) else {
        return Err("the answer has no choices".into());
    };
    if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
        return Err("the answer was cut off at max_tokens".into());
    }
    let message = object(choice, "message")?;
    let calls = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let [call] = calls else {
        return Err(format!("the answer does not call {TOOL_NAME} exactly once"));
    };
    let function = object(call, "function")?;
    match function.get("name").and_then(Value::as_str) {
        Some(TOOL_NAME) => {}
        Some(other) => return Err(format!("the answer calls {:?}, not {TOOL_NAME}", shown(other))),
        None => return Err("the answer's tool call has no name".into()),
    }
    let Some(arguments) = function.get("arguments").and_then(Value::as_str) else {
        return Err(format!("{TOOL_NAME}'s arguments are not a JSON string"));
    };
    let arguments: Value =
        serde_json::from_str(arguments).map_err(|err| format!("{TOOL_NAME}'s arguments are not JSON ({err})"))?;
    verdict(&arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assessment::Decision;

    fn answer(calls: Value) -> Value {
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "stop"}]})
    }

    fn call(arguments: Value) -> Value {
        json!({"id": "call_1", "type": "function", "function": {"name": TOOL_NAME, "arguments": arguments}})
    }

    #[test]
    fn reads_the_one_function_call() {
        let good = answer(json!([call(json!(r#"{"decision":"escalate","reasoning":"vague"}"#))]));
        assert_eq!(parse(&good), Ok(Verdict { decision: Decision::Escalate, reasoning: "vague".into() }));
    }

    #[test]
    fn anything_else_is_no_verdict() {
        let args = json!(r#"{"decision":"approve","reasoning":"asked"}"#);
        let mut cut = answer(json!([call(args.clone())]));
        cut["choices"][0]["finish_reason"] = json!("length");
        for bad in [
            json!({"choices": []}),
            json!({"choices": [{"message": {"role": "assistant", "content": "approve"}}]}),
            answer(json!([])),
            answer(json!([call(args.clone()), call(args.clone())])),
            answer(json!([call(json!({"decision": "approve", "reasoning": "object, not string"}))])),
            answer(json!([call(json!("{\"decision\":\"approve\""))])),
            answer(json!([{"type": "function", "function": {"name": "other", "arguments": args.clone()}}])),
            answer(json!([{"type": "function"}])),
            cut,
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }
}
