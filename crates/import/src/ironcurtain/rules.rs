//! `compiled-policy.json` rules, rewritten for Warden's evaluation.
//!
//! IronCurtain (`policy-engine.ts`) evaluates each resource role of a tool
//! through the whole rule list: a rule with role conditions (`roles`,
//! `paths`, `domains`, `lists`) is considered for a role only when every one
//! of them names it; a rule without any is considered for every role. The
//! first match decides the role, a role no rule decides is denied, and the
//! most restrictive role wins. A tool without resource roles gets one
//! first-match pass over all rules, where a `roles` condition holds when an
//! argument has one of the roles.
//!
//! Warden evaluates rules with `roles` per role and the others once per
//! call, combining both. So each rule becomes:
//! - a role rule whose `roles` are those IronCurtain would consider it for
//!   (the roles its role conditions share; when it has none, every resource
//!   role of the annotated tools it selects); with `lists`, one per role,
//!   since each role's values sit in different arguments;
//! - and, when it can decide a tool without resource roles, a call rule
//!   naming those annotated tools.

use indexmap::IndexMap;
use serde_json::Value;
use warden_config::{Action, Condition, DomainsAllowed, PathsWithin, RoleCategory, Rule, RuleMatch};

use super::annotations::{Tool, Tools, is_resource};
use crate::error::ImportError;
use crate::glob;
use crate::node::{At, Doc, Node, unknown_keys};

/// The rules and lists written, and what to tell the user.
pub(super) struct Mapped {
    pub(super) rules: Vec<Rule>,
    pub(super) lists: IndexMap<String, Vec<String>>,
    pub(super) warnings: Vec<String>,
}

/// How a list condition compares values (`dynamic-list-types.ts`).
#[derive(Clone, Copy, PartialEq)]
enum ListKind {
    /// Exact, or `*.example.com` (which also matches `example.com`), or `*`
    /// (any name but an IP address).
    Domains,
    /// Equal ignoring case.
    Emails,
    /// Exactly equal.
    Identifiers,
}

struct ListCond {
    roles: Vec<String>,
    allowed: Vec<String>,
    kind: ListKind,
}

/// One IronCurtain rule, as read.
struct Source {
    name: String,
    description: String,
    reason: String,
    action: Action,
    roles: Option<Vec<String>>,
    server: Option<Vec<String>>,
    tool: Option<Vec<String>>,
    side_effects: Option<bool>,
    paths: Option<(Vec<String>, String)>,
    domains: Option<(Vec<String>, Vec<String>)>,
    lists: Option<Vec<ListCond>>,
    at: At,
}

impl Source {
    /// Whether IronCurtain treats it as a role rule (`hasRoleConditions`).
    fn has_role_conditions(&self) -> bool {
        self.roles.is_some()
            || self.paths.is_some()
            || self.domains.is_some()
            || self.lists.as_ref().is_some_and(|lists| !lists.is_empty())
    }

    /// Whether its server, tool and sideEffects conditions hold for `tool`.
    fn selects(&self, tool: &Tool) -> bool {
        self.server.as_ref().is_none_or(|servers| servers.contains(&tool.server))
            && self.tool.as_ref().is_none_or(|tools| tools.contains(&tool.name))
            && self.side_effects.is_none_or(|side_effects| Some(side_effects) == tool.side_effects)
    }
}

