//! What reaches the model: headers, the forced decision, and nothing of the
//! call but its identifiers, cleaned and capped.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use warden_autoapprove::{Api, Identifier, MAX_VALUE_CHARS, Request, SYSTEM_PROMPT};

use crate::fake_model::{FakeModel, Reply, Seen};
use crate::{APIS, KEY, approver, intent};

/// The `<data name="…">JSON</data>` elements of a user turn, in order.
fn data_elements(content: &str) -> Vec<(String, Value)> {
    let mut elements = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find("<data name=\"") {
        let after = &rest[start + "<data name=\"".len()..];
        let (name, after) = after.split_once("\">").expect("a data element's name");
        let (json, after) = after.split_once("</data>").expect("a closed data element");
        elements.push((name.to_owned(), serde_json::from_str(json).expect("JSON data")));
        rest = after;
    }
    elements
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().expect("an object").keys().map(String::as_str).collect()
}

/// The system prompt and the user turn of a request.
fn prompts(api: Api, seen: &Seen) -> (String, String) {
    let body = &seen.body;
    match api {
        Api::Anthropic => {
            assert_eq!(body["messages"].as_array().unwrap().len(), 1);
            assert_eq!(body["messages"][0]["role"], "user");
            (body["system"].as_str().unwrap().into(), body["messages"][0]["content"].as_str().unwrap().into())
        }
        Api::OpenAi => {
            assert_eq!(body["messages"].as_array().unwrap().len(), 2);
            assert_eq!(body["messages"][0]["role"], "system");
            assert_eq!(body["messages"][1]["role"], "user");
            (
                body["messages"][0]["content"].as_str().unwrap().into(),
                body["messages"][1]["content"].as_str().unwrap().into(),
            )
        }
    }
}

#[tokio::test]
async fn each_api_gets_its_headers_and_a_forced_record_decision() {
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": { "type": "string", "enum": ["approve", "escalate"] },
            "reasoning": { "type": "string", "maxLength": 300 },
        },
        "required": ["decision", "reasoning"],
        "additionalProperties": false,
    });
    for api in APIS {
        let fake = FakeModel::start([Reply::decision(api, "escalate", "r")]).await;
        crate::assess(&approver(api, &fake.base_url), &crate::identifiers(), Some(&crate::naming_intent())).await;
        let seen = &fake.seen()[0];
        let (headers, body) = (&seen.headers, &seen.body);

        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["temperature"], 0);
        assert_eq!(body["max_tokens"], 256);
        assert_eq!(body["tools"].as_array().unwrap().len(), 1, "only record_decision");
        match api {
            Api::Anthropic => {
                assert_eq!(headers["x-api-key"], KEY);
                assert_eq!(headers["anthropic-version"], "2023-06-01");
                assert!(!headers.contains_key("authorization"));
                assert_eq!(
                    keys(body),
                    BTreeSet::from([
                        "model",
                        "max_tokens",
                        "temperature",
                        "system",
                        "messages",
                        "tools",
                        "tool_choice"
                    ])
                );
                assert_eq!(body["tool_choice"], json!({ "type": "tool", "name": "record_decision" }));
                assert_eq!(body["tools"][0]["name"], "record_decision");
                assert_eq!(body["tools"][0]["input_schema"], schema);
            }
            Api::OpenAi => {
                assert_eq!(headers["authorization"], format!("Bearer {KEY}").as_str());
                assert!(!headers.contains_key("x-api-key"));
                assert_eq!(
                    keys(body),
                    BTreeSet::from(["model", "max_tokens", "temperature", "messages", "tools", "tool_choice"])
                );
                assert_eq!(
                    body["tool_choice"],
                    json!({ "type": "function", "function": { "name": "record_decision" } })
                );
                assert_eq!(body["tools"][0]["type"], "function");
                assert_eq!(body["tools"][0]["function"]["name"], "record_decision");
                assert_eq!(body["tools"][0]["function"]["parameters"], schema);
            }
        }
        assert_eq!(prompts(api, seen).0, SYSTEM_PROMPT);
    }
}

#[tokio::test]
async fn the_model_sees_only_cleaned_capped_identifiers_and_urls_as_hosts() {
    let long_path = format!("/srv/{}\u{1b}[2J\u{7}\u{85}/end-of-path", "deep/".repeat(100));
    let identifiers = [
        Identifier::Path(long_path.clone()),
        Identifier::Path("/tmp/a\u{0}b\nc\u{9b}d".into()),
        Identifier::Url("https://user:hunter2@Docs.Example.org:8443/private/path?token=abc123".into()),
    ];
    let user_words = "Please read the files under /srv and /tmp, and docs.example.org.\nThanks";
    for api in APIS {
        let fake = FakeModel::start([Reply::decision(api, "escalate", "r")]).await;
        let intent = intent(user_words);
        let request = Request {
            server: "fs\u{1b}]0;x\u{7}",
            tool: "read_file",
            reason: "reads outside the sandbox",
            identifiers: &identifiers,
            intent: Some(&intent),
        };
        approver(api, &fake.base_url).assess(&request).await;
        let seen = &fake.seen()[0];
        let (_, user) = prompts(api, seen);
        let elements = data_elements(&user);

        let names: Vec<&str> = elements.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["user_message", "call", "resource_identifiers"], "{user}");
        assert_eq!(elements[0].1, json!(user_words), "the user's words, newline kept");
        assert_eq!(
            elements[1].1,
            json!({ "server": "fs]0;x", "tool": "read_file", "escalation_reason": "reads outside the sandbox" })
        );
        let shown = elements[2].1.as_array().unwrap();
        assert_eq!(shown.len(), 3);
        let long = shown[0]["path"].as_str().unwrap();
        assert_eq!(long.chars().count(), MAX_VALUE_CHARS, "{long}");
        assert!(long.starts_with("/srv/deep/deep/") && long.ends_with('…'), "{long}");
        assert_eq!(shown[1], json!({ "path": "/tmp/abcd" }));
        assert_eq!(shown[2], json!({ "host": "docs.example.org" }));
        for value in shown.iter().flat_map(|item| item.as_object().unwrap().values()) {
            let value = value.as_str().unwrap();
            assert!(value.chars().count() <= MAX_VALUE_CHARS && !value.chars().any(char::is_control), "{value:?}");
        }

        let raw = String::from_utf8(seen.raw.to_vec()).unwrap();
        for hidden in ["hunter2", "private/path", "token=abc123", "8443", "end-of-path"] {
            assert!(!raw.contains(hidden), "{api:?}: {hidden:?} reached the model");
        }
    }
}
