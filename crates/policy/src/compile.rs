//! From configuration to a compiled [`PolicyEngine`].
//!
//! Everything is prepared once: globs are gathered into two [`GlobSet`]s
//! (server and tool names) so one call matches all rules' globs in two
//! passes, regexes and lists are compiled and shared, configured paths are
//! canonicalised. Every problem is collected, each naming its rule or
//! section, and reported together.

use std::collections::{HashMap, HashSet};

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use warden_config::{Action, Config, Policy, Profile, Rule};
use warden_pipeline::Escalation;

use crate::condition::{Cond, CondCompiler};
use crate::domains::DomainSet;
use crate::error::PolicyError;
use crate::index::RuleIndex;
use crate::known::annotations_for;
use crate::paths::{PathEnv, canonicalize};
use crate::protect::default_protected_paths;
use crate::scan::Scans;
use crate::trigger::Trigger;
use warden_config::RoleCategory;

use crate::categories::{RoleTable, category_name};
use crate::roles::Annotation;
use crate::verdict::Decision;

/// Names of the structural checks, which rules may not take.
pub(crate) const RESERVED: [&str; 9] = [
    "trusted-server",
    "invalid-arguments",
    "unannotated-tool",
    "argument-type",
    "invalid-path",
    "protected-path",
    "domain-allowlist",
    "sandbox",
    "default",
];

/// A compiled policy: decides tool calls from their server, tool name and
/// arguments. Build it with [`PolicyEngine::compile`], use it with
/// [`PolicyEngine::evaluate`] or as a gateway [`Guard`](warden_pipeline::Guard).
#[derive(Debug)]
pub struct PolicyEngine {
    /// The profile whose overrides apply, if any.
    pub(crate) profile: Option<String>,
    /// When no rule decides.
    pub(crate) default: Decision,
    /// Deny unannotated tools.
    pub(crate) strict: bool,
    pub(crate) trusted: FxHashSet<String>,
    /// Canonical protected paths.
    pub(crate) protected: Vec<PathBuf>,
    /// Canonical sandbox directory.
    pub(crate) sandbox: Option<PathBuf>,
    /// Per server, the directories it may resolve a relative path against
    /// besides Warden's current directory (its `cwd`, the absolute paths of
    /// its command line, such as the filesystem server's roots).
    pub(crate) bases: HashMap<String, Vec<PathBuf>>,
    pub(crate) allowed_domains: HashMap<String, DomainSet>,
    /// Server → tool → annotation.
    pub(crate) annotations: FxHashMap<String, FxHashMap<String, Annotation>>,
    /// Every rule, in order.
    pub(crate) rules: Vec<CompiledRule>,
    /// Indices (into `rules`) of the rules with roles, in order.
    pub(crate) role_rules: Vec<usize>,
    /// Indices of the rules without roles, in order.
    pub(crate) call_rules: Vec<usize>,
    /// Every rule's server globs.
    pub(crate) server_globs: GlobSet,
    /// Every rule's tool globs.
    pub(crate) tool_globs: GlobSet,
    /// The rules by their server and tool patterns (see [`crate::index`]).
    pub(crate) index: RuleIndex,
    /// What `~` and relative paths resolve against.
    pub(crate) env: PathEnv,
    /// Each role's category.
    pub(crate) role_table: RoleTable,
    /// Roles whose arguments are absent are decided too.
    pub(crate) decide_absent_roles: bool,
    /// What is allowed but worth a look (rules sharing a name).
    pub(crate) warnings: Vec<String>,
    /// Escalating rules' timeout and auto-approval settings, by the rule's
    /// position in `policy.rules` (1-based; names may be shared).
    pub(crate) escalations: HashMap<usize, Escalation>,
    /// The string tests that run together (see [`crate::scan`]).
    pub(crate) scans: Scans,
}

