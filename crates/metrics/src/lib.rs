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

mod labels;
pub mod layers;
mod names;
mod observer;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use labels::{Labels, OperationLabels, Value};
use names::Names;
pub use names::OTHER;

/// The `Content-Type` of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How many distinct tool (and prompt) names are labelled before the rest
/// count as [`OTHER`]; as many again for servers, rules and channels.
const NAME_CAP: usize = 1000;

/// Operation durations: OpenTelemetry's recommended boundaries (10 ms to
/// 300 s) with finer ones below, where a gateway's own work lies.
const OPERATION_BUCKETS: [f64; 19] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0,
];

/// How long sessions last, from a second to a day.
const SESSION_BUCKETS: [f64; 10] = [1.0, 10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 28800.0, 86400.0];

/// How long a call waits for a person, from a second to an hour.
const APPROVAL_BUCKETS: [f64; 10] = [1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0];

/// An audit append, from 50 µs (buffered) to a second (a slow disk's sync).
const AUDIT_BUCKETS: [f64; 12] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.25, 1.0];

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric of one Warden process.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    served: Histograms<OperationLabels>,
    called: Histograms<OperationLabels>,
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
    tools: Names,
    servers: Names,
    rules: Names,
    channels: Names,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every family registered, none with a value yet.
    pub fn new() -> Metrics {
        fn operations() -> Histogram {
            Histogram::new(OPERATION_BUCKETS)
        }
        fn sessions() -> Histogram {
            Histogram::new(SESSION_BUCKETS)
        }
        fn approvals() -> Histogram {
            Histogram::new(APPROVAL_BUCKETS)
        }
        let metrics = Metrics {
            registry: Registry::default(),
            served: Family::new_with_constructor(operations),
            called: Family::new_with_constructor(operations),
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
            "mcp_server_operation_duration",
            "MCP requests clients made of Warden, from arrival to answer (OpenTelemetry mcp.server.operation.duration)",
            Unit::Seconds,
            self.served.clone(),
        );
        r.register_with_unit(
            "mcp_client_operation_duration",
            "MCP requests Warden forwarded to a server, from sending to answer (OpenTelemetry mcp.client.operation.duration)",
            Unit::Seconds,
            self.called.clone(),
        );
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
        self
    }

    /// Every metric in the OpenMetrics text format ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut text = String::with_capacity(16 * 1024);
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// Counts a connection the sandbox of `server` refused (`kind`:
    /// `network`).
    pub fn sandbox_refused(&self, server: &str, kind: &'static str) {
        let labels = Labels([("server", Some(self.server(server))), ("kind", Some(Value::Word(kind)))]);
        self.sandbox_refusals.get_or_create(&labels).inc();
    }

    fn server(&self, name: &str) -> Value {
        Value::Name(self.servers.get(name))
    }
}
