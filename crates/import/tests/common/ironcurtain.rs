//! Helpers for the ports of IronCurtain's engine tests
//! (`test/policy-engine.test.ts` at c0aeff9d): IronCurtain's inputs go
//! through `warden import ironcurtain`, the imported config is written,
//! read back and compiled as Warden loads it, and each call must get
//! IronCurtain's decision.

use serde_json::{Value, json};
use warden_import::{IronCurtainInput, import_ironcurtain};
use warden_policy::PolicyEngine;

use super::{data, text};

/// `realpathSync('/tmp')` (IronCurtain's `REAL_TMP`) on Linux.
pub const REAL_TMP: &str = "/tmp";
/// IronCurtain's test sandbox (`TEST_SANDBOX_DIR`, `${REAL_TMP}/ironcurtain-sandbox`).
pub const SANDBOX: &str = "/tmp/ironcurtain-sandbox";
/// Where IronCurtain's checkout stands for the fixture's protected paths
/// (`resolve(projectRoot, ...)`, and the directory vitest runs in).
pub const PROJECT: &str = "/tmp/ironcurtain-checkout";

/// One ported case: the call and IronCurtain's expected decision and rule.
/// The decision is `allow`, `deny` or `escalate`, `!allow` when the case
/// asserts only that it is not that, `*` when it asserts none; the rule is
/// `None` when the case asserts none, `Some("!rule")` when it asserts only
/// that it is not that one.
pub struct Case {
    pub name: &'static str,
    pub server: &'static str,
    pub tool: &'static str,
    pub args: Value,
    pub decision: &'static str,
    pub rule: Option<&'static str>,
}

impl Case {
    /// A call IronCurtain decides `decision` by `rule`.
    pub fn new(
        name: &'static str,
        server: &'static str,
        tool: &'static str,
        args: Value,
        decision: &'static str,
        rule: Option<&'static str>,
    ) -> Case {
        Case { name, server, tool, args, decision, rule }
    }

    /// A call of the filesystem server (IronCurtain's `makeRequest` default).
    pub fn fs(
        name: &'static str,
        tool: &'static str,
        args: Value,
        decision: &'static str,
        rule: Option<&'static str>,
    ) -> Case {
        Case::new(name, "filesystem", tool, args, decision, rule)
    }
}

/// Warden's name for an IronCurtain rule name.
pub fn warden_rule(rule: &str) -> &str {
    match rule {
        "structural-domain-escalate" => "domain-allowlist",
        "structural-sandbox-allow" => "sandbox",
        "structural-protected-path" => "protected-path",
        "structural-unknown-tool" => "unannotated-tool",
        "default-deny" => "default",
        other => other,
    }
}

/// A compiled-policy file with `rules`.
pub fn policy(rules: Value) -> String {
    json!({"generatedAt": "test", "constitutionHash": "test", "inputHash": "test", "rules": rules}).to_string()
}

/// The fixture's compiled policy (`testCompiledPolicy` of
/// `test/fixtures/test-policy.ts`, `REAL_TMP` being `/tmp`).
pub fn fixture_policy() -> String {
    read("ironcurtain-c0aeff9d/test-fixture-policy.json")
}

/// The fixture's annotations (`testToolAnnotations`).
pub fn fixture_annotations() -> String {
    read("ironcurtain-c0aeff9d/test-fixture-annotations.json")
}

