//! The pipeline seams (view, guard, audit) with real implementations, a real
//! session and a real upstream process: what later issues plug into.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use warden_gateway::Session;
use warden_gateway::catalog::ItemKind;
use warden_pipeline::{Audit, AuditFuture, Call, Guard, Hooks, Outcome, Record, Verdict, View};

/// Hides `whoami`.
struct HideWhoami;

impl View for HideWhoami {
    fn shows(&self, _server: &str, kind: ItemKind, key: &str) -> bool {
        !(kind == ItemKind::Tool && key == "whoami")
    }
}

/// Denies `crash`, escalates `stderr`, allows the rest.
struct Rules;

impl Guard for Rules {
    fn decide(&self, call: &Call<'_>) -> Verdict {
        match call.name {
            "crash" => Verdict::Deny { rule: "no-crash".into(), reason: "crashing is not allowed".into() },
            "stderr" => Verdict::Escalate {
                rule: "ask-first".into(),
                reason: "writes to stderr".into(),
                escalation: Default::default(),
            },
            _ => Verdict::Allow,
        }
    }
}

/// Keeps `(server, name, outcome)` of each record; fails when `broken`.
#[derive(Default)]
struct Recorder {
    records: Mutex<Vec<(String, String, Outcome)>>,
    broken: bool,
}

impl Audit for Recorder {
    fn record<'a>(&'a self, record: Record<'a>) -> AuditFuture<'a> {
        Box::pin(async move {
            if self.broken {
                return Err("disk full".to_owned());
            }
            let entry = (record.call.server.to_owned(), record.call.name.to_owned(), record.outcome.clone());
            self.records.lock().unwrap().push(entry);
            Ok(())
        })
    }
}

struct InProcess {
    session: Session,
    out: mpsc::UnboundedReceiver<String>,
}

impl InProcess {
    fn start(hooks: Hooks) -> Self {
        let text = support::fixtures(&[("fx", &[])], "");
        let config = warden_config::parse(std::path::Path::new("t.yaml"), &text, &|_| None).unwrap();
        let (to_client, out) = mpsc::unbounded_channel();
        let session = Session::start(Arc::new(config), hooks, to_client, Default::default());
        InProcess { session, out }
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.session.handle(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        loop {
            let text = tokio::time::timeout(support::PATIENCE, self.out.recv()).await.unwrap().unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["id"] == id {
                return value;
            }
        }
    }

    async fn initialize(&mut self) {
        let params =
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        self.request(0, "initialize", params).await;
        self.session.handle(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
    }
}

#[tokio::test]
async fn view_hides_guard_decides_and_audit_records_before_the_answer() {
    let recorder = Arc::new(Recorder::default());
    let hooks = Hooks {
        view: Arc::new(HideWhoami),
        guard: Arc::new(Rules),
        audit: Some(recorder.clone()),
        pins: None,
        approver: None,
        ..Hooks::default()
    };
    let mut warden = InProcess::start(hooks);
    warden.initialize().await;

    let echo = warden.request(1, "tools/call", json!({"name": "fx__echo", "arguments": {"text": "ok"}})).await;
    assert_eq!(echo["result"]["content"][0]["text"], "ok");

    let list = warden.request(2, "tools/list", json!({})).await;
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"fx__echo") && !names.contains(&"fx__whoami"), "{names:?}");
    let hidden = warden.request(3, "tools/call", json!({"name": "fx__whoami", "arguments": {}})).await;
    assert_eq!(hidden["error"]["message"], "Unknown tool: fx__whoami", "hidden answers like missing");

    let denied = warden.request(4, "tools/call", json!({"name": "fx__crash", "arguments": {}})).await;
    assert_eq!(denied["result"]["isError"], true);
    assert_eq!(denied["result"]["content"][0]["text"], "Denied by policy 'no-crash': crashing is not allowed");
    let escalated = warden.request(5, "tools/call", json!({"name": "fx__stderr", "arguments": {"text": "x"}})).await;
    let text = escalated["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Approval required by policy 'ask-first'") && text.contains("denied"), "{text}");
    // The fixture is alive: the denied crash never reached it.
    let echo = warden.request(6, "tools/call", json!({"name": "fx__echo", "arguments": {"text": "alive"}})).await;
    assert_eq!(echo["result"]["content"][0]["text"], "alive");

    let records = recorder.records.lock().unwrap().clone();
    let outcomes: Vec<(&str, &Outcome)> = records.iter().map(|(_, name, outcome)| (name.as_str(), outcome)).collect();
    assert_eq!(
        outcomes,
        [
            ("echo", &Outcome::Result),
            ("crash", &Outcome::Refused),
            ("stderr", &Outcome::Refused),
            ("echo", &Outcome::Result)
        ]
    );
    assert!(records.iter().all(|(server, _, _)| server == "fx"));
    warden.session.shutdown().await;
}

#[tokio::test]
async fn an_audit_that_cannot_write_withholds_the_answer() {
    let hooks = Hooks { audit: Some(Arc::new(Recorder { broken: true, ..Recorder::default() })), ..Hooks::default() };
    let mut warden = InProcess::start(hooks);
    warden.initialize().await;
    let answer = warden.request(1, "tools/call", json!({"name": "fx__echo", "arguments": {"text": "secret"}})).await;
    assert!(answer.get("result").is_none(), "fails closed: {answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("disk full"));
    // Hooks swap atomically: after a reload the same session works again.
    warden.session.set_hooks(Hooks::default());
    let answer = warden.request(2, "tools/call", json!({"name": "fx__echo", "arguments": {"text": "back"}})).await;
    assert_eq!(answer["result"]["content"][0]["text"], "back");
    tokio::time::sleep(Duration::from_millis(10)).await;
    warden.session.shutdown().await;
}