/// Reads the compiled policies and writes their rules for Warden. Several
/// (IronCurtain's per-server `compiled-policy.json` files) are merged as
/// IronCurtain merges them: their rules concatenated in the alphabetical
/// order of their `serverName`.
pub(super) fn map(
    docs: &[Doc<'_>],
    tools: &Tools,
    lists: Option<&IndexMap<String, Vec<String>>>,
) -> Result<Mapped, ImportError> {
    let mut parsed = Vec::with_capacity(docs.len());
    for doc in docs {
        let is_json = doc.path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        let root = if is_json { doc.parse_json()? } else { doc.parse_yaml()? };
        let server = match root.as_map().and_then(|top| top.get("serverName")) {
            Some(node) => doc.text(node, &At::root().key("serverName"))?.unwrap_or_default(),
            None => String::new(),
        };
        parsed.push((server, doc, root));
    }
    parsed.sort_by(|a, b| a.0.cmp(&b.0));
    let Some((_, first, _)) = parsed.first() else {
        return Err(ImportError::BadOption { option: "compiled policy", message: "no compiled policy given".into() });
    };
    let mut mapper =
        Mapper { doc: first, tools, lists, out: Vec::new(), lists_out: IndexMap::new(), warnings: Vec::new() };
    let mut copied = Vec::new();
    for (_, doc, root) in &parsed {
        mapper.doc = *doc;
        let Some(top) = root.as_map() else {
            return Err(doc.error(&At::root(), format!("expected the compiled policy object, found {}", root.kind())));
        };
        let known = [
            "generatedAt",
            "constitutionHash",
            "inputHash",
            "rules",
            "listDefinitions",
            "serverName",
            "skippedServers",
        ];
        let ignored = unknown_keys(top, &known);
        if !ignored.is_empty() {
            mapper.warnings.push(format!(
                "ignored {} of the compiled policy {}",
                ignored.join(", "),
                doc.path.display()
            ));
        }
        let rules_at = At::root().key("rules");
        let Some(Node::List(items)) = top.get("rules") else {
            return Err(doc.error(&At::root(), "has no rules list"));
        };
        for (index, item) in items.iter().enumerate() {
            let source = read_rule(doc, item, &rules_at.index(index), &mut mapper.warnings)?;
            if mapper.rule(&source)? {
                copied.push(source.name.clone());
            }
        }
    }

    let mut warnings = mapper.warnings;
    if !copied.is_empty() {
        let unscoped: Vec<String> = tools
            .list
            .iter()
            .filter(|tool| tool.roles().is_empty())
            .map(|tool| format!("{}/{}", tool.server, tool.name))
            .collect();
        warnings.push(format!(
            "rules {} also decide tools without resource roles ({}); for those they are written as call rules naming the annotated tools, so tools annotated later are not covered",
            copied.join(", "),
            unscoped.join(", ")
        ));
    }
    let sometimes: Vec<String> = tools
        .list
        .iter()
        .filter(|tool| tool.can_be_unscoped() && !tool.roles().is_empty())
        .map(|tool| format!("{}/{}", tool.server, tool.name))
        .collect();
    if !sometimes.is_empty() {
        warnings.push(format!(
            "{}: their conditional roles can leave a call without resource roles, which IronCurtain then decides in one pass over the rules; Warden denies such calls unless a rule without roles allows them",
            sometimes.join(", ")
        ));
    }
    Ok(Mapped { rules: mapper.out, lists: mapper.lists_out, warnings })
}

struct Mapper<'a> {
    doc: &'a Doc<'a>,
    tools: &'a Tools,
    lists: Option<&'a IndexMap<String, Vec<String>>>,
    out: Vec<Rule>,
    lists_out: IndexMap<String, Vec<String>>,
    warnings: Vec<String>,
}