fn read(rel: &str) -> String {
    let path = data(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// `HOME` (IronCurtain's `homedir()`).
pub fn home() -> String {
    std::env::var("HOME").expect("HOME is set")
}

/// `TEST_PROTECTED_PATHS`: the constitution, the generated policy
/// directory, `mcp-servers.json`, `./audit.jsonl`, `.env` (relative to the
/// directory vitest runs in, the checkout) and the user config file.
pub fn fixture_protected_paths() -> Vec<String> {
    vec![
        format!("{PROJECT}/src/config/constitution.md"),
        format!("{PROJECT}/src/config/generated"),
        format!("{PROJECT}/src/config/mcp-servers.json"),
        format!("{PROJECT}/audit.jsonl"),
        format!("{PROJECT}/.env"),
        format!("{}/.ironcurtain/config.json", home()),
    ]
}

/// The input of `new PolicyEngine(policy, annotations, protectedPaths,
/// sandbox, allowlists, _, trustedServers)`: the policy and annotations
/// given as JSON text, the rest empty (set them with struct update syntax).
pub fn input(policy: String, annotations: String) -> IronCurtainInput {
    IronCurtainInput {
        compiled_policy: text("compiled-policy.json", &policy),
        tool_annotations: text("tool-annotations.json", &annotations),
        ..IronCurtainInput::default()
    }
}

/// Per-server domain allowlists as `IronCurtainInput` takes them.
pub fn allowlists(lists: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    lists
        .iter()
        .map(|(server, domains)| ((*server).to_owned(), domains.iter().map(|d| (*d).to_owned()).collect()))
        .collect()
}

/// Imports `input` and compiles the result as Warden loads it (written to
/// YAML, read back, validated).
pub fn compile(input: IronCurtainInput) -> PolicyEngine {
    let imported = import_ironcurtain(input).unwrap_or_else(|err| panic!("import: {err}"));
    let yaml = serde_saphyr::to_string(&imported.config).expect("serialise");
    let config = super::load(&yaml);
    PolicyEngine::compile(&config, None).unwrap_or_else(|err| panic!("{err}\n---\n{yaml}"))
}

/// The engine IronCurtain's `new PolicyEngine(policy, annotations, [], sandbox, allowlists)` makes.
pub fn engine(rules: Value, annotations: Value, sandbox: Option<&str>, lists: &[(&str, &[&str])]) -> PolicyEngine {
    compile(IronCurtainInput {
        sandbox: sandbox.map(str::to_owned),
        allowed_domains: allowlists(lists),
        ..input(policy(rules), annotations.to_string())
    })
}

/// The engine most of IronCurtain's cases use: `new PolicyEngine(testCompiledPolicy,
/// testToolAnnotations, TEST_PROTECTED_PATHS, TEST_SANDBOX_DIR)`.
pub fn fixture_engine() -> PolicyEngine {
    compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: fixture_protected_paths(),
        ..input(fixture_policy(), fixture_annotations())
    })
}

/// Evaluates every case; fails listing each one that does not get
/// IronCurtain's decision (and rule).
pub fn run(engine: &PolicyEngine, cases: &[Case]) {
    let mut failures = Vec::new();
    for case in cases {
        let evaluation = engine.evaluate(case.server, case.tool, Some(&case.args.to_string()));
        let decision_ok = match case.decision {
            "*" => true,
            not if not.starts_with('!') => evaluation.action.as_str() != &not[1..],
            decision => evaluation.action.as_str() == decision,
        };
        let rule_ok = match case.rule {
            None => true,
            Some(not) if not.starts_with('!') => evaluation.rule != warden_rule(&not[1..]),
            Some(rule) => evaluation.rule == warden_rule(rule),
        };
        if !(decision_ok && rule_ok) {
            failures.push(format!(
                "{}: expected {} by {:?}, got {} by {}: {}\n  {}",
                case.name,
                case.decision,
                case.rule,
                evaluation.action,
                evaluation.rule,
                evaluation.reason,
                evaluation.trace.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// One tool's annotation.
pub fn tool(server: &str, name: &str, args: Value) -> Value {
    json!({"toolName": name, "serverName": server, "comment": name, "args": args})
}

/// An annotations file with `tools` of one server.
pub fn annotations(server: &str, tools: Vec<Value>) -> Value {
    json!({"generatedAt": "test", "servers": {server: {"inputHash": "test", "tools": tools}}})
}

/// One compiled rule.
pub fn rule(name: &str, when: Value, then: &str) -> Value {
    json!({"name": name, "description": name, "principle": "test", "if": when, "then": then, "reason": name})
}

/// A scratch directory of its own for one test, under `parent` (created),
/// its real path.
pub fn scratch(parent: &str, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(parent).join(format!("warden-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    std::fs::canonicalize(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
}
