//! Warden's configuration.
//!
//! One file, YAML or JSON, describes the upstream servers and how Warden presents
//! them. The `servers:` section uses the field names of mcp2 (`displayName`,
//! `transport: {kind, command, args, env}`), so existing configs carry over.
//! `${VAR}` and `${VAR:-default}` in transport fields are expanded from the
//! environment when the file is loaded.

#![warn(missing_docs)]

mod approval;
mod env;
mod error;
mod load;
mod locate;
mod metrics;
mod own_files;
mod policy;
mod sandbox;
mod schema;
mod traces;
mod validate;
mod watch;

pub use approval::{ApprovalConfig, AutoApproverConfig, DEFAULT_ANTHROPIC_MODEL, ModelApi};
pub use env::expand;
pub use error::ConfigError;
pub use load::{load, parse};
pub use locate::locate;
pub use metrics::MetricsConfig;
pub use own_files::own_files;
pub use policy::{
    Action, AuditConfig, Breaker, Condition, ConditionalRoles, DomainsAllowed, Fsync, IRONCURTAIN_ROLES, LimitScope,
    PathsWithin, PinMode, PinsConfig, Policy, RateLimit, RoleCategory, Rule, RuleMatch, SqlCondition, ToolAnnotation,
};
pub use sandbox::{
    SandboxDefaults, SandboxEnv, SandboxFilesystem, SandboxLimits, SandboxMechanism, SandboxMode, SandboxNetwork,
    SandboxPolicy, SandboxSetting, ServerSandbox,
};
pub use schema::{
    Auth, Config, Filter, HttpFront, Hub, Limits, Naming, PrefixMode, Profile, ProfilePolicy, ProtocolEra,
    ServerConfig, ServerFilters, Supervision, Token, TokenLimits, Transport, json_schema,
};
pub use traces::TracingConfig;
pub use watch::{DEFAULT_IGNORE, Watch};