impl Mapper<'_> {
    /// Writes the Warden rules for `source`; true when it needed call rules
    /// for tools without resource roles.
    fn rule(&mut self, source: &Source) -> Result<bool, ImportError> {
        let label = format!("rule {:?}", source.name);
        for (key, list) in [("server", &source.server), ("tool", &source.tool), ("roles", &source.roles)] {
            if list.as_ref().is_some_and(Vec::is_empty) {
                self.warnings
                    .push(format!("{label} is left out: its {key} list is empty, so IronCurtain never applies it"));
                return Ok(false);
            }
        }
        let before = self.out.len();
        let copies: Vec<(String, String)>;
        if source.has_role_conditions() {
            let roles = effective_roles(source);
            if !roles.is_empty() {
                match &source.lists {
                    Some(lists) if !lists.is_empty() => {
                        for role in &roles {
                            self.list_rules(source, role, lists)?;
                        }
                    }
                    _ => {
                        let rule = self.role_rule(source, roles)?;
                        self.out.push(rule);
                    }
                }
            }
            // In the single pass for tools without resource roles, only a
            // `roles` condition can hold (through their other roles).
            let opaque: Vec<String> =
                source.roles.iter().flatten().filter(|role| !is_resource(role)).cloned().collect();
            let conditioned = source.paths.is_some() || source.domains.is_some() || source.lists.is_some();
            if conditioned && !opaque.is_empty() {
                self.warnings.push(format!(
                    "{label}: its roles {} are never evaluated per role, and with paths, domains or lists conditions it is not carried over for tools without resource roles",
                    opaque.join(", ")
                ));
            }
            copies = if opaque.is_empty() || conditioned {
                Vec::new()
            } else {
                self.unscoped(source, |tool| tool.has_any_role(&opaque))
            };
            if copies.is_empty() && self.out.len() == before {
                self.warnings.push(format!(
                    "{label} is left out: its role conditions share no role that IronCurtain evaluates, and no tool without resource roles has its roles"
                ));
            }
        } else {
            // Every role of the annotated tools it selects.
            let selected: Vec<String> =
                self.tools.list.iter().filter(|tool| source.selects(tool)).flat_map(Tool::roles).collect();
            let roles: Vec<String> =
                self.tools.universe.iter().filter(|role| selected.contains(role)).cloned().collect();
            if !roles.is_empty() {
                let rule = self.role_rule(source, roles)?;
                self.out.push(rule);
            }
            copies = self.unscoped(source, |_| true);
            if copies.is_empty() && self.out.len() == before {
                self.warnings.push(format!("{label} is left out: no annotated tool can reach it"));
            }
        }
        if copies.is_empty() {
            return Ok(false);
        }
        let mut by_server: IndexMap<String, Vec<String>> = IndexMap::new();
        for (server, tool) in copies {
            by_server.entry(server).or_default().push(glob::literal(&tool));
        }
        for (server, tools) in by_server {
            let when = RuleMatch { server: vec![glob::literal(&server)], tool: tools, ..RuleMatch::default() };
            self.out.push(Rule { when, ..self.base(source) });
        }
        Ok(true)
    }

    /// The annotated tools without resource roles that `source` selects and
    /// `keep` accepts, as (server, tool).
    fn unscoped(&self, source: &Source, keep: impl Fn(&Tool) -> bool) -> Vec<(String, String)> {
        self.tools
            .list
            .iter()
            .filter(|tool| tool.roles().is_empty() && source.selects(tool) && keep(tool))
            .map(|tool| (tool.server.clone(), tool.name.clone()))
            .collect()
    }

    /// The rule without conditions.
    fn base(&self, source: &Source) -> Rule {
        Rule {
            name: source.name.clone(),
            description: source.description.clone(),
            when: RuleMatch::default(),
            action: source.action,
            reason: source.reason.clone(),
            timeout_secs: None,
            auto_approve: false,
        }
    }

    /// `source` as a role rule for `roles`, lists aside.
    fn role_rule(&self, source: &Source, roles: Vec<String>) -> Result<Rule, ImportError> {
        let rule_roles = roles.clone();
        let names = |list: &Option<Vec<String>>| list.iter().flatten().map(|name| glob::literal(name)).collect();
        let domains = match &source.domains {
            Some((roles, allowed)) => {
                let mut patterns = Vec::new();
                for entry in allowed {
                    for pattern in self.expand(source, entry, "domains.allowed")? {
                        if !patterns.contains(&pattern) {
                            patterns.push(pattern);
                        }
                    }
                }
                Some(DomainsAllowed { roles: scoped(roles, &rule_roles, RoleCategory::Url), allowed: patterns })
            }
            None => None,
        };
        let when = RuleMatch {
            server: names(&source.server),
            tool: names(&source.tool),
            roles,
            side_effects: source.side_effects,
            paths: source.paths.as_ref().map(|(roles, dir)| PathsWithin {
                roles: scoped(roles, &rule_roles, RoleCategory::Path),
                within: vec![dir.clone()],
            }),
            domains,
            args: None,
            method: Vec::new(),
        };
        Ok(Rule { when, ..self.base(source) })
    }

    /// The values an `allowed` entry stands for: a literal, or a dynamic
    /// list's effective values.
    fn expand(&self, source: &Source, entry: &str, place: &str) -> Result<Vec<String>, ImportError> {
        let Some(name) = entry.strip_prefix('@') else { return Ok(vec![entry.to_owned()]) };
        let at = source.at.key("if");
        let label = format!("rule {:?}", source.name);
        let Some(lists) = self.lists else {
            return Err(self.doc.error(
                &at,
                format!("{label} needs the dynamic list @{name} ({place}): give the dynamic-lists.json file"),
            ));
        };
        lists.get(name).cloned().ok_or_else(|| {
            self.doc.error(
                &at,
                format!("{label} needs the dynamic list @{name} ({place}), which the dynamic lists file does not have"),
            )
        })
    }

    /// Role rules for `role` of a rule with list conditions: its values are
    /// the arguments that have the role, which can differ between tools.
    fn list_rules(&mut self, source: &Source, role: &str, lists: &[ListCond]) -> Result<(), ImportError> {
        let label = format!("rule {:?}", source.name);
        // Each list tests the arguments of the role being decided when it
        // names that role, else those of its own roles (IronCurtain's
        // multi-identifier rules: github-owner and github-repo together).
        let list_args = |tool: &Tool, role_args: &[String], list: &ListCond| -> Vec<String> {
            if list.roles.iter().any(|r| r == role) {
                return role_args.to_vec();
            }
            let mut args: Vec<String> = Vec::new();
            for other in &list.roles {
                for arg in tool.args_with(other).0 {
                    if !args.contains(&arg) {
                        args.push(arg);
                    }
                }
            }
            args
        };
        let mut groups: IndexMap<Vec<Vec<String>>, Vec<&Tool>> = IndexMap::new();
        let mut conditional = Vec::new();
        for tool in self.tools.list.iter().filter(|tool| source.selects(tool)) {
            let (args, sometimes) = tool.args_with(role);
            if args.is_empty() {
                continue;
            }
            let per_list: Vec<Vec<String>> = lists.iter().map(|list| list_args(tool, &args, list)).collect();
            if per_list.iter().any(Vec::is_empty) {
                // A list whose roles the tool lacks has no values: it never holds.
                continue;
            }
            if sometimes {
                conditional.push(format!("{}/{}", tool.server, tool.name));
            }
            groups.entry(per_list).or_default().push(tool);
        }
        if groups.is_empty() {
            self.warnings.push(format!(
                "{label}: no annotated tool it selects has the role {role} (and the roles of its other lists), so its list condition never holds for it (not written for {role})"
            ));
            return Ok(());
        }
        if !conditional.is_empty() {
            self.warnings.push(format!(
                "{label}: its list condition tests the arguments that can have {role} in {}, also when their conditional roles leave it out",
                conditional.join(", ")
            ));
        }
        let mut written = Vec::new();
        for (index, list) in lists.iter().enumerate() {
            let mut values = Vec::new();
            for entry in &list.allowed {
                for value in self.expand(source, entry, "lists")? {
                    if !values.contains(&value) {
                        values.push(value);
                    }
                }
            }
            let name = match list.allowed.as_slice() {
                [single] if single.starts_with('@') => single[1..].to_owned(),
                _ => format!("{}.lists[{index}]", source.name),
            };
            let name = self.store_list(name, values.clone());
            written.push((name, values, list.kind));
        }
        let single = groups.len() == 1;
        let mut approximate = false;
        for (per_list, tools) in groups {
            let mut all = Vec::new();
            for ((list, values, kind), args) in written.iter().zip(&per_list) {
                if !all.contains(&present(args)) {
                    all.push(present(args));
                }
                for arg in args {
                    let (test, exact) = matches(arg, list, values, *kind);
                    approximate |= !exact;
                    all.push(if args.len() == 1 {
                        test
                    } else {
                        any(vec![
                            Condition { arg: Some(arg.clone()), exists: Some(false), ..Condition::default() },
                            test,
                        ])
                    });
                }
            }
            let args_condition = Condition { all: Some(all), ..Condition::default() };
            let mut rule = self.role_rule(source, vec![role.to_owned()])?;
            rule.when.args = Some(args_condition);
            if single {
                self.out.push(rule);
                continue;
            }
            let mut by_server: IndexMap<&str, Vec<String>> = IndexMap::new();
            for tool in tools {
                by_server.entry(tool.server.as_str()).or_default().push(glob::literal(&tool.name));
            }
            for (server, names) in by_server {
                let mut rule = rule.clone();
                rule.when.server = vec![glob::literal(server)];
                rule.when.tool = names;
                self.out.push(rule);
            }
        }
        let arrays = format!(
            "{label}: its domain list has `*`, which Warden checks on the whole text (IronCurtain on the host before a `/`), and an array argument never matches it (IronCurtain checks each text)"
        );
        if approximate && !self.warnings.contains(&arrays) {
            self.warnings.push(arrays);
        }
        Ok(())
    }

    /// Stores a list under `name` (renamed if taken by other values).
    fn store_list(&mut self, name: String, values: Vec<String>) -> String {
        let mut candidate = name.clone();
        let mut count = 1;
        while let Some(existing) = self.lists_out.get(&candidate) {
            if *existing == values {
                return candidate;
            }
            count += 1;
            candidate = format!("{name}#{count}");
        }
        self.lists_out.insert(candidate.clone(), values);
        candidate
    }
}

