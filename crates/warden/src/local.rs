//! An in-process MCP client of a Warden session, for the commands that
//! inspect or call through the same filtered hub the model sees.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use warden_config::Config;
use warden_gateway::Session;
use warden_pipeline::Hooks;
use warden_sandbox::SandboxReport;

/// How long one request may take.
const PATIENCE: Duration = Duration::from_secs(300);

/// A session with its upstreams, driven from inside the process.
pub struct LocalClient {
    session: Session,
    from_session: mpsc::UnboundedReceiver<String>,
    next_id: u64,
}

impl LocalClient {
    /// Starts the upstreams (their sandboxes reporting to `sandbox`),
    /// initializes, and waits until each is ready or down.
    pub async fn start(config: Arc<Config>, hooks: Hooks, sandbox: SandboxReport) -> anyhow::Result<LocalClient> {
        let (to_client, from_session) = mpsc::unbounded_channel();
        let session = Session::start(config, hooks, to_client, sandbox);
        let mut client = LocalClient { session, from_session, next_id: 1 };
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "warden-cli", "version": env!("CARGO_PKG_VERSION")}
        });
        let answer = client.request("initialize", params).await?;
        if answer.get("result").is_none() {
            bail!("initialize failed: {answer}");
        }
        client.session.handle(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
        client.session.settle().await;
        for upstream in client.session.status().upstreams {
            if upstream.state != "ready" {
                eprintln!("warden: server '{}' is not available: {}", upstream.name, upstream.state);
            }
        }
        Ok(client)
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Sends a request and returns the whole response. Requests from servers
    /// (sampling, elicitation, roots) are refused: there is no person or model
    /// here to answer them.
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.session.handle(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        loop {
            let text = tokio::time::timeout(PATIENCE, self.from_session.recv())
                .await
                .with_context(|| format!("{method} got no answer within {} s", PATIENCE.as_secs()))?
                .context("the session ended")?;
            let message: Value = serde_json::from_str(&text).context("the session sent invalid JSON")?;
            match (message.get("id"), message.get("method")) {
                (Some(answer_id), None) if *answer_id == json!(id) => return Ok(message),
                (Some(request_id), Some(asked)) => {
                    let refusal = json!({
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32601, "message": format!("the warden command line cannot answer {asked}")}
                    });
                    self.session.handle(refusal.to_string());
                }
                _ => {}
            }
        }
    }

    /// Stops the upstreams.
    pub async fn close(self) {
        self.session.shutdown().await;
    }
}
