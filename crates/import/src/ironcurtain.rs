//! IronCurtain's policy artifacts (provos/ironcurtain, types in
//! `src/pipeline/types.ts`, evaluated by `src/trusted-process/policy-engine.ts`):
//!
//! - `compiled-policy.json`: `{generatedAt, constitutionHash, inputHash,
//!   rules: [{name, description, principle, if: {roles?, server?, tool?,
//!   sideEffects?, paths?: {roles, within}, domains?: {roles, allowed},
//!   lists?: [{roles, allowed, matchType}]}, then, reason}], listDefinitions?}`;
//! - `tool-annotations.json`: `{generatedAt, servers: {<server>: {inputHash,
//!   tools: [{toolName, serverName, comment, sideEffects, args: {<arg>:
//!   [role...] | {default: [role...], when: [{condition: {arg, equals | in |
//!   is}, roles}]}}}]}}}`;
//! - `dynamic-lists.json`: `{generatedAt, lists: {<name>: {values,
//!   manualAdditions, manualRemovals, resolvedAt, inputHash}}}`, which
//!   `@name` entries of `allowed` refer to.
//!
//! What IronCurtain reads from its own configuration (the sandbox directory,
//! protected paths, per-server domain allowlists, trusted servers) comes from
//! the command line ([`IronCurtainInput`]).
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
//! roles IronCurtain evaluates (`none`, `branch-name`, `commit-message` are
//! left out); conditional roles become `conditional` entries.

mod annotations;
mod lists;
mod rules;

use std::path::PathBuf;

use indexmap::IndexMap;
use warden_config::{Action, ApprovalConfig, Config, PathsWithin, Rule, RuleMatch};

use crate::error::ImportError;
use crate::node::Doc;
use crate::{Imported, shown};

/// What an IronCurtain import reads: its generated files and the settings
/// IronCurtain takes from its own configuration.
#[derive(Debug, Clone, Default)]
pub struct IronCurtainInput {
    /// `compiled-policy.json` (or a per-server one): its path and text.
    pub compiled_policy: (PathBuf, String),
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

/// The roles IronCurtain's sandbox containment resolves (filesystem server
/// only).
const SANDBOX_ROLES: [&str; 3] = ["read-path", "write-path", "delete-path"];
/// Path roles it never resolves by containment.
const UNSAFE_PATH_ROLES: [&str; 2] = ["write-history", "delete-history"];

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
    let (policy_path, policy_text) = &input.compiled_policy;
    let policy_doc = Doc::new(policy_path, policy_text);
    let mapped = rules::map(&policy_doc, &tools, lists.as_ref())?;
    warnings.extend(mapped.warnings);

    let mut config = Config::default();
    let policy = &mut config.policy;
    policy.default = Some(Action::Deny);
    policy.strict = true;
    policy.annotations = tools.warden;
    policy.lists = mapped.lists;
    policy.rules.push(Rule {
        name: "structural-introspection-allow".into(),
        description: "IronCurtain always allows list_allowed_directories (no arguments, no side effects)".into(),
        when: RuleMatch { tool: vec!["list_allowed_directories".into()], ..RuleMatch::default() },
        action: Action::Allow,
        reason: "Introspection tool with no side effects is always allowed".into(),
        timeout_secs: None,
        auto_approve: false,
    });

    let mut relative = Vec::new();
    if let Some(dir) = &input.sandbox {
        let dir = option_text("--sandbox", dir)?;
        note_relative(&dir, "--sandbox", &mut relative);
        let mut outside = Vec::new();
        for tool in &tools.list {
            let roles: Vec<String> = tool
                .roles()
                .into_iter()
                .filter(|role| {
                    UNSAFE_PATH_ROLES.contains(&role.as_str())
                        || (SANDBOX_ROLES.contains(&role.as_str()) && tool.server != "filesystem")
                })
                .collect();
            if !roles.is_empty() {
                outside.push(format!("{}/{} ({})", tool.server, tool.name, roles.join(", ")));
            }
        }
        if outside.is_empty() {
            policy.sandbox = Some(dir.clone());
            warnings.push(format!(
                "--sandbox {dir}: IronCurtain also allowed unannotated filesystem tools whose path-like arguments all lie in the sandbox; Warden denies unannotated tools (strict)"
            ));
        } else {
            // Warden's sandbox would cover these too; IronCurtain's covers
            // read/write/delete paths of the filesystem server only.
            policy.rules.push(Rule {
                name: "structural-sandbox-allow".into(),
                description: "IronCurtain's sandbox containment (filesystem server only)".into(),
                when: RuleMatch {
                    server: vec!["filesystem".into()],
                    roles: SANDBOX_ROLES.iter().map(|role| (*role).to_owned()).collect(),
                    paths: Some(PathsWithin { roles: Vec::new(), within: vec![dir.clone()] }),
                    ..RuleMatch::default()
                },
                action: Action::Allow,
                reason: format!("All paths are within the sandbox directory: {dir}"),
                timeout_secs: None,
                auto_approve: false,
            });
            warnings.push(format!(
                "--sandbox {dir} is written as the first rule, structural-sandbox-allow, not as policy.sandbox: IronCurtain's containment covers only the filesystem server's read/write/delete paths, and these tools have other path roles that it sends through the rules: {}",
                outside.join(", ")
            ));
        }
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
    if !policy.protected_paths.is_empty() {
        warnings.push("protected paths: IronCurtain also treated every argument value starting with '/', '.' or '~' as a path (whatever its role, even for unannotated tools); Warden checks the arguments with path roles".into());
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

    let mut origin = format!("IronCurtain policy {} with annotations {}", shown(policy_path), shown(annotations_path));
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
