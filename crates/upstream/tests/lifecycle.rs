//! One upstream's life through its one handle: restart (calls in flight
//! finish on the old process), replace (a new definition), stop (calls in
//! flight fail with the reason), against a real child process.

mod scripted;

use std::sync::Arc;
use std::time::Duration;

use scripted::Events;
use tokio::sync::{mpsc, watch};
use warden_config::{Supervision, Transport};
use warden_upstream::{Connection, Upstream, UpstreamSpec};

/// A stdio MCP server in Python: `whoami` answers with its pid and `$TAG`,
/// `sleep` answers after `seconds`.
const SERVER: &str = r#"
import json, os, sys, time
for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "p", "version": "1"}}
    elif message["params"]["name"] == "sleep":
        time.sleep(message["params"]["arguments"]["seconds"])
        result = {"slept": True}
    else:
        result = {"pid": os.getpid(), "tag": os.environ.get("TAG", "")}
    print(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}), flush=True)
"#;

const PATIENCE: Duration = Duration::from_secs(20);

fn spec(tag: &str) -> UpstreamSpec {
    UpstreamSpec {
        name: "py".into(),
        transport: Transport::Stdio {
            command: "python3".into(),
            args: vec!["-c".into(), SERVER.into()],
            env: [("TAG".to_owned(), tag.to_owned())].into_iter().collect(),
            cwd: None,
        },
        supervision: Supervision { restart_grace_ms: 10_000, ..Supervision::default() },
        max_message_bytes: 1 << 20,
        watch: None,
        sandbox: None,
        // These tests script a 2025-era server's every answer.
        protocol: warden_config::ProtocolEra::Mcp2025,
    }
}

async fn call(connection: &Connection, tool: &str, arguments: &str) -> Result<serde_json::Value, String> {
    let params = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
    let answer = connection.request("tools/call", Some(&params)).await.map_err(|err| err.to_string())?;
    serde_json::from_str(answer.payload().unwrap_or("null")).map_err(|err| err.to_string())
}

async fn ready(upstream: &Upstream) -> Arc<Connection> {
    // `settled` also returns on a failure: wait for a fresh connection.
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let Some(connection) = upstream.settled(PATIENCE).await {
                return connection;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the upstream got ready")
}

#[tokio::test]
async fn restart_replace_and_stop_go_through_one_handle() {
    let (sink, _events) = mpsc::unbounded_channel();
    let (_init, init_rx) = watch::channel(Some(Arc::from(r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#)));
    let upstream = Upstream::spawn(0, spec("first"), init_rx, Arc::new(Events(sink)), Default::default());
    let first = ready(&upstream).await;
    let before = call(&first, "whoami", "{}").await.expect("whoami");
    assert_eq!(before["tag"], "first");

    // A call in flight when the restart is asked finishes on the old process.
    let in_flight = tokio::spawn({
        let first = first.clone();
        async move { call(&first, "sleep", r#"{"seconds":1}"#).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    upstream.restart("a test asked");
    // While the old process finishes its calls, new requests wait for the new one.
    tokio::time::timeout(PATIENCE, async {
        while upstream.connection().is_some_and(|connection| Arc::ptr_eq(&connection, &first)) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the old connection is no longer handed out");
    let answered = tokio::time::timeout(PATIENCE, in_flight).await.expect("no hang").expect("task");
    assert_eq!(answered.expect("answered by the old process")["slept"], true);
    let second = ready(&upstream).await;
    assert!(!Arc::ptr_eq(&first, &second));
    let after = call(&second, "whoami", "{}").await.expect("whoami");
    assert_ne!(after["pid"], before["pid"], "a new process");

    // A new definition, same handle.
    upstream.replace(spec("second"));
    let mut third = ready(&upstream).await;
    while Arc::ptr_eq(&third, &second) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        third = ready(&upstream).await;
    }
    assert_eq!(call(&third, "whoami", "{}").await.expect("whoami")["tag"], "second");
    assert_eq!(upstream.spec().transport, spec("second").transport);

    // Stopping fails what is in flight, with the reason.
    let doomed = tokio::spawn({
        let third = third.clone();
        async move { call(&third, "sleep", r#"{"seconds":30}"#).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    tokio::time::timeout(PATIENCE, upstream.stop("the test is over")).await.expect("stopped in time");
    let failed = tokio::time::timeout(PATIENCE, doomed).await.expect("no hang").expect("task");
    assert!(failed.expect_err("failed").contains("the test is over"));
}