/// The roles a `paths` or `domains` condition names, as Warden writes them:
/// none (the role being decided) when the rule is only decided for roles of
/// `category`, since IronCurtain checks only the values of the role it is
/// deciding; else as IronCurtain wrote them.
fn scoped(condition_roles: &[String], rule_roles: &[String], category: RoleCategory) -> Vec<String> {
    if rule_roles.iter().all(|role| RoleCategory::of_ironcurtain_role(role) == Some(category)) {
        Vec::new()
    } else {
        condition_roles.to_vec()
    }
}

/// The roles IronCurtain considers a role rule for: those all its role
/// conditions name, among the roles it evaluates, in order.
fn effective_roles(source: &Source) -> Vec<String> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    sets.extend(source.roles.clone());
    sets.extend(source.paths.iter().map(|(roles, _)| roles.clone()));
    sets.extend(source.domains.iter().map(|(roles, _)| roles.clone()));
    sets.extend(source.lists.iter().map(|lists| lists.iter().flat_map(|list| list.roles.clone()).collect()));
    let Some((first, rest)) = sets.split_first() else { return Vec::new() };
    let mut roles: Vec<String> = Vec::new();
    for role in first {
        if is_resource(role) && rest.iter().all(|set| set.contains(role)) && !roles.contains(role) {
            roles.push(role.clone());
        }
    }
    roles
}

