//! Policy test tables in Warden's and IronCurtain's forms.

mod common;

use common::config;
use warden_policy::{Decision, Expected, PolicyEngine, PolicyError, run_cases};

const POLICY: &str = r#"
defaultProfile: normal
profiles:
  normal: {servers: {}}
  strict: {servers: {}, policy: {default: deny}}
policy:
  annotations:
    filesystem: {read_file: {args: {path: [read-path]}}}
  protectedPaths: [/etc/shadow]
  rules:
    - name: no-drop
      if: {args: {arg: sql, contains: DROP, ignoreCase: true}}
      then: deny
"#;

fn run(cases: &str) -> Result<warden_policy::CaseReport, PolicyError> {
    let config = config(POLICY);
    run_cases(&|profile| PolicyEngine::compile(&config, profile), cases)
}

#[test]
fn warden_cases_in_yaml_with_a_mismatch_reported() {
    let report = run(r#"
cases:
  - name: drop is denied
    server: db
    tool: query
    arguments: {sql: "drop table x"}
    expect: deny
    rule: no-drop
  - server: db
    tool: query
    arguments: {sql: "select 1"}
    expect: allow
  - name: strict profile denies by default
    profile: strict
    server: db
    tool: query
    expect: deny
  - name: wrong expectation
    server: db
    tool: query
    arguments: {sql: "select 1"}
    expect: escalate
  - name: wrong rule
    server: filesystem
    tool: read_file
    arguments: {path: /etc/shadow}
    expect: deny
    rule: no-drop
"#)
    .unwrap();
    assert_eq!(report.passed, 3, "{report:#?}");
    assert_eq!(report.failures.len(), 2);
    let first = &report.failures[0];
    assert_eq!(first.name, "wrong expectation");
    assert_eq!((first.expected, first.actual), (Expected::Decision(Decision::Escalate), Decision::Allow));
    assert_eq!(first.rule, "default");
    let second = &report.failures[1];
    assert_eq!((second.expected, second.actual), (Expected::Decision(Decision::Deny), Decision::Deny));
    assert_eq!(second.expected_rule.as_deref(), Some("no-drop"));
    assert_eq!(second.rule, "protected-path");
}

#[test]
fn ironcurtain_scenarios_in_json() {
    let report = run(r#"{
  "scenarios": [
    {"description": "read a protected file", "request": {"serverName": "filesystem", "toolName": "read_file",
      "arguments": {"path": "/etc/shadow"}}, "expectedDecision": "deny", "reasoning": "protected"},
    {"description": "read elsewhere", "request": {"serverName": "filesystem", "toolName": "read_file",
      "arguments": {"path": "/tmp/x"}}, "expectedDecision": "allow"},
    {"description": "mistaken", "request": {"serverName": "db", "toolName": "q",
      "arguments": {"sql": "DROP x"}}, "expectedDecision": "ALLOW", "reasoning": "it looked harmless"},
    {"description": "a denial is not an allow", "request": {"serverName": "db", "toolName": "q",
      "arguments": {"sql": "DROP x"}}, "expectedDecision": "not-allow"},
    {"description": "an allow is not not-allow", "request": {"serverName": "db", "toolName": "q",
      "arguments": {"sql": "select 1"}}, "expectedDecision": "not-allow", "reasoning": "should be refused"}
  ]
}"#)
    .unwrap();
    assert_eq!(report.passed, 3, "{report:#?}");
    assert_eq!(report.failures.len(), 2);
    let mistaken = &report.failures[0];
    assert_eq!((mistaken.name.as_str(), mistaken.number), ("mistaken", 3));
    assert_eq!(mistaken.reasoning.as_deref(), Some("it looked harmless"));
    assert_eq!((mistaken.expected, mistaken.actual), (Expected::Decision(Decision::Allow), Decision::Deny));
    assert_eq!(mistaken.rule, "no-drop");
    let allowed = &report.failures[1];
    assert_eq!((allowed.expected, allowed.actual), (Expected::NotAllow, Decision::Allow));
    assert_eq!(allowed.reasoning.as_deref(), Some("should be refused"));
    assert!(Expected::NotAllow.met_by(Decision::Escalate) && Expected::NotAllow.met_by(Decision::Deny));
}

#[test]
fn a_bare_json_list_of_cases() {
    let report = run(r#"[{"server": "db", "tool": "q", "arguments": {"sql": "x"}, "expect": "allow"}]"#).unwrap();
    assert_eq!((report.passed, report.failures.len()), (1, 0));
}

#[test]
fn unreadable_cases_are_errors() {
    for text in [
        "cases: [{server: a, tool: b, expect: maybe}]",
        "cases: [{server: a, expect: allow}]",
        "cases: [{server: a, tool: b, expect: allow, extra: 1}]",
        "scenarios: [{description: x, expectedDecision: allow}]",
        "something: else",
        "{not json",
        "42",
    ] {
        assert!(matches!(run(text), Err(PolicyError::Cases(_))), "{text}");
    }
    let err = run("cases: [{profile: missing, server: a, tool: b, expect: allow}]").unwrap_err();
    assert_eq!(err, PolicyError::UnknownProfile("missing".into()));
}
