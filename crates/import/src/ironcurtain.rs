//! IronCurtain's policy artifacts (provos/ironcurtain, types in
//! `src/pipeline/types.ts`, evaluated by `src/trusted-process/policy-engine.ts`):
//!
//! - `compiled-policy.json`: `{generatedAt, constitutionHash, inputHash,
//!   rules: [{name, description, principle, if: {roles?, server?, tool?,
//!   sideEffects?, paths?: {roles, within}, domains?: {roles, allowed},
//!   lists?: [{roles, allowed, matchType}]}, then, reason}], listDefinitions?}`;
//! - `tool-annotations.json`: `{generatedAt, servers: {<server>: {inputHash,
//!   tools: [{toolName, serverName, comment, sideEffects?, inputSchema?,
//!   args: {<arg>: [role...] | {default: [role...], when: [{condition: {arg,
//!   equals | in | is}, roles}]}}}]}}}` (`sideEffects` until IronCurtain's
//!   PR #118, March 2026; `inputSchema` since);
//! - `dynamic-lists.json`: `{generatedAt, lists: {<name>: {values,
//!   manualAdditions, manualRemovals, resolvedAt, inputHash}}}`, which
//!   `@name` entries of `allowed` refer to.
//!
//! What IronCurtain reads from its own configuration (the sandbox directory,
//! protected paths, per-server domain allowlists, trusted servers) comes from
//! the command line ([`IronCurtainInput`]).
//!
//! The semantics are those of IronCurtain's engine at c0aeff9d (August
//! 2026): its 321 test scenarios are decided as that engine decides them
//! (`crates/warden/tests/ironcurtain.rs`). Roles have the categories of its
//! role table; each path of a role is decided by the first rule that
//! matches it; a role whose argument is absent is still decided
//! (`decideAbsentRoles`); the sandbox contains all five path roles of the
//! filesystem and git servers (a whole role), and on the filesystem server
//! each path on its own.
//!
//! IronCurtain denies unknown tools and calls no rule decides, so the policy
//! is `strict: true, default: deny`. Its rules are evaluated per resource
//! role (first match per role, the most restrictive role wins); rules without
//! role conditions take part in every role's chain, and tools without
//! resource roles are decided by one first-match pass. Warden evaluates
//! rules with `roles` per role and the others once per call, so (see
//! [`rules`]) each rule becomes a role rule for the roles IronCurtain would
//! evaluate it for, plus, where needed, a call rule naming the annotated
//! tools without resource roles it applies to. Annotations keep only the
//! roles IronCurtain evaluates (its opaque roles, such as `none`,
//! `branch-name` and `email-address`, are left out); conditional roles
//! become `conditional` entries.

mod annotations;
mod lists;
mod rules;

use std::path::PathBuf;

use indexmap::IndexMap;
use warden_config::{Action, ApprovalConfig, Condition, Config, PathsWithin, Policy, RoleCategory, Rule, RuleMatch};

use crate::error::ImportError;
use crate::node::Doc;
use crate::{Imported, shown};

/// What an IronCurtain import reads: its generated files and the settings
/// IronCurtain takes from its own configuration.
#[derive(Debug, Clone, Default)]
pub struct IronCurtainInput {
    /// `compiled-policy.json` (or a per-server one): its path and text.
    pub compiled_policy: (PathBuf, String),
    /// More compiled policies (IronCurtain's per-server
    /// `servers/<server>/compiled-policy.json` files), merged with the first
    /// as IronCurtain merges them.
    pub more_compiled_policies: Vec<(PathBuf, String)>,
    /// `tool-annotations.json`: its path and text.
    pub tool_annotations: (PathBuf, String),
    /// The sandbox directory (`--sandbox DIR`).
    pub sandbox: Option<String>,
    /// Protected paths (`--protected-path`, repeated).
    pub protected_paths: Vec<String>,
    /// Per server, the domains its URL arguments may reach
    /// (`--allowed-domains SERVER=PATTERN,PATTERN`, see
    /// [`parse_allowed_domains`]).
    pub allowed_domains: Vec<(String, Vec<String>)>,
    /// Servers whose calls skip the policy (`--trusted-server`).
    pub trusted_servers: Vec<String>,
    /// `dynamic-lists.json`, needed when rules refer to `@lists`.
    pub dynamic_lists: Option<(PathBuf, String)>,
}

/// Splits `--allowed-domains SERVER=PATTERN,PATTERN` into the server and
/// its patterns.
pub fn parse_allowed_domains(arg: &str) -> Result<(String, Vec<String>), ImportError> {
    let bad = |message: String| ImportError::BadOption { option: "--allowed-domains", message };
    let Some((server, patterns)) = arg.split_once('=') else {
        return Err(bad(format!("{arg:?} is not SERVER=PATTERN,PATTERN")));
    };
    let patterns: Vec<String> =
        patterns.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect();
    if server.trim().is_empty() || patterns.is_empty() {
        return Err(bad(format!("{arg:?} needs a server name and at least one domain pattern")));
    }
    Ok((server.trim().to_owned(), patterns))
}

