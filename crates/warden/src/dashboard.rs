//! What the running Warden shows of itself on the dashboard and to `warden
//! status`: its servers and sessions (read from the front), each tool's
//! figures over the last 5 and 60 minutes and the security counts (read
//! from the metrics), and the audit trail (read from the log).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden_approval::{Board, Dashboard};
use warden_audit::Query;
use warden_gateway::Session;
use warden_gateway::front::HttpFront;
use warden_gateway::overview::{Overview, ServerView};
use warden_metrics::Metrics;
use warden_metrics::history::{History, Window};

/// How often the per-tool counts are copied into the history.
const SNAPSHOT_EVERY: Duration = Duration::from_secs(15);
/// The windows shown, and so how far back the history goes.
const WINDOWS: [(&str, Duration); 2] = [("5m", Duration::from_secs(300)), ("60m", Duration::from_secs(3600))];
/// The most records one audit search returns.
const AUDIT_LIMIT: usize = 1000;

/// Where the servers and sessions are read.
enum Served {
    /// The stdio front's one session.
    Session(Session),
    /// The HTTP front's sessions.
    Front(HttpFront),
}

/// The [`Dashboard`] of this process.
pub struct ProcessDashboard {
    served: Served,
    metrics: Arc<Metrics>,
    history: Mutex<History>,
    started: Instant,
    audit: Option<PathBuf>,
}

/// Puts the dashboard of the stdio front's `session` on `board`.
pub fn show_session(
    board: Option<&Arc<Board>>,
    config: &warden_config::Config,
    metrics: Option<&Arc<Metrics>>,
    session: &Session,
) {
    show(board, config, metrics, Served::Session(session.clone()));
}

/// Puts the dashboard of the HTTP `front` on `board`.
pub fn show_front(
    board: Option<&Arc<Board>>,
    config: &warden_config::Config,
    metrics: Option<&Arc<Metrics>>,
    front: &HttpFront,
) {
    show(board, config, metrics, Served::Front(front.clone()));
}

fn show(board: Option<&Arc<Board>>, config: &warden_config::Config, metrics: Option<&Arc<Metrics>>, served: Served) {
    let (Some(board), Some(metrics)) = (board, metrics) else { return };
    let now = Instant::now();
    let dashboard = Arc::new(ProcessDashboard {
        served,
        metrics: metrics.clone(),
        history: Mutex::new(History::new(now, WINDOWS[1].1)),
        started: now,
        audit: config.audit.as_ref().map(|audit| crate::hooks::expand_home(&audit.path)),
    });
    tokio::spawn(snapshots(Arc::downgrade(&dashboard)));
    board.set(dashboard);
}

/// Copies the counts into the history every [`SNAPSHOT_EVERY`], while the
/// dashboard lives.
async fn snapshots(dashboard: Weak<ProcessDashboard>) {
    let mut ticks = tokio::time::interval(SNAPSHOT_EVERY);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(dashboard) = dashboard.upgrade() else { return };
        warden_sync::lock(&dashboard.history).record(&dashboard.metrics, Instant::now());
    }
}

impl ProcessDashboard {
    fn overview(&self) -> Overview {
        match &self.served {
            Served::Session(session) => session.overview(),
            Served::Front(front) => front.overview(),
        }
    }
}

impl Dashboard for ProcessDashboard {
    fn status(&self) -> Value {
        let overview = self.overview();
        let now = Instant::now();
        let windows: Vec<(&str, Window)> = {
            let history = warden_sync::lock(&self.history);
            WINDOWS.iter().map(|(name, length)| (*name, history.window(&self.metrics, now, *length))).collect()
        };
        let last_minute = warden_sync::lock(&self.history).window(&self.metrics, now, Duration::from_secs(60));
        let mut tools = serde_json::Map::new();
        for (name, window) in &windows {
            tools.insert((*name).to_owned(), window_json(window));
        }
        let clients: Vec<Value> = overview
            .clients
            .iter()
            .map(|client| {
                json!({
                    "front": client.front,
                    "client": client.client,
                    "protocolVersion": client.protocol_version,
                    "principal": client.principal,
                })
            })
            .collect();
        json!({
            "uptimeSecs": self.started.elapsed().as_secs(),
            "servers": servers_json(&overview.configured, &overview.servers),
            "clients": clients,
            "rates": {
                "spanSecs": last_minute.span.as_secs(),
                "requestsPerSecond": round(last_minute.requests_per_second()),
                "callsPerSecond": round(last_minute.calls_per_second()),
            },
            "tools": tools,
            "security": security_json(&self.metrics),
            "audit": {"configured": self.audit.is_some()},
        })
    }

