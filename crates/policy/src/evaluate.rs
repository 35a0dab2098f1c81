//! The evaluation of one call, and the engine as the pipeline's [`Guard`].
//!
//! The algorithm, in order:
//!
//! 1. **Trusted server**: a server in `policy.trustedServers` is allowed
//!    outright (rule `trusted-server`). Otherwise the arguments are parsed,
//!    once: they must be a JSON object (absent or `null` is an empty one),
//!    else the call is denied (`invalid-arguments`).
//! 2. **Roles**: the annotation of (server, tool) gives each argument its
//!    roles; each `conditional` entry whose `when` holds replaces the roles
//!    of the arguments it lists. No annotation: denied in strict mode
//!    (`unannotated-tool`), else the call has no roles. A role's values are
//!    its arguments' strings (a string, or each string of an array; absent
//!    or `null` arguments have none, and a role without values is left out
//!    unless `policy.decideAbsentRoles`); any other type is denied naming
//!    the argument (`argument-type`). A role's category (path, url,
//!    identifier, opaque) comes from IronCurtain's role table and
//!    `policy.roles` (see [`crate::categories`]).
//! 3. **Paths** (path roles): every value is canonicalised (see
//!    [`crate::paths`]); one that cannot be is denied (`invalid-path`), one
//!    within a protected path is denied (`protected-path`), unless the
//!    protected path is a directory the sandbox lies in and the value is
//!    within the sandbox.
//! 4. **URLs** (URL roles): every value's host is read (see
//!    [`crate::domains`]). When `policy.allowedDomains` has an entry for the
//!    server, a value whose host it does not allow (or that has no host)
//!    makes the call escalate (`domain-allowlist`) at once, before any rule
//!    or the default (IronCurtain's structural domain gate: a person decides
//!    what no allowlist admits).
//! 5. **Sandbox**: a path role whose paths all lie within `policy.sandbox` is
//!    allowed (`sandbox`) and skips the role rules.
//! 6. **Role rules** (rules with `if.roles`): for each remaining role of the
//!    call, the rules listing it are tried in order; one whose server and
//!    tool globs, `sideEffects`, `paths`, `domains` and `args` all hold
//!    decides the role's values it matches. A `paths` check on the role
//!    being decided takes each path within its directories on its own, so
//!    each path may be decided by a different rule (IronCurtain's per-path
//!    semantics); any other rule takes all the remaining values. The role's
//!    result is the most restrictive of the rules that took values, and the
//!    default when some value was taken by none. A matching `log` rule is
//!    recorded and the search goes on. `paths` and `domains` look at the
//!    values of their own `roles`, or else of the role being decided (a
//!    `paths` check does not apply to a URL role, nor `domains` to a path
//!    role).
//! 7. **Call rules** (rules without roles): the first matching allow, deny
//!    or escalate rule decides; matching `log` rules are recorded and
//!    evaluation goes on (Sentinel's semantics). Their `paths` / `domains`
//!    look at the values of their own `roles`, or else of every path / URL
//!    role of the call.
//! 8. **Combine**: if a call rule decided, the most restrictive of it and
//!    every role's result; else, if the call has roles, the most restrictive
//!    of the roles' results; else the default action (`policy.default`, or
//!    the profile's, allow when neither is set). Deny > escalate > allow; on
//!    a tie the first (the call rule, then the roles a rule decided, then
//!    those the sandbox allowed) names the rule.
//!
//! A `paths` or `domains` check holds only if there is at least one value
//! to check and every value passes (all canonical forms within one of the
//! directories; every host allowed). One exception makes deny and escalate
//! rules match more, never less: their `domains` check also holds for a git
//! remote (a URL role other than IronCurtain's web-only `fetch-url`) that
//! names no host, such as a remote's name (`origin`), and for such a role
//! without a value (the repository's default remote). IronCurtain resolves
//! these from the repository's configuration, which Warden does not read,
//! so the URL they stand for may be one the rule names.
//!
//! "The rules" above are the call's candidates: the rules whose server and
//! tool globs admit it, found once per call by lookup (see [`crate::index`])
//! and walked in policy order; without a trace, those whose `args` trigger
//! cannot hold for the call's arguments are left out first, by lookup (see
//! [`crate::trigger`] and [`crate::sieve`]). The arguments are decoded only
//! when the annotation, a candidate's `args` or a path-like string needs
//! them (see [`crate::shape`]).

use serde_json::{Map, Value};
use smallvec::SmallVec;

use crate::candidates::Selection;
use crate::compile::{CompiledRule, PolicyEngine, Request};
use crate::decode;
use crate::domains::{host_of, web_host_of};
use crate::paths::{PathEnv, Resolver, all_within, all_within_any, protected_by};
use crate::scan::Memo;
use warden_config::RoleCategory;

use crate::identifiers::identifiers;
use crate::loose_paths::{self, may_hold_paths};
use crate::roles::{Annotation, RoleValues, extract};
use crate::shape;
use crate::verdict::{Decision, Evaluation, Outcome, RoleReason, most_restrictive};
use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard, Verdict};

/// Steps of the evaluation, kept only when asked for.
struct Trace {
    steps: Option<Vec<String>>,
}

impl Trace {
    fn step(&mut self, step: impl FnOnce() -> String) {
        if let Some(steps) = &mut self.steps {
            steps.push(step());
        }
    }

    fn on(&self) -> bool {
        self.steps.is_some()
    }
}

/// What a rule's conditions see of the call.
struct CallView<'a> {
    annotation: Option<&'a Annotation>,
    roles: &'a [RoleValues<'a>],
    args: &'a Value,
}