/// One compiled rule.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    pub name: String,
    /// Its position in `policy.rules` (1-based).
    pub position: usize,
    /// How refusals name it: the name, with the position when shared.
    pub label: String,
    /// `None` for a `log` rule.
    pub decision: Option<Decision>,
    pub reason: String,
    /// Indices into the engine's server glob set (any server when empty).
    pub servers: Vec<usize>,
    /// Indices into the engine's tool glob set (any tool when empty).
    pub tools: Vec<usize>,
    pub roles: Vec<String>,
    pub side_effects: Option<bool>,
    pub paths: Option<PathsCheck>,
    pub domains: Option<DomainsCheck>,
    pub args: Option<Cond>,
    /// What must be true of the call for `args` to hold (see [`crate::trigger`]).
    pub trigger: Option<Trigger>,
    /// The requests it judges.
    pub methods: Methods,
}

/// The requests a rule judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Methods {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
}

/// The requests other than `tools/call` that rules may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `prompts/get`: the name is the prompt's.
    Prompt,
    /// `resources/read`: the name is the resource URI.
    Resource,
}

impl Methods {
    /// Whether the rule judges `request`.
    pub fn judges(self, request: Request) -> bool {
        match request {
            Request::Prompt => self.prompts,
            Request::Resource => self.resources,
        }
    }
}

/// `paths: {roles, within}`, canonicalised.
#[derive(Debug)]
pub(crate) struct PathsCheck {
    /// Explicit roles (all path roles); empty = the rule's default.
    pub roles: Vec<String>,
    pub within: Vec<PathBuf>,
}

/// `domains: {roles, allowed}`, compiled.
#[derive(Debug)]
pub(crate) struct DomainsCheck {
    /// Explicit roles (all URL roles); empty = the rule's default.
    pub roles: Vec<String>,
    pub allowed: DomainSet,
}

impl PolicyEngine {
    /// Compiles `config.policy` with the overrides (`default`, `strict`) of
    /// `profile`, or of `config.defaultProfile` when `profile` is `None`.
    ///
    /// Paths are canonicalised against this process's `HOME` and current
    /// directory. Every problem is reported in one [`PolicyError::Invalid`].
    pub fn compile(config: &Config, profile: Option<&str>) -> Result<PolicyEngine, PolicyError> {
        let chosen = profile.map(str::to_owned).or_else(|| config.default_profile.clone());
        let profile: Option<&Profile> = match &chosen {
            Some(name) => Some(config.profiles.get(name).ok_or_else(|| PolicyError::UnknownProfile(name.clone()))?),
            None => None,
        };
        compile_policy(config, chosen.as_deref(), profile, PathEnv::from_process())
    }

    /// The action taken when no rule decides.
    pub fn default_action(&self) -> Decision {
        self.default
    }

