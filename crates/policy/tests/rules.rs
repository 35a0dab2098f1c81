//! Call rules (first match, log rules going on), defaults per profile,
//! trusted servers, the guard.

mod common;

use common::{config, engine, expect};
use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard, Verdict};
use warden_policy::{Decision, PolicyEngine, PolicyError};

const SENTINEL: &str = r#"
defaultProfile: dev
profiles:
  dev: {servers: {}}
  locked: {servers: {}, policy: {default: deny, strict: true}}
  open: {servers: {}, policy: {default: allow}}
policy:
  default: escalate
  trustedServers: [local-notes]
  annotations:
    shell: {run: {args: {}}}
  rules:
    - name: log-shell
      if: {server: [shell]}
      then: log
    - name: audit-rm
      if: {server: [shell], args: {arg: cmd, contains: rm}}
      then: log
    - name: block-rm-rf
      if: {server: [sh*], tool: [run, exec], args: {arg: cmd, regex: "rm\\s+-[a-z]*r[a-z]*f"}}
      then: deny
      reason: recursive forced deletion
    - name: allow-shell
      if: {server: [shell]}
      then: allow
    - name: never-reached
      if: {server: [shell]}
      then: deny
    - name: approve-payments
      if: {tool: ["pay_*", "*_transfer"], args: {arg: amount, gt: 100}}
      then: escalate
    - name: small-payments
      if: {tool: ["pay_*"]}
      then: allow
"#;

