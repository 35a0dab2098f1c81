//! The `policy:`, `rateLimits:`, `breaker:`, `audit:` and `pins:` sections:
//! decisions on tool-call arguments and what is recorded about them.
//!
//! The rule shape follows IronCurtain's compiled policies (`if` / `then`,
//! argument roles, paths within, domain allowlists) and adds Sentinel's
//! conditions on argument values (strings, numbers, lists, SQL).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a rule, or the default, does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Forward it.
    Allow,
    /// Refuse it with the rule's reason.
    Deny,
    /// Ask a person (refused with a message when no approval is configured).
    Escalate,
    /// Record it and go on to the next rule.
    Log,
}

/// The `policy:` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// When no rule decides: `allow` (drop-in use, the default) or `deny`
    /// (strict use). A profile may override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Action>,
    /// Presets whose protected paths and rules are added (`builtin:protect-secrets`,
    /// `builtin:sql-approval`, `builtin:shell-approval`, `builtin:fetch-approval`);
    /// their rules come after these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Deny tools that have no annotation (their arguments' roles are unknown).
    #[serde(default, skip_serializing_if = "is_false")]
    pub strict: bool,
    /// Paths no argument with a path role may touch, whatever the rules say,
    /// in addition to the built-in ones (Warden's own files and the usual
    /// credential stores), which always apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<String>,
    /// Built-in protected paths to stop protecting, each written exactly as
    /// in the built-in list (`~/.npmrc`); every removal is logged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unprotect_defaults: Vec<String>,
    /// Servers whose calls skip the policy entirely.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_servers: Vec<String>,
    /// A directory: a path role whose paths all lie within it is allowed
    /// before the rules are consulted (IronCurtain's sandbox containment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Per server, the domains URL roles may reach (`*.example.com`; `*`
    /// never matches an IP address). A URL outside them is escalated.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub allowed_domains: IndexMap<String, Vec<String>>,
    /// Named lists for `inList` conditions.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub lists: IndexMap<String, Vec<String>>,
    /// The category of each role the built-in table does not know (or
    /// whose category it overrides): `path`, `url`, `identifier` or `opaque`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub roles: IndexMap<String, RoleCategory>,
    /// Decide a role also when the call leaves its arguments out
    /// (IronCurtain's semantics: the tool then acts on a default, such as
    /// the configured remote, so `escalate every git_push` still applies).
    /// Off: such a role is left out of the decision.
    #[serde(default, skip_serializing_if = "is_false")]
    pub decide_absent_roles: bool,
    /// Per server, per tool: what each argument is.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub annotations: IndexMap<String, IndexMap<String, ToolAnnotation>>,
    /// The rules, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
}

/// What a role's values are, which decides the structural checks they get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleCategory {
    /// File system paths: canonicalised, checked against protected paths,
    /// the sandbox and `paths` conditions.
    Path,
    /// URLs or git remotes: their hosts are checked against allowed domains
    /// and `domains` conditions.
    Url,
    /// Names of things (an owner, a repository): decided by rules, per role.
    Identifier,
    /// Values with meaning but no resource (a branch name, a message):
    /// tested by conditions only.
    Opaque,
}

/// IronCurtain's roles and their categories (its `src/types/argument-roles.ts`).
pub const IRONCURTAIN_ROLES: [(&str, RoleCategory); 16] = [
    ("read-path", RoleCategory::Path),
    ("write-path", RoleCategory::Path),
    ("delete-path", RoleCategory::Path),
    ("write-history", RoleCategory::Path),
    ("delete-history", RoleCategory::Path),
    ("fetch-url", RoleCategory::Url),
    ("git-remote-url", RoleCategory::Url),
    ("github-owner", RoleCategory::Identifier),
    ("github-repo", RoleCategory::Identifier),
    ("proxy-domain", RoleCategory::Identifier),
    ("branch-name", RoleCategory::Opaque),
    ("commit-message", RoleCategory::Opaque),
    ("email-address", RoleCategory::Opaque),
    ("email-body", RoleCategory::Opaque),
    ("share-permission", RoleCategory::Opaque),
    ("none", RoleCategory::Opaque),
];

impl RoleCategory {
    /// The category IronCurtain's role table gives `role`, if it has it.
    pub fn of_ironcurtain_role(role: &str) -> Option<RoleCategory> {
        IRONCURTAIN_ROLES.iter().find(|(name, _)| *name == role).map(|(_, category)| *category)
    }
}

/// What a tool's arguments are.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolAnnotation {
    /// Whether the tool changes anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<bool>,
    /// Argument name → its roles (`read-path`, `write-path`, `delete-path`,
    /// `fetch-url`, `git-remote-url`, or any other name used by rules).
    #[serde(default)]
    pub args: IndexMap<String, Vec<String>>,
    /// Role assignments that replace `args` for the listed arguments when
    /// their condition holds (e.g. `dryRun: true` makes a write a read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditional: Vec<ConditionalRoles>,
}

