//! The configuration's shape.

use std::path::PathBuf;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalConfig;
use crate::metrics::MetricsConfig;
use crate::policy::{Action, AuditConfig, Breaker, PinsConfig, Policy, RateLimit};
use crate::sandbox::{SandboxDefaults, SandboxSetting, ServerSandbox};
use crate::traces::TracingConfig;
use crate::watch::Watch;

/// A whole configuration file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// The upstream MCP servers, by name, in the order they are written (the
    /// order decides which server wins a name collision).
    #[serde(default)]
    pub servers: IndexMap<String, ServerConfig>,
    /// How tool and prompt names are presented to the client.
    #[serde(default, skip_serializing_if = "is_default")]
    pub naming: Naming,
    /// Size limits.
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: Limits,
    /// How upstream processes are started and restarted.
    #[serde(default, skip_serializing_if = "is_default")]
    pub supervision: Supervision,
    /// The profile used when none is chosen (`--profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_profile: Option<String>,
    /// Named views of the servers: which tools, prompts and resources a
    /// client may see and use. With no profiles, everything is visible.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub profiles: IndexMap<String, Profile>,
    /// mcp2's hub settings; `prefixServerIDs` overrides `naming.prefix`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub hub: Hub,
    /// Also serve each server on its own HTTP endpoint (`/mcp/<server>`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub expose_per_server: bool,
    /// Decisions on tool-call arguments.
    #[serde(default, skip_serializing_if = "is_default")]
    pub policy: Policy,
    /// Calls per window, per server and tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_limits: Vec<RateLimit>,
    /// The breaker against identical repeated calls.
    #[serde(default, skip_serializing_if = "is_default")]
    pub breaker: Breaker,
    /// The audit log (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditConfig>,
    /// Pinning of tool definitions.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pins: PinsConfig,
    /// How escalated calls wait for a decision (none: refused at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalConfig>,
    /// The HTTP front (`warden serve --http`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub http: HttpFront,
    /// Who may use the HTTP front.
    #[serde(default, skip_serializing_if = "is_default")]
    pub auth: Auth,
    /// Prometheus metrics at `/metrics`. Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsConfig>,
    /// OpenTelemetry traces, exported as OTLP over HTTP.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tracing: TracingConfig,
    /// The default sandbox of stdio servers and how sandboxes are set up.
    #[serde(default, skip_serializing_if = "is_default")]
    pub sandbox: SandboxDefaults,
    /// The file this configuration was loaded from (set by [`crate::load`];
    /// the policy protects it from the servers).
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<PathBuf>,
}

impl Config {
    /// The sandbox server `name` runs in, if any: its own `sandbox:`, else
    /// the top-level default. Only stdio servers are sandboxed.
    pub fn sandbox_of(&self, name: &str) -> Option<ServerSandbox> {
        let server = self.servers.get(name)?;
        let Transport::Stdio { command, args, cwd, .. } = &server.transport else {
            return None;
        };
        let policy = server.sandbox.as_ref().or(self.sandbox.default.as_ref())?.policy()?;
        let identity = ServerSandbox::identity_of(name, command, args, cwd.as_deref());
        Some(ServerSandbox { policy, defaults: self.sandbox.clone(), identity })
    }
}

/// Settings of the HTTP front.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct HttpFront {
    /// A session that has opened an event stream, and now has no request
    /// and no open stream, is ended after this long and its upstream
    /// processes stopped, in seconds.
    pub session_idle_secs: u64,
    /// A session that never opened an event stream (a client that
    /// initializes, calls and walks away) is ended after this long without a
    /// request, in seconds.
    pub session_idle_no_stream_secs: u64,
    /// How often an idle SSE stream gets a comment line, so that clients and
    /// proxies do not cut it, in seconds.
    pub keep_alive_secs: u64,
    /// The most client sessions at once. At the cap, the least recently used
    /// idle session is ended to make room; only when every session is busy
    /// is a new one refused with 503.
    pub max_sessions: usize,
    /// The most server processes the sessions' own upstreams may hold at
    /// once (shared servers not counted). Idle sessions are ended to make
    /// room; a session that cannot get its processes is refused with 503.
    pub process_budget: usize,
    /// How long a client may take to send a request's headers, and how long
    /// an idle keep-alive connection stays open, in seconds.
    pub header_timeout_secs: u64,
    /// How long a client may take to send a request's body, in seconds.
    pub body_timeout_secs: u64,
    /// The most client connections at once (0: from the open-file limit).
    /// At the cap the oldest idle connection is closed to make room.
    pub max_connections: usize,
    /// The most connections from one client address (0: half of
    /// `maxConnections`). At the cap that address's oldest idle connection
    /// is closed to make room.
    pub max_connections_per_address: usize,
    /// Browser origins allowed besides the loopback ones (`http://host:port`).
    /// Requests with any other `Origin` get 403 (DNS rebinding protection).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides loopback names and the bound address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    /// How many events per session are kept for resumption with `Last-Event-ID`.
    pub replay_events: usize,
    /// What each token may hold at most, unless its own `limits` say
    /// otherwise. Absent values: half of the front's total when two or more
    /// tokens are configured (so no token can take the whole front), the
    /// whole of it otherwise.
    #[serde(default, skip_serializing_if = "is_default")]
    pub token_limits: TokenLimits,
    /// How long a 2026-07-28 request left waiting for the client's input
    /// (`input_required`) stays parked for its retry, in seconds.
    pub request_state_secs: u64,
}