    fn audit(&self, filters: &[(String, String)]) -> Result<Value, String> {
        let Some(path) = &self.audit else { return Err("no audit log is configured (audit.path)".into()) };
        let mut query = Query::default();
        let mut limit = 200;
        for (key, value) in filters {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let value = value.to_owned();
            match key.as_str() {
                "since" => query.since = Some(warden_audit::query_time(&value)?),
                "until" => query.until = Some(warden_audit::query_time(&value)?),
                "server" => query.server = Some(value),
                "tool" => query.tool = Some(value),
                "decision" => query.decision = Some(value),
                "rule" => query.rule = Some(value),
                "client" => query.client = Some(value),
                "limit" => {
                    limit = value.parse::<usize>().map_err(|_| format!("limit {value:?} is not a number"))?;
                    limit = limit.min(AUDIT_LIMIT);
                }
                other => return Err(format!("unknown filter {other:?}")),
            }
        }
        let found = warden_audit::recent(path, &query, Some(limit)).map_err(|err| err.to_string())?;
        let records: Vec<Value> = found.into_iter().map(|(_, record)| record).collect();
        Ok(json!({"records": records, "limit": limit}))
    }

    fn verify_audit(&self) -> Value {
        let Some(path) = &self.audit else { return json!({"configured": false}) };
        match warden_audit::verify(path) {
            Ok(report) => match report.first_broken {
                None => json!({"configured": true, "intact": true, "records": report.records}),
                Some(broken) => json!({
                    "configured": true,
                    "intact": false,
                    "records": report.records,
                    "brokenAt": {"line": broken.line, "seq": broken.seq, "reason": broken.reason},
                }),
            },
            Err(err) => json!({"configured": true, "intact": false, "error": err.to_string()}),
        }
    }
}

/// Three significant decimals are plenty for a rate.
fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

fn window_json(window: &Window) -> Value {
    let tools: Vec<Value> = window
        .tools
        .iter()
        .map(|tool| {
            json!({
                "server": tool.server,
                "tool": tool.tool,
                "calls": tool.calls,
                "errors": tool.errors,
                "errorRate": round(tool.errors as f64 / tool.calls.max(1) as f64),
                "p50Ms": round(tool.p50 * 1000.0),
                "p95Ms": round(tool.p95 * 1000.0),
                "p99Ms": round(tool.p99 * 1000.0),
            })
        })
        .collect();
    json!({"spanSecs": window.span.as_secs(), "tools": tools})
}

/// One entry per server: its connections' states counted, the worst one
/// first, with why it is down, its restarts and its sandbox. A configured
/// server no session has started is `idle`.
fn servers_json(configured: &[String], views: &[ServerView]) -> Vec<Value> {
    let mut names: Vec<&str> = configured.iter().map(String::as_str).collect();
    for view in views {
        if !names.contains(&view.name.as_str()) {
            names.push(&view.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let own: Vec<&ServerView> = views.iter().filter(|view| view.name == name).collect();
            let mut states: BTreeMap<&str, usize> = BTreeMap::new();
            for view in &own {
                *states.entry(view.state).or_default() += 1;
            }
            let state = ["down", "refused", "restarting", "starting", "ready", "stopped"]
                .into_iter()
                .find(|state| states.contains_key(state))
                .unwrap_or("idle");
            json!({
                "name": name,
                "state": state,
                "states": states,
                "connections": own.len(),
                "reason": own.iter().find_map(|view| view.reason.clone()),
                "restarts": own.iter().map(|view| view.restarts).sum::<u64>(),
                "sandbox": own.iter().find_map(|view| view.sandbox.clone()),
                "shared": own.iter().any(|view| view.shared),
            })
        })
        .collect()
}

/// Denials and escalations by rule, refused by the limits, sandbox
/// refusals, pin drift and approvals settled, from the counters.
fn security_json(metrics: &Metrics) -> Value {
    let [policy, limits, sandbox, drift, approvals] = metrics.samples_of([
        "warden_policy_decisions_total",
        "warden_limit_decisions_total",
        "warden_sandbox_refusals_total",
        "warden_pin_drift_total",
        "warden_approval_decisions_total",
    ]);
    let rows = |samples: Vec<warden_metrics::reading::Sample>, keys: &[&str]| -> Vec<Value> {
        let mut rows: Vec<Value> = samples
            .iter()
            .filter(|sample| sample.value > 0.0)
            .map(|sample| {
                let mut row = serde_json::Map::new();
                for key in keys {
                    row.insert((*key).to_owned(), json!(sample.label(key)));
                }
                row.insert("count".into(), json!(sample.value as u64));
                Value::Object(row)
            })
            .collect();
        rows.sort_by(|a, b| b["count"].as_u64().cmp(&a["count"].as_u64()));
        rows
    };
    // An allowed call is not a security event.
    let policy: Vec<_> = policy.into_iter().filter(|sample| sample.label("decision") != "allow").collect();
    json!({
        "policy": rows(policy, &["decision", "rule"]),
        "limits": rows(limits, &["decision", "rule"]),
        "sandbox": rows(sandbox, &["server", "kind"]),
        "pinDrift": rows(drift, &["server"]),
        "approvals": rows(approvals, &["outcome", "channel"]),
    })
}