/// Whether [`PolicyEngine::applies`] checks a rule's `paths`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Paths {
    /// Every value it concerns must lie within its directories.
    Check,
    /// The caller takes the role's paths one by one (step 6).
    PerPath,
}

/// Why a rule did not apply.
enum Miss<'a> {
    SideEffects(Option<bool>, Option<bool>),
    NoPath,
    PathOutside(&'a str),
    NoUrl,
    HostNotAllowed(&'a str),
    Args,
}

impl Miss<'_> {
    fn describe(&self) -> String {
        match self {
            Miss::SideEffects(wanted, actual) => format!(
                "sideEffects is {}, the rule wants {}",
                actual.map_or("not annotated".into(), |a| a.to_string()),
                wanted.map_or("any".into(), |w| w.to_string())
            ),
            Miss::NoPath => "no path value to check".into(),
            Miss::PathOutside(path) => format!("{path:?} is not within the rule's directories"),
            Miss::NoUrl => "no URL value to check".into(),
            Miss::HostNotAllowed(url) => format!("the host of {url:?} is not allowed by the rule's domains"),
            Miss::Args => "the args condition does not hold".into(),
        }
    }
}

impl PolicyEngine {
    /// Evaluates a call to `tool` of `server` with `arguments` (the JSON text
    /// of the call's `arguments` object, if any), recording a trace of every
    /// step.
    pub fn evaluate(&self, server: &str, tool: &str, arguments: Option<&str>) -> Evaluation {
        self.run(server, tool, arguments, true, false)
    }

    /// Evaluates a `prompts/get` (`name` is the prompt's, `arguments` its
    /// arguments) or a `resources/read` (`name` is the URI). A resource
    /// whose `file:` URI, or a prompt argument whose whole value, names a
    /// path within a protected path is denied (`protected-path`), as a
    /// tool's path-like argument is. Otherwise only rules that name the
    /// method judge it: the first that matches decides; when none does, the
    /// request is allowed (the default and the other structural checks
    /// concern tool calls).
    pub fn evaluate_request(&self, request: Request, server: &str, name: &str, arguments: Option<&str>) -> Evaluation {
        self.judge_request(request, server, name, arguments, false, &Resolver::reading())
    }

    /// [`PolicyEngine::evaluate`] as it was before rules were indexed: every
    /// rule's globs are matched against the call. The reference the indexed
    /// evaluation is tested against (`tests/differential_index.rs`), kept
    /// until the index has earned trust; not for use.
    #[doc(hidden)]
    pub fn evaluate_scanning_all(&self, server: &str, tool: &str, arguments: Option<&str>, trace: bool) -> Evaluation {
        self.run(server, tool, arguments, trace, true)
    }

    /// [`PolicyEngine::evaluate_request`] by the reference scan (see
    /// [`PolicyEngine::evaluate_scanning_all`]); not for use.
    #[doc(hidden)]
    pub fn evaluate_request_scanning_all(
        &self,
        request: Request,
        server: &str,
        name: &str,
        arguments: Option<&str>,
    ) -> Evaluation {
        self.judge_request(request, server, name, arguments, true, &Resolver::reading())
    }

    /// What the guard decides for a tool call: [`PolicyEngine::evaluate`]
    /// without the trace. Public for the differential tests; not for use.
    #[doc(hidden)]
    pub fn evaluate_untraced(&self, server: &str, tool: &str, arguments: Option<&str>) -> Evaluation {
        self.decide_quietly(server, tool, arguments)
    }

