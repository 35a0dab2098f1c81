//! The two wire formats: one forced tool call, `record_decision`, whose
//! arguments are read strictly.

mod anthropic;
mod openai;

use serde_json::{Map, Value, json};

use crate::assessment::Decision;
use crate::prompt::{cap, strip_controls};
use crate::settings::Api;

/// The one tool the model must call.
pub(crate) const TOOL_NAME: &str = "record_decision";

/// What the tool is for, as the model is told.
const TOOL_DESCRIPTION: &str =
    "Record whether the user's message clearly and specifically authorizes the escalated call.";

/// The most tokens the model may answer with: a decision and one sentence.
const MAX_TOKENS: u32 = 256;

/// The longest reasoning kept, in characters.
pub const MAX_REASONING_CHARS: usize = 300;

/// The model's answer, once it passed the strict reading.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub decision: Decision,
    pub reasoning: String,
}

/// The request body for `api`.
pub(crate) fn body(api: Api, model: &str, system: &str, user: &str) -> Value {
    match api {
        Api::Anthropic => anthropic::body(model, system, user),
        Api::OpenAi => openai::body(model, system, user),
    }
}

/// Reads the model's answer, or says why it is not a decision.
pub(crate) fn parse(api: Api, answer: &[u8]) -> Result<Verdict, String> {
    let answer: Value = serde_json::from_slice(answer).map_err(|err| format!("the answer is not JSON ({err})"))?;
    match api {
        Api::Anthropic => anthropic::parse(&answer),
        Api::OpenAi => openai::parse(&answer),
    }
}

/// The JSON schema of `record_decision`'s arguments: no `deny` to choose.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": { "type": "string", "enum": ["approve", "escalate"] },
            "reasoning": { "type": "string", "maxLength": MAX_REASONING_CHARS },
        },
        "required": ["decision", "reasoning"],
        "additionalProperties": false,
    })
}

/// Reads `record_decision`'s arguments: exactly `decision` (approve or
/// escalate) and `reasoning` (a string, cut to its limit), nothing else.
fn verdict(arguments: &Value) -> Result<Verdict, String> {
    let Some(arguments) = arguments.as_object() else {
        return Err(format!("{TOOL_NAME}'s arguments are not an object"));
    };
    if let Some(extra) = arguments.keys().find(|key| !matches!(key.as_str(), "decision" | "reasoning")) {
        return Err(format!("{TOOL_NAME} has an unexpected argument {:?}", shown(extra)));
    }
    let decision = match arguments.get("decision") {
        Some(Value::String(word)) if word == "approve" => Decision::Approve,
        Some(Value::String(word)) if word == "escalate" => Decision::Escalate,
        Some(other) => {
            return Err(format!("the decision {} is neither approve nor escalate", shown(&other.to_string())));
        }
        None => return Err(format!("{TOOL_NAME} has no decision")),
    };
    let Some(Value::String(reasoning)) = arguments.get("reasoning") else {
        return Err(format!("{TOOL_NAME} has no reasoning string"));
    };
    Ok(Verdict { decision, reasoning: cap(&strip_controls(reasoning, false), MAX_REASONING_CHARS) })
}

/// A piece of the model's answer, safe to quote in a reason.
fn shown(text: &str) -> String {
    cap(&strip_controls(text, false), 60)
}

/// `value[key]` as an object, or why not.
fn object<'a>(value: &'a Value, key: &str) -> Result<&'a Map<String, Value>, String> {
    value.get(key).and_then(Value::as_object).ok_or_else(|| format!("the answer has no {key:?} object"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_approve_or_escalate_with_a_reasoning_is_a_verdict() {
        let approve = verdict(&json!({"decision": "approve", "reasoning": "asked\nfor it"})).unwrap();
        assert_eq!(approve, Verdict { decision: Decision::Approve, reasoning: "askedfor it".into() });
        let long = verdict(&json!({"decision": "escalate", "reasoning": "x".repeat(1000)})).unwrap();
        assert_eq!(long.decision, Decision::Escalate);
        assert_eq!(long.reasoning.chars().count(), MAX_REASONING_CHARS);

        for bad in [
            json!({"decision": "deny", "reasoning": "no"}),
            json!({"decision": "APPROVE", "reasoning": "yes"}),
            json!({"decision": true, "reasoning": "yes"}),
            json!({"decision": "approve"}),
            json!({"reasoning": "yes"}),
            json!({"decision": "approve", "reasoning": 1}),
            json!({"decision": "approve", "reasoning": "yes", "also": "deny"}),
            json!(["approve", "yes"]),
        ] {
            assert!(verdict(&bad).is_err(), "{bad}");
        }
    }
}
