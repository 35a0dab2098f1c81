//! Warden's Prometheus metrics.
//!
//! One [`Metrics`] per process holds every family and renders them in the
//! OpenMetrics text format ([`Metrics::render`]). It learns what happens in
//! two ways:
//! - as the gateway's [`Observer`](warden_pipeline::Observer): each request
//!   a client made (`mcp_server_operation_duration_seconds`) and each one
//!   Warden forwarded to a server (`mcp_client_operation_duration_seconds`),
//!   named and labelled as OpenTelemetry's MCP conventions say, plus
//!   sessions and multi-round requests ([`observer`]);
//! - by wrapping the pipeline's stages ([`layers`]): the policy's and the
//!   limits' decisions, approvals, audit appends, pin drift. A stage knows
//!   nothing of metrics; the layer sees what it returns.
//!
//! Labels are bounded (see [`names`]): no session ids, arguments or URIs.

#![warn(missing_docs)]

pub mod history;
mod labels;
pub mod layers;
mod names;
mod observer;
mod operations;
pub mod reading;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use std::collections::HashMap;
#[cfg(test)]
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use labels::{Labels, Value};
use names::Names;
pub use names::OTHER;
use operations::Operations;
use warden_sync::lock;

/// The `Content-Type` of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How many distinct tool (and prompt) names are labelled before the rest
/// count as [`OTHER`]; as many again for servers, rules and channels.
const NAME_CAP: usize = 1000;

/// How long sessions last, from a second to a day.
const SESSION_BUCKETS: [f64; 10] = [1.0, 10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 28800.0, 86400.0];

/// How long a call waits for a person, from a second to an hour.
const APPROVAL_BUCKETS: [f64; 10] = [1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0];

