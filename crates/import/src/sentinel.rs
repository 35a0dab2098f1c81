//! MCP Sentinel's policy file (pablopis/mcp-sentinel: `security_policy.yaml`,
//! validated by `policy_schema.py`, evaluated by `policy.py`):
//!
//! ```yaml
//! rules:
//!   - id: no-unbounded-select            # optional
//!     name: Block SELECT without LIMIT   # optional; reported when blocking
//!     description: ...
//!     target_tool: "*_database"          # fnmatch pattern
//!     target_argument: query             # the rule applies only when present
//!     conditions:
//!       - {operator: regex, value: 'SELECT\s+\*', ignore_case: true}
//!       - {operator: not_contains, value: LIMIT, ignore_case: true}
//!     match_type: all                    # or any (default all)
//!     action: block                      # allow | log | allow_with_approval (default block)
//! ```
//!
//! Rules are tried in order; the first `block`, `allow` or
//! `allow_with_approval` match decides, `log` matches are logged and
//! evaluation goes on, and a call no rule decides is allowed. Each rule
//! becomes a Warden call rule: `block` → `deny`, `allow` → `allow`, `log` →
//! `log`, `allow_with_approval` → `escalate`; `target_tool` → `if.tool`;
//! `{arg: target_argument, exists: true}` and the conditions (`contains`,
//! `notContains`, `equals`, `regex`, with `ignoreCase`) → `if.args`. The
//! policy's default is `allow`. Regexes are Python's and are translated (see
//! [`crate::pyregex`]). Sentinel's circuit breaker is not in the file: it is
//! fixed in `gateway.py` (100 calls per tool per 60 s) and becomes a rate
//! limit.
//!
//! Sentinel loads an invalid file as an empty policy and lets everything
//! through; here every problem is an error naming the rule and the place.

use std::path::Path;

use warden_config::{Action, ApprovalConfig, Condition, Config, LimitScope, RateLimit, Rule, RuleMatch};

use crate::error::ImportError;
use crate::node::{At, Doc, Node, unknown_keys};
use crate::{Imported, glob, pyregex, shown};

const RULE_KEYS: [&str; 8] =
    ["id", "name", "description", "target_tool", "target_argument", "conditions", "match_type", "action"];
const CONDITION_KEYS: [&str; 3] = ["operator", "value", "ignore_case"];

/// Sentinel's circuit breaker (`MAX_CALLS_PER_TOOL`, `CALL_WINDOW_SECONDS`
/// in `gateway.py`).
const BREAKER_CALLS: u32 = 100;
const BREAKER_SECONDS: u64 = 60;

/// What the walk collects besides the rules.
#[derive(Default)]
struct Notes {
    ignored: Vec<String>,
    escalated: Vec<String>,
    regexes: Vec<String>,
    rewritten: Vec<String>,
    conditions: usize,
    warnings: Vec<String>,
}

/// Converts one Sentinel policy file.
pub(crate) fn import(path: &Path, text: &str) -> Result<Imported, ImportError> {
    let doc = Doc::new(path, text);
    let root = doc.parse_yaml()?;
    let top = match &root {
        Node::Map(map) => map,
        Node::Null => {
            return Err(doc.error(
                &At::root(),
                "the file is empty (Sentinel reports a validation error and then runs with no rules)",
            ));
        }
        other => return Err(doc.error(&At::root(), format!("expected a mapping with rules:, found {}", other.kind()))),
    };
    let mut notes = Notes::default();
    notes.ignored.extend(unknown_keys(top, &["rules"]).into_iter().map(str::to_owned));
    let rules_at = At::root().key("rules");
    let items = match top.get("rules").unwrap_or(&Node::Null) {
        Node::Null => &[][..],
        Node::List(items) => items.as_slice(),
        other => return Err(doc.error(&rules_at, format!("expected a list of rules, found {}", other.kind()))),
    };
    let mut rules = Vec::new();
    for (index, item) in items.iter().enumerate() {
        if let Some(rule) = rule(&doc, item, &rules_at.index(index), &mut notes)? {
            rules.push(rule);
        }
    }

    let mut config = Config::default();
    config.policy.default = Some(Action::Allow);
    config.policy.rules = rules;
    config.rate_limits.push(RateLimit {
        server: "*".into(),
        tool: "*".into(),
        calls: BREAKER_CALLS,
        per_seconds: BREAKER_SECONDS,
        scope: LimitScope::Tool,
    });

    // allow_with_approval pauses the call until someone approves, as in
    // Sentinel (denied after 300 s).
    if !notes.escalated.is_empty() {
        config.approval = Some(ApprovalConfig::default());
    }
    let mut warnings = notes.warnings;
    if items.is_empty() {
        warnings.push("the file has no rules: every call is allowed, as in Sentinel".into());
    }
    warnings.push(format!(
        "Sentinel's circuit breaker is not in the policy file but fixed in gateway.py ({BREAKER_CALLS} calls per tool within {BREAKER_SECONDS} s); it is written as rateLimits {{tool: \"*\", calls: {BREAKER_CALLS}, perSeconds: {BREAKER_SECONDS}}}, counted per server and tool (Sentinel wraps one server); edit it if you changed gateway.py. Warden's own breaker (identical calls) applies too"
    ));
    if notes.conditions > 0 {
        warnings.push("Sentinel also applied conditions to non-text argument values (contains tested list membership, numbers crashed its forwarding thread); Warden's string tests never match a non-text value, and notContains holds for one".into());
    }
    if !notes.regexes.is_empty() {
        warnings.push(format!(
            "regex conditions ({}) run on Rust's regex engine: Sentinel searched only the first 10,000 characters, and Python's \\w, \\s, \\b and case folding differ from Rust's for some non-ASCII characters",
            notes.regexes.join(", ")
        ));
    }
    warnings.extend(notes.rewritten);
    if !notes.ignored.is_empty() {
        warnings.push(format!("ignored {} (Sentinel does not read them either)", notes.ignored.join(", ")));
    }
    Ok(Imported { config, warnings, origin: format!("MCP Sentinel policy {}", shown(path)) })
}