    /// Whether unannotated tools are denied.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The profile whose overrides were applied, if any.
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// What compiled but deserves a look: rules that share a name (allowed,
    /// since the order decides, but refusals then name them by position too).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// `Action` as a decision; `None` for `log`.
pub(crate) fn decision_of(action: Action) -> Option<Decision> {
    match action {
        Action::Allow => Some(Decision::Allow),
        Action::Deny => Some(Decision::Deny),
        Action::Escalate => Some(Decision::Escalate),
        Action::Log => None,
    }
}

pub(crate) fn compile_policy(
    config: &Config,
    profile_name: Option<&str>,
    profile: Option<&Profile>,
    env: PathEnv,
) -> Result<PolicyEngine, PolicyError> {
    let mut problems = Vec::new();
    let expanded = crate::presets::expand(&config.policy, &mut problems);
    let policy = &expanded;
    let mut warnings = Vec::new();

    let (default_action, default_at) = match profile.and_then(|p| p.policy.default) {
        Some(action) => (action, format!("profiles.{}.policy.default", profile_name.unwrap_or_default())),
        None => (policy.default.unwrap_or(Action::Allow), "policy.default".to_owned()),
    };
    let default = decision_of(default_action).unwrap_or_else(|| {
        problems.push(format!("{default_at}: `log` is not a default; use allow, deny or escalate"));
        Decision::Deny
    });
    let strict = profile.and_then(|p| p.policy.strict).unwrap_or(policy.strict);

    let mut protected = Vec::new();
    let defaults = default_protected_paths(config);
    for raw in &policy.unprotect_defaults {
        if defaults.contains(raw) {
            tracing::warn!(path = raw.as_str(), "policy.unprotectDefaults: a built-in protected path is not protected");
            warnings.push(format!("policy.unprotectDefaults: the built-in protected path {raw} is not protected"));
        } else {
            problems.push(format!(
                "policy.unprotectDefaults: {raw:?} is not a built-in protected path (they are: {})",
                defaults.join(", ")
            ));
        }
    }
    for raw in defaults.iter().filter(|raw| !policy.unprotect_defaults.contains(raw)) {
        // A built-in path that cannot be resolved here (no HOME) protects nothing.
        if let Ok(candidates) = canonicalize(raw, &env) {
            protected.extend(candidates);
        }
    }
    for raw in &policy.protected_paths {
        match canonicalize(raw, &env) {
            Ok(candidates) => protected.extend(candidates),
            Err(why) => problems.push(format!("policy.protectedPaths: {raw:?}: {why}")),
        }
    }
    protected.sort();
    protected.dedup();
    let sandbox = policy.sandbox.as_ref().and_then(|raw| match canonical_dir(raw, &env) {
        Ok(dir) => Some(dir),
        Err(why) => {
            problems.push(format!("policy.sandbox: {raw:?}: {why}"));
            None
        }
    });

    let trusted = policy.trusted_servers.iter().cloned().collect();
    let bases = relative_bases(config, &env);

    let mut allowed_domains = HashMap::new();
    for (server, patterns) in &policy.allowed_domains {
        match DomainSet::compile(patterns) {
            Ok(set) => {
                allowed_domains.insert(server.clone(), set);
            }
            Err(list) => problems.extend(list.into_iter().map(|p| format!("policy.allowedDomains.{server}: {p}"))),
        }
    }

    let role_table = RoleTable::new(&policy.roles);
    for role in policy.roles.keys() {
        if role.trim().is_empty() {
            problems.push("policy.roles: a role name is empty".to_owned());
        }
    }
    let mut conditions = CondCompiler::new(policy);
    let mut annotations: FxHashMap<String, FxHashMap<String, Annotation>> = FxHashMap::default();
    for (server, known, tools) in annotations_for(config) {
        tracing::debug!(server, known, "shipped argument annotations apply");
        for (tool, annotation) in tools {
            if let Some(compiled) = Annotation::compile(server, tool, annotation, &mut conditions, &mut problems) {
                annotations.entry(server.to_owned()).or_default().insert(tool.clone(), compiled);
            }
        }
    }
    for (server, tools) in &policy.annotations {
        for (tool, annotation) in tools {
            if let Some(compiled) = Annotation::compile(server, tool, annotation, &mut conditions, &mut problems) {
                annotations.entry(server.clone()).or_default().insert(tool.clone(), compiled);
            }
        }
    }

    let mut globs = Globs::new();
    let mut rules = Vec::with_capacity(policy.rules.len());
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for rule in &policy.rules {
        *counts.entry(rule.name.as_str()).or_default() += 1;
    }
    let mut warned: HashSet<&str> = HashSet::new();
    for (index, rule) in policy.rules.iter().enumerate() {
        let at =
            if rule.name.trim().is_empty() { format!("rule #{}", index + 1) } else { format!("rule '{}'", rule.name) };
        if rule.name.trim().is_empty() {
            problems.push(format!("{at}: a rule needs a name"));
        } else if RESERVED.contains(&rule.name.as_str()) {
            problems.push(format!("{at}: the name is reserved for a structural check ({})", RESERVED.join(", ")));
        }
        let shared = counts.get(rule.name.as_str()).copied().unwrap_or(0) > 1;
        if shared && warned.insert(rule.name.as_str()) {
            let positions: Vec<String> = policy
                .rules
                .iter()
                .enumerate()
                .filter(|(_, other)| other.name == rule.name)
                .map(|(i, _)| format!("#{}", i + 1))
                .collect();
            warnings.push(format!(
                "rules {} share the name '{}': the first that matches decides, and refusals name them by position",
                positions.join(", "),
                rule.name
            ));
        }
        let label = if shared { format!("{} (rule #{})", rule.name, index + 1) } else { rule.name.clone() };
        let names = RuleNames { position: index + 1, label, at: &at };
        if let Some(compiled) =
            compile_rule(rule, &names, &env, &role_table, &mut globs, &mut conditions, &mut problems)
        {
            rules.push(compiled);
        }
    }
    let (server_globs, tool_globs) = globs.build(&mut problems);

    if !problems.is_empty() {
        return Err(PolicyError::Invalid { problems });
    }
    let mut index =
        RuleIndex::build(policy.rules.iter().map(|rule| (rule.when.server.as_slice(), rule.when.tool.as_slice())))
            .map_err(|problem| PolicyError::Invalid { problems: vec![format!("rule index: {problem}")] })?;
    warnings.extend(never_matching(config, policy, &annotations));
    let role_rules = (0..rules.len()).filter(|&i| rules.get(i).is_some_and(|r| !r.roles.is_empty())).collect();
    let call_rules = (0..rules.len()).filter(|&i| rules.get(i).is_some_and(|r| r.roles.is_empty())).collect();
    let scans = conditions.scans();
    for rule in &mut rules {
        rule.trigger = rule.args.as_ref().and_then(|cond| Trigger::of(cond, &scans));
    }
    index.add_triggers(rules.iter().map(|rule| rule.trigger.as_ref()));
    Ok(PolicyEngine {
        profile: profile_name.map(str::to_owned),
        default,
        strict,
        trusted,
        protected,
        sandbox,
        bases,
        allowed_domains,
        annotations,
        rules,
        role_rules,
        call_rules,
        server_globs,
        tool_globs,
        index,
        env,
        role_table,
        decide_absent_roles: policy.decide_absent_roles,
        warnings,
        escalations: escalations(policy),
        scans,
    })
}

/// Per stdio server, the directories it may resolve relative paths against:
/// its `cwd` and the absolute (or `~`) paths among its arguments.
fn relative_bases(config: &Config, env: &PathEnv) -> HashMap<String, Vec<PathBuf>> {
    let mut bases = HashMap::new();
    for (name, server) in &config.servers {
        let warden_config::Transport::Stdio { args, cwd, .. } = &server.transport else { continue };
        let mut dirs: Vec<PathBuf> = Vec::new();
        let texts = cwd.iter().filter_map(|dir| dir.to_str()).chain(args.iter().map(String::as_str));
        for text in texts.filter(|t| t.starts_with('/') || t.starts_with("~/")) {
            if let Ok(candidates) = canonicalize(text, env) {
                dirs.extend(candidates);
            }
        }
        dirs.dedup();
        if !dirs.is_empty() {
            bases.insert(name.clone(), dirs);
        }
    }
    bases
}

/// Rules that can never decide anything: their servers are not
/// configured, no annotation gives their roles, or an earlier call rule
/// without conditions decides every call first.
fn never_matching(
    config: &Config,
    policy: &Policy,
    annotations: &FxHashMap<String, FxHashMap<String, Annotation>>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let matches = |globs: &[String], name: &str| {
        globs.is_empty()
            || globs.iter().any(|g| GlobBuilder::new(g).build().is_ok_and(|glob| glob.compile_matcher().is_match(name)))
    };
    let mut catch_all: Option<&str> = None;
    for rule in &policy.rules {
        let when = &rule.when;
        if let Some(earlier) = catch_all
            && when.roles.is_empty()
            && when.method.is_empty()
        {
            warnings.push(format!(
                "rule '{}' never decides a tool call: rule '{earlier}' before it has no conditions and decides every call",
                rule.name
            ));
            continue;
        }
        if !config.servers.is_empty()
            && !when.server.is_empty()
            && !config.servers.keys().any(|server| matches(&when.server, server))
        {
            warnings.push(format!(
                "rule '{}' never matches: no configured server matches if.server {:?}",
                rule.name, when.server
            ));
            continue;
        }
        if !when.roles.is_empty() && !policy.decide_absent_roles {
            let given = annotations.iter().filter(|(server, _)| matches(&when.server, server)).any(|(_, tools)| {
                tools
                    .iter()
                    .filter(|(tool, _)| matches(&when.tool, tool))
                    .any(|(_, a)| when.roles.iter().any(|role| a.gives_role(role.trim())))
            });
            if !given {
                warnings.push(format!(
                    "rule '{}' never matches: no annotation of its servers and tools gives the roles {:?}",
                    rule.name, when.roles
                ));
            }
        }
        let unconditional = when == &warden_config::RuleMatch::default() && rule.action != Action::Log;
        if unconditional && catch_all.is_none() {
            catch_all = Some(&rule.name);
        }
    }
    warnings
}

/// The approval settings of the escalating rules that have any, by position.
fn escalations(policy: &Policy) -> HashMap<usize, Escalation> {
    let mut escalations = HashMap::new();
    for (index, rule) in policy.rules.iter().enumerate().filter(|(_, rule)| rule.action == Action::Escalate) {
        let escalation = Escalation {
            timeout: rule.timeout_secs.map(std::time::Duration::from_secs),
            auto_approve: rule.auto_approve,
            identifiers: Vec::new(),
        };
        if escalation != Escalation::default() {
            escalations.insert(index + 1, escalation);
        }
    }
    escalations
}

/// How a rule is identified: its position, its label and where problems point.
struct RuleNames<'a> {
    position: usize,
    label: String,
    at: &'a str,
}