fn any(list: Vec<Condition>) -> Condition {
    Condition { any: Some(list), ..Condition::default() }
}

/// At least one of `args` is given.
fn present(args: &[String]) -> Condition {
    let exists = |arg: &String| Condition { arg: Some(arg.clone()), exists: Some(true), ..Condition::default() };
    match args {
        [arg] => exists(arg),
        _ => any(args.iter().map(exists).collect()),
    }
}

/// `arg` matches one of `values` (stored as the list `list`) the way
/// IronCurtain compares values of `kind`, each text of an array on its own;
/// `false` when Warden can only approximate it (a domain list with `*`,
/// where an array never matches).
fn matches(arg: &str, list: &str, values: &[String], kind: ListKind) -> (Condition, bool) {
    let test = |condition: Condition| Condition { arg: Some(arg.to_owned()), ..condition };
    let in_list = Condition { in_list: Some(list.to_owned()), ..Condition::default() };
    match kind {
        ListKind::Emails => (test(Condition { ignore_case: true, each: true, ..in_list }), true),
        ListKind::Identifiers => (test(Condition { each: true, ..in_list }), true),
        ListKind::Domains if values.is_empty() => (test(Condition { each: true, ..in_list }), true),
        ListKind::Domains if !values.iter().any(|value| value == "*") => {
            (test(Condition { regex: Some(domain_regex(values)), each: true, ..Condition::default() }), true)
        }
        ListKind::Domains => {
            let mut alternatives = vec![test(in_list)];
            for value in values {
                if value == "*" {
                    // Any name but an IP address (`isIpAddress`).
                    let ip = test(Condition {
                        regex: Some(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$".into()),
                        ..Condition::default()
                    });
                    alternatives.push(Condition {
                        all: Some(vec![
                            Condition { not: Some(Box::new(ip)), ..Condition::default() },
                            test(Condition { not_contains: Some(":".into()), ..Condition::default() }),
                        ]),
                        ..Condition::default()
                    });
                } else if let Some(parent) = value.strip_prefix("*.") {
                    alternatives.push(test(Condition {
                        equals: Some(Value::String(parent.to_owned())),
                        ..Condition::default()
                    }));
                    alternatives
                        .push(test(Condition { ends_with: Some(value[1..].to_owned()), ..Condition::default() }));
                }
            }
            (any(alternatives), false)
        }
    }
}

/// One regular expression for IronCurtain's domain patterns
/// (`domainMatchesAllowlist`): the host is the text before the first `/`;
/// `example.com` matches that host, `*.example.com` it and its subdomains,
/// a pattern with a `/` the whole text.
fn domain_regex(patterns: &[String]) -> String {
    let alternatives: Vec<String> = patterns
        .iter()
        .map(|pattern| {
            if pattern.contains('/') {
                regex::escape(pattern)
            } else if let Some(parent) = pattern.strip_prefix("*.") {
                format!(r"(?:[^/]*\.)?{}(?:/.*)?", regex::escape(parent))
            } else {
                format!("{}(?:/.*)?", regex::escape(pattern))
            }
        })
        .collect();
    format!("(?s)^(?:{})$", alternatives.join("|"))
}

/// Reads one rule.
fn read_rule(doc: &Doc<'_>, node: &Node, at: &At, warnings: &mut Vec<String>) -> Result<Source, ImportError> {
    let Some(fields) = node.as_map() else {
        return Err(doc.error(at, format!("expected a rule, found {}", node.kind())));
    };
    let get = |key: &str| fields.get(key).unwrap_or(&Node::Null);
    let text = |key: &str| doc.text(get(key), &at.key(key)).map(Option::unwrap_or_default);
    let name = text("name")?;
    if name.trim().is_empty() {
        return Err(doc.error(at, "has no name"));
    }
    let label = format!("rule {name:?}");
    let ignored = unknown_keys(fields, &["name", "description", "principle", "if", "then", "reason"]);
    if !ignored.is_empty() {
        warnings.push(format!("ignored {} of {label}", ignored.join(", ")));
    }
    let (description, principle) = (text("description")?, text("principle")?);
    let description = match (description.is_empty(), principle.is_empty()) {
        (_, true) => description,
        (true, false) => format!("Principle: {principle}"),
        (false, false) => format!("{description} (principle: {principle})"),
    };
    let action = match text("then")?.as_str() {
        "allow" => Action::Allow,
        "deny" => Action::Deny,
        "escalate" => Action::Escalate,
        other => {
            return Err(doc.error(
                &at.key("then"),
                format!("{label}: unknown decision {other:?} (expected allow, deny or escalate)"),
            ));
        }
    };
    let if_at = at.key("if");
    let empty = IndexMap::new();
    let cond = doc.map(get("if"), &if_at)?.unwrap_or(&empty);
    let unknown = unknown_keys(cond, &["roles", "server", "tool", "sideEffects", "paths", "domains", "lists"]);
    if let Some(key) = unknown.first() {
        return Err(doc.error(&if_at.key(key), format!("{label}: unknown condition {key:?}; refusing to drop it")));
    }
    let list = |key: &str| -> Result<Option<Vec<String>>, ImportError> {
        match cond.get(key) {
            None | Some(Node::Null) => Ok(None),
            Some(node) => doc.texts(node, &if_at.key(key)).map(Some),
        }
    };
    let roles_and = |key: &str, other: &str| -> Result<Option<(Vec<String>, &Node)>, ImportError> {
        let part_at = if_at.key(key);
        let Some(part) = doc.map(cond.get(key).unwrap_or(&Node::Null), &part_at)? else { return Ok(None) };
        if let Some(extra) = unknown_keys(part, &["roles", other]).first() {
            return Err(doc.error(&part_at.key(extra), format!("{label}: unknown condition {key}.{extra}")));
        }
        let roles = doc.texts(part.get("roles").unwrap_or(&Node::Null), &part_at.key("roles"))?;
        Ok(Some((roles, part.get(other).unwrap_or(&Node::Null))))
    };
    let paths = match roles_and("paths", "within")? {
        Some((roles, within)) => {
            let within_at = if_at.key("paths").key("within");
            let Some(dir) = doc.text(within, &within_at)?.filter(|dir| !dir.trim().is_empty()) else {
                return Err(doc.error(&within_at, format!("{label}: paths needs a within directory")));
            };
            Some((roles, dir))
        }
        None => None,
    };
    let domains = match roles_and("domains", "allowed")? {
        Some((roles, allowed)) => Some((roles, doc.texts(allowed, &if_at.key("domains").key("allowed"))?)),
        None => None,
    };
    let lists_at = if_at.key("lists");
    let lists = match cond.get("lists").unwrap_or(&Node::Null) {
        Node::Null => None,
        Node::List(items) => Some(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| list_cond(doc, item, &lists_at.index(index), &label))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        other => return Err(doc.error(&lists_at, format!("{label}: expected a list, found {}", other.kind()))),
    };
    Ok(Source {
        name,
        description,
        reason: text("reason")?,
        action,
        roles: list("roles")?,
        server: list("server")?,
        tool: list("tool")?,
        side_effects: doc.bool(cond.get("sideEffects").unwrap_or(&Node::Null), &if_at.key("sideEffects"))?,
        paths,
        domains,
        lists,
        at: at.clone(),
    })
}

/// One `{roles, allowed, matchType}` of `if.lists`.
fn list_cond(doc: &Doc<'_>, node: &Node, at: &At, label: &str) -> Result<ListCond, ImportError> {
    let Some(fields) = node.as_map() else {
        return Err(doc.error(at, format!("{label}: expected {{roles, allowed, matchType}}, found {}", node.kind())));
    };
    if let Some(extra) = unknown_keys(fields, &["roles", "allowed", "matchType"]).first() {
        return Err(doc.error(&at.key(extra), format!("{label}: unknown list condition field {extra:?}")));
    }
    let get = |key: &str| fields.get(key).unwrap_or(&Node::Null);
    let kind = match doc.text(get("matchType"), &at.key("matchType"))?.as_deref() {
        Some("domains") => ListKind::Domains,
        Some("emails") => ListKind::Emails,
        Some("identifiers") => ListKind::Identifiers,
        other => {
            return Err(doc.error(
                &at.key("matchType"),
                format!(
                    "{label}: unknown matchType {:?} (expected domains, emails or identifiers)",
                    other.unwrap_or_default()
                ),
            ));
        }
    };
    Ok(ListCond {
        roles: doc.texts(get("roles"), &at.key("roles"))?,
        allowed: doc.texts(get("allowed"), &at.key("allowed"))?,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_patterns_match_as_in_ironcurtain() {
        let patterns = ["*.bbc.co.uk", "apnews.com", "github.com/provos/x"].map(str::to_owned);
        let regex = regex::Regex::new(&domain_regex(&patterns)).unwrap();
        for yes in
            ["bbc.co.uk", "news.bbc.co.uk", "a.b.bbc.co.uk/path", "apnews.com", "apnews.com/a/b", "github.com/provos/x"]
        {
            assert!(regex.is_match(yes), "{yes}");
        }
        for no in
            ["evilbbc.co.uk", "bbc.co.uk.evil", "apnews.com.evil", "x.apnews.com", "github.com/provos/y", "github.com"]
        {
            assert!(!regex.is_match(no), "{no}");
        }
    }
}