impl Default for HttpFront {
    fn default() -> Self {
        HttpFront {
            session_idle_secs: 30 * 60,
            session_idle_no_stream_secs: 5 * 60,
            keep_alive_secs: 15,
            max_sessions: 256,
            process_budget: 64,
            header_timeout_secs: 10,
            body_timeout_secs: 10,
            max_connections: 0,
            max_connections_per_address: 0,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            replay_events: 256,
            token_limits: TokenLimits::default(),
            request_state_secs: 300,
        }
    }
}

/// Bearer tokens for the HTTP front. With none, the front is open (and only
/// binds loopback addresses unless forced).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Auth {
    /// The accepted tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<Token>,
}

/// One accepted bearer token.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Token {
    /// Who holds it, for logs and audit records.
    pub name: String,
    /// The secret, usually `${VAR}` from the environment.
    pub token: String,
    /// The profiles this token may use; the first is its default. Empty: the
    /// configuration's default profile only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// What this token may hold at most (over `http.tokenLimits`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub limits: TokenLimits,
}

/// What one token may hold on the HTTP front at once. An absent value
/// falls back (a token's own, then `http.tokenLimits`, then the default).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenLimits {
    /// Sessions (2025-era sessions, HTTP+SSE sessions and 2026-07-28 lanes);
    /// default half of `http.maxSessions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<usize>,
    /// Server processes of its sessions; default half of `http.processBudget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<usize>,
    /// Open event streams (GET streams and HTTP+SSE streams); default
    /// half of `http.maxSessions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<usize>,
    /// Requests being handled at once (an answer streaming counts until it
    /// ends); default half of `http.maxSessions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<usize>,
    /// Client connections (a connection belongs to the token of the first
    /// authenticated request it carries; at the cap the token's own
    /// longest-idle connection is closed); default half of
    /// `http.maxConnections`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<usize>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// One profile: per server, which components are visible.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// What the profile is for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Filters by server. A server not listed is hidden entirely.
    #[serde(default)]
    pub servers: IndexMap<String, ServerFilters>,
    /// Overrides of the policy's default action and strictness.
    #[serde(default, skip_serializing_if = "is_default")]
    pub policy: ProfilePolicy,
}

/// What a profile changes about the policy.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfilePolicy {
    /// The action when no rule decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Action>,
    /// Deny tools without annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// The filters of one server in one profile.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerFilters {
    /// Tool names.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tools: Filter,
    /// Resource URIs and URI templates.
    #[serde(default, skip_serializing_if = "is_default")]
    pub resources: Filter,
    /// Prompt names.
    #[serde(default, skip_serializing_if = "is_default")]
    pub prompts: Filter,
}

/// Allow and deny globs. An empty allow list allows everything; deny wins.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Filter {
    /// Globs of what is visible (all, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Globs of what is hidden, even when allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// mcp2's `hub:` section.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Hub {
    /// Serve the merged hub (the stdio front always does).
    pub enabled: bool,
    /// `true`: prefix names with their server (Warden uses its own separator,
    /// `__` by default, because clients reject `:`); `false`: never prefix.
    #[serde(rename = "prefixServerIDs", skip_serializing_if = "Option::is_none")]
    pub prefix_server_ids: Option<bool>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub { enabled: true, prefix_server_ids: None }
    }
}