/// A configured directory: its canonical form as the kernel resolves it.
fn canonical_dir(raw: &str, env: &PathEnv) -> Result<PathBuf, String> {
    canonicalize(raw, env)?.into_iter().next().ok_or_else(|| "the path resolves to nothing".to_owned())
}

/// Server and tool globs of all rules.
struct Globs {
    servers: GlobSetBuilder,
    server_count: usize,
    tools: GlobSetBuilder,
    tool_count: usize,
}

impl Globs {
    fn new() -> Globs {
        Globs { servers: GlobSetBuilder::new(), server_count: 0, tools: GlobSetBuilder::new(), tool_count: 0 }
    }

    /// Adds `patterns` to the server (or tool) set; returns their indices.
    fn add(&mut self, patterns: &[String], server: bool, at: &str, problems: &mut Vec<String>) -> Vec<usize> {
        let mut indices = Vec::with_capacity(patterns.len());
        for pattern in patterns {
            match GlobBuilder::new(pattern).build() {
                Ok(glob) => {
                    let (set, count) = if server {
                        (&mut self.servers, &mut self.server_count)
                    } else {
                        (&mut self.tools, &mut self.tool_count)
                    };
                    set.add(glob);
                    indices.push(*count);
                    *count += 1;
                }
                Err(err) => problems.push(format!(
                    "{at}: if.{} glob {pattern:?} is invalid: {}",
                    if server { "server" } else { "tool" },
                    err.kind()
                )),
            }
        }
        indices
    }