/// Roles that apply when a condition on the arguments holds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConditionalRoles {
    /// The condition.
    pub when: Condition,
    /// Argument name → its roles while the condition holds.
    pub args: IndexMap<String, Vec<String>>,
}

/// One rule. Names need not be unique (the order decides); refusals,
/// `explain` and the audit log name a rule whose name is shared by its
/// position too.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// Its name, quoted in refusals and audit records.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// When it applies (all given parts must hold; empty = always).
    #[serde(default, rename = "if")]
    pub when: RuleMatch,
    /// What it does.
    #[serde(rename = "then")]
    pub action: Action,
    /// Why, in words the model can act on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// For `escalate`: how long the call waits for a decision, in seconds
    /// (default `approval.timeoutSecs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// For `escalate`: the auto-approver (`approval.autoApprover`) may
    /// approve these calls before a person does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto_approve: bool,
}

/// The conditions of a rule.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleMatch {
    /// The requests the rule judges: `tools/call` (when empty), and
    /// `prompts/get` (the `tool` globs match the prompt's name, `args` its
    /// arguments) or `resources/read` (the `tool` globs match the URI).
    /// Prompts and resources are judged only by rules that name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub method: Vec<String>,
    /// Server name globs (any, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<String>,
    /// Tool name globs, as the server names them (any, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool: Vec<String>,
    /// A role rule: evaluated once per listed role the call has, with that
    /// role's values; the first matching role rule decides for that role.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Matches only tools annotated with this `sideEffects`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<bool>,
    /// Every path of the role being evaluated lies within one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathsWithin>,
    /// Every URL of the role being evaluated has one of these domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domains: Option<DomainsAllowed>,
    /// Conditions on argument values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Condition>,
}

/// `paths: {roles, within}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathsWithin {
    /// The roles it concerns (those of the rule, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Directories (`~` expanded, canonicalised).
    pub within: Vec<String>,
}

/// `domains: {roles, allowed}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DomainsAllowed {
    /// The roles it concerns (those of the rule, when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Domain patterns (`example.com`, `*.example.com`, `*`; `*` never
    /// matches an IP address).
    pub allowed: Vec<String>,
}

/// A condition on argument values: a combination (`all`, `any`, `not`) or
/// one test on the argument `arg` (a name, or a dotted path into objects).
/// A value of the wrong JSON type never matches a test (and never crashes).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    /// All of these hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<Vec<Condition>>,
    /// At least one of these holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any: Option<Vec<Condition>>,
    /// This does not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<Condition>>,
    /// The argument tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<String>,
    /// The argument is present (true) or absent (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// Equal to this JSON value (strings compare case-insensitively with `ignoreCase`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<serde_json::Value>,
    /// A string containing this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// A string not containing this (a missing or non-string argument holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<String>,
    /// A string starting with this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_with: Option<String>,
    /// A string ending with this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_with: Option<String>,
    /// A string matching this regular expression (the `regex` crate: linear
    /// time; an invalid pattern is a configuration error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// String tests ignore case.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_case: bool,
    /// When the argument is an array, the test must hold for each of its
    /// items (and it must have one); other values are tested as they are.
    #[serde(default, skip_serializing_if = "is_false")]
    pub each: bool,
    /// When the argument is an array, the test must hold for at least one
    /// of its items; other values are tested as they are. (A deny rule on
    /// any of several paths: `each` would let one bad path ride with a good
    /// one.)
    #[serde(default, skip_serializing_if = "is_false")]
    pub some: bool,
    /// A number greater than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<f64>,
    /// A number at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<f64>,
    /// A number less than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    /// A number at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le: Option<f64>,
    /// Equal to one of these values.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "in")]
    pub one_of: Option<Vec<serde_json::Value>>,
    /// A string in the named list of `policy.lists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_list: Option<String>,
    /// SQL facts: holds when any given fact is true of the argument, or when
    /// the argument does not parse as SQL (suspicious, never safe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<SqlCondition>,
}

/// Facts about an SQL argument.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SqlCondition {
    /// The dialect (`generic` by default; `postgres`, `mysql`, `sqlite`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Any statement of these kinds (`SELECT`, `INSERT`, `UPDATE`, `DELETE`, `DROP`, `ALTER`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// A SELECT without LIMIT.
    #[serde(default, skip_serializing_if = "is_false")]
    pub select_without_limit: bool,
    /// An UPDATE without WHERE.
    #[serde(default, skip_serializing_if = "is_false")]
    pub update_without_where: bool,
    /// A DELETE without WHERE.
    #[serde(default, skip_serializing_if = "is_false")]
    pub delete_without_where: bool,
    /// More than one statement.
    #[serde(default, skip_serializing_if = "is_false")]
    pub multiple_statements: bool,
}