/// An audit append, from 50 µs (buffered) to a second (a slow disk's sync).
const AUDIT_BUCKETS: [f64; 12] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.25, 1.0];

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Lists every upstream connection by server name and state.
pub type Census = Box<dyn Fn() -> Vec<(String, &'static str)> + Send + Sync>;

/// Counts the HTTP front's open client connections.
pub type ConnectionCount = Box<dyn Fn() -> usize + Send + Sync>;

/// Lists, per server, the distinct calls the breaker is refusing now;
/// `None` once its limiter is gone (a reload replaced it).
pub type BreakerCount = Box<dyn Fn() -> Option<Vec<(String, usize)>> + Send + Sync>;

/// Every metric of one Warden process.
pub struct Metrics {
    registry: Registry,
    served: Operations,
    called: Operations,
    sessions: Family<Labels<1>, Gauge>,
    session_duration: Histograms<Labels<1>>,
    rounds: Family<Labels<1>, Counter>,
    policy: Family<Labels<2>, Counter>,
    limits: Family<Labels<2>, Counter>,
    approvals_pending: Gauge,
    approvals: Family<Labels<2>, Counter>,
    approval_wait: Histograms<Labels<1>>,
    audit_appends: Family<Labels<1>, Counter>,
    audit_append: Histogram,
    pin_drift: Family<Labels<1>, Counter>,
    sandbox_refusals: Family<Labels<2>, Counter>,
    upstream_down: Family<Labels<1>, Counter>,
    upstreams: Family<Labels<2>, Gauge>,
    /// Where the upstreams' states are read at each scrape; the lock also
    /// keeps two scrapes from rebuilding `upstreams` at once.
    censuses: Mutex<Vec<Census>>,
    connections: Family<Labels<1>, Gauge>,
    /// Where the HTTP front's open connections are counted, at each scrape.
    connection_counts: Mutex<Vec<ConnectionCount>>,
    breakers: Family<Labels<1>, Gauge>,
    /// Where the breakers' state is read, at each scrape.
    breaker_counts: Mutex<Vec<BreakerCount>>,
    /// The last scrape's size, with room to grow.
    last_size: AtomicUsize,
    tools: Names,
    servers: Names,
    rules: Names,
    channels: Names,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every family registered, none with a value yet.
    pub fn new() -> Metrics {
        fn sessions() -> Histogram {
            Histogram::new(SESSION_BUCKETS)
        }
        fn approvals() -> Histogram {
            Histogram::new(APPROVAL_BUCKETS)
        }
        let metrics = Metrics {
            registry: Registry::default(),
            served: Operations::new(
                "mcp_server_operation_duration",
                "MCP requests clients made of Warden, from arrival to answer (OpenTelemetry mcp.server.operation.duration)",
            ),
            called: Operations::new(
                "mcp_client_operation_duration",
                "MCP requests Warden forwarded to a server, from sending to answer (OpenTelemetry mcp.client.operation.duration)",
            ),
            sessions: Family::default(),
            session_duration: Family::new_with_constructor(sessions),
            rounds: Family::default(),
            policy: Family::default(),
            limits: Family::default(),
            approvals_pending: Gauge::default(),
            approvals: Family::default(),
            approval_wait: Family::new_with_constructor(approvals),
            audit_appends: Family::default(),
            audit_append: Histogram::new(AUDIT_BUCKETS),
            pin_drift: Family::default(),
            sandbox_refusals: Family::default(),
            upstream_down: Family::default(),
            upstreams: Family::default(),
            censuses: Mutex::new(Vec::new()),
            connections: Family::default(),
            connection_counts: Mutex::new(Vec::new()),
            breakers: Family::default(),
            breaker_counts: Mutex::new(Vec::new()),
            last_size: AtomicUsize::new(0),
            tools: Names::new(NAME_CAP),
            servers: Names::new(NAME_CAP),
            rules: Names::new(NAME_CAP),
            channels: Names::new(NAME_CAP),
        };
        metrics.registered()
    }

    fn registered(mut self) -> Metrics {
        let r = &mut self.registry;
        r.register_with_unit(
            "mcp_server_session_duration",
            "Client sessions, from start to end, by front (OpenTelemetry mcp.server.session.duration)",
            Unit::Seconds,
            self.session_duration.clone(),
        );
        r.register("warden_sessions", "Client sessions open now, by front", self.sessions.clone());
        r.register(
            "warden_mrtr_rounds",
            "Requests sent again with the input a 2026-07-28 server asked for, by server",
            self.rounds.clone(),
        );
        r.register(
            "warden_policy_decisions",
            "Policy decisions, by decision and the rule that made them (none for an allowed call)",
            self.policy.clone(),
        );
        r.register(
            "warden_limit_decisions",
            "Calls the rate limits and the loop breaker refused, by rule (rate-limit:N, breaker)",
            self.limits.clone(),
        );
        r.register(
            "warden_approvals_pending",
            "Escalated calls waiting for a decision now",
            self.approvals_pending.clone(),
        );
        r.register(
            "warden_approval_decisions",
            "Approvals settled, by outcome (approved, denied, expired, withdrawn) and channel",
            self.approvals.clone(),
        );
        r.register_with_unit(
            "warden_approval_wait",
            "How long escalated calls waited for their decision, by outcome",
            Unit::Seconds,
            self.approval_wait.clone(),
        );
        r.register("warden_audit_appends", "Audit records written, by result (ok, failed)", self.audit_appends.clone());
        r.register_with_unit(
            "warden_audit_append",
            "How long writing one audit record took",
            Unit::Seconds,
            self.audit_append.clone(),
        );
        r.register(
            "warden_pin_drift",
            "Tool definitions seen changed since they were pinned, by server",
            self.pin_drift.clone(),
        );
        r.register(
            "warden_sandbox_refusals",
            "What a server's sandbox refused, by server and kind (network)",
            self.sandbox_refusals.clone(),
        );
        r.register(
            "warden_upstream_down",
            "Times a server's connection ended unexpectedly (exit, crash, failed start, unreachable), each followed by a restart, by server",
            self.upstream_down.clone(),
        );
        r.register(
            "warden_connections",
            "Client connections open now, by front (HTTP; stdio has its one)",
            self.connections.clone(),
        );
        r.register(
            "warden_breaker_open",
            "Distinct calls (tool and arguments) the identical-call breaker is refusing now, by server",
            self.breakers.clone(),
        );
        r.register(
            "warden_upstreams",
            "Upstream connections now, by server and state (starting, restarting, ready, down, stopped, refused); a shared server once",
            self.upstreams.clone(),
        );
        self
    }

    /// Reads the upstreams' states from `census` at each scrape (a front
    /// registers its sessions').
    pub fn count_upstreams_with(&self, census: Census) {
        lock(&self.censuses).push(census);
    }

    /// Reads the HTTP front's open connections from `count` at each scrape.
    pub fn count_connections_with(&self, count: ConnectionCount) {
        lock(&self.connection_counts).push(count);
    }

    /// Reads the breaker's state from `count` at each scrape (each
    /// configuration's limiter registers its own).
    pub fn count_breakers_with(&self, count: BreakerCount) {
        lock(&self.breaker_counts).push(count);
    }

    /// The samples named `name` (with its suffix: `warden_policy_decisions_total`).
    pub fn samples(&self, name: &str) -> Vec<reading::Sample> {
        reading::samples(&self.render(), name)
    }

    /// The samples of each of `names`, from one scrape.
    pub fn samples_of<const N: usize>(&self, names: [&str; N]) -> [Vec<reading::Sample>; N] {
        let text = self.render();
        names.map(|name| reading::samples(&text, name))
    }

    /// Every metric in the OpenMetrics text format ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let counts = lock(&self.connection_counts);
        if !counts.is_empty() {
            let open: usize = counts.iter().map(|count| count()).sum();
            let labels = Labels([("front", Some(Value::Word("http")))]);
            self.connections.get_or_create(&labels).set(i64::try_from(open).unwrap_or(i64::MAX));
        }
        drop(counts);
        let censuses = lock(&self.censuses);
        if !censuses.is_empty() {
            let mut counts: HashMap<(String, &'static str), i64> = HashMap::new();
            for census in censuses.iter() {
                for (server, state) in census() {
                    *counts.entry((server, state)).or_default() += 1;
                }
            }
            // Rebuilt: a server removed, or a state left, is no longer listed.
            self.upstreams.clear();
            for ((server, state), count) in counts {
                let labels = Labels([("server", Some(self.server(&server))), ("state", Some(Value::Word(state)))]);
                self.upstreams.get_or_create(&labels).set(count);
            }
        }
        let mut breaker_counts = lock(&self.breaker_counts);
        if !breaker_counts.is_empty() {
            let mut open: HashMap<String, i64> = HashMap::new();
            breaker_counts.retain(|count| match count() {
                Some(servers) => {
                    for (server, calls) in servers {
                        *open.entry(server).or_default() += i64::try_from(calls).unwrap_or(i64::MAX);
                    }
                    true
                }
                None => false,
            });
            // Rebuilt: a breaker that closed is no longer listed.
            self.breakers.clear();
            for (server, calls) in open {
                self.breakers.get_or_create(&Labels([("server", Some(self.server(&server)))])).set(calls);
            }
        }
        drop(breaker_counts);
        // Sized as the last scrape was, so the text is not copied as it grows.
        let mut text = String::with_capacity(self.last_size.load(Ordering::Relaxed).max(64 * 1024));
        self.served.encode(&mut text);
        self.called.encode(&mut text);
        // Writing to a String cannot fail; it ends the text with `# EOF`.
        let _ = encode(&mut text, &self.registry);
        self.last_size.store(text.len() + text.len() / 8, Ordering::Relaxed);
        text
    }

    /// Counts an operation the sandbox of `server` refused (`kind`:
    /// `network`, a connection the egress proxy refused; `filesystem`, a
    /// tool error marked as the sandbox's refusal of a file operation).
    pub fn sandbox_refused(&self, server: &str, kind: &'static str) {
        let labels = Labels([("server", Some(self.server(server))), ("kind", Some(Value::Word(kind)))]);
        self.sandbox_refusals.get_or_create(&labels).inc();
    }

    fn server(&self, name: &str) -> Value {
        Value::Name(self.servers.get(name))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use warden_jsonrpc::Method;
    use warden_pipeline::{ErrorType, Observer, Operation, Target};

    use super::*;

    #[test]
    fn operations_are_labelled_as_the_conventions_name_them() {
        let metrics = Metrics::new();
        let call = |method, target, error| Operation {
            target,
            server: Some("db"),
            error,
            ..Operation::new(method, Duration::from_millis(3))
        };
        metrics.served(&call(&Method::ToolsCall, Some(Target::Tool("query")), Some(ErrorType::ToolError)));
        metrics.called(&call(&Method::PromptsGet, Some(Target::Prompt("brief")), Some(ErrorType::Code(-32602))));
        metrics.served(&call(&Method::Other("vendor/secret-name".into()), None, None));
        let text = metrics.render();
        let served = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="query",server="db",error_type="tool_error"} 1"#;
        let called = r#"mcp_client_operation_duration_seconds_count{mcp_method_name="prompts/get",gen_ai_prompt_name="brief",server="db",error_type="-32602"} 1"#;
        assert!(text.contains(served), "{text}");
        assert!(text.contains(called), "{text}");
        // 3 ms falls in the 5 ms bucket, not in the 2.5 ms one.
        let bucket = |le: &str| {
            format!(
                r#"_bucket{{mcp_method_name="tools/call",gen_ai_tool_name="query",server="db",error_type="tool_error",le="{le}"}}"#
            )
        };
        assert!(text.contains(&format!("{} 1", bucket("0.005"))), "{text}");
        assert!(text.contains(&format!("{} 0", bucket("0.0025"))), "{text}");
        // A method a client made up is not a label.
        assert!(!text.contains("vendor/secret-name") && text.contains(r#"mcp_method_name="other""#), "{text}");
    }

    /// A series is found again by the borrowed names; tools past the cap
    /// share the `other` series, and a name longer than a label is cut.
    #[test]
    fn tools_past_the_cap_are_counted_as_other_and_known_ones_as_themselves() {
        let metrics = Metrics::new();
        let call = |tool: &str| {
            metrics.served(&Operation {
                target: Some(Target::Tool(tool)),
                server: Some("db"),
                ..Operation::new(&Method::ToolsCall, Duration::from_millis(1))
            })
        };
        for n in 0..NAME_CAP + 5 {
            call(&format!("t{n}"));
        }
        call("t0");
        call("t1004");
        let long = "x".repeat(300);
        call(&long);
        let text = metrics.render();
        let count = |tool: &str| {
            let line = format!(
                r#"mcp_server_operation_duration_seconds_count{{mcp_method_name="tools/call",gen_ai_tool_name="{tool}",server="db"}} "#
            );
            text.lines().find_map(|l| l.strip_prefix(line.as_str())).map(str::to_owned)
        };
        assert_eq!(count("t0").as_deref(), Some("2"));
        assert_eq!(count("t999").as_deref(), Some("1"));
        // t1000..t1004 (five), t1004 again, and the long name: seven.
        assert_eq!(count(OTHER).as_deref(), Some("7"));
        assert_eq!(count("t1004"), None);
    }

    #[test]
    fn the_census_is_read_at_each_scrape() {
        let metrics = Metrics::new();
        let states = Arc::new(Mutex::new(vec![("fx".to_owned(), "ready"), ("db".to_owned(), "down")]));
        let source = states.clone();
        metrics.count_upstreams_with(Box::new(move || lock(&source).clone()));
        let text = metrics.render();
        assert!(text.contains(r#"warden_upstreams{server="fx",state="ready"} 1"#), "{text}");
        assert!(text.contains(r#"warden_upstreams{server="db",state="down"} 1"#), "{text}");
        *lock(&states) = vec![("fx".to_owned(), "ready"), ("fx".to_owned(), "ready")];
        let text = metrics.render();
        assert!(text.contains(r#"warden_upstreams{server="fx",state="ready"} 2"#), "{text}");
        assert!(!text.contains(r#"server="db""#), "a state left is no longer listed: {text}");
    }
}