    fn judge_request(
        &self,
        request: Request,
        server: &str,
        name: &str,
        arguments: Option<&str>,
        scan: bool,
        resolver: &Resolver,
    ) -> Evaluation {
        let mut logged = Vec::new();
        let what = match request {
            Request::Prompt => "prompt",
            Request::Resource => "resource",
        };
        let outcome = 'decided: {
            if self.trusted.contains(server) {
                break 'decided Outcome::new(
                    Decision::Allow,
                    "trusted-server",
                    format!("server '{server}' is trusted"),
                );
            }
            let args = match decode::arguments(arguments) {
                Ok(args) => args,
                Err(why) => break 'decided Outcome::new(Decision::Deny, "invalid-arguments", why),
            };
            let refused = match request {
                Request::Prompt => self.loose_path_refusal(&args, None, &mut Trace { steps: None }, resolver),
                Request::Resource => self.protected_resource(server, name, resolver),
            };
            if let Some(refused) = refused {
                break 'decided refused;
            }
            let mut selection = self.select(server, name, scan);
            let mut memo = selection.memo(self);
            selection.sift(self, &args, &mut memo);
            let view = CallView { annotation: None, roles: &[], args: &args };
            for (index, admitted) in selection.walk(&self.call_rules, false, |i| self.is_call_rule(i)) {
                let Some(rule) = self.rules.get(index) else { continue };
                if !rule.methods.judges(request) || !admitted {
                    continue;
                }
                if self.applies(rule, &view, None, &mut memo, Paths::Check).is_ok() {
                    match rule.decision {
                        None => log(&mut logged, &rule.name),
                        Some(decision) => {
                            break 'decided rule_outcome(rule, decision);
                        }
                    }
                }
            }
            Outcome::new(Decision::Allow, "no-rule", format!("no rule judges this {what}"))
        };
        outcome.into_evaluation(Vec::new(), logged)
    }

    /// [`PolicyEngine::evaluate`] without the trace (for the guard).
    pub(crate) fn decide_quietly(&self, server: &str, tool: &str, arguments: Option<&str>) -> Evaluation {
        let (outcome, logged) = self.outcome_quietly(server, tool, arguments, &Resolver::reading());
        outcome.into_evaluation(Vec::new(), logged)
    }

    /// What the guard needs of [`PolicyEngine::decide_quietly`]: the outcome
    /// (texts borrowed where they can be) and the `log` rules that matched,
    /// with paths resolved by `resolver`.
    pub(crate) fn outcome_quietly(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<&str>,
        resolver: &Resolver,
    ) -> (Outcome<'_>, Vec<String>) {
        let mut trace = Trace { steps: None };
        let mut logged = Vec::new();
        let mut selection = self.select(server, tool, false);
        let outcome = self.decide(server, tool, arguments, &mut selection, &mut trace, &mut logged, resolver);
        (outcome, logged)
    }

    fn run(&self, server: &str, tool: &str, arguments: Option<&str>, trace: bool, scan: bool) -> Evaluation {
        let mut trace = Trace { steps: trace.then(Vec::new) };
        let mut logged = Vec::new();
        let mut selection = self.select(server, tool, scan);
        let resolver = Resolver::reading();
        let outcome = self.decide(server, tool, arguments, &mut selection, &mut trace, &mut logged, &resolver);
        trace.step(|| match outcome.position {
            Some(position) => {
                format!("decision: {} by '{}' (rule #{position}): {}", outcome.decision, outcome.rule, outcome.reason)
            }
            None => format!("decision: {} by '{}': {}", outcome.decision, outcome.rule, outcome.reason),
        });
        outcome.into_evaluation(trace.steps.unwrap_or_default(), logged)
    }

    /// The outcome for a tool call: the call (`server`, `tool`,
    /// `arguments`), the rules `selection` admits, where the steps and the
    /// matched `log` rules are noted, and how paths are resolved.
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<&str>,
        selection: &mut Selection,
        trace: &mut Trace,
        logged: &mut Vec<String>,
        resolver: &Resolver,
    ) -> Outcome<'_> {
        // 1. Trusted servers.
        if self.trusted.contains(server) {
            trace.step(|| format!("trusted-server: server '{server}' is trusted: the policy does not apply"));
            return Outcome::new(Decision::Allow, "trusted-server", format!("server '{server}' is trusted"));
        }
        trace.step(|| format!("trusted-server: server '{server}' is not trusted"));
        // Nothing looks at this tool's arguments: decide without decoding them
        // (a large argument costs nothing when no rule could care).
        let annotation = self.annotations.get(server).and_then(|tools| tools.get(tool));
        let annotated = annotation.is_some();
        let ruled = selection.any_for_tools(&self.rules);
        let path_like = arguments.is_some_and(may_hold_paths);
        if !annotated && !ruled && !self.strict && !path_like {
            trace.step(|| "no annotation and no rule concern this tool, and no argument names a path".into());
            return self.default_outcome();
        }
        // Arguments nothing reads (no roles, no candidate's `args`, nothing
        // path-like) are checked without being decoded.
        let unread = !annotated && !path_like && !selection.reads_arguments(&self.rules);
        let decoded = if unread && shape::acceptable(arguments) {
            Ok(Value::Object(Map::new()))
        } else {
            decode::arguments(arguments)
        };
        let args = match decoded {
            Ok(args) => args,
            Err(why) => {
                trace.step(|| format!("invalid-arguments: {why}"));
                return Outcome::new(Decision::Deny, "invalid-arguments", why);
            }
        };
        // Arguments without a path role that name a protected path (see
        // `crate::loose_paths`); none can when the text has nothing path-like.
        if path_like && let Some(refused) = self.loose_path_refusal(&args, annotation, trace, resolver) {
            return refused;
        }
        if !annotated && !ruled && !self.strict {
            trace.step(|| "no annotation and no rule concern this tool".into());
            return self.default_outcome();
        }
        let mut memo = selection.memo(self);
        // Without a trace, the rules whose trigger cannot hold are left out
        // at once (the trace tells of every rule, and why it missed).
        if !trace.on() {
            selection.sift(self, &args, &mut memo);
        }

        // 2. Roles.
        let mut roles = match annotation {
            None if self.strict => {
                trace.step(|| format!("unannotated-tool: {server}/{tool} has no annotation and the policy is strict"));
                return Outcome::new(
                    Decision::Deny,
                    "unannotated-tool",
                    format!(
                        "tool '{tool}' of server '{server}' has no annotation, so the roles of its arguments are unknown (strict policy)"
                    ),
                );
            }
            None => {
                trace.step(|| format!("roles: {server}/{tool} has no annotation: its arguments have no roles"));
                Vec::new()
            }
            Some(annotation) => {
                let mut applied = Vec::new();
                let assigned = annotation.assign(&args, &mut memo, &mut applied);
                trace.step(|| {
                    let conditional = if applied.is_empty() {
                        String::new()
                    } else {
                        format!(" (conditional roles {applied:?} applied)")
                    };
                    let list: Vec<String> =
                        assigned.iter().map(|(arg, roles)| format!("{arg} → [{}]", roles.join(", "))).collect();
                    format!("roles{conditional}: {}", if list.is_empty() { "none".into() } else { list.join("; ") })
                });
                match extract(&assigned, &args, &self.role_table) {
                    Ok(mut roles) => {
                        if !self.decide_absent_roles {
                            roles.retain(|role| !role.values.is_empty());
                        }
                        roles
                    }
                    Err(why) => {
                        trace.step(|| format!("argument-type: {why}"));
                        return Outcome::new(Decision::Deny, "argument-type", why);
                    }
                }
            }
        };

        // 3. Paths: canonical forms, protected paths.
        let mut canonical: Vec<(&str, Vec<std::path::PathBuf>)> = Vec::new(); // the same value under several roles
        for role in roles.iter_mut().filter(|r| r.kind == RoleCategory::Path) {
            let name = role.role;
            for value in &mut role.values {
                let known = canonical.iter().find(|(text, _)| *text == value.text).map(|(_, paths)| paths.clone());
                match known.map(Ok).unwrap_or_else(|| resolver.canonicalize(value.text, &self.env)) {
                    Ok(paths) => {
                        canonical.push((value.text, paths.clone()));
                        value.paths = paths;
                    }
                    Err(why) => {
                        let reason = format!(
                            "argument '{}' (role {name}): cannot check the path {:?}: {why}",
                            value.arg, value.text
                        );
                        trace.step(|| format!("invalid-path: {reason}"));
                        return Outcome::new(Decision::Deny, "invalid-path", reason);
                    }
                }
                if let Some((base, protected)) = self.relative_protected(server, value.text, resolver) {
                    let reason = format!(
                        "argument '{}' (role {name}): {:?}, resolved against {} as the server may, is within the protected path {}",
                        value.arg,
                        value.text,
                        base.display(),
                        protected.display()
                    );
                    trace.step(|| format!("protected-path: {reason}"));
                    return Outcome::new(Decision::Deny, "protected-path", reason);
                }
                if let Some(protected) = protected_by(&value.paths, &self.protected, self.sandbox.as_deref()) {
                    let reason = format!(
                        "argument '{}' (role {name}): {:?} is within the protected path {}",
                        value.arg,
                        value.text,
                        protected.display()
                    );
                    trace.step(|| format!("protected-path: {reason}"));
                    return Outcome::new(Decision::Deny, "protected-path", reason);
                }
                trace.step(|| {
                    let shown: Vec<String> = value.paths.iter().map(|p| p.display().to_string()).collect();
                    format!("path: {:?} (role {name}) → {}, not protected", value.text, shown.join(" | "))
                });
            }
        }

        // 4. URLs: hosts, the server's domain allowlist.
        let allowlist = self.allowed_domains.get(server);
        let mut structural = None;
        for role in roles.iter_mut().filter(|r| r.kind == RoleCategory::Url) {
            let name = role.role;
            for value in &mut role.values {
                let host =
                    if self.role_table.is_web_only(name) { web_host_of(value.text) } else { host_of(value.text) };
                if let Some(allowlist) = allowlist
                    && structural.is_none()
                {
                    let refused = match &host {
                        Ok(host) if allowlist.allows_url(host, value.text, !self.role_table.is_web_only(name)) => None,
                        Ok(host) => Some(format!("host {host} is not in the allowed domains of server '{server}'")),
                        Err(why) => Some(format!(
                            "{why}, so its host cannot be checked against the allowed domains of server '{server}'"
                        )),
                    };
                    if let Some(refused) = refused {
                        let reason = format!("argument '{}' (role {name}): {refused}", value.arg);
                        trace.step(|| format!("domain-allowlist: {reason} → escalate"));
                        structural = Some(Outcome::new(Decision::Escalate, "domain-allowlist", reason));
                    }
                }
                trace.step(|| match &host {
                    Ok(host) => format!("url: {:?} (role {name}) → host {host}", value.text),
                    Err(why) => format!("url: {:?} (role {name}) has no host: {why}", value.text),
                });
                value.host = Some(host);
            }
        }
        if allowlist.is_some() && structural.is_none() {
            trace.step(|| format!("domain-allowlist: every URL is within the allowed domains of server '{server}'"));
        }
        // IronCurtain's structural domain gate: a URL outside the server's
        // allowlist is put to a person before any rule or the default.
        if let Some(escalation) = structural {
            return escalation;
        }
        let roles = roles;
        let view = CallView { annotation, roles: &roles, args: &args };

        // 5. Sandbox, 6. role rules.
        let mut results = Vec::with_capacity(roles.len());
        for role in &roles {
            if role.kind == RoleCategory::Path
                && let Some(sandbox) = &self.sandbox
                && !role.values.is_empty()
                && role.values.iter().all(|v| all_within(&v.paths, sandbox))
            {
                trace.step(|| format!("sandbox: {} → allow", self.role_reason(role, RoleReason::Sandbox)));
                results.push(Outcome::of_role(Decision::Allow, "sandbox", RoleReason::Sandbox));
                continue;
            }
            results.push(self.decide_role(role, &view, selection, &mut memo, trace, logged));
        }

        // 7. Call rules.
        let call = self.decide_call(&view, selection, &mut memo, trace, logged);

        // 8. Combine. A role the sandbox allowed names the decision only when
        // no rule decided another role as restrictively (IronCurtain reports
        // its sandbox containment only when it resolves every role).
        let default;
        let mut candidates: SmallVec<[&Outcome; 4]> = SmallVec::new();
        let (contained, ruled): (SmallVec<[&Outcome; 4]>, SmallVec<[&Outcome; 4]>) =
            results.iter().partition(|o| o.rule == "sandbox");
        if let Some(call) = &call {
            candidates.push(call);
            candidates.extend(ruled.iter().chain(&contained).copied());
        } else if !roles.is_empty() {
            candidates.extend(ruled.iter().chain(&contained).copied());
        } else {
            default = self.default_outcome();
            candidates.push(&default);
        }
        if trace.on() && candidates.len() > 1 {
            let listed: Vec<String> = candidates.iter().map(|o| format!("{} ({})", o.decision, o.rule)).collect();
            trace.step(|| format!("combine: the most restrictive of {}", listed.join(", ")));
        }
        let Some(chosen) = most_restrictive(candidates) else { return self.default_outcome() };
        // A role's outcome gets its reason now that it decides.
        let role = results.iter().position(|o| std::ptr::eq(o, chosen)).and_then(|i| roles.get(i));
        let mut chosen = chosen.clone();
        if let (Some(why), Some(role)) = (chosen.role_reason.take(), role) {
            chosen.reason = self.role_reason(role, why).into();
        }
        chosen
    }

    /// A refusal for a `completion/complete` whose partial value, or a value
    /// the client filled in before it (`arguments`: `{argument, context}`,
    /// as JSON text, and `uri`, the resource URI they make of a template),
    /// is a path within a protected path: a server completing a path lists
    /// the directory it is in, and that is what a protected path shields. A
    /// relative value is resolved as the server may resolve it (against its
    /// directories), as for a path argument of a tool; the URI is judged as
    /// a `resources/read` of it would be. Completion has no rules of its
    /// own; a trusted server is not judged.
    fn completion_refusal(&self, server: &str, arguments: Option<&str>, resolver: &Resolver) -> Option<Outcome<'_>> {
        if self.trusted.contains(server) || !arguments.is_some_and(loose_paths::may_hold_paths) {
            return None;
        }
        let args = match decode::arguments(arguments) {
            Ok(args) => args,
            Err(why) => return Some(Outcome::new(Decision::Deny, "invalid-arguments", why)),
        };
        if let Some(refused) = self.loose_path_refusal(&args, None, &mut Trace { steps: None }, resolver) {
            return Some(refused);
        }
        if let Some(refused) = args["uri"].as_str().and_then(|uri| self.protected_resource(server, uri, resolver)) {
            return Some(refused);
        }
        // The values only: an argument's name is not a path.
        let mut values = Vec::new();
        loose_paths::strings(&args["argument"]["value"], &mut values);
        loose_paths::strings(&args["context"]["arguments"], &mut values);
        for value in values.into_iter().filter(|value| value.contains('/')) {
            if let Some((base, protected)) = self.relative_protected(server, value, resolver) {
                let reason = format!(
                    "the completed value {value:?}, resolved against {} as the server may, is within the protected path {}",
                    base.display(),
                    protected.display()
                );
                return Some(Outcome::new(Decision::Deny, "protected-path", reason));
            }
        }
        None
    }

    /// A refusal when a string of an argument the annotation does not
    /// mention (any argument of an unannotated tool) is a path within a
    /// protected path.
    fn loose_path_refusal(
        &self,
        args: &Value,
        annotation: Option<&Annotation>,
        trace: &mut Trace,
        resolver: &Resolver,
    ) -> Option<Outcome<'_>> {
        let Value::Object(map) = args else { return None };
        for (arg, value) in map {
            if annotation.is_some_and(|a| a.mentions(arg)) {
                continue; // Its roles say what it is (a path is checked in step 3).
            }
            let mut texts = Vec::new();
            loose_paths::strings(value, &mut texts);
            for text in texts {
                if let Some(protected) = self.protected_path_in(text, resolver) {
                    let reason = format!(
                        "argument '{arg}' names {text:?}, which is within the protected path {}",
                        protected.display()
                    );
                    trace.step(|| format!("protected-path: {reason}"));
                    return Some(Outcome::new(Decision::Deny, "protected-path", reason));
                }
            }
        }
        None
    }

    /// The protected path within which the path a string names lies (see
    /// [`loose_paths::path_in`]), resolved against Warden's directory.
    fn protected_path_in(&self, text: &str, resolver: &Resolver) -> Option<&std::path::Path> {
        let path = loose_paths::path_in(text)?;
        let paths = resolver.canonicalize(&path, &self.env).ok()?;
        protected_by(&paths, &self.protected, self.sandbox.as_deref())
    }

    /// The refusal of a resource whose `file:` URI names a file within a
    /// protected path: by the standard's reading (the host dropped) and, for
    /// `file://host/path`, as `host/path` under Warden's or the server's
    /// directory (what a server that strips `file://` opens).
    fn protected_resource(&self, server: &str, uri: &str, resolver: &Resolver) -> Option<Outcome<'_>> {
        let refusal = |protected: &std::path::Path| {
            let reason = format!("the resource {uri:?} is within the protected path {}", protected.display());
            Some(Outcome::new(Decision::Deny, "protected-path", reason))
        };
        if let Some(protected) = self.protected_path_in(uri, resolver) {
            return refusal(protected);
        }
        let relative = loose_paths::host_as_directory(uri)?;
        if let Ok(paths) = resolver.canonicalize(&relative, &self.env)
            && let Some(protected) = protected_by(&paths, &self.protected, self.sandbox.as_deref())
        {
            return refusal(protected);
        }
        let (_, protected) = self.relative_protected(server, &relative, resolver)?;
        refusal(&protected)
    }

    /// For a relative path: the first of the server's other bases (see
    /// [`PolicyEngine::bases`]) against which it lies within a protected
    /// path, with that path. Servers differ in what they resolve a relative
    /// path against (the filesystem server: its first root), so each is tried.
    fn relative_protected(
        &self,
        server: &str,
        text: &str,
        resolver: &Resolver,
    ) -> Option<(&std::path::Path, std::path::PathBuf)> {
        if text.starts_with('/') || text.starts_with('~') {
            return None;
        }
        for base in self.bases.get(server)? {
            let env = PathEnv { home: self.env.home.clone(), cwd: Some(base.clone()) };
            let Ok(paths) = resolver.canonicalize(text, &env) else { continue };
            if let Some(protected) = protected_by(&paths, &self.protected, self.sandbox.as_deref()) {
                return Some((base.as_path(), protected.to_owned()));
            }
        }
        None
    }

    /// The reason of a role's outcome (see [`RoleReason`]).
    fn role_reason(&self, role: &RoleValues<'_>, why: RoleReason) -> String {
        match (why, &self.sandbox) {
            (RoleReason::Sandbox, Some(sandbox)) => {
                format!("every path of role {} is within the sandbox {}", role.role, sandbox.display())
            }
            _ => format!("no rule decided role {}; the default action is {}", role.role, self.default),
        }
    }

    /// Whether the rule at `index` is a call rule (one without roles, in
    /// `call_rules`), else a role rule.
    fn is_call_rule(&self, index: usize) -> bool {
        self.rules.get(index).is_some_and(|rule| rule.roles.is_empty())
    }

    /// The default's outcome for a call no rule decided (its reason a
    /// constant: deciding by default allocates nothing).
    fn default_outcome(&self) -> Outcome<'static> {
        let reason = match self.default {
            Decision::Allow => "no rule decided the call; the default action is allow",
            Decision::Deny => "no rule decided the call; the default action is deny",
            Decision::Escalate => "no rule decided the call; the default action is escalate",
        };
        Outcome::new(self.default, "default", reason)
    }

    /// The rules whose server and tool patterns admit the call: the
    /// index's candidates, or every rule matched glob by glob (`scan`, the
    /// reference).
    fn select(&self, server: &str, tool: &str, scan: bool) -> Selection {
        if scan {
            Selection::Scanned(self.rules_matching(server, tool))
        } else {
            Selection::Indexed(self.index.select(server, tool))
        }
    }

    /// Which rules' server and tool globs match, by rule index (the reference scan).
    fn rules_matching(&self, server: &str, tool: &str) -> Vec<bool> {
        let server_hits = glob_hits(&self.server_globs, server);
        let tool_hits = glob_hits(&self.tool_globs, tool);
        let hit = |indices: &[usize], hits: &[bool]| {
            indices.is_empty() || indices.iter().any(|&i| hits.get(i).copied().unwrap_or(false))
        };
        self.rules.iter().map(|rule| hit(&rule.servers, &server_hits) && hit(&rule.tools, &tool_hits)).collect()
    }

    /// Step 6 for one role: each of its paths is discharged by the first
    /// rule that matches it (a rule whose `paths` check concerns this role
    /// takes the paths within its directories, any other the remaining
    /// ones); the most restrictive of the rules that took some wins, and
    /// paths no rule took get the default.
    fn decide_role<'a>(
        &self,
        role: &'a RoleValues<'a>,
        view: &CallView<'a>,
        selection: &Selection,
        memo: &mut Memo<'a, '_>,
        trace: &mut Trace,
        logged: &mut Vec<String>,
    ) -> Outcome<'_> {
        let name = role.role;
        // Indices of the values still to discharge (a role without values has one pass).
        let mut remaining: Vec<usize> = (0..role.values.len()).collect();
        let mut outcomes: Vec<Outcome> = Vec::new();
        for (index, admitted) in selection.walk(&self.role_rules, trace.on(), |i| !self.is_call_rule(i)) {
            let Some(rule) = self.rules.get(index) else { continue };
            if !rule.roles.iter().any(|r| r == name) || !rule.methods.tools {
                continue;
            }
            if !admitted {
                trace.step(|| format!("rule '{}' (role {name}): server or tool does not match", rule.name));
                continue;
            }
            let per_path = role.kind == RoleCategory::Path
                && !role.values.is_empty()
                && rule.paths.as_ref().is_some_and(|p| p.roles.is_empty() || p.roles.iter().all(|r| r == name));
            let taken: Vec<usize> = if per_path {
                if let Err(miss) = self.applies(rule, view, Some(role), memo, Paths::PerPath) {
                    trace.step(|| format!("rule '{}' (role {name}): {}", rule.name, miss.describe()));
                    continue;
                }
                let within = rule.paths.as_ref().map(|p| p.within.as_slice()).unwrap_or_default();
                let taken: Vec<usize> = remaining
                    .iter()
                    .copied()
                    .filter(|&i| role.values.get(i).is_some_and(|v| all_within_any(&v.paths, within)))
                    .collect();
                if taken.is_empty() {
                    trace.step(|| {
                        format!("rule '{}' (role {name}): no remaining path is within its directories", rule.name)
                    });
                    continue;
                }
                taken
            } else {
                if let Err(miss) = self.applies(rule, view, Some(role), memo, Paths::Check) {
                    trace.step(|| format!("rule '{}' (role {name}): {}", rule.name, miss.describe()));
                    continue;
                }
                remaining.clone()
            };
            match rule.decision {
                None => {
                    trace.step(|| format!("rule '{}' (role {name}): matches: logged, going on", rule.name));
                    log(logged, &rule.name);
                }
                Some(decision) => {
                    trace.step(|| {
                        if per_path || role.values.len() > 1 {
                            let texts: Vec<&str> =
                                taken.iter().filter_map(|&i| role.values.get(i)).map(|v| v.text).collect();
                            format!("rule '{}' (role {name}): matches {texts:?} → {decision}", rule.name)
                        } else {
                            format!("rule '{}' (role {name}): matches → {decision}", rule.name)
                        }
                    });
                    remaining.retain(|i| !taken.contains(i));
                    outcomes.push(rule_outcome(rule, decision));
                    if remaining.is_empty() {
                        break;
                    }
                }
            }
        }
        if !remaining.is_empty() || outcomes.is_empty() {
            trace.step(|| match remaining.len() {
                0 | 1 if role.values.len() <= 1 => format!("role {name}: no rule decides → default {}", self.default),
                _ => {
                    let texts: Vec<&str> =
                        remaining.iter().filter_map(|&i| role.values.get(i)).map(|v| v.text).collect();
                    format!("role {name}: no rule decides {texts:?} → default {}", self.default)
                }
            });
            outcomes.push(Outcome::of_role(self.default, "default", RoleReason::Default));
        }
        most_restrictive(&outcomes)
            .cloned()
            .unwrap_or_else(|| Outcome::of_role(self.default, "default", RoleReason::Default))
    }

    /// Step 7: the first deciding call rule.
    fn decide_call<'a>(
        &self,
        view: &CallView<'a>,
        selection: &Selection,
        memo: &mut Memo<'a, '_>,
        trace: &mut Trace,
        logged: &mut Vec<String>,
    ) -> Option<Outcome<'_>> {
        let mut skipped = 0usize;
        let mut decided = None;
        for (index, admitted) in selection.walk(&self.call_rules, trace.on(), |i| self.is_call_rule(i)) {
            let Some(rule) = self.rules.get(index) else { continue };
            if !rule.methods.tools {
                continue;
            }
            if !admitted {
                skipped += 1;
                continue;
            }
            match self.applies(rule, view, None, memo, Paths::Check) {
                Err(miss) => trace.step(|| format!("rule '{}': {}", rule.name, miss.describe())),
                Ok(()) => match rule.decision {
                    None => {
                        trace.step(|| format!("rule '{}': matches: logged, going on", rule.name));
                        log(logged, &rule.name);
                    }
                    Some(decision) => {
                        trace.step(|| format!("rule '{}': matches → {decision}", rule.name));
                        decided = Some(rule_outcome(rule, decision));
                        break;
                    }
                },
            }
        }
        if skipped > 0 {
            trace.step(|| format!("{skipped} call rule(s) skipped: server or tool does not match"));
        }
        if decided.is_none() {
            trace.step(|| "no call rule decides".into());
        }
        decided
    }

    /// Whether `rule` (its globs already matched) applies: `sideEffects`,
    /// `paths` (unless the caller takes paths one by one), `domains`,
    /// `args`. `role` is the role being decided (step 6).
    fn applies<'a>(
        &self,
        rule: &CompiledRule,
        view: &CallView<'a>,
        role: Option<&'a RoleValues<'a>>,
        memo: &mut Memo<'a, '_>,
        paths_check: Paths,
    ) -> Result<(), Miss<'a>> {
        if let Some(paths) = &rule.paths
            && paths_check == Paths::Check
            && let Some(concerned) = concerned(&paths.roles, RoleCategory::Path, view.roles, role)
        {
            let mut any = false;
            for value in concerned.iter().flat_map(|r| &r.values) {
                any = true;
                if !all_within_any(&value.paths, &paths.within) {
                    return Err(Miss::PathOutside(value.text));
                }
            }
            if !any {
                return Err(Miss::NoPath);
            }
        }
        if let Some(wanted) = rule.side_effects {
            let actual = view.annotation.and_then(|a| a.side_effects);
            if actual != Some(wanted) {
                return Err(Miss::SideEffects(Some(wanted), actual));
            }
        }
        if let Some(domains) = &rule.domains
            && let Some(concerned) = concerned(&domains.roles, RoleCategory::Url, view.roles, role)
        {
            // A git remote given by name, or not at all, is resolved from the
            // repository by IronCurtain; Warden does not read repositories, so
            // a rule that denies or escalates may be the one that matches it.
            let restrictive = matches!(rule.decision, Some(Decision::Deny | Decision::Escalate));
            let unread_remote =
                |r: &RoleValues<'_>| restrictive && r.kind == RoleCategory::Url && !self.role_table.is_web_only(r.role);
            let mut any = false;
            for (of, value) in concerned.iter().flat_map(|r| r.values.iter().map(move |v| (*r, v))) {
                any = true;
                let remote = !self.role_table.is_web_only(of.role);
                let allowed = match &value.host {
                    Some(Ok(host)) => domains.allowed.allows_url(host, value.text, remote),
                    _ => unread_remote(of),
                };
                if !allowed {
                    return Err(Miss::HostNotAllowed(value.text));
                }
            }
            if !any && !concerned.iter().any(|r| unread_remote(r)) {
                return Err(Miss::NoUrl);
            }
        }
        if let Some(cond) = &rule.args
            && !cond.holds(view.args, memo)
        {
            return Err(Miss::Args);
        }
        Ok(())
    }
}