/// One entry of `rules:`; `None` when it can never match.
fn rule(doc: &Doc<'_>, node: &Node, at: &At, notes: &mut Notes) -> Result<Option<Rule>, ImportError> {
    let Node::Map(fields) = node else {
        return Err(doc.error(at, format!("expected a rule (a mapping), found {}", node.kind())));
    };
    notes.ignored.extend(unknown_keys(fields, &RULE_KEYS).into_iter().map(|key| at.key(key).to_string()));
    let get = |key: &str| fields.get(key).unwrap_or(&Node::Null);
    let id = text(doc, get("id"), &at.key("id"))?;
    let given_name = text(doc, get("name"), &at.key("name"))?;
    let Some(name) = given_name.clone().or(id).filter(|name| !name.is_empty()) else {
        return Err(doc.error(at, "has neither a name nor an id; Warden needs one to name the rule"));
    };
    let label = format!("rule {name:?}");
    let description = text(doc, get("description"), &at.key("description"))?.unwrap_or_default();

    let tool_at = at.key("target_tool");
    let Some(pattern) = text(doc, get("target_tool"), &tool_at)? else {
        return Err(doc.error(at, format!("{label} has no target_tool")));
    };
    let tool = glob::from_fnmatch(&pattern).map_err(|why| {
        doc.error(&tool_at, format!("{label}: target_tool {pattern:?} cannot be written as a Warden glob: {why}"))
    })?;
    let arg_at = at.key("target_argument");
    let Some(arg) = text(doc, get("target_argument"), &arg_at)? else {
        return Err(doc.error(at, format!("{label} has no target_argument")));
    };
    if arg.contains('.') {
        return Err(doc.error(
            &arg_at,
            format!(
                "{label}: target_argument {arg:?} contains '.', which Warden reads as a path into an object argument"
            ),
        ));
    }

    let match_at = at.key("match_type");
    let any = match text(doc, get("match_type"), &match_at)?.as_deref() {
        None | Some("all") => false,
        Some("any") => true,
        Some(other) => {
            return Err(doc.error(&match_at, format!("{label}: unknown match_type {other:?} (expected all or any)")));
        }
    };
    let action_at = at.key("action");
    let action = match text(doc, get("action"), &action_at)?.as_deref() {
        None | Some("block") => Action::Deny,
        Some("allow") => Action::Allow,
        Some("log") => Action::Log,
        Some("allow_with_approval") => {
            notes.escalated.push(format!("{name:?}"));
            Action::Escalate
        }
        Some(other) => {
            return Err(doc.error(
                &action_at,
                format!("{label}: unknown action {other:?} (expected block, allow, log or allow_with_approval)"),
            ));
        }
    };

    let conditions_at = at.key("conditions");
    let items = match get("conditions") {
        Node::Null => &[][..],
        Node::List(items) => items.as_slice(),
        other => return Err(doc.error(&conditions_at, format!("{label}: expected a list, found {}", other.kind()))),
    };
    let mut tests = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        tests.push(condition(doc, item, &conditions_at.index(index), &arg, &label, notes)?);
    }
    notes.conditions += tests.len();
    if any && tests.is_empty() {
        notes.warnings.push(format!(
            "{label} is left out: match_type any without conditions never matches in Sentinel (nothing to carry over)"
        ));
        return Ok(None);
    }
    if given_name.is_none() && action == Action::Deny {
        notes.warnings.push(format!(
            "{label} has no name and is named by its id: Sentinel reports a block by the rule's name, so without one it let matching calls through; Warden denies them, as the rule says"
        ));
    }

    let present = Condition { arg: Some(arg.clone()), exists: Some(true), ..Condition::default() };
    let args = match (tests.is_empty(), any) {
        (true, _) => present,
        (false, false) => Condition { all: Some([vec![present], tests].concat()), ..Condition::default() },
        (false, true) => Condition {
            all: Some(vec![present, Condition { any: Some(tests), ..Condition::default() }]),
            ..Condition::default()
        },
    };
    let when = RuleMatch { tool: vec![tool], args: Some(args), ..RuleMatch::default() };
    Ok(Some(Rule { name, description, when, action, reason: String::new(), timeout_secs: None, auto_approve: false }))
}