/// The roles IronCurtain's sandbox containment resolves (`SANDBOX_SAFE_PATH_ROLES`).
const SANDBOX_ROLES: [&str; 5] = ["read-path", "write-path", "delete-path", "write-history", "delete-history"];
/// The servers whose roles it resolves: all paths of a role within the
/// sandbox (both), or each path on its own (the filesystem server).
const SANDBOX_SERVERS: [&str; 2] = ["filesystem", "git"];

/// Converts IronCurtain's policy artifacts.
pub(crate) fn import(input: &IronCurtainInput) -> Result<Imported, ImportError> {
    let (annotations_path, annotations_text) = &input.tool_annotations;
    let annotations_doc = Doc::new(annotations_path, annotations_text);
    let tools = annotations::read(&annotations_doc)?;
    let mut warnings = tools.warnings.clone();

    let lists = match &input.dynamic_lists {
        Some((path, text)) => Some(lists::read(&Doc::new(path, text))?),
        None => None,
    };
    let (policy_path, _) = &input.compiled_policy;
    let policy_docs: Vec<Doc<'_>> = std::iter::once(&input.compiled_policy)
        .chain(&input.more_compiled_policies)
        .map(|(path, text)| Doc::new(path, text))
        .collect();
    let mapped = rules::map(&policy_docs, &tools, lists.as_ref())?;
    warnings.extend(mapped.warnings);

    let mut config = Config::default();
    let policy = &mut config.policy;
    policy.default = Some(Action::Deny);
    policy.strict = true;
    policy.annotations = tools.warden.clone();
    policy.lists = mapped.lists;
    policy.decide_absent_roles = true;
    policy.rules.push(introspection_rule(&tools));

    let mut relative = Vec::new();
    if let Some(dir) = &input.sandbox {
        let dir = option_text("--sandbox", dir)?;
        note_relative(&dir, "--sandbox", &mut relative);
        sandbox(policy, &tools, &dir, &mut warnings);
    }
    for rule in &mapped.rules {
        if let Some(paths) = &rule.when.paths {
            for dir in &paths.within {
                note_relative(dir, &format!("rule {:?}", rule.name), &mut relative);
            }
        }
    }
    policy.rules.extend(mapped.rules);

    for path in &input.protected_paths {
        let path = option_text("--protected-path", path)?;
        note_relative(&path, "--protected-path", &mut relative);
        if !policy.protected_paths.contains(&path) {
            policy.protected_paths.push(path);
        }
    }
    if tools
        .list
        .iter()
        .any(|tool| tool.roles().iter().any(|role| RoleCategory::of_ironcurtain_role(role) == Some(RoleCategory::Path)))
    {
        warnings.push("paths: when a path cannot be resolved to the end (a directory on the way cannot be read, or it is more than 64 levels deep), IronCurtain resolves what it can and compares the rest as written, or the whole path unresolved; Warden refuses the call (invalid-path), so an unresolved symbolic link can never lead out of the sandbox (none of IronCurtain's own test scenarios is affected)".into());
    }
    if !policy.protected_paths.is_empty() && input.sandbox.is_some() {
        warnings.push("protected paths: IronCurtain exempts everything within the sandbox from protection; Warden carves the sandbox out of a protected directory that contains it, but a protected path inside the sandbox stays protected (none of IronCurtain's own test scenarios is affected)".into());
    }
    for server in &input.trusted_servers {
        let server = option_text("--trusted-server", server)?;
        if !policy.trusted_servers.contains(&server) {
            policy.trusted_servers.push(server);
        }
    }
    let mut allowed: IndexMap<String, Vec<String>> = IndexMap::new();
    for (server, patterns) in &input.allowed_domains {
        let server = option_text("--allowed-domains", server)?;
        let entry = allowed.entry(server).or_default();
        for pattern in patterns {
            let pattern = option_text("--allowed-domains", pattern)?;
            if !entry.contains(&pattern) {
                entry.push(pattern);
            }
        }
    }
    policy.allowed_domains = allowed;
    if !relative.is_empty() {
        warnings.push(format!(
            "relative paths are resolved against the directory Warden runs in, as IronCurtain resolved them against its own: {}",
            relative.join(", ")
        ));
    }
    // Escalations wait for a person, as in IronCurtain (denied after 300 s).
    if policy.rules.iter().any(|rule| rule.action == Action::Escalate) || !policy.allowed_domains.is_empty() {
        config.approval = Some(ApprovalConfig::default());
    }
    if !policy.allowed_domains.is_empty() {
        warnings.push("allowed domains: IronCurtain escalates a URL outside them at once; Warden escalates it too but still lets a rule that denies the call deny it (stricter, never looser)".into());
    }
    if tools.list.iter().any(|tool| tool.server == "git" && tool.roles().iter().any(|role| role == "git-remote-url")) {
        warnings.push("git: when a git_push, git_pull or git_fetch call names no remote, IronCurtain reads the repository's default remote from its .git/config (inside the sandbox) and checks that URL; Warden does not read repositories, so the remote role is decided without a value: a rule that allows by domain does not match it, one that denies or escalates by domain does (stricter); a remote given by name (origin) is treated alike".into());
    }

    let mut policies = shown(policy_path);
    for (path, _) in &input.more_compiled_policies {
        policies.push_str(&format!(", {}", shown(path)));
    }
    let mut origin = format!("IronCurtain policy {policies} with annotations {}", shown(annotations_path));
    if let Some((path, _)) = &input.dynamic_lists {
        origin.push_str(&format!(" and lists {}", shown(path)));
    }
    Ok(Imported { config, warnings, origin })
}