    fn build(self, problems: &mut Vec<String>) -> (GlobSet, GlobSet) {
        let mut build = |builder: GlobSetBuilder, what: &str| match builder.build() {
            Ok(set) => set,
            Err(err) => {
                problems.push(format!("{what} globs: {err}"));
                GlobSet::empty()
            }
        };
        let servers = build(self.servers, "server");
        let tools = build(self.tools, "tool");
        (servers, tools)
    }
}

fn compile_rule(
    rule: &Rule,
    names: &RuleNames<'_>,
    env: &PathEnv,
    table: &RoleTable,
    globs: &mut Globs,
    conditions: &mut CondCompiler<'_>,
    problems: &mut Vec<String>,
) -> Option<CompiledRule> {
    let at = names.at;
    let before = problems.len();
    let when = &rule.when;
    let servers = globs.add(&when.server, true, at, problems);
    let tools = globs.add(&when.tool, false, at, problems);
    let roles: Vec<String> = when.roles.iter().map(|r| r.trim().to_owned()).collect();
    if roles.iter().any(String::is_empty) {
        problems.push(format!("{at}: if.roles has an empty role name"));
    }
    let paths = when.paths.as_ref().map(|paths| {
        let check_roles = typed_roles(&paths.roles, RoleCategory::Path, "paths", table, at, problems);
        if paths.within.is_empty() {
            problems.push(format!("{at}: if.paths.within is empty"));
        }
        let mut within = Vec::new();
        for raw in &paths.within {
            match canonical_dir(raw, env) {
                Ok(dir) => within.push(dir),
                Err(why) => problems.push(format!("{at}: if.paths.within {raw:?}: {why}")),
            }
        }
        PathsCheck { roles: check_roles, within }
    });
    let domains = when.domains.as_ref().map(|domains| {
        let check_roles = typed_roles(&domains.roles, RoleCategory::Url, "domains", table, at, problems);
        if domains.allowed.is_empty() {
            problems.push(format!("{at}: if.domains.allowed is empty"));
        }
        let allowed = DomainSet::compile(&domains.allowed).unwrap_or_else(|list| {
            problems.extend(list.into_iter().map(|p| format!("{at}: if.domains: {p}")));
            DomainSet::default()
        });
        DomainsCheck { roles: check_roles, allowed }
    });
    let args = when.args.as_ref().and_then(|cond| conditions.compile(cond, &format!("{at}: if.args"), problems));
    let mut methods = Methods { tools: when.method.is_empty(), prompts: false, resources: false };
    for method in &when.method {
        match method.trim() {
            "tools/call" => methods.tools = true,
            "prompts/get" => methods.prompts = true,
            "resources/read" => methods.resources = true,
            other => problems
                .push(format!("{at}: if.method: {other:?} is not one of tools/call, prompts/get, resources/read")),
        }
    }
    if (methods.prompts || methods.resources)
        && (!roles.is_empty() || when.paths.is_some() || when.domains.is_some() || when.side_effects.is_some())
    {
        problems.push(format!(
            "{at}: roles, paths, domains and sideEffects describe tool arguments; a rule for prompts/get or resources/read cannot use them"
        ));
    }
    if problems.len() != before {
        return None;
    }
    let reason = if !rule.reason.trim().is_empty() {
        rule.reason.clone()
    } else if !rule.description.trim().is_empty() {
        rule.description.clone()
    } else {
        format!("the call matched rule '{}'", rule.name)
    };
    Some(CompiledRule {
        name: rule.name.clone(),
        position: names.position,
        label: names.label.clone(),
        decision: decision_of(rule.action),
        reason,
        servers,
        tools,
        roles,
        side_effects: when.side_effects,
        paths,
        domains,
        // Given once the scans are compiled (see `compile_policy`).
        trigger: None,
        args,
        methods,
    })
}

/// The explicit roles of a `paths` or `domains` check, which must all be of `kind`.
fn typed_roles(
    roles: &[String],
    kind: RoleCategory,
    what: &str,
    table: &RoleTable,
    at: &str,
    problems: &mut Vec<String>,
) -> Vec<String> {
    for role in roles {
        let category = table.category(role.trim());
        if category != kind {
            problems.push(format!(
                "{at}: if.{what}.roles: {role:?} is not a {} role (it is {}; declare custom roles under policy.roles)",
                category_name(kind),
                category_name(category)
            ));
        }
    }
    roles.iter().map(|r| r.trim().to_owned()).collect()
}