/// One rate limit: at most `calls` per `perSeconds` for calls matching the globs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimit {
    /// Server name glob.
    #[serde(default = "any")]
    pub server: String,
    /// Tool name glob.
    #[serde(default = "any")]
    pub tool: String,
    /// Calls allowed per window.
    pub calls: u32,
    /// The window, in seconds.
    pub per_seconds: u64,
    /// What is counted: each tool on its own (`tool`, the default) or all
    /// the matching tools of a server together (`server`).
    #[serde(default, skip_serializing_if = "is_default_scope")]
    pub scope: LimitScope,
}

/// What one rate limit counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LimitScope {
    /// Each server's each tool has its own count.
    #[default]
    Tool,
    /// Each server's matching tools share one count.
    Server,
}

fn is_default_scope(scope: &LimitScope) -> bool {
    *scope == LimitScope::Tool
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn any() -> String {
    "*".into()
}

/// The breaker against loops: the same tool with the same arguments. Off
/// unless `identicalCalls` is set (IronCurtain uses 20 within 60 s): a
/// drop-in gateway should not refuse a client's polling unasked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Breaker {
    /// Identical calls allowed within the window (0, the default, turns the breaker off).
    pub identical_calls: u32,
    /// The window, in seconds.
    pub within_seconds: u64,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker { identical_calls: 0, within_seconds: 60 }
    }
}

/// How often audit records reach the disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    /// After every record (no acknowledged record is lost in a crash).
    #[default]
    Always,
    /// Left to the operating system.
    Never,
}

/// The `audit:` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditConfig {
    /// The JSONL file.
    pub path: String,
    /// Mask secrets and personal data in arguments (on by default).
    #[serde(default = "yes")]
    pub redact: bool,
    /// When records reach the disk.
    #[serde(default)]
    pub fsync: Fsync,
    /// Let calls through when the log cannot be written (off: fail closed).
    #[serde(default)]
    pub fail_open: bool,
    /// Rotate when the file would grow past this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotate_bytes: Option<u64>,
    /// Rotated files kept.
    #[serde(default = "five")]
    pub keep: usize,
    /// Record what each tool call was answered with, redacted like the
    /// arguments, with the digest of the whole answer (on by default).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub results: bool,
    /// A result longer than this many bytes of JSON is recorded cut (its
    /// digest still covers all of it). Default 16384.
    #[serde(default = "result_max_bytes", skip_serializing_if = "is_result_max_bytes")]
    pub result_max_bytes: usize,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// The default `audit.resultMaxBytes`.
pub const RESULT_MAX_BYTES: usize = 16 * 1024;

fn result_max_bytes() -> usize {
    RESULT_MAX_BYTES
}

fn is_result_max_bytes(value: &usize) -> bool {
    *value == RESULT_MAX_BYTES
}

fn five() -> usize {
    5
}

/// What happens when a pinned tool's definition changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PinMode {
    /// Nothing is pinned.
    #[default]
    Off,
    /// Changes are logged and audited; the tool stays available.
    Warn,
    /// A changed tool is withheld until `warden pins accept`.
    Enforce,
}

/// The `pins:` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PinsConfig {
    /// The mode.
    #[serde(default)]
    pub mode: PinMode,
    /// Where pins are kept (default: `$XDG_STATE_HOME/warden` or `~/.local/state/warden`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_dir: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_policy_section_parses_from_yaml() {
        let text = r#"
servers:
  db: {transport: {kind: stdio, command: db}}
policy:
  default: deny
  protectedPaths: ["~/.ssh"]
  annotations:
    db:
      query: {sideEffects: false, args: {sql: [sql]}}
  rules:
    - name: no-unbounded-select
      if:
        server: [db]
        tool: ["*query*"]
        args: {arg: sql, sql: {selectWithoutLimit: true, dialect: postgres}}
      then: deny
      reason: SELECT without LIMIT
    - name: small-limits
      if:
        args:
          any:
            - {arg: limit, gt: 100}
            - {arg: mode, in: [fast, "2", 3, true]}
            - {arg: note, equals: {nested: [1, null]}}
      then: escalate
rateLimits: [{tool: "query", calls: 10, perSeconds: 60}]
audit: {path: /tmp/a.jsonl}
pins: {mode: enforce}
"#;
        let config = crate::parse(Path::new("p.yaml"), text, &|_| None).unwrap();
        let policy = &config.policy;
        assert_eq!(policy.default, Some(Action::Deny));
        assert_eq!(policy.rules.len(), 2);
        let sql = policy.rules[0].when.args.as_ref().unwrap().sql.as_ref().unwrap();
        assert!(sql.select_without_limit);
        let any = policy.rules[1].when.args.as_ref().unwrap().any.as_ref().unwrap();
        assert_eq!(any[0].gt, Some(100.0));
        assert_eq!(any[1].one_of.as_ref().unwrap()[2], serde_json::json!(3));
        assert_eq!(any[2].equals, Some(serde_json::json!({"nested": [1, null]})));
        assert_eq!(config.rate_limits[0].server, "*");
        assert!(config.audit.as_ref().unwrap().redact);
        assert_eq!(config.pins.mode, PinMode::Enforce);
        assert_eq!(config.breaker.identical_calls, 0, "off unless asked for");
    }
}