/// The roles a `paths` (or `domains`) check looks at: its explicit roles,
/// else the role being decided (`None`, not applicable, when that role is of
/// another kind), else every role of the kind.
fn concerned<'a>(
    explicit: &[String],
    kind: RoleCategory,
    roles: &'a [RoleValues<'a>],
    current: Option<&'a RoleValues<'a>>,
) -> Option<Vec<&'a RoleValues<'a>>> {
    if !explicit.is_empty() {
        return Some(roles.iter().filter(|r| explicit.iter().any(|e| e == r.role)).collect());
    }
    match current {
        Some(role) if role.kind == kind => Some(vec![role]),
        Some(_) => None,
        None => Some(roles.iter().filter(|r| r.kind == kind).collect()),
    }
}

/// The outcome of `rule` deciding `decision`.
fn rule_outcome(rule: &CompiledRule, decision: Decision) -> Outcome<'_> {
    Outcome::of_rule(decision, &rule.name, rule.position, &rule.label, &rule.reason)
}

fn log(logged: &mut Vec<String>, name: &str) {
    if !logged.iter().any(|l| l == name) {
        logged.push(name.to_owned());
    }
}

fn glob_hits(set: &globset::GlobSet, name: &str) -> Vec<bool> {
    let mut hits = vec![false; set.len()];
    if !set.is_empty() {
        for index in set.matches(name) {
            if let Some(hit) = hits.get_mut(index) {
                *hit = true;
            }
        }
    }
    hits
}

