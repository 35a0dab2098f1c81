//! End to end: with `approval.elicitation`, Warden asks a client that
//! declared form elicitation; accept approves, decline and cancel deny; a
//! client without the capability is never asked.

mod support;

use serde_json::{Value, json};
use support::approvals::{approval_config, approvals, call_echo, pending, wait_for_step};
use support::{Client, scratch_dir};

fn started(dir: &std::path::Path) -> Client {
    let mut client = Client::serve_initialized(&approval_config(dir, None, "  elicitation: true\n"));
    client.wait_for_tool("fx__echo");
    client
}

/// Waits for Warden's elicitation and answers it with `result`.
fn answer_elicitation(client: &mut Client, result: Value) -> Value {
    let asked = client.wait_method("elicitation/create");
    client.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": result}));
    asked["params"].clone()
}

#[test]
fn a_client_that_can_show_forms_approves_or_declines_in_place() {
    let dir = scratch_dir("elicit");
    let mut client = started(&dir);

    let id = call_echo(&mut client, "DROP TABLE e1", "t1");
    let params = answer_elicitation(&mut client, json!({"action": "accept", "content": {"approve": true}}));
    let message = params["message"].as_str().unwrap();
    assert_eq!(params["mode"], "form");
    assert_eq!(params["requestedSchema"]["properties"]["approve"]["type"], "boolean");
    assert!(
        message.contains("fx/echo") && message.contains("DROP TABLE e1") && message.contains("drops-need-a-human"),
        "{message}"
    );
    let answer = client.response(&id);
    assert_eq!(answer["result"]["content"][0]["text"], "DROP TABLE e1", "{}", answer.raw);
    let records = support::approvals::audit_records(&dir);
    let approval_id = records[0]["approval"]["id"].as_str().unwrap().to_owned();
    assert!(message.contains(&approval_id[..8]), "the message names the approval: {message}");
    let approved = wait_for_step(&dir, &approval_id, "approved");
    assert_eq!(approved["approval"]["channel"], "elicitation");

    for action in ["decline", "cancel"] {
        let id = call_echo(&mut client, "DROP TABLE e2", "t2");
        answer_elicitation(&mut client, json!({"action": action}));
        let answer = client.response(&id);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Escalation denied:") && text.contains("declined in the client"), "{action}: {text}");
        assert!(text.contains("warden approvals approve"), "says where else to approve: {text}");
    }

    // Decided elsewhere first: the client's form is withdrawn.
    let id = call_echo(&mut client, "DROP TABLE e3", "t3");
    let asked = client.wait_method("elicitation/create");
    let approval_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    assert!(approvals(&dir, &["approve", &approval_id]).0);
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE e3");
    let cancelled = client.wait_method("notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
}

#[test]
fn a_client_without_the_capability_is_never_asked() {
    let dir = scratch_dir("no-elicit");
    let path = dir.join("warden.yaml");
    std::fs::write(&path, approval_config(&dir, None, "  elicitation: true\n")).unwrap();
    let mut client = Client::start(&["serve", "--config", path.to_str().unwrap()], &[]);
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "plain", "version": "1"}}),
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    client.wait_for_tool("fx__echo");
    let id = call_echo(&mut client, "DROP TABLE n", "t");
    let approval_id = pending(&dir, 1)[0]["id"].as_str().unwrap().to_owned();
    assert!(approvals(&dir, &["approve", &approval_id]).0);
    assert_eq!(client.response(&id)["result"]["content"][0]["text"], "DROP TABLE n");
    let seen = client.drain(std::time::Duration::from_millis(300));
    assert!(seen.iter().all(|m| m["method"] != "elicitation/create"), "{seen:?}");
}

/// A 2026-07-28 client has no server requests: Warden's approval form rides
/// the call's `input_required`, under Warden's own key and state, and the
/// retry that accepts it runs the call; one that declines is refused.
#[test]
fn a_modern_client_approves_through_input_required() {
    let dir = scratch_dir("elicit-modern");
    let mut client = Client::serve(&approval_config(&dir, None, "  elicitation: true\n"));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let params = json!({"name": "fx__echo", "arguments": {"text": "DROP TABLE m1"}, "_meta": meta});
    let first = client.request("tools/call", params.clone());
    assert_eq!(first["result"]["resultType"], "input_required", "{}", first.raw);
    let requests = first["result"]["inputRequests"].as_object().unwrap();
    let (key, form) = requests.iter().next().unwrap();
    assert_eq!(form["method"], "elicitation/create");
    assert!(form["params"]["message"].as_str().unwrap().contains("DROP TABLE m1"), "{form}");

    let mut retry = params.clone();
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"approve": true}}});
    let done = client.request("tools/call", retry);
    assert_eq!(done["result"]["content"][0]["text"], "DROP TABLE m1", "{}", done.raw);
    assert_eq!(done["result"]["resultType"], "complete");

    let mut params = params;
    params["arguments"]["text"] = json!("DROP TABLE m2");
    let first = client.request("tools/call", params.clone());
    let key = first["result"]["inputRequests"].as_object().expect(&first.raw).keys().next().unwrap().clone();
    params["requestState"] = first["result"]["requestState"].clone();
    params["inputResponses"] = json!({key: {"action": "decline"}});
    let refused = client.request("tools/call", params);
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Escalation denied:"), "{}", refused.raw);
}