/// One upstream MCP server.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerConfig {
    /// A human-readable name, for logs and status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// How to reach the server.
    pub transport: Transport,
    /// The server keeps no per-client state: over HTTP, one process serves
    /// every client session (ids are mapped), instead of one per session.
    #[serde(default, skip_serializing_if = "is_default")]
    pub share: bool,
    /// The most processes of this server at once (over HTTP each client
    /// session has its own); sessions beyond it see the server as down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_processes: Option<usize>,
    /// Restart the server when its code changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<Watch>,
    /// The OS sandbox the server's process runs in (stdio servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSetting>,
    /// Which MCP era Warden speaks to the server: found out by a probe
    /// (`auto`), or pinned.
    #[serde(default, skip_serializing_if = "is_default")]
    pub protocol: ProtocolEra,
}

/// The MCP era spoken to one upstream.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolEra {
    /// Probe with `server/discover` (2026-07-28); fall back to `initialize`.
    #[default]
    Auto,
    /// `initialize` and a session: the 2025 era (2025-11-25 and earlier);
    /// `legacy` in the configuration.
    #[serde(rename = "legacy")]
    Mcp2025,
    /// Stateless requests with the 2026-07-28 envelope.
    Modern,
}

impl ServerConfig {
    /// A server reached by `transport`, with every other setting at its default.
    pub fn new(transport: Transport) -> ServerConfig {
        ServerConfig {
            display_name: None,
            transport,
            share: false,
            max_processes: None,
            watch: None,
            sandbox: None,
            protocol: ProtocolEra::Auto,
        }
    }
}

/// How to reach an upstream server.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin and stdout.
    Stdio {
        /// The program to run (looked up in `PATH`).
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Extra environment variables (Warden's own environment is inherited).
        #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
        env: IndexMap<String, String>,
        /// The working directory (default: Warden's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// A remote server speaking Streamable HTTP.
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Headers sent with every request (`${VAR}` expanded).
        #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
        headers: IndexMap<String, String>,
    },
    /// A remote server speaking the HTTP+SSE transport (2024-11-05):
    /// a GET event stream that names the endpoint to POST messages to.
    Sse {
        /// Its SSE endpoint.
        url: String,
        /// Headers sent with every request (`${VAR}` expanded).
        #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
        headers: IndexMap<String, String>,
    },
}

/// How tool and prompt names are shown to the client.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Naming {
    /// Put between the server name and the tool name. Clients accept only
    /// `[A-Za-z0-9_-]`, hence `__`.
    pub separator: String,
    /// When to prefix names with their server's name.
    pub prefix: PrefixMode,
    /// Longer names are shortened with a hash (clients reject names over 64).
    pub max_length: usize,
}

impl Default for Naming {
    fn default() -> Self {
        Naming { separator: "__".into(), prefix: PrefixMode::Always, max_length: 64 }
    }
}

/// When names get a `<server><separator>` prefix.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum PrefixMode {
    /// Always: names stay the same when a second server is added.
    #[default]
    Always,
    /// Only when more than one server is configured.
    Multiple,
    /// Never: names pass through; on a collision the first server wins and
    /// the collision is reported.
    Never,
}

/// Size limits.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Limits {
    /// The largest message accepted from the client or an upstream, in bytes.
    pub max_message_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_message_bytes: 16 * 1024 * 1024 }
    }
}

/// How upstream processes are started and kept running.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Supervision {
    /// How long an upstream may take to answer `initialize`, in milliseconds.
    pub start_timeout_ms: u64,
    /// The first restart delay after an upstream exits, in milliseconds.
    pub backoff_initial_ms: u64,
    /// The longest restart delay, in milliseconds.
    pub backoff_max_ms: u64,
    /// How many bytes of each upstream's stderr are kept for error messages.
    pub stderr_tail_bytes: usize,
    /// How long an upstream gets to exit after its stdin is closed, before it is
    /// killed, in milliseconds.
    pub shutdown_grace_ms: u64,
    /// When an upstream restarts (its code or its definition changed), how
    /// long the calls in flight on the old process get to finish before they
    /// fail, in milliseconds.
    pub restart_grace_ms: u64,
    /// How long a client's list waits for upstreams that are still starting
    /// (never longer than `startTimeoutMs`), in milliseconds.
    pub list_wait_ms: u64,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            start_timeout_ms: 60_000,
            backoff_initial_ms: 250,
            backoff_max_ms: 30_000,
            stderr_tail_bytes: 8 * 1024,
            shutdown_grace_ms: 2_000,
            restart_grace_ms: 5_000,
            list_wait_ms: 10_000,
        }
    }
}

/// The JSON Schema of the configuration file, for editors.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(Config).to_value();
    if let Some(object) = schema.as_object_mut() {
        object.insert("title".into(), "Warden configuration".into());
    }
    schema
}