impl Guard for PolicyEngine {
    /// Decides `tools/call`, `prompts/get` and `resources/read` (the
    /// protected paths, and the rules that name them); every other method
    /// is allowed (views and other guards handle them). Matches of `log`
    /// rules are written to the `tracing` log.
    fn decide(&self, call: &Call<'_>) -> Verdict {
        // A resolver that reads never refrains: the refusal is unreachable,
        // and fails closed.
        self.verdict(call, &Resolver::reading()).unwrap_or_else(|| Verdict::Deny {
            rule: "invalid-path".into(),
            reason: "a path in the arguments was not resolved".into(),
        })
    }

    /// `None` for a request whose decision resolves a path on a remote
    /// mount (see [`crate::mounts`]), which may not answer: resolving paths
    /// is the only part of a decision that reads the filesystem.
    fn decide_at_once(&self, call: &Call<'_>) -> Option<Verdict> {
        self.verdict(call, &Resolver::local_only())
    }
}

impl PolicyEngine {
    /// The guard's verdict, with paths resolved by `resolver`; `None` when
    /// it refrained from reading a path it needed (nothing is logged then).
    fn verdict(&self, call: &Call<'_>, resolver: &Resolver) -> Option<Verdict> {
        // A tool call's outcome is used as it is: an allowed call builds no texts.
        let (mut verdict, logged, position) = match call.method {
            Method::ToolsCall => {
                let (outcome, logged) = self.outcome_quietly(call.server, call.name, call.arguments, resolver);
                if resolver.wanted() {
                    return None;
                }
                (outcome.verdict(), logged, outcome.position)
            }
            Method::PromptsGet | Method::ResourcesRead => {
                let (request, arguments) = match call.method {
                    Method::PromptsGet => (Request::Prompt, call.arguments),
                    _ => (Request::Resource, None),
                };
                let evaluation = self.judge_request(request, call.server, call.name, arguments, false, resolver);
                if resolver.wanted() {
                    return None;
                }
                (evaluation.verdict(), evaluation.logged, evaluation.position)
            }
            Method::Complete => {
                let refused = self.completion_refusal(call.server, call.arguments, resolver);
                if resolver.wanted() {
                    return None;
                }
                match refused {
                    Some(outcome) => (outcome.verdict(), Vec::new(), outcome.position),
                    None => return Some(Verdict::Allow),
                }
            }
            _ => return Some(Verdict::Allow),
        };
        for rule in &logged {
            tracing::info!(
                target: "warden::policy",
                rule = rule.as_str(),
                server = call.server,
                tool = call.name,
                session = call.session,
                "policy log rule matched"
            );
        }
        // Only escalations pay for this: their rule's settings, and the
        // resources the call names (for the auto-approver and the session
        // whitelist).
        if let Verdict::Escalate { escalation, .. } = &mut verdict {
            if let Some(settings) = position.and_then(|position| self.escalations.get(&position)) {
                *escalation = settings.clone();
            }
            escalation.identifiers = identifiers(self, call.server, call.name, call.arguments);
        }
        Some(verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resource, prompt or completion that names a path on a remote mount
    /// is put off (decided off the serving thread), as a tool call is; one
    /// on a local filesystem is decided at once.
    #[cfg(unix)]
    #[test]
    fn requests_naming_a_remote_mount_are_put_off() {
        let dir = std::env::temp_dir().join(format!("warden-policy-put-off-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("nfs")).expect("temp dir");
        std::fs::create_dir_all(dir.join("local")).expect("temp dir");
        let dir = std::fs::canonicalize(&dir).expect("canonical");
        let yaml = "servers:\n  s: {transport: {kind: stdio, command: s}}\n";
        let config = warden_config::parse(std::path::Path::new("t.yaml"), yaml, &|_| None).expect("config");
        let engine = PolicyEngine::compile(&config, None).expect("policy");
        let mountinfo = format!("40 22 0:35 / {} rw - nfs4 server:/x rw\n", dir.join("nfs").display());
        let resolver = || Resolver::local_only_of(crate::mounts::Remote::of_mountinfo(&mountinfo));
        let at = |rest: &str| dir.join(rest).display().to_string();
        for (method, name, arguments) in [
            (Method::ResourcesRead, format!("file://{}", at("nfs/x")), None),
            (Method::PromptsGet, "p".to_owned(), Some(format!(r#"{{"file":"{}"}}"#, at("nfs/x")))),
            (
                Method::Complete,
                "p".to_owned(),
                Some(format!(r#"{{"argument":{{"name":"file","value":"{}"}},"context":null}}"#, at("nfs/x"))),
            ),
        ] {
            let call =
                Call { session: "t", server: "s", method: &method, name: &name, arguments: arguments.as_deref() };
            assert_eq!(engine.verdict(&call, &resolver()), None, "{method:?}");
            let local = name.replace("/nfs/", "/local/");
            let local_arguments = arguments.as_deref().map(|a| a.replace("/nfs/", "/local/"));
            let call = Call { name: &local, arguments: local_arguments.as_deref(), ..call };
            assert_eq!(engine.verdict(&call, &resolver()), Some(Verdict::Allow), "{method:?}");
        }
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }
}