#[test]
fn the_first_deciding_call_rule_wins_and_log_rules_go_on() {
    let engine = engine(SENTINEL);
    let evaluation = expect(&engine, "shell", "run", r#"{"cmd": "rm -rf /"}"#, Decision::Deny, "block-rm-rf");
    assert_eq!(evaluation.reason, "recursive forced deletion");
    assert_eq!(evaluation.logged, vec!["log-shell".to_string(), "audit-rm".to_string()]);
    let evaluation = expect(&engine, "shell", "run", r#"{"cmd": "ls"}"#, Decision::Allow, "allow-shell");
    assert_eq!(evaluation.logged, vec!["log-shell".to_string()]);
    assert!(evaluation.trace.iter().any(|s| s.contains("rule 'block-rm-rf': the args condition does not hold")));
    assert!(!evaluation.trace.iter().any(|s| s.contains("never-reached")));
    expect(&engine, "bank", "pay_invoice", r#"{"amount": 500}"#, Decision::Escalate, "approve-payments");
    expect(&engine, "bank", "wire_transfer", r#"{"amount": 101}"#, Decision::Escalate, "approve-payments");
    expect(&engine, "bank", "pay_invoice", r#"{"amount": 5}"#, Decision::Allow, "small-payments");
    expect(&engine, "bank", "pay_invoice", r#"{"amount": "500"}"#, Decision::Allow, "small-payments");
}

#[test]
fn trusted_servers_skip_the_policy() {
    let engine = engine(SENTINEL);
    expect(&engine, "local-notes", "anything", "not even json", Decision::Allow, "trusted-server");
}

#[test]
fn the_default_comes_from_the_profile() {
    let config = config(SENTINEL);
    let dev = PolicyEngine::compile(&config, None).unwrap();
    assert_eq!(dev.profile(), Some("dev"));
    assert_eq!(dev.default_action(), Decision::Escalate);
    expect(&dev, "misc", "thing", "{}", Decision::Escalate, "default");
    let locked = PolicyEngine::compile(&config, Some("locked")).unwrap();
    assert!(locked.is_strict());
    expect(&locked, "misc", "thing", "{}", Decision::Deny, "unannotated-tool");
    let evaluation = expect(&locked, "shell", "run", r#"{"cmd": "make"}"#, Decision::Allow, "allow-shell");
    assert!(evaluation.trace.iter().any(|s| s.starts_with("roles")));
    let open = PolicyEngine::compile(&config, Some("open")).unwrap();
    expect(&open, "misc", "thing", "{}", Decision::Allow, "default");
    assert!(matches!(PolicyEngine::compile(&config, Some("nope")), Err(PolicyError::UnknownProfile(p)) if p == "nope"));
    // No profiles at all: the policy's own default, or allow.
    expect(&engine("policy: {}"), "a", "b", "{}", Decision::Allow, "default");
    expect(&engine("policy: {default: deny}"), "a", "b", "{}", Decision::Deny, "default");
}

#[test]
fn a_call_rule_joins_the_role_results() {
    let engine = engine(
        r#"
policy:
  annotations:
    fs: {write: {args: {path: [write-path]}}}
  rules:
    - name: writes-escalate
      if: {roles: [write-path]}
      then: escalate
    - name: fs-allowed
      if: {server: [fs]}
      then: allow
"#,
    );
    // The call rule allows; the role escalates: the most restrictive wins.
    expect(&engine, "fs", "write", r#"{"path": "/tmp/x"}"#, Decision::Escalate, "writes-escalate");
    // No role values: the call rule alone.
    expect(&engine, "fs", "write", "{}", Decision::Allow, "fs-allowed");
}

#[test]
fn a_role_no_rule_decides_takes_the_default_even_when_a_call_rule_allows() {
    let engine = engine(
        r#"
policy:
  default: deny
  annotations:
    fs: {write: {args: {path: [write-path], mode: [file-mode]}}}
  rules:
    - name: fs-allowed
      if: {server: [fs]}
      then: allow
    - name: modes
      if: {roles: [file-mode], args: {arg: mode, in: ["644", "600"]}}
      then: allow
"#,
    );
    // write-path is decided by no rule: the default (deny) joins the call rule's allow.
    let evaluation = expect(&engine, "fs", "write", r#"{"path": "/tmp/x"}"#, Decision::Deny, "default");
    assert!(evaluation.reason.contains("role write-path"), "{}", evaluation.reason);
    expect(&engine, "fs", "write", r#"{"mode": "644"}"#, Decision::Allow, "fs-allowed");
    expect(&engine, "fs", "write", r#"{"mode": "777"}"#, Decision::Deny, "default");
}

#[test]
fn the_guard_decides_tool_calls_only() {
    let engine = engine(SENTINEL);
    let call = |method: &Method, name: &str, args: Option<&str>| {
        engine.decide(&Call { session: "s1", server: "shell", method, name, arguments: args })
    };
    assert_eq!(
        call(&Method::ToolsCall, "run", Some(r#"{"cmd": "rm -rf /"}"#)),
        Verdict::Deny { rule: "block-rm-rf".into(), reason: "recursive forced deletion".into() }
    );
    assert_eq!(call(&Method::ToolsCall, "run", Some(r#"{"cmd": "ls"}"#)), Verdict::Allow);
    assert_eq!(call(&Method::PromptsGet, "run", Some(r#"{"cmd": "rm -rf /"}"#)), Verdict::Allow);
    assert_eq!(call(&Method::ResourcesRead, "file:///x", None), Verdict::Allow);
    let escalated = engine.decide(&Call {
        session: "s1",
        server: "bank",
        method: &Method::ToolsCall,
        name: "pay_invoice",
        arguments: Some(r#"{"amount": 1000}"#),
    });
    assert!(matches!(&escalated, Verdict::Escalate { rule, .. } if rule == "approve-payments"));
    // The guard keeps no trace; evaluate does.
    assert!(!engine.evaluate("shell", "run", Some("{}")).trace.is_empty());
}

#[test]
fn the_engine_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PolicyEngine>();
}

#[test]
fn prompt_and_resource_rules_judge_only_what_they_name() {
    use warden_policy::Request;
    let engine = common::engine(
        r#"
policy:
  default: deny
  rules:
    - {name: no-secret-prompt, if: {method: [prompts/get], tool: ["secret*"], args: {arg: who, equals: root}}, then: deny, reason: no}
    - {name: log-reads, if: {method: [resources/read], tool: ["file://**"]}, then: log}
"#,
    );
    let prompt = |name: &str, args: &str| engine.evaluate_request(Request::Prompt, "s", name, Some(args));
    assert_eq!(prompt("secret_plan", r#"{"who":"root"}"#).rule, "no-secret-prompt");
    assert_eq!(prompt("secret_plan", r#"{"who":"ada"}"#).action, Decision::Allow, "the default concerns tools only");
    let read = engine.evaluate_request(Request::Resource, "s", "file:///tmp/x", None);
    assert_eq!((read.action, read.logged.as_slice()), (Decision::Allow, &["log-reads".to_owned()][..]));
    // A tool call with the same name is not judged by prompt rules.
    assert_eq!(engine.evaluate("s", "secret_plan", Some(r#"{"who":"root"}"#)).rule, "default");
    let problems = common::problems(
        "policy:\n  rules:\n    - {name: bad, if: {method: [prompts/get, tools/list], roles: [read-path]}, then: deny}\n",
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
}

#[test]
fn arguments_no_rule_concerns_are_not_read() {
    let engine = common::engine(
        "policy:\n  default: allow\n  rules:\n    - {name: no-x, if: {tool: [write], args: {arg: text, contains: x}}, then: deny}\n",
    );
    // Not even valid JSON: nothing concerns `read`, so it is not decoded.
    assert_eq!(engine.evaluate("s", "read", Some("[not json")).action, Decision::Allow);
    assert_eq!(engine.evaluate("s", "write", Some("[not json")).rule, "invalid-arguments");
}