/// An option's value, trimmed; empty is an error.
fn option_text(option: &'static str, value: &str) -> Result<String, ImportError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ImportError::BadOption { option, message: "needs a value".into() });
    }
    Ok(value.to_owned())
}

/// Notes `path` when it is relative.
fn note_relative(path: &str, place: &str, relative: &mut Vec<String>) {
    if !(path.starts_with('/') || path.starts_with('~')) {
        relative.push(format!("{place}: {path}"));
    }
}

/// IronCurtain's introspection allow: `list_allowed_directories` of the
/// filesystem server, called without arguments.
fn introspection_rule(tools: &annotations::Tools) -> Rule {
    let args: Vec<String> = tools
        .list
        .iter()
        .filter(|tool| tool.server == "filesystem" && tool.name == "list_allowed_directories")
        .flat_map(|tool| tool.args.iter().map(|arg| arg.name.clone()))
        .collect();
    let none_given = (!args.is_empty()).then(|| Condition {
        all: Some(
            args.into_iter()
                .map(|arg| Condition { arg: Some(arg), exists: Some(false), ..Condition::default() })
                .collect(),
        ),
        ..Condition::default()
    });
    Rule {
        name: "structural-introspection-allow".into(),
        description: "IronCurtain always allows the filesystem server's list_allowed_directories without arguments"
            .into(),
        when: RuleMatch {
            server: vec!["filesystem".into()],
            tool: vec!["list_allowed_directories".into()],
            args: none_given,
            ..RuleMatch::default()
        },
        action: Action::Allow,
        reason: "Introspection tool is always allowed".into(),
        timeout_secs: None,
        auto_approve: false,
    }
}

/// IronCurtain's sandbox containment: a path role of the filesystem or git
/// server whose paths all lie within the sandbox is allowed (Warden's
/// `policy.sandbox`), and on the filesystem server each path within it is
/// allowed on its own (a first rule, decided per path).
fn sandbox(policy: &mut Policy, tools: &annotations::Tools, dir: &str, warnings: &mut Vec<String>) {
    let elsewhere: Vec<String> = tools
        .list
        .iter()
        .filter(|tool| !SANDBOX_SERVERS.contains(&tool.server.as_str()))
        .filter_map(|tool| {
            let roles: Vec<String> = tool
                .roles()
                .into_iter()
                .filter(|role| match RoleCategory::of_ironcurtain_role(role) {
                    Some(category) => category == RoleCategory::Path,
                    None => role.ends_with("-path"),
                })
                .collect();
            (!roles.is_empty()).then(|| format!("{}/{} ({})", tool.server, tool.name, roles.join(", ")))
        })
        .collect();
    let per_path_servers: Vec<String> = if elsewhere.is_empty() {
        policy.sandbox = Some(dir.to_owned());
        vec!["filesystem".into()]
    } else {
        warnings.push(format!(
            "--sandbox {dir} is written as the first rule, structural-sandbox-allow, for the filesystem and git servers only, not as policy.sandbox (which would cover every server): these tools of other servers have path roles that IronCurtain sends through the rules: {}; a git role with paths both inside and outside the sandbox is then decided path by path, where IronCurtain sends all its paths through the rules",
            elsewhere.join(", ")
        ));
        SANDBOX_SERVERS.iter().map(|server| (*server).to_owned()).collect()
    };
    policy.rules.push(Rule {
        name: "structural-sandbox-allow".into(),
        description: "IronCurtain's sandbox containment, path by path".into(),
        when: RuleMatch {
            server: per_path_servers,
            roles: SANDBOX_ROLES.iter().map(|role| (*role).to_owned()).collect(),
            paths: Some(PathsWithin { roles: Vec::new(), within: vec![dir.to_owned()] }),
            ..RuleMatch::default()
        },
        action: Action::Allow,
        reason: format!("Path(s) within the sandbox directory: {dir}"),
        timeout_secs: None,
        auto_approve: false,
    });
}