/// One entry of a rule's `conditions:`, as a test on `arg`.
fn condition(
    doc: &Doc<'_>,
    node: &Node,
    at: &At,
    arg: &str,
    label: &str,
    notes: &mut Notes,
) -> Result<Condition, ImportError> {
    let Node::Map(fields) = node else {
        return Err(doc.error(at, format!("{label}: expected a condition (a mapping), found {}", node.kind())));
    };
    notes.ignored.extend(unknown_keys(fields, &CONDITION_KEYS).into_iter().map(|key| at.key(key).to_string()));
    let get = |key: &str| fields.get(key).unwrap_or(&Node::Null);
    let operator_at = at.key("operator");
    let Some(operator) = text(doc, get("operator"), &operator_at)? else {
        return Err(doc.error(at, format!("{label}: the condition has no operator")));
    };
    let value_at = at.key("value");
    let Some(value) = text(doc, get("value"), &value_at)? else {
        return Err(doc.error(at, format!("{label}: the condition has no value")));
    };
    let ignore_case = match fields.get("ignore_case") {
        None => false,
        Some(node) => lax_bool(node).ok_or_else(|| {
            doc.error(&at.key("ignore_case"), format!("{label}: expected true or false, found {}", node.kind()))
        })?,
    };
    let mut test = Condition { arg: Some(arg.to_owned()), ignore_case, ..Condition::default() };
    match operator.as_str() {
        "contains" => test.contains = Some(value),
        "not_contains" => test.not_contains = Some(value),
        "equals" => test.equals = Some(serde_json::Value::String(value)),
        "regex" => {
            let translated = pyregex::translate(&value).map_err(|why| {
                doc.error(&value_at, format!("{label}: the regex {value:?} cannot be carried over: {why}"))
            })?;
            regex::RegexBuilder::new(&translated).case_insensitive(ignore_case).build().map_err(|err| {
                let why = err.to_string();
                let why = why.lines().last().unwrap_or_default().trim_start_matches("error: ").to_owned();
                doc.error(&value_at, format!("{label}: invalid regex {value:?}: {why}"))
            })?;
            if !notes.regexes.iter().any(|seen| seen == label) {
                notes.regexes.push(label.to_owned());
            }
            if translated != value {
                notes.rewritten.push(format!("{label}: the Python regex {value:?} is written as {translated:?}"));
            }
            test.regex = Some(translated);
        }
        other => {
            return Err(doc.error(
                &operator_at,
                format!("{label}: unknown operator {other:?} (expected contains, not_contains, equals or regex)"),
            ));
        }
    }
    Ok(test)
}

/// Text at `at`, as Sentinel's schema (Pydantic) reads a `str` field: only
/// text; null counts as absent.
fn text(doc: &Doc<'_>, node: &Node, at: &At) -> Result<Option<String>, ImportError> {
    match node {
        Node::Null => Ok(None),
        Node::Text(text) => Ok(Some(text.clone())),
        other => Err(doc.error(
            at,
            format!(
                "expected text, found {} (Sentinel's schema refuses it and Sentinel then runs with no rules; quote it)",
                other.kind()
            ),
        )),
    }
}

/// A `bool` field as Pydantic reads it: true/false, 0/1, or words such as
/// `yes` and `off` (which PyYAML also reads as booleans).
fn lax_bool(node: &Node) -> Option<bool> {
    match node {
        Node::Bool(value) => Some(*value),
        Node::Number(text) | Node::Text(text) => match text.to_ascii_lowercase().as_str() {
            "1" | "true" | "t" | "yes" | "y" | "on" => Some(true),
            "0" | "false" | "f" | "no" | "n" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}
